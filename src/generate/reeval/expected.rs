//! The answers a correct reader must give over a generated reeval corpus, tallied from the
//! lines as they were written (never from re-reading a file). Test tooling: built with the
//! `testing` feature only.

use std::collections::BTreeMap;

use serde_json::Value;

use super::AttemptId;
use super::lines::Line;

/// What one `transcript.jsonl` should read back as. Only valid events count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedAttempt {
    /// Path relative to the corpus dir, `/`-separated.
    pub file: String,
    pub run_id: String,
    /// The eval slug and cell slug, as in the path.
    pub eval: String,
    pub cell: String,
    /// The attempt number `n` of the path, from 1.
    pub attempt: i64,
    /// True under `evals/.history`, false under `.reeval/runs`.
    pub history: bool,
    /// Distinct `turn` values.
    pub turns: u64,
    /// The `status` of the last turn's `turn-end`; `aborted` when any turn has no `turn-end`.
    pub status: String,
    /// Sum of the numeric `durationMs` of the `turn-end`s; `None` when none has one.
    pub duration_ms: Option<i64>,
    /// `tool` events, and those with `ok: false`.
    pub tool_calls: u64,
    pub tool_failures: u64,
    pub file_edits: u64,
    /// Sums of `file-edit` `added` and `removed`, null counting 0.
    pub lines_added: i64,
    pub lines_removed: i64,
    /// `web-search` and `web-fetch` events; `None` when any `turn-end` has `unreported`.
    pub web_searches: Option<u64>,
    pub web_fetches: Option<u64>,
    /// `error` and `retry` events.
    pub errors: u64,
    pub retries: u64,
    /// The text of the first `prompt`.
    pub prompt: Option<String>,
    /// The text of the last `text` event of the highest `turn`; `None` when that turn has none.
    pub final_text: Option<String>,
}

/// The answers txq's SQL must reproduce over a generated reeval corpus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReevalExpected {
    /// One per `transcript.jsonl`, in the order written; a copy in history is its own attempt.
    pub attempts: Vec<ExpectedAttempt>,
    /// Valid events per `type` as written (`file-edit`, `turn-end`, …) over every
    /// `transcript.jsonl`.
    pub events_by_type: BTreeMap<String, u64>,
    /// `tool` → (calls, calls with `ok: false`).
    pub tool_by_name: BTreeMap<String, (u64, u64)>,
    /// (file, 1-based line, characters of the whole output, sha256) of every `tool` output cut
    /// with the truncation marker, sorted.
    pub truncated_outputs: Vec<(String, u64, i64, String)>,
    /// (file, 1-based line) of every damaged line of a `transcript.jsonl` a reader must report,
    /// sorted. Truncated last lines and empty lines are skipped silently, so not here.
    pub errors: Vec<(String, u64)>,
    /// The same for `transcript.raw.jsonl` files.
    pub raw_errors: Vec<(String, u64)>,
    /// (file, 1-based line, field) of valid events with a field of the wrong JSON type, which a
    /// reader reads as null and reports, sorted.
    pub value_errors: Vec<(String, u64, String)>,
    /// `transcript.raw.jsonl` file → its valid stream parts.
    pub raw_parts: BTreeMap<String, u64>,
    /// Events whose `durationMs` is the JSON literal `null` (not absent, not wrong-typed).
    pub(crate) null_durations: u64,
    /// `web-search` events with `ok: false` (an absent `ok` is a success).
    pub web_search_failures: u64,
    /// `transcript.jsonl` files whose last line is a truncated write, sorted.
    pub(crate) truncated_tails: Vec<String>,
    /// Empty lines over every `transcript.jsonl`.
    pub(crate) empty_lines: u64,
    /// The attempts' `diff.patch` and `judge-input.json` files, which are not transcripts, sorted.
    pub side_files: Vec<String>,
}

/// Fields that hold a number (or null) whenever they are present.
const NUMERIC_FIELDS: &[&str] = &["turn", "atMs", "durationMs", "added", "removed", "references"];

/// One turn's state while its attempt's lines are tallied.
#[derive(Default)]
struct TurnTally {
    /// The `turn-end`'s status and numeric `durationMs`.
    end: Option<(String, Option<i64>)>,
    last_text: Option<String>,
}

impl ReevalExpected {
    /// Tallies one `transcript.jsonl` from the lines written to it.
    pub(super) fn record_attempt(&mut self, id: AttemptId, lines: &[Line]) {
        let mut attempt = ExpectedAttempt {
            file: id.file,
            run_id: id.run_id,
            eval: id.eval.to_string(),
            cell: id.cell.to_string(),
            attempt: id.attempt,
            history: id.history,
            ..ExpectedAttempt::default()
        };
        let (mut turns, mut unreported) = (BTreeMap::<i64, TurnTally>::new(), false);
        let (mut web_searches, mut web_fetches) = (0, 0);
        for (index, line) in lines.iter().enumerate() {
            let number = index as u64 + 1;
            let truncation = match line {
                Line::Event { truncation, .. } => truncation,
                Line::Empty => {
                    self.empty_lines += 1;
                    continue;
                }
                Line::Corrupt(_) => {
                    self.errors.push((attempt.file.clone(), number));
                    continue;
                }
                Line::TruncatedTail(_) => {
                    self.truncated_tails.push(attempt.file.clone());
                    continue;
                }
            };
            let kind = line.kind().unwrap_or_default();
            *self.events_by_type.entry(kind.to_string()).or_default() += 1;
            self.check_values(&attempt.file, number, line);
            let turn = turns.entry(integer(line, "turn").unwrap_or_default()).or_default();
            let text = || line.get("text").and_then(Value::as_str).map(str::to_string);
            let failed = line.get("ok") == Some(&Value::Bool(false));
            match kind {
                "prompt" if attempt.prompt.is_none() => attempt.prompt = text(),
                "text" => turn.last_text = text(),
                "tool" => {
                    attempt.tool_calls += 1;
                    attempt.tool_failures += u64::from(failed);
                    let name = line.get("tool").and_then(Value::as_str).unwrap_or_default();
                    let by_name = self.tool_by_name.entry(name.to_string()).or_default();
                    *by_name = (by_name.0 + 1, by_name.1 + u64::from(failed));
                    if let Some(cut) = truncation {
                        let place = (attempt.file.clone(), number, cut.total, cut.sha256.clone());
                        self.truncated_outputs.push(place);
                    }
                }
                "file-edit" => {
                    attempt.file_edits += 1;
                    attempt.lines_added += integer(line, "added").unwrap_or(0);
                    attempt.lines_removed += integer(line, "removed").unwrap_or(0);
                }
                "web-search" => {
                    web_searches += 1;
                    self.web_search_failures += u64::from(failed);
                }
                "web-fetch" => web_fetches += 1,
                "error" => attempt.errors += 1,
                "retry" => attempt.retries += 1,
                "turn-end" => {
                    let status = line.get("status").and_then(Value::as_str).unwrap_or_default();
                    turn.end = Some((status.to_string(), integer(line, "durationMs")));
                    unreported |= line
                        .get("unreported")
                        .and_then(Value::as_array)
                        .is_some_and(|kinds| !kinds.is_empty());
                }
                _ => {}
            }
        }
        attempt.turns = turns.len() as u64;
        attempt.status = match turns.last_key_value() {
            Some((_, last)) if turns.values().all(|turn| turn.end.is_some()) => {
                last.end.as_ref().map(|(status, _)| status.clone()).unwrap_or_default()
            }
            _ => "aborted".to_string(),
        };
        let durations: Vec<i64> =
            turns.values().filter_map(|turn| turn.end.as_ref().and_then(|(_, took)| *took)).collect();
        attempt.duration_ms = (!durations.is_empty()).then(|| durations.iter().sum());
        (attempt.web_searches, attempt.web_fetches) =
            if unreported { (None, None) } else { (Some(web_searches), Some(web_fetches)) };
        attempt.final_text = turns.last_key_value().and_then(|(_, last)| last.last_text.clone());
        self.attempts.push(attempt);
    }

    /// Tallies one `transcript.raw.jsonl` from the lines written to it.
    pub(super) fn record_raw(&mut self, file: &str, lines: &[Line]) {
        let mut valid = 0;
        for (index, line) in lines.iter().enumerate() {
            match line {
                Line::Event { .. } => valid += 1,
                Line::Corrupt(_) => self.raw_errors.push((file.to_string(), index as u64 + 1)),
                Line::Empty | Line::TruncatedTail(_) => {}
            }
        }
        self.raw_parts.insert(file.to_string(), valid);
    }

    /// Puts the file-ordered lists in order once every file is recorded.
    pub(super) fn finish(&mut self) {
        self.truncated_outputs.sort();
        self.errors.sort();
        self.raw_errors.sort();
        self.value_errors.sort();
        self.truncated_tails.sort();
        self.side_files.sort();
    }

    /// Counts a literal null `durationMs` and records every numeric field of another JSON type.
    fn check_values(&mut self, file: &str, number: u64, line: &Line) {
        for field in NUMERIC_FIELDS {
            match line.get(field) {
                None | Some(Value::Number(_)) => {}
                Some(Value::Null) => self.null_durations += u64::from(*field == "durationMs"),
                Some(_) => self.value_errors.push((file.to_string(), number, field.to_string())),
            }
        }
    }
}

fn integer(line: &Line, key: &str) -> Option<i64> {
    line.get(key).and_then(Value::as_i64)
}
