//! Gemini CLI chats: which session holds which trap, each chat's lines as Gemini CLI records
//! them (a metadata line, then messages re-appended whole on every update, `$set` patches and
//! `$rewindTo`), a subagent's chat, and the project registry (`projects.json`, `.project_root`)
//! under `$GEMINI_CLI_HOME/.gemini/`.
//!
//! Session roles by index: 0 the showcase (a response written first with its tool call
//! executing and no tokens, then whole with its result and tokens; `$set` patches; a rewind
//! over a response whose tokens were spent; an info message; a failed and a cancelled tool call;
//! a subagent in `chats/<parentSessionId>/<sessionId>.jsonl`); 1 a second project with the same
//! folder name (slug `billing-api-1`); 2 the damaged lines. The others draw re-writes, infos,
//! error messages and patches at random, and responses of up to three tool calls, MCP tools of
//! two servers among them as Gemini CLI qualifies them (`github__…`, `docs__search`).

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{
    HarnessOptions, HarnessTally, Line, first_half, output_text, relative, sentence, ts, uuid_v4,
    write_lines, write_text,
};
use crate::generate::rng::Rng;

const SALT: u64 = 0x6E31_1111_0000_0003;
/// 2026-09-04T07:30:00.112Z, the first chat's start.
const START_MS: u64 = 1_788_507_000_112;
const MODELS: &[&str] = &["gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-pro"];
/// (project root, its slug): two roots with the same folder name get `-1` on the second.
const PROJECTS: &[(&str, &str)] = &[
    ("/home/ana/src/billing-api", "billing-api"),
    ("/home/ana/clients/billing-api", "billing-api-1"),
    ("/home/ana/src/my_app", "my-app"),
];

const SHOWCASE: usize = 0;
const SECOND_SLUG: usize = 1;
const DAMAGED: usize = 2;

/// Writes the Gemini chats and the project registry under `opts.gemini_home`.
pub(super) fn write(dir: &Path, opts: &HarnessOptions, tally: &mut impl HarnessTally) -> io::Result<()> {
    let home = &opts.gemini_home;
    let mut used: BTreeMap<&str, &str> = BTreeMap::new();
    let mut start_ms = START_MS;
    // Without the traps, the sessions are those after theirs.
    let first = if opts.traps { 0 } else { DAMAGED + 1 };
    for index in first..first + opts.sessions {
        let mut rng = Rng::derive(opts.seed ^ SALT, index as u64);
        if index > first {
            start_ms += 25 * 60_000 + 60_000 * rng.below(200);
        }
        let (root, slug) = match index {
            SHOWCASE => PROJECTS[0],
            SECOND_SLUG => PROJECTS[1],
            _ => rng.pick(PROJECTS),
        };
        used.insert(root, slug);
        let mut chat = Chat::new(uuid_v4(&mut rng), root, start_ms, "main", Rng::new(rng.next_u64()));
        chat.model = if index == SHOWCASE { MODELS[0] } else { rng.pick(MODELS) };
        let subagent = if index == SHOWCASE {
            Some(chat.showcase())
        } else {
            chat.ordinary();
            None
        };
        if opts.damage && index == DAMAGED {
            let at = chat.lines.len() / 2;
            let half = first_half(&chat.lines[at].text());
            chat.lines.insert(at, Line::Corrupt(half));
            let tail = chat.user_line("and then push the branch — 日本語");
            chat.lines.push(Line::CutOff(first_half(&tail.text())));
        }
        let minute = ts(start_ms)[..16].replace(':', "-");
        let chats = format!(".gemini/tmp/{slug}/chats");
        let name = format!("{chats}/session-{minute}-{}.jsonl", &chat.session_id[..8]);
        let path = relative(home, &name);
        tally.gemini_chat(&path, None, root, &chat.lines);
        write_lines(&dir.join(&path), &chat.lines, false)?;
        if let Some(sub) = subagent {
            let path = relative(home, &format!("{chats}/{}/{}.jsonl", chat.session_id, sub.session_id));
            tally.gemini_chat(&path, Some(&chat.session_id), root, &sub.lines);
            write_lines(&dir.join(&path), &sub.lines, false)?;
        }
    }
    if used.is_empty() {
        return Ok(());
    }
    let mut registry = serde_json::Map::new();
    for (root, slug) in &used {
        registry.insert(root.to_string(), json!(slug));
        let marker = relative(home, &format!(".gemini/tmp/{slug}/.project_root"));
        write_text(&dir.join(&marker), root)?;
        tally.other(&marker);
    }
    let index = relative(home, ".gemini/projects.json");
    write_text(&dir.join(&index), &format!("{}\n", json!({"projects": registry})))?;
    tally.other(&index);
    Ok(())
}

/// A tool call as the model asked for it and how it ended.
struct ToolPlan {
    id: String,
    name: &'static str,
    args: Value,
    /// `success`, `error` or `cancelled`.
    status: &'static str,
    response: Value,
    agent_id: Option<String>,
}

/// One chat file being written.
struct Chat {
    session_id: String,
    project_hash: String,
    model: &'static str,
    clock_ms: u64,
    /// Prompt tokens of the next response.
    context: i64,
    lines: Vec<Line>,
    rng: Rng,
}

impl Chat {
    /// A chat begun at `start_ms`, its metadata line written.
    fn new(session_id: String, root: &str, start_ms: u64, kind: &str, rng: Rng) -> Self {
        let project_hash: String =
            Sha256::digest(root.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let mut chat = Self {
            session_id,
            project_hash,
            model: MODELS[0],
            clock_ms: start_ms,
            context: 0,
            lines: Vec::new(),
            rng,
        };
        let meta = Line::object(vec![
            ("sessionId", json!(chat.session_id)),
            ("projectHash", json!(chat.project_hash)),
            ("startTime", json!(ts(start_ms))),
            ("lastUpdated", json!(ts(start_ms))),
            ("kind", json!(kind)),
        ]);
        chat.lines.push(meta);
        chat
    }

    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.clock_ms += lo + self.rng.below(hi - lo + 1);
        self.clock_ms
    }

    fn user_line(&mut self, text: &str) -> Line {
        let id = uuid_v4(&mut self.rng);
        let at = self.tick(2000, 30_000);
        Line::object(vec![
            ("id", json!(id)),
            ("timestamp", json!(ts(at))),
            ("type", json!("user")),
            ("content", json!([{"text": text}])),
        ])
    }

    /// A prompt; returns its message id.
    fn user(&mut self, text: &str) -> String {
        let line = self.user_line(text);
        let id = line.str("id").unwrap_or_default().to_string();
        self.lines.push(line);
        id
    }

    fn note(&mut self, kind: &str, text: &str) {
        let id = uuid_v4(&mut self.rng);
        let at = self.tick(100, 2000);
        self.lines.push(Line::object(vec![
            ("id", json!(id)),
            ("timestamp", json!(ts(at))),
            ("type", json!(kind)),
            ("content", json!(text)),
        ]));
    }

    fn set_patch(&mut self, patch: Value) {
        self.lines.push(Line::object(vec![("$set", patch)]));
    }

    fn last_updated(&mut self) {
        let patch = json!({"lastUpdated": ts(self.clock_ms + 31)});
        self.set_patch(patch);
    }

    fn rewind_to(&mut self, id: &str) {
        self.lines.push(Line::object(vec![("$rewindTo", json!(id))]));
    }

    /// A tool call of a kind drawn at random, made at `at_ms`.
    fn tool_plan(&mut self, at_ms: u64, position: usize) -> ToolPlan {
        let rng = &mut self.rng;
        let status = match rng.below(20) {
            0 | 1 => "error",
            2 => "cancelled",
            _ => "success",
        };
        let (name, args) = match rng.below(6) {
            0 => ("run_shell_command", json!({"command": "pytest tests/test_invoice.py -x -q"})),
            1 => ("read_file", json!({"absolute_path": "/home/ana/src/billing-api/src/invoice.py"})),
            2 => (
                "replace",
                json!({"file_path": "src/invoice.py", "old_string": "round(total, 2)",
                                    "new_string": "total.quantize(CENT)"}),
            ),
            3 => ("glob", json!({"pattern": "tests/**/*.py"})),
            // MCP tools of two servers, as Gemini CLI names one it qualifies.
            4 => ("github__list_pull_requests", json!({"state": "open"})),
            _ => ("docs__search", json!({"query": "decimal rounding"})),
        };
        let id = format!("{name}_{at_ms}_{position}");
        let size = rng.size(40, 1200);
        let response = match status {
            "success" if name == "run_shell_command" => {
                json!({"output": format!("{}Exit Code: {}", output_text(rng, size), rng.pick(&[0, 0, 1]))})
            }
            "success" => json!({"output": output_text(rng, size)}),
            "error" => json!({"error": format!("{name} failed: no such file or directory")}),
            _ => json!({"error": "[Operation Cancelled] Reason: User did not allow tool call"}),
        };
        ToolPlan { id, name, args, status, response, agent_id: None }
    }

    /// A tool call as written: without a result while it runs, with its result once done.
    fn tool_json(&self, plan: &ToolPlan, done: bool, at_ms: u64) -> Value {
        let mut call = json!({
            "id": plan.id, "name": plan.name, "args": plan.args,
            "status": if done { plan.status } else { "executing" },
            "timestamp": ts(at_ms), "displayName": plan.name, "description": "",
            "renderOutputAsMarkdown": plan.name != "run_shell_command",
        });
        if done {
            call["result"] =
                json!([{"functionResponse": {"id": plan.id, "name": plan.name, "response": plan.response}}]);
            call["resultDisplay"] =
                plan.response.get("output").or(plan.response.get("error")).cloned().unwrap_or_default();
        }
        if let Some(agent) = &plan.agent_id {
            call["agentId"] = json!(agent);
        }
        call
    }

    /// The response's token counts; the context grows by what it read and wrote.
    fn tokens(&mut self) -> Value {
        let rng = &mut self.rng;
        let input = self.context.max(6000) + rng.range(50, 2500);
        let cached = if self.context == 0 { 0 } else { self.context / 1024 * 1024 };
        let output = rng.range(10, 600);
        let thoughts = rng.range(0, 900);
        let tool = if rng.percent(20) { rng.range(1, 40) } else { 0 };
        self.context = input + output;
        json!({"input": input, "output": output, "cached": cached, "thoughts": thoughts, "tool": tool,
               "total": input + output + thoughts + tool})
    }

    /// A response: when it calls tools (or at random), first written with its calls executing
    /// and no tokens, then re-written whole; returns its id.
    fn respond(&mut self, tools: Vec<ToolPlan>, text: &str) -> String {
        let id = uuid_v4(&mut self.rng);
        let at = self.tick(1500, 9000);
        let thoughts = json!([{"subject": "Planning", "description": sentence(&mut self.rng, 6), "timestamp": ts(at - 900)}]);
        let done_ms = at + 500 + self.rng.below(8000);
        let write = |chat: &Chat, content: &str, done: bool, tokens: Option<Value>| {
            let mut fields = vec![
                ("id", json!(id)),
                ("timestamp", json!(ts(at))),
                ("type", json!("gemini")),
                ("content", json!(content)),
            ];
            if !tools.is_empty() {
                let calls: Vec<Value> =
                    tools.iter().map(|plan| chat.tool_json(plan, done, done_ms)).collect();
                fields.push(("toolCalls", json!(calls)));
            }
            fields.push(("thoughts", thoughts.clone()));
            if let Some(tokens) = tokens {
                fields.push(("tokens", tokens));
            }
            fields.push(("model", json!(chat.model)));
            Line::object(fields)
        };
        if !tools.is_empty() || self.rng.percent(40) {
            let first = write(self, "", false, None);
            self.lines.push(first);
        }
        let tokens = self.tokens();
        let last = write(self, text, true, Some(tokens));
        self.lines.push(last);
        self.clock_ms = self.clock_ms.max(done_ms);
        id
    }

    fn random_tools(&mut self) -> Vec<ToolPlan> {
        let count = if self.rng.percent(60) { self.rng.size(1, 3) } else { 0 };
        let at = self.clock_ms + 4000;
        (0..count).map(|position| self.tool_plan(at, position)).collect()
    }

    fn ordinary(&mut self) {
        for _ in 0..self.rng.size(1, 5) {
            let words = self.rng.size(4, 14);
            let prompt = sentence(&mut self.rng, words);
            self.user(&prompt);
            for _ in 0..self.rng.size(1, 3) {
                let tools = self.random_tools();
                let words = self.rng.size(5, 30);
                let text = sentence(&mut self.rng, words);
                self.respond(tools, &text);
            }
            match self.rng.below(10) {
                0 => self.note("info", "Switched to fallback model."),
                1 => self.note("error", "[API Error: You exceeded your current quota.]"),
                2 | 3 => self.last_updated(),
                _ => {}
            }
        }
    }

    /// Session 0: every trap; returns its subagent's chat.
    fn showcase(&mut self) -> Chat {
        self.user("why does test_total fail?");
        let at = self.clock_ms + 3000;
        let shell = ToolPlan {
            id: format!("run_shell_command_{at}_0"),
            name: "run_shell_command",
            args: json!({"command": "pytest tests/test_invoice.py -x -q"}),
            status: "success",
            response: json!({"output": "FAILED tests/test_invoice.py::test_total - assert 10.01 == 10.0\nExit Code: 1"}),
            agent_id: None,
        };
        self.respond(vec![shell], "");
        self.last_updated();
        // A prompt and a response that are rewound: the response's tokens were still spent.
        let rewound = self.user("just delete the test");
        self.respond(Vec::new(), "Deleting the test would hide the bug.");
        self.note("info", "Request cancelled.");
        self.rewind_to(&rewound);
        self.user("fix the rounding instead, ask a helper to check the other totals");
        // A subagent, called as a tool.
        let sub_id = uuid_v4(&mut self.rng);
        let at = self.clock_ms + 2500;
        let helper = ToolPlan {
            id: format!("codebase_investigator_{at}_0"),
            name: "codebase_investigator",
            args: json!({"objective": "Find every place totals are rounded."}),
            status: "success",
            response: json!({"output": "Totals are rounded in src/invoice.py and src/ledger.py."}),
            agent_id: Some(sub_id.clone()),
        };
        let mut sub = Chat::new(sub_id, "", self.clock_ms + 3000, "subagent", Rng::new(self.rng.next_u64()));
        sub.project_hash = self.project_hash.clone();
        sub.lines[0].set("projectHash", json!(self.project_hash));
        sub.model = MODELS[1];
        sub.user("Find every place totals are rounded.");
        let tools = vec![sub.tool_plan(sub.clock_ms + 2000, 0)];
        sub.respond(tools, "");
        sub.respond(Vec::new(), "Totals are rounded in src/invoice.py and src/ledger.py.");
        self.respond(vec![helper], "");
        // A failed and a cancelled tool call.
        let at = self.clock_ms + 2000;
        let failed = ToolPlan {
            id: format!("replace_{at}_0"),
            name: "replace",
            args: json!({"file_path": "src/invoice.py", "old_string": "round(total, 2)", "new_string": "q(total)"}),
            status: "error",
            response: json!({"error": "Failed to edit, 0 occurrences found for old_string in src/invoice.py"}),
            agent_id: None,
        };
        let cancelled = ToolPlan {
            id: format!("run_shell_command_{at}_1"),
            name: "run_shell_command",
            args: json!({"command": "git push --force"}),
            status: "cancelled",
            response: json!({"error": "[Operation Cancelled] Reason: User did not allow tool call"}),
            agent_id: None,
        };
        self.respond(vec![failed, cancelled], "The edit failed; retrying with the exact text.");
        self.respond(Vec::new(), "Fixed: totals use Decimal.quantize now.");
        self.set_patch(json!({"summary": "Fix invoice rounding", "lastUpdated": ts(self.clock_ms + 40)}));
        sub
    }
}
