//! An archive made readable: its lines written back, at their offsets, into files of their
//! archived paths below a folder of txq's cache (`<cache>/archives/<hash of the place>/tree/
//! <machine>/file/<path>`), so that the one scan reads them as it reads live transcripts. Only
//! the parts not restored before are read (a state file names them); a file archived again from
//! its start (a new generation) has the tree rebuilt. The tree is locked while it changes and
//! shared while it is read; a reading that finds it changing restores into a folder of its own.

use super::{MANIFEST_FILE, Manifest};
use crate::error::Error;
use crate::source::remote::{RemotePath, is_remote, registry, short};
use crate::source::restored::{plain_name, restored_path};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The state file of a restored tree: what of the archive it holds.
const STATE_FILE: &str = "state.json";

/// An archive restored for a reading: the folder of each of its machines, held (a shared lock,
/// or a folder of its own) until the reading ends.
pub(crate) struct RestoredArchive {
    /// The folder the machines' folders are in.
    pub(crate) root: PathBuf,
    /// Each machine of the archive and its folder below `root`.
    pub(crate) machines: Vec<(String, PathBuf)>,
    /// Problems with single rows or files, each costing only itself.
    pub(crate) warnings: Vec<String>,
    _hold: Hold,
}

enum Hold {
    /// A shared lock on the cache's tree: no other reading rebuilds it meanwhile.
    Shared(#[allow(dead_code)] std::fs::File),
    /// A folder of this reading's own, removed when it ends.
    Private(#[allow(dead_code)] tempfile::TempDir),
}

impl std::fmt::Debug for RestoredArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestoredArchive").field("root", &self.root).field("machines", &self.machines).finish()
    }
}

/// What a restored tree holds: the parts written into it, and the generation of each file then.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    parts: Vec<String>,
    generations: BTreeMap<String, u64>,
}

/// A file's name in [`State::generations`].
fn state_key(machine: &str, path: &str) -> String {
    format!("{machine}\n{}", plain_name(path))
}

/// Where an archive's manifest and parts are read from.
enum Place {
    Local(PathBuf),
    Store { store: std::sync::Arc<dyn object_store::ObjectStore>, prefix: object_store::path::Path },
}

impl Place {
    /// The manifest of the archive at `place`, when it is one.
    async fn manifest(&self) -> Option<Vec<u8>> {
        match self {
            Place::Local(folder) => std::fs::read(folder.join(MANIFEST_FILE)).ok(),
            // A store that cannot give the manifest (none there, keys refused, no answer) is
            // taken for a place of transcripts: its listing, next, says what is wrong with it.
            Place::Store { store, prefix } => match store.get(&prefix.clone().join(MANIFEST_FILE)).await {
                Ok(got) => got.bytes().await.ok().map(|b| b.to_vec()),
                Err(_) => None,
            },
        }
    }

    /// A part as a file of this machine (a store's downloaded into `scratch`).
    async fn part(&self, relative: &str, scratch: &Path, shown: &Path) -> Result<std::fs::File, Error> {
        let why = |e: String| Error::Input {
            file: format!("{}/{relative}", crate::text::escape::path(shown)),
            why: e,
        };
        match self {
            Place::Local(folder) => {
                let path = relative.split('/').fold(folder.clone(), |p, part| p.join(part));
                std::fs::File::open(&path).map_err(|e| why(e.to_string()))
            }
            Place::Store { store, prefix } => {
                let key = relative.split('/').fold(prefix.clone(), |key, part| key.join(part));
                let bytes = store
                    .get(&key)
                    .await
                    .map_err(|e| why(short(&e)))?
                    .bytes()
                    .await
                    .map_err(|e| why(short(&e)))?;
                let mut file = tempfile::tempfile_in(scratch).map_err(|e| why(e.to_string()))?;
                file.write_all(&bytes).map_err(|e| why(e.to_string()))?;
                file.seek(SeekFrom::Start(0)).map_err(|e| why(e.to_string()))?;
                Ok(file)
            }
        }
    }
}

/// The archive at `place` (a folder, or a store's prefix, holding `_txq_archive.json`) restored
/// below `cache` (`None`: into a folder of this reading's own); `None` when `place` is no archive.
pub(crate) async fn restore(place: &Path, cache: Option<&Path>) -> Result<Option<RestoredArchive>, Error> {
    let source = if is_remote(place) {
        // A place that names no store, or one txq cannot open, is no archive: reading it as
        // transcripts says what is wrong with it.
        let Ok(remote) = RemotePath::parse(place) else { return Ok(None) };
        let Ok(store) = registry().store(&remote.store) else { return Ok(None) };
        Place::Store { store, prefix: remote.key }
    } else {
        if !place.is_dir() {
            return Ok(None);
        }
        Place::Local(place.to_path_buf())
    };
    let Some(text) = source.manifest().await else { return Ok(None) };
    let manifest = Manifest::parse(&text, &crate::text::escape::path(place))?;
    let shown = if is_remote(place) {
        place.to_path_buf()
    } else {
        std::fs::canonicalize(place).unwrap_or(place.to_path_buf())
    };
    if let Some(cache) = cache {
        let folder = cache
            .join("archives")
            .join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(shown.as_os_str().as_encoded_bytes())));
        std::fs::create_dir_all(&folder).map_err(|e| Error::Write { path: folder.clone(), source: e })?;
        let lock = open_lock(&folder.join(".lock"))?;
        flock(&lock, libc::LOCK_SH, true);
        let tree = folder.join("tree");
        let state = read_state(&folder);
        if up_to_date(&state, &manifest) && tree.is_dir() {
            return Ok(Some(restored(tree, &manifest, Vec::new(), Hold::Shared(lock))));
        }
        // Changes: made under the exclusive lock, else (another reading holds the tree) in a
        // folder of this reading's own.
        if flock(&lock, libc::LOCK_EX, false) {
            let mut state = read_state(&folder);
            // No state while the tree changes: a reading cut short leaves none, and the next
            // one rebuilds the tree rather than trust it.
            let gone = std::fs::remove_file(folder.join(STATE_FILE));
            if gone.as_ref().is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound) {
                state = State::default();
            }
            let warnings = update(&source, &manifest, &mut state, &tree, &folder, &shown).await?;
            write_state(&folder, &state)?;
            flock(&lock, libc::LOCK_SH, true);
            return Ok(Some(restored(tree, &manifest, warnings, Hold::Shared(lock))));
        }
    }
    let own = tempfile::Builder::new()
        .prefix("txq-archive-")
        .tempdir()
        .map_err(|e| Error::Write { path: std::env::temp_dir(), source: e })?;
    let tree = own.path().join("tree");
    let warnings = update(&source, &manifest, &mut State::default(), &tree, own.path(), &shown).await?;
    Ok(Some(restored(tree, &manifest, warnings, Hold::Private(own))))
}

fn restored(tree: PathBuf, manifest: &Manifest, warnings: Vec<String>, hold: Hold) -> RestoredArchive {
    let machines =
        manifest.machines.iter().enumerate().map(|(i, m)| (m.clone(), tree.join(i.to_string()))).collect();
    RestoredArchive { root: tree, machines, warnings, _hold: hold }
}

/// Whether the tree of `state` holds every part of `manifest`, each file at its generation.
fn up_to_date(state: &State, manifest: &Manifest) -> bool {
    let applied: HashSet<&str> = state.parts.iter().map(String::as_str).collect();
    manifest.parts.iter().all(|p| applied.contains(p.path.as_str()))
        && manifest
            .files
            .iter()
            .all(|f| state.generations.get(&state_key(&f.machine, &f.path)) == Some(&f.generation))
}

fn read_state(folder: &Path) -> State {
    std::fs::read(folder.join(STATE_FILE))
        .ok()
        .and_then(|t| serde_json::from_slice(&t).ok())
        .unwrap_or_default()
}

fn write_state(folder: &Path, state: &State) -> Result<(), Error> {
    let partial = folder.join(format!("{STATE_FILE}.partial"));
    let text =
        serde_json::to_vec(state).map_err(|e| Error::Write { path: partial.clone(), source: e.into() })?;
    std::fs::write(&partial, text).map_err(|e| Error::Write { path: partial.clone(), source: e })?;
    std::fs::rename(&partial, folder.join(STATE_FILE))
        .map_err(|e| Error::Write { path: folder.join(STATE_FILE), source: e })
}

/// Brings `tree` to `manifest`: the parts `state` has not applied written in (all of them, into
/// an emptied tree, when a file's generation changed or a part applied is gone).
async fn update(
    source: &Place,
    manifest: &Manifest,
    state: &mut State,
    tree: &Path,
    scratch: &Path,
    shown: &Path,
) -> Result<Vec<String>, Error> {
    let names: HashSet<&str> = manifest.parts.iter().map(|p| p.path.as_str()).collect();
    let rebuild = state.parts.iter().any(|p| !names.contains(p.as_str()))
        || manifest.files.iter().any(|f| {
            state.generations.get(&state_key(&f.machine, &f.path)).is_some_and(|&g| g != f.generation)
        });
    // A tree of no known state (new, or left by a reading cut short) is made anew.
    if rebuild || state.parts.is_empty() || !tree.is_dir() {
        if tree.exists() {
            std::fs::remove_dir_all(tree)
                .map_err(|e| Error::Write { path: tree.to_path_buf(), source: e })?;
        }
        *state = State::default();
    }
    std::fs::create_dir_all(tree).map_err(|e| Error::Write { path: tree.to_path_buf(), source: e })?;
    // Each file of the manifest: its generation, and where it is restored.
    let machine_index: HashMap<&str, usize> =
        manifest.machines.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let mut files: HashMap<(String, String), Restoring> = HashMap::new();
    let mut warnings = Vec::new();
    for f in &manifest.files {
        let target = machine_index
            .get(f.machine.as_str())
            .and_then(|&i| restored_path(&tree.join(i.to_string()), plain_name(&f.path)));
        if target.is_none() {
            warnings.push(format!(
                "{}: {}: not restored: a path or machine that is not one of the archive's",
                crate::text::escape::path(shown),
                crate::text::escape::message(&f.path)
            ));
        }
        files.insert(
            (f.machine.clone(), plain_name(&f.path).to_string()),
            Restoring { generation: f.generation, bytes: f.bytes, target },
        );
    }
    let applied: HashSet<String> = state.parts.iter().cloned().collect();
    let mut writer = LineWriter::default();
    for part in manifest.parts.iter().filter(|p| !applied.contains(&p.path)) {
        // A part that cannot be read costs its own lines, told, and is tried again next time.
        match restore_part(source, &part.path, scratch, shown, &files, &mut writer).await {
            Ok(()) => state.parts.push(part.path.clone()),
            Err(e) => warnings.push(format!("{e}; its lines are left out of this reading")),
        }
        writer.close()?;
    }
    writer.close()?;
    state.generations =
        manifest.files.iter().map(|f| (state_key(&f.machine, &f.path), f.generation)).collect();
    Ok(warnings)
}

/// A file of the manifest as it is restored: its current generation, the bytes archived of it,
/// and where it goes (`None`: a path that would leave the tree).
struct Restoring {
    generation: u64,
    bytes: u64,
    target: Option<PathBuf>,
}

/// Writes the lines of the part at `relative` of its files' current generations into `writer`.
async fn restore_part(
    source: &Place,
    relative: &str,
    scratch: &Path,
    shown: &Path,
    files: &HashMap<(String, String), Restoring>,
    writer: &mut LineWriter,
) -> Result<(), Error> {
    let file = source.part(relative, scratch, shown).await?;
    let bad =
        |e: String| Error::Input { file: format!("{}/{relative}", crate::text::escape::path(shown)), why: e };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| bad(e.to_string()))?;
    let wanted = ["machine", "file", "generation", "offset", "json", "raw"];
    let schema = builder.parquet_schema();
    let indices: Vec<usize> =
        (0..schema.num_columns()).filter(|&i| wanted.contains(&schema.column(i).name())).collect();
    let mask = ProjectionMask::leaves(schema, indices);
    let reader =
        builder.with_projection(mask).with_batch_size(8192).build().map_err(|e| bad(e.to_string()))?;
    for batch in reader {
        let batch = batch.map_err(|e| bad(e.to_string()))?;
        let column = |name: &str| batch.column_by_name(name).ok_or_else(|| bad(format!("no column {name}")));
        let wrong = |name: &str| bad(format!("column {name} of another type"));
        let machine = column("machine")?.as_string_opt::<i32>().ok_or_else(|| wrong("machine"))?;
        let path = column("file")?.as_string_opt::<i32>().ok_or_else(|| wrong("file"))?;
        let generation =
            column("generation")?.as_primitive_opt::<Int64Type>().ok_or_else(|| wrong("generation"))?;
        let offset = column("offset")?.as_primitive_opt::<Int64Type>().ok_or_else(|| wrong("offset"))?;
        let json = column("json")?.as_string_opt::<i32>().ok_or_else(|| wrong("json"))?;
        let raw = column("raw")?.as_binary_opt::<i32>().ok_or_else(|| wrong("raw"))?;
        for row in 0..batch.num_rows() {
            let key = (machine.value(row).to_string(), plain_name(path.value(row)).to_string());
            let Some(Restoring { generation: current, bytes, target: Some(target) }) = files.get(&key) else {
                continue;
            };
            let line = match json.is_null(row) {
                false => json.value(row).as_bytes(),
                true => raw.value(row),
            };
            // A row of another generation, or past what the manifest says is archived of its
            // file (nothing a run writes; a hand-made part could), is not the file's.
            let within = u64::try_from(offset.value(row)).is_ok_and(|o| o + line.len() as u64 <= *bytes);
            if generation.value(row) as u64 != *current || !within {
                continue;
            }
            writer.write(target, offset.value(row) as u64, line)?;
        }
    }
    Ok(())
}

/// Writes lines at their offsets, into one file at a time.
#[derive(Default)]
struct LineWriter {
    open: Option<(PathBuf, std::io::BufWriter<std::fs::File>, u64)>,
}

impl LineWriter {
    fn write(&mut self, target: &Path, offset: u64, line: &[u8]) -> Result<(), Error> {
        let io = |e: std::io::Error| Error::Write { path: target.to_path_buf(), source: e };
        if self.open.as_ref().is_none_or(|(path, _, _)| path != target) {
            self.close()?;
            if let Some(folder) = target.parent() {
                std::fs::create_dir_all(folder).map_err(io)?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(target)
                .map_err(io)?;
            self.open =
                Some((target.to_path_buf(), std::io::BufWriter::with_capacity(1 << 20, file), u64::MAX));
        }
        let (_, out, at) = self.open.as_mut().expect("opened above");
        if *at != offset {
            out.seek(SeekFrom::Start(offset)).map_err(io)?;
        }
        out.write_all(line).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        *at = offset + line.len() as u64 + 1;
        Ok(())
    }

    fn close(&mut self) -> Result<(), Error> {
        if let Some((path, mut out, _)) = self.open.take() {
            out.flush().map_err(|e| Error::Write { path, source: e })?;
        }
        Ok(())
    }
}

fn open_lock(path: &Path) -> Result<std::fs::File, Error> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::Write { path: path.to_path_buf(), source: e })
}

/// Takes `how` (`LOCK_SH`, `LOCK_EX`) on `file`, waiting for it when `wait`: whether it was taken.
fn flock(file: &std::fs::File, how: libc::c_int, wait: bool) -> bool {
    use std::os::fd::AsRawFd;
    let how = if wait { how } else { how | libc::LOCK_NB };
    // SAFETY: flock on a descriptor the caller owns; the lock goes with the file.
    unsafe { libc::flock(file.as_raw_fd(), how) == 0 }
}
