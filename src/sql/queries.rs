//! The canned analyses of `queries/*.sql`, embedded in the binary so that `txq query NAME` works
//! anywhere: one file per question, its leading `--` comment lines saying what it answers.

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// One canned analysis.
#[derive(Debug, Clone, Copy)]
pub struct CannedQuery {
    /// The file name without `.sql`.
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! canned {
    ($($name:literal),* $(,)?) => {
        &[$(CannedQuery { name: $name, sql: include_str!(concat!("../../queries/", $name, ".sql")) }),*]
    };
}

/// The canned analyses over every format's rows; each format adds its own ([`all`]).
const SHARED: &[CannedQuery] = canned![
    "blocks",
    "branch_spend",
    "cache_hit_by_model",
    "commit_spend",
    "corpus_summary",
    "daily",
    "daily_by_cwd",
    "machine_spend",
    "monthly",
    "quota_burn",
    "session",
    "session_models",
    "spend_over_time",
    "subagent_spend",
    "tool_failures",
    "tool_spend",
    "unpriced_models",
    "weekly",
];

/// Every canned analysis, in name order: the shared ones and each format's own.
pub fn all() -> &'static [CannedQuery] {
    static ALL: std::sync::OnceLock<Vec<CannedQuery>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let formats = crate::format::all();
        let own = formats.iter().flat_map(|f| f.queries).map(|q| CannedQuery { name: q.name, sql: q.sql });
        let mut all: Vec<CannedQuery> = SHARED.iter().copied().chain(own).collect();
        all.sort_by_key(|q| q.name);
        all
    })
}

impl CannedQuery {
    /// What the query answers: its header comment, as one line of text.
    pub(crate) fn about(&self) -> String {
        let lines = self.sql.lines().map_while(|line| line.strip_prefix("--"));
        lines.map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
    }
}

/// The canned query called `name` (`name.sql` works too).
pub fn find(name: &str) -> Option<&'static CannedQuery> {
    let name = name.strip_suffix(".sql").unwrap_or(name);
    all().iter().find(|q| q.name == name)
}

/// What to say when no canned query has that name.
pub(crate) fn unknown(name: &str) -> String {
    let names: Vec<&str> = all().iter().map(|q| q.name).collect();
    format!("no canned query {name:?}: `txq query --list` lists them ({})", names.join(", "))
}

/// The list `txq query --list` prints: each query's name and what it answers.
pub(crate) fn list() -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("answers", DataType::Utf8, false),
    ]));
    let names = StringArray::from_iter_values(all().iter().map(|q| q.name));
    let about = StringArray::from_iter_values(all().iter().map(CannedQuery::about));
    RecordBatch::try_new(schema, vec![Arc::new(names), Arc::new(about)]).expect("two text columns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::parser::DFParser;
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    #[test]
    fn every_file_in_queries_is_embedded_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let embedded: Vec<String> = all().iter().map(|q| format!("{}.sql", q.name)).collect();
        assert_eq!(files, embedded);
    }

    #[test]
    fn each_is_one_statement_with_a_header() {
        for query in all() {
            let statements = DFParser::parse_sql_with_dialect(query.sql, &GenericDialect {}).unwrap();
            assert_eq!(statements.len(), 1, "{}", query.name);
            assert!(query.about().len() > 40, "{} says what it answers", query.name);
            assert!(query.sql.starts_with("-- "), "{} starts with its header", query.name);
        }
    }

    /// `schema.table` names in a query's SQL (its header left out), for each schema of `schemas`.
    fn tables_of(query: &CannedQuery, schemas: &[&str]) -> Vec<String> {
        let sql: String = query.sql.lines().filter(|l| !l.starts_with("--")).collect::<Vec<_>>().join("\n");
        let words: Vec<&str> =
            sql.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).collect();
        words
            .iter()
            .filter(|w| schemas.iter().any(|s| w.strip_prefix(s).is_some_and(|rest| rest.starts_with('.'))))
            .map(|w| w.to_string())
            .collect()
    }

    #[test]
    fn a_query_over_one_formats_tables_is_that_formats_and_a_shared_one_reads_no_formats_events() {
        let formats = crate::format::all();
        let schemas: Vec<&str> = formats.iter().map(|f| f.name).collect();
        for format in &formats {
            for own in format.queries {
                let query = find(own.name).unwrap();
                let read = tables_of(query, &schemas);
                assert!(
                    read.iter().any(|t| t.starts_with(&format!("{}.", format.name))),
                    "{} reads none of {}'s tables: {read:?}",
                    own.name,
                    format.name
                );
            }
        }
        for shared in SHARED {
            // Only the files tables, which every format has (`corpus_summary` counts them).
            let events: Vec<String> =
                tables_of(shared, &schemas).into_iter().filter(|t| !t.ends_with(".files")).collect();
            assert!(
                events.is_empty(),
                "{} is shared but reads {events:?}: it is a format's own",
                shared.name
            );
        }
        assert_eq!(SHARED.len() + formats.iter().map(|f| f.queries.len()).sum::<usize>(), all().len());
    }

    #[test]
    fn names_resolve_with_or_without_the_extension() {
        assert_eq!(find("denied_tools.sql").map(|q| q.name), Some("denied_tools"));
        assert!(find("nope").is_none());
        assert!(unknown("nope").contains("spend_by_model_day"));
    }
}
