//! The interactive shell, driven through a pseudo-terminal as a person would: multi-line
//! statements, tab completion, meta-commands, Ctrl-C, and history across sessions.

use rexpect::session::{Options, PtySession, spawn_with_options};
use std::path::{Path, PathBuf};

const PROMPT: &str = "txq> ";

/// The shell on the sample corpus, its history in `history`.
fn shell(history: &Path) -> PtySession {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut command = crate::util::command(root);
    command
        .arg("examples/sample")
        .env("TERM", "xterm")
        .env("HOME", history.parent().unwrap())
        .env("TXQ_HISTORY", history)
        .env("TXQ_CACHE_DIR", history.with_extension("cache"));
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    let mut session = spawn_with_options(command, options).expect("txq starts in a terminal");
    session.exp_string(PROMPT).expect("a prompt");
    session
}

fn history_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("history");
    (dir, path)
}

/// Types `text` without pressing Enter.
fn type_in(session: &mut PtySession, text: &str) {
    session.send(text).unwrap();
    session.flush().unwrap();
}

/// Quits at the next prompt.
fn quit(mut session: PtySession) {
    session.exp_string(PROMPT).unwrap();
    session.send_line("\\q").unwrap();
    session.exp_eof().expect("the shell ends");
}

#[test]
fn a_statement_spans_lines_and_runs_at_its_semicolon() {
    let (_dir, history) = history_file();
    let mut s = shell(&history);
    // Each later line is typed at the continuation prompt (rustyline drops what is typed ahead
    // of a prompt; a paste is kept whole).
    s.send_line("select status, count(*) as runs").unwrap();
    s.exp_string("  ...> ").unwrap();
    s.send_line("from runs -- a comment; not the end").unwrap();
    s.exp_string("  ...> ").unwrap();
    s.send_line("where status <> 'a;b' group by status order by status;").unwrap();
    let out = s.exp_string("3 rows in ").unwrap();
    assert!(out.contains("| aborted |    3 |"), "{out}");
    assert!(out.contains("| ok      |    6 |"), "{out}");
    s.exp_string(PROMPT).unwrap();

    // An error says what is wrong and the shell goes on.
    s.send_line("select input_tokns from usage;").unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    assert!(out.contains("txq: error:") && out.contains("input_tokens"), "{out}");
    // A missing table gets the hint a script gets (the shell reports errors as txq -e does).
    s.send_line("select * from usag;").unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    assert!(out.contains("did you mean 'usage'?") && out.contains("hint: \\d in the shell"), "{out}");
    s.send_line("select 41 + 1 as answer;").unwrap();
    s.exp_string("42").unwrap();
    quit(s);
}

#[test]
fn tab_completes_table_and_column_names() {
    let (_dir, history) = history_file();
    let mut s = shell(&history);
    type_in(&mut s, "select count(*) as n from tool_au");
    type_in(&mut s, "\t");
    s.exp_string("tool_audit").unwrap();
    type_in(&mut s, " where decisi");
    type_in(&mut s, "\t");
    s.exp_string("decision").unwrap();
    s.send_line(" = 'allowed';").unwrap();
    let out = s.exp_string("1 row in ").unwrap();
    assert!(out.contains("| 24 |"), "{out}");
    quit(s);
}

#[test]
fn meta_commands_describe_tables_and_change_the_output() {
    let (dir, history) = history_file();
    let mut s = shell(&history);
    s.send_line("\\d usage").unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    assert!(out.contains("rupu.usage: "), "{out}");
    assert!(out.contains("`usage` alone means rupu.usage"), "{out}");
    assert!(out.contains("| input_tokens "), "{out}");
    // The normalized tables come first, and their columns say what they hold.
    s.send_line("\\d").unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    let at = |table: &str| out.find(&format!("| {table} ")).unwrap_or_else(|| panic!("{table}: {out}"));
    assert!(at("calls") < at("tool_calls") && at("tool_calls") < at("sessions"), "{out}");
    assert!(at("sessions") < at("usage") && at("sessions") < at("runs"), "{out}");
    s.send_line("\\d calls").unwrap();
    let out = s.exp_string(PROMPT).unwrap();
    assert!(out.contains("public.calls: one row per billed model call"), "{out}");
    assert!(out.contains("input tokens read from"), "{out}");

    s.send_line("\\format csv").unwrap();
    s.exp_string(PROMPT).unwrap();
    let file = dir.path().join("out.csv");
    s.send_line(&format!("\\o {}", file.display())).unwrap();
    s.exp_string(PROMPT).unwrap();
    s.send_line("select count(*) as runs from runs;").unwrap();
    s.exp_string("1 row").unwrap();
    s.exp_string(PROMPT).unwrap();
    s.send_line("\\o").unwrap();
    s.exp_string("results go to the terminal").unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "runs\n12\n");

    s.send_line("\\zz").unwrap();
    s.exp_string("\\? lists the commands").unwrap();
    quit(s);
}

#[test]
fn ctrl_c_cancels_a_long_query_and_the_shell_goes_on() {
    let (_dir, history) = history_file();
    let mut s = shell(&history);
    s.send_line("select count(*) from events a, events b, events c, events d;").unwrap();
    // The progress line shows after about a second.
    s.exp_string("Ctrl-C cancels").unwrap();
    s.send_control('c').unwrap();
    s.exp_string("query cancelled").unwrap();
    s.exp_string(PROMPT).unwrap();
    s.send_line("select 6 * 7 as answer;").unwrap();
    s.exp_string("42").unwrap();
    s.exp_string(PROMPT).unwrap();
    // Ctrl-C at an empty prompt warns, a second one ends the shell.
    s.send_control('c').unwrap();
    s.exp_string("Ctrl-C again").unwrap();
    s.send_control('c').unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn history_survives_a_restart_and_ctrl_r_finds_it() {
    let (_dir, history) = history_file();
    let mut s = shell(&history);
    s.send_line("select 'remembered' as word;").unwrap();
    s.exp_string("1 row").unwrap();
    s.exp_string(PROMPT).unwrap();
    s.send_control('d').unwrap();
    s.exp_eof().unwrap();
    assert!(std::fs::read_to_string(&history).unwrap().contains("select 'remembered' as word;"));

    let mut s = shell(&history);
    s.send_control('r').unwrap();
    type_in(&mut s, "rememb");
    s.exp_string("rememb").unwrap();
    s.send_line("").unwrap();
    let out = s.exp_string("1 row").unwrap();
    assert!(out.contains("| remembered |"), "{out}");
    quit(s);
}

#[test]
fn the_shell_needs_a_terminal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = crate::util::txq(&["shell", "examples/sample"], root);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("the shell needs a terminal"), "{}", out.stderr);
}
