//! What the files hold, learned in one read of each. In: a format's source files. Out: each file's
//! summary (its types, fields and their shapes: [`stats`]), made by the pass over a file
//! ([`pass`]), numbered as type signatures shared across the corpus ([`signature`]), and kept on
//! disk so that an unchanged file is not read again ([`cache`]).

pub mod cache;
pub mod pass;
pub mod signature;
pub mod stats;
pub(crate) mod varint;
