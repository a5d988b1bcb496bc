//! The git columns of `sessions`, the `git_commits` table and the canned queries by branch and
//! commit (`branch_spend`, `commit_spend`), read by the binary from generated homes and compared
//! with what the generator wrote: the ordinary homes (their sessions' branches as written, their
//! working directories in no repository) and a home whose sessions work in a git repository the
//! generator made with gix.

use crate::harness_rows::rows;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use txq::generate::harness::{ExpectedSessionGit, HarnessExpected};
use txq::generate::{
    ExpectedCommit, GIT_AUTHOR, GIT_PROJECT_DIR, HarnessOptions, write_git_home, write_harness_home,
};

const SESSION_GIT: &str =
    "select harness, session_id, parent_session_id, project, git_branch, git_commit from sessions";

fn text(row: &Map<String, Value>, key: &str) -> Option<String> {
    row.get(key).and_then(Value::as_str).map(str::to_string)
}

fn session_git_of(got: &[Map<String, Value>]) -> Vec<ExpectedSessionGit> {
    let mut got: Vec<ExpectedSessionGit> = got
        .iter()
        .map(|r| ExpectedSessionGit {
            harness: text(r, "harness").unwrap(),
            session_id: text(r, "session_id").unwrap(),
            parent_session_id: text(r, "parent_session_id"),
            project: text(r, "project"),
            git_branch: text(r, "git_branch"),
            git_commit: text(r, "git_commit"),
        })
        .collect();
    got.sort();
    got
}

fn home_env(home: &Path) -> [(&'static str, PathBuf); 1] {
    [("HOME", home.to_path_buf())]
}

#[test]
fn the_git_columns_of_sessions_in_a_home_of_every_harness_equal_the_tally() {
    let home = tempfile::tempdir().unwrap();
    let expected = write_harness_home(home.path(), &HarnessOptions::default()).unwrap();
    let got = rows(home.path(), &[], &home_env(home.path()), SESSION_GIT);
    assert_eq!(session_git_of(&got), expected.session_git);
    // The ordinary homes write branches (Claude's gitBranch, Codex's git.branch) and commits
    // (Codex's): the columns are not all null.
    let has = |pick: fn(&ExpectedSessionGit) -> &Option<String>, harness: &str| {
        expected.session_git.iter().any(|s| s.harness == harness && pick(s).is_some())
    };
    assert!(
        has(|s| &s.git_branch, "claude")
            && has(|s| &s.git_branch, "codex")
            && has(|s| &s.git_commit, "codex")
    );
    assert!(expected.session_git.iter().all(|s| s.harness != "gemini" || s.git_branch.is_none()));
}

/// US dollars per million tokens of the models the git home's sessions use
/// (prices/model_prices.json): input, output; they read and write no cache.
fn price(model: &str) -> (f64, f64) {
    match model {
        "claude-sonnet-4-6" => (3.0, 15.0),
        "gpt-5.3-codex" => (1.75, 14.0),
        other => panic!("no price here for {other}"),
    }
}

/// A session of the git home as the canned queries see it.
struct Session {
    harness: String,
    project: String,
    branch: Option<String>,
    started_at: String,
    ended_at: String,
    calls: u64,
    cost: f64,
}

fn sessions_of_tally(expected: &HarnessExpected) -> Vec<Session> {
    let mut cost: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for call in &expected.calls {
        assert_eq!((call.cache_read_tokens, call.cache_write_tokens), (0, 0));
        let (input, output) = price(&call.model);
        *cost.entry((&call.harness, &call.session_id)).or_default() +=
            (call.input_tokens as f64 * input + call.output_tokens as f64 * output) / 1e6;
    }
    (expected.sessions.iter().zip(&expected.session_git))
        .map(|(s, git)| {
            assert_eq!((&s.harness, &s.session_id), (&git.harness, &git.session_id));
            Session {
                harness: s.harness.clone(),
                project: git.project.clone().unwrap(),
                branch: git.git_branch.clone(),
                started_at: s.started_at.clone().unwrap(),
                ended_at: s.ended_at.clone().unwrap(),
                calls: s.calls,
                cost: cost.get(&(s.harness.as_str(), s.session_id.as_str())).copied().unwrap_or(0.0),
            }
        })
        .collect()
}

/// A branch_spend row's figures: sessions, calls, cost, first start, last end.
type Group = (u64, u64, f64, String, String);

/// A canned query's rows with its times as the tally writes them.
fn canned(home: &Path, name: &str, times: &[&str]) -> Vec<Map<String, Value>> {
    let sql = txq::sql::queries::find(name).unwrap().sql;
    let columns: Vec<String> =
        times.iter().map(|t| format!("to_char({t}, '%Y-%m-%dT%H:%M:%S%.3fZ') as {t}")).collect();
    let except = times.join(", ");
    let wrapped = format!("select * exclude ({except}), {} from ({sql}) q", columns.join(", "));
    rows(home, &[], &home_env(home), &wrapped)
}

#[test]
fn a_home_in_a_git_repository_gives_its_projects_commits_and_spend_by_branch_and_commit_as_written() {
    let home = tempfile::tempdir().unwrap();
    let (expected, commits) = write_git_home(home.path()).unwrap();
    let root = home.path().join(GIT_PROJECT_DIR).to_string_lossy().into_owned();

    // sessions: each session's project is the repository's root, found from its subfolder too.
    let got = rows(home.path(), &[], &home_env(home.path()), SESSION_GIT);
    assert_eq!(session_git_of(&got), expected.session_git);
    assert!(expected.session_git.iter().all(|s| s.project.as_deref() == Some(root.as_str())));
    assert!(expected.session_git.iter().any(|s| s.git_commit.is_some()));

    // git_commits: every commit of every branch, with the branches that hold it.
    let sql = "select project, commit, cast(date_part('epoch', authored_at) as bigint) as authored_at, \
               author, subject, branches from git_commits order by commit";
    let got: Vec<ExpectedCommit> = rows(home.path(), &[], &home_env(home.path()), sql)
        .iter()
        .map(|r| ExpectedCommit {
            project: text(r, "project").unwrap(),
            commit: text(r, "commit").unwrap(),
            authored_at: r["authored_at"].as_i64().unwrap(),
            authored: String::new(),
            author: text(r, "author").unwrap(),
            subject: text(r, "subject").unwrap(),
            branches: text(r, "branches").unwrap().split(',').map(str::to_string).collect(),
        })
        .collect();
    let want: Vec<ExpectedCommit> =
        commits.iter().map(|c| ExpectedCommit { authored: String::new(), ..c.clone() }).collect();
    assert_eq!(got, want);
    assert!(commits.iter().all(|c| c.author == GIT_AUTHOR && c.commit.len() == 40));
    assert!(commits.iter().any(|c| c.branches.len() == 3), "the first commits are on every branch");

    let sessions = sessions_of_tally(&expected);
    let round = |usd: f64| format!("{usd:.6}");

    // branch_spend: per project, branch and harness.
    let mut groups: BTreeMap<(String, Option<String>, String), Group> = BTreeMap::new();
    for s in &sessions {
        let group = groups.entry((s.project.clone(), s.branch.clone(), s.harness.clone())).or_insert((
            0,
            0,
            0.0,
            s.started_at.clone(),
            s.ended_at.clone(),
        ));
        group.0 += 1;
        group.1 += s.calls;
        group.2 += s.cost;
        group.3 = group.3.clone().min(s.started_at.clone());
        group.4 = group.4.clone().max(s.ended_at.clone());
    }
    let mut want: Vec<String> = groups
        .iter()
        .map(|((project, branch, harness), (n, calls, cost, first, last))| {
            format!(
                "{project} {branch:?} {harness} sessions={n} calls={calls} usd={} {first} {last}",
                round(*cost)
            )
        })
        .collect();
    want.sort();
    let mut got: Vec<String> = canned(home.path(), "branch_spend", &["first_at", "last_at"])
        .iter()
        .map(|r| {
            format!(
                "{} {:?} {} sessions={} calls={} usd={} {} {}",
                text(r, "project").unwrap(),
                text(r, "git_branch"),
                text(r, "harness").unwrap(),
                r["sessions"],
                r["calls"],
                round(r["cost_usd"].as_f64().unwrap()),
                text(r, "first_at").unwrap(),
                text(r, "last_at").unwrap()
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);

    // commit_spend: each session counts for the first commit on its branch authored at or after
    // its end, after the branch's commit before that one.
    let mut want: Vec<String> = Vec::new();
    for commit in &commits {
        for branch in &commit.branches {
            let previous = (commits.iter())
                .filter(|c| {
                    c.branches.contains(branch)
                        && (c.authored_at, &c.commit) < (commit.authored_at, &commit.commit)
                })
                .map(|c| c.authored.clone())
                .max();
            let mine: Vec<&Session> = (sessions.iter())
                .filter(|s| s.project == commit.project && s.branch.as_ref() == Some(branch))
                .filter(|s| {
                    s.ended_at <= commit.authored && previous.as_ref().is_none_or(|p| s.ended_at > *p)
                })
                .collect();
            if !mine.is_empty() {
                want.push(format!(
                    "{} {branch} {} {} {} sessions={} calls={} usd={}",
                    commit.project,
                    commit.commit,
                    commit.authored,
                    commit.subject,
                    mine.len(),
                    mine.iter().map(|s| s.calls).sum::<u64>(),
                    round(mine.iter().map(|s| s.cost).sum())
                ));
            }
        }
    }
    want.sort();
    // Not every session is attributed: one ended after its branch's newest commit, one is on a
    // branch the repository does not have.
    assert!(want.len() >= 4, "{want:?}");
    let mut got: Vec<String> = canned(home.path(), "commit_spend", &["authored_at"])
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} sessions={} calls={} usd={}",
                text(r, "project").unwrap(),
                text(r, "git_branch").unwrap(),
                text(r, "commit").unwrap(),
                text(r, "authored_at").unwrap(),
                text(r, "subject").unwrap(),
                r["sessions"],
                r["calls"],
                round(r["cost_usd"].as_f64().unwrap())
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn a_project_that_is_no_readable_repository_is_a_warning_not_a_failed_statement() {
    let home = tempfile::tempdir().unwrap();
    write_git_home(home.path()).unwrap();
    // The repository's objects gone: its refs name commits that cannot be read.
    let git = home.path().join(GIT_PROJECT_DIR).join(".git");
    std::fs::remove_dir_all(git.join("refs")).unwrap();
    std::fs::write(git.join("HEAD"), "not a ref\n").unwrap();
    let mut run = crate::util::command(home.path());
    run.args(["--no-cache", "--format", "ndjson", "-e", "select count(*) as n from git_commits"])
        .env("HOME", home.path());
    let out = run.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\"n\":0"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let root = home.path().join(GIT_PROJECT_DIR);
    assert!(
        stderr.contains("txq: warning: git_commits:") && stderr.contains(&*root.to_string_lossy()),
        "{stderr}"
    );
    // A statement that does not name git_commits reads no repository: no warning.
    let mut run = crate::util::command(home.path());
    run.args([
        "--no-cache",
        "--format",
        "ndjson",
        "-e",
        "select count(*) as n, count(project) as p from sessions",
    ])
    .env("HOME", home.path());
    let out = run.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("git_commits"), "{stderr}");
}

#[test]
fn txq_generate_git_writes_the_repository_and_its_sessions_a_home_reads() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::util::command(home.path())
        .args(["generate", "--git", "--out"])
        .arg(home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("txq: wrote a git repository of 6 commits"), "{stderr}");
    // What the test helper writes, byte for byte the same sessions: compared with its tally.
    let other = tempfile::tempdir().unwrap();
    let (expected, commits) = write_git_home(other.path()).unwrap();
    let sql = "select count(*) as n, count(distinct project) as projects from git_commits";
    let got = rows(home.path(), &[], &home_env(home.path()), sql);
    assert_eq!((got[0]["n"].as_u64(), got[0]["projects"].as_u64()), (Some(commits.len() as u64), Some(1)));
    let got = rows(
        home.path(),
        &[],
        &home_env(home.path()),
        "select count(*) as n from sessions where git_branch is not null",
    );
    let branched = expected.session_git.iter().filter(|s| s.git_branch.is_some()).count() as u64;
    assert_eq!(got[0]["n"].as_u64(), Some(branched));
}
