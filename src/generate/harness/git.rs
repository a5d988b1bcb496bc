//! A home whose sessions work in a real git repository: the repository written with gix under
//! the home ([`GIT_PROJECT_DIR`]: a fixed author, fixed times and messages, commits on three
//! branches), Claude Code and Codex CLI sessions in it and in a subfolder of it on those branches
//! (one that changes branch mid-session, one whose first `gitBranch` is empty, one on a branch the
//! repository does not have), with the commits tallied beside the sessions.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use super::{ClaudeFile, HarnessTally, Line, relative, ts, write_lines};

/// The repository's folder under the home.
pub const GIT_PROJECT_DIR: &str = "src/shop";
/// The folder of the repository most sessions run in (the walk up from it finds the root).
const SUBFOLDER: &str = "web";
/// Every commit's author and committer.
pub const GIT_AUTHOR: &str = "Ana Example";
const GIT_EMAIL: &str = "ana@example.com";
/// 2026-09-10T08:00:00Z, the first commit; every time is minutes after it.
const START_S: i64 = 1_789_027_200;

/// A commit the generator wrote, as `git_commits` must show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpectedCommit {
    pub project: String,
    pub commit: String,
    /// Seconds since the epoch, UTC.
    pub authored_at: i64,
    /// The same, as the harnesses write times (RFC 3339 UTC with milliseconds).
    pub authored: String,
    pub author: String,
    pub subject: String,
    /// The branches whose heads reach it, sorted.
    pub branches: Vec<String>,
}

/// (branch, minutes after the first commit, message, its parent's index): in the order written.
const COMMITS: &[(&str, i64, &str, Option<usize>)] = &[
    ("main", 0, "Initial commit\n", None),
    ("main", 120, "Add the cart model\n\nWith its tests.\n", Some(0)),
    ("feature/cart", 240, "Cart: add items\n", Some(1)),
    ("feature/cart", 360, "Cart: totals\n", Some(2)),
    ("main", 300, "Fix a typo in the README\n", Some(1)),
    ("fix/rounding", 420, "Round totals half to even\n", Some(4)),
];

/// A session of the home.
struct GitSession {
    /// A Codex rollout, else a Claude Code session.
    codex: bool,
    /// The branches its lines name in turn (the last for the rest; Codex: the first only).
    branches: &'static [&'static str],
    /// Minutes after the first commit.
    start: i64,
    end: i64,
    /// In the repository's subfolder, else at its root.
    in_subfolder: bool,
    calls: usize,
}

const fn session(
    codex: bool,
    branches: &'static [&'static str],
    (start, end): (i64, i64),
    in_subfolder: bool,
    calls: usize,
) -> GitSession {
    GitSession { codex, branches, start, end, in_subfolder, calls }
}

/// The sessions: one whose first gitBranch is empty, one ending as a commit is authored, one on a
/// branch the repository lacks (detached), one that switches branch, one after its branch's last
/// commit.
const SESSIONS: &[GitSession] = &[
    session(false, &["", "main"], (30, 60), true, 2),
    session(false, &["main"], (90, 120), true, 1),
    session(false, &["HEAD"], (100, 110), false, 1),
    session(true, &["feature/cart"], (150, 180), false, 2),
    session(false, &["main", "feature/cart"], (180, 270), true, 1),
    session(false, &["feature/cart"], (270, 330), true, 1),
    session(true, &["fix/rounding"], (310, 400), true, 1),
    session(false, &["feature/cart"], (450, 480), true, 2),
];

/// The branches' heads as the commits are written, and each commit's branches.
fn branches_of(commits: &[(String, Option<usize>)]) -> Vec<Vec<String>> {
    let mut heads: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (i, (branch, _)) in commits.iter().enumerate() {
        heads.insert(branch, i);
    }
    let mut branches = vec![Vec::new(); commits.len()];
    for (branch, head) in heads {
        let mut at = Some(head);
        while let Some(i) = at {
            branches[i].push(branch.to_string());
            at = commits[i].1;
        }
    }
    for list in &mut branches {
        list.sort();
    }
    branches
}

/// Writes the repository under `dir` (the home, absolute) and the sessions in it, telling
/// `tally` of each transcript; returns the commits written, sorted by hash.
pub(super) fn write(dir: &Path, tally: &mut impl HarnessTally) -> io::Result<Vec<ExpectedCommit>> {
    let root = dir.join(GIT_PROJECT_DIR);
    let project = root.to_str().ok_or_else(|| io::Error::other("the home is not UTF-8"))?.to_string();
    let hashes = write_repository(&root)?;
    let shape: Vec<(String, Option<usize>)> =
        COMMITS.iter().map(|(b, _, _, p)| (b.to_string(), *p)).collect();
    let branches = branches_of(&shape);
    let mut commits: Vec<ExpectedCommit> = (COMMITS.iter().enumerate())
        .map(|(i, (_, minutes, message, _))| ExpectedCommit {
            project: project.clone(),
            commit: hashes[i].clone(),
            authored_at: START_S + minutes * 60,
            authored: ts(((START_S + minutes * 60) * 1000) as u64),
            author: GIT_AUTHOR.to_string(),
            subject: message.lines().next().unwrap_or_default().to_string(),
            branches: branches[i].clone(),
        })
        .collect();
    commits.sort();
    for (n, &GitSession { codex, branches: line_branches, start, end, in_subfolder, calls }) in
        SESSIONS.iter().enumerate()
    {
        let cwd = if in_subfolder { format!("{project}/{SUBFOLDER}") } else { project.clone() };
        let start_ms = ((START_S + start * 60) * 1000) as u64;
        let end_ms = ((START_S + end * 60) * 1000) as u64;
        if codex {
            // The commit checked out at its start: the newest on its branch written before it.
            let branch = line_branches[0];
            let head = (COMMITS.iter().enumerate())
                .filter(|(i, (_, at, _, _))| *at <= start && branches[*i].iter().any(|b| b == branch))
                .max_by_key(|(_, (_, at, _, _))| *at)
                .map(|(i, _)| hashes[i].clone());
            let (path, lines) = codex_rollout(n, &cwd, branch, head.as_deref(), start_ms, end_ms, calls);
            write_lines(&dir.join(&path), &lines, false)?;
            tally.codex_rollout(&path, &lines);
        } else {
            let (path, lines) = claude_session(n, &cwd, line_branches, start_ms, end_ms, calls);
            write_lines(&dir.join(&path), &lines, false)?;
            tally.claude_session(&[ClaudeFile { path, agent_id: None, lines: &lines }]);
        }
    }
    Ok(commits)
}

/// The repository at `root` with [`COMMITS`] (empty trees), written with gix: their hashes.
fn write_repository(root: &Path) -> io::Result<Vec<String>> {
    let failed = |e: &dyn std::fmt::Display| io::Error::other(format!("{}: {e}", root.display()));
    std::fs::create_dir_all(root.join(SUBFOLDER))?;
    let repo = gix::init(root).map_err(|e| failed(&e))?;
    let tree = repo.write_object(gix::objs::Tree::empty()).map_err(|e| failed(&e))?.detach();
    let mut ids: Vec<gix::ObjectId> = Vec::new();
    for (branch, minutes, message, parent) in COMMITS {
        let time = format!("{} +0000", START_S + minutes * 60);
        let signature = gix::actor::SignatureRef {
            name: GIT_AUTHOR.into(),
            email: GIT_EMAIL.into(),
            time: time.as_str(),
        };
        let parents: Vec<gix::ObjectId> = parent.map(|p| ids[p]).into_iter().collect();
        let reference = format!("refs/heads/{branch}");
        let id = repo
            .commit_as(signature, signature, reference.as_str(), *message, tree, parents)
            .map_err(|e| failed(&e))?;
        ids.push(id.detach());
    }
    Ok(ids.iter().map(ToString::to_string).collect())
}

/// A Claude Code session: a prompt, `calls` responses, a last prompt at its end; its lines'
/// `gitBranch` the `branches` in turn (the last one for the rest).
fn claude_session(
    n: usize,
    cwd: &str,
    branches: &[&str],
    start_ms: u64,
    end_ms: u64,
    calls: usize,
) -> (String, Vec<Line>) {
    let session_id = format!("9e7c0000-0000-4000-8000-{n:012}");
    let encoded: String = cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let path = relative(Path::new(".claude"), &format!("projects/{encoded}/{session_id}.jsonl"));
    let step = (end_ms - start_ms) / (calls as u64 + 1);
    let mut lines = Vec::new();
    let mut parent = Value::Null;
    for i in 0..calls + 2 {
        let at = if i == calls + 1 { end_ms } else { start_ms + step * i as u64 };
        let branch = branches[i.min(branches.len() - 1)];
        let uuid = format!("9e7c{n:04}-0000-4000-8000-{i:012}");
        let mut fields = vec![
            ("parentUuid", parent.clone()),
            ("isSidechain", json!(false)),
            ("userType", json!("external")),
            ("cwd", json!(cwd)),
            ("sessionId", json!(session_id)),
            ("version", json!("2.1.210")),
            ("gitBranch", json!(branch)),
        ];
        if i == 0 || i == calls + 1 {
            fields.push(("type", json!("user")));
            fields.push(("message", json!({"role": "user", "content": "go on"})));
        } else {
            fields.push(("type", json!("assistant")));
            fields.push(("requestId", json!(format!("req_git_{n}_{i}"))));
            fields.push((
                "message",
                json!({"id": format!("msg_git_{n}_{i}"), "type": "message", "role": "assistant",
                       "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": "done"}],
                       "stop_reason": "end_turn", "stop_sequence": null,
                       "usage": {"input_tokens": 1000 * i, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0, "output_tokens": 100,
                                 "service_tier": "standard"}}),
            ));
        }
        fields.push(("uuid", json!(uuid)));
        fields.push(("timestamp", json!(ts(at))));
        parent = json!(uuid);
        lines.push(Line::object(fields));
    }
    (path, lines)
}

/// A Codex CLI rollout on `branch` at `commit`: its meta, a turn, `calls` counts, a last
/// message at its end.
fn codex_rollout(
    n: usize,
    cwd: &str,
    branch: &str,
    commit: Option<&str>,
    start_ms: u64,
    end_ms: u64,
    calls: usize,
) -> (String, Vec<Line>) {
    let thread = format!("0199e000-0000-7000-8000-{n:012}");
    let stamp = super::super::rng::rfc3339(start_ms, false);
    let day = &stamp[..10];
    let name_time = stamp[..19].replace(':', "-");
    let path = relative(
        Path::new(".codex"),
        &format!("sessions/{}/rollout-{name_time}-{thread}.jsonl", day.replace('-', "/")),
    );
    let meta = json!({"id": thread, "timestamp": ts(start_ms), "cwd": cwd, "originator": "codex_cli_rs",
                      "cli_version": "0.150.1", "source": "cli", "model_provider": "openai",
                      "git": {"commit_hash": commit, "branch": branch,
                              "repository_url": "git@example.com:ana/shop.git"}});
    let mut lines = vec![
        Line::object(vec![
            ("timestamp", json!(ts(start_ms))),
            ("type", json!("session_meta")),
            ("payload", meta),
        ]),
        Line::object(vec![
            ("timestamp", json!(ts(start_ms))),
            ("type", json!("turn_context")),
            ("payload", json!({"turn_id": "t-1", "cwd": cwd, "model": "gpt-5.3-codex"})),
        ]),
    ];
    let step = (end_ms - start_ms) / (calls as u64 + 1);
    let usage = |k: u64| {
        json!({"input_tokens": 2000 * k, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
               "output_tokens": 100 * k, "reasoning_output_tokens": 0, "total_tokens": 2100 * k})
    };
    for i in 1..=calls as u64 {
        lines.push(Line::object(vec![
            ("timestamp", json!(ts(start_ms + step * i))),
            ("type", json!("event_msg")),
            (
                "payload",
                json!({"type": "token_count", "info": {"total_token_usage": usage(i),
                       "last_token_usage": usage(1), "model_context_window": 272000}}),
            ),
        ]));
    }
    lines.push(Line::object(vec![
        ("timestamp", json!(ts(end_ms))),
        ("type", json!("event_msg")),
        ("payload", json!({"type": "agent_message", "message": "done"})),
    ]));
    (path, lines)
}
