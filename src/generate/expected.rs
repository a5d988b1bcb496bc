//! The answers a correct reader must give over a generated rupu corpus, tallied from the lines
//! as the generator meant them (never from re-reading a file). Test tooling: built with the
//! `testing` feature only.

use std::collections::{BTreeMap, BTreeSet};

use super::lines::{FlowMeta, Line};
use serde_json::Value;

/// What one agent transcript should read back as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedRun {
    /// Path relative to the corpus dir, `/`-separated.
    pub file: String,
    /// The file stem, `run_<ULID>`.
    pub run_id: String,
    pub agent: String,
    pub provider: String,
    pub model: String,
    pub mode: String,
    /// `ok`, `error`, or `aborted` (no `run_complete`, or one that says aborted).
    pub status: String,
    /// Whether the file has a `run_complete`.
    pub completed: bool,
    /// `run_complete.error`, where it has one.
    pub error: Option<String>,
    /// `run_start.schema`, 1 when the key is absent.
    pub schema_version: i64,
    /// `run_start.customer`; `None` both when null and when absent.
    pub customer: Option<String>,
    /// True for files under `archive/`.
    pub archived: bool,
    /// Count of `turn_start` events.
    pub turns: u64,
    /// Count of `tool_call` events.
    pub tool_calls: u64,
    /// Sums over the run's `usage` events (compaction calls included); an absent
    /// `cached_tokens` counts 0.
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cached_tokens: i64,
    /// From `run_complete`; `None` for an aborted run.
    pub total_tokens: Option<i64>,
    pub duration_ms: Option<i64>,
    /// Valid events in the file (damaged, empty and truncated lines excluded).
    pub(crate) events: u64,
}

/// The answers txq's SQL must reproduce over a generated corpus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expected {
    /// The transcripts dir relative to the corpus dir (`.rupu/transcripts`).
    pub transcripts_dir: String,
    /// One per agent transcript, in the order written (start time order).
    pub runs: Vec<ExpectedRun>,
    /// Valid events per `type` over all agent transcripts, unknown types included.
    pub events_by_type: BTreeMap<String, u64>,
    /// `usage.model` → (input_tokens, output_tokens, cached_tokens) sums.
    pub tokens_by_model: BTreeMap<String, (i64, i64, i64)>,
    /// Blocked `tool_audit` events by (tool, decision).
    pub denied_tools: BTreeMap<(String, String), u64>,
    /// `net_flow` `flow.host` → (sum bytes_in, sum bytes_out), absent counting 0.
    pub bytes_by_host: BTreeMap<String, (i64, i64)>,
    /// `tool_call.tool` → count of its calls whose `tool_result` (same run, same call_id) has
    /// an `error` key.
    pub failed_tools: BTreeMap<String, u64>,
    /// (run_id, turn_idx of the last `turn_start` before the usage line) → output_tokens sum.
    pub output_tokens_by_turn: BTreeMap<(String, Option<i64>), i64>,
    /// (run_id, flow id) of every transcript `net_flow` → the turn in progress when the flow was
    /// made (the turn about to begin, for one made before the runner wrote its turn's lines).
    pub net_flow_turns: BTreeMap<(String, String), Option<i64>>,
    /// Every flow of the corpus by flow id: in a transcript, a ledger, or both.
    pub flows: BTreeMap<String, ExpectedFlow>,
    /// Refused tool calls, a blocked audit and a denied result of the same call counting once,
    /// by (tool, reason: the audit's decision, else the result's error, else the audit's
    /// reason) → (calls, their runs).
    pub denials: BTreeMap<(String, Option<String>), (u64, BTreeSet<String>)>,
    /// Netflow ledgers written (`.rupu/netflow/<run_id>.jsonl`, and one under the transcripts),
    /// relative to the corpus dir.
    pub ledgers: Vec<String>,
    /// (file, 1-based physical line) of every line a reader must report, sorted by file then line.
    pub errors: Vec<(String, u64)>,
    /// Files that are not agent transcripts (no `run_start`): a step log.
    pub non_transcripts: Vec<String>,
    /// Transcripts whose last line is a truncated write (skipped silently, never an error),
    /// sorted.
    pub truncated_tails: Vec<String>,
    /// Empty lines over all transcripts (skipped silently).
    pub(crate) empty_lines: u64,
    /// Valid events over all agent transcripts (the sum of `events_by_type`).
    pub events_total: u64,
}

/// One flow as the corpus holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedFlow {
    /// The run that made it (`flow.ctx.run_id`).
    pub(crate) run_id: String,
    pub(crate) host: String,
    pub(crate) outcome: String,
    pub(crate) bytes_out: Option<i64>,
    /// The final size: the ledger's `complete` line where it has one, else `flow.bytes_in`.
    pub(crate) bytes_in: Option<i64>,
    /// `flow.bytes_in` as the flow record declares it.
    pub(crate) declared_bytes_in: Option<i64>,
    /// `body_complete`, or a `complete` line in a ledger that is read.
    pub(crate) confirmed: bool,
    pub(crate) in_transcript: bool,
    pub in_ledger: bool,
}

/// What `network_egress` answers per (host, outcome): flows, bytes_out, bytes_in,
/// unconfirmed_bytes_in, unconfirmed_flows.
pub(crate) type Egress = BTreeMap<(String, String), (i64, i64, i64, i64, i64)>;

/// Reading state within one transcript while its lines are tallied.
#[derive(Default)]
struct FileState {
    /// The `turn_idx` of the last `turn_start` so far; `None` before the first.
    turn_idx: Option<i64>,
    /// `tool_call.call_id` → `tool_call.tool`, for joining results to their calls.
    tools_by_call: BTreeMap<String, String>,
    /// The call_id of each tool's last call so far: a `tool_audit` follows its call.
    last_call_of: BTreeMap<String, String>,
    /// `tool_result.error` by call_id.
    errors_by_call: BTreeMap<String, String>,
    /// Refused calls by call_id (or by the audit's line for an audit with no call above it).
    denied: BTreeMap<String, (String, Option<String>)>,
    /// Lines seen.
    line: u64,
}

/// Whether a `tool_result.error` says the call was refused.
fn is_denial(error: &str) -> bool {
    matches!(error, "permission_denied" | "permission denied")
        || error.starts_with("unknown tool: ")
        || error.starts_with("denied:")
}

impl Expected {
    /// Tallies one agent transcript, `file` relative to the corpus dir, from the lines written
    /// to it.
    pub(super) fn record_transcript(&mut self, file: &str, archived: bool, lines: &[Line]) {
        let stem = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".jsonl");
        let mut run = ExpectedRun {
            file: file.to_string(),
            run_id: stem.to_string(),
            archived,
            status: "aborted".to_string(),
            schema_version: 1,
            ..ExpectedRun::default()
        };
        let mut state = FileState::default();
        for (index, line) in lines.iter().enumerate() {
            state.line = index as u64 + 1;
            match line {
                Line::Event { kind, data } => self.observe(&mut run, &mut state, kind, data),
                Line::Empty => self.empty_lines += 1,
                Line::Corrupt(_) => self.errors.push((file.to_string(), index as u64 + 1)),
                Line::TruncatedTail(_) => self.truncated_tails.push(file.to_string()),
            }
        }
        for (tool, reason) in std::mem::take(&mut state.denied).into_values() {
            let (calls, runs) = self.denials.entry((tool, reason)).or_default();
            *calls += 1;
            runs.insert(run.run_id.clone());
        }
        self.runs.push(run);
    }

    /// Tallies the flows a run made (`flows`), given the lines its transcript kept: each
    /// `net_flow` kept is in the transcript; with a ledger (`lines` empty for a ledger alone, or
    /// a v0.74 run's own), every flow is in it, with its `complete` line.
    pub(super) fn record_flows(&mut self, run_id: &str, lines: &[Line], flows: &[FlowMeta], ledger: bool) {
        let kept: BTreeSet<String> = lines
            .iter()
            .filter_map(|line| match line {
                Line::Event { kind, data } if kind == "net_flow" => Some(text(&data["flow"], "id")),
                _ => None,
            })
            .collect();
        for flow in flows {
            let id = flow.id();
            let in_transcript = kept.contains(&id);
            if !in_transcript && !ledger {
                continue;
            }
            if in_transcript {
                self.net_flow_turns.insert((run_id.to_string(), id.clone()), flow.turn);
            }
            let record = &flow.record;
            let declared = record.get("bytes_in").and_then(Value::as_i64);
            let completed = flow.completed.filter(|_| ledger);
            let body_complete = record.get("body_complete") == Some(&Value::Bool(true));
            self.flows.insert(
                id,
                ExpectedFlow {
                    run_id: run_id.to_string(),
                    host: text(record, "host"),
                    outcome: text(record, "outcome"),
                    bytes_out: record.get("bytes_out").and_then(Value::as_i64),
                    bytes_in: completed.map(|(bytes, _)| bytes).or(declared),
                    declared_bytes_in: declared,
                    confirmed: body_complete || completed.is_some(),
                    in_transcript,
                    in_ledger: ledger,
                },
            );
        }
    }

    /// What `network_egress` must answer, from [`Self::flows`].
    pub fn network_egress(&self) -> Egress {
        let mut egress = Egress::new();
        for flow in self.flows.values() {
            let sums = egress.entry((flow.host.clone(), flow.outcome.clone())).or_default();
            let unconfirmed = !flow.confirmed;
            sums.0 += 1;
            sums.1 += flow.bytes_out.unwrap_or(0);
            sums.2 += flow.bytes_in.unwrap_or(0);
            sums.3 += if unconfirmed { flow.declared_bytes_in.unwrap_or(0) } else { 0 };
            sums.4 += i64::from(unconfirmed);
        }
        egress
    }

    /// Puts `errors` and `truncated_tails` in path order once every file is recorded.
    pub(super) fn finish(&mut self) {
        self.errors.sort();
        self.truncated_tails.sort();
    }

    fn observe(&mut self, run: &mut ExpectedRun, state: &mut FileState, kind: &str, data: &Value) {
        *self.events_by_type.entry(kind.to_string()).or_default() += 1;
        self.events_total += 1;
        run.events += 1;
        match kind {
            "run_start" => {
                run.agent = text(data, "agent");
                run.provider = text(data, "provider");
                run.model = text(data, "model");
                run.mode = text(data, "mode");
                run.schema_version = data.get("schema").and_then(Value::as_i64).unwrap_or(1);
                run.customer = data.get("customer").and_then(Value::as_str).map(str::to_string);
            }
            "run_complete" => {
                run.status = text(data, "status");
                run.completed = true;
                run.error = data.get("error").and_then(Value::as_str).map(str::to_string);
                run.total_tokens = data.get("total_tokens").and_then(Value::as_i64);
                run.duration_ms = data.get("duration_ms").and_then(Value::as_i64);
            }
            "turn_start" => {
                run.turns += 1;
                state.turn_idx = data.get("turn_idx").and_then(Value::as_i64);
            }
            "usage" => {
                let (input, output, cached) = (
                    number(data, "input_tokens"),
                    number(data, "output_tokens"),
                    number(data, "cached_tokens"),
                );
                run.input_tokens += input;
                run.output_tokens += output;
                run.cached_tokens += cached;
                let by_model = self.tokens_by_model.entry(text(data, "model")).or_default();
                *by_model = (by_model.0 + input, by_model.1 + output, by_model.2 + cached);
                *self.output_tokens_by_turn.entry((run.run_id.clone(), state.turn_idx)).or_default() +=
                    output;
            }
            "tool_call" => {
                run.tool_calls += 1;
                state.tools_by_call.insert(text(data, "call_id"), text(data, "tool"));
                state.last_call_of.insert(text(data, "tool"), text(data, "call_id"));
            }
            "tool_result" if data.get("error").is_some() => {
                let (call_id, error) = (text(data, "call_id"), text(data, "error"));
                if let Some(tool) = state.tools_by_call.get(&call_id) {
                    *self.failed_tools.entry(tool.clone()).or_default() += 1;
                    if is_denial(&error) {
                        state.denied.insert(call_id.clone(), (tool.clone(), Some(error.clone())));
                    }
                }
                state.errors_by_call.insert(call_id, error);
            }
            "tool_audit" if data.get("blocked") == Some(&Value::Bool(true)) => {
                let key = (text(data, "tool"), text(data, "decision"));
                *self.denied_tools.entry(key.clone()).or_default() += 1;
                let call = state.last_call_of.get(&key.0).cloned();
                let reason = data
                    .get("decision")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| call.as_ref().and_then(|c| state.errors_by_call.get(c)).cloned())
                    .or_else(|| data.get("reason").and_then(Value::as_str).map(str::to_string));
                let call = call.unwrap_or_else(|| format!("audit line {}", state.line));
                state.denied.insert(call, (key.0, reason));
            }
            "net_flow" => {
                let flow = &data["flow"];
                let bytes = self.bytes_by_host.entry(text(flow, "host")).or_default();
                *bytes = (bytes.0 + number(flow, "bytes_in"), bytes.1 + number(flow, "bytes_out"));
            }
            _ => {}
        }
    }
}

fn text(object: &Value, key: &str) -> String {
    object.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn number(object: &Value, key: &str) -> i64 {
    object.get(key).and_then(Value::as_i64).unwrap_or(0)
}
