//! The `txq archive` command: refused with `--follow` or `--cluster`, the transcripts of its
//! places read as for any command, the archive run, and on stderr its warnings and one line of
//! summary.

use crate::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `txq archive --out OUT [PATH...]`.
pub(crate) async fn command(args: &super::args::Args, out: &Path, paths: &[PathBuf]) -> Result<(), Error> {
    super::reading::refuse_follow_unless(false, args)?;
    super::reading::refuse_cluster_for("txq archive", args)?;
    let reading = super::reading::Reading::new(args, paths, None)?;
    let engine = reading.engine().await?;
    reading.tell(&engine.corpus, false);
    if engine.corpus.transcripts() == 0 {
        return Err(Error::Usage(reading.no_transcripts()));
    }
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
