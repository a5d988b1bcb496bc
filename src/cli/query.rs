//! `txq query`: the canned queries listed, or one run as any SQL is (a spend report over the
//! days and in the time zone asked for), or followed with `--follow`.

use super::print::{OutputFormat, write_batch};
use super::reading::refuse_follow_unless;
use super::script::Script;
use crate::error::Error;
use crate::sql::queries::list as listed;
use crate::sql::reports::ReportOptions;
use std::io::Write;
use std::path::PathBuf;

/// `txq query --list`: the list, printed as any result is; as a table, one query a block, its
/// description wrapped to the terminal's width (else `$COLUMNS`, else 100 columns).
pub(crate) fn list(format: OutputFormat) -> Result<(), Error> {
    let stdout = std::io::stdout();
    let width = super::screen::stdout_width(LIST_WIDTH);
    let mut out = std::io::BufWriter::new(stdout.lock());
    if format == OutputFormat::Table {
        super::screen::write_blocks(&listed(), width, &mut out).map_err(Error::of_output)?;
        return out.flush().map_err(Error::Output);
    }
    write_batch(format, &listed(), &mut out)
}

/// The width of `txq query --list` written where no terminal says one.
const LIST_WIDTH: usize = 100;

/// `txq query NAME`: runs the query as any SQL is run (which names on stderr the models
/// `call_cost` found no price for), a spend report over the days and in the time zone `report`
/// asks for; with `--follow`, followed.
/// With `budget` (a spend report's budget, as the spend reports make it), its rows are measured
/// against it after they are written: exit code 4 when a period passed it; followed, a line on
/// stderr as each one does.
pub(crate) async fn command(
    args: &super::args::Args,
    name: &str,
    report: ReportOptions,
    paths: &[PathBuf],
    budget: Option<Box<dyn super::follow::RowsCheck>>,
) -> Result<(), Error> {
    let prices = super::reading::prices(args)?;
    refuse_follow_unless(args.execute.is_empty() && args.files.is_empty(), args)?;
    let script = Script::Canned { name, report };
    match (args.follow, budget) {
        (true, budget) => super::follow::command(args, script, paths, prices, budget).await,
        (false, None) => super::exec::run_script(args, script, paths, prices).await,
        (false, Some(budget)) => {
            let rows = super::exec::run_script_keeping(args, script, paths, prices).await?;
            budget.result(&rows)
        }
    }
}
