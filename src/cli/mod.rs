//! The command-line program: arguments in, statements run, results out, and one exit code for
//! every way it can end.

pub mod args;
pub mod commands;
pub mod exec;
pub mod export;
pub mod generate;
pub mod helper;
pub mod interrupt;
pub mod prices;
pub mod print;
pub mod progress;
pub mod query;
pub mod screen;
pub mod shell;

use crate::source::discover::{DiscoveryError, default_paths};
use crate::sql::session::{LiveEngine, OpenError, Places};
use crate::table::corpus::ReadOptions;
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
    if let Some(message) = crate::sql::memory::exhausted_message(e) {
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
    if let Some(Command::Generate {
        out,
        runs,
        reeval_runs,
        size,
        seed,
        no_damage,
        tool_output_bytes,
        v0_74_percent,
        harness,
    }) = &args.command
    {
        let options = generate::Options {
            runs: *runs,
            reeval_runs: *reeval_runs,
            size: *size,
            seed: *seed,
            damage: !no_damage,
            tool_output_bytes: *tool_output_bytes,
            v0_74_percent: *v0_74_percent,
            harnesses: harness.clone(),
        };
        return generate::run(out, &options).map_err(CliError::Usage);
    }
    if let Some(Command::Query { list: true, .. }) = &args.command {
        let stdout = std::io::stdout();
        // On a terminal, one query a block, its description wrapped to the width.
        let width = terminal_size::terminal_size_of(&stdout).map(|(w, _)| usize::from(w.0));
        if let (print::OutputFormat::Table, Some(width)) = (args.format, width) {
            let mut out = std::io::BufWriter::new(stdout.lock());
            screen::write_blocks(&crate::sql::queries::list(), width, &mut out)
                .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
            return out.flush().map_err(CliError::Output);
        }
        return query::print_list(args.format, &mut std::io::BufWriter::new(stdout.lock()));
    }
    let prices = crate::sql::prices::PriceList::chosen(args.prices.as_deref())
        .map_err(|e| CliError::Usage(format!("--prices: {e}")))?;
    if let Some(Command::Prices) = &args.command {
        let stdout = std::io::stdout();
        return prices::print(prices.as_ref(), args.format, &mut std::io::BufWriter::new(stdout.lock()));
    }
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
    let places = if given.is_empty() {
        let cwd =
            std::env::current_dir().map_err(|e| CliError::Usage(format!("no working directory: {e}")))?;
        Places::Defaults { cwd, home: dirs::home_dir() }
    } else {
        Places::Given(given)
    };
    // With no default place there, the tables are there, empty: `select 1`, `prices` and the
    // shell work, and a place that appears later is read by the shell's next statement.
    let mut looked_in_defaults = None;
    let paths = match &places {
        Places::Given(paths) => paths.clone(),
        Places::Defaults { cwd, home } => match default_paths(&formats, cwd, home.as_deref()) {
            Ok(paths) => paths,
            Err(DiscoveryError::NoDefault(looked)) => {
                looked_in_defaults = Some(looked);
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        },
    };
    let cache_dir = match args.no_cache {
        true => None,
        false => crate::infer::cache::InferenceCache::default_dir().map_err(CliError::Usage)?,
    };
    let memory = crate::sql::memory::MemoryOptions {
        limit: args.memory_limit.unwrap_or_else(crate::sql::memory::default_limit),
        spill_dir: args.spill_dir.clone(),
    };
    let read = ReadOptions { max_line_bytes: args.max_line_bytes, cache_dir, ..Default::default() };
    let options = crate::sql::session::Options { read, memory };
    let opened = |e: OpenError| match e {
        OpenError::Discovery(e) => CliError::from(e),
        OpenError::Sql(e) => CliError::Query(explain(&e)),
    };
    let no_transcripts = || match &looked_in_defaults {
        Some(looked) => {
            format!("no transcripts given and none found in the default places: looked in {looked}")
        }
        None => {
            let mut places: Vec<String> = Vec::new();
            for path in &paths {
                let path = crate::text::escape::path(path);
                if !places.contains(&path) {
                    places.push(path);
                }
            }
            format!(
                "no transcripts in {}: looked for {}",
                places.join(", "),
                crate::format::looked_for(&formats)
            )
        }
    };
    let mut stderr = std::io::stderr();
    // Warnings of the reading, and a note when there is nothing to read (the tables are empty).
    let tell = |corpus: &crate::table::corpus::Corpus, stderr: &mut std::io::Stderr, note: bool| {
        if args.quiet {
            return;
        }
        for warning in &corpus.warnings {
            let _ = writeln!(stderr, "txq: warning: {}", crate::text::escape::message(warning));
        }
        if note && corpus.transcripts() == 0 {
            let _ = writeln!(
                stderr,
                "txq: note: {}; the tables are empty",
                crate::text::escape::message(&no_transcripts())
            );
        }
    };
    if interactive {
        let live = LiveEngine::open(places, options).await.map_err(opened)?;
        if let Some(prices) = &prices {
            crate::sql::prices::register(&live.engine.ctx, prices)
                .map_err(|e| CliError::Query(e.to_string()))?;
        }
        tell(&live.engine.corpus, &mut stderr, true);
        let max_rows = args.maxrows.unwrap_or(args::SHELL_MAX_ROWS);
        return shell::Shell::new(live, args.format, args.quiet, max_rows).run().await;
    }
    let engine = crate::sql::session::open(&paths, options).await.map_err(opened)?;
    let (corpus, ctx) = (&engine.corpus, &engine.ctx);
    if let Some(prices) = &prices {
        crate::sql::prices::register(ctx, prices).map_err(|e| CliError::Query(e.to_string()))?;
    }
    // An export of nothing is a mistake: it stays an error.
    let exporting = matches!(args.command, Some(Command::Export { .. }));
    tell(corpus, &mut stderr, !exporting);
    if exporting && corpus.transcripts() == 0 {
        return Err(CliError::Usage(no_transcripts()));
    }
    if let Some(Command::Export { out, tables, partition_by, overwrite, append, .. }) = &args.command {
        let flags = crate::cli::export::Flags {
            out,
            tables,
            partition_by: *partition_by,
            overwrite: *overwrite,
            append: *append,
            quiet: args.quiet,
        };
        return crate::cli::export::run(&engine, flags).await;
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
    corpus: &crate::table::corpus::Corpus,
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
        query::run(&runner, name, &mut out, &mut stderr).await?;
        return out.flush().map_err(CliError::Output);
    }

    let mut scripts: Vec<String> = args.execute.clone();
    for file in &args.files {
        let sql = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("{}: cannot read: {e}", crate::text::escape::path(file))))?;
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
