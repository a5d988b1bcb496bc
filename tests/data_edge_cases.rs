//! Data edge cases: no line can break a query or change an answer it does not belong to. Names
//! from the data that clash or are no SQL names, files with no `run_start`, line ends and padding,
//! whole numbers, token counts, required fields and cut strings, each read by the real binary.

use crate::robustness::{START, USAGE, transcript};
use crate::util::{int, parse_ndjson, text, txq};
use serde_json::{Map, Value, json};
use std::path::Path;

fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Rows (ndjson) and stderr of `sql` over `dir`; exit 0 asserted.
fn query(dir: &Path, args: &[&str], sql: &str) -> (Vec<Map<String, Value>>, String) {
    let mut all = vec!["--no-cache", "--format", "ndjson"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-e", sql, "."]);
    let out = txq(&all, dir);
    assert_eq!(out.code, 0, "txq failed on {sql}: {}", out.stderr);
    (parse_ndjson(&out.stdout), out.stderr)
}

fn rows(dir: &Path, sql: &str) -> Value {
    Value::Array(query(dir, &["-q"], sql).0.into_iter().map(Value::Object).collect())
}

fn reasons(dir: &Path) -> Vec<(i64, String)> {
    let (rows, _) = query(dir, &["-q"], "select line, reason from rupu.errors order by line, reason");
    rows.iter().map(|r| (int(r, "line").unwrap(), text(r, "reason"))).collect()
}

// ---- Names from the data ----

#[test]
fn types_named_like_txqs_own_tables_or_no_sql_name_get_other_names_and_every_statement_works() {
    // Regression: each of these types made every statement fail with "The table runs already
    // exists", naming no file or line.
    let types = ["runs", "events", "errors", "files", "", "a-b", "a_b", "Usage", "mcp.call", "9lives"];
    let mut body = vec![START.to_string(), USAGE.to_string()];
    body.extend(types.iter().map(|t| json!({"type": t, "data": {"k": 1}}).to_string()));
    let dir = transcript(lines(&body.iter().map(String::as_str).collect::<Vec<_>>()).as_bytes());
    let (counted, stderr) = query(dir.path(), &[], "select count(*) as n from usage");
    assert_eq!(Value::Object(counted[0].clone()), json!({"n": 1}));
    let expected_names = [
        ("runs", "type_runs", 3),
        ("events", "type_events", 4),
        ("errors", "type_errors", 5),
        ("files", "type_files", 6),
        ("", "type_", 7),
        ("a-b", "type_a_b", 8),
        ("a_b", "a_b", 9),
        ("Usage", "type_usage", 10),
        ("mcp.call", "mcp_call", 11),
        ("9lives", "type_9lives", 12),
    ];
    for (type_name, table, line) in expected_names {
        assert_eq!(
            rows(dir.path(), &format!("select line, k from rupu.{table}")),
            json!([{"line": line, "k": 1}]),
            "{table}"
        );
        if type_name != table {
            let warning = format!(
                "txq: warning: ./run_1.jsonl:{line}: event type {} is table rupu.{table} (",
                json!(type_name)
            );
            assert!(stderr.contains(&warning), "no warning {warning:?} in {stderr}");
        }
    }
    assert!(!stderr.contains("table rupu.a_b "), "a type named as an identifier keeps its name: {stderr}");
    // The built-in tables keep their names and meaning; events keeps each type as written.
    let out = rows(
        dir.path(),
        "select (select count(*) from runs) as runs, (select count(*) from errors) as errors, (select count(*) from files) as files",
    );
    assert_eq!(out, json!([{"runs": 1, "errors": 0, "files": 1}]));
    let out = rows(dir.path(), "select type from events where line > 2 order by line");
    let written: Vec<Value> = types.iter().map(|t| json!({"type": t})).collect();
    assert_eq!(out, Value::Array(written));
}

#[test]
fn thousands_of_renamed_types_are_warned_of_ten_by_name_and_the_rest_counted() {
    let mut body = vec![START.to_string()];
    body.extend((0..5000).map(|i| json!({"type": format!("mcp.tool{i}"), "data": {"k": i}}).to_string()));
    let dir = transcript(lines(&body.iter().map(String::as_str).collect::<Vec<_>>()).as_bytes());
    let (counted, stderr) = query(dir.path(), &[], "select count(*) as n from events");
    assert_eq!(Value::Object(counted[0].clone()), json!({"n": 5001}));
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 11, "{stderr}");
    assert!(
        warnings[0]
            .starts_with("txq: warning: ./run_1.jsonl:2: event type \"mcp.tool0\" is table rupu.mcp_tool0 ("),
        "{stderr}"
    );
    assert!(
        warnings[10].starts_with("txq: warning: and 4990 more event types are tables of other names;"),
        "{stderr}"
    );
    assert_eq!(rows(dir.path(), "select k from mcp_tool4999"), json!([{"k": 4999}]));
}

#[test]
fn an_unknown_rupu_type_named_like_a_reeval_table_does_not_take_its_unqualified_name() {
    let dir = tempfile::tempdir().unwrap();
    let rupu = lines(&[START, r#"{"type":"tool","data":{"k":1}}"#, r#"{"type":"prompt","data":{"k":2}}"#]);
    std::fs::write(dir.path().join("run_1.jsonl"), rupu).unwrap();
    let attempt = dir.path().join(".reeval/runs/R1/e/c/1");
    std::fs::create_dir_all(&attempt).unwrap();
    let reeval = lines(&[
        r#"{"type":"prompt","turn":0,"ts":"2026-09-26T17:40:57.860Z","atMs":0,"text":"go"}"#,
        r#"{"type":"tool","turn":0,"ts":"2026-09-26T17:40:58.860Z","atMs":1000,"tool":"bash","ok":true}"#,
        r#"{"type":"tool","turn":0,"ts":"2026-09-26T17:40:59.860Z","atMs":2000,"tool":"glob","ok":false}"#,
    ]);
    std::fs::write(attempt.join("transcript.jsonl"), reeval).unwrap();
    let out = rows(
        dir.path(),
        "select (select count(*) from tool) as tool, (select count(*) from prompt) as prompt, (select count(*) from rupu.tool) as rupu_tool, (select count(*) from runs) as runs",
    );
    assert_eq!(out, json!([{"tool": 2, "prompt": 1, "rupu_tool": 1, "runs": 1}]));
}

#[test]
fn two_reeval_types_that_differ_by_dash_and_underscore_are_two_tables() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = dir.path().join(".reeval/runs/R1/e/c/1");
    std::fs::create_dir_all(&attempt).unwrap();
    let reeval = lines(&[
        r#"{"type":"prompt","turn":0,"ts":"2026-09-26T17:40:57.860Z","atMs":0,"text":"go"}"#,
        r#"{"type":"a-b","turn":0,"k":1}"#,
        r#"{"type":"a_b","turn":0,"k":2}"#,
        r#"{"type":"turn_end","turn":0,"k":3}"#,
        r#"{"type":"turn-end","turn":0,"status":"completed","durationMs":5}"#,
    ]);
    std::fs::write(attempt.join("transcript.jsonl"), reeval).unwrap();
    let (all, stderr) = query(
        dir.path(),
        &[],
        "select k from reeval.a_b union all select k from reeval.type_a_b union all select k from reeval.type_turn_end union all select duration_ms from reeval.turn_end",
    );
    let ks: Vec<Value> = all.into_iter().map(|mut r| r.remove("k").unwrap()).collect();
    assert_eq!(ks.len(), 4);
    assert!(
        ks.contains(&json!(1)) && ks.contains(&json!(2)) && ks.contains(&json!(3)) && ks.contains(&json!(5)),
        "{ks:?}"
    );
    assert_eq!(rows(dir.path(), "select k from reeval.a_b"), json!([{"k": 2}]));
    assert!(
        stderr.contains(r#"transcript.jsonl:2: event type "a-b" is table reeval.type_a_b (a_b is a table"#),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            r#"transcript.jsonl:4: event type "turn_end" is table reeval.type_turn_end (turn_end is a table"#
        ),
        "{stderr}"
    );
}

#[test]
fn field_names_that_are_no_sql_names_become_columns_that_need_no_quotes() {
    let dir = transcript(
        lines(&[START, r#"{"type":"probe","data":{"inputTokens":5,"a.b":"x","":"e","7up":true}}"#])
            .as_bytes(),
    );
    assert_eq!(
        rows(dir.path(), "select input_tokens, a_b, field_, field_7up from probe"),
        json!([{"input_tokens": 5, "a_b": "x", "field_": "e", "field_7up": true}])
    );
}

// ---- Files that are not transcripts ----

#[test]
fn a_large_file_that_is_not_json_lines_is_read_no_further_than_its_first_block() {
    let dir = transcript(lines(&[START, USAGE]).as_bytes());
    let junk: String = (0..1_000_000).map(|i| format!("log line {i}: nothing JSON here\n")).collect();
    let path = dir.path().join("run_2.jsonl");
    std::fs::write(&path, &junk).unwrap();
    let (_, stderr) = query(dir.path(), &[], "select count(*) from usage");
    assert!(
        stderr.starts_with("txq: warning: ./run_2.jsonl: not read: not JSON Lines: none of the first "),
        "{stderr}"
    );
    // The inference pass stopped after its first block (4 MiB), not at the end of 35 MB.
    let format = txq::format::all().into_iter().next().unwrap();
    let file = txq::source::discover::discover(std::slice::from_ref(&format), std::slice::from_ref(&path))
        .unwrap()
        .files
        .remove(0)
        .get(0);
    let stats = futures::executor::block_on(txq::infer::pass::infer_file(
        txq::source::read::local_store(),
        &format,
        &file,
        1 << 20,
        0,
        None,
    ));
    let block = txq::infer::pass::JSON_LINES_PROOF_BYTES as usize;
    let lines_in_first_block = junk.as_bytes()[..block].iter().filter(|b| **b == b'\n').count();
    assert_eq!(stats.lines as usize, lines_in_first_block);
    assert!(lines_in_first_block < 1_000_000 / 4);
}

// ---- Lines ----

#[test]
fn cr_only_line_endings_lose_no_line() {
    // Regression: a file of CR-ended lines was one unterminated line, dropped silently.
    let dir = transcript(format!("{START}\r{USAGE}\r{USAGE}\r\n{USAGE}").as_bytes());
    assert_eq!(
        rows(dir.path(), "select line, input_tokens from usage order by line"),
        json!([{"line": 2, "input_tokens": 10}, {"line": 3, "input_tokens": 10}, {"line": 4, "input_tokens": 10}])
    );
}

#[test]
fn nul_padding_before_a_line_loses_no_event() {
    // Regression: the NULs a crash leaves before the next writer's line damaged that line.
    let dir = transcript(format!("{START}\n\0\0\0\0{USAGE}\n\0\0\0\n{USAGE}\n").as_bytes());
    assert_eq!(rows(dir.path(), "select line from usage order by line"), json!([{"line": 2}, {"line": 4}]));
    assert_eq!(
        reasons(dir.path()),
        [(3, "not valid JSON at column 1: a character JSON does not allow there".to_string())]
    );
}

#[test]
fn a_complete_last_line_that_is_no_event_is_listed_and_a_cut_one_is_not() {
    // Regression: any unterminated last line was skipped as cut off, `{"type":5}` included.
    for (last, listed) in [
        (r#"{"type":5}"#, Some("\"type\" is an integer, not a string")),
        ("[1,2]", Some("not a JSON object but an array")),
        ("garbage", Some("not valid JSON at column 1: a character JSON does not allow there")),
        (
            r#"{"type":"usage","data":{"input_tokens":1}} x"#,
            Some("not valid JSON at column 44: more after the end of the JSON value"),
        ),
        (r#"{"type":"us"#, None),
        (r#"{"type":"usage","data":{"input_tokens":12"#, None),
    ] {
        let dir = transcript(format!("{START}\n{USAGE}\n{last}").as_bytes());
        let expected: Vec<(i64, String)> = listed.map(|r| (3, r.to_string())).into_iter().collect();
        assert_eq!(reasons(dir.path()), expected, "{last}");
        let (_, stderr) = query(dir.path(), &[], "select count(*) from usage");
        assert_eq!(stderr.is_empty(), listed.is_none(), "{last}: {stderr}");
    }
}

#[test]
fn a_damaged_last_line_is_counted_once_as_the_file_grows() {
    let cache = tempfile::tempdir().unwrap();
    let dir = transcript(format!("{START}\n{USAGE}\n[1,2]").as_bytes());
    let run = |sql: &str| {
        let out = crate::util::command(dir.path())
            .args(["--format", "ndjson", "-e", sql, "."])
            .env("TXQ_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        (parse_ndjson(&String::from_utf8(out.stdout).unwrap()), String::from_utf8(out.stderr).unwrap())
    };
    let (_, stderr) = run("select count(*) from usage");
    assert!(stderr.contains("skipped 1 damaged line in 1 file"), "{stderr}");
    let mut file = std::fs::OpenOptions::new().append(true).open(dir.path().join("run_1.jsonl")).unwrap();
    std::io::Write::write_all(&mut file, format!("\n{USAGE}\n").as_bytes()).unwrap();
    drop(file);
    let (rows, stderr) = run("select count(*) as n from usage");
    assert_eq!(Value::Object(rows[0].clone()), json!({"n": 2}));
    assert!(stderr.contains("skipped 1 damaged line in 1 file"), "{stderr}");
    let (rows, _) = run("select damaged_lines from files");
    assert_eq!(Value::Object(rows[0].clone()), json!({"damaged_lines": 1}));
}

#[test]
fn a_lone_surrogate_keeps_the_text_with_a_replacement_character() {
    // Regression: JavaScript cuts a string through an emoji at 8 KB and writes `\ud83d` alone;
    // the whole string read as null.
    let dir = transcript(
        lines(&[
            START,
            r#"{"type":"tool_result","data":{"call_id":"c","output":"all green \ud83d"}}"#,
            r#"{"type":"assistant_message","data":{"content":"\ude00 then a pair \ud83d\ude00"}}"#,
        ])
        .as_bytes(),
    );
    assert_eq!(rows(dir.path(), "select output from tool_result"), json!([{"output": "all green \u{FFFD}"}]));
    assert_eq!(
        rows(dir.path(), "select content from assistant_message"),
        json!([{"content": "\u{FFFD} then a pair \u{1F600}"}])
    );
    assert!(reasons(dir.path()).is_empty());
}

// ---- Values ----

#[test]
fn whole_numbers_in_any_notation_fill_bigint_columns_and_fractions_are_listed() {
    let dir = transcript(
        lines(&[
            START,
            r#"{"type":"usage","data":{"model":"m","input_tokens":1.0,"output_tokens":1e2}}"#,
            r#"{"type":"usage","data":{"model":"m","input_tokens":25.00e1,"output_tokens":1.5}}"#,
            r#"{"type":"command_run","data":{"exit_code":-1.0e0,"stdout_bytes":12e-1}}"#,
        ])
        .as_bytes(),
    );
    assert_eq!(
        rows(dir.path(), "select input_tokens, output_tokens from usage order by line"),
        json!([{"input_tokens": 1, "output_tokens": 100}, {"input_tokens": 250, "output_tokens": null}])
    );
    assert_eq!(
        rows(dir.path(), "select exit_code, stdout_bytes from command_run"),
        json!([{"exit_code": -1, "stdout_bytes": null}])
    );
    assert_eq!(
        reasons(dir.path()),
        [
            (3, "usage.output_tokens: expected bigint (a count), found 1.5: not a whole number".to_string()),
            (4, "command_run.stdout_bytes: expected bigint, found 12e-1: not a whole number".to_string()),
        ]
    );
}

#[test]
fn token_counts_out_of_range_are_damage_so_sums_never_wrap() {
    // Regression: two counts of 2^62 summed to a negative number.
    let big = 1i64 << 62;
    let usage =
        |n: i64| format!(r#"{{"type":"usage","data":{{"model":"m","input_tokens":{n},"output_tokens":1}}}}"#);
    let dir = transcript(
        lines(&[START, &usage(big), &usage(big), &usage(-5), &usage(4_294_967_295), USAGE]).as_bytes(),
    );
    assert_eq!(
        rows(dir.path(), "select sum(input_tokens) as input, count(input_tokens) as counted from usage"),
        json!([{"input": 4_294_967_305i64, "counted": 2}])
    );
    assert_eq!(
        rows(dir.path(), "select input_tokens from runs"),
        json!([{"input_tokens": 4_294_967_305i64}])
    );
    let listed = reasons(dir.path());
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(
        listed[0],
        (
            2,
            format!(
                "usage.input_tokens: expected bigint (a count), found {big}: a count is from 0 to 4294967295"
            )
        )
    );
    assert_eq!(listed[2].0, 4);
}

#[test]
fn a_run_complete_without_a_text_status_is_damage_not_an_aborted_run() {
    // Regression: a run_complete whose status was missing, null or a number made an "aborted" run.
    for status in ["", r#","status":null"#, r#","status":5"#] {
        let complete =
            format!(r#"{{"type":"run_complete","data":{{"run_id":"run_1","total_tokens":13{status}}}}}"#);
        let dir = transcript(lines(&[START, USAGE, &complete]).as_bytes());
        assert_eq!(
            rows(dir.path(), "select status, total_tokens from runs"),
            json!([{"status": null, "total_tokens": 13}]),
            "{status}"
        );
        let listed = reasons(dir.path());
        assert_eq!(listed.len(), 1, "{status}: {listed:?}");
        assert!(listed[0].1.starts_with("run_complete.status: expected text, found "), "{listed:?}");
    }
    let dir = transcript(lines(&[START, USAGE]).as_bytes());
    assert_eq!(rows(dir.path(), "select status from runs"), json!([{"status": "aborted"}]));
}

#[test]
fn errors_over_a_file_of_twenty_thousand_types_checks_every_value() {
    // Regression: `errors` looked each line's table up among all tables and kept a value checker
    // per type: 40 000 types in 1.6 MB took 131 s and 1.3 GB (debug build); now a hash lookup
    // and a few checkers at a time (3 s, 278 MB, about what `select 1` takes over that file).
    let bad = r#"{"type":"usage","data":{"model":"m","input_tokens":"many","output_tokens":1}}"#;
    let mut body = vec![START.to_string()];
    for i in 0..40_000 {
        body.push(json!({"type": format!("t{}", i % 20_000), "data": {"k": i}}).to_string());
        if i % 10_000 == 9_999 {
            body.push(bad.to_string());
        }
    }
    let dir = transcript(lines(&body.iter().map(String::as_str).collect::<Vec<_>>()).as_bytes());
    let reason = "usage.input_tokens: expected bigint (a count), found a string";
    assert_eq!(
        rows(dir.path(), "select line, reason from errors order by line"),
        json!([
            {"line": 10_002, "reason": reason},
            {"line": 20_003, "reason": reason},
            {"line": 30_004, "reason": reason},
            {"line": 40_005, "reason": reason},
        ])
    );
}
