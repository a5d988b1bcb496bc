//! The inference cache: what the inference pass learned about each file, kept on disk so that the
//! next query over the same files reads none of them twice, and over a grown file reads only what
//! was appended (transcripts are append-only).

use crate::discover::SourceFile;
use crate::infer::FileStats;
use crate::read::BlockReader;
use object_store::ObjectStore;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes before the end of the whole lines kept to recognise the same file grown.
const FINGERPRINT_BYTES: u64 = 64;

/// The start of the cache files' names; a new layout gets a new name.
const FILE_NAME: &str = "inference-v2";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    format: String,
    size: u64,
    modified: Option<u64>,
    /// The last bytes of the whole lines, to tell a grown file from a rewritten one.
    fingerprint: Vec<u8>,
    stats: FileStats,
}

/// What the cache knows of a file now.
pub enum Lookup {
    /// The same file: its stats.
    Same(FileStats),
    /// The same file with more appended: its stats so far, and the offset to read on from.
    Grown(FileStats, u64),
    /// Unknown, or changed: read it whole.
    Unknown,
}

/// The cache, loaded from and saved to one file.
#[derive(Debug, Default)]
pub struct InferenceCache {
    path: Option<PathBuf>,
    entries: HashMap<PathBuf, Entry>,
    changed: bool,
}

impl InferenceCache {
    /// A cache that remembers nothing.
    pub fn disabled() -> Self {
        Self::default()
    }

    /// The cache in `dir` for the directories `roots` (created when saved): one file per set of
    /// roots, so that a large corpus never slows down the start over a small one. An unreadable or
    /// outdated file is started afresh.
    pub fn load(dir: &Path, roots: &[PathBuf]) -> Self {
        let mut roots: Vec<&PathBuf> = roots.iter().collect();
        roots.sort();
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&roots, &mut hasher);
        let path = dir.join(format!("{FILE_NAME}-{:016x}.json", std::hash::Hasher::finish(&hasher)));
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Self { path: Some(path), entries, changed: false }
    }

    /// The default place: `$TXQ_CACHE_DIR`, else the user's cache directory (`~/.cache/txq`).
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("TXQ_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("txq")))
    }

    /// What is known of `file` for `format`; a grown file is recognised by its fingerprint.
    pub async fn lookup(&self, store: &Arc<dyn ObjectStore>, format: &str, file: &SourceFile) -> Lookup {
        let Some(entry) = self.entries.get(&file.canonical).filter(|e| e.format == format) else {
            return Lookup::Unknown;
        };
        if entry.size == file.size && entry.modified == file.modified && file.modified.is_some() {
            return Lookup::Same(entry.stats.clone());
        }
        let complete = entry.stats.complete_bytes;
        if file.size <= entry.size || complete == 0 {
            return Lookup::Unknown;
        }
        match fingerprint(store, file, complete).await {
            Some(now) if now == entry.fingerprint => Lookup::Grown(entry.stats.clone(), complete),
            _ => Lookup::Unknown,
        }
    }

    /// Remembers what a read of `file` found.
    pub async fn remember(
        &mut self,
        store: &Arc<dyn ObjectStore>,
        format: &str,
        file: &SourceFile,
        stats: &FileStats,
    ) {
        if self.path.is_none() || stats.unreadable.is_some() {
            return;
        }
        let Some(fingerprint) = fingerprint(store, file, stats.complete_bytes).await else { return };
        let entry = Entry {
            format: format.to_string(),
            size: file.size,
            modified: file.modified,
            fingerprint,
            stats: stats.clone(),
        };
        self.entries.insert(file.canonical.clone(), entry);
        self.changed = true;
    }

    /// Forgets every file but `files` (the ones this corpus holds now): deleted or moved files
    /// leave the cache.
    pub fn retain(&mut self, files: &std::collections::HashSet<&Path>) {
        let before = self.entries.len();
        self.entries.retain(|path, _| files.contains(path.as_path()));
        self.changed |= self.entries.len() != before;
    }

    /// Writes the cache if anything changed: to a temporary file, renamed into place. A cache that
    /// cannot be written is not an error; the next query reads the files again.
    pub fn save(&self) -> Result<(), String> {
        let (Some(path), true) = (&self.path, self.changed) else { return Ok(()) };
        let dir = path.parent().unwrap_or(Path::new("."));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let tmp = dir.join(format!("{FILE_NAME}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(&self.entries)?)?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| format!("{}: cache not saved: {e}", path.display()))
    }
}

/// The last bytes before `complete`.
async fn fingerprint(store: &Arc<dyn ObjectStore>, file: &SourceFile, complete: u64) -> Option<Vec<u8>> {
    let reader = BlockReader::open(store.clone(), file).ok()?;
    let start = complete.saturating_sub(FINGERPRINT_BYTES);
    if complete == 0 {
        return Some(Vec::new());
    }
    reader.read_range(start..complete).await.ok().map(|b| b.to_vec())
}
