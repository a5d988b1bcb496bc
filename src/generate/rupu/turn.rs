//! One turn's conversation events: collected messages and injections, the provider calls'
//! `usage`, an outcome and its recovery, the reply, and a compaction.

use serde_json::{Value, json};

use super::MODELS;
use super::run::RunWriter;
use crate::generate::rng::rfc3339;

/// (class, severity, title, wire value) of non-normal replies.
const OUTCOMES: &[(&str, &str, &str, &str)] = &[
    ("refusal", "error", "refused · cyber", "refusal"),
    ("overloaded", "warning", "provider overloaded", "overloaded_error"),
    ("max_tokens", "warning", "reply cut at max_tokens", "max_tokens"),
];

impl RunWriter<'_> {
    pub(super) fn turn(&mut self, turn: usize) {
        self.turn_now = turn as i64;
        self.push("turn_start", json!({"turn_idx": turn}));
        if self.feature_at(0, turn, 10) {
            self.deliver_message();
        }
        if self.feature_at(1, turn, 5) {
            let directive = json!({"source": "directive:ops", "kind": "directive",
                                   "cadence": "every_turn", "content": self.prose()});
            self.push("injected", directive);
        }
        let (mut tokens_in, mut tokens_out) = (0, 0);
        for _ in 0..1 + usize::from(self.rng.percent(20)) {
            let (input, output) = self.usage(turn, None);
            (tokens_in, tokens_out) = (tokens_in + input, tokens_out + output);
        }
        let compacting = turn >= 2 && self.feature_at(2, turn, 10);
        if compacting {
            self.usage(turn, Some("compaction"));
        }
        let outcome = self.feature_at(1, turn, 8).then(|| self.outcome(turn));
        self.reply(turn);
        let tools = self.tools_for_turn(turn);
        for tool in &tools {
            self.tool_step(tool);
        }
        let stop_reason = if tools.is_empty() { "end_turn" } else { "tool_use" };
        let mut end = json!({"turn_idx": turn, "stop_reason": stop_reason});
        if self.rng.percent(85) {
            (end["tokens_in"], end["tokens_out"]) = (json!(tokens_in), json!(tokens_out));
        }
        self.push("turn_end", end);
        self.turn_now = turn as i64 + 1;
        if let Some(record) = outcome {
            self.recover(&record);
        }
        if self.plan.showcase && turn == 1 {
            self.push("budget_warning", json!({"limit_usd": 5.0, "spent_usd": 4.2}));
        }
        if compacting {
            let (before, after) = (self.rng.range(30, 90), self.rng.range(3, 8));
            let summary = format!("Summary so far: {}", self.prose());
            self.push(
                "compaction",
                json!({"messages_before": before, "messages_after": after, "summary": summary}),
            );
        }
    }

    fn deliver_message(&mut self) {
        let id = format!("msg_{}", self.rng.ulid(self.clock_ms));
        let body = self.prose();
        let message = json!({
            "id": id, "direction": "received", "from": "lynx#1", "to": "otter#1", "kind": "direct",
            "body": body, "via": "mailbox", "delivery": {"resolved": ["otter#1"]},
        });
        self.push("message", message);
        let content = format!("from lynx#1 at {}: {body}", rfc3339(self.clock_ms, false));
        let injected = json!({"source": "mailbox:otter#1", "kind": "message", "cadence": "once",
                              "content": content, "message_ids": [id]});
        self.push("injected", injected);
    }

    /// One provider call's `usage` (and maybe its connection's `net_flow`); returns its
    /// (input, output) tokens.
    fn usage(&mut self, turn: usize, purpose: Option<&str>) -> (i64, i64) {
        let input = self.rng.range(1500, 6000) + turn as i64 * self.rng.range(2000, 5000);
        let output = self.rng.range(40, 2400);
        let (provider, model) = (self.plan.provider, self.model);
        let mut usage = json!({"provider": provider, "model": model, "input_tokens": input,
                               "output_tokens": output});
        if self.rng.percent(75) {
            usage["cached_tokens"] = json!(self.rng.range(0, input * 9 / 10));
        }
        if !self.plan.version_1 && provider == "anthropic" && self.rng.percent(30) {
            usage["cache_write_tokens"] = json!(self.rng.range(0, 4000));
        }
        if self.rng.percent(20) {
            usage["served_model"] = json!(format!("{model}-2026-09-01"));
        }
        if let Some(purpose) = purpose {
            usage["purpose"] = json!(purpose);
        }
        if self.plan.showcase && turn.is_multiple_of(2) {
            usage["region"] = json!("us-east-1");
        }
        self.tokens += input + output;
        self.push("usage", usage);
        if self.rng.percent(35) {
            let path = match provider {
                "openai" => "/v1/responses",
                _ => "/v1/messages",
            };
            self.provider_flow("POST", path);
        }
        (input, output)
    }

    fn outcome(&mut self, turn: usize) -> Value {
        let (class, severity, title, wire) =
            if self.plan.showcase { OUTCOMES[0] } else { self.rng.pick(OUTCOMES) };
        self.outcomes += 1;
        let record = json!({
            "id": format!("oc_{}", self.outcomes), "class": class, "severity": severity,
            "title": title,
            "wire": {"provider": self.plan.provider, "value": wire},
        });
        self.push("outcome", json!({"turn_idx": turn, "outcome": record}));
        self.last_outcome = Some(record.clone());
        record
    }

    /// The recovery for an outcome; a refusal falls back to another model of the same provider.
    fn recover(&mut self, record: &Value) {
        let outcome_id = &record["id"];
        let recovery = match record["class"].as_str() {
            Some("refusal") => {
                let fallback = fallback_model(self.plan.provider, self.model);
                let message = format!("{fallback}: falling back from {}", self.model);
                self.push("notice", json!({"kind": "model_limits", "message": message}));
                self.model = fallback;
                json!({"outcome_id": outcome_id, "rung": 1, "action": "fell_back",
                       "provider": self.plan.provider, "model": fallback})
            }
            Some("max_tokens") => {
                json!({"outcome_id": outcome_id, "rung": 1, "action": "continued",
                       "merge_into_previous": true})
            }
            _ => json!({"outcome_id": outcome_id, "rung": 1, "action": "retried"}),
        };
        self.push("recovery", recovery);
    }

    /// Reasoning, an occasional non-text block, then the reply text, each streamed as deltas first.
    fn reply(&mut self, turn: usize) {
        if self.plan.v0_74 && self.rng.percent(15) {
            let notice = "[transient provider error (retry 1/10): 529 overloaded; retrying in 2s]";
            self.push("assistant_delta", json!({"content": notice}));
        }
        if self.sometimes_v2(45) {
            let parts: Vec<&str> = (0..self.rng.size(1, 3)).map(|_| self.prose()).collect();
            for part in &parts {
                self.push("thinking_delta", json!({"content": part}));
            }
            let signature = self.rng.hex(48);
            self.push("thinking", json!({"content": parts.concat(), "signature": signature}));
        }
        if self.feature_at(0, turn, 10) {
            let kind = self.rng.pick(&["server_tool_use", "citation", "redacted_thinking"]);
            let block = json!({"kind": kind, "content": self.prose()});
            self.push("assistant_block", block);
        }
        let parts: Vec<&str> = (0..self.rng.size(0, 3)).map(|_| self.prose()).collect();
        for part in &parts {
            self.push("assistant_delta", json!({"content": part}));
        }
        let content = if parts.is_empty() { self.prose().to_string() } else { parts.concat() };
        let mut message = json!({"content": content});
        if !self.plan.version_1 && self.rng.percent(15) {
            message["thinking"] = json!(self.prose());
        }
        self.push("assistant_message", message);
    }
}

/// Another model of `provider` to fall back to from `current`.
fn fallback_model(provider: &str, current: &str) -> &'static str {
    let (_, models) = MODELS.iter().find(|(name, _)| *name == provider).copied().unwrap_or(MODELS[0]);
    models.iter().copied().find(|model| *model != current).unwrap_or(models[0])
}
