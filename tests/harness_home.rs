//! A home holding all three harnesses, read as a new user would: no path (`HOME` the generated
//! home), one statement over `calls` per harness and model, and `txq query daily`, each equal to
//! the generator's tally.

use crate::harness_rows::*;
use crate::util::parse_ndjson;
use txq::generate::{Harness, HarnessOptions, RupuOptions, write_harness_home, write_rupu_corpus};

#[test]
fn spend_per_harness_and_model_over_a_home_of_every_harness_equals_the_tally() {
    let home = tempfile::tempdir().unwrap();
    let expected = write_harness_home(home.path(), &HarnessOptions::default()).unwrap();
    let env = [("HOME", home.path().to_path_buf())];
    let sql = "select harness, model, count(*) as calls, sum(input_tokens) as input, \
               sum(cache_read_tokens) as cache_read, sum(cache_write_tokens) as cache_write, \
               sum(output_tokens) as output from calls group by 1, 2 order by 1, 2";
    let got: Vec<String> = rows(home.path(), &[], &env, sql)
        .iter()
        .map(|r| {
            format!(
                "{} {} calls={} in={} read={} write={} out={}",
                r["harness"].as_str().unwrap(),
                r["model"].as_str().unwrap(),
                r["calls"],
                r["input"],
                r["cache_read"],
                r["cache_write"],
                r["output"]
            )
        })
        .collect();
    let want: Vec<String> = expected
        .by_model
        .iter()
        .map(|((harness, model), sums)| {
            format!(
                "{harness} {model} calls={} in={} read={} write={} out={}",
                sums.calls,
                sums.input_tokens,
                sums.cache_read_tokens,
                sums.cache_write_tokens,
                sums.output_tokens
            )
        })
        .collect();
    let harnesses: std::collections::BTreeSet<&str> =
        expected.by_model.keys().map(|(h, _)| h.as_str()).collect();
    assert_eq!(harnesses.into_iter().collect::<Vec<_>>(), ["claude", "codex", "gemini"]);
    assert_eq!(got, want);

    let mut run = crate::util::command(home.path());
    run.args(["--no-cache", "--format", "ndjson", "query", "daily"]).env("HOME", home.path());
    let out = run.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut want: Vec<String> =
        ["claude", "codex", "gemini"].iter().flat_map(|harness| expected_days(&expected, harness)).collect();
    want.sort();
    assert_eq!(days_of(&parse_ndjson(&String::from_utf8_lossy(&out.stdout))), want);
}

#[test]
fn each_harness_schema_holds_its_own_calls_tool_calls_and_sessions() {
    let home = tempfile::tempdir().unwrap();
    let expected = write_harness_home(home.path(), &HarnessOptions::default()).unwrap();
    let path = [home.path().to_path_buf()];
    for harness in ["claude", "codex", "gemini"] {
        let own = |sql: &str| sql.replace("from calls", &format!("from {harness}.calls"));
        let got = rows(home.path(), &path, &[], &own(CALLS));
        assert_eq!(calls_of(home.path(), &got), expected_calls(&expected, harness), "{harness}.calls");
        let sql = TOOL_CALLS.replace("from tool_calls", &format!("from {harness}.tool_calls"));
        let got = rows(home.path(), &path, &[], &sql);
        assert_eq!(tool_calls_of(&got), expected_tool_calls(&expected, harness), "{harness}.tool_calls");
        let sql = SESSIONS.replace("from sessions", &format!("from {harness}.sessions"));
        let got = rows(home.path(), &path, &[], &sql);
        assert_eq!(
            sessions_of(home.path(), &got),
            expected_sessions(&expected, harness),
            "{harness}.sessions"
        );
    }
}

#[test]
fn a_rupu_transcript_among_claude_sessions_is_read_as_rupu_by_its_content() {
    // Claude Code claims `projects/*/*.jsonl` by path; rupu claims every `*.jsonl`. A rupu run
    // copied into a Claude project folder is claimed by both: its first line (`run_start`) is a
    // type rupu documents and Claude does not, so it is rupu's, and Claude's figures are untouched.
    let home = tempfile::tempdir().unwrap();
    let options =
        HarnessOptions { harnesses: vec![Harness::Claude], keep_rows: true, ..HarnessOptions::default() };
    let expected = write_harness_home(home.path(), &options).unwrap();
    let corpus = tempfile::tempdir().unwrap();
    let runs =
        write_rupu_corpus(corpus.path(), &RupuOptions { runs: 3, damage: false, ..RupuOptions::default() })
            .unwrap();
    let project = home.path().join(".claude/projects/-work-rupu");
    std::fs::create_dir_all(&project).unwrap();
    for run in &runs.runs {
        std::fs::copy(corpus.path().join(&run.file), project.join(format!("{}.jsonl", run.run_id))).unwrap();
    }
    let path = [home.path().to_path_buf()];
    for cache in [false, true] {
        // With the cache, twice: a file decided once is decided the same way again.
        for _ in 0..if cache { 2 } else { 1 } {
            let mut run = crate::util::command(home.path());
            if !cache {
                run.arg("--no-cache");
            }
            let sql = "select run_id, sum(input_tokens) as input, sum(output_tokens) as output \
                       from rupu.usage group by 1 order by 1";
            let out = run.args(["--format", "ndjson", "-e", sql]).args(&path).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && stderr.is_empty(), "{stderr}");
            let got: Vec<String> = parse_ndjson(&String::from_utf8_lossy(&out.stdout))
                .iter()
                .map(|r| format!("{} in={} out={}", r["run_id"].as_str().unwrap(), r["input"], r["output"]))
                .collect();
            let mut want: Vec<String> = runs
                .runs
                .iter()
                .map(|r| format!("{} in={} out={}", r.run_id, r.input_tokens, r.output_tokens))
                .collect();
            want.sort();
            assert_eq!(got, want, "cache {cache}");
        }
    }
    let got = rows(home.path(), &path, &[], &CALLS.replace("from calls", "from claude.calls"));
    assert_eq!(calls_of(home.path(), &got), expected_calls(&expected, "claude"));
    let sessions = rows(home.path(), &path, &[], "select count(*) as n from claude.sessions");
    assert_eq!(sessions[0]["n"], expected_sessions(&expected, "claude").len());
}

/// A link to a folder of the same home (`ln -s sessions/2026/09/03 ~/.codex/latest`, and the same
/// in Claude's and Gemini's homes) loses no transcript: a file is claimed, and named, by its real
/// path, whichever path the walk meets first, and nothing is said of the links.
#[test]
fn a_folder_symlink_inside_a_harness_home_loses_no_transcript() {
    let (home, expected) = generated_home(&HarnessOptions { keep_rows: true, ..HarnessOptions::default() });
    let first_dir = |dir: &std::path::Path, depth: usize| -> std::path::PathBuf {
        let mut at = dir.to_path_buf();
        for _ in 0..depth {
            let mut dirs: Vec<_> =
                std::fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
            dirs.sort();
            at = dirs.into_iter().next().expect("a folder");
        }
        at.strip_prefix(dir).unwrap().to_path_buf()
    };
    for (harness, below, depth) in
        [(".codex", "sessions", 3), (".claude", "projects", 1), (".gemini", "tmp", 1)]
    {
        let root = home.path().join(harness);
        let target = std::path::Path::new(below).join(first_dir(&root.join(below), depth));
        std::os::unix::fs::symlink(&target, root.join("latest")).unwrap();
    }
    let mut want: Vec<String> =
        ["claude", "codex", "gemini"].iter().flat_map(|harness| expected_calls(&expected, harness)).collect();
    want.sort();
    // The home given, and each harness's home given: walks that meet the links.
    let harness_homes: Vec<_> =
        [".claude", ".config/claude", ".codex", ".gemini"].iter().map(|h| home.path().join(h)).collect();
    for paths in [vec![home.path().to_path_buf()], harness_homes] {
        let got = rows(home.path(), &paths, &[], CALLS);
        assert_eq!(calls_of(home.path(), &got), want, "{paths:?}");
    }
    let out = crate::util::command(home.path())
        .args(["--no-cache", "-e", "select count(*) from calls"])
        .arg(home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("latest"), "nothing said of the links: {stderr}");
}
