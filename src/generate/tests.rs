//! Tests of the generator itself: determinism, and its expected answers against an independent
//! re-reading of the bytes it wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Expected, RupuOptions, write_rupu_corpus};

const EVERY_WRITTEN_TYPE: &[&str] = &[
    "run_start",
    "run_complete",
    "turn_start",
    "turn_end",
    "usage",
    "notice",
    "tool_grant",
    "skill_index",
    "skill_load",
    "seed",
    "user_message",
    "thinking_delta",
    "thinking",
    "assistant_delta",
    "assistant_message",
    "assistant_block",
    "tool_call",
    "tool_result",
    "file_edit",
    "command_run",
    "message",
    "injected",
    "outcome",
    "recovery",
    "compaction",
    "net_flow",
    "gate_requested",
    "tool_audit",
    "action_emitted",
    "budget_warning",
];

/// A fresh corpus in its own temp dir, removed on drop.
struct Corpus {
    dir: PathBuf,
    expected: Expected,
}

impl Corpus {
    fn write(name: &str, opts: &RupuOptions) -> Self {
        let dir = std::env::temp_dir().join(format!("txq-generate-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let expected = write_rupu_corpus(&dir, opts).expect("corpus written");
        Self { dir, expected }
    }
}

impl Drop for Corpus {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every file under `dir`: path relative to it, `/`-separated → bytes.
pub(in crate::generate) fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(folder).expect("readable dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative =
                    path.strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
                found.insert(relative, std::fs::read(&path).expect("readable file"));
            }
        }
    }
    found
}

/// What a minimal independent reader finds in one file.
#[derive(Default)]
struct Reading {
    events: Vec<(String, Value)>,
    /// Each valid line whole, with its type (a ledger has its fields beside the type).
    lines: Vec<(String, Value)>,
    errors: Vec<u64>,
    truncated_tail: bool,
}

fn read(bytes: &[u8]) -> Reading {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let mut reading = Reading::default();
    let physical: Vec<&str> = text.split('\n').collect();
    for (index, raw) in physical.iter().enumerate() {
        let is_tail = index + 1 == physical.len();
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Err(_) if is_tail => reading.truncated_tail = true,
            Ok(Value::Object(object)) if object.get("type").is_some_and(Value::is_string) => {
                let kind = object["type"].as_str().unwrap_or_default().to_string();
                reading.events.push((kind.clone(), object.get("data").cloned().unwrap_or(Value::Null)));
                reading.lines.push((kind, Value::Object(object)));
            }
            _ => reading.errors.push(index as u64 + 1),
        }
    }
    reading
}

#[test]
fn same_options_write_identical_bytes() {
    let opts = RupuOptions::default();
    let (first, second) = (Corpus::write("det-a", &opts), Corpus::write("det-b", &opts));
    assert_eq!(files(&first.dir), files(&second.dir));
    assert_eq!(first.expected, second.expected);
    let other_seed = Corpus::write("det-c", &RupuOptions { seed: 7, ..opts });
    assert_ne!(files(&first.dir), files(&other_seed.dir));
}

#[test]
fn expected_answers_match_an_independent_reading() {
    let options = [
        RupuOptions::default(),
        RupuOptions { seed: 7, runs: 40, ..RupuOptions::default() },
        RupuOptions { seed: 8, runs: 3, ..RupuOptions::default() },
        RupuOptions { seed: 5, runs: 40, v0_74_percent: 60, ..RupuOptions::default() },
    ];
    for (index, opts) in options.iter().enumerate() {
        assert_matches_reading(&Corpus::write(&format!("reread-{index}"), opts));
    }
}

fn assert_matches_reading(corpus: &Corpus) {
    let expected = &corpus.expected;
    let mut reread = Expected::default();
    let mut runs = BTreeMap::new();
    // Flow id → (host, outcome, bytes_out, bytes_in, body_complete), and complete lines' bytes_in.
    type Record = (String, String, i64, Option<i64>, bool);
    let mut flows: BTreeMap<String, Record> = BTreeMap::new();
    let mut completes: BTreeMap<String, i64> = BTreeMap::new();
    let record = |flow: &Value| -> (String, Record) {
        let text = |key: &str| flow[key].as_str().unwrap_or_default().to_string();
        let bytes_out = flow.get("bytes_out").and_then(Value::as_i64).unwrap_or(0);
        let body_complete = flow.get("body_complete") == Some(&Value::Bool(true));
        (
            text("id"),
            (
                text("host"),
                text("outcome"),
                bytes_out,
                flow.get("bytes_in").and_then(Value::as_i64),
                body_complete,
            ),
        )
    };
    for (file, bytes) in files(&corpus.dir) {
        let reading = read(&bytes);
        if file.rsplit('/').nth(1) == Some("netflow") {
            for (kind, line) in &reading.lines {
                match kind.as_str() {
                    "flow" => {
                        let (id, flow) = record(line);
                        flows.entry(id).or_insert(flow);
                    }
                    "complete" => {
                        completes.insert(
                            line["id"].as_str().unwrap().to_string(),
                            line["bytes_in"].as_i64().unwrap(),
                        );
                    }
                    other => panic!("a ledger line of type {other}"),
                }
            }
            reread.ledgers.push(file);
            continue;
        }
        if !reading.events.iter().any(|(kind, _)| kind == "run_start") {
            reread.non_transcripts.push(file);
            continue;
        }
        reread.errors.extend(reading.errors.iter().map(|line| (file.clone(), *line)));
        if reading.truncated_tail {
            reread.truncated_tails.push(file.clone());
        }
        let (mut status, mut turns) = ("aborted".to_string(), 0);
        for (kind, data) in &reading.events {
            *reread.events_by_type.entry(kind.clone()).or_default() += 1;
            let number = |object: &Value, key| object.get(key).and_then(Value::as_i64).unwrap_or(0);
            match kind.as_str() {
                "usage" => {
                    let model = data["model"].as_str().unwrap().to_string();
                    let sums = reread.tokens_by_model.entry(model).or_default();
                    sums.0 += number(data, "input_tokens");
                    sums.1 += number(data, "output_tokens");
                    sums.2 += number(data, "cached_tokens");
                }
                "net_flow" => {
                    let flow = &data["flow"];
                    let (id, record) = record(flow);
                    flows.insert(id, record);
                    let host = flow["host"].as_str().unwrap().to_string();
                    let sums = reread.bytes_by_host.entry(host).or_default();
                    sums.0 += number(flow, "bytes_in");
                    sums.1 += number(flow, "bytes_out");
                }
                "run_complete" => status = data["status"].as_str().unwrap().to_string(),
                "turn_start" => turns += 1,
                _ => {}
            }
        }
        runs.insert(file, (status, turns));
    }
    assert_eq!(reread.events_by_type, expected.events_by_type);
    assert_eq!(reread.events_by_type.values().sum::<u64>(), expected.events_total);
    assert_eq!(reread.tokens_by_model, expected.tokens_by_model);
    assert_eq!(reread.bytes_by_host, expected.bytes_by_host);
    assert_eq!(reread.errors, expected.errors);
    assert_eq!(reread.truncated_tails, expected.truncated_tails);
    let mut non_transcripts = expected.non_transcripts.clone();
    non_transcripts.sort();
    assert_eq!(reread.non_transcripts, non_transcripts);
    let mut ledgers = expected.ledgers.clone();
    ledgers.sort();
    assert_eq!(reread.ledgers, ledgers);
    let mut egress: super::expected::Egress = BTreeMap::new();
    for (id, (host, outcome, bytes_out, bytes_in, body_complete)) in &flows {
        let sums = egress.entry((host.clone(), outcome.clone())).or_default();
        let confirmed = *body_complete || completes.contains_key(id);
        let final_in = completes.get(id).copied().or(*bytes_in).unwrap_or(0);
        sums.0 += 1;
        sums.1 += bytes_out;
        sums.2 += final_in;
        sums.3 += if confirmed { 0 } else { bytes_in.unwrap_or(0) };
        sums.4 += i64::from(!confirmed);
    }
    assert_eq!(egress, expected.network_egress(), "flows of transcripts and ledgers, once each");
    let expected_runs: BTreeMap<_, _> =
        expected.runs.iter().map(|run| (run.file.clone(), (run.status.clone(), run.turns))).collect();
    assert_eq!(runs, expected_runs);
}

#[test]
fn default_corpus_has_every_type_and_every_edge_case() {
    let corpus = Corpus::write("coverage", &RupuOptions::default());
    let expected = &corpus.expected;
    for kind in EVERY_WRITTEN_TYPE {
        assert!(expected.events_by_type.contains_key(*kind), "no {kind} event");
    }
    let statuses: BTreeSet<&str> = expected.runs.iter().map(|run| run.status.as_str()).collect();
    assert_eq!(statuses, BTreeSet::from(["aborted", "error", "ok"]));
    assert!(expected.runs.iter().any(|run| run.schema_version == 1));
    assert!(expected.runs.iter().any(|run| run.archived));
    assert!(expected.runs.iter().any(|run| run.turns == 0) && expected.runs.iter().any(|run| run.turns == 1));
    let decisions: BTreeSet<&str> =
        expected.denied_tools.keys().map(|(_, decision)| decision.as_str()).collect();
    assert_eq!(decisions, BTreeSet::from(["denied:not_granted", "denied:readonly"]));
    assert!(!expected.failed_tools.is_empty());
    assert!(expected.net_flow_turns.values().any(|turn| *turn == Some(0)), "a flow before the first turn");
    assert_eq!(expected.errors.len(), 7, "one malformed, three non-object, three untyped lines");
    assert_eq!((expected.truncated_tails.len(), expected.empty_lines), (1, 3));
    assert_eq!((expected.non_transcripts.len(), expected.ledgers.len()), (1, 1), "a step log, a ledger");
    let crlf_files =
        files(&corpus.dir).into_values().filter(|bytes| bytes.windows(2).any(|pair| pair == b"\r\n"));
    assert_eq!(crlf_files.count(), 1);
}

#[test]
fn undamaged_corpus_reads_clean_and_honours_output_sizes() {
    let opts = RupuOptions {
        seed: 9,
        runs: 30,
        damage: false,
        tool_output_bytes: (1000, 1200),
        ..RupuOptions::default()
    };
    let corpus = Corpus::write("clean", &opts);
    let expected = &corpus.expected;
    assert!(
        expected.errors.is_empty()
            && expected.truncated_tails.is_empty()
            && expected.non_transcripts.is_empty()
    );
    assert_eq!((expected.runs.len(), expected.empty_lines), (30, 0));
    for bytes in files(&corpus.dir).values() {
        for (kind, data) in read(bytes).events {
            if kind == "tool_result" && data.get("error").is_none() {
                let size = data["output"].as_str().unwrap().len();
                assert!((1000..=1200).contains(&size), "output of {size} bytes");
            }
        }
    }
}

#[test]
fn a_tiny_corpus_still_places_every_damage_case() {
    for runs in [1, 2] {
        let opts = RupuOptions { runs, ..RupuOptions::default() };
        let corpus = Corpus::write(&format!("tiny-{runs}"), &opts);
        let expected = &corpus.expected;
        assert_eq!(expected.runs.len(), runs);
        let damage = (expected.errors.len(), expected.truncated_tails.len(), expected.empty_lines);
        assert_eq!(damage, (7, 1, 3));
        assert_eq!(expected.runs[runs - 1].status, "aborted", "the truncated run");
    }
    let empty = Corpus::write("tiny-0", &RupuOptions { runs: 0, ..RupuOptions::default() });
    assert!(empty.expected.runs.is_empty() && empty.expected.errors.is_empty());
    assert_eq!((empty.expected.non_transcripts.len(), empty.expected.ledgers.len()), (1, 1));
}

#[test]
fn v0_74_runs_write_what_rupu_v0_74_writes() {
    let corpus = Corpus::write(
        "v0-74",
        &RupuOptions { seed: 5, runs: 40, v0_74_percent: 60, ..RupuOptions::default() },
    );
    let expected = &corpus.expected;
    let causes: BTreeSet<Option<&str>> = expected
        .runs
        .iter()
        .filter(|run| run.status == "aborted" && run.completed)
        .map(|run| run.error.as_deref())
        .collect();
    assert_eq!(causes, BTreeSet::from([Some("operator_stop"), Some("paused")]));
    assert!(expected.runs.iter().any(|run| run.status == "error" && run.completed && run.error.is_none()));
    let reasons: BTreeSet<&str> =
        expected.denials.keys().filter_map(|(_, reason)| reason.as_deref()).collect();
    for reason in ["permission_denied", "permission denied", "denied:readonly"] {
        assert!(reasons.contains(reason), "{reason} in {reasons:?}");
    }
    assert!(reasons.iter().any(|r| r.starts_with("unknown tool: ")), "{reasons:?}");
    let streamed =
        expected.flows.values().filter(|f| f.in_ledger && f.declared_bytes_in.is_none() && f.confirmed);
    assert!(streamed.count() > 5, "streamed calls completed in their ledger");
    assert!(expected.flows.values().any(|f| f.in_ledger && !f.in_transcript), "a flow only the ledger has");
    assert!(expected.flows.values().any(|f| f.in_ledger && !f.confirmed), "a body a crash cut short");
    let text: String = files(&corpus.dir).into_values().map(|b| String::from_utf8(b).unwrap()).collect();
    assert!(text.contains("\"error\":\"timeout after 1s\""));
    assert!(text.contains("[transient provider error (retry 1/10)"));
    assert!(text.contains("\"argv\":[\"/bin/sh\",\"-c\","));
    // A flow line right before a turn_start: written by the sink before the runner's turn.
    let before_turn = text.lines().collect::<Vec<_>>().windows(2).any(|pair| {
        pair[0].starts_with("{\"type\":\"net_flow\"") && pair[1].starts_with("{\"type\":\"turn_start\"")
    });
    assert!(before_turn);
}
