//! `txq report --out FILE`: the report's queries run on the session, its page written to FILE
//! (a temporary file beside it renamed into place, so that a reader never sees half a page) or
//! to stdout for `-`.

use crate::error::Error;
use crate::sql::reports::ReportOptions;
use crate::sql::session::Engine;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs the report's queries on `engine` (stopped by Ctrl-C) and writes its page to `out`.
pub(crate) async fn run(
    engine: &Engine,
    paths: &[PathBuf],
    out: &Path,
    options: &ReportOptions,
    quiet: bool,
) -> Result<(), Error> {
    if let Some(interrupts) = super::interrupt::watch() {
        interrupts.exit_on_stall();
    }
    let paths: Vec<String> = paths.iter().map(|p| crate::text::escape::path(p)).collect();
    let report = tokio::select! {
        report = crate::report::collect(&engine.ctx, paths, options) => report?,
        () = super::interrupt::next() => return Err(Error::Cancelled),
    };
    let page = crate::report::page::render(&report);
    if out.as_os_str() == super::args::STDOUT {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(page.as_bytes()).map_err(Error::Output)?;
        return stdout.flush().map_err(Error::Output);
    }
    write_atomically(out, page.as_bytes())?;
    if !quiet {
        eprintln!(
            "txq: wrote {} ({})",
            crate::text::escape::path(out),
            crate::text::size::describe(page.len() as u64)
        );
    }
    Ok(())
}

/// `txq report`: refused with `--follow` or `--cluster`; else the report of the transcripts of
/// `args` and `paths` written to `out`.
pub(crate) async fn command(
    args: &super::args::Args,
    out: &Path,
    options: &ReportOptions,
    paths: &[PathBuf],
) -> Result<(), Error> {
    let prices = super::reading::prices(args)?;
    super::reading::refuse_follow_unless(false, args)?;
    super::reading::refuse_cluster_for("txq report", args)?;
    let reading = super::reading::Reading::new(args, paths, prices)?;
    let engine = reading.engine().await?;
    reading.tell(&engine.corpus, true);
    run(&engine, &reading.paths, out, options, args.quiet).await
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it when whole; the
/// temporary file is removed when the write fails.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let failed = |source: std::io::Error| {
        let _ = std::fs::remove_file(&temporary);
        Error::Write { path: path.to_path_buf(), source }
    };
    let mut file = std::fs::File::create(&temporary)
        .map_err(|source| Error::Write { path: path.to_path_buf(), source })?;
    file.write_all(bytes).map_err(failed)?;
    file.sync_all().map_err(failed)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.html");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
