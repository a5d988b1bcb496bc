//! What a cluster runs: txq's own reading statements, nothing else. An analyzer rule, in the
//! client's session over a cluster and in every session of a scheduler, refuses a plan that
//! writes (`INSERT`, `UPDATE`, `DELETE`, `COPY`), defines (`CREATE ...`, `DROP ...`), sets, or reads
//! a table that is not one of txq's own (a `CREATE EXTERNAL TABLE`'s, a table function's); and
//! the client's `CREATE EXTERNAL TABLE` is refused before it makes a table.

use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::source_as_provider;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{CreateExternalTable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use std::collections::HashMap;
use std::sync::Arc;

/// The message of a refused statement, naming what was refused.
fn refused(what: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Plan(format!("{what} is refused on a cluster (docs/scale-out.md#security)"))
}

/// The analyzer rule that refuses, in a plan and its subqueries, anything but reading txq's own
/// tables. Run after DataFusion's rules, so that views are read through by then.
#[derive(Debug, Default)]
pub struct ReadOnly;

impl AnalyzerRule for ReadOnly {
    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.apply_with_subqueries(|node| {
            refuse_writes(node)?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        // DataFusion puts the name of a rule that fails before its message.
        "a cluster runs only statements that read txq's own tables"
    }
}

/// An error for `node` when it is not a part of a reading statement over txq's tables.
fn refuse_writes(node: &LogicalPlan) -> Result<()> {
    match node {
        LogicalPlan::Dml(dml) => Err(refused(format!("{} {}", dml.op, dml.table_name))),
        LogicalPlan::Copy(copy) => Err(refused(format!("COPY to {}", copy.output_url))),
        LogicalPlan::Ddl(ddl) => Err(refused(ddl.name())),
        LogicalPlan::Statement(statement) => Err(refused(statement.name())),
        LogicalPlan::Extension(extension) => Err(refused(extension.node.name())),
        LogicalPlan::TableScan(scan) => match is_txq_table(source_as_provider(&scan.source)?.as_ref()) {
            true => Ok(()),
            false => Err(refused(format!("reading {}, not a table of txq's,", scan.table_name))),
        },
        _ => Ok(()),
    }
}

/// Whether `table` is one of txq's own: a format's event table, its `files`, or `prices`.
pub fn is_txq_table(table: &dyn TableProvider) -> bool {
    table.downcast_ref::<crate::scan::ScanTable>().is_some()
        || table.downcast_ref::<crate::scan::files_table::FilesTable>().is_some()
        || crate::sql::prices::bytes_of_table(table).is_some()
}

/// The factories of a session over a cluster: every format of `CREATE EXTERNAL TABLE` refused.
pub fn refusing_factories(
    known: &HashMap<String, Arc<dyn TableProviderFactory>>,
) -> HashMap<String, Arc<dyn TableProviderFactory>> {
    known.keys().map(|format| (format.clone(), Arc::new(Refused) as Arc<dyn TableProviderFactory>)).collect()
}

/// A `CREATE EXTERNAL TABLE`, refused.
#[derive(Debug)]
struct Refused;

#[async_trait::async_trait]
impl TableProviderFactory for Refused {
    async fn create(&self, _: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        Err(DataFusionError::Plan(format!(
            "CREATE EXTERNAL TABLE {} is refused on a cluster: a cluster runs only statements that \
             read txq's own tables (docs/scale-out.md#security)",
            cmd.name
        )))
    }
}
