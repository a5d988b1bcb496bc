//! `txq --follow`: one statement's rows, then the rows that agents append, until Ctrl-C. A
//! statement whose rows each come from one line (a scan, filtered, projected) reads on from
//! where its last run stopped in each file, whole lines only; any other (an aggregate, an ORDER
//! BY, a join, a LIMIT, a view over them) is run again when files change, at most once per
//! interval, its table redrawn in place on a terminal, a fresh result each time when piped.

use super::exec::Runner;
use super::print::{OutputFormat, ResultWriter};
use super::screen::Screen;
use crate::error::Error;
use crate::scan::follow::FollowPositions;
use crate::sql::session::LiveEngine;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::sql::parser::{DFParser, Statement};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use futures::StreamExt;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a statement is followed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FollowOptions {
    pub(crate) format: OutputFormat,
    pub(crate) quiet: bool,
    /// A statement run again is run at most once this often; without a watcher, how often the
    /// files are looked at.
    pub(crate) interval: Duration,
    /// Look at the files every interval, with no watcher (network file systems tell of no
    /// change).
    pub(crate) poll: bool,
    /// Whether stdout is a terminal, and its size: a statement run again is redrawn in place.
    pub(crate) terminal: Option<(usize, usize)>,
}

/// What the rows of a canned query are measured against (a spend report's budget), written
/// where the report is: each run of a followed statement gives the lines to say on stderr, and
/// a statement run once its verdict.
pub(crate) trait RowsCheck {
    /// The lines for the periods of `rows` that pass the check and were not said before;
    /// `first` for the rows of the first run.
    fn lines(&mut self, rows: &[serde_json::Map<String, serde_json::Value>], first: bool) -> Vec<String>;

    /// `Ok` when no period of `rows` passes the check, else the error that says which do.
    fn result(&self, rows: &[serde_json::Map<String, serde_json::Value>]) -> Result<(), Error>;
}

/// After a change is told, how long to wait for the rest of the same write.
const SETTLE: Duration = Duration::from_millis(20);

/// Follows the one statement of `sql` over `live` until Ctrl-C: results to `out`, warnings to
/// `err`, and with `crossings`, a line on `err` for each period of a spend report as it passes
/// its budget.
pub(crate) async fn run(
    live: LiveEngine,
    sql: &str,
    options: FollowOptions,
    crossings: Option<Box<dyn RowsCheck>>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let statement = one_statement(sql)?;
    let interrupts = super::interrupt::watch();
    let positions = Arc::new(FollowPositions::default());
    let state = followed_state(&live, &positions);
    let plan = state.statement_to_plan(statement.clone()).await?;
    let appends = appends_only(&state.optimize(&plan)?);
    let schema = Arc::new(plan.schema().as_arrow().clone());
    let (changes, changed) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = match options.poll {
        true => None,
        false => watch(&live.walked(), changes.clone(), err, options.quiet),
    };
    if !options.quiet {
        let how = match appends {
            true => "new rows as they are appended".to_string(),
            false => format!(
                "run again as files change, at most every {}",
                super::screen::duration(options.interval)
            ),
        };
        let _ = writeln!(err, "txq: following: {how}; Ctrl-C stops");
    }
    let warned = RefCell::new(live.engine.corpus.warnings.iter().cloned().collect::<HashSet<String>>());
    let mut follower = Follower {
        live,
        options,
        warned,
        changed,
        _changes: changes,
        _watcher: watcher,
        interrupts,
        // The watching began with the follow: a Ctrl-C while the rows there were read ends it too.
        start: 0,
        err,
        crossings,
    };
    match appends {
        true => follower.appends(&statement, &positions, &schema, out).await,
        false => follower.reruns(sql, out).await,
    }
}

/// A statement being followed: the engine, what tells of changes, and where warnings go.
struct Follower<'a> {
    live: LiveEngine,
    options: FollowOptions,
    /// The warnings given already, not given again.
    warned: RefCell<HashSet<String>>,
    changed: tokio::sync::mpsc::UnboundedReceiver<()>,
    /// Kept, so that with no watcher `changed` waits rather than ends.
    _changes: tokio::sync::mpsc::UnboundedSender<()>,
    _watcher: Option<notify::RecommendedWatcher>,
    interrupts: Option<&'static super::interrupt::Interrupts>,
    /// The Ctrl-Cs seen before the follow began (none: watching begins with it).
    start: u64,
    err: &'a mut dyn Write,
    /// A spend report's budget: its periods said on `err` as they pass it.
    crossings: Option<Box<dyn RowsCheck>>,
}

impl Follower<'_> {
    /// Resolves at the first Ctrl-C of the follow (at once if one came already).
    fn stopped(&self) -> impl std::future::Future<Output = ()> + 'static {
        let (interrupts, start) = (self.interrupts, self.start);
        async move {
            match interrupts {
                Some(interrupts) => interrupts.after(start).await,
                None => std::future::pending().await,
            }
        }
    }

    /// Waits until files change (not before `not_before`) and takes the change in: false at
    /// Ctrl-C.
    async fn next_change(&mut self, not_before: Option<Instant>) -> bool {
        loop {
            // A change told, or the interval gone by: a place may have appeared where no
            // watcher looks, and without one the files are looked at every interval.
            tokio::select! {
                () = self.stopped() => return false,
                _ = self.changed.recv() => {}
                () = tokio::time::sleep(self.options.interval) => {}
            }
            if let Some(at) = not_before {
                tokio::select! {
                    () = self.stopped() => return false,
                    () = tokio::time::sleep_until(at.into()) => {}
                }
            }
            // The rest of the same write.
            tokio::time::sleep(SETTLE).await;
            while self.changed.try_recv().is_ok() {}
            match self.live.refresh().await {
                Ok(None) => continue,
                Ok(Some(warnings)) => {
                    for warning in warnings {
                        self.warn(&warning);
                    }
                    return true;
                }
                Err(e) => self.warn(&super::message(&e)),
            }
        }
    }

    fn warn(&mut self, warning: &str) {
        if !self.options.quiet && self.warned.borrow_mut().insert(warning.to_string()) {
            let _ = writeln!(self.err, "txq: warning: {}", crate::text::escape::message(warning));
        }
    }

    /// Tells of a failure of a run after the first (a file half rewritten): the next change
    /// may mend it. A result that cannot be written ends the follow.
    fn failed(&mut self, e: Error) -> Result<(), Error> {
        match e {
            Error::Output(_) => Err(e),
            e => {
                let _ =
                    writeln!(self.err, "txq: error: {}", crate::text::escape::message(&super::message(&e)));
                Ok(())
            }
        }
    }

    /// Follows a statement whose rows are lines': each run reads on from where the last
    /// stopped, its rows written after the others', under the columns of the first run.
    async fn appends(
        &mut self,
        statement: &Statement,
        positions: &Arc<FollowPositions>,
        schema: &SchemaRef,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        let mut sink = Flushing(out);
        let mut writer = ResultWriter::new(self.options.format, schema, &mut sink);
        let mut first = true;
        loop {
            let stopped = self.stopped();
            let run = appended_rows(&self.live, positions, statement, schema, &mut writer);
            let ran = tokio::select! {
                () = stopped => break,
                ran = run => ran,
            };
            let (problems, ran) = match ran {
                Ok(problems) => (problems, Ok(())),
                Err((problems, e)) => (problems, Err(e)),
            };
            let runner =
                runner(&self.live, self.options.format, self.options.quiet, Some(&self.warned), None);
            runner.report_problems(&problems, self.err);
            match ran {
                Ok(()) => writer.show_held().map_err(Error::of_output)?,
                Err(e) if first => return Err(e),
                Err(e) => self.failed(e)?,
            }
            first = false;
            if !self.next_change(None).await {
                break;
            }
        }
        writer.finish().map_err(Error::of_output)?;
        Ok(())
    }

    /// Follows any other statement: run whole again when files change, at most once an
    /// interval.
    async fn reruns(&mut self, sql: &str, out: &mut dyn Write) -> Result<(), Error> {
        let mut drawn = Drawn::default();
        let mut first = true;
        loop {
            let started = Instant::now();
            let stopped = self.stopped();
            let kept = RefCell::new(Vec::new());
            let keep = self.crossings.as_ref().map(|_| &kept);
            let run = rerun(&self.live, sql, self.options, &self.warned, keep, &mut drawn, out, self.err);
            let ran = tokio::select! {
                () = stopped => break,
                ran = run => ran,
            };
            match ran {
                Ok(()) => {
                    if let Some(crossings) = &mut self.crossings {
                        let rows = super::exec::rows_of_batches(&kept.take())?;
                        for line in crossings.lines(&rows, first) {
                            let _ = writeln!(self.err, "{}", crate::text::escape::message(&line));
                        }
                    }
                }
                Err(e) if first => return Err(e),
                Err(e) => self.failed(e)?,
            }
            first = false;
            if !self.next_change(Some(started + self.options.interval)).await {
                break;
            }
        }
        out.flush().map_err(Error::Output)
    }
}

/// Runs a followed statement over the lines added since its last run, writing its rows under
/// `schema`; with the problems its reads met, whether it ran or failed.
async fn appended_rows(
    live: &LiveEngine,
    positions: &Arc<FollowPositions>,
    statement: &Statement,
    schema: &SchemaRef,
    writer: &mut ResultWriter<'_>,
) -> Result<Vec<crate::table::corpus::Problem>, (Vec<crate::table::corpus::Problem>, Error)> {
    let state = followed_state(live, positions);
    let plan = state.statement_to_plan(statement.clone()).await.map_err(|e| (vec![], e.into()))?;
    let physical = state.create_physical_plan(&plan).await.map_err(|e| (vec![], e.into()))?;
    let task = Arc::new(TaskContext::from(&state));
    let problems = || crate::scan::problems_of(&physical);
    let mut stream = datafusion::physical_plan::execute_stream(physical.clone(), task)
        .map_err(|e| (problems(), e.into()))?;
    while let Some(batch) = stream.next().await {
        let batch = batch.and_then(|b| conform(b, schema)).map_err(|e| (problems(), e.into()))?;
        writer.write(&batch).map_err(|e| (problems(), Error::of_output(e)))?;
        tokio::task::consume_budget().await;
    }
    Ok(problems())
}

/// A batch of a later run under the columns of the first: a column found since is left out, one
/// gone is null.
fn conform(batch: RecordBatch, schema: &SchemaRef) -> datafusion::error::Result<RecordBatch> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch.with_schema(schema.clone())?);
    }
    let columns = schema
        .fields()
        .iter()
        .map(|field| match batch.column_by_name(field.name()) {
            Some(column) if column.data_type() == field.data_type() => Ok(column.clone()),
            Some(column) => Ok(datafusion::arrow::compute::cast(column, field.data_type())?),
            None => Ok(datafusion::arrow::array::new_null_array(field.data_type(), batch.num_rows())),
        })
        .collect::<datafusion::error::Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Results written through at once: a follow's rows are seen as they come.
struct Flushing<'a>(&'a mut dyn Write);

impl Write for Flushing<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(bytes)?;
        self.0.flush()?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The one statement of `sql`: a follow follows one.
fn one_statement(sql: &str) -> Result<Statement, Error> {
    let mut statements = DFParser::parse_sql_with_dialect(sql, &GenericDialect {})?;
    match (statements.pop_front(), statements.is_empty()) {
        (Some(statement), true) => Ok(statement),
        (None, _) => Err(Error::Usage("--follow: no statement to follow".into())),
        (Some(_), false) => {
            Err(Error::Usage("--follow follows one statement: give one -e (or a -f file holding one)".into()))
        }
    }
}

/// The session's state, with the positions its scans read on from.
fn followed_state(
    live: &LiveEngine,
    positions: &Arc<FollowPositions>,
) -> datafusion::execution::SessionState {
    let mut state = live.engine.ctx.state();
    state.config_mut().set_extension(positions.clone());
    state
}

/// Whether each row of `plan` is made of one line of a transcript: scans of event tables,
/// filtered, projected, unnested and put together, with no subquery. Its rows are then those
/// of the lines added since the last run, added to those of the runs before.
fn appends_only(plan: &LogicalPlan) -> bool {
    let has_subquery = |exprs: &[&Expr]| {
        exprs.iter().any(|e| {
            e.exists(|e| Ok(matches!(e, Expr::ScalarSubquery(_) | Expr::InSubquery(_) | Expr::Exists(_))))
                .unwrap_or(true)
        })
    };
    let mut appends = true;
    let _ = plan.apply(|node| {
        let fits = match node {
            LogicalPlan::Projection(p) => !has_subquery(&p.expr.iter().collect::<Vec<_>>()),
            LogicalPlan::Filter(f) => !has_subquery(&[&f.predicate]),
            LogicalPlan::SubqueryAlias(_) | LogicalPlan::Unnest(_) | LogicalPlan::Union(_) => true,
            LogicalPlan::TableScan(scan) => {
                datafusion::datasource::source_as_provider(&scan.source)
                    .is_ok_and(|provider| crate::scan::is_event_table(provider.as_ref()))
                    && scan.fetch.is_none()
            }
            _ => false,
        };
        appends &= fits;
        Ok(if fits { TreeNodeRecursion::Continue } else { TreeNodeRecursion::Stop })
    });
    appends
}

/// What a redrawn result took of the terminal.
#[derive(Debug, Default)]
struct Drawn {
    lines: usize,
}

/// Runs `sql` whole and writes its result: redrawn over the last on a terminal, after it when
/// piped.
#[allow(clippy::too_many_arguments)]
async fn rerun(
    live: &LiveEngine,
    sql: &str,
    options: FollowOptions,
    warned: &RefCell<HashSet<String>>,
    kept: Option<&RefCell<Vec<RecordBatch>>>,
    drawn: &mut Drawn,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let Some((width, height)) = options.terminal.filter(|_| options.format == OutputFormat::Table) else {
        let runner = Runner { kept, ..runner(live, options.format, options.quiet, Some(warned), None) };
        return runner.run(sql, out, err).await;
    };
    // The result, its footer and warnings drawn at once, where the last one was.
    let screen = Screen { max_rows: height.saturating_sub(8).max(3), width, expanded: false, timing: false };
    let runner = Runner { kept, ..runner(live, options.format, options.quiet, Some(warned), Some(screen)) };
    let mut page: Vec<u8> = Vec::new();
    let mut notes: Vec<u8> = Vec::new();
    let ran = runner.run(sql, &mut page, &mut notes).await;
    page.extend_from_slice(&notes);
    let now = chrono::Utc::now().format("%H:%M:%S UTC");
    let every = super::screen::duration(options.interval);
    writeln!(
        page,
        "txq: following: run again at {now}, as files change (at most every {every}); Ctrl-C stops"
    )
    .map_err(Error::Output)?;
    let mut text = String::new();
    if drawn.lines > 0 && drawn.lines < height {
        // Up to the first line drawn, and everything below it cleared.
        text.push_str(&format!("\x1b[{}F\x1b[J", drawn.lines));
    } else if drawn.lines > 0 {
        text.push_str("\x1b[H\x1b[2J");
    }
    let page = String::from_utf8_lossy(&page);
    text.push_str(&page);
    drawn.lines = page.lines().map(|line| super::print::width_of(line).max(1).div_ceil(width.max(1))).sum();
    out.write_all(text.as_bytes()).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)?;
    ran
}

/// A runner over the engine as it is now, giving each warning once when given `warned`.
pub(crate) fn runner<'a>(
    live: &'a LiveEngine,
    format: OutputFormat,
    quiet: bool,
    warned: Option<&'a RefCell<HashSet<String>>>,
    screen: Option<Screen>,
) -> Runner<'a> {
    Runner {
        ctx: &live.engine.ctx,
        corpus: &live.engine.corpus,
        format,
        quiet,
        screen,
        warned,
        progress: None,
        max_rows: 0,
        kept: None,
    }
}

/// `--follow`: the statement of `script` on the transcripts of `args` and `paths`, its rows
/// printed, then those agents append, until Ctrl-C (which ends it with exit 0, from the start).
pub(crate) async fn command(
    args: &super::args::Args,
    script: super::script::Script<'_>,
    paths: &[std::path::PathBuf],
    prices: Option<crate::sql::prices::PriceList>,
    crossings: Option<Box<dyn RowsCheck>>,
) -> Result<(), Error> {
    super::reading::refuse_cluster_for("--follow", args)?;
    super::interrupt::watch();
    let reading = super::reading::Reading::new(args, paths, prices)?;
    let live = reading.live().await?;
    let sql = script.read(&live.engine.ctx).await?.join(";\n");
    reading.tell(&live.engine.corpus, true);
    let stdout = std::io::stdout();
    let terminal = match std::io::IsTerminal::is_terminal(&stdout) {
        true => terminal_size::terminal_size_of(&stdout).map(|(w, h)| (usize::from(w.0), usize::from(h.0))),
        false => None,
    };
    let options = FollowOptions {
        format: args.format,
        quiet: args.quiet,
        interval: args.interval,
        poll: args.poll,
        terminal,
    };
    run(live, &sql, options, crossings, &mut stdout.lock(), &mut std::io::stderr()).await
}

/// A watcher of `paths` (recursively) that sends on `changes` whenever something under them
/// changes; `None` (the files then looked at every interval) where the system cannot watch.
fn watch(
    paths: &[std::path::PathBuf],
    changes: tokio::sync::mpsc::UnboundedSender<()>,
    err: &mut dyn Write,
    quiet: bool,
) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut watcher = match notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_))) {
            let _ = changes.send(());
        }
    }) {
        Ok(watcher) => watcher,
        Err(e) => {
            if !quiet {
                let _ = writeln!(err, "txq: note: cannot watch for changes ({e}); looking every interval");
            }
            return None;
        }
    };
    for path in paths {
        if let Err(e) = watcher.watch(path, notify::RecursiveMode::Recursive)
            && !quiet
        {
            let _ = writeln!(
                err,
                "txq: note: cannot watch {} ({e}); looking at it every interval",
                crate::text::escape::path(path)
            );
        }
    }
    Some(watcher)
}
