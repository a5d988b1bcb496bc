//! `txq report`: the figures of the one-page HTML report, each the rows of a canned query of
//! `queries/` run on the session (the spend reports over the days and in the time zone asked
//! for), all at once; [`chart`] draws them, [`page`] lays them out as one self-contained page.
//! The sections every format fills are the report's own; a format's own sections come from its
//! description ([`crate::format::Format::report_sections`]).

pub mod chart;
pub mod page;

use crate::error::Error;
use crate::format::ReportSection;
use crate::sql::queries::{CannedQuery, find};
use crate::sql::reports::{ReportOptions, is_report};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::json::writer::{LineDelimited, WriterBuilder};
use datafusion::prelude::SessionContext;
use serde_json::Value;

/// The canned queries of the page's sections that every format fills, each run once.
pub const QUERIES: &[&str] = &[
    "corpus_summary",
    "unpriced_models",
    "daily",
    "daily_by_cwd",
    "branch_spend",
    "tool_failures",
    "tool_spend",
    "quota_burn",
    "subagent_spend",
    "spend_over_time",
    "cache_hit_by_model",
    "agent_spend",
    "run_outcomes",
    "denied_tools",
    "failing_commands",
    "slowest_tools",
    "network_egress",
    "session",
];

/// The normalized tables several queries of the page read, made once for all of them.
const SHARED_TABLES: &[&str] = &["calls", "tool_calls", "sessions"];

/// The rows one canned query answered, as `txq query NAME --format json` writes them: the
/// columns in order, each value as JSON (text, number, boolean or null).
#[derive(Debug, Clone)]
pub struct Figures {
    pub query: &'static CannedQuery,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// Whether the query is a spend report, so that --since and --until narrowed it.
    pub in_period: bool,
}

impl Figures {
    /// The place of `column` among the columns.
    pub fn column(&self, column: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == column)
    }

    /// Each row's value of `column` (null for a column the query does not have).
    pub fn values<'a>(&'a self, column: &str) -> impl Iterator<Item = &'a Value> + 'a {
        let at = self.column(column);
        self.rows.iter().map(move |row| at.and_then(|at| row.get(at)).unwrap_or(&Value::Null))
    }
}

/// The sections of every format's own (each once, in the order of the formats).
pub fn format_sections() -> Vec<ReportSection> {
    let mut sections: Vec<ReportSection> = Vec::new();
    for section in crate::format::all().into_iter().flat_map(|f| f.report_sections) {
        if !sections.iter().any(|s| s.id == section.id) {
            sections.push(section);
        }
    }
    sections
}

/// Every query the page runs: [`QUERIES`], then those of `sections`.
pub fn queries(sections: &[ReportSection]) -> Vec<&'static str> {
    let mut all = QUERIES.to_vec();
    for section in sections {
        if !all.contains(&section.query) {
            all.push(section.query);
        }
    }
    all
}

/// Everything the page shows: what was read, how it was asked, the formats' own sections, and
/// the rows of each query of [`queries`].
#[derive(Debug, Clone)]
pub struct Report {
    /// The paths read, as the user gave them (or the default places found).
    pub paths: Vec<String>,
    pub options: ReportOptions,
    /// The formats' own sections ([`format_sections`]).
    pub sections: Vec<ReportSection>,
    pub figures: Vec<Figures>,
}

impl Report {
    /// The rows of the query `name`, one of [`queries`].
    pub fn of(&self, name: &str) -> &Figures {
        self.figures.iter().find(|f| f.query.name == name).unwrap_or_else(|| panic!("{name} is run"))
    }
}

/// Runs every query of the page ([`queries`]) on `ctx`, at once, the spend reports over the days
/// and in the time zone `options` asks for (UTC when none is: the session's time zone is set to
/// it).
pub async fn collect(
    ctx: &SessionContext,
    paths: Vec<String>,
    options: &ReportOptions,
) -> Result<Report, Error> {
    options.set_up(ctx)?;
    // The normalized tables that several of the queries read (each a deduplication over every
    // call) are computed once for the page, as tables of this session that hide the views.
    let once = SHARED_TABLES.iter().map(|table| async move {
        let frame = ctx.sql(&format!("select * from {table}")).await?;
        // Every column nullable: the plan may say a column is never null where some of the
        // batches (a join's, a union's) say it may be, and a table's schema must admit them all.
        let fields =
            frame.schema().as_arrow().fields().iter().map(|f| f.as_ref().clone().with_nullable(true));
        let schema =
            std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(fields.collect::<Vec<_>>()));
        let batches = frame.collect().await?;
        let rows = datafusion::datasource::MemTable::try_new(schema, vec![batches])?;
        Ok::<_, datafusion::error::DataFusionError>((*table, rows))
    });
    for (table, rows) in futures::future::try_join_all(once).await? {
        ctx.register_table(table, std::sync::Arc::new(rows))?;
    }
    let sections = format_sections();
    let runs = queries(&sections).into_iter().map(|name| async move {
        let query = find(name).unwrap_or_else(|| panic!("{name} is a canned query"));
        let in_period = is_report(query.sql);
        let sql = match in_period {
            true => options.period_of(query.sql)?,
            false => query.sql.to_string(),
        };
        let frame = ctx.sql(&sql).await?;
        let columns: Vec<String> = frame.schema().fields().iter().map(|f| f.name().clone()).collect();
        let batches = frame.collect().await?;
        figures(query, in_period, columns, &batches)
    });
    let figures = futures::future::try_join_all(runs).await?;
    Ok(Report { paths, options: options.clone(), sections, figures })
}

/// The rows of `batches` as the JSON writer of `--format json` writes their values.
fn figures(
    query: &'static CannedQuery,
    in_period: bool,
    columns: Vec<String>,
    batches: &[RecordBatch],
) -> Result<Figures, Error> {
    let mut rows = Vec::new();
    for batch in batches {
        let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, LineDelimited>(Vec::new());
        writer.write(batch)?;
        writer.finish()?;
        for line in writer.into_inner().split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(line) else {
                let why = format!("{}: a row the JSON writer did not write as an object", query.name);
                return Err(Error::Sql(datafusion::error::DataFusionError::Internal(why)));
            };
            rows.push(columns.iter().map(|c| object.remove(c).unwrap_or(Value::Null)).collect());
        }
    }
    Ok(Figures { query, columns, rows, in_period })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_of_the_page_is_a_canned_query() {
        for name in queries(&format_sections()) {
            assert!(find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn a_formats_own_sections_are_on_the_page_once() {
        let sections = format_sections();
        assert!(!sections.is_empty());
        let mut ids: Vec<&str> = sections.iter().map(|s| s.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), sections.len());
        let all = queries(&sections);
        assert_eq!(&all[..QUERIES.len()], QUERIES);
        assert!(sections.iter().all(|s| all.contains(&s.query)));
    }
}
