//! `txq export`: every table of each format found (or those named) as a Parquet dataset under
//! `OUT/<schema>/<table>/`, zstd, with the SQL table's column names and types, in Hive folders by
//! day or run if asked; written under temporary names and put in place at the end; `--append`
//! adds the runs OUT lacks and redoes whole those that were still being written.

pub mod command;
mod manifest;
mod progress;
mod prune;
mod tables;
mod units;
mod writer;

pub use manifest::{FILE_NAME as MANIFEST_FILE, Manifest, UnitRecord};
use progress::{human_bytes, thousands};

use crate::corpus::Problem;
use crate::session::{CATALOG, Engine};
use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use futures::StreamExt;
use progress::{Progress, ProgressLine};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tables::ExportTable;
use units::Unit;
use writer::{Partitioning, TableWriter};

/// What the Hive folders of an export are named after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PartitionBy {
    /// `date=YYYY-MM-DD`: the UTC day the run (rupu) or attempt (reeval) started.
    Date,
    /// `run=<run_id>`: the rupu run, or the reeval run (folder) the attempt belongs to.
    Run,
}

impl PartitionBy {
    pub fn key(self) -> &'static str {
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
pub enum Mode {
    /// OUT must not exist (or be an empty folder).
    Create,
    /// Replace the export in OUT.
    Overwrite,
    /// Add to the export in OUT the units it lacks, and redo those still open then.
    Append,
}

#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub out: PathBuf,
    /// Table names (`usage`, `reeval.tool`); empty for every table.
    pub tables: Vec<String>,
    pub partition_by: Option<PartitionBy>,
    pub mode: Mode,
    /// Draw the progress line on stderr.
    pub show_progress: bool,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Asked for something that cannot be done.
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Sql(#[from] DataFusionError),
    /// Writing OUT failed.
    #[error("{0}")]
    Write(String),
}

impl From<datafusion::parquet::errors::ParquetError> for ExportError {
    fn from(e: datafusion::parquet::errors::ParquetError) -> Self {
        ExportError::Write(e.to_string())
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |e| ExportError::Write(format!("{}: {e}", path.display()))
}

/// What an export did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub tables: usize,
    pub rows: u64,
    pub files: u64,
    pub bytes: u64,
    /// Units written, by schema.
    pub written: BTreeMap<&'static str, usize>,
    /// Of those, units OUT held before and that were written again whole.
    pub redone: usize,
    /// Units OUT already held and kept.
    pub kept: usize,
    pub elapsed: Duration,
    /// Problems met on the way (unreadable transcripts, changed ones).
    pub warnings: Vec<String>,
}

impl Summary {
    /// One line saying what was written where.
    pub fn describe(&self, out: &Path, mode: Mode) -> String {
        let units: Vec<String> = ["rupu", "reeval"]
            .iter()
            .filter_map(|schema| self.written.get(schema).map(|n| (schema, n)))
            .map(|(schema, n)| match *schema {
                "rupu" => format!("{n} rupu run{}", if *n == 1 { "" } else { "s" }),
                _ => format!("{n} {schema} attempt{}", if *n == 1 { "" } else { "s" }),
            })
            .collect();
        let units = if units.is_empty() { "nothing".to_string() } else { units.join(" and ") };
        let mut line = format!(
            "exported {units} to {} ({} tables, {} rows in {} files, {}) in {:.1}s",
            out.display(),
            self.tables,
            thousands(self.rows),
            thousands(self.files),
            human_bytes(self.bytes),
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

fn existing(out: &Path) -> Result<Existing, ExportError> {
    if !out.exists() {
        return Ok(Existing::Nothing);
    }
    if !out.is_dir() {
        return Err(ExportError::Usage(format!("{}: not a folder", out.display())));
    }
    if let Some(manifest) = Manifest::read(out).map_err(ExportError::Usage)? {
        return Ok(Existing::Export(Box::new(manifest)));
    }
    let mut entries = std::fs::read_dir(out).map_err(io_error(out))?;
    if entries.next().is_none() {
        return Ok(Existing::EmptyFolder);
    }
    Err(ExportError::Usage(format!(
        "{}: exists and is not a txq export (it has no {}): export into a new or empty folder",
        out.display(),
        manifest::FILE_NAME
    )))
}

/// Exports the engine's corpus as `options` say.
pub async fn export(engine: &Engine, options: &ExportOptions) -> Result<Summary, ExportError> {
    let started = Instant::now();
    let all = tables::all(engine).await?;
    let progress = Arc::new(Progress::default());
    let line = options.show_progress.then(|| ProgressLine::start(progress.clone(), started));
    let result = match (options.mode, existing(&options.out)?) {
        (Mode::Append, Existing::Export(manifest)) => {
            append(engine, options, *manifest, &all, &progress).await
        }
        (Mode::Create, Existing::Export(_)) => Err(ExportError::Usage(format!(
            "{} already holds an export: --append adds the runs it lacks, --overwrite replaces it",
            options.out.display()
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
    for problem in engine.corpus.problems.take() {
        if let Problem::File { file, why } = problem {
            summary
                .warnings
                .push(format!("{}: not read: {why}; its rows are missing from the export", file.display()));
        }
    }
    Ok(summary)
}

/// A folder beside `out` for a whole new dataset, named after it.
fn beside(out: &Path, what: &str) -> Result<PathBuf, ExportError> {
    let name = out
        .file_name()
        .ok_or_else(|| ExportError::Usage(format!("{}: not a folder name to export into", out.display())))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    Ok(parent.join(format!(".{}.txq-{what}-{}", name.to_string_lossy(), std::process::id())))
}

/// Removes what an export into the same OUT that never finished left beside it: folders named
/// like `partial`, for any process.
fn remove_stale_siblings(partial: &Path) -> Result<(), ExportError> {
    let name = partial.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some((stem, _pid)) = name.rsplit_once("-partial-") else { return Ok(()) };
    let parent = partial.parent().unwrap_or(Path::new("."));
    for entry in std::fs::read_dir(parent).map_err(io_error(parent))? {
        let path = entry.map_err(io_error(parent))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let left =
            [format!("{stem}-partial-"), format!("{stem}-old-")].iter().any(|p| name.starts_with(p.as_str()));
        if left && path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(io_error(&path))?;
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
) -> Result<Summary, ExportError> {
    let chosen = if options.tables.is_empty() {
        all.to_vec()
    } else {
        tables::named(all, &options.tables).map_err(ExportError::Usage)?
    };
    let units = units::find(engine).await?;
    let partial = beside(&options.out, "partial")?;
    remove_stale_siblings(&partial)?;
    std::fs::create_dir_all(&partial).map_err(io_error(&partial))?;
    let mut manifest =
        Manifest::new(options.partition_by.map(|p| p.key().to_string()), options.tables.is_empty());
    manifest.generation = 1;
    let job =
        Job { engine, tables: &chosen, partition_by: options.partition_by, generation: 1, root: &partial };
    let to_write: Vec<&Unit> = units.iter().collect();
    job.write(&to_write, progress, &HashSet::new()).await?;
    for table in &chosen {
        manifest.tables.insert(table.qualified(), table.signature());
    }
    for unit in &units {
        manifest.record(record(unit, 1));
    }
    manifest.write(&partial).map_err(io_error(&partial))?;
    let out = &options.out;
    if out.exists() {
        let old = beside(out, "old")?;
        std::fs::rename(out, &old).map_err(io_error(out))?;
        std::fs::rename(&partial, out).map_err(io_error(out))?;
        std::fs::remove_dir_all(&old).map_err(io_error(&old))?;
    } else {
        std::fs::rename(&partial, out).map_err(io_error(out))?;
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

/// Adds to the export in OUT the units it lacks and redoes those open or changed since.
async fn append(
    engine: &Engine,
    options: &ExportOptions,
    mut manifest: Manifest,
    all: &[ExportTable],
    progress: &Arc<Progress>,
) -> Result<Summary, ExportError> {
    let out = &options.out;
    let partition_by = match (&manifest.partition_by, options.partition_by) {
        (was, Some(asked)) if was.as_deref() != Some(asked.key()) => {
            return Err(ExportError::Usage(format!(
                "{} is partitioned by {}: --append keeps that (or export again with --overwrite)",
                out.display(),
                was.as_deref().unwrap_or("nothing")
            )));
        }
        (was, _) => was.as_deref().and_then(PartitionBy::from_key),
    };
    let chosen = appended_tables(&manifest, options, all)?;
    remove_leftovers(out, manifest.generation)?;
    let units = units::find(engine).await?;
    let (mut to_write, mut redo_files, mut changed_settled, mut kept, mut warnings) =
        (Vec::new(), HashSet::new(), false, 0, Vec::new());
    for unit in &units {
        match manifest.unit(unit.schema, &unit.id) {
            None => to_write.push(unit),
            Some(before) if before.open || before.bytes != unit.bytes => {
                if !before.open {
                    changed_settled = true;
                    warnings.push(format!("{} changed since it was exported: written again whole", unit.id));
                }
                redo_files.extend(before.files.iter().cloned());
                to_write.push(unit);
            }
            Some(_) => kept += 1,
        }
    }
    let redone = to_write.iter().filter(|u| manifest.unit(u.schema, &u.id).is_some()).count();
    let generation = manifest.generation + 1;
    let staging = out.join(format!(".txq-staging-{generation}"));
    std::fs::create_dir_all(&staging).map_err(io_error(&staging))?;
    let job = Job { engine, tables: &chosen, partition_by, generation, root: &staging };
    let held: HashSet<String> =
        chosen.iter().filter(|t| has_data_files(out, t)).map(|t| t.qualified()).collect();
    job.write(&to_write, progress, &held).await?;
    if !redo_files.is_empty() {
        for table in &chosen {
            let dir = out.join(table.schema).join(&table.name);
            for file in data_files(&dir)? {
                if changed_settled || is_open_file(&file) {
                    prune::remove_rows(&file, &redo_files)?;
                }
            }
        }
    }
    move_into_place(&staging, out)?;
    std::fs::remove_dir_all(&staging).map_err(io_error(&staging))?;
    manifest.generation = generation;
    for table in &chosen {
        manifest.tables.insert(table.qualified(), table.signature());
    }
    for unit in &to_write {
        manifest.record(record(unit, generation));
    }
    manifest.write(out).map_err(io_error(out))?;
    Ok(Summary {
        tables: chosen.len(),
        written: count_by_schema(&to_write),
        redone,
        kept,
        warnings,
        ..Summary::default()
    })
}

/// The tables an append writes: those OUT holds, with the same columns; with every table
/// exported before, also tables new since.
fn appended_tables(
    manifest: &Manifest,
    options: &ExportOptions,
    all: &[ExportTable],
) -> Result<Vec<ExportTable>, ExportError> {
    let out = options.out.display();
    let chosen = if manifest.all_tables && options.tables.is_empty() {
        all.to_vec()
    } else {
        let asked: Vec<String> = if options.tables.is_empty() {
            manifest.tables.keys().cloned().collect()
        } else {
            options.tables.clone()
        };
        let chosen = tables::named(all, &asked).map_err(ExportError::Usage)?;
        let names: HashSet<String> = chosen.iter().map(ExportTable::qualified).collect();
        if manifest.all_tables || names != manifest.tables.keys().cloned().collect() {
            let held: Vec<&str> = manifest.tables.keys().map(String::as_str).collect();
            return Err(ExportError::Usage(format!(
                "{out} holds the tables {}: --append writes the same tables (or export again with --overwrite)",
                held.join(", ")
            )));
        }
        chosen
    };
    for table in &chosen {
        if let Some(before) = manifest.tables.get(&table.qualified())
            && *before != table.signature()
        {
            let now = table.signature();
            let new: Vec<&String> = now.iter().filter(|c| !before.contains(c)).collect();
            let gone: Vec<&String> = before.iter().filter(|c| !now.contains(c)).collect();
            return Err(ExportError::Usage(format!(
                "{}'s columns changed since {out} was written (now: {new:?}; before: {gone:?}): \
                 export again with --overwrite",
                table.qualified()
            )));
        }
    }
    Ok(chosen)
}

/// Removes what an export into `out` that never finished left: its staging folder, its files
/// already moved into place (a later generation than the manifest's), and partial rewrites.
fn remove_leftovers(out: &Path, generation: u32) -> Result<(), ExportError> {
    for entry in std::fs::read_dir(out).map_err(io_error(out))? {
        let path = entry.map_err(io_error(out))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() && name.starts_with(".txq-staging-") {
            std::fs::remove_dir_all(&path).map_err(io_error(&path))?;
        }
    }
    for file in walk(out)? {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let later = file_generation(&name).is_some_and(|g| g > generation);
        if later || name.ends_with(".parquet.partial") {
            std::fs::remove_file(&file).map_err(io_error(&file))?;
        }
    }
    Ok(())
}

/// The generation in a data file name `part-<generation>-<settled|open>-….parquet`.
fn file_generation(name: &str) -> Option<u32> {
    name.strip_prefix("part-")?.split('-').next()?.parse().ok()
}

fn is_open_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().contains("-open-"))
}

/// Every file under `dir`, recursively; none when it does not exist.
fn walk(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let mut files = Vec::new();
    if !dir.exists() {
        return Ok(files);
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| ExportError::Write(e.to_string()))?;
        if entry.file_type().is_file() {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

fn data_files(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    Ok(walk(dir)?.into_iter().filter(|f| f.extension().is_some_and(|e| e == "parquet")).collect())
}

fn has_data_files(out: &Path, table: &ExportTable) -> bool {
    data_files(&out.join(table.schema).join(&table.name)).is_ok_and(|files| !files.is_empty())
}

/// Moves every file of `staging` to the same place under `out`, each by one rename.
fn move_into_place(staging: &Path, out: &Path) -> Result<(), ExportError> {
    for file in walk(staging)? {
        let relative = file.strip_prefix(staging).expect("walked under staging");
        let target = out.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::rename(&file, &target).map_err(io_error(&target))?;
    }
    Ok(())
}

/// One export's writing: tables, partitioning, generation, and the folder the files go to.
struct Job<'a> {
    engine: &'a Engine,
    tables: &'a [ExportTable],
    partition_by: Option<PartitionBy>,
    generation: u32,
    root: &'a Path,
}

impl Job<'_> {
    /// Writes every table's rows of `units`: those of settled units to `*-settled-*` files,
    /// those of open ones to `*-open-*` files, in batches of units ([`units::batches`]). A table
    /// that gets no rows and is not in `held` gets a file with no rows, when the export is not
    /// partitioned.
    async fn write(
        &self,
        units: &[&Unit],
        progress: &Arc<Progress>,
        held: &HashSet<String>,
    ) -> Result<(), ExportError> {
        let partitioning = self.partition_by.map(|p| Partitioning {
            key: p.key(),
            by_file: Arc::new(units::partition_values(units, p == PartitionBy::Run)),
        });
        let mut steps: Vec<(&str, usize, Vec<&Unit>)> = Vec::new();
        for (name, open) in [("settled", false), ("open", true)] {
            let pass: Vec<&Unit> = units.iter().copied().filter(|u| u.open == open).collect();
            for (index, batch) in
                units::batches(pass, self.partition_by == Some(PartitionBy::Date)).into_iter().enumerate()
            {
                steps.push((name, index, batch));
            }
        }
        let total = steps.len() * self.tables.len();
        let mut written: HashSet<String> = HashSet::new();
        for (step, (name, index, step_units)) in steps.iter().enumerate() {
            let corpus = units::narrowed(&self.engine.corpus, step_units);
            let ctx = crate::session::session(&corpus).await?;
            for (place, table) in self.tables.iter().enumerate() {
                progress.start_table(&table.qualified(), step * self.tables.len() + place + 1, total);
                let prefix = format!("part-{:05}-{name}-{index}-", self.generation);
                if self.write_table(&ctx, table, &prefix, partitioning.clone(), progress).await? > 0 {
                    written.insert(table.qualified());
                }
            }
        }
        if self.partition_by.is_none() {
            for table in self
                .tables
                .iter()
                .filter(|t| !written.contains(&t.qualified()) && !held.contains(&t.qualified()))
            {
                let dir = self.root.join(table.schema).join(&table.name);
                std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
                let path = dir.join(format!("part-{:05}-settled-empty.parquet", self.generation));
                writer::write_empty(&path, table.columns.clone())?;
                progress.add_file();
            }
        }
        Ok(())
    }

    /// Writes one table of a session (its scan's partitions merged into one stream, so that a
    /// partition's rows go to as few files as can be); returns the number of files written.
    async fn write_table(
        &self,
        ctx: &datafusion::prelude::SessionContext,
        table: &ExportTable,
        prefix: &str,
        partitioning: Option<Partitioning>,
        progress: &Arc<Progress>,
    ) -> Result<usize, ExportError> {
        let frame = ctx.table(TableReference::full(CATALOG, table.schema, table.name.as_str())).await?;
        let same = frame.schema().fields().len() == table.columns.fields().len()
            && frame
                .schema()
                .fields()
                .iter()
                .zip(table.columns.fields())
                .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
        if !same {
            return Err(ExportError::Write(format!("{}: columns differ between passes", table.qualified())));
        }
        let dir = self.root.join(table.schema).join(&table.name);
        let mut stream = frame.execute_stream().await?;
        let mut writer =
            TableWriter::new(dir, prefix.to_string(), table.columns.clone(), partitioning, progress.clone())?;
        while let Some(batch) = stream.next().await {
            writer.write(&batch?)?;
        }
        Ok(writer.finish()?.len())
    }
}
