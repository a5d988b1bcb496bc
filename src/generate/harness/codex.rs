//! Codex CLI rollouts: which thread holds which trap, each rollout's lines as Codex writes them
//! (items of a response, then its `token_count`), forked and spawned children that begin by
//! replaying their parent, and where each file goes under `$CODEX_HOME` (local-time folders and
//! names, UTC line timestamps; `archived_sessions/`; `.jsonl.zst`).
//!
//! Thread roles by index: 0 the showcase (a count with null info, re-emitted counts, a model
//! switch, exit codes 0 and ≠ 0, a custom tool call, an image output) with a spawned child (which
//! replays the parent's `session_meta` and lines so far) and a forked child (which replays them
//! all, then counts once with totals only); the spawned child spawns a grandchild (replaying the
//! child's lines, its replay of the parent's included), and the grandchild is forked in turn: a
//! chain three deep below thread 0, each replaying the one above; 1 counts with totals only and a resume that drops
//! them; 2 compressed in `sessions/`; 3 archived; 4 archived compressed, with a damaged line;
//! 5 a plain rollout beside an older, shorter `.zst` of itself (the plain one counts); 6 the
//! same name in `sessions/` and, older and shorter, in `archived_sessions/` (the `sessions/`
//! copy counts); 7 the damaged lines. With damage, 1 and 7 also repeat their first counts with
//! a figure of the totals damaged (no call: the count before stays the baseline). The others draw re-emits, null infos, archiving and
//! compression at random, and responses of two or three MCP calls of two servers at once (each
//! with its `mcp_tool_call_end`; `docs__fetch_page` named as older builds named one), and turns
//! cut off after a function call, with no count after it in the turn. Every count reports the
//! account's rate-limit windows (5-hour and weekly, growing and resetting with the clock;
//! `Rollout::rate_limits`); Codex writes no service tier.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use super::{
    Harness, HarnessOptions, HarnessTally, Line, first_half, json_text, output_text, relative, sentence, ts,
    uuid_v7, write_lines,
};
use crate::generate::rng::{Rng, rfc3339};

const SALT: u64 = 0xC0DE_C0DE_0000_0002;
/// 2026-09-03T05:02:11.482Z, the first thread's start: 22:02 of the day before, local time.
const START_MS: u64 = 1_788_411_731_482;
/// The machine's local time, UTC−7, which names the folders and files.
const LOCAL_OFFSET_MS: i64 = -7 * 3_600_000;
const MODELS: &[&str] = &["gpt-5.3-codex", "gpt-5.1-codex"];
const SWITCHED_MODEL: &str = "gpt-5.1-codex-mini";
const PROJECTS: &[&str] =
    &["/home/ana/src/billing-api", "/home/ana/src/my_app", "/home/ana/work/infra.tools"];
/// (cli_version, writes `cache_write_input_tokens`, writes `event_msg.user_message`).
const VERSIONS: &[(&str, bool, bool)] =
    &[("0.150.1", true, false), ("0.146.0", true, true), ("0.130.0", false, true)];

const SHOWCASE: usize = 0;
const TOTALS_ONLY: usize = 1;
const COMPRESSED: usize = 2;
const ARCHIVED: usize = 3;
const ARCHIVED_COMPRESSED: usize = 4;
const BESIDE_ITS_ZST: usize = 5;
const IN_BOTH_TREES: usize = 6;
const DAMAGED: usize = 7;

/// Where a rollout is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Placement {
    archived: bool,
    zstd: bool,
}

/// Writes the Codex threads under `opts.codex_home`.
pub(super) fn write(dir: &Path, opts: &HarnessOptions, tally: &mut impl HarnessTally) -> io::Result<()> {
    let home = &opts.codex_home;
    let mut start_ms = START_MS;
    // Without the traps, the sessions are those after theirs.
    let first = if opts.traps { 0 } else { DAMAGED + 1 };
    for index in first..first + opts.sessions {
        let mut rng = Rng::derive(opts.seed ^ SALT, index as u64);
        if index > first {
            start_ms += 30 * 60_000 + 60_000 * rng.below(120);
        }
        let placement = match index {
            COMPRESSED => Placement { archived: false, zstd: true },
            ARCHIVED => Placement { archived: true, zstd: false },
            ARCHIVED_COMPRESSED => Placement { archived: true, zstd: true },
            SHOWCASE | TOTALS_ONLY | BESIDE_ITS_ZST | IN_BOTH_TREES | DAMAGED => {
                Placement { archived: false, zstd: false }
            }
            _ => Placement { archived: rng.percent(10), zstd: rng.percent(10) },
        };
        let mut rollout = Rollout::open(index, start_ms, None, &mut rng);
        let mut children = Vec::new();
        if index == SHOWCASE {
            children.extend(rollout.showcase());
        } else {
            rollout.ordinary(index);
        }
        if opts.damage && (index == ARCHIVED_COMPRESSED || index == DAMAGED) {
            let at = rollout.lines.len() / 2;
            let half = first_half(&rollout.lines[at].text());
            rollout.lines.insert(at, Line::Corrupt(half));
        }
        if opts.damage && (index == TOTALS_ONLY || index == DAMAGED) {
            rollout.damage_re_emits();
        }
        if opts.damage && index == DAMAGED {
            let tail = rollout
                .line("event_msg", json!({"type": "agent_message", "message": "Done — the fix is in."}));
            rollout.lines.push(Line::CutOff(first_half(&tail.text())));
        }
        if index == SHOWCASE {
            children.push(rollout.fork(&mut rng));
        }
        let path = relative(home, &rollout.path(placement.archived, placement.zstd));
        tally.codex_rollout(&path, &rollout.lines);
        write_lines(&dir.join(&path), &rollout.lines, placement.zstd)?;
        let older_copy = &rollout.lines[..rollout.lines.len() * 3 / 5];
        if index == BESIDE_ITS_ZST {
            let path = relative(home, &rollout.path(false, true));
            tally.shadowed(Harness::Codex, &path);
            write_lines(&dir.join(&path), older_copy, true)?;
        }
        if index == IN_BOTH_TREES {
            let path = relative(home, &rollout.path(true, false));
            tally.shadowed(Harness::Codex, &path);
            write_lines(&dir.join(&path), older_copy, false)?;
        }
        for child in children {
            let path = relative(home, &child.path(false, false));
            tally.codex_rollout(&path, &child.lines);
            write_lines(&dir.join(&path), &child.lines, false)?;
        }
    }
    Ok(())
}

/// A `TokenUsage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tokens {
    input: i64,
    cached: i64,
    cache_write: i64,
    output: i64,
    reasoning: i64,
}

impl Tokens {
    fn plus(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input + other.input,
            cached: self.cached + other.cached,
            cache_write: self.cache_write + other.cache_write,
            output: self.output + other.output,
            reasoning: self.reasoning + other.reasoning,
        }
    }

    fn json(&self, with_cache_write: bool) -> Value {
        let mut usage = json!({
            "input_tokens": self.input,
            "cached_input_tokens": self.cached,
            "output_tokens": self.output,
            "reasoning_output_tokens": self.reasoning,
            "total_tokens": self.input + self.output,
        });
        if with_cache_write {
            usage["cache_write_input_tokens"] = json!(self.cache_write);
        }
        usage
    }
}

/// One rollout file being written.
struct Rollout {
    thread_id: String,
    start_ms: u64,
    cwd: &'static str,
    version: (&'static str, bool, bool),
    model: &'static str,
    /// Write `last_token_usage` in counts (else totals only).
    with_last: bool,
    totals: Tokens,
    /// Prompt tokens of the next call.
    context: i64,
    turn: u32,
    clock_ms: u64,
    lines: Vec<Line>,
    rng: Rng,
}

impl Rollout {
    /// A thread started at `start_ms`, its `session_meta` written; `source` is `"cli"` unless
    /// given.
    fn open(index: usize, start_ms: u64, source: Option<Value>, rng: &mut Rng) -> Self {
        let version = if index == TOTALS_ONLY { VERSIONS[2] } else { rng.pick(VERSIONS) };
        let mut rollout = Self {
            thread_id: uuid_v7(rng, start_ms),
            start_ms,
            cwd: rng.pick(PROJECTS),
            version,
            model: if index == SHOWCASE { MODELS[0] } else { rng.pick(MODELS) },
            with_last: index != TOTALS_ONLY,
            totals: Tokens::default(),
            context: 0,
            turn: 0,
            clock_ms: start_ms,
            lines: Vec::new(),
            rng: Rng::new(rng.next_u64()),
        };
        let meta = rollout.meta(source.unwrap_or(json!("cli")));
        rollout.lines.push(meta);
        rollout
    }

    fn meta(&mut self, source: Value) -> Line {
        let mut payload = json!({
            "id": self.thread_id,
            "timestamp": ts(self.start_ms),
            "cwd": self.cwd,
            "originator": "codex_cli_rs",
            "cli_version": self.version.0,
            "source": source,
            "model_provider": "openai",
            "git": {"commit_hash": self.rng.hex(7), "branch": "fix/rounding",
                    "repository_url": "git@github.com:ana/billing-api.git"},
        });
        if self.rng.percent(30) {
            payload["memory_mode"] = json!("default");
        }
        self.line("session_meta", payload)
    }

    /// `{"timestamp", "type": kind, "payload"}`, a little later than the line before.
    fn line(&mut self, kind: &str, payload: Value) -> Line {
        self.clock_ms += 5 + self.rng.below(2500);
        Line::object(vec![
            ("timestamp", json!(ts(self.clock_ms))),
            ("type", json!(kind)),
            ("payload", payload),
        ])
    }

    fn push(&mut self, kind: &str, payload: Value) {
        let line = self.line(kind, payload);
        self.lines.push(line);
    }

    fn item(&mut self, payload: Value) {
        self.push("response_item", payload);
    }

    fn event(&mut self, payload: Value) {
        self.push("event_msg", payload);
    }

    fn turn_context(&mut self) {
        self.turn += 1;
        let payload = json!({
            "turn_id": format!("t-{}", self.turn),
            "cwd": self.cwd,
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": false,
                               "exclude_tmpdir_env_var": false, "exclude_slash_tmp": false},
            "model": self.model,
            "effort": "medium",
            "summary": "auto",
        });
        self.push("turn_context", payload);
    }

    /// A user turn's opening: the prompt as an item (and as an event in older versions).
    fn prompt(&mut self, text: &str) {
        if self.turn == 0 {
            let context = format!(
                "<environment_context>\n  <cwd>{}</cwd>\n  <shell>bash</shell>\n</environment_context>",
                self.cwd
            );
            self.item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": context}]}));
        }
        self.turn_context();
        self.event(json!({"type": "task_started", "model_context_window": 272_000}));
        self.item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
        );
        if self.version.2 {
            self.event(json!({"type": "user_message", "message": text, "images": [], "local_images": [],
                              "text_elements": []}));
        }
    }

    /// The next call's usage, added to the totals.
    fn next_tokens(&mut self) -> Tokens {
        let rng = &mut self.rng;
        let input = self.context.max(9000) + rng.range(100, 3000);
        let cached = if self.context == 0 { 0 } else { self.context / 128 * 128 };
        let cache_write = if self.version.1 { rng.range(0, (input - cached).min(2000)) } else { 0 };
        let output = rng.range(30, 900);
        let reasoning = rng.range(0, output * 7 / 10);
        let tokens = Tokens { input, cached, cache_write, output, reasoning };
        self.context = input + output;
        self.totals = self.totals.plus(&tokens);
        tokens
    }

    /// The plan's windows as a count reports them now: a 5-hour primary and a weekly secondary,
    /// each resetting at a boundary of the clock (every thread of the home shares them, as the
    /// quota is the account's), its used percent growing with the time into the window and back
    /// near 0 after a reset. The one draw (the same as ever, so that the rest of the home is
    /// unchanged) puts a second's jitter on some primary resets (Codex works them out from a
    /// time left), leaves the secondary out of some counts, nulls the limits of a few and writes
    /// one percent as text.
    fn rate_limits(&mut self) -> Value {
        let draw = self.rng.range(1, 60);
        let now = self.clock_ms / 1000;
        let window = |minutes: u64, top: f64| {
            let length = minutes * 60;
            let resets_at = (now / length + 1) * length;
            let into = (now + length - resets_at) as f64 / length as f64;
            (resets_at, (into * top * 10.0).round() / 10.0)
        };
        let (primary_reset, primary_used) = window(300, 90.0);
        let (weekly_reset, weekly_used) = window(10_080, 60.0);
        if draw % 13 == 0 {
            return Value::Null;
        }
        let jitter = u64::from(draw % 5 == 0);
        let mut limits = json!({
            "primary": {"used_percent": primary_used, "window_minutes": 300, "resets_at": primary_reset + jitter},
            "secondary": {"used_percent": weekly_used, "window_minutes": 10_080, "resets_at": weekly_reset},
            "credits": null, "plan_type": "plus"});
        if draw % 9 == 0 {
            limits.as_object_mut().map(|l| l.remove("secondary"));
        }
        if draw == 59 {
            limits["primary"]["used_percent"] = json!(format!("{primary_used}%"));
        }
        limits
    }

    /// A `token_count` with `info` over the current totals (and `last`, when written).
    fn token_count(&mut self, last: Option<Tokens>) {
        let with_cache_write = self.version.1;
        let mut info =
            json!({"total_token_usage": self.totals.json(with_cache_write), "model_context_window": 272_000});
        if let Some(last) = last.filter(|_| self.with_last) {
            info["last_token_usage"] = last.json(with_cache_write);
        }
        let limits = self.rate_limits();
        self.event(json!({"type": "token_count", "info": info, "rate_limits": limits}));
    }

    /// The same totals again, only the rate limits refreshed: not a call.
    fn re_emit(&mut self) {
        let mut line =
            self.lines.iter().rev().find(|line| is_count(line)).cloned().expect("a count to repeat");
        self.clock_ms += 40 + self.rng.below(900);
        line.set("timestamp", json!(ts(self.clock_ms)));
        let mut payload = line.get("payload").cloned().unwrap_or_default();
        payload["rate_limits"] = Value::Null;
        line.set("payload", payload);
        self.lines.push(line);
    }

    /// After each of the first counts, the same count again with one figure of its totals
    /// damaged in turn (text, null, missing, negative, beyond a count's range, the totals gone):
    /// no call, and the count before it stays the baseline.
    fn damage_re_emits(&mut self) {
        let counts: Vec<usize> = (0..self.lines.len()).filter(|&at| is_count(&self.lines[at])).collect();
        let damages = DAMAGED_TOTALS.len().min(counts.len());
        for (nth, &at) in counts[..damages].iter().enumerate().rev() {
            let mut line = self.lines[at].clone();
            let mut payload = line.get("payload").cloned().unwrap_or_default();
            let totals = &mut payload["info"]["total_token_usage"];
            let figure = [
                "input_tokens",
                "cached_input_tokens",
                "output_tokens",
                "reasoning_output_tokens",
                "total_tokens",
            ][nth % 5];
            match DAMAGED_TOTALS[nth] {
                "text" => totals[figure] = json!(totals[figure].to_string()),
                "null" => totals[figure] = Value::Null,
                "missing" => {
                    totals.as_object_mut().map(|t| t.remove(figure));
                }
                "negative" => totals[figure] = json!(-1),
                "beyond" => totals[figure] = json!(1_i64 << 40),
                _ => {
                    payload["info"].as_object_mut().map(|i| i.remove("total_token_usage"));
                }
            }
            payload["rate_limits"] = Value::Null;
            line.set("payload", payload);
            self.lines.insert(at + 1, line);
        }
    }

    fn null_count(&mut self) {
        let limits = self.rate_limits();
        self.event(json!({"type": "token_count", "info": null, "rate_limits": limits}));
    }

    fn call_id(&mut self) -> String {
        format!("call_{}", self.rng.hex(24))
    }

    fn reasoning(&mut self) {
        let words = self.rng.size(3, 8);
        let summary = format!("**{}**", sentence(&mut self.rng, words));
        let encrypted = format!("gAAAAAB{}", self.rng.hex(120));
        self.item(json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}],
                         "content": null, "encrypted_content": encrypted}));
    }

    /// A call that runs a command: reasoning, the function call, the count, the output.
    fn exec_call(&mut self, exit: Option<i64>) {
        if self.rng.percent(70) {
            self.reasoning();
        }
        let id = self.call_id();
        let command =
            format!("pytest tests/test_{}.py -x -q", self.rng.pick(&["invoice", "ledger", "export"]));
        let arguments = json_text(&json!({"cmd": command, "workdir": self.cwd}));
        self.item(
            json!({"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": id}),
        );
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        let size = self.rng.size(40, 1500);
        let body = output_text(&mut self.rng, size);
        let chunk = self.rng.hex(4);
        let status = match exit {
            Some(code) => format!("Process exited with code {code}"),
            None => format!("Process running with session ID {}", self.rng.range(1, 9)),
        };
        let output = format!(
            "Chunk ID: {chunk}\nWall time: {}.{:02} seconds\n{status}\nOriginal token count: {}\nOutput:\n{body}",
            self.rng.range(0, 9),
            self.rng.below(100),
            body.len() / 4
        );
        self.context += body.len() as i64 / 4;
        self.item(json!({"type": "function_call_output", "call_id": id, "output": output}));
    }

    /// A call with a function of no exit code (`update_plan`).
    fn plan_call(&mut self) {
        let id = self.call_id();
        let arguments = json_text(&json!({"plan": [{"step": "Fix rounding", "status": "in_progress"}]}));
        self.item(
            json!({"type": "function_call", "name": "update_plan", "arguments": arguments, "call_id": id}),
        );
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        self.item(json!({"type": "function_call_output", "call_id": id, "output": "Plan updated"}));
    }

    /// A response asking for two or three MCP tools of two servers at once: the function calls,
    /// the response's count, then each call's `mcp_tool_call_end` and output (text of a drawn
    /// size). `docs__fetch_page` is named as older builds named an MCP tool: only its end event
    /// says its server.
    fn mcp_calls(&mut self) {
        const TOOLS: &[(&str, &str, &str)] = &[
            ("mcp__github__get_issue", "github", "get_issue"),
            ("mcp__github__list_pull_requests", "github", "list_pull_requests"),
            ("mcp__docs__search", "docs", "search"),
            ("docs__fetch_page", "docs", "fetch_page"),
        ];
        if self.rng.percent(50) {
            self.reasoning();
        }
        let mut asked = Vec::new();
        for _ in 0..self.rng.size(2, 3) {
            let (name, server, tool) = self.rng.pick(TOOLS);
            let id = self.call_id();
            let arguments = json_text(&json!({"query": "decimal rounding"}));
            self.item(json!({"type": "function_call", "name": name, "arguments": arguments, "call_id": id}));
            asked.push((id, server, tool));
        }
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        for (id, server, tool) in asked {
            let size = self.rng.size(20, 1800);
            let body = output_text(&mut self.rng, size);
            self.event(json!({"type": "mcp_tool_call_end", "call_id": id,
                              "invocation": {"server": server, "tool": tool, "arguments": {"query": "decimal rounding"}},
                              "duration": {"secs": 0, "nanos": 120_000_000},
                              "result": {"Ok": {"content": [{"type": "text", "text": body}], "isError": false}}}));
            self.context += body.len() as i64 / 4;
            self.item(json!({"type": "function_call_output", "call_id": id, "output": body}));
        }
    }

    /// A response the person cut off after it asked for a command: no count, no output, the
    /// turn aborted. Which response asked for the call is not known (its cost is null).
    fn interrupted_call(&mut self) {
        let id = self.call_id();
        let arguments = json_text(&json!({"cmd": "pytest -x -q", "workdir": self.cwd}));
        self.item(
            json!({"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": id}),
        );
        self.event(json!({"type": "turn_aborted", "reason": "interrupted"}));
    }

    /// A call that patches a file with the `apply_patch` custom tool.
    fn patch_call(&mut self) {
        self.reasoning();
        let id = self.call_id();
        let patch = "*** Begin Patch\n*** Update File: src/invoice.py\n@@\n-    return round(total, 2)\n+    return total.quantize(CENT)\n*** End Patch\n";
        self.item(
            json!({"type": "custom_tool_call", "status": "completed", "call_id": id, "name": "apply_patch",
                         "input": patch}),
        );
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        let output =
            json_text(&json!({"output": "Success. Updated the following files:\nM src/invoice.py\n",
                                       "metadata": {"exit_code": 0, "duration_seconds": 0.0}}));
        self.item(json!({"type": "custom_tool_call_output", "call_id": id, "output": output}));
    }

    /// The turn's answer: reasoning, the message, the count, `task_complete`.
    fn answer(&mut self) {
        self.reasoning();
        let words = self.rng.size(8, 40);
        let text = sentence(&mut self.rng, words);
        self.item(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}));
        self.event(json!({"type": "agent_message", "message": text}));
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        self.event(json!({"type": "task_complete", "last_agent_message": text}));
    }

    /// A turn of 0–3 commands and an answer, re-emitting counts at random.
    fn turn(&mut self, re_emits: u64) {
        let words = self.rng.size(4, 14);
        let prompt = sentence(&mut self.rng, words);
        self.prompt(&prompt);
        for _ in 0..self.rng.size(0, 3) {
            let exit = match self.rng.below(20) {
                0 => None,
                1..=4 => Some(1),
                5 => Some(127),
                _ => Some(0),
            };
            self.exec_call(exit);
            if self.rng.percent(re_emits) {
                self.re_emit();
            }
        }
        if self.rng.percent(15) {
            self.plan_call();
        }
        if self.rng.percent(35) {
            self.mcp_calls();
        }
        if self.rng.percent(8) {
            self.interrupted_call();
            return;
        }
        self.answer();
    }

    fn ordinary(&mut self, index: usize) {
        if self.rng.percent(50) {
            self.null_count();
        }
        let turns = self.rng.size(1, 5);
        for turn in 0..turns {
            if index == TOTALS_ONLY && turn == 1 {
                // A resume: the counts start again from zero.
                self.totals = Tokens::default();
                self.context = 0;
            }
            self.turn(30);
        }
    }

    /// Thread 0: every trap, and a spawned child; returns the child and its descendants
    /// ([`Rollout::spawn`]).
    fn showcase(&mut self) -> Vec<Rollout> {
        self.null_count();
        self.prompt("why does test_total fail?");
        self.exec_call(Some(1));
        self.re_emit();
        self.exec_call(Some(0));
        self.answer();
        // A spawned child, replaying what the parent has so far.
        self.prompt("ask a helper to look at the ledger tests while you fix it");
        self.reasoning();
        let spawn_id = self.call_id();
        let arguments =
            json_text(&json!({"message": "Check the ledger tests for rounding.", "agent_type": "explorer"}));
        self.item(json!({"type": "function_call", "name": "spawn_agent", "arguments": arguments, "call_id": spawn_id}));
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        let spawned = self.spawn(1);
        self.clock_ms = spawned.iter().map(|thread| thread.clock_ms).fold(self.clock_ms, u64::max);
        let output = json_text(&json!({"agent_id": spawned[0].thread_id, "status": "completed"}));
        self.item(json!({"type": "function_call_output", "call_id": spawn_id, "output": output}));
        self.patch_call();
        let id = self.call_id();
        self.item(json!({"type": "function_call", "name": "view_image", "arguments": json_text(&json!({"path": "chart.png"})),
                         "call_id": id}));
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        self.item(json!({"type": "function_call_output", "call_id": id,
                         "output": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}));
        self.answer();
        self.re_emit();
        // A model switch.
        self.model = SWITCHED_MODEL;
        self.prompt("now add a test for it");
        self.exec_call(Some(0));
        self.answer();
        spawned
    }

    /// A child thread of this one begun now: its meta, then a copy of `history` (this thread's
    /// lines after its meta) marked as replayed and stamped now.
    fn child(&mut self, source: Value, forked: bool, history: &[Line], rng: &mut Rng) -> Rollout {
        let start_ms = self.clock_ms + 200;
        let mut child = Rollout::open(usize::MAX, start_ms, Some(source), rng);
        child.cwd = self.cwd;
        child.version = self.version;
        child.model = self.model;
        if let Some(meta) = child.lines.first_mut() {
            let mut payload = meta.get("payload").cloned().unwrap_or_default();
            payload["cwd"] = json!(self.cwd);
            payload["cli_version"] = json!(self.version.0);
            if forked {
                payload["forked_from_id"] = json!(self.thread_id);
            }
            meta.set("payload", payload);
        }
        for line in history {
            let mut copy = line.replayed();
            child.clock_ms += 1;
            copy.set("timestamp", json!(ts(child.clock_ms)));
            child.lines.push(copy);
        }
        child
    }

    /// A spawned child at `depth` (1 under a top-level thread): replays the parent's
    /// `session_meta` and lines so far, then counts from zero (the totals drop: a new baseline).
    /// At depth 1 it spawns a child of its own in turn ([`Rollout::spawn_again`]), three deep in
    /// all. Returns the child, then its descendants.
    fn spawn(&mut self, depth: u64) -> Vec<Rollout> {
        let mut rng = Rng::new(self.rng.next_u64());
        let nickname = if depth == 1 { "Ada" } else { "Bo" };
        let source = json!({"subagent": {"thread_spawn": {"parent_thread_id": self.thread_id, "depth": depth,
                            "agent_nickname": nickname, "agent_role": "explorer"}}});
        let history = self.lines[..self.lines.len() - 2].to_vec();
        let mut child = self.child(source, false, &history, &mut rng);
        if let Some(meta) = child.lines.first_mut() {
            let mut payload = meta.get("payload").cloned().unwrap_or_default();
            payload["agent_nickname"] = json!(nickname);
            payload["agent_role"] = json!("explorer");
            meta.set("payload", payload);
        }
        child.model = SWITCHED_MODEL;
        child.turn = 0;
        child.prompt("Check the ledger tests for rounding.");
        child.exec_call(Some(0));
        child.exec_call(Some(2));
        child.answer();
        let descendants = if depth == 1 { child.spawn_again() } else { Vec::new() };
        let mut threads = vec![child];
        threads.extend(descendants);
        threads
    }

    /// A spawned child's own turn that spawns a grandchild (which replays this child's lines,
    /// the child's replay of its parent included), then forks the grandchild (the fork replays
    /// all of the grandchild's lines): a chain three deep under the top thread. Returns the
    /// grandchild and its fork.
    fn spawn_again(&mut self) -> Vec<Rollout> {
        self.prompt("ask another helper to read the ledger fixtures");
        self.reasoning();
        let spawn_id = self.call_id();
        let arguments = json_text(
            &json!({"message": "Read the ledger fixtures for rounding.", "agent_type": "explorer"}),
        );
        self.item(json!({"type": "function_call", "name": "spawn_agent", "arguments": arguments, "call_id": spawn_id}));
        let tokens = self.next_tokens();
        self.token_count(Some(tokens));
        let mut descendants = self.spawn(2);
        let mut rng = Rng::new(self.rng.next_u64());
        let fork = descendants[0].fork(&mut rng);
        descendants.push(fork);
        self.clock_ms = descendants.iter().map(|thread| thread.clock_ms).fold(self.clock_ms, u64::max);
        let output = json_text(&json!({"agent_id": descendants[0].thread_id, "status": "completed"}));
        self.item(json!({"type": "function_call_output", "call_id": spawn_id, "output": output}));
        self.answer();
        descendants
    }

    /// A forked child: replays every line after the parent's meta, then goes on from the
    /// parent's totals, its second count with totals only.
    fn fork(&mut self, rng: &mut Rng) -> Rollout {
        let history = self.lines[1..].to_vec();
        let mut child = self.child(json!("cli"), true, &history, rng);
        child.totals = self.totals;
        child.context = self.context;
        child.prompt("try the other rounding mode instead");
        child.exec_call(Some(0));
        child.with_last = false;
        child.answer();
        child
    }

    /// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread>.jsonl` in local time, or flat
    /// under `archived_sessions/`; `.zst` appended when compressed.
    fn path(&self, archived: bool, zstd: bool) -> String {
        let local = rfc3339((self.start_ms as i64 + LOCAL_OFFSET_MS) as u64, false);
        let (date, time) = (&local[..10], local[11..19].replace(':', "-"));
        let name =
            format!("rollout-{date}T{time}-{}.jsonl{}", self.thread_id, if zstd { ".zst" } else { "" });
        if archived {
            format!("archived_sessions/{name}")
        } else {
            format!("sessions/{}/{name}", date.replace('-', "/"))
        }
    }
}

/// How the damaged re-emits of [`Rollout::damage_re_emits`] damage their totals, in turn.
const DAMAGED_TOTALS: &[&str] = &["text", "null", "missing", "negative", "beyond", "no totals"];

fn is_count(line: &Line) -> bool {
    line.str("type") == Some("event_msg")
        && line.get("payload").is_some_and(|p| p["type"] == "token_count" && !p["info"].is_null())
}
