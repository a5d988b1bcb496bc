//! Ctrl-C in the shell while it walks a large home before a statement (the look for files that
//! grew, came or went): the walk shows the progress line and Ctrl-C is answered during it, the
//! statement cancelled and the shell back at its prompt, not once the walk is over.

use rexpect::session::{Options, spawn_with_options};
use std::path::Path;

const PROMPT: &str = "txq> ";

/// The files of the home: enough that the walk before a statement runs past the second after
/// which the progress line shows.
const FILES: usize = 100_000;

/// Empty folders beside them, which the walk opens one by one but the start has nothing to read
/// in: the walk lasts well past the second after which its progress line shows (by ~1.5 s on
/// this 2-core machine in a release build), so that Ctrl-C, sent when the line shows, is sent
/// while the walk runs. Without them the walk of a debug build ended 0.2 s after its line once,
/// and the statement ran before Ctrl-C came.
const EMPTY_FOLDERS: usize = 200_000;

/// Writes `FILES` one-line transcripts under `home`, a thousand a folder, and `EMPTY_FOLDERS`
/// folders with nothing in them, a thousand a folder.
fn write_home(home: &Path) {
    for n in 0..EMPTY_FOLDERS {
        std::fs::create_dir_all(home.join(format!("empty/e{:03}/f{:03}", n / 1000, n % 1000))).unwrap();
    }
    for n in 0..FILES {
        let dir = home.join(format!("d{:03}", n / 1000));
        if n % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let line = format!(
            "{{\"type\":\"run_start\",\"data\":{{\"run_id\":\"run_{n}\",\"agent\":\"a\",\"started_at\":\"2026-10-07T09:14:03Z\"}}}}\n"
        );
        std::fs::write(dir.join(format!("run_{n}.jsonl")), line).unwrap();
    }
}

#[test]
fn ctrl_c_during_the_walk_before_a_statement_cancels_it() {
    let (home, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_home(home.path());
    let mut command = crate::util::command(home.path());
    command
        .arg(".")
        .env("TERM", "xterm")
        .env("HOME", state.path())
        .env("TXQ_HISTORY", "")
        .env("TXQ_CACHE_DIR", state.path().join("cache"));
    // The start reads every file once (slow in a debug build on a busy machine).
    let options = Options::new().timeout_ms(Some(600_000)).strip_ansi_escape_codes(true);
    let mut s = spawn_with_options(command, options).expect("txq starts in a terminal");
    let start = s.exp_string(PROMPT).unwrap();
    assert!(start.contains(&format!("over {FILES} ")), "{start}");

    // Nothing changed: all that runs before the statement is the walk, so a progress line
    // before its result is the walk's.
    s.send_line("select 6 * 7 as answer;").unwrap();
    s.exp_string("Ctrl-C cancels").unwrap();
    s.send_control('c').unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    assert!(out.contains("txq: query cancelled"), "{out}");
    assert!(!out.contains("42 |") && !out.contains("1 row"), "the statement ran: {out}");

    // The shell goes on: the next statement walks again and runs.
    s.send_line("select 6 * 7 as answer;").unwrap();
    let out = s.exp_string("1 row in ").unwrap();
    assert!(out.contains("|     42 |"), "{out}");
    s.exp_string(PROMPT).unwrap();
    s.send_line("\\q").unwrap();
    s.exp_eof().expect("the shell ends");
}
