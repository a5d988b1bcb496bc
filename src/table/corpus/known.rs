//! Opening a corpus, third step: what the inference cache knows of every file found, in one walk
//! of it. A file it knows unchanged is settled with no read and no task; one that may have grown
//! is read on from its known lines ([`super::learn`]); the files it knew that were not found
//! (deleted or moved) leave it.

use super::owners::Copies;
use super::settle::Settled;
use crate::format::Format;
use crate::infer::cache::{FileEntry, InferenceCache, Wanted};
use crate::source::files::{SourceFiles, path_key};

/// The files of one format that may have grown since the cache knew them: each one's index
/// among the format's files, in no order, with what the cache knew of it.
pub(super) type Grown = Vec<(u32, FileEntry)>;

/// The files looked up in the cache at a time ([`InferenceCache::find`]).
const PER_LOOKUP: usize = 250_000;

/// What `cache` knows of the `files` of each of `formats` (read with lines of at most
/// `max_line_bytes`), and of their `copies` (kept in it, though not read): for each format, its
/// files known unchanged settled, and those that may have grown.
pub(super) fn known_from_cache(
    formats: &[Format],
    files: &[SourceFiles],
    copies: &[Copies],
    cache: &mut InferenceCache,
    max_line_bytes: usize,
) -> (Vec<Settled>, Vec<Grown>) {
    let max = max_line_bytes;
    // A file is numbered among all the formats' files, after the formats before it.
    let starts: Vec<usize> =
        files.iter().scan(0, |start, files| Some(std::mem::replace(start, *start + files.len()))).collect();
    let mut settled: Vec<Settled> = files.iter().map(|files| Settled::new(files.len())).collect();
    let mut grown: Vec<Grown> = files.iter().map(|_| Vec::new()).collect();
    if cache.knows_any() {
        const ASIDE: u32 = u32::MAX;
        // A quarter of a million files' keys at a time (12 bytes each); each key is hashed
        // again for each range.
        let all: usize = files.iter().map(SourceFiles::len).sum();
        let parts = all.div_ceil(PER_LOOKUP).max(1) as u32;
        let wanted = |low: u64, high: u64, into: &mut Vec<Wanted>| {
            let within = |key: &u64| (low..=high).contains(key);
            for (files, start) in files.iter().zip(&starts) {
                into.extend(
                    (0..files.len())
                        .map(|i| (files.key(i), i))
                        .filter(|(key, _)| within(key))
                        .map(|(key, i)| Wanted { key, number: (start + i) as u32 }),
                );
            }
            into.extend(
                copies
                    .iter()
                    .flatten()
                    .map(|(f, _)| path_key(f.canonical()))
                    .filter(within)
                    .map(|key| Wanted { key, number: ASIDE }),
            );
        };
        cache.find(parts, wanted, true, |number, entry, of| {
            if number == ASIDE {
                return;
            }
            let format = starts.partition_point(|&s| s <= number as usize) - 1;
            let i = number as usize - starts[format];
            // What a read found depends on the line limit: a line too long then may be read now.
            if of != formats[format].name || entry.summary().max_line_bytes != max as u64 {
                return;
            }
            let stamps = files[format].found_stamps(i);
            if entry.is_same(stamps) {
                settled[format].set(i, entry.summary());
            } else if entry.may_have_grown(stamps, || files[format].get(i).compressed()) {
                grown[format].push((i as u32, entry.clone()));
            }
        });
    }
    (settled, grown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::corpus::{Corpus, ReadOptions, owners};

    fn transcript(n: usize) -> String {
        format!(
            "{{\"type\":\"run_start\",\"data\":{{\"run_id\":\"run_{n}\",\"agent\":\"a\",\"started_at\":\"2026-10-07T09:14:03Z\"}}}}\n"
        )
    }

    #[test]
    fn files_the_cache_knows_unchanged_are_settled_unread_and_a_grown_one_is_read_on() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..3 {
            std::fs::write(dir.path().join(format!("run_{n}.jsonl")), transcript(n)).unwrap();
        }
        let formats = crate::format::all();
        let found = || crate::source::discover::discover(&formats, &[dir.path().to_path_buf()]).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut cache = InferenceCache::in_memory();
        let options = ReadOptions::default();
        let corpus = runtime.block_on(Corpus::read(formats.clone(), found(), options.clone(), &mut cache));
        assert_eq!(corpus.transcripts(), 3);

        // One file grows by a line; the others stay as they were read.
        let grown_file = dir.path().join("run_1.jsonl");
        std::fs::write(&grown_file, transcript(1).repeat(2)).unwrap();
        let mut discovery = found();
        let copies = owners::set_aside_copies(&formats, &mut discovery.files);
        let (settled, grown) =
            known_from_cache(&formats, &discovery.files, &copies, &mut cache, options.max_line_bytes);
        let at = discovery.files.iter().position(|files| files.len() == 3).expect("the three files");
        let files = &discovery.files[at];
        let name = |i: usize| files.get(i).path.file_name().unwrap().to_string_lossy().into_owned();
        let unread: Vec<String> = (0..files.len()).filter(|&i| settled[at].has(i)).map(name).collect();
        assert_eq!(unread, ["run_0.jsonl", "run_2.jsonl"]);
        let read_on: Vec<String> = grown[at].iter().map(|&(i, _)| name(i as usize)).collect();
        assert_eq!(read_on, ["run_1.jsonl"]);
        assert!(grown.iter().enumerate().all(|(f, grown)| f == at || grown.is_empty()));
    }
}
