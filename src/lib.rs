//! txq: SQL over AI-agent transcripts. Every event type of every format is a table, streamed from
//! the JSON Lines files by one generic scan.

pub mod cache;
pub mod catalog;
pub mod cli;
pub mod corpus;
pub mod decode;
pub mod discover;
pub mod docs;
pub mod escape;
pub mod export;
pub mod files_table;
pub mod format;
pub mod generate;
pub mod infer;
pub mod json;
pub mod lines;
pub mod memory;
pub mod prices;
pub mod queries;
pub mod read;
pub mod scan;
pub mod session;
pub mod shapes;
pub mod varint;
