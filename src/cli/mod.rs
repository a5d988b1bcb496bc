//! The command-line program. In: the arguments. Out: results on stdout, messages on stderr, and an
//! exit code ([`crate::error::Error::exit_code`]). [`run`] is one arm per command, each a call
//! into the command's own file; what the commands that read transcripts do first is in
//! [`reading`]. Every way SQL arrives (`-e`, `-f`, stdin, `txq query`, the shell) runs through
//! one [`exec::Runner`].

pub(crate) mod archive;
pub mod args;
pub(crate) mod budget;
pub(crate) mod commands;
pub mod config;
pub(crate) mod exec;
pub(crate) mod export;
pub(crate) mod follow;
pub(crate) mod helper;
pub mod interrupt;
pub(crate) mod manual;
pub(crate) mod prices;
pub(crate) mod print;
pub(crate) mod progress;
pub(crate) mod query;
pub(crate) mod reading;
pub(crate) mod report;
pub(crate) mod screen;
pub(crate) mod script;
pub(crate) mod shell;
pub(crate) mod spend;
pub(crate) mod statusline;

use crate::error::Error;
use crate::sql::reports::ReportOptions;
use args::{Args, Command};
use script::Script;
use spend::ReportKind;

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

/// Runs txq with parsed arguments: one arm per command, each a call into the command's own file.
pub async fn run(args: Args) -> Result<(), Error> {
    let stdout = std::io::stdout();
    match &args.command {
        None => sql(&args).await,
        Some(Command::Shell { paths }) => shell::command(&args, paths).await,
        Some(Command::Daily(f)) => spend::command(&args, ReportKind::Daily, &f.spend, period_wanted(f)).await,
        Some(Command::Weekly(f)) => {
            spend::command(&args, ReportKind::Weekly, &f.spend, period_wanted(f)).await
        }
        Some(Command::Monthly(f)) => {
            spend::command(&args, ReportKind::Monthly, &f.spend, period_wanted(f)).await
        }
        Some(Command::Session(f)) => {
            let wanted = spend::Wanted { id: f.id.clone(), project: f.project.clone(), ..Default::default() };
            spend::command(&args, ReportKind::Session, &f.spend, wanted).await
        }
        Some(Command::Blocks(f)) => {
            let wanted = spend::Wanted {
                active: f.active,
                recent: f.recent,
                token_limit: f.token_limit,
                budget: f.budget,
                ..Default::default()
            };
            spend::command(&args, ReportKind::Blocks, &f.spend, wanted).await
        }
        Some(Command::Statusline(f)) => statusline::command(&args, f).await,
        Some(Command::Query { name: None, .. }) => query::list(args.format),
        Some(Command::Query { name: Some(name), since, until, timezone, budget, paths, .. }) => {
            let report = ReportOptions { since: *since, until: *until, time_zone: timezone.clone() };
            let budget = match budget {
                Some(budget) => {
                    let (kind, budget) = spend::budget_of_query(name, *budget)?;
                    Some(Box::new(spend::Crossings::new(kind, budget)) as Box<dyn follow::RowsCheck>)
                }
                None => None,
            };
            query::command(&args, name, report, paths, budget).await
        }
        Some(Command::Export { out, tables, partition_by, overwrite, append, paths }) => {
            let flags = export::Flags {
                out,
                tables,
                partition_by: *partition_by,
                overwrite: *overwrite,
                append: *append,
                quiet: args.quiet,
            };
            export::command(&args, flags, paths).await
        }
        Some(Command::Archive { out, paths }) => archive::command(&args, out, paths).await,
        Some(Command::Report { out, since, until, timezone, paths }) => {
            let report = ReportOptions { since: *since, until: *until, time_zone: timezone.clone() };
            report::command(&args, out, &report, paths).await
        }
        Some(Command::Prices) => prices::command(&args),
        Some(Command::Generate(flags)) => crate::generate::command::run(flags),
        Some(Command::Completions { shell }) => manual::completions(*shell, &mut stdout.lock()),
        Some(Command::Man { out: Some(dir), .. }) => manual::pages_into(dir, &mut stdout.lock()),
        Some(Command::Man { command, out: None }) => manual::page(command.as_deref(), &mut stdout.lock()),
        Some(Command::Scheduler { .. } | Command::Executor { .. }) => Err(Error::Usage(
            "txq scheduler and txq executor run in a runtime of their own: cli::serve runs them".into(),
        )),
    }
}

/// What `txq daily|weekly|monthly` ask besides the flags every report takes.
fn period_wanted(flags: &args::PeriodFlags) -> spend::Wanted {
    spend::Wanted {
        last: flags.last,
        by_agent: flags.by_agent,
        instances: flags.instances,
        project: flags.project.clone(),
        budget: flags.budget,
        ..Default::default()
    }
}

/// `txq` with no command: the SQL of `-e`, `-f` or stdin run (followed with `--follow`), or with
/// none given on a terminal, the shell.
async fn sql(args: &Args) -> Result<(), Error> {
    let prices = reading::prices(args)?;
    let script = Script::of(args);
    reading::refuse_follow_unless(!matches!(script, Script::Stdin), args)?;
    if args.follow {
        return follow::command(args, script, &[], prices, None).await;
    }
    if matches!(script, Script::Stdin) && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return shell::open(args, &[], prices).await;
    }
    exec::run_script(args, script, &[], prices).await
}
