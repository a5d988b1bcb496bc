//! The `txq archive` command: refused with `--follow` or `--cluster`, the transcripts of its
//! places read as for any command, the archive run, and on stderr its warnings and one line of
//! summary.

use crate::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `txq archive --out OUT [PATH...]`.
pub(crate) async fn command(args: &super::args::Args, out: &Path, paths: &[PathBuf]) -> Result<(), Error> {
    let engine = super::reading::engine_to_write("txq archive", args, paths, None).await?;
    let summary = crate::archive::archive(&engine.corpus, out).await?;
    if !args.quiet {
        let mut err = std::io::stderr();
        for warning in &summary.warnings {
            let _ = writeln!(err, "txq: warning: {}", crate::text::escape::message(warning));
        }
        let _ = writeln!(err, "txq: {}", crate::text::escape::message(&summary.describe(out)));
    }
    Ok(())
}
