//! Tests of the harness generator: determinism, every trap in the default home, its tally
//! against an independent re-reading of the bytes it wrote (the accounting rules implemented a
//! second time, over serde_json and zstd), and the example figures of harnesses.md section 7.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    CallSums, ClaudeFile, ExpectedCall, ExpectedSession, ExpectedToolCall, Harness, HarnessExpected,
    HarnessOptions, Line, relative, write_harness_home,
};
use crate::generate::tests::files;

/// A fresh home in its own temp dir, removed on drop.
struct Home {
    dir: PathBuf,
    expected: HarnessExpected,
    opts: HarnessOptions,
}

impl Home {
    fn write(name: &str, opts: HarnessOptions) -> Self {
        let dir = std::env::temp_dir().join(format!("txq-harness-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let expected = write_harness_home(&dir, &opts).expect("home written");
        Self { dir, expected, opts }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every transcript under `dir` (`.jsonl`, and `.jsonl.zst` decompressed): path → its lines,
/// each the object it holds or `None` for a damaged line.
fn transcripts(dir: &Path) -> BTreeMap<String, Vec<Option<Value>>> {
    let mut found = BTreeMap::new();
    for (path, bytes) in files(dir) {
        let bytes = if path.ends_with(".jsonl.zst") {
            zstd::decode_all(&bytes[..]).expect("a zstd stream")
        } else if path.ends_with(".jsonl") {
            bytes
        } else {
            continue;
        };
        let text = String::from_utf8(bytes).expect("UTF-8");
        let mut physical: Vec<&str> = text.split('\n').collect();
        if physical.last() == Some(&"") {
            physical.pop();
        }
        let lines = physical
            .iter()
            .map(|line| serde_json::from_str::<Value>(line).ok().filter(Value::is_object))
            .collect();
        found.insert(path, lines);
    }
    found
}

/// What a file is, found from its path alone, as a reader given the roots finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    ClaudeMain,
    ClaudeAgent(String),
    Codex,
    Gemini { slug: String, parent: Option<String> },
}

fn role(path: &str, opts: &HarnessOptions) -> Option<Role> {
    for root in &opts.claude_dirs {
        if let Some(rest) = path.strip_prefix(&relative(root, "projects/")) {
            let parts: Vec<&str> = rest.split('/').collect();
            let agent = |name: &str| {
                name.strip_prefix("agent-").and_then(|n| n.strip_suffix(".jsonl")).map(str::to_string)
            };
            return match parts.as_slice() {
                [_, name] => Some(agent(name).map_or(Role::ClaudeMain, Role::ClaudeAgent)),
                [_, _, "subagents", name] => agent(name).map(Role::ClaudeAgent),
                _ => None,
            };
        }
    }
    let name = path.rsplit('/').next().unwrap_or_default();
    for tree in ["sessions/", "archived_sessions/"] {
        if path.starts_with(&relative(&opts.codex_home, tree)) && name.starts_with("rollout-") {
            return Some(Role::Codex);
        }
    }
    let rest = path.strip_prefix(&relative(&opts.gemini_home, ".gemini/tmp/"))?;
    match rest.split('/').collect::<Vec<_>>().as_slice() {
        [slug, "chats", name] if name.starts_with("session-") => {
            Some(Role::Gemini { slug: slug.to_string(), parent: None })
        }
        [slug, "chats", parent, _] => {
            Some(Role::Gemini { slug: slug.to_string(), parent: Some(parent.to_string()) })
        }
        _ => None,
    }
}

/// The answers an independent reader gives.
#[derive(Default)]
struct Reading {
    calls: Vec<ExpectedCall>,
    tool_calls: Vec<ExpectedToolCall>,
    sessions: BTreeMap<(String, String, Option<String>), ExpectedSession>,
    errors: Vec<(String, u64)>,
    shadowed: Vec<String>,
    /// Tool calls per session: their rows name no parent, and subagent ids collide.
    tools_per_session: BTreeMap<Key, u64>,
}

type Key = (String, String, Option<String>);

impl Reading {
    fn session(&mut self, harness: &str, id: &str, parent: Option<&str>, file: &str) -> &mut ExpectedSession {
        let key = (harness.to_string(), id.to_string(), parent.map(str::to_string));
        self.sessions.entry(key).or_insert_with(|| ExpectedSession {
            harness: harness.to_string(),
            session_id: id.to_string(),
            parent_session_id: parent.map(str::to_string),
            file: file.to_string(),
            ..ExpectedSession::default()
        })
    }
}

fn stamp(session: &mut ExpectedSession, ts: Option<&str>) {
    if let Some(ts) = ts {
        let ts = ts.to_string();
        session.started_at = Some(session.started_at.take().map_or(ts.clone(), |s| s.min(ts.clone())));
        session.ended_at = Some(session.ended_at.take().map_or(ts.clone(), |s| s.max(ts)));
    }
}

/// Whether a Codex `TokenUsage` can be read: every figure a whole count, and none missing but
/// the cache writes.
fn readable_usage(usage: &Value) -> bool {
    usage.as_object().is_some_and(|figures| {
        figures.iter().all(|(_, v)| v.as_i64().is_some_and(|v| (0..1_i64 << 32).contains(&v)))
            && [
                "input_tokens",
                "cached_input_tokens",
                "output_tokens",
                "reasoning_output_tokens",
                "total_tokens",
            ]
            .iter()
            .all(|key| figures.contains_key(*key))
    })
}

fn n(value: &Value, key: &str) -> i64 {
    value.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn s(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

#[allow(clippy::too_many_arguments)]
fn call_row(
    harness: &str,
    key: &Key,
    ts: &str,
    model: &str,
    (input, cache_read, cache_write, output, reasoning): (i64, i64, i64, i64, Option<i64>),
    file: &str,
    line: u64,
) -> ExpectedCall {
    ExpectedCall {
        harness: harness.to_string(),
        session_id: key.1.clone(),
        parent_session_id: key.2.clone(),
        ts: ts.to_string(),
        provider: Harness::from_name(harness).expect("a harness").provider().to_string(),
        model: model.to_string(),
        input_tokens: input,
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        output_tokens: output,
        reasoning_tokens: reasoning,
        file: file.to_string(),
        line,
    }
}

/// Reads every transcript under the home's roots and applies the accounting rules of issue 15.
fn read_home(dir: &Path, opts: &HarnessOptions) -> Reading {
    let mut reading = Reading::default();
    let all = transcripts(dir);
    let mut claude = Vec::new();
    let mut codex = Vec::new();
    let mut gemini = Vec::new();
    for (path, lines) in &all {
        for (index, line) in lines.iter().enumerate() {
            if line.is_none() {
                reading.errors.push((path.clone(), index as u64 + 1));
            }
        }
        match role(path, opts) {
            Some(Role::ClaudeMain) => claude.push((path, None, lines)),
            Some(Role::ClaudeAgent(agent)) => claude.push((path, Some(agent), lines)),
            Some(Role::Codex) => codex.push((path, lines)),
            Some(Role::Gemini { slug, parent }) => gemini.push((path, slug, parent, lines)),
            None => panic!("{path} is no harness's transcript"),
        }
    }
    read_claude(&mut reading, &claude);
    read_codex(&mut reading, &codex, &all);
    read_gemini(&mut reading, dir, opts, &gemini);
    let mut by_session: BTreeMap<Key, Vec<&ExpectedCall>> = BTreeMap::new();
    for call in &reading.calls {
        by_session
            .entry((call.harness.clone(), call.session_id.clone(), call.parent_session_id.clone()))
            .or_default()
            .push(call);
    }
    for (key, session) in reading.sessions.iter_mut() {
        let mut calls = by_session.remove(key).unwrap_or_default();
        calls.sort_by_key(|call| (call.file.clone(), call.line));
        session.calls = calls.len() as u64;
        session.input_tokens = calls.iter().map(|c| c.input_tokens).sum();
        session.output_tokens = calls.iter().map(|c| c.output_tokens).sum();
        session.model = calls.first().map(|c| c.model.clone());
        session.tool_calls = reading.tools_per_session.get(key).copied().unwrap_or(0);
    }
    // Roots: each session starts at its parent (else itself), then every pass moves each one up
    // a level, to the parent of the id it is at, until a pass moves none.
    let mut up_of: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
    for (harness, id, parent) in reading.sessions.keys() {
        let slot = up_of.entry((harness.clone(), id.clone())).or_insert_with(|| parent.clone());
        *slot = match (slot.take(), parent) {
            (Some(a), Some(b)) => Some(a.min(b.clone())),
            _ => None,
        };
    }
    for ((_, id, parent), session) in reading.sessions.iter_mut() {
        session.root_session_id = parent.clone().unwrap_or_else(|| id.clone());
    }
    for _ in 0..reading.sessions.len() {
        let mut moved = false;
        for ((harness, _, _), session) in reading.sessions.iter_mut() {
            if let Some(Some(up)) = up_of.get(&(harness.clone(), session.root_session_id.clone())) {
                session.root_session_id = up.clone();
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    reading.calls.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    reading.tool_calls.sort_by(|a, b| {
        (&a.harness, &a.session_id, &a.call_id).cmp(&(&b.harness, &b.session_id, &b.call_id))
    });
    reading.errors.sort();
    reading.shadowed.sort();
    reading
}

type ClaudeInput<'a> = (&'a String, Option<String>, &'a Vec<Option<Value>>);

/// Claude: rows of every copy, then one per (sessionId, message.id) by largest output, then
/// not sidechain, then main files first and file order.
fn read_claude(reading: &mut Reading, files: &[ClaudeInput]) {
    // (slot) → copies: (output, sidechain, order, session key, ts, model, figures)
    type Copy = (i64, bool, (bool, String, u64), Key, String, String, (i64, i64, i64, i64, Option<i64>));
    let mut copies: BTreeMap<(String, String), Vec<Copy>> = BTreeMap::new();
    type Block = (bool, (bool, String, u64), Key, Value, Value);
    let mut uses: BTreeMap<(String, String), Vec<Block>> = BTreeMap::new();
    let mut results: BTreeMap<(String, String), Vec<Block>> = BTreeMap::new();
    for (path, agent, lines) in files {
        for (index, line) in lines.iter().enumerate() {
            let Some(line) = line else { continue };
            let Some(sid) = line["sessionId"].as_str() else { continue };
            let key: Key = match agent {
                Some(agent) => ("claude".into(), agent.clone(), Some(sid.to_string())),
                None => ("claude".into(), sid.to_string(), None),
            };
            let session = reading.session("claude", &key.1, key.2.as_deref(), path);
            stamp(session, line["timestamp"].as_str());
            if session.cwd.is_none() {
                session.cwd = line["cwd"].as_str().map(str::to_string);
            }
            let order = (agent.is_some(), path.to_string(), index as u64 + 1);
            let sidechain = line["isSidechain"] == true;
            let message = &line["message"];
            let empty = Vec::new();
            let content = message["content"].as_array().unwrap_or(&empty);
            match line["type"].as_str() {
                Some("assistant") => {
                    for block in content.iter().filter(|b| b["type"] == "tool_use") {
                        uses.entry((sid.to_string(), s(block, "id"))).or_default().push((
                            sidechain,
                            order.clone(),
                            key.clone(),
                            line["timestamp"].clone(),
                            block.clone(),
                        ));
                    }
                    if message["model"] == "<synthetic>" {
                        continue;
                    }
                    let usage = &message["usage"];
                    let (write, read) =
                        (n(usage, "cache_creation_input_tokens"), n(usage, "cache_read_input_tokens"));
                    let figures = (
                        n(usage, "input_tokens") + write + read,
                        read,
                        write,
                        n(usage, "output_tokens"),
                        None,
                    );
                    copies.entry((sid.to_string(), s(message, "id"))).or_default().push((
                        n(usage, "output_tokens"),
                        sidechain,
                        order,
                        key,
                        s(line, "timestamp"),
                        s(message, "model"),
                        figures,
                    ));
                }
                Some("user") => {
                    for block in content.iter().filter(|b| b["type"] == "tool_result") {
                        results.entry((sid.to_string(), s(block, "tool_use_id"))).or_default().push((
                            sidechain,
                            order.clone(),
                            key.clone(),
                            line["toolUseResult"].clone(),
                            block.clone(),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    for (_, mut group) in copies {
        group.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let (_, _, (_, file, line), key, ts, model, figures) = group.swap_remove(0);
        reading.calls.push(call_row("claude", &key, &ts, &model, figures, &file, line));
    }
    let pick = |mut group: Vec<Block>| {
        group.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        group.swap_remove(0)
    };
    for (slot, group) in uses {
        let (_, _, key, ts, block) = pick(group);
        let result = results.remove(&slot).map(pick);
        let failed = result.as_ref().is_some_and(|r| r.4["is_error"] == true);
        let error = failed.then(|| {
            let content = &result.as_ref().expect("a result").4["content"];
            match content {
                Value::String(text) => text.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
                }
                _ => String::new(),
            }
        });
        let duration_ms = result.as_ref().and_then(|r| r.3.get("durationMs")).and_then(Value::as_i64);
        let name = s(&block, "name");
        *reading.tools_per_session.entry(key.clone()).or_default() += 1;
        reading.tool_calls.push(ExpectedToolCall {
            harness: "claude".into(),
            session_id: key.1,
            ts: ts.as_str().unwrap_or_default().to_string(),
            mcp_server: name.strip_prefix("mcp__").and_then(server_named),
            tool: name,
            call_id: slot.1,
            ok: !failed,
            error,
            duration_ms,
            result_bytes: result.as_ref().map(|r| bytes_of(r.4.get("content"))),
            response: None,
            shared_by: 0,
        });
    }
}

/// Codex: the plain sibling over the `.zst`, `sessions/` over `archived_sessions/`; lineage from
/// the first `session_meta`; replayed counts found by their totals being one of the parent's.
fn read_codex(
    reading: &mut Reading,
    files: &[(&String, &Vec<Option<Value>>)],
    all: &BTreeMap<String, Vec<Option<Value>>>,
) {
    let name_of =
        |path: &str| path.rsplit('/').next().unwrap_or_default().trim_end_matches(".zst").to_string();
    let active: BTreeSet<String> =
        files.iter().filter(|(p, _)| !p.contains("archived_sessions/")).map(|(p, _)| name_of(p)).collect();
    let counted: Vec<_> = files
        .iter()
        .filter(|(path, _)| {
            let shadowed = (path.ends_with(".zst") && all.contains_key(path.trim_end_matches(".zst")))
                || (path.contains("archived_sessions/") && active.contains(&name_of(path)));
            if shadowed {
                reading.shadowed.push(path.to_string());
            }
            !shadowed
        })
        .collect();
    // Thread id → (parent, totals of its counts, its function calls' ids).
    type Thread = (Option<String>, Vec<Value>, BTreeSet<String>);
    let mut threads: BTreeMap<String, Thread> = BTreeMap::new();
    let meta_of = |lines: &Vec<Option<Value>>| -> Value {
        lines
            .iter()
            .flatten()
            .find(|l| l["type"] == "session_meta")
            .map(|l| l["payload"].clone())
            .unwrap_or_default()
    };
    for (_, lines) in &counted {
        let meta = meta_of(lines);
        let parent = meta["forked_from_id"]
            .as_str()
            .or(meta["source"]["subagent"]["thread_spawn"]["parent_thread_id"].as_str())
            .map(str::to_string);
        let entry = threads.entry(s(&meta, "id")).or_default();
        entry.0 = parent;
        for line in lines.iter().flatten() {
            let payload = &line["payload"];
            if payload["type"] == "token_count" && !payload["info"].is_null() {
                entry.1.push(payload["info"]["total_token_usage"].clone());
            }
            if payload["type"] == "function_call" {
                entry.2.insert(s(payload, "call_id"));
            }
        }
    }
    let numbers = |usage: &Value| -> [i64; 6] {
        [
            "input_tokens",
            "cached_input_tokens",
            "cache_write_input_tokens",
            "output_tokens",
            "reasoning_output_tokens",
            "total_tokens",
        ]
        .map(|key| n(usage, key))
    };
    for (path, lines) in counted {
        let meta = meta_of(lines);
        let id = s(&meta, "id");
        let parent = threads[&id].0.clone();
        let parent_totals =
            parent.as_ref().and_then(|p| threads.get(p)).map(|t| t.1.clone()).unwrap_or_default();
        let mut ancestors_calls = BTreeSet::new();
        let mut up = parent.clone();
        while let Some(thread) = up.and_then(|p| threads.get(&p)) {
            ancestors_calls.extend(thread.2.iter().cloned());
            up = thread.0.clone();
        }
        let key: Key = ("codex".into(), id.clone(), parent.clone());
        let session = reading.session("codex", &id, parent.as_deref(), path);
        session.cwd = meta["cwd"].as_str().map(str::to_string);
        let mut model = String::new();
        let mut before: Option<[i64; 6]> = None;
        let mut calls = Vec::new();
        let mut outputs: BTreeMap<String, String> = BTreeMap::new();
        let mut output_bytes: BTreeMap<String, i64> = BTreeMap::new();
        let mut servers: BTreeMap<String, String> = BTreeMap::new();
        for (index, line) in lines.iter().enumerate() {
            let Some(line) = line else { continue };
            stamp(reading.sessions.get_mut(&key).expect("opened"), line["timestamp"].as_str());
            let payload = &line["payload"];
            if line["type"] == "turn_context" {
                model = s(payload, "model");
            }
            if line["type"] == "event_msg" && payload["type"] == "token_count" && !payload["info"].is_null() {
                let info = &payload["info"];
                if !readable_usage(&info["total_token_usage"]) {
                    reading.errors.push((path.to_string(), index as u64 + 1));
                    continue;
                }
                let totals = numbers(&info["total_token_usage"]);
                let replayed = parent_totals.contains(&info["total_token_usage"]);
                let previous = before.replace(totals);
                if replayed || previous == Some(totals) {
                    continue;
                }
                let base = previous
                    .filter(|p| p.iter().zip(totals).all(|(then, now)| now >= *then))
                    .unwrap_or([0; 6]);
                let figures = if readable_usage(&info["last_token_usage"]) {
                    numbers(&info["last_token_usage"])
                } else {
                    [0, 1, 2, 3, 4, 5].map(|k| totals[k] - base[k])
                };
                let row = (figures[0], figures[1], figures[2], figures[3], Some(figures[4]));
                reading.calls.push(call_row(
                    "codex",
                    &key,
                    &s(line, "timestamp"),
                    &model,
                    row,
                    path,
                    index as u64 + 1,
                ));
            }
            if payload["type"] == "function_call" && !ancestors_calls.contains(&s(payload, "call_id")) {
                calls.push((s(line, "timestamp"), s(payload, "name"), s(payload, "call_id")));
            }
            if payload["type"] == "function_call_output" {
                outputs.entry(s(payload, "call_id")).or_insert_with(|| s(payload, "output"));
                output_bytes.entry(s(payload, "call_id")).or_insert_with(|| bytes_of(payload.get("output")));
            }
            if payload["type"] == "mcp_tool_call_end" && payload["invocation"]["server"].is_string() {
                servers.entry(s(payload, "call_id")).or_insert_with(|| s(&payload["invocation"], "server"));
            }
        }
        for (ts, tool, call_id) in calls {
            let output = outputs.get(&call_id).cloned().unwrap_or_default();
            let code = output
                .lines()
                .find_map(|l| l.strip_prefix("Process exited with code "))
                .map(|c| c.trim().to_string());
            let failed = code.is_some_and(|c| c != "0");
            *reading.tools_per_session.entry(key.clone()).or_default() += 1;
            reading.tool_calls.push(ExpectedToolCall {
                harness: "codex".into(),
                session_id: id.clone(),
                ts,
                ok: !failed,
                error: failed.then_some(output),
                duration_ms: None,
                mcp_server: servers
                    .get(&call_id)
                    .cloned()
                    .or_else(|| tool.strip_prefix("mcp__").and_then(server_named)),
                result_bytes: output_bytes.get(&call_id).copied(),
                tool,
                call_id,
                response: None,
                shared_by: 0,
            });
        }
    }
}

type GeminiInput<'a> = (&'a String, String, Option<String>, &'a Vec<Option<Value>>);

/// Gemini: the last write of each message id, rewinds ignored; cwd from `projects.json`.
fn read_gemini(reading: &mut Reading, dir: &Path, opts: &HarnessOptions, files: &[GeminiInput]) {
    if files.is_empty() {
        return;
    }
    let registry = std::fs::read_to_string(dir.join(relative(&opts.gemini_home, ".gemini/projects.json")))
        .expect("projects.json");
    let registry: Value = serde_json::from_str(&registry).expect("JSON");
    let root_of: BTreeMap<String, String> = registry["projects"]
        .as_object()
        .expect("projects")
        .iter()
        .map(|(root, slug)| (slug.as_str().unwrap().to_string(), root.clone()))
        .collect();
    for (path, slug, parent, lines) in files {
        let meta = lines.iter().flatten().find(|l| l.get("projectHash").is_some()).expect("a metadata line");
        let id = s(meta, "sessionId");
        let key: Key = ("gemini".into(), id.clone(), parent.clone());
        let session = reading.session("gemini", &id, parent.as_deref(), path);
        session.cwd = root_of.get(slug).cloned();
        stamp(session, meta["startTime"].as_str());
        let mut order = Vec::new();
        let mut last: BTreeMap<String, (u64, Value)> = BTreeMap::new();
        for (index, line) in lines.iter().enumerate() {
            let Some(line) = line else { continue };
            let Some(message) = line["id"].as_str() else { continue };
            stamp(session, line["timestamp"].as_str());
            if !last.contains_key(message) {
                order.push(message.to_string());
            }
            last.insert(message.to_string(), (index as u64 + 1, line.clone()));
        }
        for message in order {
            let (line, value) = &last[&message];
            if value["type"] == "gemini" && value["tokens"].is_object() {
                let t = &value["tokens"];
                let row = (
                    n(t, "input") + n(t, "tool"),
                    n(t, "cached"),
                    0,
                    n(t, "output") + n(t, "thoughts"),
                    Some(n(t, "thoughts")),
                );
                reading.calls.push(call_row(
                    "gemini",
                    &key,
                    &s(value, "timestamp"),
                    &s(value, "model"),
                    row,
                    path,
                    *line,
                ));
            }
            for tool in value["toolCalls"].as_array().into_iter().flatten() {
                let ok = tool["status"] == "success";
                let error =
                    tool["result"][0]["functionResponse"]["response"]["error"].as_str().map(str::to_string);
                *reading.tools_per_session.entry(key.clone()).or_default() += 1;
                reading.tool_calls.push(ExpectedToolCall {
                    harness: "gemini".into(),
                    session_id: id.clone(),
                    ts: s(tool, "timestamp"),
                    tool: s(tool, "name"),
                    call_id: s(tool, "id"),
                    ok,
                    error: if ok { None } else { error.or_else(|| Some(s(tool, "status"))) },
                    duration_ms: None,
                    mcp_server: server_named(&s(tool, "name")),
                    result_bytes: tool["result"]
                        .get(0)
                        .and_then(|part| part["functionResponse"].get("response"))
                        .map(|response| bytes_of(Some(response))),
                    response: None,
                    shared_by: 0,
                });
            }
        }
    }
}

/// The `<server>` of a name `<server>__<tool>`.
fn server_named(name: &str) -> Option<String> {
    name.split_once("__")
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
        .map(|(server, _)| server.to_string())
}

/// A result's bytes: a string's, else its JSON text's; none 0.
fn bytes_of(content: Option<&Value>) -> i64 {
    match content {
        None => 0,
        Some(Value::String(text)) => text.len() as i64,
        Some(other) => serde_json::to_string(other).expect("JSON").len() as i64,
    }
}

fn assert_matches_reading(home: &Home) {
    let expected = &home.expected;
    let reading = read_home(&home.dir, &home.opts);
    assert_eq!(reading.errors, expected.errors, "damaged lines");
    assert_eq!(reading.shadowed, expected.shadowed, "shadowed copies");
    assert_eq!(reading.calls.len(), expected.calls.len(), "calls");
    for (read, tallied) in reading.calls.iter().zip(&expected.calls) {
        assert_eq!(read, tallied);
    }
    // The reading does not find each tool call's response: tests/tool_spend.rs checks the
    // tally's against the binary's calls.
    let unshared = |t: &ExpectedToolCall| ExpectedToolCall { response: None, shared_by: 0, ..t.clone() };
    assert_eq!(reading.tool_calls, expected.tool_calls.iter().map(unshared).collect::<Vec<_>>());
    let sessions: Vec<ExpectedSession> = reading.sessions.into_values().collect();
    assert_eq!(sessions, expected.sessions);
    let mut by_model: BTreeMap<(String, String), CallSums> = BTreeMap::new();
    for call in &reading.calls {
        by_model.entry((call.harness.clone(), call.model.clone())).or_default().add(call);
    }
    assert_eq!(by_model, expected.by_model);
    let on_disk: BTreeSet<String> = transcripts(&home.dir).into_keys().collect();
    assert_eq!(on_disk, expected.files.iter().cloned().collect(), "every transcript listed");
}

#[test]
fn same_options_write_identical_bytes() {
    let opts = HarnessOptions::default();
    let (first, second) = (Home::write("det-a", opts.clone()), Home::write("det-b", opts.clone()));
    assert_eq!(files(&first.dir), files(&second.dir));
    assert_eq!(first.expected, second.expected);
    let other = Home::write("det-c", HarnessOptions { seed: 7, ..opts });
    assert_ne!(files(&first.dir), files(&other.dir));
}

#[test]
fn the_tally_matches_an_independent_reading() {
    let options = [
        HarnessOptions::default(),
        HarnessOptions { seed: 7, sessions: 30, ..HarnessOptions::default() },
        HarnessOptions { seed: 9, sessions: 3, damage: false, ..HarnessOptions::default() },
    ];
    for (index, opts) in options.into_iter().enumerate() {
        assert_matches_reading(&Home::write(&format!("reread-{index}"), opts));
    }
}

#[test]
fn moved_roots_hold_every_transcript_and_the_tally_still_matches() {
    let opts = HarnessOptions {
        claude_dirs: vec![PathBuf::from("cfg/claude")],
        codex_home: PathBuf::from("cfg/codex"),
        gemini_home: PathBuf::from("cfg/gemini-home"),
        ..HarnessOptions::default()
    };
    let home = Home::write("moved", opts);
    assert_matches_reading(&home);
    let paths: Vec<String> = files(&home.dir).into_keys().collect();
    assert!(paths.iter().all(|p| p.starts_with("cfg/")), "{paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("cfg/claude/projects/")));
    assert!(paths.iter().any(|p| p.starts_with("cfg/codex/sessions/")));
    assert!(paths.iter().any(|p| p.starts_with("cfg/gemini-home/.gemini/tmp/")));
    let vars: Vec<(&str, PathBuf)> = home.opts.env_vars(&home.dir);
    let names: Vec<&str> = vars.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"]);
    assert!(vars.iter().all(|(_, path)| path.is_dir()), "{vars:?}");
    let native = Home::write("native", HarnessOptions::default());
    assert_eq!(native.opts.env_vars(&native.dir).len(), 2, "two Claude roots: no CLAUDE_CONFIG_DIR");
    assert_eq!(home.expected.by_model, native.expected.by_model, "the same sessions, elsewhere");
}

#[test]
fn without_rows_the_sums_stay() {
    let with = Home::write("rows", HarnessOptions::default());
    let without = Home::write("no-rows", HarnessOptions { keep_rows: false, ..HarnessOptions::default() });
    assert!(without.expected.calls.is_empty() && without.expected.sessions.is_empty());
    assert_eq!(with.expected.by_model, without.expected.by_model);
    assert_eq!(with.expected.by_harness, without.expected.by_harness);
    assert_eq!(with.expected.errors, without.expected.errors);
    assert_eq!(
        with.expected.by_harness["claude"].calls,
        with.expected.calls.iter().filter(|c| c.harness == "claude").count() as u64
    );
}

#[test]
fn one_harness_alone() {
    let home = Home::write(
        "claude-only",
        HarnessOptions { harnesses: vec![Harness::Claude], ..HarnessOptions::default() },
    );
    assert_eq!(home.expected.by_harness.keys().collect::<Vec<_>>(), ["claude"]);
    assert_matches_reading(&home);
}

/// The lines of every transcript whose path contains `part`.
fn lines_in<'a>(
    all: &'a BTreeMap<String, Vec<Option<Value>>>,
    part: &'a str,
) -> impl Iterator<Item = (&'a String, &'a Value)> {
    all.iter()
        .filter(move |(p, _)| p.contains(part))
        .flat_map(|(p, lines)| lines.iter().flatten().map(move |l| (p, l)))
}

#[test]
fn the_default_home_has_every_claude_trap() {
    let home = Home::write("claude-traps", HarnessOptions::default());
    let expected = &home.expected;
    let all = transcripts(&home.dir);
    let bytes: u64 = files(&home.dir).values().map(|b| b.len() as u64).sum();
    assert!(bytes < 2_000_000, "{bytes} bytes");
    let claude: Vec<(&String, &Value)> = lines_in(&all, "projects/").collect();
    assert!(all.keys().any(|p| p.starts_with(".claude/projects/")));
    assert!(all.keys().any(|p| p.starts_with(".config/claude/projects/")));
    assert!(all.keys().any(|p| p.contains("/subagents/agent-")));
    assert!(expected.other_files.iter().any(|p| p.ends_with(".meta.json")));
    assert!(
        all.keys().any(|p| p.split('/').nth(3).is_some_and(|n| n.starts_with("agent-"))),
        "a flat agent file"
    );
    assert!(all.keys().any(|p| p.contains("-home-ana-src-caf--menu/")), "é encodes as one dash");
    // A response as thinking, text and tool_use lines of one message id, only the output growing.
    let mut by_id: BTreeMap<(&str, &str), Vec<&Value>> = BTreeMap::new();
    for (path, line) in &claude {
        if line["type"] == "assistant" && !path.contains("agent-") {
            by_id
                .entry((line["sessionId"].as_str().unwrap(), line["message"]["id"].as_str().unwrap()))
                .or_default()
                .push(line);
        }
    }
    assert!(by_id.values().any(|copies| {
        let kinds: BTreeSet<&str> =
            copies.iter().filter_map(|c| c["message"]["content"][0]["type"].as_str()).collect();
        let outputs: BTreeSet<i64> =
            copies.iter().map(|c| n(&c["message"]["usage"], "output_tokens")).collect();
        kinds == BTreeSet::from(["thinking", "text", "tool_use"]) && outputs.len() >= 3
    }));
    let assistant = || claude.iter().filter(|(_, l)| l["type"] == "assistant");
    assert!(assistant().any(|(_, l)| l.get("requestId").is_none() && l["message"]["model"] != "<synthetic>"));
    assert!(
        assistant().any(|(_, l)| l["message"]["model"] == "<synthetic>" && l["isApiErrorMessage"] == true)
    );
    // Identical copies, one after the other.
    assert!(all.values().any(|lines| {
        lines
            .windows(2)
            .any(|w| w[0].is_some() && w[0] == w[1] && w[0].as_ref().unwrap()["type"] == "assistant")
    }));
    // A sidechain copy tying a non-sidechain copy on output, with other figures.
    assert!(by_id.values().any(|copies| copies.iter().any(|a| a["isSidechain"] == true
        && copies.iter().any(|b| b["isSidechain"] == false
            && a["message"]["usage"]["output_tokens"] == b["message"]["usage"]["output_tokens"]
            && a["message"]["usage"]["cache_read_input_tokens"]
                != b["message"]["usage"]["cache_read_input_tokens"]))));
    // A subagent file replaying a parent's message id.
    let parent_ids: BTreeSet<&str> = by_id.keys().map(|(_, id)| *id).collect();
    assert!(claude.iter().any(|(p, l)| p.contains("subagents/")
        && l["type"] == "assistant"
        && parent_ids.contains(l["message"]["id"].as_str().unwrap())));
    // Gateway sessions reusing message ids across sessions.
    let mut sessions_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (session, id) in by_id.keys() {
        sessions_of.entry(id).or_default().insert(session);
    }
    assert!(sessions_of.values().any(|sessions| sessions.len() > 1));
    for kind in ["summary", "progress", "x-future-event", "file-history-snapshot"] {
        assert!(claude.iter().any(|(_, l)| l["type"] == kind), "no {kind} line");
    }
    assert!(
        claude
            .iter()
            .any(|(_, l)| l["subtype"] == "compact_boundary" && l.get("logicalParentUuid").is_some())
    );
    assert!(
        claude
            .iter()
            .any(|(_, l)| l["type"] == "progress" && l["data"]["message"]["message"]["usage"].is_object())
    );
    assert!(claude.iter().any(|(_, l)| l.get("attributionPlugin").is_some()), "an unknown field");
    let results: Vec<&Value> = claude
        .iter()
        .flat_map(|(_, l)| l["message"]["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    for flag in [Some(true), Some(false), None] {
        assert!(
            results.iter().any(|b| b.get("is_error").and_then(Value::as_bool) == flag),
            "is_error {flag:?}"
        );
    }
    let tools: Vec<&ExpectedToolCall> =
        expected.tool_calls.iter().filter(|t| t.harness == "claude").collect();
    assert!(tools.iter().any(|t| !t.ok) && tools.iter().any(|t| t.duration_ms.is_some()));
    // A file whose stem is not its session id.
    assert!(expected.sessions.iter().any(|s| s.harness == "claude"
        && s.parent_session_id.is_none()
        && !s.file.ends_with(&format!("/{}.jsonl", s.session_id))));
    // Subagent ids colliding across parents.
    let mut parents: BTreeMap<&str, BTreeSet<&Option<String>>> = BTreeMap::new();
    for session in expected.sessions.iter().filter(|s| s.harness == "claude" && s.parent_session_id.is_some())
    {
        parents.entry(&session.session_id).or_default().insert(&session.parent_session_id);
    }
    assert!(parents.values().any(|p| p.len() > 1), "{parents:?}");
    let damaged: BTreeSet<&str> =
        expected.errors.iter().filter(|(p, _)| p.contains("projects/")).map(|(p, _)| p.as_str()).collect();
    assert_eq!(damaged.len(), 1);
    assert!(expected.cut_off.iter().any(|p| p.contains("projects/")));
}

#[test]
fn the_default_home_has_every_codex_trap() {
    let home = Home::write("codex-traps", HarnessOptions::default());
    let expected = &home.expected;
    let all = transcripts(&home.dir);
    assert!(all.keys().any(|p| p.starts_with(".codex/sessions/") && p.ends_with(".jsonl.zst")));
    assert!(all.keys().any(|p| p.starts_with(".codex/archived_sessions/") && p.ends_with(".jsonl.zst")));
    assert!(all.keys().any(|p| p.starts_with(".codex/archived_sessions/") && p.ends_with(".jsonl")));
    assert_eq!(expected.shadowed.len(), 2, "a .zst beside its plain file, an archived copy");
    for shadow in &expected.shadowed {
        let counted = expected.sessions.iter().find(|s| {
            let name = |p: &str| p.rsplit('/').next().unwrap().trim_end_matches(".zst").to_string();
            name(&s.file) == name(shadow)
        });
        let counted = counted.expect("the counted copy");
        assert!(all[shadow].len() < all[&counted.file].len(), "the shadowed copy is older and shorter");
    }
    // A folder named by the local date, not the UTC one.
    assert!(all.iter().filter(|(path, _)| path.starts_with(".codex/sessions/")).any(|(path, lines)| {
        let meta = lines[0].as_ref().expect("a session_meta first");
        let utc_day = meta["timestamp"].as_str().unwrap()[..10].replace('-', "/");
        !path.contains(&utc_day)
    }));
    let codex: Vec<(&String, &Value)> = lines_in(&all, ".codex/").collect();
    let counts: Vec<&Value> =
        codex.iter().filter(|(_, l)| l["payload"]["type"] == "token_count").map(|(_, l)| *l).collect();
    assert!(counts.iter().any(|c| c["payload"]["info"].is_null()));
    assert!(
        counts
            .iter()
            .any(|c| c["payload"]["info"].is_object()
                && c["payload"]["info"].get("last_token_usage").is_none())
    );
    assert!(codex.iter().any(|(_, l)| l["payload"]["type"] == "custom_tool_call"));
    // Re-emitted totals in one file, and totals that drop.
    let mut reemit = false;
    let mut dropped = false;
    for lines in all.iter().filter(|(p, _)| p.starts_with(".codex/")).map(|(_, l)| l) {
        let totals: Vec<i64> = lines
            .iter()
            .flatten()
            .filter(|l| l["payload"]["type"] == "token_count" && l["payload"]["info"].is_object())
            .filter(|l| readable_usage(&l["payload"]["info"]["total_token_usage"]))
            .map(|l| n(&l["payload"]["info"]["total_token_usage"], "total_tokens"))
            .collect();
        reemit |= totals.windows(2).any(|w| w[0] == w[1]);
        dropped |= totals.windows(2).any(|w| w[1] < w[0]);
    }
    assert!(reemit && dropped);
    let sessions: Vec<&ExpectedSession> = expected.sessions.iter().filter(|s| s.harness == "codex").collect();
    let children: Vec<&&ExpectedSession> =
        sessions.iter().filter(|s| s.parent_session_id.is_some()).collect();
    assert_eq!(children.len(), 4, "a fork and a spawn of thread 0, a spawn of the spawn and its fork");
    // A chain three deep: a session whose parent's parent has a parent, all under one root.
    let parent_of =
        |id: &str| sessions.iter().find(|s| s.session_id == id).and_then(|s| s.parent_session_id.clone());
    let deepest = children
        .iter()
        .find(|c| {
            let grandparent = c.parent_session_id.as_deref().and_then(parent_of);
            grandparent.as_deref().and_then(parent_of).is_some()
        })
        .expect("a chain three deep");
    assert!(children.iter().all(|c| c.root_session_id == deepest.root_session_id));
    assert!(deepest.calls > 0, "the deepest thread has calls of its own");
    let child_lines =
        |child: &ExpectedSession| all[&child.file].iter().flatten().cloned().collect::<Vec<_>>();
    assert!(children.iter().any(|c| child_lines(c)[0]["payload"]["forked_from_id"].is_string()));
    assert!(
        children.iter().any(|c| {
            let lines = child_lines(c);
            lines[0]["payload"]["source"]["subagent"]["thread_spawn"]["parent_thread_id"].is_string()
                && lines[1]["type"] == "session_meta"
        }),
        "a spawned child replaying its parent's session_meta"
    );
    for child in &children {
        let replayed_counts = child_lines(child)
            .iter()
            .filter(|l| l["payload"]["type"] == "token_count" && l["payload"]["info"].is_object())
            .count() as u64;
        assert!(replayed_counts > child.calls, "the child replays counts that are not its calls");
    }
    let models = |s: &ExpectedSession| -> BTreeSet<String> {
        expected.calls.iter().filter(|c| c.file == s.file).map(|c| c.model.clone()).collect()
    };
    assert!(sessions.iter().any(|s| models(s).len() == 2), "a model switch");
    let tools: Vec<&ExpectedToolCall> = expected.tool_calls.iter().filter(|t| t.harness == "codex").collect();
    assert!(tools.iter().any(|t| t.ok && t.tool == "exec_command") && tools.iter().any(|t| !t.ok));
    let damaged: BTreeSet<&str> =
        expected.errors.iter().filter(|(p, _)| p.starts_with(".codex/")).map(|(p, _)| p.as_str()).collect();
    // The archived compressed rollout, the damaged one, and the totals-only one with its damaged
    // re-emitted counts.
    assert!(damaged.iter().any(|p| p.ends_with(".zst")) && damaged.len() == 3, "{damaged:?}");
    let damaged_counts = expected
        .errors
        .iter()
        .filter(|(p, _)| p.starts_with(".codex/"))
        .filter(|(p, line)| {
            all[p][*line as usize - 1].as_ref().is_some_and(|l| l["payload"]["type"] == "token_count")
        })
        .count();
    assert!(damaged_counts >= 7, "re-emitted counts with damaged totals: {damaged_counts}");
    assert!(expected.cut_off.iter().any(|p| p.starts_with(".codex/")));
}

#[test]
fn the_default_home_has_every_gemini_trap() {
    let home = Home::write("gemini-traps", HarnessOptions::default());
    let expected = &home.expected;
    let all = transcripts(&home.dir);
    let gemini: Vec<(&String, &Value)> = lines_in(&all, ".gemini/").collect();
    let mut writes: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (_, line) in &gemini {
        if let Some(id) = line["id"].as_str() {
            writes.entry(id).or_default().push(line);
        }
    }
    assert!(writes.values().any(|w| w.len() > 1
        && w[0].get("tokens").is_none()
        && w[w.len() - 1]["tokens"].is_object()
        && w[0]["toolCalls"][0]["status"] != w[w.len() - 1]["toolCalls"][0]["status"]));
    assert!(gemini.iter().any(|(_, l)| l.get("$set").is_some()));
    let rewound: Vec<&str> = gemini.iter().filter_map(|(_, l)| l["$rewindTo"].as_str()).collect();
    assert_eq!(rewound.len(), 1);
    assert!(gemini.iter().any(|(_, l)| l["type"] == "info"));
    assert!(
        expected.sessions.iter().any(|s| s.harness == "gemini"
            && s.parent_session_id.is_some()
            && s.file.split('/').count() == 6)
    );
    assert!(expected.other_files.iter().any(|p| p.ends_with("/.project_root")));
    assert!(expected.other_files.iter().any(|p| p == ".gemini/projects.json"));
    assert!(all.keys().any(|p| p.starts_with(".gemini/tmp/billing-api-1/chats/session-")));
    let tools: Vec<&ExpectedToolCall> =
        expected.tool_calls.iter().filter(|t| t.harness == "gemini").collect();
    assert!(tools.iter().any(|t| t.error.as_deref().is_some_and(|e| e.starts_with("[Operation Cancelled]"))));
    assert!(expected.errors.iter().any(|(p, _)| p.starts_with(".gemini/")));
    assert!(expected.cut_off.iter().any(|p| p.starts_with(".gemini/")));
    // The rewound response still counts: its id follows the rewind's target.
    let target_line = gemini.iter().position(|(_, l)| l["id"].as_str() == Some(rewound[0])).unwrap();
    let (rewound_file, response) = gemini[target_line + 1];
    assert_eq!(response["type"], "gemini");
    let after = writes[response["id"].as_str().unwrap()].last().unwrap();
    assert!(expected.calls.iter().any(|c| &c.file == rewound_file
        && c.output_tokens == n(&after["tokens"], "output") + n(&after["tokens"], "thoughts")));
}

/// The example lines of `shared/docs/harnesses.md` section 7.
const CLAUDE_EXAMPLE: &str = r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","slug":"quiet-amber-otter","type":"user","message":{"role":"user","content":"the invoice total test fails, find out why"},"uuid":"a1000000-0000-4000-8000-000000000001","timestamp":"2026-09-02T08:14:03.120Z","promptId":"p-77c1"}
{"parentUuid":"a1000000-0000-4000-8000-000000000001","isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","type":"assistant","requestId":"req_011CZq8uVx2Ab","message":{"id":"msg_01Hq7TzPx3KdW9aBcDeFgH12","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"thinking","thinking":"Start by running the test.","signature":"EqQBCkYI..."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2140,"cache_read_input_tokens":18233,"cache_creation":{"ephemeral_5m_input_tokens":2140,"ephemeral_1h_input_tokens":0},"output_tokens":9,"service_tier":"standard"}},"uuid":"a1000000-0000-4000-8000-000000000002","timestamp":"2026-09-02T08:14:06.480Z"}
{"parentUuid":"a1000000-0000-4000-8000-000000000002","isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","type":"assistant","requestId":"req_011CZq8uVx2Ab","message":{"id":"msg_01Hq7TzPx3KdW9aBcDeFgH12","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":"toolu_01Kd3mNpQ8rS","name":"Bash","input":{"command":"pytest tests/test_invoice.py -x -q","description":"Run failing test"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2140,"cache_read_input_tokens":18233,"cache_creation":{"ephemeral_5m_input_tokens":2140,"ephemeral_1h_input_tokens":0},"output_tokens":187,"service_tier":"standard"}},"uuid":"a1000000-0000-4000-8000-000000000003","timestamp":"2026-09-02T08:14:08.902Z"}
{"parentUuid":"a1000000-0000-4000-8000-000000000003","isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Kd3mNpQ8rS","content":"FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0","is_error":true}]},"toolUseResult":"Error: FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0","sourceToolAssistantUUID":"a1000000-0000-4000-8000-000000000003","sourceToolUseID":"toolu_01Kd3mNpQ8rS","uuid":"a1000000-0000-4000-8000-000000000004","timestamp":"2026-09-02T08:14:12.037Z"}
{"parentUuid":null,"logicalParentUuid":"a1000000-0000-4000-8000-000000000004","isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"level":"info","compactMetadata":{"trigger":"auto","preTokens":167420},"uuid":"a1000000-0000-4000-8000-000000000005","timestamp":"2026-09-02T09:40:51.300Z"}
{"parentUuid":"a1000000-0000-4000-8000-000000000005","isSidechain":false,"userType":"external","cwd":"/home/ana/src/billing-api","sessionId":"5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b","version":"2.1.210","gitBranch":"fix/rounding","type":"assistant","message":{"id":"0c7d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: Request was aborted."}],"stop_reason":"stop_sequence","stop_sequence":"","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"isApiErrorMessage":true,"uuid":"a1000000-0000-4000-8000-000000000006","timestamp":"2026-09-02T09:41:02.004Z"}"#;

const CODEX_EXAMPLE: &str = r#"{"timestamp":"2026-09-03T13:02:11.482Z","type":"session_meta","payload":{"id":"0199a3c4-5d6e-7f80-9a1b-2c3d4e5f6071","timestamp":"2026-09-03T13:02:11.401Z","cwd":"/home/ana/src/billing-api","originator":"codex_cli_rs","cli_version":"0.150.1","source":"cli","model_provider":"openai","git":{"commit_hash":"9f2c1e7","branch":"fix/rounding","repository_url":"git@github.com:ana/billing-api.git"}}}
{"timestamp":"2026-09-03T13:02:11.530Z","type":"turn_context","payload":{"turn_id":"t-1","cwd":"/home/ana/src/billing-api","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false},"model":"gpt-5.3-codex","effort":"medium","summary":"auto"}}
{"timestamp":"2026-09-03T13:02:11.531Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"why does test_total fail?"}]}}
{"timestamp":"2026-09-03T13:02:14.905Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Running the failing test**"}],"content":null,"encrypted_content":"gAAAAABo..."}}
{"timestamp":"2026-09-03T13:02:15.020Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"pytest tests/test_invoice.py -x -q\",\"workdir\":\"/home/ana/src/billing-api\"}","call_id":"call_R2d9XkQ7"}}
{"timestamp":"2026-09-03T13:02:15.044Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":14210,"cached_input_tokens":9984,"cache_write_input_tokens":0,"output_tokens":233,"reasoning_output_tokens":128,"total_tokens":14443},"last_token_usage":{"input_tokens":14210,"cached_input_tokens":9984,"cache_write_input_tokens":0,"output_tokens":233,"reasoning_output_tokens":128,"total_tokens":14443},"model_context_window":272000},"rate_limits":{"primary":{"used_percent":7.0,"window_minutes":300,"resets_at":1788447600},"secondary":{"used_percent":21.0,"window_minutes":10080,"resets_at":1788915600},"credits":null,"plan_type":"plus"}}}
{"timestamp":"2026-09-03T13:02:17.610Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_R2d9XkQ7","output":"Chunk ID: 4e1a\nWall time: 2.51 seconds\nProcess exited with code 1\nOriginal token count: 41\nOutput:\nFAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0\n"}}
{"timestamp":"2026-09-03T13:02:17.655Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":14210,"cached_input_tokens":9984,"cache_write_input_tokens":0,"output_tokens":233,"reasoning_output_tokens":128,"total_tokens":14443},"last_token_usage":{"input_tokens":14210,"cached_input_tokens":9984,"cache_write_input_tokens":0,"output_tokens":233,"reasoning_output_tokens":128,"total_tokens":14443},"model_context_window":272000},"rate_limits":null}}"#;

const GEMINI_EXAMPLE: &str = r#"{"sessionId":"7d2e9b40-1c3a-4e5f-8a9b-0c1d2e3f4a5b","projectHash":"3f5e8a0c9b7d6e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091","startTime":"2026-09-04T07:30:00.112Z","lastUpdated":"2026-09-04T07:30:00.112Z","kind":"main"}
{"id":"b7c1d2e3-0001-4aaa-8bbb-000000000001","timestamp":"2026-09-04T07:30:05.480Z","type":"user","content":[{"text":"why does test_total fail?"}]}
{"id":"b7c1d2e3-0002-4aaa-8bbb-000000000002","timestamp":"2026-09-04T07:30:09.013Z","type":"gemini","content":"","toolCalls":[{"id":"run_shell_command_1788507009013_0","name":"run_shell_command","args":{"command":"pytest tests/test_invoice.py -x -q"},"result":[{"functionResponse":{"id":"run_shell_command_1788507009013_0","name":"run_shell_command","response":{"output":"FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0\nExit Code: 1"}}}],"status":"success","timestamp":"2026-09-04T07:30:12.770Z","displayName":"Shell","description":"Run the failing test","renderOutputAsMarkdown":false}],"thoughts":[{"subject":"Reproducing","description":"Run the test first.","timestamp":"2026-09-04T07:30:07.900Z"}],"model":"gemini-3-pro-preview"}
{"id":"b7c1d2e3-0002-4aaa-8bbb-000000000002","timestamp":"2026-09-04T07:30:09.013Z","type":"gemini","content":"","toolCalls":[{"id":"run_shell_command_1788507009013_0","name":"run_shell_command","args":{"command":"pytest tests/test_invoice.py -x -q"},"result":[{"functionResponse":{"id":"run_shell_command_1788507009013_0","name":"run_shell_command","response":{"output":"FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0\nExit Code: 1"}}}],"status":"success","timestamp":"2026-09-04T07:30:12.770Z","displayName":"Shell","description":"Run the failing test","renderOutputAsMarkdown":false}],"thoughts":[{"subject":"Reproducing","description":"Run the test first.","timestamp":"2026-09-04T07:30:07.900Z"}],"tokens":{"input":12480,"output":61,"cached":8192,"thoughts":214,"tool":0,"total":12755},"model":"gemini-3-pro-preview"}
{"$set":{"lastUpdated":"2026-09-04T07:30:12.801Z"}}
{"$rewindTo":"b7c1d2e3-0002-4aaa-8bbb-000000000002"}"#;

fn parse(text: &str) -> Vec<Line> {
    text.lines().map(Line::parse).collect()
}

#[test]
fn the_examples_of_harnesses_md_section_7_give_their_figures() {
    let mut expected = HarnessExpected::new(true);
    let claude = parse(CLAUDE_EXAMPLE);
    let file = ".claude/projects/-home-ana-src-billing-api/5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b.jsonl";
    expected.record_claude(&[ClaudeFile { path: file.to_string(), agent_id: None, lines: &claude }]);
    let codex_file =
        ".codex/sessions/2026/09/03/rollout-2026-09-03T06-02-11-0199a3c4-5d6e-7f80-9a1b-2c3d4e5f6071.jsonl";
    expected.record_codex(codex_file, &parse(CODEX_EXAMPLE));
    let gemini_file = ".gemini/tmp/billing-api/chats/session-2026-09-04T07-30-7d2e9b40.jsonl";
    expected.record_gemini(gemini_file, None, "/home/ana/src/billing-api", &parse(GEMINI_EXAMPLE));
    expected.finish();
    type Figures<'a> = (&'a str, i64, i64, i64, i64, Option<i64>, u64);
    let figures: Vec<Figures> = expected
        .calls
        .iter()
        .map(|c| {
            (
                c.harness.as_str(),
                c.input_tokens,
                c.cache_read_tokens,
                c.cache_write_tokens,
                c.output_tokens,
                c.reasoning_tokens,
                c.line,
            )
        })
        .collect();
    assert_eq!(
        figures,
        [
            ("claude", 3 + 2140 + 18233, 18233, 2140, 187, None, 3),
            ("codex", 14210, 9984, 0, 233, Some(128), 6),
            ("gemini", 12480, 8192, 0, 61 + 214, Some(214), 4),
        ]
    );
    let tools: Vec<(&str, &str, bool)> =
        expected.tool_calls.iter().map(|t| (t.harness.as_str(), t.tool.as_str(), t.ok)).collect();
    assert_eq!(
        tools,
        [("claude", "Bash", false), ("codex", "exec_command", false), ("gemini", "run_shell_command", true)]
    );
    let claude_tool = &expected.tool_calls[0];
    assert_eq!(
        claude_tool.error.as_deref(),
        Some("FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0")
    );
    let sessions: Vec<(&str, &str, Option<&str>, Option<&str>)> = expected
        .sessions
        .iter()
        .map(|s| (s.harness.as_str(), s.session_id.as_str(), s.started_at.as_deref(), s.ended_at.as_deref()))
        .collect();
    assert_eq!(
        sessions,
        [
            (
                "claude",
                "5b1f0c2e-8d4a-4f7e-9a61-2c3d4e5f6a7b",
                Some("2026-09-02T08:14:03.120Z"),
                Some("2026-09-02T09:41:02.004Z")
            ),
            (
                "codex",
                "0199a3c4-5d6e-7f80-9a1b-2c3d4e5f6071",
                Some("2026-09-03T13:02:11.482Z"),
                Some("2026-09-03T13:02:17.655Z")
            ),
            (
                "gemini",
                "7d2e9b40-1c3a-4e5f-8a9b-0c1d2e3f4a5b",
                Some("2026-09-04T07:30:00.112Z"),
                Some("2026-09-04T07:30:09.013Z")
            ),
        ]
    );
}

#[test]
fn all_names_every_harness_once() {
    let names =
        |list: &[&str]| super::harnesses_named(&list.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    assert_eq!(names(&["gemini", "all"]), [Harness::Gemini, Harness::Claude, Harness::Codex]);
    assert_eq!(names(&["codex", "codex"]), [Harness::Codex]);
    assert!(names(&["cursor"]).is_empty());
}

#[test]
fn counting_writes_the_same_files_as_tallying() {
    let home = Home::write("tallied", HarnessOptions::default());
    let dir = std::env::temp_dir().join(format!("txq-harness-{}-counted", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = super::write_harness_files(&dir, &HarnessOptions::default()).expect("home written");
    assert_eq!(files(&dir), files(&home.dir));
    let mut paths = written.paths.clone();
    paths.sort();
    let mut listed: Vec<String> =
        home.expected.files.iter().chain(&home.expected.other_files).cloned().collect();
    listed.sort();
    assert_eq!(paths, listed);
    for (name, counts) in &home.expected.by_harness {
        assert_eq!(written.by_harness[name.as_str()], (counts.sessions, counts.files), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
