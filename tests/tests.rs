//! The integration tests: the real `txq` binary and library on transcripts the project's own
//! generator writes, checked against the answers the generator tallied while writing.

mod cache;
mod cli;
mod docs;
mod export;
mod follow;
mod harness_claude;
mod harness_codex;
mod harness_gemini;
mod harness_home;
mod harness_rows;
mod house;
mod live_export;
mod live_prices;
mod live_rupu;
mod live_shell;
mod live_stream;
mod live_zstd;
mod normalized;
mod pruning;
mod queries;
mod reeval_tables;
mod remote_store;
mod report;
mod reports;
mod robustness;
mod rupu_tables;
mod s3;
mod sample;
mod shell;
mod shipping;
mod trust_cache;
mod trust_data;
mod trust_export;
mod trust_limits;
mod util;
