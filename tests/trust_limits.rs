//! Limits that keep txq trustworthy on any input: memory held to `--memory-limit` (sorts spill
//! and finish, what cannot spill fails naming the flag), flags refused below sane values, paths
//! that cannot be read saying why, FIFOs never opened, timestamps of any RFC 3339 year, and one
//! rule for a repeated key.

use crate::util::{Generated, int, parse_ndjson, text, txq};
use serde_json::{Value, json};
use std::path::Path;
use txq::generate::RupuOptions;

/// A corpus whose `events.data` is about 12 MB: tool outputs of 20 to 60 KB.
pub(crate) fn wide_corpus() -> &'static Generated {
    static CORPUS: std::sync::OnceLock<Generated> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        Generated::new(&RupuOptions {
            seed: 11,
            runs: 60,
            damage: false,
            tool_output_bytes: (20_000, 60_000),
            ..RupuOptions::default()
        })
    })
}

/// `sql` run by the real binary on `corpus` with `args` before it, as ndjson.
fn run(corpus: &Generated, args: &[&str], sql: &str) -> crate::util::Output {
    let dir = corpus.transcripts();
    let mut all = vec!["--no-cache", "--format", "ndjson"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-e", sql, dir.to_str().unwrap()]);
    txq(&all, corpus.dir.path())
}

/// (data, file, line) of every event.
fn keyed_rows(rows: &[serde_json::Map<String, Value>]) -> Vec<(String, String, i64)> {
    rows.iter().map(|r| (text(r, "data"), text(r, "file"), int(r, "line").unwrap())).collect()
}

#[test]
fn a_sort_larger_than_the_memory_limit_spills_to_disk_and_gives_every_row_in_order() {
    let corpus = wide_corpus();
    let limit = ["--memory-limit", "8M"];
    let sorted = "select data, file, line from events order by data, file, line";
    let out = run(corpus, &limit, sorted);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    let rows = keyed_rows(&parse_ndjson(&out.stdout));

    let events: u64 = corpus.expected.events_by_type.values().sum();
    assert_eq!(rows.len() as u64, events);
    let bytes: usize = rows.iter().map(|(data, ..)| data.len()).sum();
    assert!(bytes > 10 << 20, "the sort is not larger than the limit: {bytes} bytes");
    // The same rows unsorted, under no limit to speak of, sorted here: byte order of the text,
    // as DataFusion orders Utf8.
    let out = run(corpus, &["--memory-limit", "4G"], "select data, file, line from events");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut expected = keyed_rows(&parse_ndjson(&out.stdout));
    expected.sort();
    assert!(rows == expected, "the rows sorted under --memory-limit 8M are not in order");

    // It spilled.
    let out = run(corpus, &limit, &format!("explain analyze {sorted}"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan: String = parse_ndjson(&out.stdout).iter().map(|r| text(r, "plan")).collect();
    let sort = plan.lines().find(|l| l.contains("SortExec")).expect("a SortExec");
    let spills: u64 = sort
        .split("spill_count=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no spill_count in {sort}"));
    assert!(spills > 0, "the sort did not spill: {sort}");
}

#[test]
fn a_statement_that_cannot_spill_within_the_memory_limit_fails_naming_the_flag() {
    let corpus = wide_corpus();
    let out = run(
        corpus,
        &["--memory-limit", "1M"],
        "select count(*) from events a join events b on a.data = b.data",
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let prefix = "txq: error: the statement needs more memory than --memory-limit 1 MiB allows, even spilling to disk (";
    assert!(
        out.stderr.starts_with(prefix) && out.stderr.ends_with("); raise --memory-limit\n"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn memory_limits_are_sizes_and_a_wrong_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for size in ["2G", "512M", "1.5GiB", "100000000", "64 MiB"] {
        let out = txq(&["--memory-limit", size, "-e", "select 1 as x", "--format", "csv", "."], dir.path());
        // Nothing to read here: the flag was taken, and the statement ran on empty tables.
        assert_eq!((out.code, out.stdout.as_str()), (0, "x\n1\n"), "{size}: {}", out.stderr);
        assert!(out.stderr.starts_with("txq: note: no transcripts in ."), "{size}: {}", out.stderr);
    }
    for (size, why) in [
        ("2X", r#"unknown unit in "2X": use B, K, M, G, T (powers of 1024) or KB, MB, GB, TB"#),
        ("lots", r#"not a size: "lots" (expected a number and a unit, e.g. 2G or 512MiB)"#),
        ("0", "a memory limit of 0 bytes leaves no statement anything to run in"),
    ] {
        let out = txq(&["--memory-limit", size, "-e", "select 1", "."], dir.path());
        assert_eq!(out.code, 2);
        assert!(
            out.stderr
                .starts_with(&format!("error: invalid value '{size}' for '--memory-limit <SIZE>': {why}\n")),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_spill_directory_given_holds_the_sessions_spill_files_and_is_left_empty() {
    let corpus = wide_corpus();
    let spill = tempfile::tempdir().unwrap();
    let options = txq::sql::session::Options {
        memory: txq::sql::memory::MemoryOptions {
            limit: 8 << 20,
            spill_dir: Some(spill.path().to_path_buf()),
        },
        ..Default::default()
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let engine = txq::sql::session::open(&[corpus.transcripts()], options).await.expect("opens");
        let frame = engine.ctx.sql("select data from events order by data").await.unwrap();
        let mut stream = frame.execute_stream().await.unwrap();
        use futures::StreamExt;
        let first = stream.next().await.expect("a batch").unwrap();
        assert!(first.num_rows() > 0);
        // The sort spilled its runs into a directory of its own inside the one given.
        let inside: Vec<_> = std::fs::read_dir(spill.path()).unwrap().collect();
        assert_eq!(inside.len(), 1);
        drop(stream);
        drop(engine);
    });
    // Once the session and its tasks are gone.
    drop(runtime);
    assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0);
}

#[test]
fn a_max_line_bytes_below_one_kib_is_refused_at_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let out = txq(&["--max-line-bytes", "300", "-e", "select 1", "."], dir.path());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(
            "error: invalid value '300' for '--max-line-bytes <SIZE>': 300 bytes is below the smallest line limit, 1024 (1K): ordinary events are longer\n"
        ),
        "{}",
        out.stderr
    );
    for size in ["1K", "1024", "64M"] {
        let out = txq(&["--max-line-bytes", size, "-e", "select 1", "."], dir.path());
        assert_eq!(out.code, 0, "{size}: {}", out.stderr);
        assert!(out.stderr.starts_with("txq: note: no transcripts in ."), "{size}: {}", out.stderr);
    }
}

#[test]
fn a_symlink_loop_or_a_name_too_long_on_the_command_line_says_so_not_no_such_file() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
    std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
    let out = txq(&["-e", "select 1", "a"], dir.path());
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr, "txq: error: a: symlink loop (too many levels of symbolic links)\n");

    let long = "x".repeat(300);
    let out = txq(&["-e", "select 1", &long], dir.path());
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!("txq: error: {long}: name too long (a name over 255 bytes, or a path over 4096 bytes)\n")
    );
    // Still: what is not there is said to be missing.
    let out = txq(&["-e", "select 1", "gone"], dir.path());
    assert_eq!(out.stderr, "txq: error: gone: no such file or directory\n");
}

#[test]
fn a_fifo_or_a_device_is_skipped_with_its_reason_and_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let transcripts = dir.path().join("t");
    std::fs::create_dir(&transcripts).unwrap();
    std::fs::write(
        transcripts.join("run_1.jsonl"),
        "{\"type\":\"run_start\",\"data\":{\"run_id\":\"run_1\",\"agent\":\"a\"}}\n",
    )
    .unwrap();
    // Opening either would block until a writer came: the test would never end.
    for fifo in [transcripts.join("run_x.jsonl"), dir.path().join("run_y.jsonl")] {
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success());
    }
    let out = txq(
        &[
            "--no-cache",
            "--format",
            "csv",
            "-e",
            "select run_id from run_start",
            "t",
            "run_y.jsonl",
            "/dev/null",
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "run_id\nrun_1\n");
    assert_eq!(
        out.stderr,
        "txq: warning: t/run_x.jsonl: not read: not a regular file: a FIFO\n\
         txq: warning: run_y.jsonl: not read: not a regular file: a FIFO\n\
         txq: warning: /dev/null: not read: not a regular file: a character device\n"
    );
}

/// A directory holding `run_1.jsonl` with these lines.
fn transcript(lines: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run_1.jsonl"),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    dir
}

fn query(dir: &Path, sql: &str) -> Vec<serde_json::Map<String, Value>> {
    let out = txq(&["--no-cache", "--format", "ndjson", "-e", sql, "."], dir);
    assert_eq!(out.code, 0, "{sql}: {}", out.stderr);
    parse_ndjson(&out.stdout)
}

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

#[test]
fn timestamps_of_any_rfc_3339_year_are_kept_not_only_arrows_nanosecond_range() {
    let times = [
        "1500-01-01T00:00:00Z",
        "2300-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999Z",
        "0001-01-01T00:00:00Z",
        "2026-01-01T00:00:00+05:30",
        "2016-12-31T23:59:60Z",
        "yesterday",
    ];
    let mut lines = vec![START.to_string()];
    for (i, ts) in times.iter().enumerate() {
        lines.push(format!(r#"{{"type":"net_flow","data":{{"flow":{{"id":"f{i}","ts":"{ts}"}}}}}}"#));
    }
    let dir = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    let rows = query(dir.path(), "select id, cast(ts as bigint) as micros, ts from net_flow order by id");
    let micros: Vec<Option<i64>> = rows.iter().map(|r| int(r, "micros")).collect();
    assert_eq!(
        micros,
        [
            Some(-14_831_769_600_000_000),
            Some(10_413_792_000_000_000),
            Some(253_402_300_799_999_999),
            Some(-62_135_596_800_000_000),
            // 18:30 on the last day of 2025 in UTC.
            Some(1_767_205_800_000_000),
            // A leap second is the next second's start.
            Some(1_483_228_800_000_000),
            None,
        ]
    );
    assert_eq!(rows[0]["ts"], "1500-01-01T00:00:00Z");
    assert_eq!(rows[2]["ts"], "9999-12-31T23:59:59.999999Z");
    let errors = query(dir.path(), "select line, reason from errors order by line");
    assert_eq!(
        errors.into_iter().map(Value::Object).collect::<Vec<_>>(),
        [json!({"line": 8, "reason": "net_flow.ts: not an RFC 3339 timestamp: \"yesterday\""})]
    );
}

#[test]
fn a_repeated_key_is_read_by_its_first_value_in_every_column_table_and_function() {
    let dir = transcript(&[
        START,
        r#"{"type":"usage","data":{"model":"m","input_tokens":1,"input_tokens":2,"output_tokens":3}}"#,
        r#"{"type":"usage","type":"tool_call","data":{"model":"m2","input_tokens":5}}"#,
        r#"{"type":"usage","data":{"model":"first"},"data":{"model":"second"}}"#,
        r#"{"type":"usage","data":{"model":"m","note":7,"note":"seven"}}"#,
        r#"{"data":{"model":"x"},"type":"usage","type":"tool_call"}"#,
        r#"{"type":"net_flow","data":{"flow":{"id":"f1","ctx":{"run_id":"a","run_id":"b"}}}}"#,
    ]);
    let rows = query(dir.path(), "select line, model, input_tokens, note from usage order by line");
    assert_eq!(
        rows.into_iter().map(Value::Object).collect::<Vec<_>>(),
        [
            json!({"line": 2, "model": "m", "input_tokens": 1, "note": null}),
            json!({"line": 3, "model": "m2", "input_tokens": 5, "note": null}),
            json!({"line": 4, "model": "first", "input_tokens": null, "note": null}),
            // The column is a bigint: the inference pass saw the first value only.
            json!({"line": 5, "model": "m", "input_tokens": null, "note": 7}),
            json!({"line": 6, "model": "x", "input_tokens": null, "note": null}),
        ]
    );
    // The counts of the inference pass, and a read of every line, find the same lines.
    assert_eq!(query(dir.path(), "select count(*) as n from usage")[0]["n"], 5);
    assert_eq!(query(dir.path(), "select count(line) as n from usage")[0]["n"], 5);
    let types = query(dir.path(), "select type, count(*) as n from events group by type order by type");
    assert_eq!(
        types.into_iter().map(Value::Object).collect::<Vec<_>>(),
        [
            json!({"type": "net_flow", "n": 1}),
            json!({"type": "run_start", "n": 1}),
            json!({"type": "usage", "n": 5})
        ]
    );
    let events = query(
        dir.path(),
        "select line, data->>'input_tokens' as tokens, data->>'model' as model from events where type = 'usage' order by line",
    );
    let read: Vec<(Value, Value)> =
        events.iter().map(|r| (r["tokens"].clone(), r["model"].clone())).collect();
    assert_eq!(
        read,
        [
            (json!("1"), json!("m")),
            (json!("5"), json!("m2")),
            (Value::Null, json!("first")),
            (Value::Null, json!("m")),
            (Value::Null, json!("x")),
        ]
    );
    let flows = query(dir.path(), "select ctx['run_id'] as run_id from net_flow");
    assert_eq!(flows[0]["run_id"], "a");
}

/// A config or prices file that is a device, a directory or larger than its limit is refused
/// with a clear error and exit code 2, and never read (`/dev/zero` grew to 7 GB before).
#[test]
fn a_config_or_prices_file_that_is_a_device_or_too_large_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let large = dir.path().join("large.toml");
    std::fs::write(&large, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
    let cases: [(&str, &Path, &str); 4] = [
        ("TXQ_CONFIG", Path::new("/dev/zero"), "not a regular file: a character device"),
        ("TXQ_CONFIG", &large, "larger than 1 MiB"),
        ("TXQ_PRICES", Path::new("/dev/zero"), "not a regular file: a character device"),
        ("TXQ_PRICES", dir.path(), "not a regular file: a directory"),
    ];
    for (variable, path, why) in cases {
        let out = crate::util::command(dir.path())
            .args(["-e", "select 1"])
            .arg(dir.path())
            .env(variable, path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variable}={}: {stderr}", path.display());
        assert!(stderr.contains(why), "{variable}={}: {stderr}", path.display());
        assert!(out.stdout.is_empty());
    }
}
