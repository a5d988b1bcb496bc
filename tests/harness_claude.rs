//! Claude Code sessions read as the generator wrote them: every row of the normalized `calls`,
//! `tool_calls` and `sessions` equals the generator's tally (never the SQL's), through the real
//! binary, given the home's path, given none (`HOME` the generated home), and with
//! `CLAUDE_CONFIG_DIR` moving the home.

use crate::util::{command, parse_ndjson};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use txq::generate::{Harness, HarnessExpected, HarnessOptions, write_harness_home};

/// A home holding Claude Code's sessions only, its tally keeping every row.
fn claude_home(options: HarnessOptions) -> (tempfile::TempDir, HarnessExpected) {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_harness_home(dir.path(), &options).unwrap();
    (dir, expected)
}

fn claude_only() -> HarnessOptions {
    HarnessOptions { harnesses: vec![Harness::Claude], keep_rows: true, ..HarnessOptions::default() }
}

/// Rows of `sql` run by the binary in `cwd` over `paths` (none: the default places), with `env`.
fn rows(cwd: &Path, paths: &[PathBuf], env: &[(&str, PathBuf)], sql: &str) -> Vec<Map<String, Value>> {
    let mut run = command(cwd);
    run.args(["--no-cache", "--format", "ndjson", "-e", sql]).args(paths);
    for (name, value) in env {
        run.env(name, value);
    }
    let out = run.output().expect("txq runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    parse_ndjson(&String::from_utf8_lossy(&out.stdout))
}

/// A file column as the tally spells it: relative to the home, `/`-separated.
fn relative(home: &Path, file: &Value) -> String {
    let file = file.as_str().unwrap_or_default();
    file.strip_prefix(&format!("{}/", home.display())).unwrap_or(file).to_string()
}

const CALLS: &str = "select harness, session_id, parent_session_id, \
    to_char(ts, '%Y-%m-%dT%H:%M:%S%.3fZ') as ts, provider, model, input_tokens, cache_read_tokens, \
    cache_write_tokens, output_tokens, reasoning_tokens, file, line from calls order by file, line";

fn calls_of(home: &Path, rows: &[Map<String, Value>]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {} {} {} in={} read={} write={} out={} reasoning={:?} {}:{}",
                r["harness"].as_str().unwrap(),
                r["session_id"].as_str().unwrap(),
                r["parent_session_id"].as_str(),
                r["ts"].as_str().unwrap_or_default(),
                r["provider"].as_str().unwrap(),
                r["model"].as_str().unwrap(),
                r["input_tokens"],
                r["cache_read_tokens"],
                r["cache_write_tokens"],
                r["output_tokens"],
                r["reasoning_tokens"].as_i64(),
                relative(home, &r["file"]),
                r["line"],
            )
        })
        .collect();
    out.sort();
    out
}

fn expected_calls(expected: &HarnessExpected) -> Vec<String> {
    let mut out: Vec<String> = expected
        .calls
        .iter()
        .filter(|c| c.harness == "claude")
        .map(|c| {
            format!(
                "{} {} {:?} {} {} {} in={} read={} write={} out={} reasoning={:?} {}:{}",
                c.harness,
                c.session_id,
                c.parent_session_id.as_deref(),
                c.ts,
                c.provider,
                c.model,
                c.input_tokens,
                c.cache_read_tokens,
                c.cache_write_tokens,
                c.output_tokens,
                c.reasoning_tokens,
                c.file,
                c.line,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_claude_call_is_counted_once_with_the_figures_of_its_fullest_copy() {
    let (home, expected) = claude_home(claude_only());
    assert!(expected.calls.len() > 100, "a home with many calls: {}", expected.calls.len());
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected));
}

#[test]
fn the_default_places_and_a_moved_claude_home_are_read_with_no_path() {
    // With no path: HOME is the generated home, ~/.claude and ~/.config/claude are read.
    let (home, expected) = claude_home(claude_only());
    let env = [("HOME", home.path().to_path_buf())];
    let got = rows(home.path(), &[], &env, CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected));

    // CLAUDE_CONFIG_DIR names the one home, elsewhere.
    let moved = HarnessOptions { claude_dirs: vec![PathBuf::from("elsewhere/claude")], ..claude_only() };
    let (home, expected) = claude_home(moved.clone());
    let mut env: Vec<(&str, PathBuf)> = moved.env_vars(home.path());
    env.push(("HOME", home.path().join("nobody")));
    let got = rows(home.path(), &[], &env, CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected));
}

#[test]
fn claude_tool_calls_are_each_tool_use_once_joined_to_its_result() {
    let (home, expected) = claude_home(claude_only());
    let sql = "select harness, session_id, to_char(ts, '%Y-%m-%dT%H:%M:%S%.3fZ') as ts, tool, call_id, \
               ok, error, duration_ms from tool_calls";
    let mut got: Vec<String> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} {} {:?} {:?}",
                r["harness"].as_str().unwrap(),
                r["session_id"].as_str().unwrap(),
                r["ts"].as_str().unwrap_or_default(),
                r["tool"].as_str().unwrap_or_default(),
                r["call_id"].as_str().unwrap_or_default(),
                r["ok"],
                r["error"].as_str(),
                r["duration_ms"].as_i64()
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<String> = expected
        .tool_calls
        .iter()
        .filter(|t| t.harness == "claude")
        .map(|t| {
            format!(
                "{} {} {} {} {} {} {:?} {:?}",
                t.harness,
                t.session_id,
                t.ts,
                t.tool,
                t.call_id,
                t.ok,
                t.error.as_deref(),
                t.duration_ms
            )
        })
        .collect();
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn claude_sessions_are_each_main_session_and_subagent_with_its_sums() {
    let (home, expected) = claude_home(claude_only());
    let sql = "select harness, session_id, parent_session_id, \
               to_char(started_at, '%Y-%m-%dT%H:%M:%S%.3fZ') as started_at, \
               to_char(ended_at, '%Y-%m-%dT%H:%M:%S%.3fZ') as ended_at, cwd, model, calls, \
               input_tokens, output_tokens, tool_calls, file from sessions";
    let mut got: Vec<String> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} {:?} calls={} in={} out={} tools={} {}",
                r["harness"].as_str().unwrap(),
                r["session_id"].as_str().unwrap(),
                r["parent_session_id"].as_str(),
                r["started_at"].as_str(),
                r["ended_at"].as_str(),
                r["cwd"].as_str(),
                r["model"].as_str(),
                r["calls"],
                r["input_tokens"],
                r["output_tokens"],
                r["tool_calls"],
                relative(home.path(), &r["file"]),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<String> = expected
        .sessions
        .iter()
        .filter(|s| s.harness == "claude")
        .map(|s| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} {:?} calls={} in={} out={} tools={} {}",
                s.harness,
                s.session_id,
                s.parent_session_id.as_deref(),
                s.started_at.as_deref(),
                s.ended_at.as_deref(),
                s.cwd.as_deref(),
                s.model.as_deref(),
                s.calls,
                s.input_tokens,
                s.output_tokens,
                s.tool_calls,
                s.file
            )
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn txq_query_daily_gives_each_days_calls_and_tokens_of_the_tally() {
    let (home, expected) = claude_home(claude_only());
    let out = crate::util::txq(
        &["--no-cache", "--format", "ndjson", "query", "daily", home.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut got: Vec<String> = parse_ndjson(&out.stdout)
        .iter()
        .map(|r| {
            format!(
                "{} {} {} calls={} in={} out={}",
                r["day"].as_str().unwrap(),
                r["harness"].as_str().unwrap(),
                r["model"].as_str().unwrap(),
                r["calls"],
                r["input_tokens"],
                r["output_tokens"]
            )
        })
        .collect();
    got.sort();
    let mut days: std::collections::BTreeMap<(String, String), (u64, i64, i64)> = Default::default();
    for call in expected.calls.iter().filter(|c| c.harness == "claude") {
        let sums = days.entry((call.ts[..10].to_string(), call.model.clone())).or_default();
        *sums = (sums.0 + 1, sums.1 + call.input_tokens, sums.2 + call.output_tokens);
    }
    let want: Vec<String> = days
        .iter()
        .map(|((day, model), (calls, input, output))| {
            format!("{day} claude {model} calls={calls} in={input} out={output}")
        })
        .collect();
    assert!(want.len() > 1, "several days");
    assert_eq!(got, want);
}
