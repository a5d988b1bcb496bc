//! The inference cache: what the inference pass learned about each file, kept on disk so that the
//! next query over the same files reads none of them twice, and over a grown file reads only what
//! was appended (transcripts are append-only).

use crate::discover::SourceFile;
use crate::infer::{FieldShapes, FileStats, Shapes, TypeStats};
use crate::read::BlockReader;
use object_store::ObjectStore;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes before the end of the whole lines kept to recognise the same file grown.
const FINGERPRINT_BYTES: u64 = 64;

/// The start of the cache files' names; a new layout gets a new name.
const FILE_NAME: &str = "inference-v3";

/// The cache file: each type's field list once, and per file only numbers that point into it.
/// (Most files of a corpus share their field lists: writing them per file made the cache tens of
/// megabytes, and reading it the slowest part of a query's start.)
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    /// Every distinct (type, fields) met.
    shapes: Vec<TypeShape>,
    files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct TypeShape {
    name: String,
    /// Each field's key and its shapes' bits.
    fields: Vec<(String, u8)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileEntry {
    path: PathBuf,
    format: String,
    size: u64,
    modified: Option<u64>,
    /// A hash of the last bytes of the whole lines, to tell a grown file from a rewritten one.
    fingerprint: u64,
    /// Index into `shapes`, and the events of that type, in the whole lines and in the tail.
    types: Vec<(u32, u64)>,
    tail_types: Vec<(u32, u64)>,
    complete_bytes: u64,
    damaged_lines: u64,
    lines: u64,
    lost_start: bool,
    max_line_bytes: usize,
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
    /// The type shapes, each with its field list ready to share among files' stats.
    shapes: Vec<(TypeShape, Arc<FieldShapes>)>,
    shape_index: HashMap<TypeShape, u32>,
    entries: HashMap<PathBuf, FileEntry>,
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
        let file: CacheFile = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .filter(CacheFile::is_consistent)
            .unwrap_or_default();
        let shapes: Vec<(TypeShape, Arc<FieldShapes>)> = file
            .shapes
            .into_iter()
            .map(|shape| {
                let fields =
                    shape.fields.iter().map(|(k, bits)| (k.clone(), Shapes::from_bits(*bits))).collect();
                (shape, Arc::new(fields))
            })
            .collect();
        let shape_index =
            shapes.iter().enumerate().map(|(i, (shape, _))| (shape.clone(), i as u32)).collect();
        let entries = file.files.into_iter().map(|entry| (entry.path.clone(), entry)).collect();
        Self { path: Some(path), shapes, shape_index, entries, changed: false }
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
            return Lookup::Same(self.stats(entry));
        }
        let complete = entry.complete_bytes;
        if file.size <= entry.size || complete == 0 {
            return Lookup::Unknown;
        }
        match fingerprint(store, file, complete).await {
            Some(now) if now == entry.fingerprint => Lookup::Grown(self.stats(entry), complete),
            _ => Lookup::Unknown,
        }
    }

    /// The stats an entry stands for, sharing the field lists.
    fn stats(&self, entry: &FileEntry) -> FileStats {
        let types = |list: &[(u32, u64)]| -> BTreeMap<String, TypeStats> {
            list.iter()
                .map(|&(shape, events)| {
                    let (shape, fields) = &self.shapes[shape as usize];
                    (shape.name.clone(), TypeStats { events, fields: fields.clone() })
                })
                .collect()
        };
        FileStats {
            types: types(&entry.types),
            tail_types: types(&entry.tail_types),
            complete_bytes: entry.complete_bytes,
            damaged_lines: entry.damaged_lines,
            lines: entry.lines,
            lost_start: entry.lost_start,
            max_line_bytes: entry.max_line_bytes,
            unreadable: None,
        }
    }

    /// The index of a type's shape, added when new.
    fn shape(&mut self, name: &str, stats: &TypeStats) -> u32 {
        let shape = TypeShape {
            name: name.to_string(),
            fields: stats.fields.iter().map(|(k, shapes)| (k.clone(), shapes.bits())).collect(),
        };
        if let Some(&index) = self.shape_index.get(&shape) {
            return index;
        }
        let index = self.shapes.len() as u32;
        self.shapes.push((shape.clone(), stats.fields.clone()));
        self.shape_index.insert(shape, index);
        index
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
        let mut types = |map: &BTreeMap<String, TypeStats>| -> Vec<(u32, u64)> {
            map.iter().map(|(name, stats)| (self.shape(name, stats), stats.events)).collect()
        };
        let entry = FileEntry {
            path: file.canonical.clone(),
            format: format.to_string(),
            size: file.size,
            modified: file.modified,
            fingerprint,
            types: types(&stats.types),
            tail_types: types(&stats.tail_types),
            complete_bytes: stats.complete_bytes,
            damaged_lines: stats.damaged_lines,
            lines: stats.lines,
            lost_start: stats.lost_start,
            max_line_bytes: stats.max_line_bytes,
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

    /// The cache as written: the shapes the kept files use, renumbered in order.
    fn to_file(&self) -> CacheFile {
        let mut renumber: HashMap<u32, u32> = HashMap::new();
        let mut shapes = Vec::new();
        let mut files: Vec<FileEntry> = self.entries.values().cloned().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        for entry in &mut files {
            for (shape, _) in entry.types.iter_mut().chain(entry.tail_types.iter_mut()) {
                *shape = *renumber.entry(*shape).or_insert_with(|| {
                    shapes.push(self.shapes[*shape as usize].0.clone());
                    shapes.len() as u32 - 1
                });
            }
        }
        CacheFile { shapes, files }
    }

    /// Writes the cache if anything changed: to a temporary file, renamed into place. A cache that
    /// cannot be written is not an error; the next query reads the files again.
    pub fn save(&self) -> Result<(), String> {
        let (Some(path), true) = (&self.path, self.changed) else { return Ok(()) };
        let dir = path.parent().unwrap_or(Path::new("."));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let tmp = dir.join(format!("{FILE_NAME}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(&self.to_file())?)?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| format!("{}: cache not saved: {e}", path.display()))
    }
}

/// A hash (64-bit FNV-1a: the same in every build) of the last bytes before `complete`.
async fn fingerprint(store: &Arc<dyn ObjectStore>, file: &SourceFile, complete: u64) -> Option<u64> {
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

impl CacheFile {
    /// Whether every shape a file names is there (else the file is not ours, or damaged).
    fn is_consistent(&self) -> bool {
        let known = self.shapes.len() as u64;
        self.files
            .iter()
            .flat_map(|f| f.types.iter().chain(&f.tail_types))
            .all(|(s, _)| u64::from(*s) < known)
    }
}
