//! The command line: exit codes, stderr for problems, stdout for results, every output format.

use crate::util::{default_corpus, parse_ndjson, txq};

#[test]
fn damaged_files_warn_once_on_stderr_and_still_answer() {
    let c = default_corpus();
    let dir = c.transcripts();
    let out = txq(
        &["--format", "csv", "-e", "select count(*) n from run_start", dir.to_str().unwrap()],
        c.dir.path(),
    );
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, format!("n\n{}\n", c.expected.runs.len()));
    let warnings: Vec<&str> = out.stderr.lines().collect();
    let files: std::collections::BTreeSet<&str> = c.expected.errors.iter().map(|(f, _)| f.as_str()).collect();
    let mut skipped = c.expected.non_transcripts.clone();
    skipped.sort();
    assert_eq!(skipped.len(), 1, "the generator writes a step log (its ledger is read as one)");
    assert_eq!(
        warnings,
        [
            format!(
                "txq: warning: {}/{}: not read: no run_start line, so not rupu transcripts (step logs \
                 or netflow ledgers?); `select file, skipped from rupu.files where not transcript` lists each with why",
                c.dir.path().display(),
                skipped[0]
            ),
            format!(
                "txq: warning: skipped {} damaged lines in {} files; `select * from rupu.errors` lists them",
                c.expected.errors.len(),
                files.len()
            )
        ]
    );
}

#[test]
fn default_path_is_the_projects_rupu_transcripts() {
    let c = default_corpus();
    let out = txq(&["--format", "ndjson", "-e", "select count(*) n from runs"], c.dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(parse_ndjson(&out.stdout)[0]["n"], c.expected.runs.len());
}

#[test]
fn several_statements_and_flags_run_in_order() {
    let c = default_corpus();
    let sql_file = c.dir.path().join("q.sql");
    std::fs::write(&sql_file, "select 3 as x;\n-- a comment; with a semicolon\nselect 'a;b' as y;").unwrap();
    let out =
        txq(&["--format", "csv", "-q", "-e", "select 1 as v; select 2 as w", "-f", "q.sql"], c.dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "v\n1\nw\n2\nx\n3\ny\na;b\n");
    assert_eq!(out.stderr, "");
}

#[test]
fn sql_errors_exit_1_with_a_hint() {
    let c = default_corpus();
    let out = txq(&["-q", "-e", "select * from usag"], c.dir.path());
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.starts_with("txq: error: "), "{}", out.stderr);
    assert!(out.stderr.contains("usag"), "{}", out.stderr);
    assert!(out.stderr.contains("information_schema.tables"), "{}", out.stderr);

    let out = txq(&["-q", "-e", "select input_tokns from usage"], c.dir.path());
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("input_tokens"), "suggests the right name: {}", out.stderr);
}

#[test]
fn missing_paths_exit_2_and_places_with_no_transcripts_are_a_note() {
    let c = default_corpus();
    let out = txq(&["-e", "select 1", "no/such/dir"], c.dir.path());
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no/such/dir: no such file or directory"), "{}", out.stderr);

    // Nothing to read is no error: the statement runs on empty tables, with a note.
    let empty = tempfile::tempdir().unwrap();
    let out = txq(&["-e", "select 1"], empty.path());
    assert_eq!(out.code, 0);
    assert!(out.stderr.contains("txq: note: ") && out.stderr.contains(".rupu/transcripts"), "{}", out.stderr);

    let out = txq(&["-e", "select 1", "."], empty.path());
    assert_eq!(out.code, 0);
    assert!(out.stderr.contains("txq: note: no transcripts in ."), "{}", out.stderr);
}

#[test]
fn every_output_format() {
    let c = default_corpus();
    let sql = "select 'a,b' as s, 2 as n, null as z";
    let run = |format: &str| txq(&["-q", "--format", format, "-e", sql], c.dir.path()).stdout;
    assert_eq!(run("csv"), "s,n,z\n\"a,b\",2,\n");
    assert_eq!(run("tsv"), "s\tn\tz\na,b\t2\t\n");
    assert_eq!(run("ndjson"), "{\"s\":\"a,b\",\"n\":2,\"z\":null}\n");
    assert_eq!(run("json"), "[{\"s\":\"a,b\",\"n\":2,\"z\":null}]\n");
    assert_eq!(
        run("table"),
        "+-----+---+---+\n| s   | n | z |\n+-----+---+---+\n| a,b | 2 |   |\n+-----+---+---+\n"
    );
}

#[test]
fn piped_stdin_runs_as_a_script() {
    let c = default_corpus();
    let out = crate::util::command(c.dir.path())
        .args(["-q", "--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"select 1 as one;\nselect 2 as two;\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "one\n1\ntwo\n2\n");
}

#[test]
fn a_closed_pipe_ends_quietly_in_every_format_and_a_full_disk_exits_3() {
    // Regression: csv and tsv said "Broken pipe" and exited 1 (arrow's CSV writer hands an I/O
    // error on as text), and an error message to a closed stderr panicked (exit 101).
    let c = default_corpus();
    let dir = c.transcripts();
    let args = |format| {
        ["-q", "--no-cache", "--format", format, "-e", "select * from events", dir.to_str().unwrap()]
    };
    for format in ["table", "csv", "tsv", "json", "ndjson"] {
        let mut child = crate::util::command(c.dir.path())
            .args(args(format))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut head = [0u8; 100];
        std::io::Read::read_exact(&mut stdout, &mut head).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{format}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Every format, the streamed table and JSON array too.
    for format in ["table", "csv", "tsv", "json", "ndjson"] {
        if !std::path::Path::new("/dev/full").exists() {
            break;
        }
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = crate::util::command(c.dir.path()).args(args(format)).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{format}");
        // The system's words, the same in every format.
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "txq: error: cannot write results: {}\n",
                std::io::Error::from_raw_os_error(libc::ENOSPC)
            ),
            "{format}"
        );
    }
}
