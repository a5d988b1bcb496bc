//! `txq query`: the canned queries listed, or one run like any SQL, naming on stderr the models
//! it priced without a price.

use super::CliError;
use super::exec::Runner;
use super::print::{OutputFormat, write_batch};
use crate::sql::queries::{find, list, unknown};
use std::io::Write;

/// `txq query --list`: the list, printed as any result is.
pub(crate) fn print_list(format: OutputFormat, out: &mut dyn Write) -> Result<(), CliError> {
    write_batch(format, &list(), out)
}

/// `txq query NAME`: runs the query like any SQL, then, when it priced tokens, names on stderr
/// the models the `prices` table has no price for.
pub(crate) async fn run(
    runner: &Runner<'_>,
    name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let query = find(name).ok_or_else(|| CliError::Usage(unknown(name)))?;
    runner.run(query.sql, out, err).await?;
    let plan = runner
        .ctx
        .state()
        .create_logical_plan(query.sql)
        .await
        .map_err(|e| CliError::Query(e.to_string()))?;
    if !runner.quiet && crate::sql::prices::reads_prices(&plan) {
        let models = crate::sql::prices::unpriced_models(runner.ctx)
            .await
            .map_err(|e| CliError::Query(e.to_string()))?;
        if !models.is_empty() {
            let models = crate::text::escape::text(&models.join(", ")).into_owned();
            let _ = writeln!(
                err,
                "txq: warning: no price for {models}: their cost is null; give prices with --prices FILE"
            );
        }
    }
    Ok(())
}
