//! The command-line program. In: the arguments. Out: results on stdout, messages on stderr, and an
//! exit code ([`crate::error::Error::exit_code`]). Every way SQL arrives (`-e`, `-f`, stdin, the
//! shell, `txq query`) runs through one [`exec::Runner`]; the export, report, prices and generate
//! commands have a file each.

pub mod args;
pub(crate) mod commands;
pub mod config;
pub(crate) mod exec;
pub(crate) mod export;
pub(crate) mod follow;
pub(crate) mod generate;
pub(crate) mod helper;
pub mod interrupt;
pub(crate) mod manual;
pub(crate) mod prices;
pub(crate) mod print;
pub(crate) mod progress;
pub(crate) mod query;
pub(crate) mod report;
pub(crate) mod screen;
pub(crate) mod shell;

use crate::error::Error;
use crate::source::discover::default_paths;
use crate::sql::session::{LiveEngine, Places};
use crate::table::corpus::ReadOptions;
use args::{Args, Command};
use exec::Runner;
use std::io::{IsTerminal, Read, Write};

/// What to tell a person of `e`, after `txq: error: `: its message, and for a statement that
/// failed what they can do about it.
pub fn message(e: &Error) -> String {
    match e {
        Error::Sql(e) => explain(e),
        other => other.to_string(),
    }
}

/// DataFusion's message, with what the user can do about it.
fn explain(e: &datafusion::error::DataFusionError) -> String {
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

/// Runs `txq scheduler` or `txq executor` until it is stopped, in a runtime of its own; `None`
/// for any other command (which [`run`] runs).
pub fn serve(args: &Args) -> Option<Result<(), Error>> {
    match &args.command {
        Some(Command::Scheduler { flags }) => Some(crate::cluster::process::scheduler(flags.clone())),
        Some(Command::Executor { flags }) => Some(crate::cluster::process::executor(flags.clone())),
        _ => None,
    }
}

/// Runs txq with parsed arguments.
pub async fn run(args: Args) -> Result<(), Error> {
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
        return generate::run(out, &options);
    }
    match &args.command {
        Some(Command::Completions { shell }) => {
            return manual::completions(*shell, &mut std::io::stdout().lock());
        }
        Some(Command::Man { out: Some(dir), .. }) => {
            return manual::pages_into(dir, &mut std::io::stdout().lock());
        }
        Some(Command::Man { command, out: None }) => {
            return manual::page(command.as_deref(), &mut std::io::stdout().lock());
        }
        _ => {}
    }
    if let Some(Command::Query { list: true, .. }) = &args.command {
        let stdout = std::io::stdout();
        // On a terminal, one query a block, its description wrapped to the width.
        let width = terminal_size::terminal_size_of(&stdout).map(|(w, _)| usize::from(w.0));
        if let (print::OutputFormat::Table, Some(width)) = (args.format, width) {
            let mut out = std::io::BufWriter::new(stdout.lock());
            screen::write_blocks(&crate::sql::queries::list(), width, &mut out).map_err(Error::of_output)?;
            return out.flush().map_err(Error::Output);
        }
        return query::print_list(args.format, &mut std::io::BufWriter::new(stdout.lock()));
    }
    let prices = crate::sql::prices::PriceList::chosen(args.prices.as_deref())
        .map_err(|e| Error::Usage(format!("--prices: {e}")))?;
    for warning in prices.iter().flat_map(|list| &list.warnings) {
        let _ = writeln!(std::io::stderr(), "txq: warning: {}", crate::text::escape::message(warning));
    }
    if let Some(Command::Prices) = &args.command {
        let stdout = std::io::stdout();
        return prices::print(prices.as_ref(), args.format, &mut std::io::BufWriter::new(stdout.lock()));
    }
    // The shell: asked for, or no SQL given on a terminal.
    let (shell_asked, shell_paths) = match &args.command {
        Some(Command::Shell { paths }) => (true, paths.as_slice()),
        Some(
            Command::Export { paths, .. } | Command::Query { paths, .. } | Command::Report { paths, .. },
        ) => (false, paths.as_slice()),
        _ => (false, &[][..]),
    };
    let no_sql = args.execute.is_empty() && args.files.is_empty();
    let on_terminal = std::io::stdin().is_terminal();
    if shell_asked && !no_sql {
        return Err(Error::Usage("the shell runs no -e or -f: give them without `shell`".into()));
    }
    if shell_asked && !on_terminal {
        return Err(Error::Usage("the shell needs a terminal: pipe statements to `txq` instead".into()));
    }
    let interactive = shell_asked || (no_sql && on_terminal && args.command.is_none());
    let follows_query = matches!(&args.command, Some(Command::Query { name: Some(_), .. }));
    if args.follow && !((no_sql && follows_query) || (!no_sql && args.command.is_none())) {
        return Err(Error::Usage(
            "--follow follows the statement of -e or -f, or a canned query: txq --follow -e \"select ...\" [PATH...], txq query daily --follow".into(),
        ));
    }
    let local_only = match &args.command {
        Some(Command::Export { .. }) => Some("txq export"),
        Some(Command::Report { .. }) => Some("txq report"),
        _ if args.follow => Some("--follow"),
        _ => None,
    };
    if let (Some(url), Some(what)) = (&args.cluster, local_only) {
        return Err(Error::Usage(format!(
            "{what} runs on this machine: --cluster {url} runs the statements of -e, -f, the shell and txq query"
        )));
    }
    let given: Vec<std::path::PathBuf> = args.paths.iter().chain(shell_paths).cloned().collect();
    let formats = crate::format::all();
    let places = if given.is_empty() {
        let cwd = std::env::current_dir().map_err(|e| Error::Usage(format!("no working directory: {e}")))?;
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
            Err(Error::NoDefaultPlace(looked)) => {
                looked_in_defaults = Some(looked);
                Vec::new()
            }
            Err(e) => return Err(e),
        },
    };
    let cache_dir = match args.no_cache {
        true => None,
        false => crate::infer::cache::InferenceCache::default_dir()?,
    };
    let memory = crate::sql::memory::MemoryOptions {
        limit: args.memory_limit.unwrap_or_else(crate::sql::memory::default_limit),
        spill_dir: args.spill_dir.clone(),
    };
    let read = ReadOptions { max_line_bytes: args.max_line_bytes, cache_dir, ..Default::default() };
    let options = crate::sql::session::Options { read, memory };
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
        let mut live = LiveEngine::open(places, options).await?;
        if let Some(prices) = &prices {
            crate::sql::prices::register(&live.engine.ctx, prices).map_err(Error::Sql)?;
        }
        if let Some(url) = &args.cluster {
            live.engine.ctx = crate::cluster::connect(live.engine.ctx.clone(), url).await?;
        }
        tell(&live.engine.corpus, &mut stderr, true);
        let max_rows = args.maxrows.unwrap_or(args::SHELL_MAX_ROWS);
        return shell::Shell::new(live, args.format, args.quiet, max_rows).run().await;
    }
    if args.follow {
        // Ctrl-C ends a follow, with exit 0, from the start.
        interrupt::watch();
        let live = LiveEngine::open(places, options).await?;
        if let Some(prices) = &prices {
            crate::sql::prices::register(&live.engine.ctx, prices).map_err(Error::Sql)?;
        }
        let sql = match &args.command {
            Some(Command::Query { name: Some(name), since, until, timezone, .. }) => {
                let report = crate::sql::reports::ReportOptions {
                    since: *since,
                    until: *until,
                    time_zone: timezone.clone(),
                };
                let runner = follow::runner(&live, args.format, args.quiet, None, None);
                query::sql_of(&runner, name, &report)?
            }
            _ => scripts(&args)?.join(";\n"),
        };
        tell(&live.engine.corpus, &mut stderr, true);
        let stdout = std::io::stdout();
        let terminal = match stdout.is_terminal() {
            true => {
                terminal_size::terminal_size_of(&stdout).map(|(w, h)| (usize::from(w.0), usize::from(h.0)))
            }
            false => None,
        };
        let options = follow::FollowOptions {
            format: args.format,
            quiet: args.quiet,
            interval: args.interval,
            poll: args.poll,
            terminal,
        };
        return follow::run(live, &sql, options, &mut stdout.lock(), &mut stderr).await;
    }
    let mut engine = crate::sql::session::open(&paths, options).await?;
    if let Some(prices) = &prices {
        crate::sql::prices::register(&engine.ctx, prices).map_err(Error::Sql)?;
    }
    if let Some(url) = &args.cluster {
        engine.ctx = crate::cluster::connect(engine.ctx.clone(), url).await?;
    }
    let (corpus, ctx) = (&engine.corpus, &engine.ctx);
    // An export of nothing is a mistake: it stays an error.
    let exporting = matches!(args.command, Some(Command::Export { .. }));
    tell(corpus, &mut stderr, !exporting);
    if exporting && corpus.transcripts() == 0 {
        return Err(Error::Usage(no_transcripts()));
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
    if let Some(Command::Report { out, since, until, timezone, .. }) = &args.command {
        let options =
            crate::sql::reports::ReportOptions { since: *since, until: *until, time_zone: timezone.clone() };
        return report::run(&engine, &paths, out, &options, args.quiet).await;
    }
    // A script stops at Ctrl-C, within a second whatever its statement does.
    if let Some(interrupts) = interrupt::watch() {
        interrupts.exit_on_stall();
    }
    tokio::select! {
        result = run_scripts(&args, ctx, corpus) => result,
        () = interrupt::next() => Err(Error::Cancelled),
    }
}

/// The SQL of the command line: each `-e`, then each `-f` file's; else stdin's.
fn scripts(args: &Args) -> Result<Vec<String>, Error> {
    let mut scripts: Vec<String> = args.execute.clone();
    for file in &args.files {
        let sql = std::fs::read_to_string(file)
            .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", crate::text::escape::path(file))))?;
        scripts.push(sql);
    }
    if scripts.is_empty() {
        let mut sql = String::new();
        std::io::stdin()
            .read_to_string(&mut sql)
            .map_err(|e| Error::Usage(format!("cannot read stdin: {e}")))?;
        scripts.push(sql);
    }
    Ok(scripts)
}

/// Runs the SQL of the command line (a canned query, `-e`, `-f` or stdin), results to stdout.
async fn run_scripts(
    args: &Args,
    ctx: &datafusion::prelude::SessionContext,
    corpus: &crate::table::corpus::Corpus,
) -> Result<(), Error> {
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
    if let Some(Command::Query { name: Some(name), since, until, timezone, .. }) = &args.command {
        let report =
            crate::sql::reports::ReportOptions { since: *since, until: *until, time_zone: timezone.clone() };
        query::run(&runner, name, &report, &mut out, &mut stderr).await?;
        return out.flush().map_err(Error::Output);
    }

    for sql in &scripts(args)? {
        runner.run(sql, &mut out, &mut stderr).await?;
    }
    out.flush().map_err(Error::Output)
}
