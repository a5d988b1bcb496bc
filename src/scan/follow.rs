//! Reading only what was appended (`txq --follow`): where each scan of a followed statement
//! stopped in each file (the end of its last whole line, the number of the next line, the turn
//! and the values carried then), so that its next run reads on from there, and the damaged lines
//! it has reported. A followed file is known by its identity, not its path: on unix its device
//! and inode, so that a transcript moved elsewhere (a rollout archived) is the one already read;
//! and a compressed copy that replaced its plain file (or the plain file inflated again from its
//! copy) is the same transcript. A session whose config holds [`FollowPositions`] scans this way.

use super::line_reader::ReaderState;
use crate::source::files::SourceFile;
use crate::source::lines::SplitPoint;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a scan stopped in one file.
#[derive(Debug, Clone)]
pub(crate) struct Position {
    /// The file's size then (of a compressed file, its compressed size).
    pub(crate) size: u64,
    /// Its inode then: a file replaced by another of its name is read from its start.
    pub(crate) inode: Option<u64>,
    /// Where its whole lines ended (of a compressed file, in the inflated bytes).
    pub(crate) offset: u64,
    pub(crate) split: SplitPoint,
    pub(crate) reader: ReaderState,
}

/// What a followed file is known by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    /// A file of this machine (unix): its device and inode, whatever its name now.
    Inode { device: u64, inode: u64 },
    /// An object, or a file where there are no inodes (or that cannot be looked at): its path.
    Path(PathBuf),
}

impl Identity {
    /// The identity of `file` as it is now on disk.
    fn of(file: &SourceFile) -> Identity {
        #[cfg(unix)]
        if !file.is_remote()
            && let Ok(meta) = std::fs::metadata(file.canonical())
        {
            use std::os::unix::fs::MetadataExt;
            return Identity::Inode { device: meta.dev(), inode: meta.ino() };
        }
        Identity::Path(file.canonical().to_path_buf())
    }
}

/// One scan's file: the format's schema, the table, the file's identity; and its canonical path
/// when the key was made (which the identity does not depend on).
#[derive(Debug, Clone)]
pub(crate) struct Key {
    of: Of,
    path: PathBuf,
}

/// A key's schema, table and identity: what positions are kept by.
type Of = (&'static str, String, Identity);

/// Where the scans of a followed statement stopped, by table and file; and the damaged lines
/// each has reported of each file.
#[derive(Debug, Default)]
pub struct FollowPositions {
    at: Mutex<Followed>,
    damage: Mutex<HashMap<Of, u64>>,
}

/// The positions, and the identity each path last had: a file found by an identity never seen
/// may be a compressed copy that replaced a file read before under its plain name.
#[derive(Debug, Default)]
struct Followed {
    positions: HashMap<Of, Position>,
    identities: HashMap<(&'static str, String, PathBuf), Identity>,
}

impl FollowPositions {
    pub(crate) fn key(schema: &'static str, table: &str, file: &SourceFile) -> Key {
        Key { of: (schema, table.to_string(), Identity::of(file)), path: file.canonical().to_path_buf() }
    }

    /// Where the last read of `key` stopped, if that is where this read of `file` may go on
    /// from: the same file (or the same transcript, compressed or inflated since), not shorter.
    pub(crate) fn get(&self, key: &Key, file: &SourceFile) -> Option<Position> {
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        let known = at.positions.get(&key.of).cloned();
        let position = match known {
            Some(position) => position,
            None => {
                let (from, position) = at.replaced(key, file)?;
                at.positions.insert(key.of.clone(), position.clone());
                let mut damage = self.damage.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(&reported) = damage.get(&from) {
                    damage.insert(key.of.clone(), reported);
                }
                position
            }
        };
        Some(position).filter(|p| p.inode == file.inode && p.size <= file.size)
    }

    pub(crate) fn set(&self, key: Key, position: Position) {
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        let (schema, table, identity) = key.of.clone();
        at.identities.insert((schema, table, key.path), identity);
        at.positions.insert(key.of, position);
    }

    /// Of `total` damaged lines the corpus counts in a file, those not reported yet (a file
    /// rewritten shorter reports its damage afresh); they are reported from now on.
    pub(crate) fn new_damage(&self, key: Key, total: u64) -> u64 {
        let mut damage = self.damage.lock().unwrap_or_else(|e| e.into_inner());
        let reported = damage.insert(key.of, total).unwrap_or(0);
        if total >= reported { total - reported } else { total }
    }
}

impl Followed {
    /// For `file`, never seen by its identity: the file it replaced and where its read stopped,
    /// as a position in `file`, when it is the compressed copy of a plain file read before (or
    /// that plain file inflated again from its copy) and the other is gone.
    fn replaced(&self, key: &Key, file: &SourceFile) -> Option<(Of, Position)> {
        let other = counterpart(&key.path, file.compressed())?;
        if std::fs::symlink_metadata(&other).is_ok() {
            // Both are there: discovery reads the plain one, and this is another file.
            return None;
        }
        let (schema, table, _) = &key.of;
        let identity = self.identities.get(&(*schema, table.clone(), other))?;
        let from: Of = (schema, table.clone(), identity.clone());
        let last = self.positions.get(&from)?;
        let position = match file.compressed() {
            // A compressed file is read from its start, its lines before `split` giving no row.
            true => Position { size: 0, inode: file.inode, ..last.clone() },
            // The plain file holds the inflated bytes: it is read on from where they ended.
            false => Position { size: last.offset, inode: file.inode, ..last.clone() },
        };
        Some((from, position))
    }
}

/// The plain file of a compressed one (`x.jsonl` of `x.jsonl.zst`), or the compressed copy of a
/// plain one.
fn counterpart(path: &Path, compressed: bool) -> Option<PathBuf> {
    match compressed {
        true => Some(path.with_extension("")),
        false => {
            let mut name = path.file_name()?.to_os_string();
            name.push(".zst");
            Some(path.with_file_name(name))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_file_and_its_plain_file_are_each_others_counterpart() {
        let plain = Path::new("/h/.codex/sessions/rollout-1.jsonl");
        let compressed = counterpart(plain, false).unwrap();
        assert_eq!(compressed, Path::new("/h/.codex/sessions/rollout-1.jsonl.zst"));
        assert_eq!(counterpart(&compressed, true).unwrap(), plain);
    }
}
