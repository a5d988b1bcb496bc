//! The rupu transcript format, as data: `run_<ULID>.jsonl` files of `{"type", "data"}` lines.

use super::build::{event, field, flag, list, strs};
use super::{
    Absent, ContextColumn, ContextSource, Contribution, Early, Envelope, EventSpec, ExportUnits, FieldSpec,
    FieldsAt, FileMatch, Format, FormatQuery, Kind, LookedFor, Naming, Normalized, TypeRule, View,
};
use Kind::{Bool, Count, Int, Json, Str, Timestamp};

/// The canned queries over its runs only (`txq query NAME`), as `queries/NAME.sql`.
const QUERIES: &[FormatQuery] = &[
    FormatQuery { name: "aborted_runs", sql: include_str!("../../queries/aborted_runs.sql") },
    FormatQuery { name: "agent_spend", sql: include_str!("../../queries/agent_spend.sql") },
    FormatQuery { name: "agent_summary", sql: include_str!("../../queries/agent_summary.sql") },
    FormatQuery { name: "cache_hit_ratio", sql: include_str!("../../queries/cache_hit_ratio.sql") },
    FormatQuery { name: "denied_tools", sql: include_str!("../../queries/denied_tools.sql") },
    FormatQuery { name: "failing_commands", sql: include_str!("../../queries/failing_commands.sql") },
    FormatQuery { name: "network_egress", sql: include_str!("../../queries/network_egress.sql") },
    FormatQuery { name: "run_outcomes", sql: include_str!("../../queries/run_outcomes.sql") },
    FormatQuery { name: "slowest_tools", sql: include_str!("../../queries/slowest_tools.sql") },
    FormatQuery { name: "spend_by_model_day", sql: include_str!("../../queries/spend_by_model_day.sql") },
];

/// The rupu format.
pub fn format() -> Format {
    Format {
        id: "rupu",
        name: "rupu",
        about: "rupu agent transcripts: <transcripts-dir>/run_<ULID>.jsonl and archive/run_<ULID>.jsonl",
        default_roots: &[&[".rupu/transcripts", "~/.rupu/transcripts"]],
        files: FileMatch::Extension("jsonl"),
        looked_for: Some(LookedFor {
            transcripts: "rupu transcripts",
            files: "*.jsonl files with a run_start line",
        }),
        beside: None,
        copies: None,
        envelope: Envelope { types: TypeRule::Key("type"), fields: FieldsAt::Under("data") },
        times: &["started_at", "ts"],
        table_naming: Naming::AsIs,
        column_naming: Naming::AsIs,
        required_type: Some("run_start"),
        not_transcripts: &["step logs", "netflow ledgers"],
        project_folder: None,
        context: vec![
            ContextColumn {
                name: "run_id",
                source: ContextSource::FileStem,
                about: "the run id: the file name without .jsonl (run_<ULID>)",
            },
            ContextColumn {
                name: "turn_idx",
                source: ContextSource::LastSeen {
                    event: "turn_start",
                    field: "turn_idx",
                    early: Some(Early { end: "turn_end", types: &["net_flow"] }),
                },
                about: "the turn the event falls in: turn_idx of the last turn_start at or before \
                        its line; null before the first turn. A net_flow row gets the turn in \
                        progress at flow.ts instead: rupu's netflow sink writes a flow at once while \
                        the runner writes a turn's own lines after it, so a flow between a turn_end \
                        and the next turn_start (or before the first) belongs to the turn that \
                        follows (the last turn_end's turn_idx + 1, or 0), and one between a \
                        turn_start and its turn_end to that turn. rupu's turn lines carry no time, \
                        so the turn's span is known from this order only",
            },
            ContextColumn {
                name: "line",
                source: ContextSource::LineNumber,
                about: "1-based line number in the file",
            },
            ContextColumn {
                name: "file",
                source: ContextSource::FilePath,
                about: "path of the transcript file",
            },
            ContextColumn {
                name: "archived",
                source: ContextSource::UnderDirectory("archive"),
                about: "true when the file lies under an archive/ directory (rupu transcript archive)",
            },
        ],
        common_fields: vec![],
        events: events(),
        views: vec![runs_view()],
        lines_table: None,
        export: ExportUnits::Rows { sql: EXPORT_UNITS, noun: "run" },
        normalized: vec![
            Contribution { table: Normalized::Calls, sql: CALLS },
            Contribution { table: Normalized::ToolCalls, sql: TOOL_CALLS },
            Contribution { table: Normalized::Sessions, sql: SESSIONS },
        ],
        report_sections: vec![],
        queries: QUERIES,
        model_family: None,
    }
}

fn outcome_record() -> Kind {
    Kind::Struct(vec![
        ("id", Str),
        ("class", Str),
        ("severity", Str),
        ("title", Str),
        ("wire", Kind::Struct(vec![("provider", Str), ("value", Str)])),
    ])
}

fn events() -> Vec<EventSpec> {
    vec![
        event(
            "run_start",
            "the first line of every agent transcript",
            vec![
                field("run_id", Str, "the run id, as in the file name"),
                field("workspace_id", Str, "the workspace the run belongs to"),
                field("agent", Str, "the agent's name"),
                field("provider", Str, "the provider the run started with"),
                field("model", Str, "the model the run started with"),
                field("started_at", Timestamp, "when the run started"),
                field("mode", Str, "permission mode: ask | bypass | readonly"),
                field("schema", Int, "transcript schema version; absent means 1"),
                field("codename", Str, "the run's codename"),
                field("customer", Str, "the customer; null is meaningful"),
                field("purpose", Str, "why the run was started"),
                field("launch_args", Json, "arguments the run was launched with"),
                field("launch_skills", strs(), "skills named at launch"),
                field("launch_preload_skills", strs(), "skills preloaded at launch"),
            ],
        ),
        event(
            "run_complete",
            "the last line of a run that ended",
            vec![
                field("run_id", Str, "the run id, as in the file name"),
                FieldSpec {
                    name: None,
                    key: "status",
                    kind: Str,
                    absent: Absent::Required,
                    about: "ok | error | aborted (an operator stop or a pause); missing or not text is damage",
                    derive: None,
                    on_line: false,
                },
                field("total_tokens", Count, "tokens the run used in all"),
                field("duration_ms", Int, "wall time of the run"),
                field("error", Str, "what went wrong, for status error"),
                field("outcome", outcome_record(), "the classified outcome that ended the run"),
            ],
        ),
        event("turn_start", "a turn begins", vec![field("turn_idx", Int, "the turn's index")]),
        event(
            "turn_end",
            "a turn ends",
            vec![
                field("turn_idx", Int, "the turn's index"),
                field("tokens_in", Count, "input tokens of the turn"),
                field("tokens_out", Count, "output tokens of the turn"),
                field("stop_reason", Str, "why the model stopped (end_turn, tool_use, ...)"),
            ],
        ),
        event(
            "usage",
            "one provider call's token usage",
            vec![
                field("provider", Str, "the provider called"),
                field("model", Str, "the model asked for"),
                field("served_model", Str, "the model that served the call, when it differs"),
                field("input_tokens", Count, "input tokens, cached ones included"),
                field("output_tokens", Count, "output tokens"),
                FieldSpec {
                    name: None,
                    key: "cached_tokens",
                    kind: Count,
                    absent: Absent::Int(0),
                    about: "input tokens read from the cache: part of input_tokens (0 when absent)",
                    derive: None,
                    on_line: false,
                },
                field("cache_write_tokens", Count, "input tokens written to the cache"),
                field("purpose", Str, "why the call was made (a compaction call says so)"),
            ],
        ),
        event(
            "notice",
            "a runtime intervention worth showing",
            vec![
                field("kind", Str, "model_limits, tool_unavailable, provider_retry, skill_missing, ..."),
                field("message", Str, "the human-readable message"),
            ],
        ),
        event(
            "tool_grant",
            "the tools the run offered its model, and why",
            vec![
                field(
                    "entries",
                    list(Kind::Struct(vec![("tool", Str), ("reasons", strs())])),
                    "one entry per offered tool, with the reasons it was granted",
                ),
                field(
                    "unavailable",
                    list(Kind::Struct(vec![("tool", Str), ("missing", strs())])),
                    "tools that could not be served, with the services they miss",
                ),
            ],
        ),
        event(
            "skill_index",
            "the skills the run bound",
            vec![field(
                "skills",
                list(Kind::Struct(vec![
                    ("name", Str),
                    ("layer", Str),
                    ("stamp", Str),
                    ("preload", Bool),
                    ("indexed", Bool),
                    ("reason", Str),
                ])),
                "one row per bound skill",
            )],
        ),
        event(
            "skill_load",
            "a skill's content entered the conversation",
            vec![
                field("name", Str, "the skill"),
                field("layer", Str, "where it was found (global, project, ...)"),
                field("content_hash", Str, "hash of the loaded content"),
                field("base_dir", Str, "the skill's directory"),
                field("via", Str, "what loaded it: model, preload, reattach, ..."),
            ],
        ),
        event("seed", "the run was seeded from earlier history (fields inferred from the data)", vec![]),
        event(
            "user_message",
            "a message to the model from the user or the runtime (fields inferred)",
            vec![],
        ),
        event("thinking_delta", "a streamed piece of reasoning (fields inferred from the data)", vec![]),
        event("thinking", "a whole reasoning block (fields inferred from the data)", vec![]),
        event(
            "assistant_delta",
            "a streamed piece of the reply",
            vec![field("content", Str, "the text piece")],
        ),
        event(
            "assistant_message",
            "the model's reply text",
            vec![
                field("content", Str, "the reply text"),
                field("thinking", Str, "reasoning that came with it"),
            ],
        ),
        event("assistant_block", "another block of the reply (fields inferred from the data)", vec![]),
        event(
            "tool_call",
            "the model called a tool",
            vec![
                field("call_id", Str, "joins the call to its tool_result"),
                field("tool", Str, "the tool's name"),
                field("input", Json, "the call's input, as JSON text"),
            ],
        ),
        event(
            "tool_result",
            "what a tool call returned",
            vec![
                field("call_id", Str, "joins the result to its tool_call"),
                field("output", Str, "the tool's output"),
                field("error", Str, "present when the tool failed"),
                field("duration_ms", Int, "how long the call took"),
                field("structured", Json, "structured output, as JSON text"),
            ],
        ),
        event(
            "file_edit",
            "a file the agent changed",
            vec![
                field("path", Str, "the file"),
                field("kind", Str, "create | modify | delete"),
                field("diff", Str, "the change as a diff"),
            ],
        ),
        event(
            "command_run",
            "a command the agent ran",
            vec![
                field("argv", strs(), "the command and its arguments"),
                field("cwd", Str, "the working directory"),
                field("exit_code", Int, "the exit code"),
                field("stdout_bytes", Int, "bytes written to stdout"),
                field("stderr_bytes", Int, "bytes written to stderr"),
            ],
        ),
        event(
            "message",
            "a message sent or received on the run's message space",
            vec![
                field("id", Str, "the message id"),
                field("direction", Str, "sent | received"),
                field("from", Str, "the sender"),
                field("to", Str, "the addressee"),
                field("kind", Str, "direct, broadcast, ..."),
                field("body", Str, "the message text"),
                field("via", Str, "how it travelled"),
                field("delivery", Json, "delivery details, as JSON text"),
            ],
        ),
        event(
            "injected",
            "context a collector put in front of the model",
            vec![
                field("source", Str, "the collector"),
                field("kind", Str, "what was injected"),
                field("cadence", Str, "once | every_turn"),
                field("content", Str, "the injected text"),
                field("message_ids", strs(), "the messages it carries"),
            ],
        ),
        event(
            "outcome",
            "a reply that was not a normal one, classified",
            vec![
                field("turn_idx", Int, "the turn"),
                field("outcome", outcome_record(), "the outcome record: id, class, severity, title, wire"),
            ],
        ),
        event(
            "recovery",
            "one recovery action taken for an outcome",
            vec![
                field("outcome_id", Str, "the outcome it answers"),
                field("rung", Int, "the rung of the recovery ladder"),
                field("action", Str, "what was done (retried, fell_back, ...)"),
                field("provider", Str, "the provider it moved to"),
                field("model", Str, "the model it moved to"),
                flag("merge_into_previous", "whether the next reply joins the previous message"),
            ],
        ),
        event("compaction", "the conversation was compacted (fields inferred from the data)", vec![]),
        EventSpec {
            type_name: "net_flow",
            about: "one outbound network connection; the columns are the flow record's fields",
            fields_path: &["flow"],
            fields: flow_fields(),
        },
        event(
            "gate_requested",
            "an approval gate (older or hand-made files)",
            vec![
                field("gate_id", Str, "the gate"),
                field("prompt", Str, "what was asked"),
                field("decision", Str, "approved | rejected"),
                field("decided_by", Str, "who decided"),
            ],
        ),
        event(
            "tool_audit",
            "the permission check of a tool call",
            vec![
                flag("declared", "the agent declared the tool"),
                flag("granted", "the tool was granted"),
                flag("blocked", "the call was refused"),
                flag("restricted", "the call was restricted"),
                field("tool", Str, "the tool"),
                field("reason", Str, "why it was granted or refused"),
                field("decision", Str, "the decision, e.g. denied:readonly"),
            ],
        ),
        event(
            "action_emitted",
            "an action a step emitted",
            vec![
                field("kind", Str, "the action, e.g. issues.create"),
                field("payload", Json, "the action's payload, as JSON text"),
                flag("allowed", "the action was allowed"),
                flag("applied", "the action was applied"),
                field("reason", Str, "why it was refused"),
            ],
        ),
    ]
}

fn runs_view() -> View {
    View {
        name: "runs",
        about: "one row per agent transcript",
        sql: r#"
WITH starts AS (
  SELECT *, row_number() OVER (PARTITION BY file, run_id ORDER BY line) AS nth FROM run_start
), completes AS (
  SELECT *, row_number() OVER (PARTITION BY file, run_id ORDER BY line DESC) AS nth FROM run_complete
), usage_sums AS (
  SELECT file, run_id, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
         sum(cached_tokens) AS cached_tokens
  FROM usage GROUP BY file, run_id
), turn_counts AS (
  SELECT file, run_id, count(*) AS turns FROM turn_start GROUP BY file, run_id
), call_counts AS (
  SELECT file, run_id, count(*) AS tool_calls FROM tool_call GROUP BY file, run_id
)
SELECT s.run_id, s.agent, s.provider, s.model, s.mode, s.started_at,
       coalesce(s.schema, 1) AS schema_version, s.workspace_id, s.codename, s.customer,
       CASE WHEN c.file IS NULL THEN 'aborted' ELSE c.status END AS status, c.total_tokens, c.duration_ms, c.error,
       c.file IS NOT NULL AS completed,
       s.archived,
       coalesce(t.turns, 0) AS turns,
       coalesce(u.input_tokens, 0) AS input_tokens,
       coalesce(u.output_tokens, 0) AS output_tokens,
       coalesce(u.cached_tokens, 0) AS cached_tokens,
       coalesce(k.tool_calls, 0) AS tool_calls,
       s.file
FROM starts s
LEFT JOIN completes c ON c.file = s.file AND c.run_id = s.run_id AND c.nth = 1
LEFT JOIN usage_sums u ON u.file = s.file AND u.run_id = s.run_id
LEFT JOIN turn_counts t ON t.file = s.file AND t.run_id = s.run_id
LEFT JOIN call_counts k ON k.file = s.file AND k.run_id = s.run_id
WHERE s.nth = 1
"#,
        columns: &[
            ("run_id", "the run id (file name)"),
            ("agent", "run_start.agent"),
            ("provider", "run_start.provider"),
            ("model", "run_start.model"),
            ("mode", "run_start.mode: ask | bypass | readonly"),
            ("started_at", "run_start.started_at"),
            ("schema_version", "run_start.schema, 1 where absent"),
            ("workspace_id", "run_start.workspace_id"),
            ("codename", "run_start.codename"),
            ("customer", "run_start.customer"),
            (
                "status",
                "run_complete.status; aborted when the file has no run_complete (completed is then false); null when its status is missing or not text (listed in errors)",
            ),
            ("total_tokens", "run_complete.total_tokens"),
            ("duration_ms", "run_complete.duration_ms"),
            (
                "error",
                "run_complete.error: operator_stop or paused for an aborted run_complete; null for max turns reached",
            ),
            (
                "completed",
                "the file has a run_complete: false for a run that crashed or is still running (status aborted), \
                 true for one that ended, an aborted run_complete (operator stop, pause) included",
            ),
            ("archived", "the file lies under archive/"),
            ("turns", "number of turn_start events"),
            ("input_tokens", "sum of usage.input_tokens (cached included)"),
            ("output_tokens", "sum of usage.output_tokens"),
            ("cached_tokens", "sum of usage.cached_tokens"),
            ("tool_calls", "number of tool_call events"),
            ("file", "path of the transcript"),
        ],
    }
}

/// The fields of a flow record, as a transcript's `net_flow.data.flow` and a netflow ledger's
/// `flow` line hold them.
pub(super) fn flow_fields() -> Vec<FieldSpec> {
    vec![
        field("id", Str, "the flow's ULID"),
        field("ts", Timestamp, "when the flow was recorded"),
        field(
            "ctx",
            Kind::Struct(vec![
                ("run_id", Str),
                ("step_id", Str),
                ("agent", Str),
                ("workspace_id", Str),
                ("origin", Kind::Struct(vec![("kind", Str), ("name", Str)])),
            ]),
            "who made it: run_id, step_id, agent, workspace_id, origin {kind, name}",
        ),
        field("fidelity", Str, "how much was observed: coarse | http | full"),
        field("method", Str, "the HTTP method"),
        field("scheme", Str, "http, https, ..."),
        field("host", Str, "the host connected to"),
        field("port", Int, "the port"),
        field("path", Str, "the path, query stripped"),
        field("peer_ip", Str, "the peer's address"),
        field("resolved_ips", strs(), "addresses the host resolved to"),
        field("http_version", Str, "the HTTP version"),
        field("status", Int, "the HTTP status"),
        field("outcome", Str, "ok | http_error | transport_error | timeout"),
        field("error", Str, "what failed"),
        field("bytes_out", Int, "bytes sent"),
        field("bytes_in", Int, "bytes received (declared, not confirmed, while body_complete is false)"),
        flag("body_complete", "whether the whole body was seen"),
        field("ttfb_ms", Int, "time to first byte"),
        field("duration_ms", Int, "how long the flow took"),
    ]
}
/// rupu's calls: each `usage` line (cached_tokens are part of input_tokens; cache writes are not,
/// and are added). rupu writes no time on a usage line: a call is dated by its run's start.
const CALLS: &str = "\
SELECT 'rupu' AS harness, u.run_id AS session_id, CAST(NULL AS VARCHAR) AS parent_session_id,
       r.started_at AS ts, u.provider, u.model,
       u.input_tokens + coalesce(u.cache_write_tokens, 0) AS input_tokens,
       coalesce(u.cached_tokens, 0) AS cache_read_tokens,
       coalesce(u.cache_write_tokens, 0) AS cache_write_tokens,
       u.output_tokens, CAST(NULL AS BIGINT) AS reasoning_tokens, CAST(NULL AS VARCHAR) AS service_tier, u.file, u.line
FROM rupu.usage u
LEFT JOIN (SELECT file, min(started_at) AS started_at FROM rupu.run_start GROUP BY file) r ON r.file = u.file";

/// rupu's tool calls: each `tool_call` joined to its `tool_result` (an error means it failed);
/// its result's bytes those of the result's `output` (0 when it has none). rupu names no MCP
/// server and no response of a tool call: those are null.
const TOOL_CALLS: &str = "\
SELECT 'rupu' AS harness, c.run_id AS session_id, CAST(NULL AS TIMESTAMP) AS ts, c.tool, c.call_id,
       r.error IS NULL AS ok, r.error, r.duration_ms,
       CASE WHEN r.call_id IS NOT NULL THEN CAST(coalesce(octet_length(r.output), 0) AS BIGINT) END AS result_bytes,
       CAST(NULL AS VARCHAR) AS mcp_server, CAST(NULL AS VARCHAR) AS parent_session_id,
       CAST(NULL AS VARCHAR) AS response_file,
       CAST(NULL AS BIGINT) AS response_line, c.file
FROM rupu.tool_call c
LEFT JOIN (SELECT file, call_id, first_value(error ORDER BY line) AS error,
                  first_value(duration_ms ORDER BY line) AS duration_ms,
                  first_value(output ORDER BY line) AS output
           FROM rupu.tool_result GROUP BY file, call_id) r
  ON r.file = c.file AND r.call_id = c.call_id";

/// rupu's sessions: one per transcript, started when its run_start says (its end is not written).
const SESSIONS: &str = "\
SELECT 'rupu' AS harness, f.run_id AS session_id, f.run_id AS file_session_id,
       CAST(NULL AS VARCHAR) AS parent_session_id,
       r.started_at, CAST(NULL AS TIMESTAMP) AS ended_at, CAST(NULL AS VARCHAR) AS cwd,
       CAST(NULL AS VARCHAR) AS git_branch, CAST(NULL AS VARCHAR) AS git_commit, f.file
FROM rupu.files f
LEFT JOIN (SELECT file, min(started_at) AS started_at FROM rupu.run_start GROUP BY file) r ON r.file = f.file
WHERE f.transcript";

/// An export unit per transcript, whether or not `runs` has a row for it: a run with no
/// `run_complete` (aborted) is still being written.
const EXPORT_UNITS: &str = "select f.file, f.run_id as id, f.run_id, \
    coalesce(r.status, 'aborted') = 'aborted' as open, cast(cast(r.started_at as date) as varchar) as day \
    from rupu.files f left join rupu.runs r on r.file = f.file where f.transcript";
