//! An archive run: every transcript of the corpus compared with the manifest (a file found as it
//! was archived is not read; one that grew adds its new lines; one that no longer begins as
//! archived is archived again, its next generation), the new lines written as parts in a staging
//! folder, the parts put in place, and the manifest written last, so that a run cut short leaves
//! the archive of the run before (its leftovers removed by the next run). A run that finds
//! nothing new writes nothing.

use super::{FileRecord, MANIFEST_FILE, Manifest, NO_MONTH, Part, UNTYPED, VERSION, schema};
use crate::error::Error;
use crate::export::paths::{Root, folder_name};
use crate::format::Format;
use crate::source::files::SourceFile;
use crate::source::read::BlockReader;
use crate::source::remote::{RemotePath, is_remote, registry, short};
use crate::table::corpus::Corpus;
use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, Int64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder,
};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use xxhash_rust::xxh3::Xxh3;

/// The folder of a run's parts until they are put in place, inside OUT.
const STAGING: &str = ".txq-archive-staging";
/// Rows a part's columns gather before they are written as a batch.
const BATCH_ROWS: usize = 4096;
/// Bytes of lines a part's columns gather before they are written as a batch.
const BATCH_BYTES: usize = 4 << 20;
/// Bytes of encoded rows all open parts may hold before their row groups are written out.
const BUFFERED_BYTES: usize = 64 << 20;

/// What a run did.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    pub(crate) new_files: u64,
    pub(crate) grown_files: u64,
    pub(crate) rewritten_files: u64,
    pub(crate) unchanged_files: u64,
    pub(crate) lines: u64,
    pub(crate) parts: u64,
    pub(crate) bytes: u64,
    pub(crate) run: Option<u64>,
    pub(crate) warnings: Vec<String>,
}

impl Summary {
    /// One line for stderr.
    pub(crate) fn describe(&self, out: &Path) -> String {
        let out = crate::text::escape::path(out);
        let n = |v: u64| crate::text::number::grouped(v, ',');
        match self.run {
            None => format!("archive {out}: nothing new ({} files as archived)", n(self.unchanged_files)),
            Some(run) => format!(
                "archive {out}: run {run}: {} lines of {} new, {} grown and {} rewritten files in {} parts ({} bytes); {} files as archived",
                n(self.lines),
                n(self.new_files),
                n(self.grown_files),
                n(self.rewritten_files),
                n(self.parts),
                n(self.bytes),
                n(self.unchanged_files)
            ),
        }
    }
}

/// Where a run writes: a folder of this machine, or a prefix of an object store (the parts made
/// in a folder of this machine first, then put there, the manifest last).
enum Target {
    Local { root: Root, _lock: std::fs::File },
    Store { store: Arc<dyn ObjectStore>, prefix: StorePath, staging: tempfile::TempDir },
}

impl Target {
    fn open(out: &Path) -> Result<Target, Error> {
        if is_remote(out) {
            let remote = RemotePath::parse(out)
                .map_err(|why| Error::Usage(format!("--out {}: {why}", out.display())))?;
            let store = registry()
                .store(&remote.store)
                .map_err(|e| Error::Path { path: out.to_path_buf(), why: short(&e) })?;
            let staging =
                tempfile::tempdir().map_err(|e| Error::Write { path: std::env::temp_dir(), source: e })?;
            return Ok(Target::Store { store, prefix: remote.key, staging });
        }
        match std::fs::symlink_metadata(out) {
            Ok(m) if m.is_dir() || (m.file_type().is_symlink() && out.is_dir()) => {}
            Ok(_) => return Err(Error::Path { path: out.to_path_buf(), why: "not a folder".into() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(out)
                .map_err(|e| Error::Write { path: out.to_path_buf(), source: e })?,
            Err(e) => return Err(Error::Path { path: out.to_path_buf(), why: e.to_string() }),
        }
        let root = Root::new(out);
        let lock = lock(&root.join(Path::new(".txq-archive.lock"))?)?;
        Ok(Target::Local { root, _lock: lock })
    }

    /// Where the run's parts are made.
    fn staging(&self) -> Result<PathBuf, Error> {
        match self {
            Target::Local { root, .. } => root.create_dir_all(Path::new(STAGING)),
            Target::Store { staging, .. } => Ok(staging.path().to_path_buf()),
        }
    }

    fn key(prefix: &StorePath, relative: &str) -> StorePath {
        relative.split('/').fold(prefix.clone(), |key, part| key.join(part))
    }

    async fn manifest(&self, out: &Path) -> Result<Option<Manifest>, Error> {
        let place = out.display().to_string();
        let text = match self {
            Target::Local { root, .. } => match std::fs::read(root.join(Path::new(MANIFEST_FILE))?) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(Error::Path { path: out.join(MANIFEST_FILE), why: e.to_string() }),
            },
            Target::Store { store, prefix, .. } => match store.get(&Self::key(prefix, MANIFEST_FILE)).await {
                Ok(got) => got
                    .bytes()
                    .await
                    .map_err(|e| Error::Path { path: out.join(MANIFEST_FILE), why: short(&e) })?
                    .to_vec(),
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(Error::Path { path: out.join(MANIFEST_FILE), why: short(&e) }),
            },
        };
        Manifest::parse(&text, &place).map(Some)
    }

    /// Removes what a run cut short left: its staging folder, and parts the manifest does not name.
    async fn remove_leftovers(&self, manifest: &Manifest, out: &Path) -> Result<(), Error> {
        let named: std::collections::HashSet<&str> = manifest.parts.iter().map(|p| p.path.as_str()).collect();
        let leftover = |relative: &str| {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            name.starts_with("part-") && !named.contains(relative)
        };
        match self {
            Target::Local { root, .. } => {
                root.remove_dir_all(Path::new(STAGING))?;
                for relative in root.files_below(Path::new(""))? {
                    let text = relative.to_string_lossy().replace('\\', "/");
                    if text.starts_with(STAGING) || !text.ends_with(".parquet") || !leftover(&text) {
                        continue;
                    }
                    root.remove_file(&relative)?;
                }
            }
            Target::Store { store, prefix, .. } => {
                let mut listing = store.list(Some(prefix));
                let mut gone = Vec::new();
                while let Some(object) = futures::StreamExt::next(&mut listing).await {
                    let object =
                        object.map_err(|e| Error::Path { path: out.to_path_buf(), why: short(&e) })?;
                    let relative: Vec<&str> = object
                        .location
                        .as_ref()
                        .strip_prefix(prefix.as_ref())
                        .unwrap_or(object.location.as_ref())
                        .split('/')
                        .filter(|p| !p.is_empty())
                        .collect();
                    let relative = relative.join("/");
                    if relative.ends_with(".parquet") && leftover(&relative) {
                        gone.push(object.location);
                    }
                }
                for key in gone {
                    store
                        .delete(&key)
                        .await
                        .map_err(|e| Error::Path { path: out.to_path_buf(), why: short(&e) })?;
                }
            }
        }
        Ok(())
    }

    /// Puts the run's parts in place, then the manifest.
    async fn publish(
        &self,
        staging: &Path,
        parts: &[Part],
        manifest: &Manifest,
        out: &Path,
    ) -> Result<(), Error> {
        let text = serde_json::to_vec(manifest)
            .map_err(|e| Error::Write { path: out.join(MANIFEST_FILE), source: e.into() })?;
        match self {
            Target::Local { root, .. } => {
                let stage = Root::new(staging);
                for part in parts {
                    let relative = Path::new(&part.path);
                    let file = std::fs::File::open(stage.join(relative)?)
                        .map_err(|e| Error::Write { path: out.join(relative), source: e })?;
                    file.sync_all().map_err(|e| Error::Write { path: out.join(relative), source: e })?;
                    stage.rename(relative, root, relative)?;
                }
                let partial = Path::new("_txq_archive.json.partial");
                root.remove_file(partial)?;
                let mut file = root.create_file(partial)?;
                std::io::Write::write_all(&mut file, &text)
                    .map_err(|e| Error::Write { path: out.join(partial), source: e })?;
                file.sync_all().map_err(|e| Error::Write { path: out.join(partial), source: e })?;
                root.rename(partial, root, Path::new(MANIFEST_FILE))?;
                if let Ok(folder) = std::fs::File::open(root.path()) {
                    let _ = folder.sync_all();
                }
                root.remove_dir_all(Path::new(STAGING))?;
            }
            Target::Store { store, prefix, .. } => {
                let io = |e: std::io::Error, path: &str| Error::Write { path: out.join(path), source: e };
                for part in parts {
                    let mut writer =
                        object_store::buffered::BufWriter::new(store.clone(), Self::key(prefix, &part.path));
                    let mut source = tokio::fs::File::open(staging.join(&part.path))
                        .await
                        .map_err(|e| io(e, &part.path))?;
                    tokio::io::copy(&mut source, &mut writer).await.map_err(|e| io(e, &part.path))?;
                    writer.shutdown().await.map_err(|e| io(e, &part.path))?;
                }
                store
                    .put(&Self::key(prefix, MANIFEST_FILE), text.into())
                    .await
                    .map_err(|e| Error::Path { path: out.join(MANIFEST_FILE), why: short(&e) })?;
            }
        }
        Ok(())
    }
}

/// An exclusive lock on `path` (made if missing), held while the file is open: two runs into one
/// archive never write at once.
fn lock(path: &Path) -> Result<std::fs::File, Error> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::Write { path: path.to_path_buf(), source: e })?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this function owns; the lock goes with the file.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(Error::Usage(format!(
                "{}: another txq archive is writing this archive; run again when it is done",
                crate::text::escape::path(path.parent().unwrap_or(path))
            )));
        }
    }
    Ok(file)
}

/// Archives every transcript of `corpus` into `out`.
pub(crate) async fn archive(corpus: &Corpus, out: &Path) -> Result<Summary, Error> {
    let target = Target::open(out)?;
    let here = crate::source::machines::this_machine();
    let mut manifest = target.manifest(out).await?.unwrap_or(Manifest {
        txq_archive: VERSION,
        machine: here.clone(),
        ..Default::default()
    });
    target.remove_leftovers(&manifest, out).await?;
    let run = manifest.runs + 1;
    let staging = target.staging()?;
    let mut parts = Parts::new(staging.clone(), run);
    let mut summary = Summary::default();
    let mut known: HashMap<(String, String), usize> =
        manifest.files.iter().enumerate().map(|(i, f)| (f.key(), i)).collect();
    let out_canonical = std::fs::canonicalize(out).ok();
    // Whether a file's record changed without new lines (a file touched, or compressed in place
    // as Codex CLI does): the manifest is written again, so that it is not read next time.
    let mut records_changed = false;
    for data in &corpus.formats {
        let format = &data.format;
        for file in data.files.iter() {
            let (path, machine) = archived_as(corpus, &file);
            // The archive's own folder, given as a place: nothing of it is a transcript, but never
            // archive the archive.
            if out_canonical.as_ref().is_some_and(|o| file.canonical().starts_with(o)) {
                continue;
            }
            let key = (machine.clone(), crate::source::restored::plain_name(&path).to_string());
            let record = known.get(&key).map(|&i| manifest.files[i].clone());
            if let Some(record) = &record
                && record.size == file.size
                && record.modified == file.modified
                && record.path == path
            {
                summary.unchanged_files += 1;
                continue;
            }
            let mut sink = Sink { parts: &mut parts, format, machine: &machine, path: &path, lines: 0 };
            let (read, rewritten) = match &record {
                Some(record) => match read_lines(corpus, &file, Some(record), &mut sink).await? {
                    Read::Mismatch => {
                        // Archived again from its start, as its next generation.
                        let again = FileRecord {
                            generation: record.generation + 1,
                            ..fresh(&path, format, &machine)
                        };
                        (read_lines(corpus, &file, Some(&again), &mut sink).await?, Some(again))
                    }
                    read => (read, None),
                },
                None => (read_lines(corpus, &file, None, &mut sink).await?, None),
            };
            let added = sink.lines;
            let shown = crate::text::escape::path(&file.path);
            match (read, rewritten) {
                (Read::Unreadable(why), _) => summary.warnings.push(format!("{shown}: not archived: {why}")),
                (Read::Mismatch, _) => {
                    summary.warnings.push(format!("{shown}: not archived: it changed while it was read"))
                }
                (Read::Lines(done), rewritten) => {
                    let mut updated = rewritten
                        .clone()
                        .or(record.clone())
                        .unwrap_or_else(|| fresh(&path, format, &machine));
                    updated.path = path.clone();
                    updated.bytes = done.bytes;
                    updated.hash = done.hash;
                    updated.lines = done.lines;
                    updated.tail_open = done.tail_open;
                    updated.month = done.month.or(updated.month);
                    match &done.damage {
                        None => (updated.size, updated.modified) = (file.size, file.modified),
                        // Read again next time, on from what was read.
                        Some(why) => {
                            (updated.size, updated.modified) = (0, None);
                            summary.warnings.push(format!(
                                "{shown}: archived as far as it could be read ({} lines): {why}",
                                crate::text::number::grouped(done.lines, ',')
                            ));
                        }
                    }
                    match (&record, &rewritten) {
                        (None, _) => summary.new_files += 1,
                        (Some(_), Some(_)) => summary.rewritten_files += 1,
                        (Some(_), None) if added > 0 => summary.grown_files += 1,
                        (Some(_), None) => summary.unchanged_files += 1,
                    }
                    summary.lines += added;
                    if !manifest.machines.contains(&machine) {
                        manifest.machines.push(machine.clone());
                    }
                    records_changed |= record.as_ref() != Some(&updated);
                    match known.get(&key) {
                        Some(&i) => manifest.files[i] = updated,
                        None => {
                            known.insert(key, manifest.files.len());
                            manifest.files.push(updated);
                        }
                    }
                }
            }
            parts.bound_memory()?;
        }
    }
    let written = parts.finish()?;
    if summary.lines == 0 && written.is_empty() {
        // Nothing new: no part, no run; the manifest written again only for records that changed.
        if records_changed {
            target.publish(&staging, &[], &manifest, out).await?;
        } else if let Target::Local { root, .. } = &target {
            root.remove_dir_all(Path::new(STAGING))?;
        }
        return Ok(summary);
    }
    summary.parts = written.len() as u64;
    summary.bytes = written.iter().map(|p| p.bytes).sum();
    summary.run = Some(run);
    manifest.runs = run;
    manifest.machine = here;
    manifest.parts.extend(written.iter().cloned());
    target.publish(&staging, &written, &manifest, out).await?;
    Ok(summary)
}

/// The path and machine a corpus file is archived as: a restored copy of an archived file as
/// the file it was; any other as its canonical path, on its machine.
fn archived_as(corpus: &Corpus, file: &SourceFile) -> (String, String) {
    let machine = corpus.options.machines.of(&file.path).to_string();
    match corpus.options.restored.original_of(&file.path) {
        Some(original) => (original, machine),
        None => (crate::text::escape::path_text(file.canonical()).into_owned(), machine),
    }
}

fn fresh(path: &str, format: &Format, machine: &str) -> FileRecord {
    FileRecord {
        path: path.to_string(),
        format: format.id.to_string(),
        machine: machine.to_string(),
        generation: 0,
        bytes: 0,
        hash: hex(Xxh3::new().digest()),
        lines: 0,
        tail_open: false,
        size: 0,
        modified: None,
        month: None,
    }
}

fn hex(digest: u64) -> String {
    format!("{digest:016x}")
}

/// How a file's read went.
enum Read {
    /// It no longer begins with what was archived of it (rewritten, or cut shorter).
    Mismatch,
    /// It could not be read as far as what was archived of it: nothing of it was archived.
    Unreadable(String),
    /// Its new lines went to the parts; how far it is archived now.
    Lines(Done),
}

struct Done {
    bytes: u64,
    hash: String,
    lines: u64,
    tail_open: bool,
    month: Option<String>,
    /// Why it could not be read to its end, when it could not.
    damage: Option<String>,
}

/// Reads `file` from its start: the bytes `record` archived must be what it begins with, and the
/// whole lines after them go to `sink` (with a last line that has no line end yet when it is a
/// whole JSON object). A file that cannot be read is [`Read::Unreadable`] before any line of it
/// went to `sink`, and a [`Done`] with its `damage` after (what was read stays archived); an
/// error is the archive's own (a part that cannot be written), and ends the run.
async fn read_lines(
    corpus: &Corpus,
    file: &SourceFile,
    record: Option<&FileRecord>,
    sink: &mut Sink<'_>,
) -> Result<Read, Error> {
    let mut reader = match BlockReader::open(corpus.store.clone(), file) {
        Ok(reader) => reader,
        Err(e) => return Ok(Read::Unreadable(e.to_string())),
    };
    let (start, mut line_no, tail_open, generation) =
        record.map_or((0, 0, false, 0), |r| (r.bytes, r.lines, r.tail_open, r.generation));
    let mut month = record.and_then(|r| r.month.clone());
    let mut hasher = Xxh3::new();
    let mut at: u64 = 0; // bytes seen
    let mut pending: Vec<u8> = Vec::new();
    let mut pending_at: u64 = start; // the offset of pending's first byte
    let mut expect_line_end = tail_open;
    let mut damage = None;
    loop {
        let block = match reader.next_block().await {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(e) => {
                damage = Some(short(&e));
                break;
            }
        };
        let mut rest: &[u8] = &block;
        if at < start {
            let take = ((start - at) as usize).min(rest.len());
            hasher.update(&rest[..take]);
            at += take as u64;
            rest = &rest[take..];
            if at == start && record.is_some_and(|r| hex(hasher.digest()) != r.hash) {
                return Ok(Read::Mismatch);
            }
        }
        if rest.is_empty() {
            continue;
        }
        if expect_line_end {
            if rest[0] != b'\n' {
                return Ok(Read::Mismatch);
            }
            hasher.update(&rest[..1]);
            rest = &rest[1..];
            at += 1;
            pending_at = at;
            expect_line_end = false;
        }
        at += rest.len() as u64;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            pending.extend_from_slice(&rest[..end]);
            line_no += 1;
            sink.line(generation, line_no, pending_at, &pending, &mut month)?;
            hasher.update(&pending);
            hasher.update(b"\n");
            pending_at += pending.len() as u64 + 1;
            pending.clear();
            rest = &rest[end + 1..];
        }
        pending.extend_from_slice(rest);
    }
    let damage = damage.or_else(|| reader.damage().map(|why| why.to_string()));
    if at < start || (at == start && record.is_some_and(|r| hex(hasher.digest()) != r.hash)) {
        return Ok(match damage {
            Some(why) => Read::Unreadable(why),
            None => Read::Mismatch,
        });
    }
    let mut tail_open_now = tail_open && expect_line_end;
    // A last line without its line end: archived when it is whole (never after damage).
    if damage.is_none()
        && !pending.is_empty()
        && crate::json::parse_line_object(trimmed(&pending, line_no == 0)).is_ok()
    {
        line_no += 1;
        sink.line(generation, line_no, pending_at, &pending, &mut month)?;
        hasher.update(&pending);
        pending_at += pending.len() as u64;
        tail_open_now = true;
    }
    let hash = hex(hasher.digest());
    Ok(Read::Lines(Done { bytes: pending_at, hash, lines: line_no, tail_open: tail_open_now, month, damage }))
}

/// A line as its format reads it: without its `\r` before the line end, or a BOM before the first.
fn trimmed(line: &[u8], first: bool) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match first {
        true => line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line),
        false => line,
    }
}

/// Where one file's lines go: the part of their format, type and month.
struct Sink<'a> {
    parts: &'a mut Parts,
    format: &'a Format,
    machine: &'a str,
    path: &'a str,
    lines: u64,
}

impl Sink<'_> {
    fn line(
        &mut self,
        generation: u64,
        line: u64,
        offset: u64,
        bytes: &[u8],
        month: &mut Option<String>,
    ) -> Result<(), Error> {
        let (type_name, ts) = line_facts(self.format, trimmed(bytes, line == 1));
        if let Some(ts) = ts {
            *month = chrono::DateTime::from_timestamp_micros(ts).map(|t| t.format("%Y-%m").to_string());
        }
        let dataset = (
            self.format.id,
            type_name.clone().unwrap_or_else(|| UNTYPED.to_string()),
            month.clone().unwrap_or_else(|| NO_MONTH.to_string()),
        );
        let row =
            Row { machine: self.machine, file: self.path, generation, line, offset, ts, type_name, bytes };
        self.parts.push(dataset, row)?;
        self.lines += 1;
        Ok(())
    }
}

/// A line's type and time by its format's description (`None` where it has none).
fn line_facts(format: &Format, line: &[u8]) -> (Option<String>, Option<i64>) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return (None, None);
    }
    let want = crate::json::Want::Fields;
    let (type_name, top, fields) = match crate::json::parse_line_event(line, &format.envelope, want, true) {
        Ok(event) => {
            let type_name = match &format.lines_table {
                Some(lines) => lines.name.to_string(),
                None => event.type_name.into_owned(),
            };
            (Some(type_name), event.line, Some(event.fields))
        }
        Err(_) => match crate::json::parse_line_object(line) {
            Ok(top) => (format.lines_table.as_ref().map(|l| l.name.to_string()), Some(top), None),
            Err(_) => return (None, None),
        },
    };
    let ts = format.times.iter().find_map(|key| {
        let raw =
            top.as_ref().and_then(|t| t.get(key)).or_else(|| fields.as_ref().and_then(|f| f.get(key)))?;
        let text = crate::json::string(raw)?;
        chrono::DateTime::parse_from_rfc3339(text.trim()).ok().map(|t| t.timestamp_micros())
    });
    (type_name, ts)
}

/// A line going into a part.
struct Row<'a> {
    machine: &'a str,
    file: &'a str,
    generation: u64,
    line: u64,
    offset: u64,
    ts: Option<i64>,
    type_name: Option<String>,
    bytes: &'a [u8],
}

/// The parts of one run, one per format, type and month, each made in the staging folder.
struct Parts {
    staging: PathBuf,
    run: u64,
    open: HashMap<(&'static str, String, String), OpenPart>,
}

struct OpenPart {
    relative: String,
    writer: ArrowWriter<std::fs::File>,
    columns: Columns,
    rows: u64,
}

#[derive(Default)]
struct Columns {
    machine: StringBuilder,
    file: StringBuilder,
    generation: Int64Builder,
    line: Int64Builder,
    offset: Int64Builder,
    ts: TimestampMicrosecondBuilder,
    type_name: StringBuilder,
    json: StringBuilder,
    raw: BinaryBuilder,
    rows: usize,
    bytes: usize,
}

impl Columns {
    fn push(&mut self, row: Row<'_>) {
        self.machine.append_value(row.machine);
        self.file.append_value(row.file);
        self.generation.append_value(row.generation as i64);
        self.line.append_value(row.line as i64);
        self.offset.append_value(row.offset as i64);
        self.ts.append_option(row.ts);
        self.type_name.append_option(row.type_name);
        match std::str::from_utf8(row.bytes) {
            Ok(text) => {
                self.json.append_value(text);
                self.raw.append_null();
            }
            Err(_) => {
                self.json.append_null();
                self.raw.append_value(row.bytes);
            }
        }
        self.rows += 1;
        self.bytes += row.bytes.len();
    }

    fn batch(&mut self) -> Result<RecordBatch, Error> {
        let ts = self.ts.finish().with_timezone("UTC");
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.machine.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.generation.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(ts),
            Arc::new(self.type_name.finish()),
            Arc::new(self.json.finish()),
            Arc::new(self.raw.finish()),
        ];
        self.rows = 0;
        self.bytes = 0;
        Ok(RecordBatch::try_new(schema(), columns)?)
    }
}

fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("zstd level 3 exists")))
        .set_created_by(format!("txq {}", env!("CARGO_PKG_VERSION")))
        .build()
}

impl Parts {
    fn new(staging: PathBuf, run: u64) -> Parts {
        Parts { staging, run, open: HashMap::new() }
    }

    fn push(&mut self, dataset: (&'static str, String, String), row: Row<'_>) -> Result<(), Error> {
        if !self.open.contains_key(&dataset) {
            let (format, type_name, month) = &dataset;
            let relative = format!(
                "{}/{}/month={}/part-{:06}-000.parquet",
                folder_name(format),
                folder_name(type_name),
                folder_name(month),
                self.run
            );
            let path = self.staging.join(&relative);
            let folder = path.parent().expect("a part is in a folder");
            std::fs::create_dir_all(folder)
                .map_err(|e| Error::Write { path: folder.to_path_buf(), source: e })?;
            let file = std::fs::File::create_new(&path)
                .map_err(|e| Error::Write { path: path.clone(), source: e })?;
            let writer = ArrowWriter::try_new(file, schema(), Some(properties()))?;
            self.open
                .insert(dataset.clone(), OpenPart { relative, writer, columns: Columns::default(), rows: 0 });
        }
        let part = self.open.get_mut(&dataset).expect("opened above");
        part.columns.push(row);
        part.rows += 1;
        if part.columns.rows >= BATCH_ROWS || part.columns.bytes >= BATCH_BYTES {
            let batch = part.columns.batch()?;
            part.writer.write(&batch)?;
        }
        Ok(())
    }

    /// Writes out the row groups of every open part once they hold more than [`BUFFERED_BYTES`].
    fn bound_memory(&mut self) -> Result<(), Error> {
        let held: usize = self.open.values().map(|p| p.writer.in_progress_size() + p.columns.bytes).sum();
        if held > BUFFERED_BYTES {
            for part in self.open.values_mut() {
                if part.columns.rows > 0 {
                    let batch = part.columns.batch()?;
                    part.writer.write(&batch)?;
                }
                part.writer.flush()?;
            }
        }
        Ok(())
    }

    /// Closes every part: what the run wrote, in path order.
    fn finish(self) -> Result<Vec<Part>, Error> {
        let mut parts = Vec::new();
        for (_, mut part) in self.open {
            if part.columns.rows > 0 {
                let batch = part.columns.batch()?;
                part.writer.write(&batch)?;
            }
            part.writer.close()?;
            let bytes = std::fs::metadata(self.staging.join(&part.relative)).map(|m| m.len()).unwrap_or(0);
            parts.push(Part { path: part.relative, run: self.run, rows: part.rows, bytes });
        }
        parts.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(parts)
    }
}
