//! What an export has done so far (rows, files and bytes written, the table at hand), and the
//! progress line that shows it on a terminal (a [`StatusLine`]).

use crate::text::status_line::{Redrawing, StatusLine};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Counters shared by every writer of an export.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    rows: AtomicU64,
    bytes: AtomicU64,
    files: AtomicU64,
    /// The table being written, and its place among the tables of every pass.
    table: Mutex<(String, usize, usize)>,
}

impl Progress {
    pub(crate) fn add_rows(&self, n: u64) {
        self.rows.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_file(&self) {
        self.files.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn files(&self) -> u64 {
        self.files.load(Ordering::Relaxed)
    }

    pub(crate) fn start_table(&self, name: &str, index: usize, total: usize) {
        *self.table.lock().unwrap_or_else(|e| e.into_inner()) = (name.to_string(), index, total);
    }

    /// One line: the table at hand (its name escaped: it comes from the data), then rows, files
    /// and bytes written, and the time so far.
    pub(crate) fn line(&self, elapsed: Duration) -> String {
        let (table, index, total) = self.table.lock().unwrap_or_else(|e| e.into_inner()).clone();
        format!(
            "exporting {} ({index}/{total}): {} rows, {} files, {} written, {:.1}s",
            crate::text::escape::text(&table),
            thousands(self.rows()),
            thousands(self.files()),
            crate::text::size::describe(self.bytes()),
            elapsed.as_secs_f64()
        )
    }
}

/// Redraws the progress line on stderr four times a second until finished, then clears it.
pub(crate) struct ProgressLine(Redrawing);

impl ProgressLine {
    pub(crate) fn start(progress: Arc<Progress>, started: Instant) -> Self {
        let status = Arc::new(StatusLine::new(true, Duration::ZERO));
        Self(status.redraw_every(Duration::from_millis(250), move || progress.line(started.elapsed())))
    }

    /// Stops redrawing and clears the line.
    pub(crate) fn finish(self) {
        drop(self.0);
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    crate::text::number::grouped(n, ',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_easily() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn the_line_names_the_table_and_the_counts() {
        let progress = Progress::default();
        progress.start_table("rupu.usage", 3, 41);
        progress.add_rows(1200);
        progress.add_file();
        progress.add_bytes(2048);
        assert_eq!(
            progress.line(Duration::from_millis(1500)),
            "exporting rupu.usage (3/41): 1,200 rows, 1 files, 2 KiB written, 1.5s"
        );
        progress.start_table("rupu.a\u{1b}]0;t\u{7}\nb", 1, 1);
        assert!(progress.line(Duration::ZERO).starts_with("exporting rupu.a\\x1b]0;t\\x07\\nb (1/1)"));
    }
}
