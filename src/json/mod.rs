//! Reading one JSON line: its type found cheaply, its top-level object split into raw fields,
//! and the shape of a raw value told without decoding it. A byte-level scanner reads the lines
//! written the usual way; serde_json reads the rest, and says what is wrong with a damaged line.

mod scanner;

use crate::format::{Envelope, KeyRule, KeyShape, TypeRule};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The text of one valid JSON value, as written (no whitespace around it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    pub(crate) fn get(&self) -> &'a str {
        self.0
    }
}

impl<'a> From<&'a RawValue> for Raw<'a> {
    fn from(raw: &'a RawValue) -> Self {
        Raw(raw.get())
    }
}

/// The keys and raw values of one JSON object, in the order written.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RawObject<'a> {
    pub(crate) entries: Vec<(Cow<'a, str>, Raw<'a>)>,
}

impl<'a> RawObject<'a> {
    /// The raw value of `key` (the first one, if the key repeats).
    pub(crate) fn get(&self, key: &str) -> Option<Raw<'a>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                raw_entries(map)
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// An object's keys and raw values, in the order written.
fn raw_entries<'de, M: MapAccess<'de>>(mut map: M) -> Result<RawObject<'de>, M::Error> {
    let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8));
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        entries.push((key, Raw::from(map.next_value::<&'de RawValue>()?)));
    }
    Ok(RawObject { entries })
}

/// Parses JSON text into a value whose objects keep the first value of a repeated key, as every
/// other reading of a line does (serde_json's own `Value` keeps the last).
pub(crate) fn value(text: &str) -> serde_json::Result<serde_json::Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let FirstWins(value) = serde::Deserialize::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct FirstWins(serde_json::Value);

impl<'de> serde::Deserialize<'de> for FirstWins {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde_json::Value;
        struct ValueVisitor;
        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = FirstWins;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<FirstWins, E> {
                Ok(FirstWins(Value::Null))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<FirstWins, S::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(FirstWins(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(FirstWins(Value::Array(items)))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<FirstWins, M::Error> {
                let mut object = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let FirstWins(item) = map.next_value()?;
                    object.entry(key).or_insert(item);
                }
                Ok(FirstWins(Value::Object(object)))
            }
        }
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// Why a line is not an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Damage {
    /// Not valid JSON (or not UTF-8 where JSON needs it).
    Malformed(String),
    /// Valid JSON, but not an object.
    NotAnObject(Shape),
    /// An object with no type key.
    NoType,
    /// An object with none of the keys that say a line's type (the keys named).
    NoTypeKeys(String),
    /// The type key's value is not a string.
    TypeNotString(Shape),
    /// The fields' key holds something other than an object.
    FieldsNotAnObject(Shape),
    /// Longer than the line limit.
    TooLong { length: u64, limit: usize },
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Damage::Malformed(why) => write!(f, "not valid JSON {why}"),
            Damage::NotAnObject(s) => write!(f, "not a JSON object but {}", s.article()),
            Damage::NoType => write!(f, "no \"type\" key"),
            Damage::NoTypeKeys(keys) => write!(f, "none of the keys that say what a line is ({keys})"),
            Damage::TypeNotString(s) => write!(f, "\"type\" is {}, not a string", s.article()),
            Damage::FieldsNotAnObject(s) => {
                write!(f, "the event's fields are {}, not an object", s.article())
            }
            Damage::TooLong { length, limit } => {
                write!(f, "line of {length} bytes is longer than the limit of {limit} (--max-line-bytes)")
            }
        }
    }
}

/// The shape of a JSON value, told from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Shape {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
}

impl Shape {
    /// The shape of a raw (already validated) JSON value.
    pub(crate) fn of(raw: &Raw<'_>) -> Shape {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'n') => Shape::Null,
            Some(b't' | b'f') => Shape::Bool,
            Some(b'"') => Shape::Str,
            Some(b'[') => Shape::Array,
            Some(b'{') => Shape::Object,
            _ if text.parse::<i64>().is_ok() => Shape::Int,
            _ => Shape::Float,
        }
    }

    /// The shape's name with its article, for messages.
    pub(crate) fn article(&self) -> &'static str {
        match self {
            Shape::Null => "null",
            Shape::Bool => "a boolean",
            Shape::Int => "an integer",
            Shape::Float => "a number",
            Shape::Str => "a string",
            Shape::Array => "an array",
            Shape::Object => "an object",
        }
    }
}

/// The type of a line written the usual way, without parsing it: `{"<type_key>":"<type>"...`,
/// or the type key later among the line's top-level keys (`{"parentUuid":..,"type":"user",..}`),
/// found by stepping over the values before it. `None` when the line is written any other way,
/// has no such key, or its value is not a plain string (then only a full parse can tell).
pub(crate) fn quick_type<'a>(line: &'a [u8], type_key: &str) -> Option<&'a str> {
    let first = line
        .strip_prefix(b"{\"")
        .and_then(|rest| rest.strip_prefix(type_key.as_bytes()))
        .and_then(|rest| rest.strip_prefix(b"\":\""));
    match first {
        Some(rest) => plain_string(rest),
        None => top_level_string(line, type_key),
    }
}

/// The text of a string whose opening quote is just before `rest`, when it holds no escape.
fn plain_string(rest: &[u8]) -> Option<&str> {
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// The plain string value of the top-level `key` of the object `line`, stepping over strings,
/// objects and arrays without reading them; `None` at anything unexpected.
fn top_level_string<'a>(line: &'a [u8], key: &str) -> Option<&'a str> {
    let at = top_level_value(line, key)?;
    plain_string(line[at..].strip_prefix(b"\"")?)
}

/// Where the value of the first top-level `key` of the object `line` starts, stepping over
/// strings, objects and arrays without reading them; `None` at anything unexpected.
fn top_level_value(line: &[u8], key: &str) -> Option<usize> {
    if line.first() != Some(&b'{') {
        return None;
    }
    let (mut at, mut depth, mut last) = (1, 1usize, b'{');
    while at < line.len() {
        match line[at] {
            b'"' => {
                let start = at + 1;
                let end = string_end(line, start)?;
                let is_key = depth == 1 && matches!(last, b'{' | b',');
                // A key written with an escape may be `key` once read: only a parse can tell.
                if is_key && memchr::memchr(b'\\', &line[start..end]).is_some() {
                    return None;
                }
                if is_key && &line[start..end] == key.as_bytes() {
                    let rest = &line[end + 1..];
                    let after_colon = rest.trim_ascii_start().strip_prefix(b":")?;
                    let value = after_colon.trim_ascii_start();
                    return Some(line.len() - value.len());
                }
                last = b'"';
                at = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return None;
                }
            }
            b',' | b':' if depth == 1 => last = line[at],
            _ => {}
        }
        at += 1;
    }
    None
}

/// Where the string that starts at `start` (after its opening quote) ends: its closing quote.
fn string_end(line: &[u8], mut start: usize) -> Option<usize> {
    loop {
        let at = start + memchr::memchr2(b'"', b'\\', line.get(start..)?)?;
        if line[at] == b'"' {
            return Some(at);
        }
        start = at + 2;
    }
}

/// A line split into its event type and its fields.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Event<'a> {
    pub(crate) type_name: Cow<'a, str>,
    /// The event's fields, when asked for.
    pub(crate) fields: RawObject<'a>,
    /// The event's fields as JSON text (`{}` when the line has none).
    pub(crate) fields_text: &'a str,
    /// The line's own keys, when asked for and the fields are under one of them (`None`: the
    /// line's keys are the fields, or were not asked for).
    pub(crate) line: Option<RawObject<'a>>,
}

/// What of an event's fields a reader needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// Each field's key and raw value.
    Fields,
    /// Only the fields' JSON text (cheaper where the fields are nested under a key).
    Text,
}

/// The value at the fields' key, read in the same pass as the rest of the line.
enum FieldsValue<'a> {
    Object(RawObject<'a>),
    Text(&'a RawValue),
    Other(Shape),
}

struct FieldsSeed(Want);

impl<'de> serde::de::DeserializeSeed<'de> for FieldsSeed {
    type Value = FieldsValue<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        if self.0 == Want::Text {
            let raw: &'de RawValue = serde::Deserialize::deserialize(deserializer)?;
            return Ok(match Shape::of(&Raw::from(raw)) {
                Shape::Object | Shape::Null => FieldsValue::Text(raw),
                other => FieldsValue::Other(other),
            });
        }
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = FieldsValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the event's fields")
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                raw_entries(map).map(FieldsValue::Object)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FieldsValue::Object(RawObject::default()))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FieldsValue::Other(Shape::Array))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(FieldsValue::Other(Shape::Bool))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(FieldsValue::Other(Shape::Int))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(FieldsValue::Other(Shape::Int))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(FieldsValue::Other(Shape::Float))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(FieldsValue::Other(Shape::Str))
            }
        }
        deserializer.deserialize_any(FieldsVisitor)
    }
}

/// A line of the `{"<type>": .., "<fields>": {..}}` shape, read in one pass.
struct Nested<'a> {
    type_raw: Option<&'a RawValue>,
    fields: Option<FieldsValue<'a>>,
}

struct NestedSeed<'k> {
    type_key: &'k str,
    fields_key: &'k str,
    want: Want,
}

impl<'de> serde::de::DeserializeSeed<'de> for NestedSeed<'_> {
    type Value = Nested<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NestedSeed<'_> {
    type Value = Nested<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut line = Nested { type_raw: None, fields: None };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == self.type_key && line.type_raw.is_none() {
                line.type_raw = Some(map.next_value()?);
            } else if key == self.fields_key && line.fields.is_none() {
                line.fields = Some(map.next_value_seed(FieldsSeed(self.want))?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(line)
    }
}

/// Parses a line as an event: an object with a string `type_key`, its fields either under
/// `fields_key` (`Some("data")`) or beside the type (`None`).
pub(crate) fn parse_event<'a>(
    line: &'a [u8],
    type_key: &str,
    fields_key: Option<&str>,
    want: Want,
) -> Result<Event<'a>, Damage> {
    match scanner::event(line, type_key, fields_key, want) {
        Some(event) => Ok(event),
        None => parse_event_serde(line, type_key, fields_key, want),
    }
}

/// Parses a line as an event of a format with this envelope: its type by the envelope's rule, its
/// fields, and with `line_keys` the line's own keys too (for the fields read from the line itself,
/// when the others are under a key).
pub(crate) fn parse_line_event<'a>(
    line: &'a [u8],
    envelope: &Envelope,
    want: Want,
    line_keys: bool,
) -> Result<Event<'a>, Damage> {
    let fields_key = envelope.fields_key();
    if let TypeRule::Key(key) = envelope.types
        && (!line_keys || fields_key.is_none())
    {
        return parse_event(line, key, fields_key, want);
    }
    let top = parse_line_object(line)?;
    // A line that parsed is valid UTF-8.
    let text = std::str::from_utf8(line).unwrap_or_default();
    let mut type_name = match envelope.types {
        TypeRule::Key(key) | TypeRule::Refined { key, .. } => type_string(top.get(key))?,
        TypeRule::ByKeys(rules) => match rules.iter().find(|rule| fits_rule(rule, &top)) {
            Some(rule) => Cow::Borrowed(rule.type_name),
            None => {
                let keys: Vec<&str> = rules.iter().map(|rule| rule.key).collect();
                return Err(Damage::NoTypeKeys(keys.join(", ")));
            }
        },
    };
    let (fields, fields_text) = match fields_key.map(|key| top.get(key)) {
        None => (top.clone(), text),
        Some(None) => (RawObject::default(), "{}"),
        Some(Some(raw)) => match (Shape::of(&raw), want) {
            (Shape::Object | Shape::Null, Want::Fields) => {
                (parse_object(raw).map_err(Damage::FieldsNotAnObject)?, "")
            }
            (Shape::Object | Shape::Null, Want::Text) => (RawObject::default(), raw.get()),
            (shape, _) => return Err(Damage::FieldsNotAnObject(shape)),
        },
    };
    if let TypeRule::Refined { refined, sub, .. } = envelope.types
        && refined.contains(&type_name.as_ref())
    {
        let parsed;
        let inner = match want {
            Want::Fields => fields.get(sub).filter(|raw| Shape::of(raw) == Shape::Str).and_then(string),
            // The refining key's plain string found without parsing the fields, where it can be.
            Want::Text => match top_level_string(fields_text.as_bytes(), sub) {
                Some(plain) => Some(Cow::Borrowed(plain)),
                None => {
                    parsed = parse_object_text(fields_text).unwrap_or_default();
                    parsed.get(sub).filter(|raw| Shape::of(raw) == Shape::Str).and_then(string)
                }
            },
        };
        if let Some(inner) = inner {
            type_name = Cow::Owned(format!("{type_name}.{inner}"));
        }
    }
    let line = (line_keys && fields_key.is_some()).then_some(top);
    Ok(Event { type_name, fields, fields_text, line })
}

/// Whether a line's top-level object fits a [`KeyRule`].
fn fits_rule(rule: &KeyRule, top: &RawObject<'_>) -> bool {
    let shape = top.get(rule.key).map(|raw| Shape::of(&raw));
    let fits = match rule.shape {
        KeyShape::Str => shape == Some(Shape::Str),
        KeyShape::Object => shape == Some(Shape::Object),
    };
    fits && rule.also.iter().all(|key| top.get(key).is_some())
}

/// The type key's string of a line written the usual way, found without parsing it (the first
/// part of a refined type); `None` when only a full parse can tell, or the format's lines have
/// no type key.
pub(crate) fn quick_type_of<'a>(line: &'a [u8], envelope: &Envelope) -> Option<&'a str> {
    quick_type(line, envelope.type_key()?)
}

/// The refining part of a refined type (`token_count` of `event_msg.token_count`) of a line written
/// the usual way, whose type key says `quick`, found without parsing it: the plain string at the
/// refining key among the event's fields. `None` when `quick` is not refined, the fields have no
/// such key, or only a full parse can tell.
pub(crate) fn quick_refinement_of<'a>(line: &'a [u8], envelope: &Envelope, quick: &str) -> Option<&'a str> {
    let TypeRule::Refined { refined, sub, .. } = envelope.types else { return None };
    if !refined.contains(&quick) {
        return None;
    }
    match envelope.fields_key() {
        Some(key) => {
            let at = top_level_value(line, key)?;
            top_level_string(&line[at..], sub)
        }
        None => top_level_string(line, sub),
    }
}

/// [`parse_event`] by serde_json alone.
fn parse_event_serde<'a>(
    line: &'a [u8],
    type_key: &str,
    fields_key: Option<&str>,
    want: Want,
) -> Result<Event<'a>, Damage> {
    let Some(fields_key) = fields_key else {
        let top = parse_line_object_serde(line)?;
        let type_name = type_string(top.get(type_key))?;
        // A line that parsed is valid UTF-8.
        let text = std::str::from_utf8(line).unwrap_or_default();
        return Ok(Event { type_name, fields: top, fields_text: text, line: None });
    };
    let seed = NestedSeed { type_key, fields_key, want };
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    let nested = match serde::de::DeserializeSeed::deserialize(seed, &mut deserializer).and_then(|n| {
        deserializer.end()?;
        Ok(n)
    }) {
        Ok(nested) => nested,
        Err(e) if e.is_data() => return Err(not_an_object(line)),
        Err(e) => return Err(malformed(&e)),
    };
    let type_name = type_string(nested.type_raw.map(Raw::from))?;
    let (fields, fields_text) = match nested.fields {
        None => (RawObject::default(), "{}"),
        Some(FieldsValue::Object(fields)) => (fields, ""),
        Some(FieldsValue::Text(raw)) => (RawObject::default(), raw.get()),
        Some(FieldsValue::Other(shape)) => return Err(Damage::FieldsNotAnObject(shape)),
    };
    Ok(Event { type_name, fields, fields_text, line: None })
}

/// Parses a line that must be a JSON object.
pub(crate) fn parse_line_object(line: &[u8]) -> Result<RawObject<'_>, Damage> {
    match scanner::line_object(line) {
        Some(object) => Ok(object),
        None => parse_line_object_serde(line),
    }
}

fn parse_line_object_serde(line: &[u8]) -> Result<RawObject<'_>, Damage> {
    match serde_json::from_slice(line) {
        Ok(top) => Ok(top),
        Err(e) if e.is_data() => Err(not_an_object(line)),
        Err(e) => Err(malformed(&e)),
    }
}

fn type_string(raw: Option<Raw<'_>>) -> Result<Cow<'_, str>, Damage> {
    let raw = raw.ok_or(Damage::NoType)?;
    match Shape::of(&raw) {
        Shape::Str => string(raw).ok_or_else(|| {
            let e = serde_json::from_str::<Cow<str>>(raw.get()).err();
            e.map_or_else(
                || Damage::Malformed("the \"type\" string cannot be read".into()),
                |e| malformed(&e),
            )
        }),
        other => Err(Damage::TypeNotString(other)),
    }
}

/// The damage of a line that is not a JSON object: valid JSON of another shape, or not JSON.
fn not_an_object(line: &[u8]) -> Damage {
    match serde_json::from_slice::<&RawValue>(line) {
        Ok(raw) => Damage::NotAnObject(Shape::of(&Raw::from(raw))),
        Err(e) => malformed(&e),
    }
}

/// Why serde_json could not read a line, in txq's words: the column (in bytes, from 1) and what
/// is wrong there. serde_json's own message is not passed on: its wording is serde_json's, and
/// changes with it. The kinds of damage told apart are those a transcript gets: cut off, a raw
/// control character or bytes that are not UTF-8 in a string, something after the value.
fn malformed(e: &serde_json::Error) -> Damage {
    let serde = e.to_string();
    let what = match e.classify() {
        serde_json::error::Category::Eof => {
            let inside = [("string", "a string"), ("list", "an array"), ("object", "an object")]
                .into_iter()
                .find(|(word, _)| serde.contains(word))
                .map_or("a value", |(_, what)| what);
            format!("the line ends inside {inside} (cut off?)")
        }
        serde_json::error::Category::Syntax | serde_json::error::Category::Data => {
            let kinds = [
                ("control character", "a raw control character (U+0000 to U+001F) in a string"),
                ("unicode code point", "bytes that are not UTF-8 in a string"),
                ("surrogate", "a \\u escape that is no character"),
                ("escape", "an escape that is not JSON's"),
                ("trailing", "more after the end of the JSON value"),
                ("recursion limit", "nested more than 128 deep"),
                ("number out of range", "a number out of range"),
                ("key must be a string", "an object key that is not a string"),
            ];
            kinds
                .into_iter()
                .find(|(word, _)| serde.contains(word))
                .map_or("a character JSON does not allow there", |(_, what)| what)
                .to_string()
        }
        serde_json::error::Category::Io => "it cannot be read".to_string(),
    };
    Damage::Malformed(format!("at column {}: {what}", e.column()))
}

/// Whether a line that is no JSON value could be the start of one, cut off at its end: what a
/// crash leaves of a write, or a write still under way.
pub(crate) fn is_cut_off(line: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(line)
        .is_err_and(|e| e.classify() == serde_json::error::Category::Eof)
}

/// The value of a JSON string, unescaped (borrowed when it holds no escape); `None` for a value
/// that is not a string. A lone surrogate escape (`\ud83d`: what JavaScript writes of a string
/// cut through an emoji) is U+FFFD, the rest of the text kept.
pub(crate) fn string(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str(text).ok().or_else(|| unescape_lossy(inner).map(Cow::Owned))
}

/// The text of a JSON string's inside (`raw` is valid JSON, so every escape is whole), with each
/// surrogate escape that is not one half of a pair read as U+FFFD.
fn unescape_lossy(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    let hex = |s: &str| s.get(..4).and_then(|h| u16::from_str_radix(h, 16).ok());
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at + 1..)?;
        let mut chars = escape.chars();
        let used = match chars.next()? {
            'u' => {
                let unit = hex(&escape[1..])?;
                let low = escape.get(5..7).filter(|s| *s == "\\u").and_then(|_| hex(&escape[7..]));
                match (unit, low) {
                    (0xD800..=0xDBFF, Some(low @ 0xDC00..=0xDFFF)) => {
                        let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                        out.push(char::from_u32(c)?);
                        11
                    }
                    (0xD800..=0xDFFF, _) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        5
                    }
                    _ => {
                        out.push(char::from_u32(u32::from(unit))?);
                        5
                    }
                }
            }
            c => {
                out.push(match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    other => other,
                });
                1
            }
        };
        rest = &escape[used..];
    }
    out.push_str(rest);
    Some(out)
}

/// Parses JSON text that must be an object (spaces around it allowed).
pub(crate) fn parse_object_text(text: &str) -> Option<RawObject<'_>> {
    scanner::object(text).or_else(|| serde_json::from_str(text).ok())
}

/// Parses a raw value that must be an object (or null, read as an empty object).
pub(crate) fn parse_object(raw: Raw<'_>) -> Result<RawObject<'_>, Shape> {
    match Shape::of(&raw) {
        Shape::Object => scanner::object(raw.get())
            .map_or_else(|| serde_json::from_str(raw.get()).map_err(|_| Shape::Object), Ok),
        Shape::Null => Ok(RawObject::default()),
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_type_finds_the_top_level_type_key_without_parsing() {
        assert_eq!(quick_type(br#"{"type":"usage","data":{}}"#, "type"), Some("usage"));
        assert_eq!(quick_type(br#"{"type":"us\u0061ge"}"#, "type"), None);
        assert_eq!(quick_type(br#"{ "type": "usage"}"#, "type"), Some("usage"));
        // The type key later among the top-level keys: found, never inside a nested value.
        assert_eq!(quick_type(br#"{"data":{"type":"inner"},"type":"usage"}"#, "type"), Some("usage"));
        assert_eq!(
            quick_type(br#"{"a":"x\"type\":\"no\"","b":[{"type":"no"}],"type":"yes"}"#, "type"),
            Some("yes")
        );
        assert_eq!(quick_type(br#"{"a":"type","b":1}"#, "type"), None);
        assert_eq!(quick_type(br#"{"data":{"type":"inner"}}"#, "type"), None);
        assert_eq!(quick_type(br#"{"data":{}, "type" : "spaced"}"#, "type"), Some("spaced"));
        assert_eq!(quick_type(br#"{"data":{},"type":7}"#, "type"), None);
        assert_eq!(quick_type(br#"{"data":{},"type":"cut"#, "type"), None);
        assert_eq!(quick_type(br#"{"data":"unterminated"#, "type"), None);
    }

    #[test]
    fn quick_refinement_finds_the_second_part_of_a_refined_type_without_parsing() {
        let types = TypeRule::Refined { key: "type", refined: &["event_msg"], sub: "type" };
        let under = Envelope { types, fields: crate::format::FieldsAt::Under("payload") };
        let beside = Envelope { types, fields: crate::format::FieldsAt::Beside };
        fn of_line<'a>(line: &'a [u8], envelope: &Envelope) -> Option<&'a str> {
            quick_refinement_of(line, envelope, quick_type_of(line, envelope).unwrap_or(""))
        }
        let of = |line: &'static [u8]| of_line(line, &under);
        // The refining key last among the fields, after values that hold the word.
        let line = br#"{"timestamp":"t","type":"event_msg","payload":{"info":{"type":"no"},"text":"\"type\":\"no\"","type":"token_count"}}"#;
        assert_eq!(of(line), Some("token_count"));
        assert_eq!(of(br#"{"payload":{"type":"task_started"},"type":"event_msg"}"#), Some("task_started"));
        // Not a refined type, no refining key, or one only a parse can read.
        assert_eq!(of(br#"{"type":"session_meta","payload":{"type":"x"}}"#), None);
        assert_eq!(of(br#"{"type":"event_msg","payload":{"info":{"type":"no"}}}"#), None);
        assert_eq!(of(br#"{"type":"event_msg","payload":{"type":"tok\u0065n_count"}}"#), None);
        assert_eq!(of(br#"{"type":"event_msg","payload":{"type":7}}"#), None);
        // A key with an escape before the refining key: it may be the refining key once read.
        assert_eq!(of(br#"{"type":"event_msg","payload":{"typ\u0065":"a","type":"b"}}"#), None);
        assert_eq!(of(br#"{"type":"event_msg","payload":"text"}"#), None);
        assert_eq!(of(br#"{"type":"event_msg","payload":{"type":"cut"#), None);
        // Fields beside the type: the refining key is the line's own.
        let line = br#"{"kind":"x","type":"event_msg"}"#;
        let beside_types = TypeRule::Refined { key: "kind", refined: &["x"], sub: "type" };
        let beside = Envelope { types: beside_types, ..beside };
        assert_eq!(quick_refinement_of(line, &beside, "x"), Some("event_msg"));
    }

    #[test]
    fn damage_is_classified() {
        let reason = |line: &[u8]| {
            parse_event(line, "type", Some("data"), Want::Fields).map(|e| e.type_name.to_string())
        };
        assert_eq!(reason(br#"{"type":"a","data":{}}"#), Ok("a".into()));
        assert_eq!(reason(br#"{"type":"us\u0061ge"}"#), Ok("usage".into()));
        assert_eq!(reason(b"[1,2]"), Err(Damage::NotAnObject(Shape::Array)));
        assert_eq!(reason(b"\"hi\""), Err(Damage::NotAnObject(Shape::Str)));
        assert_eq!(reason(br#"{"data":{}}"#), Err(Damage::NoType));
        assert_eq!(reason(br#"{"type":7}"#), Err(Damage::TypeNotString(Shape::Int)));
        assert!(matches!(reason(br#"{"type":"a","da"#), Err(Damage::Malformed(_))));
        assert!(matches!(reason(b"{\"type\":\"\xff\"}"), Err(Damage::Malformed(_))));
        assert_eq!(reason(br#"{"type":"a","data":[1]}"#), Err(Damage::FieldsNotAnObject(Shape::Array)));
        assert_eq!(reason(br#"{"type":"a","data":"x"}"#), Err(Damage::FieldsNotAnObject(Shape::Str)));
        assert!(matches!(reason(br#"{"type":"a","data":{}} x"#), Err(Damage::Malformed(_))));
    }

    #[test]
    fn damage_is_told_in_txqs_own_words() {
        let told = |line: &[u8]| parse_line_object(line).unwrap_err().to_string();
        assert_eq!(
            told(br#"{"type":"a","da"#),
            "not valid JSON at column 15: the line ends inside a string (cut off?)"
        );
        assert_eq!(
            told(br#"{"type":"a","#),
            "not valid JSON at column 12: the line ends inside a value (cut off?)"
        );
        assert_eq!(
            told(b"{\"type\":\"\xff\"}"),
            "not valid JSON at column 10: bytes that are not UTF-8 in a string"
        );
        assert_eq!(
            told(b"{\"type\":\"a\x00\"}"),
            "not valid JSON at column 10: a raw control character (U+0000 to U+001F) in a string"
        );
        assert_eq!(
            told(br#"{"type":"a"} x"#),
            "not valid JSON at column 14: more after the end of the JSON value"
        );
        assert_eq!(told(b"garbage"), "not valid JSON at column 1: a character JSON does not allow there");
    }

    #[test]
    fn one_pass_reads_fields_or_their_text() {
        let line = br#"{"data":{"k":1,"s":"v"},"type":"t","other":[1,{"a":2}]}"#;
        let event = parse_event(line, "type", Some("data"), Want::Fields).unwrap();
        assert_eq!(event.type_name, "t");
        assert_eq!(event.fields.get("s").map(|r| r.get()), Some("\"v\""));
        let event = parse_event(line, "type", Some("data"), Want::Text).unwrap();
        assert_eq!(event.fields_text, r#"{"k":1,"s":"v"}"#);
        let event = parse_event(br#"{"type":"t"}"#, "type", Some("data"), Want::Text).unwrap();
        assert_eq!(event.fields_text, "{}");
        let flat =
            parse_event(br#"{"turn":0,"type":"prompt","text":"hi"}"#, "type", None, Want::Fields).unwrap();
        assert_eq!(flat.type_name, "prompt");
        assert_eq!(flat.fields.get("text").map(|r| r.get()), Some("\"hi\""));
    }

    #[test]
    fn a_lone_surrogate_is_a_replacement_character_and_the_rest_kept() {
        let read = |s: &str| string(Raw(s)).map(|c| c.into_owned());
        assert_eq!(read(r#""cut \ud83d""#).as_deref(), Some("cut \u{FFFD}"));
        assert_eq!(
            read(r#""\ude00 low first, then \ud83d\ude00 a pair""#).as_deref(),
            Some("\u{FFFD} low first, then \u{1F600} a pair")
        );
        assert_eq!(read(r#""a\ud83d\n\"b\\\/\u00e9\t""#).as_deref(), Some("a\u{FFFD}\n\"b\\/\u{e9}\t"));
        assert_eq!(read(r#""\ud83d\ud83d\ude00""#).as_deref(), Some("\u{FFFD}\u{1F600}"));
        assert_eq!(read("12"), None);
    }

    #[test]
    fn a_repeated_key_keeps_its_first_value_at_every_depth() {
        let text = r#"{"a":1,"b":[{"c":"x","c":"y"}],"a":2}"#;
        assert_eq!(value(text).unwrap(), serde_json::json!({"a": 1, "b": [{"c": "x"}]}));
        let object = parse_object_text(text).unwrap();
        assert_eq!(object.get("a").map(|r| r.get()), Some("1"));
        let line = br#"{"type":"a","data":{"k":1},"type":"b","data":{"k":2}}"#;
        for want in [Want::Fields, Want::Text] {
            let event = parse_event(line, "type", Some("data"), want).unwrap();
            assert_eq!(event.type_name, "a");
            assert!(event.fields.get("k").is_none_or(|k| k.get() == "1"));
            assert!(matches!(event.fields_text, "" | r#"{"k":1}"#));
        }
        // The same line as serde_json alone reads it (a line the scanner declines).
        let spaced = br#"{ "type":"a","data":{"k":1},"type":"b","data":{"k":2}}"#;
        let event = parse_event_serde(spaced, "type", Some("data"), Want::Fields).unwrap();
        assert_eq!((event.type_name.as_ref(), event.fields.get("k").map(|r| r.get())), ("a", Some("1")));
        assert!(value(&format!("{}1{}", "[".repeat(200), "]".repeat(200))).is_err());
        assert!(value("[1] x").is_err());
    }

    #[test]
    fn shapes() {
        let shape = |s: &str| Shape::of(&Raw::from(serde_json::from_str::<&RawValue>(s).unwrap()));
        assert_eq!(shape("12"), Shape::Int);
        assert_eq!(shape("-3"), Shape::Int);
        assert_eq!(shape("1.5"), Shape::Float);
        assert_eq!(shape("1e3"), Shape::Float);
        assert_eq!(shape("99999999999999999999"), Shape::Float);
        assert_eq!(shape("null"), Shape::Null);
        assert_eq!(shape("{}"), Shape::Object);
    }
}
