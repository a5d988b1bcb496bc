//! `txq archive`: every transcript kept, line by line, in an append-only archive of Parquet files
//! (zstd), a dataset per format and line type partitioned by month
//! (`OUT/<format>/<type>/month=YYYY-MM/part-<run>-<n>.parquet`), and its manifest
//! (`OUT/_txq_archive.json`), which names the parts of every finished run and how far each file
//! was archived; the archive written ([`write`]) and restored for reading ([`restore`]).
//!
//! A part's rows are lines: the machine and path of the file, the line's number and byte offset,
//! the file's generation (a file rewritten from its start is archived again, as its next
//! generation), the line's time and type (from its format's description), and the line itself.

pub(crate) mod restore;
pub(crate) mod write;

use crate::error::Error;
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(crate) use restore::{RestoredArchive, restore};
pub(crate) use write::archive;

/// The manifest's name, at the archive's root: what makes a folder an archive.
pub const MANIFEST_FILE: &str = "_txq_archive.json";

/// The manifest's version: an archive of a later one is refused, not misread.
const VERSION: u32 = 1;

/// The dataset of the lines whose type is not known (not JSON, no type, a blank line): not
/// `_`-led, since pyarrow and pandas skip such folders.
const UNTYPED: &str = "untyped";

/// The month folder of lines with no time, nor any line before them in their file with one.
const NO_MONTH: &str = "unknown";

/// What an archive holds: the parts of its finished runs, and each file archived.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Manifest {
    pub(crate) txq_archive: u32,
    /// The host that made the last run (`TXQ_MACHINE`, else its host name).
    pub(crate) machine: String,
    /// The runs that added lines.
    pub(crate) runs: u64,
    /// Every machine of its files, in the order first archived (a restored archive's folders
    /// are numbered so).
    pub(crate) machines: Vec<String>,
    pub(crate) parts: Vec<Part>,
    pub(crate) files: Vec<FileRecord>,
}

/// A Parquet file of the archive.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Part {
    /// Below the archive's root, `/`-separated.
    pub(crate) path: String,
    pub(crate) run: u64,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
}

/// A file archived, and how far.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct FileRecord {
    /// Its path where it was found (canonical: absolute, or a store's URL).
    pub(crate) path: String,
    /// Its format's id.
    pub(crate) format: String,
    pub(crate) machine: String,
    /// How often it was archived again from its start, because it no longer began as archived.
    pub(crate) generation: u64,
    /// The bytes archived (of a compressed file, of what it inflates to), and their hash
    /// (xxh3-64, hex): a file that still begins with them only grew.
    pub(crate) bytes: u64,
    pub(crate) hash: String,
    pub(crate) lines: u64,
    /// Whether the last line archived had no line end yet (a whole JSON object, kept since it
    /// may be the file's last): a line end that follows it ends that line.
    pub(crate) tail_open: bool,
    /// Its size and modification time when last archived: a file found the same is not read.
    pub(crate) size: u64,
    pub(crate) modified: Option<u64>,
    /// The month of the last line archived with a time (lines with none are filed under it).
    pub(crate) month: Option<String>,
}

impl FileRecord {
    /// What a file is known by in the archive: its machine and its path without `.zst` (a
    /// compressed transcript is its plain file's lines).
    pub(crate) fn key(&self) -> (String, String) {
        (self.machine.clone(), crate::source::restored::plain_name(&self.path).to_string())
    }
}

impl Manifest {
    /// A manifest read from its text; a version it does not know is refused.
    pub(crate) fn parse(text: &[u8], place: &str) -> Result<Manifest, Error> {
        let manifest: Manifest = serde_json::from_slice(text).map_err(|e| Error::Input {
            file: format!("{place}/{MANIFEST_FILE}"),
            why: format!("not an archive's manifest: {e}"),
        })?;
        if manifest.txq_archive != VERSION {
            return Err(Error::Input {
                file: format!("{place}/{MANIFEST_FILE}"),
                why: format!(
                    "an archive of version {} (this txq reads version {VERSION}): use the txq that wrote it",
                    manifest.txq_archive
                ),
            });
        }
        Ok(manifest)
    }
}

/// The columns of every part.
pub(crate) fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("machine", DataType::Utf8, false),
        Field::new("file", DataType::Utf8, false),
        Field::new("generation", DataType::Int64, false),
        Field::new("line", DataType::Int64, false),
        Field::new("offset", DataType::Int64, false),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
        Field::new("type", DataType::Utf8, true),
        Field::new("json", DataType::Utf8, true),
        Field::new("raw", DataType::Binary, true),
    ]))
}
