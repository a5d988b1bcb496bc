//! Reading a file block by block through the object-store layer, so that a local path and a
//! remote store (`s3://`) are read by the same code; the scans and the inference pass read the
//! files of this machine's store on their own thread.

use crate::source::discover::SourceFile;
use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::{ObjectStore, ObjectStoreExt, path::Path as StorePath};
use std::io::{Read, Seek, SeekFrom};
use std::sync::{Arc, OnceLock};

/// How many bytes one read asks for.
pub(crate) const BLOCK_BYTES: u64 = 4 << 20;

/// The store of this machine's files, one per process: its files are read on the reader's own
/// thread (see [`BlockReader`]).
pub fn local_store() -> Arc<dyn ObjectStore> {
    static STORE: OnceLock<Arc<dyn ObjectStore>> = OnceLock::new();
    STORE.get_or_init(|| Arc::new(LocalFileSystem::new())).clone()
}

/// Reads one file's first `size` bytes in blocks.
pub(crate) struct BlockReader {
    source: Source,
    offset: u64,
    size: u64,
}

/// Where a [`BlockReader`] reads from.
enum Source {
    /// The file, open, when the store is [`local_store`]: it is read on the caller's thread, since
    /// a transcript is one short read from the page cache and a hand-off to the store's blocking
    /// threads would cost more than the read (benchmarks/ANALYSIS.md, "Scans read local files on
    /// their own thread"). Nor does it need an object-store path, which cannot name a file whose
    /// path is not UTF-8.
    Local(std::fs::File),
    /// Any other store, through the object-store layer.
    Store { store: Arc<dyn ObjectStore>, location: StorePath },
}

impl BlockReader {
    /// A reader of `file` from the local file system store.
    pub(crate) fn open(store: Arc<dyn ObjectStore>, file: &SourceFile) -> std::io::Result<Self> {
        Self::open_at(store, file, 0)
    }

    /// A reader of `file` from byte `offset` on.
    pub(crate) fn open_at(
        store: Arc<dyn ObjectStore>,
        file: &SourceFile,
        offset: u64,
    ) -> std::io::Result<Self> {
        let source = match Arc::ptr_eq(&store, &local_store()) {
            true => Source::Local(std::fs::File::open(&file.canonical)?),
            false => Source::Store {
                location: StorePath::from_absolute_path(&file.canonical).map_err(std::io::Error::other)?,
                store,
            },
        };
        Ok(Self { source, offset, size: file.size })
    }

    /// Reads `range` of the file at once.
    pub(crate) async fn read_range(&self, range: std::ops::Range<u64>) -> Result<Bytes, object_store::Error> {
        match &self.source {
            Source::Local(file) => read_local(file, range),
            Source::Store { store, location } => store.get_range(location, range).await,
        }
    }

    /// The next block, or `None` at the end.
    pub(crate) async fn next_block(&mut self) -> Result<Option<Bytes>, object_store::Error> {
        if self.offset >= self.size {
            return Ok(None);
        }
        let end = (self.offset + BLOCK_BYTES).min(self.size);
        let block = match &self.source {
            // A file cut shorter since it was found reads short.
            Source::Local(file) => read_local(file, self.offset..end)?,
            Source::Store { store, location } => match store.get_range(location, self.offset..end).await {
                Ok(block) => block,
                // A file cut shorter since it was found (the local store refuses a range past
                // the end): read what is there.
                Err(e) => match store.head(location).await {
                    Ok(meta) if meta.size < end => {
                        self.size = meta.size;
                        if self.offset >= self.size {
                            return Ok(None);
                        }
                        store.get_range(location, self.offset..self.size).await?
                    }
                    _ => return Err(e),
                },
            },
        };
        // A file truncated since it was found ends early; read what is there.
        if block.is_empty() {
            self.offset = self.size;
            return Ok(None);
        }
        self.offset += block.len() as u64;
        Ok(Some(block))
    }
}

/// Reads `range` of an open file (fewer bytes where it ends sooner).
fn read_local(mut file: &std::fs::File, range: std::ops::Range<u64>) -> Result<Bytes, object_store::Error> {
    let len = range.end.saturating_sub(range.start);
    let mut block = Vec::with_capacity(len as usize);
    file.seek(SeekFrom::Start(range.start))
        .and_then(|_| file.take(len).read_to_end(&mut block))
        .map_err(|e| object_store::Error::Generic { store: "LocalFileSystem", source: Box::new(e) })?;
    Ok(Bytes::from(block))
}
