//! Turning lines into Arrow columns: each projected column's values decoded from the line's raw
//! fields straight into a builder, with a value that does not fit its column kept as null and named.

use crate::format::{Absent, ContextSource, Derive, Kind, MAX_COUNT, MarkerPart};
use crate::json::{Raw, RawObject, Shape};
use crate::source::files::SourceFile;
use crate::table::event_table::{Column, ColumnSource, EventTable};
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use datafusion::arrow::compute::kernels::cast_utils::string_to_datetime;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::sync::Arc;

/// What a line offers to the columns of a table.
#[derive(Debug, Default)]
pub(crate) struct LineValues<'a> {
    pub(crate) line: u64,
    /// The turn it falls in (for `LastSeen` context columns).
    pub(crate) turn: Option<i64>,
    pub(crate) type_name: Option<&'a str>,
    /// The event's fields (after the format's envelope and the type's fields path).
    pub(crate) fields: Option<&'a RawObject<'a>>,
    /// The event's fields as JSON text.
    pub(crate) fields_text: Option<&'a str>,
    /// The line's own keys, when its fields are under one of them (`None`: they are the fields).
    pub(crate) line_keys: Option<&'a RawObject<'a>>,
    /// The values carried from earlier lines, one per `Carried` context column of the format, in
    /// its order.
    pub(crate) carried: &'a [Option<String>],
    pub(crate) problem: Option<&'a str>,
    pub(crate) excerpt: Option<&'a str>,
}

/// A context value, fixed for a whole file.
#[derive(Debug, Clone)]
enum FileValue {
    Str(Option<String>),
    Int(Option<i64>),
    Bool(bool),
    /// Varies by line: taken from [`LineValues`].
    PerLine,
}

/// The context values of one file, for the context columns of its format.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileContext {
    values: Vec<FileValue>,
}

/// A path or a part of one as the context columns hold it: exactly, but for bytes that are not
/// UTF-8, written `\xNN` ([`crate::text::escape::path_text`]), so that two such names stay apart.
fn text_of(path: &std::path::Path) -> String {
    crate::text::escape::path_text(path).into_owned()
}

impl FileContext {
    /// Evaluates `columns`' file-level sources for `file`.
    pub(crate) fn new(columns: &[Column], file: &SourceFile) -> Self {
        let ancestor =
            |n: usize| file.path.ancestors().nth(n).and_then(|p| p.file_name()).map(|s| text_of(s.as_ref()));
        let components: Vec<String> = file
            .path
            .parent()
            .map(|p| p.components().map(|c| text_of(c.as_os_str().as_ref())).collect())
            .unwrap_or_default();
        let values = columns
            .iter()
            .map(|c| match &c.source {
                ColumnSource::Context(source) => match source {
                    ContextSource::FileStem => {
                        FileValue::Str(crate::format::claimed_stem(&file.path).map(|s| text_of(s.as_ref())))
                    }
                    ContextSource::FilePath => FileValue::Str(Some(text_of(&file.path))),
                    ContextSource::Ancestor(n) => FileValue::Str(ancestor(*n)),
                    ContextSource::AncestorInt(n) => {
                        FileValue::Int(ancestor(*n).and_then(|s| s.parse().ok()))
                    }
                    ContextSource::UnderDirectory(dir) => {
                        FileValue::Bool(components.iter().any(|c| c == dir))
                    }
                    ContextSource::UnderPath(path) => FileValue::Bool(
                        components
                            .windows(path.len())
                            .any(|w| w.iter().zip(path.iter()).all(|(a, b)| a == b)),
                    ),
                    ContextSource::Below(dir) => {
                        let at = components.iter().rposition(|c| c == dir);
                        FileValue::Str(at.and_then(|at| components.get(at + 1)).cloned())
                    }
                    ContextSource::FileText { below, name } => {
                        FileValue::Str(file_text(&file.path, below, name))
                    }
                    ContextSource::LineNumber
                    | ContextSource::LastSeen { .. }
                    | ContextSource::Carried { .. } => FileValue::PerLine,
                },
                _ => FileValue::PerLine,
            })
            .collect();
        Self { values }
    }
}

/// The text of the file `name` in the directory just inside the nearest one above `path` named
/// `below`, trimmed; `None` when there is none, it cannot be read, it is over 4 KiB (a marker
/// naming a directory, not data), or `path` is an object in a store.
fn file_text(path: &std::path::Path, below: &str, name: &str) -> Option<String> {
    // An object's folders are no folders of this machine (the marker is not read from a store).
    if crate::source::remote::is_remote(path) {
        return None;
    }
    let folders: Vec<&std::path::Path> = path.ancestors().skip(1).collect();
    let at = folders.iter().position(|dir| dir.file_name().is_some_and(|n| n == below))?;
    let folder = folders.get(at.checked_sub(1)?)?;
    let marker = folder.join(name);
    let meta = std::fs::metadata(&marker).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read(&marker).ok()?;
    let text = String::from_utf8_lossy(&text);
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// A column under construction.
#[derive(Debug)]
enum Builder {
    Int(Int64Builder),
    Float(Float64Builder),
    Str(StringBuilder),
    Bool(BooleanBuilder),
    Timestamp(TimestampMicrosecondBuilder),
    /// Lists and structs: the values are collected, then decoded by arrow-json.
    Nested(DataType, Vec<Value>),
}

impl Builder {
    /// A builder with room for `rows` values.
    fn for_type(data_type: &DataType, rows: usize) -> Builder {
        match data_type {
            DataType::Int64 => Builder::Int(Int64Builder::with_capacity(rows)),
            DataType::Float64 => Builder::Float(Float64Builder::with_capacity(rows)),
            DataType::Boolean => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            DataType::Timestamp(..) => Builder::Timestamp(TimestampMicrosecondBuilder::with_capacity(rows)),
            DataType::Utf8 => Builder::Str(StringBuilder::with_capacity(rows, rows * 8)),
            other => Builder::Nested(other.clone(), Vec::new()),
        }
    }

    fn null(&mut self) {
        match self {
            Builder::Int(b) => b.append_null(),
            Builder::Float(b) => b.append_null(),
            Builder::Str(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
            Builder::Timestamp(b) => b.append_null(),
            Builder::Nested(_, values) => values.push(Value::Null),
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Float(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Timestamp(b) => Arc::new(b.finish().with_timezone("UTC")),
            Builder::Nested(data_type, values) => nested_array(data_type, &std::mem::take(values))?,
        })
    }

    /// Appends one field value; on a value that does not fit, appends null and says why.
    fn field(&mut self, kind: &Kind, raw: Option<Raw<'_>>, absent: Absent) -> Result<(), String> {
        let Some(raw) = raw.filter(|r| Shape::of(r) != Shape::Null) else {
            match (self, absent, raw) {
                (Builder::Bool(b), Absent::Bool(v), None) => b.append_value(v),
                (Builder::Int(b), Absent::Int(v), None) => b.append_value(v),
                (builder, Absent::Int(v), Some(_)) => {
                    return builder
                        .reject(format!("expected {}, found null ({v} when absent)", kind.describe()));
                }
                (builder, Absent::Required, raw) => {
                    let found = if raw.is_some() { "null" } else { "no value" };
                    return builder
                        .reject(format!("expected {}, found {found} (it is required)", kind.describe()));
                }
                (builder, ..) => builder.null(),
            }
            return Ok(());
        };
        let shape = Shape::of(&raw);
        let text = raw.get();
        let fit = match (&mut *self, kind) {
            (Builder::Int(b), _) => match whole_number(text) {
                Some(Ok(v)) if *kind != Kind::Count || (0..=MAX_COUNT).contains(&v) => {
                    b.append_value(v);
                    true
                }
                Some(Ok(_)) => {
                    return self.reject(format!(
                        "expected {}, found {text}: a count is from 0 to {MAX_COUNT}",
                        kind.describe()
                    ));
                }
                Some(Err(OutOfRange)) => {
                    return self
                        .reject(format!("expected {}, found an integer beyond its range", kind.describe()));
                }
                None if shape == Shape::Float => {
                    return self.reject(format!(
                        "expected {}, found {}: not a whole number",
                        kind.describe(),
                        excerpt(text, 40)
                    ));
                }
                None => false,
            },
            (Builder::Float(b), _) => match shape {
                Shape::Int | Shape::Float => match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => {
                        b.append_value(v);
                        true
                    }
                    Ok(_) => {
                        return self.reject(format!(
                            "expected {}, found a number beyond its range",
                            kind.describe()
                        ));
                    }
                    Err(_) => false,
                },
                _ => false,
            },
            (Builder::Bool(b), _) => {
                if shape == Shape::Bool {
                    b.append_value(text == "true");
                }
                shape == Shape::Bool
            }
            (Builder::Str(b), Kind::Json) => {
                b.append_value(text);
                true
            }
            (Builder::Str(b), _) => match crate::json::string(raw) {
                Some(s) if shape == Shape::Str => {
                    b.append_value(s);
                    true
                }
                _ => false,
            },
            (Builder::Timestamp(b), _) => match crate::json::string(raw) {
                Some(s) if shape == Shape::Str => match timestamp_micros(&s) {
                    Some(micros) => {
                        b.append_value(micros);
                        true
                    }
                    None => {
                        return self.reject(format!("not an RFC 3339 timestamp: {}", excerpt(text, 60)));
                    }
                },
                _ => false,
            },
            (Builder::Nested(_, values), kind) => match crate::json::value(text) {
                Ok(value) if fits(&value, kind) => {
                    values.push(value);
                    true
                }
                Ok(_) => false,
                // serde_json reads 128 levels deep at most.
                Err(e) => {
                    let why = match e.to_string() {
                        m if m.starts_with("recursion limit exceeded") => "nested too deeply".to_string(),
                        m => format!("that cannot be read ({m})"),
                    };
                    return self.reject(format!(
                        "expected {}, found {} {why}",
                        kind.describe(),
                        shape.article()
                    ));
                }
            },
        };
        if fit {
            Ok(())
        } else {
            self.reject(format!("expected {}, found {}", kind.describe(), shape.article()))
        }
    }

    /// Appends a value computed from a field's raw value.
    fn derived(&mut self, derive: &Derive, raw: Option<Raw<'_>>) {
        let Derive::TruncationMarker { prefix, part } = derive;
        let text = raw.filter(|r| Shape::of(r) == Shape::Str).map(|r| r.get());
        let marker = text.and_then(|t| truncation_marker(t, prefix));
        match (self, part) {
            (Builder::Bool(b), MarkerPart::Present) => b.append_option(text.map(|_| marker.is_some())),
            (Builder::Int(b), MarkerPart::TotalChars) => b.append_option(marker.map(|(total, _)| total)),
            (Builder::Str(b), MarkerPart::Sha256) => b.append_option(marker.map(|(_, hash)| hash)),
            (b, _) => b.null(),
        }
    }

    fn reject(&mut self, why: String) -> Result<(), String> {
        self.null();
        Err(why)
    }
}

/// A whole number beyond the range of a bigint.
struct OutOfRange;

/// The integer a JSON number's text stands for, exactly (`12`, `1.0`, `1e2`, `-2.50e1`); `None`
/// for a number with a fraction (or text that is no number).
fn whole_number(text: &str) -> Option<Result<i64, OutOfRange>> {
    if let Ok(v) = text.parse::<i64>() {
        return Some(Ok(v));
    }
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = || whole.bytes().chain(fraction.bytes());
    if whole.is_empty() || !digits().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The digits, with the point moved `exponent` places: those after it must all be 0.
    let point = (whole.len() as i64).checked_add(exponent)?;
    let significant: Vec<u8> = digits().skip_while(|b| *b == b'0').collect();
    let leading_zeros = digits().take_while(|b| *b == b'0').count() as i64;
    let point = point - leading_zeros;
    if significant.is_empty() {
        return Some(Ok(0));
    }
    if significant.iter().skip(point.max(0) as usize).any(|b| *b != b'0') || point <= 0 {
        return None;
    }
    // More than 19 digits before the point is beyond any bigint.
    if point > 19 {
        return Some(Err(OutOfRange));
    }
    let mut value: i128 = 0;
    for i in 0..point as usize {
        value = value * 10 + i128::from(significant.get(i).map_or(0, |b| b - b'0'));
    }
    let value = if negative { -value } else { value };
    Some(i64::try_from(value).map_err(|_| OutOfRange))
}

/// A timestamp's microseconds since the epoch (UTC), straight from the date and time written:
/// every RFC 3339 time fits (years 0000 to 9999, any offset; a leap second reads as the next
/// second's start), where Arrow's nanoseconds reach 1677 to 2262 only.
fn timestamp_micros(text: &str) -> Option<i64> {
    string_to_datetime(&chrono::Utc, text).ok().map(|time| time.timestamp_micros())
}

/// Whether a JSON value has the shape of `kind` all the way down (so arrow-json takes it).
fn fits(value: &Value, kind: &Kind) -> bool {
    match (value, kind) {
        (Value::Null, _) => true,
        (Value::Number(n), Kind::Int) => n.is_i64(),
        (Value::Number(n), Kind::Count) => n.as_i64().is_some_and(|v| (0..=MAX_COUNT).contains(&v)),
        (Value::Number(_), Kind::Float) => true,
        (Value::String(_), Kind::Str) => true,
        (Value::Bool(_), Kind::Bool) => true,
        (Value::Array(items), Kind::List(item)) => items.iter().all(|v| fits(v, item)),
        (Value::Object(map), Kind::Struct(fields)) => {
            fields.iter().all(|(name, kind)| map.get(*name).is_none_or(|v| fits(v, kind)))
        }
        _ => false,
    }
}

/// One row `{"v": value}` for arrow-json.
struct Wrapped<'a>(&'a Value);

impl Serialize for Wrapped<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("v", self.0)?;
        map.end()
    }
}

fn nested_array(data_type: &DataType, values: &[Value]) -> Result<ArrayRef, ArrowError> {
    let schema = Arc::new(Schema::new(vec![Field::new("v", data_type.clone(), true)]));
    let mut decoder = datafusion::arrow::json::ReaderBuilder::new(schema)
        .with_batch_size(values.len().max(1))
        .build_decoder()?;
    let rows: Vec<Wrapped> = values.iter().map(Wrapped).collect();
    decoder.serialize(&rows)?;
    match decoder.flush()? {
        Some(batch) => Ok(batch.column(0).clone()),
        None => Ok(datafusion::arrow::array::new_empty_array(data_type)),
    }
}

/// The total length and the sha256 named by a marker `<prefix><omitted> of <total> characters,
/// sha256 <hash>]` inside `text` (the marker holds nothing JSON escapes, so raw JSON text will do).
fn truncation_marker<'a>(text: &'a str, prefix: &str) -> Option<(i64, &'a str)> {
    let start = memchr::memmem::find(text.as_bytes(), prefix.as_bytes())? + prefix.len();
    let (omitted, rest) = text[start..].split_once(" of ")?;
    let (total, rest) = rest.split_once(" characters, sha256 ")?;
    let (hash, _) = rest.split_once(']')?;
    omitted.parse::<u64>().ok()?;
    let is_hash = !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit());
    Some((total.parse().ok()?, hash)).filter(|_| is_hash)
}

/// The first `max` characters of `text`.
pub(crate) fn excerpt(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// A problem with one value of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NulledValue {
    pub(crate) column: String,
    pub(crate) why: String,
}

/// Where a column's value (or a nested object) is found in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// Among the event's fields.
    Fields,
    /// Among the line's own keys.
    Line,
    /// In the nested object of this index into the decoder's `objects`.
    Object(usize),
    /// The value carried from an earlier line, of this index into [`LineValues::carried`].
    Carried(usize),
}

/// Builds record batches of one table's projected columns, row by row.
#[derive(Debug)]
pub struct RowDecoder {
    schema: SchemaRef,
    /// Each projected column: its index in the table, itself, its builder, and what it reads.
    columns: Vec<(usize, Column, Builder, Reads)>,
    /// The nested objects the columns read from (`message`, `message.usage`), each with the key
    /// that holds it and the object it lies in, parents first.
    objects: Vec<(String, Reads)>,
    context: FileContext,
    rows: usize,
}

impl RowDecoder {
    /// A decoder of `projection` (indices into the table's columns; all when `None`).
    pub fn new(table: &EventTable, projection: Option<&[usize]>) -> Self {
        Self::with_room(table, projection, 1024)
    }

    /// A decoder of every column that holds no room ahead: for checking values, one per type of
    /// a file that may hold tens of thousands.
    pub(crate) fn checker(table: &EventTable) -> Self {
        Self::with_room(table, None, 0)
    }

    fn with_room(table: &EventTable, projection: Option<&[usize]>, rows: usize) -> Self {
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let projection = projection.unwrap_or(&all);
        let full = table.schema();
        let schema = Arc::new(full.project(projection).expect("projection within the table"));
        // Each nested object's path, the first step saying whether it starts among the line's
        // own keys.
        let mut paths: Vec<(bool, Vec<String>)> = Vec::new();
        let carried_before = |i: usize| {
            table.columns[..i]
                .iter()
                .filter(|c| matches!(c.source, ColumnSource::Context(ContextSource::Carried { .. })))
                .count()
        };
        let columns = projection
            .iter()
            .map(|&i| {
                let column = table.columns[i].clone();
                let builder = Builder::for_type(&column.data_type(), rows);
                let reads = match &column.source {
                    ColumnSource::Field { at, on_line, .. } if !at.is_empty() => {
                        Reads::Object(object_index(&mut paths, *on_line, at))
                    }
                    ColumnSource::Field { on_line: true, .. } => Reads::Line,
                    ColumnSource::Context(ContextSource::Carried { .. }) => Reads::Carried(carried_before(i)),
                    _ => Reads::Fields,
                };
                (i, column, builder, reads)
            })
            .collect();
        let objects = paths
            .iter()
            .map(|(on_line, path)| {
                let parent = path[..path.len() - 1].to_vec();
                let holder = match paths.iter().position(|(l, p)| l == on_line && *p == parent) {
                    Some(at) => Reads::Object(at),
                    None if *on_line => Reads::Line,
                    None => Reads::Fields,
                };
                (path[path.len() - 1].clone(), holder)
            })
            .collect();
        Self { schema, columns, objects, context: FileContext::default(), rows: 0 }
    }

    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Sets the file whose lines follow.
    pub(crate) fn start_file(&mut self, context: FileContext) {
        self.context = context;
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Appends one row; problems with its values are pushed to `problems`.
    pub(crate) fn push(&mut self, values: &LineValues<'_>, problems: &mut Vec<NulledValue>) {
        self.rows += 1;
        // The nested objects of this line, each parsed once when a column first needs it.
        let mut objects: Vec<Option<Option<RawObject<'_>>>> = Vec::new();
        objects.resize_with(self.objects.len(), || None);
        let line_keys = values.line_keys.or(values.fields);
        for (index, column, builder, reads) in &mut self.columns {
            let fields = match *reads {
                Reads::Fields | Reads::Carried(_) => values.fields,
                Reads::Line => line_keys,
                Reads::Object(at) => {
                    resolve(&self.objects, &mut objects, at, values.fields, line_keys);
                    objects[at].as_ref().and_then(Option::as_ref)
                }
            };
            let text = |s: Option<&str>, b: &mut Builder| match (b, s) {
                (Builder::Str(b), Some(s)) => b.append_value(s),
                (b, _) => b.null(),
            };
            match &column.source {
                ColumnSource::Context(source) => {
                    match (self.context.values.get(*index), source, &mut *builder) {
                        (Some(FileValue::Str(s)), _, b) => text(s.as_deref(), b),
                        (Some(FileValue::Int(Some(v))), _, Builder::Int(b)) => b.append_value(*v),
                        (Some(FileValue::Bool(v)), _, Builder::Bool(b)) => b.append_value(*v),
                        (_, ContextSource::LineNumber, Builder::Int(b)) => b.append_value(values.line as i64),
                        (_, ContextSource::LastSeen { .. }, Builder::Int(b)) => b.append_option(values.turn),
                        (_, ContextSource::Carried { .. }, b) => {
                            let at = match *reads {
                                Reads::Carried(at) => at,
                                _ => usize::MAX,
                            };
                            text(values.carried.get(at).and_then(Option::as_deref), b)
                        }
                        (_, _, b) => b.null(),
                    }
                }
                ColumnSource::Field { key, derive: Some(derive), .. } => {
                    builder.derived(derive, fields.and_then(|f| f.get(key)));
                }
                ColumnSource::Field { key, absent, derive: None, .. } => {
                    let raw = fields.and_then(|f| f.get(key));
                    // A required key of a nested object is required where that object is: with
                    // the object absent, the key is unknown, not damaged.
                    let absent = match (*absent, *reads, fields) {
                        (Absent::Required, Reads::Object(_), None) => Absent::Null,
                        (absent, ..) => absent,
                    };
                    if let Err(why) = builder.field(&column.kind, raw, absent) {
                        problems.push(NulledValue { column: column.name.clone(), why });
                    }
                }
                ColumnSource::EventType => text(values.type_name, builder),
                ColumnSource::EventFields => text(values.fields_text, builder),
                ColumnSource::Problem => text(values.problem, builder),
                ColumnSource::Excerpt => text(values.excerpt, builder),
            }
        }
    }

    /// The rows so far as a batch; the decoder starts empty again.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let arrays = self.columns.iter_mut().map(|(_, _, b, _)| b.finish()).collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        self.rows = 0;
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)
    }
}

/// The index of the object at `path` (among the line's own keys with `on_line`) among `paths`,
/// added with its parents (parents first).
fn object_index(paths: &mut Vec<(bool, Vec<String>)>, on_line: bool, path: &[String]) -> usize {
    for end in 1..=path.len() {
        if !paths.iter().any(|(l, p)| *l == on_line && p[..] == path[..end]) {
            paths.push((on_line, path[..end].to_vec()));
        }
    }
    paths.iter().position(|(l, p)| *l == on_line && p[..] == path[..]).expect("added above")
}

/// Parses the nested object `at` of a line into `parsed` (and its parents before it), once: a
/// key that is absent, null, or not an object, leaves it `None`.
fn resolve<'a>(
    objects: &[(String, Reads)],
    parsed: &mut [Option<Option<RawObject<'a>>>],
    at: usize,
    fields: Option<&RawObject<'a>>,
    line_keys: Option<&RawObject<'a>>,
) {
    if parsed[at].is_some() {
        return;
    }
    let (key, holder) = &objects[at];
    let raw = match *holder {
        Reads::Object(parent) => {
            resolve(objects, parsed, parent, fields, line_keys);
            parsed[parent].as_ref().and_then(Option::as_ref).and_then(|f| f.get(key))
        }
        Reads::Line => line_keys.and_then(|f| f.get(key)),
        Reads::Fields | Reads::Carried(_) => fields.and_then(|f| f.get(key)),
    };
    // A null object is no object: the keys under it are absent, and none is required.
    let raw = raw.filter(|raw| Shape::of(raw) != Shape::Null);
    parsed[at] = Some(raw.and_then(|raw| crate::json::parse_object(raw).ok()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_markers() {
        let prefix = "[reeval: truncated ";
        let text = "head [reeval: truncated 10 of 131082 characters, sha256 ab12] tail";
        assert_eq!(truncation_marker(text, prefix), Some((131082, "ab12")));
        assert_eq!(truncation_marker("no marker", prefix), None);
        assert_eq!(truncation_marker("[reeval: truncated x of 5 characters, sha256 ab]", prefix), None);
        assert_eq!(truncation_marker("[reeval: truncated 1 of 5 characters, sha256 zz]", prefix), None);
    }

    #[test]
    fn whole_numbers_are_read_exactly_in_any_notation() {
        let read = |text: &str| whole_number(text).map(|r| r.ok());
        assert_eq!(read("12"), Some(Some(12)));
        assert_eq!(read("1.0"), Some(Some(1)));
        assert_eq!(read("1e2"), Some(Some(100)));
        assert_eq!(read("1E+2"), Some(Some(100)));
        assert_eq!(read("-2.50e1"), Some(Some(-25)));
        assert_eq!(read("1500e-2"), Some(Some(15)));
        assert_eq!(read("0.0"), Some(Some(0)));
        assert_eq!(read("-0"), Some(Some(0)));
        assert_eq!(read("0e99999"), Some(Some(0)));
        assert_eq!(read("9223372036854775807.0"), Some(Some(i64::MAX)));
        assert_eq!(read("-9.223372036854775808e18"), Some(Some(i64::MIN)));
        assert_eq!(read("9223372036854775808"), Some(None));
        assert_eq!(read("1e19"), Some(None));
        assert_eq!(read("1e400"), Some(None));
        assert_eq!(read("1.5"), None);
        assert_eq!(read("1e-2"), None);
        assert_eq!(read("0.1e1"), Some(Some(1)));
        assert_eq!(read("1.0000000000000001"), None);
        assert_eq!(read("nan"), None);
    }

    #[test]
    fn excerpts_cut_at_characters() {
        assert_eq!(excerpt("héllo", 2), "hé");
        assert_eq!(excerpt("hi", 5), "hi");
    }
}
