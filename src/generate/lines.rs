//! The generated files' lines as the generator means them, and their bytes: a rupu transcript's
//! lines, a netflow ledger's flows, JSON written with its keys sorted so that the bytes never
//! depend on map order.

use serde_json::{Map, Value, json};

/// One physical line of a generated transcript.
#[derive(Debug, Clone)]
pub(in crate::generate) enum Line {
    /// A valid event, written as `{"type":kind,"data":data}`.
    Event { kind: String, data: Value },
    /// An empty line: readers skip it, but it still counts for line numbering.
    Empty,
    /// A newline-terminated line that readers must report as an error.
    Corrupt(String),
    /// The last line, cut off mid-write with no newline: readers skip it silently.
    TruncatedTail(String),
}

impl Line {
    pub(in crate::generate) fn event(kind: &str, data: Value) -> Self {
        Line::Event { kind: kind.to_string(), data }
    }
}

/// One network flow a run made, as the netflow sink saw it: its record (in the transcript's
/// `net_flow`, as far as the transcript got, and in the ledger), the turn in progress when it
/// was made, and for a streamed call the body's final (bytes_in, duration_ms), written to the
/// ledger later.
#[derive(Debug, Clone)]
pub(crate) struct FlowMeta {
    pub(in crate::generate) record: Value,
    // Read by the tally (feature testing) only, as is AttemptId.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(in crate::generate) turn: Option<i64>,
    pub(in crate::generate) completed: Option<(i64, i64)>,
}

impl FlowMeta {
    pub(in crate::generate) fn logged(record: Value, turn: Option<i64>) -> Self {
        Self { record, turn, completed: None }
    }

    pub(in crate::generate) fn id(&self) -> String {
        self.record.get("id").and_then(Value::as_str).unwrap_or_default().to_string()
    }

    /// Its lines in a netflow ledger: `{"type":"flow", ...record}`, then its `complete` line.
    pub(in crate::generate) fn ledger_lines(&self) -> Vec<String> {
        let fields = self.record.as_object().expect("a flow record is an object");
        let mut lines = vec![typed_object("flow", fields.iter().map(|(key, value)| (key.as_str(), value)))];
        if let Some((bytes_in, duration_ms)) = self.completed {
            let (id, bytes_in, duration_ms) = (json!(self.id()), json!(bytes_in), json!(duration_ms));
            lines.push(typed_object(
                "complete",
                [("id", &id), ("bytes_in", &bytes_in), ("duration_ms", &duration_ms)],
            ));
        }
        lines
    }
}

/// The bytes of a file made of `lines`, each ended by `\n` (or `\r\n` when `crlf`), except a
/// truncated tail.
pub(in crate::generate) fn render(lines: &[Line], crlf: bool) -> Vec<u8> {
    let ending = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    for line in lines {
        match line {
            Line::Event { kind, data } => out.push_str(&envelope(kind, data)),
            Line::Empty => {}
            Line::Corrupt(text) | Line::TruncatedTail(text) => out.push_str(text),
        }
        if !matches!(line, Line::TruncatedTail(_)) {
            out.push_str(ending);
        }
    }
    out.into_bytes()
}

/// `{"type":kind,"data":data}`, the rupu envelope.
pub(in crate::generate) fn envelope(kind: &str, data: &Value) -> String {
    typed_object(kind, [("data", data)])
}

/// `{"type":kind, ...fields}`: `type` first, then the fields, with the keys of `fields` and of
/// every nested object sorted, so the bytes do not depend on serde_json's `preserve_order`.
pub(in crate::generate) fn typed_object<'a>(
    kind: &str,
    fields: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> String {
    let mut out = String::from("{");
    push_entry(&mut out, "type", &Value::from(kind));
    let mut fields: Vec<_> = fields.into_iter().collect();
    fields.sort_by_key(|(key, _)| *key);
    for (key, value) in fields {
        out.push(',');
        push_entry(&mut out, key, value);
    }
    out.push('}');
    out
}

fn sorted(fields: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = fields.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    entries
}

/// Writes `"key":value` with the value's object keys sorted.
pub(in crate::generate) fn push_entry(out: &mut String, key: &str, value: &Value) {
    out.push_str(&Value::from(key).to_string());
    out.push(':');
    push_json(out, value);
}

/// Writes `value` as compact JSON with object keys sorted, so bytes never depend on map order.
pub(in crate::generate) fn push_json(out: &mut String, value: &Value) {
    match value {
        Value::Object(fields) => {
            out.push('{');
            for (position, (key, value)) in sorted(fields).into_iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                push_entry(out, key, value);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                push_json(out, item);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
