//! `txq query`: the canned queries listed, or one run as any SQL is (a spend report over the
//! days and in the time zone asked for), or followed with `--follow`.

use super::exec::Script;
use super::print::{OutputFormat, write_batch};
use super::reading::refuse_follow_unless;
use crate::error::Error;
use crate::sql::queries::{ALL, find, list as listed, unknown};
use crate::sql::reports::{ReportOptions, is_report};
use datafusion::prelude::SessionContext;
use std::io::Write;
use std::path::PathBuf;

/// `txq query --list`: the list, printed as any result is; on a terminal, one query a block,
/// its description wrapped to the width.
pub(crate) fn list(format: OutputFormat) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let width = terminal_size::terminal_size_of(&stdout).map(|(w, _)| usize::from(w.0));
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let (OutputFormat::Table, Some(width)) = (format, width) {
        super::screen::write_blocks(&listed(), width, &mut out).map_err(Error::of_output)?;
        return out.flush().map_err(Error::Output);
    }
    write_batch(format, &listed(), &mut out)
}

/// `txq query NAME`: runs the query as any SQL is run (which names on stderr the models
/// `call_cost` found no price for), a spend report over the days and in the time zone `report`
/// asks for; with `--follow`, followed.
pub(crate) async fn command(
    args: &super::args::Args,
    name: &str,
    report: ReportOptions,
    paths: &[PathBuf],
) -> Result<(), Error> {
    let prices = super::reading::prices(args)?;
    refuse_follow_unless(args.execute.is_empty() && args.files.is_empty(), args)?;
    let script = Script::Canned { name, report };
    match args.follow {
        true => super::follow::command(args, script, paths, prices).await,
        false => super::exec::run_script(args, script, paths, prices).await,
    }
}

/// The SQL of the canned query `name`: a spend report's with its period set, and the session's
/// time zone set to the one asked for.
pub(crate) fn sql_of(ctx: &SessionContext, name: &str, report: &ReportOptions) -> Result<String, Error> {
    let query = find(name).ok_or_else(|| Error::Usage(unknown(name)))?;
    match is_report(query.sql) {
        true => report_sql(ctx, query.sql, report),
        false => match report.flags_given().as_slice() {
            [] => Ok(query.sql.to_string()),
            flags => Err(Error::Usage(not_a_report(name, flags))),
        },
    }
}

/// A report's SQL with its period set, the session's time zone set to the one asked for (UTC
/// when none is, so that its days do not depend on the machine's zone).
fn report_sql(ctx: &SessionContext, sql: &str, report: &ReportOptions) -> Result<String, Error> {
    report.set_up(ctx)?;
    report.period_of(sql)
}

/// What to say when --since, --until or --timezone is given to a query that is not a report.
fn not_a_report(name: &str, flags: &[&str]) -> String {
    let reports: Vec<&str> = ALL.iter().filter(|q| is_report(q.sql)).map(|q| q.name).collect();
    format!(
        "{}: {name:?} is not a spend report; {} take --since, --until and --timezone",
        flags.join(", "),
        reports.join(", ")
    )
}
