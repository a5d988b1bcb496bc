//! `--append`: which units the export in OUT lacks or must redo, taking their old rows out,
//! writing the normalized tables again whole (their old files removed), moving the new files
//! into place and writing the manifest last; and cleaning what an append cut short left.

use super::job::Job;
use super::paths::Root;
use super::tables::{self, ExportTable};
use super::{
    Error, ExportOptions, Manifest, PartitionBy, Progress, Summary, check_folders, count_by_schema, prune,
    record, units, widen,
};
use crate::sql::session::Engine;
use crate::text::escape;
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
) -> Result<Summary, Error> {
    let out = Root::new(&options.out);
    let partition_by = match (&manifest.partition_by, options.partition_by) {
        (was, Some(asked)) if was.as_deref() != Some(asked.key()) => {
            return Err(Error::Usage(format!(
                "{} is partitioned by {}: --append keeps that (or export again with --overwrite)",
                escape::path(out.path()),
                escape::text(was.as_deref().unwrap_or("nothing"))
            )));
        }
        (was, _) => was.as_deref().and_then(PartitionBy::from_key),
    };
    let mut chosen = appended_tables(&manifest, options, all)?;
    check_folders(&chosen)?;
    let generation = manifest.generation.checked_add(1).ok_or_else(|| {
        Error::Usage(format!(
            "{}: its manifest counts no more exports: export again with --overwrite",
            escape::path(out.path())
        ))
    })?;
    remove_leftovers(&out, manifest.generation)?;
    // Every table's folder is checked (no link on the way, none in it) before anything is
    // written.
    let mut held = HashSet::new();
    let mut replaced = Vec::new();
    for table in &chosen {
        let files = data_files(&out, &table.folder())?;
        if table.is_whole() {
            replaced.extend(files);
        } else if !files.is_empty() {
            held.insert(table.qualified());
        }
    }
    // A table whose columns changed since: the dataset gets them all, and its files that lack
    // some are widened once the new files are written. A normalized table's files are all
    // replaced: it keeps its columns of now.
    let mut narrower = Vec::new();
    for table in chosen.iter_mut().filter(|t| !t.is_whole()) {
        let Some(before) = manifest.tables.get(&table.qualified()) else { continue };
        if *before == table.signature() {
            continue;
        }
        let files = data_files(&out, &table.folder())?;
        let (columns, files) = widen::dataset_columns(&out, table, before, &files)?;
        table.columns = columns;
        narrower.extend(files.into_iter().map(|file| (table.columns.clone(), file)));
    }
    let units = units::find(engine).await?;
    let (mut to_write, mut redo_files, mut changed_settled, mut kept, mut warnings) =
        (Vec::new(), HashSet::new(), false, 0, Vec::new());
    for unit in &units {
        match manifest.unit(unit.schema, &unit.id) {
            None => to_write.push(unit),
            Some(before) if before.open || before.bytes != unit.bytes => {
                if !before.open {
                    changed_settled = true;
                    warnings.push(format!(
                        "{} changed since it was exported: written again whole",
                        escape::text(&unit.id)
                    ));
                }
                redo_files.extend(before.files.iter().cloned());
                to_write.push(unit);
            }
            Some(_) => kept += 1,
        }
    }
    let redone = to_write.iter().filter(|u| manifest.unit(u.schema, &u.id).is_some()).count();
    let staging_name = PathBuf::from(format!("{STAGING}{generation}"));
    let staging = Root::new(out.create_dir_all(&staging_name)?);
    let job = Job { engine, tables: &chosen, partition_by, generation, root: &staging };
    // An append that fails (a full disk) leaves no staging folder (the next one would remove it).
    let written = match job.write(&to_write, progress, &held).await {
        Ok(()) => job.write_whole(progress).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        let _ = out.remove_dir_all(&staging_name);
        return Err(e);
    }
    if !redo_files.is_empty() {
        for table in chosen.iter().filter(|t| !t.is_whole()) {
            for file in data_files(&out, &table.folder())? {
                if changed_settled || is_open_file(&file) {
                    prune::remove_rows(&out, &file, &redo_files)?;
                }
            }
        }
    }
    for (columns, file) in &narrower {
        // Pruning may have removed it whole.
        if std::fs::symlink_metadata(out.join(file)?).is_ok() {
            widen::widen_file(&out, file, columns)?;
        }
    }
    // The normalized tables' old files, whose rows the new ones hold (an append cut short from
    // here on is finished by the next: it writes them again).
    for file in &replaced {
        out.remove_file(file)?;
    }
    move_into_place(&staging, &out)?;
    out.remove_dir_all(&staging_name)?;
    manifest.generation = generation;
    for table in &chosen {
        manifest.record_table(table);
    }
    for unit in &to_write {
        manifest.record(record(unit, generation));
    }
    manifest.write(&out)?;
    Ok(Summary {
        tables: chosen.len(),
        written: count_by_schema(&to_write),
        redone,
        kept,
        warnings,
        ..Summary::default()
    })
}

/// The tables an append writes: those OUT holds; with every table exported before, also tables
/// new since.
fn appended_tables(
    manifest: &Manifest,
    options: &ExportOptions,
    all: &[ExportTable],
) -> Result<Vec<ExportTable>, Error> {
    let out = escape::path(&options.out);
    let chosen = if manifest.all_tables && options.tables.is_empty() {
        all.to_vec()
    } else {
        let asked: Vec<String> = if options.tables.is_empty() {
            manifest.tables.keys().cloned().collect()
        } else {
            options.tables.clone()
        };
        let chosen = tables::named(all, &asked).map_err(Error::Usage)?;
        let names: HashSet<String> = chosen.iter().map(ExportTable::qualified).collect();
        if manifest.all_tables || names != manifest.tables.keys().cloned().collect() {
            let held: Vec<&str> = manifest.tables.keys().map(String::as_str).collect();
            return Err(Error::Usage(format!(
                "{out} holds the tables {}: --append writes the same tables (or export again with --overwrite)",
                escape::text(&held.join(", "))
            )));
        }
        chosen
    };
    for table in &chosen {
        // An export written before folders were named safely put a table where its name said.
        let folder = table.folder().to_string_lossy().replace('\\', "/");
        let before = match manifest.folders.get(&table.qualified()) {
            Some(before) => before.clone(),
            None if manifest.tables.contains_key(&table.qualified()) => {
                format!("{}/{}", table.schema, table.name)
            }
            None => folder.clone(),
        };
        if before != folder {
            return Err(Error::Usage(format!(
                "{out} holds {} in the folder {}, and this txq writes it to {}: export again with --overwrite",
                escape::text(&table.qualified()),
                escape::text(&before),
                escape::text(&folder)
            )));
        }
    }
    Ok(chosen)
}

/// The folders an append writes its files into first, `OUT/.txq-staging-<generation>/`.
const STAGING: &str = ".txq-staging-";

/// Removes what an export into `out` that never finished left: its staging folder, its files
/// already moved into place (a later generation than the manifest's), and partial rewrites.
/// Links of those names are removed themselves, never followed.
fn remove_leftovers(out: &Root, generation: u32) -> Result<(), Error> {
    for entry in std::fs::read_dir(out.path()).map_err(|e| io_error(out.path(), e))? {
        let entry = entry.map_err(|e| io_error(out.path(), e))?;
        let name = entry.file_name();
        if !name.as_encoded_bytes().starts_with(STAGING.as_bytes()) {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => out.remove_dir_all(Path::new(&name))?,
            Ok(_) => out.remove_file(Path::new(&name))?,
            Err(e) => return Err(io_error(&entry.path(), e)),
        }
    }
    for file in out.entries_below(Path::new(""))? {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let later = file_generation(&name).is_some_and(|g| g > generation);
        if later || name.ends_with(".parquet.partial") {
            out.remove_file(&file)?;
        }
    }
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Write { path: path.to_path_buf(), source: e }
}

/// The generation in a data file name `part-<generation>-<settled|open>-….parquet`.
fn file_generation(name: &str) -> Option<u32> {
    name.strip_prefix("part-")?.split('-').next()?.parse().ok()
}

fn is_open_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().contains("-open-"))
}

/// The Parquet files below the folder `dir` of `out` (none when it does not exist; an error
/// when it, a folder on the way or anything in it is a link).
fn data_files(out: &Root, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    Ok(out.files_below(dir)?.into_iter().filter(|f| f.extension().is_some_and(|e| e == "parquet")).collect())
}

/// Moves every file of `staging` to the same place under `out`, each by one rename.
fn move_into_place(staging: &Root, out: &Root) -> Result<(), Error> {
    for file in staging.files_below(Path::new(""))? {
        staging.rename(&file, out, &file)?;
    }
    Ok(())
}
