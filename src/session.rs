//! The SQL session over a corpus: a schema per format holding its tables and views, a default
//! schema where unqualified names find the format that has the table, and the JSON functions.

use crate::corpus::{Corpus, FormatData};
use crate::scan::ScanTable;
use async_trait::async_trait;
use datafusion::catalog::view::ViewTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;

/// The catalog every schema lives in.
pub const CATALOG: &str = "datafusion";
/// The schema unqualified names resolve in.
pub const DEFAULT_SCHEMA: &str = "public";

/// A session whose tables are the corpus's.
pub async fn session(corpus: &Corpus) -> Result<SessionContext> {
    let config = SessionConfig::new()
        .with_information_schema(true)
        .with_default_catalog_and_schema(CATALOG, DEFAULT_SCHEMA);
    let mut ctx = SessionContext::new_with_config(config);
    datafusion_functions_json::register_all(&mut ctx)?;
    let catalog = ctx
        .catalog(CATALOG)
        .ok_or_else(|| DataFusionError::Internal(format!("no catalog {CATALOG}")))?;

    let mut lookup_order: Vec<(bool, Arc<dyn SchemaProvider>)> = Vec::new();
    for data in &corpus.formats {
        let schema = format_schema(&ctx, corpus, data).await?;
        catalog.register_schema(data.format.name, schema.clone())?;
        lookup_order.push((!data.files.is_empty(), schema));
    }
    // Formats with transcripts answer unqualified names first, each group in the formats' order.
    lookup_order.sort_by_key(|(has_data, _)| !*has_data);
    let merged = MergedSchema {
        own: MemorySchemaProvider::new(),
        formats: lookup_order.into_iter().map(|(_, s)| s).collect(),
    };
    catalog.register_schema(DEFAULT_SCHEMA, Arc::new(merged))?;
    Ok(ctx)
}

async fn format_schema(
    ctx: &SessionContext,
    corpus: &Corpus,
    data: &Arc<FormatData>,
) -> Result<Arc<dyn SchemaProvider>> {
    let schema = Arc::new(MemorySchemaProvider::new());
    for table in &data.tables {
        schema.register_table(
            table.name.clone(),
            Arc::new(ScanTable::new(corpus, data, table)),
        )?;
    }
    // A view's table names resolve in its own format's schema.
    let name = data.format.name;
    let scoped = SessionContext::new_with_config(
        ctx.copied_config()
            .with_default_catalog_and_schema(CATALOG, name),
    );
    scoped.register_catalog_list(ctx.state().catalog_list().clone());
    scoped
        .catalog(CATALOG)
        .expect("shared catalog")
        .register_schema(name, schema.clone())?;
    for view in &data.format.views {
        let plan = scoped.state().create_logical_plan(view.sql).await?;
        schema.register_table(
            view.name.to_string(),
            Arc::new(ViewTable::new(plan, Some(view.sql.to_string()))),
        )?;
    }
    Ok(schema)
}

/// The default schema: tables created in the session, then each format's tables.
#[derive(Debug)]
struct MergedSchema {
    own: MemorySchemaProvider,
    formats: Vec<Arc<dyn SchemaProvider>>,
}

#[async_trait]
impl SchemaProvider for MergedSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.own.table_names();
        for schema in &self.formats {
            for name in schema.table_names() {
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
        for schema in &self.formats {
            if let Some(table) = schema.table(name).await? {
                return Ok(Some(table));
            }
        }
        Ok(None)
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
        self.own.table_exist(name) || self.formats.iter().any(|s| s.table_exist(name))
    }
}

/// A corpus and a session over it: what `txq` works with.
pub struct Engine {
    pub corpus: Corpus,
    pub ctx: SessionContext,
}

/// Why a corpus could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Discovery(#[from] crate::discover::DiscoveryError),
    #[error(transparent)]
    Sql(#[from] DataFusionError),
}

/// Finds the transcripts under `paths`, reads them once to learn their tables, and opens a session.
pub async fn open(
    paths: &[std::path::PathBuf],
    options: crate::corpus::ReadOptions,
) -> std::result::Result<Engine, OpenError> {
    let formats = crate::format::all();
    let discovery = crate::discover::discover(&formats, paths)?;
    let corpus = Corpus::open(formats, discovery, options).await;
    let ctx = session(&corpus).await?;
    Ok(Engine { corpus, ctx })
}
