//! The progress line of a long query in the shell: after about a second without output, one
//! line on stderr says how long it has run and how much its scans have read (their plan
//! metrics), rewritten in place by a thread of its own (the query's workers may all be busy),
//! and cleared before anything else is written.

use datafusion::physical_plan::ExecutionPlan;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a query runs quietly before its progress shows.
const QUIET: Duration = Duration::from_secs(1);

/// How often the line is rewritten.
const TICK: Duration = Duration::from_millis(200);

/// The progress line of one run of SQL.
pub(crate) struct Progress {
    /// False when stderr is not a terminal: nothing is shown.
    enabled: bool,
    started: Instant,
    state: Mutex<State>,
    /// The plan of the statement running now, whose scans' metrics say how far it is.
    plan: Mutex<Option<Arc<dyn ExecutionPlan>>>,
}

struct State {
    last_output: Instant,
    shown: bool,
}

impl Progress {
    pub(crate) fn new(enabled: bool) -> Self {
        let now = Instant::now();
        Self {
            enabled,
            started: now,
            state: Mutex::new(State { last_output: now, shown: false }),
            plan: Mutex::new(None),
        }
    }

    /// The statement running now (`None` between statements).
    pub(crate) fn running(&self, plan: Option<Arc<dyn ExecutionPlan>>) {
        *self.plan.lock().unwrap_or_else(|e| e.into_inner()) = plan;
    }

    /// What the running statement's scans have read.
    fn read_so_far(&self) -> crate::scan::ScanProgress {
        let plan = self.plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
        plan.as_ref().map(crate::scan::progress_of).unwrap_or_default()
    }

    /// Shows (or rewrites) the line, once nothing has been written for a while.
    pub(crate) fn show(&self) {
        if !self.enabled {
            return;
        }
        let read = self.read_so_far();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.last_output.elapsed() < QUIET {
            return;
        }
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K{}", line(self.started.elapsed(), read));
        let _ = err.flush();
        state.shown = true;
    }

    /// Clears the line if it is shown.
    pub(crate) fn clear(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        clear(&mut state);
    }

    /// `out`, clearing this line before each write.
    pub(crate) fn clearing<'a>(&'a self, out: &'a mut dyn Write) -> Clearing<'a> {
        Clearing { out, progress: self }
    }

    /// Rewrites the line on a thread of its own until the returned ticker is dropped.
    pub(crate) fn ticker(self: &Arc<Self>) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let (progress, stopped) = (self.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("txq-progress".into())
            .spawn(move || {
                while !stopped.load(Ordering::SeqCst) {
                    std::thread::park_timeout(TICK);
                    if !stopped.load(Ordering::SeqCst) {
                        progress.show();
                    }
                }
            })
            .ok();
        Ticker { stop, thread }
    }
}

fn clear(state: &mut State) {
    if std::mem::replace(&mut state.shown, false) {
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// `running 3.20 s, 12 files read (1.3 MB), 4200 rows; Ctrl-C cancels`.
fn line(elapsed: Duration, read: crate::scan::ScanProgress) -> String {
    let elapsed = super::screen::duration(elapsed);
    let read = match read.files {
        0 => String::new(),
        files => format!(
            ", {files} file{} read ({}), {} row{}",
            if files == 1 { "" } else { "s" },
            crate::text::size::describe(read.bytes),
            read.rows,
            if read.rows == 1 { "" } else { "s" }
        ),
    };
    format!("running {elapsed}{read}; Ctrl-C cancels")
}

/// Stops the progress thread when dropped.
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// A writer that clears the progress line before it writes.
pub(crate) struct Clearing<'a> {
    out: &'a mut dyn Write,
    progress: &'a Progress,
}

impl Write for Clearing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Held while writing, so that the line is not drawn in the middle of the output.
        let mut state = self.progress.state.lock().unwrap_or_else(|e| e.into_inner());
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
        let progress = Progress::new(true);
        let mut sink = Vec::new();
        progress.clearing(&mut sink).write_all(b"row\n").unwrap();
        progress.show();
        assert!(!progress.state.lock().unwrap().shown, "output was just written");
        assert_eq!(sink, b"row\n");
    }

    #[test]
    fn the_line_says_what_the_scans_read() {
        let read = crate::scan::ScanProgress { files: 12, bytes: 1_300_000, rows: 4200 };
        assert_eq!(
            line(Duration::from_millis(3200), read),
            "running 3.20 s, 12 files read (1.2 MiB), 4200 rows; Ctrl-C cancels"
        );
        assert_eq!(line(Duration::from_millis(1500), Default::default()), "running 1.50 s; Ctrl-C cancels");
    }
}
