//! Skipping whole files: a filter on columns that are the same for every line of a file (`run_id`,
//! `file`, `eval`, ...) is evaluated once per file, and the files it rejects are not read.

use crate::scan::decode::{FileContext, LineValues, RowDecoder};
use crate::source::files::SourceFiles;
use crate::table::event_table::EventTable;
use datafusion::arrow::array::{Array, BooleanArray};
use datafusion::catalog::Session;
use datafusion::common::DFSchema;
use datafusion::logical_expr::Expr;

/// Whether `filter` reads only columns with one value per file.
pub(crate) fn is_per_file(table: &EventTable, filter: &Expr) -> bool {
    let columns = filter.column_refs();
    !columns.is_empty()
        && columns.iter().all(|c| table.columns.iter().any(|t| t.name == c.name && t.source.is_per_file()))
}

/// The files (indexes of `all`, in order) whose per-file values pass every per-file filter. A
/// filter that cannot be evaluated rejects nothing: the query applies it to the rows anyway.
pub(crate) fn prune(
    state: &dyn Session,
    table: &EventTable,
    all: &SourceFiles,
    files: Vec<u32>,
    filters: &[Expr],
) -> Vec<u32> {
    let filters: Vec<&Expr> = filters.iter().filter(|f| is_per_file(table, f)).collect();
    if filters.is_empty() || files.is_empty() {
        return files;
    }
    let mut keep = vec![true; files.len()];
    let projection: Vec<usize> =
        (0..table.columns.len()).filter(|&i| table.columns[i].source.is_per_file()).collect();
    let mut decoder = RowDecoder::new(table, Some(&projection));
    for &i in &files {
        decoder.start_file(FileContext::new(&table.columns, &all.get(i as usize)));
        decoder.push(&LineValues::default(), &mut Vec::new());
    }
    let Ok(batch) = decoder.finish() else { return files };
    let Ok(schema) = DFSchema::try_from(batch.schema()) else { return files };
    for filter in filters {
        let verdict = state
            .create_physical_expr((*filter).clone(), &schema)
            .and_then(|expr| expr.evaluate(&batch))
            .and_then(|value| value.into_array(batch.num_rows()));
        let Some(verdict) = verdict.ok().and_then(|a| a.as_any().downcast_ref::<BooleanArray>().cloned())
        else {
            continue;
        };
        for (i, keep) in keep.iter_mut().enumerate() {
            *keep &= verdict.is_valid(i) && verdict.value(i);
        }
    }
    files.into_iter().zip(keep).filter(|(_, keep)| *keep).map(|(f, _)| f).collect()
}
