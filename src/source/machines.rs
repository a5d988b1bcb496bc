//! Which machine a transcript was found on: the name a person gives a place (`--label
//! NAME=PATH`, the config file's `[sources]`), else this machine's own (`TXQ_MACHINE`, else its
//! host name); and the files that are one machine's copy of another's (the same path under two
//! machines' places, the same bytes), read once.

use super::files::SourceFile;
use super::read::BlockReader;
use object_store::ObjectStore;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The variable that names this machine instead of its host name.
pub const MACHINE_ENV: &str = "TXQ_MACHINE";

/// The machines of a reading: the places labeled with a machine's name, in the order given, and
/// the name of the machine txq runs on, which every other file is of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Machines {
    labeled: Vec<(String, PathBuf)>,
    here: String,
}

impl Default for Machines {
    fn default() -> Self {
        Machines { labeled: Vec::new(), here: this_machine() }
    }
}

/// The name of the machine txq runs on: `$TXQ_MACHINE`, else its host name, else `localhost`.
pub fn this_machine() -> String {
    if let Some(name) =
        std::env::var(MACHINE_ENV).ok().map(|n| n.trim().to_string()).filter(|n| !n.is_empty())
    {
        return name;
    }
    host_name().unwrap_or_else(|| "localhost".to_string())
}

#[cfg(unix)]
fn host_name() -> Option<String> {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let done = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if done != 0 {
        return None;
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    let name = String::from_utf8_lossy(&buffer[..end]).trim().to_string();
    (!name.is_empty()).then_some(name)
}

#[cfg(not(unix))]
fn host_name() -> Option<String> {
    std::env::var("COMPUTERNAME").ok().filter(|n| !n.is_empty())
}

/// A place as the files found under it spell the start of their paths: no trailing separator.
fn place_text(place: &Path) -> String {
    let text = place.to_string_lossy();
    let trimmed = text.trim_end_matches('/');
    match trimmed.is_empty() {
        true => text.into_owned(),
        false => trimmed.to_string(),
    }
}

/// Whether `file` is `place` or under it, both as text (as the `file` column spells them).
fn holds(place: &str, file: &str) -> bool {
    file.strip_prefix(place)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || place.ends_with('/'))
}

impl Machines {
    /// The machines of `labeled` (each a name and a place), the others `here`.
    pub fn new(labeled: Vec<(String, PathBuf)>, here: String) -> Machines {
        Machines { labeled, here }
    }

    /// The labeled places, each with its machine, in the order given.
    pub fn labeled(&self) -> &[(String, PathBuf)] {
        &self.labeled
    }

    /// This machine's name.
    pub fn here(&self) -> &str {
        &self.here
    }

    /// Whether any place is labeled.
    pub fn any_labeled(&self) -> bool {
        !self.labeled.is_empty()
    }

    /// Each labeled place as the `file` column spells its start, with its machine, the longest
    /// first (the place nearest a file names its machine).
    pub fn places(&self) -> Vec<(String, &str)> {
        let mut places: Vec<(String, &str)> =
            self.labeled.iter().map(|(name, place)| (place_text(place), name.as_str())).collect();
        // Stable: of two labels of one place, the first given.
        places.sort_by_key(|(place, _)| std::cmp::Reverse(place.len()));
        places
    }

    /// The machine of the file at `path`.
    pub fn of(&self, path: &Path) -> &str {
        let file = path.to_string_lossy();
        self.places().into_iter().find(|(place, _)| holds(place, &file)).map_or(&self.here, |(_, name)| name)
    }

    /// Where a machine's files are first kept: this machine, then the labels in the order given.
    fn rank(&self, machine: &str) -> usize {
        match machine == self.here {
            true => 0,
            false => 1 + self.labeled.iter().position(|(name, _)| name == machine).unwrap_or(usize::MAX - 1),
        }
    }

    /// The path of `file` under the place it was found in (the nearest of `places` and the
    /// labeled places that holds it): what two machines' copies of one file share.
    fn relative(&self, file: &Path, places: &[PathBuf]) -> String {
        let text = file.to_string_lossy();
        let labeled = self.labeled.iter().map(|(_, p)| p);
        let nearest = places
            .iter()
            .chain(labeled)
            .map(|p| place_text(p))
            .filter(|place| holds(place, &text))
            .max_by_key(|place| place.len());
        match nearest {
            // A place that is the file itself: its name.
            Some(place) if place.len() == text.len() => {
                file.file_name().map_or_else(|| text.to_string(), |n| n.to_string_lossy().into_owned())
            }
            Some(place) => text[place.len()..].trim_start_matches('/').to_string(),
            None => text.into_owned(),
        }
    }
}

/// What [`copies_across`] found of one format's files.
#[derive(Debug, Default)]
pub(crate) struct Copies {
    /// The files that are another machine's file of the same bytes, each with the path of the one
    /// read instead: listed, not read.
    pub(crate) copies: Vec<(usize, PathBuf)>,
    /// One warning for each path found under two machines with different bytes (read as
    /// different sessions, each on its machine).
    pub(crate) warnings: Vec<String>,
}

/// Among `files` (one format's, in order, found under `places`), those found at the same path
/// under the places of two or more machines: of the same bytes, every copy but the one of the
/// first machine ([`Machines::rank`]) is set aside; of different bytes, all are read, and a
/// warning says so. Reads nothing when no place is labeled, and only files that share a path and a
/// size with another machine's.
pub(crate) async fn copies_across(
    machines: &Machines,
    places: &[PathBuf],
    files: &[SourceFile],
    store: &Arc<dyn ObjectStore>,
) -> Copies {
    let mut found = Copies::default();
    if !machines.any_labeled() {
        return found;
    }
    let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        by_path.entry(machines.relative(&file.path, places)).or_default().push(i);
    }
    let mut shared: Vec<(String, Vec<usize>)> = by_path
        .into_iter()
        .filter(|(_, at)| {
            let first = machines.of(&files[at[0]].path);
            at.iter().any(|&i| machines.of(&files[i].path) != first)
        })
        .collect();
    shared.sort();
    for (relative, mut at) in shared {
        at.sort_by_key(|&i| (machines.rank(machines.of(&files[i].path)), i));
        let mut kept: Vec<(usize, Option<u128>)> = Vec::new();
        for i in at {
            let file = &files[i];
            let same_size = kept.iter().position(|&(k, _)| files[k].size == file.size);
            let copy_of = match same_size {
                Some(_) => {
                    let hash = content_hash(store, file).await;
                    let mut copy_of = None;
                    for (k, kept_hash) in kept.iter_mut().filter(|(k, _)| files[*k].size == file.size) {
                        if kept_hash.is_none() {
                            *kept_hash = content_hash(store, &files[*k]).await;
                        }
                        if hash.is_some() && *kept_hash == hash {
                            copy_of = Some(*k);
                            break;
                        }
                    }
                    copy_of.map(|k| (k, hash))
                }
                None => None,
            };
            match copy_of {
                Some((k, _)) => found.copies.push((i, files[k].path.clone())),
                None => kept.push((i, None)),
            }
        }
        if kept.len() > 1 {
            let mut on: Vec<&str> = kept.iter().map(|&(k, _)| machines.of(&files[k].path)).collect();
            on.dedup();
            found.warnings.push(format!(
                "{}: found on {} with different contents; read on each, its rows that machine's",
                crate::text::escape::path(Path::new(&relative)),
                crate::text::words::listed(&on)
            ));
        }
    }
    found.copies.sort();
    found
}

/// A hash of the bytes of `file` as found (its first `size` bytes, inflated when compressed);
/// none when it cannot be read (then it is no one's copy).
async fn content_hash(store: &Arc<dyn ObjectStore>, file: &SourceFile) -> Option<u128> {
    let mut reader = BlockReader::open(store.clone(), file).ok()?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    while let Some(block) = reader.next_block().await.ok()? {
        hasher.update(&block);
    }
    if reader.damage().is_some() {
        return None;
    }
    Some(hasher.digest128())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machines() -> Machines {
        Machines::new(
            vec![
                ("laptop".into(), PathBuf::from("/mnt/laptop/")),
                ("desktop".into(), PathBuf::from("/mnt/desktop")),
                ("server".into(), PathBuf::from("/mnt/desktop/server")),
            ],
            "here".into(),
        )
    }

    #[test]
    fn the_nearest_labeled_place_names_a_files_machine_and_this_machine_every_other() {
        let m = machines();
        assert_eq!(m.of(Path::new("/mnt/laptop/.claude/projects/a/s.jsonl")), "laptop");
        assert_eq!(m.of(Path::new("/mnt/desktop/.codex/s.jsonl")), "desktop");
        assert_eq!(m.of(Path::new("/mnt/desktop/server/.codex/s.jsonl")), "server");
        // A name that merely starts like a place is not under it.
        assert_eq!(m.of(Path::new("/mnt/desktopper/s.jsonl")), "here");
        assert_eq!(m.of(Path::new("/home/me/.claude/s.jsonl")), "here");
        assert_eq!(m.of(Path::new("/mnt/desktop")), "desktop");
    }

    #[test]
    fn a_files_path_under_its_place_is_what_two_machines_copies_share() {
        let m = machines();
        let given = [PathBuf::from("/home/me/.claude")];
        assert_eq!(
            m.relative(Path::new("/home/me/.claude/projects/a/s.jsonl"), &given),
            "projects/a/s.jsonl"
        );
        assert_eq!(m.relative(Path::new("/mnt/laptop/projects/a/s.jsonl"), &given), "projects/a/s.jsonl");
        assert_eq!(m.relative(Path::new("/mnt/desktop/server/x.jsonl"), &given), "x.jsonl");
        // A file given as a place is known by its name.
        let file = [PathBuf::from("/tmp/one/s.jsonl")];
        assert_eq!(m.relative(Path::new("/tmp/one/s.jsonl"), &file), "s.jsonl");
        assert_eq!(m.rank("here"), 0);
        assert!(m.rank("laptop") < m.rank("desktop"));
    }

    #[test]
    fn no_label_no_host_name_needed_and_the_variable_names_this_machine() {
        let m = Machines::new(vec![], "box".into());
        assert_eq!(m.of(Path::new("/anything")), "box");
        assert!(!m.any_labeled());
        assert!(!this_machine().is_empty());
    }
}
