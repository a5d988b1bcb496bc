//! A schema whose views are planned the first time a statement names them, not when the session
//! opens: a statement over `calls` plans `calls` and what it reads, and `select 1` plans none of
//! the dozens of views every session holds (the normalized views of every format, each format's
//! own views), which opening a session spent most of its time on.

use async_trait::async_trait;
use datafusion::catalog::view::ViewTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::OnceCell;

/// What a view's plan becomes: the table a statement reads.
pub(crate) type MakeTable = fn(LogicalPlan, String) -> Arc<dyn TableProvider>;

/// A view as a table: DataFusion's [`ViewTable`], its text kept.
pub(crate) fn view_table(plan: LogicalPlan, sql: String) -> Arc<dyn TableProvider> {
    Arc::new(ViewTable::new(plan, Some(sql)))
}

/// A view not yet planned: its text, and how it is planned.
#[derive(Debug)]
struct Pending {
    sql: String,
    /// The session's settings when the view was made, the default schema its names resolve in
    /// set: a view plans as it would have when made, whatever `set` ran since.
    config: SessionConfig,
    make: MakeTable,
    session: Arc<ViewSession>,
    table: OnceCell<Arc<dyn TableProvider>>,
}

impl Pending {
    async fn table(&self) -> Result<Arc<dyn TableProvider>> {
        let planned = self.table.get_or_try_init(|| async {
            let session = self.session.session().upgrade().ok_or_else(|| {
                DataFusionError::Plan("a view of txq's was named after its session ended".into())
            })?;
            let mut state = session.read().clone();
            *state.config_mut() = self.config.clone();
            let plan = state.create_logical_plan(&self.sql).await?;
            Ok::<_, DataFusionError>((self.make)(plan, self.sql.clone()))
        });
        planned.await.cloned()
    }
}

/// The session a session's views are planned in, one for all its schemas, kept in its settings
/// (not held: a view in the session's own catalog holding the session would keep both alive). A
/// session made again from another's state, as a cluster's is, takes it over with
/// [`ViewSession::bind`].
#[derive(Debug, Default)]
pub(crate) struct ViewSession(Mutex<Weak<RwLock<SessionState>>>);

impl ViewSession {
    /// `ctx`'s, made when first asked for.
    pub(crate) fn of(ctx: &SessionContext) -> Arc<Self> {
        let state = ctx.state_ref();
        if let Some(views) = state.read().config().get_extension::<Self>() {
            return views;
        }
        let views = Arc::new(Self(Mutex::new(Arc::downgrade(&state))));
        state.write().config_mut().set_extension(views.clone());
        views
    }

    /// The views not yet planned are planned in `ctx` from now on: called by what makes a
    /// session anew from another's state (its catalogs kept), whose first session is gone by the
    /// time a statement names a view.
    pub(crate) fn bind(&self, ctx: &SessionContext) {
        *lock(&self.0) = Arc::downgrade(&ctx.state_ref());
    }

    fn session(&self) -> Weak<RwLock<SessionState>> {
        lock(&self.0).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Tables, and views planned on first use; to the session, one schema.
#[derive(Debug, Default)]
pub(crate) struct PlannedOnUse {
    tables: MemorySchemaProvider,
    views: Mutex<BTreeMap<String, Arc<Pending>>>,
}

impl PlannedOnUse {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds the view `name` of `sql`, planned in `ctx` with `schema` as the default schema (the
    /// session's own when `None`) the first time it is asked for; `make` makes its table.
    pub(crate) fn add_view(
        &self,
        ctx: &SessionContext,
        schema: Option<&str>,
        name: &str,
        sql: String,
        make: MakeTable,
    ) {
        // The settings alone are copied (not the whole state, for each of dozens of views).
        let mut config = ctx.state_ref().read().config().clone();
        if let Some(schema) = schema {
            config.options_mut().catalog.default_schema = schema.to_string();
        }
        let session = ViewSession::of(ctx);
        let pending = Pending { sql, config, make, session, table: OnceCell::new() };
        self.views().insert(name.to_string(), Arc::new(pending));
    }

    fn views(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Pending>>> {
        lock(&self.views)
    }

    /// Adds the table `name`, there from the start.
    pub(crate) fn add_table(&self, name: String, table: Arc<dyn TableProvider>) -> Result<()> {
        self.tables.register_table(name, table).map(drop)
    }
}

#[async_trait]
impl SchemaProvider for PlannedOnUse {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.tables.table_names();
        names.extend(self.views().keys().filter(|name| !self.tables.table_exist(name)).cloned());
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.tables.table(name).await? {
            return Ok(Some(table));
        }
        let view = self.views().get(name).cloned();
        match view {
            Some(view) => view.table().await.map(Some),
            None => Ok(None),
        }
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        if self.views().contains_key(&name) {
            return Err(DataFusionError::Plan(format!("{name} is a view of txq's and is kept")));
        }
        self.tables.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.tables.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables.table_exist(name) || self.views().contains_key(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_view_is_planned_when_first_named_with_the_settings_of_when_it_was_made() {
        let ctx = SessionContext::new();
        let catalog = ctx.catalog("datafusion").unwrap();
        let schema = PlannedOnUse::new();
        schema.add_view(&ctx, None, "v", "select 1 as one".into(), view_table);
        // Names that do not resolve fail when the view is named, not when it is made.
        schema.add_view(&ctx, None, "broken", "select * from nowhere".into(), view_table);
        catalog.register_schema("lazy", Arc::new(schema)).unwrap();
        // A setting changed after the view was made does not change how it plans.
        ctx.sql("set datafusion.sql_parser.enable_ident_normalization = false").await.unwrap();
        let rows = ctx.sql("select * from lazy.v").await.unwrap().collect().await.unwrap();
        assert_eq!(rows[0].num_rows(), 1);
        let e = ctx.sql("select * from lazy.broken").await.unwrap_err().to_string();
        assert!(e.contains("nowhere"), "{e}");
        let names = ctx.catalog("datafusion").unwrap().schema("lazy").unwrap().table_names();
        assert_eq!(names, ["broken", "v"]);
    }

    /// The CI failure of stop 44: a cluster's session, made from the first session's state, named
    /// a view the first session (gone) had to plan.
    #[tokio::test]
    async fn a_session_made_again_from_another_plans_its_views_once_bound() {
        let first = SessionContext::new();
        let schema = PlannedOnUse::new();
        schema.add_view(&first, None, "v", "select 1 as one".into(), view_table);
        first.catalog("datafusion").unwrap().register_schema("lazy", Arc::new(schema)).unwrap();
        let again = SessionContext::new_with_state(first.state());
        let views = ViewSession::of(&first);
        drop(first);
        let e = again.sql("select * from lazy.v").await.unwrap_err().to_string();
        assert!(e.contains("after its session ended"), "{e}");
        views.bind(&again);
        let rows = again.sql("select * from lazy.v").await.unwrap().collect().await.unwrap();
        assert_eq!(rows[0].num_rows(), 1);
    }
}
