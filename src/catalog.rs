//! The tables of a format: which exist and what their columns are, from the format's description
//! and what the inference pass found in the data.

use crate::format::{Absent, ContextSource, Format, Kind};
use crate::infer::{FormatStats, Shapes};
use crate::json::Shape;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// Where a column's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnSource {
    /// From the file or the line's position.
    Context(ContextSource),
    /// From the event's field `key`.
    Field { key: String, absent: Absent },
    /// The event's type as written (`events`).
    EventType,
    /// The event's fields as JSON text (`events`).
    EventFields,
    /// What is wrong with the line (`errors`).
    Problem,
    /// The line's first characters (`errors`).
    Excerpt,
}

/// One column of an event table.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub source: ColumnSource,
    pub about: String,
    /// False for a field found in the data that no document names.
    pub documented: bool,
}

impl Column {
    pub fn data_type(&self) -> DataType {
        match &self.source {
            ColumnSource::Context(source) => source.data_type(),
            ColumnSource::Field { .. } => self.kind.data_type(),
            _ => DataType::Utf8,
        }
    }
}

/// Which lines a table's rows come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rows {
    /// Valid events of this type (as written in the data).
    Type(String),
    /// Every valid event.
    AllEvents,
    /// Every damaged line, and every value that does not fit its column.
    Problems,
}

/// One table read by the scan: an event type, `events` or `errors`.
#[derive(Debug, Clone)]
pub struct EventTable {
    /// The SQL name.
    pub name: String,
    pub rows: Rows,
    pub about: String,
    /// Keys below the event's fields where this type's columns are.
    pub fields_path: Vec<String>,
    pub columns: Vec<Column>,
    /// Rows found by the inference pass (events of the type; all events), where known.
    pub events: Option<u64>,
    /// False for a type found in the data that no document names.
    pub documented: bool,
}

impl EventTable {
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| Field::new(&c.name, c.data_type(), true))
                .collect::<Vec<_>>(),
        ))
    }
}

/// The kind of column a field found only in the data gets, from the shapes of its values.
pub fn inferred_kind(shapes: Shapes) -> Kind {
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
pub fn context_columns(format: &Format) -> Vec<Column> {
    format
        .context
        .iter()
        .map(|c| Column {
            name: c.name.to_string(),
            kind: Kind::Str,
            source: ColumnSource::Context(c.source.clone()),
            about: c.about.to_string(),
            documented: true,
        })
        .collect()
}

/// Every event table of a format: each documented type, then each other type in the data.
/// A field whose column name is taken by a context column is named `data_<name>`.
pub fn event_tables(format: &Format, stats: &FormatStats) -> Vec<EventTable> {
    let context = context_columns(format);
    let mut tables = Vec::new();
    let mut push_table = |type_name: &str,
                          about: &str,
                          fields_path: &[&str],
                          documented_fields: &[crate::format::FieldSpec],
                          documented: bool| {
        let mut columns = context.clone();
        let taken = |columns: &[Column], name: &str| columns.iter().any(|c| c.name == name);
        let add = |columns: &mut Vec<Column>,
                   key: &str,
                   kind: Kind,
                   absent: Absent,
                   about: String,
                   documented: bool| {
            let mut name = format.column_naming.apply(key);
            if taken(columns, &name) {
                name = format!("data_{name}");
            }
            if !taken(columns, &name) {
                columns.push(Column {
                    name,
                    kind,
                    source: ColumnSource::Field {
                        key: key.to_string(),
                        absent,
                    },
                    about,
                    documented,
                });
            }
        };
        for spec in documented_fields {
            add(
                &mut columns,
                spec.key,
                spec.kind.clone(),
                spec.absent,
                spec.about.to_string(),
                true,
            );
        }
        let found = stats.types.get(type_name);
        for (key, shapes) in found.map(|t| t.fields.as_slice()).unwrap_or(&[]) {
            if documented_fields.iter().any(|f| f.key == key) {
                continue;
            }
            let kind = inferred_kind(*shapes);
            let about = format!("found in the data ({})", kind.describe());
            add(&mut columns, key, kind, Absent::Null, about, false);
        }
        tables.push(EventTable {
            name: format.table_naming.apply(type_name),
            rows: Rows::Type(type_name.to_string()),
            about: about.to_string(),
            fields_path: fields_path.iter().map(|s| s.to_string()).collect(),
            columns,
            events: Some(found.map_or(0, |t| t.events)),
            documented,
        });
    };
    for spec in &format.events {
        push_table(
            spec.type_name,
            spec.about,
            spec.fields_path,
            &spec.fields,
            true,
        );
    }
    for type_name in stats.types.keys() {
        if !format.events.iter().any(|e| e.type_name == type_name) {
            push_table(
                type_name,
                "a type found in the data that no document names",
                &[],
                &[],
                false,
            );
        }
    }
    tables
}

fn special(
    name: &str,
    rows: Rows,
    about: &str,
    columns: Vec<Column>,
    events: Option<u64>,
) -> EventTable {
    EventTable {
        name: name.into(),
        rows,
        about: about.into(),
        fields_path: vec![],
        columns,
        events,
        documented: true,
    }
}

fn plain(name: &str, source: ColumnSource, about: &str) -> Column {
    Column {
        name: name.into(),
        kind: Kind::Str,
        source,
        about: about.into(),
        documented: true,
    }
}

/// The `events` table: every valid event, its fields as JSON text.
pub fn events_table(format: &Format, stats: &FormatStats) -> EventTable {
    let mut columns = context_columns(format);
    columns.push(plain(
        "type",
        ColumnSource::EventType,
        "the event type as written in the file",
    ));
    columns.push(plain(
        "data",
        ColumnSource::EventFields,
        "the event's fields as JSON text",
    ));
    let total = stats.types.values().map(|t| t.events).sum();
    special(
        "events",
        Rows::AllEvents,
        "every valid event of every type",
        columns,
        Some(total),
    )
}

/// The `errors` table: every damaged line and every value that does not fit its column.
pub fn errors_table(format: &Format) -> EventTable {
    let mut columns = context_columns(format);
    columns.push(plain(
        "reason",
        ColumnSource::Problem,
        "what is wrong with the line or value",
    ));
    columns.push(plain(
        "excerpt",
        ColumnSource::Excerpt,
        "the line's first 200 characters",
    ));
    special(
        "errors",
        Rows::Problems,
        "one row per damaged line or unreadable value",
        columns,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(list: &[Shape]) -> Shapes {
        let mut s = Shapes::default();
        list.iter().for_each(|x| s.add(*x));
        s
    }

    #[test]
    fn kinds_from_shapes() {
        assert_eq!(inferred_kind(shapes(&[Shape::Str, Shape::Null])), Kind::Str);
        assert_eq!(inferred_kind(shapes(&[Shape::Null])), Kind::Str);
        assert_eq!(inferred_kind(shapes(&[Shape::Int])), Kind::Int);
        assert_eq!(
            inferred_kind(shapes(&[Shape::Int, Shape::Float])),
            Kind::Float
        );
        assert_eq!(inferred_kind(shapes(&[Shape::Bool])), Kind::Bool);
        assert_eq!(inferred_kind(shapes(&[Shape::Str, Shape::Int])), Kind::Json);
        assert_eq!(inferred_kind(shapes(&[Shape::Object])), Kind::Json);
    }
}
