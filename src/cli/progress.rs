//! The progress line of a long query in the shell: after about a second without output, one
//! line on stderr says how long it has run and how much it has read, rewritten in place, and
//! cleared before anything else is written.

use std::cell::Cell;
use std::io::Write;
use std::time::{Duration, Instant};

/// How long a query runs quietly before its progress shows.
const QUIET: Duration = Duration::from_secs(1);

/// The progress line of one run of SQL.
pub struct Progress {
    /// False when stderr is not a terminal: nothing is shown.
    enabled: bool,
    started: Instant,
    last_output: Cell<Instant>,
    shown: Cell<bool>,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        let now = Instant::now();
        Self { enabled, started: now, last_output: Cell::new(now), shown: Cell::new(false) }
    }

    /// Shows (or rewrites) the line, once nothing has been written for a while.
    pub fn show(&self, files: u64, bytes: u64) {
        if !self.enabled || self.last_output.get().elapsed() < QUIET {
            return;
        }
        let elapsed = super::screen::duration(self.started.elapsed());
        let read = if files == 0 { String::new() } else { format!(", {files} files read ({})", size(bytes)) };
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[Krunning {elapsed}{read}; Ctrl-C cancels");
        let _ = err.flush();
        self.shown.set(true);
    }

    /// Clears the line if it is shown.
    pub fn clear(&self) {
        if self.shown.replace(false) {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }

    /// `out`, clearing this line before each write.
    pub fn clearing<'a>(&'a self, out: &'a mut dyn Write) -> Clearing<'a> {
        Clearing { out, progress: self }
    }
}

/// A writer that clears the progress line before it writes.
pub struct Clearing<'a> {
    out: &'a mut dyn Write,
    progress: &'a Progress,
}

impl Write for Clearing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.progress.clear();
        self.progress.last_output.set(Instant::now());
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// `830 B`, `12.4 KB`, `1.3 MB`, `2.0 GB`.
fn size(bytes: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", units[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(830), "830 B");
        assert_eq!(size(12_400), "12.4 KB");
        assert_eq!(size(1_300_000), "1.3 MB");
    }

    #[test]
    fn output_keeps_the_line_away() {
        let progress = Progress::new(true);
        let mut sink = Vec::new();
        progress.clearing(&mut sink).write_all(b"row\n").unwrap();
        progress.show(1, 10);
        assert!(!progress.shown.get(), "output was just written");
        assert_eq!(sink, b"row\n");
    }
}
