//! Robustness: every kind of bad input read by the real binary (and the library where
//! the timing matters), each with its test; the invariant that damage costs only the damaged
//! lines; and a bounded in-process fuzz run over random bytes and mutated lines.

mod harness;

use crate::util::{int, parse_ndjson, text, txq};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use txq::generate::rng::Rng;

pub const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;
pub const USAGE: &str = r#"{"type":"usage","data":{"model":"m","input_tokens":10,"output_tokens":3}}"#;

/// A directory holding `run_1.jsonl` with `bytes` (a rupu transcript when they start with START).
pub fn transcript(bytes: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run_1.jsonl"), bytes).unwrap();
    dir
}

/// Lines joined with newlines, each ended by one.
fn lines(lines: &[&[u8]]) -> Vec<u8> {
    lines.iter().flat_map(|l| l.iter().chain(b"\n")).copied().collect()
}

/// What a run of txq on `dir` gave: rows (ndjson) and stderr; exit 0 asserted.
fn query(dir: &Path, args: &[&str], sql: &str) -> (Vec<Map<String, Value>>, String) {
    let mut all = vec!["--format", "ndjson"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-e", sql, "."]);
    let out = txq(&all, dir);
    assert_eq!(out.code, 0, "txq failed on {sql}: {}", out.stderr);
    (parse_ndjson(&out.stdout), out.stderr)
}

/// `errors` as (line, reason), in line order.
fn errors(dir: &Path, args: &[&str]) -> Vec<(i64, String)> {
    let (rows, _) = query(dir, args, "select line, reason from rupu.errors order by line, reason");
    rows.iter().map(|r| (int(r, "line").unwrap(), text(r, "reason"))).collect()
}

/// `events` as (line, type), in line order.
fn events(dir: &Path) -> Vec<(i64, String)> {
    let (rows, _) = query(dir, &["-q"], "select line, type from rupu.events order by line");
    rows.iter().map(|r| (int(r, "line").unwrap(), text(r, "type"))).collect()
}

fn reasons(errors: &[(i64, String)]) -> Vec<(i64, &str)> {
    errors.iter().map(|(l, r)| (*l, r.as_str())).collect()
}

fn usage_lines(dir: &Path) -> Vec<i64> {
    let (rows, _) = query(dir, &["-q"], "select line from usage order by line");
    rows.iter().map(|r| int(r, "line").unwrap()).collect()
}

// ---- Lines that are not events ----

#[test]
fn lines_that_are_not_json_are_listed_and_the_rest_kept() {
    let dir = transcript(&lines(&[START.as_bytes(), b"not json", b"{\"type\":", USAGE.as_bytes()]));
    let errors = errors(dir.path(), &[]);
    assert_eq!(
        reasons(&errors),
        [
            (2, "not valid JSON at column 2: a character JSON does not allow there"),
            (3, "not valid JSON at column 8: the line ends inside a value (cut off?)")
        ]
    );
    assert_eq!(usage_lines(dir.path()), [4]);
    let (_, stderr) = query(dir.path(), &[], "select count(*) from usage");
    assert_eq!(
        stderr,
        "txq: warning: skipped 2 damaged lines in 1 file; `select * from rupu.errors` lists them\n"
    );
}

#[test]
fn json_that_is_not_an_object_is_listed_with_its_shape() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        b"[1,2]",
        b"\"text\"",
        b"42",
        b"null",
        b"true",
        USAGE.as_bytes(),
    ]));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "not a JSON object but an array"),
            (3, "not a JSON object but a string"),
            (4, "not a JSON object but an integer"),
            (5, "not a JSON object but null"),
            (6, "not a JSON object but a boolean"),
        ]
    );
    assert_eq!(usage_lines(dir.path()), [7]);
}

#[test]
fn objects_without_a_type_are_listed() {
    let dir =
        transcript(&lines(&[START.as_bytes(), br#"{"data":{"input_tokens":1}}"#, b"{}", USAGE.as_bytes()]));
    assert_eq!(reasons(&errors(dir.path(), &[])), [(2, "no \"type\" key"), (3, "no \"type\" key")]);
    assert_eq!(usage_lines(dir.path()), [4]);
}

#[test]
fn a_type_that_is_not_a_string_is_listed_with_its_shape() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        br#"{"type":7,"data":{}}"#,
        br#"{"type":null}"#,
        br#"{"type":["usage"]}"#,
        br#"{"type":{"name":"usage"}}"#,
        USAGE.as_bytes(),
    ]));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "\"type\" is an integer, not a string"),
            (3, "\"type\" is null, not a string"),
            (4, "\"type\" is an array, not a string"),
            (5, "\"type\" is an object, not a string"),
        ]
    );
    assert_eq!(usage_lines(dir.path()), [6]);
}

#[test]
fn data_that_is_not_an_object_is_listed_and_null_data_is_an_empty_object() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        br#"{"type":"usage","data":[1]}"#,
        br#"{"type":"usage","data":"x"}"#,
        br#"{"type":"usage","data":3.5}"#,
        br#"{"type":"usage","data":null}"#,
        br#"{"type":"usage"}"#,
    ]));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "the event's fields are an array, not an object"),
            (3, "the event's fields are a string, not an object"),
            (4, "the event's fields are a number, not an object"),
        ]
    );
    assert_eq!(usage_lines(dir.path()), [5, 6]);
}

#[test]
fn a_value_of_the_wrong_type_reads_as_null_and_the_rest_of_the_row_is_kept() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        br#"{"type":"usage","data":{"model":"m","input_tokens":"many","output_tokens":3}}"#,
        br#"{"type":"usage","data":{"model":5,"input_tokens":1.5,"output_tokens":true}}"#,
        br#"{"type":"run_complete","data":{"status":"ok","outcome":{"id":7}}}"#,
    ]));
    let (rows, stderr) =
        query(dir.path(), &[], "select line, model, input_tokens, output_tokens from usage order by line");
    assert_eq!(
        Value::Array(rows.into_iter().map(Value::Object).collect()),
        json!([
            {"line": 2, "model": "m", "input_tokens": null, "output_tokens": 3},
            {"line": 3, "model": null, "input_tokens": null, "output_tokens": null},
        ])
    );
    assert_eq!(
        stderr,
        "txq: warning: read 4 values as null (wrong type) in 1 file; `select * from rupu.errors` lists them\n"
    );
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "usage.input_tokens: expected bigint (a count), found a string"),
            (3, "usage.input_tokens: expected bigint (a count), found 1.5: not a whole number"),
            (3, "usage.model: expected text, found an integer"),
            (3, "usage.output_tokens: expected bigint (a count), found a boolean"),
            (
                4,
                "run_complete.outcome: expected struct<id: text, class: text, severity: text, title: text, wire: struct<provider: text, value: text>>, found an object"
            ),
        ]
    );
    let (rows, _) = query(dir.path(), &["-q"], "select status, outcome from run_complete");
    assert_eq!(Value::Object(rows[0].clone()), json!({"status": "ok", "outcome": null}));
}

#[test]
fn numbers_beyond_i64_read_as_null_where_a_bigint_belongs_and_exactly_as_text() {
    let big = "99999999999999999999";
    let dir = transcript(&lines(&[
        START.as_bytes(),
        format!(r#"{{"type":"usage","data":{{"input_tokens":{big},"output_tokens":3}}}}"#).as_bytes(),
        br#"{"type":"command_run","data":{"exit_code":-9223372036854775808}}"#,
        format!(r#"{{"type":"budget_warning","data":{{"spent_usd":{big},"limit_usd":1e400}}}}"#).as_bytes(),
    ]));
    let (rows, _) = query(dir.path(), &["-q"], "select input_tokens, output_tokens from usage");
    assert_eq!(Value::Object(rows[0].clone()), json!({"input_tokens": null, "output_tokens": 3}));
    let (rows, _) = query(dir.path(), &["-q"], "select exit_code from command_run");
    assert_eq!(Value::Object(rows[0].clone()), json!({"exit_code": i64::MIN}));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "usage.input_tokens: expected bigint (a count), found an integer beyond its range"),
            (4, "budget_warning.limit_usd: expected double, found a number beyond its range"),
        ]
    );
    let (rows, _) = query(dir.path(), &["-q"], "select data from events where type = 'usage'");
    assert!(text(&rows[0], "data").contains(big), "the JSON text keeps the digits: {:?}", rows[0]);
    // An undocumented field of numbers is a double column; one beyond a double's range is null.
    let (rows, _) = query(dir.path(), &["-q"], "select spent_usd, limit_usd from budget_warning");
    assert_eq!(Value::Object(rows[0].clone()), json!({"spent_usd": 1e20, "limit_usd": null}));
}

#[test]
fn deeply_nested_json_does_not_overflow_the_stack() {
    let depth = 100_000;
    let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    let dir = transcript(&lines(&[
        START.as_bytes(),
        format!(r#"{{"type":"usage","data":{{"deep":{arrays},"output_tokens":1}}}}"#).as_bytes(),
        format!(r#"{{"type":"tool_call","data":{{"call_id":"c","input":{objects}}}}}"#).as_bytes(),
        format!(r#"{{"type":"run_start","data":{{"launch_skills":{arrays}}}}}"#).as_bytes(),
        format!(r#"{{"type":"run_complete","data":{{"outcome":{objects}}}}}"#).as_bytes(),
        arrays.as_bytes(),
        format!(r#"{{"type":{arrays}}}"#).as_bytes(),
        USAGE.as_bytes(),
    ]));
    let (rows, _) = query(dir.path(), &["-q"], "select line, output_tokens, length(deep) as n from usage");
    assert_eq!(
        Value::Array(rows.into_iter().map(Value::Object).collect()),
        json!([{"line": 2, "output_tokens": 1, "n": 2 * depth}, {"line": 8, "output_tokens": 3, "n": null}])
    );
    let (rows, _) = query(dir.path(), &["-q"], "select length(input) as n, input->>'b' as b from tool_call");
    assert_eq!(Value::Object(rows[0].clone()), json!({"n": objects.len(), "b": null}));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (4, "run_start.launch_skills: expected list<text>, found an array nested too deeply"),
            (
                5,
                "run_complete.outcome: expected struct<id: text, class: text, severity: text, title: text, wire: struct<provider: text, value: text>>, found an object nested too deeply"
            ),
            (5, "run_complete.status: expected text, found no value (it is required)"),
            (6, "not a JSON object but an array"),
            (7, "\"type\" is an array, not a string"),
        ]
    );
}

#[test]
fn invalid_utf8_is_a_damaged_line_with_a_readable_excerpt() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        b"{\"type\":\"usage\",\"data\":{\"model\":\"caf\xe9\",\"output_tokens\":1}}",
        b"\xff\xfe\xfd",
        USAGE.as_bytes(),
    ]));
    let (rows, _) = query(dir.path(), &["-q"], "select line, reason, excerpt from errors order by line");
    assert_eq!(
        Value::Array(rows.into_iter().map(Value::Object).collect()),
        json!([
            {"line": 2, "reason": "not valid JSON at column 37: bytes that are not UTF-8 in a string",
             "excerpt": "{\"type\":\"usage\",\"data\":{\"model\":\"caf\u{fffd}\",\"output_tokens\":1}}"},
            {"line": 3, "reason": "not valid JSON at column 1: a character JSON does not allow there",
             "excerpt": "\u{fffd}\u{fffd}\u{fffd}"},
        ])
    );
    assert_eq!(usage_lines(dir.path()), [4]);
}

#[test]
fn nul_bytes_damage_their_line_and_an_escaped_nul_is_text() {
    let dir = transcript(&lines(&[
        START.as_bytes(),
        b"{\"type\":\"usage\",\"data\":{\"model\":\"a\0b\"}}",
        b"\0\0\0\0",
        b"{\"type\":\"usage\",\"data\":{\"model\":\"a\\u0000b\"}}",
        b"\0",
    ]));
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [
            (2, "not valid JSON at column 34: a raw control character (U+0000 to U+001F) in a string"),
            (3, "not valid JSON at column 1: a character JSON does not allow there"),
            (5, "not valid JSON at column 1: a character JSON does not allow there"),
        ]
    );
    let (rows, _) = query(dir.path(), &["-q"], "select line, model from usage");
    assert_eq!(Value::Object(rows[0].clone()), json!({"line": 4, "model": "a\u{0}b"}));
}

#[test]
fn a_bom_is_dropped_at_the_start_and_damage_elsewhere() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(lines(&[
        START.as_bytes(),
        b"\xEF\xBB\xBF{\"type\":\"usage\",\"data\":{}}",
        USAGE.as_bytes(),
    ]));
    let dir = transcript(&bytes);
    assert_eq!(events(dir.path()), [(1, "run_start".into()), (3, "usage".into())]);
    assert_eq!(
        reasons(&errors(dir.path(), &[])),
        [(2, "not valid JSON at column 1: a character JSON does not allow there")]
    );
    let (rows, _) = query(dir.path(), &["-q"], "select run_id, agent from runs");
    assert_eq!(Value::Object(rows[0].clone()), json!({"run_id": "run_1", "agent": "a"}));
}

// ---- Long lines ----

fn long_line_transcript(output_bytes: usize) -> tempfile::TempDir {
    let output = "x".repeat(output_bytes);
    let tool = format!(r#"{{"type":"tool_result","data":{{"call_id":"c","output":"{output}"}}}}"#);
    transcript(&lines(&[START.as_bytes(), tool.as_bytes(), USAGE.as_bytes()]))
}

#[test]
fn a_line_of_20_mb_is_read_whole_under_the_limit() {
    let dir = long_line_transcript(20_000_000);
    let (rows, stderr) =
        query(dir.path(), &["--no-cache"], "select line, length(output) as n from tool_result");
    assert_eq!(Value::Object(rows[0].clone()), json!({"line": 2, "n": 20_000_000}));
    assert_eq!(stderr, "");
    assert_eq!(usage_lines(dir.path()), [3]);
}

/// A line over a limit above what is held in memory (8 MiB) is written aside until it passes the
/// limit, then dropped: it is listed as too long with its whole length, and the rest is read (it
/// cost about four times the limit in memory before; the splitter's tests bound what it holds).
#[test]
fn a_line_written_aside_then_over_the_limit_is_listed_with_its_length() {
    let dir = long_line_transcript(20_000_000);
    let limit = ["--no-cache", "--max-line-bytes", "12M"];
    let (rows, _) = query(dir.path(), &limit, "select line, reason from errors");
    assert_eq!(
        Value::Object(rows[0].clone()),
        json!({"line": 2, "reason": "line of 20000057 bytes is longer than the limit of 12582912 (--max-line-bytes)"})
    );
    let (rows, _) = query(dir.path(), &limit, "select line from usage");
    assert_eq!(rows[0]["line"], 3);
}

#[test]
fn a_line_over_max_line_bytes_is_listed_with_its_file_and_line_and_the_rest_read() {
    let dir = long_line_transcript(20_000_000);
    let limit = ["--no-cache", "--max-line-bytes", "1000000"];
    let (rows, stderr) =
        query(dir.path(), &limit, "select file, line, reason, length(excerpt) as n from errors");
    assert_eq!(
        Value::Object(rows[0].clone()),
        json!({"file": "./run_1.jsonl", "line": 2, "n": 200,
               "reason": "line of 20000057 bytes is longer than the limit of 1000000 (--max-line-bytes)"})
    );
    assert_eq!(
        stderr,
        "txq: warning: skipped 1 damaged line in 1 file; `select * from rupu.errors` lists them\n"
    );
    let (rows, _) = query(dir.path(), &limit, "select count(*) as n from tool_result");
    assert_eq!(rows[0]["n"], 0);
    let (rows, _) = query(dir.path(), &limit, "select line from usage");
    assert_eq!(rows[0]["line"], 3);
}

#[test]
fn the_inference_cache_is_not_reused_over_another_line_limit() {
    // Regression: a line too long under one --max-line-bytes was left out of the cached stats,
    // so its type stayed missing from a later run with a larger limit.
    let dir = long_line_transcript(2000);
    let (rows, _) =
        query(dir.path(), &["-q", "--max-line-bytes", "1024"], "select count(*) as n from tool_result");
    assert_eq!(rows[0]["n"], 0);
    let (rows, stderr) = query(dir.path(), &[], "select count(*) as n from tool_result");
    assert_eq!(rows[0]["n"], 1);
    assert_eq!(stderr, "");
    let (rows, stderr) =
        query(dir.path(), &["--max-line-bytes", "1024"], "select count(*) as n from tool_result");
    assert_eq!(rows[0]["n"], 0);
    assert_eq!(
        stderr,
        "txq: warning: skipped 1 damaged line in 1 file; `select * from rupu.errors` lists them\n"
    );
}

// ---- Files that hold nothing, or cannot be read ----

#[test]
fn empty_files_and_files_of_blank_lines_add_nothing_and_the_query_goes_on() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    std::fs::write(dir.path().join("run_empty.jsonl"), b"").unwrap();
    std::fs::write(dir.path().join("run_blank.jsonl"), b"\n\r\n   \n").unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select run_id from runs");
    assert_eq!(rows.len(), 1);
    assert_eq!(stderr, "");
}

#[test]
fn a_file_of_only_a_partial_line_adds_nothing_and_is_no_damage() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    std::fs::write(dir.path().join("run_2.jsonl"), &START.as_bytes()[..40]).unwrap();
    std::fs::write(dir.path().join("run_3.jsonl"), b"{\"type\":\"run_start\",\"data\":{\"agent\":\"b\"}}")
        .unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select run_id, agent from runs order by run_id");
    assert_eq!(
        Value::Array(rows.into_iter().map(Value::Object).collect()),
        json!([{"run_id": "run_1", "agent": "a"}, {"run_id": "run_3", "agent": "b"}]),
        "a whole last line without its newline is read; a cut one is not"
    );
    assert_eq!(stderr, "");
}

#[test]
fn a_binary_file_named_jsonl_is_named_in_a_warning() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let mut rng = Rng::new(7);
    let binary: Vec<u8> = (0..20_000).map(|_| rng.below(256) as u8).collect();
    std::fs::write(dir.path().join("run_2.jsonl"), &binary).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select run_id from runs");
    assert_eq!(rows.len(), 1);
    assert!(
        stderr.starts_with("txq: warning: ./run_2.jsonl: not read: not JSON Lines: none of the first "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_dangling_symlink_is_named_in_a_warning() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    std::os::unix::fs::symlink("/no/such/target.jsonl", dir.path().join("run_2.jsonl")).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select run_id from runs");
    assert_eq!(rows.len(), 1);
    assert_eq!(stderr, "txq: warning: ./run_2.jsonl: not read: No such file or directory (os error 2)\n");
}

#[test]
fn a_directory_named_jsonl_is_searched_not_read() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    std::fs::create_dir(dir.path().join("run_2.jsonl")).unwrap();
    std::fs::write(dir.path().join("run_2.jsonl/run_3.jsonl"), lines(&[START.as_bytes()])).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select run_id from runs order by run_id");
    assert_eq!(rows.len(), 2);
    assert_eq!(stderr, "");
    let out = txq(&["-e", "select 1", "run_2.jsonl/run_3.jsonl/x"], dir.path());
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr, "txq: error: run_2.jsonl/run_3.jsonl/x: no such file or directory\n");
}

/// Opens the transcripts under `dir` the way txq does, without the cache.
async fn open(dir: &Path) -> txq::sql::session::Engine {
    let options = txq::table::corpus::ReadOptions::default();
    txq::sql::session::open(&[dir.to_path_buf()], options).await.expect("opens")
}

/// Runs `sql`, and takes the problems the statement's reads met.
async fn collect(
    engine: &txq::sql::session::Engine,
    sql: &str,
) -> (String, Vec<txq::table::corpus::Problem>) {
    let frame = engine.ctx.sql(sql).await.expect("plans");
    let batches = frame.collect().await.expect("runs");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string();
    (text, engine.corpus.problems.take())
}

/// A scan passes over the rest of a file once it has read the rows the file's summary counts (the
/// usage lines here end before the tool output); a file written again since the corpus was
/// opened, its size the same, is read whole all the same, for the rows it holds now.
#[tokio::test]
async fn a_scan_that_stops_at_a_files_counted_rows_reads_a_file_written_again_since_whole() {
    let output = r#"{"type":"tool_result","data":{"call_id":"c1","output":"an output longer than a usage line of this test"}}"#;
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes(), USAGE.as_bytes(), output.as_bytes()]));
    let engine = open(dir.path()).await;
    const SUM: &str = "select count(*) as n, sum(input_tokens) as s, sum(output_tokens) as o from usage";
    let (table, problems) = collect(&engine, SUM).await;
    assert!(table.contains("| 2 | 20 | 6 |"), "{table}");
    assert_eq!(problems, vec![]);
    // The tool output's line becomes a usage line of the same length.
    let usage = r#"{"type":"usage","data":{"model":"m","input_tokens":1000,"output_tokens":3,"pad":""}}"#;
    let usage =
        usage.replace(r#""pad":"""#, &format!(r#""pad":"{}""#, "x".repeat(output.len() - usage.len())));
    assert_eq!(usage.len(), output.len());
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(
        dir.path().join("run_1.jsonl"),
        lines(&[START.as_bytes(), USAGE.as_bytes(), USAGE.as_bytes(), usage.as_bytes()]),
    )
    .unwrap();
    let (table, problems) = collect(&engine, SUM).await;
    assert!(table.contains("| 3 | 1020 | 9 |"), "{table}");
    assert_eq!(problems, vec![]);
}

#[tokio::test]
async fn a_file_that_goes_away_after_discovery_is_named_and_the_query_goes_on() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let second = dir.path().join("run_2.jsonl");
    std::fs::write(&second, lines(&[START.as_bytes(), USAGE.as_bytes()])).unwrap();
    // Gone before the inference pass: a warning of the corpus.
    let formats = txq::format::all();
    let discovery = txq::source::discover::discover(&formats, &[dir.path().to_path_buf()]).unwrap();
    std::fs::remove_file(&second).unwrap();
    let corpus = txq::table::corpus::Corpus::open(formats, discovery, Default::default()).await;
    assert_eq!(corpus.transcripts(), 1);
    assert_eq!(corpus.warnings.len(), 1, "{:?}", corpus.warnings);
    assert!(corpus.warnings[0].contains("run_2.jsonl: not read: "), "{:?}", corpus.warnings);

    // Gone between the inference pass and the query: a problem of the statement.
    std::fs::write(&second, lines(&[START.as_bytes(), USAGE.as_bytes()])).unwrap();
    let engine = open(dir.path()).await;
    std::fs::remove_file(&second).unwrap();
    let (table, problems) = collect(&engine, "select count(*) as n from usage").await;
    assert!(table.contains("| 1 |"), "{table}");
    assert!(
        problems.iter().any(
            |p| matches!(p, txq::table::corpus::Problem::UnreadableFile { file, .. } if file.ends_with("run_2.jsonl"))
        ),
        "{problems:?}"
    );
}

#[tokio::test]
async fn a_transcript_that_grows_while_read_gives_the_prefix_seen_at_discovery() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let file = dir.path().join("run_1.jsonl");
    let formats = txq::format::all();
    let discovery = txq::source::discover::discover(&formats, &[dir.path().to_path_buf()]).unwrap();
    let corpus = txq::table::corpus::Corpus::open(formats, discovery, Default::default()).await;
    let ctx = txq::sql::session::session(&corpus, &Default::default()).await.unwrap();
    // rupu appends a line and a half while the query runs.
    let mut more = lines(&[USAGE.as_bytes()]);
    more.extend_from_slice(&USAGE.as_bytes()[..30]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(&more)
        })
        .unwrap();
    let engine = txq::sql::session::Engine { corpus, ctx, memory: Default::default() };
    let (table, problems) = collect(&engine, "select count(*) as n from usage").await;
    assert!(table.contains("| 1 |"), "the prefix seen at discovery: {table}");
    let (table, problems2) = collect(&engine, "select count(*) as n from errors").await;
    assert!(table.contains("| 0 |"), "no damage: {table}");
    assert!(
        problems
            .iter()
            .chain(&problems2)
            .all(|p| matches!(p, txq::table::corpus::Problem::DamagedLines { .. })),
        "{problems:?}"
    );
    // A new query sees the whole lines, and the half line still being written is no damage.
    let (rows, stderr) = query(dir.path(), &[], "select count(*) as n from usage");
    assert_eq!(rows[0]["n"], 2);
    assert_eq!(stderr, "");
}

#[tokio::test]
async fn a_transcript_cut_shorter_after_discovery_reads_what_is_left() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes(), USAGE.as_bytes()]));
    let file = dir.path().join("run_1.jsonl");
    let engine = open(dir.path()).await;
    let keep = START.len() + 1 + USAGE.len() + 1 + 20;
    std::fs::OpenOptions::new().write(true).open(&file).and_then(|f| f.set_len(keep as u64)).unwrap();
    let (table, problems) = collect(&engine, "select count(*) as n from usage").await;
    assert!(table.contains("| 1 |"), "{table}");
    // The answer is of what is left, and the cut is said (it was not, once).
    let full = START.len() + 1 + 2 * (USAGE.len() + 1);
    let said = format!("read in part: cut from {full} to {keep} bytes as it was read");
    assert!(
        problems.iter().all(|p| match p {
            txq::table::corpus::Problem::DamagedLines { .. } => true,
            txq::table::corpus::Problem::ReadNote { note, .. } => note.starts_with(&said),
            _ => false,
        }) && problems.iter().any(|p| matches!(p, txq::table::corpus::Problem::ReadNote { .. })),
        "{problems:?}"
    );
}

// ---- Directory trees ----

#[test]
fn symlink_loops_are_warned_once_and_not_followed_twice() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::os::unix::fs::symlink("../..", dir.path().join("a/b/up")).unwrap();
    std::os::unix::fs::symlink("run_1.jsonl", dir.path().join("run_link.jsonl")).unwrap();
    std::os::unix::fs::symlink("self", dir.path().join("self")).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select count(*) as n from usage");
    assert_eq!(rows[0]["n"], 1, "the file reached twice is read once");
    let mut warnings: Vec<&str> = stderr.lines().collect();
    warnings.sort();
    assert_eq!(
        warnings,
        [
            "txq: warning: ./a/b/up: symlink loop back to .; not followed again",
            "txq: warning: ./self: not read: Too many levels of symbolic links (os error 40)",
        ]
    );
}

/// Discovery canonicalises a directory once for all its files: a file reached through a symlinked
/// directory (and one in a directory whose own path runs through a symlink) is still known as one.
#[test]
fn a_directory_reached_through_a_symlink_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("real/inner")).unwrap();
    let transcript = lines(&[START.as_bytes(), USAGE.as_bytes()]);
    std::fs::write(dir.path().join("real/inner/run_1.jsonl"), &transcript).unwrap();
    std::os::unix::fs::symlink("real", dir.path().join("alias")).unwrap();
    std::os::unix::fs::symlink("real/inner", dir.path().join("inner_alias")).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select count(*) as n from usage");
    assert_eq!(rows[0]["n"], 1, "one file reached three ways is read once");
    assert_eq!(stderr, "");
}

#[test]
fn deep_nesting_is_walked_to_the_bottom() {
    let dir = tempfile::tempdir().unwrap();
    let mut deep = dir.path().to_path_buf();
    for _ in 0..300 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("run_1.jsonl"), lines(&[START.as_bytes(), USAGE.as_bytes()])).unwrap();
    let (rows, stderr) = query(dir.path(), &[], "select count(*) as n from usage");
    assert_eq!(rows[0]["n"], 1);
    assert_eq!(stderr, "");
}

#[test]
fn files_deeper_than_the_system_can_open_are_warned_and_the_rest_read() {
    // Past PATH_MAX (4096 bytes) the system opens nothing by its path: discovery names what it
    // could not read and goes on. The tree is made by relative steps, as a path that long cannot
    // be given to mkdir.
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let name = "d".repeat(200);
    let mut middle = dir.path().to_path_buf();
    for _ in 0..10 {
        middle.push(&name);
    }
    std::fs::create_dir_all(&middle).unwrap();
    std::fs::write(middle.join("run_10.jsonl"), lines(&[START.as_bytes()])).unwrap();
    let below = vec![name.as_str(); 14].join("/");
    let script = format!("mkdir -p {below} && printf '%s\\n' '{START}' > {below}/run_24.jsonl");
    let made = std::process::Command::new("sh").args(["-c", &script]).current_dir(&middle).status().unwrap();
    assert!(made.success());
    let out = txq(&["--format", "ndjson", "-e", "select run_id from runs order by run_id", "."], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let runs: Vec<String> = parse_ndjson(&out.stdout).iter().map(|r| text(r, "run_id")).collect();
    assert_eq!(runs, ["run_1", "run_10"]);
    let warnings: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].starts_with("txq: warning: ./dddd"), "{}", warnings[0]);
    assert!(warnings[0].ends_with(": not read: File name too long (os error 36)"), "{}", warnings[0]);
}

#[test]
fn thousands_of_small_files_are_all_read() {
    let dir = tempfile::tempdir().unwrap();
    let files = 3000;
    for i in 0..files {
        let sub = dir.path().join(format!("{}", i % 30));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("run_{i}.jsonl")), lines(&[START.as_bytes(), USAGE.as_bytes()]))
            .unwrap();
    }
    let (rows, stderr) =
        query(dir.path(), &[], "select count(*) as n, count(distinct run_id) as runs from usage");
    assert_eq!(Value::Object(rows[0].clone()), json!({"n": files, "runs": files}));
    assert_eq!(stderr, "");
}

// ---- Nothing to read ----

#[test]
fn a_path_that_does_not_exist_exits_2_naming_it() {
    let dir = transcript(&lines(&[START.as_bytes()]));
    let out = txq(&["-e", "select 1", ".", "missing/dir"], dir.path());
    assert_eq!((out.code, out.stdout.as_str()), (2, ""));
    assert_eq!(out.stderr, "txq: error: missing/dir: no such file or directory\n");
}

#[test]
fn paths_with_no_transcripts_run_sql_on_empty_tables_with_a_note_saying_what_was_looked_for_and_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::write(dir.path().join("empty/notes.txt"), "hi").unwrap();
    std::fs::write(dir.path().join("empty/run_1.jsonl"), lines(&[USAGE.as_bytes()])).unwrap();
    let out = txq(&["--format", "csv", "-e", "select 1 as one", "empty"], dir.path());
    assert_eq!((out.code, out.stdout.as_str()), (0, "one\n1\n"));
    assert_eq!(
        out.stderr,
        "txq: warning: empty/run_1.jsonl: not read: no run_start line, so not rupu transcripts (step logs or netflow ledgers?); `select file, skipped from rupu.files where not transcript` lists each with why\n\
         txq: note: no transcripts in empty: looked for rupu transcripts (*.jsonl files with a run_start line), reeval attempts (transcript.jsonl), Claude Code sessions (projects/*/*.jsonl), Codex CLI rollouts (sessions/**/rollout-*.jsonl) and Gemini CLI chats (tmp/*/chats/**/*.jsonl); the tables are empty\n"
    );
    let out = txq(&["-e", "select 1", "empty/notes.txt"], dir.path());
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("empty/notes.txt: not read: no format reads files of this name"),
        "{}",
        out.stderr
    );
    let out = txq(&["-e", "select 1"], dir.path());
    assert_eq!(out.code, 0);
    assert!(out.stderr.starts_with("txq: note: no transcripts given and none found in the default places: looked in .rupu/transcripts, "), "{}", out.stderr);
    assert!(out.stderr.contains(".reeval/runs"), "{}", out.stderr);
}

// ---- SQL errors ----

#[test]
fn an_unknown_table_is_named_with_the_nearest_table_and_how_to_list_them() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let out = txq(&["-q", "-e", "select * from usag", "."], dir.path());
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    // DataFusion's words say the table is not found; txq's say which is near and how to list
    // them. Only txq's are pinned.
    assert!(out.stderr.starts_with("txq: error: ") && out.stderr.contains("'usag'"), "{}", out.stderr);
    assert!(
        out.stderr.ends_with("; did you mean 'usage'?\n  hint: \\d in the shell, or `select table_schema, table_name from information_schema.tables`, lists the tables; docs/tables.md describes them\n"),
        "{}",
        out.stderr
    );
    let out = txq(&["-q", "-e", "select * from rupu.tool_cal", "."], dir.path());
    assert!(
        out.stderr.contains("'rupu.tool_cal'") && out.stderr.contains("; did you mean 'rupu.tool_call'?\n"),
        "{}",
        out.stderr
    );
    let out = txq(&["-q", "-e", "select * from nothing_like_it", "."], dir.path());
    assert!(
        out.stderr.starts_with("txq: error: ")
            && out.stderr.contains("'nothing_like_it'")
            && !out.stderr.contains("did you mean")
            && out.stderr.contains("\n  hint: \\d"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_misspelled_column_is_named_with_the_right_one() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let out = txq(&["-q", "-e", "select input_tokns from usage", "."], dir.path());
    assert_eq!(out.code, 1);
    // The wording is DataFusion's: what is pinned is that it names the column and the nearest.
    assert!(
        out.stderr.starts_with("txq: error: ")
            && out.stderr.contains("input_tokns")
            && out.stderr.contains("usage.input_tokens"),
        "{}",
        out.stderr
    );
}

#[test]
fn type_errors_name_the_types_without_blaming_datafusion() {
    let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
    let run = |sql: &str| {
        let out = txq(&["-q", "-e", sql, "."], dir.path());
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{sql}");
        out.stderr
    };
    // The wording is DataFusion's: what is pinned is one error line naming the types, with no
    // blame on DataFusion.
    let stderr = run("select model + 1 from usage");
    assert!(stderr.starts_with("txq: error: ") && stderr.lines().count() == 1, "{stderr}");
    assert!(stderr.contains("Utf8") && stderr.contains("Int64"), "{stderr}");
    let stderr = run("select sum(model) from usage");
    assert!(stderr.starts_with("txq: error: ") && stderr.contains("sum(Utf8)"), "{stderr}");
    assert!(!stderr.contains("bug in DataFusion"), "{stderr}");
    let stderr = run("select * from usage where input_tokens = 'many'");
    assert!(
        stderr.starts_with("txq: error: ") && stderr.contains("'many'") && stderr.contains("Int64"),
        "{stderr}"
    );
}

// ---- The invariant: damage costs the damaged lines only ----

/// One piece of a damaged file: bytes written as they are, and the original line they are, when
/// damage left them whole.
struct Piece {
    bytes: Vec<u8>,
    original: Option<usize>,
}

/// Random bytes that make a line invalid, or none at all.
fn garbage(rng: &mut Rng) -> Vec<u8> {
    const PALETTE: &[&[u8]] = &[
        b"{",
        b"}",
        b"\"",
        b"\\",
        b"\0",
        b"\xff",
        b"\xc3",
        b",",
        b":",
        b" ",
        b"\r",
        b"[",
        b"x",
        b"\xEF\xBB\xBF",
    ];
    (0..rng.size(1, 6)).flat_map(|_| rng.pick(PALETTE).to_vec()).collect()
}

/// Lines of other shapes that the rules put somewhere particular.
const OTHER_SHAPES: &[&str] = &[
    "[1,2]",
    "\"text\"",
    "{}",
    r#"{"data":{"input_tokens":1}}"#,
    r#"{"type":7}"#,
    r#"{"type":"usage","data":[1]}"#,
    r#"{"type":"usage","data":{"input_tokens":"many"}}"#,
    r#"{"type":"turn-end","turn":"x"}"#,
    "   ",
    "",
    // Types named like tables txq defines, or no SQL name: tables of other names (issue 12).
    r#"{"type":"runs","data":{"k":1},"turn":0}"#,
    r#"{"type":"errors","data":{},"turn":0}"#,
    r#"{"type":"","data":{}}"#,
    r#"{"type":"../../victim","data":{}}"#,
    r#"{"type":"turn_end","turn":0}"#,
    // A lone surrogate (U+FFFD kept in the text), whole numbers as 1.0, a status that is no text.
    r#"{"type":"text","data":{"text":"cut \ud83d"},"text":"cut \ud83d","turn":0}"#,
    r#"{"type":"usage","data":{"input_tokens":1.0e2,"output_tokens":5.0},"turn":1.0}"#,
    r#"{"type":"run_complete","data":{"status":5}}"#,
];

/// `original` (whole lines, newline-ended) with a few random kinds of damage.
fn damage(original: &[Vec<u8>], rng: &mut Rng) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = original
        .iter()
        .enumerate()
        .map(|(i, line)| Piece { bytes: [line.as_slice(), b"\n"].concat(), original: Some(i) })
        .collect();
    for _ in 0..rng.size(1, 4) {
        let i = rng.below(pieces.len() as u64) as usize;
        let len = pieces[i].bytes.len();
        // The line end (a LF, or a CR alone) is kept out of the damage that keeps a line's end.
        let body = len - usize::from(pieces[i].bytes.ends_with(b"\n") || pieces[i].bytes.ends_with(b"\r"));
        let at = rng.below(body.max(1) as u64) as usize;
        match rng.below(14) {
            // Truncated: the rest of the line lost, the newline kept.
            0 => {
                pieces[i].bytes.drain(at..body);
                pieces[i].original = None;
            }
            // Garbage bytes inserted.
            1 => {
                let junk = garbage(rng);
                pieces[i].bytes.splice(at..at, junk);
                pieces[i].original = None;
            }
            // A byte flipped.
            2 => {
                pieces[i].bytes[at] ^= 1 << rng.below(8);
                pieces[i].original = None;
            }
            // A NUL inserted.
            3 => {
                pieces[i].bytes.insert(at, 0);
                pieces[i].original = None;
            }
            // Split in two.
            4 => {
                pieces[i].bytes.insert(at, b'\n');
                pieces[i].original = None;
            }
            // The newline deleted: joined with the next line (the last line is left unended).
            5 if pieces[i].bytes.ends_with(b"\n") => {
                pieces[i].bytes.pop();
                if i + 1 < pieces.len() {
                    pieces[i].original = None;
                    pieces[i + 1].original = None;
                }
            }
            // CRLF: still whole.
            6 if pieces[i].bytes.ends_with(b"\n") && !pieces[i].bytes.ends_with(b"\r\n") => {
                let end = pieces[i].bytes.len() - 1;
                pieces[i].bytes.insert(end, b'\r');
            }
            // A line of garbage, or of another shape, inserted.
            7 => {
                let mut bytes = garbage(rng);
                bytes.push(b'\n');
                pieces.insert(i, Piece { bytes, original: None });
            }
            8 => {
                let bytes = format!("{}\n", rng.pick(OTHER_SHAPES)).into_bytes();
                pieces.insert(i, Piece { bytes, original: None });
            }
            // The file cut off mid-line.
            9 => {
                let last = pieces.len() - 1;
                let cut = rng.below(pieces[last].bytes.len() as u64) as usize;
                pieces[last].bytes.truncate(cut);
                pieces[last].original = None;
            }
            // A CR alone ends the line: still whole.
            10 if pieces[i].bytes.ends_with(b"\n") && !pieces[i].bytes.ends_with(b"\r\n") => {
                *pieces[i].bytes.last_mut().expect("a line end") = b'\r';
            }
            // NUL padding before the line (what a crash leaves): still whole.
            11 => {
                pieces[i].bytes.splice(0..0, *b"\0\0\0");
            }
            // A last line that is complete but no event, with no line end.
            12 => {
                let ended =
                    pieces.last().is_some_and(|p| p.bytes.ends_with(b"\n") || p.bytes.ends_with(b"\r"));
                let mut bytes = if ended { vec![] } else { b"\n".to_vec() };
                bytes.extend_from_slice(rng.pick(&[&b"{\"type\":5}"[..], b"[1,2]", b"garbage"]));
                pieces.push(Piece { bytes, original: None });
            }
            // A BOM before the first line.
            _ if i == 0 && !pieces[0].bytes.starts_with(b"\xEF\xBB\xBF") => {
                pieces[0].bytes.splice(0..0, *b"\xEF\xBB\xBF");
            }
            _ => {}
        }
    }
    pieces
}

/// What a damaged file must give: the untouched lines by number with their values, and the
/// other lines, which must each be in `events` or `errors` unless blank or a cut-off last line.
struct Case {
    file: String,
    untouched: Vec<(i64, Value)>,
    damaged: Vec<i64>,
    /// No whole event of the format's required type is left (rupu's run_start): the file is no
    /// transcript, and no line of it is in any table.
    transcript: bool,
}

fn case(
    file: String,
    original: &[Value],
    pieces: &[Piece],
    fields: impl Fn(&Value) -> Value,
    required: Option<&str>,
) -> (Case, Vec<u8>) {
    let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.bytes.iter().copied()).collect();
    let line_of = line_numbers(&bytes);
    let mut untouched = Vec::new();
    let mut damaged = std::collections::BTreeSet::new();
    let mut start = 0;
    for piece in pieces {
        let end = start + piece.bytes.len();
        match piece.original {
            Some(i) => untouched.push((line_of[start], fields(&original[i]))),
            // Every line a damaged piece spans (a split line is two).
            None if end > start => damaged.extend(line_of[start]..=line_of[end - 1]),
            None => {}
        }
        start = end;
    }
    // Lines that are blank, or a last line cut off mid-value, are in neither table; every other
    // line a damaged piece spans is in one of them (an unended last line that is no cut-off JSON
    // value is damage too).
    let body_start = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut must_appear = Vec::new();
    let mut holds_required = false;
    for (number, line, ended) in split_lines(&bytes[body_start..]) {
        // NUL padding before a line is dropped.
        let line = match line.iter().position(|b| *b != 0) {
            Some(at) => &line[at..],
            None => line,
        };
        let event = serde_json::from_slice::<Value>(line)
            .ok()
            .filter(|v| v.get("data").is_none_or(|d| d.is_object() || d.is_null()));
        holds_required |= event.is_some_and(|v| v.get("type").and_then(Value::as_str) == required);
        let blank = line.iter().all(u8::is_ascii_whitespace);
        let cut = !ended
            && serde_json::from_slice::<serde::de::IgnoredAny>(line)
                .is_err_and(|e| e.classify() == serde_json::error::Category::Eof);
        if damaged.contains(&number) && !blank && !cut {
            must_appear.push(number);
        }
    }
    let transcript = required.is_none() || holds_required;
    if !transcript {
        (untouched, must_appear) = (vec![], vec![]);
    }
    (Case { file, untouched, damaged: must_appear, transcript }, bytes)
}

/// The line each byte of a file is on, as txq's reading rules end lines: at a LF, a CRLF or a
/// CR alone (written here apart from txq's own splitter, to check it).
fn line_numbers(bytes: &[u8]) -> Vec<i64> {
    let mut line = 1;
    let mut out = Vec::with_capacity(bytes.len());
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' && i > 0 && bytes[i - 1] == b'\r' {
            out.push(line - 1);
            continue;
        }
        out.push(line);
        line += i64::from(*b == b'\n' || *b == b'\r');
    }
    out
}

/// The lines of a file with their numbers (LF, CRLF or CR alone ending each), and whether a line
/// end follows each.
fn split_lines(bytes: &[u8]) -> Vec<(i64, &[u8], bool)> {
    let mut lines = Vec::new();
    let (mut start, mut number, mut i) = (0, 1, 0);
    while i < bytes.len() {
        if bytes[i] == b'\n' || bytes[i] == b'\r' {
            lines.push((number, &bytes[start..i], true));
            number += 1;
            i += if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
            start = i;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        lines.push((number, &bytes[start..], false));
    }
    lines
}

/// Generated transcripts of one format, as their lines parsed.
fn originals(root: &Path, name: &str) -> Vec<(Vec<Vec<u8>>, Vec<Value>)> {
    let mut files: Vec<PathBuf> = walk(root)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n == name || (name == "*" && n.to_string_lossy().ends_with(".jsonl")))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let text = std::fs::read(path).unwrap();
            let lines: Vec<Vec<u8>> =
                text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect();
            let values =
                lines.iter().map(|l| serde_json::from_slice(l).expect("generated lines are JSON")).collect();
            (lines, values)
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Checks every case against what txq reads from `dir`.
fn check_cases(dir: &Path, schema: &str, cases: &[Case]) {
    let sql = format!(
        "select 'event' as k, file, line, data as v from {schema}.events \
         union all select 'error', file, line, reason from {schema}.errors"
    );
    let out = txq(&["-q", "--no-cache", "--format", "ndjson", "-e", &sql, "."], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut events: std::collections::HashMap<(String, i64), Vec<String>> = Default::default();
    let mut errors: std::collections::HashMap<(String, i64), Vec<String>> = Default::default();
    for row in parse_ndjson(&out.stdout) {
        let key = (text(&row, "file"), int(&row, "line").unwrap());
        let target = if text(&row, "k") == "event" { &mut events } else { &mut errors };
        target.entry(key).or_default().push(text(&row, "v"));
    }
    for case in cases {
        if !case.transcript {
            let read = events.keys().chain(errors.keys()).find(|(f, _)| *f == case.file);
            assert!(read.is_none(), "{}: no transcript, yet line {:?} is read", case.file, read);
        }
        for (line, expected) in &case.untouched {
            let key = (case.file.clone(), *line);
            let found = events.get(&key).unwrap_or_else(|| {
                let bytes = std::fs::read(dir.join(&case.file)).unwrap();
                let text = String::from_utf8_lossy(&bytes);
                let head: Vec<&str> = text.lines().take(*line as usize + 1).collect();
                panic!("{}:{line}: untouched, not in events; its lines to there: {head:#?}", case.file)
            });
            assert_eq!(found.len(), 1, "{}:{line}: {found:?}", case.file);
            let data: Value = serde_json::from_str(&found[0]).unwrap();
            assert_eq!(&data, expected, "{}:{line}", case.file);
            assert!(
                !errors.contains_key(&key),
                "{}:{line}: untouched, yet in errors: {:?}",
                case.file,
                errors[&key]
            );
        }
        for line in &case.damaged {
            let key = (case.file.clone(), *line);
            assert!(
                events.contains_key(&key) || errors.contains_key(&key),
                "{}:{line}: damaged, in neither events nor errors",
                case.file
            );
        }
        let allowed: std::collections::HashSet<i64> =
            case.untouched.iter().map(|(l, _)| *l).chain(case.damaged.iter().copied()).collect();
        for (file, line) in errors.keys().filter(|(f, _)| *f == case.file) {
            assert!(
                allowed.contains(line),
                "{file}:{line}: in errors ({:?}), yet neither damaged nor untouched: {}",
                errors[&(file.clone(), *line)],
                String::from_utf8_lossy(&std::fs::read(dir.join(file)).unwrap())
                    .lines()
                    .take(*line as usize)
                    .last()
                    .unwrap_or_default()
            );
        }
    }
}

#[test]
fn damage_costs_only_the_damaged_lines_rupu() {
    let generated = tempfile::tempdir().unwrap();
    let options = txq::generate::RupuOptions { runs: 6, damage: false, ..Default::default() };
    txq::generate::write_rupu_corpus(generated.path(), &options).unwrap();
    let originals = originals(&generated.path().join(".rupu/transcripts"), "*");
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for k in 0..500u64 {
        let mut rng = Rng::derive(7, k);
        let (lines, values) = &originals[rng.below(originals.len() as u64) as usize];
        let pieces = damage(lines, &mut rng);
        let file = format!("./run_case{k:03}.jsonl");
        let data = |line: &Value| line.get("data").cloned().unwrap_or_else(|| json!({}));
        let (case, bytes) = case(file.clone(), values, &pieces, data, Some("run_start"));
        std::fs::write(dir.path().join(&file), bytes).unwrap();
        cases.push(case);
    }
    check_cases(dir.path(), "rupu", &cases);
}

#[test]
fn damage_costs_only_the_damaged_lines_reeval() {
    let generated = tempfile::tempdir().unwrap();
    let options = txq::generate::ReevalOptions { runs: 1, damage: false, raw: false, ..Default::default() };
    txq::generate::write_reeval_corpus(generated.path(), &options).unwrap();
    let originals = originals(generated.path(), "transcript.jsonl");
    assert!(!originals.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for k in 0..500u64 {
        let mut rng = Rng::derive(11, k);
        let (lines, values) = &originals[rng.below(originals.len() as u64) as usize];
        let pieces = damage(lines, &mut rng);
        let file = format!("./R/e/c/{k}/transcript.jsonl");
        std::fs::create_dir_all(dir.path().join(format!("R/e/c/{k}"))).unwrap();
        let (case, bytes) = case(file.clone(), values, &pieces, Value::clone, None);
        std::fs::write(dir.path().join(&file), bytes).unwrap();
        cases.push(case);
    }
    check_cases(dir.path(), "reeval", &cases);
}

#[test]
fn a_file_whose_run_start_is_damaged_or_missing_is_no_transcript_and_listed_in_files() {
    // Regression: such files fed usage, events and the export but never runs, so sums disagreed.
    let cases: [&[u8]; 3] = [
        &lines(&[&START.as_bytes()[..50], USAGE.as_bytes()]),
        &lines(&[START.replace("run_start", "run_stazt").as_bytes(), USAGE.as_bytes()]),
        &lines(&[USAGE.as_bytes(), br#"{"type":"net_flow","data":{"flow":{"host":"a"}}}"#]),
    ];
    for case in cases {
        let dir = transcript(&lines(&[START.as_bytes(), USAGE.as_bytes()]));
        std::fs::write(dir.path().join("run_2.jsonl"), case).unwrap();
        let (rows, stderr) = query(
            dir.path(),
            &[],
            "select (select count(*) from usage) as usage, (select count(*) from events) as events, (select count(*) from runs) as runs, (select count(*) from errors) as errors",
        );
        assert_eq!(Value::Object(rows[0].clone()), json!({"usage": 1, "events": 2, "runs": 1, "errors": 0}));
        assert_eq!(
            stderr,
            "txq: warning: ./run_2.jsonl: not read: no run_start line, so not rupu transcripts (step logs or \
             netflow ledgers?); `select file, skipped from rupu.files where not transcript` lists each with why\n"
        );
        let (rows, _) =
            query(dir.path(), &["-q"], "select file, transcript, skipped from files order by file");
        assert_eq!(
            Value::Array(rows.into_iter().map(Value::Object).collect()),
            json!([
                {"file": "./run_1.jsonl", "transcript": true, "skipped": null},
                {"file": "./run_2.jsonl", "transcript": false, "skipped": "no run_start line"},
            ])
        );
    }
    // A file with no rupu events but damage is not a transcript either (rupu's step logs).
    let dir = transcript(&lines(&[br#"{"type":"step","data":{}}"#, b"garbage", br#"{"type":"step"}"#]));
    let out = txq(&["-e", "select 1", "."], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("txq: note: no transcripts in ."), "{}", out.stderr);
}

// ---- Bounded fuzzing in process ----

#[test]
fn random_bytes_and_mutated_lines_never_panic() {
    let generated = tempfile::tempdir().unwrap();
    let options = txq::generate::RupuOptions { runs: 2, damage: true, ..Default::default() };
    txq::generate::write_rupu_corpus(generated.path(), &options).unwrap();
    let reeval = txq::generate::ReevalOptions { runs: 1, ..Default::default() };
    txq::generate::write_reeval_corpus(generated.path(), &reeval).unwrap();
    let seeds: Vec<Vec<u8>> = walk(generated.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    for k in 0..400u64 {
        let mut rng = Rng::derive(3, k);
        let bytes: Vec<u8> = if k % 4 == 0 {
            (0..rng.size(0, 400)).map(|_| rng.below(256) as u8).collect()
        } else {
            let mut bytes = seeds[rng.below(seeds.len() as u64) as usize].clone();
            bytes.truncate(rng.size(0, 6000));
            for _ in 0..rng.size(1, 8) {
                let at = rng.below(bytes.len() as u64 + 1) as usize;
                match rng.below(4) {
                    0 => bytes.splice(at..at, garbage(&mut rng)).for_each(drop),
                    1 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
                    2 if at < bytes.len() => drop(bytes.remove(at)),
                    _ => bytes.splice(at..at, rng.pick(OTHER_SHAPES).bytes().chain([b'\n'])).for_each(drop),
                }
            }
            bytes
        };
        let block = rng.size(1, 64);
        let max_line_bytes = if rng.percent(30) { rng.size(1, 300) } else { 1 << 20 };
        harness::check(&bytes, block, max_line_bytes);
    }
}

#[test]
fn a_crlf_line_one_byte_over_the_limit_is_cut_the_same_in_any_blocks() {
    // Regression: the splitter counted the CR of a CRLF line against the limit only when the
    // line spanned blocks.
    let bytes = b"01234567\r\nabc\r\n";
    assert_eq!(harness::split(bytes, 4, 8), harness::split(bytes, 100, 8));
    assert_eq!(harness::split(bytes, 9, 8), ["1 whole \"01234567\"", "2 whole \"abc\""]);
}

#[test]
fn an_over_long_line_that_starts_a_block_is_cut_the_same_in_any_blocks() {
    // Regression (found by `cargo fuzz run lines`): a line over the limit that began a block was
    // held whole instead of counted, and so read as blank when it was.
    assert_eq!(harness::split(b"  ", 1, 0), ["1 too long 2 \"  \""]);
    assert_eq!(harness::split(b"  ", 2, 0), ["1 too long 2 \"  \""]);
    assert_eq!(harness::split(b"0123456789\n", 11, 8), harness::split(b"0123456789\n", 3, 8));
}
