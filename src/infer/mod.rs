//! What the files hold, learned in one read of each: the pass over a file ([`pass`]), the numbered
//! type signatures a corpus is summed up in ([`signature`]), and the cache that keeps both on disk
//! so that an unchanged file is not read again ([`cache`]).

pub mod cache;
pub mod pass;
pub mod signature;
pub mod stats;
pub(crate) mod varint;
