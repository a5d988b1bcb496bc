//! The one path every piece of SQL takes, whichever way it arrives (`-e`, `-f`, stdin): split
//! into statements, planned, run, printed, and the reading problems reported.

use super::print::{OutputFormat, write_batches};
use crate::corpus::{Corpus, Problem};
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::DFParser;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use std::io::Write;

/// Why running SQL failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Sql(#[from] DataFusionError),
    #[error("{0}")]
    Output(#[from] std::io::Error),
}

impl From<datafusion::arrow::error::ArrowError> for ExecError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        match e {
            datafusion::arrow::error::ArrowError::IoError(_, io) => ExecError::Output(io),
            other => ExecError::Sql(other.into()),
        }
    }
}

/// A session ready to run SQL against a corpus.
pub struct Runner<'a> {
    pub ctx: &'a SessionContext,
    pub corpus: &'a Corpus,
    pub format: OutputFormat,
    pub quiet: bool,
}

impl Runner<'_> {
    /// Runs every statement in `sql`, printing each result to `out`; stops at the first failure.
    pub async fn run(&self, sql: &str, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), ExecError> {
        let statements = DFParser::parse_sql_with_dialect(sql, &GenericDialect {})?;
        for statement in statements {
            let result = self.run_statement(statement, out).await;
            self.report_problems(err);
            result?;
        }
        Ok(())
    }

    async fn run_statement(
        &self,
        statement: datafusion::sql::parser::Statement,
        out: &mut dyn Write,
    ) -> Result<(), ExecError> {
        let state = self.ctx.state();
        let plan = state.statement_to_plan(statement).await?;
        let frame = self.ctx.execute_logical_plan(plan).await?;
        let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
        let batches = frame.collect().await?;
        if !schema.fields().is_empty() {
            write_batches(self.format, &schema, &batches, out)?;
        }
        out.flush()?;
        Ok(())
    }

    /// Says on stderr, in one line, what the statement's reads skipped or could not fit.
    fn report_problems(&self, err: &mut dyn Write) {
        let problems = self.corpus.problems.take();
        if problems.is_empty() || self.quiet {
            return;
        }
        let (mut lines, mut values) = (0, 0);
        let mut files = std::collections::BTreeSet::new();
        let mut schemas = std::collections::BTreeSet::new();
        for problem in &problems {
            match problem {
                Problem::Line { file, .. } => {
                    lines += 1;
                    files.insert(file.clone());
                }
                Problem::Value { file, .. } => {
                    values += 1;
                    files.insert(file.clone());
                }
                Problem::File { file, why } => {
                    let _ = writeln!(err, "txq: warning: {}: not read: {why}", file.display());
                    continue;
                }
            }
            let file = files.last().cloned().unwrap_or_default();
            if let Some(data) = self.corpus.formats.iter().find(|d| d.files.iter().any(|f| f.path == file)) {
                schemas.insert(data.format.name);
            }
        }
        if lines + values == 0 {
            return;
        }
        let mut parts = Vec::new();
        if lines > 0 {
            parts.push(format!("skipped {lines} damaged line{}", plural(lines)));
        }
        if values > 0 {
            parts.push(format!("read {values} value{} that did not fit {} column as null", plural(values), if values == 1 { "its" } else { "their" }));
        }
        let tables: Vec<String> = schemas.iter().map(|s| format!("`select * from {s}.errors`")).collect();
        let _ = writeln!(
            err,
            "txq: warning: {} in {} file{}; {} lists them",
            parts.join(" and "),
            files.len(),
            plural(files.len()),
            tables.join(" and "),
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
