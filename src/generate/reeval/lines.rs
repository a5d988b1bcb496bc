//! The lines of generated reeval files: flat JSON objects whose keys keep the order they were
//! given in, the damaged lines among them, and their bytes.

use crate::generate::lines::{push_entry, push_json};
use serde_json::Value;

/// A flat object's entries in written order.
pub(super) type Fields = Vec<(&'static str, Value)>;

/// A tool output cut the reeval way: what its marker says about the whole output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Truncation {
    /// Characters of the whole output, before the cut.
    pub(super) total: i64,
    pub(super) sha256: String,
}

/// One physical line of a generated `transcript.jsonl` or `transcript.raw.jsonl`.
#[derive(Debug, Clone)]
pub(super) enum Line {
    /// A valid object, keys in the order of `fields`; `truncation` is set on a tool event
    /// whose output carries the truncation marker.
    Event {
        fields: Fields,
        /// Read by the tally (feature testing) only.
        #[cfg_attr(not(feature = "testing"), allow(dead_code))]
        truncation: Option<Truncation>,
    },
    /// An empty line: readers skip it, but it still counts for line numbering.
    Empty,
    /// A newline-terminated line that readers must report as an error.
    Corrupt(String),
    /// The last line, cut off mid-write with no newline: readers skip it silently.
    TruncatedTail(String),
}

impl Line {
    pub(super) fn event(fields: Fields) -> Self {
        Line::Event { fields, truncation: None }
    }

    /// The value of `key` in a valid object; `None` for absent keys and for every other line.
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Line::Event { fields, .. } => {
                fields.iter().find(|(name, _)| *name == key).map(|(_, value)| value)
            }
            _ => None,
        }
    }

    /// Sets `key` of a valid object where it stands; does nothing when it is absent.
    pub(super) fn set(&mut self, key: &str, value: Value) {
        if let Line::Event { fields, .. } = self
            && let Some((_, slot)) = fields.iter_mut().find(|(name, _)| *name == key)
        {
            *slot = value;
        }
    }

    /// The `type` of a valid object.
    pub(super) fn kind(&self) -> Option<&str> {
        self.get("type").and_then(Value::as_str)
    }
}

/// The bytes of a file made of `lines`, each ended by `\n` except a truncated tail.
pub(super) fn render(lines: &[Line]) -> Vec<u8> {
    let mut out = String::new();
    for line in lines {
        match line {
            Line::Event { fields, .. } => out.push_str(&flat_object(fields)),
            Line::Empty => {}
            Line::Corrupt(text) | Line::TruncatedTail(text) => out.push_str(text),
        }
        if !matches!(line, Line::TruncatedTail(_)) {
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// `fields` as one JSON object in their given order; nested objects get sorted keys, so the
/// bytes never depend on serde_json's `preserve_order`.
pub(super) fn flat_object(fields: &[(&str, Value)]) -> String {
    let mut out = String::from("{");
    for (position, (key, value)) in fields.iter().enumerate() {
        if position > 0 {
            out.push(',');
        }
        push_entry(&mut out, key, value);
    }
    out.push('}');
    out
}

/// `fields` as a pretty-printed JSON document (two-space indent, values compact), in order.
pub(super) fn pretty_object(fields: &[(&str, Value)]) -> String {
    let entries: Vec<String> = fields
        .iter()
        .map(|(key, value)| {
            let mut entry = format!("  {}: ", Value::from(*key));
            push_json(&mut entry, value);
            entry
        })
        .collect();
    format!("{{\n{}\n}}\n", entries.join(",\n"))
}

/// The first half of `text`, cut at a char boundary: never valid JSON when `text` is an object.
pub(super) fn first_half(text: &str) -> String {
    let end = (0..=text.len() / 2).rev().find(|end| text.is_char_boundary(*end)).unwrap_or(0);
    text[..end].to_string()
}
