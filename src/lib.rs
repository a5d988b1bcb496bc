//! txq: SQL over AI-agent transcripts. Every event type of every format is a table, streamed from
//! the JSON Lines files by one generic scan.
//!
//! The modules are the stages of the pipeline, each importing only from those above it here:
//! [`text`], [`error`] and [`format`] are read by all; [`source`] finds files and splits their
//! lines, [`json`] reads a line, [`infer`] learns what the files hold, [`table`] makes the corpus
//! and its tables, [`scan`] streams them to DataFusion, [`sql`] is the session, [`cluster`] runs it
//! on a Ballista cluster, and [`export`], [`report`] (the HTML report of canned queries) and
//! [`cli`] are what people use, [`archive`] (`txq archive`) among them. [`generate`] is the corpus generator behind `txq generate` and the tests and benchmarks, using
//! only [`text`] and [`error`].
//! docs/architecture.md draws it.

pub mod archive;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod export;
pub mod format;
pub mod generate;
pub mod infer;
pub mod json;
pub mod report;
pub mod scan;
pub mod source;
pub mod sql;
pub mod table;
pub mod text;
