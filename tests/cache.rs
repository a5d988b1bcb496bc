//! The inference cache: a second query reads what the first learned, a grown transcript is read
//! on from where it was, a rewritten one whole.

use crate::util::{parse_ndjson, txq};
use std::io::Write;

fn count(dir: &std::path::Path, sql: &str) -> serde_json::Value {
    let out = txq(&["-q", "--format", "ndjson", "-e", sql, "."], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    parse_ndjson(&out.stdout)[0]["n"].clone()
}

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

#[test]
fn a_grown_transcript_shows_its_new_lines_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(
        &file,
        format!("{START}\n{{\"type\":\"usage\",\"data\":{{\"input_tokens\":5}}}}\n{{\"type\":\"usa"),
    )
    .unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 1);

    // The writer finishes the cut-off line and appends a new type with a new field.
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    write!(f, "ge\",\"data\":{{\"input_tokens\":7}}}}\n{{\"type\":\"budget_warning\",\"data\":{{\"spent_usd\":1.5}}}}\n").unwrap();
    drop(f);
    assert_eq!(count(dir.path(), "select sum(input_tokens) n from usage"), 12);
    assert_eq!(count(dir.path(), "select sum(spent_usd) n from budget_warning"), 1.5);
    assert_eq!(count(dir.path(), "select count(*) n from events"), 4);
}

#[test]
fn a_rewritten_transcript_is_read_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(&file, format!("{START}\n{{\"type\":\"usage\",\"data\":{{\"input_tokens\":5}}}}\n"))
        .unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 1);
    std::fs::write(&file, format!("{START}\n{{\"type\":\"notice\",\"data\":{{\"kind\":\"k\",\"region\":\"eu\"}}}}\n{{\"type\":\"notice\",\"data\":{{}}}}\n")).unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 0);
    assert_eq!(count(dir.path(), "select count(region) n from notice"), 1);
}
