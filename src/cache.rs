//! The inference cache: what the inference pass learned about each file, kept on disk so that the
//! next query over the same files reads none of them twice, and over a grown file reads only what
//! was appended (transcripts are append-only).

use crate::discover::SourceFile;
use crate::infer::Shapes;
use crate::read::BlockReader;
use crate::shapes::{FileSummary, ShapeId, ShapeTable, TypeShape};
use object_store::ObjectStore;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes before the end of the whole lines kept to recognise the same file grown.
const FINGERPRINT_BYTES: u64 = 64;

/// The start of the cache files' names; a new layout gets a new name.
const FILE_NAME: &str = "inference-v4";

/// The cache file: each type's field list, format and directory once, and per file a row of
/// numbers that point into them. (Most files of a corpus share their field lists and directory:
/// written per file, they made the cache tens of megabytes, and reading it the slowest part of a
/// query's start.)
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    /// Every distinct (type, fields) met.
    shapes: Vec<DiskShape>,
    formats: Vec<String>,
    dirs: Vec<String>,
    files: Vec<Row>,
}

#[derive(Debug, Serialize, Deserialize)]
struct DiskShape {
    name: String,
    /// Each field's key and its shapes' bits.
    fields: Vec<(String, u8)>,
}

/// One file, written as a JSON array (no key names repeated for every file).
#[derive(Debug, Serialize, Deserialize)]
struct Row(
    /// Its directory: an index into `dirs`.
    u32,
    /// Its name in that directory.
    String,
    FileEntry,
);

/// What is kept of one file, in memory and (as an array) on disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileEntry(
    /// The format: an index into `formats`.
    u32,
    /// Size and modification time (ns since the epoch) when read.
    u64,
    Option<u64>,
    /// A hash of the last bytes of the whole lines, to tell a grown file from a rewritten one.
    u64,
    /// The types of the whole lines and of the tail: an index into `shapes` and the events.
    Vec<(u32, u64)>,
    Vec<(u32, u64)>,
    /// `complete_bytes`, `damaged_lines`, `lines`, `lost_start`, `max_line_bytes` of [`FileSummary`].
    u64,
    u64,
    u64,
    bool,
    u64,
);

impl FileEntry {
    fn new(format: u32, file: &SourceFile, fingerprint: u64, summary: &FileSummary) -> FileEntry {
        FileEntry(
            format,
            file.size,
            file.modified,
            fingerprint,
            summary.whole.clone(),
            summary.tail.clone(),
            summary.complete_bytes,
            summary.damaged_lines,
            summary.lines,
            summary.lost_start,
            summary.max_line_bytes,
        )
    }

    fn summary(&self) -> FileSummary {
        let FileEntry(.., ref whole, ref tail, complete_bytes, damaged_lines, lines, lost_start, max_line_bytes) =
            *self;
        FileSummary {
            whole: whole.clone(),
            tail: tail.clone(),
            complete_bytes,
            damaged_lines,
            lines,
            lost_start,
            max_line_bytes,
        }
    }

    fn shape_ids(&mut self) -> impl Iterator<Item = &mut ShapeId> {
        self.4.iter_mut().chain(self.5.iter_mut()).map(|(shape, _)| shape)
    }
}

/// What the cache knows of a file now.
pub enum Lookup {
    /// The same file: what it holds.
    Same(FileSummary),
    /// The same file with more appended: what it held, and the offset to read on from.
    Grown(FileSummary, u64),
    /// Unknown, or changed: read it whole.
    Unknown,
}

/// The files the cache knows, by canonical path (what lookups read).
#[derive(Debug, Default)]
pub struct KnownFiles {
    formats: Vec<String>,
    entries: HashMap<OsString, FileEntry>,
}

impl KnownFiles {
    /// What is known of `file` for `format`; a grown file is recognised by its fingerprint.
    pub async fn lookup(&self, store: &Arc<dyn ObjectStore>, format: &str, file: &SourceFile) -> Lookup {
        let Some(entry) = self
            .entries
            .get(file.canonical.as_os_str())
            .filter(|e| self.formats.get(e.0 as usize).is_some_and(|f| f == format))
        else {
            return Lookup::Unknown;
        };
        let FileEntry(_, size, modified, fingerprint_then, .., complete, _, _, _, _) = *entry;
        if size == file.size && modified == file.modified && file.modified.is_some() {
            return Lookup::Same(entry.summary());
        }
        if file.size <= size || complete == 0 {
            return Lookup::Unknown;
        }
        match fingerprint(store, file, complete).await {
            Some(now) if now == fingerprint_then => Lookup::Grown(entry.summary(), complete),
            _ => Lookup::Unknown,
        }
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
        let mut shapes = ShapeTable::default();
        let renumber: Vec<ShapeId> = file
            .shapes
            .into_iter()
            .map(|shape| {
                let fields =
                    shape.fields.into_iter().map(|(k, bits)| (k, Shapes::from_bits(bits))).collect();
                shapes.intern(TypeShape { name: Arc::from(shape.name), fields: Arc::new(fields) })
            })
            .collect();
        let dirs: Vec<PathBuf> = file.dirs.into_iter().map(PathBuf::from).collect();
        let entries = file
            .files
            .into_iter()
            .map(|Row(dir, name, mut entry)| {
                entry.shape_ids().for_each(|id| *id = renumber[*id as usize]);
                (dirs[dir as usize].join(name).into_os_string(), entry)
            })
            .collect();
        Self { path: Some(path), known: KnownFiles { formats: file.formats, entries }, shapes, changed: false }
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
    pub fn remember(&mut self, format: &str, file: &SourceFile, fingerprint: u64, summary: &FileSummary) {
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
        let entry = FileEntry::new(format, file, fingerprint, summary);
        known.entries.insert(file.canonical.clone().into_os_string(), entry);
        self.changed = true;
    }

    /// Forgets every file but `files` (the canonical paths this corpus holds now): deleted or
    /// moved files leave the cache.
    pub fn retain(&mut self, files: &std::collections::HashSet<&OsStr>) {
        let before = self.known.entries.len();
        self.known.entries.retain(|path, _| files.contains(path.as_os_str()));
        self.changed |= self.known.entries.len() != before;
    }

    /// The cache as written: the shapes the kept files use, renumbered in order, and each
    /// directory once. A path that is not UTF-8 is not kept (JSON holds text).
    fn to_file(&self) -> CacheFile {
        let mut renumber: HashMap<ShapeId, ShapeId> = HashMap::new();
        let mut shapes = Vec::new();
        let mut dirs: Vec<String> = Vec::new();
        let mut dir_index: HashMap<String, u32> = HashMap::new();
        let mut paths: Vec<&OsString> = self.known.entries.keys().collect();
        paths.sort();
        let mut files = Vec::new();
        for path in paths {
            let path = Path::new(path);
            let (Some(dir), Some(name)) =
                (path.parent().and_then(Path::to_str), path.file_name().and_then(|n| n.to_str()))
            else {
                continue;
            };
            let dir = *dir_index.entry(dir.to_string()).or_insert_with(|| {
                dirs.push(dir.to_string());
                dirs.len() as u32 - 1
            });
            let mut entry = self.known.entries[path.as_os_str()].clone();
            for id in entry.shape_ids() {
                if let Some(&renumbered) = renumber.get(id) {
                    *id = renumbered;
                } else if let Some(shape) = self.shapes.get(*id) {
                    shapes.push(DiskShape {
                        name: shape.name.to_string(),
                        fields: shape.fields.iter().map(|(k, s)| (k.clone(), s.bits())).collect(),
                    });
                    renumber.insert(*id, shapes.len() as u32 - 1);
                    *id = shapes.len() as u32 - 1;
                }
            }
            files.push(Row(dir, name.to_string(), entry));
        }
        CacheFile { shapes, formats: self.known.formats.clone(), dirs, files }
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

impl CacheFile {
    /// Whether every index points at something (else the file is not ours, or damaged).
    fn is_consistent(&self) -> bool {
        let shapes = self.shapes.len() as u64;
        self.files.iter().all(|Row(dir, _, entry)| {
            (*dir as usize) < self.dirs.len()
                && (entry.0 as usize) < self.formats.len()
                && entry.4.iter().chain(&entry.5).all(|(s, _)| u64::from(*s) < shapes)
        })
    }
}
