//! The `files` table: one row per file of a format's naming, transcript or not (then with why it
//! is skipped), with what its place says, its size and its damage, made when a statement first
//! reads it (tens of thousands of rows most statements never need).

use crate::scan::decode::{FileContext, LineValues, RowDecoder};
use crate::source::files::SourceFile;
use crate::table::corpus::FormatData;
use crate::table::event_table::{Column, EventTable, Rows, context_columns};
use async_trait::async_trait;
use datafusion::arrow::array::{BooleanArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::{Arc, OnceLock};

/// A format's `files` table.
#[derive(Debug)]
pub(crate) struct FilesTable {
    pub(crate) data: Arc<FormatData>,
    /// Where the corpus's files were found: what a plan sent to a cluster names the table by.
    pub(crate) origin: crate::table::corpus::Origin,
    schema: SchemaRef,
    rows: OnceLock<Arc<MemTable>>,
}

impl FilesTable {
    pub(crate) fn new(data: Arc<FormatData>, origin: crate::table::corpus::Origin) -> Result<Self> {
        let schema = rows(&data, 0)?.schema();
        Ok(Self { data, origin, schema, rows: OnceLock::new() })
    }

    /// The rows, made once.
    fn table(&self) -> Result<Arc<MemTable>> {
        if let Some(table) = self.rows.get() {
            return Ok(table.clone());
        }
        let batch = rows(&self.data, self.data.files.len() + self.data.not_transcripts.len())?;
        let table = Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]])?);
        Ok(self.rows.get_or_init(|| table).clone())
    }
}

/// The rows of the first `n` files of `data`: its transcripts, then the files that are not.
fn rows(data: &FormatData, n: usize) -> Result<RecordBatch> {
    let context: Vec<Column> =
        context_columns(&data.format).into_iter().filter(|c| c.source.is_per_file()).collect();
    let table = EventTable {
        name: "files".into(),
        rows: Rows::AllEvents,
        about: String::new(),
        fields_path: vec![],
        columns: context,
        events: None,
        documented: true,
        renamed: None,
    };
    let files: Vec<(std::borrow::Cow<SourceFile>, Option<u64>, Option<String>)> = (data.files.iter())
        .enumerate()
        .map(|(i, file)| (std::borrow::Cow::Owned(file), Some(data.file_damage.of_file(i)), None))
        .chain(
            (data.not_transcripts.iter())
                .map(|(file, why)| (std::borrow::Cow::Borrowed(file.as_ref()), None, Some(why.to_string()))),
        )
        .take(n)
        .collect();
    let mut decoder = RowDecoder::new(&table, None);
    for (file, ..) in &files {
        decoder.start_file(FileContext::new(&table.columns, file));
        decoder.push(&LineValues::default(), &mut Vec::new());
    }
    let batch = decoder.finish()?;
    let bytes = Int64Array::from_iter_values(files.iter().map(|(f, ..)| f.size as i64));
    let damaged: Int64Array = files.iter().map(|(_, d, _)| d.map(|d| d as i64)).collect();
    let transcript: BooleanArray = files.iter().map(|(_, _, why)| Some(why.is_none())).collect();
    let skipped: StringArray = files.iter().map(|(_, _, why)| why.as_deref()).collect();
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("bytes", DataType::Int64, false));
    fields.push(Field::new("damaged_lines", DataType::Int64, true));
    fields.push(Field::new("transcript", DataType::Boolean, false));
    fields.push(Field::new("skipped", DataType::Utf8, true));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(bytes));
    columns.push(Arc::new(damaged));
    columns.push(Arc::new(transcript));
    columns.push(Arc::new(skipped));
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?)
}

#[async_trait]
impl TableProvider for FilesTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.table()?.scan(state, projection, filters, limit).await
    }
}
