//! An independent reading of generated transcripts with serde_json, line by line, for figures the
//! generator's `Expected` does not keep (per day, per outcome, per call): what the canned
//! queries must answer, computed without txq's SQL. Each tally is checked against `Expected`
//! where both have a figure, so the tally itself is checked too.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// One valid event: its type and its fields.
type Event = (String, Map<String, Value>);

/// The valid events of every file under `root` named by `is_transcript`, by path relative to
/// `root`; damaged lines (not JSON, not an object, no string `type`) are skipped.
fn events_under(
    root: &Path,
    is_transcript: impl Fn(&str) -> bool,
    envelope: bool,
) -> BTreeMap<String, Vec<Event>> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.file_type().is_file() || !is_transcript(&name) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut events = Vec::new();
        for line in text.split('\n') {
            let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(line) else { continue };
            let Some(Value::String(kind)) = object.remove("type") else { continue };
            let fields = if envelope {
                match object.remove("data") {
                    Some(Value::Object(data)) => data,
                    _ => continue,
                }
            } else {
                object
            };
            events.push((kind, fields));
        }
        let relative = entry.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        files.insert(relative, events);
    }
    files
}

fn int(fields: &Map<String, Value>, key: &str) -> Option<i64> {
    fields.get(key).and_then(Value::as_i64)
}

fn text(fields: &Map<String, Value>, key: &str) -> String {
    fields.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// One rupu provider call.
#[derive(Debug, Clone)]
pub struct Call {
    pub day: String,
    pub model: String,
    pub input: i64,
    pub output: i64,
    pub cached: i64,
    pub cache_write: Option<i64>,
}

/// One rupu network flow.
#[derive(Debug, Clone)]
pub struct Flow {
    pub host: String,
    pub bytes_in: Option<i64>,
    pub bytes_out: Option<i64>,
}

/// What a rupu corpus holds, read independently.
#[derive(Debug, Default)]
pub struct RupuTally {
    /// run_id → run_start.started_at, as written (RFC 3339, UTC).
    pub run_starts: BTreeMap<String, String>,
    pub calls: Vec<Call>,
    pub flows: Vec<Flow>,
    /// (command line, exit code, run_id) of every command_run.
    pub commands: Vec<(String, Option<i64>, String)>,
    /// (tool, duration_ms) of every tool_result joined to its tool_call by call_id in its file.
    pub tool_durations: Vec<(String, i64)>,
    /// (tool, decision, run_id) of every blocked tool_audit.
    pub denials: Vec<(String, String, String)>,
}

impl RupuTally {
    pub fn read(transcripts: &Path) -> RupuTally {
        let mut tally = RupuTally::default();
        let files = events_under(transcripts, |name| name.ends_with(".jsonl"), true);
        for (path, events) in files {
            let Some((_, start)) = events.iter().find(|(kind, _)| kind == "run_start") else { continue };
            let run_id = Path::new(&path).file_stem().unwrap().to_string_lossy().into_owned();
            let started_at = text(start, "started_at");
            let day = started_at[..10].to_string();
            tally.run_starts.insert(run_id.clone(), started_at);
            let mut tools_by_call = BTreeMap::new();
            for (kind, data) in &events {
                match kind.as_str() {
                    "usage" => tally.calls.push(Call {
                        day: day.clone(),
                        model: text(data, "model"),
                        input: int(data, "input_tokens").unwrap_or(0),
                        output: int(data, "output_tokens").unwrap_or(0),
                        cached: int(data, "cached_tokens").unwrap_or(0),
                        cache_write: int(data, "cache_write_tokens"),
                    }),
                    "net_flow" => {
                        let flow = data["flow"].as_object().unwrap();
                        tally.flows.push(Flow {
                            host: text(flow, "host"),
                            bytes_in: int(flow, "bytes_in"),
                            bytes_out: int(flow, "bytes_out"),
                        });
                    }
                    "command_run" => {
                        let argv: Vec<&str> =
                            data["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
                        tally.commands.push((argv.join(" "), int(data, "exit_code"), run_id.clone()));
                    }
                    "tool_call" => {
                        tools_by_call.insert(text(data, "call_id"), text(data, "tool"));
                    }
                    "tool_result" => {
                        if let (Some(tool), Some(took)) =
                            (tools_by_call.get(&text(data, "call_id")), int(data, "duration_ms"))
                        {
                            tally.tool_durations.push((tool.clone(), took));
                        }
                    }
                    "tool_audit" if data.get("blocked") == Some(&Value::Bool(true)) => {
                        tally.denials.push((text(data, "tool"), text(data, "decision"), run_id.clone()));
                    }
                    _ => {}
                }
            }
        }
        tally
    }
}

/// One reeval event's place and fields, read independently.
#[derive(Debug, Clone)]
pub struct ReevalEvent {
    pub kind: String,
    /// (run_id, eval, cell, attempt) from the path.
    pub attempt: (String, String, String, i64),
    pub history: bool,
    pub fields: Map<String, Value>,
}

/// Every valid event of every `transcript.jsonl` under `root`.
pub fn reeval_events(root: &Path) -> Vec<ReevalEvent> {
    let mut out = Vec::new();
    for (path, events) in events_under(root, |name| name == "transcript.jsonl", false) {
        let parts: Vec<&str> = path.split('/').collect();
        let n = parts.len();
        let attempt = (
            parts[n - 5].to_string(),
            parts[n - 4].to_string(),
            parts[n - 3].to_string(),
            parts[n - 2].parse().unwrap(),
        );
        let history = path.starts_with("evals/.history/");
        for (kind, fields) in events {
            out.push(ReevalEvent { kind, attempt: attempt.clone(), history, fields });
        }
    }
    out
}

/// The attempts kept both in `.reeval/runs` and in history, whose history copy a per-cell figure
/// leaves out.
pub fn counted_once(events: &[ReevalEvent]) -> impl Fn(&ReevalEvent) -> bool + use<> {
    let live: std::collections::BTreeSet<(String, String, String, i64)> =
        events.iter().filter(|e| !e.history).map(|e| e.attempt.clone()).collect();
    move |event| !event.history || !live.contains(&event.attempt)
}

/// The exact percentile DataFusion's percentile_cont gives: linear interpolation between the
/// closest ranks, the weight cut to six decimals.
pub fn percentile_cont(values: &[i64], p: f64) -> f64 {
    let mut sorted: Vec<f64> = values.iter().map(|v| *v as f64).collect();
    sorted.sort_by(f64::total_cmp);
    let index = p * (sorted.len() - 1) as f64;
    let (lower, upper) = (index.floor() as usize, index.ceil() as usize);
    let weight = ((index - lower as f64) * 1e6) as u64 as f64 / 1e6;
    sorted[lower] + (sorted[upper] - sorted[lower]) * weight
}
