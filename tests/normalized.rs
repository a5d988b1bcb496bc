//! rupu's and reeval's rows of the normalized `calls`, `tool_calls` and `sessions`, through the
//! real binary, against the generators' tallies (never the SQL's).

use crate::util::{int, parse_ndjson, text, txq};
use std::collections::BTreeMap;
use txq::generate::{ReevalOptions, RupuOptions, write_reeval_corpus, write_rupu_corpus};

fn rows(dir: &std::path::Path, sql: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let out = txq(&["--no-cache", "--format", "ndjson", "-e", sql, dir.to_str().unwrap()], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    parse_ndjson(&out.stdout)
}

#[test]
fn rupu_usage_lines_tool_calls_and_runs_are_its_calls_tool_calls_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_rupu_corpus(dir.path(), &RupuOptions::default()).unwrap();
    let calls = rows(
        dir.path(),
        "select model, count(*) as n, sum(output_tokens) as o from calls \
                                 where harness = 'rupu' group by model",
    );
    let by_model: BTreeMap<String, (i64, i64)> =
        calls.iter().map(|r| (text(r, "model"), (int(r, "n").unwrap(), int(r, "o").unwrap()))).collect();
    let usage_lines: i64 = by_model.values().map(|v| v.0).sum();
    assert_eq!(usage_lines as u64, expected.events_by_type["usage"]);
    let outputs: BTreeMap<String, i64> = by_model.iter().map(|(m, v)| (m.clone(), v.1)).collect();
    let want: BTreeMap<String, i64> =
        expected.tokens_by_model.iter().map(|(m, t)| (m.clone(), t.1)).collect();
    assert_eq!(outputs, want);

    let tools = rows(dir.path(), "select count(*) as n from tool_calls where harness = 'rupu'");
    assert_eq!(int(&tools[0], "n").unwrap() as u64, expected.events_by_type["tool_call"]);

    let sessions =
        rows(dir.path(), "select session_id, calls, tool_calls from sessions where harness = 'rupu'");
    let got: BTreeMap<String, i64> =
        sessions.iter().map(|r| (text(r, "session_id"), int(r, "tool_calls").unwrap())).collect();
    let want: BTreeMap<String, i64> =
        expected.runs.iter().map(|r| (r.run_id.clone(), r.tool_calls as i64)).collect();
    assert_eq!(got, want);
}

#[test]
fn reeval_tool_events_and_attempts_are_its_tool_calls_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
    let tools = rows(
        dir.path(),
        "select tool, count(*) as n, count(*) filter (where not ok) as failed \
                                  from tool_calls where harness = 'reeval' group by tool",
    );
    let got: BTreeMap<String, (u64, u64)> = tools
        .iter()
        .map(|r| (text(r, "tool"), (int(r, "n").unwrap() as u64, int(r, "failed").unwrap() as u64)))
        .collect();
    assert_eq!(got, expected.tool_by_name);

    let sessions =
        rows(dir.path(), "select session_id, tool_calls, calls from sessions where harness = 'reeval'");
    let got: BTreeMap<String, (i64, i64)> = sessions
        .iter()
        .map(|r| (text(r, "session_id"), (int(r, "tool_calls").unwrap(), int(r, "calls").unwrap())))
        .collect();
    let want: BTreeMap<String, (i64, i64)> = expected
        .attempts
        .iter()
        .map(|a| {
            let tree = if a.history { "history" } else { "runs" };
            (format!("{tree}/{}/{}/{}/{}", a.run_id, a.eval, a.cell, a.attempt), (a.tool_calls as i64, 0))
        })
        .collect();
    assert_eq!(got, want);
}
