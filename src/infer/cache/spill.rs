//! What a run learns of files before its cache is saved, kept on disk rather than in memory: each
//! entry is written as it is learned to an unnamed temporary file beside the cache (a record as
//! in the cache file, its shapes numbered in the run's table), and memory keeps only its key and
//! where it is, 16 bytes a file where an entry takes a hundred. The file has no name, so it is
//! gone when the run ends, however it ends.

use super::FileEntry;
use super::layout::{Reader, Writer};
use crate::infer::signature::SignatureId;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The bits of a [`Place`]'s `at` that hold the offset (a terabyte); those above hold the length
/// (16 MiB: an entry longer, none is, stays in memory).
const OFFSET_BITS: u32 = 40;

/// What is encoded before it is written.
const WRITE_BYTES: usize = 1 << 20;

/// Where one entry is: its key, then its offset and length packed in `at`.
#[derive(Debug, Clone, Copy)]
struct Place {
    key: u64,
    at: u64,
}

impl Place {
    fn offset(self) -> u64 {
        self.at & ((1 << OFFSET_BITS) - 1)
    }

    fn len(self) -> usize {
        (self.at >> OFFSET_BITS) as usize
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
    /// Where each entry is, in the order written until they are read back; then in the order
    /// of their keys, one each (the last written of a key).
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
        let (offset, len) = (self.written + start as u64, (self.pending.0.len() - start) as u64);
        if offset >> OFFSET_BITS != 0 || len >> (64 - OFFSET_BITS) != 0 {
            self.pending.0.truncate(start);
            return Err(entry);
        }
        self.places.push(Place { key: entry.key, at: offset | len << OFFSET_BITS });
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
            // By key, then by when written: the last of a key is kept.
            self.places.sort_unstable_by_key(|p| (p.key, p.at & ((1 << OFFSET_BITS) - 1)));
            self.places.dedup_by(|later, kept| {
                let same = later.key == kept.key;
                if same {
                    *kept = *later;
                }
                same
            });
            self.sorted = true;
        }
        Entries { spill: self, next: 0, formats, bytes: Vec::new(), lists: Default::default() }
    }
}

/// A walk of a spill's entries ([`Spill::entries`]).
pub(crate) struct Entries<'a> {
    spill: &'a mut Spill,
    next: usize,
    formats: usize,
    bytes: Vec<u8>,
    lists: [Vec<(SignatureId, u64)>; 2],
}

impl Entries<'_> {
    fn read(&mut self, place: Place) -> Option<FileEntry> {
        self.bytes.resize(place.len(), 0);
        let file = &mut self.spill.file;
        file.seek(SeekFrom::Start(place.offset())).ok()?;
        file.read_exact(&mut self.bytes).ok()?;
        let mut input = Reader { input: self.bytes.as_slice(), left: self.bytes.len() as u64 };
        let [whole, tail] = &mut self.lists;
        let entry = input.record(|n| SignatureId::try_from(n).ok(), self.formats, [whole, tail])?;
        (entry.key == place.key && input.is_done()).then_some(entry)
    }
}

impl Iterator for Entries<'_> {
    type Item = FileEntry;

    fn next(&mut self) -> Option<FileEntry> {
        let place = *self.spill.places.get(self.next)?;
        self.next += 1;
        let entry = self.read(place);
        if entry.is_none() {
            self.spill.fail();
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::signature::{FileSummary, SignatureTable, TypeSignature};
    use crate::source::files::Stamps;
    use std::sync::Arc;

    fn entry(key: u64, lines: u64, table: &mut SignatureTable) -> FileEntry {
        let shape =
            table.intern(TypeSignature { name: format!("t{}", key % 3).into(), fields: Arc::default() });
        let mut summary = FileSummary::default();
        summary.set_shapes(&[(shape, lines)], &[], table);
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
        let keys: Vec<u64> = (0..60_000u64).map(|n| n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1).collect();
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
