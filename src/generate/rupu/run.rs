//! The writer of one rupu agent run's lines in the documented event order, with the run's
//! preamble and ending; a turn's events are in `turn.rs`, its tool steps in `tools.rs`.

use serde_json::{Value, json};

use super::{Ending, RunPlan, RupuOptions};
use crate::generate::expected::Line;
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
        }
    }

    /// The run's valid lines: preamble, turns, then `run_complete` (or a cut, when aborted).
    pub(super) fn build(mut self) -> Vec<Line> {
        self.preamble();
        for turn in 0..self.plan.turns {
            self.turn(turn);
        }
        self.finish();
        self.lines
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
                return self.lines.truncate(keep);
            }
            Ending::Ok => "ok",
            Ending::Error => "error",
        };
        let duration_ms = (self.clock_ms - self.plan.started_ms) as i64;
        let mut complete = json!({"run_id": self.plan.run_id, "status": status,
                                  "total_tokens": self.tokens, "duration_ms": duration_ms});
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
