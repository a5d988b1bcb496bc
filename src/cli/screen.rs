//! Results for a person at a terminal (the shell): an aligned table fitted to the terminal's
//! width, long cells cut with an ellipsis and the columns that cannot fit left out, or one field
//! per line; at most so many rows; and the footer that says what was shown.

use super::print::{OutputFormat, write_batches};
use crate::escape;
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
pub struct Screen {
    /// Rows shown at most in a table (0: all).
    pub max_rows: usize,
    /// Columns of the terminal.
    pub width: usize,
    /// One field per line instead of a table.
    pub expanded: bool,
    /// The footer says how long the statement took.
    pub timing: bool,
}

/// No column is cut narrower than this, unless its values are narrower.
const MIN_COLUMN_WIDTH: usize = 8;

/// What of a result was shown, for the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub rows: usize,
    pub shown_rows: usize,
    /// Columns left out because the terminal is too narrow for them.
    pub hidden_columns: usize,
}

impl Shown {
    /// Whether rows or columns were left out.
    pub fn is_cut(&self) -> bool {
        self.shown_rows < self.rows || self.hidden_columns > 0
    }

    /// `1234 rows (40 shown, \maxrows N for more) in 312 ms`.
    pub fn footer(&self, elapsed: Option<Duration>) -> String {
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
pub fn duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

impl Screen {
    /// Writes a result: the table format fitted to the screen (or one field per line), any other
    /// format whole.
    pub fn write(
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
        for row in 0..batch.num_rows().min(limit - rows.len()) {
            let row = batch
                .columns()
                .iter()
                .zip(&formatters)
                .map(|(column, f)| {
                    if column.is_null(row) {
                        String::new()
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

fn width_of(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
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

/// Column widths that fit `total` terminal columns: as many leading columns as fit at their
/// narrowest, the widest cut first. Returns fewer widths than columns when some cannot fit.
fn fit_widths(natural: &[usize], total: usize) -> Vec<usize> {
    let narrowest: Vec<usize> = natural.iter().map(|&w| w.min(MIN_COLUMN_WIDTH)).collect();
    // A table of n columns takes 3n + 1 columns of borders and padding.
    let mut count = 0;
    let mut needed = 1;
    while count < natural.len() && needed + narrowest[count] + 3 <= total {
        needed += narrowest[count] + 3;
        count += 1;
    }
    let count = count.max(1);
    let budget = total.saturating_sub(3 * count + 1);
    let natural = &natural[..count];
    let narrowest = &narrowest[..count];
    let with_cap = |cap: usize| -> Vec<usize> {
        natural.iter().zip(narrowest).map(|(&n, &m)| n.min(cap.max(m))).collect()
    };
    if natural.iter().sum::<usize>() <= budget {
        return natural.to_vec();
    }
    // The largest cap under which the columns fit, then what is left to the widest ones.
    let (mut low, mut high) = (0, natural.iter().copied().max().unwrap_or(0));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if with_cap(mid).iter().sum::<usize>() <= budget { low = mid } else { high = mid - 1 }
    }
    let mut widths = with_cap(low);
    let mut left = budget.saturating_sub(widths.iter().sum());
    for (w, &n) in widths.iter_mut().zip(natural) {
        if left > 0 && *w < n {
            *w += 1;
            left -= 1;
        }
    }
    widths
}

/// Writes an aligned table fitted to `total` columns; returns how many columns were left out.
fn write_table(
    headers: &[String],
    right: &[bool],
    rows: &[Vec<String>],
    total: usize,
    out: &mut dyn Write,
) -> Result<usize, ArrowError> {
    let natural: Vec<usize> = (0..headers.len())
        .map(|i| rows.iter().map(|r| width_of(&r[i])).chain([width_of(&headers[i])]).max().unwrap_or(0))
        .collect();
    let widths = fit_widths(&natural, total);
    let rule = format!("+{}+", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("+"));
    let line = |cells: &[String], align: &dyn Fn(usize) -> bool| {
        let cells: Vec<String> =
            widths.iter().enumerate().map(|(i, &w)| pad(&cut(&cells[i], w), w, align(i))).collect();
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

    #[test]
    fn widths_shrink_the_widest_first() {
        assert_eq!(fit_widths(&[5, 5], 80), [5, 5]);
        assert_eq!(fit_widths(&[5, 100], 30), [5, 30 - 7 - 5]);
        assert_eq!(fit_widths(&[50, 50], 29), [11, 11]);
    }
}
