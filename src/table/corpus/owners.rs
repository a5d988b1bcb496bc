//! Opening a corpus, second step: each file found given to one format. A file
//! more than one format claims goes to the one its content says; a compressed copy beside its
//! plain file, and a copy the format keeps elsewhere, are set aside (listed, never read).

use super::ReadOptions;
use crate::format::Format;
use crate::infer::cache::{InferenceCache, Wanted};
use crate::infer::pass::{NotATranscript, decide_by_content};
use crate::source::discover::Discovery;
use crate::source::files::{SourceFile, SourceFiles};
use futures::StreamExt;
use object_store::ObjectStore;
use std::collections::HashMap;
use std::sync::Arc;

/// The files of each format that hold no transcript of their own (copies), each with why.
pub(super) type Copies = Vec<(Arc<SourceFile>, NotATranscript)>;

/// Takes the copies out of each format's `files` (in the order of `formats`): a compressed copy
/// beside its plain file is not read, the plain one is; nor is a copy the format keeps elsewhere.
pub(super) fn set_aside_copies(formats: &[Format], files: &mut [SourceFiles]) -> Vec<Copies> {
    let mut copies: Vec<Copies> = Vec::new();
    for (format, files) in formats.iter().zip(files) {
        let name = |p: &std::path::Path| crate::text::escape::path_text(p).into_owned();
        let mut set_aside: Vec<(usize, NotATranscript)> = crate::source::discover::plain_beside(files)
            .into_iter()
            .filter_map(|(i, plain)| {
                Some((i, NotATranscript::PlainBeside { plain: name(plain.file_name()?.as_ref()) }))
            })
            .chain(
                crate::source::discover::copy_of(files, format.copies)
                    .into_iter()
                    .map(|(i, kept)| (i, NotATranscript::CopyOf { kept: name(&kept) })),
            )
            .collect();
        // A file set aside for both reasons is listed once, with the first.
        set_aside.sort_by_key(|(i, _)| *i);
        set_aside.dedup_by_key(|(i, _)| *i);
        let aside: Vec<usize> = set_aside.iter().map(|(i, _)| *i).collect();
        copies.push(set_aside.into_iter().map(|(i, why)| (Arc::new(files.get(i)), why)).collect());
        let mut next_aside = aside.iter().copied().peekable();
        files.retain(|i| next_aside.next_if_eq(&i).is_none());
    }
    copies
}

/// Takes out of each format's `files` those that are another machine's copy of one of them (the
/// same path under its place, the same bytes: [`crate::source::machines::copies_across`]),
/// adding them to that format's `copies`; a path found on two machines with different bytes is a
/// warning. `machines` are the machines and the places searched.
pub(super) async fn set_aside_machines_copies(
    machines: (&crate::source::machines::Machines, &[std::path::PathBuf]),
    store: &Arc<dyn ObjectStore>,
    files: &mut [SourceFiles],
    copies: &mut [Copies],
    warnings: &mut Vec<String>,
) {
    let (machines, places) = machines;
    if !machines.any_labeled() {
        return;
    }
    for (files, copies) in files.iter_mut().zip(copies) {
        let all: Vec<SourceFile> = files.iter().collect();
        let found = crate::source::machines::copies_across(machines, places, &all, store).await;
        warnings.extend(found.warnings);
        if found.copies.is_empty() {
            continue;
        }
        let name = |p: &std::path::Path| crate::text::escape::path_text(p).into_owned();
        for (i, kept) in &found.copies {
            copies.push((Arc::new(all[*i].clone()), NotATranscript::CopyOf { kept: name(kept) }));
        }
        let mut next_aside = found.copies.iter().map(|(i, _)| *i).peekable();
        files.retain(|i| next_aside.next_if_eq(&i).is_none());
    }
}

/// Takes out of each format's `files` the copies restored from an archive whose live file is read
/// too (the path it was archived from, on the same machine, `.zst` or not): the live file holds
/// every line the archive has of it, and what it gained since. A restored copy whose live file
/// is gone (deleted, as Claude Code's cleanup does) stays.
pub(super) fn set_aside_restored(
    restored: &crate::source::restored::Restored,
    machines: &crate::source::machines::Machines,
    files: &mut [SourceFiles],
    copies: &mut [Copies],
) {
    use crate::source::restored::plain_name;
    if restored.is_empty() {
        return;
    }
    for (files, copies) in files.iter_mut().zip(copies) {
        let all: Vec<SourceFile> = files.iter().collect();
        let mut live: HashMap<(&str, String), usize> = HashMap::new();
        for (i, file) in all.iter().enumerate() {
            if restored.original_of(&file.path).is_none() {
                let path = crate::text::escape::path_text(file.canonical()).into_owned();
                live.insert((machines.of(&file.path), plain_name(&path).to_string()), i);
            }
        }
        let mut aside: Vec<usize> = Vec::new();
        for (i, file) in all.iter().enumerate() {
            let Some(original) = restored.original_of(&file.path) else { continue };
            if let Some(&kept) = live.get(&(machines.of(&file.path), plain_name(&original).to_string())) {
                let kept = crate::text::escape::path_text(&all[kept].path).into_owned();
                copies.push((Arc::new(file.clone()), NotATranscript::CopyOf { kept }));
                aside.push(i);
            }
        }
        let mut next_aside = aside.into_iter().peekable();
        files.retain(|i| next_aside.next_if_eq(&i).is_none());
    }
}

/// Gives each file more than one format claims to the one its content says: the one whose
/// description documents the types of the most of its first 16 lines ([`decide_by_content`]),
/// the first by rank on a tie or with nothing readable.
/// A file the cache knows unchanged for the format that holds it was decided when it was read.
pub(super) async fn decide_contested(
    formats: &[Format],
    discovery: &mut Discovery,
    cache: &mut InferenceCache,
    store: &Arc<dyn ObjectStore>,
    options: &ReadOptions,
) {
    let found = &*discovery;
    let contested: Vec<(usize, usize)> = found.contested().collect();
    if contested.is_empty() {
        return;
    }
    let wanted =
        |_, _, into: &mut Vec<Wanted>| {
            into.extend(contested.iter().enumerate().map(|(n, &(format, index))| Wanted {
                key: found.files[format].key(index),
                number: n as u32,
            }))
        };
    let mut same = vec![false; contested.len()];
    cache.find(1, wanted, false, |n, entry, of| {
        let (format, index) = contested[n as usize];
        if of == formats[format].name && entry.is_same(found.files[format].found_stamps(index)) {
            same[n as usize] = true;
        }
    });
    let undecided = contested.iter().zip(&same).filter(|(_, same)| !**same).map(|(&c, _)| c);
    let mut moves: Vec<(usize, usize, usize)> = futures::stream::iter(undecided)
        .map(|(format, index)| async move {
            let order = found.claimants(format, index);
            let candidates: Vec<&Format> = order.iter().map(|&i| &formats[i]).collect();
            let file = found.files[format].get(index);
            let chosen = decide_by_content(store.clone(), &candidates, &file, options.max_line_bytes).await;
            (format, index, order[chosen])
        })
        .buffer_unordered(options.parallel_files.max(1))
        .filter(|(from, _, to)| std::future::ready(from != to))
        .collect()
        .await;
    // Each list is rebuilt once, keeping the order of the files that stay.
    moves.sort_unstable();
    for from in 0..discovery.files.len() {
        let leaving: HashMap<usize, usize> =
            moves.iter().filter(|m| m.0 == from).map(|&(_, index, to)| (index, to)).collect();
        if leaving.is_empty() {
            continue;
        }
        let files = discovery.files[from].take_rows();
        for index in 0..files.len() {
            let to = leaving.get(&index).copied().unwrap_or(from);
            discovery.files[to].push_from(&files, index);
        }
    }
    // Decided: no file is contested any more.
    discovery.claimed_also.truncate(1);
    for files in &mut discovery.files {
        files.forget_claims();
    }
}
