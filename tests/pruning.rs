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
