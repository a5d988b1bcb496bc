//! The units an export adds, skips or redoes whole, as each format's description cuts them (a
//! transcript, with the files that join it); whether each is still open; the partition values of
//! its rows; and a corpus narrowed to some units.

use crate::format::{ExportUnits, Format};
use crate::sql::session::Engine;
use crate::table::corpus::Corpus;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One unit of the corpus.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub(crate) schema: &'static str,
    /// Stable across exports, as the format's description makes it.
    pub(crate) id: String,
    /// Its files, as the `file` column spells them.
    pub(crate) files: Vec<String>,
    pub(crate) bytes: u64,
    /// Still being written, as the format's description tells (a run with no end yet).
    pub(crate) open: bool,
    pub(crate) run_id: String,
    /// The UTC day it started.
    pub(crate) date: Option<String>,
}

/// Every unit of the formats that have transcripts, as each format's description cuts them.
pub(crate) async fn find(engine: &Engine) -> Result<Vec<Unit>> {
    let corpus = &engine.corpus;
    let sizes: HashMap<String, u64> = corpus
        .formats
        .iter()
        .flat_map(|d| d.files.iter().map(|f| (crate::text::escape::path_text(&f.path).into_owned(), f.size)))
        .collect();
    let mut units = Vec::new();
    for format in unique_formats(corpus) {
        if let ExportUnits::Rows { sql, .. } = format.export
            && has_transcripts(corpus, format.name)
        {
            for batch in engine.ctx.sql(sql).await?.collect().await? {
                units.extend(rows(format.name, &batch)?);
            }
        }
    }
    for data in corpus.formats.iter().filter(|d| !d.files.is_empty()) {
        let ExportUnits::Joins { schema, key, alone, .. } = data.format.export else { continue };
        let by_key: HashMap<PathBuf, usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.schema == schema)
            .filter_map(|(i, u)| Some((key(Path::new(u.files.first()?))?, i)))
            .collect();
        for file in data.files.iter() {
            let name = crate::text::escape::path_text(&file.path).into_owned();
            match key(Path::new(&name)).and_then(|k| by_key.get(&k)) {
                Some(&i) => units[i].files.push(name),
                None => units.push(Unit {
                    schema: data.format.name,
                    id: format!("{alone}/{name}"),
                    files: vec![name],
                    bytes: 0,
                    open: false,
                    run_id: String::new(),
                    date: None,
                }),
            }
        }
    }
    for unit in &mut units {
        unit.bytes = unit.files.iter().map(|f| sizes.get(f).copied().unwrap_or(0)).sum();
    }
    Ok(units)
}

/// The formats of the corpus, the first of each schema only (a schema's formats share its units'
/// rules), in the order of the corpus.
pub(crate) fn unique_formats(corpus: &Corpus) -> Vec<&Format> {
    let mut seen = HashSet::new();
    corpus.formats.iter().map(|d| &d.format).filter(|f| seen.insert(f.name)).collect()
}

/// Whether any format of a schema has files.
pub(crate) fn has_transcripts(corpus: &Corpus, schema: &str) -> bool {
    corpus.formats.iter().any(|d| d.format.name == schema && !d.files.is_empty())
}

fn rows(schema: &'static str, batch: &RecordBatch) -> Result<Vec<Unit>> {
    let text = |i: usize| -> Result<Vec<Option<String>>> {
        let column = datafusion::arrow::compute::cast(batch.column(i), &DataType::Utf8)?;
        Ok(column.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect())
    };
    let (files, ids, run_ids, dates) = (text(0)?, text(1)?, text(2)?, text(4)?);
    let open = batch.column(3).as_boolean();
    Ok((0..batch.num_rows())
        .map(|row| Unit {
            schema,
            id: ids[row].clone().unwrap_or_default(),
            files: vec![files[row].clone().unwrap_or_default()],
            bytes: 0,
            open: open.is_valid(row) && open.value(row),
            run_id: run_ids[row].clone().unwrap_or_default(),
            date: dates[row].clone(),
        })
        .collect())
}

/// What each file's rows are partitioned by: its unit's start day, or its unit's run.
pub(crate) fn partition_values(units: &[&Unit], by_run: bool) -> HashMap<String, String> {
    let mut values = HashMap::new();
    for unit in units {
        let value =
            if by_run { Some(unit.run_id.clone()).filter(|r| !r.is_empty()) } else { unit.date.clone() };
        if let Some(value) = value {
            for file in &unit.files {
                values.insert(file.clone(), value.clone());
            }
        }
    }
    values
}

/// Days written by one reading of the transcripts, when partitioning by date: fewer than the
/// files a writer keeps open, so that each day's rows of a table go to one file.
const DAYS_AT_ONCE: usize = 16;

/// The units in the batches they are read in: by date, up to [`DAYS_AT_ONCE`] days of runs at a
/// time (the transcripts come in path order, which visits a day once per folder and scan
/// partition); otherwise all at once. No batch is empty.
pub(crate) fn batches(mut units: Vec<&Unit>, by_date: bool) -> Vec<Vec<&Unit>> {
    if units.is_empty() {
        return Vec::new();
    }
    if !by_date {
        return vec![units];
    }
    units.sort_by(|a, b| a.date.cmp(&b.date));
    let mut batches: Vec<Vec<&Unit>> = Vec::new();
    let mut days = 0;
    for unit in units {
        let new_day = batches.last().and_then(|b| b.last()).is_none_or(|last| last.date != unit.date);
        if new_day {
            days += 1;
            if days > DAYS_AT_ONCE || batches.is_empty() {
                batches.push(Vec::new());
                days = 1;
            }
        }
        batches.last_mut().expect("a batch was started").push(unit);
    }
    batches
}

/// `corpus` narrowed to the files of `units`: every table of a session over it holds only their
/// rows (views included), with the same columns as over the whole corpus.
pub(crate) fn narrowed(corpus: &Corpus, units: &[&Unit]) -> Corpus {
    let keep: HashSet<&str> = units.iter().flat_map(|u| u.files.iter().map(String::as_str)).collect();
    let formats = corpus
        .formats
        .iter()
        .map(|data| Arc::new(data.narrowed(|f| keep.contains(&*crate::text::escape::path_text(&f.path)))))
        .collect();
    Corpus {
        formats,
        store: corpus.store.clone(),
        options: corpus.options.clone(),
        problems: corpus.problems.clone(),
        warnings: vec![],
        searched: corpus.searched.clone(),
        // A part of the files found: no search of the places finds it again.
        origin: crate::table::corpus::Origin { stamp: 0, ..corpus.origin() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn unit(day: Option<u32>) -> Unit {
        Unit {
            schema: "rupu",
            id: format!("{day:?}"),
            files: vec![],
            bytes: 0,
            open: false,
            run_id: String::new(),
            date: day.map(|d| format!("2026-01-{d:02}")),
        }
    }

    #[test]
    fn batches_hold_whole_days_up_to_a_limit() {
        let units: Vec<Unit> =
            (1..=20).flat_map(|d| [unit(Some(d)), unit(Some(d))]).chain([unit(None)]).collect();
        let refs: Vec<&Unit> = units.iter().rev().collect();
        let batches = batches(refs.clone(), true);
        let days = |batch: &Vec<&Unit>| batch.iter().map(|u| u.date.clone()).collect::<BTreeSet<_>>();
        assert_eq!(batches.iter().map(|b| days(b).len()).collect::<Vec<_>>(), [16, 5]);
        assert!(days(&batches[0]).contains(&None), "units of no known day come first");
        assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), units.len());
        assert_eq!(super::batches(refs, false).len(), 1);
        assert!(super::batches(vec![], true).is_empty());
    }
}
