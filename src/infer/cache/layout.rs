//! The cache file's bytes: a header, a checksum, the formats, the shapes, then one record per file
//! in the order of its key (the hash of its canonical path: the file is named by the corpus that
//! holds it, never by the cache), with numbers as LEB128 varints. The file is checked whole when
//! opened, then its records are read from it again, a buffer at a time, at each walk (never held
//! in memory, no document parsed first); a checksum that does not match, keys out of order, or
//! any byte out of place make the whole file unreadable, and the cache starts afresh.

use super::FileEntry;
use crate::infer::signature::{FileSummary, SignatureId, SignatureTable, TypeSignature};
use crate::infer::stats::{FieldShapes, ShapeSet};
use crate::infer::varint;
use crate::source::files::Stamps;
use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::sync::Arc;

/// The first bytes of a cache file: a name and the layout's version. The checksum follows: the
/// XXH3-64 (8 bytes, little-endian) of every byte after it.
const MAGIC: &[u8] = b"txq inference cache 7\n";

/// The bytes of the checksum after [`MAGIC`].
const CHECKSUM_BYTES: usize = 8;

/// The bytes of a cache holding `entries` ([`encode_to`]).
#[cfg(test)]
pub(crate) fn encode(formats: &[String], shapes: &SignatureTable, entries: &[FileEntry]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut each = |visit: &mut dyn FnMut(&FileEntry)| entries.iter().for_each(visit);
    encode_to(formats, shapes, &mut each, |_| true, &mut out).expect("a cursor takes every write");
    out.into_inner()
}

/// A walk of entries: calls the function it is given with each.
pub(crate) type EachEntry<'a> = dyn FnMut(&mut dyn FnMut(&FileEntry)) + 'a;

/// Writes a cache holding the entries that `each` gives (to the function it is called with, in
/// the order of their keys, one each, the same every time) and whose key `keep` keeps, to `sink`
/// as it is encoded (a million files' cache is never held whole in memory), then its checksum in
/// its place: only the shapes they name, renumbered in the order first named. `each` is called
/// twice: for the shapes named, then for the records.
pub(crate) fn encode_to(
    formats: &[String],
    shapes: &SignatureTable,
    each: &mut EachEntry<'_>,
    keep: impl Fn(u64) -> bool,
    sink: &mut (impl std::io::Write + Seek),
) -> std::io::Result<()> {
    // An entry naming a shape the table does not hold (none should) is left out.
    let kept =
        |entry: &FileEntry| keep(entry.key) && entry.summary.shapes().all(|(id, _)| shapes.get(id).is_some());
    let mut renumber: HashMap<SignatureId, SignatureId> = HashMap::new();
    let mut used: Vec<&TypeSignature> = Vec::new();
    let mut files = 0u64;
    each(&mut |entry| {
        if !kept(entry) {
            return;
        }
        files += 1;
        for (id, shape) in entry.summary.shapes().filter_map(|(id, _)| Some((id, shapes.get(id)?))) {
            renumber.entry(id).or_insert_with(|| {
                used.push(shape);
                used.len() as SignatureId - 1
            });
        }
    });
    sink.write_all(MAGIC)?;
    sink.write_all(&[0; CHECKSUM_BYTES])?;
    let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
    let mut out = Writer(Vec::with_capacity(FLUSH_BYTES + 4096));
    let mut flush = |out: &mut Writer, sink: &mut dyn std::io::Write| -> std::io::Result<()> {
        hash.update(&out.0);
        sink.write_all(&out.0)?;
        out.0.clear();
        Ok(())
    };
    out.number(formats.len() as u64);
    formats.iter().for_each(|f| out.bytes(f.as_bytes()));
    out.number(used.len() as u64);
    for shape in used {
        out.bytes(shape.name.as_bytes());
        out.number(shape.fields.len() as u64);
        for (key, shapes) in shape.fields.iter() {
            out.bytes(key.as_bytes());
            out.0.push(shapes.bits());
        }
    }
    out.number(files);
    let (mut written, mut failed) = (0u64, None);
    each(&mut |entry| {
        if failed.is_some() || written == files || !kept(entry) {
            return;
        }
        written += 1;
        out.record(entry, |id| renumber[&id]);
        if out.0.len() >= FLUSH_BYTES
            && let Err(e) = flush(&mut out, sink)
        {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if written != files {
        // `each` gave fewer the second time: what it gave is not one cache.
        return Err(std::io::Error::other("the entries changed while the cache was written"));
    }
    flush(&mut out, sink)?;
    let checksum = hash.digest();
    sink.seek(SeekFrom::Start(MAGIC.len() as u64))?;
    sink.write_all(&checksum.to_le_bytes())?;
    sink.seek(SeekFrom::End(0))?;
    Ok(())
}

/// What an encoding holds before it is written on, and what a read takes at a time.
const FLUSH_BYTES: usize = 1 << 20;

/// A cache file whose bytes were checked whole when opened: its formats and shapes are known,
/// and its records are read from it again, a buffer at a time, each time they are walked
/// ([`CacheFile::records`]): a million files' entries are never held in memory.
pub(crate) struct CacheFile<F = std::fs::File> {
    file: F,
    /// The formats' names; an entry's format is an index into them.
    pub(crate) formats: Vec<String>,
    /// For each shape's number in the file, its number in the table the file was opened with.
    renumber: Vec<SignatureId>,
    /// Where the records start, their bytes, and how many there are.
    records_at: u64,
    records_bytes: u64,
    records: u64,
    /// Whether a walk of the records met bytes that are not records (the file changed since it
    /// was checked): the walk stopped there.
    pub(crate) broken: bool,
}

/// The cache in `file` (read from its start), its shapes added to `shapes`; `None` when its bytes
/// are not a whole cache file of this layout, as written (any byte changed since fails the
/// checksum, and every record is read once to be sure of it). The file is read a buffer at a
/// time: once for the checksum, once for the formats, shapes and records.
pub(crate) fn open<F: Read + Seek>(mut file: F, shapes: &mut SignatureTable) -> Option<CacheFile<F>> {
    let mut head = [0u8; MAGIC.len() + CHECKSUM_BYTES];
    file.read_exact(&mut head).ok()?;
    let checksum = head.strip_prefix(MAGIC)?;
    let checksum = u64::from_le_bytes(checksum.try_into().ok()?);
    let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
    // A buffer of the file's size up to FLUSH_BYTES (one of a small cache's size is not a
    // megabyte of new memory zeroed).
    let size = file.seek(SeekFrom::End(0)).ok()?;
    file.seek(SeekFrom::Start(head.len() as u64)).ok()?;
    let mut buffer = vec![0u8; usize::try_from(size).unwrap_or(usize::MAX).clamp(1, FLUSH_BYTES)];
    let mut body = 0u64;
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                hash.update(&buffer[..n]);
                body += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    if hash.digest() != checksum {
        return None;
    }
    drop(buffer);
    file.seek(SeekFrom::Start(head.len() as u64)).ok()?;
    let mut input =
        Reader { input: std::io::BufReader::with_capacity(1 << 16, (&mut file).take(body)), left: body };
    let mut text = Vec::new();
    let mut formats = Vec::new();
    for _ in 0..input.count()? {
        input.bytes(&mut text)?;
        formats.push(std::str::from_utf8(&text).ok()?.to_string());
    }
    let mut renumber: Vec<SignatureId> = Vec::new();
    for _ in 0..input.count()? {
        input.bytes(&mut text)?;
        let name: Arc<str> = Arc::from(std::str::from_utf8(&text).ok()?);
        let mut fields = FieldShapes::new();
        for _ in 0..input.count()? {
            input.bytes(&mut text)?;
            let key = std::str::from_utf8(&text).ok()?.to_string();
            fields.push((key, ShapeSet::from_bits(input.byte()?)));
        }
        renumber.push(shapes.intern(TypeSignature { name, fields: Arc::new(fields) }));
    }
    // A record takes 20 bytes at the least: a damaged count is refused here.
    let records = u64::try_from(input.count()?).ok().filter(|&n| n <= input.left / 20)?;
    let records_bytes = input.left;
    drop(input);
    let records_at = head.len() as u64 + body - records_bytes;
    let mut cache = CacheFile { file, formats, renumber, records_at, records_bytes, records, broken: false };
    cache.records().for_each(drop);
    (!cache.broken).then_some(cache)
}

impl<F: Read + Seek> CacheFile<F> {
    /// The records, in the order of their keys, read from the file as they are taken (their
    /// shapes numbered in the table the file was opened with, in bytes of their own). A walk
    /// that meets bytes out of place stops there and marks the file [`CacheFile::broken`].
    pub(crate) fn records(&mut self) -> Records<'_, F> {
        let start = self.file.seek(SeekFrom::Start(self.records_at)).is_ok();
        let input = std::io::BufReader::with_capacity(1 << 16, (&mut self.file).take(self.records_bytes));
        Records {
            input: Reader { input, left: self.records_bytes },
            records: if start { self.records } else { 0 },
            last: None,
            renumber: &self.renumber,
            formats: self.formats.len(),
            broken: &mut self.broken,
            failed: !start,
            whole: Vec::new(),
            tail: Vec::new(),
        }
    }
}

/// A walk of a cache file's records ([`CacheFile::records`]).
pub(crate) struct Records<'a, F: Read> {
    input: Reader<std::io::BufReader<std::io::Take<&'a mut F>>>,
    /// The records left.
    records: u64,
    last: Option<u64>,
    renumber: &'a [SignatureId],
    formats: usize,
    broken: &'a mut bool,
    failed: bool,
    whole: Vec<(SignatureId, u64)>,
    tail: Vec<(SignatureId, u64)>,
}

impl<F: Read> Records<'_, F> {
    fn record(&mut self) -> Option<FileEntry> {
        let renumber = self.renumber;
        let renumbered = |n: u64| renumber.get(usize::try_from(n).ok()?).copied();
        let entry = self.input.record(renumbered, self.formats, [&mut self.whole, &mut self.tail])?;
        // Keys in order, one each: a file that says otherwise was not written by `encode_to`.
        if self.last.is_some_and(|last| last >= entry.key) {
            return None;
        }
        self.last = Some(entry.key);
        Some(entry)
    }
}

impl<F: Read> Iterator for Records<'_, F> {
    type Item = FileEntry;

    fn next(&mut self) -> Option<FileEntry> {
        if self.failed {
            return None;
        }
        if self.records == 0 {
            if !self.input.is_done() {
                self.failed = true;
                *self.broken = true;
            }
            return None;
        }
        self.records -= 1;
        let record = self.record();
        if record.is_none() {
            self.failed = true;
            *self.broken = true;
        }
        record
    }
}

#[derive(Debug)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    fn number(&mut self, n: u64) {
        varint::put(&mut self.0, n);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.number(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// One file's record: its key, format, stamps, prefix hash and summary, its shapes numbered
    /// by `renumber`.
    pub(super) fn record(&mut self, entry: &FileEntry, renumber: impl Fn(SignatureId) -> SignatureId) {
        self.0.extend_from_slice(&entry.key.to_le_bytes());
        self.number(u64::from(entry.format));
        self.number(entry.stamps.size());
        for stamp in [entry.stamps.modified(), entry.stamps.inode(), entry.stamps.changed()] {
            self.optional(stamp);
        }
        self.0.extend_from_slice(&entry.prefix_hash.to_le_bytes());
        let summary = &entry.summary;
        self.number(summary.whole().count() as u64);
        for (id, events) in summary.whole() {
            self.number(u64::from(renumber(id)));
            self.number(events);
        }
        self.number(summary.tail().count() as u64);
        for (id, events) in summary.tail() {
            self.number(u64::from(renumber(id)));
            self.number(events);
        }
        self.number(summary.complete_bytes);
        self.number(summary.damaged_lines);
        self.number(summary.lines);
        self.number(summary.max_line_bytes);
    }

    /// A number that may be missing: a byte saying whether it is there, then the number.
    fn optional(&mut self, n: Option<u64>) {
        self.0.push(u8::from(n.is_some()));
        if let Some(n) = n {
            self.number(n);
        }
    }
}

/// The body of a cache file, read a buffer at a time, with the bytes it has left.
pub(super) struct Reader<R: BufRead> {
    pub(super) input: R,
    pub(super) left: u64,
}

impl<R: BufRead> Reader<R> {
    fn byte(&mut self) -> Option<u8> {
        let &first = self.input.fill_buf().ok()?.first()?;
        self.input.consume(1);
        self.left -= 1;
        Some(first)
    }

    /// What [`varint::put`] wrote: `None` when it is cut off or longer than 64 bits.
    fn number(&mut self) -> Option<u64> {
        let (n, used) = varint::read(&mut self.input)?;
        self.left -= used as u64;
        Some(n)
    }

    /// What [`Writer::optional`] wrote: `None` for bytes that are not one.
    fn optional(&mut self) -> Option<Option<u64>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(self.number()?)),
            _ => None,
        }
    }

    /// What [`Writer::record`] wrote, its shapes' numbers taken through `renumber` (`None` for
    /// one it does not know) and its format one of `formats`: `None` for bytes that are not one.
    /// `lists` is room for its shapes, used again from record to record.
    pub(super) fn record(
        &mut self,
        renumber: impl Fn(u64) -> Option<SignatureId>,
        formats: usize,
        lists: [&mut Vec<(SignatureId, u64)>; 2],
    ) -> Option<FileEntry> {
        let key = self.u64_le()?;
        let format = u32::try_from(self.number()?).ok().filter(|&f| (f as usize) < formats)?;
        let size = self.number()?;
        let (modified, inode, changed) = (self.optional()?, self.optional()?, self.optional()?);
        let prefix_hash = self.u64_le()?;
        let [whole, tail] = lists;
        for list in [&mut *whole, &mut *tail] {
            list.clear();
            for _ in 0..self.count()? {
                list.push((renumber(self.number()?)?, self.number()?));
            }
        }
        let mut summary = FileSummary::default();
        summary.set_shapes_unshared(whole, tail);
        summary.complete_bytes = self.number()?;
        summary.damaged_lines = self.number()?;
        summary.lines = self.number()?;
        summary.max_line_bytes = self.number()?;
        let stamps = Stamps::new(size, modified, inode, changed);
        Some(FileEntry { key, format, stamps, prefix_hash, summary })
    }

    /// A count of things that follow, each at least a byte: never more than the bytes left (a
    /// damaged count allocates nothing).
    fn count(&mut self) -> Option<usize> {
        let n = self.number()?;
        (n <= self.left).then(|| usize::try_from(n).ok())?
    }

    fn u64_le(&mut self) -> Option<u64> {
        let mut bytes = [0u8; 8];
        self.take(&mut bytes)?;
        Some(u64::from_le_bytes(bytes))
    }

    fn take(&mut self, into: &mut [u8]) -> Option<()> {
        if into.len() as u64 > self.left {
            return None;
        }
        self.input.read_exact(into).ok()?;
        self.left -= into.len() as u64;
        Some(())
    }

    /// A length, then as many bytes, into `into`.
    fn bytes(&mut self, into: &mut Vec<u8>) -> Option<()> {
        let n = self.count()?;
        into.resize(n, 0);
        self.take(into)
    }

    /// Whether every byte was read.
    fn is_done(&mut self) -> bool {
        self.left == 0 && self.input.fill_buf().is_ok_and(|rest| rest.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    fn entry(
        key: u64,
        format: u32,
        whole: Vec<(SignatureId, u64)>,
        tail: Vec<(SignatureId, u64)>,
    ) -> FileEntry {
        let mut summary = FileSummary::default();
        summary.set_shapes(&whole, &tail, &mut SignatureTable::default());
        (summary.complete_bytes, summary.damaged_lines, summary.lines) = (300, 2, 40);
        summary.max_line_bytes = 256 << 20;
        FileEntry {
            key,
            format,
            stamps: Stamps::new(
                1 << 40,
                Some(1_764_000_000_123_456_789),
                Some(4_404_019),
                Some(1_764_000_000_987_654_321),
            ),
            prefix_hash: 0xdead_beef_0123_4567,
            summary,
        }
    }

    fn sample() -> (Vec<String>, SignatureTable, Vec<FileEntry>) {
        let mut shapes = SignatureTable::default();
        let field = |k: &str, bits| (k.to_string(), ShapeSet::from_bits(bits));
        let a =
            shapes.intern(TypeSignature { name: "usage".into(), fields: Arc::new(vec![field("model", 16)]) });
        let unused = shapes.intern(TypeSignature { name: "gone".into(), fields: Arc::new(vec![]) });
        let b = shapes.intern(TypeSignature {
            name: "tool_call".into(),
            fields: Arc::new(vec![field("tool", 16), field("input", 32)]),
        });
        assert_eq!(unused, 1);
        let entries = vec![
            entry(7, 0, vec![(a, 3), (b, 5)], vec![]),
            entry(1 << 40, 1, vec![(b, 1)], vec![(a, 1)]),
            FileEntry {
                stamps: Stamps::new(1 << 40, None, None, None),
                ..entry(u64::MAX, 0, vec![], vec![])
            },
        ];
        (vec!["rupu".into(), "reeval".into()], shapes, entries)
    }

    /// Each entry in words.
    fn described<'a>(shapes: &SignatureTable, entries: impl Iterator<Item = &'a FileEntry>) -> Vec<String> {
        entries
            .map(|e| {
                let types: Vec<String> = e
                    .summary
                    .shapes()
                    .map(|(id, n)| format!("{:?}={n}", shapes.get(id).map(|s| (&s.name, &s.fields))))
                    .collect();
                format!(
                    "{:x} {} {} {:?} {:?} {:?} {} {types:?} {:?}",
                    e.key,
                    e.format,
                    e.stamps.size(),
                    e.stamps.modified(),
                    e.stamps.inode(),
                    e.stamps.changed(),
                    e.prefix_hash,
                    {
                        let s = &e.summary;
                        (s.whole().count(), s.complete_bytes, s.damaged_lines, s.lines, s.max_line_bytes)
                    }
                )
            })
            .collect()
    }

    /// The formats and entries of a cache file's `bytes`, its shapes added to `shapes`.
    fn decoded_into(bytes: &[u8], shapes: &mut SignatureTable) -> Option<(Vec<String>, Vec<FileEntry>)> {
        let mut file = open(std::io::Cursor::new(bytes), shapes)?;
        let entries: Vec<FileEntry> = file.records().collect();
        (!file.broken).then(|| (file.formats.clone(), entries))
    }

    fn decoded(bytes: &[u8]) -> Option<(Vec<String>, Vec<FileEntry>)> {
        decoded_into(bytes, &mut SignatureTable::default())
    }

    #[test]
    fn a_cache_reads_back_as_written() {
        let (formats, shapes, entries) = sample();
        let bytes = encode(&formats, &shapes, &entries);
        let mut read_shapes = SignatureTable::default();
        let (read_formats, read) = decoded_into(&bytes, &mut read_shapes).expect("decodes");
        assert_eq!(read_formats, formats);
        assert_eq!(read_shapes.len(), 2, "the unused shape is not written");
        assert_eq!(described(&read_shapes, read.iter()), described(&shapes, entries.iter()));
    }

    /// The records are read from the file again at each walk, the same each time.
    #[test]
    fn the_records_walk_again_the_same() {
        let (formats, shapes, entries) = sample();
        let bytes = encode(&formats, &shapes, &entries);
        let mut read_shapes = SignatureTable::default();
        let mut file = open(std::io::Cursor::new(&bytes), &mut read_shapes).expect("opens");
        let first: Vec<FileEntry> = file.records().collect();
        let again: Vec<FileEntry> = file.records().collect();
        assert_eq!(described(&read_shapes, first.iter()), described(&shapes, entries.iter()));
        assert_eq!(described(&read_shapes, again.iter()), described(&shapes, entries.iter()));
        assert!(!file.broken);
    }

    #[test]
    fn only_the_entries_kept_are_written() {
        let (formats, shapes, entries) = sample();
        let mut out = std::io::Cursor::new(Vec::new());
        let mut each = |visit: &mut dyn FnMut(&FileEntry)| entries.iter().for_each(visit);
        encode_to(&formats, &shapes, &mut each, |key| key != 7, &mut out).expect("written");
        let mut read_shapes = SignatureTable::default();
        let (_, read) = decoded_into(&out.into_inner(), &mut read_shapes).expect("decodes");
        assert_eq!(described(&read_shapes, read.iter()), described(&shapes, entries[1..].iter()));
    }

    /// `body` (a cache file's bytes after the checksum) with the checksum it needs.
    fn checksummed(body: &[u8]) -> Vec<u8> {
        [MAGIC, &xxh3_64(body).to_le_bytes(), body].concat()
    }

    #[test]
    fn any_cut_or_changed_byte_is_refused() {
        let (formats, shapes, entries) = sample();
        let bytes = encode(&formats, &shapes, &entries);
        for end in 0..bytes.len() {
            assert!(decoded(&bytes[..end]).is_none(), "cut at {end}");
        }
        for at in 0..bytes.len() * 8 {
            let mut changed = bytes.clone();
            changed[at / 8] ^= 1 << (at % 8);
            assert!(decoded(&changed).is_none(), "bit {at} flipped");
        }
        assert!(decoded(b"[1,2,3]").is_none());
    }

    #[test]
    fn keys_out_of_order_are_refused() {
        let (formats, shapes, mut entries) = sample();
        entries.swap(0, 1);
        let body = encode(&formats, &shapes, &entries).split_off(MAGIC.len() + CHECKSUM_BYTES);
        assert!(decoded(&checksummed(&body)).is_none());
        let (formats, shapes, mut entries) = sample();
        entries[1].key = entries[0].key;
        let body = encode(&formats, &shapes, &entries).split_off(MAGIC.len() + CHECKSUM_BYTES);
        assert!(decoded(&checksummed(&body)).is_none(), "a key twice");
    }

    /// Bytes that pass the checksum (written so by a bug, or by chance) must still be read with
    /// no panic and no unbounded allocation.
    #[test]
    fn a_checksummed_body_out_of_place_is_refused_or_read_without_panic() {
        let (formats, shapes, entries) = sample();
        let body = encode(&formats, &shapes, &entries).split_off(MAGIC.len() + CHECKSUM_BYTES);
        assert!(decoded(&checksummed(&body)).is_some());
        for end in 0..body.len() {
            assert!(decoded(&checksummed(&body[..end])).is_none(), "cut at {end}");
        }
        let mut rng = crate::generate::rng::Rng::new(5);
        for _ in 0..20_000 {
            let mut changed = body.clone();
            let at = rng.below(changed.len() as u64) as usize;
            changed[at] = rng.below(256) as u8;
            let _ = decoded(&checksummed(&changed));
        }
    }

    #[test]
    fn a_damaged_count_of_files_is_refused_before_room_is_reserved() {
        // No formats or shapes, then a file count of 2^63 - 1.
        let body = [0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(decoded(&checksummed(&body)).is_none());
    }
}
