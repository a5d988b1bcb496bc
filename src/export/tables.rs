//! Which tables an export writes: every table and view of each schema that has transcripts (but
//! a format's own `calls`, `tool_calls` and `sessions`), and the default schema's normalized
//! `calls`, `tool_calls`, `sessions` and `rate_limits` over every harness, written whole (each is computed
//! across files, a replay in one found against another, where the others are written unit by
//! unit); or those `--tables` names (`usage` means that table in every schema that has it,
//! `reeval.tool` one table, `calls` the normalized one), each with its columns.

use super::units::{has_transcripts, unique_formats};
use crate::format::Normalized;
use crate::sql::session::{CATALOG, DEFAULT_SCHEMA, Engine};
use datafusion::arrow::datatypes::SchemaRef;
use std::collections::BTreeSet;

/// A table to export.
#[derive(Debug, Clone)]
pub(crate) struct ExportTable {
    pub(crate) schema: &'static str,
    pub(crate) name: String,
    pub(crate) columns: SchemaRef,
}

impl ExportTable {
    /// Whether it is a normalized table of the default schema: computed across every file, so
    /// written whole, from one reading of them all, never unit by unit.
    pub(crate) fn is_whole(&self) -> bool {
        self.schema == DEFAULT_SCHEMA
    }

    /// `schema.table`.
    pub(crate) fn qualified(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// Its folder below the export's root: `<schema>/<table>`, named safely
    /// ([`super::paths::folder_name`]), whatever the table's name holds.
    pub(crate) fn folder(&self) -> std::path::PathBuf {
        super::paths::table_folder(self.schema, &self.name)
    }

    /// The columns as `name: type`, as the manifest keeps them.
    pub(crate) fn signature(&self) -> Vec<String> {
        self.columns.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect()
    }
}

/// Every table of the schemas with transcripts, in schema then name order, then the default
/// schema's normalized tables (`public.calls`, ...) when any schema has transcripts.
pub(crate) async fn all(engine: &Engine) -> datafusion::error::Result<Vec<ExportTable>> {
    let Some(catalog) = engine.ctx.catalog(CATALOG) else {
        return Err(datafusion::error::DataFusionError::Internal(format!("no catalog {CATALOG}")));
    };
    let mut tables = Vec::new();
    for schema in unique_formats(&engine.corpus).into_iter().map(|f| f.name) {
        let Some(provider) = catalog.schema(schema).filter(|_| has_transcripts(&engine.corpus, schema))
        else {
            continue;
        };
        let normalized = |name: &String| Normalized::ALL.iter().any(|n| n.name() == name);
        let mut names = provider.table_names();
        names.retain(|name| !normalized(name));
        names.sort();
        for name in names {
            if let Some(table) = provider.table(&name).await? {
                tables.push(ExportTable { schema, name, columns: table.schema() });
            }
        }
    }
    let any_transcripts = engine.corpus.formats.iter().any(|d| !d.files.is_empty());
    if let Some(default) = catalog.schema(DEFAULT_SCHEMA).filter(|_| any_transcripts) {
        let mut names: Vec<&str> = Normalized::ALL.iter().map(|n| n.name()).collect();
        names.sort();
        for name in names {
            if let Some(table) = default.table(name).await? {
                tables.push(ExportTable {
                    schema: DEFAULT_SCHEMA,
                    name: name.into(),
                    columns: table.schema(),
                });
            }
        }
    }
    Ok(tables)
}

/// The tables `names` asks for, out of `all`; every name must find one.
pub(crate) fn named(all: &[ExportTable], names: &[String]) -> Result<Vec<ExportTable>, String> {
    let mut chosen = BTreeSet::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let found: Vec<usize> =
            (0..all.len()).filter(|&i| all[i].name == name || all[i].qualified() == name).collect();
        if found.is_empty() {
            let known: Vec<String> = all.iter().map(ExportTable::qualified).collect();
            return Err(format!("--tables: no table {name} to export; there are {}", known.join(", ")));
        }
        chosen.extend(found);
    }
    Ok(chosen.into_iter().map(|i| all[i].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Schema;
    use std::sync::Arc;

    fn table(schema: &'static str, name: &str) -> ExportTable {
        ExportTable { schema, name: name.into(), columns: Arc::new(Schema::empty()) }
    }

    #[test]
    fn bare_names_match_every_schema_and_qualified_names_one() {
        let all = [table("rupu", "turn_end"), table("rupu", "usage"), table("reeval", "turn_end")];
        let names = |list: &[&str]| -> Vec<String> {
            named(&all, &list.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap()
                .iter()
                .map(ExportTable::qualified)
                .collect()
        };
        assert_eq!(names(&["turn_end"]), ["rupu.turn_end", "reeval.turn_end"]);
        assert_eq!(names(&["reeval.turn_end", "usage"]), ["rupu.usage", "reeval.turn_end"]);
        let error = named(&all, &["usagee".to_string()]).unwrap_err();
        assert!(error.contains("no table usagee") && error.contains("rupu.usage"), "{error}");
    }
}
