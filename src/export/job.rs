//! One export's writing: every table of a set of units, read in batches through a session over
//! just those transcripts, written by a partitioning writer under the export's folder; and the
//! normalized tables, written whole from the session over every transcript.

use super::paths::Root;
use super::progress::Progress;
use super::tables::ExportTable;
use super::units::{self, Unit};
use super::writer::{self, Partitioning, TableWriter};
use super::{Error, PartitionBy, widen};
use crate::sql::session::{CATALOG, Engine};
use datafusion::common::TableReference;
use futures::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;

/// One export's writing: tables, partitioning, generation, and the folder the files go to.
pub(super) struct Job<'a> {
    pub(super) engine: &'a Engine,
    pub(super) tables: &'a [ExportTable],
    pub(super) partition_by: Option<PartitionBy>,
    pub(super) generation: u32,
    pub(super) root: &'a Root,
}

impl Job<'_> {
    /// Writes every table's rows of `units` (the normalized tables are [`Self::write_whole`]'s):
    /// those of settled units to `*-settled-*` files, those of open ones to `*-open-*` files, in
    /// batches of units ([`units::batches`]). A table that gets no rows and is not in `held`
    /// gets a file with no rows, when the export is not partitioned.
    pub(super) async fn write(
        &self,
        units: &[&Unit],
        progress: &Arc<Progress>,
        held: &HashSet<String>,
    ) -> Result<(), Error> {
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
        let by_unit: Vec<&ExportTable> = self.tables.iter().filter(|t| !t.is_whole()).collect();
        let total = steps.len() * by_unit.len();
        let mut written: HashSet<String> = HashSet::new();
        for (step, (name, index, step_units)) in steps.iter().enumerate() {
            let corpus = units::narrowed(&self.engine.corpus, step_units);
            let ctx = crate::sql::session::session(&corpus, &self.engine.memory).await?;
            for (place, table) in by_unit.iter().enumerate() {
                progress.start_table(&table.qualified(), step * by_unit.len() + place + 1, total);
                let prefix = format!("part-{:05}-{name}-{index}-", self.generation);
                if self.write_table(&ctx, table, &prefix, partitioning.clone(), progress).await? > 0 {
                    written.insert(table.qualified());
                }
            }
        }
        if self.partition_by.is_none() {
            for table in
                by_unit.iter().filter(|t| !written.contains(&t.qualified()) && !held.contains(&t.qualified()))
            {
                let path = table.folder().join(format!("part-{:05}-settled-empty.parquet", self.generation));
                writer::write_empty(self.root, &path, table.columns.clone())?;
                progress.add_file();
            }
        }
        Ok(())
    }

    /// Writes each normalized table whole, through the session over every transcript (the one
    /// `txq -e` reads them in), to `*-whole-*` files, never partitioned (`tool_calls` has no
    /// file column to be, and one dataset over every harness is what they are for); one with no
    /// rows gets a file with none.
    pub(super) async fn write_whole(&self, progress: &Arc<Progress>) -> Result<(), Error> {
        let whole: Vec<&ExportTable> = self.tables.iter().filter(|t| t.is_whole()).collect();
        for (place, table) in whole.iter().enumerate() {
            progress.start_table(&table.qualified(), place + 1, whole.len());
            let prefix = format!("part-{:05}-whole-", self.generation);
            if self.write_table(&self.engine.ctx, table, &prefix, None, progress).await? == 0 {
                let path = table.folder().join(format!("part-{:05}-whole-empty.parquet", self.generation));
                writer::write_empty(self.root, &path, table.columns.clone())?;
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
    ) -> Result<usize, Error> {
        // Read through the provider, not by name: a name from the data may be one SQL cannot
        // plan a scan of (an empty one), and the export writes every table.
        let provider =
            ctx.table_provider(TableReference::full(CATALOG, table.schema, table.name.as_str())).await?;
        let frame = ctx.read_table(provider)?;
        // The dataset's columns (an append's may be wider than the table's now: see
        // [`widen`]) hold every column of the table, of the same type.
        let fits = frame.schema().fields().iter().all(|field| {
            table.columns.field_with_name(field.name()).is_ok_and(|f| f.data_type() == field.data_type())
        });
        if !fits {
            return Err(Error::Sql(datafusion::error::DataFusionError::Internal(format!(
                "{}: columns differ between passes",
                table.qualified()
            ))));
        }
        let widened = !widen::same_columns(frame.schema().as_arrow(), &table.columns);
        let mut stream = frame.execute_stream().await?;
        let mut writer = TableWriter::new(
            self.root.clone(),
            table.folder(),
            prefix.to_string(),
            table.columns.clone(),
            partitioning,
            progress.clone(),
        )?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            if widened {
                writer.write(&widen::to_columns(&batch, &table.columns)?)?;
            } else {
                writer.write(&batch)?;
            }
        }
        Ok(writer.finish()?.len())
    }
}
