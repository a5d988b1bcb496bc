//! The normalized tables of the default schema, `calls`, `tool_calls`, `sessions` and
//! `rate_limits`: every
//! format's rows of each (the query its description gives) cast to one set of columns and
//! stacked, so that "what did we spend per model per day, across every agent" is one statement.
//! The column names are the interface: they are defined here once.

use crate::format::{Format, Normalized};
use crate::source::machines::Machines;

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
    ("service_tier", TEXT),
    ("file", TEXT),
    ("line", INT),
];

/// `rate_limits`: one row per rate-limit window per line that reports it.
pub(crate) const RATE_LIMITS: &[Column] = &[
    ("harness", TEXT),
    ("session_id", TEXT),
    ("ts", TIME),
    ("window", TEXT),
    ("window_minutes", INT),
    ("used_percent", FLOAT),
    ("resets_at", TIME),
    ("plan", TEXT),
    ("file", TEXT),
    ("line", INT),
];

/// `tool_calls`: one row per tool call. Its `cost_usd` is not a format's: the view shares the
/// cost of the call that asked for it (see [`TOOL_CALL_RESPONSE`]).
pub(crate) const TOOL_CALLS: &[Column] = &[
    ("harness", TEXT),
    ("session_id", TEXT),
    ("ts", TIME),
    ("tool", TEXT),
    ("call_id", TEXT),
    ("ok", BOOL),
    ("error", TEXT),
    ("duration_ms", INT),
    ("result_bytes", INT),
    ("mcp_server", TEXT),
];

/// What a format gives of each tool call besides [`TOOL_CALLS`], read by the views and not
/// shown: its session's parent (a session is keyed by both, as in `calls`), and the row of
/// `calls` (its `file` and `line`) of the model response that asked for the call, null when that
/// response is not a call or cannot be found. A response's cost is shared evenly among the tool
/// calls that name it.
/// Its `file` (the transcript it was read from) names its machine.
const TOOL_CALL_KEYS: &[Column] =
    &[("parent_session_id", TEXT), ("response_file", TEXT), ("response_line", INT), ("file", TEXT)];

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
    ("git_branch", TEXT),
    ("git_commit", TEXT),
    ("file", TEXT),
];

/// What a row of a normalized table is, for `\d` (`None` for any other name).
pub(crate) fn about(table: &str) -> Option<&'static str> {
    match table {
        "calls" => Some("one row per billed model call, every harness (docs/harnesses.md)"),
        "tool_calls" => Some("one row per tool call, every harness"),
        "sessions" => Some("one row per session, every harness"),
        "rate_limits" => {
            Some("one row per rate-limit window a line reports, kept once (harnesses that write them)")
        }
        "git_commits" => Some("one row per commit on a branch of a repository some session's project names"),
        _ => None,
    }
}

/// What a column of a normalized table holds, for `\d calls` (docs/harnesses.md says more).
pub(crate) fn column_about(table: &str, column: &str) -> Option<&'static str> {
    Some(match (table, column) {
        (_, "harness") => "the harness that wrote it: its format's name, the schema of its own rows",
        ("sessions", "session_id") => "the session, as its lines name it (a subagent's: its agent id)",
        (_, "session_id") => "the session it belongs to (sessions.session_id)",
        (_, "parent_session_id") => "the session a subagent or spawned thread ran under; null at the top",
        ("sessions", "root_session_id") => {
            "the top of its chain of parents: its own id at the top (docs/harnesses.md: cycles, gaps)"
        }
        ("sessions", "file_session_id") => "the session as its file names it: the id ccusage shows",
        ("calls", "ts") => "when the response was written",
        ("tool_calls", "ts") => "when the tool was called",
        ("rate_limits", "ts") => "when the line reporting it was written",
        ("rate_limits", "window") => "which window: primary (the short one) or secondary (the long one)",
        ("rate_limits", "window_minutes") => "the window's length in minutes (300: 5 hours; 10080: a week)",
        ("rate_limits", "used_percent") => "how much of the window's quota was used then, in percent",
        ("rate_limits", "resets_at") => "when the window resets (from unix seconds)",
        ("rate_limits", "plan") => "the plan it counts against (plus, pro, ...), where written",
        ("calls", "service_tier") => {
            "the tier the call was served at, as written (standard, priority, batch, fast); null: unknown"
        }
        ("calls", "provider") => "who serves the model: anthropic, openai, google, ...",
        ("calls" | "sessions", "model") => "the model that answered (sessions: of its first call)",
        ("calls" | "sessions", "input_tokens") => "input tokens, the cache reads and writes included",
        ("calls", "cache_read_tokens") => "input tokens read from the cache",
        ("calls", "cache_write_tokens") => "input tokens written to the cache",
        ("calls" | "sessions", "output_tokens") => "output tokens, reasoning included",
        ("calls", "reasoning_tokens") => "the output tokens spent reasoning (thinking, thoughts)",
        ("calls", "cost_usd") => "US dollars: call_cost of its model, tokens and tier; null with no price",
        ("sessions", "cost_usd") => "US dollars over its calls; null when one has no price",
        (_, "machine") => {
            "the machine it was found on: its place's --label (or [sources]), else this machine's name \
             (TXQ_MACHINE, else the host name)"
        }
        (_, "file") => "the transcript it was read from",
        (_, "line") => "the line of the transcript",
        ("tool_calls", "tool") => "the tool's name",
        ("tool_calls", "call_id") => "the harness's id of the call",
        ("tool_calls", "ok") => "whether the call succeeded, as its result says",
        ("tool_calls", "error") => "when not ok: what the result said",
        ("tool_calls", "duration_ms") => "how long it ran, where the harness writes it",
        ("tool_calls", "cost_usd") => {
            "US dollars: its share of the cost of the response that asked for it, split evenly \
             among that response's tool calls (an estimate); null when that response has no price"
        }
        ("tool_calls", "result_bytes") => {
            "the UTF-8 bytes its result put back into the context (docs/harnesses.md); null with no result"
        }
        ("tool_calls", "mcp_server") => "the MCP server of an MCP tool; null for any other tool",
        ("sessions", "started_at") => "its first line's time",
        ("sessions", "ended_at") => "its last line's time",
        ("sessions", "cwd") => "the working directory it ran in",
        ("sessions", "project") => {
            "the repository root of cwd on this machine (the nearest folder with .git), else cwd"
        }
        ("sessions", "git_branch") => "the git branch checked out when it started, as the harness wrote it",
        ("sessions", "git_commit") => "the commit checked out when it started, where the harness writes it",
        ("git_commits", column) => {
            return crate::sql::git_commits::COLUMNS
                .iter()
                .find(|(name, _)| *name == column)
                .map(|(_, about)| *about);
        }
        ("sessions", "calls") => "its rows of calls",
        ("sessions", "tool_calls") => "its rows of tool_calls",
        _ => return None,
    })
}

/// The normalized tables `formats` give rows of, each with its query over theirs alone: a
/// format's schema holds these too (`claude.sessions`), its own rows only.
pub(crate) fn own_views(formats: &[&Format], machines: &Machines) -> Vec<(&'static str, String)> {
    let gives = |name: &str| formats.iter().flat_map(|f| &f.normalized).any(|c| c.table.name() == name);
    views(formats, machines).into_iter().filter(|(name, _)| gives(name)).collect()
}

/// The machine of the transcript named by `file` (a column): the nearest labeled place that holds
/// it, else this machine ([`Machines::of`], in SQL).
fn machine_of(machines: &Machines, file: &str) -> String {
    let quoted = |text: &str| format!("'{}'", text.replace('\'', "''"));
    let here = format!("arrow_cast({}, '{TEXT}')", quoted(machines.here()));
    let places = machines.places();
    if places.is_empty() {
        return here;
    }
    let arms: Vec<String> = places
        .iter()
        .map(|(place, name)| {
            let holds = match place.ends_with('/') {
                true => format!("starts_with({file}, {})", quoted(place)),
                false => format!(
                    "{file} = {} OR starts_with({file}, {})",
                    quoted(place),
                    quoted(&format!("{place}/"))
                ),
            };
            format!("WHEN {holds} THEN {}", quoted(name))
        })
        .collect();
    format!("arrow_cast(CASE {} ELSE {} END, '{TEXT}')", arms.join(" "), quoted(machines.here()))
}

/// The SQL of each normalized view over `formats`: its name and its query; `machines` name the
/// machine of each row.
pub(crate) fn views(formats: &[&Format], machines: &Machines) -> Vec<(&'static str, String)> {
    let calls = calls(formats, machines);
    let keyed: Vec<Column> = TOOL_CALLS.iter().chain(TOOL_CALL_KEYS).copied().collect();
    let tools = stacked(formats, Normalized::ToolCalls, &keyed);
    let tools = format!("SELECT *, {} AS machine FROM ({tools})", machine_of(machines, "file"));
    let tool_calls = tool_calls(&tools, &calls);
    let facts = stacked(formats, Normalized::Sessions, SESSION_FACTS);
    // The top of each session's chain of parents (crate::sql::session_root says how a cycle or a
    // missing parent ends it).
    let root = format!("{}(f.session_id, f.parent_session_id)", crate::sql::session_root::NAME);
    let rate_limits =
        with_machine(&stacked(formats, Normalized::RateLimits, RATE_LIMITS), RATE_LIMITS, machines);
    let facts = format!("SELECT *, {} AS machine FROM ({facts})", machine_of(machines, "file"));
    let sessions = format!(
        "WITH facts AS ({facts}), calls AS ({calls}), tools AS ({tools}),
call_sums AS (
  SELECT harness, machine, session_id, parent_session_id,
         first_value(model ORDER BY ts, file, line) AS model, count(*) AS calls,
         sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
         CASE WHEN count(cost_usd) = count(*) THEN CAST(sum(CAST(cost_usd AS DECIMAL(38, 12))) AS DOUBLE) END AS cost_usd
  FROM calls GROUP BY harness, machine, session_id, parent_session_id
), tool_sums AS (
  SELECT harness, machine, session_id, parent_session_id, count(*) AS tool_calls FROM tools
  GROUP BY harness, machine, session_id, parent_session_id
)
SELECT f.harness, f.session_id, f.file_session_id, f.parent_session_id,
       {root} OVER (PARTITION BY f.harness) AS root_session_id,
       f.started_at, f.ended_at, f.cwd, repository_root(f.cwd) AS project, f.git_branch, f.git_commit, c.model,
       coalesce(c.calls, 0) AS calls, coalesce(c.input_tokens, 0) AS input_tokens,
       coalesce(c.output_tokens, 0) AS output_tokens, c.cost_usd,
       coalesce(t.tool_calls, 0) AS tool_calls, f.machine, f.file
FROM facts f
LEFT JOIN call_sums c ON c.harness = f.harness AND c.machine = f.machine AND c.session_id = f.session_id
  AND c.parent_session_id IS NOT DISTINCT FROM f.parent_session_id
LEFT JOIN tool_sums t ON t.harness = f.harness AND t.machine = f.machine AND t.session_id = f.session_id
  AND t.parent_session_id IS NOT DISTINCT FROM f.parent_session_id"
    );
    vec![("calls", calls), ("tool_calls", tool_calls), ("sessions", sessions), ("rate_limits", rate_limits)]
}

/// `calls`, priced: `cost_usd` is `call_cost` over the call's model, tokens and service tier,
/// from the session's prices (docs/prices.md); null, and named in a warning, for a model with no
/// price.
fn calls(formats: &[&Format], machines: &Machines) -> String {
    let rows = stacked(formats, Normalized::Calls, CALLS);
    let names: Vec<&str> = CALLS.iter().map(|(name, _)| *name).collect();
    let (before, after) = names.split_at(names.len() - 2);
    format!(
        "SELECT {}, arrow_cast(call_cost(model, input_tokens, cache_read_tokens, cache_write_tokens, \
         output_tokens, service_tier), '{FLOAT}') AS cost_usd, {} AS machine, {} FROM ({rows})",
        before.join(", "),
        machine_of(machines, "file"),
        after.join(", ")
    )
}

/// `rows` of `columns` (`file` and `line` last) with `machine` before `file`.
fn with_machine(rows: &str, columns: &[Column], machines: &Machines) -> String {
    let names: Vec<String> = columns.iter().map(|(name, _)| format!("\"{name}\"")).collect();
    let (before, after) = names.split_at(names.len() - 2);
    format!(
        "SELECT {}, {} AS machine, {} FROM ({rows})",
        before.join(", "),
        machine_of(machines, "file"),
        after.join(", ")
    )
}

/// `tool_calls` over the formats' rows with their keys (`rows`), each call's `cost_usd` its share
/// of the cost of the response that asked for it (`calls` priced, over `calls_sql`): that
/// response's `cost_usd` over the number of tool calls that name it; null when the format names
/// no response, the response is not in `calls`, or it has no price.
fn tool_calls(rows: &str, calls_sql: &str) -> String {
    let (before, after) = TOOL_CALLS.split_at(TOOL_CALLS.len() - 2);
    let columns =
        |part: &[Column]| part.iter().map(|(name, _)| format!("t.{name}")).collect::<Vec<_>>().join(", ");
    format!(
        "SELECT {}, arrow_cast(c.cost_usd / CAST(count(*) OVER (PARTITION BY t.harness, t.response_file, \
         t.response_line) AS DOUBLE), '{FLOAT}') AS cost_usd, {}, t.machine \
         FROM ({rows}) t LEFT JOIN ({calls_sql}) c ON c.harness = t.harness AND c.file = t.response_file \
         AND c.line = t.response_line",
        columns(before),
        columns(after)
    )
}

/// Every format's rows of `table`, cast to `columns`, stacked; no rows (typed) when no format
/// gives any.
fn stacked(formats: &[&Format], table: Normalized, columns: &[Column]) -> String {
    // Each column cast to its type: from the query's column of that name, or a typed null.
    let cast = |from_query: bool| -> String {
        let cast_one = |(name, kind): &Column| {
            // Quoted: a name may be a keyword (`window`).
            let value = if from_query { format!("\"{name}\"") } else { "NULL".to_string() };
            format!("arrow_cast({value}, '{}') AS \"{name}\"", kind.replace('\'', "''"))
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
