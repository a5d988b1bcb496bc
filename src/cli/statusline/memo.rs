//! `txq statusline`'s memo, in the cache folder, one per set of places and time zone: what the
//! last line was worked out from, so that the next reads only what changed since. It holds the
//! start of the block each harness was in, every folder under the places with its time (a folder
//! whose time is the same holds the same names: a file made, removed or renamed in it changes
//! it), every transcript in them with its size and time, and the files the line needed (changed
//! at or after the horizon, or the session's own) with their calls; in protobuf, each field of
//! the folders one column of them all ([`Written`]).
//!
//! A walk looks at the time of every folder awake (a place, the session's, one changed or
//! holding a transcript changed at or after the horizon, and each folder on the way to one) and
//! lists only the folders that changed; it looks at the transcripts changed at or after the
//! horizon and those in the session's folders. Everything else (folders asleep and the
//! transcripts in them) is looked at in turn, a slice of it each line: a file written again or
//! made after a long rest is seen within [`SWEEP_RUNS`] lines. No folder is listed that did not
//! change: its names may have to come from the disk (a folder's blocks leave the page cache
//! sooner than its inode's time).

use super::Call;
use bytes::Bytes;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The memo's layout; a memo of another is not read (the next line walks everything).
const VERSION: u32 = 4;

/// Every folder and transcript is looked at again at least once in this many lines (a look is a
/// system call of 2-3 µs: on the benchmark's home of 1 GB, the times of its 8,283 folders took
/// 9-13 ms on two threads, and a C loop over its 23,037 transcripts 50-70 ms).
pub(super) const SWEEP_RUNS: usize = 32;

/// The fewest folders and transcripts looked at again by one line.
const SWEEP_LEAST: usize = 64;

/// The memo of one set of places and time zone.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Memo {
    version: u32,
    /// The start of the block each harness was in when last seen (seconds).
    pub(super) starts: BTreeMap<String, i64>,
    /// Where the next slice of folders and transcripts looked at in turn begins.
    sweep: u64,
    /// Every folder under the places, each after the folder it is in, with its transcripts.
    folders: Vec<Folder>,
    /// The transcripts the line needed, with their calls.
    kept: Vec<Kept>,
}

/// A folder and its time (nanoseconds since 1970), and its transcripts as last looked at: each
/// a slice of the memo as read, or made by the walk.
#[derive(Clone, Debug, Default, PartialEq)]
struct Folder {
    /// The number of the folder it is in, plus one; 0 for a place, whose name is its path.
    parent: u32,
    name: Bytes,
    modified: u64,
    /// Its transcripts' names, each ended by `/` (which no name holds).
    file_names: Bytes,
    /// Their sizes and times, 8 bytes each, little-endian (kept as read: a folder that did not
    /// change is written back as it was).
    file_sizes: Bytes,
    file_times: Bytes,
}

/// The memo as written, in protobuf: each of the folders' fields one column of them all (a
/// memo of 8,000 folders is a dozen fields to decode and its folders slices of them, not 8,000
/// messages: reading them one by one took 2.4 ms of every line, encoding them 1.5 ms).
#[derive(Clone, PartialEq, Message)]
struct Written {
    #[prost(uint32, tag = "1")]
    version: u32,
    #[prost(btree_map = "string, int64", tag = "2")]
    starts: BTreeMap<String, i64>,
    #[prost(uint64, tag = "3")]
    sweep: u64,
    #[prost(message, repeated, tag = "5")]
    kept: Vec<Kept>,
    /// Each folder's [`Folder::parent`].
    #[prost(fixed32, repeated, tag = "6")]
    parents: Vec<u32>,
    /// Each folder's name: its length, and the names one after another.
    #[prost(fixed32, repeated, tag = "7")]
    name_lengths: Vec<u32>,
    #[prost(bytes = "bytes", tag = "8")]
    names: Bytes,
    #[prost(fixed64, repeated, tag = "9")]
    modified: Vec<u64>,
    /// Each folder's transcripts: how many, the length of their names (each ended by `/`), and
    /// the names, sizes and times of all one folder after another.
    #[prost(fixed32, repeated, tag = "10")]
    file_counts: Vec<u32>,
    #[prost(fixed32, repeated, tag = "11")]
    file_name_lengths: Vec<u32>,
    #[prost(bytes = "bytes", tag = "12")]
    file_names: Bytes,
    #[prost(bytes = "bytes", tag = "13")]
    file_sizes: Bytes,
    #[prost(bytes = "bytes", tag = "14")]
    file_times: Bytes,
}

/// A field of a folder that a field of [`Written`] joins.
type Blob = fn(&Folder) -> &Bytes;

/// The fields of [`Written`] that join a field of every folder, with their tags: written from
/// the folders as they are (copying the memo's 1.8 MB twice more, into the fields and into the
/// message, touched 900 pages of new memory a line; a line's page faults went from 4,750 to
/// about 3,600 without them).
const BLOBS: [(u32, Blob); 4] =
    [(8, |f| &f.name), (12, |f| &f.file_names), (13, |f| &f.file_sizes), (14, |f| &f.file_times)];

impl Written {
    /// The memo's fields but the [`BLOBS`], which [`write`] writes from the folders as they are.
    fn of(memo: &Memo) -> Written {
        let folders = &memo.folders;
        let length = |bytes: &Bytes| u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        Written {
            version: memo.version,
            starts: memo.starts.clone(),
            sweep: memo.sweep,
            kept: memo.kept.clone(),
            parents: folders.iter().map(|f| f.parent).collect(),
            name_lengths: folders.iter().map(|f| length(&f.name)).collect(),
            modified: folders.iter().map(|f| f.modified).collect(),
            file_counts: folders.iter().map(|f| f.file_count() as u32).collect(),
            file_name_lengths: folders.iter().map(|f| length(&f.file_names)).collect(),
            ..Written::default()
        }
    }

    /// The memo written, if its columns agree: as many of each as folders, lengths that add up
    /// to their fields', a name ended by `/` for each transcript, and every folder after the
    /// folder it is in (else it is not the memo's writing: damaged, and not used).
    fn memo(self) -> Option<Memo> {
        let n = self.parents.len();
        let same =
            [&self.name_lengths, &self.file_counts, &self.file_name_lengths].iter().all(|c| c.len() == n)
                && self.modified.len() == n;
        let sum = |column: &[u32]| column.iter().map(|&l| l as usize).sum::<usize>();
        let files = sum(&self.file_counts);
        let sound = same
            && sum(&self.name_lengths) == self.names.len()
            && sum(&self.file_name_lengths) == self.file_names.len()
            && self.file_sizes.len() == 8 * files
            && self.file_times.len() == 8 * files
            && memchr::memchr_iter(b'/', &self.file_names).count() == files
            && self.parents.iter().enumerate().all(|(i, &p)| p as usize <= i);
        if !sound {
            return None;
        }
        let mut folders = Vec::with_capacity(n);
        let (mut name, mut file_name, mut file) = (0, 0, 0);
        for i in 0..n {
            let (name_end, file_name_end) =
                (name + self.name_lengths[i] as usize, file_name + self.file_name_lengths[i] as usize);
            let file_end = file + 8 * self.file_counts[i] as usize;
            folders.push(Folder {
                parent: self.parents[i],
                name: self.names.slice(name..name_end),
                modified: self.modified[i],
                file_names: self.file_names.slice(file_name..file_name_end),
                file_sizes: self.file_sizes.slice(file..file_end),
                file_times: self.file_times.slice(file..file_end),
            });
            (name, file_name, file) = (name_end, file_name_end, file_end);
        }
        Some(Memo { version: self.version, starts: self.starts, sweep: self.sweep, folders, kept: self.kept })
    }
}

/// The numbers of a field of 8 bytes each.
fn numbers(field: &[u8]) -> impl Iterator<Item = u64> + '_ {
    field.chunks_exact(8).map(|n| u64::from_le_bytes(n.try_into().unwrap_or_default()))
}

impl Folder {
    /// Its transcripts: name, size and time.
    fn files(&self) -> impl Iterator<Item = (&[u8], u64, u64)> + '_ {
        // Each name ends with `/`: the piece after the last is not one.
        let names = self.file_names.split(|&b| b == b'/').take(self.file_count());
        names
            .zip(numbers(&self.file_sizes))
            .zip(numbers(&self.file_times))
            .map(|((name, size), time)| (name, size, time))
    }

    /// How many transcripts it holds.
    fn file_count(&self) -> usize {
        self.file_times.len() / 8
    }
}

/// A file the line needed, as it was when read, and its calls.
#[derive(Clone, PartialEq, Message)]
struct Kept {
    #[prost(string, tag = "1")]
    path: String,
    #[prost(uint64, tag = "2")]
    size: u64,
    #[prost(uint64, tag = "3")]
    modified: u64,
    #[prost(message, repeated, tag = "4")]
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
/// every folder with its transcripts, as the next memo holds them; and whether every name could
/// be kept (a name that is not UTF-8 is read, but a memo does not hold it).
#[derive(Debug, Default)]
pub(super) struct Walked {
    pub(super) files: Vec<Found>,
    folders: Vec<Folder>,
    whole: bool,
    sweep: u64,
}

fn nanos(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

/// The text of a name the memo kept (UTF-8 when written; a damaged one reads as nothing).
fn text_of(name: &[u8]) -> &str {
    std::str::from_utf8(name).unwrap_or_default()
}

/// Which of a memo's two copies is the memo, and what it holds: the file at the memo's path.
/// A memo is written over the copy not in use (its pages used again, not freed: replacing a file
/// of 1.8 MB by a new one cost 2 ms in freeing the old one's), then this pointer moved over the
/// last; a copy whose length or hash is not the pointer's (written over by another line since, or
/// cut short) is not read.
#[derive(Clone, PartialEq, Message)]
struct Pointer {
    #[prost(uint32, tag = "1")]
    copy: u32,
    #[prost(uint64, tag = "2")]
    length: u64,
    #[prost(uint64, tag = "3")]
    hash: u64,
}

/// The path of copy `copy` (0 or 1) of the memo at `path`.
fn copy_path(path: &Path, copy: u32) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{copy}"));
    path.with_file_name(name)
}

/// How a copy of a memo is opened to be written over: made if not there, readable by its owner
/// alone (as the pointer, a temporary file, is), not cut to nothing first (see [`Pointer`]).
fn private_file() -> std::fs::OpenOptions {
    let mut options = std::fs::File::options();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// The pointer of the memo at `path`, where there is a sound one.
fn pointer(path: &Path) -> Option<Pointer> {
    let bytes = std::fs::read(path).ok()?;
    Pointer::decode(bytes.as_slice()).ok().filter(|p| p.copy < 2)
}

impl Memo {
    /// The memo at `path`: an empty one where there is none, it cannot be read, or it is of
    /// another layout (a damaged memo costs a slower line, never a wrong one).
    pub(super) fn read(path: Option<&Path>) -> Memo {
        let read = |path: &Path| -> Option<Memo> {
            let pointer = pointer(path)?;
            let bytes = std::fs::read(copy_path(path, pointer.copy)).ok()?;
            let whole =
                bytes.len() as u64 == pointer.length && xxhash_rust::xxh3::xxh3_64(&bytes) == pointer.hash;
            let written = whole.then(|| Written::decode(Bytes::from(bytes)).ok()).flatten()?;
            (written.version == VERSION).then(|| written.memo()).flatten()
        };
        path.and_then(read).unwrap_or_default()
    }

    /// The start of the block `harness` was in when last seen, unless it is after `now`.
    pub(super) fn start_of(&self, harness: &str, now: i64) -> Option<i64> {
        self.starts.get(harness).copied().filter(|&start| start <= now)
    }

    fn kept(&self, path: &Path) -> Option<&Kept> {
        let path = path.to_str()?;
        self.kept.iter().find(|k| k.path == path)
    }

    /// The calls of `file` as kept, if it is as it was when read.
    pub(super) fn calls_of(&self, file: &Found) -> Option<&[Call]> {
        let kept = self.kept(&file.path)?;
        (kept.size == file.size && kept.modified == file.modified).then_some(kept.calls.as_slice())
    }

    /// The sessions (a call's parent, else its own) whose calls `file` held when read.
    pub(super) fn sessions_of(&self, path: &Path) -> BTreeSet<String> {
        let Some(kept) = self.kept(path) else { return BTreeSet::new() };
        kept.calls.iter().filter_map(Call::group).collect()
    }

    /// The memo of what `walked` found and `calls` (by file) hold; `None` where a name could not
    /// be kept.
    pub(super) fn next(
        walked: Walked,
        calls: &HashMap<PathBuf, Vec<Call>>,
        starts: BTreeMap<String, i64>,
    ) -> Option<Memo> {
        if !walked.whole {
            return None;
        }
        let mut kept = Vec::new();
        for found in &walked.files {
            let path = found.path.to_str()?.to_string();
            let calls = calls.get(&found.path).cloned().unwrap_or_default();
            kept.push(Kept { path, size: found.size, modified: found.modified, calls });
        }
        Some(Memo { version: VERSION, starts, sweep: walked.sweep, folders: walked.folders, kept })
    }

    /// Writes the memo to `path`: over the copy not in use, then the pointer to it moved over
    /// the pointer (a reader sees one memo or the other, or a copy it does not read). A memo not
    /// written costs the next line a longer read, not a wrong figure, so a failure is not
    /// reported.
    pub(super) fn write(&self, path: &Path) {
        write(path, &Written::of(self), &self.folders);
    }
}

/// Writes `head` and then the [`BLOBS`] of `folders` to `path` as [`Memo::write`] says, through
/// a buffer of 64 KiB, hashed as written.
fn write(path: &Path, head: &Written, folders: &[Folder]) {
    let Some(dir) = path.parent() else { return };
    let copy = pointer(path).map_or(0, |p| 1 - p.copy);
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        let mut out = Hashed {
            file: std::io::BufWriter::with_capacity(64 << 10, private_file().open(copy_path(path, copy))?),
            hash: xxhash_rust::xxh3::Xxh3Default::new(),
            length: 0,
        };
        out.write_all(&head.encode_to_vec())?;
        for (tag, field) in BLOBS {
            let length: usize = folders.iter().map(|f| field(f).len()).sum();
            if length == 0 {
                continue;
            }
            let mut key = Vec::with_capacity(20);
            prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut key);
            prost::encoding::encode_varint(length as u64, &mut key);
            out.write_all(&key)?;
            for folder in folders {
                out.write_all(field(folder))?;
            }
        }
        let (length, hash) = (out.length, out.hash.digest());
        let file = out.file.into_inner().map_err(|e| e.into_error())?;
        file.set_len(length)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&Pointer { copy, length, hash }.encode_to_vec())?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    });
    drop(written);
}

/// A memo's copy being written: its bytes hashed and counted.
struct Hashed<W> {
    file: W,
    hash: xxhash_rust::xxh3::Xxh3Default,
    length: u64,
}

impl<W: Write> Hashed<W> {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.length += bytes.len() as u64;
        self.file.write_all(bytes)
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
    /// Whether a file of `modified` is wanted, in a folder named as the session or not.
    fn wants(&self, modified: u64, in_session: bool) -> bool {
        modified >= self.horizon || in_session
    }

    /// Whether a folder named `name` is, or is in, a folder named as the session: in the folder
    /// numbered `parent` (whether that one is), else a place, whose name is its path.
    fn in_session(&self, parent: Option<bool>, name: &[u8]) -> bool {
        let Some(id) = self.session else { return false };
        match parent {
            Some(parent) => parent || id.as_bytes() == name,
            None => Path::new(text_of(name)).components().any(|c| c.as_os_str() == id),
        }
    }
}

/// The walk under way: the next memo's folders and transcripts, and the transcripts wanted.
struct Walk<'a> {
    keep: Keep<'a>,
    /// Each folder of the next memo's path, made when first needed ([`folder_path`]).
    paths: Vec<Option<PathBuf>>,
    /// Whether each folder of the next memo is, or is in, the session's.
    in_session: Vec<bool>,
    /// The transcripts of each folder found by this walk: names, sizes and times, as
    /// [`Folder`]'s fields.
    names: Vec<[Vec<u8>; 3]>,
    /// The names of the folders known in each folder listed (by its number): looked at on
    /// their own, not listed from it.
    known_in: HashMap<u32, HashSet<Bytes>>,
    /// The folders being listed, one in another (device and inode): a link to one of them is a
    /// way back up, not followed.
    listing: Vec<(u64, u64)>,
    walked: Walked,
    found: Vec<Found>,
}

impl Walk<'_> {
    /// A folder made part of the next memo, named `name` where the memo knew it: its number.
    fn add_folder(
        &mut self,
        parent: Option<u32>,
        path: Option<PathBuf>,
        modified: u64,
        name: Option<&Bytes>,
    ) -> u32 {
        let name = match (name, parent, &path) {
            (Some(name), _, _) => Some(name.clone()),
            (None, None, Some(path)) => path.to_str().map(|p| Bytes::copy_from_slice(p.as_bytes())),
            (None, Some(_), Some(path)) => {
                path.file_name().and_then(|n| n.to_str()).map(|n| Bytes::copy_from_slice(n.as_bytes()))
            }
            (None, _, None) => None,
        };
        let name = name.unwrap_or_else(|| {
            self.walked.whole = false;
            Bytes::new()
        });
        let in_session = self.keep.in_session(parent.map(|p| self.in_session[p as usize]), &name);
        let at = self.walked.folders.len() as u32;
        self.walked.folders.push(Folder {
            parent: parent.map_or(0, |p| p + 1),
            name,
            modified,
            ..Folder::default()
        });
        self.paths.push(path);
        self.in_session.push(in_session);
        self.names.push(Default::default());
        at
    }

    /// The path of the folder numbered `at`.
    fn path_of(&mut self, at: u32) -> PathBuf {
        folder_path(&self.walked.folders, &mut self.paths, at as usize)
    }

    /// A transcript named in folder `at` of the next memo, with its size and time; found or not
    /// is [`Walk::add_file`]'s to say (one carried as the memo had it is neither new nor the
    /// session's).
    fn carry_file(&mut self, at: u32, name: &[u8], size: u64, modified: u64) {
        let [names, sizes, times] = &mut self.names[at as usize];
        names.extend_from_slice(name);
        names.push(b'/');
        sizes.extend_from_slice(&size.to_le_bytes());
        times.extend_from_slice(&modified.to_le_bytes());
    }

    /// A transcript made part of the next memo, in folder `folder` (none: a place that is a
    /// file), and found when wanted.
    fn add_file(&mut self, folder: Option<u32>, path: PathBuf, size: u64, modified: u64) {
        let in_session = folder.is_some_and(|f| self.in_session[f as usize]);
        if let Some(at) = folder {
            match path.file_name().and_then(|n| n.to_str()) {
                Some(name) => self.carry_file(at, name.as_bytes(), size, modified),
                None => self.walked.whole = false,
            }
        }
        if self.keep.wants(modified, in_session) {
            self.found.push(Found { path, size, modified });
        }
    }

    /// Lists the folder numbered `at`: its transcripts, and the folders in it not known before,
    /// listed in turn (a folder known is looked at on its own).
    fn list(&mut self, at: u32) {
        let dir = self.path_of(at);
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        let known = self.known_in.remove(&at).unwrap_or_default();
        let itself = std::fs::metadata(&dir).map(|meta| identity(&meta)).unwrap_or_default();
        self.listing.push(itself);
        for entry in entries.flatten() {
            let path = entry.path();
            // A link is followed, as the scan follows it; anything else is looked at from its
            // folder.
            let meta = match entry.file_type() {
                Ok(kind) if kind.is_symlink() => std::fs::metadata(&path),
                _ => entry.metadata(),
            };
            let Ok(meta) = meta else { continue };
            if meta.is_dir() {
                let name = entry.file_name();
                let back_up = identity(&meta) != (0, 0) && self.listing.contains(&identity(&meta));
                if back_up || name.to_str().is_some_and(|n| known.contains(n.as_bytes())) {
                    continue;
                }
                let folder = self.add_folder(Some(at), Some(path), nanos(&meta), None);
                self.list(folder);
            } else if self.keep.claimer.claim(&path).is_some() {
                self.add_file(Some(at), path, meta.len(), nanos(&meta));
            }
        }
        self.listing.pop();
    }

    /// What the walk found, each folder's transcripts named.
    fn finish(mut self) -> Walked {
        for (folder, [names, sizes, times]) in self.walked.folders.iter_mut().zip(self.names) {
            if !names.is_empty() {
                (folder.file_names, folder.file_sizes, folder.file_times) =
                    (Bytes::from(names), Bytes::from(sizes), Bytes::from(times));
            }
        }
        self.found.sort_by(|a, b| a.path.cmp(&b.path));
        self.found.dedup_by(|a, b| a.path == b.path);
        self.walked.files = self.found;
        self.walked
    }
}

/// The path of folder `at` of `folders` (each after the folder it is in): its name in the path
/// of that folder, or its name for a place; made once, kept in `paths`.
fn folder_path(folders: &[Folder], paths: &mut [Option<PathBuf>], at: usize) -> PathBuf {
    if let Some(path) = &paths[at] {
        return path.clone();
    }
    let folder = &folders[at];
    let path = match folder.parent {
        0 => PathBuf::from(text_of(&folder.name)),
        p => folder_path(folders, paths, p as usize - 1).join(text_of(&folder.name)),
    };
    paths[at] = Some(path.clone());
    path
}

/// A folder's device and inode, where the system has them (else none: no link is found to lead
/// back up).
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Looks at `paths` (in two halves at once: a look is a system call each): each one's size and
/// time, where it is there and is a folder (`dirs`) or a file.
fn look(paths: &[PathBuf], dirs: bool) -> Vec<Option<(u64, u64)>> {
    let look = |part: &[PathBuf]| -> Vec<Option<(u64, u64)>> {
        part.iter()
            .map(|path| {
                let meta = std::fs::metadata(path).ok().filter(|m| m.is_dir() == dirs)?;
                Some((meta.len(), nanos(&meta)))
            })
            .collect()
    };
    if paths.len() < 256 {
        return look(paths);
    }
    let (first, second) = paths.split_at(paths.len() / 2);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| look(second));
        let mut looked = look(first);
        looked.extend(other.join().unwrap_or_else(|_| vec![None; second.len()]));
        looked
    })
}

/// Walks `places`: every folder when `memo` knows none, else as the module says. Keeps the
/// transcripts changed at or after `horizon` (nanoseconds) and those in a folder named as
/// `session`.
pub(super) fn walk(
    formats: &[crate::format::Format],
    places: &[PathBuf],
    memo: &Memo,
    horizon: u64,
    session: Option<&str>,
) -> Walked {
    let keep = Keep { claimer: crate::source::discover::Claimer::new(formats), horizon, session };
    // Made at their size (growing them copies each again: new memory, page by page).
    let folders = memo.folders.len();
    let mut walk = Walk {
        keep,
        paths: Vec::with_capacity(folders),
        in_session: Vec::with_capacity(folders),
        names: Vec::with_capacity(folders),
        known_in: HashMap::new(),
        listing: Vec::new(),
        walked: Walked { whole: true, folders: Vec::with_capacity(folders), ..Walked::default() },
        found: Vec::new(),
    };
    let horizon = walk.keep.horizon;
    // The sweep's order: each folder, then its transcripts; a slice of it looked at each line.
    let mut position = Vec::with_capacity(memo.folders.len());
    let mut n = 0;
    for folder in &memo.folders {
        position.push(n);
        n += 1 + folder.file_count();
    }
    let count = n.div_ceil(SWEEP_RUNS).max(SWEEP_LEAST).min(n);
    let from = if n == 0 { 0 } else { memo.sweep as usize % n };
    walk.walked.sweep = if n == 0 { 0 } else { ((from + count) % n) as u64 };
    let due = |i: usize| (i + n - from) % n.max(1) < count;
    // The folders awake: the places, the session's, those changed or holding a transcript
    // changed at or after the horizon, and every folder on the way to one of them. Their times
    // are looked at each line, the others' in turn.
    let mut awake = vec![false; memo.folders.len()];
    let mut in_session = vec![false; memo.folders.len()];
    let mut holds_recent = vec![false; memo.folders.len()];
    for (i, folder) in memo.folders.iter().enumerate() {
        let parent = folder.parent.checked_sub(1).map(|p| in_session[p as usize]);
        in_session[i] = walk.keep.in_session(parent, &folder.name);
        holds_recent[i] = numbers(&folder.file_times).any(|t| t >= horizon);
        awake[i] = folder.parent == 0 || in_session[i] || folder.modified >= horizon || holds_recent[i];
    }
    for i in (0..memo.folders.len()).rev() {
        if let Some(p) = memo.folders[i].parent.checked_sub(1).filter(|_| awake[i]) {
            awake[p as usize] = true;
        }
    }
    // The paths of the folders known, made where needed.
    let mut old_paths: Vec<Option<PathBuf>> = vec![None; memo.folders.len()];
    let looked_at: Vec<usize> = (0..memo.folders.len()).filter(|&i| awake[i] || due(position[i])).collect();
    let dir_paths: Vec<PathBuf> =
        looked_at.iter().map(|&i| folder_path(&memo.folders, &mut old_paths, i)).collect();
    // Each folder's time now: as looked at (none: gone), else as known.
    let mut times: Vec<Option<u64>> = memo.folders.iter().map(|f| Some(f.modified)).collect();
    for (&i, now) in looked_at.iter().zip(look(&dir_paths, true)) {
        times[i] = now.map(|(_, time)| time);
    }
    // Those still there, numbered anew (a folder gone takes those in it along); listed where
    // changed.
    let mut renumbered: Vec<Option<u32>> = vec![None; memo.folders.len()];
    let mut listed: Vec<bool> = Vec::new();
    for (i, folder) in memo.folders.iter().enumerate() {
        let Some(time) = times[i] else { continue };
        let parent = match folder.parent {
            0 => None,
            p => match renumbered[p as usize - 1] {
                Some(parent) => Some(parent),
                None => continue,
            },
        };
        let at = walk.add_folder(parent, old_paths[i].take(), time, Some(&folder.name));
        renumbered[i] = Some(at);
        let changed = folder.modified != time;
        listed.push(changed);
        if let Some(parent) = parent.filter(|&p| listed[p as usize]) {
            walk.known_in.entry(parent).or_default().insert(folder.name.clone());
        }
    }
    // The transcripts known in folders not listed: as known, but those changed at or after the
    // horizon, in the session's folders, or due in turn looked at again.
    let (mut look_in, mut to_look): (Vec<u32>, Vec<PathBuf>) = (Vec::new(), Vec::new());
    for (i, folder) in memo.folders.iter().enumerate() {
        let Some(at) = renumbered[i].filter(|&at| !listed[at as usize]) else { continue };
        let files = position[i] + 1..position[i] + 1 + folder.file_count();
        // Whether any of its transcripts is due: the slice begins in them, or they in the slice.
        let some_due = !files.is_empty() && (due(files.start) || files.contains(&from));
        if !in_session[i] && !some_due && !holds_recent[i] {
            let carried = &mut walk.walked.folders[at as usize];
            carried.file_names = folder.file_names.clone();
            carried.file_sizes = folder.file_sizes.clone();
            carried.file_times = folder.file_times.clone();
            continue;
        }
        for (file, (name, size, time)) in files.zip(folder.files()) {
            match in_session[i] || due(file) || time >= horizon {
                true => {
                    look_in.push(at);
                    to_look.push(walk.path_of(at).join(text_of(name)));
                }
                false => walk.carry_file(at, name, size, time),
            }
        }
    }
    let looked = look(&to_look, false);
    for ((at, path), now) in look_in.into_iter().zip(to_look).zip(looked) {
        // A transcript gone is left out (its folder changed: listed next line).
        if let Some((size, modified)) = now {
            walk.add_file(Some(at), path, size, modified);
        }
    }
    // The places not known (each walked whole), and the folders that changed.
    let mut to_list: Vec<u32> = (0..walk.paths.len() as u32).filter(|&at| listed[at as usize]).collect();
    for place in places {
        let known = |i: usize| {
            memo.folders[i].parent == 0
                && renumbered[i].is_some()
                && Path::new(text_of(&memo.folders[i].name)) == place.as_path()
        };
        if (0..memo.folders.len()).any(known) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(place) else { continue };
        if !meta.is_dir() {
            // A place that is a file is read as it is, looked at each line.
            walk.add_file(None, place.clone(), meta.len(), nanos(&meta));
            continue;
        }
        to_list.push(walk.add_folder(None, Some(place.clone()), nanos(&meta), None));
    }
    for at in to_list {
        walk.list(at);
    }
    walk.finish()
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

    /// Walks from `memo` until a file named `name` is found, each walk's memo kept for the next:
    /// it must be within [`SWEEP_RUNS`] walks. The memo of the walk that found it.
    fn seen_within_a_sweep(
        places: &[PathBuf],
        mut memo: Memo,
        horizon: u64,
        name: &str,
        cache: &Path,
    ) -> Memo {
        for _ in 0..SWEEP_RUNS {
            let walked = walk(&crate::format::all(), places, &memo, horizon, None);
            let seen = paths(&walked).iter().any(|n| n == name);
            memo = kept(walked, cache);
            if seen {
                return memo;
            }
        }
        panic!("{name} is not seen within {SWEEP_RUNS} walks");
    }

    /// The transcripts a walk knows of.
    fn known_files(walked: &Walked) -> usize {
        walked.folders.iter().map(Folder::file_count).sum()
    }

    /// The memo of `walked`, written and read back as the next line reads it.
    fn kept(walked: Walked, dir: &Path) -> Memo {
        let memo = Memo::next(walked, &HashMap::new(), BTreeMap::new()).unwrap();
        let path = dir.join("memo");
        memo.write(&path);
        let read = Memo::read(Some(&path));
        assert_eq!(read, memo, "a memo reads back as written");
        read
    }

    #[test]
    fn a_walk_with_a_memo_finds_new_files_grown_files_and_in_turn_old_files_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
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
        assert_eq!(known_files(&first), 3, "every transcript is known, the text file is not one");
        let memo = kept(first, cache.path());
        // The session's files are looked at from the memo too, its folder not listed.
        assert_eq!(
            paths(&walk(&formats, &places, &memo, horizon, Some("s1"))),
            ["agent-x.jsonl", "new.jsonl"]
        );
        // A file made in a folder changes the folder's time: found at once, deep down too.
        touch(&projects.join("-b/made.jsonl"), "{}\n", day + 200);
        touch(&projects.join("-a/s1/subagents/agent-y.jsonl"), "{}\n", day + 200);
        let second = walk(&formats, &places, &memo, horizon, None);
        assert_eq!(paths(&second), ["agent-y.jsonl", "made.jsonl", "new.jsonl"]);
        // An old file written again, in a folder whose time did not change, is found when its
        // turn comes, within SWEEP_RUNS walks.
        touch(&projects.join("-a/old.jsonl"), "{}\n{}\n", day + 300);
        let memo = kept(second, cache.path());
        let memo = seen_within_a_sweep(&places, memo, horizon, "old.jsonl", cache.path());
        // A folder removed takes its files along; a file removed is gone.
        std::fs::remove_dir_all(projects.join("-a/s1")).unwrap();
        std::fs::remove_file(projects.join("-b/made.jsonl")).unwrap();
        let last = walk(&formats, &places, &memo, horizon, None);
        assert_eq!(paths(&last), ["new.jsonl", "old.jsonl"]);
        assert_eq!(known_files(&last), 2);
        assert_eq!(last.folders.len(), 3, "projects, -a and -b");
    }

    /// Sets the time of folder `dir` (seconds).
    fn set_folder_time(dir: &Path, secs: i64) {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
        std::fs::File::open(dir).unwrap().set_modified(at).unwrap();
    }

    #[test]
    fn a_folder_awake_is_looked_at_each_line_and_one_asleep_in_turn() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects");
        let formats = crate::format::all();
        let horizon = 1_000_000_000_000_000_000u64; // 2001-09-09
        let old = 1_000_000_000i64 - 100_000;
        // 100 folders asleep of 30 old transcripts each: a line looks at a thirty-second of them.
        for f in 0..100 {
            for n in 0..30 {
                touch(&projects.join(format!("-old{f}/s{n}.jsonl")), "{}\n", old);
            }
            set_folder_time(&projects.join(format!("-old{f}")), old);
        }
        // One awake: it holds a transcript changed after the horizon, its folder's time old.
        touch(&projects.join("-live/s.jsonl"), "{}\n", 1_000_000_100);
        set_folder_time(&projects.join("-live"), old);
        let places = [projects.clone()];
        let mut memo = kept(walk(&formats, &places, &Memo::default(), horizon, None), cache.path());
        // A file made in the folder awake is found by the very next line, each time.
        for run in 0..5 {
            let name = format!("new{run}.jsonl");
            touch(&projects.join("-live").join(&name), "{}\n", 1_000_000_200 + run);
            let walked = walk(&formats, &places, &memo, horizon, None);
            assert!(paths(&walked).contains(&name), "{name} is found at once");
            memo = kept(walked, cache.path());
        }
        // One made in a folder asleep is found when its turn comes.
        touch(&projects.join("-old57/made.jsonl"), "{}\n", 1_000_000_300);
        seen_within_a_sweep(&places, memo, horizon, "made.jsonl", cache.path());
    }

    #[test]
    fn a_damaged_memo_or_one_of_another_layout_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memo");
        std::fs::write(&path, b"{\"version\":1}").unwrap();
        assert_eq!(Memo::read(Some(&path)), Memo::default());
        // A copy written over since its pointer was (by another line), or cut short, is not read.
        let memo = Memo { version: VERSION, sweep: 7, ..Memo::default() };
        memo.write(&path);
        assert_eq!(Memo::read(Some(&path)), memo);
        let copy = copy_path(&path, pointer(&path).unwrap().copy);
        let other = Memo { version: VERSION, sweep: 8, ..Memo::default() };
        std::fs::write(&copy, Written::of(&other).encode_to_vec()).unwrap();
        assert_eq!(Memo::read(Some(&path)), Memo::default());
        // A folder numbered after itself is not the memo's writing.
        let wrong = Memo {
            version: VERSION,
            folders: vec![Folder {
                parent: 1,
                name: Bytes::from_static(b"x"),
                modified: 1,
                ..Folder::default()
            }],
            ..Memo::default()
        };
        wrong.write(&path);
        assert_eq!(Memo::read(Some(&path)), Memo::default());
        // Columns that do not agree (more transcripts counted than named) are not either.
        let one = Memo {
            version: VERSION,
            folders: vec![Folder {
                name: Bytes::from_static(b"/p"),
                file_names: Bytes::from_static(b"s.jsonl/"),
                file_sizes: Bytes::copy_from_slice(&5u64.to_le_bytes()),
                file_times: Bytes::copy_from_slice(&6u64.to_le_bytes()),
                ..Folder::default()
            }],
            ..Memo::default()
        };
        one.write(&path);
        assert_eq!(Memo::read(Some(&path)), one);
        let mut disagreeing = Written::of(&one);
        disagreeing.file_counts[0] = 2;
        write(&path, &disagreeing, &one.folders);
        assert_eq!(Memo::read(Some(&path)), Memo::default());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_back_up_is_not_followed_round_and_round() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects");
        touch(&projects.join("-a/s.jsonl"), "{}\n", 2_000_000_000);
        std::os::unix::fs::symlink(&projects, projects.join("-a/up")).unwrap();
        let walked = walk(&crate::format::all(), &[projects], &Memo::default(), 0, None);
        assert_eq!(paths(&walked), ["s.jsonl"]);
        assert_eq!(walked.folders.len(), 2, "projects and -a, not projects/-a/up/-a/...");
    }
}
