//! The files found: a [`SourceFile`], and the lists of them kept compactly ([`SourceFiles`]):
//! each directory once, every name in one shared arena, a file's size and stamps packed in one
//! fixed row of 32 bytes, a name holding a UUID (a session's id, as most transcripts' names
//! do) with the UUID in its 16 bytes; a file becomes a [`SourceFile`] when it is used. A million
//! files are about fifty-five bytes each here (the row and a `<uuid>.jsonl` name in 23 bytes),
//! not the four hundred that a path and its metadata take as separate allocations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The hasher of maps keyed by paths: a fast one, not SipHash, since a start hashes tens of
/// thousands of long paths (benchmarks/ANALYSIS.md, "A compact corpus").
pub(crate) type PathHasher = foldhash::fast::RandomState;

/// A path as a key: the XXH3-64 of its bytes (a million paths are not kept twice to be found
/// by; two paths of one corpus with the same hash, a chance of about 3 in 10^8 at a million
/// files, would be one file to the lookups that use it).
pub(crate) fn path_key(path: &std::path::Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(path.as_os_str().as_encoded_bytes())
}

/// A file found for a format.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as found (the searched path joined with the file's place below it).
    pub path: PathBuf,
    /// The canonical path when it is not `path` ([`SourceFile::canonical`]): most files are
    /// found by the path that names them, and a million paths are not kept twice.
    canonical_if_other: Option<PathBuf>,
    /// Its size when found: txq reads this many bytes, so a file still being written reads as a
    /// consistent prefix.
    pub size: u64,
    /// Its modification time when found, in nanoseconds since the epoch.
    pub modified: Option<u64>,
    /// Its inode number when found (unix only).
    pub inode: Option<u64>,
    /// Its status change time (ctime) when found, in nanoseconds since the epoch (unix only): any
    /// write moves it, and unlike the modification time nothing can set it back.
    pub changed: Option<u64>,
}

impl SourceFile {
    /// A file found at `path` (`canonical` the path it is read by and known by when reached
    /// twice), with its size and stamps when found.
    pub fn new(
        path: PathBuf,
        canonical: PathBuf,
        size: u64,
        modified: Option<u64>,
        inode: Option<u64>,
        changed: Option<u64>,
    ) -> SourceFile {
        SourceFile::found(path, Some(canonical), size, modified, inode, changed)
    }

    /// [`SourceFile::new`], with no canonical path when it is the path.
    pub(crate) fn found(
        path: PathBuf,
        canonical: Option<PathBuf>,
        size: u64,
        modified: Option<u64>,
        inode: Option<u64>,
        changed: Option<u64>,
    ) -> SourceFile {
        let canonical_if_other = canonical.filter(|c| *c != path);
        SourceFile { path, canonical_if_other, size, modified, inode, changed }
    }

    /// The canonical path, used to read it and to recognise it when reached twice.
    pub fn canonical(&self) -> &Path {
        self.canonical_if_other.as_deref().unwrap_or(&self.path)
    }

    /// Whether the file is an object in a remote store (`s3://bucket/key`).
    pub fn is_remote(&self) -> bool {
        super::remote::is_remote(self.canonical())
    }

    /// Whether the file is compressed (`*.zst`): read as the bytes it inflates to, from its start.
    pub(crate) fn compressed(&self) -> bool {
        crate::format::is_compressed(&self.path)
    }

    /// Whether the file is still what it was when found: the same size, modification time,
    /// inode and status change time.
    pub(crate) fn unchanged(&self) -> bool {
        // An object is replaced whole, never written in place, and each statement lists its
        // store anew: what the listing said is what is there.
        if self.is_remote() {
            return true;
        }
        std::fs::metadata(self.canonical()).is_ok_and(|meta| {
            let (inode, changed) = inode_and_changed(&meta);
            self.modified.is_some()
                && (meta.len(), modified_ns(&meta), inode, changed)
                    == (self.size, self.modified, self.inode, self.changed)
        })
    }
}

/// A file's size, modification time, inode and status change time when found, packed: a
/// missing stamp is `u64::MAX` here, not an `Option` twice its size (a time that far off, in the
/// year 2554, reads as missing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamps {
    size: u64,
    modified: u64,
    inode: u64,
    changed: u64,
}

impl Stamps {
    const NONE: u64 = u64::MAX;

    pub(crate) fn new(size: u64, modified: Option<u64>, inode: Option<u64>, changed: Option<u64>) -> Stamps {
        let packed = |value: Option<u64>| value.unwrap_or(Stamps::NONE);
        Stamps { size, modified: packed(modified), inode: packed(inode), changed: packed(changed) }
    }

    /// The stamps of `file` as it was found.
    pub(crate) fn of(file: &SourceFile) -> Stamps {
        Stamps::new(file.size, file.modified, file.inode, file.changed)
    }

    fn unpacked(value: u64) -> Option<u64> {
        (value != Stamps::NONE).then_some(value)
    }

    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    pub(crate) fn modified(&self) -> Option<u64> {
        Stamps::unpacked(self.modified)
    }

    pub(crate) fn inode(&self) -> Option<u64> {
        Stamps::unpacked(self.inode)
    }

    pub(crate) fn changed(&self) -> Option<u64> {
        Stamps::unpacked(self.changed)
    }
}

/// One file in 32 bytes: its directory, its name in the arena, its size and stamps packed. The
/// stamps of a file that does not fit (4 GiB or more, an inode number of 32 bits or more, a
/// status change more than two seconds from its modification, or stamps missing in odd ways)
/// are kept whole beside the rows ([`Names::aside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    /// Its modification time when found, in nanoseconds since the epoch (`u64::MAX`: none).
    modified: u64,
    /// Its size when found, or [`Row::ASIDE`]: its stamps are kept whole in [`Names::aside`].
    size: u32,
    /// Its inode number when found ([`Row::NO_INODE`]: none).
    inode: u32,
    /// Its status change time less its modification time, in nanoseconds ([`Row::NO_CHANGE`]:
    /// none). Most files were last changed by the write that last modified them.
    changed: i32,
    dir: u32,
    /// Where its name starts in the arena: also the file's identity among the rows of one
    /// arena, which the canonical paths of files reached through a symlink are kept by.
    name_at: u32,
    /// The bytes of its name in the arena, with [`Row::PACKED_NAME`] set when they are packed
    /// ([`pack_name`]).
    name_len: u16,
    /// Which other formats' rules also claim the file, by discovery's number for that list (0
    /// for none; there are at most as many lists as sets of formats).
    others: u16,
}

impl Row {
    const ASIDE: u32 = u32::MAX;
    const NO_INODE: u32 = u32::MAX;
    const NO_CHANGE: i32 = i32::MIN;
    const PACKED_NAME: u16 = 1 << 15;

    /// The row of a file with `stamps`, and whether they do not fit it (then kept aside, and the
    /// row marked [`Row::ASIDE`]).
    fn packed(stamps: Stamps, dir: u32, name_at: u32, name_len: u16) -> (Row, bool) {
        let size = u32::try_from(stamps.size).ok().filter(|&s| s != Row::ASIDE);
        let inode = match stamps.inode() {
            None => Some(Row::NO_INODE),
            Some(inode) => u32::try_from(inode).ok().filter(|&i| i != Row::NO_INODE),
        };
        let changed = match (stamps.modified(), stamps.changed()) {
            (_, None) => Some(Row::NO_CHANGE),
            (Some(modified), Some(changed)) => i32::try_from(i128::from(changed) - i128::from(modified))
                .ok()
                .filter(|&d| d != Row::NO_CHANGE),
            (None, Some(_)) => None,
        };
        let row = |size, inode, changed| Row {
            modified: stamps.modified,
            size,
            inode,
            changed,
            dir,
            name_at,
            name_len,
            others: 0,
        };
        match (size, inode, changed) {
            (Some(size), Some(inode), Some(changed)) => (row(size, inode, changed), false),
            _ => (row(Row::ASIDE, Row::NO_INODE, Row::NO_CHANGE), true),
        }
    }
}

/// A directory: its path, ending in its separator (empty for a file named without one), and
/// its canonical path the same way when that is another.
#[derive(Debug, Default)]
struct Dir {
    path: Box<[u8]>,
    canonical: Option<Box<[u8]>>,
    /// Whether its canonical path was found (a directory of remote objects, or of files
    /// given one by one, is not looked up).
    resolved: bool,
}

/// The names of the files of one discovery: directories, file names, and the canonical paths
/// that are neither their directory's canonical path joined with their name nor their path.
#[derive(Debug, Default)]
struct Names {
    dirs: Vec<Dir>,
    bytes: Vec<u8>,
    canonical: HashMap<u32, Box<[u8]>, PathHasher>,
    /// The stamps of the files whose row cannot hold them, by the row's `name_at`, in order.
    aside: Vec<(u32, Stamps)>,
}

impl Names {
    /// A row's stamps.
    fn stamps(&self, row: &Row) -> Stamps {
        if row.size == Row::ASIDE {
            // Every row of that size was pushed with its stamps aside.
            let at = self.aside.binary_search_by_key(&row.name_at, |(at, _)| *at);
            return at.map_or(Stamps::new(0, None, None, None), |at| self.aside[at].1);
        }
        let changed = match row.changed {
            Row::NO_CHANGE => Stamps::NONE,
            delta => (i128::from(row.modified) + i128::from(delta)) as u64,
        };
        let inode = match row.inode {
            Row::NO_INODE => Stamps::NONE,
            inode => u64::from(inode),
        };
        Stamps { size: u64::from(row.size), modified: row.modified, inode, changed }
    }

    /// A row's name as kept in the arena: packed or not.
    fn kept(&self, row: &Row) -> &[u8] {
        let len = usize::from(row.name_len & !Row::PACKED_NAME);
        &self.bytes[row.name_at as usize..row.name_at as usize + len]
    }

    fn name(&self, row: &Row) -> Name<'_> {
        let kept = self.kept(row);
        if row.name_len & Row::PACKED_NAME == 0 {
            return Name::Kept(kept);
        }
        let mut made = [0u8; PACKED_NAME_MAX];
        let len = unpack_name(kept, &mut made);
        Name::Made(made, len as u8)
    }

    /// The order of two rows' names' bytes. Two names packed with the same bytes before their
    /// UUID are in the order of what follows in their packed bytes (the UUID's 16 bytes are in
    /// the order of its hexadecimal text, then the same bytes after it): no name is made again.
    fn compare_names(&self, a: &Row, b: &Row) -> std::cmp::Ordering {
        if a.name_len & b.name_len & Row::PACKED_NAME != 0 {
            let (x, y) = (self.kept(a), self.kept(b));
            let at = usize::from(x[0]);
            if x[0] == y[0] && x[1..=at] == y[1..=at] {
                return x[1 + at..].cmp(&y[1 + at..]);
            }
        }
        (*self.name(a)).cmp(&*self.name(b))
    }

    /// A file's path or its canonical path, in the two parts it is kept in (the name empty for
    /// a canonical path kept whole).
    fn parts(&self, row: &Row, canonical: bool) -> PathParts<'_> {
        let dir = &self.dirs[row.dir as usize];
        if canonical {
            if let Some(whole) = self.canonical.get(&row.name_at) {
                return PathParts { dir: whole, name: Name::Kept(&[]) };
            }
            if let Some(dir) = &dir.canonical {
                return PathParts { dir, name: self.name(row) };
            }
        }
        PathParts { dir: &dir.path, name: self.name(row) }
    }
}

/// The longest name that is packed ([`pack_name`]): its bytes, made again, fit on the stack.
const PACKED_NAME_MAX: usize = 255;

/// The bytes of a UUID in its canonical text: 8-4-4-4-12 lowercase hexadecimal digits.
const UUID_TEXT: usize = 36;

/// Where the first UUID in its canonical text (lowercase) is in `name`.
fn uuid_in(name: &[u8]) -> Option<usize> {
    let is_uuid = |text: &[u8]| {
        text.iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => matches!(b, b'0'..=b'9' | b'a'..=b'f'),
        })
    };
    (0..=name.len().checked_sub(UUID_TEXT)?).find(|&at| is_uuid(&name[at..at + UUID_TEXT]))
}

/// `name` packed into `out` when it holds a UUID in its canonical text (as most transcripts'
/// names do: a session's id, with a prefix or an extension): the UUID's place, the bytes before
/// it, its 16 bytes, the bytes after it, 23 bytes for a 42-byte `<uuid>.jsonl`. `false` (and
/// nothing written) for any other name, or one longer than [`PACKED_NAME_MAX`].
fn pack_name(name: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(at) = uuid_in(name).filter(|_| name.len() <= PACKED_NAME_MAX) else { return false };
    let digit = |b: u8| if b.is_ascii_digit() { b - b'0' } else { b - b'a' + 10 };
    out.push(at as u8);
    out.extend_from_slice(&name[..at]);
    let hex = name[at..at + UUID_TEXT].iter().copied().filter(|&b| b != b'-');
    let mut pair = hex.map(digit);
    while let (Some(high), Some(low)) = (pair.next(), pair.next()) {
        out.push(high << 4 | low);
    }
    out.extend_from_slice(&name[at + UUID_TEXT..]);
    true
}

/// The name [`pack_name`] packed as `packed`, into `out`: its length.
fn unpack_name(packed: &[u8], out: &mut [u8; PACKED_NAME_MAX]) -> usize {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let at = usize::from(packed[0]);
    let (before, rest) = packed[1..].split_at(at);
    let (uuid, after) = rest.split_at(16);
    out[..at].copy_from_slice(before);
    let mut i = at;
    for (n, byte) in uuid.iter().enumerate() {
        if matches!(n, 4 | 6 | 8 | 10) {
            out[i] = b'-';
            i += 1;
        }
        out[i] = DIGITS[usize::from(byte >> 4)];
        out[i + 1] = DIGITS[usize::from(byte & 15)];
        i += 2;
    }
    out[i..i + after.len()].copy_from_slice(after);
    i + after.len()
}

/// A file's name: borrowed from the arena, or made again from its packed bytes.
#[derive(Clone, Copy)]
#[expect(
    clippy::large_enum_variant,
    reason = "made on the stack at each use and never stored; boxed, a million uses would allocate a million times"
)]
enum Name<'a> {
    Kept(&'a [u8]),
    Made([u8; PACKED_NAME_MAX], u8),
}

impl std::ops::Deref for Name<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Name::Kept(bytes) => bytes,
            Name::Made(bytes, len) => &bytes[..usize::from(*len)],
        }
    }
}

/// A file's path in the two parts it is kept in: its directory with the separator (or a whole
/// path), and its name.
#[derive(Clone, Copy)]
pub(crate) struct PathParts<'a> {
    dir: &'a [u8],
    name: Name<'a>,
}

impl<'a> PathParts<'a> {
    /// The directory, with its separator.
    pub(crate) fn dir(&self) -> &'a [u8] {
        self.dir
    }

    /// The two parts.
    pub(crate) fn get(&self) -> [&[u8]; 2] {
        [self.dir, &self.name]
    }
}

/// How the canonical path of a file pushed is known.
pub(crate) enum Canonical<'a> {
    /// Its directory's canonical path joined with its name (a file that is no symlink).
    OfDirectory,
    /// This path.
    Is(&'a Path),
}

/// Files found: rows over a shared arena of names.
#[derive(Debug, Clone, Default)]
pub struct SourceFiles {
    names: Arc<Names>,
    rows: Vec<Row>,
}

/// Makes the lists of files of one discovery, all over one arena.
#[derive(Debug, Default)]
pub(crate) struct SourceFilesBuilder {
    names: Names,
    dir_of: HashMap<Box<[u8]>, u32, PathHasher>,
    last_dir: Option<u32>,
}

/// A row pushed to a builder, to be put in one of the lists it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pushed(Row);

impl Pushed {
    /// The same row, with the number of the other formats that claim its file.
    pub(crate) fn claimed_also_by(self, others: u32) -> Pushed {
        let others = u16::try_from(others).unwrap_or(u16::MAX);
        Pushed(Row { others, ..self.0 })
    }
}

/// Splits a path after its last separator: the directory with it, then the name.
fn split(path: &Path) -> (&[u8], &[u8]) {
    let bytes = path.as_os_str().as_encoded_bytes();
    match bytes.iter().rposition(|&b| b == b'/' || (cfg!(windows) && b == b'\\')) {
        Some(at) => bytes.split_at(at + 1),
        None => (&[], bytes),
    }
}

fn path_of(parts: [&[u8]; 2]) -> PathBuf {
    let mut bytes = Vec::with_capacity(parts[0].len() + parts[1].len());
    bytes.extend_from_slice(parts[0]);
    bytes.extend_from_slice(parts[1]);
    // SAFETY: both parts are pieces of OS strings split at an ASCII separator (or whole), so
    // their concatenation is what `as_encoded_bytes` gave.
    PathBuf::from(unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(bytes) })
}

impl SourceFilesBuilder {
    /// The directory of `dir` (a path ending in its separator), added when new; its canonical
    /// path found when `canonical` is asked for and it is new.
    fn dir(&mut self, dir: &[u8], resolve: bool) -> u32 {
        if let Some(last) = self.last_dir
            && *self.names.dirs[last as usize].path == *dir
        {
            return last;
        }
        let index = match self.dir_of.get(dir) {
            Some(&index) => index,
            None => {
                let index = self.names.dirs.len() as u32;
                self.names.dirs.push(Dir { path: dir.into(), ..Dir::default() });
                self.dir_of.insert(dir.into(), index);
                index
            }
        };
        let entry = &mut self.names.dirs[index as usize];
        if resolve
            && !entry.resolved
            && let Ok(canonical) = canonical_dir(dir)
        {
            entry.canonical = canonical;
            entry.resolved = true;
        }
        self.last_dir = Some(index);
        index
    }

    /// Adds a file found at `path`; `None` when the arena of names is full (four gigabytes of
    /// names), or a name is longer than a row keeps.
    pub(crate) fn push(
        &mut self,
        path: &Path,
        canonical: Canonical<'_>,
        size: u64,
        modified: Option<u64>,
        inode: Option<u64>,
        changed: Option<u64>,
    ) -> Option<Pushed> {
        let (dir_bytes, name) = split(path);
        let name_at = u32::try_from(self.names.bytes.len()).ok()?;
        let name_len = u16::try_from(name.len()).ok().filter(|&len| len & Row::PACKED_NAME == 0)?;
        name_at.checked_add(u32::from(name_len))?;
        let dir = self.dir(dir_bytes, matches!(canonical, Canonical::OfDirectory));
        let name_len = if pack_name(name, &mut self.names.bytes) {
            (self.names.bytes.len() - name_at as usize) as u16 | Row::PACKED_NAME
        } else {
            self.names.bytes.extend_from_slice(name);
            name_len
        };
        let stamps = Stamps::new(size, modified, inode, changed);
        let (row, aside) = Row::packed(stamps, dir, name_at, name_len);
        if aside {
            self.names.aside.push((name_at, stamps));
        }
        match canonical {
            Canonical::OfDirectory => {
                // A directory whose canonical path could not be found: the file's own is.
                if !self.names.dirs[dir as usize].resolved
                    && let Ok(whole) = std::fs::canonicalize(path)
                {
                    self.set_canonical(&row, &whole);
                }
            }
            Canonical::Is(whole) => self.set_canonical(&row, whole),
        }
        Some(Pushed(row))
    }

    fn set_canonical(&mut self, row: &Row, whole: &Path) {
        let whole = whole.as_os_str().as_encoded_bytes();
        let parts = self.names.parts(row, true);
        let [a, b] = parts.get();
        if a.len() + b.len() != whole.len() || !whole.starts_with(a) || !whole.ends_with(b) {
            self.names.canonical.insert(row.name_at, whole.into());
        }
    }

    /// The lists, each of the rows given, all over the names pushed.
    pub(crate) fn finish(self, lists: Vec<Vec<Pushed>>) -> Vec<SourceFiles> {
        let names = Arc::new(self.names);
        lists
            .into_iter()
            .map(|rows| SourceFiles { names: names.clone(), rows: rows.into_iter().map(|p| p.0).collect() })
            .collect()
    }

    /// The path of a row pushed, in its two parts.
    pub(crate) fn path_parts(&self, row: &Pushed) -> PathParts<'_> {
        self.names.parts(&row.0, false)
    }

    /// The hash of the canonical path of a row pushed ([`path_key`]).
    pub(crate) fn key(&self, row: &Pushed) -> u64 {
        parts_key(self.names.parts(&row.0, true).get())
    }
}

/// The canonical path of a directory (ending in its separator), when it is not the path itself.
fn canonical_dir(dir: &[u8]) -> std::io::Result<Option<Box<[u8]>>> {
    let dir_or_here: &[u8] = if dir.is_empty() { b"." } else { dir };
    // SAFETY: `dir` is a prefix of an OS string's encoded bytes ending at an ASCII separator.
    let path = unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(dir_or_here) };
    let canonical = std::fs::canonicalize(path)?;
    let mut bytes = canonical.into_os_string().into_encoded_bytes();
    if !bytes.ends_with(b"/") {
        bytes.push(b'/');
    }
    Ok((bytes != dir).then(|| bytes.into()))
}

/// [`path_key`] of a path kept in two parts, with no copy of it made.
pub(crate) fn parts_key(parts: [&[u8]; 2]) -> u64 {
    let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
    hash.update(parts[0]);
    hash.update(parts[1]);
    hash.digest()
}

impl SourceFiles {
    /// A list of `files`, over an arena of their own.
    pub fn of(files: impl IntoIterator<Item = SourceFile>) -> SourceFiles {
        let mut builder = SourceFilesBuilder::default();
        let rows: Vec<Pushed> = files
            .into_iter()
            .filter_map(|f| {
                let canonical = f.canonical().to_path_buf();
                builder.push(&f.path, Canonical::Is(&canonical), f.size, f.modified, f.inode, f.changed)
            })
            .collect();
        builder.finish(vec![rows]).pop().unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// File `i`, made whole.
    pub fn get(&self, i: usize) -> SourceFile {
        let row = &self.rows[i];
        let stamps = self.names.stamps(row);
        let path = path_of(self.names.parts(row, false).get());
        let other = self.names.canonical.contains_key(&row.name_at)
            || self.names.dirs[row.dir as usize].canonical.is_some();
        let canonical = other.then(|| path_of(self.names.parts(row, true).get()));
        SourceFile::found(path, canonical, stamps.size(), stamps.modified(), stamps.inode(), stamps.changed())
    }

    /// Every file, made whole one at a time.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = SourceFile> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The path of file `i`.
    pub fn path(&self, i: usize) -> PathBuf {
        path_of(self.names.parts(&self.rows[i], false).get())
    }

    /// The path of file `i` in its two parts (its directory with the separator, its name).
    pub(crate) fn path_parts(&self, i: usize) -> PathParts<'_> {
        self.names.parts(&self.rows[i], false)
    }

    /// The canonical path of file `i` in two parts (the second empty when it is kept whole).
    pub(crate) fn canonical_parts(&self, i: usize) -> PathParts<'_> {
        self.names.parts(&self.rows[i], true)
    }

    /// File `i`'s size, modification time, inode and change time, as found.
    pub(crate) fn stamps(&self, i: usize) -> [Option<u64>; 4] {
        let stamps = self.names.stamps(&self.rows[i]);
        [Some(stamps.size()), stamps.modified(), stamps.inode(), stamps.changed()]
    }

    /// File `i`'s stamps as found, packed.
    pub(crate) fn found_stamps(&self, i: usize) -> Stamps {
        self.names.stamps(&self.rows[i])
    }

    /// The number discovery gave the other formats whose rules claim file `i` too (0: none).
    pub(crate) fn claimed_also_by(&self, i: usize) -> u32 {
        u32::from(self.rows[i].others)
    }

    /// Forgets which other formats claim the files (their content has decided).
    pub(crate) fn forget_claims(&mut self) {
        for row in &mut self.rows {
            row.others = 0;
        }
    }

    /// The size of file `i` when found.
    pub fn size(&self, i: usize) -> u64 {
        match self.rows[i].size {
            Row::ASIDE => self.names.stamps(&self.rows[i]).size(),
            size => u64::from(size),
        }
    }

    /// The hash of the canonical path of file `i` ([`path_key`]).
    pub(crate) fn key(&self, i: usize) -> u64 {
        parts_key(self.names.parts(&self.rows[i], true).get())
    }

    /// The files `kept` (indexes, in the order given), over the same arena.
    pub(crate) fn select(&self, kept: impl IntoIterator<Item = usize>) -> SourceFiles {
        SourceFiles { names: self.names.clone(), rows: kept.into_iter().map(|i| self.rows[i]).collect() }
    }

    /// Keeps the files `keep` keeps (by index), in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let mut i = 0;
        self.rows.retain(|_| {
            let kept = keep(i);
            i += 1;
            kept
        });
    }

    /// Moves file `i` of `from` to the end of this list: both lists are over one arena.
    pub(crate) fn push_from(&mut self, from: &SourceFiles, i: usize) {
        debug_assert!(Arc::ptr_eq(&self.names, &from.names) || self.rows.is_empty());
        if self.rows.is_empty() {
            self.names = from.names.clone();
        }
        self.rows.push(from.rows[i]);
    }

    /// Empties the list, keeping its arena.
    pub(crate) fn take_rows(&mut self) -> SourceFiles {
        SourceFiles { names: self.names.clone(), rows: std::mem::take(&mut self.rows) }
    }
}

impl SourceFilesBuilder {
    /// Sorts `rows` by `order` of their paths less their first `below` bytes. `order` must
    /// order two paths of one directory as the bytes of their names (as a walk does): those
    /// are compared by name alone, without making a packed name again where the packed bytes
    /// tell ([`Names::compare_names`]).
    pub(crate) fn sort(
        &self,
        rows: &mut [Pushed],
        below: usize,
        order: impl Fn(&[&[u8]; 2], &[&[u8]; 2]) -> std::cmp::Ordering,
    ) {
        fn cut(parts: [&[u8]; 2], below: usize) -> [&[u8]; 2] {
            let [a, b] = parts;
            if below <= a.len() { [&a[below..], b] } else { [&[], b.get(below - a.len()..).unwrap_or(b)] }
        }
        let names = &self.names;
        rows.sort_unstable_by(|x, y| {
            if x.0.dir == y.0.dir && below <= names.dirs[x.0.dir as usize].path.len() {
                return names.compare_names(&x.0, &y.0);
            }
            let (x, y) = (self.path_parts(x), self.path_parts(y));
            order(&cut(x.get(), below), &cut(y.get(), below))
        });
    }
}

/// The modification time, in nanoseconds since the epoch.
pub(crate) fn modified_ns(meta: &std::fs::Metadata) -> Option<u64> {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
}

/// The inode number and the status change time (ns since the epoch) of a file.
#[cfg(unix)]
pub(crate) fn inode_and_changed(meta: &std::fs::Metadata) -> (Option<u64>, Option<u64>) {
    use std::os::unix::fs::MetadataExt;
    let changed = u64::try_from(meta.ctime())
        .ok()
        .and_then(|s| s.checked_mul(1_000_000_000)?.checked_add(u64::try_from(meta.ctime_nsec()).ok()?));
    (Some(meta.ino()), changed)
}

#[cfg(not(unix))]
pub(crate) fn inode_and_changed(_: &std::fs::Metadata) -> (Option<u64>, Option<u64>) {
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_comes_back_as_it_went_in() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "").unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let files = vec![
            SourceFile::new("x/a.jsonl".into(), "/elsewhere/b.jsonl".into(), 3, Some(1), Some(2), None),
            SourceFile::new(
                "s3://bucket//key.jsonl".into(),
                "s3://bucket//key.jsonl".into(),
                9,
                None,
                None,
                None,
            ),
            SourceFile::new("bare.jsonl".into(), "bare.jsonl".into(), 0, Some(u64::MAX - 1), None, Some(7)),
            SourceFile::new(real.join("a.jsonl"), real.join("a.jsonl"), 1, Some(5), None, None),
        ];
        // Stamps that a row packs, and each way of not fitting one (kept aside).
        let t = 1_764_000_000_123_456_789u64;
        let stamped = |name: &str, size, modified, inode, changed| {
            SourceFile::new(name.into(), name.into(), size, modified, inode, changed)
        };
        let files = [
            files,
            vec![
                stamped("packed.jsonl", 4096, Some(t), Some(42), Some(t + 1_500)),
                stamped("before.jsonl", 1, Some(t), Some(1), Some(t - 2_000_000_000)),
                stamped("large.jsonl", 5 << 30, Some(t), Some(1), Some(t)),
                stamped("inode.jsonl", 1, Some(t), Some(1 << 40), Some(t)),
                stamped("later.jsonl", 1, Some(t), Some(1), Some(t + 3_000_000_000)),
                stamped("earlier.jsonl", 1, Some(t), Some(1), Some(t - 3_000_000_000)),
                stamped("edge.jsonl", u64::from(u32::MAX), Some(t), Some(u64::from(u32::MAX)), None),
                stamped("none.jsonl", 7, None, None, None),
            ],
        ]
        .concat();
        let list = SourceFiles::of(files.clone());
        assert_eq!(list.len(), files.len());
        assert_eq!(list.names.aside.len(), 6, "the files whose stamps do not fit a row");
        for (i, file) in files.iter().enumerate() {
            let back = list.get(i);
            assert_eq!((&back.path, back.canonical(), back.size), (&file.path, file.canonical(), file.size));
            assert_eq!((back.modified, back.inode, back.changed), (file.modified, file.inode, file.changed));
            assert_eq!(list.key(i), super::path_key(file.canonical()));
            assert_eq!(list.path(i), file.path);
            assert_eq!(path_of(list.canonical_parts(i).get()), file.canonical());
            assert_eq!(list.stamps(i), [Some(file.size), file.modified, file.inode, file.changed]);
        }
    }

    #[test]
    fn a_file_in_a_directory_reached_by_a_symlink_is_known_by_its_canonical_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/a.jsonl"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        let mut builder = SourceFilesBuilder::default();
        let pushed = builder
            .push(&dir.path().join("link/a.jsonl"), Canonical::OfDirectory, 0, None, None, None)
            .unwrap();
        let list = builder.finish(vec![vec![pushed]]).pop().unwrap();
        let real = std::fs::canonicalize(dir.path().join("real/a.jsonl")).unwrap();
        assert_eq!(list.get(0).canonical(), real);
        assert_eq!(list.get(0).path, dir.path().join("link/a.jsonl"));
        assert_eq!(list.key(0), super::path_key(&real));
    }

    /// Rows of `paths` (all below `/d/`), sorted by a builder as their paths' bytes, are in the
    /// order of those bytes.
    #[cfg(unix)]
    fn assert_sorted_as_paths(paths: &[PathBuf]) {
        use std::os::unix::ffi::OsStrExt;
        let mut builder = SourceFilesBuilder::default();
        let mut rows: Vec<Pushed> =
            paths.iter().map(|p| builder.push(p, Canonical::Is(p), 1, None, None, None).unwrap()).collect();
        builder.sort(&mut rows, 3, |a, b| a.concat().cmp(&b.concat()));
        let sorted: Vec<Vec<u8>> = rows.iter().map(|r| builder.path_parts(r).get().concat()).collect();
        let mut expected: Vec<Vec<u8>> = paths.iter().map(|p| p.as_os_str().as_bytes().to_vec()).collect();
        expected.sort();
        assert!(sorted == expected, "sorted as their paths");
    }

    /// A name holding a UUID in its canonical text is kept in fewer bytes and made again the
    /// same; every other name is kept as it is; the path, key and order of each file are those
    /// of its name as found.
    #[test]
    #[cfg(unix)]
    fn names_with_a_uuid_are_packed_and_come_back_the_same() {
        let uuid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
        let long_before = "x".repeat(PACKED_NAME_MAX - UUID_TEXT);
        let packed: Vec<Vec<u8>> = [
            format!("{uuid}.jsonl"),
            uuid.to_string(),
            format!("rollout-2026-11-30T09-00-00-{uuid}.jsonl"),
            format!("{uuid}-{uuid}.jsonl"),
            format!("{long_before}{uuid}"),
            format!("9{uuid}"),
        ]
        .into_iter()
        .map(String::into_bytes)
        .chain([[b"\xff\xfe-".as_slice(), uuid.as_bytes(), b"\x80"].concat()])
        .collect();
        let kept: Vec<Vec<u8>> = [
            uuid.to_uppercase(),
            uuid.replace('f', "g"),
            uuid.replacen('-', "_", 1),
            uuid[1..].to_string(),
            format!("{long_before}x{uuid}"),
            "session.jsonl".to_string(),
            String::new(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        for name in &packed {
            let mut out = Vec::new();
            assert!(pack_name(name, &mut out), "{:?} is packed", String::from_utf8_lossy(name));
            assert_eq!(out.len(), name.len() + 1 - 20, "{:?}", String::from_utf8_lossy(name));
            let mut made = [0u8; PACKED_NAME_MAX];
            let len = unpack_name(&out, &mut made);
            assert_eq!(&made[..len], name.as_slice());
        }
        for name in &kept {
            let mut out = Vec::new();
            assert!(!pack_name(name, &mut out) && out.is_empty(), "{:?}", String::from_utf8_lossy(name));
        }
        // Through a list: paths, keys and the sort of paths as found.
        use std::os::unix::ffi::OsStrExt;
        let paths: Vec<PathBuf> = packed
            .iter()
            .chain(&kept)
            .filter(|name| !name.is_empty())
            .map(|name| Path::new("/d").join(std::ffi::OsStr::from_bytes(name)))
            .collect();
        let files: Vec<SourceFile> = paths
            .iter()
            .map(|p| SourceFile::new(p.clone(), p.clone(), 1, Some(2), Some(3), Some(2)))
            .collect();
        let list = SourceFiles::of(files);
        assert_eq!(list.len(), paths.len());
        let unpacked: usize = paths.iter().map(|p| p.file_name().unwrap().len()).sum();
        assert_eq!(list.names.bytes.len(), unpacked - 19 * packed.len(), "each packed name is 19 bytes less");
        for (i, path) in paths.iter().enumerate() {
            assert_eq!(&list.path(i), path);
            assert_eq!(list.get(i).canonical(), path.as_path());
            assert_eq!(list.key(i), path_key(path));
        }
        assert_sorted_as_paths(&paths);
    }

    /// Rows sort as their paths' bytes, packed names compared by their packed bytes where
    /// those tell: random UUIDs alone, with a prefix, with suffixes that differ, and names kept
    /// as found, in two directories.
    #[test]
    #[cfg(unix)]
    fn rows_of_packed_names_sort_as_their_paths() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut hex = |n: usize| {
            (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    b"0123456789abcdef"[(state % 16) as usize] as char
                })
                .collect::<String>()
        };
        let mut paths = Vec::new();
        for n in 0..400 {
            let uuid = format!("{}-{}-{}-{}-{}", hex(8), hex(4), hex(4), hex(4), hex(12));
            let same_start = format!("{}-{}-{}-{}-{}", "00000000", "0000", hex(1).repeat(4), hex(4), hex(12));
            let name = match n % 5 {
                0 => format!("{uuid}.jsonl"),
                1 => format!("run_{uuid}.jsonl"),
                2 => format!("{same_start}.json{}", hex(1)),
                3 => uuid.clone(),
                _ => format!("plain-{}.jsonl", hex(6)),
            };
            let dir = if n % 7 == 0 { "/d/a/" } else { "/d/" };
            paths.push(PathBuf::from(format!("{dir}{name}")));
        }
        assert_sorted_as_paths(&paths);
    }

    #[test]
    fn a_row_is_thirty_two_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 32);
    }
}
