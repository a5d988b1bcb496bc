//! The command-line program: arguments in, statements run, results out, and one exit code for
//! every way it can end.

pub mod args;
pub mod commands;
pub mod exec;
pub mod generate;
pub mod helper;
pub mod interrupt;
pub mod print;
pub mod progress;
pub mod screen;
pub mod shell;

use crate::corpus::ReadOptions;
use crate::discover::{DiscoveryError, default_paths};
use crate::session::OpenError;
use args::{Args, Command};
use exec::{ExecError, Runner};
use std::io::{IsTerminal, Read, Write};

/// How a run of txq ended, and the exit code it gets.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad arguments, or nothing to read: exit 2.
    #[error("{0}")]
    Usage(String),
    /// A statement failed: exit 1.
    #[error("{0}")]
    Query(String),
    /// Results could not be written: exit 3 (a closed pipe ends quietly, exit 0).
    #[error("cannot write results: {0}")]
    Output(std::io::Error),
    /// Ctrl-C stopped the statement: exit 130.
    #[error("query cancelled")]
    Cancelled,
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Query(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            CliError::Output(_) => 3,
            CliError::Cancelled => interrupt::EXIT_CODE,
        }
    }
}

impl From<DiscoveryError> for CliError {
    fn from(e: DiscoveryError) -> Self {
        CliError::Usage(e.to_string())
    }
}

impl From<ExecError> for CliError {
    fn from(e: ExecError) -> Self {
        match e {
            ExecError::Output(io) => CliError::Output(io),
            ExecError::Sql(e) => CliError::Query(explain(&e)),
        }
    }
}

/// DataFusion's message, with what the user can do about it.
pub(crate) fn explain(e: &datafusion::error::DataFusionError) -> String {
    if let Some(message) = crate::memory::exhausted_message(e) {
        return message;
    }
    let message = e.to_string();
    if message.contains("table") && message.contains("not found") {
        format!(
            "{message}\n  hint: \\d in the shell, or `select table_schema, table_name from information_schema.tables`, lists the tables; docs/tables.md describes them"
        )
    } else if let Some(at) = message.find("No function matches the given name and argument types") {
        // DataFusion wraps a function given the wrong types in an internal error that asks for a
        // bug report; what matters is the signature and the candidates.
        format!("Error during planning: {}", &message[at..])
    } else {
        message
    }
}

/// Runs txq with parsed arguments.
pub async fn run(args: Args) -> Result<(), CliError> {
    if let Some(Command::Generate { out, runs, reeval_runs, size, seed, no_damage, tool_output_bytes }) =
        &args.command
    {
        let options = generate::Options {
            runs: *runs,
            reeval_runs: *reeval_runs,
            size: *size,
            seed: *seed,
            damage: !no_damage,
            tool_output_bytes: *tool_output_bytes,
        };
        return generate::run(out, &options).map_err(CliError::Usage);
    }
    if let Some(Command::Query { list: true, .. }) = &args.command {
        let stdout = std::io::stdout();
        return crate::queries::print_list(args.format, &mut std::io::BufWriter::new(stdout.lock()));
    }
    let prices = crate::prices::PriceList::chosen(args.prices.as_deref())
        .map_err(|e| CliError::Usage(format!("--prices: {e}")))?;
    // The shell: asked for, or no SQL given on a terminal.
    let (shell_asked, shell_paths) = match &args.command {
        Some(Command::Shell { paths }) => (true, paths.as_slice()),
        Some(Command::Export { paths, .. } | Command::Query { paths, .. }) => (false, paths.as_slice()),
        _ => (false, &[][..]),
    };
    let no_sql = args.execute.is_empty() && args.files.is_empty();
    let on_terminal = std::io::stdin().is_terminal();
    if shell_asked && !no_sql {
        return Err(CliError::Usage("the shell runs no -e or -f: give them without `shell`".into()));
    }
    if shell_asked && !on_terminal {
        return Err(CliError::Usage("the shell needs a terminal: pipe statements to `txq` instead".into()));
    }
    let interactive = shell_asked || (no_sql && on_terminal && args.command.is_none());
    let given: Vec<std::path::PathBuf> = args.paths.iter().chain(shell_paths).cloned().collect();
    let formats = crate::format::all();
    let paths = if given.is_empty() {
        let cwd =
            std::env::current_dir().map_err(|e| CliError::Usage(format!("no working directory: {e}")))?;
        default_paths(&formats, &cwd, dirs::home_dir().as_deref())?
    } else {
        given
    };
    let cache_dir = match args.no_cache {
        true => None,
        false => crate::cache::InferenceCache::default_dir().map_err(CliError::Usage)?,
    };
    let memory = crate::memory::MemoryOptions {
        limit: args.memory_limit.unwrap_or_else(crate::memory::default_limit),
        spill_dir: args.spill_dir.clone(),
    };
    let options =
        ReadOptions { max_line_bytes: args.max_line_bytes, cache_dir, memory, ..Default::default() };
    let engine = crate::session::open(&paths, options).await.map_err(|e| match e {
        OpenError::Discovery(e) => CliError::from(e),
        OpenError::Sql(e) => CliError::Query(explain(&e)),
    })?;
    let (corpus, ctx) = (&engine.corpus, &engine.ctx);
    if let Some(prices) = &prices {
        crate::prices::register(ctx, prices).map_err(|e| CliError::Query(e.to_string()))?;
    }
    let mut stderr = std::io::stderr();
    if !args.quiet {
        for warning in &corpus.warnings {
            let _ = writeln!(stderr, "txq: warning: {}", crate::escape::message(warning));
        }
    }
    if corpus.transcripts() == 0 {
        let where_ = paths.iter().map(|p| crate::escape::path(p)).collect::<Vec<_>>().join(", ");
        return Err(CliError::Usage(format!(
            "no transcripts in {where_}: looked for rupu transcripts (*.jsonl files with a run_start line) and reeval attempts (transcript.jsonl)"
        )));
    }
    if let Some(Command::Export { out, tables, partition_by, overwrite, append, .. }) = &args.command {
        let flags = crate::export::command::Flags {
            out,
            tables,
            partition_by: *partition_by,
            overwrite: *overwrite,
            append: *append,
            quiet: args.quiet,
        };
        return crate::export::command::run(&engine, flags).await;
    }
    if interactive {
        let max_rows = args.maxrows.unwrap_or(args::SHELL_MAX_ROWS);
        return shell::Shell::new(ctx, corpus, args.format, args.quiet, max_rows).run().await;
    }
    // A script stops at Ctrl-C, within a second whatever its statement does.
    if let Some(interrupts) = interrupt::watch() {
        interrupts.exit_on_stall();
    }
    tokio::select! {
        result = run_scripts(&args, ctx, corpus) => result,
        () = interrupt::next() => Err(CliError::Cancelled),
    }
}

/// Runs the SQL of the command line (a canned query, `-e`, `-f` or stdin), results to stdout.
async fn run_scripts(
    args: &Args,
    ctx: &datafusion::prelude::SessionContext,
    corpus: &crate::corpus::Corpus,
) -> Result<(), CliError> {
    let mut stderr = std::io::stderr();
    let runner = Runner {
        ctx,
        corpus,
        format: args.format,
        quiet: args.quiet,
        screen: None,
        warned: None,
        progress: None,
        max_rows: args.maxrows.unwrap_or(0),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let Some(Command::Query { name: Some(name), .. }) = &args.command {
        crate::queries::run(&runner, name, &mut out, &mut stderr).await?;
        return out.flush().map_err(CliError::Output);
    }

    let mut scripts: Vec<String> = args.execute.clone();
    for file in &args.files {
        let sql = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("{}: cannot read: {e}", crate::escape::path(file))))?;
        scripts.push(sql);
    }
    if scripts.is_empty() {
        let mut sql = String::new();
        std::io::stdin()
            .read_to_string(&mut sql)
            .map_err(|e| CliError::Usage(format!("cannot read stdin: {e}")))?;
        scripts.push(sql);
    }
    for sql in &scripts {
        runner.run(sql, &mut out, &mut stderr).await?;
    }
    out.flush().map_err(CliError::Output)
}
