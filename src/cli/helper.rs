//! The shell's line-editing helper: a validator that says when a statement is complete (so one
//! can span lines), tab completion of keywords, functions, tables, columns and meta-commands from
//! the session's own catalog, and matching brackets shown as the cursor meets them.

use super::commands::COMMANDS;
use super::print::OutputFormat;
use crate::sql::session::{CATALOG, DEFAULT_SCHEMA};
use datafusion::prelude::SessionContext;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::{CmdKind, Highlighter, MatchingBracketHighlighter};
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Where a lexer stands in SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    Code,
    /// A `'string'`.
    Text,
    /// A `"quoted name"`.
    QuotedName,
    /// A `-- comment`, to the end of the line.
    LineComment,
    /// A `/* comment */`, nested this deep.
    BlockComment(usize),
}

/// SQL text read up to its end: its words outside strings and comments, where the end is, and
/// the last character of code.
struct Lexed<'a> {
    words: Vec<&'a str>,
    inside: Inside,
    last_code: Option<char>,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '$'
}

fn lex(sql: &str) -> Lexed<'_> {
    let mut words = Vec::new();
    let mut inside = Inside::Code;
    let mut last_code = None;
    let mut word_start: Option<usize> = None;
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if inside == Inside::Code && is_word_char(c) {
            word_start.get_or_insert(i);
            last_code = Some(c);
            continue;
        }
        if let Some(start) = word_start.take() {
            words.push(&sql[start..i]);
        }
        inside = match (inside, c, next) {
            (Inside::Code, '\'', _) => Inside::Text,
            (Inside::Code, '"', _) => Inside::QuotedName,
            (Inside::Code, '-', Some('-')) => Inside::LineComment,
            (Inside::Code, '/', Some('*')) => {
                chars.next();
                Inside::BlockComment(1)
            }
            (Inside::Code, c, _) => {
                if !c.is_whitespace() {
                    last_code = Some(c);
                }
                Inside::Code
            }
            (Inside::Text, '\'', _) => {
                last_code = Some('\'');
                Inside::Code
            }
            (Inside::QuotedName, '"', _) => {
                last_code = Some('"');
                Inside::Code
            }
            (Inside::LineComment, '\n', _) => Inside::Code,
            (Inside::BlockComment(depth), '*', Some('/')) => {
                chars.next();
                if depth == 1 { Inside::Code } else { Inside::BlockComment(depth - 1) }
            }
            (Inside::BlockComment(depth), '/', Some('*')) => {
                chars.next();
                Inside::BlockComment(depth + 1)
            }
            (inside, ..) => inside,
        };
    }
    if let Some(start) = word_start {
        words.push(&sql[start..]);
    }
    Lexed { words, inside, last_code }
}

/// Whether a meta-command (`\d`, `.tables`): a line that starts with `\` or `.`.
pub(crate) fn is_meta_command(input: &str) -> bool {
    let input = input.trim_start();
    input.starts_with('\\') || input.starts_with('.')
}

/// Whether the input is `exit` or `quit` (with or without `;`): what leaves the shell, as in
/// psql and datafusion-cli.
pub(crate) fn is_quit(input: &str) -> bool {
    let word = input.trim().trim_end_matches(';').trim_end();
    word.eq_ignore_ascii_case("exit") || word.eq_ignore_ascii_case("quit")
}

/// Whether the input is ready to run: nothing, a meta-command, `exit` or `quit`, or SQL whose
/// last code is a `;` outside any string, quoted name or comment.
pub(crate) fn is_complete(input: &str) -> bool {
    if input.trim().is_empty() || is_meta_command(input) || is_quit(input) {
        return true;
    }
    let lexed = lex(input);
    matches!(lexed.inside, Inside::Code | Inside::LineComment) && lexed.last_code == Some(';')
}

/// The keywords Tab offers: those of queries and of what the shell's users write around them
/// (sqlparser knows hundreds more, `bloomfilter` among them, which would only get in the way).
const KEYWORDS: &str = "\
all analyze and as asc between by case cast columns copy create cross current describe desc
distinct drop else end except exists explain false filter first following from full group having
ilike in inner insert intersect interval into is join last lateral left like limit natural not
null nulls offset on or order outer over partition preceding range replace right row rows select
show table tables then to true try_cast unbounded union unnest using values view when where
window with";

/// What tab completes, read from the session's catalog (so every table found in the data is
/// there): functions, schemas, and each table under every name it is written as (`usage`,
/// `rupu.usage`) with its columns.
#[derive(Debug, Default)]
pub(crate) struct Names {
    functions: Vec<String>,
    schemas: Vec<String>,
    tables: BTreeMap<String, Vec<String>>,
}

/// Words after which a table name comes.
const TABLE_KEYWORDS: &[&str] = &["from", "join", "into", "table", "update", "describe"];

impl Names {
    /// Reads the names in `ctx`'s catalog.
    pub(crate) async fn of(ctx: &SessionContext) -> Names {
        let mut names = Names::default();
        let state = ctx.state();
        names.functions = state
            .scalar_functions()
            .keys()
            .chain(state.aggregate_functions().keys())
            .chain(state.window_functions().keys())
            .cloned()
            .collect();
        names.functions.sort();
        names.functions.dedup();
        let Some(catalog) = ctx.catalog(CATALOG) else { return names };
        for schema_name in catalog.schema_names() {
            let Some(schema) = catalog.schema(&schema_name) else { continue };
            for table in schema.table_names() {
                let Ok(Some(provider)) = schema.table(&table).await else { continue };
                let columns = provider.schema().fields().iter().map(|f| f.name().clone()).collect();
                let name =
                    if schema_name == DEFAULT_SCHEMA { table } else { format!("{schema_name}.{table}") };
                names.tables.insert(name, columns);
            }
            if schema_name != DEFAULT_SCHEMA {
                names.schemas.push(schema_name);
            }
        }
        names
    }

    /// Whether `ctx` now has tables these names do not (or lost some), after `create` or `drop`.
    pub(crate) fn outdated(&self, ctx: &SessionContext) -> bool {
        let Some(public) = ctx.catalog(CATALOG).and_then(|c| c.schema(DEFAULT_SCHEMA)) else { return false };
        let now = public.table_names();
        now.len() != self.tables.keys().filter(|k| !k.contains('.')).count()
            || now.iter().any(|t| !self.tables.contains_key(t))
    }

    /// The tables named in `sql`, each with the alias it was given, if any.
    fn tables_in<'a>(&self, sql: &'a str) -> Vec<(String, Option<&'a str>)> {
        let words = lex(sql).words;
        let mut found = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let name = word.to_lowercase();
            if !self.tables.contains_key(&name) {
                continue;
            }
            let mut next = words.get(i + 1).copied();
            if next.is_some_and(|w| w.eq_ignore_ascii_case("as")) {
                next = words.get(i + 2).copied();
            }
            let alias = next
                .filter(|w| !KEYWORDS.split_whitespace().any(|k| k == w.to_lowercase()) && !w.contains('.'));
            found.push((name, alias));
        }
        found
    }

    /// The completions of the word that ends at `pos` in `line`, and where that word starts.
    pub(crate) fn complete_sql(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        if lex(before).inside != Inside::Code {
            return (pos, Vec::new());
        }
        let start =
            before.char_indices().rev().take_while(|&(_, c)| is_word_char(c)).last().map_or(pos, |(i, _)| i);
        let word = &before[start..];
        if let Some((qualifier, part)) = word.rsplit_once('.') {
            let part_start = pos - part.len();
            return (part_start, self.after_qualifier(line, &qualifier.to_lowercase(), part));
        }
        let previous = lex(&before[..start]).words.last().map(|w| w.to_lowercase());
        let wants_table = previous.is_some_and(|w| TABLE_KEYWORDS.contains(&w.as_str()));
        let mut candidates: Vec<String> = Vec::new();
        if !wants_table {
            for (table, _) in self.tables_in(line) {
                candidates.extend(self.tables[&table].iter().cloned());
            }
        }
        candidates.extend(self.tables.keys().filter(|t| !t.contains('.')).cloned());
        candidates.extend(self.schemas.iter().map(|s| format!("{s}.")));
        if !wants_table {
            candidates.extend(self.functions.iter().cloned());
            let upper = word.chars().any(char::is_uppercase) && !word.chars().any(char::is_lowercase);
            candidates.extend(
                KEYWORDS.split_whitespace().map(|k| if upper { k.to_uppercase() } else { k.to_string() }),
            );
        }
        (start, starting_with(candidates, word))
    }

    /// Completions after `qualifier.`: the tables of a schema, or the columns of a table or alias.
    fn after_qualifier(&self, line: &str, qualifier: &str, part: &str) -> Vec<String> {
        if self.schemas.iter().any(|s| s == qualifier) {
            let prefix = format!("{qualifier}.");
            let tables = self.tables.keys().filter_map(|t| t.strip_prefix(&prefix)).map(str::to_string);
            return starting_with(tables.collect(), part);
        }
        let named = self.tables_in(line);
        let table = named
            .iter()
            .find(|(_, alias)| alias.is_some_and(|a| a.eq_ignore_ascii_case(qualifier)))
            .map(|(t, _)| t.as_str())
            .or_else(|| self.tables.contains_key(qualifier).then_some(qualifier));
        match table {
            Some(table) => starting_with(self.tables[table].clone(), part),
            None => Vec::new(),
        }
    }
}

/// The candidates that start with `prefix` (ignoring case), each once, in order.
fn starting_with(candidates: Vec<String>, prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        if c.to_lowercase().starts_with(&prefix) && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The rustyline helper of the shell.
pub(crate) struct ShellHelper {
    pub(crate) names: Names,
    files: FilenameCompleter,
    brackets: MatchingBracketHighlighter,
}

impl ShellHelper {
    pub(crate) fn new(names: Names) -> Self {
        Self { names, files: FilenameCompleter::new(), brackets: MatchingBracketHighlighter::new() }
    }

    /// Completions in a meta-command line: its name, then its argument.
    fn complete_command(&self, line: &str, pos: usize) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let indent = before.len() - before.trim_start().len();
        let Some(name_end) = before[indent..].find(char::is_whitespace).map(|i| indent + i) else {
            let names = COMMANDS.iter().map(|c| c.name.to_string()).collect();
            return Ok((indent, pairs(starting_with(names, &before[indent..]))));
        };
        let arg_start = before[name_end..].find(|c: char| !c.is_whitespace()).map_or(pos, |i| name_end + i);
        let arg = &before[arg_start..];
        let choices: Vec<String> = match &before[indent..name_end] {
            "\\d" | ".schema" => self.names.tables.keys().cloned().collect(),
            "\\format" => <OutputFormat as clap::ValueEnum>::value_variants()
                .iter()
                .filter_map(clap::ValueEnum::to_possible_value)
                .map(|v| v.get_name().to_string())
                .collect(),
            "\\timing" | "\\x" => vec!["on".into(), "off".into()],
            "\\i" | "\\o" => return self.files.complete_path(line, pos),
            _ => Vec::new(),
        };
        Ok((arg_start, pairs(starting_with(choices, arg))))
    }
}

fn pairs(words: Vec<String>) -> Vec<Pair> {
    words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if is_meta_command(line) {
            return self.complete_command(line, pos);
        }
        let (start, words) = self.names.complete_sql(line, pos);
        Ok((start, pairs(words)))
    }
}

/// Every line typed is taken as it is: the shell gathers a statement's lines itself, showing the
/// continuation prompt before each after the first (rustyline shows no prompt on the lines of a
/// buffer it keeps open).
impl Validator for ShellHelper {
    fn validate(&self, _: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(ValidationResult::Valid(None))
    }
}

impl Highlighter for ShellHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        self.brackets.highlight(line, pos)
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        self.brackets.highlight_char(line, pos, kind)
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl rustyline::Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::RecordBatch;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
    use datafusion::datasource::MemTable;
    use std::sync::Arc;

    #[test]
    fn a_statement_is_complete_at_a_semicolon_outside_strings_and_comments() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1\n  from t;  \n"));
        assert!(is_complete("select 1; -- done"));
        assert!(is_complete("select 'a;b';"));
        assert!(is_complete("select 'it''s';"));
        assert!(is_complete("select \"a;\" from t;"));
        assert!(is_complete("select 1 /* a /* nested */ one */;"));
        assert!(is_complete(""));
        assert!(is_complete("   "));

        assert!(!is_complete("select 1"));
        assert!(!is_complete("select 'a;"));
        assert!(!is_complete("select 'a;b'"));
        assert!(!is_complete("select \"a;"));
        assert!(!is_complete("select 1 -- ;"));
        assert!(!is_complete("select 1 /* ; */"));
        assert!(!is_complete("select 1; /* unfinished"));
        assert!(!is_complete("select 1 /* a /* nested */ ; "));
    }

    #[test]
    fn meta_commands_are_complete_without_a_semicolon() {
        assert!(is_complete("\\d usage"));
        assert!(is_complete("  .tables"));
        assert!(is_complete("\\q"));
        assert!(is_complete("exit") && is_complete(" QUIT; ") && is_complete("quit;"));
        assert!(is_quit("exit;") && is_quit("Quit") && !is_quit("exit 1") && !is_quit("select 1\nquit"));
    }

    fn table(columns: &[&str]) -> Arc<MemTable> {
        let schema = Arc::new(Schema::new(
            columns.iter().map(|c| Field::new(*c, DataType::Utf8, true)).collect::<Vec<_>>(),
        ));
        Arc::new(MemTable::try_new(schema.clone(), vec![vec![RecordBatch::new_empty(schema)]]).unwrap())
    }

    async fn names() -> Names {
        let ctx = SessionContext::new();
        let rupu = Arc::new(MemorySchemaProvider::new());
        rupu.register_table("usage".into(), table(&["run_id", "model", "input_tokens"])).unwrap();
        rupu.register_table("runs".into(), table(&["run_id", "status", "model"])).unwrap();
        ctx.catalog(CATALOG).unwrap().register_schema("rupu", rupu.clone()).unwrap();
        ctx.register_table("usage", rupu.table("usage").await.unwrap().unwrap()).unwrap();
        ctx.register_table("tool_audit", table(&["tool", "decision", "blocked"])).unwrap();
        Names::of(&ctx).await
    }

    fn complete(names: &Names, line: &str) -> Vec<String> {
        let (start, words) = names.complete_sql(line, line.len());
        words.into_iter().map(|w| format!("{}{w}", &line[..start])).collect()
    }

    #[tokio::test]
    async fn completes_tables_qualified_and_not() {
        let names = names().await;
        assert_eq!(complete(&names, "select * from tool_"), ["select * from tool_audit"]);
        assert_eq!(complete(&names, "select * from rupu.ru"), ["select * from rupu.runs"]);
        assert_eq!(complete(&names, "select * from ru"), ["select * from rupu."]);
        assert_eq!(complete(&names, "select * from RUPU.us"), ["select * from RUPU.usage"]);
    }

    #[tokio::test]
    async fn completes_the_columns_of_the_tables_in_the_statement() {
        let names = names().await;
        assert!(!complete(&names, "select deci").contains(&"select decision".to_string()));
        let line = "select * from tool_audit where deci";
        assert_eq!(complete(&names, line), ["select * from tool_audit where decision"]);
        assert_eq!(
            complete(&names, "select * from tool_audit where bl"),
            ["select * from tool_audit where blocked"]
        );
        // The column being typed before the table is named.
        let line = "select input_to from usage";
        let (start, words) = names.complete_sql(line, "select input_to".len());
        assert_eq!((start, words), ("select ".len(), vec!["input_tokens".to_string()]));
    }

    #[tokio::test]
    async fn completes_columns_after_an_alias_or_a_table_name() {
        let names = names().await;
        let line = "select u.mo from rupu.usage u join rupu.runs as r on u.run_id = r.st";
        assert_eq!(complete(&names, line), [format!("{}atus", line)]);
        let (start, words) = names.complete_sql(line, "select u.mo".len());
        assert_eq!((start, words), ("select u.".len(), vec!["model".to_string()]));
        assert_eq!(complete(&names, "select tool_audit.bl"), ["select tool_audit.blocked"]);
    }

    #[tokio::test]
    async fn completes_keywords_and_functions_in_the_case_typed() {
        let names = names().await;
        assert!(complete(&names, "sel").contains(&"select".to_string()));
        assert!(complete(&names, "SEL").contains(&"SELECT".to_string()));
        assert!(complete(&names, "select coun").contains(&"select count".to_string()));
        assert!(complete(&names, "select 'coun").is_empty(), "nothing inside a string");
    }

    #[tokio::test]
    async fn completes_meta_commands_and_their_arguments() {
        let helper = ShellHelper::new(names().await);
        let complete = |line: &str| {
            let (start, pairs) = helper.complete_command(line, line.len()).unwrap();
            pairs.into_iter().map(|p| format!("{}{}", &line[..start], p.replacement)).collect::<Vec<_>>()
        };
        assert_eq!(complete("\\ti"), ["\\timing"]);
        assert_eq!(complete(".ta"), [".tables"]);
        assert_eq!(complete("\\d rupu.us"), ["\\d rupu.usage"]);
        assert_eq!(complete("\\format nd"), ["\\format ndjson"]);
    }

    #[tokio::test]
    async fn new_tables_make_the_names_outdated() {
        let ctx = SessionContext::new();
        let names = Names::of(&ctx).await;
        assert!(!names.outdated(&ctx));
        ctx.register_table("mine", table(&["a"])).unwrap();
        assert!(names.outdated(&ctx));
    }
}
