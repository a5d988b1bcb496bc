//! The report as one self-contained HTML page, written by `maud` templates (which escape every
//! text they are given): inline CSS and SVG, nothing to fetch (a strict Content-Security-Policy
//! says so), each chart with the canned query that made it and its figures beside it in a table a
//! program can read (`table.figures[data-query]`, a `td[data-column][data-value]` a value). Every
//! text from the data is shown through [`Shown`], its controls written visibly.

use super::chart::{self, Series, TimeAxis};
use super::{Figures, Report};
use crate::format::ReportSection;
use maud::{DOCTYPE, Markup, PreEscaped, Render, html};
use serde_json::Value;

/// The page's Content-Security-Policy: nothing is loaded, no script runs.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The most expensive sessions shown.
pub const SESSIONS_SHOWN: usize = 25;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; color: #222; background: #fff; margin: 0 auto; padding: 16px 24px; max-width: 1200px; }
h1 { font-size: 24px; margin: 4px 0 8px; } h2 { font-size: 19px; margin: 28px 0 6px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
p { margin: 4px 0 8px; } code { font: 12.5px ui-monospace, monospace; background: #f4f4f4; padding: 0 3px; border-radius: 3px; }
.about { color: #555; font-size: 13px; max-width: 950px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 20px; }
figure.chart { margin: 0; } figure.chart svg { display: block; }
figcaption { font-size: 12px; color: #555; }
.legend { display: flex; flex-wrap: wrap; gap: 2px 14px; font-size: 12px; margin: 4px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: baseline; }
.scroll { overflow-x: auto; max-width: 100%; }
table.figures { border-collapse: collapse; font-size: 12.5px; margin: 6px 0; }
table.figures th, table.figures td { border: 1px solid #e2e2e2; padding: 2px 7px; text-align: left; vertical-align: top; }
table.figures th { background: #f6f6f6; font-weight: 600; }
table.figures td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.figures td.null { color: #aaa; }
table.figures tr.unconfirmed td { background: #fff4e0; }
details summary { cursor: pointer; font-size: 12.5px; color: #444; }
.empty { color: #777; font-style: italic; }
.note { color: #8a5a00; font-size: 13px; }
dl.corpus { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; margin: 6px 0; }
dl.corpus dt { font-weight: 600; } dl.corpus dd { margin: 0; }
";

/// The page of `report`.
pub fn render(report: &Report) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CONTENT_SECURITY_POLICY);
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "txq report" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "txq report" }
                (corpus(report))
                (spend(report))
                (cache(report))
                (agents(report))
                @for described in &report.sections {
                    (format_section(report, described))
                }
                (outcomes(report))
                (tools(report))
                (egress(report))
                (sessions(report))
            }
        }
    };
    let mut page = page.into_string();
    page.push('\n');
    page
}

/// Text from the data as the page shows it: the characters a terminal is not given raw
/// (controls, and the bidirectional overrides and isolates that would reorder the text after
/// them) written visibly as the terminal output writes them (`\u{202e}`), then escaped for HTML
/// as every text of a template is, and its `'` as `&#39;` (so that it is inert in an attribute
/// quoted either way).
struct Shown<'a>(&'a str);

impl Render for Shown<'_> {
    fn render_to(&self, buffer: &mut String) {
        let mut escaped = String::new();
        crate::text::escape::text(self.0).render_to(&mut escaped);
        buffer.push_str(&escaped.replace('\'', "&#39;"));
    }
}

/// A value as text: a string as it is, a number or boolean as JSON writes it; None for null.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

/// A number as the tables show it: digits grouped by thousands; a fraction as written.
fn shown_number(value: &Value) -> String {
    match value.as_i64() {
        Some(n) => {
            let digits = n.unsigned_abs().to_string();
            let mut out = String::new();
            for (i, d) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push('\u{202f}');
                }
                out.push(d);
            }
            if n < 0 { format!("-{out}") } else { out }
        }
        None => value.to_string(),
    }
}

/// A section: its heading, what its query answers, whether --since/--until narrowed it, and
/// `note`; then `content` of the rows, or what the section says when there are none.
fn section(
    report: &Report,
    id: &str,
    title: &str,
    f: &Figures,
    note: Option<&str>,
    content: impl FnOnce() -> Markup,
) -> Markup {
    let period_given = report.options.since.is_some() || report.options.until.is_some();
    html! {
        section id=(id) {
            h2 { (title) }
            (about(f))
            @if period_given && !f.in_period {
                p.note {
                    code { (f.query.name) }
                    " is no spend report: --since and --until do not narrow it; it covers every day."
                }
            }
            @if let Some(note) = note {
                p { (note) }
            }
            @if f.rows.is_empty() {
                (empty(f))
            } @else {
                (content())
            }
        }
    }
}

/// What the query of `f` answers.
fn about(f: &Figures) -> Markup {
    html! {
        p.about { code { "txq query " (f.query.name) } ": " (Shown(&f.query.about())) }
    }
}

/// What a section says when its query returned nothing.
fn empty(f: &Figures) -> Markup {
    html! {
        p.empty data-query=(f.query.name) {
            "No data: " code { "txq query " (f.query.name) } " returns no rows for this corpus."
        }
    }
}

/// The figures of `f` as a table; the first `limit` rows; folded into a `<details>` unless `open`.
fn table(
    f: &Figures,
    open: bool,
    limit: Option<usize>,
    row_class: &dyn Fn(&[Value]) -> &'static str,
) -> Markup {
    let shown = limit.unwrap_or(f.rows.len()).min(f.rows.len());
    let figures = html! {
        div.scroll {
            table.figures data-query=(f.query.name) data-rows=(f.rows.len()) {
                thead {
                    tr {
                        @for column in &f.columns {
                            th { (Shown(column)) }
                        }
                    }
                }
                tbody {
                    @for row in &f.rows[..shown] {
                        tr class=(row_class(row)) {
                            @for (column, value) in f.columns.iter().zip(row) {
                                (figure_cell(column, value))
                            }
                        }
                    }
                }
            }
        }
        @if shown < f.rows.len() {
            p.about {
                "The first " (shown) " of " (f.rows.len()) " rows; "
                code { "txq query " (f.query.name) } " lists them all."
            }
        }
    };
    html! {
        @if open {
            (figures)
        } @else {
            details {
                summary {
                    "The figures (" (f.rows.len()) " rows of " code { "txq query " (f.query.name) } ")"
                }
                (figures)
            }
        }
    }
}

/// One value of a table of figures: its column, and its value as written and as shown.
fn figure_cell(column: &str, value: &Value) -> Markup {
    match (value_text(value), value) {
        (None, _) => html! { td.null data-column=(Shown(column)) data-null="" { "null" } },
        (Some(text), Value::Number(_)) => html! {
            td.number data-column=(Shown(column)) data-value=(Shown(&text)) { (Shown(&shown_number(value))) }
        },
        (Some(text), _) => {
            html! { td data-column=(Shown(column)) data-value=(Shown(&text)) { (Shown(&text)) } }
        }
    }
}

fn plain(_: &[Value]) -> &'static str {
    ""
}

/// A chart on the page: its SVG, what it draws, and the query that made it.
fn figure(
    f: &Figures,
    column: &str,
    mark: &str,
    points: usize,
    title: &str,
    svg: Result<String, String>,
) -> Markup {
    html! {
        figure.chart data-query=(f.query.name) data-column=(Shown(column)) data-mark=(mark) data-points=(points) {
            h3 { (title) }
            @match svg {
                // The chart's SVG, its text from the data escaped by the SVG backend.
                Ok(svg) => (PreEscaped(svg)),
                Err(e) => p.note { "The chart could not be drawn: " (Shown(&e)) },
            }
            figcaption {
                (title) ": column " code { (Shown(column)) } " of " code { "txq query " (f.query.name) }
            }
        }
    }
}

fn legend(names: &[String]) -> Markup {
    html! {
        div.legend {
            @for (n, name) in names.iter().enumerate() {
                span {
                    span.swatch style=(format!("background:{}", chart::css_colour(n))) {}
                    (Shown(name))
                }
            }
        }
    }
}

/// A time of the data, as seconds since the epoch and the offset it was written in.
fn instant(value: &Value) -> Option<(i64, i32)> {
    let text = value.as_str()?;
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some((t.timestamp(), t.offset().local_minus_utc()));
    }
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    Some((naive.and_utc().timestamp(), 0))
}

/// The series of `f` over `period_start`, one per value of `by` in order of first appearance,
/// of `column` (its null values left out), and the axis its times want.
fn over_time(f: &Figures, by: &str, column: &str) -> (Vec<Series>, TimeAxis) {
    let mut series: Vec<Series> = Vec::new();
    let mut axis = TimeAxis { hourly: false, offset_seconds: 0 };
    let (Some(time), Some(key), Some(value)) = (f.column("period_start"), f.column(by), f.column(column))
    else {
        return (series, axis);
    };
    axis.hourly = f.values("unit").next().and_then(Value::as_str) == Some("hour");
    for row in &f.rows {
        let name = value_text(&row[key]).unwrap_or_else(|| "null".into());
        let n = series.iter().position(|s| s.name == name).unwrap_or_else(|| {
            series.push(Series { name, points: Vec::new() });
            series.len() - 1
        });
        if let (Some((seconds, offset)), Some(y)) = (instant(&row[time]), number(&row[value])) {
            axis.offset_seconds = offset;
            series[n].points.push((seconds, y));
        }
    }
    (series, axis)
}

/// A chart of `column` over time, a line per value of `by`.
fn time_figure(f: &Figures, by: &str, column: &str, unit: &str, title: &str) -> Markup {
    let (series, axis) = over_time(f, by, column);
    let points = series.iter().map(|s| s.points.len()).sum();
    figure(f, column, "circle", points, title, chart::time_lines(&series, axis, unit))
}

/// A bar chart of `column`, a bar per row, named by `name` of the row.
fn bar_figure(
    f: &Figures,
    name: &dyn Fn(&[Value]) -> String,
    column: &str,
    unit: &str,
    title: &str,
    colour: usize,
) -> Markup {
    let categories: Vec<String> = f.rows.iter().map(|r| name(r)).collect();
    let values: Vec<Option<f64>> = f.values(column).map(number).collect();
    let points = values.iter().flatten().count();
    figure(f, column, "rect", points, title, chart::bars(&categories, &values, unit, colour))
}

/// The text of `row`'s `column` of `f`.
fn cell(f: &Figures, row: &[Value], column: &str) -> String {
    f.column(column).and_then(|at| value_text(&row[at])).unwrap_or_else(|| "null".into())
}

fn corpus(report: &Report) -> Markup {
    let summary = report.of("corpus_summary");
    let unpriced = report.of("unpriced_models");
    let total = summary.rows.iter().find(|r| cell(summary, r, "format") == "all");
    let all = |column: &str| total.map(|r| cell(summary, r, column)).unwrap_or_else(|| "0".into());
    let options = &report.options;
    let day = |d: Option<chrono::NaiveDate>, none: &str| {
        d.map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_else(|| none.to_string())
    };
    let time_zone = options.time_zone.as_deref().unwrap_or(crate::sql::reports::DEFAULT_TIME_ZONE);
    html! {
        section id="corpus" {
            dl.corpus {
                dt { "Read" }
                dd {
                    @for (n, path) in report.paths.iter().enumerate() {
                        @if n > 0 { ", " }
                        code { (Shown(path)) }
                    }
                    @if report.paths.is_empty() { "none found" }
                }
                dt { "Corpus" }
                dd {
                    span data-figure="transcripts" { (Shown(&all("transcripts"))) }
                    " transcripts in "
                    span data-figure="files" { (Shown(&all("files"))) }
                    " files (" (Shown(&all("bytes"))) " bytes), "
                    span data-figure="sessions" { (Shown(&all("sessions"))) }
                    " sessions"
                }
                dt { "Time span" }
                dd { (Shown(&all("first_time"))) " to " (Shown(&all("last_time"))) }
                dt { "Damaged lines skipped" }
                dd {
                    span data-figure="damaged_lines" { (Shown(&all("damaged_lines"))) }
                    " (each is a row of its schema's " code { "errors" } " table)"
                }
                dt { "Models without a price" }
                dd data-figure="unpriced_models" {
                    @for (n, row) in unpriced.rows.iter().enumerate() {
                        @if n > 0 { ", " }
                        code { (Shown(&cell(unpriced, row, "model"))) }
                        " (" (Shown(&cell(unpriced, row, "harness"))) ")"
                    }
                    @if unpriced.rows.is_empty() { "none" }
                }
                dt { "Period" }
                dd {
                    (day(options.since, "the first day")) " to " (day(options.until, "the last day"))
                    ", in " (Shown(time_zone)) " (the spend reports'; the other sections cover every day)"
                }
            }
            (about(summary))
            (table(summary, true, None, &plain))
            @if !unpriced.rows.is_empty() {
                (about(unpriced))
                (table(unpriced, false, None, &plain))
            }
        }
    }
}

fn spend(report: &Report) -> Markup {
    let f = report.of("spend_over_time");
    section(report, "spend", "Spend and tokens over time, by model", f, None, || {
        let unit =
            if f.values("unit").next().and_then(Value::as_str) == Some("hour") { "hour" } else { "day" };
        let (series, _) = over_time(f, "model", "calls");
        let names: Vec<String> = series.into_iter().map(|s| s.name).collect();
        html! {
            p { "Per " (unit) " (per hour when the calls span less than 3 days)." }
            (legend(&names))
            div.charts {
                (time_figure(f, "model", "cost_usd", "US dollars", "Cost"))
                (time_figure(f, "model", "uncached_input_tokens", "tokens", "Input tokens, not cached"))
                (time_figure(f, "model", "cache_read_tokens", "tokens", "Cache reads"))
                (time_figure(f, "model", "cache_write_tokens", "tokens", "Cache writes"))
                (time_figure(f, "model", "output_tokens", "tokens", "Output tokens"))
            }
            (table(f, false, None, &plain))
        }
    })
}

fn cache(report: &Report) -> Markup {
    let f = report.of("cache_hit_by_model");
    section(report, "cache", "Cache hit ratio, by model", f, None, || {
        let name = |r: &[Value]| format!("{} · {}", cell(f, r, "model"), cell(f, r, "harness"));
        html! {
            div.charts {
                (bar_figure(
                    f,
                    &name,
                    "cache_hit_ratio",
                    "share of input tokens read from the cache",
                    "Cache hit ratio",
                    0,
                ))
                (bar_figure(
                    f,
                    &name,
                    "cache_write_ratio",
                    "share of input tokens written to the cache",
                    "Cache write ratio",
                    1,
                ))
            }
            (table(f, false, None, &plain))
        }
    })
}

fn agents(report: &Report) -> Markup {
    let f = report.of("agent_spend");
    section(report, "agents", "Calls and cost, by agent", f, None, || {
        let name = |r: &[Value]| cell(f, r, "agent");
        html! {
            div.charts {
                (bar_figure(f, &name, "calls", "model calls", "Calls", 0))
                (bar_figure(f, &name, "cost_usd", "US dollars", "Cost", 1))
            }
            (table(f, false, None, &plain))
        }
    })
}

/// A section of a format's own ([`crate::format::Format::report_sections`]): its bar charts,
/// then its figures.
fn format_section(report: &Report, described: &ReportSection) -> Markup {
    let f = report.of(described.query);
    section(report, described.id, described.heading, f, described.note, || {
        let name = |r: &[Value]| {
            described.bar_named_by.iter().map(|column| cell(f, r, column)).collect::<Vec<_>>().join(" / ")
        };
        html! {
            div.charts {
                @for chart in described.charts {
                    (bar_figure(f, &name, chart.column, chart.unit, chart.title, chart.colour))
                }
            }
            (table(f, false, None, &plain))
        }
    })
}

fn outcomes(report: &Report) -> Markup {
    let f = report.of("run_outcomes");
    section(report, "outcomes", "Run outcomes over time", f, None, || {
        let (series, _) = over_time(f, "outcome", "runs");
        let names: Vec<String> = series.into_iter().map(|s| s.name).collect();
        html! {
            (legend(&names))
            div.charts {
                (time_figure(f, "outcome", "runs", "runs", "Runs by outcome"))
            }
            (table(f, false, None, &plain))
        }
    })
}

fn tools(report: &Report) -> Markup {
    html! {
        @for (id, name, title) in [
            ("denied", "denied_tools", "Denied tools, and why"),
            ("failing", "failing_commands", "Failing commands, by exit code"),
            ("slowest", "slowest_tools", "Slowest tools"),
        ] {
            (tool_section(report, id, name, title))
        }
    }
}

fn tool_section(report: &Report, id: &str, name: &str, title: &str) -> Markup {
    let f = report.of(name);
    section(report, id, title, f, None, || {
        let tool = |r: &[Value]| cell(f, r, "tool");
        html! {
            @if name == "slowest_tools" {
                div.charts {
                    (bar_figure(f, &tool, "p95_ms", "milliseconds (95th percentile)", "p95 duration", 4))
                }
            }
            (table(f, true, None, &plain))
        }
    })
}

fn egress(report: &Report) -> Markup {
    let f = report.of("network_egress");
    section(report, "egress", "Egress, by host", f, None, || {
        let unconfirmed_at = f.column("unconfirmed_flows");
        let unconfirmed = move |r: &[Value]| unconfirmed_at.and_then(|at| r[at].as_i64()).unwrap_or(0);
        let name = |r: &[Value]| {
            let flows =
                format!("{} · {} · {} flows", cell(f, r, "host"), cell(f, r, "outcome"), cell(f, r, "flows"));
            match unconfirmed(r) {
                0 => flows,
                n => format!("{flows} ({n} unconfirmed)"),
            }
        };
        let class = |r: &[Value]| if unconfirmed(r) > 0 { "unconfirmed" } else { "" };
        html! {
            p {
                "A row marked " span.note { "unconfirmed" }
                " has flows whose body never completed: their bytes in are only declared ("
                code { "unconfirmed_bytes_in" } ")."
            }
            div.charts {
                (bar_figure(f, &name, "bytes_out", "bytes sent", "Bytes out", 0))
                (bar_figure(f, &name, "bytes_in", "bytes received", "Bytes in", 1))
            }
            (table(f, true, None, &class))
        }
    })
}

fn sessions(report: &Report) -> Markup {
    let f = report.of("session");
    section(report, "sessions", "The most expensive sessions", f, None, || {
        let example = f.rows.first().map(|r| cell(f, r, "session_id")).unwrap_or_default();
        html! {
            p {
                "Go on from a session's id: "
                code {
                    "txq -e \"select model, input_tokens, output_tokens, cost_usd from calls where session_id = '"
                    (Shown(&example.replace('\'', "''")))
                    "'\""
                }
            }
            (table(f, true, Some(SESSIONS_SHOWN), &plain))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` shown as the page shows text from the data: in a quoted attribute and as text.
    fn shown(text: &str) -> String {
        html! { td data-value=(Shown(text)) { (Shown(text)) } }.into_string()
    }

    #[test]
    fn hostile_text_is_inert() {
        // A quote of the other kind is inert in a double-quoted attribute and in text.
        let inert = "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;";
        assert_eq!(
            shown("<script>alert('x') & \"y\"</script>"),
            format!("<td data-value=\"{inert}\">{inert}</td>")
        );
    }

    /// A model name with a right-to-left override reversed the text after it on the page.
    #[test]
    fn bidi_overrides_and_controls_are_written_visibly_not_raw() {
        let visible = "gpt\\u{202e}&lt;b&gt;\\u{2066}x\\n";
        assert_eq!(
            shown("gpt\u{202e}<b>\u{2066}x\n"),
            format!("<td data-value=\"{visible}\">{visible}</td>")
        );
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(shown_number(&serde_json::json!(1234567)), "1\u{202f}234\u{202f}567");
        assert_eq!(shown_number(&serde_json::json!(-12)), "-12");
        assert_eq!(shown_number(&serde_json::json!(0.125)), "0.125");
    }

    #[test]
    fn times_are_read_with_their_offset() {
        assert_eq!(instant(&serde_json::json!("1970-01-01T01:00:00+01:00")), Some((0, 3600)));
        assert_eq!(instant(&serde_json::json!("1970-01-01T00:00:10Z")), Some((10, 0)));
        assert_eq!(instant(&serde_json::json!("1970-01-01T00:00:10")), Some((10, 0)));
    }
}
