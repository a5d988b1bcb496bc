//! Reading only what was appended (`txq --follow`): where each scan of a followed statement
//! stopped in each file (the end of its last whole line, the number of the next line, the turn
//! and the values carried then), so that its next run reads on from there, and the damaged lines
//! it has reported. A session whose config holds [`FollowPositions`] scans this way.

use super::line_reader::ReaderState;
use crate::source::files::SourceFile;
use crate::source::lines::SplitPoint;
use std::collections::HashMap;
use std::path::PathBuf;
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

/// One scan's file: the format's schema, the table, the file's canonical path.
type Key = (&'static str, String, PathBuf);

/// Where the scans of a followed statement stopped, by table and file; and the damaged lines
/// each has reported of each file.
#[derive(Debug, Default)]
pub struct FollowPositions {
    at: Mutex<HashMap<Key, Position>>,
    damage: Mutex<HashMap<Key, u64>>,
}

impl FollowPositions {
    pub(crate) fn key(schema: &'static str, table: &str, file: &SourceFile) -> Key {
        (schema, table.to_string(), file.canonical().to_path_buf())
    }

    /// Where the last read of `key` stopped, if that is where this read of `file` may go on
    /// from: the same file, not shorter.
    pub(crate) fn get(&self, key: &Key, file: &SourceFile) -> Option<Position> {
        let at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        at.get(key).filter(|p| p.inode == file.inode && p.size <= file.size).cloned()
    }

    pub(crate) fn set(&self, key: Key, position: Position) {
        self.at.lock().unwrap_or_else(|e| e.into_inner()).insert(key, position);
    }

    /// Of `total` damaged lines the corpus counts in a file, those not reported yet (a file
    /// rewritten shorter reports its damage afresh); they are reported from now on.
    pub(crate) fn new_damage(&self, key: Key, total: u64) -> u64 {
        let mut damage = self.damage.lock().unwrap_or_else(|e| e.into_inner());
        let reported = damage.insert(key, total).unwrap_or(0);
        if total >= reported { total - reported } else { total }
    }
}
