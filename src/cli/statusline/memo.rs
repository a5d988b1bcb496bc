//! `txq statusline`'s memo, in the cache folder, one per set of places and time zone: what the
//! last line was worked out from, so that the next reads only what changed since. It holds the
//! start of the block each harness was in, every folder under the places with its time (a folder
//! whose time is the same holds the same names: a file made, removed or renamed in it changes
//! it), and the files the line needs (changed at or after the memo's horizon, or the session's
//! own) with their calls. A walk then looks at every folder's time, lists only the folders that
//! changed, a slice of the others in turn (a file written again after a long rest is seen within
//! [`SWEEP_RUNS`] lines) and those named as the session, and looks at each file it keeps.

use super::Call;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The memo's layout; a memo of another is not read (the next line walks everything).
const VERSION: u32 = 1;

/// Every folder is listed again at least once in this many lines.
pub(super) const SWEEP_RUNS: usize = 16;

/// The fewest folders listed again by one line.
const SWEEP_LEAST: usize = 64;

/// The memo of one set of places and time zone.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Memo {
    version: u32,
    /// The start of the block each harness was in when last seen (seconds).
    pub(super) starts: BTreeMap<String, i64>,
    /// Files last changed before this (nanoseconds since 1970) were not kept.
    horizon: u64,
    /// Every folder under the places, by path, with its time (nanoseconds).
    folders: BTreeMap<String, u64>,
    /// The files kept, by path.
    files: BTreeMap<String, Kept>,
    /// Where the next slice of folders listed again begins.
    sweep: usize,
}

/// A file the line needed, as it was when read, and its calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Kept {
    size: u64,
    modified: u64,
    calls: Vec<Call>,
}

/// A transcript as the walk found it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Found {
    pub(super) path: PathBuf,
    size: u64,
    modified: u64,
}

/// What a walk found: the transcripts changed at or after the horizon and the session's own;
/// every folder, with its time; and whether every path could be kept (a name that is not
/// UTF-8 is read, but a memo cannot hold it).
#[derive(Debug, Default)]
pub(super) struct Walked {
    pub(super) files: Vec<Found>,
    folders: BTreeMap<String, u64>,
    whole: bool,
    sweep: usize,
}

fn nanos(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

impl Memo {
    /// The memo at `path`: an empty one where there is none, it cannot be read, or it is of
    /// another layout (a damaged memo costs a slower line, never a wrong one).
    pub(super) fn read(path: Option<&Path>) -> Memo {
        path.and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice::<Memo>(&bytes).ok())
            .filter(|memo| memo.version == VERSION)
            .unwrap_or_default()
    }

    /// The start of the block `harness` was in when last seen, unless it is after `now`.
    pub(super) fn start_of(&self, harness: &str, now: i64) -> Option<i64> {
        self.starts.get(harness).copied().filter(|&start| start <= now)
    }

    /// Whether the memo knows the folders under the places and the files changed from
    /// `horizon` on: else a walk lists every folder.
    fn knows(&self, horizon: u64) -> bool {
        self.version == VERSION && !self.folders.is_empty() && self.horizon <= horizon
    }

    /// The calls of `file` as kept, if it is as it was when read.
    pub(super) fn calls_of(&self, file: &Found) -> Option<&[Call]> {
        let kept = self.files.get(file.path.to_str()?)?;
        (kept.size == file.size && kept.modified == file.modified).then_some(kept.calls.as_slice())
    }

    /// The sessions (a call's parent, else its own) whose calls `file` held when read.
    pub(super) fn sessions_of(&self, path: &Path) -> BTreeSet<String> {
        let Some(kept) = path.to_str().and_then(|p| self.files.get(p)) else { return BTreeSet::new() };
        kept.calls.iter().filter_map(Call::group).collect()
    }

    /// The memo of what `walked` found and `calls` (by file) hold, from `horizon` on; `None`
    /// where a path could not be kept.
    pub(super) fn next(
        self,
        walked: Walked,
        horizon: u64,
        calls: &HashMap<PathBuf, Vec<Call>>,
        starts: BTreeMap<String, i64>,
    ) -> Option<Memo> {
        if !walked.whole {
            return None;
        }
        let mut files = BTreeMap::new();
        for found in &walked.files {
            let path = found.path.to_str()?.to_string();
            let calls = calls.get(&found.path).cloned().unwrap_or_default();
            files.insert(path, Kept { size: found.size, modified: found.modified, calls });
        }
        Some(Memo { version: VERSION, starts, horizon, folders: walked.folders, files, sweep: walked.sweep })
    }

    /// Writes the memo to `path`: whole to a file of its own, moved over the memo, so a reader
    /// sees one or the other. A memo not written costs the next line a longer read, not a wrong
    /// figure, so a failure is not reported.
    pub(super) fn write(&self, path: &Path) {
        let Some(dir) = path.parent() else { return };
        let Ok(bytes) = serde_json::to_vec(self) else { return };
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            file.write_all(&bytes)?;
            file.persist(path).map_err(|e| e.error)?;
            Ok(())
        });
        drop(written);
    }
}

/// What the walk keeps of a file: a transcript (a format claims it) changed at or after
/// `horizon`, or in a folder named as the session.
struct Keep<'a> {
    claimer: crate::source::discover::Claimer<'a>,
    horizon: u64,
    session: Option<&'a str>,
}

impl Keep<'_> {
    /// Whether `dir` is, or is in, a folder named as the session.
    fn session_folder(&self, dir: &Path) -> bool {
        self.session.is_some_and(|id| dir.components().any(|c| c.as_os_str() == id))
    }

    fn file(&self, path: &Path, meta: &std::fs::Metadata) -> Option<Found> {
        let modified = nanos(meta);
        let wanted = modified >= self.horizon || path.parent().is_some_and(|dir| self.session_folder(dir));
        (wanted && self.claimer.claim(path).is_some()).then(|| Found {
            path: path.to_path_buf(),
            size: meta.len(),
            modified,
        })
    }
}

/// Lists `dir` (a folder found new or changed, or due again): its files kept by `keep` into
/// `files`, its folders into `folders` with their times, and the folders below it that the memo
/// does not know listed too (`known`).
fn list(
    dir: &Path,
    keep: &Keep<'_>,
    known: &BTreeMap<String, u64>,
    walked: &mut Walked,
    files: &mut BTreeMap<PathBuf, Found>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        // A link is followed, as the scan follows it.
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            let Some(name) = path.to_str().map(str::to_string) else {
                walked.whole = false;
                list(&path, keep, known, walked, files);
                continue;
            };
            let new = !known.contains_key(&name);
            // A folder reached twice (a link back up) is listed once.
            if walked.folders.insert(name, nanos(&meta)).is_none() && new {
                list(&path, keep, known, walked, files);
            }
        } else if let Some(found) = keep.file(&path, &meta) {
            walked.whole &= path.to_str().is_some();
            files.insert(path, found);
        }
    }
}

/// Walks `places`: every folder when `memo` does not know them (or knows less than from
/// `horizon` on), else as the module says. Keeps the transcripts changed at or after `horizon`
/// (nanoseconds) and those in a folder named as `session`.
pub(super) fn walk(
    formats: &[crate::format::Format],
    places: &[PathBuf],
    memo: &Memo,
    horizon: u64,
    session: Option<&str>,
) -> Walked {
    let keep = Keep { claimer: crate::source::discover::Claimer::new(formats), horizon, session };
    let mut walked = Walked { whole: true, ..Walked::default() };
    let mut files: BTreeMap<PathBuf, Found> = BTreeMap::new();
    let empty = BTreeMap::new();
    let known = if memo.knows(horizon) { &memo.folders } else { &empty };
    // The folders known: looked at (in two halves at once: a look is a system call each), and
    // listed again where changed.
    let names: Vec<&String> = known.keys().collect();
    let times: Vec<Option<u64>> = {
        let look = |part: &[&String]| -> Vec<Option<u64>> {
            part.iter()
                .map(|name| std::fs::metadata(name).ok().filter(|m| m.is_dir()).map(|m| nanos(&m)))
                .collect()
        };
        let (first, second) = names.split_at(names.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| look(second));
            let mut times = look(first);
            times.extend(other.join().unwrap_or_else(|_| vec![None; second.len()]));
            times
        })
    };
    let due = {
        let count = names.len().div_ceil(SWEEP_RUNS).max(SWEEP_LEAST).min(names.len());
        let from = if names.is_empty() { 0 } else { memo.sweep % names.len() };
        walked.sweep = if names.is_empty() { 0 } else { (from + count) % names.len() };
        let len = names.len().max(1);
        move |i: usize| (i + len - from) % len < count
    };
    let mut to_list: Vec<PathBuf> = Vec::new();
    for (i, (name, time)) in names.iter().zip(&times).enumerate() {
        let Some(time) = *time else { continue };
        walked.folders.insert((*name).clone(), time);
        let path = PathBuf::from(name.as_str());
        if known[*name] != time || due(i) || keep.session_folder(&path) {
            to_list.push(path);
        }
    }
    // The places themselves (one not known is walked whole), and what changed.
    for place in places {
        match place.to_str() {
            Some(name) if known.contains_key(name) => {}
            _ => {
                let Ok(meta) = std::fs::metadata(place) else { continue };
                if !meta.is_dir() {
                    // A place that is a file is read as it is.
                    if let Some(found) = keep.file(place, &meta) {
                        files.insert(place.clone(), found);
                    }
                    continue;
                }
                match place.to_str() {
                    Some(name) => drop(walked.folders.insert(name.to_string(), nanos(&meta))),
                    None => walked.whole = false,
                }
                to_list.push(place.clone());
            }
        }
    }
    for dir in &to_list {
        list(dir, &keep, known, &mut walked, &mut files);
    }
    // The files kept before, in folders not listed: looked at one by one.
    for name in memo.files.keys().filter(|_| memo.knows(horizon)) {
        let path = PathBuf::from(name);
        if files.contains_key(&path) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if let Some(found) = keep.file(&path, &meta) {
            files.insert(path, found);
        }
    }
    walked.files = files.into_values().collect();
    walked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, text: &str, secs: i64) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(at).unwrap();
    }

    /// The names of the files a walk found, in name order.
    fn paths(walked: &Walked) -> Vec<String> {
        let mut names: Vec<String> =
            walked.files.iter().map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_walk_with_a_memo_finds_new_files_grown_files_and_in_turn_old_files_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects");
        let formats = crate::format::all();
        let horizon = 1_000_000_000_000_000_000u64; // 2001-09-09
        let day = 1_000_000_000i64; // seconds: files before and after the horizon
        touch(&projects.join("-a/old.jsonl"), "{}\n", day - 100_000);
        touch(&projects.join("-a/new.jsonl"), "{}\n", day + 100);
        touch(&projects.join("-a/s1/subagents/agent-x.jsonl"), "{}\n", day - 100_000);
        touch(&projects.join("-a/notes.txt"), "x", day + 100);
        let places = [projects.clone()];
        let first = walk(&formats, &places, &Memo::default(), horizon, Some("s1"));
        assert_eq!(paths(&first), ["agent-x.jsonl", "new.jsonl"], "the session's files and the new ones");
        let memo = Memo::default().next(first, horizon, &HashMap::new(), BTreeMap::new()).unwrap();
        // A file made in a folder changes the folder's time: found at once.
        touch(&projects.join("-b/made.jsonl"), "{}\n", day + 200);
        let second = walk(&formats, &places, &memo, horizon, None);
        assert_eq!(paths(&second), ["made.jsonl", "new.jsonl"]);
        // An old file written again, in a folder whose time did not change, is found when its
        // folder's turn comes, within SWEEP_RUNS walks.
        touch(&projects.join("-a/old.jsonl"), "{}\n{}\n", day + 300);
        let mut memo = memo;
        let mut seen_in = None;
        for run in 0..SWEEP_RUNS {
            let walked = walk(&formats, &places, &memo, horizon, None);
            if paths(&walked).contains(&"old.jsonl".to_string()) {
                seen_in = Some(run);
                break;
            }
            memo = memo.next(walked, horizon, &HashMap::new(), BTreeMap::new()).unwrap();
        }
        assert!(seen_in.is_some(), "an old file written again is seen within {SWEEP_RUNS} walks");
        // A memo of a later horizon than asked for does not know the files from it on.
        assert!(!Memo { horizon: horizon + 1, ..memo }.knows(horizon));
    }
}
