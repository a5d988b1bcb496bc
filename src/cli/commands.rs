//! The shell's meta-commands (`\d`, `\format csv`, `.tables`, ...): what each is called, how a
//! line is read as one, and what each does to the shell. Tables they show (`\?`, `\d`) are record
//! batches printed like any result.

use super::print::OutputFormat;
use crate::error::Error;
use crate::sql::session::{CATALOG, DEFAULT_SCHEMA};
use crate::table::corpus::Corpus;
use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use std::path::PathBuf;
use std::sync::Arc;

/// A meta-command, as typed at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MetaCommand {
    Help,
    ListTables,
    Describe(String),
    /// Set the output format, or (none given) say which it is.
    Format(Option<OutputFormat>),
    /// Turn timing on or off, or (neither given) the other way.
    Timing(Option<bool>),
    /// Turn one-field-per-line on or off, or (neither given) the other way.
    Expanded(Option<bool>),
    MaxRows(usize),
    /// Send results to a file, or (none given) back to the terminal.
    Output(Option<PathBuf>),
    Include(PathBuf),
    Quit,
}

/// How a meta-command is written and what it does, for `\?` and tab completion.
pub(crate) struct CommandHelp {
    pub(crate) name: &'static str,
    pub(crate) args: &'static str,
    pub(crate) about: &'static str,
}

const fn help(name: &'static str, args: &'static str, about: &'static str) -> CommandHelp {
    CommandHelp { name, args, about }
}

/// Every meta-command.
pub(crate) const COMMANDS: &[CommandHelp] = &[
    help("\\?", "", "list the meta-commands"),
    help("\\d", "", "list the tables, with their rows where known"),
    help("\\dt", "", "as \\d"),
    help("\\d", "TABLE", "the columns of TABLE: type, meaning, and the schema its name resolves to"),
    help("\\format", "[table|csv|tsv|json|ndjson]", "how results are written"),
    help("\\timing", "[on|off]", "say how long each statement took"),
    help("\\x", "[on|off]", "one field per line instead of a table"),
    help("\\maxrows", "N", "show at most N rows of a table (0: all)"),
    help("\\o", "[FILE]", "write results to FILE, whole; with no FILE, to the terminal again"),
    help("\\i", "FILE", "run the SQL in FILE"),
    help("\\q", "", "quit (so do exit, quit, Ctrl-D, and Ctrl-C twice at an empty prompt)"),
    help(".tables", "", "as \\d"),
    help(".schema", "[TABLE]", "as \\d TABLE"),
    help(".help", "", "as \\?"),
    help(".quit", "", "as \\q"),
    help(".exit", "", "as \\q"),
];

fn on_off(arg: Option<&str>) -> Result<Option<bool>, String> {
    match arg {
        None => Ok(None),
        Some("on") => Ok(Some(true)),
        Some("off") => Ok(Some(false)),
        Some(other) => Err(format!("expected on or off, not {other:?}")),
    }
}

impl std::str::FromStr for MetaCommand {
    type Err = String;

    fn from_str(line: &str) -> Result<Self, String> {
        let line = line.trim().trim_end_matches(';').trim_end();
        let (name, arg) = match line.split_once(char::is_whitespace) {
            Some((name, arg)) => (name, Some(arg.trim())),
            None => (line, None),
        };
        Ok(match (name, arg) {
            ("\\?" | ".help", None) => MetaCommand::Help,
            ("\\d" | "\\dt" | ".tables" | ".schema", None) => MetaCommand::ListTables,
            ("\\d" | ".schema", Some(table)) => MetaCommand::Describe(table.to_string()),
            ("\\format", arg) => MetaCommand::Format(arg.map(str::parse).transpose()?),
            ("\\timing", arg) => MetaCommand::Timing(on_off(arg)?),
            ("\\x", arg) => MetaCommand::Expanded(on_off(arg)?),
            ("\\maxrows", Some(n)) => {
                MetaCommand::MaxRows(n.parse().map_err(|_| format!("\\maxrows wants a number, not {n:?}"))?)
            }
            ("\\o", arg) => MetaCommand::Output(arg.map(PathBuf::from)),
            ("\\i", Some(file)) => MetaCommand::Include(PathBuf::from(file)),
            ("\\q" | "\\quit" | ".quit" | ".exit", None) => MetaCommand::Quit,
            _ => return Err(format!("unknown command {line:?}: \\? lists the commands")),
        })
    }
}

pub(super) fn format_name(format: OutputFormat) -> String {
    clap::ValueEnum::to_possible_value(&format).map_or_else(String::new, |v| v.get_name().to_string())
}

fn text_column(values: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> =
        columns.iter().map(|(n, c)| Field::new(*n, c.data_type().clone(), true)).collect();
    let arrays = columns.into_iter().map(|(_, c)| c).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("columns of equal length")
}

/// `\?`: every meta-command and what it does.
pub(super) fn help_batch() -> RecordBatch {
    let command = COMMANDS.iter().map(|c| format!("{} {}", c.name, c.args).trim_end().to_string()).collect();
    let about = COMMANDS.iter().map(|c| c.about.to_string()).collect();
    batch(vec![("command", text_column(command)), ("what it does", text_column(about))])
}

fn same(a: &Arc<dyn TableProvider>, b: &Arc<dyn TableProvider>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

/// The schema other than `public` whose table `provider` is: where the name resolves.
async fn home_schema(ctx: &SessionContext, provider: &Arc<dyn TableProvider>, table: &str) -> Option<String> {
    let catalog = ctx.catalog(CATALOG)?;
    for name in catalog.schema_names() {
        let Some(schema) = catalog.schema(&name).filter(|_| name != DEFAULT_SCHEMA) else { continue };
        if let Ok(Some(candidate)) = schema.table(table).await
            && same(&candidate, provider)
        {
            return Some(name);
        }
    }
    None
}

/// The schema the unqualified `table` resolves to, if it resolves.
async fn unqualified_schema(ctx: &SessionContext, table: &str) -> Option<String> {
    let provider = ctx.table_provider(TableReference::bare(table)).await.ok()?;
    Some(home_schema(ctx, &provider, table).await.unwrap_or_else(|| DEFAULT_SCHEMA.to_string()))
}

/// `\d`: the normalized tables (`calls`, `tool_calls`, `sessions`) first, then those made in
/// this session, then the tables of the formats that have transcripts; each named as it is
/// typed (unqualified where that resolves to it).
pub(super) async fn tables_batch(ctx: &SessionContext, corpus: &Corpus) -> RecordBatch {
    let mut rows: Vec<(String, String, Option<i64>, String)> = Vec::new();
    if let Some(public) = ctx.catalog(CATALOG).and_then(|c| c.schema(DEFAULT_SCHEMA)) {
        let mut names = public.table_names();
        // The normalized tables first, in the order a person asks about them.
        names.sort_by_key(|t| {
            (
                crate::sql::normalized::about(t).is_none(),
                ["calls", "tool_calls", "sessions"].iter().position(|n| n == t),
                t.clone(),
            )
        });
        for table in names {
            if unqualified_schema(ctx, &table).await.as_deref() == Some(DEFAULT_SCHEMA) {
                let about = crate::sql::normalized::about(&table).unwrap_or("not read from transcripts");
                rows.push((table, DEFAULT_SCHEMA.into(), None, about.into()));
            }
        }
    }
    for data in corpus.formats.iter().filter(|d| !d.files.is_empty()) {
        let schema = data.format.name.to_string();
        let mut tables: Vec<(String, Option<i64>, String)> = data
            .tables
            .iter()
            .map(|t| (t.name.clone(), t.events.map(|n| n as i64), t.about.clone()))
            .collect();
        if data.format.lines_table.is_none() {
            tables.push(("files".into(), Some(data.files.len() as i64), FILES_ABOUT.into()));
            tables.extend(data.format.views.iter().map(|v| (v.name.to_string(), None, v.about.to_string())));
        }
        for (table, count, about) in tables {
            let typed = if unqualified_schema(ctx, &table).await.as_deref() == Some(&schema) {
                table
            } else {
                format!("{schema}.{table}")
            };
            rows.push((typed, schema.clone(), count, about));
        }
    }
    batch(vec![
        ("table", text_column(rows.iter().map(|r| r.0.clone()).collect())),
        ("schema", text_column(rows.iter().map(|r| r.1.clone()).collect())),
        ("rows", Arc::new(Int64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>()))),
        ("about", text_column(rows.iter().map(|r| r.3.clone()).collect())),
    ])
}

const FILES_ABOUT: &str = "one row per transcript file";

/// What txq's catalog says of a table: what a row is, and each column's type and meaning.
fn catalog_notes(corpus: &Corpus, schema: &str, table: &str) -> (String, Vec<(String, String, String)>) {
    for data in corpus.formats.iter().filter(|d| d.format.name == schema) {
        if let Some(t) = data.table(table) {
            let columns = t.columns.iter().map(|c| (c.name.clone(), c.data_type_name(), c.about.clone()));
            return (t.about.clone(), columns.collect());
        }
        if data.format.lines_table.is_some() {
            continue;
        }
        if let Some(view) = data.format.views.iter().find(|v| v.name == table) {
            let columns = view.columns.iter().map(|(n, a)| (n.to_string(), String::new(), a.to_string()));
            return (view.about.to_string(), columns.collect());
        }
        if table == "files" {
            let mut columns: Vec<_> = crate::table::event_table::context_columns(&data.format)
                .into_iter()
                .map(|c| (c.name.clone(), c.data_type_name(), c.about))
                .collect();
            columns.push(("bytes".into(), "bigint".into(), "the file's size when read".into()));
            columns.push((
                "damaged_lines".into(),
                "bigint".into(),
                "its lines listed in errors as damaged".into(),
            ));
            return (FILES_ABOUT.into(), columns);
        }
    }
    // A normalized table's columns are told by [`crate::sql::normalized::column_about`].
    if let Some(about) = crate::sql::normalized::about(table).filter(|_| schema == DEFAULT_SCHEMA) {
        return (about.to_string(), Vec::new());
    }
    (String::new(), Vec::new())
}

/// A column type as `\d` and the docs name it.
fn type_name(data_type: &DataType) -> String {
    match data_type {
        DataType::Int64 => "bigint".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Timestamp(_, Some(tz)) => format!("timestamp ({tz})"),
        other => other.to_string().to_lowercase(),
    }
}

/// `\d TABLE`: a heading (what a row is, and where the unqualified name resolves), then each
/// column's type and meaning.
pub(super) async fn describe(
    ctx: &SessionContext,
    corpus: &Corpus,
    name: &str,
) -> Result<(String, RecordBatch), Error> {
    let reference = TableReference::from(name);
    let provider = ctx
        .table_provider(reference.clone())
        .await
        .map_err(|_| Error::Usage(format!("no table {name}: \\d lists the tables")))?;
    let table = reference.table();
    let schema = match home_schema(ctx, &provider, table).await {
        Some(schema) => schema,
        None => reference.schema().unwrap_or(DEFAULT_SCHEMA).to_string(),
    };
    let (about, notes) = catalog_notes(corpus, &schema, table);
    let qualified = format!("{schema}.{table}");
    let mut heading = if about.is_empty() { qualified.clone() } else { format!("{qualified}: {about}") };
    heading.push_str(&match unqualified_schema(ctx, table).await {
        Some(s) if s == schema => format!("\n`{table}` alone means {qualified}"),
        Some(other) => format!("\n`{table}` alone means {other}.{table}: write {qualified} for this one"),
        None => format!("\n`{table}` alone names no table: write {qualified}"),
    });
    let (mut names, mut types, mut meanings) = (Vec::new(), Vec::new(), Vec::new());
    for field in provider.schema().fields() {
        let note = notes.iter().find(|(n, ..)| n == field.name());
        names.push(field.name().clone());
        types.push(match note {
            Some((_, t, _)) if !t.is_empty() => t.clone(),
            _ => type_name(field.data_type()),
        });
        let normalized = || match schema.as_str() {
            DEFAULT_SCHEMA => crate::sql::normalized::column_about(table, field.name()).map(str::to_string),
            _ => None,
        };
        meanings.push(note.map(|(.., m)| m.clone()).or_else(normalized).unwrap_or_default());
    }
    let columns = batch(vec![
        ("column", text_column(names)),
        ("type", text_column(types)),
        ("meaning", text_column(meanings)),
    ]);
    Ok((heading, columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_commands() {
        let parse = |s: &str| s.parse::<MetaCommand>();
        assert_eq!(parse("\\?"), Ok(MetaCommand::Help));
        assert_eq!(parse("  \\d  "), Ok(MetaCommand::ListTables));
        assert_eq!(parse(".tables"), Ok(MetaCommand::ListTables));
        assert_eq!(parse("\\dt"), Ok(MetaCommand::ListTables));
        assert_eq!(parse("\\dt;"), Ok(MetaCommand::ListTables));
        assert_eq!(parse("\\quit"), Ok(MetaCommand::Quit));
        assert_eq!(parse("\\d rupu.usage"), Ok(MetaCommand::Describe("rupu.usage".into())));
        assert_eq!(parse(".schema usage;"), Ok(MetaCommand::Describe("usage".into())));
        assert_eq!(parse("\\format csv"), Ok(MetaCommand::Format(Some(OutputFormat::Csv))));
        assert_eq!(parse("\\format"), Ok(MetaCommand::Format(None)));
        assert_eq!(parse("\\timing off"), Ok(MetaCommand::Timing(Some(false))));
        assert_eq!(parse("\\x"), Ok(MetaCommand::Expanded(None)));
        assert_eq!(parse("\\maxrows 100"), Ok(MetaCommand::MaxRows(100)));
        assert_eq!(parse("\\o out.csv"), Ok(MetaCommand::Output(Some("out.csv".into()))));
        assert_eq!(parse("\\o"), Ok(MetaCommand::Output(None)));
        assert_eq!(parse("\\i q.sql"), Ok(MetaCommand::Include("q.sql".into())));
        assert_eq!(parse(".quit"), Ok(MetaCommand::Quit));
    }

    #[test]
    fn mistakes_say_what_to_do() {
        assert!(matches!("\\format xml".parse::<MetaCommand>(), Err(e) if e.contains("csv")));
        assert!(matches!("\\timing maybe".parse::<MetaCommand>(), Err(e) if e.contains("on or off")));
        assert!(matches!("\\zz".parse::<MetaCommand>(), Err(e) if e.contains("\\?")));
        assert!("\\i".parse::<MetaCommand>().is_err());
    }

    #[test]
    fn every_command_in_the_help_parses() {
        for command in COMMANDS {
            let arg = match command.args {
                "" => "",
                "TABLE" | "[TABLE]" => " usage",
                "N" => " 5",
                "FILE" | "[FILE]" => " f.sql",
                _ => " on",
            };
            let line = format!("{}{arg}", command.name).replace("\\format on", "\\format csv");
            assert!(line.parse::<MetaCommand>().is_ok(), "{line}");
        }
    }
}
