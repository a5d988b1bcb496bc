//! What every command that reads transcripts does before its own work, written once: the price
//! list chosen (its warnings told), the flags it refuses (`--follow` with nothing to follow,
//! `--cluster` for what runs on this machine), the places it reads (the default ones when none
//! are given), the session opened on them, and what the reading noticed, told on stderr.

use super::args::Args;
use crate::error::Error;
use crate::source::discover::default_paths;
use crate::sql::prices::PriceList;
use crate::sql::session::{Engine, LiveEngine, Places};
use crate::table::corpus::{Corpus, ReadOptions};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// The price list `--prices` (else `$TXQ_PRICES`) asks for, its warnings told on stderr; `None`
/// when neither is given (the built-in list stays).
pub(crate) fn prices(args: &Args) -> Result<Option<PriceList>, Error> {
    let prices =
        PriceList::chosen(args.prices.as_deref()).map_err(|e| Error::Usage(format!("--prices: {e}")))?;
    for warning in prices.iter().flat_map(|list| &list.warnings) {
        let _ = writeln!(std::io::stderr(), "txq: warning: {}", crate::text::escape::message(warning));
    }
    Ok(prices)
}

/// Refuses `--follow` for a command that has nothing to follow (`follows` false): it follows
/// the statement of `-e` or `-f`, or a canned query.
pub(crate) fn refuse_follow_unless(follows: bool, args: &Args) -> Result<(), Error> {
    match args.follow && !follows {
        true => Err(Error::Usage(
            "--follow follows the statement of -e or -f, or a canned query: txq --follow -e \"select ...\" [PATH...], txq query daily --follow".into(),
        )),
        false => Ok(()),
    }
}

/// Refuses `--cluster` for `what` (`txq export`, `--follow`, ...), which runs on this machine.
pub(crate) fn refuse_cluster_for(what: &str, args: &Args) -> Result<(), Error> {
    match &args.cluster {
        Some(url) => Err(Error::Usage(format!(
            "{what} runs on this machine: --cluster {url} runs the statements of -e, -f, the shell and txq query"
        ))),
        None => Ok(()),
    }
}

/// The session of a command that writes what it reads (`txq export`, `txq archive`, named
/// `what`): refused with `--follow` or `--cluster`, and when there is nothing to read (writing
/// nothing is a mistake); the reading's warnings told.
pub(crate) async fn engine_to_write(
    what: &str,
    args: &Args,
    paths: &[PathBuf],
    prices: Option<PriceList>,
) -> Result<Engine, Error> {
    refuse_follow_unless(false, args)?;
    refuse_cluster_for(what, args)?;
    let reading = Reading::new(args, paths, prices)?;
    let engine = reading.engine().await?;
    reading.tell(&engine.corpus, false);
    if engine.corpus.transcripts() == 0 {
        return Err(Error::Usage(reading.no_transcripts()));
    }
    Ok(engine)
}

/// What a command reads and how: its places, the paths found in them now, the reading and
/// memory options of its flags, and the prices its session prices with.
pub(crate) struct Reading<'a> {
    args: &'a Args,
    prices: Option<PriceList>,
    places: Places,
    /// The paths to read: those given, else the default places that exist.
    pub(crate) paths: Vec<PathBuf>,
    /// With no path given and no default place there, the places looked in.
    looked_in_defaults: Option<String>,
    options: crate::sql::session::Options,
    /// The places and options with each archive among the places restored, made once.
    restored: tokio::sync::OnceCell<WithArchives>,
}

/// A reading's places with each archive among them replaced by the folders it is restored in,
/// its machines labeled; the archives held restored while the reading lasts.
struct WithArchives {
    paths: Vec<PathBuf>,
    places: Places,
    options: crate::sql::session::Options,
    _archives: Vec<crate::archive::RestoredArchive>,
}

impl<'a> Reading<'a> {
    /// The reading of `args`' paths and `paths` (a subcommand's), else of the default places:
    /// with none there, the tables are there, empty (`select 1`, `prices` and the shell work,
    /// and a place that appears later is read by the shell's next statement).
    pub(crate) fn new(args: &'a Args, paths: &[PathBuf], prices: Option<PriceList>) -> Result<Self, Error> {
        let given: Vec<PathBuf> = args.paths.iter().chain(paths).cloned().collect();
        // A labeled place is read besides the paths given, or besides the default places.
        let mut labeled: Vec<PathBuf> = Vec::new();
        for label in args.label.iter().filter(|l| l.always) {
            if !labeled.contains(&label.place) && !given.contains(&label.place) {
                labeled.push(label.place.clone());
            }
        }
        let places = if given.is_empty() {
            let cwd =
                std::env::current_dir().map_err(|e| Error::Usage(format!("no working directory: {e}")))?;
            Places::Defaults { cwd, home: dirs::home_dir(), also: labeled }
        } else {
            Places::Given(given.into_iter().chain(labeled).collect())
        };
        let mut looked_in_defaults = None;
        let paths = match &places {
            Places::Given(paths) => paths.clone(),
            Places::Defaults { cwd, home, also } => {
                let mut paths = match default_paths(&crate::format::all(), cwd, home.as_deref()) {
                    Ok(paths) => paths,
                    Err(Error::NoDefaultPlace(looked)) if also.is_empty() => {
                        looked_in_defaults = Some(looked);
                        Vec::new()
                    }
                    Err(Error::NoDefaultPlace(_)) => Vec::new(),
                    Err(e) => return Err(e),
                };
                paths.extend(also.iter().cloned());
                paths
            }
        };
        let cache_dir = match args.no_cache {
            true => None,
            false => crate::infer::cache::InferenceCache::default_dir()?,
        };
        let memory = crate::sql::memory::MemoryOptions {
            limit: args.memory_limit.unwrap_or_else(crate::sql::memory::default_limit),
            spill_dir: args.spill_dir.clone(),
        };
        let labeled = args.label.iter().map(|l| (l.machine.clone(), l.place.clone())).collect();
        let machines =
            crate::source::machines::Machines::new(labeled, crate::source::machines::this_machine());
        let read =
            ReadOptions { max_line_bytes: args.max_line_bytes, cache_dir, machines, ..Default::default() };
        let options = crate::sql::session::Options { read, memory };
        Ok(Reading { args, prices, places, paths, looked_in_defaults, options, restored: Default::default() })
    }

    /// The places and options to open: each archive among the places (a folder or store prefix
    /// holding `_txq_archive.json`) restored in the cache and read through the folders of its
    /// machines, each labeled with its machine.
    async fn with_archives(&self) -> Result<&WithArchives, Error> {
        self.restored.get_or_try_init(|| async {
            let cache = self.options.read.cache_dir.clone();
            let mut restored: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
            let mut archives = Vec::new();
            let mut labels: Vec<(String, PathBuf)> = self.options.read.machines.labeled().to_vec();
            let mut roots = Vec::new();
            let given = match &self.places {
                Places::Given(paths) => paths.clone(),
                Places::Defaults { also, .. } => also.clone(),
            };
            for place in &given {
                if restored.contains_key(place) {
                    continue;
                }
                let Some(archive) = crate::archive::restore(place, cache.as_deref()).await? else { continue };
                if let Some(url) = &self.args.cluster {
                    return Err(Error::Usage(format!(
                        "{}: an archive is read on this machine: read it without --cluster {url}, or export it (txq export) for the cluster",
                        crate::text::escape::path(place)
                    )));
                }
                if !self.args.quiet {
                    for warning in &archive.warnings {
                        let _ = writeln!(std::io::stderr(), "txq: warning: {}", crate::text::escape::message(warning));
                    }
                }
                labels.retain(|(_, labeled)| labeled != place);
                labels.extend(archive.machines.iter().cloned());
                roots.push(archive.root.clone());
                restored.insert(place.clone(), archive.machines.iter().map(|(_, folder)| folder.clone()).collect());
                archives.push(archive);
            }
            let swap = |paths: &[PathBuf]| -> Vec<PathBuf> {
                paths.iter().flat_map(|p| restored.get(p).cloned().unwrap_or_else(|| vec![p.clone()])).collect()
            };
            let paths = swap(&self.paths);
            let places = match &self.places {
                Places::Given(given) => Places::Given(swap(given)),
                Places::Defaults { cwd, home, also } => Places::Defaults { cwd: cwd.clone(), home: home.clone(), also: swap(also) },
            };
            let mut options = self.options.clone();
            if !archives.is_empty() {
                let here = options.read.machines.here().to_string();
                options.read.machines = crate::source::machines::Machines::new(labels, here);
                options.read.restored = crate::source::restored::Restored::new(roots);
            }
            Ok(WithArchives { paths, places, options, _archives: archives })
        })
        .await
    }

    /// A session over the files as they are now, with the prices, on the cluster of
    /// `--cluster` when it is given.
    pub(crate) async fn engine(&self) -> Result<Engine, Error> {
        let open = self.with_archives().await?;
        let mut engine = crate::sql::session::open(&open.paths, open.options.clone()).await?;
        if let Some(prices) = &self.prices {
            crate::sql::prices::register(&engine.ctx, prices).map_err(Error::Sql)?;
        }
        if let Some(url) = &self.args.cluster {
            engine.ctx = crate::cluster::connect(engine.ctx.clone(), url).await?;
        }
        Ok(engine)
    }

    /// A session that takes in what changes in the places (the shell's, `--follow`'s), with the
    /// prices, on the cluster of `--cluster` when it is given.
    pub(crate) async fn live(&self) -> Result<LiveEngine, Error> {
        let open = self.with_archives().await?;
        let mut live = LiveEngine::open(open.places.clone(), open.options.clone()).await?;
        if let Some(prices) = &self.prices {
            crate::sql::prices::register(&live.engine.ctx, prices).map_err(Error::Sql)?;
        }
        if let Some(url) = &self.args.cluster {
            live.engine.ctx = crate::cluster::connect(live.engine.ctx.clone(), url).await?;
        }
        Ok(live)
    }

    /// Tells on stderr (unless `-q`) the warnings of the reading, and with `note` a note when
    /// there was nothing to read (the tables are empty).
    pub(crate) fn tell(&self, corpus: &Corpus, note: bool) {
        if self.args.quiet {
            return;
        }
        let mut stderr = std::io::stderr();
        for warning in &corpus.warnings {
            let _ = writeln!(stderr, "txq: warning: {}", crate::text::escape::message(warning));
        }
        if note && corpus.transcripts() == 0 {
            let _ = writeln!(
                stderr,
                "txq: note: {}; the tables are empty",
                crate::text::escape::message(&self.no_transcripts())
            );
        }
    }

    /// What to say when there is nothing to read: the default places looked in, or each path
    /// given once and what was looked for there.
    pub(crate) fn no_transcripts(&self) -> String {
        if let Some(looked) = &self.looked_in_defaults {
            return format!("no transcripts given and none found in the default places: looked in {looked}");
        }
        let mut places: Vec<String> = Vec::new();
        for path in &self.paths {
            let path = crate::text::escape::path(path);
            if !places.contains(&path) {
                places.push(path);
            }
        }
        format!(
            "no transcripts in {}: looked for {}",
            places.join(", "),
            crate::format::looked_for(&crate::format::all())
        )
    }
}
