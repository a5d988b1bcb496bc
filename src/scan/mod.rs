//! The one scan every format and every event table share. In: the corpus and one of its tables.
//! Out: a DataFusion table provider whose plan streams record batches from the transcript files,
//! decoding only the projected columns and skipping the files a filter rules out; and the
//! `files` table.

pub mod decode;
mod exec;
pub(crate) mod files_table;
pub mod follow;
mod line_reader;
pub(crate) mod problem_metric;
mod prune;
pub(crate) mod wire;

pub(crate) use exec::{ScanExec, ScanProgress, problems_of, progress_of};
/// The per-line reading of a scan, public for the fuzz targets and property tests.
pub use line_reader::LineReader;

use crate::table::corpus::{Corpus, FormatData};
use crate::table::event_table::EventTable;
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::datasource::TableProvider;
use datafusion::error::Result;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use object_store::ObjectStore;
use std::sync::Arc;

/// What every partition of a scan shares.
#[derive(Debug, Clone)]
pub struct ScanSource {
    pub data: Arc<FormatData>,
    pub table: Arc<EventTable>,
    pub store: Arc<dyn ObjectStore>,
    pub max_line_bytes: usize,
    pub problems: Arc<crate::table::corpus::ProblemLog>,
}

/// A session setting: the scans of this session's plans are run by a cluster, each task
/// running some of their partitions ([`ScanExec::split_by_child`]).
#[derive(Debug)]
pub struct SplitScans;

/// Whether `table` is one of the event tables (or `events`, or `errors`): its rows are lines.
pub(crate) fn is_event_table(table: &dyn TableProvider) -> bool {
    table.downcast_ref::<ScanTable>().is_some()
}

/// One event table (or `events`, or `errors`) of one format, as a DataFusion table.
#[derive(Debug)]
pub(crate) struct ScanTable {
    pub(crate) source: Arc<ScanSource>,
    schema: SchemaRef,
    /// Where the corpus's files were found: what a plan sent to a cluster names the table by.
    pub(crate) origin: crate::table::corpus::Origin,
}

impl ScanTable {
    pub(crate) fn new(corpus: &Corpus, data: &Arc<FormatData>, table: &Arc<EventTable>) -> Self {
        let source = ScanSource {
            data: data.clone(),
            table: table.clone(),
            store: corpus.store.clone(),
            max_line_bytes: corpus.options.max_line_bytes,
            problems: corpus.problems.clone(),
        };
        Self { schema: table.schema(), source: Arc::new(source), origin: corpus.origin() }
    }
}

#[async_trait]
impl TableProvider for ScanTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if prune::is_per_file(&self.source.table, f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Files are read through the session's object-store registry (local files by default).
        let store = state.runtime_env().object_store(ObjectStoreUrl::local_filesystem())?;
        // Each scan of each statement has a log of its own: what the statement read is what it
        // warns of.
        let problems = Arc::new(crate::table::corpus::ProblemLog::of_scan(self.source.problems.clone()));
        let source = Arc::new(ScanSource { store, problems, ..(*self.source).clone() });
        let data = &self.source.data;
        let candidates = data.files_for(&self.source.table);
        // A damaged line may have been of any type: the damaged files that the table's type
        // leaves out are not read, but what they skipped is the statement's to hear of.
        let elsewhere: Vec<u32> = match &self.source.table.rows {
            crate::table::event_table::Rows::Type(_) => {
                let others: Vec<u32> = (data.file_damage.damaged())
                    .map(|i| i as u32)
                    .filter(|i| candidates.binary_search(i).is_err())
                    .collect();
                prune::prune(state, &self.source.table, &data.files, others, filters)
            }
            _ => Vec::new(),
        };
        let files = prune::prune(state, &self.source.table, &data.files, candidates, filters);
        let partitions = state.config().target_partitions().max(1);
        let config = exec::ScanConfig {
            projection: projection.cloned(),
            limit,
            batch_size: state.config().batch_size(),
            follow: state.config().get_extension::<follow::FollowPositions>(),
        };
        let scan = ScanExec::new(source, files, config, partitions).with_damaged_elsewhere(elsewhere);
        match state.config().get_extension::<SplitScans>() {
            Some(_) => Ok(Arc::new(scan.split_by_child()?)),
            None => Ok(Arc::new(scan)),
        }
    }
}
