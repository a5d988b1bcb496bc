//! Reading one JSON line: its type found cheaply, its top-level object split into raw fields,
//! and the shape of a raw value told without decoding it.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The keys and raw values of one JSON object, in the order written.
#[derive(Debug, Default)]
pub struct RawObject<'a> {
    pub entries: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> RawObject<'a> {
    /// The raw value of `key` (the first one, if the key repeats).
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
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
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(RawObject { entries })
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// Why a line is not an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Not valid JSON (or not UTF-8 where JSON needs it).
    Malformed(String),
    /// Valid JSON, but not an object.
    NotAnObject(Shape),
    /// An object with no type key.
    NoType,
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
            Damage::Malformed(e) => write!(f, "not valid JSON: {e}"),
            Damage::NotAnObject(s) => write!(f, "not a JSON object but {}", s.article()),
            Damage::NoType => write!(f, "no \"type\" key"),
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
pub enum Shape {
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
    pub fn of(raw: &RawValue) -> Shape {
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
    pub fn article(&self) -> &'static str {
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

/// The type of a line written the usual way, `{"<type_key>":"<type>"...`, without parsing it;
/// `None` when the line starts any other way (then only a full parse can tell).
pub fn quick_type<'a>(line: &'a [u8], type_key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(b"{\"")?;
    let rest = rest.strip_prefix(type_key.as_bytes())?;
    let rest = rest.strip_prefix(b"\":\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// A line split into its event type and its fields.
#[derive(Debug)]
pub struct Event<'a> {
    pub type_name: Cow<'a, str>,
    pub top: RawObject<'a>,
}

/// Parses a line that must be a JSON object.
pub fn parse_line_object(line: &[u8]) -> Result<RawObject<'_>, Damage> {
    match serde_json::from_slice(line) {
        Ok(top) => Ok(top),
        // Valid JSON of another shape, or not JSON at all.
        Err(e) if e.is_data() => Err(match serde_json::from_slice::<&RawValue>(line) {
            Ok(raw) => Damage::NotAnObject(Shape::of(raw)),
            Err(e) => Damage::Malformed(e.to_string()),
        }),
        Err(e) => Err(Damage::Malformed(e.to_string())),
    }
}

/// Parses a line as an object with a string `type_key`.
pub fn parse_event<'a>(line: &'a [u8], type_key: &str) -> Result<Event<'a>, Damage> {
    let top = parse_line_object(line)?;
    let raw_type = top.get(type_key).ok_or(Damage::NoType)?;
    let type_name = match Shape::of(raw_type) {
        Shape::Str => serde_json::from_str::<Cow<'a, str>>(raw_type.get())
            .map_err(|e| Damage::Malformed(e.to_string()))?,
        other => return Err(Damage::TypeNotString(other)),
    };
    Ok(Event { type_name, top })
}

/// Parses a raw value that must be an object (or null, read as an empty object).
pub fn parse_object(raw: &RawValue) -> Result<RawObject<'_>, Shape> {
    match Shape::of(raw) {
        Shape::Object => serde_json::from_str(raw.get()).map_err(|_| Shape::Object),
        Shape::Null => Ok(RawObject::default()),
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_type_reads_the_usual_prefix_only() {
        assert_eq!(quick_type(br#"{"type":"usage","data":{}}"#, "type"), Some("usage"));
        assert_eq!(quick_type(br#"{"type":"us\u0061ge"}"#, "type"), None);
        assert_eq!(quick_type(br#"{ "type": "usage"}"#, "type"), None);
        assert_eq!(quick_type(br#"{"data":{},"type":"usage"}"#, "type"), None);
    }

    #[test]
    fn damage_is_classified() {
        let reason = |line: &[u8]| parse_event(line, "type").map(|e| e.type_name.to_string());
        assert_eq!(reason(br#"{"type":"a","data":{}}"#), Ok("a".into()));
        assert_eq!(reason(br#"{"type":"us\u0061ge"}"#), Ok("usage".into()));
        assert_eq!(reason(b"[1,2]"), Err(Damage::NotAnObject(Shape::Array)));
        assert_eq!(reason(b"\"hi\""), Err(Damage::NotAnObject(Shape::Str)));
        assert_eq!(reason(br#"{"data":{}}"#), Err(Damage::NoType));
        assert_eq!(reason(br#"{"type":7}"#), Err(Damage::TypeNotString(Shape::Int)));
        assert!(matches!(reason(br#"{"type":"a","da"#), Err(Damage::Malformed(_))));
        assert!(matches!(reason(b"{\"type\":\"\xff\"}"), Err(Damage::Malformed(_))));
    }

    #[test]
    fn shapes() {
        let shape = |s: &str| Shape::of(serde_json::from_str::<&RawValue>(s).unwrap());
        assert_eq!(shape("12"), Shape::Int);
        assert_eq!(shape("-3"), Shape::Int);
        assert_eq!(shape("1.5"), Shape::Float);
        assert_eq!(shape("1e3"), Shape::Float);
        assert_eq!(shape("99999999999999999999"), Shape::Float);
        assert_eq!(shape("null"), Shape::Null);
        assert_eq!(shape("{}"), Shape::Object);
    }
}
