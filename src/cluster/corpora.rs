//! The corpora a scheduler plans over: found again from the places a client's plan names (its
//! tables are names, not files), each kept for the scans of the same statement and the
//! statements after it while the client finds the same files, and read through an inference
//! cache kept in memory, so that a search again reads only what is new.

use crate::scan::ScanTable;
use crate::scan::files_table::FilesTable;
use crate::table::corpus::{Corpus, Origin, ReadOptions};
use datafusion::catalog::TableProvider;
use datafusion::error::{DataFusionError, Result};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Corpora kept, the newest last.
const KEPT: usize = 4;

#[derive(Default)]
struct Corpora {
    /// By the origin a client's plan named (its stamp is of what the client found).
    kept: Vec<(Origin, Arc<Corpus>)>,
    /// One inference cache per set of places and line limit.
    caches: HashMap<(Arc<[PathBuf]>, usize), crate::infer::cache::InferenceCache>,
}

fn corpora() -> &'static Mutex<Corpora> {
    static CORPORA: std::sync::OnceLock<Mutex<Corpora>> = std::sync::OnceLock::new();
    CORPORA.get_or_init(Mutex::default)
}

/// The corpus of `origin`, found and read on first use.
pub(crate) fn corpus(origin: &Origin) -> Result<Arc<Corpus>> {
    // One search at a time: the scans of one statement wait for the first one's.
    let mut corpora = corpora().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, corpus)) = corpora.kept.iter().find(|(o, _)| o == origin) {
        return Ok(corpus.clone());
    }
    let key = (origin.places.clone(), origin.max_line_bytes);
    let mut cache =
        corpora.caches.remove(&key).unwrap_or_else(crate::infer::cache::InferenceCache::in_memory);
    let opened = block_on(|| open(origin, &mut cache));
    corpora.caches.insert(key, cache);
    let corpus = Arc::new(opened?);
    corpora.kept.push((origin.clone(), corpus.clone()));
    if corpora.kept.len() > KEPT {
        corpora.kept.remove(0);
    }
    Ok(corpus)
}

/// Searches the places of `origin` and reads what is there. A relative place is the client's:
/// searched in the client's working directory, its files named as the client names them.
async fn open(origin: &Origin, cache: &mut crate::infer::cache::InferenceCache) -> Result<Corpus> {
    let formats = crate::format::all();
    let relative = |p: &PathBuf| p.is_relative() && !crate::source::remote::is_remote(p);
    let searched: Vec<PathBuf> =
        origin.places.iter().map(|p| if relative(p) { origin.cwd.join(p) } else { p.clone() }).collect();
    let mut discovery = crate::table::corpus::find(&formats, &searched)
        .await
        .map_err(|e| DataFusionError::Execution(format!("the scheduler cannot search the places: {e}")))?;
    let renamed: Vec<(&PathBuf, &PathBuf)> =
        origin.places.iter().zip(&searched).filter(|(place, _)| relative(place)).collect();
    if !renamed.is_empty() {
        for files in &mut discovery.files {
            *files = crate::source::files::SourceFiles::of(files.iter().map(|mut file| {
                if let Some((place, below)) =
                    renamed.iter().find_map(|(place, root)| Some((place, file.path.strip_prefix(root).ok()?)))
                {
                    file.path = place.join(below);
                }
                file
            }));
        }
    }
    let options = ReadOptions {
        max_line_bytes: origin.max_line_bytes,
        machines: origin.machines.clone(),
        ..ReadOptions::default()
    };
    Ok(Corpus::read(formats, discovery, options, cache).await)
}

/// Runs the future `make` makes to its end, from code that cannot wait (a codec's decode): on a
/// runtime of its own, from a thread of its own. The scheduler's runtime may be waiting on this
/// decode in every one of its workers; the search (the listing of a store, the reads of the
/// inference pass) must not need them.
fn block_on<F: std::future::Future>(make: impl FnOnce() -> F + Send) -> F::Output
where
    F::Output: Send,
{
    static SEARCH: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let runtime = SEARCH.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("txq-search")
            .enable_all()
            .build()
            .expect("a runtime for the scheduler's searches")
    });
    std::thread::scope(|scope| {
        let run = scope.spawn(move || runtime.block_on(make()));
        match run.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Table `table` of the format of id `format`, over the corpus of `origin`.
pub(crate) fn event_table(origin: &Origin, format: &str, table: &str) -> Result<Arc<dyn TableProvider>> {
    let corpus = corpus(origin)?;
    let data = data_of(&corpus, format)?;
    let found = data.table(table).ok_or_else(|| {
        DataFusionError::Execution(format!(
            "{}.{table}: no such table in the transcripts the scheduler found; run the statement again",
            data.format.name
        ))
    })?;
    Ok(Arc::new(ScanTable::new(&corpus, &data, found)))
}

/// The `files` table of the format of id `format`, over the corpus of `origin`.
pub(crate) fn files_table(origin: &Origin, format: &str) -> Result<Arc<dyn TableProvider>> {
    let corpus = corpus(origin)?;
    Ok(Arc::new(FilesTable::new(data_of(&corpus, format)?, corpus.origin())?))
}

fn data_of(corpus: &Corpus, format: &str) -> Result<Arc<crate::table::corpus::FormatData>> {
    corpus.formats.iter().find(|d| d.format.id == format).cloned().ok_or_else(|| {
        DataFusionError::Internal(format!("no format {format:?} in this txq (another version?)"))
    })
}
