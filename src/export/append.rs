//! `--append`: which units the export in OUT lacks or must redo, taking their old rows out,
//! moving the new files into place and writing the manifest last; and cleaning what an append
//! cut short left.

use super::job::Job;
use super::tables::{self, ExportTable};
use super::{
    ExportError, ExportOptions, Manifest, PartitionBy, Progress, Summary, count_by_schema, io_error, prune,
    record, units,
};
use crate::session::Engine;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Adds to the export in OUT the units it lacks and redoes those open or changed since.
pub(super) async fn append(
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
