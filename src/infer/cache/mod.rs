//! The inference cache: what the inference pass learned about each file, kept on disk so that the
//! next query over the same files reads none of them twice, and over a grown file reads only what
//! was appended (transcripts are append-only). Nothing in it is trusted blindly: the file is
//! checksummed, an entry is used whole only for a file with the same size, modification time,
//! inode and status change time, and read on from only when a hash of its known lines still
//! matches (a compressed file that changed is read again whole).

mod layout;
mod spill;

use crate::infer::signature::{FileSummary, SignatureTable};
use crate::source::files::{SourceFile, Stamps, path_key};
use crate::source::prefix::PrefixHash;
use object_store::ObjectStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The layout's version, in the cache files' names (`inference-v7-...`): a new layout gets a new
/// name.
const VERSION: u32 = 7;

/// What is kept of one file.
#[derive(Debug, Clone)]
pub(crate) struct FileEntry {
    /// The hash of its canonical path ([`path_key`]): the corpus names the file, the cache keeps
    /// no path.
    key: u64,
    /// The format: an index into the cache's formats.
    format: u32,
    /// Size, modification time, inode and status change time (times in ns since the epoch) when
    /// read: all the same, and the file is the same.
    stamps: Stamps,
    /// The XXH3-64 of its bytes up to `summary.complete_bytes` (its whole lines): still the same,
    /// and a file that changed only after them is read on from there.
    prefix_hash: u64,
    summary: FileSummary,
}

impl FileEntry {
    /// What the file held when read.
    pub(crate) fn summary(&self) -> &FileSummary {
        &self.summary
    }

    /// Whether the file, found now with `stamps`, is the same file as read: no read needed.
    pub(crate) fn is_same(&self, stamps: Stamps) -> bool {
        stamps.modified().is_some() && stamps == self.stamps
    }

    /// Whether the file, found now with `stamps` and not the same ([`FileEntry::is_same`]), may
    /// still hold the whole lines it held (a hash of them tells, [`FileEntry::lookup`]); a
    /// compressed file that changed is read again whole: its lines are not its first bytes.
    pub(crate) fn may_have_grown(&self, stamps: Stamps, compressed: impl FnOnce() -> bool) -> bool {
        stamps.size() >= self.stamps.size() && self.summary.complete_bytes > 0 && !compressed()
    }

    /// What the entry says of `file` now: the same, grown (its known whole lines hash as they
    /// did, and it is read on from their end), or to be read whole.
    pub async fn lookup(&self, store: &Arc<dyn ObjectStore>, file: &SourceFile) -> Lookup {
        let stamps = Stamps::of(file);
        if self.is_same(stamps) {
            return Lookup::Same(self.summary.clone());
        }
        if !self.may_have_grown(stamps, || file.compressed()) {
            return Lookup::Unknown;
        }
        let complete = self.summary.complete_bytes;
        match PrefixHash::of_prefix(store, file, complete).await {
            Some(now) if now.digest_of(complete) == Some(self.prefix_hash) => {
                Lookup::Grown(self.summary.clone(), complete, now)
            }
            _ => Lookup::Unknown,
        }
    }
}

/// What the cache knows of a file now.
pub enum Lookup {
    /// The same file: what it holds.
    Same(FileSummary),
    /// The same whole lines, and maybe more after them: what it held, the offset to read on
    /// from, and the hash of the bytes before it (to go on with over the rest).
    Grown(FileSummary, u64, PrefixHash),
    /// Unknown, or changed: read it whole.
    Unknown,
}

/// A file to look up in the cache ([`InferenceCache::find`]): the key of its canonical path
/// ([`path_key`]) and the number the caller knows it by. Twelve bytes, with no padding: a
/// million are looked up at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub(crate) struct Wanted {
    pub(crate) key: u64,
    pub(crate) number: u32,
}

/// The files the cache knows: those of its file on disk, read again at each walk of them (a
/// million entries are never held in memory), and those read since, in memory.
#[derive(Default)]
pub(crate) struct KnownFiles {
    formats: Vec<String>,
    /// The cache file as loaded (or as last saved): its records, in the order of their keys.
    file: Option<layout::CacheFile>,
    /// Entries in memory (what was read since the file was loaded or saved, or the whole cache
    /// when it is kept in memory only), over the file's of the same key.
    entries: Entries,
}

impl std::fmt::Debug for KnownFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownFiles")
            .field("formats", &self.formats)
            .field("on_disk", &self.file.is_some())
            .field("in_memory", &self.entries.len())
            .finish()
    }
}

/// Entries in one vector in the order of their keys, found by a binary search (no map beside
/// them: a million entries take their own bytes and no more).
#[derive(Debug, Default)]
pub(crate) struct Entries {
    /// In the order of their keys, one each.
    entries: Vec<FileEntry>,
}

impl Entries {
    /// Takes in the entries `added` (leaving it empty): each in place of the one of its key, the
    /// others put in order among them, in place. Of a key added twice
    /// (a file is remembered once a corpus opens), one is kept.
    fn add(&mut self, added: &mut Vec<FileEntry>) {
        if added.is_empty() {
            return;
        }
        if self.entries.is_empty() {
            // A first read: what was added is the whole cache (no second vector of it).
            self.entries = std::mem::take(added);
        } else {
            added.retain_mut(|entry| match self.entries.binary_search_by_key(&entry.key, |e| e.key) {
                Ok(at) => {
                    std::mem::swap(&mut self.entries[at], entry);
                    false
                }
                Err(_) => true,
            });
            self.entries.append(added);
        }
        self.entries.sort_unstable_by_key(|e| e.key);
        self.entries.dedup_by_key(|e| e.key);
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

impl KnownFiles {
    /// The files of a cache file, none in memory.
    fn of_file(file: layout::CacheFile) -> Self {
        KnownFiles { formats: file.formats.clone(), file: Some(file), entries: Entries::default() }
    }
}

/// Every entry of a cache file, of those in memory and of those spilled, in the order of their
/// keys: the file's records and the spilled entries as they are read, the newer of a key in
/// place of the older (spilled over memory over the file).
struct Walk<'a> {
    records: Option<std::iter::Peekable<layout::Records<'a, std::fs::File>>>,
    memory: std::iter::Peekable<std::slice::Iter<'a, FileEntry>>,
    spilled: Option<std::iter::Peekable<spill::Entries<'a>>>,
}

/// An entry of a [`Walk`]: one in memory, or one read from a file (the cache's or a spill).
enum Walked<'a> {
    Memory(&'a FileEntry),
    Read(FileEntry),
}

impl Walked<'_> {
    fn entry(&self) -> &FileEntry {
        match self {
            Walked::Memory(entry) => entry,
            Walked::Read(entry) => entry,
        }
    }
}

impl<'a> Walk<'a> {
    fn new(
        file: &'a mut Option<layout::CacheFile>,
        memory: &'a Entries,
        spilled: Option<spill::Entries<'a>>,
    ) -> Self {
        Walk {
            records: file.as_mut().map(|f| f.records().peekable()),
            memory: memory.entries.iter().peekable(),
            spilled: spilled.map(Iterator::peekable),
        }
    }
}

impl<'a> Iterator for Walk<'a> {
    type Item = Walked<'a>;

    fn next(&mut self) -> Option<Walked<'a>> {
        let spilled = self.spilled.as_mut().and_then(|s| s.peek()).map(|e| e.key);
        let memory = self.memory.peek().map(|e| e.key);
        let record = self.records.as_mut().and_then(|r| r.peek()).map(|e| e.key);
        let key = [spilled, memory, record].into_iter().flatten().min()?;
        // The newest of the key is given; the others of it are passed.
        let mut walked = None;
        if spilled == Some(key) {
            walked = self.spilled.as_mut().and_then(Iterator::next).map(Walked::Read);
        }
        if memory == Some(key) {
            let entry = self.memory.next().map(Walked::Memory);
            walked = walked.or(entry);
        }
        if record == Some(key) {
            let entry = self.records.as_mut().and_then(Iterator::next).map(Walked::Read);
            walked = walked.or(entry);
        }
        walked
    }
}

/// What was learned since the known files were last walked: written down as it comes when the
/// cache has a file ([`spill::Spill`]: a million files' entries are not held until the save),
/// else (or what a spill could not take) in memory.
#[derive(Debug, Default)]
struct Learned {
    memory: Vec<FileEntry>,
    spill: Option<spill::Spill>,
    /// Where the spill is made at the first entry: the cache's directory (`None` for a cache in
    /// memory, or once it was made or could not be).
    spill_dir: Option<PathBuf>,
}

impl Learned {
    /// The spill, made at its first use.
    fn spill(&mut self) -> Option<&mut spill::Spill> {
        if let Some(dir) = self.spill_dir.take() {
            self.spill = spill::Spill::new(&dir);
        }
        self.spill.as_mut()
    }

    fn push(&mut self, entry: FileEntry) {
        let entry = match self.spill() {
            Some(spill) => match spill.push(entry) {
                Ok(()) => return,
                Err(entry) => entry,
            },
            None => entry,
        };
        self.memory.push(entry);
    }

    fn reserve(&mut self, more: usize) {
        match self.spill() {
            Some(spill) => spill.reserve(more),
            None => self.memory.reserve_exact(more),
        }
    }

    fn is_empty(&self) -> bool {
        self.memory.is_empty() && self.spill.as_ref().is_none_or(spill::Spill::is_empty)
    }

    /// Everything learned, in memory (the spill read back and cleared): for a walk that keeps
    /// what it is given (a lookup, done before a run reads, when little or nothing was learned).
    fn take_into_memory(&mut self, formats: usize) -> Vec<FileEntry> {
        let mut all = std::mem::take(&mut self.memory);
        if let Some(spill) = self.spill.as_mut().filter(|s| !s.is_empty()) {
            all.extend(spill.entries(formats));
            spill.clear();
        }
        all
    }
}

/// Where what a read finds is remembered while the known files are looked up: kept apart, and
/// among them at the next walk or save.
pub(crate) struct Remembering<'a> {
    learned: Option<&'a mut Learned>,
    format: u32,
}

impl Remembering<'_> {
    /// Remembers what a read of the file of `key` (its canonical path's [`path_key`]) found when
    /// its stamps were `stamps` (its shapes numbered in the cache's table), with the hash of its
    /// whole lines.
    pub(crate) fn remember(&mut self, key: u64, stamps: Stamps, prefix_hash: u64, summary: FileSummary) {
        if let Some(learned) = self.learned.as_deref_mut() {
            learned.push(FileEntry { key, format: self.format, stamps, prefix_hash, summary });
        }
    }

    /// Room for `more` files to remember, made at once.
    pub(crate) fn reserve(&mut self, more: usize) {
        if let Some(learned) = self.learned.as_deref_mut() {
            learned.reserve(more);
        }
    }
}

/// The cache, loaded from and saved to one file.
#[derive(Debug, Default)]
pub struct InferenceCache {
    path: Option<PathBuf>,
    known: KnownFiles,
    learned: Learned,
    /// The keys of the files the cache knew that the last lookup of every file of a corpus did
    /// not find (deleted or moved), in order: the next save leaves them out.
    gone: Vec<u64>,
    /// The shapes the known files name, and those of files read since.
    shapes: SignatureTable,
    changed: bool,
    /// Whether what is read is remembered: on disk (with a `path`), or only in memory.
    remembers: bool,
}

impl InferenceCache {
    /// A cache that remembers nothing (but still numbers the shapes of the files read).
    pub(crate) fn disabled() -> Self {
        Self::default()
    }

    /// A cache kept in memory only, never saved: a long session (the shell) reads on from where
    /// it was in a grown file even with `--no-cache`.
    pub(crate) fn in_memory() -> Self {
        Self { remembers: true, ..Self::default() }
    }

    /// Whether what is read is remembered.
    pub(crate) fn is_enabled(&self) -> bool {
        self.remembers
    }

    /// The cache in `dir` for the directories `roots` (created when saved): one file per set of
    /// roots, so that a large corpus never slows down the start over a small one. An unreadable,
    /// damaged or outdated file is started afresh.
    pub fn load(dir: &Path, roots: &[PathBuf]) -> Self {
        // Named after the directories themselves: `.` in two projects is two caches.
        let mut roots: Vec<PathBuf> =
            roots.iter().map(|root| std::fs::canonicalize(root).unwrap_or_else(|_| root.clone())).collect();
        roots.sort();
        let path = dir.join(file_name(&roots));
        let mut shapes = SignatureTable::default();
        let known = match std::fs::File::open(&path).ok().and_then(|file| layout::open(file, &mut shapes)) {
            Some(file) => KnownFiles::of_file(file),
            None => {
                shapes = SignatureTable::default();
                KnownFiles::default()
            }
        };
        let learned = Learned { spill_dir: path.parent().map(Path::to_path_buf), ..Learned::default() };
        Self { path: Some(path), known, learned, gone: Vec::new(), shapes, changed: false, remembers: true }
    }

    /// The default place: `$TXQ_CACHE_DIR`, else the user's cache directory (`~/.cache/txq`);
    /// `None` when there is none. An empty `$TXQ_CACHE_DIR` is an error, not the working
    /// directory.
    pub(crate) fn default_dir() -> crate::error::Result<Option<PathBuf>> {
        match std::env::var_os("TXQ_CACHE_DIR") {
            Some(dir) if dir.is_empty() => Err(crate::error::Error::Usage(
                "TXQ_CACHE_DIR is set but empty: set it to a directory for the inference cache, unset it \
                 to use ~/.cache/txq, or pass --no-cache"
                    .to_string(),
            )),
            Some(dir) => Ok(Some(PathBuf::from(dir))),
            None => Ok(dirs::cache_dir().map(|d| d.join("txq"))),
        }
    }

    /// Whether the cache knows any file (what to look up in it), or what it learns of those read
    /// since.
    pub(crate) fn knows_any(&self) -> bool {
        self.known.file.is_some() || !self.known.entries.entries.is_empty() || !self.learned.is_empty()
    }

    /// Calls `found` with each file that the cache knows among those `wanted` gives, its entry
    /// and the entry's format, in one walk of the entries. The keys are taken in `parts` ranges of
    /// equal width, in order: `wanted(low, high, into)` adds to `into` (in any order) the files
    /// whose key is in `low..=high`, so that a million files are looked up without a list of
    /// them all (12 bytes a file) at once. When the files wanted are every file of the corpus,
    /// the entries of no file of it leave the cache (deleted or moved files).
    pub(crate) fn find(
        &mut self,
        parts: u32,
        mut wanted: impl FnMut(u64, u64, &mut Vec<Wanted>),
        every_file: bool,
        mut found: impl FnMut(u32, &FileEntry, &str),
    ) {
        self.changed |= !self.learned.is_empty();
        let mut learned = self.learned.take_into_memory(self.known.formats.len());
        self.known.entries.add(&mut learned);
        let known = &mut self.known;
        let formats = &known.formats;
        let mut gone = Vec::new();
        let mut walk = Walk::new(&mut known.file, &known.entries, None).peekable();
        let mut part: Vec<Wanted> = Vec::new();
        let parts = parts.max(1);
        for n in 0..parts {
            let bound = |n: u32| (u128::from(n) << 64) / u128::from(parts);
            let (low, high) = (bound(n) as u64, (bound(n + 1) - 1) as u64);
            part.clear();
            wanted(low, high, &mut part);
            part.sort_unstable();
            let mut at = 0;
            while let Some(walked) = walk.next_if(|w| w.entry().key <= high) {
                let entry = walked.entry();
                while part.get(at).is_some_and(|w| ({ w.key }) < entry.key) {
                    at += 1;
                }
                let mut next = at;
                while let Some(w) = part.get(next).filter(|w| ({ w.key }) == entry.key) {
                    if let Some(format) = formats.get(entry.format as usize) {
                        found(w.number, entry, format);
                    }
                    next += 1;
                }
                if next == at && every_file {
                    gone.push(entry.key);
                }
            }
        }
        drop(walk);
        if known.file.as_ref().is_some_and(|f| f.broken) {
            // The file changed since it was checked: what was not walked is read again.
            known.file = None;
            self.changed = true;
        }
        if every_file {
            if !gone.is_empty() {
                self.changed = true;
                known.entries.entries.retain(|e| gone.binary_search(&e.key).is_err());
            }
            self.gone = gone;
        }
    }

    /// What the cache knows of `file` for `format` now (one walk of the entries).
    pub async fn lookup(&mut self, store: &Arc<dyn ObjectStore>, format: &str, file: &SourceFile) -> Lookup {
        let (mut entry, key) = (None, path_key(file.canonical()));
        let wanted = |_, _, into: &mut Vec<Wanted>| into.push(Wanted { key, number: 0 });
        self.find(1, wanted, false, |_, found, of| {
            if of == format {
                entry = Some(found.clone());
            }
        });
        match entry {
            Some(entry) => entry.lookup(store, file).await,
            None => Lookup::Unknown,
        }
    }

    /// The shapes (for numbering what is read), and where to remember what is read of files of
    /// `format`.
    pub(crate) fn parts(&mut self, format: &str) -> (&mut SignatureTable, Remembering<'_>) {
        let known = &mut self.known;
        let format = match known.formats.iter().position(|f| f == format) {
            Some(at) => at,
            None => {
                known.formats.push(format.to_string());
                known.formats.len() - 1
            }
        } as u32;
        let learned = self.remembers.then_some(&mut self.learned);
        (&mut self.shapes, Remembering { learned, format })
    }

    /// Writes the cache if anything changed (its entries less those of the files [`find`] found
    /// gone), to a temporary file, renamed into place (and removed again when anything fails),
    /// which is then the cache's file. A cache that cannot be written is not an error; the next
    /// query reads the files again.
    ///
    /// [`find`]: InferenceCache::find
    pub(crate) fn save(&mut self) -> crate::error::Result<()> {
        self.changed |= !self.learned.is_empty();
        self.known.entries.add(&mut self.learned.memory);
        let (Some(path), true) = (&self.path, self.changed) else { return Ok(()) };
        let dir = path.parent().unwrap_or(Path::new("."));
        let not_saved = |e| crate::error::Error::Write { path: path.clone(), source: e };
        std::fs::create_dir_all(dir).map_err(not_saved)?;
        // Named after the cache file and the process: two saves at once never share one.
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
        let known = &mut self.known;
        let formats = known.formats.clone();
        let written = std::fs::File::create(&tmp).and_then(|file| {
            let mut file = std::io::BufWriter::new(file);
            let keep = |key| self.gone.binary_search(&key).is_err();
            let spill = &mut self.learned.spill;
            let mut each = |visit: &mut dyn FnMut(&FileEntry)| {
                let spilled = spill.as_mut().map(|s| s.entries(formats.len()));
                Walk::new(&mut known.file, &known.entries, spilled).for_each(|w| visit(w.entry()));
            };
            layout::encode_to(&formats, &self.shapes, &mut each, keep, &mut file)?;
            file.into_inner().map(drop).map_err(|e| e.into_error())
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
            // What was written (if anything was) goes; a directory of that name is not ours.
            if std::fs::symlink_metadata(&tmp).is_ok_and(|m| !m.is_dir()) {
                let _ = std::fs::remove_file(&tmp);
            }
            return Err(not_saved(e));
        }
        // What was written is the cache now: its entries leave memory and the spill.
        if let Some(file) =
            std::fs::File::open(path).ok().and_then(|file| layout::open(file, &mut self.shapes))
        {
            *known = KnownFiles::of_file(file);
            self.gone = Vec::new();
            if let Some(spill) = &mut self.learned.spill {
                spill.clear();
            }
        }
        self.changed = false;
        remove_older_layouts(dir);
        Ok(())
    }
}

/// The name of the cache file of the directories `roots` (canonical, sorted): the layout's
/// version and the XXH3-64 of their paths, the same in every build of every version of Rust.
pub fn file_name(roots: &[PathBuf]) -> String {
    let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
    for root in roots {
        let bytes = root.as_os_str().as_encoded_bytes();
        hash.update(&(bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    format!("inference-v{VERSION}-{:016x}.bin", hash.digest())
}

/// Removes the cache files of older layouts from `dir` (no txq reads them again): only files
/// named as an older txq named its own ([`older_layout`]); a newer txq's, and any other file
/// (`inference-v4.keep`), are left alone.
fn remove_older_layouts(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().is_some_and(older_layout) && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `name` is one an older layout's cache gave its files: `inference-v<N>` with N below
/// [`VERSION`], then `.json` or `-<16 hex digits>` with `.json` or `.bin`, then nothing, a
/// temporary file's `.<pid>.tmp`, or `.partial` (`inference-v1.json`, `inference-v4-<hash>.json`,
/// `inference-v4.<pid>.tmp`, `inference-v6-<hash>.<pid>.tmp`).
fn older_layout(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("inference-v") else { return false };
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if !rest[..digits].parse::<u32>().is_ok_and(|v| v < VERSION) {
        return false;
    }
    let mut rest = &rest[digits..];
    if let Some(after) = rest.strip_prefix('-') {
        let hex = after.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(after.len());
        if hex != 16 {
            return false;
        }
        rest = after[hex..]
            .strip_prefix(".json")
            .or_else(|| after[hex..].strip_prefix(".bin"))
            .unwrap_or(&after[hex..]);
    } else {
        rest = rest.strip_prefix(".json").unwrap_or(rest);
    }
    let temporary = rest
        .strip_prefix('.')
        .and_then(|r| r.strip_suffix(".tmp"))
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
    rest.is_empty() || rest == ".partial" || temporary
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Saving the cache deleted any file whose name began `inference-v1` to `v6`, `.keep` files
    /// included: only what txq wrote goes.
    #[test]
    fn only_the_files_an_older_layout_wrote_are_older_layouts() {
        for name in [
            "inference-v1.json",
            "inference-v1.json.77.tmp",
            "inference-v2.json",
            "inference-v4-0123456789abcdef.json",
            "inference-v4.77.tmp",
            "inference-v5-0123456789abcdef.bin",
            "inference-v5.partial",
            "inference-v6-0123456789abcdef.bin",
            "inference-v6-0123456789abcdef.bin.4242.tmp",
        ] {
            assert!(older_layout(name), "{name}");
        }
        for name in [
            "inference-v4.keep",
            "inference-v6-notes.txt",
            "inference-v6-0123.bin",
            "inference-v5-0123456789abcdef.bin.keep",
            "inference-v4.x.tmp",
            "inference-v4..tmp",
            "inference-v7-0123456789abcdef.bin",
            "inference-v8-0123456789abcdef.bin",
            "inference-v.json",
            "my-inference-v4.json",
        ] {
            assert!(!older_layout(name), "{name}");
        }
    }

    /// What `find` in `parts` ranges gives of the files of `keys` (numbered by their place).
    fn found(cache: &mut InferenceCache, keys: &[u64], parts: u32, every_file: bool) -> Vec<(u32, u64)> {
        let mut found = Vec::new();
        let wanted = |low: u64, high: u64, into: &mut Vec<Wanted>| {
            let within = keys.iter().enumerate().filter(|(_, k)| (low..=high).contains(*k));
            into.extend(within.map(|(n, &key)| Wanted { key, number: n as u32 }));
        };
        cache.find(parts, wanted, every_file, |n, entry, format| {
            assert_eq!(format, "rupu");
            found.push((n, entry.key));
        });
        found.sort_unstable();
        found
    }

    /// A walk in ranges finds what one walk finds, from memory and from a file, and the files
    /// not wanted leave the cache.
    #[test]
    fn a_lookup_in_ranges_finds_what_one_lookup_finds() {
        let keys: Vec<u64> = (0..500u64).map(|n| n.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let dir = tempfile::tempdir().unwrap();
        let mut cache = InferenceCache::load(dir.path(), &[dir.path().to_path_buf()]);
        let (_, mut remembering) = cache.parts("rupu");
        for &key in &keys[..400] {
            remembering.remember(key, Stamps::new(1, Some(2), Some(3), Some(4)), 5, FileSummary::default());
        }
        let expected: Vec<(u32, u64)> = (0..400).map(|n| (n as u32, keys[n])).collect();
        for parts in [1, 2, 7] {
            assert_eq!(found(&mut cache, &keys, parts, false), expected, "in memory, {parts} parts");
        }
        cache.save().unwrap();
        assert_eq!(cache.known.entries.len(), 0, "saved: the entries are the file's");
        let mut loaded = InferenceCache::load(dir.path(), &[dir.path().to_path_buf()]);
        for parts in [1, 3, 64] {
            assert_eq!(found(&mut loaded, &keys, parts, false), expected, "from the file, {parts} parts");
        }
        // Every other file is gone: the cache forgets them when saved.
        let kept: Vec<u64> = keys.iter().step_by(2).copied().collect();
        let _ = found(&mut loaded, &kept, 5, true);
        loaded.save().unwrap();
        let mut again = InferenceCache::load(dir.path(), &[dir.path().to_path_buf()]);
        let left: Vec<(u32, u64)> = (0..200).map(|n| (n as u32, kept[n])).collect();
        assert_eq!(found(&mut again, &kept, 4, false), left);
        assert_eq!(found(&mut again, &keys, 1, false).len(), 200, "the others are not found");
    }

    /// A save walks the cache's file, the entries in memory and those spilled as one, the newest
    /// of a key kept: what was read last is what the next run finds.
    #[test]
    fn a_save_merges_the_file_the_memory_and_the_spill_the_newest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let roots = [dir.path().to_path_buf()];
        let key = |n: u64| n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let learn = |cache: &mut InferenceCache, keys: std::ops::Range<u64>, version: u64| {
            let (_, mut remembering) = cache.parts("rupu");
            for n in keys {
                let stamps = Stamps::new(n, Some(2), Some(3), Some(4));
                remembering.remember(key(n), stamps, version, FileSummary::default());
            }
        };
        let mut cache = InferenceCache::load(dir.path(), &roots);
        learn(&mut cache, 0..100, 1);
        assert!(cache.learned.memory.is_empty() && cache.learned.spill.is_some(), "spilled");
        cache.save().unwrap();
        learn(&mut cache, 50..150, 2);
        let _ = found(&mut cache, &[], 1, false);
        assert_eq!(cache.known.entries.len(), 100, "a lookup takes the spill into memory");
        learn(&mut cache, 100..200, 3);
        cache.save().unwrap();
        let mut loaded = InferenceCache::load(dir.path(), &roots);
        let mut versions = vec![0; 200];
        let all: Vec<u64> = (0..200).map(key).collect();
        let wanted = |low: u64, high: u64, into: &mut Vec<Wanted>| {
            let within = all.iter().enumerate().filter(|(_, k)| (low..=high).contains(*k));
            into.extend(within.map(|(n, &key)| Wanted { key, number: n as u32 }));
        };
        loaded.find(3, wanted, false, |n, entry, _| {
            assert_eq!(entry.stamps.size(), u64::from(n));
            versions[n as usize] = entry.prefix_hash;
        });
        let expected: Vec<u64> = (0..200).map(|n| [1, 2, 3, 3][n / 50]).collect();
        assert_eq!(versions, expected);
    }

    /// The name must not change with the Rust release (std's `DefaultHasher` may): a new name
    /// is a cold start for every user. The expected names are those of the reference XXH3
    /// (libxxhash's `XXH3_64bits`) over each path's length as 8 little-endian bytes, then its bytes.
    #[test]
    fn the_cache_file_name_is_pinned() {
        assert_eq!(
            file_name(&[PathBuf::from("/home/me/.rupu/transcripts")]),
            "inference-v7-f8be4479e581ff73.bin"
        );
        assert_eq!(
            file_name(&[PathBuf::from("/home/me/.reeval/runs"), PathBuf::from("/home/me/.rupu/transcripts")]),
            "inference-v7-fe1e48bfe03332e1.bin"
        );
        // Two paths are not one path with their bytes run together.
        assert_ne!(
            file_name(&[PathBuf::from("/a"), PathBuf::from("/b")]),
            file_name(&[PathBuf::from("/a/b")])
        );
    }
}
