//! The reeval transcript format, as data: flat `{"type", "turn", "ts", ...}` lines in
//! `<runId>/<eval>/<cell>/<n>/transcript.jsonl`, and the raw stream parts beside them.

use super::build::{event, field, strs};
use super::{
    Absent, ContextColumn, ContextSource, Contribution, Derive, Envelope, EventSpec, ExportUnits, FieldSpec,
    FieldsAt, FileMatch, Format, FormatQuery, Kind, LinesTable, LookedFor, MarkerPart, Naming, Normalized,
    ReportChart, ReportSection, TypeRule, View,
};
use Kind::{Bool, Int, Json, Str, Timestamp};

const DEFAULT_ROOTS: &[&[&str]] = &[&[".reeval/runs"], &["evals/.history"]];

/// The attempt folder's context: where a reeval file lies says which run, eval, cell and attempt.
fn attempt_context() -> Vec<ContextColumn> {
    vec![
        ContextColumn {
            name: "run_id",
            source: ContextSource::Ancestor(4),
            about: "the reeval run: the folder <runId>",
        },
        ContextColumn {
            name: "eval",
            source: ContextSource::Ancestor(3),
            about: "the eval's slug: the folder under the run",
        },
        ContextColumn {
            name: "cell",
            source: ContextSource::Ancestor(2),
            about: "the cell's slug: the folder under the eval",
        },
        ContextColumn {
            name: "attempt",
            source: ContextSource::AncestorInt(1),
            about: "the attempt number: the folder <n>",
        },
        ContextColumn {
            name: "history",
            source: ContextSource::UnderPath(&["evals", ".history"]),
            about: "true under evals/.history (a recorded run), false under .reeval/runs",
        },
        ContextColumn {
            name: "line",
            source: ContextSource::LineNumber,
            about: "1-based line number in the file",
        },
        ContextColumn { name: "file", source: ContextSource::FilePath, about: "path of the file" },
    ]
}

/// The reeval format.
pub(crate) fn format() -> Format {
    Format {
        id: "reeval",
        name: "reeval",
        about: "reeval attempt transcripts: .reeval/runs/<runId>/<eval>/<cell>/<n>/transcript.jsonl and the same under evals/.history",
        default_roots: DEFAULT_ROOTS,
        files: FileMatch::Name("transcript.jsonl"),
        looked_for: Some(LookedFor { transcripts: "reeval attempts", files: "transcript.jsonl" }),
        beside: None,
        copies: None,
        envelope: Envelope { types: TypeRule::Key("type"), fields: FieldsAt::Beside },
        times: &["ts"],
        table_naming: Naming::DashToUnderscore,
        column_naming: Naming::SnakeCase,
        required_type: None,
        not_transcripts: &[],
        project_folder: None,
        context: attempt_context(),
        common_fields: vec![
            field("turn", Int, "the turn it belongs to, from 0"),
            field("ts", Timestamp, "when it happened"),
            field("atMs", Int, "milliseconds since the turn started"),
            field("durationMs", Int, "how long it took; null when the harness never reported the end"),
        ],
        events: events(),
        views: vec![attempts_view()],
        lines_table: None,
        export: ExportUnits::Rows { sql: EXPORT_UNITS, noun: "attempt" },
        normalized: vec![
            Contribution { table: Normalized::ToolCalls, sql: TOOL_CALLS },
            Contribution { table: Normalized::Sessions, sql: SESSIONS },
        ],
        report_sections: vec![tool_failures_section()],
        queries: QUERIES,
        model_family: None,
    }
}

/// The canned queries over its attempts only (`txq query NAME`), as `queries/NAME.sql`.
const QUERIES: &[FormatQuery] = &[
    FormatQuery {
        name: "reeval_failed_searches",
        sql: include_str!("../../queries/reeval_failed_searches.sql"),
    },
    FormatQuery { name: "reeval_tool_failures", sql: include_str!("../../queries/reeval_tool_failures.sql") },
    FormatQuery {
        name: "reeval_turn_durations",
        sql: include_str!("../../queries/reeval_turn_durations.sql"),
    },
];

/// The report's section of eval attempts: their tool calls and failures, a bar per eval and cell.
fn tool_failures_section() -> ReportSection {
    ReportSection {
        id: "evals",
        query: "reeval_tool_failures",
        heading: "Tool calls and failures, by eval and cell",
        note: Some("Eval attempts write no token usage: they have tool calls, not model calls or cost."),
        bar_named_by: &["eval", "cell"],
        charts: &[
            ReportChart { column: "tool_calls", unit: "tool calls", title: "Tool calls", colour: 0 },
            ReportChart {
                column: "failure_rate",
                unit: "share of tool calls that failed",
                title: "Failure rate",
                colour: 3,
            },
        ],
    }
}

/// `transcript.raw.jsonl`: every stream part the harness adapter sent, one per line.
pub(crate) fn raw_format() -> Format {
    Format {
        id: "reeval_raw",
        name: "reeval",
        about: "reeval raw stream parts: transcript.raw.jsonl beside an attempt's transcript.jsonl",
        default_roots: DEFAULT_ROOTS,
        files: FileMatch::Name("transcript.raw.jsonl"),
        looked_for: None,
        beside: None,
        copies: None,
        envelope: Envelope { types: TypeRule::Key("type"), fields: FieldsAt::Beside },
        times: &["ts"],
        table_naming: Naming::AsIs,
        column_naming: Naming::SnakeCase,
        required_type: None,
        not_transcripts: &[],
        project_folder: None,
        context: attempt_context(),
        common_fields: vec![
            field("turn", Int, "the turn the part belongs to"),
            field("type", Str, "the part's type, as the harness wrote it"),
        ],
        events: vec![],
        views: vec![],
        lines_table: Some(LinesTable {
            name: "raw",
            about: "one row per stream part of transcript.raw.jsonl files",
            line_column: "part",
            errors_name: "raw_errors",
        }),
        export: ExportUnits::Joins { schema: "reeval", key: folder_of, alone: "raw", noun: "attempt" },
        normalized: vec![],
        report_sections: vec![],
        queries: &[],
        model_family: None,
    }
}

/// An attempt's session id, as its export unit's id: the tree that keeps it, then its run, eval,
/// cell and number (`runs/<runId>/<eval>/<cell>/<n>`, or `history/…`).
macro_rules! attempt_id {
    ($t:literal) => {
        concat!(
            "CASE WHEN ",
            $t,
            ".history THEN 'history' ELSE 'runs' END || '/' || ",
            $t,
            ".run_id || '/' || ",
            $t,
            ".eval || '/' || ",
            $t,
            ".cell || '/' || CAST(",
            $t,
            ".attempt AS VARCHAR)"
        )
    };
}

/// reeval's tool calls: its `tool` events (a tool call merged with its result); a failed one's
/// output is its error. reeval transcripts carry no token usage: no calls.
const TOOL_CALLS: &str = concat!(
    "SELECT 'reeval' AS harness, ",
    attempt_id!("t"),
    " AS session_id, t.ts, t.tool, t.tool_call_id AS call_id, coalesce(t.ok, false) AS ok, \
     CASE WHEN NOT coalesce(t.ok, false) THEN t.output END AS error, t.duration_ms, \
     CAST(NULL AS BIGINT) AS result_bytes, CAST(NULL AS VARCHAR) AS mcp_server, \
     CAST(NULL AS VARCHAR) AS parent_session_id, \
     CAST(NULL AS VARCHAR) AS response_file, CAST(NULL AS BIGINT) AS response_line, t.file FROM reeval.tool t"
);

/// reeval's sessions: one per attempt, from its first to its last event.
const SESSIONS: &str = concat!(
    "SELECT 'reeval' AS harness, ",
    attempt_id!("e"),
    " AS session_id, ",
    attempt_id!("e"),
    " AS file_session_id, CAST(NULL AS VARCHAR) AS parent_session_id, min(e.ts) AS started_at, \
     max(e.ts) AS ended_at, CAST(NULL AS VARCHAR) AS cwd, \
     CAST(NULL AS VARCHAR) AS git_branch, CAST(NULL AS VARCHAR) AS git_commit, e.file \
     FROM reeval.events e GROUP BY e.history, e.run_id, e.eval, e.cell, e.attempt, e.file"
);

/// An export unit per attempt: its id names the tree that keeps it, so that the same attempt
/// kept in both trees is two units.
const EXPORT_UNITS: &str = "select a.file, \
    case when a.history then 'history' else 'runs' end || '/' || a.run_id || '/' || a.eval || '/' \
      || a.cell || '/' || cast(a.attempt as varchar) as id, \
    a.run_id, a.status = 'aborted' as open, cast(cast(t.first_ts as date) as varchar) as day \
    from reeval.attempts a left join (select file, min(ts) as first_ts from reeval.events group by file) t \
    on t.file = a.file";

/// A raw stream belongs to the attempt whose transcript lies in its folder.
fn folder_of(file: &std::path::Path) -> Option<std::path::PathBuf> {
    file.parent().map(std::path::Path::to_path_buf)
}

fn marker(part: MarkerPart, kind: Kind, about: &'static str) -> FieldSpec {
    FieldSpec {
        name: None,
        key: "output",
        kind,
        absent: Absent::Null,
        about,
        derive: Some(Derive::TruncationMarker { prefix: "[reeval: truncated ", part }),
        on_line: false,
    }
}

fn events() -> Vec<EventSpec> {
    let tool_call_id = || field("toolCallId", Str, "the harness's id of the tool call");
    vec![
        event("prompt", "the prompt of a turn, first in each turn", vec![field("text", Str, "the prompt")]),
        event(
            "text",
            "a message from the agent; the last of a turn is its final message",
            vec![field("text", Str, "the message (the record cuts it at 8 KB)")],
        ),
        event(
            "reasoning",
            "the agent's reasoning, when the harness reports it",
            vec![field("text", Str, "the reasoning")],
        ),
        event(
            "file-edit",
            "a file the agent created, modified or deleted",
            vec![
                tool_call_id(),
                field("path", Str, "the file, relative to the workspace"),
                field("kind", Str, "create | modify | delete"),
                field("added", Int, "lines added; null when the harness didn't send the content"),
                field("removed", Int, "lines removed; null when the harness didn't send the content"),
            ],
        ),
        event(
            "tool",
            "any other tool call, merged with its result",
            vec![
                tool_call_id(),
                field("tool", Str, "the harness's tool name (bash, glob, mcp__docs__search, ...)"),
                field("input", Json, "its input, as JSON text"),
                field(
                    "output",
                    Str,
                    "its output (over 128 KB: the first 96 KB and last 16 KB around a marker)",
                ),
                field("ok", Bool, "whether it succeeded"),
                marker(MarkerPart::Present, Bool, "whether output carries reeval's truncation marker"),
                marker(
                    MarkerPart::TotalChars,
                    Int,
                    "the whole output's length in characters, from the marker",
                ),
                marker(MarkerPart::Sha256, Str, "the whole output's sha256, from the marker"),
            ],
        ),
        event(
            "web-search",
            "a web search",
            vec![
                tool_call_id(),
                field("query", Str, "what was searched"),
                field("references", Int, "how many sources the harness says it used, or null"),
                FieldSpec {
                    name: None,
                    key: "ok",
                    kind: Bool,
                    absent: Absent::Bool(true),
                    about: "whether it succeeded (true when absent)",
                    derive: None,
                    on_line: false,
                },
            ],
        ),
        event(
            "web-fetch",
            "a fetched URL",
            vec![
                tool_call_id(),
                field("url", Str, "the URL"),
                field("ok", Bool, "whether the fetch succeeded"),
            ],
        ),
        event(
            "retry",
            "a model call that failed while the turn went on",
            vec![field("message", Str, "what failed")],
        ),
        event("error", "an error the harness reported", vec![field("message", Str, "the error")]),
        event(
            "turn-end",
            "the end of a turn",
            vec![
                field("status", Str, "completed | aborted | error"),
                field(
                    "unreported",
                    strs(),
                    "event types the harness could not report for the turn (web-search, web-fetch)",
                ),
            ],
        ),
    ]
}

fn attempts_view() -> View {
    View {
        name: "attempts",
        about: "one row per attempt (transcript.jsonl)",
        sql: r#"
WITH turns AS (
  SELECT file, count(DISTINCT turn) AS turns, max(turn) AS last_turn FROM events GROUP BY file
), ends AS (
  SELECT file, count(DISTINCT turn) AS ended_turns, sum(duration_ms) AS duration_ms,
         bool_or(array_has(coalesce(unreported, []), 'web-search')) AS searches_unreported,
         bool_or(array_has(coalesce(unreported, []), 'web-fetch')) AS fetches_unreported
  FROM turn_end GROUP BY file
), last_end AS (
  SELECT e.file, last_value(e.status ORDER BY e.line) AS status
  FROM turn_end e JOIN turns t ON t.file = e.file AND e.turn = t.last_turn GROUP BY e.file
), tools AS (
  SELECT file, count(*) AS tool_calls, count(*) FILTER (WHERE NOT ok) AS tool_failures FROM tool GROUP BY file
), edits AS (
  SELECT file, count(*) AS file_edits, coalesce(sum(added), 0) AS lines_added,
         coalesce(sum(removed), 0) AS lines_removed
  FROM file_edit GROUP BY file
), searches AS (SELECT file, count(*) AS n FROM web_search GROUP BY file
), fetches AS (SELECT file, count(*) AS n FROM web_fetch GROUP BY file
), errs AS (SELECT file, count(*) AS n FROM error GROUP BY file
), retries AS (SELECT file, count(*) AS n FROM retry GROUP BY file
), prompts AS (SELECT file, first_value(text ORDER BY line) AS prompt FROM prompt GROUP BY file
), finals AS (
  SELECT x.file, last_value(x.text ORDER BY x.line) AS final_text
  FROM text x JOIN turns t ON t.file = x.file AND x.turn = t.last_turn GROUP BY x.file
)
SELECT f.run_id, f.eval, f.cell, f.attempt, f.history,
       coalesce(t.turns, 0) AS turns,
       CASE WHEN coalesce(e.ended_turns, 0) < coalesce(t.turns, 0) THEN 'aborted' ELSE l.status END AS status,
       e.duration_ms,
       coalesce(k.tool_calls, 0) AS tool_calls,
       coalesce(k.tool_failures, 0) AS tool_failures,
       coalesce(d.file_edits, 0) AS file_edits,
       coalesce(d.lines_added, 0) AS lines_added,
       coalesce(d.lines_removed, 0) AS lines_removed,
       CASE WHEN coalesce(e.searches_unreported, false) THEN NULL ELSE coalesce(s.n, 0) END AS web_searches,
       CASE WHEN coalesce(e.fetches_unreported, false) THEN NULL ELSE coalesce(w.n, 0) END AS web_fetches,
       coalesce(r.n, 0) AS errors,
       coalesce(y.n, 0) AS retries,
       p.prompt, x.final_text, f.file
FROM files f
LEFT JOIN turns t ON t.file = f.file
LEFT JOIN ends e ON e.file = f.file
LEFT JOIN last_end l ON l.file = f.file
LEFT JOIN tools k ON k.file = f.file
LEFT JOIN edits d ON d.file = f.file
LEFT JOIN searches s ON s.file = f.file
LEFT JOIN fetches w ON w.file = f.file
LEFT JOIN errs r ON r.file = f.file
LEFT JOIN retries y ON y.file = f.file
LEFT JOIN prompts p ON p.file = f.file
LEFT JOIN finals x ON x.file = f.file
"#,
        columns: &[
            ("run_id", "the reeval run"),
            ("eval", "the eval's slug"),
            ("cell", "the cell's slug"),
            ("attempt", "the attempt number"),
            ("history", "under evals/.history"),
            ("turns", "number of turns with an event"),
            ("status", "status of the last turn's turn-end; aborted when a turn has no turn-end"),
            ("duration_ms", "sum of the turn-ends' durationMs (null when none reported one)"),
            ("tool_calls", "number of tool events"),
            ("tool_failures", "tool events with ok false"),
            ("file_edits", "number of file-edit events"),
            ("lines_added", "sum of file-edit added (nulls as 0)"),
            ("lines_removed", "sum of file-edit removed (nulls as 0)"),
            ("web_searches", "number of web-search events; null when a turn reports them unreported"),
            ("web_fetches", "number of web-fetch events; null when a turn reports them unreported"),
            ("errors", "number of error events"),
            ("retries", "number of retry events"),
            ("prompt", "the text of the first prompt"),
            ("final_text", "the last text of the last turn"),
            ("file", "path of the transcript"),
        ],
    }
}
