//! The normalized rows of a generated home as the binary gives them and as the generator's tally
//! has them, each row one line of text, so that a harness's test compares the two whole.

use crate::util::{command, parse_ndjson};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use txq::generate::{Harness, HarnessExpected, HarnessOptions, write_harness_home};

/// A home the generator writes with `options`, and its tally.
pub(crate) fn generated_home(options: &HarnessOptions) -> (tempfile::TempDir, HarnessExpected) {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_harness_home(dir.path(), options).unwrap();
    (dir, expected)
}

/// The calls of `harness` read with no path equal the tally, twice: a home written with `only`
/// `harness` and `HOME` pointing at it; then one written with `moved` (its harness's home
/// elsewhere), found through the harness's variables alone (`HOME` pointing at nothing).
pub(crate) fn calls_with_no_path_equal_the_tally(harness: Harness, moved: &HarnessOptions) {
    let name = harness.name();
    let (home, expected) = generated_home(&only(harness));
    let got = rows(home.path(), &[], &[("HOME", home.path().to_path_buf())], CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected, name), "{name}, HOME");

    let (home, expected) = generated_home(moved);
    let mut env: Vec<(&str, PathBuf)> = moved.env_vars(home.path());
    env.push(("HOME", home.path().join("nobody")));
    let got = rows(home.path(), &[], &env, CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected, name), "{name}, moved");
}

/// The options that write `harness` alone, the tally keeping every row.
pub(crate) fn only(harness: Harness) -> HarnessOptions {
    HarnessOptions { harnesses: vec![harness], keep_rows: true, ..HarnessOptions::default() }
}

/// Rows of `sql` run by the binary in `cwd` over `paths` (none: the default places), with `env`.
pub(crate) fn rows(
    cwd: &Path,
    paths: &[PathBuf],
    env: &[(&str, PathBuf)],
    sql: &str,
) -> Vec<Map<String, Value>> {
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
pub(crate) fn relative(home: &Path, file: &Value) -> String {
    let file = file.as_str().unwrap_or_default();
    file.strip_prefix(&format!("{}/", home.display())).unwrap_or(file).to_string()
}

pub(crate) const CALLS: &str = "select harness, session_id, parent_session_id, \
    to_char(ts, '%Y-%m-%dT%H:%M:%S%.3fZ') as ts, provider, model, input_tokens, cache_read_tokens, \
    cache_write_tokens, output_tokens, reasoning_tokens, file, line from calls order by file, line";

pub(crate) fn calls_of(home: &Path, rows: &[Map<String, Value>]) -> Vec<String> {
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

pub(crate) fn expected_calls(expected: &HarnessExpected, harness: &str) -> Vec<String> {
    let mut out: Vec<String> = expected
        .calls
        .iter()
        .filter(|c| c.harness == harness)
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

pub(crate) const TOOL_CALLS: &str = "select harness, session_id, to_char(ts, '%Y-%m-%dT%H:%M:%S%.3fZ') as ts, \
    tool, call_id, ok, error, duration_ms, mcp_server, result_bytes from tool_calls";

/// The binary's `tool_calls` over `paths`, a line each, sorted.
pub(crate) fn tool_calls_of(rows: &[Map<String, Value>]) -> Vec<String> {
    let mut got: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} {} {:?} {:?} mcp={:?} bytes={:?}",
                r["harness"].as_str().unwrap(),
                r["session_id"].as_str().unwrap(),
                r["ts"].as_str().unwrap_or_default(),
                r["tool"].as_str().unwrap_or_default(),
                r["call_id"].as_str().unwrap_or_default(),
                r["ok"],
                r["error"].as_str(),
                r["duration_ms"].as_i64(),
                r["mcp_server"].as_str(),
                r["result_bytes"].as_i64()
            )
        })
        .collect();
    got.sort();
    got
}

/// The tally's tool calls of `harness`, a line each, sorted.
pub(crate) fn expected_tool_calls(expected: &HarnessExpected, harness: &str) -> Vec<String> {
    let mut want: Vec<String> = expected
        .tool_calls
        .iter()
        .filter(|t| t.harness == harness)
        .map(|t| {
            format!(
                "{} {} {} {} {} {} {:?} {:?} mcp={:?} bytes={:?}",
                t.harness,
                t.session_id,
                t.ts,
                t.tool,
                t.call_id,
                t.ok,
                t.error.as_deref(),
                t.duration_ms,
                t.mcp_server.as_deref(),
                t.result_bytes
            )
        })
        .collect();
    want.sort();
    want
}

pub(crate) const SESSIONS: &str = "select harness, session_id, parent_session_id, \
    to_char(started_at, '%Y-%m-%dT%H:%M:%S%.3fZ') as started_at, \
    to_char(ended_at, '%Y-%m-%dT%H:%M:%S%.3fZ') as ended_at, cwd, model, calls, \
    input_tokens, output_tokens, tool_calls, file from sessions";

/// The binary's `sessions`, a line each, sorted.
pub(crate) fn sessions_of(home: &Path, rows: &[Map<String, Value>]) -> Vec<String> {
    let mut got: Vec<String> = rows
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
                relative(home, &r["file"]),
            )
        })
        .collect();
    got.sort();
    got
}

/// The tally's sessions of `harness`, a line each, sorted.
pub(crate) fn expected_sessions(expected: &HarnessExpected, harness: &str) -> Vec<String> {
    let mut want: Vec<String> = expected
        .sessions
        .iter()
        .filter(|s| s.harness == harness)
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
    want
}

/// Each UTC day's calls and tokens per model of `harness` in the tally, as `txq query daily`
/// lines.
pub(crate) fn expected_days(expected: &HarnessExpected, harness: &str) -> Vec<String> {
    let mut days: std::collections::BTreeMap<(String, String), (u64, i64, i64)> = Default::default();
    for call in expected.calls.iter().filter(|c| c.harness == harness) {
        let sums = days.entry((call.ts[..10].to_string(), call.model.clone())).or_default();
        *sums = (sums.0 + 1, sums.1 + call.input_tokens, sums.2 + call.output_tokens);
    }
    days.iter()
        .map(|((day, model), (calls, input, output))| {
            format!("{day} {harness} {model} calls={calls} in={input} out={output}")
        })
        .collect()
}

/// `txq query daily`'s rows, as [`expected_days`] writes them.
pub(crate) fn days_of(rows: &[Map<String, Value>]) -> Vec<String> {
    let mut got: Vec<String> = rows
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
    got
}
