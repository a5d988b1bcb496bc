//! Claude Code sessions: which session holds which trap, each session's lines as Claude Code
//! writes them (one line per content block of a response, each repeating its usage), its
//! subagents' files, and where they go under `<root>/projects/<encoded-cwd>/`.
//!
//! Session roles by index: 0 the showcase (a summary line, a response written as thinking, text
//! and tool_use lines, a sidechain copy of it before its last line, an identical copy of a line,
//! a subagent whose file replays a parent's message and whose progress lines nest its usage, a
//! compaction boundary, a `<synthetic>` error row, a response with no `requestId`, unknown
//! types and fields); 1 and 2 gateway sessions with no request ids that reuse each other's
//! message ids; 3 a file whose stem is not its `sessionId`; 4 an older build's flat
//! `agent-<agentId>.jsonl` whose agent id is the showcase subagent's too; 5 the damaged lines;
//! 6 a session under the second root. The others draw these features at random, and responses
//! of up to three tool uses, MCP tools of two servers (`mcp__github__…`, `mcp__docs__search`)
//! among them, whose results are texts or blocks of drawn sizes. Every response is served at a
//! tier its id picks (`Served`): standard, fast mode (Opus only), priority, or none written.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use super::{
    ClaudeFile, HarnessOptions, HarnessTally, Line, first_half, output_text, relative, sentence, ts, uuid_v4,
    write_lines, write_text,
};
use crate::generate::rng::Rng;

const SALT: u64 = 0xC1A0_DE00_0000_0001;
/// 2026-09-02T09:14:03.120Z, the first session's start.
const START_MS: u64 = 1_788_340_443_120;
const VERSION: &str = "2.1.210";
const OLD_VERSION: &str = "1.0.98";
const MODELS: &[&str] = &["claude-sonnet-4-6", "claude-opus-4-6"];
const SUBAGENT_MODEL: &str = "claude-haiku-4-5";
/// Working directories; their encodings lose `_`, `.` and `é` alike.
const PROJECTS: &[&str] = &[
    "/home/ana/src/billing-api",
    "/home/ana/src/my_app",
    "/home/ana/work/infra.tools",
    "/home/ana/src/café-menu",
];
const BRANCHES: &[&str] = &["main", "fix/rounding", "feat/export-csv"];

const SHOWCASE: usize = 0;
const GATEWAY_A: usize = 1;
const GATEWAY_B: usize = 2;
const RENAMED: usize = 3;
const FLAT_AGENT: usize = 4;
const DAMAGED: usize = 5;
const SECOND_ROOT: usize = 6;

/// `cwd` as Claude Code names its project folder: every char outside `[A-Za-z0-9]` a `-`.
pub(super) fn encode_cwd(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// Writes the Claude Code sessions under each of `opts.claude_dirs`.
pub(super) fn write(dir: &Path, opts: &HarnessOptions, tally: &mut impl HarnessTally) -> io::Result<()> {
    let shared_agent_id = Rng::derive(opts.seed ^ SALT, u64::MAX).hex(8);
    let mut start_ms = START_MS;
    // Without the traps, the sessions are those after theirs.
    let first = if opts.traps { 0 } else { SECOND_ROOT + 1 };
    for index in first..first + opts.sessions {
        let mut rng = Rng::derive(opts.seed ^ SALT, index as u64);
        start_ms += 60_000 * rng.below(50) + 20 * 60_000;
        let roots = &opts.claude_dirs;
        let second =
            roots.len() > 1 && (index == RENAMED || index == SECOND_ROOT || index % 5 == 4 && index > 6);
        let Some(root) = roots.get(usize::from(second)).or(roots.first()) else { return Ok(()) };
        let mut session = Session::plan(index, start_ms, &shared_agent_id, opts, &mut rng);
        session.converse(index, &mut rng);
        let folder = format!("projects/{}", encode_cwd(session.main.cwd));
        let stem = if index == RENAMED { uuid_v4(&mut rng) } else { session.main.session_id.clone() };
        let main_path = relative(root, &format!("{folder}/{stem}.jsonl"));
        let mut files = vec![(main_path, None, std::mem::take(&mut session.main.lines))];
        for agent in &mut session.agents {
            let name = if agent.flat {
                format!("{folder}/agent-{}.jsonl", agent.id)
            } else {
                format!("{folder}/{}/subagents/agent-{}.jsonl", session.main.session_id, agent.id)
            };
            files.push((relative(root, &name), Some(agent.id.clone()), std::mem::take(&mut agent.lines)));
        }
        let group: Vec<ClaudeFile> = files
            .iter()
            .map(|(path, agent_id, lines)| ClaudeFile {
                path: path.clone(),
                agent_id: agent_id.clone(),
                lines,
            })
            .collect();
        tally.claude_session(&group);
        for (path, _, lines) in &files {
            write_lines(&dir.join(path), lines, false)?;
        }
        for agent in session.agents.iter().filter(|agent| !agent.flat) {
            let name = format!("{folder}/{}/subagents/agent-{}.meta.json", session.main.session_id, agent.id);
            let meta = json!({"agentType": "general-purpose", "spawnDepth": 1, "model": SUBAGENT_MODEL});
            let path = relative(root, &name);
            write_text(&dir.join(&path), &format!("{meta}\n"))?;
            tally.other(&path);
        }
    }
    Ok(())
}

/// A session's main transcript and its subagents' as they are written.
struct Session {
    main: Transcript,
    agents: Vec<Agent>,
    model: &'static str,
    shared_agent_id: String,
    damage: bool,
}

struct Agent {
    id: String,
    /// An older build's `<encoded-cwd>/agent-<agentId>.jsonl`, with no meta file.
    flat: bool,
    lines: Vec<Line>,
}

/// The usage a response repeats on each of its lines, but for the output, which grows.
#[derive(Debug, Clone, Copy)]
struct Usage {
    input: i64,
    cache_write: i64,
    cache_read: i64,
}

impl Usage {
    fn json(&self, output: i64, served: Served) -> Value {
        let mut usage = json!({
            "input_tokens": self.input,
            "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation": {"ephemeral_5m_input_tokens": self.cache_write, "ephemeral_1h_input_tokens": 0},
            "output_tokens": output,
            "service_tier": "standard",
        });
        match served {
            Served::Standard => {}
            Served::StandardSpeed => usage["speed"] = json!("standard"),
            Served::Fast => usage["speed"] = json!("fast"),
            Served::Priority => usage["service_tier"] = json!("priority"),
            Served::Unwritten => {
                usage.as_object_mut().map(|u| u.remove("service_tier"));
            }
        }
        usage
    }
}

/// How a response was served, as its usage says: mostly at the standard tier (some with
/// `speed: standard` written too), some in fast mode (`speed: fast`: Opus models only, as
/// Claude Code offers it), some at the priority tier, a few with no tier written (as older
/// builds wrote none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    Standard,
    StandardSpeed,
    Fast,
    Priority,
    Unwritten,
}

impl Served {
    /// The tier of the response of id `id` by `model`, chosen by the id's bytes: no draw of
    /// the generator's, so that the rest of the home is what it was before tiers were written.
    fn of(id: &str, model: &str) -> Served {
        match id.bytes().map(u32::from).sum::<u32>() % 12 {
            0 | 4 | 5 if model.contains("opus") => Served::Fast,
            1 => Served::Priority,
            2 => Served::Unwritten,
            3 => Served::StandardSpeed,
            _ => Served::Standard,
        }
    }
}

/// A tool's use and what came back.
struct ToolRun {
    name: &'static str,
    input: Value,
    content: Value,
    /// `Some(true)` for a failure; `Some(false)` or absent for a success.
    is_error: Option<bool>,
    result: Value,
}

/// One transcript file being written: the fields every line repeats, and the lines.
struct Transcript {
    session_id: String,
    agent_id: Option<String>,
    cwd: &'static str,
    version: &'static str,
    branch: &'static str,
    slug: Option<String>,
    sidechain: bool,
    /// Responses carry a `requestId` (a gateway writes none).
    request_ids: bool,
    /// Gateway message ids: a counter, the same in every gateway session.
    gateway_ids: Option<u64>,
    parent_uuid: Option<String>,
    clock_ms: u64,
    /// Prompt tokens already cached, which the next response reads.
    context: i64,
    lines: Vec<Line>,
    rng: Rng,
}

impl Transcript {
    fn new(session_id: String, cwd: &'static str, start_ms: u64, rng: Rng) -> Self {
        Self {
            session_id,
            agent_id: None,
            cwd,
            version: VERSION,
            branch: BRANCHES[0],
            slug: None,
            sidechain: false,
            request_ids: true,
            gateway_ids: None,
            parent_uuid: None,
            clock_ms: start_ms,
            context: 0,
            lines: Vec::new(),
            rng,
        }
    }

    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.clock_ms += lo + self.rng.below(hi - lo + 1);
        self.clock_ms
    }

    /// A line of `kind` with the common fields around `body`, chained to the line before.
    fn envelope(&mut self, kind: &str, body: Vec<(&'static str, Value)>) -> Line {
        let uuid = uuid_v4(&mut self.rng);
        let at = self.tick(300, 4000);
        let mut fields = vec![
            ("parentUuid", self.parent_uuid.clone().map_or(Value::Null, Value::from)),
            ("isSidechain", json!(self.sidechain)),
            ("userType", json!("external")),
            ("cwd", json!(self.cwd)),
            ("sessionId", json!(self.session_id)),
            ("version", json!(self.version)),
            ("gitBranch", json!(self.branch)),
        ];
        if let Some(slug) = &self.slug {
            fields.push(("slug", json!(slug)));
        }
        if let Some(agent) = &self.agent_id {
            fields.push(("agentId", json!(agent)));
        }
        fields.push(("type", json!(kind)));
        fields.extend(body);
        fields.push(("uuid", json!(uuid)));
        fields.push(("timestamp", json!(ts(at))));
        self.parent_uuid = Some(uuid);
        Line::object(fields)
    }

    fn push(&mut self, kind: &str, body: Vec<(&'static str, Value)>) {
        let line = self.envelope(kind, body);
        self.lines.push(line);
    }

    fn prompt(&mut self, text: &str) {
        let prompt_id = format!("p-{}", self.rng.hex(4));
        self.push(
            "user",
            vec![("message", json!({"role": "user", "content": text})), ("promptId", json!(prompt_id))],
        );
    }

    /// The usage of the next response, and the context it leaves cached.
    fn next_usage(&mut self, output: i64) -> Usage {
        let rng = &mut self.rng;
        let (cache_read, cache_write) = if self.context == 0 || rng.percent(5) {
            (0, self.context.max(9000) + rng.range(2000, 9000))
        } else {
            (self.context, rng.range(80, 4000))
        };
        let usage = Usage { input: rng.range(1, 12), cache_write, cache_read };
        self.context = cache_read + cache_write + output;
        usage
    }

    fn message_id(&mut self) -> String {
        match self.gateway_ids.as_mut() {
            Some(counter) => {
                *counter += 1;
                format!("msg_gw_{:06}", *counter)
            }
            None => format!("msg_01{}", alnum(&mut self.rng, 22)),
        }
    }

    /// One response written as one line per block, each repeating the usage with the output
    /// so far; the last line has the whole output. Returns the last line's `message`.
    fn respond(&mut self, model: &str, blocks: Vec<Value>, output: i64, with_request_id: bool) -> Value {
        let usage = self.next_usage(output);
        let id = self.message_id();
        let served = Served::of(&id, model);
        let request_id = format!("req_011C{}", alnum(&mut self.rng, 14));
        let count = blocks.len() as i64;
        let mut last = Value::Null;
        for (position, block) in blocks.into_iter().enumerate() {
            let so_far = (output * (position as i64 + 1) / count).max(position as i64 + 1);
            let final_line = position as i64 + 1 == count;
            let stop = match (final_line, block["type"].as_str()) {
                (false, _) => Value::Null,
                (true, Some("tool_use")) => json!("tool_use"),
                (true, _) => json!("end_turn"),
            };
            let message = json!({
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": null,
                "usage": usage.json(so_far, served),
            });
            let mut body = Vec::new();
            if with_request_id && self.request_ids {
                body.push(("requestId", json!(request_id)));
            }
            body.push(("message", message.clone()));
            self.push("assistant", body);
            last = message;
        }
        last
    }

    /// The blocks of a response: maybe thinking, maybe text, then its tool uses.
    fn blocks(&mut self, tools: &[ToolRun], ids: &[String], text: bool) -> Vec<Value> {
        let mut blocks = Vec::new();
        if self.rng.percent(50) {
            let words = self.rng.size(6, 30);
            let thinking = sentence(&mut self.rng, words);
            blocks.push(json!({"type": "thinking", "thinking": thinking, "signature": format!("Eq{}", alnum(&mut self.rng, 40))}));
        }
        if text || blocks.is_empty() && tools.is_empty() {
            let words = self.rng.size(5, 40);
            blocks.push(json!({"type": "text", "text": sentence(&mut self.rng, words)}));
        }
        for (tool, id) in tools.iter().zip(ids) {
            blocks.push(json!({"type": "tool_use", "id": id, "name": tool.name, "input": tool.input}));
        }
        blocks
    }

    /// A `user` line carrying one tool's result.
    fn tool_result(&mut self, id: &str, tool: &ToolRun, assistant_uuid: Option<String>) {
        let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": tool.content});
        if let Some(flag) = tool.is_error {
            block["is_error"] = json!(flag);
        }
        let mut body = vec![
            ("message", json!({"role": "user", "content": [block]})),
            ("toolUseResult", tool.result.clone()),
        ];
        if let Some(uuid) = assistant_uuid {
            body.push(("sourceToolAssistantUUID", json!(uuid)));
        }
        body.push(("sourceToolUseID", json!(id)));
        self.push("user", body);
    }

    fn last_uuid(&self) -> Option<String> {
        self.parent_uuid.clone()
    }

    fn synthetic_error(&mut self) {
        let id = uuid_v4(&mut self.rng);
        let message = json!({
            "id": id, "type": "message", "role": "assistant", "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: Request was aborted."}],
            "stop_reason": "stop_sequence", "stop_sequence": "",
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0},
        });
        self.push("assistant", vec![("message", message), ("isApiErrorMessage", json!(true))]);
    }

    fn compact_boundary(&mut self) {
        let logical = self.parent_uuid.take();
        let pre_tokens = self.context;
        let mut line = self.envelope(
            "system",
            vec![
                ("subtype", json!("compact_boundary")),
                ("content", json!("Conversation compacted")),
                ("isMeta", json!(false)),
                ("level", json!("info")),
                ("compactMetadata", json!({"trigger": "auto", "preTokens": pre_tokens})),
            ],
        );
        if let (Line::Object { fields, .. }, Some(logical)) = (&mut line, logical) {
            fields.insert(1, ("logicalParentUuid".into(), json!(logical)));
        }
        self.lines.push(line);
        self.context = self.context / 6 + 3000;
    }

    fn turn_duration(&mut self, started_ms: u64) {
        let duration = self.clock_ms.saturating_sub(started_ms) as i64;
        self.push(
            "system",
            vec![
                ("subtype", json!("turn_duration")),
                ("durationMs", json!(duration)),
                ("isMeta", json!(false)),
            ],
        );
    }

    /// A tool run of a kind drawn at random.
    fn tool_run(&mut self) -> ToolRun {
        let rng = &mut self.rng;
        let file = format!("{}/src/{}.py", self.cwd, rng.pick(&["invoice", "ledger", "export", "report"]));
        match rng.below(9) {
            0 | 1 => {
                let failed = rng.percent(30);
                let command =
                    format!("pytest tests/test_{}.py -x -q", rng.pick(&["invoice", "ledger", "export"]));
                let size = rng.size(40, 900);
                let out = output_text(rng, size);
                if failed {
                    let text = format!("Exit code 1\n{out}FAILED - assert 10.01 == 10.0");
                    ToolRun {
                        name: "Bash",
                        input: json!({"command": command, "description": "Run the tests"}),
                        result: json!(format!("Error: {text}")),
                        content: json!(text),
                        is_error: Some(true),
                    }
                } else {
                    ToolRun {
                        name: "Bash",
                        input: json!({"command": command, "description": "Run the tests"}),
                        result: json!({"stdout": out, "stderr": "", "interrupted": false, "isImage": false}),
                        content: json!(out),
                        is_error: None,
                    }
                }
            }
            2 | 3 => {
                let size = rng.size(200, 3000);
                let body = output_text(rng, size);
                let lines = body.lines().count();
                ToolRun {
                    name: "Read",
                    input: json!({"file_path": file}),
                    result: json!({"type": "text", "file": {"filePath": file, "content": body,
                                   "numLines": lines, "startLine": 1, "totalLines": lines}}),
                    content: json!(body),
                    is_error: None,
                }
            }
            4 => {
                let names: Vec<String> =
                    (0..rng.size(1, 6)).map(|k| format!("{}/src/module_{k}.py", self.cwd)).collect();
                let duration = rng.range(3, 90);
                ToolRun {
                    name: "Glob",
                    input: json!({"pattern": "src/**/*.py"}),
                    result: json!({"filenames": names, "durationMs": duration, "numFiles": names.len(),
                                   "truncated": false}),
                    content: json!(names.join("\n")),
                    is_error: None,
                }
            }
            5 => {
                let failed = rng.percent(35);
                let input = json!({"file_path": file, "old_string": "round(total, 2)",
                                   "new_string": "quantize(total)"});
                if failed {
                    let text = "<tool_use_error>String to replace not found in file.\nString: round(total, 2)</tool_use_error>";
                    ToolRun {
                        name: "Edit",
                        input,
                        result: json!(format!("Error: {text}")),
                        content: json!(text),
                        is_error: Some(true),
                    }
                } else {
                    ToolRun {
                        name: "Edit",
                        input,
                        result: json!({"filePath": file, "oldString": "round(total, 2)",
                                       "newString": "quantize(total)", "userModified": false}),
                        content: json!(format!("The file {file} has been updated.")),
                        is_error: None,
                    }
                }
            }
            6 => {
                let duration = rng.range(200, 4000);
                let url = "https://docs.python.org/3/library/decimal.html";
                ToolRun {
                    name: "WebFetch",
                    input: json!({"url": url, "prompt": "How does quantize round?"}),
                    result: json!({"bytes": rng.range(20_000, 90_000), "code": 200, "codeText": "OK",
                                   "result": "ROUND_HALF_EVEN by default.", "durationMs": duration, "url": url}),
                    content: json!("ROUND_HALF_EVEN by default."),
                    is_error: None,
                }
            }
            7 => {
                // An MCP tool of a second server, its result text of a known size.
                let size = rng.size(60, 2400);
                let body = output_text(rng, size);
                ToolRun {
                    name: "mcp__docs__search",
                    input: json!({"query": "decimal quantize rounding"}),
                    result: json!([{"type": "text", "text": body}]),
                    content: json!(body),
                    is_error: None,
                }
            }
            _ => {
                let explicit_ok = rng.percent(50);
                ToolRun {
                    name: "mcp__github__create_issue",
                    input: json!({"owner": "ana", "repo": "billing-api", "title": "Rounding in totals"}),
                    result: json!([{"type": "text", "text": "Created issue #42"}]),
                    content: json!([{"type": "text", "text": "Created issue #42"}]),
                    is_error: explicit_ok.then_some(false),
                }
            }
        }
    }

    fn tool_id(&mut self) -> String {
        format!("toolu_01{}", alnum(&mut self.rng, 22))
    }
}

impl Session {
    fn plan(
        index: usize,
        start_ms: u64,
        shared_agent_id: &str,
        opts: &HarnessOptions,
        rng: &mut Rng,
    ) -> Self {
        let session_id = uuid_v4(rng);
        let cwd = if index == GATEWAY_B { PROJECTS[1] } else { rng.pick(PROJECTS) };
        let mut main = Transcript::new(session_id, cwd, start_ms, Rng::new(rng.next_u64()));
        main.branch = rng.pick(BRANCHES);
        if rng.percent(60) {
            main.slug = Some(format!(
                "{}-{}-{}",
                rng.pick(&["quiet", "brisk", "amber"]),
                rng.pick(&["amber", "slate", "teal"]),
                rng.pick(&["otter", "heron", "lynx"])
            ));
        }
        if index == GATEWAY_A || index == GATEWAY_B {
            main.request_ids = false;
            main.gateway_ids = Some(0);
        }
        if index == FLAT_AGENT {
            main.version = OLD_VERSION;
        }
        Self {
            main,
            agents: Vec::new(),
            model: rng.pick(MODELS),
            shared_agent_id: shared_agent_id.to_string(),
            damage: opts.damage && index == DAMAGED,
        }
    }

    /// Writes the session's conversation.
    fn converse(&mut self, index: usize, rng: &mut Rng) {
        match index {
            SHOWCASE => self.showcase(),
            _ => {
                let turns = if index == DAMAGED { 3 } else { rng.size(2, 6) };
                if rng.percent(25) {
                    self.summary();
                }
                let subagent_turn = (index == FLAT_AGENT || rng.percent(20)).then(|| rng.size(0, turns - 1));
                for turn in 0..turns {
                    self.turn(rng, subagent_turn == Some(turn), index == FLAT_AGENT);
                    if rng.percent(8) {
                        self.main.synthetic_error();
                    }
                    if rng.percent(8) && turn + 1 < turns {
                        self.main.compact_boundary();
                    }
                }
                if rng.percent(50) {
                    let prompt = sentence(rng, 6);
                    self.main.push("last-prompt", vec![("lastPrompt", json!(prompt))]);
                }
            }
        }
        if self.damage {
            self.damage();
        }
    }

    fn summary(&mut self) {
        let leaf = uuid_v4(&mut self.main.rng);
        self.main.lines.push(Line::object(vec![
            ("type", json!("summary")),
            ("summary", json!("Invoice total rounding fix")),
            ("leafUuid", json!(leaf)),
        ]));
    }

    /// One user turn: a prompt, 1–4 responses with their tool results, maybe a subagent.
    fn turn(&mut self, rng: &mut Rng, subagent: bool, flat: bool) {
        let started = self.main.clock_ms;
        let words = rng.size(4, 16);
        let prompt = sentence(rng, words);
        self.main.prompt(&prompt);
        let responses = rng.size(1, 4);
        for response in 0..responses {
            let last = response + 1 == responses;
            let tools: Vec<ToolRun> =
                if last { Vec::new() } else { (0..rng.size(1, 3)).map(|_| self.main.tool_run()).collect() };
            let mut ids: Vec<String> = tools.iter().map(|_| self.main.tool_id()).collect();
            let mut blocks = self.main.blocks(&tools, &ids, last || rng.percent(40));
            let agent_use = (subagent && response == 0).then(|| {
                let id = self.main.tool_id();
                let name = if flat { "Task" } else { "Agent" };
                let input = json!({"description": "Find the rounding bug", "prompt": "Look for where totals are rounded.",
                                   "subagent_type": "general-purpose"});
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                ids.push(id.clone());
                id
            });
            let output = rng.range(20, 1500);
            let with_request_id = !rng.percent(12);
            self.main.respond(self.model, blocks, output, with_request_id);
            if rng.percent(8) {
                let copy = self.main.lines.last().cloned().expect("a response line");
                self.main.lines.push(copy);
            }
            let assistant = self.main.last_uuid();
            for (tool, id) in tools.iter().zip(&ids) {
                self.main.tool_result(id, tool, assistant.clone());
            }
            if let Some(id) = agent_use {
                self.subagent(&id, flat, None);
            }
        }
        if rng.percent(40) {
            self.main.turn_duration(started);
        }
    }

    /// A subagent launched by the tool use `tool_use_id`: its file (replaying `replay` first,
    /// a parent's message), progress lines in the parent nesting its responses, and the tool's
    /// result in the parent.
    fn subagent(&mut self, tool_use_id: &str, flat: bool, replay: Option<Value>) {
        let id = if flat || self.agents.is_empty() && replay.is_some() {
            self.shared_agent_id.clone()
        } else {
            self.main.rng.hex(8)
        };
        let rng = Rng::new(self.main.rng.next_u64());
        let mut agent = Transcript::new(self.main.session_id.clone(), self.main.cwd, self.main.clock_ms, rng);
        agent.agent_id = Some(id.clone());
        agent.sidechain = true;
        agent.version = self.main.version;
        agent.branch = self.main.branch;
        agent.prompt("Look for where totals are rounded.");
        if let Some(mut message) = replay {
            // The parent's response again: same id and output, a new request, more cache read.
            message["usage"]["cache_read_input_tokens"] = json!(50_000);
            let request_id = format!("req_011C{}", alnum(&mut agent.rng, 14));
            agent.push("assistant", vec![("requestId", json!(request_id)), ("message", message)]);
        }
        let responses = agent.rng.size(1, 3);
        let mut tokens = 0;
        for response in 0..responses {
            let last = response + 1 == responses;
            let tools: Vec<ToolRun> = if last { Vec::new() } else { vec![agent.tool_run()] };
            let ids: Vec<String> = tools.iter().map(|_| agent.tool_id()).collect();
            let blocks = agent.blocks(&tools, &ids, last);
            let output = agent.rng.range(20, 600);
            let message = agent.respond(SUBAGENT_MODEL, blocks, output, true);
            tokens += output;
            self.progress(tool_use_id, &id, &message, agent.clock_ms);
            let assistant = agent.last_uuid();
            for (tool, id) in tools.iter().zip(&ids) {
                agent.tool_result(id, tool, assistant.clone());
            }
        }
        let answer = "Totals are rounded in src/invoice.py with round(); use Decimal.quantize.";
        self.main.clock_ms = self.main.clock_ms.max(agent.clock_ms);
        let result = ToolRun {
            name: "Agent",
            input: Value::Null,
            content: json!([{"type": "text", "text": answer}]),
            is_error: None,
            result: json!({"status": "completed", "agentId": id, "content": [{"type": "text", "text": answer}],
                           "totalDurationMs": 41_200, "totalTokens": tokens, "totalToolUseCount": responses - 1,
                           "usage": {"input_tokens": 12, "cache_creation_input_tokens": 4100,
                                     "cache_read_input_tokens": 22_000, "output_tokens": tokens}}),
        };
        let assistant = self.main.last_uuid();
        self.main.tool_result(tool_use_id, &result, assistant);
        self.agents.push(Agent { id, flat, lines: agent.lines });
    }

    /// A `progress` line in the parent nesting a subagent's response, usage and all.
    fn progress(&mut self, tool_use_id: &str, agent_id: &str, message: &Value, at_ms: u64) {
        let request_id = format!("req_011C{}", alnum(&mut self.main.rng, 14));
        let nested_uuid = uuid_v4(&mut self.main.rng);
        let data = json!({
            "message": {"type": "assistant", "message": message, "requestId": request_id,
                        "timestamp": ts(at_ms), "uuid": nested_uuid},
            "normalizedMessages": [],
            "type": "agent_progress",
            "prompt": "Look for where totals are rounded.",
            "agentId": agent_id,
        });
        let progress_id = format!("agent_msg_{}", alnum(&mut self.main.rng, 12));
        self.main.push(
            "progress",
            vec![("data", data), ("toolUseID", json!(progress_id)), ("parentToolUseID", json!(tool_use_id))],
        );
    }

    /// Session 0: every trap in one conversation.
    fn showcase(&mut self) {
        let started = self.main.clock_ms;
        self.summary();
        let message_id = uuid_v4(&mut self.main.rng);
        self.main.lines.push(Line::object(vec![
            ("type", json!("file-history-snapshot")),
            ("messageId", json!(message_id)),
            ("snapshot", json!({"messageId": message_id, "trackedFileBackups": {}, "timestamp": ts(self.main.clock_ms)})),
            ("isSnapshotUpdate", json!(false)),
        ]));
        let main = &mut self.main;
        main.prompt("the invoice total test fails, find out why");
        // A response written as thinking, text and tool_use lines; a sidechain copy of its
        // whole output before its last line.
        let failing = ToolRun {
            name: "Bash",
            input: json!({"command": "pytest tests/test_invoice.py -x -q", "description": "Run failing test"}),
            content: json!("FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0"),
            is_error: Some(true),
            result: json!("Error: FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0"),
        };
        let id = main.tool_id();
        let blocks = vec![
            json!({"type": "thinking", "thinking": "Start by running the test.", "signature": "EqQBCkYI"}),
            json!({"type": "text", "text": "Let me run the failing test first."}),
            json!({"type": "tool_use", "id": id, "name": "Bash", "input": failing.input}),
        ];
        let message = main.respond(self.model, blocks, 187, true);
        let last = main.lines.pop().expect("the response's last line");
        let request_id = format!("req_011C{}", alnum(&mut main.rng, 14));
        let mut sidechain = main.envelope(
            "assistant",
            vec![
                ("requestId", json!(request_id)),
                ("message", {
                    let mut copy = message.clone();
                    copy["usage"]["cache_read_input_tokens"] = json!(50_000);
                    copy
                }),
            ],
        );
        sidechain.set("isSidechain", json!(true));
        main.parent_uuid = last.str("uuid").map(str::to_string);
        main.lines.push(sidechain);
        main.lines.push(last);
        let assistant = main.last_uuid();
        main.tool_result(&id, &failing, assistant);
        // A response whose line is written twice, byte for byte.
        let read = main.tool_run_read();
        let id = main.tool_id();
        let blocks = vec![json!({"type": "tool_use", "id": id, "name": "Read", "input": read.input})];
        main.respond(self.model, blocks, 64, true);
        let copy = main.lines.last().cloned().expect("a response line");
        main.lines.push(copy);
        let assistant = main.last_uuid();
        main.tool_result(&id, &read, assistant);
        // A todo list (is_error false) and a subagent that replays this response.
        let todo = ToolRun {
            name: "TodoWrite",
            input: json!({"todos": [{"content": "Fix rounding", "status": "in_progress", "activeForm": "Fixing rounding"}]}),
            content: json!("Todos have been modified successfully."),
            is_error: Some(false),
            result: json!({"oldTodos": [], "newTodos": [{"content": "Fix rounding", "status": "in_progress"}]}),
        };
        let (todo_id, agent_id) = (main.tool_id(), main.tool_id());
        let agent_input = json!({"description": "Find the rounding bug", "prompt": "Look for where totals are rounded.",
                                 "subagent_type": "general-purpose"});
        let blocks = vec![
            json!({"type": "text", "text": "I will track this and ask a subagent to search."}),
            json!({"type": "tool_use", "id": todo_id, "name": "TodoWrite", "input": todo.input}),
            json!({"type": "tool_use", "id": agent_id, "name": "Agent", "input": agent_input}),
        ];
        let replayed = main.respond(self.model, blocks, 240, true);
        let assistant = main.last_uuid();
        main.tool_result(&todo_id, &todo, assistant);
        self.subagent(&agent_id, false, Some(replayed));
        let main = &mut self.main;
        main.compact_boundary();
        main.synthetic_error();
        // A response with no requestId, an unknown field on its line.
        main.prompt("now fix it");
        let blocks = vec![json!({"type": "text", "text": "Use Decimal.quantize with ROUND_HALF_UP."})];
        main.respond(self.model, blocks, 95, false);
        if let Some(line) = main.lines.last_mut() {
            line.set("attributionPlugin", json!({"name": "billing-helper", "version": "0.3.1"}));
        }
        main.push("x-future-event", vec![("payload", json!({"note": "a type txq has never seen"}))]);
        main.push("custom-title", vec![("customTitle", json!("Invoice rounding"))]);
        main.turn_duration(started);
    }

    /// The damaged lines: a line cut in half mid-file, and a cut-off last line.
    fn damage(&mut self) {
        let lines = &mut self.main.lines;
        let at = lines.len() / 2;
        let half = first_half(&lines[at].text());
        lines.insert(at, Line::Corrupt(half));
        let tail = self.main.envelope(
            "assistant",
            vec![(
                "message",
                json!({"id": "msg_01cut", "model": self.model,
            "content": [{"type": "text", "text": "The fix is to quantize — 日本語"}],
            "usage": {"input_tokens": 3, "output_tokens": 50}}),
            )],
        );
        self.main.lines.push(Line::CutOff(first_half(&tail.text())));
    }
}

impl Transcript {
    fn tool_run_read(&mut self) -> ToolRun {
        let file = format!("{}/src/invoice.py", self.cwd);
        let body = output_text(&mut self.rng, 600);
        let lines = body.lines().count();
        ToolRun {
            name: "Read",
            input: json!({"file_path": file}),
            result: json!({"type": "text", "file": {"filePath": file, "content": body, "numLines": lines,
                           "startLine": 1, "totalLines": lines}}),
            content: json!(body),
            is_error: None,
        }
    }
}

/// `len` characters of `[0-9A-Za-z]`, as Anthropic's ids are made.
fn alnum(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..len).map(|_| char::from(ALPHABET[rng.below(ALPHABET.len() as u64) as usize])).collect()
}
