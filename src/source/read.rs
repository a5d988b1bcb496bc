//! Reading a file block by block through the object-store layer, so that a local path and a
//! remote store (`s3://`) are read by the same code; the scans and the inference pass read the
//! files of this machine's store on their own thread. A compressed file (`*.zst`) is read as its
//! decompressed bytes, inflated block by block as it streams. An object is read as the version
//! its listing saw, or, replaced before its first block, as the version there now, whole; one
//! replaced while it is read stops the read with an error that says so.

use crate::source::files::SourceFile;
use bytes::Bytes;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, path::Path as StorePath};
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// How many bytes one read asks for.
pub(crate) const BLOCK_BYTES: u64 = 4 << 20;

/// The store of this machine's files, one per process: its files are read on the reader's own
/// thread (see [`BlockReader`]).
pub use super::remote::local_store;

/// Reads one file's first `size` bytes in blocks; a compressed file's as the bytes they inflate to.
pub(crate) struct BlockReader {
    source: Source,
    offset: u64,
    size: u64,
    /// The decompression of a compressed file's bytes.
    inflate: Option<Box<Inflate>>,
    /// The size the file was found at, when it ended sooner as it was read (cut shorter since).
    found_size: Option<u64>,
    /// The size an object was listed at, when it was replaced before it was read.
    listed_size: Option<u64>,
}

/// How much a block of a compressed file inflates to at most (the decompressed block handed on).
const INFLATED_BLOCK_BYTES: usize = BLOCK_BYTES as usize;

/// A zstd stream inflated as its bytes arrive: one block of them and one block of output are held
/// at a time (and the decoder's window), never the whole file.
struct Inflate {
    decoder: zstd::stream::raw::Decoder<'static>,
    /// The compressed block being inflated, and how much of it the decoder took.
    input: Bytes,
    taken: usize,
    /// The last run filled its output: the decoder may hold more output of what it took.
    holding: bool,
    /// Every frame begun has ended (true before the first): the stream may end here.
    between_frames: bool,
    /// Decompressed bytes handed on.
    inflated: u64,
    /// The stream ended, or its damage stopped the read.
    ended: bool,
    /// Why the read stopped before the end of the stream: its data is not zstd, or is cut off
    /// mid-frame. What was inflated before it was handed on.
    damage: Option<String>,
}

impl Version {
    /// Whether the answer `meta` is of another version than the one listed with `size` bytes:
    /// another e_tag, or (a listing without e_tags, as some S3-compatible stores give) another
    /// size.
    fn is_not(&self, meta: &object_store::ObjectMeta, size: u64) -> bool {
        let stamp = super::remote::version_stamp(meta);
        meta.size != size || self.listed.is_some_and(|listed| stamp != Some(listed))
    }
}

/// Where a [`BlockReader`] reads from.
enum Source {
    /// The file, open, when the store is [`local_store`]: it is read on the caller's thread, since
    /// a transcript is one short read from the page cache and a hand-off to the store's blocking
    /// threads would cost more than the read (benchmarks/ANALYSIS.md, "Scans read local files on
    /// their own thread"). Nor does it need an object-store path, which cannot name a file whose
    /// path is not UTF-8.
    Local(std::fs::File),
    /// Any other store, through the object-store layer; for an object, the version read.
    Store { store: Arc<dyn ObjectStore>, location: StorePath, version: Option<Version> },
}

/// Which version of an object a read reads.
#[derive(Debug)]
struct Version {
    /// The stamp of the version its listing saw ([`super::remote::version_stamp`]), for an object.
    listed: Option<u64>,
    /// The e_tag of the version the blocks given so far are of: each later block is asked for on
    /// that condition (`If-Match`).
    e_tag: Option<String>,
}

impl BlockReader {
    /// A reader of `file` from `store`: this machine's files, or for an object the store of its
    /// bucket (this machine's store given, the process's [`super::remote::registry`] finds it).
    pub(crate) fn open(store: Arc<dyn ObjectStore>, file: &SourceFile) -> std::io::Result<Self> {
        Self::open_at(store, file, 0)
    }

    /// A reader of `file` from byte `offset` on.
    pub(crate) fn open_at(
        store: Arc<dyn ObjectStore>,
        file: &SourceFile,
        offset: u64,
    ) -> std::io::Result<Self> {
        let compressed = file.compressed();
        if compressed && offset > 0 {
            // A byte of the inflated stream is not found without inflating all before it.
            return Err(std::io::Error::other("a compressed file is read from its start only"));
        }
        let local = Arc::ptr_eq(&store, &local_store());
        let source = match super::remote::RemotePath::parse(file.canonical()) {
            // An object: from the store given for it, or (given this machine's) the process's.
            Ok(place) if file.is_remote() => {
                let store = match local {
                    true => super::remote::registry().store(&place.store).map_err(std::io::Error::other)?,
                    false => store,
                };
                let version = Some(Version { listed: file.changed, e_tag: None });
                Source::Store { store, location: place.key, version }
            }
            _ if local => Source::Local(std::fs::File::open(file.canonical())?),
            _ => Source::Store {
                location: StorePath::from_absolute_path(file.canonical()).map_err(std::io::Error::other)?,
                store,
                version: None,
            },
        };
        let inflate = match compressed {
            true => Some(Box::new(Inflate::new()?)),
            false => None,
        };
        Ok(Self { source, offset, size: file.size, inflate, found_size: None, listed_size: None })
    }

    /// Reads `range` of the file's bytes as stored (a compressed file's compressed bytes) at once.
    pub(crate) async fn read_range(&self, range: std::ops::Range<u64>) -> Result<Bytes, object_store::Error> {
        match &self.source {
            Source::Local(file) => read_local(file, range),
            Source::Store { store, location, version } => {
                let e_tag = version.as_ref().and_then(|v| v.e_tag.clone());
                let (block, meta) = get(store, location, e_tag, range).await?;
                match version.as_ref().is_some_and(|v| v.e_tag.is_none() && v.is_not(&meta, self.size)) {
                    true => Err(replaced(location, "since it was listed")),
                    false => Ok(block),
                }
            }
        }
    }

    /// Why the read of a compressed file stopped before the end of its stream (not zstd data, or
    /// cut off mid-frame), once [`BlockReader::next_block`] gave `None`: the blocks before it were
    /// all it could inflate.
    pub(crate) fn damage(&self) -> Option<&str> {
        self.inflate.as_ref().and_then(|i| i.damage.as_deref())
    }

    /// How the file was read, once [`BlockReader::next_block`] gave `None`, when not as it was
    /// found: an object replaced since it was listed, read whole as it is now (`files` shows it
    /// as listed); a file cut shorter since it was found, of which what was read is a part.
    pub(crate) fn read_note(&self) -> Option<String> {
        let replaced = self.listed_size.map(|listed| {
            format!(
                "read as it is now: replaced since it was listed ({listed} bytes then, {} now); the files table shows it as listed",
                self.size
            )
        });
        let cut = self.found_size.map(|found| {
            format!(
                "read in part: cut from {found} to {} bytes as it was read: its rows are those of the bytes left; run the statement again",
                self.size
            )
        });
        match (replaced, cut) {
            (Some(replaced), Some(cut)) => Some(format!("{replaced}; then {cut}")),
            (replaced, cut) => replaced.or(cut),
        }
    }

    /// How many bytes the blocks given so far held (of a compressed file, inflated).
    pub(crate) fn given(&self) -> u64 {
        self.inflate.as_ref().map_or(self.offset, |i| i.inflated)
    }

    /// The next block (of a compressed file, of its inflated bytes), or `None` at the end (or
    /// where a compressed file's damage stops the read: [`BlockReader::damage`] says why).
    pub(crate) async fn next_block(&mut self) -> Result<Option<Bytes>, object_store::Error> {
        let Some(mut inflate) = self.inflate.take() else { return self.next_stored_block().await };
        let block = inflate.next_block(self).await;
        self.inflate = Some(inflate);
        block
    }

    /// The next block of the file's bytes as stored, or `None` at the end.
    async fn next_stored_block(&mut self) -> Result<Option<Bytes>, object_store::Error> {
        if self.offset >= self.size {
            return Ok(None);
        }
        let end = (self.offset + BLOCK_BYTES).min(self.size);
        let mut found = self.size;
        let block = match &mut self.source {
            // A file cut shorter since it was found reads short.
            Source::Local(file) => read_local(file, self.offset..end)?,
            Source::Store { store, location, version } => {
                let e_tag = version.as_ref().and_then(|v| v.e_tag.clone());
                match get(store, location, e_tag, self.offset..end).await {
                    Ok((block, meta)) => {
                        if let Some(version) = version.as_mut() {
                            match &version.e_tag {
                                None => {
                                    let stamp = super::remote::version_stamp(&meta);
                                    if version.is_not(&meta, self.size) {
                                        if self.offset > 0 {
                                            return Err(replaced(location, "since it was listed"));
                                        }
                                        // Replaced since it was listed, nothing of it read yet:
                                        // read as it is now, whole (not the listed size's first
                                        // bytes of it).
                                        self.listed_size = Some(self.size);
                                        self.size = meta.size;
                                        found = meta.size;
                                        version.listed = stamp;
                                    }
                                    version.e_tag = meta.e_tag;
                                }
                                // A store that answers whatever If-Match asks: the answer's e_tag
                                // says which version its bytes are of.
                                Some(e_tag) if meta.e_tag.as_ref() != Some(e_tag) => {
                                    return Err(replaced_while_read(location, self.offset, self.size));
                                }
                                Some(_) => {}
                            }
                        }
                        block
                    }
                    Err(object_store::Error::Precondition { .. }) => {
                        return Err(replaced_while_read(location, self.offset, self.size));
                    }
                    // A file cut shorter since it was found (the local store refuses a range past
                    // the end): read what is there.
                    Err(e) => match store.head(location).await {
                        Ok(meta) if meta.size < end && version.is_none() => {
                            self.size = meta.size;
                            if self.offset >= self.size {
                                return Ok(None);
                            }
                            store.get_range(location, self.offset..self.size).await.map_err(one_line)?
                        }
                        _ => return Err(e),
                    },
                }
            }
        };
        // A file truncated since it was found ends early; read what is there.
        if (block.len() as u64) < end.min(found) - self.offset {
            self.found_size.get_or_insert(found);
            self.size = self.offset + block.len() as u64;
        }
        if block.is_empty() {
            self.offset = self.size;
            return Ok(None);
        }
        self.offset += block.len() as u64;
        Ok(Some(block))
    }
}

impl Inflate {
    fn new() -> std::io::Result<Self> {
        Ok(Self {
            decoder: zstd::stream::raw::Decoder::new()?,
            input: Bytes::new(),
            taken: 0,
            holding: false,
            between_frames: true,
            inflated: 0,
            ended: false,
            damage: None,
        })
    }

    /// The next block of inflated bytes, reading the compressed ones from `stored` as needed.
    async fn next_block(&mut self, stored: &mut BlockReader) -> Result<Option<Bytes>, object_store::Error> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let mut out: Vec<u8> = Vec::new();
        while !self.ended {
            if self.taken == self.input.len() && !self.holding {
                match stored.next_stored_block().await? {
                    Some(block) => (self.input, self.taken) = (block, 0),
                    None => {
                        // The end of the file: whole only between two frames.
                        self.ended = true;
                        if !self.between_frames {
                            self.damage = Some("the zstd data is cut off mid-frame".to_string());
                        }
                        break;
                    }
                }
            }
            if out.capacity() == 0 {
                out.reserve_exact(INFLATED_BLOCK_BYTES);
            }
            let mut src = InBuffer::around(&self.input[self.taken..]);
            let filled = out.len();
            let mut dst = OutBuffer::around_pos(&mut out, filled);
            let run = self.decoder.run(&mut src, &mut dst);
            let (took, wrote, full) = (src.pos(), dst.pos() - filled, dst.pos() == dst.capacity());
            self.taken += took;
            match run {
                // Never so with room for output; were it so, the read would go round for ever.
                Ok(_) if took == 0 && wrote == 0 && !full && !self.holding => {
                    self.ended = true;
                    self.damage = Some("not valid zstd data (the decoder made no progress)".to_string());
                    break;
                }
                Ok(hint) => {
                    // 0: a frame ended and all of it was handed out.
                    self.between_frames = hint == 0;
                    self.holding = full && hint != 0;
                }
                Err(e) => {
                    self.ended = true;
                    self.damage = Some(format!("not valid zstd data ({e})"));
                    break;
                }
            }
            if full {
                break;
            }
        }
        self.inflated += out.len() as u64;
        Ok((!out.is_empty()).then(|| Bytes::from(out)))
    }
}

/// Reads `range` of `location`, on the condition that it is still the version of `e_tag` when
/// given: its bytes, and the object's metadata (its whole size, its e_tag). An error's text is one
/// line ([`one_line`]).
async fn get(
    store: &Arc<dyn ObjectStore>,
    location: &StorePath,
    e_tag: Option<String>,
    range: std::ops::Range<u64>,
) -> Result<(Bytes, object_store::ObjectMeta), object_store::Error> {
    let options = GetOptions { if_match: e_tag, range: Some(GetRange::Bounded(range)), ..Default::default() };
    let got = store.get_opts(location, options).await.map_err(one_line)?;
    let meta = got.meta.clone();
    Ok((got.bytes().await.map_err(one_line)?, meta))
}

/// The error of an object read that found it replaced by another version (`when`).
fn replaced(location: &StorePath, when: &str) -> object_store::Error {
    let why = format!("the object was replaced {when}: its e_tag changed; run again to read it as it is now");
    object_store::Error::Precondition { path: location.to_string(), source: why.into() }
}

/// The error of an object replaced after `offset` of its `size` bytes were read.
fn replaced_while_read(location: &StorePath, offset: u64, size: u64) -> object_store::Error {
    replaced(location, &format!("while it was read (after {offset} of {size} bytes)"))
}

/// An object-store error whose text is one line: a store's error body (an S3 error's XML, say)
/// may hold line breaks and other control characters, and a warning is one line.
fn one_line(e: object_store::Error) -> object_store::Error {
    use object_store::Error as E;
    let line = |source: Box<dyn std::error::Error + Send + Sync>| {
        super::remote::one_line(&source.to_string()).into()
    };
    match e {
        E::Generic { store, source } => E::Generic { store, source: line(source) },
        E::NotFound { path, source } => E::NotFound { path, source: line(source) },
        E::Precondition { path, source } => E::Precondition { path, source: line(source) },
        E::NotModified { path, source } => E::NotModified { path, source: line(source) },
        E::PermissionDenied { path, source } => E::PermissionDenied { path, source: line(source) },
        E::Unauthenticated { path, source } => E::Unauthenticated { path, source: line(source) },
        E::AlreadyExists { path, source } => E::AlreadyExists { path, source: line(source) },
        E::NotSupported { source } => E::NotSupported { source: line(source) },
        other => other,
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

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::local::LocalFileSystem;

    /// A file of `bytes` named `name` in `dir`, as discovery finds it.
    fn found(dir: &std::path::Path, name: &str, bytes: &[u8]) -> SourceFile {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        SourceFile::new(path.clone(), path, bytes.len() as u64, None, None, None)
    }

    /// Every block of `file` read from `store`, and why the read stopped short (if it did).
    fn blocks(store: Arc<dyn ObjectStore>, file: &SourceFile) -> (Vec<Bytes>, Option<String>) {
        futures::executor::block_on(async {
            let mut reader = BlockReader::open(store, file).unwrap();
            let mut blocks = Vec::new();
            while let Some(block) = reader.next_block().await.unwrap() {
                blocks.push(block);
            }
            assert_eq!(reader.given(), blocks.iter().map(|b| b.len() as u64).sum::<u64>());
            (blocks, reader.damage().map(str::to_string))
        })
    }

    /// Lines enough to inflate to more than two blocks.
    fn lines() -> Vec<u8> {
        (0..400_000u32).flat_map(|i| format!("{{\"type\":\"usage\",\"n\":{i}}}\n").into_bytes()).collect()
    }

    /// Both stores: this machine's (read on the caller's thread) and another (through the store).
    fn stores() -> [Arc<dyn ObjectStore>; 2] {
        [local_store(), Arc::new(LocalFileSystem::new())]
    }

    #[test]
    fn a_compressed_file_reads_as_its_inflated_bytes_a_block_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let text = lines();
        let compressed = zstd::encode_all(&text[..], 3).unwrap();
        // Two frames one after the other are one stream.
        let (first, second) = text.split_at(text.len() / 3);
        let frames = [zstd::encode_all(first, 3).unwrap(), zstd::encode_all(second, 19).unwrap()].concat();
        for (name, bytes) in [("run_1.jsonl.zst", &compressed), ("run_2.jsonl.zst", &frames)] {
            let file = found(dir.path(), name, bytes);
            for store in stores() {
                let (blocks, damage) = blocks(store, &file);
                assert_eq!(damage, None);
                assert!(blocks.len() > 2, "{} blocks", blocks.len());
                assert!(blocks.iter().all(|b| b.len() <= INFLATED_BLOCK_BYTES));
                assert!(blocks.concat() == text, "{name}");
            }
        }
        // Named plainly, the same bytes are read as they are stored.
        let plain = found(dir.path(), "run_3.jsonl", &compressed);
        assert!(blocks(local_store(), &plain).0.concat() == compressed);
    }

    #[test]
    fn a_compressed_file_cut_off_mid_frame_gives_what_came_before_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let text = lines();
        let compressed = zstd::encode_all(&text[..], 3).unwrap();
        let file = found(dir.path(), "run_1.jsonl.zst", &compressed[..compressed.len() * 2 / 3]);
        for store in stores() {
            let (blocks, damage) = blocks(store, &file);
            let read = blocks.concat();
            assert!(!read.is_empty() && read.len() < text.len() && text.starts_with(&read));
            assert_eq!(damage.as_deref(), Some("the zstd data is cut off mid-frame"));
        }
    }

    #[test]
    fn damaged_zstd_data_gives_what_came_before_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"{\"type\":\"a\"}\n".repeat(1000);
        let good = zstd::encode_all(&text[..], 3).unwrap();
        let garbage = b"this is no zstd frame at all".repeat(10);
        let cases = [
            ("not_zstd.jsonl.zst", garbage.clone(), 0),
            ("damaged_after.jsonl.zst", [good.clone(), garbage].concat(), text.len()),
        ];
        for (name, bytes, readable) in cases {
            let file = found(dir.path(), name, &bytes);
            for store in stores() {
                let (blocks, damage) = blocks(store, &file);
                assert!(blocks.concat() == text[..readable], "{name}");
                let damage = damage.unwrap_or_default();
                assert!(damage.starts_with("not valid zstd data ("), "{name}: {damage}");
            }
        }
        // A bit flipped inside a frame, checksummed or not: whatever the decoder makes of it, the
        // read ends (with the damage said, or with the bytes decoded) and never panics.
        for at in [good.len() / 2, good.len() - 5] {
            let mut flipped = good.clone();
            flipped[at] ^= 0x40;
            let file = found(dir.path(), "flipped.jsonl.zst", &flipped);
            let (blocks, damage) = blocks(local_store(), &file);
            assert!(damage.is_some() || !blocks.is_empty());
        }
    }

    /// A file cut shorter after it was found gave a part of its rows in silence: the read says
    /// it was cut, through either store, and what it gives is what is left.
    #[test]
    fn a_file_cut_shorter_as_it_is_read_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let text = lines();
        let left = BLOCK_BYTES as usize + 1000;
        for store in stores() {
            let file = found(dir.path(), "run_1.jsonl", &text);
            std::fs::OpenOptions::new()
                .write(true)
                .open(file.canonical())
                .unwrap()
                .set_len(left as u64)
                .unwrap();
            futures::executor::block_on(async {
                let mut reader = BlockReader::open(store, &file).unwrap();
                let mut read = Vec::new();
                while let Some(block) = reader.next_block().await.unwrap() {
                    read.extend_from_slice(&block);
                }
                assert!(read == text[..left]);
                let why = reader.read_note().expect("the cut is said");
                assert!(why.contains(&format!("cut from {} to {left} bytes", text.len())), "{why}");
            });
            let whole = found(dir.path(), "run_2.jsonl", &text);
            futures::executor::block_on(async {
                let mut reader = BlockReader::open(stores()[0].clone(), &whole).unwrap();
                while reader.next_block().await.unwrap().is_some() {}
                assert_eq!(reader.read_note(), None);
            });
        }
    }

    #[test]
    fn an_empty_compressed_file_is_empty_and_a_compressed_file_is_never_read_from_an_offset() {
        let dir = tempfile::tempdir().unwrap();
        let empty = found(dir.path(), "run_1.jsonl.zst", b"");
        assert_eq!(blocks(local_store(), &empty), (vec![], None));
        let file = found(dir.path(), "run_2.jsonl.zst", &zstd::encode_all(&b"{}\n"[..], 3).unwrap());
        assert!(BlockReader::open_at(local_store(), &file, 1).is_err());
    }
}
