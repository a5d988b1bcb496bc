//! A run's tool steps (`tool_call`, `tool_result`, their side effects, `tool_audit`,
//! `action_emitted`) and its network flows.

use serde_json::{Value, json};

use super::SHOWCASE_TOOLS;
use super::run::RunWriter;
use crate::generate::lines::FlowMeta;
use crate::generate::rng::{Rng, rfc3339};

/// MCP catalog tools a v0.74 run's catalog offers beside its own tools; each call of one writes
/// a `tool_audit`. All of them write, so readonly mode refuses them.
const MCP_TOOLS: &[&str] = &["issues.create", "issues.comment", "scm.create_pr"];

/// Whether a tool comes from the MCP catalog (the only tools v0.74 audits).
fn is_mcp(tool: &str) -> bool {
    tool.starts_with("issues.") || tool.starts_with("scm.")
}

const UNGRANTED_TOOLS: &[&str] = &["deploy.trigger", "web_fetch", "bash", "write_file"];
const WRITE_TOOLS: &[&str] = &["write_file", "edit_file", "bash"];
const WEB_HOSTS: &[(&str, &str)] = &[
    ("github.com", "/rust-lang/rust/issues/1234"),
    ("pypi.org", "/simple/requests/"),
    ("docs.rs", "/serde_json/latest/serde_json/"),
    ("registry.npmjs.org", "/left-pad"),
];
const OUTPUT_LINES: &[&str] = &[
    "src/parser.rs:142:17: error[E0599]: no method named `unwrap_or_default` found",
    "   Compiling txq v0.1.0 (/home/me/src/txq)",
    "test parser::tests::parses_empty_input ... FAILED",
    "    let path = \"C:\\\\Users\\\\dev\\\\notes.txt\";",
    "{\"ok\":true,\"items\":[1,2,3],\"note\":\"nested \\\"json\\\"\"}",
    "# Résumé: 日本語 ✅ done 🎉",
    "\tat com.example.Main.run(Main.java:42)",
    "warning: unused variable: `café`",
];
const PATHS: &[&str] = &["src/parser.rs", "src/lib.rs", "tests/parse.rs", "docs/résumé.md", "README.md"];
const COMMANDS: &[&str] =
    &["cargo test -p parser", "cargo clippy --all-targets", "git diff --stat", "ls -la src"];
const TOOL_ERRORS: &[&str] = &[
    "file not found: src/gone.rs",
    "exit status 101",
    "timed out after 120s",
    "permission denied: \"/etc/shadow\"",
];

impl RunWriter<'_> {
    /// The showcase's scripted calls; otherwise none on the last turn, else 1–3 mostly granted
    /// tools, a readonly run trying a write first.
    pub(super) fn tools_for_turn(&mut self, turn: usize) -> Vec<&'static str> {
        if self.plan.showcase {
            return SHOWCASE_TOOLS[turn].to_vec();
        }
        if turn + 1 == self.plan.turns {
            return Vec::new();
        }
        let mut tools: Vec<&'static str> = (0..self.rng.size(1, 3))
            .map(|_| {
                if self.rng.percent(10) {
                    self.rng.pick(UNGRANTED_TOOLS)
                } else {
                    self.rng.pick(self.plan.tools)
                }
            })
            .collect();
        let first_write = self.plan.tools.iter().find(|tool| WRITE_TOOLS.contains(tool));
        if let (0, "readonly", Some(write)) = (turn, self.plan.mode, first_write) {
            tools.insert(0, write);
        }
        if self.plan.v0_74 && self.rng.percent(30) {
            tools.push(self.rng.pick(MCP_TOOLS));
        }
        tools
    }

    pub(super) fn tool_step(&mut self, tool: &'static str) {
        if self.plan.v0_74 {
            return self.tool_step_v0_74(tool);
        }
        self.calls += 1;
        let prefix = if self.plan.provider == "anthropic" { "toolu" } else { "call" };
        let call_id = format!("{prefix}_{:02}{}", self.calls, self.rng.hex(20));
        let input = self.tool_input(tool);
        self.push("tool_call", json!({"call_id": call_id, "tool": tool, "input": input}));
        let granted = self.plan.tools.contains(&tool);
        let decision = match (granted, self.plan.mode) {
            (false, _) => Some("denied:not_granted"),
            (true, "readonly") if WRITE_TOOLS.contains(&tool) => Some("denied:readonly"),
            _ => None,
        };
        let failed = decision.is_some() || (!self.plan.showcase && self.rng.percent(12));
        let (output, duration_ms) = (self.tool_output(), self.rng.range(2, 4000));
        let mut result = json!({"call_id": call_id, "output": output, "duration_ms": duration_ms});
        if let Some(decision) = decision {
            (result["output"], result["error"]) =
                (json!(format!("{tool} refused: {decision}")), json!(decision));
        } else if failed {
            result["error"] = json!(self.rng.pick(TOOL_ERRORS));
        } else if self.rng.percent(30) {
            let matches = json!([{"path": self.rng.pick(PATHS), "line": self.rng.range(1, 400)}]);
            result["structured"] =
                json!({"lines": self.rng.range(1, 400), "truncated": false, "matches": matches});
        }
        self.push("tool_result", result);
        if decision.is_none() {
            self.tool_effects(tool, &input, failed);
        }
        self.tool_audit(tool, granted, decision);
        if tool == "issues.create" && decision.is_none() {
            let payload = json!({"title": input["title"], "body": input["body"]});
            let mut action = json!({"kind": tool, "payload": payload, "allowed": true});
            if self.rng.percent(70) {
                action["applied"] = json!(true);
            } else {
                action["reason"] = json!("dry run: not applied");
            }
            self.push("action_emitted", action);
        }
    }

    /// A tool step as rupu v0.74 writes it: a refusal is only in `tool_result.error`
    /// (`permission_denied` for a built-in tool, `permission denied` for an MCP tool, `unknown
    /// tool: X` for one the run does not offer), a timed-out command leaves no `command_run`, a
    /// failed command only its exit code, and only MCP tools get a `tool_audit`, often with no
    /// decision.
    fn tool_step_v0_74(&mut self, tool: &'static str) {
        self.calls += 1;
        let prefix = if self.plan.provider == "anthropic" { "toolu" } else { "call" };
        let call_id = format!("{prefix}_{:02}{}", self.calls, self.rng.hex(20));
        let input = self.tool_input(tool);
        self.push("tool_call", json!({"call_id": call_id, "tool": tool, "input": input}));
        let mcp = is_mcp(tool);
        let granted = mcp || self.plan.tools.contains(&tool);
        let readonly = self.plan.mode == "readonly";
        let denial = match (granted, readonly && (mcp || WRITE_TOOLS.contains(&tool))) {
            (false, _) => Some(format!("unknown tool: {tool}")),
            (true, true) if mcp => Some("permission denied".to_string()),
            (true, true) => Some("permission_denied".to_string()),
            (true, false) => None,
        };
        let (output, duration_ms) = (self.tool_output(), self.rng.range(2, 4000));
        let mut result = json!({"call_id": call_id, "output": output, "duration_ms": duration_ms});
        let mut ran = denial.is_none();
        if let Some(denial) = &denial {
            (result["output"], result["error"]) = (json!(format!("{tool}: {denial}")), json!(denial));
        } else if tool == "bash" && self.rng.percent(15) {
            (result["output"], result["error"], result["duration_ms"]) =
                (json!(""), json!("timeout after 1s"), json!(1000));
            ran = false;
        } else if tool != "bash" && self.rng.percent(8) {
            result["error"] = json!("invalid input: missing field `path`");
            ran = false;
        }
        self.push("tool_result", result);
        if ran && tool == "bash" {
            let command = input["command"].as_str().unwrap_or_default();
            let exit_code = if self.rng.percent(25) { self.rng.pick(&[1, 2, 101]) } else { 0 };
            let (stdout_bytes, stderr_bytes) = (self.rng.range(0, 90_000), self.rng.range(0, 4_000));
            let run = json!({"argv": ["/bin/sh", "-c", command], "cwd": "/home/me/src/txq",
                             "exit_code": exit_code, "stdout_bytes": stdout_bytes,
                             "stderr_bytes": stderr_bytes});
            self.push("command_run", run);
        } else if ran {
            self.tool_effects(tool, &input, false);
        }
        if mcp {
            let blocked = denial.is_some();
            let mut audit = json!({"tool": tool, "declared": false, "granted": true});
            if blocked {
                audit["blocked"] = json!(true);
                if self.rng.percent(40) {
                    audit["decision"] = json!("denied:readonly");
                }
            } else if self.rng.percent(30) {
                audit["decision"] = json!("allowed");
            }
            if self.rng.percent(50) {
                audit["reason"] = json!("catalog");
            }
            self.push("tool_audit", audit);
        }
        if tool == "issues.create" && ran {
            let payload = json!({"title": input["title"], "body": input["body"]});
            self.push(
                "action_emitted",
                json!({"kind": tool, "payload": payload, "allowed": true, "applied": true}),
            );
        }
    }

    fn tool_input(&mut self, tool: &str) -> Value {
        let path = self.rng.pick(PATHS);
        match tool {
            "read_file" => json!({"path": path}),
            "write_file" => json!({"path": path, "content": self.prose()}),
            "edit_file" => json!({"path": path, "old": "naïve_split", "new": "split_fields"}),
            "bash" => json!({"command": self.rng.pick(COMMANDS), "timeout_ms": 120_000}),
            "grep" => json!({"pattern": "fn \\w+\\(", "path": "src/"}),
            "glob" => json!({"pattern": "**/*.rs"}),
            "web_fetch" => {
                let (host, url_path) = self.rng.pick(WEB_HOSTS);
                json!({"url": format!("https://{host}{url_path}?page=2")})
            }
            "skills.load" => json!({"name": "sql-tuning"}),
            "message.send" => json!({"to": "role:recon", "body": self.prose()}),
            "findings.report" => {
                json!({"severity": "high", "title": self.prose(), "path": path, "line": 142})
            }
            "issues.create" => {
                let title = "null pointer in parser.rs:142";
                json!({"title": title, "body": self.prose(), "labels": ["bug"]})
            }
            "issues.comment" => json!({"issue": 142, "body": self.prose()}),
            "scm.create_pr" => json!({"branch": "fix/parser-null", "title": self.prose()}),
            _ => json!({"target": "prod", "dry_run": false}),
        }
    }

    /// A `tool_result.output` whose byte size is within the options' bounds (a char boundary
    /// just past `target` when no boundary lies in `min..=target`).
    fn tool_output(&mut self) -> String {
        let (min, max) = self.opts.tool_output_bytes;
        let target = self.rng.size(min, max.max(min));
        let mut output = String::with_capacity(target + 100);
        while output.len() < target {
            output.push_str(self.rng.pick(OUTPUT_LINES));
            output.push('\n');
        }
        let boundary = |end: &usize| output.is_char_boundary(*end);
        let below = (min..=target).rev().find(boundary);
        let end = below.or_else(|| (target..output.len()).find(boundary)).unwrap_or(output.len());
        output.truncate(end);
        output
    }

    /// What a tool that ran leaves after its `tool_result`.
    fn tool_effects(&mut self, tool: &str, input: &Value, failed: bool) {
        let path = input["path"].as_str().unwrap_or_default();
        match tool {
            "skills.load" if !failed => {
                self.skill_load("sql-tuning", "global", "model");
                if self.rng.percent(30) {
                    let message = "skill `sql-tuning` changed on disk";
                    self.push("notice", json!({"kind": "skill_changed", "message": message}));
                }
            }
            "write_file" | "edit_file" if !failed => {
                let kinds: &[&str] =
                    if tool == "write_file" { &["create", "modify"] } else { &["modify", "delete"] };
                let hunk = "@@ -1 +1 @@\n-naïve_split(\"a\\tb\")\n+split_fields(\"a\\tb\")\n";
                let diff = format!("--- a/{path}\n+++ b/{path}\n{hunk}");
                let edit = json!({"path": path, "kind": self.rng.pick(kinds), "diff": diff});
                self.push("file_edit", edit);
            }
            "bash" => {
                let argv: Vec<&str> = input["command"].as_str().unwrap_or_default().split(' ').collect();
                let exit_code = if failed { self.rng.pick(&[1, 101]) } else { 0 };
                let (stdout_bytes, stderr_bytes) = (self.rng.range(0, 90_000), self.rng.range(0, 4_000));
                let run = json!({"argv": argv, "cwd": "/home/me/src/txq", "exit_code": exit_code,
                                 "stdout_bytes": stdout_bytes, "stderr_bytes": stderr_bytes});
                self.push("command_run", run);
            }
            "message.send" if !failed => {
                let id = format!("msg_{}", self.rng.ulid(self.clock_ms));
                let message = json!({
                    "id": id, "direction": "sent", "from": "lynx#1", "to": input["to"],
                    "kind": "direct",
                    "body": input["body"], "via": "tool", "delivery": {"resolved": ["otter#1"]},
                });
                self.push("message", message);
            }
            "web_fetch" => {
                let url = input["url"].as_str().unwrap_or_default().trim_start_matches("https://");
                let (host, rest) = url.split_once('/').unwrap_or((url, ""));
                let url_path = format!("/{}", rest.split('?').next().unwrap_or_default());
                self.net_flow(host, "GET", &url_path, json!({"kind": "tool", "name": "web_fetch"}));
            }
            _ => {}
        }
    }

    fn tool_audit(&mut self, tool: &str, granted: bool, decision: Option<&str>) {
        let mut audit = json!({"tool": tool, "declared": granted, "granted": granted});
        match decision {
            Some(decision) => {
                (audit["blocked"], audit["decision"]) = (json!(true), json!(decision));
                audit["reason"] = json!(if granted { "declared" } else { "not_declared" });
            }
            None if self.rng.percent(50) => {
                (audit["decision"], audit["reason"]) = (json!("allowed"), json!("declared"))
            }
            None => {}
        }
        if self.rng.percent(20) {
            audit["restricted"] = json!(true);
        } else if self.rng.percent(30) {
            audit["restricted"] = json!(false);
        }
        self.push("tool_audit", audit);
    }

    pub(super) fn provider_flow(&mut self, method: &str, path: &str) {
        let host = if self.plan.provider == "openai" { "api.openai.com" } else { "api.anthropic.com" };
        self.net_flow(host, method, path, json!({"kind": "provider", "name": self.plan.provider}));
    }

    fn net_flow(&mut self, host: &str, method: &str, path: &str, origin: Value) {
        let provider_call = origin["kind"] == "provider" && method == "POST";
        let mut ctx = json!({"run_id": self.plan.run_id, "agent": self.plan.agent, "origin": origin});
        if self.rng.percent(50) {
            ctx["workspace_id"] = json!(self.plan.workspace_id);
        }
        let mut flow = flow_record(&mut self.rng, self.clock_ms, &ctx, host, method, path);
        let mut completed = None;
        // A v0.74 streamed provider call: the body ends after the flow is written, and only
        // the ledger's complete line has its final size.
        let streamed = self.plan.v0_74 && provider_call;
        if streamed && flow["outcome"] == "ok" {
            flow["body_complete"] = json!(false);
            if let Some(fields) = flow.as_object_mut() {
                fields.remove("bytes_in");
            }
            completed = Some((self.rng.range(800, 400_000), self.rng.range(200, 30_000)));
        }
        self.flows.push(FlowMeta { record: flow.clone(), turn: Some(self.turn_now), completed });
        self.push("net_flow", json!({"flow": flow}));
    }
}

/// A flow record with `ctx`, at `at_ms`, of one connection to `host`; optional fields vary.
pub(super) fn flow_record(
    rng: &mut Rng,
    at_ms: u64,
    ctx: &Value,
    host: &str,
    method: &str,
    path: &str,
) -> Value {
    let fidelity = rng.pick(&["coarse", "http", "full", "full"]);
    let outcome = rng.pick(&["ok", "ok", "ok", "ok", "ok", "http_error", "transport_error", "timeout"]);
    let connected = matches!(outcome, "ok" | "http_error");
    let mut flow = json!({
        "id": rng.ulid(at_ms), "ts": rfc3339(at_ms, true), "ctx": ctx, "fidelity": fidelity,
        "method": method, "scheme": "https", "host": host, "port": 443, "path": path,
        "outcome": outcome, "body_complete": connected && rng.percent(85),
    });
    if rng.percent(80) {
        let ips: Vec<String> =
            (0..rng.size(1, 2)).map(|_| format!("104.18.{}.{}", rng.below(256), rng.below(256))).collect();
        (flow["peer_ip"], flow["resolved_ips"]) = (json!(ips[0]), json!(ips));
    }
    if fidelity != "coarse" && connected {
        flow["http_version"] = json!(rng.pick(&["h2", "http/1.1"]));
        flow["status"] = json!(if outcome == "ok" { 200 } else { rng.pick(&[404, 429, 500, 503]) });
    }
    if !connected {
        flow["error"] =
            json!(if outcome == "timeout" { "read timed out after 30s" } else { "connection reset by peer" });
    }
    if rng.percent(85) {
        flow["bytes_out"] = json!(rng.range(200, 90_000));
    }
    if connected && rng.percent(80) {
        (flow["bytes_in"], flow["ttfb_ms"]) = (json!(rng.range(120, 400_000)), json!(rng.range(40, 2500)));
    }
    if rng.percent(90) {
        flow["duration_ms"] = json!(rng.range(60, 30_000));
    }
    flow
}
