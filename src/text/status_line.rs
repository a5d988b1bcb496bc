//! The status line of a long task on a terminal (the shell's query, an export): one line on
//! stderr saying how it is going, redrawn in place by a thread of its own (the task's workers may
//! all be busy), kept away while other output is written, and cleared when the task ends. Written
//! here rather than with `indicatif`: that adds three crates (indicatif, console, unit-prefix) for
//! what is a hundred lines here, and draws a message set beforehand, where this line is asked for
//! each time it is redrawn (the shell's reads its query's plan metrics then).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A line on stderr, rewritten in place.
pub(crate) struct StatusLine {
    /// False when stderr is not a terminal: nothing is drawn.
    enabled: bool,
    /// How long nothing else must be written before the line is drawn.
    quiet: Duration,
    state: Mutex<State>,
}

struct State {
    last_output: Instant,
    shown: bool,
}

impl StatusLine {
    /// A line drawn only when `enabled`, and only once nothing else has been written for `quiet`.
    pub(crate) fn new(enabled: bool, quiet: Duration) -> Self {
        let state = State { last_output: Instant::now(), shown: false };
        Self { enabled, quiet, state: Mutex::new(state) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Draws `line` in place of the one shown, if nothing else was written for a while.
    pub(crate) fn draw(&self, line: &str) {
        if !self.enabled {
            return;
        }
        let mut state = self.state();
        if state.last_output.elapsed() < self.quiet {
            return;
        }
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K{line}");
        let _ = err.flush();
        state.shown = true;
    }

    /// Clears the line if it is shown.
    pub(crate) fn clear(&self) {
        clear(&mut self.state());
    }

    /// Whether the line is on the screen now.
    #[cfg(test)]
    pub(crate) fn is_shown(&self) -> bool {
        self.state().shown
    }

    /// `out`, clearing this line before each write.
    pub(crate) fn clearing<'a>(&'a self, out: &'a mut dyn Write) -> Clearing<'a> {
        Clearing { out, line: self }
    }

    /// Draws the line `line` gives every `every`, on a thread of its own, until the returned
    /// redrawing is dropped; then clears it.
    pub(crate) fn redraw_every(
        self: &Arc<Self>,
        every: Duration,
        line: impl Fn() -> String + Send + 'static,
    ) -> Redrawing {
        let stop = Arc::new(AtomicBool::new(false));
        let (status, stopped) = (self.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("txq-status-line".into())
            .spawn(move || {
                while !stopped.load(Ordering::SeqCst) {
                    std::thread::park_timeout(every);
                    if !stopped.load(Ordering::SeqCst) {
                        status.draw(&line());
                    }
                }
            })
            .ok();
        Redrawing { status: self.clone(), stop, thread }
    }
}

fn clear(state: &mut State) {
    if std::mem::replace(&mut state.shown, false) {
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// Stops the redrawing thread and clears the line when dropped.
pub(crate) struct Redrawing {
    status: Arc<StatusLine>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Redrawing {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        self.status.clear();
    }
}

/// A writer that clears the status line before it writes.
pub(crate) struct Clearing<'a> {
    out: &'a mut dyn Write,
    line: &'a StatusLine,
}

impl Write for Clearing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Held while writing, so that the line is not drawn in the middle of the output.
        let mut state = self.line.state();
        clear(&mut state);
        state.last_output = Instant::now();
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_line_away() {
        let status = StatusLine::new(true, Duration::from_secs(3600));
        let mut sink = Vec::new();
        status.clearing(&mut sink).write_all(b"row\n").unwrap();
        status.draw("running");
        assert!(!status.is_shown(), "output was just written");
        assert_eq!(sink, b"row\n");
    }

    #[test]
    fn a_line_not_enabled_is_never_drawn() {
        let status = StatusLine::new(false, Duration::ZERO);
        status.draw("running");
        assert!(!status.is_shown());
    }
}
