//! `txq prices`: the price list the session would use, printed as any result is.

use super::print::{OutputFormat, write_batch};
use crate::error::Error;
use crate::sql::prices::PriceList;

/// `txq prices`: `list` (the built-in list when `None`), printed as any result is.
pub(crate) fn print(
    list: Option<&PriceList>,
    format: OutputFormat,
    out: &mut dyn std::io::Write,
) -> std::result::Result<(), Error> {
    let built_in;
    let list = match list {
        Some(list) => list,
        None => {
            built_in = PriceList::embedded().map_err(|e| Error::Usage(e.to_string()))?;
            &built_in
        }
    };
    write_batch(format, &list.batch().map_err(Error::Sql)?, out)
}

/// `txq prices`: the list `--prices` (else `$TXQ_PRICES`) makes, printed on stdout.
pub(crate) fn command(args: &super::args::Args) -> std::result::Result<(), Error> {
    let list = super::reading::prices(args)?;
    print(list.as_ref(), args.format, &mut std::io::BufWriter::new(std::io::stdout().lock()))
}
