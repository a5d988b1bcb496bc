//! Reading a file block by block through the object-store layer, so that a local path and a
//! remote store (`s3://`) are read by the same code; the scans and the inference pass read the
//! files of this machine's store on their own thread.

use crate::discover::SourceFile;
use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::{ObjectStore, ObjectStoreExt, path::Path as StorePath};
use std::io::{Read, Seek, SeekFrom};
use std::sync::{Arc, OnceLock};

/// How many bytes one read asks for.
pub const BLOCK_BYTES: u64 = 4 << 20;

/// The store of this machine's files, one per process: its files are read on the reader's own
/// thread (see [`BlockReader::here`]).
pub fn local_store() -> Arc<dyn ObjectStore> {
    static STORE: OnceLock<Arc<dyn ObjectStore>> = OnceLock::new();
    STORE.get_or_init(|| Arc::new(LocalFileSystem::new())).clone()
}

/// Reads one file's first `size` bytes in blocks.
pub struct BlockReader {
    store: Arc<dyn ObjectStore>,
    location: StorePath,
    offset: u64,
    size: u64,
    /// The file, open, when it is read on the caller's thread.
    here: Option<std::fs::File>,
}

impl BlockReader {
    /// A reader of `file` from the local file system store.
    pub fn open(store: Arc<dyn ObjectStore>, file: &SourceFile) -> Result<Self, String> {
        Self::open_at(store, file, 0)
    }

    /// A reader of `file` from byte `offset` on.
    pub fn open_at(store: Arc<dyn ObjectStore>, file: &SourceFile, offset: u64) -> Result<Self, String> {
        let location = StorePath::from_absolute_path(&file.canonical).map_err(|e| e.to_string())?;
        Ok(Self { store, location, offset, size: file.size, here: None })
    }

    /// The same reader reading on the caller's thread, when the store is [`local_store`]: a
    /// transcript is a read of microseconds from the page cache, and a hand-off to the store's
    /// blocking threads for each cost a fifth of a full scan in context switches. Other stores
    /// are read through the object-store layer.
    pub fn here(mut self, file: &SourceFile) -> Result<Self, String> {
        if Arc::ptr_eq(&self.store, &local_store()) {
            let mut opened = std::fs::File::open(&file.canonical).map_err(|e| e.to_string())?;
            opened.seek(SeekFrom::Start(self.offset)).map_err(|e| e.to_string())?;
            self.here = Some(opened);
        }
        Ok(self)
    }

    /// Reads `range` of the file at once.
    pub async fn read_range(&self, range: std::ops::Range<u64>) -> Result<Bytes, object_store::Error> {
        self.store.get_range(&self.location, range).await
    }

    /// The next block, or `None` at the end.
    pub async fn next_block(&mut self) -> Result<Option<Bytes>, object_store::Error> {
        if self.offset >= self.size {
            return Ok(None);
        }
        let end = (self.offset + BLOCK_BYTES).min(self.size);
        if let Some(file) = &mut self.here {
            // A file cut shorter since it was found ends early: what is there is read.
            let mut block = Vec::with_capacity((end - self.offset) as usize);
            file.take(end - self.offset).read_to_end(&mut block).map_err(|e| {
                object_store::Error::Generic { store: "LocalFileSystem", source: Box::new(e) }
            })?;
            if block.is_empty() {
                self.offset = self.size;
                return Ok(None);
            }
            self.offset += block.len() as u64;
            return Ok(Some(Bytes::from(block)));
        }
        let block = match self.store.get_range(&self.location, self.offset..end).await {
            Ok(block) => block,
            // A file cut shorter since it was found (the local store refuses a range past the
            // end): read what is there.
            Err(e) => match self.store.head(&self.location).await {
                Ok(meta) if meta.size < end => {
                    self.size = meta.size;
                    if self.offset >= self.size {
                        return Ok(None);
                    }
                    self.store.get_range(&self.location, self.offset..self.size).await?
                }
                _ => return Err(e),
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
