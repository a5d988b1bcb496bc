//! Writing query results to any `Write` as the batches come: an aligned table for people
//! (control characters in it escaped; aligned on its first rows, then streamed), CSV, TSV, a JSON
//! array or JSON lines for scripts (every value exact).

use crate::error::Error;
use crate::text::escape;
use datafusion::arrow::array::{Array, ArrayRef, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::{LineDelimitedWriter, WriterBuilder, writer::JsonArray};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

/// How results are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum OutputFormat {
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
pub(crate) fn write_batches(
    format: OutputFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    let mut writer = ResultWriter::new(format, schema, out);
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish().map(|_| ())
}

/// Writes one batch made by txq itself (a list) in `format`, flushed.
pub(crate) fn write_batch(
    format: OutputFormat,
    batch: &RecordBatch,
    out: &mut dyn Write,
) -> Result<(), Error> {
    write_batches(format, &batch.schema(), std::slice::from_ref(batch), out).map_err(Error::of_output)?;
    out.flush().map_err(Error::Output)
}

/// One statement's result written batch by batch as the batches come, so that a large result
/// passes through instead of being held; the table format holds the text of its first rows only,
/// to align them.
pub(crate) struct ResultWriter<'a> {
    schema: SchemaRef,
    rows: u64,
    kind: Writing<'a>,
}

/// What a [`ResultWriter`] wrote: the result's rows, and how many of them it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) rows: u64,
    pub(crate) shown: u64,
}

enum Writing<'a> {
    Table(Box<TableWriter<'a>>),
    Csv(Box<datafusion::arrow::csv::Writer<Watched<'a>>>, u8, Rc<Cell<Option<std::io::Error>>>),
    Json(datafusion::arrow::json::Writer<&'a mut dyn Write, JsonArray>),
    Ndjson(LineDelimitedWriter<&'a mut dyn Write>),
}

impl<'a> ResultWriter<'a> {
    pub(crate) fn new(format: OutputFormat, schema: &SchemaRef, out: &'a mut dyn Write) -> Self {
        let kind = match format {
            OutputFormat::Table => Writing::Table(Box::new(TableWriter::new(schema, out))),
            OutputFormat::Csv | OutputFormat::Tsv => {
                let delimiter = if format == OutputFormat::Csv { b',' } else { b'\t' };
                let failed = Rc::new(Cell::new(None));
                // A time with a zone as RFC 3339, as the other formats write it: `Z` in UTC,
                // its offset in any other zone (a report's in --timezone).
                let writer = datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(delimiter)
                    .build(Watched { out, failed: failed.clone() });
                Writing::Csv(Box::new(writer), delimiter, failed)
            }
            OutputFormat::Json => {
                Writing::Json(WriterBuilder::new().with_explicit_nulls(true).build::<_, JsonArray>(out))
            }
            OutputFormat::Ndjson => {
                Writing::Ndjson(WriterBuilder::new().with_explicit_nulls(true).build(out))
            }
        };
        Self { schema: schema.clone(), rows: 0, kind }
    }

    /// In the table format, at most `max_rows` rows written (0: all), the rest counted only.
    pub(crate) fn with_max_rows(mut self, max_rows: usize) -> Self {
        if let Writing::Table(table) = &mut self.kind {
            table.max_rows = max_rows;
        }
        self
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows() as u64;
        match &mut self.kind {
            Writing::Table(table) => table.write(batch)?,
            Writing::Csv(writer, _, failed) => {
                writer.write(&flatten_nested(batch)?).map_err(|e| match failed.take() {
                    Some(io) => ArrowError::IoError(e.to_string(), io),
                    None => e,
                })?
            }
            Writing::Json(writer) => writer.write(batch)?,
            Writing::Ndjson(writer) => writer.write(batch)?,
        }
        Ok(())
    }

    /// Writes the rows a table holds to align its columns, now: the rows of a followed statement
    /// are seen as they come.
    pub(crate) fn show_held(&mut self) -> Result<(), ArrowError> {
        if let Writing::Table(table) = &mut self.kind
            && table.widths.is_none()
        {
            table.write_held()?;
        }
        Ok(())
    }

    /// Ends the result: a table, the header of an empty CSV, the end of the JSON array.
    pub(crate) fn finish(self) -> Result<Written, ArrowError> {
        let mut shown = self.rows;
        match self.kind {
            Writing::Table(table) => shown = table.finish()?,
            Writing::Csv(writer, delimiter, _) if self.rows == 0 => {
                let names: Vec<&str> = self.schema.fields().iter().map(|f| f.name().as_str()).collect();
                writeln!(writer.into_inner(), "{}", names.join(&(delimiter as char).to_string()))?;
            }
            Writing::Csv(..) => {}
            Writing::Json(writer) if self.rows == 0 => writeln!(writer.into_inner(), "[]")?,
            Writing::Json(mut writer) => {
                writer.finish()?;
                writeln!(writer.into_inner())?;
            }
            Writing::Ndjson(mut writer) => writer.finish()?,
        }
        Ok(Written { rows: self.rows, shown })
    }
}

/// Rows of a table held to measure its columns' widths before any is written: a shorter table
/// is aligned whole; in a longer one, a later value wider than its column pushes its row's
/// border out (it is never cut).
const TABLE_ALIGN_ROWS: usize = 1000;

/// The table format, written as Arrow's `pretty` module writes it (`+---+` borders), from the
/// escaped text of the rows ([`escape::text`]); only the text of the first rows is held.
struct TableWriter<'a> {
    out: &'a mut dyn Write,
    headers: Vec<String>,
    /// The first rows' cells, until the widths are set.
    held: Vec<Vec<String>>,
    /// Column widths, once the header is written.
    widths: Option<Vec<usize>>,
    /// Rows written at most (0: all).
    max_rows: usize,
    /// Rows taken (held or written).
    taken: u64,
    options: FormatOptions<'static>,
}

impl<'a> TableWriter<'a> {
    fn new(schema: &SchemaRef, out: &'a mut dyn Write) -> Self {
        Self {
            out,
            headers: schema.fields().iter().map(|f| escape::text(f.name()).into_owned()).collect(),
            held: Vec::new(),
            widths: None,
            max_rows: 0,
            taken: 0,
            options: FormatOptions::default().with_display_error(true),
        }
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        let room = match self.max_rows {
            0 => batch.num_rows(),
            max => (max as u64).saturating_sub(self.taken).min(batch.num_rows() as u64) as usize,
        };
        if room == 0 {
            return Ok(());
        }
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &self.options))
            .collect::<Result<Vec<_>, _>>()?;
        // Once the widths are set, each cell goes straight into the row's line, through one
        // buffer: a large result is a great many cells.
        let (mut line, mut raw) = (String::new(), String::new());
        for row in 0..room {
            self.taken += 1;
            let cells = batch.columns().iter().zip(&formatters);
            match &self.widths {
                Some(widths) => {
                    line.clear();
                    line.push('|');
                    for ((column, f), w) in cells.zip(widths) {
                        cell_text(column.as_ref(), f, row, &mut raw)?;
                        push_cell(&escape::text(&raw), *w, &mut line);
                    }
                    line.push('\n');
                    self.out.write_all(line.as_bytes())?;
                }
                None => {
                    let cells = cells
                        .map(|(column, f)| {
                            cell_text(column.as_ref(), f, row, &mut raw)?;
                            Ok(escape::text(&raw).into_owned())
                        })
                        .collect::<Result<Vec<String>, ArrowError>>()?;
                    self.held.push(cells);
                    if self.held.len() >= TABLE_ALIGN_ROWS {
                        self.write_held()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Sets the widths from the header and the rows held, and writes them.
    fn write_held(&mut self) -> Result<(), ArrowError> {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width_of(h)).collect();
        for row in &self.held {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width_of(cell));
            }
        }
        let mut text = String::new();
        border(&widths, &mut text);
        row_line(&self.headers, &widths, &mut text);
        border(&widths, &mut text);
        for row in std::mem::take(&mut self.held) {
            row_line(&row, &widths, &mut text);
        }
        self.out.write_all(text.as_bytes())?;
        self.widths = Some(widths);
        Ok(())
    }

    /// Writes what is left: the whole table if it was short, else its bottom border; returns
    /// the rows written.
    fn finish(mut self) -> Result<u64, ArrowError> {
        if self.widths.is_none() {
            self.write_held()?;
        }
        let mut text = String::new();
        border(self.widths.as_deref().unwrap_or_default(), &mut text);
        self.out.write_all(text.as_bytes())?;
        Ok(self.taken)
    }
}

/// A cell's text, unescaped, into `raw`: empty for null.
fn cell_text(column: &dyn Array, f: &ArrayFormatter, row: usize, raw: &mut String) -> Result<(), ArrowError> {
    raw.clear();
    if !column.is_null(row) {
        f.value(row).write(raw)?;
    }
    Ok(())
}

/// ` cell ` padded to `width`, and the border after it.
fn push_cell(cell: &str, width: usize, out: &mut String) {
    out.push(' ');
    out.push_str(cell);
    pad(width.saturating_sub(width_of(cell)) + 1, out);
    out.push('|');
}

/// `n` spaces, a run at a time (a wide column pads most of its cells by thousands).
fn pad(mut n: usize, out: &mut String) {
    const SPACES: &str = "                                                                ";
    while n > 0 {
        let run = n.min(SPACES.len());
        out.push_str(&SPACES[..run]);
        n -= run;
    }
}

/// `+-----+----+` and a line break.
fn border(widths: &[usize], out: &mut String) {
    out.push('+');
    for w in widths {
        out.extend(std::iter::repeat_n('-', w + 2));
        out.push('+');
    }
    out.push('\n');
}

/// `| a   | b  |` and a line break (a cell wider than its column pushes the rest out).
fn row_line(cells: &[String], widths: &[usize], out: &mut String) {
    out.push('|');
    for (cell, w) in cells.iter().zip(widths) {
        push_cell(cell, *w, out);
    }
    out.push('\n');
}

/// Where a CSV writer writes, keeping the last error met: arrow's CSV writer hands an I/O error
/// on as text, yet a closed pipe must end quietly (exit 0) and a full disk with exit 3 and the
/// system's words, as in the other formats.
struct Watched<'a> {
    out: &'a mut dyn Write,
    failed: Rc<Cell<Option<std::io::Error>>>,
}

impl Watched<'_> {
    /// Keeps `e`, handing the CSV writer a copy.
    fn kept(&self, e: std::io::Error) -> std::io::Error {
        let copy = std::io::Error::new(e.kind(), e.to_string());
        self.failed.set(Some(e));
        copy
    }
}

impl Write for Watched<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.out.write(bytes).map_err(|e| self.kept(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush().map_err(|e| self.kept(e))
    }
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

/// The columns `text` takes on a terminal (it holds no control character: it is escaped); the
/// table view and the streamed table measure alike.
pub(super) fn width_of(text: &str) -> usize {
    if text.is_ascii() { text.len() } else { unicode_width::UnicodeWidthStr::width(text) }
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
        assert_eq!(render(OutputFormat::Csv, std::slice::from_ref(&b)), "model,tokens\n\"a,b\",3\n,4\n");
        assert_eq!(render(OutputFormat::Tsv, std::slice::from_ref(&b)), "model\ttokens\na,b\t3\n\t4\n");
        assert_eq!(
            render(OutputFormat::Ndjson, std::slice::from_ref(&b)),
            "{\"model\":\"a,b\",\"tokens\":3}\n{\"model\":null,\"tokens\":4}\n"
        );
        assert_eq!(
            render(OutputFormat::Json, std::slice::from_ref(&b)),
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
    fn csv_writes_a_time_in_utc_with_z_and_in_another_zone_with_its_offset() {
        use datafusion::arrow::array::TimestampMicrosecondArray;
        let at = 1_788_340_443_120_000; // 2026-09-02T09:14:03.120Z
        let column = |zone: &str| {
            let times =
                TimestampMicrosecondArray::from(vec![Some(at), Some(at - 3_120_000)]).with_timezone(zone);
            let schema = Arc::new(Schema::new(vec![Field::new("t", times.data_type().clone(), true)]));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(times)]).unwrap();
            let mut out = Vec::new();
            write_batches(OutputFormat::Csv, &schema, &[batch], &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(column("UTC"), "t\n2026-09-02T09:14:03.120Z\n2026-09-02T09:14:00Z\n");
        assert_eq!(column("Asia/Kolkata"), "t\n2026-09-02T14:44:03.120+05:30\n2026-09-02T14:44:00+05:30\n");
    }

    #[test]
    fn empty_results_keep_their_header() {
        assert_eq!(render(OutputFormat::Csv, &[]), "model,tokens\n");
        assert_eq!(render(OutputFormat::Json, &[]), "[]\n");
        assert_eq!(render(OutputFormat::Ndjson, &[]), "");
        assert!(render(OutputFormat::Table, &[]).contains("| model | tokens |"));
    }

    /// Arrow's own table, as the table format wrote it before it streamed.
    fn arrow_table(schema: &SchemaRef, batches: &[RecordBatch]) -> String {
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .map(|f| Field::new(escape::text(f.name()), DataType::Utf8, true))
            .collect();
        let shown = Arc::new(Schema::new(fields));
        let options = FormatOptions::default().with_display_error(true);
        let texts: Vec<RecordBatch> = batches
            .iter()
            .map(|b| {
                let columns: Vec<ArrayRef> = b
                    .columns()
                    .iter()
                    .map(|c| as_text(c, &options, |v| escape::text(&v).into_owned()).unwrap())
                    .collect();
                RecordBatch::try_new(shown.clone(), columns).unwrap()
            })
            .collect();
        let table =
            datafusion::arrow::util::pretty::pretty_format_batches_with_schema(shown, &texts).unwrap();
        format!("{table}\n")
    }

    #[test]
    fn a_short_table_is_written_as_arrow_writes_it() {
        let (schema, b) = batch();
        let wide = Arc::new(Schema::new(vec![
            Field::new("名前", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![Some("日本語のテキスト"), Some(""), None])),
            Arc::new(Int64Array::from(vec![Some(-1), None, Some(123456789)])),
        ];
        let w = RecordBatch::try_new(wide.clone(), columns).unwrap();
        for (schema, batches) in [
            (&schema, vec![b.clone()]),
            (&schema, vec![b.clone(), b.clone()]),
            (&schema, vec![]),
            (&wide, vec![w]),
        ] {
            assert_eq!(render_with(OutputFormat::Table, schema, &batches), arrow_table(schema, &batches));
        }
    }

    fn render_with(format: OutputFormat, schema: &SchemaRef, batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        write_batches(format, schema, batches, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `n` rows of one column whose values are `i` as text.
    fn numbered(n: usize) -> (SchemaRef, RecordBatch) {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Utf8, true)]));
        let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(values))]).unwrap();
        (schema, batch)
    }

    #[test]
    fn a_long_table_is_aligned_on_its_first_rows_and_streams_the_rest() {
        let n = TABLE_ALIGN_ROWS + 500;
        let (schema, batch) = numbered(n);
        let mut out = Vec::new();
        let mut writer = ResultWriter::new(OutputFormat::Table, &schema, &mut out);
        writer.write(&batch.slice(0, TABLE_ALIGN_ROWS)).unwrap();
        // The first rows are written as soon as they set the widths, before the result ends.
        let written_early = {
            let Writing::Table(table) = &writer.kind else { unreachable!() };
            table.widths.is_some() && table.held.is_empty()
        };
        assert!(written_early);
        writer.write(&batch.slice(TABLE_ALIGN_ROWS, 500)).unwrap();
        assert_eq!(writer.finish().unwrap(), Written { rows: n as u64, shown: n as u64 });
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), n + 4);
        // Widths of the first 1000 rows (up to "999"); "1000" and on push the border out.
        assert_eq!(lines[0], "+-----+");
        assert_eq!(lines[3], "| 0   |");
        assert_eq!(lines[3 + 999], "| 999 |");
        assert_eq!(lines[3 + 1000], "| 1000 |");
        assert_eq!(lines[n + 3], "+-----+");
    }

    #[test]
    fn max_rows_writes_the_first_rows_and_counts_the_rest() {
        let (schema, batch) = numbered(10);
        let mut out = Vec::new();
        let mut writer = ResultWriter::new(OutputFormat::Table, &schema, &mut out).with_max_rows(3);
        writer.write(&batch.slice(0, 2)).unwrap();
        writer.write(&batch.slice(2, 8)).unwrap();
        assert_eq!(writer.finish().unwrap(), Written { rows: 10, shown: 3 });
        assert_eq!(String::from_utf8(out).unwrap(), "+---+\n| v |\n+---+\n| 0 |\n| 1 |\n| 2 |\n+---+\n");
    }
}
