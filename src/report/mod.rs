//! `txq report`: the figures of the one-page HTML report, each the rows of a canned query of
//! `queries/` run on the session (the spend reports over the days and in the time zone asked
//! for), all at once; [`chart`] draws them, [`page`] lays them out as one self-contained page.

pub mod chart;
pub mod page;

use crate::error::Error;
use crate::sql::queries::{CannedQuery, find};
use crate::sql::reports::{ReportOptions, is_report};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::json::writer::{LineDelimited, WriterBuilder};
use datafusion::prelude::SessionContext;
use serde_json::Value;

/// The canned queries the page is made of, each run once.
pub const QUERIES: &[&str] = &[
    "corpus_summary",
    "unpriced_models",
    "spend_over_time",
    "cache_hit_by_model",
    "agent_spend",
    "reeval_tool_failures",
    "run_outcomes",
    "denied_tools",
    "failing_commands",
    "slowest_tools",
    "network_egress",
    "session",
];

/// The normalized tables several queries of the page read, made once for all of them.
const SHARED_TABLES: &[&str] = &["calls", "sessions"];

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

/// Everything the page shows: what was read, how it was asked, and the rows of each query of
/// [`QUERIES`].
#[derive(Debug, Clone)]
pub struct Report {
    /// The paths read, as the user gave them (or the default places found).
    pub paths: Vec<String>,
    pub options: ReportOptions,
    pub figures: Vec<Figures>,
}

impl Report {
    /// The rows of the query `name`, one of [`QUERIES`].
    pub fn of(&self, name: &str) -> &Figures {
        self.figures.iter().find(|f| f.query.name == name).unwrap_or_else(|| panic!("{name} is run"))
    }
}

/// Runs every query of [`QUERIES`] on `ctx`, at once, the spend reports over the days and in
/// the time zone `options` asks for (UTC when none is: the session's time zone is set to it).
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
        let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
        let rows = datafusion::datasource::MemTable::try_new(schema, vec![frame.collect().await?])?;
        Ok::<_, datafusion::error::DataFusionError>((*table, rows))
    });
    for (table, rows) in futures::future::try_join_all(once).await? {
        ctx.register_table(table, std::sync::Arc::new(rows))?;
    }
    let runs = QUERIES.iter().map(|name| async move {
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
    Ok(Report { paths, options: options.clone(), figures })
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
        for name in QUERIES {
            assert!(find(name).is_some(), "{name}");
        }
    }
}
