//! `txq --follow`: the rows already there, then each row a writer process appends (to a
//! transcript there, to one made later, a line in two pieces), once each and in order, no torn
//! line reported as damaged, until Ctrl-C ends it with exit 0; an aggregate printed again as the
//! files grow; with the system's watcher and with --poll.

use crate::util::{Generated, command, int, parse_ndjson, text, txq};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use txq::generate::RupuOptions;

/// What the follows below follow: the refused tools, as the issue has it.
const BLOCKED: &str = "select file, line, run_id, turn_idx, tool, decision from tool_audit where blocked";

/// A wait for txq that no working machine comes near.
const BOUND: Duration = Duration::from_secs(60);

/// A followed txq, its stdout read line by line on a thread of its own.
struct Followed {
    child: Child,
    lines: Receiver<String>,
    /// stderr's lines as they come.
    errors: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Followed {
    fn start(cwd: &Path, args: &[&str]) -> Followed {
        let mut child = command(cwd)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("txq starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = child.stderr.take().unwrap();
        let (tx, errors) = std::sync::mpsc::channel();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                text.push_str(&line);
                text.push('\n');
                let _ = tx.send(line);
            }
            text
        });
        Followed { child, lines, errors, stderr: Some(stderr) }
    }

    /// The first line of stderr from now on that holds `needle`, failing if none comes within
    /// [`BOUND`].
    fn stderr_line(&mut self, needle: &str) -> String {
        let until = Instant::now() + BOUND;
        loop {
            match self.errors.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(e) => {
                    let _ = self.child.kill();
                    panic!("no line of stderr held {needle:?} ({e:?})");
                }
            }
        }
    }

    /// The next `n` lines of stdout, failing if they do not come within [`BOUND`].
    fn next_lines(&mut self, n: usize, what: &str) -> Vec<String> {
        let until = Instant::now() + BOUND;
        let mut lines = Vec::new();
        while lines.len() < n {
            match self.lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(line) => lines.push(line),
                Err(e) => {
                    let _ = self.child.kill();
                    panic!("{what}: {} of {n} lines came ({e:?}): {lines:?}", lines.len());
                }
            }
        }
        lines
    }

    /// Whether any line came within `wait`.
    fn quiet_for(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Ctrl-C, then the exit code, what stdout still had, and stderr.
    fn interrupt(mut self) -> (Option<i32>, Vec<String>, String) {
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) }, 0);
        let until = Instant::now() + BOUND;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("txq --follow still running a minute after Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let rest: Vec<String> = self.lines.try_iter().collect();
        (status.code(), rest, self.stderr.take().unwrap().join().unwrap())
    }
}

impl Drop for Followed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Appends `bytes` to `file` as a process of its own does (a shell's `>>`), as agents write.
fn append(file: &Path, bytes: &str) {
    let mut writer = std::process::Command::new("sh")
        .args(["-c", "cat >> \"$0\"", file.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh runs");
    writer.stdin.take().unwrap().write_all(bytes.as_bytes()).unwrap();
    assert!(writer.wait().unwrap().success());
}

/// A blocked audit line of `tool` with `decision`.
fn audit(tool: &str, decision: &str) -> String {
    format!(
        r#"{{"type":"tool_audit","data":{{"tool":"{tool}","declared":false,"granted":false,"blocked":true,"reason":"not_declared","decision":"{decision}"}}}}"#
    )
}

/// The lines of `file` so far (it ends with a line end): the number the next line gets, less 1.
fn lines_in(file: &Path) -> i64 {
    std::fs::read(file).unwrap().iter().filter(|b| **b == b'\n').count() as i64
}

/// What a whole read of the corpus now gives for the row of `file` at `line` (the SQL path of a
/// plain `txq -e`, reading each file from its start).
fn row_read_whole(dir: &Path, file: &str, line: i64) -> Map<String, Value> {
    let sql = format!("{BLOCKED} and file = '{file}' and line = {line}");
    let out = txq(&["-q", "--no-cache", "--format", "ndjson", "-e", &sql, ".rupu/transcripts"], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut rows = parse_ndjson(&out.stdout);
    assert_eq!(rows.len(), 1, "{file}:{line}: {}", out.stdout);
    rows.pop().unwrap()
}

/// Two transcripts of the corpus that end with a whole line, to append to.
fn two_whole_transcripts(c: &Generated) -> (PathBuf, PathBuf) {
    let whole: Vec<PathBuf> = c
        .expected
        .runs
        .iter()
        .filter(|r| !c.expected.truncated_tails.contains(&r.file) && !r.archived)
        .map(|r| c.dir.path().join(&r.file))
        .filter(|p| std::fs::read(p).unwrap().ends_with(b"\n"))
        .collect();
    assert!(whole.len() >= 2, "the corpus has two transcripts that end whole");
    (whole[0].clone(), whole[1].clone())
}

fn relative(c: &Generated, file: &Path) -> String {
    file.strip_prefix(c.dir.path()).unwrap().to_str().unwrap().to_string()
}

fn follow_appends(poll: bool) {
    let c = Generated::new(&RupuOptions { runs: 8, ..Default::default() });
    let dir = c.dir.path();
    let mut args = vec!["--follow", "--format", "ndjson", "--no-cache", "-e", BLOCKED, ".rupu/transcripts"];
    if poll {
        args.extend(["--poll", "--interval", "100ms"]);
    }
    let mut followed = Followed::start(dir, &args);

    // The rows already there: the generator's blocked audits, by tool and decision.
    let there: usize = c.expected.denied_tools.values().sum::<u64>() as usize;
    assert!(there > 0, "the corpus has blocked audits");
    let first = parse_ndjson(&followed.next_lines(there, "the rows already there").join("\n"));
    let mut by_tool: BTreeMap<(String, String), u64> = BTreeMap::new();
    for row in &first {
        *by_tool.entry((text(row, "tool"), text(row, "decision"))).or_default() += 1;
    }
    assert_eq!(by_tool, c.expected.denied_tools);
    for row in &first {
        assert_eq!(row, &row_read_whole(dir, &text(row, "file"), int(row, "line").unwrap()));
    }

    // A whole line appended to a transcript: its row, with the turn it falls in.
    let (a, b) = two_whole_transcripts(&c);
    let line_a = lines_in(&a) + 1;
    append(&a, &format!("{}\n", audit("bash", "denied:first")));
    let row = parse_ndjson(&followed.next_lines(1, "an appended line").join("\n")).pop().unwrap();
    assert_eq!((text(&row, "file"), int(&row, "line")), (relative(&c, &a), Some(line_a)));
    assert_eq!(row, row_read_whole(dir, &relative(&c, &a), line_a));

    // A line written in two pieces: nothing until its end is there. A line to a transcript made
    // after the start comes meanwhile, and shows the first piece was looked at.
    let line_b = lines_in(&b) + 1;
    let torn = audit("write_file", "denied:torn");
    let (head, tail) = torn.split_at(torn.len() / 2);
    append(&b, head);
    let made = dir.join(".rupu/transcripts/run_01MADELATER0000000000000000.jsonl");
    let start = r#"{"type":"run_start","data":{"run_id":"run_01MADELATER0000000000000000","agent":"late","started_at":"2026-11-30T09:00:00Z"}}"#;
    let turn = r#"{"type":"turn_start","data":{"turn_idx":4}}"#;
    append(&made, &format!("{start}\n{turn}\n{}\n", audit("web_fetch", "denied:late")));
    let row =
        parse_ndjson(&followed.next_lines(1, "a line of a transcript made later").join("\n")).pop().unwrap();
    assert_eq!(row, row_read_whole(dir, &relative(&c, &made), 3));
    assert_eq!(int(&row, "turn_idx"), Some(4));
    assert_eq!(followed.quiet_for(Duration::from_millis(300)), None, "a torn line is not a row");
    append(&b, &format!("{tail}\n"));
    let row = parse_ndjson(&followed.next_lines(1, "the torn line once whole").join("\n")).pop().unwrap();
    assert_eq!(row, row_read_whole(dir, &relative(&c, &b), line_b));

    // Several lines in one write, another type among them: the audits' rows, in order.
    let line = lines_in(&a) + 1;
    let usage = r#"{"type":"usage","data":{"model":"m","input_tokens":1,"output_tokens":1}}"#;
    append(&a, &format!("{}\n{usage}\n{}\n", audit("bash", "denied:second"), audit("bash", "denied:third")));
    let rows = parse_ndjson(&followed.next_lines(2, "two lines of one write").join("\n"));
    let got: Vec<(String, Option<i64>)> =
        rows.iter().map(|r| (text(r, "decision"), int(r, "line"))).collect();
    assert_eq!(
        got,
        [("denied:second".to_string(), Some(line)), ("denied:third".to_string(), Some(line + 2))]
    );

    let (code, rest, stderr) = followed.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(rest.is_empty(), "no row twice, none more: {rest:?}");
    // The corpus's damaged lines are told once, at the start; the torn line never.
    let damaged: Vec<&str> = stderr.lines().filter(|l| l.contains("damaged")).collect();
    assert_eq!(damaged.len(), 1, "{stderr}");
    assert!(!stderr.contains("txq: error"), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn follow_prints_the_rows_there_then_each_appended_row_once_in_order_until_ctrl_c() {
    follow_appends(false);
}

#[cfg(target_os = "linux")]
#[test]
fn follow_with_poll_finds_the_same_rows_by_looking_every_interval() {
    follow_appends(true);
}

#[cfg(target_os = "linux")]
#[test]
fn a_followed_aggregate_is_run_again_as_a_file_grows_a_fresh_result_each_time_when_piped() {
    let c = Generated::new(&RupuOptions { runs: 4, ..Default::default() });
    let dir = c.dir.path();
    let sql = "select count(*) as blocked from tool_audit where blocked";
    let mut followed = Followed::start(
        dir,
        &["--follow", "--interval", "100ms", "--format", "ndjson", "-e", sql, ".rupu/transcripts"],
    );
    let there = c.expected.denied_tools.values().sum::<u64>() as i64;
    let first = parse_ndjson(&followed.next_lines(1, "the first result").join("\n"));
    assert_eq!(int(&first[0], "blocked"), Some(there));
    let (a, _) = two_whole_transcripts(&c);
    append(&a, &format!("{}\n", audit("bash", "denied:more")));
    let next = parse_ndjson(&followed.next_lines(1, "the result run again").join("\n"));
    assert_eq!(int(&next[0], "blocked"), Some(there + 1));
    let (code, rest, stderr) = followed.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(rest.is_empty(), "run again only when a file changed: {rest:?}");
    assert!(stderr.contains("run again as files change"), "{stderr}");
}

#[test]
fn follow_asks_for_one_statement_of_e_or_f() {
    let c = crate::util::default_corpus();
    let dir = c.dir.path();
    for (args, says) in [
        (&["--follow", ".rupu/transcripts"][..], "--follow follows the statement of -e or -f"),
        (&["--follow", "-e", "select 1; select 2", ".rupu/transcripts"], "follows one statement"),
        (&["--interval", "1s", "-e", "select 1"], "--follow"),
        (&["--follow", "--interval", "0s", "-e", "select 1"], "shortest interval"),
        (&["--follow", "--interval", "soon", "-e", "select 1"], "not a duration"),
    ] {
        let out = txq(args, dir);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_a_followed_aggregate_is_redrawn_in_place() {
    use rexpect::session::{Options, spawn_with_options};
    let c = Generated::new(&RupuOptions { runs: 4, ..Default::default() });
    let dir = c.dir.path();
    let sql = "select count(*) as blocked from tool_audit where blocked";
    let txq = env!("CARGO_BIN_EXE_txq");
    // A terminal of a known size (a new pseudo-terminal has none).
    let script =
        format!("stty rows 40 cols 100; exec {txq} --follow --interval 100ms -e \"{sql}\" .rupu/transcripts");
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &script]).current_dir(dir);
    for (name, value) in crate::util::hermetic_env() {
        sh.env(name, value);
    }
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(false);
    let mut s = spawn_with_options(sh, options).expect("txq starts in a terminal");
    let there = c.expected.denied_tools.values().sum::<u64>();
    s.exp_string(&format!(" {there} |")).unwrap();
    s.exp_string("txq: following: run again at").unwrap();
    let (a, _) = two_whole_transcripts(&c);
    append(&a, &format!("{}\n", audit("bash", "denied:more")));
    // Back up over the lines drawn, clear below, and the new result there.
    let (_, moved) = s.exp_regex(r"\x1b\[[0-9]+F\x1b\[J").unwrap();
    let lines: usize = moved[2..moved.len() - 4].parse().unwrap();
    assert!((5..40).contains(&lines), "{moved:?}");
    s.exp_string(&format!(" {} |", there + 1)).unwrap();
    s.send_control('c').unwrap();
    s.exp_eof().unwrap();
}

/// The bytes the scans of a run plan read, from their metrics.
fn bytes_read(plan: &std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> usize {
    let own = plan.metrics().and_then(|m| m.sum_by_name("bytes_read")).map_or(0, |v| v.as_usize());
    own + plan.children().into_iter().map(bytes_read).sum::<usize>()
}

#[test]
fn a_followed_scan_reads_only_the_bytes_appended_since_its_last_run() {
    use txq::scan::follow::FollowPositions;
    use txq::sql::session::{LiveEngine, Places};
    let c = Generated::new(&RupuOptions { runs: 4, ..Default::default() });
    let transcripts = c.transcripts();
    let total: u64 =
        c.expected.runs.iter().map(|r| std::fs::metadata(c.dir.path().join(&r.file)).unwrap().len()).sum();
    crate::util::runtime().block_on(async {
        let mut live =
            LiveEngine::open(Places::Given(vec![transcripts.clone()]), txq::sql::session::Options::default())
                .await
                .unwrap();
        let positions = std::sync::Arc::new(FollowPositions::default());
        let run = |live: &LiveEngine| {
            let mut state = live.engine.ctx.state();
            state.config_mut().set_extension(positions.clone());
            async move {
                let plan = state.create_logical_plan("select line, data from events").await.unwrap();
                let physical = state.create_physical_plan(&plan).await.unwrap();
                let task = std::sync::Arc::new(datafusion::execution::TaskContext::from(&state));
                let batches = datafusion::physical_plan::collect(physical.clone(), task).await.unwrap();
                (batches.iter().map(|b| b.num_rows()).sum::<usize>(), bytes_read(&physical))
            }
        };
        let (rows, bytes) = run(&live).await;
        assert_eq!(rows as u64, c.expected.events_total);
        assert!(bytes as u64 >= total, "the first run reads every file whole: {bytes} of {total}");
        let (a, _) = two_whole_transcripts(&c);
        let added = format!("{}\n{}\n", audit("bash", "denied:one"), audit("bash", "denied:two"));
        append(&a, &added);
        assert!(live.refresh().await.unwrap().is_some());
        assert_eq!(run(&live).await, (2, added.len()), "the second reads what was added, no more");
        assert!(live.refresh().await.unwrap().is_none());
        assert_eq!(run(&live).await, (0, 0), "nothing added, nothing read");
    });
}

#[cfg(target_os = "linux")]
#[test]
fn a_codex_line_appended_keeps_the_thread_and_model_of_the_lines_before_it() {
    // The thread id comes from the rollout's first line and the model from its latest
    // turn_context: a read of the appended bytes alone has neither, the follow carries them.
    let home = generated_codex_home();
    let sql = "select file, line, thread_id, turn_model, name, call_id from codex.function_call";
    let whole = |dir: &Path| codex_rows_read_whole(dir, sql);
    let there = whole(home.path());
    assert!(!there.is_empty(), "the rollouts have function calls");
    let mut followed = Followed::start(home.path(), &["--follow", "--format", "ndjson", "-e", sql, ".codex"]);
    let mut first = parse_ndjson(&followed.next_lines(there.len(), "the calls there").join("\n"));
    let key = |r: &Map<String, Value>| (text(r, "file"), int(r, "line"));
    first.sort_by_key(key);
    let mut sorted = there.clone();
    sorted.sort_by_key(key);
    assert_eq!(first, sorted);

    // A rollout of the first thread that has a call, its model changed by a turn_context.
    let file = home.path().join(text(&there[0], "file"));
    let thread = text(&there[0], "thread_id");
    let line = lines_in(&file) + 2;
    let context = r#"{"timestamp":"2026-09-03T06:00:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-9-followed","turn_id":"t-9"}}"#;
    let call = r#"{"timestamp":"2026-09-03T06:00:01.000Z","type":"response_item","payload":{"arguments":"{}","call_id":"call_followed","name":"exec_command","type":"function_call"}}"#;
    append(&file, &format!("{context}\n{call}\n"));
    let row = parse_ndjson(&followed.next_lines(1, "the appended call").join("\n")).pop().unwrap();
    assert_eq!(int(&row, "line"), Some(line));
    assert_eq!(text(&row, "thread_id"), thread);
    assert_eq!(text(&row, "turn_model"), "gpt-9-followed");
    assert!(whole(home.path()).contains(&row), "as a whole read has it: {row:?}");
    let (code, rest, stderr) = followed.interrupt();
    assert_eq!((code, rest.len()), (Some(0), 0), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_followed_canned_report_is_run_again_as_calls_are_added() {
    let c = Generated::new(&RupuOptions { runs: 4, ..Default::default() });
    let dir = c.dir.path();
    let mut followed = Followed::start(
        dir,
        &["query", "daily", "--follow", "--interval", "100ms", "--format", "ndjson", ".rupu/transcripts"],
    );
    let calls = |rows: &[Map<String, Value>]| rows.iter().map(|r| int(r, "calls").unwrap()).sum::<i64>();
    let usage_lines: i64 = c.expected.events_by_type.get("usage").copied().unwrap_or(0) as i64;
    let whole = txq(&["-q", "--format", "ndjson", "query", "daily", ".rupu/transcripts"], dir);
    let days = parse_ndjson(&whole.stdout);
    assert_eq!(calls(&days), usage_lines, "the report counts each usage line once");
    let first = parse_ndjson(&followed.next_lines(days.len(), "the report").join("\n"));
    assert_eq!(first, days);
    let (a, _) = two_whole_transcripts(&c);
    let usage =
        r#"{"type":"usage","data":{"model":"claude-sonnet-4-6","input_tokens":100,"output_tokens":10}}"#;
    append(&a, &format!("{usage}\n"));
    let again = txq(&["-q", "--format", "ndjson", "query", "daily", ".rupu/transcripts"], dir);
    let days = parse_ndjson(&again.stdout);
    assert_eq!(calls(&days), usage_lines + 1);
    let next = parse_ndjson(&followed.next_lines(days.len(), "the report run again").join("\n"));
    assert_eq!(next, days);
    let (code, _, stderr) = followed.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_followed_report_with_a_budget_says_on_stderr_the_moment_a_day_crosses_it() {
    let c = Generated::new(&RupuOptions { runs: 4, ..Default::default() });
    let dir = c.dir.path();
    let whole = txq(&["-q", "--format", "ndjson", "query", "daily", ".rupu/transcripts"], dir);
    let rows = parse_ndjson(&whole.stdout);
    let mut days: BTreeMap<String, f64> = BTreeMap::new();
    for row in &rows {
        *days.entry(text(row, "day")).or_default() += row["cost_usd"].as_f64().unwrap_or(0.0);
    }
    // A budget over the costliest day: none is over when the follow starts.
    let most = days.values().copied().fold(0.0, f64::max);
    let budget = format!("{:.2}usd/day", most + 1.0);
    let mut followed = Followed::start(
        dir,
        &[
            "daily",
            "--follow",
            "--interval",
            "100ms",
            "--format",
            "ndjson",
            "--budget",
            &budget,
            ".rupu/transcripts",
        ],
    );
    followed.next_lines(rows.len(), "the report");
    // A million output tokens of claude-sonnet-4-6 ($15 a million) in a run of one of the days.
    let (a, _) = two_whole_transcripts(&c);
    let usage =
        r#"{"type":"usage","data":{"model":"claude-sonnet-4-6","input_tokens":100,"output_tokens":1000000}}"#;
    append(&a, &format!("{usage}\n"));
    let line = followed.stderr_line("txq: budget:");
    assert!(line.contains(" crossed $") && line.contains(&format!("${:.2} a day", most + 1.0)), "{line}");
    let (code, _, stderr) = followed.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.matches("txq: budget:").count(), 1, "said once: {stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_compressed_transcript_that_grows_gives_only_its_new_rows_with_their_turn() {
    // A `.zst` cannot be read on from a byte of its inflated stream: it is inflated again, and
    // the lines before the last stop give their turn but no row again.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl.zst");
    let start =
        r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;
    let mut lines = format!(
        "{start}\n{{\"type\":\"turn_start\",\"data\":{{\"turn_idx\":0}}}}\n{}\n",
        audit("bash", "denied:one")
    );
    std::fs::write(&file, zstd::encode_all(lines.as_bytes(), 3).unwrap()).unwrap();
    let mut followed = Followed::start(dir.path(), &["--follow", "--format", "ndjson", "-e", BLOCKED, "."]);
    let first = parse_ndjson(&followed.next_lines(1, "the row there").join("\n"));
    assert_eq!((text(&first[0], "decision"), int(&first[0], "line")), ("denied:one".into(), Some(3)));
    lines.push_str(&format!(
        "{{\"type\":\"turn_start\",\"data\":{{\"turn_idx\":1}}}}\n{}\n",
        audit("bash", "denied:two")
    ));
    let grown = zstd::encode_all(lines.as_bytes(), 3).unwrap();
    std::fs::write(&file, grown).unwrap();
    let row = parse_ndjson(&followed.next_lines(1, "the new row").join("\n")).pop().unwrap();
    assert_eq!(
        (text(&row, "decision"), int(&row, "line"), int(&row, "turn_idx")),
        ("denied:two".into(), Some(5), Some(1))
    );
    let (code, rest, stderr) = followed.interrupt();
    assert_eq!((code, rest.len()), (Some(0), 0), "no row twice: {rest:?} {stderr}");
}

/// A Codex home of three generated sessions (`.codex` in a temporary folder).
fn generated_codex_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let out = txq(
        &["generate", "--out", home.path().to_str().unwrap(), "--harness", "codex", "--runs", "3"],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    home
}

/// The rows of `sql` over the Codex home in `dir`, as a plain `txq -e` reads it whole.
fn codex_rows_read_whole(dir: &Path, sql: &str) -> Vec<Map<String, Value>> {
    let out = txq(&["-q", "--no-cache", "--format", "ndjson", "-e", sql, ".codex"], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    parse_ndjson(&out.stdout)
}

/// A Codex function call with `call_id`, as a rollout line.
fn codex_call(call_id: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-09-03T07:00:00.000Z","type":"response_item","payload":{{"arguments":"{{}}","call_id":"{call_id}","name":"exec_command","type":"function_call"}}}}"#
    )
}

#[cfg(target_os = "linux")]
#[test]
fn follow_prints_no_row_again_after_a_rollout_is_archived_or_compressed() {
    // Codex moves a rollout to archived_sessions/ and compresses an idle one to `.zst`, removing
    // the plain file: the transcript is the one already read, and only lines added since are rows.
    let home = generated_codex_home();
    let sql = "select file, line, call_id from codex.function_call";
    let whole = |dir: &Path| codex_rows_read_whole(dir, sql);
    let there = whole(home.path());
    let plain = there.iter().map(|r| text(r, "file")).find(|f| f.ends_with(".jsonl"));
    let plain = home.path().join(plain.expect("a plain rollout with a call"));
    let mut followed = Followed::start(home.path(), &["--follow", "--format", "ndjson", "-e", sql, ".codex"]);
    followed.next_lines(there.len(), "the calls there");

    // Archived: moved, the same file; a call appended there is the one row.
    let archived = home.path().join(".codex/archived_sessions").join(plain.file_name().unwrap());
    std::fs::create_dir_all(archived.parent().unwrap()).unwrap();
    std::fs::rename(&plain, &archived).unwrap();
    let line = lines_in(&archived) + 1;
    append(&archived, &format!("{}\n", codex_call("call_after_archive")));
    let row = parse_ndjson(&followed.next_lines(1, "the call after the move").join("\n")).pop().unwrap();
    assert_eq!((text(&row, "call_id"), int(&row, "line")), ("call_after_archive".into(), Some(line)));
    assert_eq!(text(&row, "file"), relative_to(home.path(), &archived));
    assert!(whole(home.path()).contains(&row), "as a whole read has it: {row:?}");

    // Compressed, with one call more, and the plain file removed: that call is the one row.
    let mut bytes = std::fs::read(&archived).unwrap();
    bytes.extend_from_slice(format!("{}\n", codex_call("call_after_compress")).as_bytes());
    let compressed = archived.with_extension("jsonl.zst");
    std::fs::write(&compressed, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    std::fs::remove_file(&archived).unwrap();
    let row = parse_ndjson(&followed.next_lines(1, "the call after compression").join("\n")).pop().unwrap();
    assert_eq!((text(&row, "call_id"), int(&row, "line")), ("call_after_compress".into(), Some(line + 1)));
    assert_eq!(text(&row, "file"), relative_to(home.path(), &compressed));

    let (code, rest, stderr) = followed.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(rest.is_empty(), "no row printed again: {rest:?}");
}

fn relative_to(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir).unwrap().to_str().unwrap().to_string()
}
