//! `txq export`. In: an open engine and the export's options. Out: every table of each format found
//! and the normalized `calls`, `tool_calls`, `sessions` and `rate_limits` (or those named) as a Parquet dataset
//! under `OUT/<schema>/<table>/` (the normalized ones `OUT/public/<table>/`; the names made safe
//! folder names, every path proven inside OUT: [`paths`]), zstd, with the SQL table's column
//! names and types, in Hive folders by day or run if asked (not the normalized ones); written
//! under temporary names and put in place at the end; `--append` adds the runs OUT lacks, redoes
//! whole those that were still being written, and writes the normalized tables again whole. OUT
//! may be a place of an object store (`s3://bucket/prefix`): [`store`].

mod append;

mod job;
mod manifest;
pub(crate) mod paths;
mod progress;
mod prune;
mod store;
mod tables;
mod units;
mod widen;
mod writer;

pub use manifest::{FILE_NAME as MANIFEST_FILE, Manifest, UnitRecord};
use progress::thousands;

use crate::error::Error;
use crate::sql::session::Engine;
use crate::table::corpus::Problem;
use crate::text::escape;
use job::Job;
use paths::Root;
use progress::{Progress, ProgressLine};
use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tables::ExportTable;
use units::Unit;

/// What the Hive folders of an export are named after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PartitionBy {
    /// `date=YYYY-MM-DD`: the UTC day the transcript (a run, an attempt) began.
    Date,
    /// `run=<run_id>`: the run the transcript belongs to (an attempt's run).
    Run,
}

impl PartitionBy {
    pub(crate) fn key(self) -> &'static str {
        match self {
            PartitionBy::Date => "date",
            PartitionBy::Run => "run",
        }
    }

    fn from_key(key: &str) -> Option<Self> {
        [PartitionBy::Date, PartitionBy::Run].into_iter().find(|p| p.key() == key)
    }
}

/// What to do with an OUT that already holds an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// OUT must not exist (or be an empty folder).
    Create,
    /// Replace the export in OUT.
    Overwrite,
    /// Add to the export in OUT the units it lacks, and redo those still open then.
    Append,
}

#[derive(Debug, Clone)]
pub(crate) struct ExportOptions {
    pub(crate) out: PathBuf,
    /// Table names (`usage`, `reeval.tool`); empty for every table.
    pub(crate) tables: Vec<String>,
    pub(crate) partition_by: Option<PartitionBy>,
    pub(crate) mode: Mode,
    /// Draw the progress line on stderr.
    pub(crate) show_progress: bool,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::Write { path: path.to_path_buf(), source: e }
}

/// What an export did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Summary {
    pub(crate) tables: usize,
    pub(crate) rows: u64,
    pub(crate) files: u64,
    pub(crate) bytes: u64,
    /// Units written, by schema.
    pub(crate) written: BTreeMap<&'static str, usize>,
    /// Of those, units OUT held before and that were written again whole.
    pub(crate) redone: usize,
    /// Units OUT already held and kept.
    pub(crate) kept: usize,
    pub(crate) elapsed: Duration,
    /// Problems met on the way (unreadable transcripts, changed ones).
    pub(crate) warnings: Vec<String>,
}

impl Summary {
    /// One line saying what was written where.
    pub(crate) fn describe(&self, out: &Path, mode: Mode) -> String {
        let mut named = HashSet::new();
        let units: Vec<String> = crate::format::all()
            .iter()
            .filter(|f| named.insert(f.name))
            .filter_map(|f| self.written.get(f.name).map(|n| (f, n)))
            .map(|(f, n)| format!("{n} {} {}{}", f.name, f.export.noun(), if *n == 1 { "" } else { "s" }))
            .collect();
        let units = if units.is_empty() { "nothing".to_string() } else { crate::text::words::listed(&units) };
        let mut line = format!(
            "exported {units} to {} ({} tables, {} rows in {} files, {}) in {:.1}s",
            escape::path(out),
            self.tables,
            thousands(self.rows),
            thousands(self.files),
            crate::text::size::describe(self.bytes),
            self.elapsed.as_secs_f64()
        );
        if mode == Mode::Append {
            let written: usize = self.written.values().sum();
            line.push_str(&format!(
                ": {} new, {} written again whole (still being written, or changed, last time), {} already there",
                written - self.redone,
                self.redone,
                self.kept
            ));
        }
        line
    }
}

/// What OUT holds before the export.
enum Existing {
    Nothing,
    EmptyFolder,
    Export(Box<Manifest>),
}

fn existing(out: &Path) -> Result<Existing, Error> {
    if !out.exists() {
        return Ok(Existing::Nothing);
    }
    if !out.is_dir() {
        return Err(Error::Usage(format!("{}: not a folder", escape::path(out))));
    }
    if let Some(manifest) = Manifest::read(out)? {
        return Ok(Existing::Export(Box::new(manifest)));
    }
    let mut entries = std::fs::read_dir(out).map_err(io_error(out))?;
    if entries.next().is_none() {
        return Ok(Existing::EmptyFolder);
    }
    Err(Error::Usage(format!(
        "{}: exists and is not a txq export (it has no {}): export into a new or empty folder",
        escape::path(out),
        manifest::FILE_NAME
    )))
}

/// Exports the engine's corpus as `options` say: into a folder, or a place of an object store
/// ([`store`]).
pub(crate) async fn export(engine: &Engine, options: &ExportOptions) -> Result<Summary, Error> {
    match crate::source::remote::is_remote(&options.out) {
        true => store::export(engine, options).await,
        false => export_local(engine, options).await,
    }
}

/// Exports the engine's corpus into the folder `options.out`.
async fn export_local(engine: &Engine, options: &ExportOptions) -> Result<Summary, Error> {
    let started = Instant::now();
    let all = tables::all(engine).await?;
    let progress = Arc::new(Progress::default());
    let line = options.show_progress.then(|| ProgressLine::start(progress.clone(), started));
    let result = match (options.mode, existing(&options.out)?) {
        (Mode::Append, Existing::Export(manifest)) => {
            append::append(engine, options, *manifest, &all, &progress).await
        }
        (Mode::Create, Existing::Export(_)) => Err(Error::Usage(format!(
            "{} already holds an export: --append adds the runs it lacks, --overwrite replaces it",
            escape::path(&options.out)
        ))),
        _ => fresh(engine, options, &all, &progress).await,
    };
    if let Some(line) = line {
        line.finish();
    }
    let mut summary = result?;
    summary.rows = progress.rows();
    summary.files = progress.files();
    summary.bytes = progress.bytes();
    summary.elapsed = started.elapsed();
    // The models the normalized tables' `cost_usd` found no price for, as a statement says them.
    let unpriced = crate::sql::prices::take_unpriced(&engine.ctx);
    if !unpriced.is_empty() {
        summary.warnings.push(crate::sql::prices::unpriced_warning(&unpriced));
    }
    for problem in engine.corpus.problems.take() {
        match problem {
            Problem::UnreadableFile { file, why } => summary.warnings.push(format!(
                "{}: not read: {why}; its rows are missing from the export",
                escape::path(&file)
            )),
            Problem::ReadNote { file, note } => {
                summary.warnings.push(format!("{}: {note}", escape::path(&file)))
            }
            _ => {}
        }
    }
    Ok(summary)
}

/// The folder OUT is in (made if need be: it is the user's), as the root of the export's own
/// folders beside OUT, and OUT's name in it.
fn place_of(out: &Path) -> Result<(Root, OsString), Error> {
    let name = out
        .file_name()
        .ok_or_else(|| Error::Usage(format!("{}: not a folder name to export into", escape::path(out))))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    Ok((Root::new(parent), name.to_os_string()))
}

/// The name of a folder beside OUT (named `out_name`) for a whole new dataset, or the old one:
/// `.<OUT's name>.txq-<what>-<pid>`.
fn beside(out_name: &OsStr, what: &str) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(out_name);
    name.push(format!(".txq-{what}-{}", std::process::id()));
    PathBuf::from(name)
}

/// Removes what an export into the same OUT that never finished left beside it: folders (or
/// links, themselves) named `.<OUT's name>.txq-partial-…` or `….txq-old-…`, of any process.
fn remove_stale_siblings(parent: &Root, out_name: &OsStr) -> Result<(), Error> {
    let stem = |what: &str| {
        let mut prefix = OsString::from(".");
        prefix.push(out_name);
        prefix.push(format!(".txq-{what}-"));
        prefix
    };
    let prefixes = [stem("partial"), stem("old")];
    for entry in std::fs::read_dir(parent.path()).map_err(io_error(parent.path()))? {
        let entry = entry.map_err(io_error(parent.path()))?;
        let name = entry.file_name();
        let ours = prefixes.iter().any(|p| name.as_encoded_bytes().starts_with(p.as_encoded_bytes()));
        let Ok(kind) = entry.file_type() else { continue };
        if ours && kind.is_dir() {
            parent.remove_dir_all(Path::new(&name))?;
        } else if ours && kind.is_symlink() {
            parent.remove_file(Path::new(&name))?;
        }
    }
    Ok(())
}

/// Refuses tables that would share a folder (only a hash of two long names alike could).
fn check_folders(tables: &[ExportTable]) -> Result<(), Error> {
    let mut seen: BTreeMap<PathBuf, String> = BTreeMap::new();
    for table in tables {
        if let Some(other) = seen.insert(table.folder(), table.qualified()) {
            return Err(Error::Usage(format!(
                "{} and {} would be exported to the same folder {}: export them one at a time with --tables",
                escape::text(&other),
                escape::text(&table.qualified()),
                escape::path(&table.folder())
            )));
        }
    }
    Ok(())
}

/// Writes a whole new dataset beside OUT, then puts it in OUT's place.
async fn fresh(
    engine: &Engine,
    options: &ExportOptions,
    all: &[ExportTable],
    progress: &Arc<Progress>,
) -> Result<Summary, Error> {
    let chosen = if options.tables.is_empty() {
        all.to_vec()
    } else {
        tables::named(all, &options.tables).map_err(Error::Usage)?
    };
    check_folders(&chosen)?;
    let units = units::find(engine).await?;
    let (parent, out_name) = place_of(&options.out)?;
    let partial_name = beside(&out_name, "partial");
    remove_stale_siblings(&parent, &out_name)?;
    let partial = Root::new(parent.create_dir_all(&partial_name)?);
    let mut manifest =
        Manifest::new(options.partition_by.map(|p| p.key().to_string()), options.tables.is_empty());
    manifest.generation = 1;
    let job =
        Job { engine, tables: &chosen, partition_by: options.partition_by, generation: 1, root: &partial };
    let to_write: Vec<&Unit> = units.iter().collect();
    let written = match job.write(&to_write, progress, &HashSet::new()).await {
        Ok(()) => job.write_whole(progress).await,
        Err(e) => Err(e),
    };
    let written = match written {
        Ok(()) => {
            for table in &chosen {
                manifest.record_table(table);
            }
            for unit in &units {
                manifest.record(record(unit, 1));
            }
            manifest.write(&partial)
        }
        Err(e) => Err(e),
    };
    // An export that fails (a full disk) leaves nothing of its own beside OUT.
    if let Err(e) = written {
        let _ = parent.remove_dir_all(&partial_name);
        return Err(e);
    }
    let out_name = Path::new(&out_name);
    if std::fs::symlink_metadata(&options.out).is_ok() {
        let old_name = beside(out_name.as_os_str(), "old");
        parent.rename(out_name, &parent, &old_name)?;
        parent.rename(&partial_name, &parent, out_name)?;
        parent.remove_dir_all(&old_name)?;
    } else {
        parent.rename(&partial_name, &parent, out_name)?;
    }
    Ok(Summary { tables: chosen.len(), written: count_by_schema(&to_write), ..Summary::default() })
}

fn record(unit: &Unit, generation: u32) -> UnitRecord {
    UnitRecord {
        schema: unit.schema.to_string(),
        id: unit.id.clone(),
        files: unit.files.clone(),
        bytes: unit.bytes,
        open: unit.open,
        generation,
    }
}

fn count_by_schema(units: &[&Unit]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for unit in units {
        *counts.entry(unit.schema).or_default() += 1;
    }
    counts
}
