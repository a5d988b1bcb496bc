//! `txq query`: the canned queries listed, or one run like any SQL, naming on stderr the models
//! it priced without a price.

use super::exec::Runner;
use super::print::{OutputFormat, write_batch};
use crate::error::Error;
use crate::sql::queries::{find, list, unknown};
use std::io::Write;

/// `txq query --list`: the list, printed as any result is.
pub(crate) fn print_list(format: OutputFormat, out: &mut dyn Write) -> Result<(), Error> {
    write_batch(format, &list(), out)
}

/// `txq query NAME`: runs the query like any SQL (which names the models `call_cost` found no
/// price for), then, when it read the `prices` table, names on stderr the models of rupu's
/// usage that the table has no price for.
pub(crate) async fn run(
    runner: &Runner<'_>,
    name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Error> {
    let query = find(name).ok_or_else(|| Error::Usage(unknown(name)))?;
    runner.run(query.sql, out, err).await?;
    let plan = runner.ctx.state().create_logical_plan(query.sql).await.map_err(Error::Sql)?;
    if !runner.quiet && crate::sql::prices::reads_prices(&plan) {
        let models = crate::sql::prices::unpriced_models(runner.ctx).await.map_err(Error::Sql)?;
        if !models.is_empty() {
            let warning = crate::sql::prices::unpriced_warning(&models);
            let _ = writeln!(err, "txq: warning: {}", crate::text::escape::message(&warning));
        }
    }
    Ok(())
}
