//! The normalized tables of the default schema, `calls`, `tool_calls` and `sessions`: every
//! format's rows of each (the query its description gives) cast to one set of columns and
//! stacked, so that "what did we spend per model per day, across every agent" is one statement.
//! The column names are the interface: they are defined here once.

use crate::format::{Format, Normalized};

/// A column of a normalized table: its name and the Arrow type every format's rows are cast to.
type Column = (&'static str, &'static str);

const TEXT: &str = "Utf8";
const INT: &str = "Int64";
const FLOAT: &str = "Float64";
const BOOL: &str = "Boolean";
const TIME: &str = "Timestamp(Microsecond, Some(\"UTC\"))";

/// `calls`: one row per billed model call.
pub(crate) const CALLS: &[Column] = &[
    ("harness", TEXT),
    ("session_id", TEXT),
    ("parent_session_id", TEXT),
    ("ts", TIME),
    ("provider", TEXT),
    ("model", TEXT),
    ("input_tokens", INT),
    ("cache_read_tokens", INT),
    ("cache_write_tokens", INT),
    ("output_tokens", INT),
    ("reasoning_tokens", INT),
    ("file", TEXT),
    ("line", INT),
];

/// `tool_calls`: one row per tool call.
pub(crate) const TOOL_CALLS: &[Column] = &[
    ("harness", TEXT),
    ("session_id", TEXT),
    ("ts", TIME),
    ("tool", TEXT),
    ("call_id", TEXT),
    ("ok", BOOL),
    ("error", TEXT),
    ("duration_ms", INT),
];

/// What a format gives of each session; `sessions` adds the counts and sums of its calls and
/// tool calls.
const SESSION_FACTS: &[Column] = &[
    ("harness", TEXT),
    ("session_id", TEXT),
    ("file_session_id", TEXT),
    ("parent_session_id", TEXT),
    ("started_at", TIME),
    ("ended_at", TIME),
    ("cwd", TEXT),
    ("file", TEXT),
];

/// What a row of a normalized table is, for `\d` (`None` for any other name).
pub(crate) fn about(table: &str) -> Option<&'static str> {
    match table {
        "calls" => Some("one row per billed model call, every harness (docs/harnesses.md)"),
        "tool_calls" => Some("one row per tool call, every harness"),
        "sessions" => Some("one row per session, every harness"),
        _ => None,
    }
}

/// What a column of a normalized table holds, for `\d calls` (docs/harnesses.md says more).
pub(crate) fn column_about(table: &str, column: &str) -> Option<&'static str> {
    Some(match (table, column) {
        (_, "harness") => "the harness that wrote it: claude, codex, gemini, rupu, reeval, ...",
        ("sessions", "session_id") => "the session, as its lines name it (a subagent's: its agent id)",
        (_, "session_id") => "the session it belongs to (sessions.session_id)",
        (_, "parent_session_id") => "the session a subagent or spawned thread ran under; null at the top",
        ("sessions", "file_session_id") => "the session as its file names it: the id ccusage shows",
        ("calls", "ts") => "when the response was written",
        ("tool_calls", "ts") => "when the tool was called",
        ("calls", "provider") => "who serves the model: anthropic, openai, google, ...",
        ("calls" | "sessions", "model") => "the model that answered (sessions: of its first call)",
        ("calls" | "sessions", "input_tokens") => "input tokens, the cache reads and writes included",
        ("calls", "cache_read_tokens") => "input tokens read from the cache",
        ("calls", "cache_write_tokens") => "input tokens written to the cache",
        ("calls" | "sessions", "output_tokens") => "output tokens, reasoning included",
        ("calls", "reasoning_tokens") => "the output tokens spent reasoning (thinking, thoughts)",
        ("calls", "cost_usd") => "US dollars: call_cost of its model and tokens; null with no price",
        ("sessions", "cost_usd") => "US dollars over its calls; null when one has no price",
        (_, "file") => "the transcript it was read from",
        (_, "line") => "the line of the transcript",
        ("tool_calls", "tool") => "the tool's name",
        ("tool_calls", "call_id") => "the harness's id of the call",
        ("tool_calls", "ok") => "whether the call succeeded, as its result says",
        ("tool_calls", "error") => "when not ok: what the result said",
        ("tool_calls", "duration_ms") => "how long it ran, where the harness writes it",
        ("sessions", "started_at") => "its first line's time",
        ("sessions", "ended_at") => "its last line's time",
        ("sessions", "cwd") => "the working directory it ran in",
        ("sessions", "calls") => "its rows of calls",
        ("sessions", "tool_calls") => "its rows of tool_calls",
        _ => return None,
    })
}

/// The normalized tables `formats` give rows of, each with its query over theirs alone: a
/// format's schema holds these too (`claude.sessions`), its own rows only.
pub(crate) fn own_views(formats: &[&Format]) -> Vec<(&'static str, String)> {
    let gives = |name: &str| formats.iter().flat_map(|f| &f.normalized).any(|c| c.table.name() == name);
    views(formats).into_iter().filter(|(name, _)| gives(name)).collect()
}

/// The SQL of each normalized view over `formats`: its name and its query.
pub(crate) fn views(formats: &[&Format]) -> Vec<(&'static str, String)> {
    let calls = calls(formats);
    let tool_calls = stacked(formats, Normalized::ToolCalls, TOOL_CALLS);
    let facts = stacked(formats, Normalized::Sessions, SESSION_FACTS);
    let sessions = format!(
        "WITH facts AS ({facts}), calls AS ({calls}), tools AS ({tool_calls}),
call_sums AS (
  SELECT harness, session_id, parent_session_id,
         first_value(model ORDER BY ts, file, line) AS model, count(*) AS calls,
         sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
         CASE WHEN count(cost_usd) = count(*) THEN CAST(sum(CAST(cost_usd AS DECIMAL(38, 12))) AS DOUBLE) END AS cost_usd
  FROM calls GROUP BY harness, session_id, parent_session_id
), tool_sums AS (
  SELECT harness, session_id, count(*) AS tool_calls FROM tools GROUP BY harness, session_id
)
SELECT f.harness, f.session_id, f.file_session_id, f.parent_session_id, f.started_at, f.ended_at, f.cwd, c.model,
       coalesce(c.calls, 0) AS calls, coalesce(c.input_tokens, 0) AS input_tokens,
       coalesce(c.output_tokens, 0) AS output_tokens, c.cost_usd,
       coalesce(t.tool_calls, 0) AS tool_calls, f.file
FROM facts f
LEFT JOIN call_sums c ON c.harness = f.harness AND c.session_id = f.session_id
  AND c.parent_session_id IS NOT DISTINCT FROM f.parent_session_id
LEFT JOIN tool_sums t ON t.harness = f.harness AND t.session_id = f.session_id"
    );
    vec![("calls", calls), ("tool_calls", tool_calls), ("sessions", sessions)]
}

/// `calls`, priced: `cost_usd` is `call_cost` over the call's model and tokens, from the
/// session's prices (docs/prices.md); null, and named in a warning, for a model with no price.
fn calls(formats: &[&Format]) -> String {
    let rows = stacked(formats, Normalized::Calls, CALLS);
    let names: Vec<&str> = CALLS.iter().map(|(name, _)| *name).collect();
    let (before, after) = names.split_at(names.len() - 2);
    format!(
        "SELECT {}, arrow_cast(call_cost(model, input_tokens, cache_read_tokens, cache_write_tokens, \
         output_tokens), '{FLOAT}') AS cost_usd, {} FROM ({rows})",
        before.join(", "),
        after.join(", ")
    )
}

/// Every format's rows of `table`, cast to `columns`, stacked; no rows (typed) when no format
/// gives any.
fn stacked(formats: &[&Format], table: Normalized, columns: &[Column]) -> String {
    // Each column cast to its type: from the query's column of that name, or a typed null.
    let cast = |from_query: bool| -> String {
        let cast_one = |(name, kind): &Column| {
            let value = if from_query { name } else { "NULL" };
            format!("arrow_cast({value}, '{}') AS {name}", kind.replace('\'', "''"))
        };
        columns.iter().map(cast_one).collect::<Vec<_>>().join(", ")
    };
    let parts: Vec<String> = formats
        .iter()
        .flat_map(|format| format.normalized.iter().filter(|c| c.table == table))
        .map(|contribution| format!("SELECT {} FROM ({})", cast(true), contribution.sql))
        .collect();
    if parts.is_empty() {
        return format!("SELECT {} WHERE false", cast(false));
    }
    parts.join("\nUNION ALL\n")
}
