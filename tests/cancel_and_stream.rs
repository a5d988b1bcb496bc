//! Cancelling and streaming: Ctrl-C stops any statement (a script with exit 130, the
//! shell back to its prompt) while DataFusion keeps every worker busy; the scan reports through
//! plan metrics and a statement warns of what it read only; row counts come from the corpus;
//! results stream in every format, `--maxrows` included.

use crate::util::{Generated, cache_dir, default_corpus, txq};
use std::process::Stdio;
use std::time::{Duration, Instant};
use txq::generate::RupuOptions;

/// A statement no statistic answers and no machine ends soon: it reads a value of every line.
const ENDLESS: &str =
    "select sum(a.line + b.line + c.line + d.line) from events a, events b, events c, events d";

const START_1: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;
const START_2: &str =
    r#"{"type":"run_start","data":{"run_id":"run_2","agent":"a","started_at":"2026-10-08T09:14:03Z"}}"#;
const USAGE: &str = r#"{"type":"usage","data":{"model":"m","input_tokens":10,"output_tokens":3}}"#;

/// Two transcripts: run_1 clean, run_2 with one damaged line and a value of the wrong type.
fn one_clean_one_damaged() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START_1}\n{USAGE}\n{USAGE}\n")).unwrap();
    let wrong = r#"{"type":"usage","data":{"model":"m","input_tokens":"ten","output_tokens":3}}"#;
    std::fs::write(dir.path().join("run_2.jsonl"), format!("{START_2}\n{USAGE}\nnot json\n{wrong}\n"))
        .unwrap();
    dir
}

/// Whether the process `pid` has started the thread that takes Ctrl-C (Linux: its threads are
/// named in /proc).
fn watches_ctrl_c(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.trim() == "txq-ctrl-c")
    })
}

/// Waits for `child` to end, killing it (and failing) if it hangs past a generous bound.
fn wait_or_fail(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let bound = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > bound {
            let _ = child.kill();
            panic!("{what}: still running a minute after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_a_script_whose_statement_keeps_every_worker_busy_with_exit_130() {
    // Regression: the signal was taken by the query's own runtime, whose workers DataFusion's
    // tasks kept busy, so Ctrl-C went unseen until the process was killed.
    let c = default_corpus();
    let mut child = crate::util::command(c.dir.path())
        .args(["--no-cache", "-e", ENDLESS, c.transcripts().to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let bound = Instant::now() + Duration::from_secs(60);
    while !watches_ctrl_c(pid) {
        assert!(Instant::now() < bound, "txq never started watching Ctrl-C");
        assert!(child.try_wait().unwrap().is_none(), "txq ended before Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well into the statement.
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "the statement ended by itself");
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let status = wait_or_fail(&mut child, "the script");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.ends_with("txq: query cancelled\n"), "{stderr}");
}

#[test]
fn ctrl_c_in_the_shell_stops_a_statement_that_keeps_every_worker_busy() {
    // Regression: no progress line and no Ctrl-C until the terminal was killed.
    use rexpect::session::{Options, spawn_with_options};
    let c = default_corpus();
    let home = tempfile::tempdir().unwrap();
    let mut command = crate::util::command(c.dir.path());
    command
        .args(["--no-cache", c.transcripts().to_str().unwrap()])
        .env("TERM", "xterm")
        .env("HOME", home.path())
        .env("TXQ_HISTORY", home.path().join("history"))
        .env("TXQ_CACHE_DIR", cache_dir());
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    let mut s = spawn_with_options(command, options).unwrap();
    s.exp_string("txq> ").unwrap();
    s.send_line(&format!("{ENDLESS};")).unwrap();
    // The progress line, drawn by a thread of its own, says what the scans read.
    s.exp_string("files read").unwrap();
    s.exp_string("Ctrl-C cancels").unwrap();
    s.send_control('c').unwrap();
    s.exp_string("query cancelled").unwrap();
    s.exp_string("txq> ").unwrap();
    s.send_line("select 6 * 7 as answer;").unwrap();
    s.exp_string("42").unwrap();
    s.exp_string("txq> ").unwrap();
    s.send_line("\\q").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn a_statement_warns_only_of_what_it_read() {
    // Regression: the warning counted the damage of every file of the format whatever the
    // statement read, so a query pruned to one clean file warned of the others' damage.
    let dir = one_clean_one_damaged();
    let run = |sql: &str| {
        let out = txq(&["--no-cache", "--format", "csv", "-e", sql, "."], dir.path());
        assert_eq!(out.code, 0, "{sql}: {}", out.stderr);
        (out.stdout, out.stderr)
    };
    let (rows, stderr) =
        run("select count(*) as n, sum(input_tokens) as t from usage where run_id = 'run_1'");
    assert_eq!(rows, "n,t\n2,20\n");
    assert_eq!(stderr, "");
    let (rows, stderr) =
        run("select count(*) as n, sum(input_tokens) as t from usage where run_id = 'run_2'");
    assert_eq!(rows, "n,t\n2,10\n");
    assert_eq!(
        stderr,
        "txq: warning: skipped 1 damaged line in 1 file, read 1 value as null (wrong type) in 1 file; \
         `select * from rupu.errors` lists them\n"
    );
    // Two scans of the same file count its damage once.
    let (_, stderr) = run("select count(*) from usage a, usage b where a.file = b.file");
    assert_eq!(
        stderr,
        "txq: warning: skipped 1 damaged line in 1 file; `select * from rupu.errors` lists them\n"
    );
}

#[test]
fn explain_analyze_shows_what_each_scan_read() {
    let dir = one_clean_one_damaged();
    let out = txq(
        &["--no-cache", "--format", "csv", "-e", "explain analyze select sum(input_tokens) from usage", "."],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let scan = out.stdout.lines().find(|l| l.contains("TranscriptScan: rupu.usage")).expect(&out.stdout);
    let bytes = std::fs::metadata(dir.path().join("run_1.jsonl")).unwrap().len()
        + std::fs::metadata(dir.path().join("run_2.jsonl")).unwrap().len();
    for metric in [
        "output_rows=4".to_string(),
        format!("bytes_read={bytes}"),
        "damaged_lines=1".into(),
        "files_read=2".into(),
        "nulled_values=1".into(),
    ] {
        assert!(scan.contains(&metric), "{metric} in {scan}");
    }
}

#[test]
fn count_of_a_table_of_unchanged_clean_files_needs_no_scan() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START_1}\n{USAGE}\n{USAGE}\n")).unwrap();
    std::fs::write(dir.path().join("run_2.jsonl"), format!("{START_2}\n{USAGE}\n")).unwrap();
    let out = txq(
        &[
            "--no-cache",
            "--format",
            "csv",
            "-e",
            "explain select count(*) as n from usage",
            "-e",
            "select count(*) as n from usage",
            ".",
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("ProjectionExec: expr=[3 as n]"), "{}", out.stdout);
    assert!(!out.stdout.contains("TranscriptScan"), "{}", out.stdout);
    assert!(out.stdout.ends_with("n\n3\n"), "{}", out.stdout);
    // A damaged file is read, for its warning.
    let dir = one_clean_one_damaged();
    let out = txq(
        &["--no-cache", "--format", "csv", "-e", "explain select count(*) as n from usage", "."],
        dir.path(),
    );
    assert!(out.stdout.contains("TranscriptScan"), "{}", out.stdout);
}

#[test]
fn maxrows_under_e_writes_the_first_rows_of_a_table_and_counts_the_rest() {
    let c = default_corpus();
    let dir = c.transcripts();
    let sql = "select run_id from runs order by run_id";
    let all = txq(&["-e", sql, dir.to_str().unwrap()], c.dir.path());
    let cut = txq(&["--maxrows", "3", "-e", sql, dir.to_str().unwrap()], c.dir.path());
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert_eq!(cut.code, 0, "{}", cut.stderr);
    let rows = all.stdout.lines().count() - 4;
    assert!(rows > 3, "{}", all.stdout);
    let first: Vec<&str> = all.stdout.lines().take(6).collect();
    let mut expected = first.join("\n");
    expected.push_str(&format!("\n{}\n", all.stdout.lines().next().unwrap()));
    assert_eq!(cut.stdout, expected);
    assert!(
        cut.stderr
            .contains(&format!("txq: note: {rows} rows, the first 3 shown (--maxrows 0 shows them all)\n")),
        "{}",
        cut.stderr
    );
    // Other formats write every row.
    let csv = txq(&["--maxrows", "3", "--format", "csv", "-e", sql, dir.to_str().unwrap()], c.dir.path());
    assert_eq!(csv.stdout.lines().count(), rows + 1);
}

#[test]
fn a_long_table_streams_with_every_row_once() {
    let c = Generated::new(&RupuOptions { seed: 3, runs: 40, damage: false, ..RupuOptions::default() });
    let dir = c.transcripts();
    let sql = "select file, line, type from events order by file, line";
    let table = txq(&["-q", "-e", sql, dir.to_str().unwrap()], c.dir.path());
    let csv = txq(&["-q", "--format", "csv", "-e", sql, dir.to_str().unwrap()], c.dir.path());
    assert_eq!(table.code, 0, "{}", table.stderr);
    let rows: Vec<&str> = csv.stdout.lines().skip(1).collect();
    assert!(rows.len() > 1000, "more rows than the table is aligned on: {}", rows.len());
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), rows.len() + 4);
    for (line, row) in lines[3..lines.len() - 1].iter().zip(&rows) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.join(","), *row);
    }
}
