//! `txq query`: the canned queries listed, or one run like any SQL (a spend report over the
//! days and in the time zone asked for), naming on stderr the models it priced without a price.

use super::exec::Runner;
use super::print::{OutputFormat, write_batch};
use crate::error::Error;
use crate::sql::queries::{ALL, find, list, unknown};
use crate::sql::reports::{ReportOptions, is_report};
use std::io::Write;

/// `txq query --list`: the list, printed as any result is.
pub(crate) fn print_list(format: OutputFormat, out: &mut dyn Write) -> Result<(), Error> {
    write_batch(format, &list(), out)
}

/// `txq query NAME`: runs the query like any SQL (which names on stderr the models `call_cost`
/// found no price for), a spend report over the days and in the time zone `report` asks for.
pub(crate) async fn run(
    runner: &Runner<'_>,
    name: &str,
    report: &ReportOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    runner.run(&sql_of(runner, name, report)?, out, err).await
}

/// The SQL of the canned query `name`: a spend report's with its period set, and the session's
/// time zone set to the one asked for.
pub(crate) fn sql_of(runner: &Runner<'_>, name: &str, report: &ReportOptions) -> Result<String, Error> {
    let query = find(name).ok_or_else(|| Error::Usage(unknown(name)))?;
    match is_report(query.sql) {
        true => report_sql(runner, query.sql, report),
        false => match report.flags_given().as_slice() {
            [] => Ok(query.sql.to_string()),
            flags => Err(Error::Usage(not_a_report(name, flags))),
        },
    }
}

/// A report's SQL with its period set, the session's time zone set to the one asked for (UTC
/// when none is, so that its days do not depend on the machine's zone).
fn report_sql(runner: &Runner<'_>, sql: &str, report: &ReportOptions) -> Result<String, Error> {
    report.set_up(runner.ctx)?;
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
