//! The shell over live data, and SQL with no transcripts: lines appended to a transcript, new
//! transcripts and removed ones are taken in before the next statement (a half-written last line
//! only once it is whole); `exit`, `quit`, the continuation prompt, `\dt`, `\format`, `\o`, NULL
//! apart from `''`; and `select 1`, `prices`, `\d` and the shell with no transcripts anywhere.

use rexpect::session::{Options, PtySession, spawn_with_options};
use std::io::Write;
use std::path::Path;
use std::process::Command;

const PROMPT: &str = "txq> ";

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

fn usage(tokens: u64) -> String {
    format!("{{\"type\":\"usage\",\"data\":{{\"input_tokens\":{tokens}}}}}\n")
}

fn append(file: &Path, text: &str) {
    std::fs::OpenOptions::new().append(true).open(file).unwrap().write_all(text.as_bytes()).unwrap();
}

/// The shell in `cwd` on `args`, with a home, history and cache of its own in `state`.
fn shell(cwd: &Path, state: &Path, args: &[&str]) -> PtySession {
    let mut command = crate::util::command(cwd);
    command
        .args(args)
        .env("TERM", "xterm")
        .env("HOME", state)
        .env("TXQ_HISTORY", "")
        .env("TXQ_CACHE_DIR", state.join("cache"));
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    spawn_with_options(command, options).expect("txq starts in a terminal")
}

/// Runs `sql` at the next prompt; what was written up to its footer (`N rows in ...`).
fn run(s: &mut PtySession, sql: &str) -> String {
    s.exp_string(PROMPT).unwrap();
    s.send_line(sql).unwrap();
    let (before, footer) = s.exp_regex(r"rows? in [0-9.]+ m?s").unwrap();
    format!("{before}{footer}")
}

/// Runs a meta-command at the next prompt; what it wrote up to the prompt after it (which is
/// left for the next `run`).
fn command(s: &mut PtySession, line: &str, until: &str) -> String {
    s.exp_string(PROMPT).unwrap();
    s.send_line(line).unwrap();
    s.exp_string(until).unwrap()
}

#[test]
fn appended_lines_and_new_and_removed_transcripts_are_seen_by_the_next_statement() {
    for cache in [&[][..], &["--no-cache"][..]] {
        let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = dir.path().join("run_1.jsonl");
        std::fs::write(&file, format!("{START}\n{}", usage(5))).unwrap();
        let mut args = cache.to_vec();
        args.extend(["--format", "csv", "."]);
        let mut s = shell(dir.path(), state.path(), &args);
        const SUM: &str = "select count(*) as n, sum(input_tokens) as s from usage;";
        assert!(run(&mut s, SUM).contains("n,s\r\n1,5\r\n"));

        // A whole line and a half-written one: the whole one only.
        append(&file, &format!("{}{{\"type\":\"usa", usage(7)));
        let out = run(&mut s, SUM);
        assert!(out.contains("n,s\r\n2,12\r\n"), "{cache:?}: {out}");
        assert!(run(&mut s, "select count(*) as damaged from errors;").contains("damaged\r\n0\r\n"));

        // The half line completed, with a new column; a new transcript with a new type.
        append(&file, "ge\",\"data\":{\"input_tokens\":30,\"region\":\"eu\"}}\n");
        let other = dir.path().join("run_2.jsonl");
        std::fs::write(
            &other,
            format!(
                "{}\n{}{{\"type\":\"brand_new\",\"data\":{{\"x\":1}}}}\n",
                START.replace("run_1", "run_2"),
                usage(100)
            ),
        )
        .unwrap();
        let out = run(&mut s, "select count(*) as n, sum(input_tokens) as s, count(region) as r from usage;");
        assert!(out.contains("n,s,r\r\n4,142,1\r\n"), "{cache:?}: {out}");
        let out = run(&mut s, "select run_id, x from brand_new;");
        assert!(out.contains("run_id,x\r\nrun_2,1\r\n"), "{cache:?}: {out}");

        // A removed transcript drops out, with its type.
        std::fs::remove_file(&other).unwrap();
        let out = run(&mut s, "select count(*) as runs from runs;");
        assert!(out.contains("runs\r\n1\r\n"), "{cache:?}: {out}");
        command(&mut s, "select count(*) as n from brand_new;", "table 'brand_new' not found");
        s.exp_string(PROMPT).unwrap();
        s.send_line("exit").unwrap();
        s.exp_eof().unwrap();
    }
}

#[test]
fn tables_and_views_made_in_the_shell_stay_and_views_see_new_lines() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(&file, format!("{START}\n{}", usage(5))).unwrap();
    let mut s = shell(dir.path(), state.path(), &["--format", "csv", "."]);
    run(&mut s, "create table kept as select sum(input_tokens) as s from usage; select 1 as done;");
    run(&mut s, "create view live_sum as select sum(input_tokens) as s from usage; select 1 as done;");
    append(&file, &usage(7));
    assert!(run(&mut s, "select s from kept;").contains("s\r\n5\r\n"));
    assert!(run(&mut s, "select s from live_sum;").contains("s\r\n12\r\n"));
    assert!(run(&mut s, "select count(*) as n from prices where false;").contains("n\r\n0\r\n"));
    s.exp_string(PROMPT).unwrap();
    s.send_line("quit;").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn a_rewrite_with_the_same_size_and_mtime_is_read_afresh() {
    let (dir, _state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(&file, format!("{START}\n{}", usage(5))).unwrap();
    let options = txq::table::corpus::ReadOptions::default();
    let places = txq::sql::session::Places::Given(vec![dir.path().to_path_buf()]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut live = txq::sql::session::LiveEngine::open(places, options).await.unwrap();
        let sum = async |live: &txq::sql::session::LiveEngine| {
            let frame = live.engine.ctx.sql("select sum(input_tokens) as s from usage").await.unwrap();
            let batches = frame.collect().await.unwrap();
            datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string()
        };
        assert!(sum(&live).await.contains("| 5 |"));
        // Nothing changed: a walk, and no read.
        assert!(live.refresh().await.unwrap().is_none());
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, format!("{START}\n{}", usage(6))).unwrap();
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(modified).unwrap();
        assert!(live.refresh().await.unwrap().is_some());
        assert!(sum(&live).await.contains("| 6 |"), "{}", sum(&live).await);
    });
}

/// With no cache directory the shell still reads a grown transcript on from its known whole
/// lines: its cache is kept in memory.
#[test]
fn a_grown_transcript_is_read_on_from_its_known_lines_with_no_cache() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl");
    let text = format!("{START}\n{}{{\"type\":\"usa", usage(5));
    std::fs::write(&file, &text).unwrap();
    let known_lines = text.rfind('\n').unwrap() as u64 + 1;
    let options = txq::table::corpus::ReadOptions { cache_dir: None, ..Default::default() };
    let places = txq::sql::session::Places::Given(vec![dir.path().to_path_buf()]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut live = txq::sql::session::LiveEngine::open(places, options).await.unwrap();
        append(&file, &format!("ge\",\"data\":{{\"input_tokens\":7}}}}\n{}", usage(30)));
        let formats = txq::format::all();
        let discovery = txq::source::discover::discover(&formats, &[dir.path().to_path_buf()]).unwrap();
        let rupu = formats.iter().position(|f| f.name == "rupu").unwrap();
        let store = txq::source::read::local_store();
        match live.cache_mut().lookup(&store, "rupu", &discovery.files[rupu].get(0)).await {
            txq::infer::cache::Lookup::Grown(_, from, _) => assert_eq!(from, known_lines),
            _ => panic!("the grown file would be read whole"),
        }
        assert!(live.refresh().await.unwrap().is_some());
        let frame =
            live.engine.ctx.sql("select count(*) as n, sum(input_tokens) as s from usage").await.unwrap();
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&frame.collect().await.unwrap())
            .unwrap()
            .to_string();
        assert!(text.contains("| 3 | 42 |"), "{text}");
    });
}

#[test]
fn exit_quit_continuation_lines_dt_format_and_o_work_as_in_psql() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{}", usage(5))).unwrap();
    let mut s = shell(dir.path(), state.path(), &["."]);
    // A statement not ended shows the continuation prompt on its later lines.
    s.exp_string(PROMPT).unwrap();
    s.send_line("select 41 + 1").unwrap();
    s.exp_string("  ...> ").unwrap();
    s.send_line("as answer").unwrap();
    s.exp_string("  ...> ").unwrap();
    s.send_line(";").unwrap();
    let (out, _) = s.exp_regex("1 row in").unwrap();
    assert!(out.contains("| 42     |") || out.contains("|     42 |"), "{out}");

    // A paste of several lines (bracketed, as terminals send it) is one statement.
    s.exp_string(PROMPT).unwrap();
    s.send("\x1b[200~select 6 * 7\nas pasted;\x1b[201~\r").unwrap();
    s.flush().unwrap();
    let (out, _) = s.exp_regex("1 row in").unwrap();
    assert!(out.contains("| pasted |") && out.contains("|     42 |"), "{out}");

    let out = command(&mut s, "\\dt", "| usage ");
    assert!(out.contains("| table "), "{out}");

    // NULL apart from ''.
    // (rexpect reads the terminal's bytes one a character.)
    let null: String = "∅".bytes().map(char::from).collect();
    let out = run(&mut s, "select null as a, '' as b, 'x' as c;");
    assert!(out.contains(&format!("| {null} |   | x |")), "{out}");

    // \x toggles one field per line.
    command(&mut s, "\\x", "one field per line is on");
    let out = run(&mut s, "select null as a, 'x' as c;");
    assert!(out.contains(&format!("-[ RECORD 1 ]\r\na | {null}\r\nc | x\r\n")), "{out}");
    command(&mut s, "\\x", "one field per line is off");

    command(&mut s, "\\format ndjson", PROMPT);
    let file = state.path().join("out.ndjson");
    s.send_line(&format!("\\o {}", file.display())).unwrap();
    s.exp_string("results go to").unwrap();
    run(&mut s, "select run_id, null as nothing from runs;");
    command(&mut s, "\\o", "results go to the terminal");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"run_id\":\"run_1\",\"nothing\":null}\n");
    s.exp_string(PROMPT).unwrap();
    s.send_line("EXIT").unwrap();
    s.exp_eof().unwrap();

    let mut s = shell(dir.path(), state.path(), &["."]);
    s.exp_string(PROMPT).unwrap();
    s.send_line("quit").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn a_table_sent_to_a_file_by_o_streams_as_a_scripts_table() {
    // Regression: the shell held every batch of a table sent to a file, to fit a screen that a
    // file does not have.
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let lines: String = (1..=300).map(usage).collect();
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{lines}")).unwrap();
    let sql = "select run_id, line, input_tokens, null as nothing from usage order by line";
    let script = crate::util::txq(&["-e", sql, "."], dir.path());
    assert_eq!(script.code, 0, "{}", script.stderr);
    assert_eq!(script.stdout.lines().count(), 300 + 4, "{}", script.stdout);

    let mut s = shell(dir.path(), state.path(), &["."]);
    let file = state.path().join("out.txt");
    s.exp_string(PROMPT).unwrap();
    s.send_line(&format!("\\o {}", file.display())).unwrap();
    s.exp_string("results go to").unwrap();
    let footer = run(&mut s, &format!("{sql};"));
    assert!(footer.contains("300 rows in"), "{footer}");
    command(&mut s, "\\o", "results go to the terminal");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), script.stdout);
    s.exp_string(PROMPT).unwrap();
    s.send_line("quit").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn the_shell_works_with_no_transcripts_and_takes_in_a_default_place_that_appears() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut s = shell(dir.path(), state.path(), &["--format", "csv"]);
    let start = s.exp_string(PROMPT).unwrap();
    assert!(
        start.contains("txq: note: no transcripts given and none found in the default places"),
        "{start}"
    );
    assert!(start.contains("over no transcripts yet"), "{start}");
    s.send_line("select 1 as one;").unwrap();
    s.exp_string("one\r\n1\r\n").unwrap();
    assert!(run(&mut s, "select count(*) as n from events;").contains("n\r\n0\r\n"));
    command(&mut s, "\\d", "prices");

    let transcripts = dir.path().join(".rupu").join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    std::fs::write(transcripts.join("run_1.jsonl"), format!("{START}\n{}", usage(5))).unwrap();
    let out = run(&mut s, "select count(*) as n, sum(input_tokens) as s from usage;");
    assert!(out.contains("n,s\r\n1,5\r\n"), "{out}");
    s.exp_string(PROMPT).unwrap();
    s.send_line("\\q").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn sql_runs_with_no_transcripts_anywhere_with_a_note_naming_each_place_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::util::txq(&["--format", "csv", "-e", "select 1 as one"], dir.path());
    assert_eq!((out.code, out.stdout.as_str()), (0, "one\n1\n"), "{}", out.stderr);
    let home = crate::util::home_dir().display();
    assert_eq!(
        out.stderr,
        format!(
            "txq: note: no transcripts given and none found in the default places: looked in \
             .rupu/transcripts, {home}/.rupu/transcripts, .reeval/runs, evals/.history, {home}/.claude/projects, \
             {home}/.config/claude/projects, {home}/.codex/sessions, {home}/.codex/archived_sessions, {home}/.gemini/tmp; the tables are empty\n"
        )
    );
    let out = crate::util::txq(
        &[
            "--format",
            "csv",
            "-e",
            "select count(*) as n from events; select count(*) > 0 as priced from prices",
        ],
        dir.path(),
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "n\n0\npriced\ntrue\n"), "{}", out.stderr);
    let out = crate::util::txq(&["--format", "csv", "-e", "select * from events"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1, "a header, no rows: {}", out.stdout);

    // A folder given twice holding none is named once.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let out = crate::util::txq(&["-q", "-e", "select 1", "empty", "empty"], dir.path());
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let out = crate::util::txq(&["-e", "select 1", "empty", "empty"], dir.path());
    assert_eq!(
        out.stderr,
        "txq: note: no transcripts in empty: looked for rupu transcripts (*.jsonl files with a \
         run_start line), reeval attempts (transcript.jsonl), Claude Code sessions \
         (projects/*/*.jsonl), Codex CLI rollouts (sessions/**/rollout-*.jsonl) and Gemini CLI chats \
         (tmp/*/chats/**/*.jsonl); the tables are empty\n"
    );
    // An export of nothing stays an error.
    let out = crate::util::txq(&["export", "--out", "o", "empty"], dir.path());
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("txq: error: no transcripts in empty: "), "{}", out.stderr);
}

#[test]
fn query_list_on_a_terminal_is_one_block_a_query() {
    let state = tempfile::tempdir().unwrap();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("stty cols 80 rows 24; exec {} query --list", env!("CARGO_BIN_EXE_txq")))
        .envs(crate::util::hermetic_env())
        .env("HOME", state.path());
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    let mut s = spawn_with_options(command, options).unwrap();
    let out = s.exp_eof().unwrap();
    assert!(out.contains("aborted_runs\r\n    "), "{out}");
    assert!(!out.contains("+---"), "{out}");
    assert!(out.lines().all(|l| l.trim_end_matches('\r').chars().count() < 80), "{out}");
}
