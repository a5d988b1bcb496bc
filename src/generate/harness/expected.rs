//! The normalized answers over a generated home, `calls`, `tool_calls` and `sessions` and the
//! damaged lines, tallied from the lines as the generator wrote them (never from the files),
//! by the accounting rules of issue 15, restated here.
//!
//! `calls`: one row per billed model call; `ts` UTC, `input_tokens` every prompt token (cache
//! included), `cache_write_tokens` 0 where the harness reports none, `output_tokens` every
//! generated token (reasoning included), `reasoning_tokens` NULL where the harness does not
//! split it out; `file` and `line` (1-based, physical) those of the copy the figures come from.
//! - Claude: a call is one (line's `sessionId`, `message.id`) among `assistant` lines whose
//!   model is not `<synthetic>`; its figures are those of its copy with the largest
//!   `output_tokens`, and on a tie the copy that is not a sidechain (then the first, in file
//!   order, main file before subagent files). input = `input_tokens +
//!   cache_creation_input_tokens + cache_read_input_tokens`; cache write =
//!   `cache_creation_input_tokens`, cache read = `cache_read_input_tokens`. `progress` lines'
//!   nested usage never counts.
//! - Codex: a child's replayed copy of its parent's lines (its token counts' totals equal one of
//!   the parent's) is not the child's calls. Otherwise a `token_count` with non-null `info` is a
//!   call when its `total_token_usage` moved from the previous one in the same file (replayed
//!   ones included); a re-emitted count with unchanged totals is not a call, and totals that
//!   drop (any figure lower) start a new baseline. A count whose totals cannot all be read (a
//!   figure missing, null, not a whole number from 0 to 2^32 − 1; the cache writes may be
//!   absent) is a damaged line and no call, and the count before it stays the baseline. Its
//!   figures are `last_token_usage` where all of them can be read, or where a
//!   line has totals only the difference from the previous totals (from zero at the start of the
//!   file or after a drop): input = `input_tokens` (cached included), cache read =
//!   `cached_input_tokens`, cache write = `cache_write_input_tokens` (0 when absent), output =
//!   `output_tokens` (reasoning included), reasoning = `reasoning_output_tokens`. Its model is that
//!   of the latest `turn_context` before it.
//! - Gemini: the last write of each (session, message id) of type `gemini` that has `tokens`;
//!   input = `input + tool`, cache read = `cached`, output = `output + thoughts`, reasoning =
//!   `thoughts`. A rewound message's tokens were still spent: it stays a call.
//!
//! `tool_calls` (`duration_ms` NULL unless said):
//! - Claude: `tool_use` blocks, once per (line's `sessionId`, block id), the copy in a line that
//!   is not a sidechain preferred, joined to their `tool_result` (`tool_use_id`; same
//!   preference): `ok` unless `is_error` is true, `error` the result's text when not ok,
//!   `duration_ms` the result line's `toolUseResult.durationMs` where it has one; `ts` that of
//!   the `tool_use` line.
//! - Codex: `function_call` once per `call_id` across a lineage (replayed calls are not new);
//!   `ok` false when its `function_call_output` says `Process exited with code N` with N ≠ 0,
//!   `error` then that output. `custom_tool_call`s are not counted.
//! - Gemini: the `toolCalls` of each message's last write, `ok` when `status` is `success`,
//!   `error` otherwise the `functionResponse.response.error` of its result, else its status;
//!   `ts` the tool call's `timestamp`.
//!
//! And each tool call's `mcp_server`, `result_bytes` and the response that asked for it (its
//! `cost_usd` is that row of `calls`' cost over the number of tool calls naming it):
//! - Claude: the server of a name `mcp__<server>__<tool>`; the bytes of the `tool_result`'s
//!   `content`, a string's UTF-8 bytes or else its compact JSON text's (none: 0); the response
//!   the call of the `tool_use` line's (`sessionId`, `message.id`), when that is a call.
//! - Codex: the `invocation.server` of the first `mcp_tool_call_end` of its `call_id`, else the
//!   server of `mcp__<server>__<tool>`; the bytes of the first `function_call_output`'s `output`
//!   (the same measure); the response the first `token_count` with `info` after the call in the
//!   file, unless a `task_started` comes first, when that count is a call.
//! - Gemini: the server of a name `<server>__<tool>`; the bytes of the first result part's
//!   `functionResponse.response` as compact JSON text; the response the message's last write,
//!   when it is a call.
//!
//! (A server is at least one character and split at the first `__` after it, a tool at least one.)
//!
//! `sessions`: one per session, keyed by (harness, session_id, parent_session_id). Claude: a main
//! file's session is its lines' `sessionId` (not the file stem); a subagent file's is its
//! `agentId`, its parent the lines' `sessionId` (agent ids collide across parents). Codex: the
//! first `session_meta`'s `id`, its parent `forked_from_id` or
//! `source.subagent.thread_spawn.parent_thread_id`. Gemini: the metadata line's `sessionId`, a
//! subagent's parent the folder it sits in. `started_at`/`ended_at` are the least and greatest
//! line timestamps (Claude and Codex the top-level `timestamp`; Gemini the metadata's `startTime`
//! and every message write's `timestamp`), `cwd` the first line's `cwd` (Codex the
//! `session_meta`'s, Gemini the project root `projects.json` names for its slug), `model` that of
//! its first call, `calls`, `input_tokens`, `output_tokens` and `tool_calls` sums over its rows,
//! `file` its transcript. `root_session_id`: going up from its parent through the sessions of the
//! same harness with that id until one has no parent (or none has that id): the last id reached
//! (the generator writes no cycle).

use std::collections::BTreeMap;

use serde_json::Value;

use super::{ClaudeFile, Harness, HarnessTally, Line, json_text};

/// One row of `calls` (cost is not tallied).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedCall {
    pub harness: String,
    pub session_id: String,
    pub parent_session_id: Option<String>,
    /// UTC RFC 3339, as the line has it.
    pub ts: String,
    pub provider: String,
    pub model: String,
    pub input_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_tokens: Option<i64>,
    /// Relative to the home dir, `/`-separated.
    pub file: String,
    pub line: u64,
}

/// One row of `tool_calls`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedToolCall {
    pub harness: String,
    pub session_id: String,
    pub ts: String,
    pub tool: String,
    pub call_id: String,
    pub ok: bool,
    pub error: Option<String>,
    pub duration_ms: Option<i64>,
    /// The MCP server of an MCP tool, by the harness's rule (below).
    pub mcp_server: Option<String>,
    /// The UTF-8 bytes of its result as `result_bytes` measures them; None with no result.
    pub result_bytes: Option<i64>,
    /// The row of `calls` (file, line) of the response that asked for it: its `cost_usd` is that
    /// call's over `shared_by`. None when that response is not a call or is not known.
    pub response: Option<(String, u64)>,
    /// How many tool calls name `response` (0 when it is None).
    pub shared_by: u64,
}

/// What a tool call's row says besides its call and result: its MCP server, its result's bytes
/// and the response that asked for it.
#[derive(Debug, Clone, Default)]
struct ToolFacts {
    mcp_server: Option<String>,
    result_bytes: Option<i64>,
    response: Option<(String, u64)>,
}

/// One row of `sessions` (cost is not tallied).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedSession {
    pub harness: String,
    pub session_id: String,
    pub parent_session_id: Option<String>,
    /// The top of its chain of parents (its own id when it has none); set by `finish`.
    pub root_session_id: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub calls: u64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub tool_calls: u64,
    pub file: String,
}

/// A session's git columns of `sessions` (its row of [`HarnessExpected::session_git`]):
/// `git_branch` its first non-empty branch as written (Claude's `gitBranch`, Codex's
/// `session_meta` `git.branch`), `git_commit` Codex's `git.commit_hash`, `project` the
/// repository root the generator put its cwd in ([`HarnessExpected::git_roots`]), else its cwd.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedSessionGit {
    pub harness: String,
    pub session_id: String,
    pub parent_session_id: Option<String>,
    pub project: Option<String>,
    pub git_branch: Option<String>,
    pub git_commit: Option<String>,
}

/// The project of `cwd`: the longest of `roots` it lies in, else `cwd`.
fn project_of(roots: &[String], cwd: &str) -> String {
    (roots.iter())
        .filter(|root| cwd == root.as_str() || cwd.starts_with(&format!("{root}/")))
        .max_by_key(|root| root.len())
        .cloned()
        .unwrap_or_else(|| cwd.to_string())
}

/// Sums over a set of calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallSums {
    pub calls: u64,
    pub input_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub output_tokens: i64,
    /// NULLs counting 0.
    pub reasoning_tokens: i64,
}

impl CallSums {
    pub fn add(&mut self, call: &ExpectedCall) {
        self.calls += 1;
        self.input_tokens += call.input_tokens;
        self.cache_read_tokens += call.cache_read_tokens;
        self.cache_write_tokens += call.cache_write_tokens;
        self.output_tokens += call.output_tokens;
        self.reasoning_tokens += call.reasoning_tokens.unwrap_or(0);
    }
}

/// Counts per harness, kept also when the rows are not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HarnessCounts {
    /// Transcript files written, shadowed copies included.
    pub files: u64,
    pub sessions: u64,
    pub calls: u64,
    pub tool_calls: u64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// What a correct reader of a generated home answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HarnessExpected {
    /// Sorted by (file, line); empty unless rows are kept.
    pub calls: Vec<ExpectedCall>,
    /// Sorted by (harness, session_id, call_id); empty unless rows are kept.
    pub tool_calls: Vec<ExpectedToolCall>,
    /// Sorted by (harness, session_id, parent_session_id); empty unless rows are kept.
    pub sessions: Vec<ExpectedSession>,
    /// The git columns of each of `sessions`, in the same order.
    pub session_git: Vec<ExpectedSessionGit>,
    /// (file, 1-based line) of every damaged line, cut-off last lines included, sorted.
    pub errors: Vec<(String, u64)>,
    /// The files whose last line is cut off (their line is in `errors` too), sorted.
    pub cut_off: Vec<String>,
    /// Every transcript file written, relative to the home dir, sorted.
    pub files: Vec<String>,
    /// Transcript files whose lines do not count: a `.zst` beside its plain rollout, an
    /// `archived_sessions/` copy of a rollout also in `sessions/`. Sorted; also in `files`.
    pub shadowed: Vec<String>,
    /// Files that are not transcripts: subagent `.meta.json`, `.project_root`, `projects.json`.
    pub other_files: Vec<String>,
    /// (harness, model) → sums over its calls.
    pub by_model: BTreeMap<(String, String), CallSums>,
    /// harness → counts.
    pub by_harness: BTreeMap<String, HarnessCounts>,
    /// (file, line) of each call whose line writes a service tier → that tier (Claude: `fast`
    /// where `usage.speed` is `fast`, else `usage.service_tier`); a call not here has none.
    /// Empty unless rows are kept.
    pub service_tiers: BTreeMap<(String, u64), String>,
    /// `rate_limits`: each window a Codex `token_count` reports that is not a child's replay of
    /// its parent's, in file and line order; empty unless rows are kept.
    pub rate_limits: Vec<ExpectedRateLimit>,
    keep_rows: bool,
    /// The repositories the generator wrote (absolute roots): a session whose cwd lies in one has
    /// it as its project; none in the ordinary homes, whose cwds lie on no machine.
    pub(super) git_roots: Vec<String>,
}

/// One row of `rate_limits`: a window (`primary`, `secondary`) of a count's `rate_limits` that is
/// an object, each figure `None` where it is not of its kind (a percent not a number, a length
/// not a whole number, a reset not whole unix seconds of years 1970 to 9999).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedRateLimit {
    pub harness: String,
    pub session_id: String,
    /// UTC RFC 3339, as the line has it.
    pub ts: String,
    pub window: String,
    pub window_minutes: Option<i64>,
    pub used_percent: Option<f64>,
    /// Unix seconds.
    pub resets_at: Option<i64>,
    pub plan: Option<String>,
    pub file: String,
    pub line: u64,
}

/// A session's rows while its files are tallied.
struct SessionTally {
    session: ExpectedSession,
    git: ExpectedSessionGit,
    calls: Vec<ExpectedCall>,
    tool_calls: Vec<ExpectedToolCall>,
}

impl SessionTally {
    fn new(harness: Harness, session_id: &str, parent: Option<&str>, file: &str) -> Self {
        let session = ExpectedSession {
            harness: harness.name().to_string(),
            session_id: session_id.to_string(),
            parent_session_id: parent.map(str::to_string),
            file: file.to_string(),
            ..ExpectedSession::default()
        };
        let git = ExpectedSessionGit {
            harness: harness.name().to_string(),
            session_id: session_id.to_string(),
            parent_session_id: parent.map(str::to_string),
            ..ExpectedSessionGit::default()
        };
        Self { session, git, calls: Vec::new(), tool_calls: Vec::new() }
    }

    /// A line's branch and commit: the first non-empty ones count.
    fn saw_git(&mut self, branch: Option<&str>, commit: Option<&str>) {
        let given = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_string);
        if self.git.git_branch.is_none() {
            self.git.git_branch = given(branch);
        }
        if self.git.git_commit.is_none() {
            self.git.git_commit = given(commit);
        }
    }

    fn saw_time(&mut self, ts: Option<&str>) {
        let Some(ts) = ts else { return };
        let session = &mut self.session;
        if session.started_at.as_deref().is_none_or(|first| ts < first) {
            session.started_at = Some(ts.to_string());
        }
        if session.ended_at.as_deref().is_none_or(|last| ts > last) {
            session.ended_at = Some(ts.to_string());
        }
    }

    fn saw_cwd(&mut self, cwd: Option<&str>) {
        if self.session.cwd.is_none() {
            self.session.cwd = cwd.map(str::to_string);
        }
    }

    fn call(
        &self,
        harness: Harness,
        ts: &str,
        model: &str,
        figures: Figures,
        file: &str,
        line: u64,
    ) -> ExpectedCall {
        ExpectedCall {
            harness: harness.name().to_string(),
            session_id: self.session.session_id.clone(),
            parent_session_id: self.session.parent_session_id.clone(),
            ts: ts.to_string(),
            provider: harness.provider().to_string(),
            model: model.to_string(),
            input_tokens: figures.input,
            cache_read_tokens: figures.cache_read,
            cache_write_tokens: figures.cache_write,
            output_tokens: figures.output,
            reasoning_tokens: figures.reasoning,
            file: file.to_string(),
            line,
        }
    }

    fn tool_call(
        &mut self,
        ts: &str,
        tool: &str,
        call_id: &str,
        error: Option<String>,
        duration_ms: Option<i64>,
        facts: ToolFacts,
    ) {
        self.tool_calls.push(ExpectedToolCall {
            harness: self.session.harness.clone(),
            session_id: self.session.session_id.clone(),
            ts: ts.to_string(),
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            ok: error.is_none(),
            error,
            duration_ms,
            mcp_server: facts.mcp_server,
            result_bytes: facts.result_bytes,
            response: facts.response,
            shared_by: 0,
        });
    }
}

/// A call's token figures, normalized.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Figures {
    input: i64,
    cache_read: i64,
    cache_write: i64,
    output: i64,
    reasoning: Option<i64>,
}

/// The copy of a Claude response its call's figures come from, so far.
struct ClaudeCopy {
    session: SessionKey,
    file: String,
    line: u64,
    ts: String,
    model: String,
    figures: Figures,
    sidechain: bool,
    /// The service tier its usage writes: `fast` where `speed` is `fast`, else `service_tier`.
    tier: Option<String>,
}

/// A session by (session_id, parent_session_id).
type SessionKey = (String, Option<String>);

/// A Claude `tool_use` or `tool_result` block's chosen copy: where it is, and whether it is in a
/// sidechain line.
struct ClaudeBlock {
    session: SessionKey,
    ts: String,
    name: String,
    error: Option<String>,
    duration_ms: Option<i64>,
    sidechain: bool,
    /// A tool_use's response (`message.id`).
    message_id: String,
    /// A tool_result's content's bytes.
    result_bytes: Option<i64>,
}

impl HarnessExpected {
    pub(super) fn new(keep_rows: bool) -> Self {
        Self { keep_rows, ..Self::default() }
    }

    /// Sums of every call, over all harnesses.
    pub fn total(&self) -> CallSums {
        let mut total = CallSums::default();
        for sums in self.by_model.values() {
            total.calls += sums.calls;
            total.input_tokens += sums.input_tokens;
            total.cache_read_tokens += sums.cache_read_tokens;
            total.cache_write_tokens += sums.cache_write_tokens;
            total.output_tokens += sums.output_tokens;
            total.reasoning_tokens += sums.reasoning_tokens;
        }
        total
    }

    /// A transcript written whose lines do not count.
    pub(super) fn record_shadowed(&mut self, harness: Harness, path: &str) {
        self.saw_file(harness, path);
        self.shadowed.push(path.to_string());
    }

    /// A file written that is not a transcript.
    pub(super) fn record_other(&mut self, path: &str) {
        self.other_files.push(path.to_string());
    }

    fn saw_file(&mut self, harness: Harness, path: &str) {
        self.files.push(path.to_string());
        self.by_harness.entry(harness.name().to_string()).or_default().files += 1;
    }

    /// Records the line at `index` of `path` if it is damaged; returns its 1-based number.
    fn saw_line(&mut self, path: &str, index: usize, line: &Line) -> u64 {
        let number = index as u64 + 1;
        match line {
            Line::Corrupt(_) => self.errors.push((path.to_string(), number)),
            Line::CutOff(_) => {
                self.errors.push((path.to_string(), number));
                self.cut_off.push(path.to_string());
            }
            Line::Object { .. } => {}
        }
        number
    }

    /// Tallies one Claude Code session with its subagents' files (the main file first): a
    /// response's copies may sit in any of them.
    pub(super) fn record_claude(&mut self, files: &[ClaudeFile]) {
        let harness = Harness::Claude;
        let mut sessions: BTreeMap<SessionKey, SessionTally> = BTreeMap::new();
        let mut copies: BTreeMap<(String, String), ClaudeCopy> = BTreeMap::new();
        let mut uses: BTreeMap<(String, String), ClaudeBlock> = BTreeMap::new();
        let mut results: BTreeMap<(String, String), ClaudeBlock> = BTreeMap::new();
        for file in files {
            self.saw_file(harness, &file.path);
            for (index, line) in file.lines.iter().enumerate() {
                let number = self.saw_line(&file.path, index, line);
                let Some(line_session) = line.str("sessionId") else { continue };
                let key: SessionKey = match &file.agent_id {
                    Some(agent) => (agent.clone(), Some(line_session.to_string())),
                    None => (line_session.to_string(), None),
                };
                let tally = sessions
                    .entry(key.clone())
                    .or_insert_with(|| SessionTally::new(harness, &key.0, key.1.as_deref(), &file.path));
                tally.saw_time(line.str("timestamp"));
                tally.saw_cwd(line.str("cwd"));
                tally.saw_git(line.str("gitBranch"), None);
                let sidechain = line.get("isSidechain") == Some(&Value::Bool(true));
                let ts = line.str("timestamp").unwrap_or_default().to_string();
                let message = line.get("message").unwrap_or(&Value::Null);
                let blocks =
                    message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                match line.str("type") {
                    Some("assistant") => {
                        for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
                            let name = text(block, "name");
                            let chosen = ClaudeBlock {
                                session: key.clone(),
                                ts: ts.clone(),
                                name,
                                error: None,
                                duration_ms: None,
                                sidechain,
                                message_id: text(message, "id"),
                                result_bytes: None,
                            };
                            prefer(&mut uses, (line_session.to_string(), text(block, "id")), chosen);
                        }
                        let model = text(message, "model");
                        if model == "<synthetic>" {
                            continue;
                        }
                        let usage = &message["usage"];
                        let (fresh, write, read) = (
                            number_of(usage, "input_tokens"),
                            number_of(usage, "cache_creation_input_tokens"),
                            number_of(usage, "cache_read_input_tokens"),
                        );
                        let figures = Figures {
                            input: fresh + write + read,
                            cache_read: read,
                            cache_write: write,
                            output: number_of(usage, "output_tokens"),
                            reasoning: None,
                        };
                        let tier = match usage["speed"].as_str() {
                            Some("fast") => Some("fast".to_string()),
                            _ => usage["service_tier"].as_str().map(str::to_string),
                        };
                        let copy = ClaudeCopy {
                            session: key.clone(),
                            file: file.path.clone(),
                            line: number,
                            ts,
                            model,
                            figures,
                            sidechain,
                            tier,
                        };
                        let slot = (line_session.to_string(), text(message, "id"));
                        match copies.get(&slot) {
                            Some(best)
                                if best.figures.output > copy.figures.output
                                    || (best.figures.output == copy.figures.output
                                        && (!best.sidechain || copy.sidechain)) => {}
                            _ => {
                                copies.insert(slot, copy);
                            }
                        }
                    }
                    Some("user") => {
                        for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                            let failed = block.get("is_error") == Some(&Value::Bool(true));
                            let duration_ms = line.get("toolUseResult").and_then(|r| r.get("durationMs"));
                            let chosen = ClaudeBlock {
                                session: key.clone(),
                                ts: ts.clone(),
                                name: String::new(),
                                error: failed.then(|| block_text(&block["content"])),
                                duration_ms: duration_ms.and_then(Value::as_i64),
                                sidechain,
                                message_id: String::new(),
                                result_bytes: Some(content_bytes(block.get("content"))),
                            };
                            prefer(
                                &mut results,
                                (line_session.to_string(), text(block, "tool_use_id")),
                                chosen,
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
        // Each response's call: (line's sessionId, message.id) → the chosen copy's (file, line).
        let responses: BTreeMap<(String, String), (String, u64)> =
            copies.iter().map(|(slot, copy)| (slot.clone(), (copy.file.clone(), copy.line))).collect();
        for copy in copies.into_values() {
            if let (Some(tier), true) = (&copy.tier, self.keep_rows) {
                self.service_tiers.insert((copy.file.clone(), copy.line), tier.clone());
            }
            let tally = sessions.get_mut(&copy.session).expect("a copy's session was seen");
            let call = tally.call(harness, &copy.ts, &copy.model, copy.figures, &copy.file, copy.line);
            tally.calls.push(call);
        }
        for ((line_session, id), used) in uses {
            let result = results.get(&(line_session.clone(), id.clone()));
            let (error, duration) = result.map(|r| (r.error.clone(), r.duration_ms)).unwrap_or_default();
            let facts = ToolFacts {
                mcp_server: used.name.strip_prefix("mcp__").and_then(server_of),
                result_bytes: result.and_then(|r| r.result_bytes),
                response: responses.get(&(line_session, used.message_id.clone())).cloned(),
            };
            let tally = sessions.get_mut(&used.session).expect("a tool use's session was seen");
            tally.tool_call(&used.ts, &used.name, &id, error, duration, facts);
        }
        self.commit(sessions.into_values());
    }

    /// Tallies one Codex rollout that counts (a child's replayed lines marked as replayed).
    pub(super) fn record_codex(&mut self, path: &str, lines: &[Line]) {
        let harness = Harness::Codex;
        self.saw_file(harness, path);
        let mut tally: Option<SessionTally> = None;
        let mut model = String::new();
        let mut previous: Option<Usage> = None;
        // (ts, name, call_id, line) of each function call that is not a replay.
        let mut calls: Vec<(String, String, String, u64)> = Vec::new();
        let mut outputs: BTreeMap<String, String> = BTreeMap::new();
        let mut output_bytes: BTreeMap<String, i64> = BTreeMap::new();
        let mut servers: BTreeMap<String, String> = BTreeMap::new();
        // Each count with info (line, whether it is a call), and each task_started's line.
        let mut counts: Vec<(u64, bool)> = Vec::new();
        let mut turn_starts: Vec<u64> = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let number = self.saw_line(path, index, line);
            let payload = line.get("payload").unwrap_or(&Value::Null);
            let kind = line.str("type").unwrap_or_default();
            if kind == "session_meta" && tally.is_none() {
                let spawn = &payload["source"]["subagent"]["thread_spawn"]["parent_thread_id"];
                let parent = payload["forked_from_id"].as_str().or(spawn.as_str());
                let mut opened = SessionTally::new(harness, &text(payload, "id"), parent, path);
                opened.saw_cwd(payload["cwd"].as_str());
                opened.saw_git(payload["git"]["branch"].as_str(), payload["git"]["commit_hash"].as_str());
                tally = Some(opened);
            }
            let Some(tally) = tally.as_mut() else { continue };
            tally.saw_time(line.str("timestamp"));
            let ts = line.str("timestamp").unwrap_or_default();
            if kind == "event_msg"
                && payload["type"] == "token_count"
                && !line.is_replayed()
                && self.keep_rows
            {
                let limits = &payload["rate_limits"];
                for window in ["primary", "secondary"] {
                    let Some(figures) = limits.get(window).filter(|w| w.is_object()) else { continue };
                    self.rate_limits.push(ExpectedRateLimit {
                        harness: harness.name().to_string(),
                        session_id: tally.session.session_id.clone(),
                        ts: ts.to_string(),
                        window: window.to_string(),
                        window_minutes: figures["window_minutes"].as_i64(),
                        used_percent: figures["used_percent"].as_f64(),
                        resets_at: figures["resets_at"]
                            .as_i64()
                            .filter(|s| (0..=253_402_300_799).contains(s)),
                        plan: limits["plan_type"].as_str().map(str::to_string),
                        file: path.to_string(),
                        line: number,
                    });
                }
            }
            match (kind, payload["type"].as_str().unwrap_or_default()) {
                ("turn_context", _) => model = text(payload, "model"),
                ("event_msg", "token_count") if !payload["info"].is_null() => {
                    counts.push((number, false));
                    let info = &payload["info"];
                    let Some(totals) = Usage::read(&info["total_token_usage"]) else {
                        // Totals that cannot all be read: damage, and no call.
                        self.errors.push((path.to_string(), number));
                        continue;
                    };
                    let moved = previous != Some(totals);
                    let baseline = previous.filter(|before| !totals.dropped_from(before)).unwrap_or_default();
                    previous = Some(totals);
                    if !moved || line.is_replayed() {
                        continue;
                    }
                    let usage = info.get("last_token_usage").and_then(Usage::read);
                    let usage = usage.unwrap_or_else(|| totals.minus(&baseline));
                    let call = tally.call(harness, ts, &model, usage.figures(), path, number);
                    tally.calls.push(call);
                    counts.last_mut().expect("this count").1 = true;
                }
                ("event_msg", "task_started") => turn_starts.push(number),
                ("event_msg", "mcp_tool_call_end") => {
                    if let Some(server) = payload["invocation"]["server"].as_str() {
                        servers.entry(text(payload, "call_id")).or_insert_with(|| server.to_string());
                    }
                }
                ("response_item", "function_call") if !line.is_replayed() => {
                    calls.push((ts.to_string(), text(payload, "name"), text(payload, "call_id"), number));
                }
                ("response_item", "function_call_output") => {
                    let output = payload["output"].as_str().unwrap_or_default().to_string();
                    let bytes = content_bytes(payload.get("output"));
                    output_bytes.entry(text(payload, "call_id")).or_insert(bytes);
                    outputs.entry(text(payload, "call_id")).or_insert(output);
                }
                _ => {}
            }
        }
        let Some(mut tally) = tally else { return };
        for (ts, name, call_id, at) in calls {
            let output = outputs.get(&call_id).map(String::as_str).unwrap_or_default();
            let failed = exit_code(output).is_some_and(|code| code != 0);
            // The first count after the call, unless a turn starts before it; a response when
            // that count is a call.
            let count = counts.iter().find(|(line, _)| *line > at);
            let turn = turn_starts.iter().find(|line| **line > at);
            let response = count
                .filter(|(line, is_call)| *is_call && turn.is_none_or(|turn| line < turn))
                .map(|(line, _)| (path.to_string(), *line));
            let facts = ToolFacts {
                mcp_server: servers
                    .get(&call_id)
                    .cloned()
                    .or_else(|| name.strip_prefix("mcp__").and_then(server_of)),
                result_bytes: output_bytes.get(&call_id).copied(),
                response,
            };
            tally.tool_call(&ts, &name, &call_id, failed.then(|| output.to_string()), None, facts);
        }
        self.commit([tally]);
    }

    /// Tallies one Gemini CLI chat file; `parent` is the folder a subagent's file sits in, `cwd`
    /// the project root `projects.json` names for its slug.
    pub(super) fn record_gemini(&mut self, path: &str, parent: Option<&str>, cwd: &str, lines: &[Line]) {
        let harness = Harness::Gemini;
        self.saw_file(harness, path);
        let mut tally: Option<SessionTally> = None;
        // Message id → (line number, the line) of its last write, in order of first write.
        let mut last_writes: Vec<(String, u64, &Line)> = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let number = self.saw_line(path, index, line);
            if line.get("$rewindTo").is_some() || line.get("$set").is_some() {
                continue;
            }
            if let Some(id) = line.str("id") {
                let Some(tally) = tally.as_mut() else { continue };
                tally.saw_time(line.str("timestamp"));
                match last_writes.iter_mut().find(|(seen, _, _)| seen == id) {
                    Some(slot) => *slot = (id.to_string(), number, line),
                    None => last_writes.push((id.to_string(), number, line)),
                }
            } else if let (Some(session), Some(_)) = (line.str("sessionId"), line.get("projectHash"))
                && tally.is_none()
            {
                let mut opened = SessionTally::new(harness, session, parent, path);
                opened.saw_cwd(Some(cwd));
                opened.saw_time(line.str("startTime"));
                tally = Some(opened);
            }
        }
        let Some(mut tally) = tally else { return };
        for (_, number, line) in last_writes {
            if line.str("type") != Some("gemini") {
                continue;
            }
            let is_call = line.get("tokens").is_some_and(Value::is_object);
            if let Some(tokens) = line.get("tokens").filter(|t| t.is_object()) {
                let thoughts = number_of(tokens, "thoughts");
                let figures = Figures {
                    input: number_of(tokens, "input") + number_of(tokens, "tool"),
                    cache_read: number_of(tokens, "cached"),
                    cache_write: 0,
                    output: number_of(tokens, "output") + thoughts,
                    reasoning: Some(thoughts),
                };
                let ts = line.str("timestamp").unwrap_or_default();
                let model = line.str("model").unwrap_or_default();
                let call = tally.call(harness, ts, model, figures, path, number);
                tally.calls.push(call);
            }
            for tool in line.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                let status = text(tool, "status");
                let error = (status != "success").then(|| {
                    let response = &tool["result"][0]["functionResponse"]["response"];
                    response["error"].as_str().map(str::to_string).unwrap_or(status)
                });
                let response =
                    tool["result"].get(0).and_then(|part| part["functionResponse"].get("response"));
                let facts = ToolFacts {
                    mcp_server: server_of(&text(tool, "name")),
                    result_bytes: response.map(|r| json_text(r).len() as i64),
                    response: is_call.then(|| (path.to_string(), number)),
                };
                tally.tool_call(
                    &text(tool, "timestamp"),
                    &text(tool, "name"),
                    &text(tool, "id"),
                    error,
                    None,
                    facts,
                );
            }
        }
        self.commit([tally]);
    }

    /// Adds finished sessions: their sums, their model, their rows when kept.
    fn commit(&mut self, sessions: impl IntoIterator<Item = SessionTally>) {
        for SessionTally { mut session, mut git, mut calls, tool_calls } in sessions {
            git.project = session.cwd.as_deref().map(|cwd| project_of(&self.git_roots, cwd));
            calls.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
            session.model = calls.first().map(|call| call.model.clone());
            session.calls = calls.len() as u64;
            session.input_tokens = calls.iter().map(|call| call.input_tokens).sum();
            session.output_tokens = calls.iter().map(|call| call.output_tokens).sum();
            session.tool_calls = tool_calls.len() as u64;
            let counts = self.by_harness.entry(session.harness.clone()).or_default();
            counts.sessions += 1;
            counts.calls += session.calls;
            counts.tool_calls += session.tool_calls;
            counts.input_tokens += session.input_tokens;
            counts.output_tokens += session.output_tokens;
            for call in &calls {
                self.by_model.entry((call.harness.clone(), call.model.clone())).or_default().add(call);
            }
            if self.keep_rows {
                self.calls.extend(calls);
                self.tool_calls.extend(tool_calls);
                self.sessions.push(session);
                self.session_git.push(git);
            }
        }
    }

    /// Puts every list in its documented order once all files are recorded.
    pub(super) fn finish(&mut self) {
        self.calls.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        self.tool_calls.sort_by(|a, b| {
            (&a.harness, &a.session_id, &a.call_id).cmp(&(&b.harness, &b.session_id, &b.call_id))
        });
        // A response's cost is shared among the tool calls that name it.
        let mut askers: BTreeMap<(String, (String, u64)), u64> = BTreeMap::new();
        for call in &self.tool_calls {
            if let Some(response) = &call.response {
                *askers.entry((call.harness.clone(), response.clone())).or_default() += 1;
            }
        }
        for call in &mut self.tool_calls {
            call.shared_by = match &call.response {
                Some(response) => askers[&(call.harness.clone(), response.clone())],
                None => 0,
            };
        }
        self.sessions.sort_by(|a, b| {
            (&a.harness, &a.session_id, &a.parent_session_id).cmp(&(
                &b.harness,
                &b.session_id,
                &b.parent_session_id,
            ))
        });
        let roots = roots(&self.sessions);
        for (session, root) in self.sessions.iter_mut().zip(roots) {
            session.root_session_id = root;
        }
        self.session_git.sort();
        for list in [&mut self.files, &mut self.shadowed, &mut self.other_files, &mut self.cut_off] {
            list.sort();
        }
        self.errors.sort();
    }
}

impl HarnessTally for HarnessExpected {
    fn claude_session(&mut self, files: &[ClaudeFile]) {
        self.record_claude(files);
    }
    fn codex_rollout(&mut self, path: &str, lines: &[Line]) {
        self.record_codex(path, lines);
    }
    fn gemini_chat(&mut self, path: &str, parent: Option<&str>, cwd: &str, lines: &[Line]) {
        self.record_gemini(path, parent, cwd, lines);
    }
    fn shadowed(&mut self, harness: Harness, path: &str) {
        self.record_shadowed(harness, path);
    }
    fn other(&mut self, path: &str) {
        self.record_other(path);
    }
}

/// Each session's root: up from its parent through the sessions of its harness with that id
/// (a top-level one among them ends the walk) until an id has no parent or no session.
fn roots(sessions: &[ExpectedSession]) -> Vec<String> {
    let mut parents: BTreeMap<(&str, &str), Vec<Option<&str>>> = BTreeMap::new();
    for s in sessions {
        parents.entry((&s.harness, &s.session_id)).or_default().push(s.parent_session_id.as_deref());
    }
    let parent_of = |harness: &str, id: &str| -> Option<Option<&str>> {
        let of_id = parents.get(&(harness, id))?;
        Some(if of_id.contains(&None) { None } else { of_id.iter().flatten().min().copied() })
    };
    sessions
        .iter()
        .map(|session| {
            let mut at = session.session_id.as_str();
            let mut up = session.parent_session_id.as_deref();
            // No more steps than sessions: the generator writes no cycle, and would not hang on one.
            for _ in 0..=sessions.len() {
                let Some(parent) = up else { break };
                at = parent;
                up = parent_of(&session.harness, parent).flatten();
            }
            at.to_string()
        })
        .collect()
}

/// Keeps `chosen` for `key` unless a copy is there already that is not in a sidechain, or that
/// is and `chosen` is too (the first then stays).
fn prefer(slots: &mut BTreeMap<(String, String), ClaudeBlock>, key: (String, String), chosen: ClaudeBlock) {
    match slots.get(&key) {
        Some(kept) if !kept.sidechain || chosen.sidechain => {}
        _ => {
            slots.insert(key, chosen);
        }
    }
}

/// The largest token count a transcript may hold (2^32 − 1), as the accounting rules say.
const MAX_COUNT: i64 = (1 << 32) - 1;

/// A Codex `TokenUsage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Usage {
    input: i64,
    cached: i64,
    cache_write: i64,
    output: i64,
    reasoning: i64,
    total: i64,
}

impl Usage {
    /// Its figures, when every one can be read: each a whole number from 0 to a count's largest,
    /// none missing or null but the cache writes (0 when absent).
    fn read(usage: &Value) -> Option<Self> {
        let figure = |key: &str| {
            let value = usage.get(key)?;
            value.as_i64().filter(|v| (0..=MAX_COUNT).contains(v))
        };
        let cache_write = match usage.get("cache_write_input_tokens") {
            None => 0,
            Some(_) => figure("cache_write_input_tokens")?,
        };
        Some(Self {
            input: figure("input_tokens")?,
            cached: figure("cached_input_tokens")?,
            cache_write,
            output: figure("output_tokens")?,
            reasoning: figure("reasoning_output_tokens")?,
            total: figure("total_tokens")?,
        })
    }

    fn parts(&self) -> [i64; 6] {
        [self.input, self.cached, self.cache_write, self.output, self.reasoning, self.total]
    }

    /// Whether any figure is lower than `before`'s: a new baseline.
    fn dropped_from(&self, before: &Usage) -> bool {
        self.parts().iter().zip(before.parts()).any(|(now, then)| *now < then)
    }

    fn minus(&self, before: &Usage) -> Usage {
        Usage {
            input: self.input - before.input,
            cached: self.cached - before.cached,
            cache_write: self.cache_write - before.cache_write,
            output: self.output - before.output,
            reasoning: self.reasoning - before.reasoning,
            total: self.total - before.total,
        }
    }

    fn figures(&self) -> Figures {
        Figures {
            input: self.input,
            cache_read: self.cached,
            cache_write: self.cache_write,
            output: self.output,
            reasoning: Some(self.reasoning),
        }
    }
}

/// The N of a `Process exited with code N` line in a Codex tool output.
pub(super) fn exit_code(output: &str) -> Option<i64> {
    let rest = &output[output.find("Process exited with code ")? + "Process exited with code ".len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    digits.parse().ok()
}

/// A Claude `tool_result`'s text: the string, or its text blocks joined by newlines.
fn block_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The bytes of a tool result's content as `result_bytes` measures them: a string's UTF-8
/// bytes, anything else's compact JSON text (as the generator writes it), none 0.
fn content_bytes(content: Option<&Value>) -> i64 {
    match content {
        None => 0,
        Some(Value::String(text)) => text.len() as i64,
        Some(other) => json_text(other).len() as i64,
    }
}

/// The `<server>` of a tool name `<server>__<tool>` (the server at least one character, the
/// tool too, split at the first `__` after the server's first character).
fn server_of(name: &str) -> Option<String> {
    let split = (1..name.len()).find(|&at| name.is_char_boundary(at) && name[at..].starts_with("__"))?;
    (name.len() > split + 2).then(|| name[..split].to_string())
}

fn text(object: &Value, key: &str) -> String {
    object.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn number_of(object: &Value, key: &str) -> i64 {
    object.get(key).and_then(Value::as_i64).unwrap_or(0)
}
