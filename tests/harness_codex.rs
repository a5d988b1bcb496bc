//! Codex CLI rollouts read as the generator wrote them: every row of the normalized `calls`,
//! `tool_calls` and `sessions` equals the generator's tally (never the SQL's), through the real
//! binary, given the home's path, given none (`HOME` the generated home), and with `CODEX_HOME`
//! moving it; the copies that do not count are named, and each damaged line is.

use crate::harness_rows::*;
use crate::util::parse_ndjson;
use std::path::PathBuf;
use txq::generate::{Harness, HarnessOptions};

#[test]
fn each_codex_call_is_a_count_whose_totals_moved_and_no_replay_of_a_parent() {
    let (home, expected) = generated_home(&only(Harness::Codex));
    let want = expected_calls(&expected, "codex");
    assert!(want.len() > 50, "a home with many calls: {}", want.len());
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], CALLS);
    assert_eq!(calls_of(home.path(), &got), want);
}

#[test]
fn codex_rollouts_are_found_in_codex_home_or_under_home_with_no_path() {
    let moved = HarnessOptions { codex_home: PathBuf::from("elsewhere/codex"), ..only(Harness::Codex) };
    calls_with_no_path_equal_the_tally(moved.harnesses[0], &moved);
}

#[test]
fn codex_tool_calls_are_each_function_call_once_across_a_lineage() {
    let (home, expected) = generated_home(&only(Harness::Codex));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], TOOL_CALLS);
    let want = expected_tool_calls(&expected, "codex");
    assert!(want.iter().any(|t| t.contains(" false ")), "failing commands among them");
    assert_eq!(tool_calls_of(&got), want);
}

#[test]
fn codex_sessions_are_each_thread_with_its_parent_and_sums() {
    let (home, expected) = generated_home(&only(Harness::Codex));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], SESSIONS);
    let want = expected_sessions(&expected, "codex");
    assert!(want.iter().filter(|s| !s.contains(" None ")).count() >= 2, "a forked and a spawned child");
    assert_eq!(sessions_of(home.path(), &got), want);
}

#[test]
fn a_zst_beside_its_rollout_and_an_archived_copy_are_named_and_not_read() {
    let (home, expected) = generated_home(&only(Harness::Codex));
    let sql = "select file, skipped from codex.files where not transcript order by file";
    let got: Vec<String> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| relative(home.path(), &r["file"]))
        .collect();
    assert_eq!(got, expected.shadowed);
    let sql = "select file, line from codex.errors order by file, line";
    let got: Vec<(String, u64)> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| (relative(home.path(), &r["file"]), r["line"].as_u64().unwrap()))
        .collect();
    let cut_off: Vec<&String> = expected.cut_off.iter().filter(|f| f.starts_with(".codex/")).collect();
    assert!(!cut_off.is_empty(), "a rollout ends with a cut-off line");
    // A cut-off last line is skipped in silence (a rollout may still be written): not an error.
    let last_line = |file: &String| expected.errors.iter().filter(|(f, _)| f == file).map(|(_, l)| *l).max();
    let want: Vec<(String, u64)> = expected
        .errors
        .iter()
        .filter(|(file, line)| {
            file.starts_with(".codex/")
                && !(expected.cut_off.contains(file) && last_line(file) == Some(*line))
        })
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn txq_query_daily_over_codex_gives_each_days_calls_of_the_tally() {
    let (home, expected) = generated_home(&only(Harness::Codex));
    let out = crate::util::txq(
        &["--no-cache", "--format", "ndjson", "query", "daily", home.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(days_of(&parse_ndjson(&out.stdout)), expected_days(&expected, "codex"));
}

/// A spawned child whose rollout has no `turn_context` of its own: its counts take the model the
/// latest count names in `info` (as some builds write), and its replay of the parent's counts is
/// still no call.
#[test]
fn a_childs_count_without_a_turn_context_takes_the_model_its_info_names() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join(".codex/sessions/2026/05/12");
    std::fs::create_dir_all(&day).unwrap();
    let count = |ts: &str, last: (i64, i64), total: (i64, i64), model: &str| {
        let usage = |(input, output): (i64, i64)| {
            format!(
                r#"{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":{output},"reasoning_output_tokens":0,"total_tokens":{}}}"#,
                input + output
            )
        };
        let model = if model.is_empty() { String::new() } else { format!(r#","model":"{model}""#) };
        format!(
            r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{"last_token_usage":{},"total_token_usage":{}{model}}}}}}}"#,
            usage(last),
            usage(total)
        )
    };
    let parent = [
        r#"{"timestamp":"2026-05-12T08:00:00.000Z","type":"session_meta","payload":{"id":"parent","cwd":"/p"}}"#.to_string(),
        r#"{"timestamp":"2026-05-12T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.2"}}"#.to_string(),
        count("2026-05-12T08:01:00.000Z", (1000, 200), (1000, 200), ""),
    ];
    let child = [
        r#"{"timestamp":"2026-05-12T08:03:00.000Z","type":"session_meta","payload":{"id":"child","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent"}}}}}"#.to_string(),
        r#"{"timestamp":"2026-05-12T08:03:00.000Z","type":"session_meta","payload":{"id":"parent"}}"#.to_string(),
        count("2026-05-12T08:03:00.000Z", (1000, 200), (1000, 200), ""),
        count("2026-05-12T08:04:00.000Z", (100, 20), (100, 20), "gpt-5.1-codex-mini"),
        count("2026-05-12T08:05:00.000Z", (50, 10), (150, 30), ""),
    ];
    std::fs::write(day.join("rollout-2026-05-12T08-00-00-parent.jsonl"), parent.join("\n") + "\n").unwrap();
    std::fs::write(day.join("rollout-2026-05-12T08-03-00-child.jsonl"), child.join("\n") + "\n").unwrap();
    let sql =
        "select session_id, parent_session_id, model, input_tokens, output_tokens from calls order by ts";
    let got: Vec<String> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| {
            format!(
                "{} {:?} {:?} {} {}",
                r["session_id"].as_str().unwrap(),
                r["parent_session_id"].as_str(),
                r["model"].as_str(),
                r["input_tokens"],
                r["output_tokens"]
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "parent None Some(\"gpt-5.2\") 1000 200",
            "child Some(\"parent\") Some(\"gpt-5.1-codex-mini\") 100 20",
            "child Some(\"parent\") Some(\"gpt-5.1-codex-mini\") 50 10",
        ]
    );
}

/// A re-emitted count whose totals cannot all be read (a figure as text, null, missing, negative,
/// beyond a count's range, or no totals at all) is no call: each is listed in `errors`, and the
/// count before it stays the baseline, so the next count with totals only bills its difference
/// from that count, not its whole running total again.
#[test]
fn a_damaged_re_emitted_count_bills_no_call_and_the_baseline_stands() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join(".codex/sessions/2026/05/12");
    std::fs::create_dir_all(&day).unwrap();
    let figures = r#""input_tokens":1000,"cached_input_tokens":400,"output_tokens":200,"reasoning_output_tokens":50,"total_tokens":1200"#;
    let count = |ts: &str, totals: &str| {
        format!(
            r#"{{"timestamp":"2026-05-12T08:{ts}.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{{totals}}}}}}}"#
        )
    };
    let totals = |figures: &str| format!(r#""total_token_usage":{{{figures}}}"#);
    let damaged = [
        figures.replace(r#""input_tokens":1000"#, r#""input_tokens":"1000""#),
        figures.replace(r#""cached_input_tokens":400"#, r#""cached_input_tokens":null"#),
        figures.replace(r#""output_tokens":200,"#, ""),
        figures.replace(r#""reasoning_output_tokens":50"#, r#""reasoning_output_tokens":-50"#),
        figures.replace(r#""total_tokens":1200"#, r#""total_tokens":1099511627776"#),
    ];
    let mut lines = vec![
        r#"{"timestamp":"2026-05-12T08:00:00.000Z","type":"session_meta","payload":{"id":"t","cwd":"/p"}}"#
            .to_string(),
        r#"{"timestamp":"2026-05-12T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.2"}}"#
            .to_string(),
        count("01:00", &totals(figures)),
    ];
    for (nth, figures) in damaged.iter().enumerate() {
        lines.push(count(&format!("02:0{nth}"), &totals(figures)));
    }
    lines.push(count("03:00", r#""model_context_window":272000"#));
    let next = r#""input_tokens":1500,"cached_input_tokens":600,"output_tokens":300,"reasoning_output_tokens":80,"total_tokens":1800"#;
    lines.push(count("04:00", &totals(next)));
    std::fs::write(day.join("rollout-2026-05-12T08-00-00-t.jsonl"), lines.join("\n") + "\n").unwrap();
    let sql = "select input_tokens, cache_read_tokens, output_tokens, reasoning_tokens, line from calls order by line";
    let got: Vec<String> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {}",
                r["input_tokens"],
                r["cache_read_tokens"],
                r["output_tokens"],
                r["reasoning_tokens"],
                r["line"]
            )
        })
        .collect();
    assert_eq!(got, ["1000 400 200 50 3", "500 200 100 30 10"]);
    let sql = "select line from codex.errors order by line";
    let damaged_lines: Vec<u64> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(damaged_lines, [4, 5, 6, 7, 8, 9], "each damaged count is listed once");
}
