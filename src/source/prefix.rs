//! The hash of a file's whole lines (its bytes up to the last newline), computed as the inference
//! pass streams the file, checked again before a cached file is read on from where it was, and
//! carried on over what was appended.

use crate::source::files::SourceFile;
use crate::source::read::{BLOCK_BYTES, BlockReader};
use object_store::ObjectStore;
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3Default;

/// XXH3-64 (the same in every build and on every machine) of a file's first bytes, fed block by
/// block as it is read: of every byte fed, or of those up to where its whole lines ended.
#[derive(Clone)]
pub struct PrefixHash {
    /// Every byte fed, `fed` of them.
    running: Box<Xxh3Default>,
    fed: u64,
    /// The first `complete` bytes: the whole lines, as the reader last said. (XXH3's state cannot
    /// be rebuilt from a digest, so a copy is taken where they end: at most once a block.)
    at_complete: Box<Xxh3Default>,
    complete: u64,
}

impl Default for PrefixHash {
    fn default() -> Self {
        let empty = Box::new(Xxh3Default::new());
        Self { running: empty.clone(), fed: 0, at_complete: empty, complete: 0 }
    }
}

impl std::fmt::Debug for PrefixHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrefixHash({} of {} bytes: {:016x})", self.complete, self.fed, self.at_complete.digest())
    }
}

impl PrefixHash {
    /// Feeds the next `block` of the file; `complete` is the offset in the file at which its
    /// whole lines end now (within this block when they end later than before).
    pub(crate) fn feed(&mut self, block: &[u8], complete: u64) {
        let start = self.fed;
        self.fed += block.len() as u64;
        // Where in this block the whole lines end, when that is later than before.
        let cut = (complete > self.complete)
            .then(|| usize::try_from(complete.checked_sub(start)?).ok())
            .flatten()
            .filter(|&cut| cut > 0 && cut <= block.len());
        match cut {
            Some(cut) => {
                self.running.update(&block[..cut]);
                self.at_complete.clone_from(&self.running);
                self.complete = complete;
                self.running.update(&block[cut..]);
            }
            None => self.running.update(block),
        }
    }

    /// The hash of the file's first `complete` bytes, when this hash has it: `complete` is 0,
    /// the end of what was fed, or where the whole lines ended at the last `feed` that moved it.
    pub(crate) fn digest_of(&self, complete: u64) -> Option<u64> {
        match complete {
            0 => Some(Xxh3Default::new().digest()),
            _ if complete == self.complete => Some(self.at_complete.digest()),
            _ if complete == self.fed => Some(self.running.digest()),
            _ => None,
        }
    }

    /// The hash of `file`'s first `len` bytes, read again in blocks; `None` when they cannot all
    /// be read, and for a compressed file (whose whole lines are not its first bytes, and which is
    /// never read on from where it was). Its state goes on from there.
    pub(crate) async fn of_prefix(store: &Arc<dyn ObjectStore>, file: &SourceFile, len: u64) -> Option<Self> {
        if file.compressed() {
            return None;
        }
        let reader = BlockReader::open(store.clone(), file).ok()?;
        let mut hash = Self::default();
        while hash.fed < len {
            let end = (hash.fed + BLOCK_BYTES).min(len);
            let block = reader.read_range(hash.fed..end).await.ok()?;
            if block.len() as u64 != end - hash.fed {
                return None;
            }
            hash.feed(&block, end);
        }
        Some(hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    /// Feeds `bytes` cut at `cuts`, each block with the offset past its last newline (as the
    /// inference pass does).
    fn fed(bytes: &[u8], cuts: &[usize], mut hash: PrefixHash, from: usize) -> (PrefixHash, u64) {
        let mut complete = from as u64;
        let mut start = from;
        for &end in cuts.iter().chain([&bytes.len()]) {
            let block = &bytes[start..end];
            if let Some(at) = memchr::memrchr(b'\n', block) {
                complete = (start + at + 1) as u64;
            }
            hash.feed(block, complete);
            start = end;
        }
        (hash, complete)
    }

    #[test]
    fn the_digest_is_of_the_whole_lines_however_they_are_fed() {
        let bytes = b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"cut";
        for cuts in [&[][..], &[3], &[8], &[7, 16], &[1, 2, 3, 25, 28], &[24]] {
            let (hash, complete) = fed(bytes, cuts, PrefixHash::default(), 0);
            assert_eq!(complete, 24);
            assert_eq!(hash.digest_of(complete), Some(xxh3_64(&bytes[..24])), "{cuts:?}");
            // All of it (a damaged last line counted in), or nothing, are known too; not others.
            assert_eq!(hash.digest_of(bytes.len() as u64), Some(xxh3_64(bytes)));
            assert_eq!(hash.digest_of(0), Some(xxh3_64(b"")));
            assert_eq!(hash.digest_of(16), None);
        }
    }

    #[test]
    fn a_hash_goes_on_over_what_follows() {
        let bytes = b"one\ntwo\nthree\nfo";
        let (first, complete) = fed(&bytes[..8], &[2], PrefixHash::default(), 0);
        assert_eq!(complete, 8);
        let (later, complete) = fed(bytes, &[10], first, 8);
        assert_eq!(complete, 14);
        assert_eq!(later.digest_of(14), Some(xxh3_64(&bytes[..14])));
    }
}
