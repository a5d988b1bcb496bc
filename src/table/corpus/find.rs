//! Opening a corpus, first step: the files under the places, found off the async workers (a walk
//! of a million files holds none, so Ctrl-C and the progress line stay live during it), with the
//! inference cache loaded beside the walk when the caller keeps none from an earlier open.

use crate::error::Result;
use crate::format::Format;
use crate::infer::cache::InferenceCache;
use crate::source::discover::Discovery;
use std::path::PathBuf;

/// The inference cache a first open loads: the one in `dir` for the directories searched, else
/// `without` (a cache that remembers nothing, or one kept in memory that a later open reads on
/// from). A load that panicked gives `without` too.
#[derive(Debug, Clone)]
pub(crate) struct CacheToLoad {
    pub(crate) dir: Option<PathBuf>,
    pub(crate) without: fn() -> InferenceCache,
}

impl CacheToLoad {
    /// The cache for the directories `searched`.
    pub(crate) fn load(&self, searched: &[PathBuf]) -> InferenceCache {
        match &self.dir {
            Some(dir) => InferenceCache::load(dir, searched),
            None => (self.without)(),
        }
    }
}

/// The files under `paths` (the remote places listed first), each given to the format that
/// claims it.
pub(crate) async fn find(formats: &[Format], paths: &[PathBuf]) -> Result<Discovery> {
    crate::source::discover::discover_all(formats, paths).await
}

/// [`find`], with `cache` loaded while the walk runs (its file is named after the directories
/// searched, known once the remote places are listed).
pub(crate) async fn find_loading(
    formats: &[Format],
    paths: &[PathBuf],
    cache: CacheToLoad,
) -> Result<(Discovery, InferenceCache)> {
    let listings = crate::source::remote::list_all(paths).await?;
    let searched: Vec<PathBuf> = paths
        .iter()
        .filter(|p| {
            listings.get(*p).map_or_else(|| std::fs::metadata(p).is_ok_and(|m| m.is_dir()), |l| !l.is_object)
        })
        .cloned()
        .collect();
    let without = cache.without;
    let load = move || cache.load(&searched);
    let (discovery, cache) = match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let loading = runtime.spawn_blocking(load);
            let discovery = crate::source::discover::discover_apart(formats, paths, listings).await;
            (discovery, loading.await.ok())
        }
        // With no runtime, no worker to keep free.
        Err(_) => (crate::source::discover::discover_listed(formats, paths, &listings), Some(load())),
    };
    Ok((discovery?, cache.unwrap_or_else(without)))
}
