//! Writing query results to any `Write`: an aligned table for people (control characters in it
//! escaped), CSV, TSV, a JSON array or JSON lines for scripts (every value exact).

use crate::escape;
use datafusion::arrow::array::{Array, ArrayRef, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::{LineDelimitedWriter, WriterBuilder, writer::JsonArray};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches_with_schema;
use std::io::Write;
use std::sync::Arc;

/// How results are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// An aligned table with a header.
    #[default]
    Table,
    /// Comma-separated values with a header row.
    Csv,
    /// Tab-separated values with a header row.
    Tsv,
    /// One JSON array of objects.
    Json,
    /// One JSON object per line.
    Ndjson,
}

impl std::str::FromStr for OutputFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        <Self as clap::ValueEnum>::from_str(s, true)
            .map_err(|_| format!("unknown format {s:?}: use table, csv, tsv, json or ndjson"))
    }
}

/// Writes one statement's result in `format`.
pub fn write_batches(
    format: OutputFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    match format {
        OutputFormat::Table => {
            let (schema, batches) = as_shown_text(schema, batches)?;
            writeln!(out, "{}", pretty_format_batches_with_schema(schema, &batches)?)?
        }
        OutputFormat::Csv | OutputFormat::Tsv => {
            let delimiter = if format == OutputFormat::Csv { b',' } else { b'\t' };
            if batches.iter().all(|b| b.num_rows() == 0) {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                writeln!(out, "{}", names.join(&(delimiter as char).to_string()))?;
                return Ok(());
            }
            let mut writer = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .with_delimiter(delimiter)
                .with_timestamp_tz_format("%Y-%m-%dT%H:%M:%S%.fZ".to_string())
                .build(&mut *out);
            for batch in batches {
                writer.write(&flatten_nested(batch)?)?;
            }
        }
        OutputFormat::Json => {
            if batches.iter().all(|b| b.num_rows() == 0) {
                writeln!(out, "[]")?;
                return Ok(());
            }
            let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, JsonArray>(&mut *out);
            for batch in batches {
                writer.write(batch)?;
            }
            writer.finish()?;
            writeln!(out)?;
        }
        OutputFormat::Ndjson => {
            let mut writer: LineDelimitedWriter<_> =
                WriterBuilder::new().with_explicit_nulls(true).build(&mut *out);
            for batch in batches {
                writer.write(batch)?;
            }
            writer.finish()?;
        }
    }
    Ok(())
}

/// The result as the table format shows it: every column as text, as Arrow displays it, with
/// control characters escaped ([`escape::text`]) in the values and the column names, so that a
/// value cannot act on the terminal nor break its row over lines. Nulls stay empty.
fn as_shown_text(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let fields: Vec<Field> =
        schema.fields().iter().map(|f| Field::new(escape::text(f.name()), DataType::Utf8, true)).collect();
    let shown = Arc::new(Schema::new(fields));
    let options = FormatOptions::default().with_display_error(true);
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
        for column in batch.columns() {
            columns.push(as_text(column, &options, |value| escape::text(&value).into_owned())?);
        }
        out.push(RecordBatch::try_new_with_options(
            shown.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )?);
    }
    Ok((shown, out))
}

/// A column as Arrow displays each value, each passed through `shown`; nulls stay null.
fn as_text(
    column: &ArrayRef,
    options: &FormatOptions,
    shown: impl Fn(String) -> String,
) -> Result<ArrayRef, ArrowError> {
    let formatter = ArrayFormatter::try_new(column.as_ref(), options)?;
    let mut text = StringBuilder::new();
    for i in 0..column.len() {
        if column.is_null(i) {
            text.append_null();
        } else {
            text.append_value(shown(formatter.value(i).to_string()));
        }
    }
    Ok(Arc::new(text.finish()))
}

/// The batch with list and struct columns rendered as text, which CSV cannot hold otherwise.
fn flatten_nested(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let nested = |t: &DataType| t.is_nested();
    if !batch.schema().fields().iter().any(|f| nested(f.data_type())) {
        return Ok(batch.clone());
    }
    let options = FormatOptions::default();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if nested(field.data_type()) {
            fields.push(Field::new(field.name(), DataType::Utf8, true));
            columns.push(as_text(column, &options, |value| value)?);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};

    fn batch() -> (SchemaRef, RecordBatch) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("model", DataType::Utf8, true),
            Field::new("tokens", DataType::Int64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![Some("a,b"), None])),
            Arc::new(Int64Array::from(vec![Some(3), Some(4)])),
        ];
        (schema.clone(), RecordBatch::try_new(schema, columns).unwrap())
    }

    fn render(format: OutputFormat, batches: &[RecordBatch]) -> String {
        let (schema, _) = batch();
        let mut out = Vec::new();
        write_batches(format, &schema, batches, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_format() {
        let (_, b) = batch();
        assert_eq!(render(OutputFormat::Csv, &[b.clone()]), "model,tokens\n\"a,b\",3\n,4\n");
        assert_eq!(render(OutputFormat::Tsv, &[b.clone()]), "model\ttokens\na,b\t3\n\t4\n");
        assert_eq!(
            render(OutputFormat::Ndjson, &[b.clone()]),
            "{\"model\":\"a,b\",\"tokens\":3}\n{\"model\":null,\"tokens\":4}\n"
        );
        assert_eq!(
            render(OutputFormat::Json, &[b.clone()]),
            "[{\"model\":\"a,b\",\"tokens\":3},{\"model\":null,\"tokens\":4}]\n"
        );
        assert!(render(OutputFormat::Table, &[b]).contains("| a,b   | 3      |"));
    }

    #[test]
    fn the_table_escapes_what_a_terminal_would_act_on_and_csv_keeps_it() {
        let schema = Arc::new(Schema::new(vec![Field::new("v\u{1b}[2J", DataType::Utf8, true)]));
        let values = StringArray::from(vec![Some("\u{1b}[31mred\nnext"), Some("\u{9b}c"), None]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
        let mut table = Vec::new();
        write_batches(OutputFormat::Table, &schema, std::slice::from_ref(&batch), &mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert!(table.contains("| v\\x1b[2J"), "{table}");
        assert!(table.contains("| \\x1b[31mred\\nnext |"), "{table}");
        assert!(table.contains("| \\u{9b}c"), "{table}");
        assert_eq!(table.lines().count(), 3 + 3 + 1, "a row a line: {table}");
        assert!(!table.chars().any(|c| c != '\n' && c.is_control()), "{table}");
        let mut csv = Vec::new();
        write_batches(OutputFormat::Csv, &schema, &[batch], &mut csv).unwrap();
        assert_eq!(String::from_utf8(csv).unwrap(), "v\u{1b}[2J\n\"\u{1b}[31mred\nnext\"\n\u{9b}c\n\"\"\n");
    }

    #[test]
    fn empty_results_keep_their_header() {
        assert_eq!(render(OutputFormat::Csv, &[]), "model,tokens\n");
        assert_eq!(render(OutputFormat::Json, &[]), "[]\n");
        assert_eq!(render(OutputFormat::Ndjson, &[]), "");
        assert!(render(OutputFormat::Table, &[]).contains("| model | tokens |"));
    }
}
