//! The cache file's bytes: a header, a checksum, the formats, the shapes, the directories, then one
//! record per file, with numbers as LEB128 varints. Read straight into the cache's map (no document
//! parsed first, no allocation per number); a checksum that does not match, or any byte out of
//! place, makes the whole file unreadable, and the cache starts afresh.

use super::FileEntry;
use crate::infer::signature::{FileSummary, SignatureId, SignatureTable, TypeSignature};
use crate::infer::stats::{FieldShapes, ShapeSet};
use crate::infer::varint;
use crate::source::files::Stamps;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

/// The first bytes of a cache file: a name and the layout's version. The checksum follows: the
/// XXH3-64 (8 bytes, little-endian) of every byte after it.
const MAGIC: &[u8] = b"txq inference cache 6\n";

/// The bytes of the checksum after [`MAGIC`].
const CHECKSUM_BYTES: usize = 8;

/// What a cache file holds: the formats' names and the files by canonical path (their shapes
/// numbered in the table `decode` was given).
pub(crate) struct Decoded {
    pub(crate) formats: Vec<String>,
    /// The hash of each file's path ([`crate::source::files::path_key`]), and its entry.
    pub(crate) keys: Vec<u64>,
    pub(crate) entries: Vec<FileEntry>,
}

/// The bytes of a cache holding `entries` ([`encode_to`]).
#[cfg(test)]
pub(crate) fn encode(
    formats: &[String],
    shapes: &SignatureTable,
    entries: &[(&OsStr, &FileEntry)],
) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_to(formats, shapes, entries, &mut out).expect("a cursor takes every write");
    out.into_inner()
}

/// Writes a cache holding `entries` to `sink` as it is encoded (a million files' cache is not
/// held whole in memory), then its checksum in its place: only the shapes they name
/// (renumbered in the order first named) and each directory once, the files in path order.
pub(crate) fn encode_to(
    formats: &[String],
    shapes: &SignatureTable,
    entries: &[(&OsStr, &FileEntry)],
    sink: &mut (impl std::io::Write + std::io::Seek),
) -> std::io::Result<()> {
    let mut paths: Vec<(&OsStr, &FileEntry)> = entries.to_vec();
    paths.sort_by(|a, b| a.0.cmp(b.0));
    // ShapeSet renumbered, and directories numbered, in path order.
    let mut renumber: HashMap<SignatureId, SignatureId> = HashMap::new();
    let mut used: Vec<&TypeSignature> = Vec::new();
    let mut dirs: Vec<&OsStr> = Vec::new();
    let mut rows: Vec<(u64, &OsStr, &FileEntry)> = Vec::with_capacity(paths.len());
    for (path, entry) in paths {
        let path = Path::new(path);
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { continue };
        if entry.summary.shapes().any(|(id, _)| shapes.get(id).is_none()) {
            continue;
        }
        for (id, shape) in entry.summary.shapes().filter_map(|(id, _)| Some((id, shapes.get(id)?))) {
            renumber.entry(id).or_insert_with(|| {
                used.push(shape);
                used.len() as SignatureId - 1
            });
        }
        if dirs.last() != Some(&dir.as_os_str()) {
            dirs.push(dir.as_os_str());
        }
        rows.push((dirs.len() as u64 - 1, name, entry));
    }
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
    // A directory that comes back after another (`a/` files around `a/b/` ones) is listed again.
    out.number(dirs.len() as u64);
    dirs.iter().for_each(|d| out.bytes(d.as_encoded_bytes()));
    out.number(rows.len() as u64);
    for (dir, name, entry) in rows {
        out.number(dir);
        out.bytes(name.as_encoded_bytes());
        out.number(u64::from(entry.format));
        out.number(entry.stamps.size());
        for stamp in [entry.stamps.modified(), entry.stamps.inode(), entry.stamps.changed()] {
            out.optional(stamp);
        }
        out.0.extend_from_slice(&entry.prefix_hash.to_le_bytes());
        let summary = &entry.summary;
        for list in [summary.whole().collect::<Vec<_>>(), summary.tail().collect()] {
            out.number(list.len() as u64);
            for (id, events) in list {
                out.number(u64::from(renumber[&id]));
                out.number(events);
            }
        }
        out.number(summary.complete_bytes);
        out.number(summary.damaged_lines);
        out.number(summary.lines);
        out.number(summary.max_line_bytes);
        if out.0.len() >= FLUSH_BYTES {
            flush(&mut out, sink)?;
        }
    }
    flush(&mut out, sink)?;
    let checksum = hash.digest();
    sink.seek(std::io::SeekFrom::Start(MAGIC.len() as u64))?;
    sink.write_all(&checksum.to_le_bytes())?;
    sink.seek(std::io::SeekFrom::End(0))?;
    Ok(())
}

/// What an encoding holds before it is written on.
const FLUSH_BYTES: usize = 1 << 20;

/// The cache in `bytes`, its shapes added to `shapes`; `None` when the bytes are not a whole
/// cache file of this layout, as written (any byte changed since fails the checksum).
pub(crate) fn decode(bytes: &[u8], shapes: &mut SignatureTable) -> Option<Decoded> {
    let (checksum, body) = bytes.strip_prefix(MAGIC)?.split_at_checked(CHECKSUM_BYTES)?;
    if u64::from_le_bytes(checksum.try_into().ok()?) != xxh3_64(body) {
        return None;
    }
    let mut input = Reader(body);
    let formats = (0..input.count()?)
        .map(|_| Some(std::str::from_utf8(input.bytes()?).ok()?.to_string()))
        .collect::<Option<Vec<String>>>()?;
    let mut renumber: Vec<SignatureId> = Vec::new();
    for _ in 0..input.count()? {
        let name: Arc<str> = Arc::from(std::str::from_utf8(input.bytes()?).ok()?);
        let fields = (0..input.count()?)
            .map(|_| {
                let key = std::str::from_utf8(input.bytes()?).ok()?.to_string();
                Some((key, ShapeSet::from_bits(input.byte()?)))
            })
            .collect::<Option<FieldShapes>>()?;
        renumber.push(shapes.intern(TypeSignature { name, fields: Arc::new(fields) }));
    }
    let dirs = (0..input.count()?).map(|_| input.bytes()).collect::<Option<Vec<&[u8]>>>()?;
    let files = input.count()?;
    // A record takes 20 bytes at the least: a damaged count reserves no more than the bytes hold.
    let mut entries = Vec::with_capacity(files.min(input.0.len() / 20));
    let mut keys = Vec::with_capacity(entries.capacity());
    let (mut path, mut whole, mut tail) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..files {
        let dir = dirs.get(input.number()? as usize)?;
        let name = input.bytes()?;
        path.clear();
        path.extend_from_slice(dir);
        path.push(b'/');
        path.extend_from_slice(name);
        let format = u32::try_from(input.number()?).ok().filter(|&f| (f as usize) < formats.len())?;
        let size = input.number()?;
        let (modified, inode, changed) = (input.optional()?, input.optional()?, input.optional()?);
        let prefix_hash = u64::from_le_bytes(input.take(8)?.try_into().ok()?);
        for list in [&mut whole, &mut tail] {
            list.clear();
            for _ in 0..input.count()? {
                list.push((*renumber.get(input.number()? as usize)?, input.number()?));
            }
        }
        let mut summary = FileSummary::default();
        summary.set_shapes(&whole, &tail, shapes);
        summary.complete_bytes = input.number()?;
        summary.damaged_lines = input.number()?;
        summary.lines = input.number()?;
        summary.max_line_bytes = input.number()?;
        let stamps = Stamps::new(size, modified, inode, changed);
        let entry = FileEntry { format, stamps, prefix_hash, summary };
        keys.push(xxh3_64(&path));
        entries.push(entry);
    }
    input.0.is_empty().then_some(Decoded { formats, keys, entries })
}

struct Writer(Vec<u8>);

impl Writer {
    fn number(&mut self, n: u64) {
        varint::put(&mut self.0, n);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.number(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// A number that may be missing: a byte saying whether it is there, then the number.
    fn optional(&mut self, n: Option<u64>) {
        self.0.push(u8::from(n.is_some()));
        if let Some(n) = n {
            self.number(n);
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    fn number(&mut self) -> Option<u64> {
        varint::take(&mut self.0)
    }

    /// What [`Writer::optional`] wrote: `None` for bytes that are not one.
    fn optional(&mut self) -> Option<Option<u64>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(self.number()?)),
            _ => None,
        }
    }

    /// A count of things that follow, each at least a byte: never more than the bytes left (a
    /// damaged count allocates nothing).
    fn count(&mut self) -> Option<usize> {
        usize::try_from(self.number()?).ok().filter(|&n| n <= self.0.len())
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.number()?).ok()?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn entry(format: u32, whole: Vec<(SignatureId, u64)>, tail: Vec<(SignatureId, u64)>) -> FileEntry {
        let mut summary = FileSummary::default();
        summary.set_shapes(&whole, &tail, &mut SignatureTable::default());
        (summary.complete_bytes, summary.damaged_lines, summary.lines) = (300, 2, 40);
        summary.max_line_bytes = 256 << 20;
        FileEntry {
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

    fn sample() -> (Vec<String>, SignatureTable, Vec<(OsString, FileEntry)>) {
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
            ("/t/a/run_1.jsonl".into(), entry(0, vec![(a, 3), (b, 5)], vec![])),
            ("/t/a/b/run_2.jsonl".into(), entry(1, vec![(b, 1)], vec![(a, 1)])),
            (
                "/t/a/run_3.jsonl".into(),
                FileEntry { stamps: Stamps::new(1 << 40, None, None, None), ..entry(0, vec![], vec![]) },
            ),
        ];
        (vec!["rupu".into(), "reeval".into()], shapes, entries)
    }

    /// Each entry in words, by the key of its path.
    fn described<'a>(
        shapes: &SignatureTable,
        entries: impl Iterator<Item = (u64, &'a FileEntry)>,
    ) -> Vec<String> {
        let mut out: Vec<String> = entries
            .map(|(path, e)| {
                let types: Vec<String> = e
                    .summary
                    .shapes()
                    .map(|(id, n)| format!("{:?}={n}", shapes.get(id).map(|s| (&s.name, &s.fields))))
                    .collect();
                format!(
                    "{path:?} {} {} {:?} {:?} {:?} {} {types:?} {:?}",
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
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_cache_reads_back_as_written() {
        let (formats, shapes, entries) = sample();
        let bytes = encode(&formats, &shapes, &pairs(&entries));
        let mut read_shapes = SignatureTable::default();
        let decoded = decode(&bytes, &mut read_shapes).expect("decodes");
        assert_eq!(decoded.formats, formats);
        assert_eq!(read_shapes.len(), 2, "the unused shape is not written");
        let written = entries.iter().map(|(path, e)| (crate::source::files::path_key(Path::new(path)), e));
        assert_eq!(
            described(&read_shapes, decoded.keys.iter().copied().zip(&decoded.entries)),
            described(&shapes, written)
        );
    }

    fn pairs(entries: &[(OsString, FileEntry)]) -> Vec<(&OsStr, &FileEntry)> {
        entries.iter().map(|(path, e)| (path.as_os_str(), e)).collect()
    }

    /// `body` (a cache file's bytes after the checksum) with the checksum it needs.
    fn checksummed(body: &[u8]) -> Vec<u8> {
        [MAGIC, &xxh3_64(body).to_le_bytes(), body].concat()
    }

    #[test]
    fn any_cut_or_changed_byte_is_refused() {
        let (formats, shapes, entries) = sample();
        let bytes = encode(&formats, &shapes, &pairs(&entries));
        for end in 0..bytes.len() {
            assert!(decode(&bytes[..end], &mut SignatureTable::default()).is_none(), "cut at {end}");
        }
        for at in 0..bytes.len() * 8 {
            let mut changed = bytes.clone();
            changed[at / 8] ^= 1 << (at % 8);
            assert!(decode(&changed, &mut SignatureTable::default()).is_none(), "bit {at} flipped");
        }
        assert!(decode(b"[1,2,3]", &mut SignatureTable::default()).is_none());
    }

    /// Bytes that pass the checksum (written so by a bug, or by chance) must still be read with
    /// no panic and no unbounded allocation.
    #[test]
    fn a_checksummed_body_out_of_place_is_refused_or_read_without_panic() {
        let (formats, shapes, entries) = sample();
        let body = encode(&formats, &shapes, &pairs(&entries)).split_off(MAGIC.len() + CHECKSUM_BYTES);
        assert!(decode(&checksummed(&body), &mut SignatureTable::default()).is_some());
        for end in 0..body.len() {
            assert!(
                decode(&checksummed(&body[..end]), &mut SignatureTable::default()).is_none(),
                "cut at {end}"
            );
        }
        let mut rng = crate::generate::rng::Rng::new(5);
        for _ in 0..20_000 {
            let mut changed = body.clone();
            let at = rng.below(changed.len() as u64) as usize;
            changed[at] = rng.below(256) as u8;
            let _ = decode(&checksummed(&changed), &mut SignatureTable::default());
        }
    }

    #[test]
    fn a_damaged_count_of_files_is_refused_before_room_is_reserved() {
        // No formats, shapes or directories, then a file count of 2^63 - 1.
        let body = [0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(decode(&checksummed(&body), &mut SignatureTable::default()).is_none());
    }
}
