//! The SQL session over a corpus: a schema per format holding its tables and views, a default
//! schema where unqualified names find the format that has the table, and the JSON functions; and
//! the engines over it: [`Engine`] (a corpus and its session, [`open`]) and [`LiveEngine`] (read
//! again when the files change).

use crate::infer::cache::InferenceCache;
use crate::scan::ScanTable;
use crate::scan::files_table::FilesTable;
use crate::sql::memory::MemoryOptions;
use crate::sql::planned_on_use::{PlannedOnUse, view_table};
use crate::table::corpus::{CacheToLoad, Corpus, FormatData, ReadOptions};
use async_trait::async_trait;
use datafusion::catalog::view::ViewTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::collections::HashSet;
use std::sync::Arc;

/// The catalog every schema lives in.
pub(crate) const CATALOG: &str = "datafusion";
/// The schema unqualified names resolve in.
pub(crate) const DEFAULT_SCHEMA: &str = "public";

/// A session whose tables are the corpus's, its statements held to the corpus's memory limit.
pub async fn session(corpus: &Corpus, memory: &MemoryOptions) -> Result<SessionContext> {
    let config = SessionConfig::new()
        .with_information_schema(true)
        .with_default_catalog_and_schema(CATALOG, DEFAULT_SCHEMA);
    let config = crate::sql::memory::with_limits(config, memory);
    let runtime = crate::sql::memory::runtime(memory)?;
    let mut ctx = SessionContext::new_with_config_rt(config, runtime);
    datafusion_functions_json::register_all(&mut ctx)?;
    ctx.register_udwf(crate::sql::blocks::window_function());
    ctx.register_udwf(crate::sql::session_root::window_function());
    ctx.register_udf(crate::sql::repository_root::scalar_function());
    // The prices before the tables (the normalized views price their calls with `call_cost`);
    // the `prices` table again after them, in the default schema they make.
    crate::sql::prices::register_built_in(&ctx)?;
    register_corpus(&ctx, corpus, Arc::new(MemorySchemaProvider::new())).await?;
    crate::sql::prices::register_table(&ctx)?;
    Ok(ctx)
}

/// Makes the tables of `ctx` those of `corpus` again, after the corpus was read anew (files
/// grew, came or went): the tables and views made in the session, the prices and the settings
/// stay; views made in the session are planned again over the new tables.
pub(crate) async fn refresh(ctx: &SessionContext, corpus: &Corpus) -> Result<()> {
    let own = ctx
        .catalog(CATALOG)
        .and_then(|c| c.schema(DEFAULT_SCHEMA))
        .and_then(|s| s.downcast_ref::<MergedSchema>().map(|m| m.own.clone()))
        .unwrap_or_default();
    register_corpus(ctx, corpus, own.clone()).await?;
    // A view holds the plan it was made with, and so the tables of then: planned again from its
    // text (a view whose text is not kept, or no longer plans, is left as it was).
    for name in own.table_names() {
        let Some(table) = own.table(&name).await? else { continue };
        let Some(view) = table.downcast_ref::<ViewTable>() else { continue };
        let Some(sql) = view.definition().cloned() else { continue };
        if let Ok(plan) = view_plan(ctx, &sql).await {
            own.deregister_table(&name)?;
            own.register_table(name, Arc::new(ViewTable::new(plan, Some(sql))))?;
        }
    }
    Ok(())
}

/// The plan of a view's query, from the text a view keeps: `create view v as QUERY` or QUERY.
async fn view_plan(ctx: &SessionContext, sql: &str) -> Result<datafusion::logical_expr::LogicalPlan> {
    use datafusion::logical_expr::{DdlStatement, LogicalPlan};
    let plan = ctx.state().create_logical_plan(sql).await?;
    Ok(match plan {
        LogicalPlan::Ddl(DdlStatement::CreateView(create)) => Arc::unwrap_or_clone(create.input),
        plan => plan,
    })
}

/// Registers the schemas of `corpus`'s formats in `ctx`, and the default schema over them with
/// `own` (the tables made in the session) first.
async fn register_corpus(
    ctx: &SessionContext,
    corpus: &Corpus,
    own: Arc<MemorySchemaProvider>,
) -> Result<()> {
    // The scans read through DataFusion's object-store registry: the corpus's store serves file://.
    let local = datafusion::execution::object_store::ObjectStoreUrl::local_filesystem();
    ctx.register_object_store(local.as_ref(), corpus.store.clone());
    let catalog =
        ctx.catalog(CATALOG).ok_or_else(|| DataFusionError::Internal(format!("no catalog {CATALOG}")))?;

    // Formats sharing a schema name (reeval and its raw parts) share one schema.
    let mut schemas: Vec<(&'static str, bool, Arc<PlannedOnUse>, HashSet<String>)> = Vec::new();
    for data in &corpus.formats {
        let name = data.format.name;
        let found = data.type_tables().filter(|t| !t.documented).map(|t| t.name.clone());
        let schema = match schemas.iter_mut().find(|(n, ..)| *n == name) {
            Some((_, has_data, schema, found_names)) => {
                *has_data |= !data.files.is_empty();
                found_names.extend(found);
                schema.clone()
            }
            None => {
                let schema = Arc::new(PlannedOnUse::new());
                catalog.register_schema(name, schema.clone())?;
                schemas.push((name, !data.files.is_empty(), schema.clone(), found.collect()));
                schema
            }
        };
        fill_schema(ctx, corpus, data, &schema)?;
    }
    // The normalized tables: every format's rows of each, whatever schema answers what; each view
    // planned when a statement first names it.
    let normalized = Arc::new(PlannedOnUse::new());
    // Formats with no transcripts have no rows to give: left out, a statement plans less.
    let mut each_schema: Vec<&crate::format::Format> = Vec::new();
    let has_rows = |name: &str| corpus.formats.iter().any(|d| d.format.name == name && !d.files.is_empty());
    for data in corpus.formats.iter().filter(|d| has_rows(d.format.name)) {
        if !each_schema.iter().any(|f| f.name == data.format.name) {
            each_schema.push(&data.format);
        }
    }
    for (name, sql) in crate::sql::normalized::views(&each_schema, &corpus.options.machines) {
        if name == crate::format::Normalized::Sessions.name() {
            // `git_commits`: the repositories of the sessions' projects, read when scanned.
            let commits = |plan, _sql| -> Arc<dyn TableProvider> {
                Arc::new(crate::sql::git_commits::GitCommits::new(plan))
            };
            normalized.add_view(ctx, None, crate::sql::git_commits::NAME, sql.clone(), commits);
        }
        normalized.add_view(ctx, None, name, sql, view_table);
    }
    // Each format's schema holds its own rows of them too (`claude.sessions`).
    for (name, _, schema, _) in &schemas {
        let same: Vec<&crate::format::Format> =
            corpus.formats.iter().map(|d| &d.format).filter(|f| f.name == *name).collect();
        for (table, sql) in crate::sql::normalized::own_views(&same, &corpus.options.machines) {
            schema.add_view(ctx, None, table, sql, view_table);
        }
    }
    // Formats with transcripts answer unqualified names first, each group in the formats' order.
    schemas.sort_by_key(|(_, has_data, ..)| !*has_data);
    let formats = schemas
        .into_iter()
        .map(|(_, has_data, schema, found)| FormatSchema { schema, found, has_data })
        .collect();
    catalog.register_schema(DEFAULT_SCHEMA, Arc::new(MergedSchema { own, normalized, formats }))?;
    Ok(())
}

/// Registers a format's tables, its `files` table and its views in `schema`.
fn fill_schema(
    ctx: &SessionContext,
    corpus: &Corpus,
    data: &Arc<FormatData>,
    schema: &PlannedOnUse,
) -> Result<()> {
    for table in &data.tables {
        schema.add_table(table.name.clone(), Arc::new(ScanTable::new(corpus, data, table)))?;
    }
    if data.format.lines_table.is_some() {
        return Ok(());
    }
    schema.add_table("files".into(), Arc::new(FilesTable::new(data.clone(), corpus.origin())?))?;
    // A view's table names resolve in its own format's schema.
    for view in &data.format.views {
        schema.add_view(ctx, Some(data.format.name), view.name, view.sql.to_string(), view_table);
    }
    Ok(())
}

/// One format's schema, as the default schema sees it.
#[derive(Debug)]
struct FormatSchema {
    schema: Arc<PlannedOnUse>,
    /// Its tables of types found in the data that no document names.
    found: HashSet<String>,
    /// Whether it has transcripts.
    has_data: bool,
}

/// The default schema: tables created in the session, then the tables of the formats that have
/// transcripts, then the others'; within each, the tables a format defines before the tables of
/// types found in the data (an unknown type of one format never hides a table another format
/// with transcripts defines: `tool` is reeval's even where rupu transcripts hold a `tool` type).
#[derive(Debug)]
struct MergedSchema {
    own: Arc<MemorySchemaProvider>,
    /// `calls`, `tool_calls`, `sessions`: every format's rows ([`crate::sql::normalized`]).
    normalized: Arc<PlannedOnUse>,
    formats: Vec<FormatSchema>,
}

impl MergedSchema {
    /// The format schemas holding `name`, in the order they answer it.
    fn holders<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Arc<PlannedOnUse>> + 'a {
        let group = move |has_data: bool, found: bool| {
            self.formats.iter().filter(move |f| f.has_data == has_data && f.found.contains(name) == found)
        };
        (group(true, false).chain(group(true, true)))
            .chain(group(false, false).chain(group(false, true)))
            .map(|f| &f.schema)
            .filter(move |s| s.table_exist(name))
    }
}

#[async_trait]
impl SchemaProvider for MergedSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.own.table_names();
        for name in self.normalized.table_names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        for format in &self.formats {
            for name in format.schema.table_names() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.own.table(name).await? {
            return Ok(Some(table));
        }
        if let Some(table) = self.normalized.table(name).await? {
            return Ok(Some(table));
        }
        match self.holders(name).next() {
            Some(schema) => schema.table(name).await,
            None => Ok(None),
        }
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        self.own.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.own.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.own.table_exist(name) || self.normalized.table_exist(name) || self.holders(name).next().is_some()
    }
}

/// A corpus and a session over it: what `txq` works with.
pub struct Engine {
    pub corpus: Corpus,
    pub ctx: SessionContext,
    /// What the session's statements may hold (and any other session over the corpus's files).
    pub memory: MemoryOptions,
}

/// How a corpus is read, and what the statements of a session over it may hold.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub read: ReadOptions,
    pub memory: MemoryOptions,
}

impl From<ReadOptions> for Options {
    fn from(read: ReadOptions) -> Self {
        Options { read, memory: MemoryOptions::default() }
    }
}

/// Finds the transcripts under `paths`, reads them once to learn their tables, and opens a session.
pub async fn open(paths: &[std::path::PathBuf], options: impl Into<Options>) -> crate::error::Result<Engine> {
    let Options { read: options, memory } = options.into();
    let formats = crate::format::all();
    let load = CacheToLoad { dir: options.cache_dir.clone(), without: InferenceCache::disabled };
    let (discovery, mut cache) = crate::table::corpus::find_loading(&formats, paths, load).await?;
    let corpus = Corpus::read(formats, discovery, options, &mut cache).await;
    let ctx = session(&corpus, &memory).await?;
    Ok(Engine { corpus, ctx, memory })
}

/// Where transcripts are looked for: the paths given, or every format's default places that
/// exist (looked at again each time: a place may appear once an agent first runs).
#[derive(Debug, Clone)]
pub enum Places {
    Given(Vec<std::path::PathBuf>),
    /// The default places, and `also` (labeled places read besides them).
    Defaults {
        cwd: std::path::PathBuf,
        home: Option<std::path::PathBuf>,
        also: Vec<std::path::PathBuf>,
    },
}

impl Places {
    /// The paths to walk now, and a note for each given path that is gone (left out until it is
    /// back).
    pub(crate) fn paths(&self) -> (Vec<std::path::PathBuf>, Vec<String>) {
        match self {
            Places::Given(paths) => {
                let (there, gone): (Vec<_>, Vec<_>) = paths.iter().cloned().partition(|p| {
                    crate::source::remote::is_remote(p) || std::fs::symlink_metadata(p).is_ok()
                });
                let notes = gone
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: no such file or directory; left out until it is back",
                            crate::text::escape::path(p)
                        )
                    })
                    .collect();
                (there, notes)
            }
            Places::Defaults { cwd, home, also } => {
                let formats = crate::format::all();
                let mut paths = crate::source::discover::default_paths(&formats, cwd, home.as_deref())
                    .unwrap_or_default();
                paths.extend(also.iter().cloned());
                (paths, vec![])
            }
        }
    }
}

/// An engine that takes in what changed on disk since it was opened: before each statement a
/// walk of the places (no file is opened) tells whether any file grew, shrank, was rewritten,
/// came or went; if one did, the corpus is read again, from the cache kept in memory (a grown
/// file is read on from its known whole lines, an unchanged one not at all) and the session's
/// tables are made anew over it.
pub struct LiveEngine {
    pub engine: Engine,
    places: Places,
    options: crate::table::corpus::ReadOptions,
    cache: InferenceCache,
    /// The paths walked last, and the stamp of what the walk found
    /// ([`crate::source::discover::Discovery::stamp`]).
    walked: Vec<std::path::PathBuf>,
    found: u64,
}

impl LiveEngine {
    /// Opens the engine over what `places` hold now.
    pub async fn open(places: Places, options: impl Into<Options>) -> crate::error::Result<LiveEngine> {
        let Options { read: options, memory } = options.into();
        // A path given that is not there is an error at the start, and left out later.
        let paths = match &places {
            Places::Given(paths) => paths.clone(),
            Places::Defaults { .. } => places.paths().0,
        };
        let formats = crate::format::all();
        // With no cache directory, a cache in memory: the next refresh reads on from it.
        let load = CacheToLoad { dir: options.cache_dir.clone(), without: InferenceCache::in_memory };
        let (discovery, mut cache) = crate::table::corpus::find_loading(&formats, &paths, load).await?;
        let found = discovery.stamp();
        let corpus = Corpus::read(formats, discovery, options.clone(), &mut cache).await;
        let ctx = session(&corpus, &memory).await?;
        Ok(LiveEngine {
            engine: Engine { corpus, ctx, memory },
            places,
            options,
            cache,
            walked: paths,
            found,
        })
    }

    /// The inference cache read through (kept in memory only with no cache directory): what
    /// the next refresh knows of each file.
    pub fn cache_mut(&mut self) -> &mut InferenceCache {
        &mut self.cache
    }

    /// The paths walked last: the places to watch for changes.
    pub(crate) fn walked(&self) -> Vec<std::path::PathBuf> {
        self.walked.clone()
    }

    /// Takes in what changed since the last look: `Ok(None)` when nothing did (a walk only), else
    /// the warnings of the new read (every one, those given before too).
    pub async fn refresh(&mut self) -> crate::error::Result<Option<Vec<String>>> {
        let (paths, notes) = self.places.paths();
        let formats = crate::format::all();
        let discovery = crate::table::corpus::find(&formats, &paths).await?;
        let found = discovery.stamp();
        if paths == self.walked && found == self.found {
            return Ok(None);
        }
        let corpus = Corpus::read(formats, discovery, self.options.clone(), &mut self.cache).await;
        refresh(&self.engine.ctx, &corpus).await?;
        self.engine.corpus = corpus;
        (self.walked, self.found) = (paths, found);
        let mut warnings = notes;
        warnings.extend(self.engine.corpus.warnings.iter().cloned());
        Ok(Some(warnings))
    }
}
