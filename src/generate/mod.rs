//! Deterministic corpora of agent transcripts, damaged files included, for `txq generate`, the
//! tests and the benchmarks. Each writer tells a tally of every file it writes with its lines as
//! it meant them: [`Written`] counts them; with the `testing` feature, `write_rupu_corpus(dir,
//! &RupuOptions::default())` returns an `Expected`, the answers a correct reader must give,
//! tallied from those lines, never by reading a file back. [`harness`] writes Claude Code, Codex
//! CLI and Gemini CLI homes the same way; [`command`] is `txq generate` itself: its flags and its
//! run.

pub mod command;
#[cfg(feature = "testing")]
pub mod expected;
pub mod harness;
pub(crate) mod lines;
pub(crate) mod reeval;
pub mod rng;
pub(crate) mod rupu;

#[cfg(feature = "testing")]
pub use expected::{Expected, ExpectedRun};
pub use harness::{
    ExpectedCommit, GIT_AUTHOR, GIT_PROJECT_DIR, Harness, HarnessOptions, HarnessWritten, write_git_files,
    write_harness_files,
};
#[cfg(feature = "testing")]
pub use harness::{HarnessExpected, write_git_home, write_harness_home};
#[cfg(feature = "testing")]
pub use reeval::{ExpectedAttempt, ReevalExpected, write_reeval_corpus};
pub use reeval::{ReevalOptions, WrittenAttempts, write_reeval_files};
#[cfg(feature = "testing")]
pub use rupu::write_rupu_corpus;
pub use rupu::{RupuOptions, TRANSCRIPTS_DIR, Written, write_rupu_files};

#[cfg(all(test, feature = "testing"))]
mod tests;
