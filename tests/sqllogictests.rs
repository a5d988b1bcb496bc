//! Runs the SQL behaviour files `tests/sql/*.slt` against txq's session: each file names its
//! corpora in a first-line comment `# corpus: <dir under tests/>[, <dir>...]` (`generated` for the
//! generator's default corpus). The session is set up as `txq query` sets it (its time zone UTC),
//! and a record whose SQL is `txq query NAME` runs the canned query `queries/NAME.sql` as that
//! command does, in its order; every canned query must be run by some file. A path in a result
//! is shown from `tests/` on (`fixtures/rupu-runs/run_02D.jsonl`), so that the files hold no
//! machine's paths. Every file is of the machine `test-box`, except under the places a line
//! `# machines: NAME=<dir under tests/>[, ...]` labels (as `--label NAME=PATH` does).
//!
//! `cargo test --test sqllogictests` runs every file; `cargo test --test sqllogictests -- NAME`
//! the files whose path contains NAME. `cargo test --test sqllogictests -- --complete [NAME]`
//! rewrites the expected results of those files from what runs (as DataFusion's runner does):
//! for a new record write its SQL and type letters with an empty result, complete it, then check
//! every row against the fixture by hand before committing it.
//!
//! A `query` record's type letters are checked against the Arrow type of each result column, in
//! DataFusion's own sqllogictest letters: `I` integer, `R` float or decimal, `T` text, `B`
//! boolean, `D` date or time of day, `P` timestamp, `?` anything else (lists, structs,
//! intervals, binary, null). A wrong letter, or a wrong number of them, fails the file.

use async_trait::async_trait;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use sqllogictest::{AsyncDB, ColumnType, DBOutput};
use std::path::{Path, PathBuf};

struct Txq {
    ctx: SessionContext,
    _corpus: txq::table::corpus::Corpus,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct SqlError(String);

/// A result column's type, as a `query` record's letter spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Integer,
    Float,
    Text,
    Boolean,
    DateTime,
    Timestamp,
    Other,
}

impl Column {
    fn of(data_type: &DataType) -> Column {
        match data_type {
            t if t.is_integer() => Column::Integer,
            t if t.is_floating() => Column::Float,
            DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..) => Column::Float,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Column::Text,
            DataType::Dictionary(_, value) => Column::of(value),
            DataType::Boolean => Column::Boolean,
            DataType::Date32 | DataType::Date64 | DataType::Time32(_) | DataType::Time64(_) => {
                Column::DateTime
            }
            DataType::Timestamp(..) => Column::Timestamp,
            _ => Column::Other,
        }
    }
}

impl ColumnType for Column {
    fn from_char(value: char) -> Option<Self> {
        Some(match value {
            'I' => Column::Integer,
            'R' => Column::Float,
            'T' => Column::Text,
            'B' => Column::Boolean,
            'D' => Column::DateTime,
            'P' => Column::Timestamp,
            '?' => Column::Other,
            _ => return None,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Column::Integer => 'I',
            Column::Float => 'R',
            Column::Text => 'T',
            Column::Boolean => 'B',
            Column::DateTime => 'D',
            Column::Timestamp => 'P',
            Column::Other => '?',
        }
    }
}

#[async_trait]
impl AsyncDB for Txq {
    type Error = SqlError;
    type ColumnType = Column;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Column>, SqlError> {
        let sql = match sql.trim().strip_prefix("txq query ") {
            Some(name) => canned_sql(name.trim())?,
            None => sql.to_string(),
        };
        let frame = self.ctx.sql(&sql).await.map_err(|e| SqlError(e.to_string()))?;
        let types: Vec<Column> = frame.schema().fields().iter().map(|f| Column::of(f.data_type())).collect();
        let width = types.len();
        let batches = frame.collect().await.map_err(|e| SqlError(e.to_string()))?;
        if width == 0 {
            return Ok(DBOutput::StatementComplete(0));
        }
        let options = FormatOptions::default().with_null("NULL");
        let mut rows = Vec::new();
        for batch in &batches {
            let formatters: Vec<_> = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
                .collect();
            for i in 0..batch.num_rows() {
                rows.push(
                    formatters
                        .iter()
                        .map(|f| {
                            let cell = f.value(i).to_string().replace(TESTS_DIR, "");
                            if cell.is_empty() { "(empty)".to_string() } else { cell }
                        })
                        .collect(),
                );
            }
        }
        Ok(DBOutput::Rows { types, rows })
    }

    async fn shutdown(&mut self) {}
}

/// The corpora `slt` names in its `# corpus:` line, each a folder under `tests/` or the
/// generated corpus.
fn corpora_of(slt: &Path, generated: &Path) -> Vec<PathBuf> {
    let first = std::fs::read_to_string(slt).unwrap_or_default();
    let names = first
        .lines()
        .find_map(|l| l.strip_prefix("# corpus:"))
        .unwrap_or_else(|| panic!("{}: first line must be `# corpus: <dir>[, <dir>...]`", slt.display()));
    names
        .split(',')
        .map(str::trim)
        .map(|name| match name {
            "generated" => generated.join(".rupu/transcripts"),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(name),
        })
        .collect()
}

/// The machines of `slt`: the places its `# machines:` line labels, the rest `test-box`.
fn machines_of(slt: &Path) -> txq::source::machines::Machines {
    let text = std::fs::read_to_string(slt).unwrap_or_default();
    let labeled = text
        .lines()
        .find_map(|l| l.strip_prefix("# machines:"))
        .map(|labels| {
            labels
                .split(',')
                .map(|label| {
                    let (name, dir) = label.trim().split_once('=').expect("# machines: NAME=DIR, ...");
                    (name.to_string(), Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir))
                })
                .collect()
        })
        .unwrap_or_default();
    txq::source::machines::Machines::new(labeled, "test-box".into())
}

/// Where the corpora lie, as a path in a result begins.
const TESTS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/");

/// The SQL `txq query NAME` runs: the canned query's, a spend report's with no period set.
fn canned_sql(name: &str) -> Result<String, SqlError> {
    let query = txq::sql::queries::find(name).ok_or_else(|| SqlError(format!("no canned query {name:?}")))?;
    match txq::sql::reports::is_report(query.sql) {
        true => txq::sql::reports::ReportOptions::default()
            .period_of(query.sql)
            .map_err(|e| SqlError(e.to_string())),
        false => Ok(query.sql.to_string()),
    }
}

/// A session over `corpora`, set up as `txq query` sets it (its time zone UTC, as a spend
/// report's with no `--timezone`).
async fn open(corpora: &[PathBuf], machines: txq::source::machines::Machines) -> Result<Txq, SqlError> {
    let sql_error = |e: &dyn std::fmt::Display| SqlError(e.to_string());
    let read = txq::table::corpus::ReadOptions { machines, ..Default::default() };
    let engine = txq::sql::session::open(corpora, txq::sql::session::Options::from(read))
        .await
        .map_err(|e| sql_error(&e))?;
    txq::sql::reports::ReportOptions::default().set_up(&engine.ctx).map_err(|e| sql_error(&e))?;
    Ok(Txq { ctx: engine.ctx, _corpus: engine.corpus })
}

/// The canned queries that no record of `files` runs as `txq query NAME`.
fn canned_queries_unchecked(files: &[PathBuf]) -> Vec<&'static str> {
    let text: String = files.iter().map(|f| std::fs::read_to_string(f).unwrap_or_default()).collect();
    let run: std::collections::HashSet<&str> =
        text.lines().filter_map(|l| l.trim().strip_prefix("txq query ")).map(str::trim).collect();
    txq::sql::queries::all().iter().map(|q| q.name).filter(|name| !run.contains(name)).collect()
}

#[tokio::main]
async fn main() {
    let complete = std::env::args().any(|a| a == "--complete");
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let generated = tempfile::tempdir().unwrap();
    txq::generate::write_rupu_corpus(generated.path(), &txq::generate::RupuOptions::default()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| filter.as_ref().is_none_or(|f| p.to_string_lossy().contains(f.as_str())))
        .collect();
    files.sort();
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let corpora = corpora_of(file, generated.path());
        let machines = machines_of(file);
        let make = move || {
            let (corpora, machines) = (corpora.clone(), machines.clone());
            async move { open(&corpora, machines).await }
        };
        let mut runner = sqllogictest::Runner::new(make);
        runner.with_column_validator(sqllogictest::strict_column_validator);
        let result = if complete {
            runner
                .update_test_file(
                    file,
                    " ",
                    sqllogictest::default_validator,
                    sqllogictest::default_normalizer,
                    sqllogictest::strict_column_validator,
                )
                .await
                .map_err(|e| e.to_string())
        } else {
            runner.run_file_async(file).await.map_err(|e| e.display(true).to_string())
        };
        match result {
            Ok(()) => passed += 1,
            Err(e) => {
                failed += 1;
                eprintln!("FAILED {}:\n{e}", file.display());
            }
        }
    }
    if filter.is_none() {
        let unchecked = canned_queries_unchecked(&files);
        if !unchecked.is_empty() {
            failed += 1;
            eprintln!(
                "FAILED: no .slt file runs these canned queries (`txq query NAME`): {}",
                unchecked.join(", ")
            );
        }
    }
    println!("sqllogictests: {passed} passed, {failed} failed");
    if failed > 0 || files.is_empty() {
        std::process::exit(1);
    }
}
