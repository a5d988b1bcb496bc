//! A spend report laid out for people: a title that says the span and the time zone, a row per
//! period (its harnesses and models under it with `--breakdown`), a total, tokens with
//! separators and money as money, the columns that are empty left out, and every line fitted
//! to the terminal: the narrow set of columns when the wide one does not fit, then long names
//! cut with `…`; a name from the data has its control characters escaped.

use super::ReportKind;
use super::model::period_costs;
use super::model::{Block, Period, Spend};
use crate::cli::budget::Budget;
use crate::text::escape;
use chrono::{DateTime, Utc};
use std::io::{self, Write};

/// How a report is laid out.
pub(crate) struct Layout {
    /// The columns a line may take.
    pub(crate) width: usize,
    /// `--compact`: the narrow set of columns.
    pub(crate) compact: bool,
    /// `--breakdown`: each harness and model under its period.
    pub(crate) breakdown: bool,
    /// `--no-cost`.
    pub(crate) no_cost: bool,
    /// `--order desc`, for blocks (periods come in their order).
    pub(crate) newest_first: bool,
    pub(crate) time_zone: String,
    /// `--budget`: each period's share of it shown, and the periods over it marked.
    pub(crate) budget: Option<Budget>,
}

/// A column: its header, when it is left out for room (0: never, the narrow set; else the
/// higher, the sooner), whether its text may be cut to fit, and whether it is a number (aligned
/// right).
struct Column {
    header: &'static str,
    drop: u8,
    cut: bool,
    number: bool,
}

const fn text(header: &'static str, drop: u8) -> Column {
    Column { header, drop, cut: true, number: false }
}

const fn number(header: &'static str, drop: u8) -> Column {
    Column { header, drop, cut: false, number: true }
}

/// A column of times or ids, never cut.
const fn whole_column(header: &'static str, drop: u8) -> Column {
    Column { header, drop, cut: false, number: false }
}

/// A row of the grid: cells of lines, or a rule.
enum Row {
    Cells(Vec<Vec<String>>),
    Rule,
}

/// The columns of the token sums and the cost, in ccusage's split and order.
fn sum_columns(no_cost: bool) -> Vec<Column> {
    let mut columns = vec![
        number("Input\n(uncached)", 0),
        number("Output", 0),
        number("Cache\nwrite", 5),
        number("Cache\nread", 4),
        number("Total\ntokens", 6),
    ];
    if !no_cost {
        columns.push(number("Cost\n(USD)", 0));
    }
    columns
}

fn sum_cells(spend: &Spend, no_cost: bool) -> Vec<Vec<String>> {
    let mut cells = vec![
        vec![separated(spend.input)],
        vec![separated(spend.output)],
        vec![separated(spend.cache_write)],
        vec![separated(spend.cache_read)],
        vec![separated(spend.total_tokens())],
    ];
    if !no_cost {
        let unpriced = if spend.unpriced.is_empty() { "" } else { " +?" };
        cells.push(vec![format!("{}{unpriced}", money(spend.cost))]);
    }
    cells
}

/// A report of periods (days, weeks, months) or sessions.
pub(crate) fn periods(
    kind: ReportKind,
    periods: &[Period],
    layout: &Layout,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (what, key) = match kind {
        ReportKind::Daily => ("day", "Date"),
        ReportKind::Weekly => ("week (from Monday)", "Week"),
        ReportKind::Monthly => ("month", "Month"),
        _ => ("session", "Session"),
    };
    let mut total = Spend::default();
    periods.iter().for_each(|p| total.add(&p.spend()));
    let span = match (periods.first(), periods.last(), kind) {
        (_, _, ReportKind::Session) if periods.len() == 1 => "1 session".to_string(),
        (_, _, ReportKind::Session) => format!("{} sessions", periods.len()),
        (Some(first), Some(last), _) if first.key != last.key => {
            let (a, b) =
                if first.key <= last.key { (&first.key, &last.key) } else { (&last.key, &first.key) };
            format!("{a} to {b}")
        }
        (Some(first), _, _) => first.key.clone(),
        _ => String::new(),
    };
    writeln!(
        out,
        "{}",
        fit(
            &match span.is_empty() {
                true => format!("Spend per {what} (time zone {})", layout.time_zone),
                false => format!("Spend per {what}, {span} (time zone {})", layout.time_zone),
            },
            layout.width
        )
    )?;
    if periods.is_empty() {
        return writeln!(out, "No calls in this period.");
    }
    let session = kind == ReportKind::Session;
    let by_project = periods.iter().any(|p| p.project.is_some());
    let mut columns = vec![whole_column(key, 0)];
    if by_project {
        columns.push(text("Project", 0));
    }
    if session {
        columns.extend([text("Harness", 2), text("Project", 1), whole_column("Last activity", 3)]);
    } else {
        columns.push(text("Harnesses", 2));
    }
    columns.push(text("Models", 0));
    columns.extend(sum_columns(layout.no_cost));
    // A period split by project is measured against the budget whole.
    let whole: std::collections::BTreeMap<String, f64> = period_costs(periods).into_iter().collect();
    if layout.budget.is_some() {
        columns.push(whole_column("Budget\nused", 0));
    }
    let mut rows = Vec::new();
    for period in periods {
        let spend = period.spend();
        let mut cells = match &period.session {
            Some(s) => vec![
                vec![short_id(&period.key)],
                vec![s.harness.clone()],
                vec![s.cwd.as_deref().map(crate::sql::reports::project_of).unwrap_or_default()],
                vec![s.ended_at.as_deref().map(to_the_second).unwrap_or_default()],
            ],
            None => {
                let mut cells = vec![vec![period.key.clone()]];
                if let Some(project) = &period.project {
                    cells.push(vec![project.clone()]);
                }
                cells.push(period.harnesses());
                cells
            }
        };
        // Under --breakdown, the models are named on their own rows.
        cells.push(if layout.breakdown { vec![String::new()] } else { period.model_names() });
        cells.extend(sum_cells(&spend, layout.no_cost));
        if let Some(budget) = &layout.budget {
            cells.push(vec![budget.cell_of(whole.get(&period.key).copied().unwrap_or(spend.cost))]);
        }
        rows.push(Row::Cells(cells));
        if layout.breakdown {
            for m in &period.models {
                let mut cells = vec![vec![String::new()]];
                if by_project {
                    cells.push(vec![String::new()]);
                }
                if session {
                    cells.extend([vec![String::new()], vec![String::new()], vec![String::new()]]);
                } else {
                    cells.push(vec![format!("└ {}", m.harness)]);
                }
                cells.push(vec![format!("└ {}", m.model)]);
                cells.extend(sum_cells(&m.spend, layout.no_cost));
                cells.extend(layout.budget.iter().map(|_| vec![String::new()]));
                rows.push(Row::Cells(cells));
            }
        }
        rows.push(Row::Rule);
    }
    let mut cells = vec![vec!["Total".to_string()]];
    let named = columns.len() - sum_columns(layout.no_cost).len() - usize::from(layout.budget.is_some());
    cells.extend((1..named).map(|_| vec![String::new()]));
    cells.extend(sum_cells(&total, layout.no_cost));
    cells.extend(layout.budget.iter().map(|_| vec![String::new()]));
    rows.push(Row::Cells(cells));
    draw(&columns, &rows, layout, out)?;
    let over = whole.values().filter(|cost| layout.budget.is_some_and(|b| b.is_over(**cost))).count();
    notes(&total, layout, budget_note(layout.budget, over, whole.len()), out)
}

/// What the budget column means, under the table: the budget and how many periods passed it.
fn budget_note(budget: Option<Budget>, over: usize, of: usize) -> Option<String> {
    let budget = budget?;
    let per = budget.per.name();
    Some(format!(
        "Budget used: each {per}'s spend as a share of {} a {per}; {over} of {of} {per}s over it (exit code 4 when any is).",
        money(budget.usd)
    ))
}

/// The blocks report: each block (an idle gap of more than 5 hours as a line of its own), or
/// with `active`, the blocks under way with their time left, burn rate and projection.
pub(crate) fn blocks(
    blocks: &[Block],
    active: bool,
    now: DateTime<Utc>,
    limits: &std::collections::BTreeMap<String, i64>,
    layout: &Layout,
    out: &mut dyn Write,
) -> io::Result<()> {
    let zone = layout.time_zone.parse::<datafusion::arrow::array::timezone::Tz>().ok();
    let local = |t: DateTime<Utc>| match &zone {
        Some(tz) => t.with_timezone(tz).format("%Y-%m-%d %H:%M").to_string(),
        None => t.format("%Y-%m-%d %H:%M").to_string(),
    };
    if active {
        writeln!(
            out,
            "{}",
            fit(&format!("Blocks under way (time zone {})", layout.time_zone), layout.width)
        )?;
        if blocks.is_empty() {
            return writeln!(out, "No block under way.");
        }
        for block in blocks {
            let left = (block.end - now).num_minutes().max(0);
            let spend = &block.spend;
            let burn = super::burn(block, now);
            let lines = [
                format!(
                    "{}: block {} to {}, {} left",
                    block.harness,
                    local(block.start),
                    local(block.end),
                    hours_minutes(left)
                ),
                format!(
                    "  spent      {}, {} tokens, {} calls",
                    money(spend.cost),
                    separated(spend.total_tokens()),
                    spend.calls
                ),
                match &burn {
                    Some(burn) => format!(
                        "  burn rate  {}/hour, {} tokens/minute",
                        money(burn.cost_per_hour),
                        separated(burn.tokens_per_minute.round() as i64)
                    ),
                    None => "  burn rate  (one moment of calls so far)".to_string(),
                },
                match &burn {
                    Some(burn) => format!(
                        "  projected  {}, {} tokens by {}",
                        money(burn.projected_cost),
                        separated(burn.projected_tokens),
                        local(block.end)
                    ),
                    None => String::new(),
                },
                match (&burn, limits.get(&block.harness)) {
                    (Some(burn), Some(limit)) => {
                        let (status, percent) = super::limit_status(burn.projected_tokens, *limit);
                        format!(
                            "  limit      {} tokens: {percent:.0}% projected ({status})",
                            separated(*limit)
                        )
                    }
                    _ => String::new(),
                },
                match (&layout.budget, &burn) {
                    (Some(budget), Some(burn)) => format!(
                        "  budget     {} a block: {} spent, {} projected",
                        money(budget.usd),
                        budget.cell_of(spend.cost),
                        budget.cell_of(burn.projected_cost)
                    ),
                    (Some(budget), None) => {
                        format!(
                            "  budget     {} a block: {} spent",
                            money(budget.usd),
                            budget.cell_of(spend.cost)
                        )
                    }
                    (None, _) => String::new(),
                },
            ];
            for line in lines.iter().filter(|l| !l.is_empty()) {
                writeln!(out, "{}", fit(&escape::text(line), layout.width))?;
            }
        }
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        fit(
            &format!("Spend per 5-hour block of each harness (time zone {})", layout.time_zone),
            layout.width
        )
    )?;
    if blocks.is_empty() {
        return writeln!(out, "No calls in this period.");
    }
    let mut columns =
        vec![whole_column("Block start", 0), text("Harness", 2), text("Status", 1), text("Models", 0)];
    columns.extend(sum_columns(layout.no_cost));
    if layout.budget.is_some() {
        columns.push(whole_column("Budget\nused", 0));
    }
    let budget_cells = || layout.budget.iter().map(|_| vec![String::new()]);
    let mut rows = Vec::new();
    let mut total = Spend::default();
    for (i, block) in blocks.iter().enumerate() {
        if let Some((start, end)) = super::gap_before(blocks, i) {
            let mut cells = vec![vec![local(start)], vec![block.harness.clone()]];
            cells.push(vec![format!("idle {}", hours_minutes((end - start).num_minutes()))]);
            cells.push(vec![String::new()]);
            cells.extend(sum_columns(layout.no_cost).iter().map(|_| vec![String::new()]));
            cells.extend(budget_cells());
            rows.push(Row::Cells(cells));
        }
        total.add(&block.spend);
        let status = match super::is_active(block, now) {
            true => format!("active, {} left", hours_minutes((block.end - now).num_minutes().max(0))),
            false => String::new(),
        };
        let mut cells =
            vec![vec![local(block.start)], vec![block.harness.clone()], vec![status], block.models.clone()];
        cells.extend(sum_cells(&block.spend, layout.no_cost));
        cells.extend(layout.budget.iter().map(|budget| vec![budget.cell_of(block.spend.cost)]));
        rows.push(Row::Cells(cells));
    }
    // Gaps are found oldest first; --order desc turns the list round after.
    if layout.newest_first {
        rows.reverse();
    }
    rows.push(Row::Rule);
    let mut cells =
        vec![vec!["Total".to_string()], vec![String::new()], vec![String::new()], vec![String::new()]];
    cells.extend(sum_cells(&total, layout.no_cost));
    cells.extend(budget_cells());
    rows.push(Row::Cells(cells));
    draw(&columns, &rows, layout, out)?;
    let over =
        blocks.iter().filter(|b| layout.budget.is_some_and(|budget| budget.is_over(b.spend.cost))).count();
    notes(&total, layout, budget_note(layout.budget, over, blocks.len()), out)
}

/// What the columns mean, and the prices missing, under the table.
fn notes(total: &Spend, layout: &Layout, budget: Option<String>, out: &mut dyn Write) -> io::Result<()> {
    let mut notes = vec![
        "Input (uncached) is the input neither read from nor written to a cache, as ccusage's Input; \
         calls.input_tokens holds all three (docs/harnesses.md)."
            .to_string(),
    ];
    if !total.unpriced.is_empty() && !layout.no_cost {
        let models: Vec<String> = total.unpriced.iter().cloned().collect();
        notes.push(format!(
            "+? some calls have no price and are not in the cost: {} (docs/prices.md).",
            escape::text(&crate::text::words::listed(&models))
        ));
    }
    if let Some(note) = crate::sql::prices::unknown_tier_note(total.unknown_tier).filter(|_| !layout.no_cost)
    {
        notes.push(format!("{note} (docs/prices.md#service-tiers)."));
    }
    notes.extend(budget);
    for note in notes {
        for line in textwrap::wrap(&note, layout.width.max(20)) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Draws `rows` under `columns`' headers (a header's lines split at `\n`), boxed, every line at
/// most `layout.width` wide: the columns no row fills left out, then the columns that go first
/// for room until the rest fit with their names cut (all of them when the narrow set is asked
/// for), then the widest cuttable column narrowed until the table fits.
fn draw(columns: &[Column], rows: &[Row], layout: &Layout, out: &mut dyn Write) -> io::Result<()> {
    let filled =
        |i: usize| rows.iter().any(|r| matches!(r, Row::Cells(c) if c[i].iter().any(|l| !l.is_empty())));
    let mut shown: Vec<usize> = (0..columns.len()).filter(|&i| filled(i)).collect();
    let natural = |i: usize| {
        let cells = rows.iter().filter_map(|r| match r {
            Row::Cells(c) => Some(c[i].iter().map(|l| width_of(&escape::text(l))).max().unwrap_or(0)),
            Row::Rule => None,
        });
        cells.chain(columns[i].header.split('\n').map(width_of)).max().unwrap_or(0)
    };
    let mut widths: Vec<usize> = (0..columns.len()).map(natural).collect();
    let line_width =
        |shown: &[usize], widths: &[usize]| shown.iter().map(|&i| widths[i] + 3).sum::<usize>() + 1;
    let narrowest: Vec<usize> =
        (0..columns.len()).map(|i| if columns[i].cut { widths[i].min(MIN_CUT) } else { widths[i] }).collect();
    if layout.compact {
        shown.retain(|&i| columns[i].drop == 0);
    }
    while line_width(&shown, &narrowest) > layout.width {
        let Some(first) =
            shown.iter().copied().filter(|&i| columns[i].drop > 0).max_by_key(|&i| columns[i].drop)
        else {
            break;
        };
        shown.retain(|&i| i != first);
    }
    while line_width(&shown, &widths) > layout.width {
        let widest = shown
            .iter()
            .copied()
            .filter(|&i| columns[i].cut && widths[i] > MIN_CUT)
            .max_by_key(|&i| widths[i]);
        match widest {
            Some(i) => widths[i] -= 1,
            None => break,
        }
    }
    let rule = |left: &str, middle: &str, right: &str| {
        let parts: Vec<String> = shown.iter().map(|&i| "─".repeat(widths[i] + 2)).collect();
        format!("{left}{}{right}", parts.join(middle))
    };
    let line = |cells: &[Vec<String>], at: usize| {
        let parts: Vec<String> = shown
            .iter()
            .map(|&i| {
                // A name from the data is shown with its control characters escaped.
                let text = cut(&escape::text(cells[i].get(at).map(String::as_str).unwrap_or("")), widths[i]);
                let pad = " ".repeat(widths[i] - width_of(&text));
                match columns[i].number {
                    true => format!(" {pad}{text} "),
                    false => format!(" {text}{pad} "),
                }
            })
            .collect();
        format!("│{}│", parts.join("│"))
    };
    let mut lines = vec![rule("┌", "┬", "┐")];
    let headers: Vec<Vec<String>> =
        columns.iter().map(|c| c.header.split('\n').map(str::to_string).collect()).collect();
    let height = shown.iter().map(|&i| headers[i].len()).max().unwrap_or(1);
    lines.extend((0..height).map(|at| line(&headers, at)));
    lines.push(rule("├", "┼", "┤"));
    for row in rows {
        match row {
            Row::Rule => lines.push(rule("├", "┼", "┤")),
            Row::Cells(cells) => {
                let height = shown.iter().map(|&i| cells[i].len()).max().unwrap_or(1).max(1);
                lines.extend((0..height).map(|at| line(cells, at)));
            }
        }
    }
    // A rule as the last row is the one before the total; the box closes after it.
    lines.push(rule("└", "┴", "┘"));
    for text in lines {
        writeln!(out, "{}", fit(&text, layout.width))?;
    }
    Ok(())
}

/// The narrowest a column of names is cut to.
const MIN_CUT: usize = 10;

/// `text` cut to `width` columns, with `…` for what is left out.
fn cut(text: &str, width: usize) -> String {
    if width_of(text) <= width {
        return text.to_string();
    }
    let mut kept = String::new();
    for c in text.chars() {
        if width_of(&kept) + width_of(c.encode_utf8(&mut [0; 4])) + 1 > width {
            break;
        }
        kept.push(c);
    }
    kept.push('…');
    kept
}

/// A line of at most `width` columns: the last resort of a table no narrowing fits.
fn fit(line: &str, width: usize) -> String {
    cut(line, width)
}

fn width_of(text: &str) -> usize {
    super::super::print::width_of(text)
}

/// A count with a comma every three digits: 3,066,969.
pub(crate) fn separated(n: i64) -> String {
    crate::text::number::grouped_signed(n, ',')
}

/// Dollars to the cent: $1,234.57.
pub(crate) fn money(dollars: f64) -> String {
    let cents = (dollars * 100.0).round() as i64;
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}${}.{:02}", separated(cents.abs() / 100), cents.abs() % 100)
}

/// A time as the report's rows write it (`2026-09-02T14:05:09.123+09:00`) to the second, in
/// its own zone: `2026-09-02 14:05:09`.
fn to_the_second(time: &str) -> String {
    time.get(..19).map(|t| t.replacen('T', " ", 1)).unwrap_or_else(|| time.to_string())
}

fn hours_minutes(minutes: i64) -> String {
    format!("{}h{:02}m", minutes / 60, minutes % 60)
}

/// A session's name as the table shows it: the id in its file's name (a UUID to its first 8
/// characters), the whole name in --json.
fn short_id(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let uuid_at = last.len().checked_sub(36).filter(|&at| {
        let tail = &last.as_bytes()[at..];
        tail.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
    });
    match uuid_at {
        Some(at) => last[at..at + 8].to_string(),
        None => last.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_separators_and_money_has_cents() {
        assert_eq!(separated(3066969), "3,066,969");
        assert_eq!(separated(999), "999");
        assert_eq!(separated(-1000), "-1,000");
        assert_eq!(money(0.042138), "$0.04");
        assert_eq!(money(1234.567), "$1,234.57");
        assert_eq!(money(0.0), "$0.00");
    }

    #[test]
    fn a_time_is_shown_to_the_second_in_its_own_zone() {
        assert_eq!(to_the_second("2026-09-02T14:05:09.123+09:00"), "2026-09-02 14:05:09");
        assert_eq!(to_the_second("2026-09-02"), "2026-09-02");
    }

    #[test]
    fn a_session_is_shown_by_the_start_of_its_files_uuid() {
        assert_eq!(short_id("1c779da8-bc11-4c56-a326-fa7748372550"), "1c779da8");
        assert_eq!(
            short_id("2026/09/03/rollout-2026-09-03T04-31-11-01a06709-81fa-7cfc-bc5b-857c6cc3c6fa"),
            "01a06709"
        );
        assert_eq!(short_id("agent-237e2918"), "agent-237e2918");
    }

    #[test]
    fn a_cut_text_ends_in_an_ellipsis_within_its_width() {
        assert_eq!(cut("model-sonnet-4-6", 8), "model-s…");
        assert_eq!(cut("short", 8), "short");
        assert_eq!(width_of(&cut("日本語のモデル名", 7)), 7);
    }
}
