//! The one path every piece of SQL takes, whichever way it arrives (`-e`, `-f`, stdin, `txq
//! query`, the shell): a [`Script`] of the command line run under Ctrl-C, and each piece of SQL
//! split into statements, planned, run, printed as the batches come, and the problems that the
//! statement's own reads met reported.

use super::args::Args;
use super::interrupt;
use super::print::{OutputFormat, ResultWriter, write_batches};
use super::reading::Reading;
use super::screen::{Screen, Shown};
use super::script::Script;
use crate::error::Error;
use crate::sql::prices::PriceList;
use crate::table::corpus::{Corpus, Problem};
use datafusion::error::DataFusionError;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::DFParser;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use futures::StreamExt;
use std::io::Write;
use std::path::PathBuf;

/// Runs `script` on the transcripts of `args` and `paths`, results to stdout, until it ends or
/// Ctrl-C stops it (within a second, whatever its statement does).
pub(crate) async fn run_script(
    args: &Args,
    script: Script<'_>,
    paths: &[PathBuf],
    prices: Option<PriceList>,
) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    run_script_into(args, args.format, script, paths, prices, &mut out, None).await?;
    out.flush().map_err(Error::Output)
}

/// Runs `script` as [`run_script`] does, results to stdout, and gives its rows back too, as
/// [`rows_of`] does: what a check of the results (a budget's) reads.
pub(crate) async fn run_script_keeping(
    args: &Args,
    script: Script<'_>,
    paths: &[PathBuf],
    prices: Option<PriceList>,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, Error> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let kept = std::cell::RefCell::new(Vec::new());
    run_script_into(args, args.format, script, paths, prices, &mut out, Some(&kept)).await?;
    out.flush().map_err(Error::Output)?;
    rows_of_batches(&kept.into_inner())
}

/// The rows of `batches` as JSON objects, each value as `--format ndjson` writes it.
pub(crate) fn rows_of_batches(
    batches: &[datafusion::arrow::record_batch::RecordBatch],
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, Error> {
    let mut lines = Vec::new();
    if let Some(first) = batches.first() {
        write_batches(OutputFormat::Ndjson, &first.schema(), batches, &mut lines)
            .map_err(Error::of_output)?;
    }
    rows_of_lines(&lines)
}

fn rows_of_lines(lines: &[u8]) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, Error> {
    let mut rows = Vec::new();
    for line in lines.split(|b| *b == b'\n').filter(|line| !line.is_empty()) {
        match serde_json::from_slice(line) {
            Ok(serde_json::Value::Object(row)) => rows.push(row),
            _ => return Err(Error::Usage("a row written as JSON could not be read back".into())),
        }
    }
    Ok(rows)
}

/// Runs `script` as [`run_script`] does, its rows kept as JSON objects (each value as
/// `--format ndjson` writes it) instead of printed: what a report of its own lays out.
pub(crate) async fn rows_of(
    args: &Args,
    script: Script<'_>,
    paths: &[PathBuf],
    prices: Option<PriceList>,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, Error> {
    let mut lines = Vec::new();
    run_script_into(args, OutputFormat::Ndjson, script, paths, prices, &mut lines, None).await?;
    rows_of_lines(&lines)
}

/// Runs `script` on the transcripts of `args` and `paths`, results in `format` to `out`, and
/// their batches into `kept` when given.
async fn run_script_into(
    args: &Args,
    format: OutputFormat,
    script: Script<'_>,
    paths: &[PathBuf],
    prices: Option<PriceList>,
    out: &mut dyn Write,
    kept: Option<&std::cell::RefCell<Vec<datafusion::arrow::record_batch::RecordBatch>>>,
) -> Result<(), Error> {
    let reading = Reading::new(args, paths, prices)?;
    let engine = reading.engine().await?;
    let interrupted = interrupt::next();
    if let Some(interrupts) = interrupt::watched() {
        interrupts.exit_on_stall();
    }
    // Told once Ctrl-C is watched: from this note on, Ctrl-C is answered.
    reading.tell(&engine.corpus, true);
    let runner = Runner {
        ctx: &engine.ctx,
        corpus: &engine.corpus,
        format,
        quiet: args.quiet,
        screen: None,
        warned: None,
        progress: None,
        max_rows: args.maxrows.unwrap_or(0),
        kept,
    };
    tokio::select! {
        result = runner.run_script(&script, out) => result,
        () = interrupted => Err(Error::Cancelled),
    }
}

/// A session ready to run SQL against a corpus.
pub(crate) struct Runner<'a> {
    pub(crate) ctx: &'a SessionContext,
    pub(crate) corpus: &'a Corpus,
    pub(crate) format: OutputFormat,
    pub(crate) quiet: bool,
    /// In the shell, how results are fitted to the terminal, with a footer on `err`; `None`
    /// writes them whole, as scripts want them.
    pub(crate) screen: Option<Screen>,
    /// Warnings this session has given already, not given again (the shell's); `None` gives
    /// each every time.
    pub(crate) warned: Option<&'a std::cell::RefCell<std::collections::HashSet<String>>>,
    /// Where the statement being run is shown as it reads (the shell's progress line).
    pub(crate) progress: Option<&'a super::progress::Progress>,
    /// Without a screen, the rows of a table written at most (0: all); the rest are counted.
    pub(crate) max_rows: usize,
    /// Where every batch of the results is kept too, for a check of them after (a budget's).
    pub(crate) kept: Option<&'a std::cell::RefCell<Vec<datafusion::arrow::record_batch::RecordBatch>>>,
}

impl Runner<'_> {
    /// Runs the SQL of `script`, each text in turn, results to `out`.
    async fn run_script(&self, script: &Script<'_>, out: &mut dyn Write) -> Result<(), Error> {
        let mut stderr = std::io::stderr();
        for sql in script.read(self.ctx).await? {
            self.run(&sql, out, &mut stderr).await?;
        }
        out.flush().map_err(Error::Output)
    }

    /// Runs every statement in `sql`, printing each result to `out`; stops at the first failure.
    pub(crate) async fn run(&self, sql: &str, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Error> {
        let statements = DFParser::parse_sql_with_dialect(sql, &GenericDialect {})?;
        for statement in statements {
            let mut plan = None;
            crate::sql::prices::take_unpriced(self.ctx);
            let result = self.run_statement(statement, &mut plan, out, err).await;
            if let Some(progress) = self.progress {
                progress.running(None);
            }
            let mut problems = plan.as_ref().map(crate::scan::problems_of).unwrap_or_default();
            // On a cluster, what the executors' scans met comes back through the scheduler.
            if let Some(plan) = &plan {
                match crate::cluster::problems_of_job(plan, self.ctx).await {
                    Ok(found) => problems.extend(found),
                    Err(e) if !self.quiet => self.warn(err, e.to_string()),
                    Err(_) => {}
                }
            }
            self.report_problems(&problems, err);
            let unpriced = crate::sql::prices::take_unpriced(self.ctx);
            if !unpriced.is_empty() && !self.quiet {
                self.warn(err, crate::sql::prices::unpriced_warning(&unpriced));
            }
            result?;
        }
        Ok(())
    }

    /// Plans and runs one statement; `plan` is the plan run, for what its scans met.
    async fn run_statement(
        &self,
        statement: datafusion::sql::parser::Statement,
        plan: &mut Option<std::sync::Arc<dyn ExecutionPlan>>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), Error> {
        let started = std::time::Instant::now();
        let state = self.ctx.state();
        let logical = state.statement_to_plan(statement).await.map_err(|e| self.name_missing_table(e))?;
        let frame = self.ctx.execute_logical_plan(logical).await?;
        let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
        let task = std::sync::Arc::new(frame.task_ctx());
        let physical = frame.create_physical_plan().await?;
        *plan = Some(physical.clone());
        if let Some(progress) = self.progress {
            progress.running(Some(physical.clone()));
        }
        let mut stream = datafusion::physical_plan::execute_stream(physical, task)?;
        if schema.fields().is_empty() {
            while self.next(&mut stream).await?.is_some() {}
            return Ok(());
        }
        let Some(screen) = self.screen else {
            let mut writer = ResultWriter::new(self.format, &schema, &mut *out).with_max_rows(self.max_rows);
            while let Some(batch) = self.next(&mut stream).await? {
                writer.write(&batch).map_err(Error::of_output)?;
            }
            let written = writer.finish().map_err(Error::of_output)?;
            out.flush().map_err(Error::Output)?;
            if written.shown < written.rows && !self.quiet {
                writeln!(
                    err,
                    "txq: note: {} rows, the first {} shown (--maxrows 0 shows them all)",
                    written.rows, written.shown
                )
                .map_err(Error::Output)?;
            }
            return Ok(());
        };
        let shown = if self.format == OutputFormat::Table && !screen.holds_everything() {
            // The table view shows the first rows: only they are kept, the rest counted.
            let (mut kept, mut held, mut rows) = (Vec::new(), 0usize, 0usize);
            while let Some(batch) = self.next(&mut stream).await? {
                rows += batch.num_rows();
                let room = if screen.max_rows == 0 { batch.num_rows() } else { screen.max_rows - held };
                if room > 0 && batch.num_rows() > 0 {
                    let take = room.min(batch.num_rows());
                    held += take;
                    kept.push(batch.slice(0, take));
                }
            }
            let shown = screen.write(self.format, &schema, &kept, out).map_err(Error::of_output)?;
            Shown { rows, ..shown }
        } else {
            // Other formats, and a table with nothing to fit (sent to a file by `\o`), stream.
            let mut writer = ResultWriter::new(self.format, &schema, &mut *out);
            while let Some(batch) = self.next(&mut stream).await? {
                writer.write(&batch).map_err(Error::of_output)?;
            }
            let written = writer.finish().map_err(Error::of_output)?;
            Shown { rows: written.rows as usize, shown_rows: written.rows as usize, hidden_columns: 0 }
        };
        out.flush().map_err(Error::Output)?;
        writeln!(err, "{}", shown.footer(screen.timing.then(|| started.elapsed()))).map_err(Error::Output)?;
        Ok(())
    }

    /// Writes one result in the session's format: whole, or fitted to the screen (saying then
    /// what was shown).
    pub(crate) fn write_result(
        &self,
        schema: &datafusion::arrow::datatypes::SchemaRef,
        batches: &[datafusion::arrow::record_batch::RecordBatch],
        out: &mut dyn Write,
    ) -> Result<Option<Shown>, Error> {
        match &self.screen {
            Some(screen) => {
                Ok(Some(screen.write(self.format, schema, batches, out).map_err(Error::of_output)?))
            }
            None => {
                write_batches(self.format, schema, batches, out).map_err(Error::of_output)?;
                Ok(None)
            }
        }
    }

    /// Says on stderr, in one line, what the statement's reads skipped or could not fit.
    pub(crate) fn report_problems(&self, problems: &[Problem], err: &mut dyn Write) {
        // The corpus's log keeps the files not read for export; a statement warns of its own.
        self.corpus.problems.take();
        if self.quiet {
            return;
        }
        let (mut lines, mut damaged_files, mut values) = (0, 0u64, 0);
        let mut value_files = std::collections::BTreeSet::new();
        let mut tables = std::collections::BTreeSet::new();
        for problem in problems {
            match problem {
                Problem::DamagedLines { lines: n, schema, errors_table, .. } => {
                    lines += n;
                    damaged_files += 1;
                    tables.insert(format!("{schema}.{errors_table}"));
                }
                Problem::NulledValue { file, .. } => {
                    values += 1;
                    if value_files.insert(file.clone())
                        && let Some(data) =
                            self.corpus.formats.iter().find(|d| d.files.iter().any(|f| &f.path == file))
                    {
                        tables.insert(format!("{}.{}", data.format.name, data.errors_table()));
                    }
                }
                Problem::UnreadableFile { file, why } => {
                    self.warn(err, format!("{}: not read: {why}", crate::text::escape::path(file)));
                }
                Problem::ReadNote { file, note } => {
                    self.warn(err, format!("{}: {note}", crate::text::escape::path(file)));
                }
            }
        }
        let mut parts = Vec::new();
        if lines > 0 {
            parts.push(format!(
                "skipped {lines} damaged line{} in {damaged_files} file{}",
                plural(lines),
                plural(damaged_files)
            ));
        }
        if values > 0 {
            parts.push(format!(
                "read {values} value{} as null (wrong type) in {} file{}",
                plural(values),
                value_files.len(),
                plural(value_files.len() as u64)
            ));
        }
        if parts.is_empty() {
            return;
        }
        let tables: Vec<String> = tables.iter().map(|t| format!("`select * from {t}`")).collect();
        let verb = if tables.len() == 1 { "lists" } else { "list" };
        let listed = format!("{} {verb} them", crate::text::words::listed(&tables));
        self.warn(err, format!("{}; {listed}", parts.join(", ")));
    }

    /// Writes a warning, unless this session has given it already, or the corpus said it when
    /// it was opened (an object replaced before it was read, told by the inference pass and by
    /// the scan that read it again).
    fn warn(&self, err: &mut dyn Write, text: String) {
        if self.corpus.warnings.contains(&text) {
            return;
        }
        if let Some(warned) = self.warned
            && !warned.borrow_mut().insert(text.clone())
        {
            return;
        }
        let _ = writeln!(err, "txq: warning: {}", crate::text::escape::message(&text));
    }
}

impl Runner<'_> {
    /// DataFusion names a missing table by its resolved name (`datafusion.public.usag`) and
    /// suggests none: name it as written, with the nearest table of its schema when one is near.
    fn name_missing_table(&self, e: DataFusionError) -> DataFusionError {
        let message = e.to_string();
        let Some(resolved) = message
            .split_once("table '")
            .and_then(|(_, rest)| rest.strip_suffix("' not found"))
            .filter(|name| !name.contains('\''))
        else {
            return e;
        };
        let parts: Vec<&str> = resolved.split('.').collect();
        let [catalog, schema, table] = parts[..] else { return e };
        let written = match schema {
            crate::sql::session::DEFAULT_SCHEMA => table.to_string(),
            _ => format!("{schema}.{table}"),
        };
        let names = self.ctx.catalog(catalog).and_then(|c| c.schema(schema)).map(|s| s.table_names());
        let nearest = names.unwrap_or_default().into_iter().max_by(|a, b| {
            let score =
                |n: &str| datafusion::common::utils::datafusion_strsim::normalized_levenshtein(n, table);
            score(a).total_cmp(&score(b)).then_with(|| b.cmp(a))
        });
        let near = nearest.filter(|n| {
            datafusion::common::utils::datafusion_strsim::normalized_levenshtein(n, table) >= 0.5
        });
        let suggestion = match near {
            Some(name) if schema == crate::sql::session::DEFAULT_SCHEMA => {
                format!("; did you mean '{name}'?")
            }
            Some(name) => format!("; did you mean '{schema}.{name}'?"),
            None => String::new(),
        };
        DataFusionError::Plan(format!("table '{written}' not found{suggestion}"))
    }
}

/// The next batch of a statement's stream, giving the runtime a turn now and then: a stream
/// whose batches are ready one after another would otherwise keep a Ctrl-C from being seen.
impl Runner<'_> {
    /// The next batch of `stream`, kept too where [`Runner::kept`] asks.
    async fn next(
        &self,
        stream: &mut datafusion::execution::SendableRecordBatchStream,
    ) -> Result<Option<datafusion::arrow::record_batch::RecordBatch>, DataFusionError> {
        tokio::task::consume_budget().await;
        let batch = stream.next().await.transpose()?;
        if let (Some(kept), Some(batch)) = (self.kept, &batch) {
            kept.borrow_mut().push(batch.clone());
        }
        Ok(batch)
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
