//! The `txq export` command: its flags as export options, the export, and what it says on
//! stderr (the progress line on a terminal, warnings, and one line of summary).

use crate::error::Error;
use crate::export::{ExportOptions, Mode, PartitionBy, export};
use crate::sql::session::Engine;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// The flags of `txq export`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flags<'a> {
    pub(crate) out: &'a Path,
    pub(crate) tables: &'a [String],
    pub(crate) partition_by: Option<PartitionBy>,
    pub(crate) overwrite: bool,
    pub(crate) append: bool,
    pub(crate) quiet: bool,
}

/// Runs `txq export` on an open corpus.
pub(crate) async fn run(engine: &Engine, flags: Flags<'_>) -> Result<(), Error> {
    let mode = match (flags.overwrite, flags.append) {
        (true, _) => Mode::Overwrite,
        (_, true) => Mode::Append,
        _ => Mode::Create,
    };
    let options = ExportOptions {
        out: flags.out.to_path_buf(),
        tables: flags.tables.to_vec(),
        partition_by: flags.partition_by,
        mode,
        show_progress: !flags.quiet && std::io::stderr().is_terminal(),
    };
    let summary = export(engine, &options).await?;
    if !flags.quiet {
        let mut err = std::io::stderr();
        for warning in &summary.warnings {
            let _ = writeln!(err, "txq: warning: {}", crate::text::escape::message(warning));
        }
        let _ = writeln!(err, "txq: {}", crate::text::escape::message(&summary.describe(flags.out, mode)));
    }
    Ok(())
}

/// `txq export`: refused with `--follow` or `--cluster`, and when there is nothing to read (an
/// export of nothing is a mistake); else the transcripts of `args` and `paths` exported.
pub(crate) async fn command(
    args: &super::args::Args,
    flags: Flags<'_>,
    paths: &[std::path::PathBuf],
) -> Result<(), Error> {
    let prices = super::reading::prices(args)?;
    let engine = super::reading::engine_to_write("txq export", args, paths, prices).await?;
    run(&engine, flags).await
}
