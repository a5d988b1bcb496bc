//! A corpus: the transcript files found for every format, what the inference pass learned about
//! them, their tables, and the log of problems met while reading them.

pub(crate) use super::file_events::FileEvents;
use super::file_events::FileEventsBuilder;

use crate::format::Format;
use crate::infer::cache::{FileEntry, InferenceCache, Lookup, Wanted};
use crate::infer::pass::{
    NotATranscript, decide_by_content, first_line_of_type, infer_file, not_a_transcript,
};
use crate::infer::signature::{FileSummary, SignatureBytes, SignatureId, SignatureTable};
use crate::infer::stats::{FileStats, FormatStats};
use crate::source::discover::Discovery;
use crate::source::files::{PathHasher, SourceFile, SourceFiles, Stamps, path_key};
use crate::source::prefix::PrefixHash;
use crate::table::event_table::{EventTable, all_tables};
use futures::StreamExt;
use object_store::ObjectStore;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Settings of the reading.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// A longer line is reported in `errors` instead of read.
    pub max_line_bytes: usize,
    /// Files read at once by the inference pass (by default one a core).
    pub parallel_files: usize,
    /// Where the inference cache lives; `None` reads every file every time.
    pub cache_dir: Option<PathBuf>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self { max_line_bytes: 256 << 20, parallel_files: cores, cache_dir: None }
    }
}

/// One format's share of the corpus.
#[derive(Debug)]
pub struct FormatData {
    pub(crate) format: Format,
    /// Its transcripts, in path order.
    pub(crate) files: SourceFiles,
    /// For each transcript, its damaged lines.
    pub(crate) file_damage: FileDamage,
    /// For each transcript, its events by type (whole lines, and a whole cut-off last line): a
    /// scan of one type reads no other file, and one that needs no value of a line reads none.
    pub(crate) file_events: FileEvents,
    /// Files of its naming that hold no transcript (rupu step logs, netflow ledgers), each with
    /// why: listed in `files`, read by no other table.
    pub(crate) not_transcripts: Vec<(Arc<SourceFile>, NotATranscript)>,
    /// Every event table, then `events`, then `errors`.
    pub(crate) tables: Vec<Arc<EventTable>>,
    /// Each event table's index in `tables`, by its type as written (made when first asked).
    by_type: OnceLock<HashMap<String, usize, PathHasher>>,
    /// What the inference pass found of each type, over the transcripts: what `tables` were
    /// made from ([`crate::table::event_table::all_tables`]), so that a cluster's executor
    /// makes the same.
    pub(crate) stats: FormatStats,
}

impl FormatData {
    /// A format's share: its transcripts with what the inference pass found in each (in the same
    /// order, their shapes numbered in `shapes`), the files of its naming that are no
    /// transcripts, and its tables.
    pub fn new(
        format: Format,
        files: SourceFiles,
        summaries: &[&FileSummary],
        shapes: &SignatureTable,
        not_transcripts: Vec<(Arc<SourceFile>, NotATranscript)>,
        tables: Vec<Arc<EventTable>>,
        stats: FormatStats,
    ) -> FormatData {
        debug_assert_eq!(files.len(), summaries.len());
        let file_damage = FileDamage::of(summaries.iter().map(|s| s.damaged_lines));
        FormatData {
            format,
            file_events: FileEvents::new(summaries.iter().copied(), shapes),
            files,
            not_transcripts,
            tables,
            by_type: OnceLock::new(),
            file_damage,
            stats,
        }
    }

    /// A format's share made of what a scan sent to a cluster's executor carries: its files with
    /// their damage and events by type, and its tables.
    pub(crate) fn of_scan(
        format: Format,
        files: Vec<(SourceFile, u64)>,
        file_events: FileEvents,
        tables: Vec<Arc<EventTable>>,
        stats: FormatStats,
    ) -> FormatData {
        let (files, damage): (Vec<SourceFile>, Vec<u64>) = files.into_iter().unzip();
        let file_damage = FileDamage::of(damage);
        FormatData {
            format,
            files: SourceFiles::of(files),
            file_damage,
            file_events,
            not_transcripts: vec![],
            tables,
            by_type: OnceLock::new(),
            stats,
        }
    }

    /// The same format over only the transcripts that `keep` keeps.
    pub(crate) fn narrowed(&self, keep: impl Fn(&SourceFile) -> bool) -> FormatData {
        let kept: Vec<usize> = (0..self.files.len()).filter(|&i| keep(&self.files.get(i))).collect();
        let file_damage = FileDamage::of(kept.iter().map(|&i| self.file_damage.of_file(i)));
        FormatData {
            format: self.format.clone(),
            files: self.files.select(kept.iter().copied()),
            file_events: self.file_events.narrowed(&kept),
            file_damage,
            not_transcripts: vec![],
            tables: self.tables.clone(),
            by_type: OnceLock::new(),
            stats: self.stats.clone(),
        }
    }

    /// The transcripts that may hold rows of `table` (their indexes, in order): for one event
    /// type, those holding it.
    pub(crate) fn files_for(&self, table: &EventTable) -> Vec<u32> {
        match &table.rows {
            crate::table::event_table::Rows::Type(t) => {
                self.file_events.files_holding(t).map(|i| i as u32).collect()
            }
            _ => (0..self.files.len() as u32).collect(),
        }
    }

    /// The table this format's damaged lines are listed in.
    pub(crate) fn errors_table(&self) -> &'static str {
        self.format.lines_table.as_ref().map_or("errors", |l| l.errors_name)
    }

    pub(crate) fn table(&self, name: &str) -> Option<&Arc<EventTable>> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The event tables (one per type).
    pub(crate) fn type_tables(&self) -> impl Iterator<Item = &Arc<EventTable>> {
        self.tables.iter().filter(|t| matches!(t.rows, crate::table::event_table::Rows::Type(_)))
    }

    /// The event table of a type as written, for checking a line of any type (a hash lookup: a
    /// file may hold tens of thousands of types).
    pub(crate) fn type_table(&self, type_name: &str) -> Option<&Arc<EventTable>> {
        let by_type = self.by_type.get_or_init(|| {
            let mut by_type = HashMap::default();
            for (i, table) in self.tables.iter().enumerate() {
                if let crate::table::event_table::Rows::Type(t) = &table.rows {
                    by_type.insert(t.clone(), i);
                }
            }
            by_type
        });
        by_type.get(type_name).map(|&i| &self.tables[i])
    }
}

/// The damaged lines of a format's transcripts, kept for the few that have any.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileDamage(Vec<(usize, u64)>);

impl FileDamage {
    /// The damage of files that have `lines` damaged lines each, in order.
    fn of(lines: impl IntoIterator<Item = u64>) -> FileDamage {
        FileDamage(lines.into_iter().enumerate().filter(|&(_, n)| n > 0).collect())
    }

    /// Adds `lines` damaged lines of file `i`, which comes after those added before.
    fn add(&mut self, i: usize, lines: u64) {
        if lines > 0 {
            self.0.push((i, lines));
        }
    }

    /// The damaged lines of file `i`.
    pub(crate) fn of_file(&self, i: usize) -> u64 {
        self.0.binary_search_by_key(&i, |&(at, _)| at).map_or(0, |at| self.0[at].1)
    }

    /// The files with damaged lines, in order.
    pub(crate) fn damaged(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().map(|&(i, _)| i)
    }
}

/// What the files of one format read as: each file's summary taken as it comes (from the cache
/// in the order of its keys, from the reads in the order of the files), settled in the order of
/// the files at the end ([`Settled::finish`]). A file is a number here (four bytes: a million
/// files known to the cache hold no summary each).
struct Settled {
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

/// The files looked up in the cache at a time ([`InferenceCache::find`]).
const PER_LOOKUP: usize = 250_000;

/// A file of [`Settled`] with no summary.
const UNSETTLED: u32 = u32::MAX;

/// What the files of one format read as, in the order of the files ([`Settled::finish`]).
struct SettledFiles {
    /// The types over the transcripts, in the order their shapes were first met (the order in
    /// which their fields become columns).
    stats: FormatStats,
    /// For each file, whether it is a transcript.
    is_transcript: Vec<bool>,
    /// The transcripts' events by type, and their damage.
    file_events: FileEvents,
    damage: FileDamage,
    /// The files that are not transcripts, by index, with why.
    not_transcripts: Vec<(usize, NotATranscript)>,
}

impl Settled {
    fn new(files: usize) -> Settled {
        Settled {
            of_file: vec![UNSETTLED; files],
            lists: Vec::new(),
            number: HashMap::default(),
            odd: Vec::new(),
        }
    }

    /// Takes the summary of file `i`.
    fn set(&mut self, i: usize, summary: &FileSummary) {
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
    fn has(&self, i: usize) -> bool {
        self.of_file[i] != UNSETTLED
    }

    /// Settles the files in their order, their shapes numbered in `shapes`.
    fn finish(mut self, format: &Format, shapes: &SignatureTable) -> SettledFiles {
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

/// A problem met while reading, once per place.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Problem {
    /// A statement read this file and so skipped its damaged lines (as the inference pass counted
    /// them): how many, the format's schema and the table their damage is listed in.
    DamagedLines { file: PathBuf, lines: u64, schema: &'static str, errors_table: &'static str },
    /// A file that could not be read (whole or in part).
    UnreadableFile { file: PathBuf, why: String },
    /// A value that did not fit its column, read as null.
    NulledValue { file: PathBuf, line: u64, column: String },
    /// A file read, but not as it was found: replaced since, or cut shorter (how, said whole).
    ReadNote { file: PathBuf, note: String },
}

/// The problems met by the reads of one scan of one statement (the scan's plan node holds it),
/// each counted once however often met; or the corpus's log, which keeps the files that a scan
/// could not read (for export, which names them).
#[derive(Debug, Default)]
pub struct ProblemLog {
    seen: Mutex<HashSet<Problem>>,
    /// The corpus's log, which is told of the files not read too.
    corpus: Option<Arc<ProblemLog>>,
}

impl ProblemLog {
    /// The log of one scan, telling `corpus` of the files it could not read.
    pub(crate) fn of_scan(corpus: Arc<ProblemLog>) -> Self {
        Self { seen: Mutex::default(), corpus: Some(corpus) }
    }

    pub(crate) fn record(&self, problem: Problem) {
        if let (Some(corpus), Problem::UnreadableFile { .. } | Problem::ReadNote { .. }) =
            (&self.corpus, &problem)
        {
            corpus.record(problem.clone());
        }
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).insert(problem);
    }

    /// What was recorded so far, in a stable order.
    pub(crate) fn problems(&self) -> Vec<Problem> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut problems: Vec<Problem> = seen.iter().cloned().collect();
        problems.sort();
        problems
    }

    /// Takes what was recorded, leaving the log empty.
    pub fn take(&self) -> Vec<Problem> {
        let problems = self.problems();
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clear();
        problems
    }
}

/// Everything txq reads.
#[derive(Debug)]
pub struct Corpus {
    pub(crate) formats: Vec<Arc<FormatData>>,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) options: ReadOptions,
    pub problems: Arc<ProblemLog>,
    /// Non-fatal problems of discovery and inference.
    pub warnings: Vec<String>,
    /// The directories searched.
    pub(crate) searched: Vec<PathBuf>,
    /// Where its files were found: the places given (paths, or the default places found) and a
    /// stamp of what was found there.
    pub(crate) origin: Origin,
}

/// Where a corpus's files were found, so that another process (a cluster's scheduler) finds
/// the same: the places, the stamp of what was found, and the line limit it was read with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    pub(crate) places: Arc<[PathBuf]>,
    /// The working directory the places are relative to.
    pub(crate) cwd: PathBuf,
    /// A hash of every file found (path, size, times, version): two corpora of the same stamp
    /// found the same files as they were ([`Discovery::stamp`]); 0 for a part of them.
    pub(crate) stamp: u64,
    pub(crate) max_line_bytes: usize,
}

impl Corpus {
    /// Reads what `discovery` found once, to learn each format's tables.
    pub async fn open(formats: Vec<Format>, discovery: Discovery, options: ReadOptions) -> Corpus {
        let cache = Self::cache(&options, &discovery.searched);
        Self::open_with_cache(formats, discovery, options, cache).await
    }

    /// The inference cache `options` ask for, for the directories `searched`.
    pub(crate) fn cache(options: &ReadOptions, searched: &[PathBuf]) -> InferenceCache {
        options
            .cache_dir
            .as_deref()
            .map_or_else(InferenceCache::disabled, |dir| InferenceCache::load(dir, searched))
    }

    /// [`Corpus::open`] with the cache loaded already.
    pub(crate) async fn open_with_cache(
        formats: Vec<Format>,
        discovery: Discovery,
        options: ReadOptions,
        mut cache: InferenceCache,
    ) -> Corpus {
        Self::open_keeping(formats, discovery, options, &mut cache).await
    }

    /// [`Corpus::open_with_cache`], the cache kept for the next open (with what this one read
    /// remembered in it): a corpus opened again after its files grew reads only what was added.
    pub(crate) async fn open_keeping(
        formats: Vec<Format>,
        discovery: Discovery,
        options: ReadOptions,
        cache: &mut InferenceCache,
    ) -> Corpus {
        let store = crate::source::read::local_store();
        let mut discovery = discovery;
        let origin = Origin {
            places: std::mem::take(&mut discovery.given).into(),
            cwd: std::env::current_dir().unwrap_or_default(),
            stamp: discovery.stamp(),
            max_line_bytes: options.max_line_bytes,
        };
        let max = options.max_line_bytes;
        settle_contested(&formats, &mut discovery, cache, &store, &options).await;
        let mut warnings = std::mem::take(&mut discovery.warnings);
        let mut data = Vec::new();
        // A compressed copy beside its plain file is not read: the plain one is; nor is a copy
        // the format keeps elsewhere.
        let mut copies: Vec<Vec<(Arc<SourceFile>, NotATranscript)>> = Vec::new();
        for (format, files) in formats.iter().zip(&mut discovery.files) {
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
        // What the cache knows of every file, in one walk of it (deleted or moved files leave
        // it): files it knows unchanged need no read and no task, and those that may have grown
        // are read on from their known lines after a hash of them. A file is numbered among all
        // the formats' files, after the formats before it.
        let starts: Vec<usize> = discovery
            .files
            .iter()
            .scan(0, |start, files| Some(std::mem::replace(start, *start + files.len())))
            .collect();
        let mut settled: Vec<Settled> =
            discovery.files.iter().map(|files| Settled::new(files.len())).collect();
        let mut grown: Vec<Vec<(u32, FileEntry)>> = discovery.files.iter().map(|_| Vec::new()).collect();
        if cache.knows_any() {
            const ASIDE: u32 = u32::MAX;
            // A quarter of a million files' keys at a time (12 bytes each); each key is hashed
            // again for each range.
            let all: usize = discovery.files.iter().map(SourceFiles::len).sum();
            let parts = all.div_ceil(PER_LOOKUP).max(1) as u32;
            let files = &discovery.files;
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
        let remember = cache.is_enabled();
        // What a read found depends on the line limit: a line too long then may be read now.
        for ((((format, mut files), mut settled), mut grown), copies) in
            formats.into_iter().zip(discovery.files).zip(settled).zip(grown).zip(copies)
        {
            grown.sort_unstable_by_key(|(i, _)| *i);
            let (shapes, mut remembering) = cache.parts(format.name);
            // Room made at once (a million files' list grown a doubling at a time leaves copies of
            // itself resident).
            let mut unread: Vec<u32> =
                Vec::with_capacity((0..files.len()).filter(|&i| !settled.has(i)).count());
            unread.extend((0..files.len()).filter(|&i| !settled.has(i)).map(|i| i as u32));
            if remember && !unread.is_empty() {
                remembering.reserve(unread.len());
            }
            let format = Arc::new(format);
            let format_ref = &format;
            let (files_ref, grown_ref) = (&files, &grown);
            let mut reads = futures::stream::iter(unread.into_iter().map(|i| {
                let i = i as usize;
                let (store, file) = (store.clone(), Arc::new(files_ref.get(i)));
                let (key, stamps) = (files_ref.key(i), Stamps::of(&file));
                let known = grown_ref
                    .binary_search_by_key(&(i as u32), |(at, _)| *at)
                    .ok()
                    .map(|at| &grown_ref[at].1);
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
                    let (stats, fingerprint) =
                        read_file(store, format_ref.clone(), file, max, from, prefix).await;
                    (i, path, key, stamps, before, stats, fingerprint)
                }
            }))
            .buffered(options.parallel_files.max(1));
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
            drop(grown);
            let shapes = &*shapes;
            let SettledFiles { stats, is_transcript, file_events, damage, not_transcripts } =
                settled.finish(&format, shapes);
            let mut not_transcripts: Vec<(Arc<SourceFile>, NotATranscript)> =
                not_transcripts.into_iter().map(|(i, why)| (Arc::new(files.get(i)), why)).collect();
            warnings.extend(not_transcripts_warnings(&format, &not_transcripts));
            not_transcripts.extend(copies);
            let tables: Vec<Arc<EventTable>> =
                all_tables(&format, &stats).into_iter().map(Arc::new).collect();
            files.retain(|i| is_transcript[i]);
            let format = Arc::unwrap_or_clone(format);
            let format_data = FormatData {
                format,
                files,
                file_damage: damage,
                file_events,
                not_transcripts,
                tables,
                by_type: OnceLock::new(),
                stats,
            };
            warnings.extend(renamed_warnings(&store, &format_data, max).await);
            data.push(Arc::new(format_data));
        }
        match cache.save() {
            Ok(()) => {}
            Err(crate::error::Error::Write { path, source }) => {
                warnings.push(format!("{}: cache not saved: {source}", crate::text::escape::path(&path)));
            }
            Err(other) => warnings.push(format!("cache not saved: {other}")),
        }
        Corpus {
            formats: data,
            store,
            options,
            problems: Arc::new(ProblemLog::default()),
            warnings,
            searched: discovery.searched,
            origin,
        }
    }

    /// Where its files were found ([`Origin`]).
    pub(crate) fn origin(&self) -> Origin {
        self.origin.clone()
    }

    /// How many transcripts of all formats.
    pub fn transcripts(&self) -> usize {
        self.formats.iter().map(|f| f.files.len()).sum()
    }
}

/// The warnings for the files of a format's naming that are not its transcripts (each listed in
/// `files` with why): one for each that is not JSON Lines at all, one for all that lack the
/// required line (a step log or ledger beside every run would make a line each too many).
fn not_transcripts_warnings(format: &Format, skipped: &[(Arc<SourceFile>, NotATranscript)]) -> Vec<String> {
    let mut warnings: Vec<String> = skipped
        .iter()
        .filter(|(_, why)| matches!(why, NotATranscript::NotJsonLines { .. }))
        .map(|(file, why)| format!("{}: not read: {why}", crate::text::escape::path(&file.path)))
        .collect();
    let lacking: Vec<&(Arc<SourceFile>, NotATranscript)> =
        skipped.iter().filter(|(_, why)| matches!(why, NotATranscript::NoRequired { .. })).collect();
    if let Some((first, why)) = lacking.first() {
        let others = match lacking.len() {
            1 => String::new(),
            2 => " and 1 other file".to_string(),
            n => format!(" and {} other files", n - 1),
        };
        warnings.push(format!(
            "{}{others}: not read: {why}, so not {} transcripts (step logs or netflow ledgers?); \
             `select file, skipped from {}.files where not transcript` lists each with why",
            crate::text::escape::path(&first.path),
            format.name,
            format.name
        ));
    }
    warnings
}

/// A warning for each type found in the data whose table is named otherwise, naming the file and
/// line that brought the type in (the first [`MAX_RENAME_WARNINGS`]; one line counts the rest).
async fn renamed_warnings(
    store: &Arc<dyn ObjectStore>,
    data: &FormatData,
    max_line_bytes: usize,
) -> Vec<String> {
    let renamed: Vec<(&Arc<EventTable>, &String, &String)> = data
        .type_tables()
        .filter_map(|table| match (&table.renamed, &table.rows) {
            (Some(why), crate::table::event_table::Rows::Type(type_name)) => Some((table, why, type_name)),
            _ => None,
        })
        .collect();
    let mut warnings = Vec::new();
    for &(table, why, type_name) in renamed.iter().take(MAX_RENAME_WARNINGS) {
        let Some(file) = data.file_events.files_holding(type_name).next().map(|i| data.files.get(i)) else {
            continue;
        };
        let line = first_line_of_type(store.clone(), &data.format, &file, type_name, max_line_bytes).await;
        let place = match line {
            Some(line) => format!("{}:{line}", crate::text::escape::path(&file.path)),
            None => crate::text::escape::path(&file.path),
        };
        warnings.push(format!(
            "{place}: event type {} is table {}.{} ({why})",
            crate::text::escape::text(&serde_json::Value::String(type_name.clone()).to_string()),
            data.format.name,
            table.name
        ));
    }
    if renamed.len() > MAX_RENAME_WARNINGS {
        warnings.push(format!(
            "and {} more event types are tables of other names; `select table_name from \
             information_schema.tables where table_schema = '{}'` lists them",
            renamed.len() - MAX_RENAME_WARNINGS,
            data.format.name
        ));
    }
    warnings
}

/// Renamed types named one by one, each with its file and line (found by a read of that file);
/// the rest are counted in one more line.
const MAX_RENAME_WARNINGS: usize = 10;

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

/// Gives each file more than one format claims to the one its content says: the first whose
/// description documents its first line's type ([`decide_by_content`]), else the first by rank.
/// A file the cache knows unchanged for the format that holds it was decided when it was read.
async fn settle_contested(
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
