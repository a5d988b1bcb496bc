//! Opening a corpus, fourth step: the files of one format the cache does not know unchanged,
//! read by the inference pass (a grown one on from its known whole lines), each summarized into
//! [`Settled`] as its read comes and remembered in the cache; a file not read, or read in part,
//! is said in a warning.

use super::ReadOptions;
use super::known::Grown;
use super::settle::Settled;
use crate::format::Format;
use crate::infer::cache::{InferenceCache, Lookup};
use crate::infer::pass::infer_file;
use crate::infer::stats::FileStats;
use crate::source::files::{SourceFile, SourceFiles, Stamps};
use crate::source::prefix::PrefixHash;
use futures::StreamExt;
use object_store::ObjectStore;
use std::sync::Arc;

/// How many reads a core has queued at once.
const READS_AHEAD: usize = 8;

/// Reads the `files` of `format` that `settled` has no summary of yet (`grown` on from what
/// the cache knew), on `options.parallel_files` cores with [`READS_AHEAD`] reads queued for
/// each, settling each and remembering it in `cache`; the warnings of the reads, in the order
/// of the files.
pub(super) async fn read_the_rest(
    store: &Arc<dyn ObjectStore>,
    options: &ReadOptions,
    format: &Arc<Format>,
    files: &SourceFiles,
    settled: &mut Settled,
    mut grown: Grown,
    cache: &mut InferenceCache,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let max = options.max_line_bytes;
    let remember = cache.is_enabled();
    grown.sort_unstable_by_key(|(i, _)| *i);
    let (shapes, mut remembering) = cache.parts(format.name);
    // Room made at once (a million files' list grown a doubling at a time leaves copies of
    // itself resident).
    let mut unread: Vec<u32> = Vec::with_capacity((0..files.len()).filter(|&i| !settled.has(i)).count());
    unread.extend((0..files.len()).filter(|&i| !settled.has(i)).map(|i| i as u32));
    if remember && !unread.is_empty() {
        remembering.reserve(unread.len());
    }
    let (format_ref, files_ref, grown_ref) = (format, files, &grown);
    let mut reads = futures::stream::iter(unread.into_iter().map(|i| {
        let i = i as usize;
        let (store, file) = (store.clone(), Arc::new(files_ref.get(i)));
        let (key, stamps) = (files_ref.key(i), Stamps::of(&file));
        let known =
            grown_ref.binary_search_by_key(&(i as u32), |(at, _)| *at).ok().map(|at| &grown_ref[at].1);
        async move {
            let known = match known {
                Some(entry) => entry.lookup(&store, &file).await,
                None => Lookup::Unknown,
            };
            let (before, from, prefix) = match known {
                Lookup::Grown(summary, from, prefix) => (Some(summary), from, Some(prefix)),
                _ => (None, 0, None),
            };
            let prefix = remember.then(|| prefix.unwrap_or_default());
            let path = file.path.clone();
            let (stats, fingerprint) = read_file(store, format_ref.clone(), file, max, from, prefix).await;
            (i, path, key, stamps, before, stats, fingerprint)
        }
    }))
    // Reads queued ahead of the cores, so that a core done with one file finds the next waiting
    // rather than waiting for this loop to hand it over (a first run over 9,000 small files, one
    // read a core at a time, spent 42 % of its time in the kernel, 7 % switching tasks alone).
    .buffered(options.parallel_files.max(1) * READS_AHEAD);
    // Each file read is summarized as its read comes (the reads come in the order of
    // the files), its shapes numbered then: tens of thousands of files hold a handful of
    // shapes, and a file is then a few numbers; no file's summary is kept after it but
    // for the cache to remember (which it takes at once).
    while let Some((i, path, key, stamps, before, later, fingerprint)) = reads.next().await {
        let mut stats = match before {
            Some(before) => {
                let mut stats = shapes.stats(&before);
                stats.extend(later);
                stats
            }
            None => later,
        };
        let path = crate::text::escape::path(&path);
        let (summary, fingerprint) = match (stats.unreadable.take(), stats.read_in_part.take()) {
            (Some(why), _) => {
                warnings.push(format!("{path}: not read: {why}"));
                continue;
            }
            // Not remembered: the next read warns again.
            (None, Some(why)) => {
                warnings.push(format!("{path}: read in part: {why}; the lines before are read"));
                (shapes.summarize(&stats), None)
            }
            (None, None) => match stats.read_note.take() {
                // Not remembered either: the next read finds the file as it is then.
                Some(note) => {
                    warnings.push(format!("{path}: {note}"));
                    (shapes.summarize(&stats), None)
                }
                None => (shapes.summarize(&stats), fingerprint),
            },
        };
        settled.set(i, &summary);
        if let Some(fingerprint) = fingerprint {
            remembering.remember(key, stamps, fingerprint, summary);
        }
    }
    drop(reads);
    warnings
}

/// Reads `file` from `from` on (on a task of its own when in a runtime: files are read in
/// parallel), with the hash of its whole lines to remember it by when given `prefix` (the hash of
/// the bytes before `from`).
async fn read_file(
    store: Arc<dyn ObjectStore>,
    format: Arc<Format>,
    file: Arc<SourceFile>,
    max_line_bytes: usize,
    from: u64,
    mut prefix: Option<PrefixHash>,
) -> (FileStats, Option<u64>) {
    let read = async move {
        let stats = infer_file(store, &format, &file, max_line_bytes, from, prefix.as_mut()).await;
        let fingerprint =
            prefix.filter(|_| stats.unreadable.is_none()).and_then(|p| p.digest_of(stats.complete_bytes));
        (stats, fingerprint)
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime.spawn(read).await.unwrap_or_else(|e| {
            (FileStats { unreadable: Some(format!("the read stopped: {e}")), ..Default::default() }, None)
        }),
        Err(_) => read.await,
    }
}
