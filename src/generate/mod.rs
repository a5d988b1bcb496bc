//! Deterministic corpora of agent transcripts, damaged files included, written together with
//! the answers a correct reader must give, for txq's tests and benchmarks.
//!
//! `write_rupu_corpus(dir, &RupuOptions::default())` writes `dir/.rupu/transcripts/…` and
//! returns an [`Expected`] tallied from the lines as they were written, never by reading back.

pub mod expected;
pub mod harness;
pub mod reeval;
pub mod rng;
pub mod rupu;

pub use expected::{Expected, ExpectedRun};
pub use harness::{
    Harness, HarnessExpected, HarnessOptions, HarnessWritten, write_harness_files, write_harness_home,
};
pub use reeval::{ExpectedAttempt, ReevalExpected, ReevalOptions, write_reeval_corpus};
pub use rupu::{RupuOptions, TRANSCRIPTS_DIR, write_rupu_corpus};

#[cfg(test)]
mod tests;
