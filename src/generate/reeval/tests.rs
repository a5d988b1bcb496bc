//! Tests of the reeval generator: determinism, its expected answers against an independent
//! re-reading of the written files, and every event type and edge case in the default corpus.

use crate::generate::tests::files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{HISTORY_DIR, RUNS_DIR, ReevalExpected, ReevalOptions, write_reeval_corpus};

const EVERY_TYPE: [&str; 10] = [
    "prompt",
    "text",
    "reasoning",
    "file-edit",
    "tool",
    "web-search",
    "web-fetch",
    "retry",
    "error",
    "turn-end",
];

/// A fresh corpus in its own temp dir, removed on drop.
struct Corpus {
    dir: PathBuf,
    expected: ReevalExpected,
}

impl Corpus {
    fn write(name: &str, opts: &ReevalOptions) -> Self {
        let dir = std::env::temp_dir().join(format!("txq-reeval-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let expected = write_reeval_corpus(&dir, opts).expect("corpus written");
        Self { dir, expected }
    }

    /// The valid events of every `transcript.jsonl`, by file.
    fn transcripts(&self) -> BTreeMap<String, Reading> {
        files(&self.dir)
            .into_iter()
            .filter(|(file, _)| file.ends_with("/transcript.jsonl"))
            .map(|(file, bytes)| (file, read(&bytes, true)))
            .collect()
    }
}

impl Drop for Corpus {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a minimal independent reader finds in one file.
#[derive(Default)]
struct Reading {
    /// (1-based line, object) of the valid lines.
    events: Vec<(u64, Map<String, Value>)>,
    errors: Vec<u64>,
    truncated_tail: bool,
    empty_lines: u64,
}

/// Reads JSONL: an empty line is skipped, an unparsable last line without a newline is a
/// truncated tail, any other line that is not an object (with a string `type` when `typed`) is
/// an error.
fn read(bytes: &[u8], typed: bool) -> Reading {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let mut reading = Reading::default();
    let physical: Vec<&str> = text.split('\n').collect();
    for (index, line) in physical.iter().enumerate() {
        let is_tail = index + 1 == physical.len();
        if line.is_empty() {
            reading.empty_lines += u64::from(!is_tail);
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Err(_) if is_tail => reading.truncated_tail = true,
            Ok(Value::Object(object)) if !typed || object.get("type").is_some_and(Value::is_string) => {
                reading.events.push((index as u64 + 1, object));
            }
            _ => reading.errors.push(index as u64 + 1),
        }
    }
    reading
}

fn kind(event: &Map<String, Value>) -> &str {
    event["type"].as_str().unwrap_or_default()
}

#[test]
fn same_options_write_identical_bytes() {
    let opts = ReevalOptions::default();
    let (first, second) = (Corpus::write("det-a", &opts), Corpus::write("det-b", &opts));
    assert_eq!(files(&first.dir), files(&second.dir));
    assert_eq!(first.expected, second.expected);
    let other_seed = Corpus::write("det-c", &ReevalOptions { seed: 7, ..opts });
    assert_ne!(files(&first.dir), files(&other_seed.dir));
}

#[test]
fn expected_answers_match_an_independent_reading() {
    let options = [
        ReevalOptions::default(),
        ReevalOptions { seed: 7, runs: 6, ..ReevalOptions::default() },
        ReevalOptions { seed: 8, runs: 1, ..ReevalOptions::default() },
        ReevalOptions { seed: 9, runs: 3, damage: false, raw: false },
    ];
    for (index, opts) in options.iter().enumerate() {
        assert_matches_reading(&Corpus::write(&format!("reread-{index}"), opts));
    }
}

/// Per attempt: (status, turns, duration_ms, web_searches, web_fetches), by the rules of
/// [`super::ExpectedAttempt`].
type AttemptSummary = (String, u64, Option<i64>, Option<u64>, Option<u64>);

fn assert_matches_reading(corpus: &Corpus) {
    let expected = &corpus.expected;
    let mut reread = ReevalExpected::default();
    let mut attempts = BTreeMap::new();
    for (file, bytes) in files(&corpus.dir) {
        if file.ends_with("/transcript.raw.jsonl") {
            let reading = read(&bytes, false);
            reread.raw_errors.extend(reading.errors.iter().map(|line| (file.clone(), *line)));
            reread.raw_parts.insert(file, reading.events.len() as u64);
            continue;
        }
        if !file.ends_with("/transcript.jsonl") {
            reread.side_files.push(file);
            continue;
        }
        let reading = read(&bytes, true);
        reread.errors.extend(reading.errors.iter().map(|line| (file.clone(), *line)));
        if reading.truncated_tail {
            reread.truncated_tails.push(file.clone());
        }
        reread.empty_lines += reading.empty_lines;
        attempts.insert(file.clone(), summarise(&file, &reading, &mut reread));
    }
    reread.value_errors.sort();
    assert_eq!(reread.events_by_type, expected.events_by_type);
    assert_eq!(reread.tool_by_name, expected.tool_by_name);
    assert_eq!(reread.errors, expected.errors);
    assert_eq!(reread.raw_errors, expected.raw_errors);
    assert_eq!(reread.raw_parts, expected.raw_parts);
    assert_eq!(reread.value_errors, expected.value_errors);
    assert_eq!(reread.truncated_tails, expected.truncated_tails);
    assert_eq!(reread.empty_lines, expected.empty_lines);
    assert_eq!(reread.side_files, expected.side_files);
    assert_eq!(
        (reread.null_durations, reread.web_search_failures),
        (expected.null_durations, expected.web_search_failures)
    );
    let expected_attempts: BTreeMap<String, AttemptSummary> = expected
        .attempts
        .iter()
        .map(|attempt| {
            let summary = (
                attempt.status.clone(),
                attempt.turns,
                attempt.duration_ms,
                attempt.web_searches,
                attempt.web_fetches,
            );
            (attempt.file.clone(), summary)
        })
        .collect();
    assert_eq!(attempts, expected_attempts);
}

/// Tallies one transcript's events into `reread` and summarises its attempt.
fn summarise(file: &str, reading: &Reading, reread: &mut ReevalExpected) -> AttemptSummary {
    let mut turn_ends: BTreeMap<i64, Option<&Map<String, Value>>> = BTreeMap::new();
    let (mut searches, mut fetches) = (0, 0);
    for (line, event) in &reading.events {
        let kind = kind(event);
        *reread.events_by_type.entry(kind.to_string()).or_default() += 1;
        let turn = turn_ends.entry(event["turn"].as_i64().unwrap()).or_default();
        let failed = event.get("ok") == Some(&Value::Bool(false));
        match event.get("durationMs") {
            Some(Value::Null) => reread.null_durations += 1,
            Some(Value::String(_)) => {
                reread.value_errors.push((file.to_string(), *line, "durationMs".into()))
            }
            _ => {}
        }
        match kind {
            "tool" => {
                let sums =
                    reread.tool_by_name.entry(event["tool"].as_str().unwrap().to_string()).or_default();
                *sums = (sums.0 + 1, sums.1 + u64::from(failed));
            }
            "web-search" => {
                searches += 1;
                reread.web_search_failures += u64::from(failed);
            }
            "web-fetch" => fetches += 1,
            "turn-end" => *turn = Some(event),
            _ => {}
        }
    }
    let ended = turn_ends.values().all(Option::is_some);
    let status = match turn_ends.values().last() {
        Some(Some(last)) if ended => last["status"].as_str().unwrap().to_string(),
        _ => "aborted".to_string(),
    };
    let durations: Vec<i64> =
        turn_ends.values().flatten().filter_map(|end| end["durationMs"].as_i64()).collect();
    let unreported = turn_ends.values().flatten().any(|end| end.contains_key("unreported"));
    let web = |count| (!unreported).then_some(count);
    let duration = (!durations.is_empty()).then(|| durations.iter().sum());
    (status, turn_ends.len() as u64, duration, web(searches), web(fetches))
}

#[test]
fn default_corpus_has_every_type_and_every_edge_case() {
    let corpus = Corpus::write("coverage", &ReevalOptions::default());
    let expected = &corpus.expected;
    for kind in EVERY_TYPE {
        assert!(expected.events_by_type.contains_key(kind), "no {kind} event");
    }
    let attempts = &expected.attempts;
    let statuses: BTreeSet<&str> = attempts.iter().map(|attempt| attempt.status.as_str()).collect();
    assert_eq!(statuses, BTreeSet::from(["aborted", "completed", "error"]));
    let turns: BTreeSet<u64> = attempts.iter().map(|attempt| attempt.turns).collect();
    assert_eq!((turns.first(), turns.last()), (Some(&1), Some(&3)));
    assert!(attempts.iter().any(|attempt| attempt.history));
    assert!(attempts.iter().any(|attempt| !attempt.history));
    assert!(attempts.iter().all(|attempt| {
        let tree = if attempt.history { HISTORY_DIR } else { RUNS_DIR };
        attempt.file.starts_with(tree) && attempt.prompt.is_some()
    }));
    assert!(attempts.iter().any(|attempt| attempt.web_searches.is_none()));
    assert!(attempts.iter().any(|attempt| attempt.retries > 0 && attempt.status == "error"));
    assert!(attempts.iter().any(|attempt| attempt.final_text.is_none()));
    assert!(attempts.iter().any(|attempt| attempt.run_id.len() == 26));
    assert!(attempts.iter().any(|attempt| attempt.run_id.contains("Z_")));
    assert!(!expected.truncated_outputs.is_empty());
    assert!(expected.null_durations > 0 && expected.web_search_failures > 0);
    assert!(expected.tool_by_name.values().any(|(_, failures)| *failures > 0));
    assert_eq!((expected.errors.len(), expected.raw_errors.len()), (1, 1));
    assert_eq!((expected.truncated_tails.len(), expected.empty_lines), (1, 1));
    let value_fields: Vec<&str> = expected.value_errors.iter().map(|(_, _, field)| field.as_str()).collect();
    assert_eq!(value_fields, ["durationMs"]);
    for side in ["diff.patch", "judge-input.json"] {
        assert!(expected.side_files.iter().any(|file| file.ends_with(side)), "no {side}");
    }

    let events: Vec<Map<String, Value>> = corpus
        .transcripts()
        .into_values()
        .flat_map(|reading| reading.events.into_iter().map(|(_, event)| event))
        .collect();
    let values = |kind_: &str, key: &str| -> BTreeSet<String> {
        events
            .iter()
            .filter(|event| kind(event) == kind_)
            .map(|event| event.get(key).map_or("absent".into(), Value::to_string))
            .collect()
    };
    assert_eq!(
        values("turn-end", "status"),
        BTreeSet::from(["\"aborted\"", "\"completed\"", "\"error\""].map(String::from))
    );
    assert_eq!(
        values("file-edit", "kind"),
        BTreeSet::from(["\"create\"", "\"delete\"", "\"modify\""].map(String::from))
    );
    assert!(values("web-search", "ok").is_superset(&BTreeSet::from(["absent".into(), "false".into()])));
    assert!(values("web-search", "references").contains("null"));
    assert!(values("web-fetch", "ok").contains("false"));
    assert!(
        events
            .iter()
            .any(|event| kind(event) == "file-edit" && event["kind"] != "delete" && event["added"].is_null())
    );
    assert!(events.iter().any(|event| kind(event) == "tool" && event["tool"] == "mcp__docs__search"));
    assert!(
        events.iter().filter(|event| kind(event) == "error").all(|event| !event.contains_key("durationMs"))
    );
    let texts: Vec<&str> = events.iter().filter_map(|event| event.get("text")?.as_str()).collect();
    assert!(texts.iter().any(|text| text.contains('\n')) && texts.iter().any(|text| !text.is_ascii()));
    assert!(texts.iter().any(|text| text.contains('"')));

    let first_keys: BTreeSet<String> = files(&corpus.dir)
        .into_iter()
        .filter(|(file, _)| file.ends_with("/transcript.jsonl"))
        .flat_map(|(_, bytes)| {
            let text = String::from_utf8(bytes).unwrap();
            text.lines()
                .filter_map(|line| line.split_once(':').map(|(key, _)| key.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        first_keys.contains("{\"type\"")
            && first_keys.contains("{\"turn\"")
            && first_keys.contains("{\"ts\"")
    );
}

#[test]
fn truncated_outputs_keep_head_marker_and_tail() {
    let corpus = Corpus::write("truncated", &ReevalOptions::default());
    let transcripts = corpus.transcripts();
    for (file, line, total, sha256) in &corpus.expected.truncated_outputs {
        let (_, event) =
            transcripts[file].events.iter().find(|(number, _)| number == line).expect("the line");
        let output = event["output"].as_str().expect("an output");
        assert!(output.is_ascii());
        let marker_start = output.find("[reeval: truncated ").expect("a marker");
        let marker_end = marker_start + output[marker_start..].find(']').unwrap() + 1;
        assert_eq!((marker_start, output.len() - marker_end), (96 * 1024, 16 * 1024));
        let marker = &output[marker_start..marker_end];
        let words: Vec<&str> = marker.trim_end_matches(']').split(' ').collect();
        let left_out: i64 = words[2].parse().unwrap();
        assert_eq!(words[4].parse::<i64>().unwrap(), *total);
        assert_eq!(*total, left_out + 112 * 1024);
        assert!(*total > 128 * 1024);
        assert_eq!(words[7], sha256);
        assert!(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}

#[test]
fn small_and_undamaged_corpora() {
    let one_run = Corpus::write("one-run", &ReevalOptions { runs: 1, ..ReevalOptions::default() });
    let expected = &one_run.expected;
    for kind in EVERY_TYPE {
        assert!(expected.events_by_type.contains_key(kind), "no {kind} event in one run");
    }
    assert!(
        !expected.errors.is_empty() && !expected.raw_errors.is_empty() && !expected.value_errors.is_empty()
    );
    assert!(!expected.truncated_tails.is_empty() && expected.empty_lines > 0);

    let clean = Corpus::write("clean", &ReevalOptions { seed: 3, runs: 4, damage: false, raw: false });
    let expected = &clean.expected;
    assert!(expected.errors.is_empty() && expected.raw_errors.is_empty() && expected.raw_parts.is_empty());
    assert!(expected.value_errors.is_empty() && expected.truncated_tails.is_empty());
    assert_eq!(expected.empty_lines, 0);
    assert!(files(&clean.dir).keys().all(|file| !file.ends_with(".raw.jsonl")));

    let empty = Corpus::write("no-runs", &ReevalOptions { runs: 0, ..ReevalOptions::default() });
    assert_eq!(empty.expected, ReevalExpected::default());
}
