//! The inference cache: what the inference pass learned about each file, kept on disk so that the
//! next query over the same files reads none of them twice, and over a grown file reads only what
//! was appended (transcripts are append-only).

mod layout;

use crate::discover::{PathHasher, SourceFile};
use crate::read::BlockReader;
use crate::shapes::{FileSummary, ShapeTable};
use object_store::ObjectStore;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes before the end of the whole lines kept to recognise the same file grown.
const FINGERPRINT_BYTES: u64 = 64;

/// The layout's version, in the cache files' names (`inference-v5-...`): a new layout gets a new
/// name.
const VERSION: u32 = 5;

/// What is kept of one file.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// The format: an index into the cache's formats.
    format: u32,
    /// Size and modification time (ns since the epoch) when read.
    size: u64,
    modified: Option<u64>,
    /// A hash of the last bytes of the whole lines, to tell a grown file from a rewritten one.
    fingerprint: u64,
    summary: FileSummary,
}

/// What the cache knows of a file now.
pub enum Lookup<'a> {
    /// The same file: what it holds.
    Same(&'a FileSummary),
    /// The same file with more appended: what it held, and the offset to read on from.
    Grown(&'a FileSummary, u64),
    /// Unknown, or changed: read it whole.
    Unknown,
}

/// The files the cache knows, by canonical path (what lookups read).
#[derive(Debug, Default)]
pub struct KnownFiles {
    formats: Vec<String>,
    entries: HashMap<OsString, FileEntry, PathHasher>,
}

impl KnownFiles {
    /// What is known of `file` for `format`, when that needs no read: the same file, or one
    /// certainly not known (`None` when it may have grown).
    pub fn lookup_now(&self, format: &str, file: &SourceFile) -> Option<Lookup<'_>> {
        let Some(entry) = self.entry(format, file) else { return Some(Lookup::Unknown) };
        if entry.size == file.size && entry.modified == file.modified && file.modified.is_some() {
            return Some(Lookup::Same(&entry.summary));
        }
        if file.size <= entry.size || entry.summary.complete_bytes == 0 {
            return Some(Lookup::Unknown);
        }
        None
    }

    /// What is known of `file` for `format`; a grown file is recognised by its fingerprint.
    pub async fn lookup(&self, store: &Arc<dyn ObjectStore>, format: &str, file: &SourceFile) -> Lookup<'_> {
        if let Some(known) = self.lookup_now(format, file) {
            return known;
        }
        let Some(entry) = self.entry(format, file) else { return Lookup::Unknown };
        let complete = entry.summary.complete_bytes;
        match fingerprint(store, file, complete).await {
            Some(now) if now == entry.fingerprint => Lookup::Grown(&entry.summary, complete),
            _ => Lookup::Unknown,
        }
    }

    fn entry(&self, format: &str, file: &SourceFile) -> Option<&FileEntry> {
        self.entries
            .get(file.canonical.as_os_str())
            .filter(|e| self.formats.get(e.format as usize).is_some_and(|f| f == format))
    }
}

/// The cache, loaded from and saved to one file.
#[derive(Debug, Default)]
pub struct InferenceCache {
    path: Option<PathBuf>,
    known: KnownFiles,
    /// The shapes the known files name, and those of files read since.
    shapes: ShapeTable,
    changed: bool,
}

impl InferenceCache {
    /// A cache that remembers nothing (but still numbers the shapes of the files read).
    pub fn disabled() -> Self {
        Self::default()
    }

    /// Whether what is read is remembered.
    pub fn is_enabled(&self) -> bool {
        self.path.is_some()
    }

    /// The cache in `dir` for the directories `roots` (created when saved): one file per set of
    /// roots, so that a large corpus never slows down the start over a small one. An unreadable or
    /// outdated file is started afresh.
    pub fn load(dir: &Path, roots: &[PathBuf]) -> Self {
        // Named after the directories themselves: `.` in two projects is two caches.
        let mut roots: Vec<PathBuf> =
            roots.iter().map(|root| std::fs::canonicalize(root).unwrap_or_else(|_| root.clone())).collect();
        roots.sort();
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&roots, &mut hasher);
        let path = dir.join(format!("inference-v{VERSION}-{:016x}.bin", std::hash::Hasher::finish(&hasher)));
        let mut shapes = ShapeTable::default();
        let known = std::fs::read(&path)
            .ok()
            .and_then(|bytes| layout::decode(&bytes, &mut shapes))
            .map(|d| KnownFiles { formats: d.formats, entries: d.entries })
            .unwrap_or_else(|| {
                shapes = ShapeTable::default();
                KnownFiles::default()
            });
        Self { path: Some(path), known, shapes, changed: false }
    }

    /// The default place: `$TXQ_CACHE_DIR`, else the user's cache directory (`~/.cache/txq`).
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("TXQ_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("txq")))
    }

    /// The files known (for lookups) and the shapes (for numbering what is read meanwhile).
    pub fn parts(&mut self) -> (&KnownFiles, &mut ShapeTable) {
        (&self.known, &mut self.shapes)
    }

    pub fn shapes(&self) -> &ShapeTable {
        &self.shapes
    }

    /// Remembers what a read of `file` found (its shapes numbered in this cache's table), with
    /// the fingerprint of its whole lines' last bytes.
    pub fn remember(&mut self, format: &str, file: &SourceFile, fingerprint: u64, summary: FileSummary) {
        if self.path.is_none() {
            return;
        }
        let known = &mut self.known;
        let format = match known.formats.iter().position(|f| f == format) {
            Some(at) => at,
            None => {
                known.formats.push(format.to_string());
                known.formats.len() - 1
            }
        } as u32;
        let entry = FileEntry { format, size: file.size, modified: file.modified, fingerprint, summary };
        known.entries.insert(file.canonical.clone().into_os_string(), entry);
        self.changed = true;
    }

    /// Forgets every file but `files` (the canonical paths this corpus holds now): deleted or
    /// moved files leave the cache.
    pub fn retain(&mut self, files: &std::collections::HashSet<&OsStr, PathHasher>) {
        let before = self.known.entries.len();
        self.known.entries.retain(|path, _| files.contains(path.as_os_str()));
        self.changed |= self.known.entries.len() != before;
    }

    /// Writes the cache if anything changed: to a temporary file, renamed into place. A cache that
    /// cannot be written is not an error; the next query reads the files again.
    pub fn save(&self) -> Result<(), String> {
        let (Some(path), true) = (&self.path, self.changed) else { return Ok(()) };
        let dir = path.parent().unwrap_or(Path::new("."));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let tmp = dir.join(format!("inference-v{VERSION}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, layout::encode(&self.known.formats, &self.shapes, &self.known.entries))?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| format!("{}: cache not saved: {e}", crate::escape::path(path)))?;
        remove_older_layouts(dir);
        Ok(())
    }
}

/// Removes the cache files of older layouts from `dir` (no txq reads them again); a newer
/// txq's are left alone.
fn remove_older_layouts(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        // `inference-v4-<hash>.json`, or a temporary file `inference-v4.<pid>.tmp` left behind.
        let version = name.to_str().and_then(|n| n.strip_prefix("inference-v")).and_then(|rest| {
            let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            rest[..digits].parse::<u32>().ok()
        });
        if version.is_some_and(|v| v < VERSION) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A hash (64-bit FNV-1a: the same in every build) of the last bytes before `complete`.
pub async fn fingerprint(store: &Arc<dyn ObjectStore>, file: &SourceFile, complete: u64) -> Option<u64> {
    let bytes = match complete {
        0 => bytes::Bytes::new(),
        _ => {
            let reader = BlockReader::open(store.clone(), file).ok()?;
            reader.read_range(complete.saturating_sub(FINGERPRINT_BYTES)..complete).await.ok()?
        }
    };
    Some(
        bytes
            .iter()
            .fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)),
    )
}
