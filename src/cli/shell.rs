//! The interactive SQL shell: a rustyline loop over the session, with history kept across
//! sessions, completion, meta-commands, queries Ctrl-C cancels, and results fitted to the
//! terminal. Every statement runs through `Runner::run`, as from `-e`.

use super::commands::{MetaCommand, describe, format_name, help_batch, tables_batch};
use super::exec::Runner;
use super::helper::{Names, ShellHelper, is_complete, is_meta_command, is_quit};
use super::print::OutputFormat;
use super::progress::Progress;
use super::screen::Screen;
use crate::error::Error;
use crate::sql::session::LiveEngine;
use crate::table::corpus::Corpus;
use crate::text::escape;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{
    Cmd, CompletionType, ConditionalEventHandler, Config, Editor, Event, EventContext, EventHandler,
    KeyEvent, Movement, RepeatCount,
};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

const PROMPT: &str = "txq> ";
/// The prompt of a statement's later lines.
const CONTINUATION_PROMPT: &str = "  ...> ";

/// What the shell does after an input.
pub(crate) enum Flow {
    Continue,
    Quit,
    /// Run this SQL (from `\i FILE`).
    Run(String),
}

/// The shell's state: the session, and how results are shown and where they go.
pub(crate) struct Shell {
    /// The session over the corpus, taking in what changed on disk before each statement.
    pub(crate) live: LiveEngine,
    /// Bumped each time the corpus is read again (so completion learns the new names).
    generation: u64,
    pub(crate) format: OutputFormat,
    pub(crate) quiet: bool,
    pub(crate) screen: Screen,
    /// Where results go after `\o FILE`; the terminal when `None`.
    output: Option<BufWriter<File>>,
    /// Warnings given already: each is given once a session.
    warned: RefCell<HashSet<String>>,
    /// Warnings of reading the files given already (at the start, or when read again).
    given: RefCell<HashSet<String>>,
}

/// Ctrl-C on a line with text clears it; on an empty line it interrupts (and so may quit).
struct ClearLine;

impl ConditionalEventHandler for ClearLine {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        (!ctx.line().is_empty()).then_some(Cmd::Kill(Movement::WholeBuffer))
    }
}

/// Where history is kept: `$TXQ_HISTORY` (empty: nowhere), else `txq/history` in the user's
/// data directory.
fn history_path() -> Option<PathBuf> {
    match std::env::var_os("TXQ_HISTORY") {
        Some(path) if path.is_empty() => None,
        Some(path) => Some(PathBuf::from(path)),
        None => dirs::data_dir().map(|dir| dir.join("txq").join("history")),
    }
}

fn editor() -> rustyline::Result<Editor<ShellHelper, FileHistory>> {
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .auto_add_history(false)
        .history_ignore_space(true)
        .max_history_size(10_000)?
        .build();
    let mut editor = Editor::with_config(config)?;
    editor.bind_sequence(KeyEvent::ctrl('C'), EventHandler::Conditional(Box::new(ClearLine)));
    Ok(editor)
}

fn report(e: &Error) {
    eprintln!("txq: error: {}", escape::message(&super::message(e)));
}

impl Shell {
    pub(crate) fn new(live: LiveEngine, format: OutputFormat, quiet: bool, max_rows: usize) -> Self {
        let screen = Screen { max_rows, width: 80, expanded: false, timing: true };
        // The warnings of the start were given already.
        let given = live.engine.corpus.warnings.iter().cloned().collect();
        Self {
            live,
            generation: 0,
            format,
            quiet,
            screen,
            output: None,
            warned: RefCell::default(),
            given: RefCell::new(given),
        }
    }

    pub(crate) fn ctx(&self) -> &SessionContext {
        &self.live.engine.ctx
    }

    pub(crate) fn corpus(&self) -> &Corpus {
        &self.live.engine.corpus
    }

    /// Takes in the files that grew, came, went or were rewritten since the last statement
    /// (nothing but a walk of the folders when none did), giving the reading's new warnings;
    /// false when Ctrl-C stopped it (the walk of a large home shows the progress line too).
    async fn refresh(&mut self) -> bool {
        let progress = std::sync::Arc::new(Progress::new(std::io::stderr().is_terminal()));
        let looked = {
            let cancel = super::interrupt::next();
            let _ticker = progress.ticker();
            tokio::select! {
                looked = self.live.refresh() => Some(looked),
                () = cancel => None,
            }
        };
        progress.clear();
        let Some(looked) = looked else {
            eprintln!("{}", super::interrupt::MESSAGE);
            return false;
        };
        match looked {
            Ok(None) => {}
            Ok(Some(warnings)) => {
                self.generation += 1;
                let mut given = self.given.borrow_mut();
                for warning in warnings {
                    if !self.quiet && given.insert(warning.clone()) {
                        eprintln!("txq: warning: {}", escape::message(&warning));
                    }
                }
            }
            Err(e) => eprintln!(
                "txq: warning: the transcripts were not looked at again: {}",
                escape::message(&super::message(&e))
            ),
        }
        true
    }

    /// Reads and runs input until `\q`, `exit`, `quit`, Ctrl-D, or Ctrl-C twice at an empty prompt.
    pub(crate) async fn run(mut self) -> Result<(), Error> {
        let terminal_error = |e: ReadlineError| Error::Usage(format!("cannot use the terminal: {e}"));
        let mut editor = editor().map_err(terminal_error)?;
        editor.set_helper(Some(ShellHelper::new(Names::of(self.ctx()).await)));
        let mut history = history_path();
        if let Some(path) = &history
            && path.exists()
            && let Err(e) = editor.load_history(path)
        {
            eprintln!(
                "txq: warning: {}: history not read: {}",
                escape::path(path),
                escape::message(&e.to_string())
            );
        }
        eprintln!(
            "txq {} over {}; \\? lists the commands, \\d the tables; end statements with ;",
            env!("CARGO_PKG_VERSION"),
            self.describe_corpus()
        );
        let mut interrupted = false;
        let mut known_generation = self.generation;
        // The lines of a statement not ended yet.
        let mut pending = String::new();
        loop {
            let prompt = if pending.is_empty() { PROMPT } else { CONTINUATION_PROMPT };
            match editor.readline(prompt) {
                Ok(line) => {
                    interrupted = false;
                    if pending.is_empty() && line.trim().is_empty() {
                        continue;
                    }
                    if !pending.is_empty() {
                        pending.push('\n');
                    }
                    pending.push_str(&line);
                    if !is_complete(&pending) {
                        continue;
                    }
                    let input = std::mem::take(&mut pending);
                    let _ = editor.add_history_entry(input.trim_end());
                    if let Some(path) = &history
                        && let Err(e) = save_history(&mut editor, path)
                    {
                        eprintln!(
                            "txq: warning: {}: history not saved: {}",
                            escape::path(path),
                            escape::message(&e.to_string())
                        );
                        history = None;
                    }
                    if let Some((width, _)) = editor.dimensions() {
                        self.screen.width = width as usize;
                    }
                    if let Flow::Quit = self.input(&input).await {
                        break;
                    }
                    if let Some(helper) = editor.helper_mut()
                        && (helper.names.outdated(self.ctx()) || known_generation != self.generation)
                    {
                        helper.names = Names::of(self.ctx()).await;
                        known_generation = self.generation;
                    }
                }
                // Ctrl-C in a statement's later lines drops the statement.
                Err(ReadlineError::Interrupted) if !pending.is_empty() => pending.clear(),
                Err(ReadlineError::Interrupted) if interrupted => break,
                Err(ReadlineError::Interrupted) => {
                    interrupted = true;
                    eprintln!("(Ctrl-C again, Ctrl-D, \\q or exit quits)");
                }
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(terminal_error(e)),
            }
        }
        self.redirect(None)
    }

    /// `12 rupu transcripts`, or `no transcripts yet`.
    fn describe_corpus(&self) -> String {
        let parts: Vec<String> = (self.corpus().formats.iter())
            .filter(|d| d.format.lines_table.is_none() && !d.files.is_empty())
            .map(|d| format!("{} {} transcripts", d.files.len(), d.format.name))
            .collect();
        match parts.is_empty() {
            true => "no transcripts yet".to_string(),
            false => crate::text::words::listed(&parts),
        }
    }

    /// Runs one input: a meta-command, or SQL.
    async fn input(&mut self, input: &str) -> Flow {
        if is_quit(input) {
            return Flow::Quit;
        }
        if !self.refresh().await {
            return Flow::Continue;
        }
        let flow = if is_meta_command(input) {
            match input.parse::<MetaCommand>() {
                Ok(command) => self.execute(command).await.unwrap_or_else(|e| {
                    report(&e);
                    Flow::Continue
                }),
                Err(e) => {
                    eprintln!("txq: error: {}", escape::message(&e));
                    Flow::Continue
                }
            }
        } else {
            Flow::Run(input.to_string())
        };
        match flow {
            Flow::Run(sql) => {
                self.run_sql(&sql).await;
                Flow::Continue
            }
            flow => flow,
        }
    }

    /// How results are run and shown now: fitted to the terminal, or whole into a file.
    fn runner(&self, to_file: bool) -> Runner<'_> {
        let screen = match to_file {
            true => Screen { max_rows: 0, width: usize::MAX, ..self.screen },
            false => self.screen,
        };
        Runner {
            ctx: self.ctx(),
            corpus: self.corpus(),
            format: self.format,
            quiet: self.quiet,
            screen: Some(screen),
            warned: Some(&self.warned),
            progress: None,
            max_rows: 0,
            kept: None,
        }
    }

    /// Runs SQL until it ends or Ctrl-C cancels it, showing progress while it is quiet (Ctrl-C
    /// and the progress line each on a thread of their own: the query may keep every worker busy).
    async fn run_sql(&mut self, sql: &str) {
        let mut file = self.output.take();
        let progress = std::sync::Arc::new(Progress::new(std::io::stderr().is_terminal()));
        let mut runner = self.runner(file.is_some());
        runner.progress = Some(&progress);
        let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
        let out: &mut dyn Write = match &mut file {
            Some(file) => file,
            None => &mut stdout,
        };
        let mut out = progress.clearing(out);
        let mut err = progress.clearing(&mut stderr);
        let finished = {
            let cancel = super::interrupt::next();
            let query = runner.run(sql, &mut out, &mut err);
            let _ticker = progress.ticker();
            tokio::select! {
                result = query => Some(result),
                () = cancel => None,
            }
        };
        progress.clear();
        match finished {
            Some(Ok(())) => {}
            Some(Err(e)) => report(&e),
            None => eprintln!("{}", super::interrupt::MESSAGE),
        }
        if let Err(e) = out.flush() {
            report(&Error::Output(e));
        }
        self.output = file;
    }

    /// Writes a table of the shell's own (`\?`, `\d`) where results go, under a heading; every
    /// row of it (`\maxrows` limits query results only).
    pub(crate) fn show(&mut self, batch: &RecordBatch, heading: Option<&str>) -> Result<(), Error> {
        let mut file = self.output.take();
        let mut runner = self.runner(file.is_some());
        runner.screen = runner.screen.map(|screen| Screen { max_rows: 0, ..screen });
        let mut stdout = std::io::stdout();
        let out: &mut dyn Write = match &mut file {
            Some(file) => file,
            None => &mut stdout,
        };
        let result = write_titled(&runner, batch, heading, out);
        self.output = file;
        result
    }

    /// Sends results to `path` from now on, or back to the terminal.
    pub(crate) fn redirect(&mut self, path: Option<&Path>) -> Result<(), Error> {
        if let Some(mut file) = self.output.take() {
            file.flush().map_err(Error::Output)?;
        }
        if let Some(path) = path {
            let file = File::create(path)
                .map_err(|e| Error::Usage(format!("{}: cannot write: {e}", escape::path(path))))?;
            self.output = Some(BufWriter::new(file));
        }
        Ok(())
    }
}

/// Writes `heading`, then `batch` as `runner` writes results.
fn write_titled(
    runner: &Runner<'_>,
    batch: &RecordBatch,
    heading: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    if let Some(heading) = heading {
        writeln!(out, "{}", escape::message(heading)).map_err(Error::Output)?;
    }
    if let Some(shown) = runner.write_result(&batch.schema(), std::slice::from_ref(batch), out)?
        && shown.is_cut()
    {
        eprintln!("{}", shown.footer(None));
    }
    out.flush().map_err(Error::Output)
}

/// Appends the new history entries to the file, making its directory first.
fn save_history(editor: &mut Editor<ShellHelper, FileHistory>, path: &Path) -> rustyline::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    editor.append_history(path)
}
impl Shell {
    /// Does what a meta-command says.
    pub(crate) async fn execute(&mut self, command: MetaCommand) -> Result<Flow, Error> {
        let shell = self;
        let mut terminal = std::io::stderr();
        let say = |terminal: &mut std::io::Stderr, text: String| {
            let _ = writeln!(terminal, "{}", escape::message(&text));
        };
        match command {
            MetaCommand::Help => shell.show(&help_batch(), None)?,
            MetaCommand::ListTables => shell.show(&tables_batch(shell.ctx(), shell.corpus()).await, None)?,
            MetaCommand::Describe(name) => {
                let (heading, batch) = describe(shell.ctx(), shell.corpus(), &name).await?;
                shell.show(&batch, Some(&heading))?;
            }
            MetaCommand::Format(Some(format)) => shell.format = format,
            MetaCommand::Format(None) => say(&mut terminal, format!("format: {}", format_name(shell.format))),
            MetaCommand::Timing(on) => {
                shell.screen.timing = on.unwrap_or(!shell.screen.timing);
                say(&mut terminal, format!("timing is {}", if shell.screen.timing { "on" } else { "off" }));
            }
            MetaCommand::Expanded(on) => {
                shell.screen.expanded = on.unwrap_or(!shell.screen.expanded);
                let state = if shell.screen.expanded { "on" } else { "off" };
                say(&mut terminal, format!("one field per line is {state}"));
            }
            MetaCommand::MaxRows(n) => shell.screen.max_rows = n,
            MetaCommand::Output(path) => {
                shell.redirect(path.as_deref())?;
                match path {
                    Some(path) => say(&mut terminal, format!("results go to {}", escape::path(&path))),
                    None => say(&mut terminal, "results go to the terminal".into()),
                }
            }
            MetaCommand::Include(file) => {
                let sql = std::fs::read_to_string(&file)
                    .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", escape::path(&file))))?;
                return Ok(Flow::Run(sql));
            }
            MetaCommand::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Continue)
    }
}

/// `txq shell`: refused with `-e` or `-f` given, without a terminal, or with `--follow`; else
/// the shell over the transcripts of `paths`.
pub(crate) async fn command(args: &super::args::Args, paths: &[PathBuf]) -> Result<(), Error> {
    let prices = super::reading::prices(args)?;
    if !(args.execute.is_empty() && args.files.is_empty()) {
        return Err(Error::Usage("the shell runs no -e or -f: give them without `shell`".into()));
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::Usage("the shell needs a terminal: pipe statements to `txq` instead".into()));
    }
    super::reading::refuse_follow_unless(false, args)?;
    open(args, paths, prices).await
}

/// The shell over the transcripts of `args` and `paths`, until it ends.
pub(crate) async fn open(
    args: &super::args::Args,
    paths: &[PathBuf],
    prices: Option<crate::sql::prices::PriceList>,
) -> Result<(), Error> {
    let reading = super::reading::Reading::new(args, paths, prices)?;
    let live = reading.live().await?;
    reading.tell(&live.engine.corpus, true);
    let max_rows = args.maxrows.unwrap_or(super::args::SHELL_MAX_ROWS);
    Shell::new(live, args.format, args.quiet, max_rows).run().await
}
