//! A corpus: the transcript files found for every format, what the inference pass learned about
//! them, their tables, and the log of problems met while reading them. It is read in one way
//! ([`Corpus::read`]), a step a module, in this order: [`find`] the files, give each to one
//! format ([`owners`]), take what the cache knows of them ([`known`]), read the rest ([`learn`]),
//! [`settle`] them in the order of the files, and make the [`tables`].

mod find;
mod known;
mod learn;
mod owners;
mod settle;
mod tables;

pub(crate) use super::file_events::FileEvents;
pub(crate) use find::{CacheToLoad, find, find_loading};

use crate::format::Format;
use crate::infer::cache::InferenceCache;
use crate::infer::pass::NotATranscript;
use crate::infer::signature::{FileSummary, SignatureTable};
use crate::infer::stats::FormatStats;
use crate::source::discover::Discovery;
use crate::source::files::{PathHasher, SourceFile, SourceFiles};
use crate::source::machines::Machines;
use crate::source::restored::Restored;
use crate::table::event_table::EventTable;
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
    /// Which machine each file is of: another machine's copy of a file is read once.
    pub machines: Machines,
    /// Where archives are restored: a restored file whose live file is read too is not read.
    pub restored: Restored,
}

impl Default for ReadOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            max_line_bytes: 256 << 20,
            parallel_files: cores,
            cache_dir: None,
            machines: Machines::default(),
            restored: Restored::default(),
        }
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
    /// Which machine each file is of (which files are another machine's copies).
    pub(crate) machines: Machines,
}

impl Corpus {
    /// Reads what `discovery` found once, to learn each format's tables (through the inference
    /// cache `options` ask for).
    pub async fn open(formats: Vec<Format>, discovery: Discovery, options: ReadOptions) -> Corpus {
        let load = CacheToLoad { dir: options.cache_dir.clone(), without: InferenceCache::disabled };
        let mut cache = load.load(&discovery.searched);
        Self::read(formats, discovery, options, &mut cache).await
    }

    /// The one way a corpus is read, a step a module: the files `discovery` found ([`find`]),
    /// each given to one format ([`owners`]); what `cache` knows of them ([`known`]); the rest
    /// read ([`learn`]) and settled in the order of the files ([`settle`]); then each format's
    /// tables ([`tables`]). The cache is saved, and kept for the next read with what this one
    /// learned remembered in it: a corpus read again after its files grew reads only what was
    /// added.
    pub(crate) async fn read(
        formats: Vec<Format>,
        mut discovery: Discovery,
        options: ReadOptions,
        cache: &mut InferenceCache,
    ) -> Corpus {
        let store = crate::source::read::local_store();
        let origin = Origin {
            places: std::mem::take(&mut discovery.given).into(),
            cwd: std::env::current_dir().unwrap_or_default(),
            stamp: discovery.stamp(),
            max_line_bytes: options.max_line_bytes,
            machines: options.machines.clone(),
        };
        owners::decide_contested(&formats, &mut discovery, cache, &store, &options).await;
        let mut warnings = std::mem::take(&mut discovery.warnings);
        let mut copies = owners::set_aside_copies(&formats, &mut discovery.files);
        let machines = (&options.machines, &*origin.places);
        owners::set_aside_machines_copies(machines, &store, &mut discovery.files, &mut copies, &mut warnings)
            .await;
        owners::set_aside_restored(&options.restored, &options.machines, &mut discovery.files, &mut copies);
        let (settled, grown) =
            known::known_from_cache(&formats, &discovery.files, &copies, cache, options.max_line_bytes);
        let mut data = Vec::new();
        for ((((format, files), mut settled), grown), copies) in
            formats.into_iter().zip(discovery.files).zip(settled).zip(grown).zip(copies)
        {
            // Shared with the reads while they run, the only holder again after them.
            let format = Arc::new(format);
            let read = learn::read_the_rest(&store, &options, &format, &files, &mut settled, grown, cache);
            warnings.extend(read.await);
            let (shapes, _) = cache.parts(format.name);
            let settled = settled.finish(&format, shapes);
            let format = Arc::unwrap_or_clone(format);
            let max = options.max_line_bytes;
            let format_data = tables::format_data(&store, format, files, settled, copies, max, &mut warnings);
            data.push(Arc::new(format_data.await));
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
