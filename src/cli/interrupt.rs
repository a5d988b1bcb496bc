//! Ctrl-C, watched on a thread of its own: DataFusion's tasks may keep every worker of the query
//! runtime busy (and with them that runtime's signal driver and timers), so the signal is taken
//! in a small runtime of its own and handed to whoever waits for it through a waker, which needs
//! no worker.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::Notify;

/// What a run of SQL that Ctrl-C stopped says on stderr.
pub const MESSAGE: &str = "txq: query cancelled";

/// How long the statement of a script (`-e`, `-f`) has to stop by itself after Ctrl-C before
/// the process ends anyway.
const GRACE: Duration = Duration::from_secs(1);

const OFF: u8 = 0;
const ARMED: u8 = 1;
const EXITING: u8 = 2;

/// The Ctrl-Cs met since the program started.
#[derive(Debug, Default)]
pub struct Interrupts {
    count: AtomicU64,
    notify: Notify,
    /// For a script, whether a statement that does not stop within [`GRACE`] ends the process:
    /// [`OFF`], [`ARMED`], or [`EXITING`] once it does.
    stall_exit: AtomicU8,
}

static WATCHED: OnceLock<Option<Arc<Interrupts>>> = OnceLock::new();

/// The Ctrl-Cs, watched from the first call on (`None` if the signal cannot be watched).
pub(crate) fn watch() -> Option<&'static Interrupts> {
    WATCHED.get_or_init(start).as_deref()
}

/// Starts the thread that takes the signal; returns once the signal is taken (a Ctrl-C before
/// that ends the process as the system does).
fn start() -> Option<Arc<Interrupts>> {
    let interrupts = Arc::new(Interrupts::default());
    let shared = interrupts.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<bool>();
    let spawned = std::thread::Builder::new().name("txq-ctrl-c".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(_) => {
                let _ = ready_tx.send(false);
                return;
            }
        };
        runtime.block_on(async move {
            #[cfg(unix)]
            let mut signal = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = ready_tx.send(false);
                    return;
                }
            };
            let _ = ready_tx.send(true);
            loop {
                #[cfg(unix)]
                if signal.recv().await.is_none() {
                    return;
                }
                #[cfg(not(unix))]
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                shared.count.fetch_add(1, Ordering::SeqCst);
                shared.notify.notify_waiters();
                if shared.stall_exit.load(Ordering::SeqCst) == ARMED {
                    let shared = shared.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(GRACE);
                        // The statement has not ended by itself: end the process.
                        let armed = shared.stall_exit.compare_exchange(
                            ARMED,
                            EXITING,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        );
                        if armed.is_ok() {
                            // (Not stdout: the stalled statement may hold it.)
                            use std::io::Write;
                            let _ = writeln!(std::io::stderr(), "{MESSAGE}");
                            std::process::exit(crate::error::CANCELLED_EXIT_CODE.into());
                        }
                    });
                }
            }
        });
    });
    match spawned {
        Ok(_) if ready_rx.recv() == Ok(true) => Some(interrupts),
        _ => None,
    }
}

impl Interrupts {
    /// The Ctrl-Cs met so far.
    pub(crate) fn seen(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Resolves at the first Ctrl-C after the `seen`th.
    pub(crate) async fn after(&self, seen: u64) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.seen() > seen {
                return;
            }
            notified.await;
        }
    }

    /// For a script: from now on, a Ctrl-C whose statement has not stopped within a second ends
    /// the process (with [`crate::error::CANCELLED_EXIT_CODE`] and [`MESSAGE`]).
    pub(crate) fn exit_on_stall(&self) {
        self.stall_exit.store(ARMED, Ordering::SeqCst);
    }

    /// Ends [`Self::exit_on_stall`]: true if the process is still the caller's to end, false if
    /// a stalled statement is ending it already.
    pub fn end_stall_exit(&self) -> bool {
        self.stall_exit.swap(OFF, Ordering::SeqCst) != EXITING
    }
}

/// The Ctrl-Cs, if [`watch`] started watching them.
pub fn watched() -> Option<&'static Interrupts> {
    WATCHED.get().and_then(|w| w.as_deref())
}

/// Resolves at the next Ctrl-C after this call; never when Ctrl-C is not watched.
pub(crate) fn next() -> impl std::future::Future<Output = ()> + 'static {
    let watched = watch().map(|interrupts| (interrupts, interrupts.seen()));
    async move {
        match watched {
            Some((interrupts, seen)) => interrupts.after(seen).await,
            None => std::future::pending().await,
        }
    }
}
