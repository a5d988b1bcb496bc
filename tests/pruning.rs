//! Filters on per-file columns skip whole files, and never change an answer.

use crate::util::{default_corpus, int, text, txq};

#[test]
fn a_run_id_filter_reads_one_file_in_every_scan_of_runs() {
    let c = default_corpus();
    let run = &c.expected.runs[0];
    let sql = format!("explain select * from runs where run_id = '{}'", run.run_id);
    let out = txq(&["-q", "--format", "csv", "-e", &sql, c.transcripts().to_str().unwrap()], c.dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let scans: Vec<&str> = out.stdout.split("TranscriptScan: ").skip(1).collect();
    assert_eq!(scans.len(), 5, "{}", out.stdout);
    for scan in scans {
        assert!(scan.contains("files=1,") || scan.contains("files=1\n"), "{scan}");
    }
}

#[test]
fn filtered_answers_equal_unfiltered_ones() {
    let c = default_corpus();
    for run in &c.expected.runs {
        let rows = c.rows(&format!(
            "select run_id, turns, input_tokens, status from runs where run_id = '{}' and file like '%{}'",
            run.run_id, run.file
        ));
        assert_eq!(rows.len(), 1, "{}", run.run_id);
        assert_eq!(text(&rows[0], "status"), run.status);
        assert_eq!(int(&rows[0], "turns"), Some(run.turns as i64));
        assert_eq!(int(&rows[0], "input_tokens"), Some(run.input_tokens));
    }
    let archived: u64 = c.expected.runs.iter().filter(|r| r.archived).map(|r| r.tool_calls).sum();
    let rows = c.rows("select count(*) n from tool_call where archived");
    assert_eq!(int(&rows[0], "n"), Some(archived as i64));
}

/// A query that needs no value of a line (a count by type, by run, by file) is answered from the
/// events by type the inference pass counted in each file, reading none: the answers must be those
/// of a query that reads every line (asking for `line` forces the read), damaged files included.
#[test]
fn answers_from_event_counts_equal_answers_from_reading_the_lines() {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample");
    let c = default_corpus();
    let corpora = [
        (c.transcripts(), "rupu", "tool_call"),
        (sample.clone(), "rupu", "tool_call"),
        (sample, "reeval", "tool"),
    ];
    for (dir, schema, tool_calls) in corpora {
        let pairs = [
            (
                format!("select type, count(*) n from {schema}.events group by type order by type"),
                format!("select type, count(line) n from {schema}.events group by type order by type"),
            ),
            (
                format!(
                    "select run_id, count(*) n from {schema}.{tool_calls} group by run_id order by run_id"
                ),
                format!(
                    "select run_id, count(line) n from {schema}.{tool_calls} group by run_id order by run_id"
                ),
            ),
            (
                format!("select count(*) n from {schema}.events where file like '%1%'"),
                format!("select count(line) n from {schema}.events where file like '%1%'"),
            ),
        ];
        for (counted, read) in pairs {
            let run = |sql: &str| {
                let out = txq(&["--format", "csv", "-e", sql, dir.to_str().unwrap()], &dir);
                assert_eq!(out.code, 0, "{sql}: {}", out.stderr);
                out
            };
            let explain = run(&format!("explain {counted}")).stdout;
            assert!(explain.contains("rows from event counts"), "{explain}");
            assert!(!run(&format!("explain {read}")).stdout.contains("rows from event counts"));
            let (counted_out, read_out) = (run(&counted), run(&read));
            assert!(counted_out.stdout.lines().count() > 1, "{counted}: {}", counted_out.stdout);
            assert_eq!(counted_out.stdout, read_out.stdout, "{counted}");
            // The damaged lines are still reported.
            assert_eq!(counted_out.stderr, read_out.stderr, "{counted}");
        }
    }
}
