//! The tables of a format: which exist and what their columns are, from the format's description
//! and what the inference pass found in the data.

use crate::format::{Absent, ContextSource, Derive, FieldSpec, Format, Kind, LinesTable, MarkerPart};
use crate::infer::stats::{FormatStats, ShapeSet};
use crate::json::Shape;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::collections::HashSet;
use std::sync::Arc;

/// Where a column's values come from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ColumnSource {
    /// From the file or the line's position.
    Context(ContextSource),
    /// From the event's field `key` (or computed from it), in the object at the path `at` of
    /// the event's fields (empty: among the fields themselves), or of the line's own keys with
    /// `on_line`.
    Field { at: Vec<String>, key: String, absent: Absent, derive: Option<Derive>, on_line: bool },
    /// The event's type as written (`events`).
    EventType,
    /// The event's fields as JSON text (`events`).
    EventFields,
    /// What is wrong with the line (`errors`).
    Problem,
    /// The line's first characters (`errors`).
    Excerpt,
}

impl ColumnSource {
    /// Whether the column holds one value per file ([`ContextSource::is_per_file`]).
    pub(crate) fn is_per_file(&self) -> bool {
        matches!(self, ColumnSource::Context(source) if source.is_per_file())
    }
}

/// One column of an event table.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) source: ColumnSource,
    pub(crate) about: String,
}

impl Column {
    /// The column's type as the docs and `\d` name it.
    pub(crate) fn data_type_name(&self) -> String {
        match &self.source {
            ColumnSource::Field { absent, .. } => {
                let mut name = self.kind.describe();
                match absent {
                    crate::format::Absent::Bool(v) => name.push_str(&format!(", {v} when absent")),
                    crate::format::Absent::Int(v) => name.push_str(&format!(", {v} when absent")),
                    crate::format::Absent::Required => name.push_str(", required"),
                    crate::format::Absent::Null => {}
                }
                name
            }
            ColumnSource::Context(source) => match source.data_type() {
                datafusion::arrow::datatypes::DataType::Int64 => Kind::Int.describe(),
                datafusion::arrow::datatypes::DataType::Boolean => Kind::Bool.describe(),
                _ => Kind::Str.describe(),
            },
            _ => Kind::Str.describe(),
        }
    }
}

impl Column {
    pub(crate) fn data_type(&self) -> DataType {
        match &self.source {
            ColumnSource::Context(source) => source.data_type(),
            ColumnSource::Field { .. } => self.kind.data_type(),
            _ => DataType::Utf8,
        }
    }
}

/// Which lines a table's rows come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rows {
    /// Valid events of this type (as written in the data).
    Type(String),
    /// Every valid event.
    AllEvents,
    /// Every line that is a JSON object, type or not (a stream of parts).
    Lines,
    /// Every damaged line, and every value that does not fit its column.
    Errors,
}

/// One table read by the scan: an event type, `events` or `errors`.
#[derive(Debug, Clone)]
pub struct EventTable {
    /// The SQL name.
    pub name: String,
    pub(crate) rows: Rows,
    pub(crate) about: String,
    /// Keys below the event's fields where this type's columns are.
    pub(crate) fields_path: Vec<String>,
    pub(crate) columns: Vec<Column>,
    /// Rows found by the inference pass (events of the type; all events), where known.
    pub(crate) events: Option<u64>,
    /// False for a type found in the data that no document names.
    pub(crate) documented: bool,
    /// Why the table is not named as the format names its type (a name txq's own tables take,
    /// or characters an SQL name cannot hold), for the warning that says so.
    pub(crate) renamed: Option<String>,
}

impl EventTable {
    pub(crate) fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns.iter().map(|c| Field::new(&c.name, c.data_type(), true)).collect::<Vec<_>>(),
        ))
    }
}

/// The kind of column a field found only in the data gets, from the shapes of its values.
pub(crate) fn inferred_kind(shapes: ShapeSet) -> Kind {
    let shapes = shapes.non_null();
    if shapes.is_empty() || shapes.within(&[Shape::Str]) {
        Kind::Str
    } else if shapes.within(&[Shape::Bool]) {
        Kind::Bool
    } else if shapes.within(&[Shape::Int]) {
        Kind::Int
    } else if shapes.within(&[Shape::Int, Shape::Float]) {
        Kind::Float
    } else {
        Kind::Json
    }
}

/// The context columns of a format.
pub(crate) fn context_columns(format: &Format) -> Vec<Column> {
    format
        .context
        .iter()
        .map(|c| Column {
            name: c.name.to_string(),
            kind: Kind::Str,
            source: ColumnSource::Context(c.source.clone()),
            about: c.about.to_string(),
        })
        .collect()
}

/// A field to make a column of: its key in the object at `at`, and how it is read.
struct FieldAt {
    on_line: bool,
    at: Vec<String>,
    key: String,
    name: Option<&'static str>,
    absent: Absent,
    derive: Option<Derive>,
}

/// Columns being gathered for one table: a field whose column name is taken (by a context column
/// or an earlier field) is named `data_<name>`; a key already present is not added twice.
struct Columns {
    columns: Vec<Column>,
    naming: crate::format::Naming,
}

impl Columns {
    fn has_key(&self, on_line: bool, at: &[String], key: &str, derive: Option<Derive>) -> bool {
        self.columns.iter().any(|c| {
            matches!(&c.source, ColumnSource::Field { at: a, key: k, derive: d, on_line: l, .. }
                if *l == on_line && a == at && k == key && *d == derive)
        })
    }

    fn add_spec(&mut self, spec: &FieldSpec, documented: bool) {
        let mut path: Vec<String> = spec.key.split('.').map(str::to_string).collect();
        let key = path.pop().unwrap_or_default();
        let field = FieldAt {
            on_line: spec.on_line,
            at: path,
            key,
            name: spec.name,
            absent: spec.absent,
            derive: spec.derive,
        };
        self.add(field, spec.kind.clone(), spec.about.to_string(), documented);
    }

    fn add(&mut self, field: FieldAt, kind: Kind, about: String, documented: bool) {
        let FieldAt { on_line, at, key, name, absent, derive } = field;
        if self.has_key(on_line, &at, &key, derive) {
            return;
        }
        let mut name = match derive {
            Some(Derive::TruncationMarker { part, .. }) => {
                let suffix = match part {
                    MarkerPart::Present => "truncated",
                    MarkerPart::TotalChars => "total_chars",
                    MarkerPart::Sha256 => "sha256",
                };
                format!("{}_{suffix}", self.naming.apply(&key))
            }
            None if name.is_some() => name.unwrap_or_default().to_string(),
            None if documented => self.naming.apply(&key),
            None => identifier(&self.naming.apply(&key), FIELD_LEAD),
        };
        while self.columns.iter().any(|c| c.name == name) {
            name = format!("data_{name}");
        }
        let source = ColumnSource::Field { at, key, absent, derive, on_line };
        self.columns.push(Column { name, kind, source, about });
    }

    /// Adds the fields found in the data that no document names.
    fn add_found(&mut self, found: &[(String, ShapeSet)], skip_key: Option<&str>) {
        for (key, shapes) in found {
            if Some(key.as_str()) == skip_key || self.has_key(false, &[], key, None) {
                continue;
            }
            let kind = inferred_kind(*shapes);
            let about = format!("found in the data ({})", kind.describe());
            let field = FieldAt {
                on_line: false,
                at: vec![],
                key: key.clone(),
                name: None,
                absent: Absent::Null,
                derive: None,
            };
            self.add(field, kind, about, false);
        }
    }
}

/// The names of the tables a format defines whatever its data holds: its documented types',
/// `events`, `errors`, `files`, its views' and its table of lines'.
pub(crate) fn built_in_names(format: &Format) -> Vec<String> {
    let mut names: Vec<String> =
        format.events.iter().map(|e| format.table_naming.apply(e.type_name)).collect();
    names.extend(["events", "errors", "files"].map(String::from));
    names.extend(format.views.iter().map(|v| v.name.to_string()));
    names.extend(format.normalized.iter().map(|c| c.table.name().to_string()));
    if let Some(lines) = &format.lines_table {
        names.extend([lines.name.to_string(), lines.errors_name.to_string()]);
    }
    names
}

/// What goes before a table or column name from the data that is empty or starts with a digit.
const TYPE_LEAD: &str = "type_";
const FIELD_LEAD: &str = "field_";

/// Longest table name made from a type found in the data, before its hash suffix.
const MAX_NAME_CHARS: usize = 64;

/// A name from the data as an SQL identifier that needs no quotes: ASCII letters lowercased
/// (`_` before a capital that follows a small letter or a digit: `inputTokens` is `input_tokens`),
/// digits and `_` kept, anything else `_`; `lead` in front of an empty name or one starting with
/// a digit; a name over 64 characters cut, with 8 hex digits of its XXH3 (the same in every
/// build) after it.
pub(crate) fn identifier(name: &str, lead: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous = None;
    for c in name.chars() {
        match c {
            'a'..='z' | '0'..='9' | '_' => out.push(c),
            'A'..='Z' => {
                if previous.is_some_and(|p: char| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            _ => out.push('_'),
        }
        previous = Some(c);
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, lead);
    }
    if out.len() > MAX_NAME_CHARS {
        out.truncate(MAX_NAME_CHARS);
        out.push_str(&format!("_{:08x}", xxhash_rust::xxh3::xxh3_64(name.as_bytes()) as u32));
    }
    out
}

/// The table names of the types found in the data that no document names, each with why it
/// differs from the type as the format writes it. A type keeps its name where it is an SQL
/// identifier no other table of its schema has; otherwise it becomes an [`identifier`], with
/// `type_` in front when that is taken (by a table of the format's own or another type) and
/// `_2`, `_3`, ... after while it still is. Types written as identifiers choose first (`a_b`
/// before `a-b`, which reeval's naming also makes `a_b`), then the others in the order of their
/// names.
fn found_type_names<'a>(format: &Format, found: &[&'a str]) -> Vec<(&'a str, String, Option<String>)> {
    let mut taken: HashSet<String> = built_in_names(format).into_iter().collect();
    let as_written = |t: &str| format.table_naming.apply(t);
    let (clean, other): (Vec<&str>, Vec<&str>) = found.iter().partition(|t| identifier(t, TYPE_LEAD) == **t);
    let mut named = Vec::with_capacity(found.len());
    for type_name in clean.into_iter().chain(other) {
        let wanted = as_written(type_name);
        let base = identifier(&wanted, TYPE_LEAD);
        let mut name = base.clone();
        let mut why = (name != wanted).then(|| "a table name holds only a-z, 0-9 and _".to_string());
        if taken.contains(&name) {
            why = Some(format!("{name} is a table of txq's own or of another type"));
            name = format!("type_{base}");
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("type_{base}_{n}");
                n += 1;
            }
        }
        taken.insert(name.clone());
        named.push((type_name, name, why));
    }
    named
}

/// Every event table of a format: each documented type, then each other type in the data (named
/// as [`found_type_names`] says). Each has the context columns, the format's common fields, the
/// type's documented fields, then the fields found in the data.
pub(crate) fn event_tables(format: &Format, stats: &FormatStats) -> Vec<EventTable> {
    let mut names: Vec<(&str, Option<&crate::format::EventSpec>, String, Option<String>)> = format
        .events
        .iter()
        .map(|e| (e.type_name, Some(e), format.table_naming.apply(e.type_name), None))
        .collect();
    let found: Vec<&str> = stats
        .types
        .keys()
        .map(|t| t.as_ref())
        .filter(|t| !format.events.iter().any(|e| e.type_name == *t))
        .collect();
    for (type_name, name, why) in found_type_names(format, &found) {
        names.push((type_name, None, name, why));
    }
    names
        .into_iter()
        .map(|(type_name, spec, name, renamed)| {
            let mut columns = Columns { columns: context_columns(format), naming: format.column_naming };
            let found = stats.types.get(type_name);
            let fields_path = spec.map_or(&[][..], |s| s.fields_path);
            // Common fields are beside the type; a type whose fields are further down has none.
            if fields_path.is_empty() {
                format.common_fields.iter().for_each(|f| columns.add_spec(f, true));
            }
            spec.iter().flat_map(|s| &s.fields).for_each(|f| columns.add_spec(f, true));
            let type_key = format.envelope.type_key_among_fields(type_name);
            columns.add_found(found.map_or(&[][..], |t| t.fields.as_slice()), type_key);
            EventTable {
                name,
                rows: Rows::Type(type_name.to_string()),
                about: spec
                    .map_or("a type found in the data that no document names", |s| s.about)
                    .to_string(),
                fields_path: fields_path.iter().map(|s| s.to_string()).collect(),
                columns: columns.columns,
                events: Some(found.map_or(0, |t| t.events)),
                documented: spec.is_some(),
                renamed,
            }
        })
        .collect()
}

/// A format's own columns for a table of every line: the context columns and the common fields.
pub(crate) fn context_and_common(format: &Format) -> Vec<Column> {
    let mut columns = Columns { columns: context_columns(format), naming: format.column_naming };
    format.common_fields.iter().for_each(|f| columns.add_spec(f, true));
    columns.columns
}

fn special(name: &str, rows: Rows, about: &str, columns: Vec<Column>, events: Option<u64>) -> EventTable {
    EventTable {
        name: name.into(),
        rows,
        about: about.into(),
        fields_path: vec![],
        columns,
        events,
        documented: true,
        renamed: None,
    }
}

fn plain(name: &str, source: ColumnSource, about: &str) -> Column {
    Column { name: name.into(), kind: Kind::Str, source, about: about.into() }
}

/// The `events` table: every valid event, its fields as JSON text.
pub(crate) fn events_table(format: &Format, stats: &FormatStats) -> EventTable {
    let mut columns = context_and_common(format);
    columns.push(plain("type", ColumnSource::EventType, "the event type as written in the file"));
    columns.push(plain("data", ColumnSource::EventFields, "the event's fields as JSON text"));
    let total = stats.types.values().map(|t| t.events).sum();
    special("events", Rows::AllEvents, "every valid event of every type", columns, Some(total))
}

/// The `errors` table: every damaged line and every value that does not fit its column.
pub(crate) fn errors_table(format: &Format) -> EventTable {
    let mut columns = context_columns(format);
    columns.push(plain("reason", ColumnSource::Problem, "what is wrong with the line or value"));
    columns.push(plain("excerpt", ColumnSource::Excerpt, "the line's first 200 characters"));
    special("errors", Rows::Errors, "one row per damaged line or unreadable value", columns, None)
}

/// The tables of a format read as one table of lines: that table and its errors table.
pub(crate) fn lines_tables(format: &Format, lines: &LinesTable) -> Vec<EventTable> {
    let mut columns = context_and_common(format);
    columns.push(plain(lines.line_column, ColumnSource::EventFields, "the whole line as JSON text"));
    let mut errors = errors_table(format);
    errors.name = lines.errors_name.to_string();
    errors.about = format!("one row per damaged line of {}", lines.name);
    vec![special(lines.name, Rows::Lines, lines.about, columns, None), errors]
}

/// Every table a format's files make, before its views.
pub fn all_tables(format: &Format, stats: &FormatStats) -> Vec<EventTable> {
    if let Some(lines) = &format.lines_table {
        return lines_tables(format, lines);
    }
    let mut tables = event_tables(format, stats);
    tables.push(events_table(format, stats));
    tables.push(errors_table(format));
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(list: &[Shape]) -> ShapeSet {
        let mut s = ShapeSet::default();
        list.iter().for_each(|x| s.add(*x));
        s
    }

    #[test]
    fn names_from_the_data_become_identifiers() {
        assert_eq!(identifier("usage", TYPE_LEAD), "usage");
        assert_eq!(identifier("inputTokens", FIELD_LEAD), "input_tokens");
        assert_eq!(identifier("HTTPStatus", FIELD_LEAD), "httpstatus");
        assert_eq!(identifier("../../x", TYPE_LEAD), "______x");
        assert_eq!(identifier("", TYPE_LEAD), "type_");
        assert_eq!(identifier("5xx", FIELD_LEAD), "field_5xx");
        assert_eq!(identifier("naïve\u{1b}[2J", TYPE_LEAD), "na_ve__2_j");
        let long = identifier(&"a".repeat(300), TYPE_LEAD);
        assert_eq!(long.len(), 64 + 9);
        assert!(long.starts_with(&"a".repeat(64)) && long != identifier(&"a".repeat(301), TYPE_LEAD));
    }

    #[test]
    fn kinds_from_shapes() {
        assert_eq!(inferred_kind(shapes(&[Shape::Str, Shape::Null])), Kind::Str);
        assert_eq!(inferred_kind(shapes(&[Shape::Null])), Kind::Str);
        assert_eq!(inferred_kind(shapes(&[Shape::Int])), Kind::Int);
        assert_eq!(inferred_kind(shapes(&[Shape::Int, Shape::Float])), Kind::Float);
        assert_eq!(inferred_kind(shapes(&[Shape::Bool])), Kind::Bool);
        assert_eq!(inferred_kind(shapes(&[Shape::Str, Shape::Int])), Kind::Json);
        assert_eq!(inferred_kind(shapes(&[Shape::Object])), Kind::Json);
    }
}
