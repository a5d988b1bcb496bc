//! The report as one self-contained HTML page: inline CSS and SVG, nothing to fetch (a strict
//! Content-Security-Policy says so), each chart with the canned query that made it and its
//! figures beside it in a table a program can read (`table.figures[data-query]`, a
//! `td[data-column][data-value]` a value). Every text from the data is HTML-escaped here.

use super::chart::{self, Series, TimeAxis};
use super::{Figures, Report};
use serde_json::Value;
use std::fmt::Write;

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
    let mut body = String::new();
    corpus(&mut body, report);
    spend(&mut body, report);
    cache(&mut body, report);
    agents(&mut body, report);
    outcomes(&mut body, report);
    tools(&mut body, report);
    egress(&mut body, report);
    sessions(&mut body, report);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>txq report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>txq report</h1>\n{body}</body>\n</html>\n",
        escape(CONTENT_SECURITY_POLICY)
    )
}

/// `text` safe in HTML text and in a quoted attribute, with the characters a terminal is not
/// given raw (controls, and the bidirectional overrides and isolates that would reorder the text
/// after them) written visibly as the terminal output writes them (`\u{202e}`).
pub fn escape(text: &str) -> String {
    let text = crate::text::escape::text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

/// The section's heading, what its query answers, and whether --since/--until narrowed it.
fn heading(out: &mut String, id: &str, title: &str, report: &Report, figures: &[&Figures]) {
    let _ = writeln!(out, "<section id=\"{id}\">\n<h2>{}</h2>", escape(title));
    let period_given = report.options.since.is_some() || report.options.until.is_some();
    for f in figures {
        let _ = writeln!(
            out,
            "<p class=\"about\"><code>txq query {}</code>: {}</p>",
            f.query.name,
            escape(&f.query.about())
        );
        if period_given && !f.in_period {
            let _ = writeln!(
                out,
                "<p class=\"note\"><code>{}</code> is no spend report: --since and --until do not narrow it; it covers every day.</p>",
                f.query.name
            );
        }
    }
}

/// What a section says when its query returned nothing.
fn empty(out: &mut String, f: &Figures) {
    let _ = writeln!(
        out,
        "<p class=\"empty\" data-query=\"{0}\">No data: <code>txq query {0}</code> returns no rows for this corpus.</p>",
        f.query.name
    );
}

/// The figures of `f` as a table; the first `limit` rows; folded into a `<details>` unless `open`.
fn table(
    out: &mut String,
    f: &Figures,
    open: bool,
    limit: Option<usize>,
    row_class: &dyn Fn(&[Value]) -> &'static str,
) {
    let shown = limit.unwrap_or(f.rows.len()).min(f.rows.len());
    if !open {
        let _ = write!(
            out,
            "<details><summary>The figures ({} rows of <code>txq query {}</code>)</summary>",
            f.rows.len(),
            f.query.name
        );
    }
    let _ = write!(
        out,
        "<div class=\"scroll\"><table class=\"figures\" data-query=\"{}\" data-rows=\"{}\"><thead><tr>",
        f.query.name,
        f.rows.len()
    );
    for column in &f.columns {
        let _ = write!(out, "<th>{}</th>", escape(column));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &f.rows[..shown] {
        let _ = write!(out, "<tr class=\"{}\">", row_class(row));
        for (column, value) in f.columns.iter().zip(row) {
            let column = escape(column);
            match (value_text(value), value) {
                (None, _) => {
                    let _ =
                        write!(out, "<td class=\"null\" data-column=\"{column}\" data-null=\"\">null</td>");
                }
                (Some(text), Value::Number(_)) => {
                    let shown = shown_number(value);
                    let _ = write!(
                        out,
                        "<td class=\"number\" data-column=\"{column}\" data-value=\"{}\">{}</td>",
                        escape(&text),
                        escape(&shown)
                    );
                }
                (Some(text), _) => {
                    let text = escape(&text);
                    let _ = write!(out, "<td data-column=\"{column}\" data-value=\"{text}\">{text}</td>");
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>");
    if shown < f.rows.len() {
        let _ = write!(
            out,
            "<p class=\"about\">The first {shown} of {} rows; <code>txq query {}</code> lists them all.</p>",
            f.rows.len(),
            f.query.name
        );
    }
    if !open {
        out.push_str("</details>");
    }
    out.push('\n');
}

fn plain(_: &[Value]) -> &'static str {
    ""
}

/// A chart on the page: its SVG, what it draws, and the query that made it.
fn figure(
    out: &mut String,
    f: &Figures,
    column: &str,
    mark: &str,
    points: usize,
    title: &str,
    svg: Result<String, String>,
) {
    let svg =
        svg.unwrap_or_else(|e| format!("<p class=\"note\">The chart could not be drawn: {}</p>", escape(&e)));
    let _ = writeln!(
        out,
        "<figure class=\"chart\" data-query=\"{0}\" data-column=\"{1}\" data-mark=\"{mark}\" data-points=\"{points}\">\n\
         <h3>{2}</h3>\n{svg}\n<figcaption>{2}: column <code>{1}</code> of <code>txq query {0}</code></figcaption>\n</figure>",
        f.query.name,
        escape(column),
        escape(title)
    );
}

fn legend(out: &mut String, names: &[String]) {
    out.push_str("<div class=\"legend\">");
    for (n, name) in names.iter().enumerate() {
        let _ = write!(
            out,
            "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
            chart::css_colour(n),
            escape(name)
        );
    }
    out.push_str("</div>\n");
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
fn time_figure(out: &mut String, f: &Figures, by: &str, column: &str, unit: &str, title: &str) {
    let (series, axis) = over_time(f, by, column);
    let points = series.iter().map(|s| s.points.len()).sum();
    figure(out, f, column, "circle", points, title, chart::time_lines(&series, axis, unit));
}

/// A bar chart of `column`, a bar per row, named by `name` of the row.
fn bar_figure(
    out: &mut String,
    f: &Figures,
    name: &dyn Fn(&[Value]) -> String,
    column: &str,
    unit: &str,
    title: &str,
    colour: usize,
) {
    let categories: Vec<String> = f.rows.iter().map(|r| name(r)).collect();
    let values: Vec<Option<f64>> = f.values(column).map(number).collect();
    let points = values.iter().flatten().count();
    figure(out, f, column, "rect", points, title, chart::bars(&categories, &values, unit, colour));
}

/// The text of `row`'s `column` of `f`.
fn cell(f: &Figures, row: &[Value], column: &str) -> String {
    f.column(column).and_then(|at| value_text(&row[at])).unwrap_or_else(|| "null".into())
}

fn corpus(out: &mut String, report: &Report) {
    let summary = report.of("corpus_summary");
    let unpriced = report.of("unpriced_models");
    out.push_str("<section id=\"corpus\">\n<dl class=\"corpus\">\n");
    let paths: Vec<String> = report.paths.iter().map(|p| format!("<code>{}</code>", escape(p))).collect();
    let paths = if paths.is_empty() { "none found".to_string() } else { paths.join(", ") };
    let _ = writeln!(out, "<dt>Read</dt><dd>{paths}</dd>");
    let total = summary.rows.iter().find(|r| cell(summary, r, "format") == "all");
    let all = |column: &str| total.map(|r| cell(summary, r, column)).unwrap_or_else(|| "0".into());
    let _ = writeln!(
        out,
        "<dt>Corpus</dt><dd><span data-figure=\"transcripts\">{}</span> transcripts in <span data-figure=\"files\">{}</span> files ({} bytes), <span data-figure=\"sessions\">{}</span> sessions</dd>",
        escape(&all("transcripts")),
        escape(&all("files")),
        escape(&all("bytes")),
        escape(&all("sessions"))
    );
    let _ = writeln!(
        out,
        "<dt>Time span</dt><dd>{} to {}</dd>",
        escape(&all("first_time")),
        escape(&all("last_time"))
    );
    let _ = writeln!(
        out,
        "<dt>Damaged lines skipped</dt><dd><span data-figure=\"damaged_lines\">{}</span> (each is a row of its schema's <code>errors</code> table)</dd>",
        escape(&all("damaged_lines"))
    );
    let models: Vec<String> = unpriced
        .rows
        .iter()
        .map(|r| {
            format!(
                "<code>{}</code> ({})",
                escape(&cell(unpriced, r, "model")),
                escape(&cell(unpriced, r, "harness"))
            )
        })
        .collect();
    let models = if models.is_empty() { "none".to_string() } else { models.join(", ") };
    let _ = writeln!(out, "<dt>Models without a price</dt><dd data-figure=\"unpriced_models\">{models}</dd>");
    let options = &report.options;
    let day = |d: Option<chrono::NaiveDate>, none: &str| {
        d.map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_else(|| none.to_string())
    };
    let _ = writeln!(
        out,
        "<dt>Period</dt><dd>{} to {}, in {} (the spend reports'; the other sections cover every day)</dd>",
        day(options.since, "the first day"),
        day(options.until, "the last day"),
        escape(options.time_zone.as_deref().unwrap_or(crate::sql::reports::DEFAULT_TIME_ZONE))
    );
    out.push_str("</dl>\n");
    let _ = writeln!(
        out,
        "<p class=\"about\"><code>txq query corpus_summary</code>: {}</p>",
        escape(&summary.query.about())
    );
    table(out, summary, true, None, &plain);
    if !unpriced.rows.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"about\"><code>txq query unpriced_models</code>: {}</p>",
            escape(&unpriced.query.about())
        );
        table(out, unpriced, false, None, &plain);
    }
    out.push_str("</section>\n");
}

fn spend(out: &mut String, report: &Report) {
    let f = report.of("spend_over_time");
    heading(out, "spend", "Spend and tokens over time, by model", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let unit =
            if f.values("unit").next().and_then(Value::as_str) == Some("hour") { "hour" } else { "day" };
        let _ = writeln!(out, "<p>Per {unit} (per hour when the calls span less than 3 days).</p>");
        let (series, _) = over_time(f, "model", "calls");
        legend(out, &series.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
        out.push_str("<div class=\"charts\">\n");
        time_figure(out, f, "model", "cost_usd", "US dollars", "Cost");
        time_figure(out, f, "model", "uncached_input_tokens", "tokens", "Input tokens, not cached");
        time_figure(out, f, "model", "cache_read_tokens", "tokens", "Cache reads");
        time_figure(out, f, "model", "cache_write_tokens", "tokens", "Cache writes");
        time_figure(out, f, "model", "output_tokens", "tokens", "Output tokens");
        out.push_str("</div>\n");
        table(out, f, false, None, &plain);
    }
    out.push_str("</section>\n");
}

fn cache(out: &mut String, report: &Report) {
    let f = report.of("cache_hit_by_model");
    heading(out, "cache", "Cache hit ratio, by model", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let name = |r: &[Value]| format!("{} · {}", cell(f, r, "model"), cell(f, r, "harness"));
        out.push_str("<div class=\"charts\">\n");
        bar_figure(
            out,
            f,
            &name,
            "cache_hit_ratio",
            "share of input tokens read from the cache",
            "Cache hit ratio",
            0,
        );
        bar_figure(
            out,
            f,
            &name,
            "cache_write_ratio",
            "share of input tokens written to the cache",
            "Cache write ratio",
            1,
        );
        out.push_str("</div>\n");
        table(out, f, false, None, &plain);
    }
    out.push_str("</section>\n");
}

fn agents(out: &mut String, report: &Report) {
    let f = report.of("agent_spend");
    heading(out, "agents", "Calls and cost, by agent", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let name = |r: &[Value]| cell(f, r, "agent");
        out.push_str("<div class=\"charts\">\n");
        bar_figure(out, f, &name, "calls", "model calls", "Calls", 0);
        bar_figure(out, f, &name, "cost_usd", "US dollars", "Cost", 1);
        out.push_str("</div>\n");
        table(out, f, false, None, &plain);
    }
    out.push_str("</section>\n");
    let f = report.of("reeval_tool_failures");
    heading(out, "evals", "Tool calls and failures, by eval and cell", report, &[f]);
    out.push_str(
        "<p>Eval attempts write no token usage: they have tool calls, not model calls or cost.</p>\n",
    );
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let name = |r: &[Value]| format!("{} / {}", cell(f, r, "eval"), cell(f, r, "cell"));
        out.push_str("<div class=\"charts\">\n");
        bar_figure(out, f, &name, "tool_calls", "tool calls", "Tool calls", 0);
        bar_figure(out, f, &name, "failure_rate", "share of tool calls that failed", "Failure rate", 3);
        out.push_str("</div>\n");
        table(out, f, false, None, &plain);
    }
    out.push_str("</section>\n");
}

fn outcomes(out: &mut String, report: &Report) {
    let f = report.of("run_outcomes");
    heading(out, "outcomes", "Run outcomes over time", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let (series, _) = over_time(f, "outcome", "runs");
        legend(out, &series.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
        out.push_str("<div class=\"charts\">\n");
        time_figure(out, f, "outcome", "runs", "runs", "Runs by outcome");
        out.push_str("</div>\n");
        table(out, f, false, None, &plain);
    }
    out.push_str("</section>\n");
}

fn tools(out: &mut String, report: &Report) {
    for (id, name, title) in [
        ("denied", "denied_tools", "Denied tools, and why"),
        ("failing", "failing_commands", "Failing commands, by exit code"),
        ("slowest", "slowest_tools", "Slowest tools"),
    ] {
        let f = report.of(name);
        heading(out, id, title, report, &[f]);
        if f.rows.is_empty() {
            empty(out, f);
        } else {
            if name == "slowest_tools" {
                let tool = |r: &[Value]| cell(f, r, "tool");
                out.push_str("<div class=\"charts\">\n");
                bar_figure(out, f, &tool, "p95_ms", "milliseconds (95th percentile)", "p95 duration", 4);
                out.push_str("</div>\n");
            }
            table(out, f, true, None, &plain);
        }
        out.push_str("</section>\n");
    }
}

fn egress(out: &mut String, report: &Report) {
    let f = report.of("network_egress");
    heading(out, "egress", "Egress, by host", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
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
        out.push_str(
            "<p>A row marked <span class=\"note\">unconfirmed</span> has flows whose body never completed: their bytes in are only declared (<code>unconfirmed_bytes_in</code>).</p>\n",
        );
        out.push_str("<div class=\"charts\">\n");
        bar_figure(out, f, &name, "bytes_out", "bytes sent", "Bytes out", 0);
        bar_figure(out, f, &name, "bytes_in", "bytes received", "Bytes in", 1);
        out.push_str("</div>\n");
        let class = |r: &[Value]| if unconfirmed(r) > 0 { "unconfirmed" } else { "" };
        table(out, f, true, None, &class);
    }
    out.push_str("</section>\n");
}

fn sessions(out: &mut String, report: &Report) {
    let f = report.of("session");
    heading(out, "sessions", "The most expensive sessions", report, &[f]);
    if f.rows.is_empty() {
        empty(out, f);
    } else {
        let example = f.rows.first().map(|r| cell(f, r, "session_id")).unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>Go on from a session's id: <code>txq -e \"select model, input_tokens, output_tokens, cost_usd from calls where session_id = '{}'\"</code></p>",
            escape(&example.replace('\'', "''"))
        );
        table(out, f, true, Some(SESSIONS_SHOWN), &plain);
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_inert() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }

    /// A model name with a right-to-left override reversed the text after it on the page.
    #[test]
    fn bidi_overrides_and_controls_are_written_visibly_not_raw() {
        assert_eq!(escape("gpt\u{202e}<b>\u{2066}x\n"), "gpt\\u{202e}&lt;b&gt;\\u{2066}x\\n");
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
