//! Reading a file block by block through the object-store layer, so that a local path and a
//! remote store (`s3://`) are read by the same code.

use crate::discover::SourceFile;
use bytes::Bytes;
use object_store::{ObjectStore, ObjectStoreExt, path::Path as StorePath};
use std::sync::Arc;

/// How many bytes one read asks for.
pub const BLOCK_BYTES: u64 = 4 << 20;

/// Reads one file's first `size` bytes in blocks.
pub struct BlockReader {
    store: Arc<dyn ObjectStore>,
    location: StorePath,
    offset: u64,
    size: u64,
}

impl BlockReader {
    /// A reader of `file` from the local file system store.
    pub fn open(store: Arc<dyn ObjectStore>, file: &SourceFile) -> Result<Self, String> {
        Self::open_at(store, file, 0)
    }

    /// A reader of `file` from byte `offset` on.
    pub fn open_at(store: Arc<dyn ObjectStore>, file: &SourceFile, offset: u64) -> Result<Self, String> {
        let location = StorePath::from_absolute_path(&file.canonical).map_err(|e| e.to_string())?;
        Ok(Self { store, location, offset, size: file.size })
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
