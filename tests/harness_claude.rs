//! Claude Code sessions read as the generator wrote them: every row of the normalized `calls`,
//! `tool_calls` and `sessions` equals the generator's tally (never the SQL's), through the real
//! binary, given the home's path, given none (`HOME` the generated home), and with
//! `CLAUDE_CONFIG_DIR` moving the home.

use crate::harness_rows::*;
use crate::util::parse_ndjson;
use std::path::PathBuf;
use txq::generate::{Harness, HarnessOptions};

#[test]
fn every_claude_call_is_counted_once_with_the_figures_of_its_fullest_copy() {
    let (home, expected) = generated_home(&only(Harness::Claude));
    assert!(expected.calls.len() > 100, "a home with many calls: {}", expected.calls.len());
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], CALLS);
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected, "claude"));
}

#[test]
fn the_default_places_and_a_moved_claude_home_are_read_with_no_path() {
    // With no path: ~/.claude and ~/.config/claude under HOME; then CLAUDE_CONFIG_DIR, the one
    // home, elsewhere.
    let moved =
        HarnessOptions { claude_dirs: vec![PathBuf::from("elsewhere/claude")], ..only(Harness::Claude) };
    calls_with_no_path_equal_the_tally(moved.harnesses[0], &moved);
}

#[test]
fn claude_tool_calls_are_each_tool_use_once_joined_to_its_result() {
    let (home, expected) = generated_home(&only(Harness::Claude));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], TOOL_CALLS);
    let want = expected_tool_calls(&expected, "claude");
    assert!(!want.is_empty());
    assert_eq!(tool_calls_of(&got), want);
}

#[test]
fn claude_sessions_are_each_main_session_and_subagent_with_its_sums() {
    let (home, expected) = generated_home(&only(Harness::Claude));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], SESSIONS);
    assert_eq!(sessions_of(home.path(), &got), expected_sessions(&expected, "claude"));
}

#[test]
fn txq_query_daily_gives_each_days_calls_and_tokens_of_the_tally() {
    let (home, expected) = generated_home(&only(Harness::Claude));
    let out = crate::util::txq(
        &["--no-cache", "--format", "ndjson", "query", "daily", home.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = expected_days(&expected, "claude");
    assert!(want.len() > 1, "several days");
    assert_eq!(days_of(&parse_ndjson(&out.stdout)), want);
}

#[test]
fn claude_content_blocks_hold_each_tool_use_and_its_result() {
    let (home, expected) = generated_home(&only(Harness::Claude));
    let sql = "select count(distinct (session_id, tool_use_id)) as uses from claude.content_blocks \
               where block_type = 'tool_use'";
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], sql);
    let want = expected.tool_calls.iter().filter(|t| t.harness == "claude").count();
    assert!(want > 10);
    assert_eq!(got[0]["uses"], want);
    // Every failed call's result is a tool_result block with is_error.
    let sql = "select count(distinct (session_id, tool_use_id)) as failed from claude.content_blocks \
               where block_type = 'tool_result' and is_error";
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], sql);
    let failed = expected.tool_calls.iter().filter(|t| t.harness == "claude" && !t.ok).count();
    assert!(failed > 0);
    assert_eq!(got[0]["failed"], failed);
}
