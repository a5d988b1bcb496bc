//! Files in, lines out: which files are transcripts of which format ([`discover`]), local or in
//! an object store ([`remote`]), kept compactly ([`files`]), their bytes block by block from any
//! store ([`read`]), numbered whole lines ([`lines`]), and the hash of a file's whole lines that
//! proves it only grew ([`prefix`]); which machine a file is of, and another machine's copies
//! ([`machines`]); and the copies of archived files restored into the cache ([`restored`]).

pub mod discover;
pub mod files;
pub mod lines;
pub mod machines;
pub(crate) mod prefix;
pub mod read;
pub mod remote;
pub mod restored;
