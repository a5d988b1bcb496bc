//! Where the SQL of the command line comes from, every way it arrives but the shell: `-e` and
//! `-f`, stdin, or a canned query of `txq query` (a spend report's with its period and time zone
//! set). Files and stdin are read on a thread of their own, never on the async workers.

use super::args::Args;
use crate::error::Error;
use crate::sql::queries::{all, find, unknown};
use crate::sql::reports::{ReportOptions, is_report};
use datafusion::prelude::SessionContext;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the SQL of the command line comes from: every way it arrives but the shell.
pub(crate) enum Script<'a> {
    /// Each `-e`, then each `-f` file's.
    Given { statements: &'a [String], files: &'a [PathBuf] },
    /// The statements piped to stdin, read to its end.
    Stdin,
    /// `txq query NAME`: the canned query, a spend report over the days and in the time zone
    /// `report` asks for.
    Canned { name: &'a str, report: ReportOptions },
}

impl<'a> Script<'a> {
    /// The SQL of `-e` and `-f`, else stdin's.
    pub(crate) fn of(args: &'a Args) -> Script<'a> {
        match args.execute.is_empty() && args.files.is_empty() {
            true => Script::Stdin,
            false => Script::Given { statements: &args.execute, files: &args.files },
        }
    }

    /// Its SQL, a text for each `-e`, file, stdin or canned query. Files and stdin are read on
    /// a thread of their own, not on the async workers: a pipe may be long in coming, and
    /// Ctrl-C is answered meanwhile.
    pub(crate) async fn read(&self, ctx: &SessionContext) -> Result<Vec<String>, Error> {
        match self {
            Script::Given { statements, files } => {
                let files: Vec<PathBuf> = files.to_vec();
                let read: Result<Vec<String>, Error> =
                    read_aside(move || files.iter().map(|file| read_file(file)).collect()).await?;
                Ok(statements.iter().cloned().chain(read?).collect())
            }
            Script::Stdin => {
                read_aside(|| {
                    let mut sql = String::new();
                    std::io::stdin()
                        .read_to_string(&mut sql)
                        .map_err(|e| Error::Usage(format!("cannot read stdin: {e}")))?;
                    Ok(vec![sql])
                })
                .await?
            }
            Script::Canned { name, report } => Ok(vec![sql_of(ctx, name, report)?]),
        }
    }
}

/// `read` run on a thread where blocking is allowed.
async fn read_aside<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(read).await.map_err(|e| Error::Usage(format!("cannot read the SQL: {e}")))
}

fn read_file(file: &Path) -> Result<String, Error> {
    std::fs::read_to_string(file)
        .map_err(|e| Error::Usage(format!("{}: cannot read: {e}", crate::text::escape::path(file))))
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
    let reports: Vec<&str> = all().iter().filter(|q| is_report(q.sql)).map(|q| q.name).collect();
    format!(
        "{}: {name:?} is not a spend report; {} take --since, --until and --timezone",
        flags.join(", "),
        reports.join(", ")
    )
}
