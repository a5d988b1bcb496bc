//! The report as one self-contained HTML page, written by `maud` templates (which escape every
//! text they are given): inline CSS and SVG, nothing to fetch (a strict Content-Security-Policy
//! says so), each chart with the canned query that made it and its figures beside it in a table a
//! program can read (`table.figures[data-query]`, a `td[data-column][data-value]` a value). It
//! opens on a headline of the spend (`[data-figure][data-value]`), and a section whose query has
//! no rows is one line. Every text from the data is shown through [`Shown`], its controls written
//! visibly.

use super::chart::{self, Series, TimeAxis};
use super::{Figures, Report};
use crate::format::ReportSection;
use maud::{DOCTYPE, Markup, PreEscaped, Render, html};
use serde_json::Value;

/// The page's Content-Security-Policy: nothing is loaded, no script runs.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The most expensive sessions shown.
pub const SESSIONS_SHOWN: usize = 25;

/// The rows of the tool failures shown in their table (most failures first).
pub const TOOLS_SHOWN: usize = 30;

/// The bars of a chart of projects or tools: the first rows of the query.
pub const BARS_SHOWN: usize = 20;

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
table:is(.figures, .sums) { border-collapse: collapse; font-size: 12.5px; margin: 6px 0; }
table:is(.figures, .sums) th, table:is(.figures, .sums) td { border: 1px solid #e2e2e2; padding: 2px 7px; text-align: left; vertical-align: top; }
table:is(.figures, .sums) th { background: #f6f6f6; font-weight: 600; }
table:is(.figures, .sums) td.number { text-align: right; font-variant-numeric: tabular-nums; }
table:is(.figures, .sums) td.null { color: #aaa; }
table:is(.figures, .sums) tr.unconfirmed td { background: #fff4e0; }
details summary { cursor: pointer; font-size: 12.5px; color: #444; }
.empty { color: #777; font-style: italic; }
.note { color: #8a5a00; font-size: 13px; }
.headline { display: flex; flex-wrap: wrap; gap: 10px 36px; margin: 10px 0 4px; }
.headline div { display: flex; flex-direction: column; }
.headline .big { font-size: 28px; font-weight: 650; font-variant-numeric: tabular-nums; }
.headline .label { color: #555; font-size: 12.5px; }
.headline .big.days { font-size: 20px; line-height: 34px; }
section.nothing p.empty { margin: 10px 0; }
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
                (headline(report))
                (by_day(report))
                (by_model(report))
                (projects(report))
                (branches(report))
                (tool_failures(report))
                (tool_spend(report))
                (spend(report))
                (quota(report))
                (cache(report))
                (sessions(report))
                (subagents(report))
                (agents(report))
                @for described in &report.sections {
                    (format_section(report, described))
                }
                (outcomes(report))
                (tools(report))
                (egress(report))
                (corpus(report))
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
        Some(n) => crate::text::number::grouped_signed(n, '\u{202f}'),
        None => value.to_string(),
    }
}

/// A section: its heading, what its query answers, whether --since/--until narrowed it, and
/// `note`; then `content` of the rows. A section whose query returned no rows is one line saying
/// that there were no `noun` ([`nothing`]).
fn section(
    report: &Report,
    id: &str,
    title: &str,
    f: &Figures,
    (note, noun): (Option<&str>, &str),
    content: impl FnOnce() -> Markup,
) -> Markup {
    let period_given = period_given(report);
    if f.rows.is_empty() {
        return html! {
            section.nothing id=(id) {
                p.empty data-query=(f.query.name) {
                    strong { (title) } ": " (nothing(report, f, noun)) " (" code { "txq query " (f.query.name) } ")"
                }
            }
        };
    }
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
            (content())
        }
    }
}

fn period_given(report: &Report) -> bool {
    report.options.since.is_some() || report.options.until.is_some()
}

/// What a section says when its query returned no rows: `No rupu runs in this period.`, the
/// format named when the query is a format's own ([`crate::format::Format::queries`]); `in this
/// period` when --since or --until narrowed it.
fn nothing(report: &Report, f: &Figures, noun: &str) -> String {
    let owner = crate::format::all()
        .into_iter()
        .find(|format| format.queries.iter().any(|q| q.name == f.query.name))
        .map(|format| format!("{} ", format.name))
        .unwrap_or_default();
    let scope = match f.in_period && period_given(report) {
        true => "in this period",
        false => "in these transcripts",
    };
    format!("No {owner}{noun} {scope}.")
}

/// What the query of `f` answers.
fn about(f: &Figures) -> Markup {
    html! {
        p.about { code { "txq query " (f.query.name) } ": " (Shown(&f.query.about())) }
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

/// An amount of US dollars as the page shows it: `$1,234.56`; an amount under a cent as
/// `$0.0042`, so that it does not show as nothing.
pub fn money(usd: f64) -> String {
    let sign = if usd < 0.0 { "-" } else { "" };
    let usd = usd.abs();
    let text = match usd > 0.0 && usd < 0.005 {
        true => format!("{usd:.4}"),
        false => format!("{usd:.2}"),
    };
    let (whole, cents) = text.split_once('.').unwrap_or((&text, ""));
    let grouped =
        whole.parse().map(|whole| crate::text::number::grouped(whole, ',')).unwrap_or(whole.to_string());
    format!("{sign}${grouped}.{cents}")
}

/// The sums of rows of `daily` (a row per day, harness and model).
#[derive(Debug, Clone, Default, PartialEq)]
struct Sums {
    calls: i64,
    input_tokens: i64,
    output_tokens: i64,
    /// Of the rows with a cost.
    cost_usd: f64,
    /// Rows whose cost is null: a call of theirs has no price.
    unpriced_rows: usize,
    /// Calls whose service tier the transcript does not say (priced at the standard rate).
    unknown_tier_calls: i64,
}

impl Sums {
    fn add(&mut self, f: &Figures, row: &[Value]) {
        let int = |column: &str| f.column(column).and_then(|at| row[at].as_i64()).unwrap_or(0);
        self.calls += int("calls");
        self.input_tokens += int("input_tokens");
        self.output_tokens += int("output_tokens");
        self.unknown_tier_calls += int("unknown_tier_calls");
        match f.column("cost_usd").and_then(|at| row[at].as_f64()) {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced_rows += 1,
        }
    }
}

/// The sums of `daily`'s rows by the text of each row's `key`, in order of first appearance.
fn sums_by(f: &Figures, key: &dyn Fn(&[Value]) -> String) -> Vec<(String, Sums)> {
    let mut sums: Vec<(String, Sums)> = Vec::new();
    for row in &f.rows {
        let name = key(row);
        let n = sums.iter().position(|(k, _)| *k == name).unwrap_or_else(|| {
            sums.push((name, Sums::default()));
            sums.len() - 1
        });
        sums[n].1.add(f, row);
    }
    sums
}

/// The days from --since (else the first day of `daily`) to --until (else its last), in words.
fn period_words(report: &Report) -> String {
    let options = &report.options;
    let time_zone = options.zone();
    match (options.since, options.until) {
        (None, None) => format!("every day, in {time_zone}"),
        (since, until) => {
            let day = |d: Option<chrono::NaiveDate>, none: &str| {
                d.map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_else(|| none.to_string())
            };
            format!("{} to {}, in {time_zone}", day(since, "the first day"), day(until, "the last day"))
        }
    }
}

/// The headline: the spend, tokens, calls and sessions of the period, and its first and last
/// day with calls: the sums of `daily`'s rows and the rows of `session`.
fn headline(report: &Report) -> Markup {
    let daily = report.of("daily");
    let sessions = report.of("session");
    let mut all = Sums::default();
    for row in &daily.rows {
        all.add(daily, row);
    }
    let days: Vec<String> = daily.values("day").filter_map(value_text).collect();
    let (first, last) = (days.iter().min(), days.iter().max());
    let tokens = all.input_tokens + all.output_tokens;
    let figure = |name: &str, value: &Value, shown: String, label: Markup| {
        html! {
            div {
                span.big data-figure=(name) data-value=(Shown(&value_text(value).unwrap_or_default())) { (Shown(&shown)) }
                span.label { (label) }
            }
        }
    };
    let cost = serde_json::json!((all.cost_usd * 1e6).round() / 1e6);
    html! {
        section id="headline" {
            div.headline {
                (figure("cost_usd", &cost, money(all.cost_usd), html! { "spent (US dollars)" }))
                (figure("tokens", &serde_json::json!(tokens), shown_number(&serde_json::json!(tokens)), html! {
                    "tokens: " (shown_number(&serde_json::json!(all.input_tokens))) " in, "
                    (shown_number(&serde_json::json!(all.output_tokens))) " out"
                }))
                (figure("calls", &serde_json::json!(all.calls), shown_number(&serde_json::json!(all.calls)), html! { "model calls" }))
                (figure("sessions", &serde_json::json!(sessions.rows.len()),
                    shown_number(&serde_json::json!(sessions.rows.len())), html! { "sessions" }))
                div {
                    span.big.days {
                        @match (first, last) {
                            (Some(first), Some(last)) => {
                                span data-figure="first_day" data-value=(Shown(first)) { (Shown(first)) }
                                @if first != last {
                                    " to " span data-figure="last_day" data-value=(Shown(last)) { (Shown(last)) }
                                }
                            }
                            _ => "no calls",
                        }
                    }
                    span.label { "the first and last day with calls" }
                }
            }
            p.about {
                "Over " (period_words(report)) ": the sums of the rows of " code { "txq query daily" }
                " (every harness's model calls, a row per day, harness and model) and the rows of "
                code { "txq query session" } " (the sessions last active in the period)."
            }
            @if all.unpriced_rows > 0 {
                p.note data-figure="unpriced_rows" {
                    (all.unpriced_rows) " rows of " code { "txq query daily" }
                    " have a call whose model has no price: their calls are not in the spend (the models are named under "
                    a href="#corpus" { "What was read" } ")."
                }
            }
            @if let Some(note) = crate::sql::prices::unknown_tier_note(all.unknown_tier_calls) {
                p.note data-figure="unknown_tier_calls" { (note) " (docs/prices.md, service tiers)." }
            }
        }
    }
}

/// The day a row of `daily` is of, and the days from the first to the last, each once.
fn every_day(days: &[String]) -> Vec<String> {
    let parsed: Option<Vec<chrono::NaiveDate>> =
        days.iter().map(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()).collect();
    match parsed.as_deref().and_then(|p| Some((p.iter().min()?, p.iter().max()?))) {
        // A span of days, an empty day too; not more than ten years of them.
        Some((first, last)) if (*last - *first).num_days() < 3660 => {
            first.iter_days().take_while(|d| d <= last).map(|d| d.format("%Y-%m-%d").to_string()).collect()
        }
        _ => {
            let mut distinct: Vec<String> = days.to_vec();
            distinct.sort();
            distinct.dedup();
            distinct
        }
    }
}

/// A column chart of `daily`'s `column` per day, stacked by harness.
fn day_figure(f: &Figures, column: &str, unit: &str, title: &str, harnesses: &[String]) -> Markup {
    let days: Vec<String> = f.values("day").map(|d| value_text(d).unwrap_or_default()).collect();
    let mut columns: Vec<chart::Column> = every_day(&days)
        .into_iter()
        .map(|name| chart::Column { name, values: vec![0.0; harnesses.len()] })
        .collect();
    for (row, day) in f.rows.iter().zip(&days) {
        let harness = cell(f, row, "harness");
        let value = f.column(column).and_then(|at| number(&row[at]));
        let (Some(at), Some(n), Some(value)) = (
            columns.iter().position(|c| c.name == *day),
            harnesses.iter().position(|h| *h == harness),
            value,
        ) else {
            continue;
        };
        columns[at].values[n] += value;
    }
    let points = chart::stacked_marks(&columns);
    figure(f, column, "rect", points, title, chart::stacked_columns(&columns, unit))
}

fn by_day(report: &Report) -> Markup {
    let f = report.of("daily");
    section(report, "by-day", "Spend by day", f, (None, "model calls"), || {
        let harnesses: Vec<String> =
            sums_by(f, &|r| cell(f, r, "harness")).into_iter().map(|(h, _)| h).collect();
        html! {
            p { "A column per day, stacked by harness: the sums of the rows of each day." }
            (legend(&harnesses))
            div.charts {
                (day_figure(f, "cost_usd", "US dollars", "Cost", &harnesses))
                (day_figure(f, "calls", "model calls", "Calls", &harnesses))
            }
            (table(f, false, None, &plain))
        }
    })
}

fn by_model(report: &Report) -> Markup {
    let f = report.of("daily");
    section(report, "by-model", "Spend by harness and model", f, (None, "model calls"), || {
        let mut sums = sums_by(f, &|r| format!("{} · {}", cell(f, r, "model"), cell(f, r, "harness")));
        sums.sort_by(|a, b| b.1.cost_usd.total_cmp(&a.1.cost_usd).then_with(|| a.0.cmp(&b.0)));
        let names: Vec<String> = sums.iter().map(|(name, _)| name.clone()).collect();
        let bars = |values: Vec<Option<f64>>, column: &str, unit: &str, title: &str, colour: usize| {
            let points = values.iter().flatten().count();
            figure(f, column, "rect", points, title, chart::bars(&names, &values, unit, colour))
        };
        html! {
            p {
                "The sums of the rows of " code { "txq query daily" } " per harness and model, most expensive first."
            }
            div.charts {
                (bars(sums.iter().map(|(_, s)| Some(s.cost_usd)).collect(), "cost_usd", "US dollars", "Cost", 1))
                (bars(sums.iter().map(|(_, s)| Some(s.calls as f64)).collect(), "calls", "model calls", "Calls", 0))
            }
            (sums_table(f, "model · harness", &sums))
        }
    })
}

/// The rows of `f` shown as bars: the first `limit`.
fn first_rows(f: &Figures, limit: usize) -> Figures {
    only_rows(f, limit, &|_| true)
}

/// The first `limit` rows of `f` that `keep` keeps.
fn only_rows(f: &Figures, limit: usize, keep: &dyn Fn(&[Value]) -> bool) -> Figures {
    Figures { rows: f.rows.iter().filter(|r| keep(r)).take(limit).cloned().collect(), ..f.clone() }
}

/// The sums of rows of `f` by a name (`name`) as a table: their calls, tokens and cost, each
/// value a `td[data-column][data-value]` as in a table of figures, the cost shown as money.
fn sums_table(f: &Figures, name: &str, sums: &[(String, Sums)]) -> Markup {
    let number = |column: &str, value: Value, shown: String| {
        html! { td.number data-column=(column) data-value=(value) { (shown) } }
    };
    html! {
        div.scroll {
            table.sums data-sums-of=(f.query.name) data-rows=(sums.len()) {
                thead { tr { th { (name) } th { "calls" } th { "tokens in" } th { "tokens out" } th { "cost" } } }
                tbody {
                    @for (key, sums) in sums {
                        tr {
                            td data-column="name" data-value=(Shown(key)) { (Shown(key)) }
                            (number("calls", sums.calls.into(), shown_number(&sums.calls.into())))
                            (number("input_tokens", sums.input_tokens.into(), shown_number(&sums.input_tokens.into())))
                            (number("output_tokens", sums.output_tokens.into(), shown_number(&sums.output_tokens.into())))
                            td.number data-column="cost_usd" data-value=(serde_json::json!((sums.cost_usd * 1e6).round() / 1e6)) {
                                (money(sums.cost_usd))
                                @if sums.unpriced_rows > 0 { " (and calls with no price)" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What a project without a working directory is called.
const NO_PROJECT: &str = "(no working directory)";

fn projects(report: &Report) -> Markup {
    let f = report.of("daily_by_cwd");
    section(report, "projects", "Spend by project", f, (None, "model calls"), || {
        let mut sums = sums_by(f, &|r| match f.column("cwd").map(|at| &r[at]) {
            Some(Value::String(cwd)) => crate::sql::reports::project_of(cwd),
            _ => NO_PROJECT.to_string(),
        });
        sums.sort_by(|a, b| b.1.cost_usd.total_cmp(&a.1.cost_usd).then_with(|| a.0.cmp(&b.0)));
        let shown = &sums[..sums.len().min(BARS_SHOWN)];
        let names: Vec<String> = shown.iter().map(|(name, _)| name.clone()).collect();
        let costs: Vec<Option<f64>> = shown.iter().map(|(_, s)| Some(s.cost_usd)).collect();
        let points = costs.len();
        html! {
            p {
                "A project is the last two components of the working directory of a call's session ("
                code { "/home/ana/src/my_app" } " is " code { "src/my_app" } ", as ccusage names it): the sums of the rows of "
                code { "txq query daily_by_cwd" } " per project, most expensive first."
            }
            div.charts {
                (figure(f, "cost_usd", "rect", points, "Cost", chart::bars(&names, &costs, "US dollars", 1)))
            }
            (sums_table(f, "project", &sums))
            (table(f, false, None, &plain))
        }
    })
}

/// What each tool and MCP server cost: the tools' rows of `tool_spend` as bars of cost, then
/// the servers' subtotals, then the figures.
fn tool_spend(report: &Report) -> Markup {
    let f = report.of("tool_spend");
    section(report, "tool-spend", "Spend by tool and MCP server", f, (None, "tool calls"), || {
        let of_tools = only_rows(f, BARS_SHOWN, &|r| cell(f, r, "tool") != "null");
        let of_servers = only_rows(f, BARS_SHOWN, &|r| cell(f, r, "tool") == "null");
        let tool = |r: &[Value]| match cell(f, r, "mcp_server").as_str() {
            "null" => format!("{} · {}", cell(f, r, "tool"), cell(f, r, "harness")),
            server => format!("{} · {server} · {}", cell(f, r, "tool"), cell(f, r, "harness")),
        };
        let server = |r: &[Value]| cell(f, r, "mcp_server");
        html! {
            p {
                "A tool call's cost is its share of the response that asked for it: that response's cost split "
                "evenly among the tool calls it made. It is an attribution, not a measurement: what the tool's "
                "result then costs as input to the next calls (" code { "result_bytes" } ") stays with those calls."
            }
            div.charts {
                (bar_figure(&of_tools, &tool, "cost_usd", "US dollars", "Cost by tool", 1))
                @if !of_servers.rows.is_empty() {
                    (bar_figure(&of_servers, &server, "cost_usd", "US dollars", "Cost by MCP server", 2))
                }
                (bar_figure(&of_tools, &tool, "result_bytes", "bytes of results", "Result bytes by tool", 0))
            }
            (table(f, true, Some(TOOLS_SHOWN), &plain))
        }
    })
}

/// What each project's branches cost (`branch_spend`).
fn branches(report: &Report) -> Markup {
    let f = report.of("branch_spend");
    section(report, "branches", "Spend by branch", f, (None, "sessions"), || {
        let shown = first_rows(f, BARS_SHOWN);
        let name = |r: &[Value]| {
            let project = match f.column("project").map(|at| &r[at]) {
                Some(Value::String(path)) => crate::sql::reports::project_of(path),
                _ => NO_PROJECT.to_string(),
            };
            match cell(f, r, "git_branch").as_str() {
                "null" => format!("{project} · no branch"),
                branch => format!("{project} · {branch}"),
            }
        };
        html! {
            p {
                "A session's branch is the one its harness wrote as checked out; its project is the repository "
                "holding its working directory (else the directory). "
                code { "txq query commit_spend" } " goes on to the commits of each branch."
            }
            div.charts {
                (bar_figure(&shown, &name, "cost_usd", "US dollars", "Cost by branch", 1))
            }
            (table(f, false, None, &plain))
        }
    })
}

/// How the plans' usage windows filled (`quota_burn`).
fn quota(report: &Report) -> Markup {
    let f = report.of("quota_burn");
    section(report, "quota", "Quota burn, by usage window", f, (None, "usage limits"), || {
        let shown = first_rows(f, BARS_SHOWN);
        let name = |r: &[Value]| {
            format!(
                "{} · {} · resets {}",
                cell(f, r, "harness"),
                cell(f, r, "window"),
                cell(f, r, "resets_at")
            )
        };
        html! {
            p {
                "Each row is one window of a plan's limits, as the harness reported it: how far its used percent "
                "grew, and the calls made inside it."
            }
            div.charts {
                (bar_figure(&shown, &name, "end_percent", "percent of the window used", "Used at last report", 3))
            }
            (table(f, true, Some(TOOLS_SHOWN), &plain))
        }
    })
}

/// What each top-level session and the sessions under it cost (`subagent_spend`).
fn subagents(report: &Report) -> Markup {
    let f = report.of("subagent_spend");
    section(report, "subagents", "Sessions with their subagents", f, (None, "sessions"), || {
        html! {
            p {
                "A top-level session's own calls, and those of every subagent and spawned or forked thread under "
                "it at any depth, each call counted once."
            }
            (table(f, true, Some(SESSIONS_SHOWN), &plain))
        }
    })
}

fn tool_failures(report: &Report) -> Markup {
    let f = report.of("tool_failures");
    section(
        report,
        "tool-failures",
        "Tool calls and failures, by harness and tool",
        f,
        (None, "tool calls"),
        || {
            let failed = first_rows(f, BARS_SHOWN);
            let name = |r: &[Value]| format!("{} · {}", cell(f, r, "tool"), cell(f, r, "harness"));
            html! {
                div.charts {
                    (bar_figure(&failed, &name, "failures", "failed tool calls", "Failures", 3))
                    (bar_figure(&failed, &name, "failure_rate", "share of the tool's calls that failed", "Failure rate", 4))
                }
                (table(f, true, Some(TOOLS_SHOWN), &plain))
            }
        },
    )
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
    let time_zone = options.zone();
    html! {
        section id="corpus" {
            h2 { "What was read" }
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
                    ", in " (Shown(&time_zone)) " (the spend reports'; the other sections cover every day)"
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
    section(report, "spend", "Spend and tokens over time, by model", f, (None, "model calls"), || {
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
    section(report, "cache", "Cache hit ratio, by model", f, (None, "model calls"), || {
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
    section(report, "agents", "Calls and cost, by agent", f, (None, "runs"), || {
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
    section(report, described.id, described.heading, f, (described.note, "data"), || {
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
    section(report, "outcomes", "Run outcomes over time", f, (None, "runs"), || {
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
        @for (id, name, title, noun) in [
            ("denied", "denied_tools", "Denied tools, and why", "denied tool calls"),
            ("failing", "failing_commands", "Failing commands, by exit code", "failing commands"),
            ("slowest", "slowest_tools", "Slowest tools", "tool durations"),
        ] {
            (tool_section(report, id, name, title, noun))
        }
    }
}

fn tool_section(report: &Report, id: &str, name: &str, title: &str, noun: &str) -> Markup {
    let f = report.of(name);
    section(report, id, title, f, (None, noun), || {
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
    section(report, "egress", "Egress, by host", f, (None, "network flows"), || {
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
    section(report, "sessions", "The most expensive sessions", f, (None, "sessions"), || {
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
    fn money_is_dollars_and_cents_grouped_by_thousands() {
        assert_eq!(money(1234567.891), "$1,234,567.89");
        assert_eq!(money(10.145691), "$10.15");
        assert_eq!(money(0.0), "$0.00");
        assert_eq!(money(0.0042), "$0.0042");
        assert_eq!(money(999.999), "$1,000.00");
        assert_eq!(money(-2.5), "-$2.50");
    }

    #[test]
    fn the_days_of_a_chart_are_every_day_from_the_first_to_the_last() {
        let days = |d: &[&str]| every_day(&d.iter().map(|d| d.to_string()).collect::<Vec<_>>());
        assert_eq!(
            days(&["2026-09-03", "2026-09-01", "2026-09-03"]),
            ["2026-09-01", "2026-09-02", "2026-09-03"]
        );
        assert_eq!(days(&[]), Vec::<String>::new());
        assert_eq!(days(&["b", "a", "b"]), ["a", "b"]);
    }

    #[test]
    fn times_are_read_with_their_offset() {
        assert_eq!(instant(&serde_json::json!("1970-01-01T01:00:00+01:00")), Some((0, 3600)));
        assert_eq!(instant(&serde_json::json!("1970-01-01T00:00:10Z")), Some((10, 0)));
        assert_eq!(instant(&serde_json::json!("1970-01-01T00:00:10")), Some((10, 0)));
    }
}
