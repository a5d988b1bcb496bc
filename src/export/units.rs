//! The units an export adds, skips or redoes whole: a rupu run (its transcript), or a reeval
//! attempt (its transcript and the raw stream beside it); whether each is still open; the
//! partition values of its rows; and a corpus narrowed to some units.

use crate::sql::session::Engine;
use crate::table::corpus::Corpus;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// One unit of the corpus.
#[derive(Debug, Clone)]
pub struct Unit {
    pub schema: &'static str,
    /// Stable across exports: `run_<ULID>` for rupu, `runs|history/<runId>/<eval>/<cell>/<n>` for
    /// reeval.
    pub id: String,
    /// Its files, as the `file` column spells them.
    pub files: Vec<String>,
    pub bytes: u64,
    /// Still being written: a rupu run with no run_complete, a reeval attempt with a turn that has
    /// no turn-end (status aborted in `runs` and `attempts`).
    pub open: bool,
    pub run_id: String,
    /// The UTC day it started: rupu's run_start.started_at, the first ts of a reeval attempt.
    pub date: Option<String>,
}

/// Per unit: its transcript, id, run, whether still open, and start day; the same five columns
/// for each schema.
/// Every transcript is a unit, whether or not `runs` has a row for it.
const RUPU_UNITS: &str = "select f.file, f.run_id as id, f.run_id, \
    coalesce(r.status, 'aborted') = 'aborted' as open, cast(cast(r.started_at as date) as varchar) as day \
    from rupu.files f left join rupu.runs r on r.file = f.file where f.transcript";
const REEVAL_UNITS: &str = "select a.file, \
    case when a.history then 'history' else 'runs' end || '/' || a.run_id || '/' || a.eval || '/' \
      || a.cell || '/' || cast(a.attempt as varchar) as id, \
    a.run_id, a.status = 'aborted' as open, cast(cast(t.first_ts as date) as varchar) as day \
    from reeval.attempts a left join (select file, min(ts) as first_ts from reeval.events group by file) t \
    on t.file = a.file";

/// Every unit of the formats that have transcripts.
pub async fn find(engine: &Engine) -> Result<Vec<Unit>> {
    let sizes: HashMap<String, u64> = engine
        .corpus
        .formats
        .iter()
        .flat_map(|d| d.files.iter().map(|f| (crate::text::escape::path_text(&f.path).into_owned(), f.size)))
        .collect();
    let mut units = Vec::new();
    for (schema, sql) in [("rupu", RUPU_UNITS), ("reeval", REEVAL_UNITS)] {
        if !has_transcripts(&engine.corpus, schema) {
            continue;
        }
        for batch in engine.ctx.sql(sql).await?.collect().await? {
            units.extend(rows(schema, &batch)?);
        }
    }
    let raw_by_folder: HashMap<String, String> = engine
        .corpus
        .formats
        .iter()
        .filter(|d| d.format.lines_table.is_some())
        .flat_map(|d| d.files.iter())
        .map(|f| crate::text::escape::path_text(&f.path).into_owned())
        .map(|file| (folder_of(&file), file))
        .collect();
    let mut attached = HashSet::new();
    for unit in units.iter_mut().filter(|u| u.schema == "reeval") {
        if let Some(raw) = raw_by_folder.get(&folder_of(&unit.files[0])) {
            unit.files.push(raw.clone());
            attached.insert(raw.clone());
        }
    }
    // A raw stream with no transcript beside it is a unit of its own.
    for raw in raw_by_folder.into_values().filter(|raw| !attached.contains(raw)) {
        let id = format!("raw/{raw}");
        units.push(Unit {
            schema: "reeval",
            id,
            files: vec![raw],
            bytes: 0,
            open: false,
            run_id: String::new(),
            date: None,
        });
    }
    for unit in &mut units {
        unit.bytes = unit.files.iter().map(|f| sizes.get(f).copied().unwrap_or(0)).sum();
    }
    Ok(units)
}

/// Whether any format of a schema has files.
pub fn has_transcripts(corpus: &Corpus, schema: &str) -> bool {
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

/// The folder a file lies in, as text.
fn folder_of(file: &str) -> String {
    Path::new(file).parent().map(|p| p.display().to_string()).unwrap_or_default()
}

/// What each file's rows are partitioned by: its unit's start day, or its unit's run.
pub fn partition_values(units: &[&Unit], by_run: bool) -> HashMap<String, String> {
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
pub fn batches(mut units: Vec<&Unit>, by_date: bool) -> Vec<Vec<&Unit>> {
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
pub fn narrowed(corpus: &Corpus, units: &[&Unit]) -> Corpus {
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
