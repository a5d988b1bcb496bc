//! Results for a person at a terminal (the shell): an aligned table fitted to the terminal's
//! width, long cells cut with an ellipsis and the columns that cannot fit left out, or one field
//! per line; at most so many rows; and the footer that says what was shown.

use super::print::{OutputFormat, width_of, write_batches};
use crate::text::escape;
use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io::Write;
use std::time::Duration;
use unicode_width::UnicodeWidthChar;

/// How the shell shows results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Screen {
    /// Rows shown at most in a table (0: all).
    pub(crate) max_rows: usize,
    /// Columns of the terminal.
    pub(crate) width: usize,
    /// One field per line instead of a table.
    pub(crate) expanded: bool,
    /// The footer says how long the statement took.
    pub(crate) timing: bool,
}

/// No column is cut narrower than this, unless its values are narrower.
const MIN_COLUMN_WIDTH: usize = 8;

/// A value this wide or narrower is not cut while the columns shown can fit it: short columns stay
/// whole, and long ones give.
const WHOLE_VALUE_WIDTH: usize = 16;

/// How a null is shown in a table or one field per line: apart from `''`, which shows as nothing.
pub(crate) const NULL: &str = "∅";

/// What of a result was shown, for the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shown {
    pub(crate) rows: usize,
    pub(crate) shown_rows: usize,
    /// Columns left out because the terminal is too narrow for them.
    pub(crate) hidden_columns: usize,
}

impl Shown {
    /// Whether rows or columns were left out.
    pub(crate) fn is_cut(&self) -> bool {
        self.shown_rows < self.rows || self.hidden_columns > 0
    }

    /// `1234 rows (40 shown, \maxrows N for more) in 312 ms`.
    pub(crate) fn footer(&self, elapsed: Option<Duration>) -> String {
        let mut text = format!("{} row{}", self.rows, if self.rows == 1 { "" } else { "s" });
        let mut notes = Vec::new();
        if self.shown_rows < self.rows {
            notes.push(format!("{} shown, \\maxrows N for more", self.shown_rows));
        }
        if self.hidden_columns > 0 {
            let s = if self.hidden_columns == 1 { "" } else { "s" };
            notes.push(format!("{} column{s} left out, \\x shows every column", self.hidden_columns));
        }
        if !notes.is_empty() {
            text.push_str(&format!(" ({})", notes.join("; ")));
        }
        if let Some(elapsed) = elapsed {
            text.push_str(&format!(" in {}", duration(elapsed)));
        }
        text
    }
}

/// `12 ms`, `1.52 s`.
pub(crate) fn duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

impl Screen {
    /// Whether nothing is to be fitted: every row, every column, as a table (results sent to a
    /// file), so that the table can be written as it comes, as a script's is.
    pub(crate) fn holds_everything(&self) -> bool {
        self.max_rows == 0 && self.width == usize::MAX && !self.expanded
    }

    /// Writes a result: the table format fitted to the screen (or one field per line), any other
    /// format whole.
    pub(crate) fn write(
        &self,
        format: OutputFormat,
        schema: &SchemaRef,
        batches: &[RecordBatch],
        out: &mut dyn Write,
    ) -> Result<Shown, ArrowError> {
        let rows = batches.iter().map(|b| b.num_rows()).sum();
        if format != OutputFormat::Table {
            write_batches(format, schema, batches, out)?;
            return Ok(Shown { rows, shown_rows: rows, hidden_columns: 0 });
        }
        let limit = if self.max_rows == 0 { rows } else { self.max_rows.min(rows) };
        let cells = cells(batches, limit)?;
        let headers: Vec<String> =
            schema.fields().iter().map(|f| escape::text(f.name()).into_owned()).collect();
        let hidden_columns = if self.expanded {
            write_expanded(&headers, &cells, self.width, out)?;
            0
        } else {
            let right: Vec<bool> = schema.fields().iter().map(|f| f.data_type().is_numeric()).collect();
            write_table(&headers, &right, &cells, self.width, out)?
        };
        Ok(Shown { rows, shown_rows: limit, hidden_columns })
    }
}

/// The first `limit` rows as printable text, row by row.
fn cells(batches: &[RecordBatch], limit: usize) -> Result<Vec<Vec<String>>, ArrowError> {
    let options = FormatOptions::default().with_display_error(true);
    let mut rows = Vec::with_capacity(limit);
    for batch in batches {
        if rows.len() >= limit {
            break;
        }
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        // A column of the null type has no null buffer: every value is null all the same.
        let nulls: Vec<Option<datafusion::arrow::buffer::NullBuffer>> =
            batch.columns().iter().map(|c| c.logical_nulls()).collect();
        for row in 0..batch.num_rows().min(limit - rows.len()) {
            let row = (batch.columns().iter().zip(&formatters).zip(&nulls))
                .map(|((column, f), nulls)| {
                    if nulls.as_ref().is_some_and(|n| n.is_null(row)) || column.is_null(row) {
                        NULL.to_string()
                    } else {
                        escape::text(&f.value(row).to_string()).into_owned()
                    }
                })
                .collect();
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The text cut to `width` columns, its end replaced by `…` when cut.
fn cut(text: &str, width: usize) -> String {
    if width_of(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

fn pad(text: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(width_of(text)));
    if right { format!("{fill}{text}") } else { format!("{text}{fill}") }
}

/// Column widths that fit `total` terminal columns, for columns `natural` wide at most (their
/// header or widest value) whose widest values are `values` wide. As many leading columns are
/// shown as fit with each value up to [`WHOLE_VALUE_WIDTH`] whole (longer ones at least that
/// wide, headers cut to [`MIN_COLUMN_WIDTH`] if need be), and one more cut to fit when there is
/// room; headers wider than their values give first, then the widest values. Returns fewer widths
/// than columns when some cannot fit.
fn fit_widths(natural: &[usize], values: &[usize], total: usize) -> Vec<usize> {
    // What a column needs to be worth showing.
    let mut want: Vec<usize> = (natural.iter().zip(values))
        .map(|(&n, &v)| n.min(v.clamp(MIN_COLUMN_WIDTH, WHOLE_VALUE_WIDTH)))
        .collect();
    // A table of n columns takes 3n + 1 columns of borders and padding.
    let mut count = 0;
    let mut needed = 1;
    while count < natural.len() && needed + want[count] + 3 <= total {
        needed += want[count] + 3;
        count += 1;
    }
    // One more, cut narrower, when it fits so.
    if count < natural.len() && needed + natural[count].min(MIN_COLUMN_WIDTH) + 3 <= total {
        want[count] = natural[count].min(MIN_COLUMN_WIDTH);
        count += 1;
    }
    let count = count.max(1);
    let budget = total.saturating_sub(3 * count + 1);
    let (natural, values, want) = (&natural[..count], &values[..count], &want[..count]);
    if natural.iter().sum::<usize>() <= budget {
        return natural.to_vec();
    }
    // Every value whole (to the width wanted): between that and the natural width the headers
    // give; else between the width wanted and that the values give.
    let whole: Vec<usize> = (want.iter().zip(values)).map(|(&w, &v)| w.max(v)).collect();
    let (low_bound, high_bound) = match whole.iter().sum::<usize>() <= budget {
        true => (&whole[..], natural),
        false => (want, &whole[..]),
    };
    let with_cap = |cap: usize| -> Vec<usize> {
        high_bound.iter().zip(low_bound).map(|(&h, &l)| h.min(cap.max(l))).collect()
    };
    // The largest cap under which the columns fit, then what is left to the widest ones.
    let (mut low, mut high) = (0, high_bound.iter().copied().max().unwrap_or(0));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if with_cap(mid).iter().sum::<usize>() <= budget { low = mid } else { high = mid - 1 }
    }
    let mut widths = with_cap(low);
    let mut left = budget.saturating_sub(widths.iter().sum());
    for (w, &h) in widths.iter_mut().zip(high_bound) {
        if left > 0 && *w < h {
            *w += 1;
            left -= 1;
        }
    }
    widths
}

/// The context columns of each format, in their order: a result that starts with them all is
/// `select *` of an event table, whose own fields are what a narrow screen should show first.
fn context_prefixes() -> &'static [Vec<&'static str>] {
    static PREFIXES: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();
    PREFIXES.get_or_init(|| {
        crate::format::all().iter().map(|f| f.context.iter().map(|c| c.name).collect()).collect()
    })
}

/// The order the columns are shown in: as they are, unless the table is too wide for `total`
/// columns and starts with a format's context columns (`file`, `line`, `run_id`, ...), which then
/// go last.
fn column_order(headers: &[String], natural: &[usize], total: usize) -> Vec<usize> {
    let as_is: Vec<usize> = (0..headers.len()).collect();
    if natural.iter().sum::<usize>() + 3 * natural.len() < total {
        return as_is;
    }
    let context = context_prefixes()
        .iter()
        .filter(|p| p.len() < headers.len())
        .find(|prefix| prefix.iter().zip(headers).all(|(c, h)| c == h));
    match context {
        Some(prefix) => (prefix.len()..headers.len()).chain(0..prefix.len()).collect(),
        None => as_is,
    }
}

/// Writes an aligned table fitted to `total` columns; returns how many columns were left out.
fn write_table(
    headers: &[String],
    right: &[bool],
    rows: &[Vec<String>],
    total: usize,
    out: &mut dyn Write,
) -> Result<usize, ArrowError> {
    let values: Vec<usize> =
        (0..headers.len()).map(|i| rows.iter().map(|r| width_of(&r[i])).max().unwrap_or(0)).collect();
    let natural: Vec<usize> = (0..headers.len()).map(|i| values[i].max(width_of(&headers[i]))).collect();
    let order = column_order(headers, &natural, total);
    let pick = |widths: &[usize]| -> Vec<usize> { order.iter().map(|&i| widths[i]).collect() };
    let widths = fit_widths(&pick(&natural), &pick(&values), total);
    let shown = &order[..widths.len()];
    let rule = format!("+{}+", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("+"));
    let line = |cells: &[String], align: &dyn Fn(usize) -> bool| {
        let cells: Vec<String> =
            (shown.iter().zip(&widths)).map(|(&i, &w)| pad(&cut(&cells[i], w), w, align(i))).collect();
        format!("| {} |", cells.join(" | "))
    };
    writeln!(out, "{rule}")?;
    writeln!(out, "{}", line(headers, &|_| false))?;
    writeln!(out, "{rule}")?;
    for row in rows {
        writeln!(out, "{}", line(row, &|i| right[i]))?;
    }
    writeln!(out, "{rule}")?;
    Ok(headers.len() - widths.len())
}

/// Writes each row as a block for a person to read at a terminal `total` columns wide: the
/// first column's value alone on a line, then each other column's wrapped at the width and
/// indented (`txq query --list`: a long description per name reads badly as a table row).
pub(crate) fn write_blocks(batch: &RecordBatch, total: usize, out: &mut dyn Write) -> Result<(), ArrowError> {
    let rows = cells(std::slice::from_ref(batch), batch.num_rows())?;
    let indent = "    ";
    let options = textwrap::Options::new(total.saturating_sub(1).max(20))
        .initial_indent(indent)
        .subsequent_indent(indent);
    for (n, row) in rows.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        let Some((first, rest)) = row.split_first() else { continue };
        writeln!(out, "{first}")?;
        for value in rest {
            for line in textwrap::wrap(value, &options) {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

/// Writes each row as a record of `name | value` lines, values cut to fit `total` columns.
fn write_expanded(
    headers: &[String],
    rows: &[Vec<String>],
    total: usize,
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    let name_width = headers.iter().map(|h| width_of(h)).max().unwrap_or(0);
    let value_width = total.saturating_sub(name_width + 3).max(MIN_COLUMN_WIDTH);
    let widest = rows.iter().flatten().map(|v| width_of(v).min(value_width)).max().unwrap_or(0);
    for (n, row) in rows.iter().enumerate() {
        let title = format!("-[ RECORD {} ]", n + 1);
        let rule = "-".repeat((name_width + 3 + widest).saturating_sub(width_of(&title)));
        writeln!(out, "{title}{rule}")?;
        for (header, value) in headers.iter().zip(row) {
            writeln!(out, "{} | {}", pad(header, name_width, false), cut(value, value_width))?;
        }
    }
    Ok(())
}

/// The columns text written to stdout may take: the terminal's, else `$COLUMNS` (as a shell
/// exports it to a pipe), else `otherwise`; a width under 20 is taken for none.
pub(crate) fn stdout_width(otherwise: usize) -> usize {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(otherwise)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn result(rows: usize, text: &str) -> (SchemaRef, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("number", DataType::Int64, true),
            Field::new("text", DataType::Utf8, true),
            Field::new("more", DataType::Utf8, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(StringArray::from_iter_values((0..rows).map(|_| text))),
            Arc::new(StringArray::from_iter_values((0..rows).map(|_| "x"))),
        ];
        (schema.clone(), vec![RecordBatch::try_new(schema, columns).unwrap()])
    }

    fn show(screen: Screen, rows: usize, text: &str) -> (String, Shown) {
        let (schema, batches) = result(rows, text);
        let mut out = Vec::new();
        let shown = screen.write(OutputFormat::Table, &schema, &batches, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), shown)
    }

    const SCREEN: Screen = Screen { max_rows: 40, width: 40, expanded: false, timing: true };

    #[test]
    fn long_cells_are_cut_to_the_width_with_an_ellipsis() {
        let (text, shown) = show(SCREEN, 2, &"word ".repeat(30));
        assert!(text.lines().all(|l| width_of(l) <= 40), "{text}");
        assert!(text.contains("word…"), "{text}");
        assert!(text.contains("|      0 |"), "numbers align right: {text}");
        assert_eq!(shown, Shown { rows: 2, shown_rows: 2, hidden_columns: 0 });
    }

    #[test]
    fn a_row_never_breaks_over_lines() {
        let (text, _) = show(SCREEN, 1, "one\ntwo");
        assert!(text.contains("one\\ntwo"), "{text}");
        assert_eq!(text.lines().count(), 5);
    }

    #[test]
    fn rows_past_the_limit_are_left_out_and_counted() {
        let (text, shown) = show(Screen { max_rows: 3, ..SCREEN }, 10, "a");
        assert_eq!(text.lines().count(), 3 + 4);
        assert_eq!(shown.footer(None), "10 rows (3 shown, \\maxrows N for more)");
        assert_eq!(
            shown.footer(Some(Duration::from_millis(1520))),
            "10 rows (3 shown, \\maxrows N for more) in 1.52 s"
        );
    }

    #[test]
    fn columns_that_cannot_fit_are_left_out() {
        let (text, shown) = show(Screen { width: 24, ..SCREEN }, 1, "abcdefghijkl");
        assert_eq!(shown.hidden_columns, 1, "{text}");
        assert!(text.lines().all(|l| width_of(l) <= 24), "{text}");
        assert!(text.contains("abcdefghij…"), "{text}");
    }

    #[test]
    fn expanded_shows_one_field_per_line() {
        let (text, shown) = show(Screen { expanded: true, ..SCREEN }, 2, "hello");
        assert!(text.starts_with("-[ RECORD 1 ]"), "{text}");
        assert!(text.contains("\ntext   | hello\n"), "{text}");
        assert_eq!(shown.hidden_columns, 0);
    }

    /// `select *` of an event table: its context columns first, then its own fields.
    fn usage_rows() -> (SchemaRef, Vec<RecordBatch>) {
        let text = |name: &str| Field::new(name, DataType::Utf8, true);
        let number = |name: &str| Field::new(name, DataType::Int64, true);
        let schema = Arc::new(Schema::new(vec![
            text("run_id"),
            number("turn_idx"),
            number("line"),
            text("file"),
            Field::new("archived", DataType::Boolean, true),
            text("provider"),
            text("model"),
            text("served_model"),
            number("input_tokens"),
            number("output_tokens"),
            number("cached_tokens"),
        ]));
        let run = "run_01M4AYMME8DDSYED4PWY2A754N";
        let file = format!(".rupu/transcripts/{run}.jsonl");
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![run, run])),
            Arc::new(Int64Array::from(vec![Some(0), None])),
            Arc::new(Int64Array::from(vec![8, 23])),
            Arc::new(StringArray::from(vec![file.as_str(), file.as_str()])),
            Arc::new(datafusion::arrow::array::BooleanArray::from(vec![false, false])),
            Arc::new(StringArray::from(vec!["anthropic", "openai"])),
            Arc::new(StringArray::from(vec!["claude-haiku-4-5", "gpt-5.1-codex"])),
            Arc::new(StringArray::from(vec![None, Some("")])),
            Arc::new(Int64Array::from(vec![2654, 6684])),
            Arc::new(Int64Array::from(vec![641, 1232])),
            Arc::new(Int64Array::from(vec![1882, 4426])),
        ];
        (schema.clone(), vec![RecordBatch::try_new(schema, columns).unwrap()])
    }

    fn shown_at(screen: Screen, (schema, batches): (SchemaRef, Vec<RecordBatch>)) -> (String, Shown) {
        let mut out = Vec::new();
        let shown = screen.write(OutputFormat::Table, &schema, &batches, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), shown)
    }

    #[test]
    fn select_star_on_80_columns_shows_the_events_own_fields_first() {
        let (text, shown) = shown_at(Screen { width: 80, ..SCREEN }, usage_rows());
        // Every value whole (headers wider than their values give first), null apart from ''.
        let expected = "\
+-----------+------------------+-----------+-----------+-----------+-----------+
| provider  | model            | served_m… | input_to… | output_t… | cached_t… |
+-----------+------------------+-----------+-----------+-----------+-----------+
| anthropic | claude-haiku-4-5 | ∅         |      2654 |       641 |      1882 |
| openai    | gpt-5.1-codex    |           |      6684 |      1232 |      4426 |
+-----------+------------------+-----------+-----------+-----------+-----------+
";
        assert_eq!(text, expected);
        assert_eq!(shown.hidden_columns, 5);
        assert_eq!(shown.footer(None), "2 rows (5 columns left out, \\x shows every column)");

        // Wide enough, the columns stay in their order.
        let (text, shown) = shown_at(Screen { width: 240, ..SCREEN }, usage_rows());
        assert!(text.starts_with("+--------------------------------+----------+------+---"), "{text}");
        assert!(
            text.lines().nth(1).unwrap().starts_with("| run_id                         | turn_idx |"),
            "{text}"
        );
        assert!(text.contains("|        ∅ |   23 |"), "{text}");
        assert_eq!(shown.hidden_columns, 0);
    }

    #[test]
    fn columns_the_user_chose_keep_their_order_on_a_narrow_screen() {
        // The short column whole, the two long ones giving alike.
        let (schema, batches) = usage_rows();
        let picked = batches[0].project(&[6, 0, 3]).unwrap();
        let (text, shown) = shown_at(Screen { width: 80, ..SCREEN }, (picked.schema(), vec![picked]));
        let expected = "\
+------------------+-----------------------------+-----------------------------+
| model            | run_id                      | file                        |
+------------------+-----------------------------+-----------------------------+
| claude-haiku-4-5 | run_01M4AYMME8DDSYED4PWY2A… | .rupu/transcripts/run_01M4… |
| gpt-5.1-codex    | run_01M4AYMME8DDSYED4PWY2A… | .rupu/transcripts/run_01M4… |
+------------------+-----------------------------+-----------------------------+
";
        assert_eq!(text, expected);
        assert_eq!(shown.hidden_columns, 0);
        drop(schema);
    }

    #[test]
    fn a_list_reads_as_blocks_wrapped_to_the_width() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("name", DataType::Utf8, false),
            Field::new("answers", DataType::Utf8, false),
        ]));
        let about = "Aborted runs: runs whose transcript has no run_complete (killed, crashed, or still \
                     being written), newest first, with how far each got: turns, tool calls and tokens.";
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["aborted_runs", "tokens_by_model"])),
            Arc::new(StringArray::from(vec![about, "Tokens by model."])),
        ];
        let batch = RecordBatch::try_new(schema, columns).unwrap();
        let mut out = Vec::new();
        write_blocks(&batch, 80, &mut out).unwrap();
        let expected = "\
aborted_runs
    Aborted runs: runs whose transcript has no run_complete (killed, crashed,
    or still being written), newest first, with how far each got: turns, tool
    calls and tokens.

tokens_by_model
    Tokens by model.
";
        // No line reaches the last column (a terminal may wrap there).
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn widths_shrink_the_widest_first() {
        assert_eq!(fit_widths(&[5, 5], &[5, 5], 80), [5, 5]);
        assert_eq!(fit_widths(&[5, 100], &[5, 100], 30), [5, 30 - 7 - 5]);
        // Two long columns on a narrow screen: one readable rather than two cut to 11.
        assert_eq!(fit_widths(&[50, 50], &[50, 50], 29), [25]);
        // A header wider than its values gives before any value is cut.
        assert_eq!(fit_widths(&[9, 17, 18], &[9, 17, 4], 44), [9, 17, 8]);
    }
}
