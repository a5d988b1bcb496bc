//! The progress line of a long query in the shell: after about a second without output, one
//! line on stderr says how long it has run and how much its scans have read (their plan
//! metrics), rewritten in place by a thread of its own (the query's workers may all be busy),
//! and cleared before anything else is written (a [`StatusLine`]).

use crate::text::status_line::{Clearing, Redrawing, StatusLine};
use datafusion::physical_plan::ExecutionPlan;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a query runs quietly before its progress shows.
const QUIET: Duration = Duration::from_secs(1);

/// How often the line is rewritten.
const TICK: Duration = Duration::from_millis(200);

/// The progress line of one run of SQL.
pub(crate) struct Progress {
    started: Instant,
    status: Arc<StatusLine>,
    /// The plan of the statement running now, whose scans' metrics say how far it is.
    plan: Arc<Mutex<Option<Arc<dyn ExecutionPlan>>>>,
}

impl Progress {
    /// A progress line shown only when `enabled` (stderr is a terminal).
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            started: Instant::now(),
            status: Arc::new(StatusLine::new(enabled, QUIET)),
            plan: Arc::new(Mutex::new(None)),
        }
    }

    /// The statement running now (`None` between statements).
    pub(crate) fn running(&self, plan: Option<Arc<dyn ExecutionPlan>>) {
        *self.plan.lock().unwrap_or_else(|e| e.into_inner()) = plan;
    }

    /// Shows (or rewrites) the line, once nothing has been written for a while.
    #[cfg(test)]
    fn show(&self) {
        self.status.draw(&line(self.started.elapsed(), read_so_far(&self.plan)));
    }

    /// Clears the line if it is shown.
    pub(crate) fn clear(&self) {
        self.status.clear();
    }

    /// `out`, clearing this line before each write.
    pub(crate) fn clearing<'a>(&'a self, out: &'a mut dyn Write) -> Clearing<'a> {
        self.status.clearing(out)
    }

    /// Rewrites the line on a thread of its own until the returned ticker is dropped.
    pub(crate) fn ticker(&self) -> Redrawing {
        let (started, plan) = (self.started, self.plan.clone());
        self.status.redraw_every(TICK, move || line(started.elapsed(), read_so_far(&plan)))
    }
}

/// What the running statement's scans have read.
fn read_so_far(plan: &Mutex<Option<Arc<dyn ExecutionPlan>>>) -> crate::scan::ScanProgress {
    let plan = plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
    plan.as_ref().map(crate::scan::progress_of).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_line_away() {
        let progress = Progress::new(true);
        let mut sink = Vec::new();
        progress.clearing(&mut sink).write_all(b"row\n").unwrap();
        progress.show();
        assert!(!progress.status.is_shown(), "output was just written");
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
