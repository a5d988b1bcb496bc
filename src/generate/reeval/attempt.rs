//! The writer of one attempt's `transcript.jsonl` events, turn by turn: the prompt, reasoning,
//! the agent's actions, retries, its reply or error, and the `turn-end`, in varied key orders.

use serde_json::{Value, json};

use super::content;
use super::lines::{Fields, Line};
use super::{AttemptPlan, Ending, Harness, Role};
use crate::generate::rng::{Rng, rfc3339};

/// The keys every event shares, and where its own fields go among them.
#[derive(Debug, Clone, Copy)]
enum Key {
    Ts,
    AtMs,
    Turn,
    Type,
    Payload,
    Duration,
}

/// Key orders seen in real transcripts. Prompts and turn-ends take the first, like the seed's;
/// other events any of them.
const KEY_ORDERS: [[Key; 6]; 4] = [
    [Key::Ts, Key::AtMs, Key::Turn, Key::Type, Key::Payload, Key::Duration],
    [Key::Turn, Key::Ts, Key::AtMs, Key::Type, Key::Payload, Key::Duration],
    [Key::Turn, Key::Ts, Key::AtMs, Key::Duration, Key::Type, Key::Payload],
    [Key::Type, Key::Turn, Key::Ts, Key::AtMs, Key::Payload, Key::Duration],
];

/// Something the agent does in a turn, written as one event.
#[derive(Debug, Clone, Copy)]
enum Action {
    Tool {
        name: &'static str,
        ok: bool,
    },
    /// A `bash` test run whose output is over 128 KB, cut with reeval's marker.
    LongTestRun,
    Edit {
        kind: &'static str,
        counted: bool,
    },
    WebSearch {
        ok: bool,
    },
    WebFetch {
        ok: bool,
    },
}

/// The showcase attempt's actions, turn by turn (its eval has three turns).
const SHOWCASE_ACTIONS: [&[Action]; 3] = [
    &[
        Action::Tool { name: "read", ok: true },
        Action::Tool { name: "glob", ok: true },
        Action::Edit { kind: "modify", counted: true },
        Action::Edit { kind: "create", counted: true },
        Action::WebSearch { ok: true },
        Action::Tool { name: "bash", ok: true },
    ],
    &[
        Action::Tool { name: "mcp__docs__search", ok: false },
        Action::WebSearch { ok: false },
        Action::WebFetch { ok: true },
        Action::WebFetch { ok: false },
        Action::Edit { kind: "modify", counted: false },
        Action::Tool { name: "bash", ok: false },
    ],
    &[
        Action::Tool { name: "grep", ok: true },
        Action::Edit { kind: "delete", counted: false },
        Action::Tool { name: "bash", ok: true },
    ],
];
/// What antigravity's CLI gives up after.
const MAX_RETRIES: usize = 9;

/// Writes one attempt's valid lines, tracking the turn and the milliseconds since it started.
pub(super) struct AttemptWriter<'a> {
    plan: &'a AttemptPlan,
    harness: Harness,
    rng: Rng,
    lines: Vec<Line>,
    turn: usize,
    turn_started_ms: u64,
    at_ms: i64,
}

impl<'a> AttemptWriter<'a> {
    pub(super) fn new(plan: &'a AttemptPlan, rng: Rng) -> Self {
        Self {
            plan,
            harness: plan.cell.harness,
            rng,
            lines: Vec::new(),
            turn: 0,
            turn_started_ms: plan.started_ms,
            at_ms: 0,
        }
    }

    /// Every turn up to the plan's last; each earlier turn completes, the last ends as planned.
    pub(super) fn build(mut self) -> Vec<Line> {
        for turn in 0..=self.plan.last_turn {
            let ending = if turn == self.plan.last_turn { self.plan.ending } else { Ending::Completed };
            (self.turn, self.at_ms) = (turn, 0);
            self.write_turn(ending);
            self.turn_started_ms += self.at_ms as u64 + 300 + self.rng.below(5_000);
        }
        self.lines
    }

    fn showcase(&self) -> bool {
        self.plan.role == Role::Showcase
    }

    fn write_turn(&mut self, ending: Ending) {
        let prompt = self.plan.eval.prompts[self.turn];
        self.push_at(0, "prompt", vec![("text", json!(prompt))], None);
        if self.showcase() || (self.harness != Harness::ClaudeCode && self.rng.percent(60)) {
            let reasoning = content::reasoning(&mut self.rng);
            let took = json!(self.rng.range(20, 900));
            self.push("reasoning", vec![("text", json!(reasoning))], Some(took));
        }
        if !self.showcase() && self.rng.percent(30) {
            let interim = content::interim_text(&mut self.rng);
            self.text(interim);
        }
        // Cursor's backend runs web calls itself; reeval recovers them after the turn, with the
        // backend's times, so they come last with earlier `atMs`.
        let mut recovered = Vec::new();
        for action in self.actions(ending) {
            self.advance();
            match action {
                Action::WebSearch { .. } | Action::WebFetch { .. } if self.harness == Harness::Cursor => {
                    recovered.push((self.at_ms, action))
                }
                _ => self.act(self.at_ms, action),
            }
        }
        if matches!(ending, Ending::Cut | Ending::Aborted) {
            // The harness never reported the end of what was running.
            if let Some(last) = self.lines.last_mut() {
                last.set("durationMs", Value::Null);
            }
        }
        let retries = self.retries(ending);
        for attempt in 1..=retries {
            let message = content::retry_message(&mut self.rng, attempt);
            let took = self.duration();
            self.push("retry", vec![("message", json!(message))], Some(took));
        }
        let status = match ending {
            Ending::Cut => return,
            Ending::Completed => {
                let reply = content::final_text(&mut self.rng);
                self.text(reply);
                "completed"
            }
            Ending::Error => {
                let message = content::error_message(self.harness, retries);
                self.push("error", vec![("message", json!(message))], None);
                "error"
            }
            Ending::Aborted => "aborted",
        };
        let unreported = self.harness == Harness::Cursor
            && match self.plan.role {
                Role::Unreported => self.turn == self.plan.last_turn,
                Role::Showcase => false,
                _ => self.rng.percent(8),
            };
        if !unreported {
            for (at_ms, action) in recovered {
                self.act(at_ms, action);
            }
        }
        self.turn_end(status, unreported);
    }

    /// The turn's actions: scripted for the showcase, else 1–4 (0–2 before an error), the first
    /// always a tool; the truncated-output attempt starts with its long test run.
    fn actions(&mut self, ending: Ending) -> Vec<Action> {
        if self.showcase() {
            return SHOWCASE_ACTIONS[self.turn].to_vec();
        }
        let count = match ending {
            Ending::Completed => self.rng.size(1, 4),
            Ending::Aborted | Ending::Cut => self.rng.size(1, 3),
            Ending::Error => self.rng.size(0, 2),
        };
        let mut actions: Vec<Action> = (0..count).map(|position| self.random_action(position == 0)).collect();
        if self.plan.role == Role::TruncatedOutput && self.turn == 0 {
            actions.insert(0, Action::LongTestRun);
        }
        actions
    }

    fn random_action(&mut self, first: bool) -> Action {
        let draw = if first { 0 } else { self.rng.below(100) };
        match draw {
            0..50 => {
                let name = self.rng.pick(content::tools(self.harness));
                Action::Tool { name, ok: self.rng.percent(88) }
            }
            50..75 => {
                let kind = self.rng.pick(&["create", "modify", "modify", "delete"]);
                Action::Edit { kind, counted: kind != "delete" && self.rng.percent(90) }
            }
            75..90 => Action::WebSearch { ok: self.rng.percent(85) },
            _ => Action::WebFetch { ok: self.rng.percent(85) },
        }
    }

    /// Retried model calls: antigravity's, up to nine before the error that ends a turn, one or
    /// two now and then in a turn that completes.
    fn retries(&mut self, ending: Ending) -> usize {
        match (self.harness, ending, self.plan.role) {
            (Harness::Antigravity, Ending::Error, Role::RetriesThenError) => MAX_RETRIES,
            (Harness::Antigravity, Ending::Error, _) => self.rng.size(1, MAX_RETRIES),
            (Harness::Antigravity, Ending::Completed, _) if self.rng.percent(20) => self.rng.size(1, 2),
            _ => 0,
        }
    }

    /// One action's event at `at_ms`.
    fn act(&mut self, at_ms: i64, action: Action) {
        let call_id = json!(content::tool_call_id(&mut self.rng, self.harness));
        let took = self.duration();
        let (kind, payload) = match action {
            Action::Tool { name, ok } => {
                let input = content::tool_input(&mut self.rng, name);
                let output = content::tool_output(&mut self.rng, name, ok);
                let payload = vec![
                    ("toolCallId", call_id),
                    ("tool", json!(name)),
                    ("input", input),
                    ("output", json!(output)),
                    ("ok", json!(ok)),
                ];
                ("tool", payload)
            }
            Action::LongTestRun => {
                let (output, truncation) = content::truncated_log(&mut self.rng);
                let payload = vec![
                    ("toolCallId", call_id),
                    ("tool", json!("bash")),
                    ("input", json!({"command": "node --test --test-reporter=tap"})),
                    ("output", json!(output)),
                    ("ok", json!(true)),
                ];
                let fields = self.fields(at_ms, "tool", payload, Some(took));
                return self.lines.push(Line::Event { fields, truncation: Some(truncation) });
            }
            Action::Edit { kind, counted } => {
                let (added, removed) = match (counted, kind) {
                    (false, _) => (Value::Null, Value::Null),
                    (true, "create") => (json!(self.rng.range(3, 60)), json!(0)),
                    (true, _) => (json!(self.rng.range(1, 40)), json!(self.rng.range(0, 25))),
                };
                let path = content::edit_path(&mut self.rng, self.harness);
                let payload = vec![
                    ("toolCallId", call_id),
                    ("path", json!(path)),
                    ("kind", json!(kind)),
                    ("added", added),
                    ("removed", removed),
                ];
                ("file-edit", payload)
            }
            Action::WebSearch { ok } => {
                let references =
                    if ok && self.rng.percent(80) { json!(self.rng.range(1, 8)) } else { Value::Null };
                let query = content::search_query(&mut self.rng);
                let mut payload =
                    vec![("toolCallId", call_id), ("query", json!(query)), ("references", references)];
                if !ok {
                    payload.push(("ok", json!(false)));
                }
                ("web-search", payload)
            }
            Action::WebFetch { ok } => {
                let url = content::fetch_url(&mut self.rng);
                ("web-fetch", vec![("toolCallId", call_id), ("url", json!(url)), ("ok", json!(ok))])
            }
        };
        self.push_at(at_ms, kind, payload, Some(took));
    }

    fn text(&mut self, text: &str) {
        let took = self.duration();
        self.push("text", vec![("text", json!(text))], Some(took));
    }

    /// The turn's end, `atMs` equal to its `durationMs`.
    fn turn_end(&mut self, status: &str, unreported: bool) {
        self.at_ms += self.rng.range(20, 400);
        let mut payload = vec![("status", json!(status))];
        if unreported {
            payload.push(("unreported", json!(["web-search", "web-fetch"])));
        }
        self.push_at(self.at_ms, "turn-end", payload, Some(json!(self.at_ms)));
    }

    /// How long an event took: a few milliseconds to seconds, now and then never reported.
    fn duration(&mut self) -> Value {
        if self.rng.percent(4) { Value::Null } else { json!(self.rng.range(3, 2_500)) }
    }

    fn advance(&mut self) {
        self.at_ms += self.rng.range(5, 3_000);
    }

    /// An event a little after the previous one.
    fn push(&mut self, kind: &'static str, payload: Fields, duration: Option<Value>) {
        self.advance();
        self.push_at(self.at_ms, kind, payload, duration);
    }

    fn push_at(&mut self, at_ms: i64, kind: &'static str, payload: Fields, duration: Option<Value>) {
        let fields = self.fields(at_ms, kind, payload, duration);
        self.lines.push(Line::event(fields));
    }

    /// The event's keys in one of the real orders; `duration` `None` leaves `durationMs` out.
    fn fields(&mut self, at_ms: i64, kind: &'static str, payload: Fields, duration: Option<Value>) -> Fields {
        let order = match kind {
            "prompt" | "turn-end" => KEY_ORDERS[0],
            _ => KEY_ORDERS[self.rng.below(KEY_ORDERS.len() as u64) as usize],
        };
        let (mut payload, mut duration) = (payload, duration);
        let mut fields = Vec::with_capacity(payload.len() + 5);
        for key in order {
            match key {
                Key::Ts => {
                    let ts = rfc3339(self.turn_started_ms + at_ms as u64, true);
                    fields.push(("ts", json!(ts)));
                }
                Key::AtMs => fields.push(("atMs", json!(at_ms))),
                Key::Turn => fields.push(("turn", json!(self.turn))),
                Key::Type => fields.push(("type", json!(kind))),
                Key::Payload => fields.append(&mut payload),
                Key::Duration => fields.extend(duration.take().map(|took| ("durationMs", took))),
            }
        }
        fields
    }
}
