//! The hash of a file's whole lines (its bytes up to the last newline), computed as the inference
//! pass streams the file, checked again before a cached file is read on from where it was, and
//! carried on over what was appended.

use crate::discover::SourceFile;
use crate::read::{BLOCK_BYTES, BlockReader};
use object_store::ObjectStore;
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3Default;

/// XXH3-64 (the same in every build and on every machine) of a file's bytes up to its last
/// newline, fed block by block.
#[derive(Clone)]
pub struct PrefixHash {
    /// Every byte fed.
    running: Box<Xxh3Default>,
    /// The bytes up to and including the last newline fed: what [`PrefixHash::digest`] gives.
    /// (XXH3's state cannot be rebuilt from a digest, so a copy is taken at each block's last
    /// newline: once a block, whatever its lines.)
    at_last_newline: Box<Xxh3Default>,
}

impl Default for PrefixHash {
    fn default() -> Self {
        Self { running: Box::new(Xxh3Default::new()), at_last_newline: Box::new(Xxh3Default::new()) }
    }
}

impl std::fmt::Debug for PrefixHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrefixHash({:016x})", self.digest())
    }
}

impl PrefixHash {
    /// Feeds the next block of the file; `last_newline` is the offset of its last `\n`, if any.
    pub fn feed(&mut self, block: &[u8], last_newline: Option<usize>) {
        match last_newline {
            Some(at) => {
                self.running.update(&block[..=at]);
                self.at_last_newline.clone_from(&self.running);
                self.running.update(&block[at + 1..]);
            }
            None => self.running.update(block),
        }
    }

    /// The hash of the bytes up to the last newline fed (of nothing, when none was).
    pub fn digest(&self) -> u64 {
        self.at_last_newline.digest()
    }

    /// The hash of `file`'s first `len` bytes (which end with a newline), read again in blocks;
    /// `None` when they cannot all be read. Its state goes on from there.
    pub async fn of_prefix(store: &Arc<dyn ObjectStore>, file: &SourceFile, len: u64) -> Option<Self> {
        let reader = BlockReader::open(store.clone(), file).ok()?;
        let mut hash = Self::default();
        let mut at = 0;
        while at < len {
            let end = (at + BLOCK_BYTES).min(len);
            let block = reader.read_range(at..end).await.ok()?;
            if block.len() as u64 != end - at {
                return None;
            }
            hash.running.update(&block);
            at = end;
        }
        hash.at_last_newline.clone_from(&hash.running);
        Some(hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_of_the_bytes_up_to_the_last_newline_however_they_are_fed() {
        let bytes = b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"cut";
        let whole = xxhash_rust::xxh3::xxh3_64(&bytes[..24]);
        for cuts in [vec![], vec![3], vec![8], vec![7, 16], vec![1, 2, 3, 25, 28], vec![24]] {
            let mut hash = PrefixHash::default();
            let mut start = 0;
            for end in cuts.into_iter().chain([bytes.len()]) {
                let block = &bytes[start..end];
                hash.feed(block, memchr::memrchr(b'\n', block));
                start = end;
            }
            assert_eq!(hash.digest(), whole);
        }
        assert_eq!(PrefixHash::default().digest(), xxhash_rust::xxh3::xxh3_64(b""));
    }

    #[test]
    fn a_hash_goes_on_over_what_follows() {
        let mut hash = PrefixHash::default();
        hash.feed(b"one\n", Some(3));
        let mut later = hash.clone();
        later.feed(b"two\nthr", Some(3));
        assert_eq!(later.digest(), xxhash_rust::xxh3::xxh3_64(b"one\ntwo\n"));
    }
}
