//! The writer of one rupu agent run's lines in the documented event order, with the run's
//! preamble and ending; a turn's events are in `turn.rs`, its tool steps in `tools.rs`.

use serde_json::{Value, json};

use super::{Ending, RunPlan, RupuOptions};
use crate::generate::lines::{FlowMeta, Line};
use crate::generate::rng::{Rng, rfc3339};

/// (name, layer, preload) of the skills a run can bind.
const SKILLS: &[(&str, &str, bool)] = &[("pdf", "global", true), ("rust-style", "project", false)];
const CUSTOMERS: &[&str] = &["acme-corp", "Société Générale", "株式会社ミライ", "O'Brien & \"Sons\""];
const CODENAMES: &[&str] = &["amber-delta/kestrel", "cobalt-fjord/otter", "saffron-ridge/lynx"];
const PROSE: &[&str] = &[
    "Looking at the parser first; the null check on line 142 is missing.",
    "The test `parses_empty_input` fails with \"unexpected EOF\".",
    "Windows path in the report: C:\\Users\\dev\\repo\\src\\main.rs",
    "Résumé of changes: renamed `naïve_split` → `split_fields`.",
    "日本語のコメントを英語に翻訳しました。",
    "All green ✅ 42 passed, 0 failed 🚀",
    "line one\nline two\n\tindented line three",
    "She said \"don't\" and left a literal \\n in the string.",
    "SELECT name FROM users WHERE name = 'O''Brien';",
    "Ελληνικά και русский текст в одной строке.",
];
const RUN_ERRORS: &[&str] =
    &["provider error: 529 overloaded", "max turns (8) reached", "tool loop detected"];

/// Writes one run's lines in event order, tracking the run's clock, current model and spend.
pub(super) struct RunWriter<'a> {
    pub(super) plan: &'a RunPlan,
    pub(super) opts: &'a RupuOptions,
    pub(super) rng: Rng,
    pub(super) lines: Vec<Line>,
    pub(super) clock_ms: u64,
    pub(super) model: &'static str,
    pub(super) calls: usize,
    pub(super) outcomes: usize,
    pub(super) last_outcome: Option<Value>,
    pub(super) tokens: i64,
    /// The turn in progress, or about to begin between turns: the turn a flow made now is in.
    pub(super) turn_now: i64,
    /// Every flow made, in order, for the ledger and the expected answers.
    pub(super) flows: Vec<FlowMeta>,
}

impl<'a> RunWriter<'a> {
    pub(super) fn new(plan: &'a RunPlan, opts: &'a RupuOptions, rng: Rng) -> Self {
        Self {
            plan,
            opts,
            rng,
            lines: Vec::new(),
            clock_ms: plan.started_ms,
            model: plan.model,
            calls: 0,
            outcomes: 0,
            last_outcome: None,
            tokens: 0,
            turn_now: 0,
            flows: Vec::new(),
        }
    }

    /// The run's valid lines: preamble, turns, then `run_complete` (or a cut, when aborted);
    /// and the flows it made.
    pub(super) fn build(mut self) -> (Vec<Line>, Vec<FlowMeta>) {
        self.preamble();
        for turn in 0..self.plan.turns {
            let start = self.lines.len();
            self.turn(turn);
            if self.plan.v0_74 {
                self.flush_order(start);
            }
        }
        self.finish();
        (self.lines, self.flows)
    }

    /// Puts a v0.74 turn's lines (from `start`) in the order rupu's two writers leave them: the
    /// streamed reply's `assistant_delta` lines before the turn's first `usage`, and most
    /// `net_flow` lines (flushed at once by the netflow sink) before the turn's `turn_start`
    /// (which the runner writes later, with the rest of the turn).
    fn flush_order(&mut self, start: usize) {
        let is = |line: &Line, kind: &str| matches!(line, Line::Event { kind: k, .. } if k == kind);
        let mut block = self.lines.split_off(start);
        if let Some(first_usage) = block.iter().position(|line| is(line, "usage")) {
            let (deltas, rest): (Vec<Line>, Vec<Line>) =
                block.drain(first_usage..).partition(|line| is(line, "assistant_delta"));
            block.extend(deltas);
            block.extend(rest);
        }
        let mut kept = Vec::with_capacity(block.len());
        for line in block {
            if is(&line, "net_flow") && self.rng.percent(85) {
                self.lines.push(line);
            } else {
                kept.push(line);
            }
        }
        self.lines.extend(kept);
    }

    pub(super) fn push(&mut self, kind: &str, data: Value) {
        self.clock_ms += 20 + self.rng.below(1500);
        self.lines.push(Line::event(kind, data));
    }

    /// True in the showcase run, else with probability `percent`.
    pub(super) fn sometimes(&mut self, percent: u64) -> bool {
        self.plan.showcase || self.rng.percent(percent)
    }

    /// Like [`Self::sometimes`], for what version 1 writers never wrote.
    pub(super) fn sometimes_v2(&mut self, percent: u64) -> bool {
        !self.plan.version_1 && self.sometimes(percent)
    }

    /// A version 2 feature of a turn: in the showcase run exactly at `showcase_turn`.
    pub(super) fn feature_at(&mut self, showcase_turn: usize, turn: usize, percent: u64) -> bool {
        !self.plan.version_1
            && if self.plan.showcase { turn == showcase_turn } else { self.rng.percent(percent) }
    }

    pub(super) fn prose(&mut self) -> &'static str {
        self.rng.pick(PROSE)
    }

    fn preamble(&mut self) {
        let start = self.run_start();
        self.push("run_start", start);
        if self.sometimes(70) {
            let message = format!("{}: context window 200000 tokens, max output 32000", self.model);
            self.push("notice", json!({"kind": "model_limits", "message": message}));
        }
        self.tool_grant();
        if self.sometimes_v2(40) {
            self.skills();
        }
        if self.sometimes_v2(10) {
            let source = format!("run_{}", self.rng.ulid(self.plan.started_ms - 86_400_000));
            let sha256 = self.rng.hex(64);
            self.push("seed", json!({"kind": "source_transcript", "source": source, "sha256": sha256}));
        }
        if self.sometimes(85) {
            let content = format!("Review the parser change: {}", self.prose());
            self.push("user_message", json!({"content": content}));
        }
        if self.plan.turns == 0 || self.sometimes(40) {
            self.provider_flow("GET", "/v1/models");
        }
    }

    fn run_start(&mut self) -> Value {
        let plan = self.plan;
        let mut start = json!({
            "run_id": plan.run_id, "workspace_id": plan.workspace_id, "agent": plan.agent,
            "provider": plan.provider, "model": plan.model,
            "started_at": rfc3339(plan.started_ms, false),
            "mode": plan.mode,
        });
        if plan.version_1 {
            return start;
        }
        start["schema"] = json!(2);
        match plan.index % 4 {
            1 => start["customer"] = Value::Null,
            2 => {}
            _ => start["customer"] = json!(self.rng.pick(CUSTOMERS)),
        }
        if self.sometimes(50) {
            start["codename"] = json!(self.rng.pick(CODENAMES));
        }
        if self.rng.percent(20) {
            start["purpose"] = json!("workflow step: review");
            start["launch_args"] = json!({"max_turns": 8, "focus": self.prose()});
        }
        start
    }

    fn tool_grant(&mut self) {
        let entries: Vec<Value> =
            self.plan.tools.iter().map(|tool| json!({"tool": tool, "reasons": ["declared"]})).collect();
        let mut grant = json!({"entries": entries});
        let unavailable = [("board.post", "message_bus"), ("dispatch", "launcher")];
        let any_unavailable = self.sometimes(30);
        if any_unavailable {
            let rows: Vec<Value> = unavailable
                .iter()
                .map(|(tool, missing)| json!({"tool": tool, "missing": [missing]}))
                .collect();
            grant["unavailable"] = json!(rows);
        }
        self.push("tool_grant", grant);
        for (tool, missing) in unavailable.iter().filter(|_| any_unavailable) {
            let message = format!("{tool}: needs {missing}, which this run cannot reach");
            self.push("notice", json!({"kind": "tool_unavailable", "message": message}));
        }
    }

    fn skills(&mut self) {
        let count = match self.plan.showcase {
            true => SKILLS.len(),
            false => self.rng.size(1, SKILLS.len()),
        };
        let bound = &SKILLS[..count];
        let rows: Vec<Value> = bound
            .iter()
            .map(|(name, layer, preload)| {
                let stamp = self.rng.hex(12);
                json!({"name": name, "layer": layer, "stamp": stamp, "preload": preload,
                       "indexed": true, "reason": "agent"})
            })
            .collect();
        self.push("skill_index", json!({"skills": rows}));
        for (name, layer, _) in bound.iter().filter(|(_, _, preload)| *preload) {
            self.skill_load(name, layer, "preload");
        }
        if self.sometimes(20) {
            let message = "skill `sql-tuning` is named by the agent but not installed";
            self.push("notice", json!({"kind": "skill_missing", "message": message}));
        }
    }

    pub(super) fn skill_load(&mut self, name: &str, layer: &str, via: &str) {
        let base_dir = if layer == "global" {
            format!("/home/me/.rupu/skills/{name}")
        } else {
            format!(".rupu/skills/{name}")
        };
        let content_hash = self.rng.hex(16);
        let load = json!({"name": name, "layer": layer, "content_hash": content_hash,
                          "base_dir": base_dir, "via": via});
        self.push("skill_load", load);
    }

    /// `run_complete`, or, for an aborted run, a cut somewhere in its second half.
    fn finish(&mut self) {
        if self.plan.turns == 0 {
            let message = "overloaded; retrying in 2s (attempt 1/3)";
            self.push("notice", json!({"kind": "provider_retry", "message": message}));
        }
        if self.sometimes(5) {
            let mut gate = json!({"gate_id": "gate_1", "prompt": "Apply the fix to \"main\"?"});
            if self.sometimes(50) {
                (gate["decision"], gate["decided_by"]) = (json!("approved"), json!("Zoë"));
            }
            self.push("gate_requested", gate);
        }
        let status = match self.plan.ending {
            Ending::Aborted => {
                let keep = self.rng.size(self.lines.len() / 2, self.lines.len()).max(1);
                // The crash cut the last streamed body short: its ledger has no complete line.
                if let Some(last) = self.flows.last_mut().filter(|_| self.plan.v0_74) {
                    last.completed = None;
                }
                return self.lines.truncate(keep);
            }
            Ending::Ok => "ok",
            Ending::Error => "error",
            Ending::Stopped => {
                // Stopped while the last call waited for approval: it has no tool_result.
                let is_call = |line: &Line| matches!(line, Line::Event { kind, .. } if kind == "tool_call");
                if let Some(last_call) = self.lines.iter().rposition(is_call) {
                    self.lines.truncate(last_call + 1);
                }
                self.tokens = self
                    .lines
                    .iter()
                    .filter_map(|line| match line {
                        Line::Event { kind, data } if kind == "usage" => Some(
                            data["input_tokens"].as_i64().unwrap_or(0)
                                + data["output_tokens"].as_i64().unwrap_or(0),
                        ),
                        _ => None,
                    })
                    .sum();
                "aborted"
            }
            Ending::Paused => "aborted",
        };
        let duration_ms = (self.clock_ms - self.plan.started_ms) as i64;
        let mut complete = json!({"run_id": self.plan.run_id, "status": status,
                                  "total_tokens": self.tokens, "duration_ms": duration_ms});
        match self.plan.ending {
            Ending::Stopped => complete["error"] = json!("operator_stop"),
            Ending::Paused => complete["error"] = json!("paused"),
            _ => {}
        }
        // v0.74 ends a run that hit its max turns with status error and no error text.
        if self.plan.ending == Ending::Error && self.plan.v0_74 && self.rng.percent(50) {
            return self.push("run_complete", complete);
        }
        if self.plan.ending == Ending::Error {
            let error = self.rng.pick(RUN_ERRORS);
            let provider = self.plan.provider;
            complete["outcome"] = self.last_outcome.take().unwrap_or_else(|| {
                json!({"id": "oc_run", "class": "provider_error", "severity": "error",
                       "title": error, "wire": {"provider": provider, "value": "api_error"}})
            });
            complete["error"] = json!(error);
        }
        self.push("run_complete", complete);
    }
}
