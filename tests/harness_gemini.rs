//! Gemini CLI chats read as the generator wrote them: every row of the normalized `calls`,
//! `tool_calls` and `sessions` equals the generator's tally (never the SQL's), through the real
//! binary, given the home's path, given none (`HOME` the generated home), and with
//! `GEMINI_CLI_HOME` moving it; each damaged line is named.

use crate::harness_rows::*;
use crate::util::parse_ndjson;
use std::path::PathBuf;
use txq::generate::{Harness, HarnessOptions};

#[test]
fn each_gemini_call_is_the_last_write_of_a_response_with_tokens() {
    let (home, expected) = generated_home(&only(Harness::Gemini));
    let want = expected_calls(&expected, "gemini");
    assert!(want.len() > 30, "a home with many calls: {}", want.len());
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], CALLS);
    assert_eq!(calls_of(home.path(), &got), want);
}

#[test]
fn gemini_chats_are_found_in_gemini_cli_home_or_under_home_with_no_path() {
    let moved = HarnessOptions { gemini_home: PathBuf::from("elsewhere/gemini"), ..only(Harness::Gemini) };
    calls_with_no_path_equal_the_tally(moved.harnesses[0], &moved);
}

#[test]
fn gemini_tool_calls_are_those_of_each_messages_last_write() {
    let (home, expected) = generated_home(&only(Harness::Gemini));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], TOOL_CALLS);
    let want = expected_tool_calls(&expected, "gemini");
    assert!(want.iter().any(|t| t.contains(" false ")), "failing commands among them");
    assert_eq!(tool_calls_of(&got), want);
}

#[test]
fn gemini_sessions_are_each_chat_with_its_project_and_sums() {
    let (home, expected) = generated_home(&only(Harness::Gemini));
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], SESSIONS);
    let want = expected_sessions(&expected, "gemini");
    assert!(want.iter().any(|s| !s.contains(" None ")), "a subagent");
    assert_eq!(sessions_of(home.path(), &got), want);
}

#[test]
fn a_damaged_gemini_line_is_named_and_a_cut_off_last_one_is_not() {
    let (home, expected) = generated_home(&only(Harness::Gemini));
    let sql = "select file, line from gemini.errors order by file, line";
    let got: Vec<(String, u64)> = rows(home.path(), &[home.path().to_path_buf()], &[], sql)
        .iter()
        .map(|r| (relative(home.path(), &r["file"]), r["line"].as_u64().unwrap()))
        .collect();
    let last_line = |file: &String| expected.errors.iter().filter(|(f, _)| f == file).map(|(_, l)| *l).max();
    let want: Vec<(String, u64)> = expected
        .errors
        .iter()
        .filter(|(file, line)| {
            file.starts_with(".gemini/")
                && !(expected.cut_off.contains(file) && last_line(file) == Some(*line))
        })
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn a_rewound_message_leaves_the_transcript_but_stays_a_call() {
    let (home, _) = generated_home(&only(Harness::Gemini));
    let sql = "select m.rewound, count(*) as n, count(c.line) as calls from gemini.messages m \
               left join calls c on c.file = m.file and c.line = m.line group by 1 order by 1";
    let got = rows(home.path(), &[home.path().to_path_buf()], &[], sql);
    let rewound = got.iter().find(|r| r["rewound"] == true).expect("a rewound message");
    assert!(rewound["calls"].as_u64().unwrap() >= 1, "{got:?}");
}

#[test]
fn txq_query_daily_over_gemini_gives_each_days_calls_of_the_tally() {
    let (home, expected) = generated_home(&only(Harness::Gemini));
    let out = crate::util::txq(
        &["--no-cache", "--format", "ndjson", "query", "daily", home.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(days_of(&parse_ndjson(&out.stdout)), expected_days(&expected, "gemini"));
}
