//! What a run learns of files before its cache is saved, kept on disk rather than in memory: each
//! entry is written as it is learned to an unnamed temporary file beside the cache (a record as
//! in the cache file, its shapes numbered in the run's table), and memory keeps only its key and
//! where it is, 8 bytes a file where an entry takes a hundred. The file has no name, so it is
//! gone when the run ends, however it ends.

use super::FileEntry;
use super::layout::{Reader, Writer};
use crate::infer::signature::SignatureId;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What is encoded before it is written.
const WRITE_BYTES: usize = 1 << 20;

/// What is read of the spill for one entry at first (most take fifty bytes); more when it is
/// longer.
const READ_BYTES: usize = 256;

/// Where one entry is: the high 32 bits of its key, then its offset in the spill (4 GiB of
/// entries, seventy million files; an entry past them stays in memory). Sorted, places are in
/// the order of their keys but among those of the same high bits (a few in a million), which
/// are put in order as they are read ([`Entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place(u64);

impl Place {
    fn new(key: u64, offset: u32) -> Place {
        Place(key >> 32 << 32 | u64::from(offset))
    }

    fn key_high(self) -> u64 {
        self.0 >> 32
    }

    fn offset(self) -> u64 {
        self.0 & u64::from(u32::MAX)
    }
}

/// Entries written down as they are learned ([`Spill::push`]), read back in the order of their
/// keys ([`Spill::entries`]).
#[derive(Debug)]
pub(crate) struct Spill {
    file: File,
    /// Encoded, not yet written.
    pending: Writer,
    /// The bytes written to the file.
    written: u64,
    /// Where each entry is, in the order written until they are read back; then sorted.
    places: Vec<Place>,
    sorted: bool,
    /// Whether a write or a read failed: what it held is lost (its files are read again by the
    /// next run, as with a cache that cannot be saved), and it takes no more.
    failed: bool,
}

impl Spill {
    /// A spill in `dir` (made if it is not there); `None` when no file can be made there.
    pub(crate) fn new(dir: &Path) -> Option<Spill> {
        std::fs::create_dir_all(dir).ok()?;
        let file = tempfile::tempfile_in(dir).ok()?;
        let pending = Writer(Vec::with_capacity(WRITE_BYTES + 4096));
        Some(Spill { file, pending, written: 0, places: Vec::new(), sorted: true, failed: false })
    }

    /// Room for `more` entries, made at once.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.places.reserve_exact(more);
    }

    /// Writes `entry` down, or gives it back when it cannot be (to be kept in memory).
    pub(crate) fn push(&mut self, entry: FileEntry) -> Result<(), FileEntry> {
        if self.failed {
            return Err(entry);
        }
        let start = self.pending.0.len();
        self.pending.record(&entry, |id| id);
        let Ok(offset) = u32::try_from(self.written + start as u64) else {
            self.pending.0.truncate(start);
            return Err(entry);
        };
        self.places.push(Place::new(entry.key, offset));
        self.sorted = false;
        if self.pending.0.len() >= WRITE_BYTES {
            self.write_pending();
        }
        Ok(())
    }

    fn write_pending(&mut self) {
        if self.failed || self.pending.0.is_empty() {
            return;
        }
        // Reads move the file's offset: a write goes at the end of what was written.
        let at = self.written;
        match self.file.seek(SeekFrom::Start(at)).and_then(|_| self.file.write_all(&self.pending.0)) {
            Ok(()) => {
                self.written += self.pending.0.len() as u64;
                self.pending.0.clear();
            }
            Err(_) => self.fail(),
        }
    }

    fn fail(&mut self) {
        self.failed = true;
        self.places = Vec::new();
        self.pending.0 = Vec::new();
    }

    /// Whether it holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Forgets every entry (they were saved, or taken into memory); the file is used again.
    pub(crate) fn clear(&mut self) {
        self.places.clear();
        self.pending.0.clear();
        self.sorted = true;
        if !self.failed && self.file.set_len(0).is_ok() {
            self.written = 0;
        } else {
            self.fail();
        }
    }

    /// The entries, in the order of their keys, one each (the last written of a key), read back
    /// as they are taken; their formats below `formats`. A read that fails ends the walk and the
    /// spill: what was not read is lost.
    pub(crate) fn entries(&mut self, formats: usize) -> Entries<'_> {
        self.write_pending();
        if !self.sorted {
            self.places.sort_unstable();
            self.sorted = true;
        }
        let bytes = Vec::with_capacity(READ_BYTES);
        Entries { spill: self, next: 0, formats, bytes, lists: Default::default(), ready: Vec::new() }
    }
}

/// A walk of a spill's entries ([`Spill::entries`]).
pub(crate) struct Entries<'a> {
    spill: &'a mut Spill,
    next: usize,
    formats: usize,
    bytes: Vec<u8>,
    lists: [Vec<(SignatureId, u64)>; 2],
    /// The entries of the places of one key's high bits, in the order of their keys, last first.
    ready: Vec<FileEntry>,
}

impl Entries<'_> {
    /// The entry written at `place`: [`READ_BYTES`] read, then twice as many until it is whole
    /// (or the spill ends).
    fn read(&mut self, place: Place) -> Option<FileEntry> {
        let at = place.offset();
        let left = self.spill.written.checked_sub(at)?;
        let mut want = READ_BYTES as u64;
        loop {
            let take = want.min(left) as usize;
            self.bytes.resize(take, 0);
            let file = &mut self.spill.file;
            file.seek(SeekFrom::Start(at)).ok()?;
            file.read_exact(&mut self.bytes).ok()?;
            let mut input = Reader { input: self.bytes.as_slice(), left: take as u64 };
            let [whole, tail] = &mut self.lists;
            match input.record(|n| SignatureId::try_from(n).ok(), self.formats, [whole, tail]) {
                Some(entry) if entry.key >> 32 == place.key_high() => return Some(entry),
                Some(_) => return None,
                None if (take as u64) < left => want *= 2,
                None => return None,
            }
        }
    }

    /// Reads the entries of the places from `self.next` of the same key's high bits into
    /// `ready`, in the order of their keys, the last written of a key alone.
    fn read_group(&mut self) -> Option<()> {
        let places = &self.spill.places;
        let first = *places.get(self.next)?;
        let end =
            self.next + places[self.next..].iter().take_while(|p| p.key_high() == first.key_high()).count();
        let mut group = Vec::with_capacity(end - self.next);
        for n in self.next..end {
            group.push(self.read(self.spill.places[n])?);
        }
        self.next = end;
        // Stable: of a key, the last written is last, and the one kept.
        group.sort_by_key(|e| e.key);
        group.reverse();
        group.dedup_by_key(|e| e.key);
        self.ready = group;
        Some(())
    }
}

impl Iterator for Entries<'_> {
    type Item = FileEntry;

    fn next(&mut self) -> Option<FileEntry> {
        if self.ready.is_empty() && self.next < self.spill.places.len() && self.read_group().is_none() {
            self.spill.fail();
            self.ready.clear();
        }
        self.ready.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::signature::{FileSummary, SignatureTable, TypeSignature};
    use crate::source::files::Stamps;
    use std::sync::Arc;

    /// An entry of `key`; one of a key that ends in 5 names a hundred shapes (longer than
    /// what is read of an entry at first).
    fn entry(key: u64, lines: u64, table: &mut SignatureTable) -> FileEntry {
        let shapes: Vec<(SignatureId, u64)> = (0..if key % 10 == 5 { 100 } else { 1 })
            .map(|n| {
                let name = format!("t{}-{n}", key % 3).into();
                (table.intern(TypeSignature { name, fields: Arc::default() }), lines + n)
            })
            .collect();
        let mut summary = FileSummary::default();
        summary.set_shapes(&shapes, &[], table);
        summary.lines = lines;
        let stamps = Stamps::new(key, Some(key + 1), None, Some(key + 2));
        FileEntry { key, format: (key % 2) as u32, stamps, prefix_hash: key ^ 5, summary }
    }

    fn said(entry: &FileEntry) -> String {
        format!("{entry:?}")
    }

    /// Entries come back in the order of their keys, the last written of a key in place of the
    /// others, at every walk; writes past a buffer's worth and a cleared spill used again.
    #[test]
    fn entries_come_back_in_key_order_the_last_of_a_key_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(&dir.path().join("made")).expect("a spill");
        let mut table = SignatureTable::default();
        // Keys over the whole range, and some that share their high 32 bits, written out of order.
        let shared = (0..40u64).map(|n| (0x1234_5678 << 32) | ((n * 7919) % 40));
        let keys: Vec<u64> =
            (0..60_000u64).map(|n| n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1).chain(shared).collect();
        for &key in &keys {
            spill.push(entry(key, 1, &mut table)).unwrap();
        }
        // Written again, later: these are the ones kept.
        for &key in keys.iter().step_by(7) {
            spill.push(entry(key, 2, &mut table)).unwrap();
        }
        let mut expected: Vec<FileEntry> = keys
            .iter()
            .enumerate()
            .map(|(n, &key)| entry(key, if n % 7 == 0 { 2 } else { 1 }, &mut table))
            .collect();
        expected.sort_by_key(|e| e.key);
        let expected: Vec<String> = expected.iter().map(said).collect();
        for walk in 0..2 {
            let read: Vec<String> = spill.entries(2).map(|e| said(&e)).collect();
            assert_eq!(read.len(), expected.len(), "walk {walk}");
            assert!(read == expected, "walk {walk}");
        }
        assert!(spill.written > WRITE_BYTES as u64, "more than one buffer was written");
        let mut out = Writer(Vec::new());
        out.record(&entry(5, 1, &mut table), |id| id);
        assert!(out.0.len() > READ_BYTES, "an entry longer than a first read");
        spill.clear();
        assert!(spill.is_empty());
        assert_eq!(spill.entries(2).count(), 0);
        spill.push(entry(9, 4, &mut table)).unwrap();
        let again: Vec<String> = spill.entries(2).map(|e| said(&e)).collect();
        assert_eq!(again, vec![said(&entry(9, 4, &mut table))]);
    }

    /// Bytes that are not what was written (the file changed under it) end the walk, with no
    /// panic, and the spill takes no more.
    #[test]
    fn a_spill_changed_under_it_ends_its_walk() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(dir.path()).expect("a spill");
        let mut table = SignatureTable::default();
        for key in 0..10 {
            spill.push(entry(key, 1, &mut table)).unwrap();
        }
        assert_eq!(spill.entries(2).count(), 10);
        spill.file.set_len(spill.written / 2).unwrap();
        let read = spill.entries(2).count();
        assert!(read < 10, "{read} read of a file cut in half");
        assert!(spill.failed && spill.is_empty());
        let back = spill.push(entry(11, 1, &mut table)).expect_err("a failed spill takes nothing");
        assert_eq!(back.key, 11);
    }

    /// A directory where no file can be made is no spill (the entries stay in memory).
    #[test]
    fn no_spill_where_no_file_can_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a file");
        std::fs::write(&file, b"").unwrap();
        assert!(Spill::new(&file).is_none());
    }
}
