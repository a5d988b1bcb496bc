//! Opening a corpus, fifth step: what the files of one format read as, each file's summary
//! taken as it comes (from the cache, then from the reads), settled in the order of the files at
//! the end: which are transcripts, their events by type and damage, and the types over them.

use super::FileDamage;
use crate::format::Format;
use crate::infer::pass::{NotATranscript, not_a_transcript};
use crate::infer::signature::{FileSummary, SignatureBytes, SignatureId, SignatureTable};
use crate::infer::stats::FormatStats;
use crate::table::file_events::{FileEvents, FileEventsBuilder};
use std::collections::HashMap;

/// What the files of one format read as: each file's summary taken as it comes (from the cache
/// in the order of its keys, from the reads in the order of the files), settled in the order of
/// the files at the end ([`Settled::finish`]). A file is a number here (four bytes: a million
/// files known to the cache hold no summary each).
pub(super) struct Settled {
    /// For each file, the number of its shapes with their events among `lists` (`UNSETTLED` for
    /// none yet, or a file not read).
    of_file: Vec<u32>,
    /// Each distinct list once.
    lists: Vec<SignatureBytes>,
    number: HashMap<SignatureBytes, u32, foldhash::fast::RandomState>,
    /// The damaged lines and lines of the files (by index) that have damaged lines or hold no
    /// event: the few whose verdict or damage needs them.
    odd: Vec<(u32, u64, u64)>,
}

/// A file of [`Settled`] with no summary.
const UNSETTLED: u32 = u32::MAX;

/// What the files of one format read as, in the order of the files ([`Settled::finish`]).
pub(super) struct SettledFiles {
    /// The types over the transcripts, in the order their shapes were first met (the order in
    /// which their fields become columns).
    pub(super) stats: FormatStats,
    /// For each file, whether it is a transcript.
    pub(super) is_transcript: Vec<bool>,
    /// The transcripts' events by type, and their damage.
    pub(super) file_events: FileEvents,
    pub(super) damage: FileDamage,
    /// The files that are not transcripts, by index, with why.
    pub(super) not_transcripts: Vec<(usize, NotATranscript)>,
}

impl Settled {
    pub(super) fn new(files: usize) -> Settled {
        Settled {
            of_file: vec![UNSETTLED; files],
            lists: Vec::new(),
            number: HashMap::default(),
            odd: Vec::new(),
        }
    }

    /// Takes the summary of file `i`.
    pub(super) fn set(&mut self, i: usize, summary: &FileSummary) {
        let lists = &mut self.lists;
        let number = *self.number.entry(summary.signature_bytes()).or_insert_with_key(|list| {
            lists.push(list.clone());
            (lists.len() - 1) as u32
        });
        self.of_file[i] = number;
        if summary.damaged_lines > 0 || summary.holds_no_event() {
            self.odd.push((i as u32, summary.damaged_lines, summary.lines));
        }
    }

    /// Whether file `i` has its summary.
    pub(super) fn has(&self, i: usize) -> bool {
        self.of_file[i] != UNSETTLED
    }

    /// Settles the files in their order, their shapes numbered in `shapes`.
    pub(super) fn finish(mut self, format: &Format, shapes: &SignatureTable) -> SettledFiles {
        self.odd.sort_unstable_by_key(|&(i, ..)| i);
        let mut odd = self.odd.iter().peekable();
        let mut shape_events: Vec<u64> = Vec::new();
        let mut shape_met: Vec<bool> = Vec::new();
        let mut shape_order: Vec<SignatureId> = Vec::new();
        let mut is_transcript = vec![false; self.of_file.len()];
        let mut events = FileEventsBuilder::with_capacity(self.of_file.len());
        let mut damage = FileDamage::default();
        let (mut transcripts, mut not_transcripts) = (0, Vec::new());
        for (i, &list) in self.of_file.iter().enumerate() {
            let Some(list) = self.lists.get(list as usize) else { continue };
            let (damaged, lines) = match odd.next_if(|&&(at, ..)| at as usize <= i) {
                Some(&(at, damaged, lines)) if at as usize == i => (damaged, lines),
                _ => (0, 0),
            };
            let summary = FileSummary::of_signature(list, damaged, lines);
            if let Some(why) = not_a_transcript(format, &summary, shapes) {
                not_transcripts.push((i, why));
                continue;
            }
            for (id, events) in summary.shapes() {
                let at = id as usize;
                if at >= shapes.len() {
                    continue;
                }
                if at >= shape_events.len() {
                    shape_events.resize(at + 1, 0);
                    shape_met.resize(at + 1, false);
                }
                if !std::mem::replace(&mut shape_met[at], true) {
                    shape_order.push(id);
                }
                shape_events[at] += events;
            }
            events.push(&summary);
            damage.add(transcripts, damaged);
            transcripts += 1;
            is_transcript[i] = true;
        }
        let mut stats = FormatStats::default();
        for id in shape_order {
            if let Some(shape) = shapes.get(id) {
                stats.add_type(&shape.name, &shape.fields, shape_events[id as usize], true);
            }
        }
        SettledFiles { stats, is_transcript, file_events: events.finish(shapes), damage, not_transcripts }
    }
}
