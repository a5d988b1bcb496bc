//! `txq statusline` through the real binary, fed the hook's JSON as Claude Code sends it, on a
//! generated home: the session's cost (its subagents' included), today's, the block's with its
//! time left, and the context the session's last call used, each worked out here from the
//! tally's calls priced by hand (`harness_quota::cost_at_tier`), at moments of the tally's own
//! time (`TXQ_NOW`); the same line again from the memo of the block seen last, and with
//! --no-cache; a budget's marks; input that is not the hook's refused with exit 2.

use crate::harness_quota::{cost_at_tier, home};
use crate::util::{Output, command};
use chrono::{DateTime, Duration, DurationRound, Utc};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::Stdio;
use txq::generate::harness::ExpectedCall;

fn at(ts: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(ts).unwrap().with_timezone(&Utc)
}

/// The tally's calls, each with its cost at its tier (`None`: no price).
fn priced() -> Vec<(&'static ExpectedCall, Option<f64>)> {
    let (_, expected) = home();
    expected
        .calls
        .iter()
        .map(|call| {
            let tier = expected.service_tiers.get(&(call.file.clone(), call.line)).map(String::as_str);
            (call, cost_at_tier(call, tier))
        })
        .collect()
}

/// Dollars as the line writes them: to the cent, `?` after them when a call had no price.
fn shown<'a>(calls: impl Iterator<Item = &'a (&'static ExpectedCall, Option<f64>)>) -> String {
    let (mut usd, mut unpriced) = (0.0, false);
    for (_, cost) in calls {
        match cost {
            Some(c) => usd += c,
            None => unpriced = true,
        }
    }
    format!("${usd:.2}{}", if unpriced { "?" } else { "" })
}

/// The line the tally gives at `now` for session `id` (a Claude Code session of the home), with
/// a context window of a million tokens.
fn expected_line(id: &str, now: DateTime<Utc>) -> String {
    expected_line_of(id, now, |_| true)
}

/// [`expected_line`] of the tally's calls that `there` keeps (the others cut from the home).
fn expected_line_of(id: &str, now: DateTime<Utc>, there: impl Fn(&ExpectedCall) -> bool) -> String {
    let calls: Vec<_> = priced().into_iter().filter(|(c, _)| there(c)).collect();
    let session =
        shown(calls.iter().filter(|(c, _)| c.session_id == id || c.parent_session_id.as_deref() == Some(id)));
    let day = now.date_naive();
    let today = shown(calls.iter().filter(|(c, _)| at(&c.ts).date_naive() == day));
    // Blocks of the session's harness, on the hour grid of UTC: a block starts at the first
    // hour of a call that no earlier block's five hours hold.
    let harness = &calls.iter().find(|(c, _)| c.session_id == id).unwrap().0.harness;
    let hour = |c: &ExpectedCall| at(&c.ts).duration_trunc(Duration::hours(1)).unwrap();
    let hours: BTreeSet<DateTime<Utc>> =
        calls.iter().filter(|(c, _)| &c.harness == harness).map(|(c, _)| hour(c)).collect();
    let mut starts: BTreeMap<DateTime<Utc>, DateTime<Utc>> = BTreeMap::new();
    let mut start: Option<DateTime<Utc>> = None;
    for h in hours {
        if start.is_none_or(|s| h >= s + Duration::hours(5)) {
            start = Some(h);
        }
        starts.insert(h, start.unwrap());
    }
    let current = starts.values().copied().filter(|&s| s <= now && now < s + Duration::hours(5)).max();
    let block = match current {
        Some(start) => {
            let cost =
                shown(calls.iter().filter(|(c, _)| &c.harness == harness && starts[&hour(c)] == start));
            let left = (start + Duration::hours(5) - now).num_seconds();
            format!("{cost} block ({}h {:02}m left)", left / 3600, left % 3600 / 60)
        }
        None => "no block under way".into(),
    };
    let last = calls.iter().filter(|(c, _)| c.session_id == id).max_by_key(|(c, _)| at(&c.ts)).unwrap().0;
    let tokens = last.input_tokens;
    format!(
        "Opus 4.6 | {session} session / {today} today / {block} | {} context ({}%)",
        grouped(tokens),
        tokens * 100 / 1_000_000
    )
}

fn grouped(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// The Claude Code session of the home with the most calls among those with subagents.
fn session() -> (String, String) {
    let calls = priced();
    let parents: BTreeSet<&str> = calls.iter().filter_map(|(c, _)| c.parent_session_id.as_deref()).collect();
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (c, _) in &calls {
        if c.harness == "claude" && c.parent_session_id.is_none() && parents.contains(c.session_id.as_str()) {
            *counts.entry((c.session_id.as_str(), c.file.as_str())).or_default() += 1;
        }
    }
    let ((id, file), _) =
        counts.into_iter().max_by_key(|(_, n)| *n).expect("a Claude session with subagents");
    (id.to_string(), file.to_string())
}

/// The hook's JSON as Claude Code sends it (docs/harnesses.md#statusline).
fn hook(id: &str, transcript: &str) -> String {
    serde_json::json!({
        "hook_event_name": "Status",
        "session_id": id,
        "transcript_path": transcript,
        "cwd": "/home/ana/src/my-app",
        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
        "workspace": {"current_dir": "/home/ana/src/my-app", "project_dir": "/home/ana/src/my-app"},
        "version": "2.1.90",
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.01, "total_duration_ms": 45000, "total_api_duration_ms": 2300,
                 "total_lines_added": 156, "total_lines_removed": 23},
        "context_window": {"total_input_tokens": 15234, "total_output_tokens": 4521,
                           "context_window_size": 1_000_000, "used_percentage": 8}
    })
    .to_string()
}

/// `txq statusline ARGS` with `input` on stdin at `now`, its memo in `cache`, on the home.
fn statusline(input: &str, now: DateTime<Utc>, cache: &std::path::Path, args: &[&str]) -> Output {
    statusline_in(home().0.path(), input, now, cache, args)
}

/// `txq statusline ARGS` on the home in `dir`.
fn statusline_in(
    dir: &std::path::Path,
    input: &str,
    now: DateTime<Utc>,
    cache: &std::path::Path,
    args: &[&str],
) -> Output {
    // txq's own flags before the command, the command's after it.
    let (global, args): (Vec<&str>, Vec<&str>) = args.iter().partition(|a| **a == "--no-cache");
    let mut child = command(dir)
        .args(global)
        .arg("statusline")
        .args(args)
        .arg(dir)
        .env("TXQ_NOW", now.to_rfc3339())
        .env("TXQ_CACHE_DIR", cache)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn the_line_has_the_sessions_todays_and_the_blocks_spend_and_the_context_as_the_tally_has_them() {
    let (id, file) = session();
    let transcript = home().0.path().join(&file);
    let input = hook(&id, transcript.to_str().unwrap());
    let last = priced().iter().filter(|(c, _)| c.session_id == id).map(|(c, _)| at(&c.ts)).max().unwrap();
    let cache = tempfile::tempdir().unwrap();
    // Minutes after the session's last call (in its block), then the next day, after the rest.
    let latest = priced().iter().map(|(c, _)| at(&c.ts)).max().unwrap();
    for now in [last + Duration::minutes(7), latest + Duration::hours(30)] {
        let want = expected_line(&id, now);
        for run in ["first", "from the memo"] {
            let out = statusline(&input, now, cache.path(), &[]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert_eq!(out.stdout, format!("{want}\n"), "{run} at {now}");
        }
        let out = statusline(&input, now, cache.path(), &["--no-cache"]);
        assert_eq!(out.stdout, format!("{want}\n"), "--no-cache at {now}: {}", out.stderr);
    }
    assert!(expected_line(&id, last + Duration::minutes(7)).contains("left)"), "a block under way");
    assert!(expected_line(&id, latest + Duration::hours(30)).contains("no block under way"));
}

#[test]
fn a_daily_budget_marks_todays_figure_and_the_exit_code_stays_0() {
    let (id, file) = session();
    let transcript = home().0.path().join(&file);
    let input = hook(&id, transcript.to_str().unwrap());
    let now = priced().iter().filter(|(c, _)| c.session_id == id).map(|(c, _)| at(&c.ts)).max().unwrap();
    let today: f64 = priced()
        .iter()
        .filter(|(c, _)| at(&c.ts).date_naive() == now.date_naive())
        .filter_map(|(_, c)| *c)
        .sum();
    let cache = tempfile::tempdir().unwrap();
    // Half of today's spend, rounded down to what the flag says: 200 % of it, shown rounded down.
    let over = format!("{:.4}usd/day", (today / 2.0 * 1e4).floor() / 1e4);
    let out = statusline(&input, now, cache.path(), &["--budget", &over]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(200% of $") && out.stdout.contains(", over) today"), "{}", out.stdout);
    let within = format!("{:.4}usd/day", (today * 4.0 * 1e4).ceil() / 1e4);
    let out = statusline(&input, now, cache.path(), &["--budget", &within]);
    assert!(out.stdout.contains("(24% of $") && !out.stdout.contains("over"), "{}", out.stdout);
    let out = statusline(&input, now, cache.path(), &["--budget", "5usd/week"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("per day or per block"), "{}", out.stderr);
}

#[test]
fn input_that_is_not_the_hooks_is_refused_and_a_hostile_id_is_only_an_id() {
    let cache = tempfile::tempdir().unwrap();
    let now = at("2026-09-02T12:00:00Z");
    for wrong in ["", "not json", "[1, 2]", "{\"session_id\": "] {
        let out = statusline(wrong, now, cache.path(), &[]);
        assert_eq!(out.code, 2, "{wrong:?}: {}", out.stdout);
        assert!(out.stdout.is_empty());
        assert!(out.stderr.contains("docs/cli.md#statusline"), "{}", out.stderr);
    }
    // An id that is SQL, a path that is not there, a model name with an escape sequence.
    let hostile = serde_json::json!({
        "session_id": "x' or '1'='1",
        "transcript_path": "/etc/passwd",
        "model": {"display_name": "Opus\u{1b}[2J"}
    })
    .to_string();
    let out = statusline(&hostile, now, cache.path(), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("Opus\\x1b[2J | $0.00 session / "), "{}", out.stdout);
    assert!(!out.stdout.contains('\u{1b}'));
}

/// Copies the tree at `from` to `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Each file of the copy of the home in `dir` made as old as its last call, as a real home's
/// files are (one with no call, older than any); the last call of each file, by file.
fn aged(dir: &std::path::Path) -> BTreeMap<String, DateTime<Utc>> {
    let mut last: BTreeMap<String, DateTime<Utc>> = BTreeMap::new();
    for (c, _) in priced() {
        let at = at(&c.ts);
        let entry = last.entry(c.file.clone()).or_insert(at);
        *entry = (*entry).max(at);
    }
    let long_ago = at("2026-01-01T00:00:00Z");
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
            timed(&path, last.get(relative.as_str()).copied().unwrap_or(long_ago));
        }
    }
    last
}

/// The file at `path` given the time `when`.
fn timed(path: &std::path::Path, when: DateTime<Utc>) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::from(when)).unwrap();
}

/// Writes `bytes` to `path` as an agent would (its time `when`).
fn written(path: &std::path::Path, bytes: &[u8], when: DateTime<Utc>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    timed(path, when);
}

/// The memo follows a home that changes between lines: a file of today's calls cut short (as
/// when the line comes mid-write), grown back, moved to a folder made for it, then removed;
/// each line equals the tally's over what the home holds then, and the line without the memo.
#[test]
fn the_memo_follows_files_cut_grown_moved_and_removed_between_lines() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(home().0.path(), dir.path());
    let last = aged(dir.path());
    let (id, file) = session();
    let now = last[file.as_str()] + Duration::minutes(7);
    // Another Claude session with calls today: the file that changes.
    let calls = priced();
    let other = calls
        .iter()
        .map(|(c, _)| c)
        .filter(|c| c.harness == "claude" && c.parent_session_id.is_none() && c.session_id != id)
        .filter(|c| at(&c.ts).date_naive() == now.date_naive() && at(&c.ts) <= now)
        .map(|c| c.file.clone())
        .max_by_key(|f| calls.iter().filter(|(c, _)| &c.file == f).count())
        .expect("another Claude session with calls today");
    let whole = std::fs::read(dir.path().join(&other)).unwrap();
    let lines = whole.iter().filter(|&&b| b == b'\n').count() as u64;
    // Cut where a call's last line ends (a response cut between its lines is a response with
    // less output, which the tally has no line for).
    let kept_lines = calls
        .iter()
        .filter(|(c, _)| c.file == other && c.line <= lines / 2)
        .map(|(c, _)| c.line)
        .max()
        .expect("a call in the first half");
    let cut =
        whole.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(kept_lines as usize - 1).unwrap().0 + 1;
    let input = hook(&id, dir.path().join(&file).to_str().unwrap());
    let cache = tempfile::tempdir().unwrap();
    let moved = {
        let other = std::path::Path::new(&other);
        let projects = other.parent().and_then(std::path::Path::parent).unwrap();
        projects.join("-home-ana-src-moved").join(other.file_name().unwrap())
    };
    let line_now = |there: &dyn Fn(&ExpectedCall) -> bool, step: &str| {
        let out = statusline_in(dir.path(), &input, now, cache.path(), &[]);
        assert_eq!(out.code, 0, "{step}: {}", out.stderr);
        assert_eq!(out.stdout, format!("{}\n", expected_line_of(&id, now, there)), "{step}");
        let fresh = tempfile::tempdir().unwrap();
        let without = statusline_in(dir.path(), &input, now, fresh.path(), &["--no-cache"]);
        assert_eq!(out.stdout, without.stdout, "{step}: the same line without the memo");
    };
    line_now(&|_| true, "the home as generated");
    written(&dir.path().join(&other), &whole[..cut], now - Duration::minutes(1));
    line_now(&|c| c.file != other || c.line <= kept_lines, "cut to its first half");
    written(&dir.path().join(&other), &whole, now - Duration::seconds(30));
    line_now(&|_| true, "grown back");
    // Moved, as `mv` does: the file keeps its time, the folder it goes to is new.
    std::fs::create_dir_all(dir.path().join(&moved).parent().unwrap()).unwrap();
    std::fs::rename(dir.path().join(&other), dir.path().join(&moved)).unwrap();
    line_now(&|_| true, "moved to a folder made for it");
    std::fs::remove_file(dir.path().join(&moved)).unwrap();
    line_now(&|c| c.file != other, "removed");
}

/// A home whose files were last written when their last call was made (as a real home's are):
/// from the memo, only the files changed since the block seen last began are read, and the
/// session's subagents' files, however old, still count in its cost.
#[test]
fn from_the_memo_only_the_files_changed_since_the_block_began_are_read_and_the_figures_stay() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(home().0.path(), dir.path());
    let last = aged(dir.path());
    let (id, file) = session();
    // The session's subagents ended before its last call: their files are older than it.
    let subagents: BTreeSet<&str> = priced()
        .iter()
        .filter(|(c, _)| c.parent_session_id.as_deref() == Some(id.as_str()))
        .map(|(c, _)| c.file.as_str())
        .collect();
    assert!(!subagents.is_empty() && !subagents.contains(file.as_str()));
    let input = hook(&id, dir.path().join(&file).to_str().unwrap());
    let end = last[file.as_str()];
    let cache = tempfile::tempdir().unwrap();
    // A run at the block's start fills the memo; the runs after read from it. A day later, the
    // session's subagents' files are older than the block and the day, and still count.
    for now in [end + Duration::minutes(7), end + Duration::minutes(40), end + Duration::hours(26)] {
        let out = statusline_in(dir.path(), &input, now, cache.path(), &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout, format!("{}\n", expected_line(&id, now)), "at {now}");
    }
    // One memo: its pointer, and the copies it points to in turn.
    let mut names: Vec<String> = std::fs::read_dir(cache.path().join("statusline"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let pointer = names.iter().find(|n| n.ends_with(".memo")).expect("a memo").clone();
    assert_eq!(names, [pointer.clone(), format!("{pointer}.0"), format!("{pointer}.1")]);
}
