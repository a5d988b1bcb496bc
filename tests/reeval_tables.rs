//! reeval tables on a generated corpus, read from both trees: every figure compared with what the
//! generator wrote, and unqualified names beside rupu's.

use crate::util::{int, parse_ndjson, text, txq};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use txq::generate::{ReevalExpected, ReevalOptions, RupuOptions, write_reeval_corpus, write_rupu_corpus};

struct Corpus {
    dir: tempfile::TempDir,
    expected: ReevalExpected,
}

fn corpus() -> &'static Corpus {
    static CORPUS: std::sync::OnceLock<Corpus> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let expected = write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
        Corpus { dir, expected }
    })
}

/// Rows of `sql` over the default places of `dir` (`.reeval/runs` and `evals/.history`), run in
/// this process (`crate::util::query_rows_in`).
fn rows_in(dir: &Path, sql: &str) -> Vec<Map<String, Value>> {
    crate::util::query_rows_in(dir, sql)
}

/// The same, by the real binary run in `dir` with no PATH.
fn rows_in_by_binary(dir: &Path, sql: &str) -> Vec<Map<String, Value>> {
    let out = txq(&["--format", "ndjson", "-e", sql], dir);
    assert_eq!(out.code, 0, "txq failed on {sql}: {}", out.stderr);
    parse_ndjson(&out.stdout)
}

fn rows(sql: &str) -> Vec<Map<String, Value>> {
    rows_in(corpus().dir.path(), sql)
}

fn opt_text(row: &Map<String, Value>, column: &str) -> Option<String> {
    row[column].as_str().map(String::from)
}

#[test]
fn every_attempt_summary() {
    let got = rows(
        "select run_id, eval, cell, attempt, history, turns, status, duration_ms, tool_calls, tool_failures, \
         file_edits, lines_added, lines_removed, web_searches, web_fetches, errors, retries, prompt, final_text, file \
         from attempts order by file",
    );
    let mut expected = corpus().expected.attempts.clone();
    expected.sort_by(|a, b| a.file.cmp(&b.file));
    assert_eq!(got.len(), expected.len());
    for (row, attempt) in got.iter().zip(&expected) {
        let at = &attempt.file;
        assert_eq!(text(row, "file"), attempt.file);
        assert_eq!(text(row, "run_id"), attempt.run_id, "{at}");
        assert_eq!(text(row, "eval"), attempt.eval, "{at}");
        assert_eq!(text(row, "cell"), attempt.cell, "{at}");
        assert_eq!(int(row, "attempt"), Some(attempt.attempt), "{at}");
        assert_eq!(row["history"].as_bool(), Some(attempt.history), "{at}");
        assert_eq!(int(row, "turns"), Some(attempt.turns as i64), "{at}");
        assert_eq!(text(row, "status"), attempt.status, "{at}");
        assert_eq!(int(row, "duration_ms"), attempt.duration_ms, "{at}");
        assert_eq!(int(row, "tool_calls"), Some(attempt.tool_calls as i64), "{at}");
        assert_eq!(int(row, "tool_failures"), Some(attempt.tool_failures as i64), "{at}");
        assert_eq!(int(row, "file_edits"), Some(attempt.file_edits as i64), "{at}");
        assert_eq!(int(row, "lines_added"), Some(attempt.lines_added), "{at}");
        assert_eq!(int(row, "lines_removed"), Some(attempt.lines_removed), "{at}");
        assert_eq!(int(row, "web_searches"), attempt.web_searches.map(|n| n as i64), "{at}");
        assert_eq!(int(row, "web_fetches"), attempt.web_fetches.map(|n| n as i64), "{at}");
        assert_eq!(int(row, "errors"), Some(attempt.errors as i64), "{at}");
        assert_eq!(int(row, "retries"), Some(attempt.retries as i64), "{at}");
        assert_eq!(opt_text(row, "prompt"), attempt.prompt, "{at}");
        assert_eq!(opt_text(row, "final_text"), attempt.final_text, "{at}");
    }
    assert!(expected.iter().any(|a| a.history) && expected.iter().any(|a| !a.history), "both trees");
}

#[test]
fn events_by_type_as_written() {
    let got: BTreeMap<String, u64> = rows("select type, count(*) n from reeval.events group by type")
        .iter()
        .map(|r| (text(r, "type"), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(got, corpus().expected.events_by_type);
}

#[test]
fn tool_calls_and_failures_by_tool() {
    let got: BTreeMap<String, (u64, u64)> =
        rows("select tool, count(*) n, count(*) filter (where not ok) f from tool group by tool")
            .iter()
            .map(|r| (text(r, "tool"), (int(r, "n").unwrap() as u64, int(r, "f").unwrap() as u64)))
            .collect();
    assert_eq!(got, corpus().expected.tool_by_name);
}

#[test]
fn truncated_outputs_are_parsed() {
    let got: Vec<(String, u64, i64, String)> = rows(
        "select file, line, output_total_chars t, output_sha256 h from tool where output_truncated order by file, line",
    )
    .iter()
    .map(|r| (text(r, "file"), int(r, "line").unwrap() as u64, int(r, "t").unwrap(), text(r, "h")))
    .collect();
    let mut expected = corpus().expected.truncated_outputs.clone();
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
}

#[test]
fn damaged_lines_and_wrong_values_are_listed() {
    let errors = rows("select file, line, reason from reeval.errors order by file, line");
    let damaged: Vec<(String, u64)> = errors
        .iter()
        .filter(|r| !text(r, "reason").contains(": expected"))
        .map(|r| (text(r, "file"), int(r, "line").unwrap() as u64))
        .collect();
    let mut expected = corpus().expected.errors.clone();
    expected.sort();
    assert_eq!(damaged, expected);

    let values: Vec<(String, u64, String)> = errors
        .iter()
        .filter(|r| text(r, "reason").contains(": expected"))
        .map(|r| {
            let reason = text(r, "reason");
            let column = reason.split(':').next().unwrap().split('.').nth(1).unwrap().to_string();
            (text(r, "file"), int(r, "line").unwrap() as u64, column)
        })
        .collect();
    let mut expected: Vec<(String, u64, String)> = corpus()
        .expected
        .value_errors
        .iter()
        .map(|(f, l, key)| (f.clone(), *l, txq::format::Naming::SnakeCase.apply(key)))
        .collect();
    expected.sort();
    assert_eq!(values, expected);

    let raw: Vec<(String, u64)> = rows("select file, line from raw_errors order by file, line")
        .iter()
        .map(|r| (text(r, "file"), int(r, "line").unwrap() as u64))
        .collect();
    let mut expected = corpus().expected.raw_errors.clone();
    expected.sort();
    assert_eq!(raw, expected);
}

#[test]
fn raw_parts_per_file() {
    let got: BTreeMap<String, u64> = rows("select file, count(*) n from raw group by file")
        .iter()
        .map(|r| (text(r, "file"), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(got, corpus().expected.raw_parts);
}

#[test]
fn absent_ok_on_web_search_is_success() {
    let got =
        rows("select count(*) filter (where not ok) f, count(*) filter (where ok is null) n from web_search");
    assert_eq!(int(&got[0], "f"), Some(corpus().expected.web_search_failures as i64));
    assert_eq!(int(&got[0], "n"), Some(0));
}

#[test]
fn side_files_are_not_transcripts() {
    let files: Vec<String> = rows("select file from reeval.files union all select distinct file from raw")
        .iter()
        .map(|r| text(r, "file"))
        .collect();
    for side in &corpus().expected.side_files {
        assert!(!files.iter().any(|f| f == side), "{side} was read");
    }
}

/// rupu and reeval side by side: unqualified names are rupu's, qualified ones reach both.
#[test]
fn both_formats_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let rupu = write_rupu_corpus(dir.path(), &RupuOptions::default()).unwrap();
    let reeval = write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
    let got = rows_in_by_binary(
        dir.path(),
        "select (select count(*) from file_edit) a, (select count(*) from rupu.file_edit) b, \
         (select count(*) from reeval.file_edit) c, (select count(*) from events) d, (select count(*) from attempts) e",
    );
    let rupu_edits = rupu.events_by_type.get("file_edit").copied().unwrap_or(0) as i64;
    assert_eq!(int(&got[0], "a"), Some(rupu_edits));
    assert_eq!(int(&got[0], "b"), Some(rupu_edits));
    assert_eq!(int(&got[0], "c"), Some(reeval.events_by_type.get("file-edit").copied().unwrap_or(0) as i64));
    assert_eq!(int(&got[0], "d"), Some(rupu.events_by_type.values().sum::<u64>() as i64));
    assert_eq!(int(&got[0], "e"), Some(reeval.attempts.len() as i64));
}
