//! Codex CLI rollouts, as data: `<codex-home>/sessions/YYYY/MM/DD/rollout-<local time>-<thread>.jsonl`
//! (and `archived_sessions/`, and either compressed as `.jsonl.zst`) of `{"timestamp", "type",
//! "payload"}` lines, typed by `type` and, for `response_item` and `event_msg`, the payload's own
//! `type`; and their rows of the normalized `calls`, `tool_calls`, `sessions` and `rate_limits`.

use super::build::{event, field, line_field, named};
use super::{
    Absent, ContextColumn, ContextSource, Contribution, Copies, Envelope, EventSpec, ExportUnits, FieldsAt,
    FileMatch, Format, Kind, LookedFor, Naming, Normalized, TypeRule,
};
use Kind::{Bool, Count, Int, Json, Str, Timestamp};

/// The Codex CLI format.
pub fn format() -> Format {
    Format {
        id: "codex",
        name: "codex",
        about: "Codex CLI rollouts: <codex-home>/sessions/YYYY/MM/DD/rollout-<local time>-<thread>.jsonl \
                and archived_sessions/rollout-*.jsonl, either kept as .jsonl.zst once idle; the home \
                is $CODEX_HOME, else ~/.codex",
        default_roots: &[
            &["$CODEX_HOME/sessions", "~/.codex/sessions"],
            &["$CODEX_HOME/archived_sessions", "~/.codex/archived_sessions"],
        ],
        files: FileMatch::Patterns(&["sessions/**/rollout-*.jsonl", "archived_sessions/rollout-*.jsonl"]),
        looked_for: Some(LookedFor {
            transcripts: "Codex CLI rollouts",
            files: "sessions/**/rollout-*.jsonl",
        }),
        beside: None,
        copies: Some(Copies { kept: "sessions", copy: "archived_sessions" }),
        envelope: Envelope {
            types: TypeRule::Refined { key: "type", refined: &["response_item", "event_msg"], sub: "type" },
            fields: FieldsAt::Under("payload"),
        },
        times: &["timestamp"],
        table_naming: Naming::LastPart,
        column_naming: Naming::AsIs,
        required_type: None,
        not_transcripts: &[],
        project_folder: None,
        context: vec![
            ContextColumn {
                name: "thread_id",
                source: ContextSource::Carried { event: "session_meta", key: "id", first: true },
                about: "the thread the rollout records: the id of its first session_meta (a child's \
                        file replays its parent's session_meta later; null before the first)",
            },
            ContextColumn {
                name: "turn_model",
                source: ContextSource::Carried { event: "turn_context", key: "model", first: false },
                about: "the model of the turn: that of the latest turn_context at or before the line \
                        (the only place Codex writes it; null before the first)",
            },
            ContextColumn {
                name: "count_model",
                source: ContextSource::Carried {
                    event: "event_msg.token_count",
                    key: "info.model",
                    first: false,
                },
                about: "the model the latest token_count with one names in its info (some builds write \
                        it there; a spawned child's rollout may have no turn_context of its own)",
            },
            ContextColumn {
                name: "archived",
                source: ContextSource::UnderDirectory("archived_sessions"),
                about: "true for a rollout under archived_sessions/",
            },
            ContextColumn {
                name: "line",
                source: ContextSource::LineNumber,
                about: "1-based line number in the file (of the decompressed lines, for a .zst)",
            },
            ContextColumn {
                name: "file",
                source: ContextSource::FilePath,
                about: "path of the rollout file",
            },
        ],
        common_fields: vec![line_field(
            "timestamp",
            Timestamp,
            "when the line was written (UTC), beside type and payload",
        )],
        events: events(),
        views: vec![],
        lines_table: None,
        export: ExportUnits::Rows { sql: EXPORT_UNITS, noun: "thread" },
        normalized: vec![
            Contribution { table: Normalized::Calls, sql: CALLS },
            Contribution { table: Normalized::ToolCalls, sql: TOOL_CALLS },
            Contribution { table: Normalized::RateLimits, sql: RATE_LIMITS },
            Contribution { table: Normalized::Sessions, sql: SESSIONS },
        ],
        report_sections: vec![],
        queries: &[],
        model_family: None,
    }
}

/// The `TokenUsage` fields of `info.<which>_token_usage`, as columns `<which>_<field>`: every
/// figure Codex always writes is required where the usage is (missing or null is damage, so that
/// a count whose figures cannot all be read is no evidence of a call), and the cache writes,
/// written from 0.145 on, are 0 when absent.
fn usage(which: &'static str) -> Vec<super::FieldSpec> {
    let figure = |key: &'static str, name: &'static str, absent: Absent, about: &'static str| {
        super::FieldSpec { absent, ..named(key, name, Count, about) }
    };
    let required = Absent::Required;
    match which {
        "total" => vec![
            figure(
                "info.total_token_usage.input_tokens",
                "total_input_tokens",
                required,
                "prompt tokens, cached included",
            ),
            figure(
                "info.total_token_usage.cached_input_tokens",
                "total_cached_input_tokens",
                required,
                "prompt tokens read from the cache",
            ),
            figure(
                "info.total_token_usage.cache_write_input_tokens",
                "total_cache_write_input_tokens",
                Absent::Int(0),
                "prompt tokens written to the cache (Codex 0.145 and later; 0 when absent)",
            ),
            figure(
                "info.total_token_usage.output_tokens",
                "total_output_tokens",
                required,
                "generated tokens, reasoning included",
            ),
            figure(
                "info.total_token_usage.reasoning_output_tokens",
                "total_reasoning_output_tokens",
                required,
                "reasoning tokens (part of output)",
            ),
            figure("info.total_token_usage.total_tokens", "total_tokens", required, "input + output"),
        ],
        _ => vec![
            figure(
                "info.last_token_usage.input_tokens",
                "last_input_tokens",
                required,
                "prompt tokens, cached included",
            ),
            figure(
                "info.last_token_usage.cached_input_tokens",
                "last_cached_input_tokens",
                required,
                "prompt tokens read from the cache",
            ),
            figure(
                "info.last_token_usage.cache_write_input_tokens",
                "last_cache_write_input_tokens",
                Absent::Int(0),
                "prompt tokens written to the cache (Codex 0.145 and later; 0 when absent)",
            ),
            figure(
                "info.last_token_usage.output_tokens",
                "last_output_tokens",
                required,
                "generated tokens, reasoning included",
            ),
            figure(
                "info.last_token_usage.reasoning_output_tokens",
                "last_reasoning_output_tokens",
                required,
                "reasoning tokens (part of output)",
            ),
            figure("info.last_token_usage.total_tokens", "last_total_tokens", required, "input + output"),
        ],
    }
}

fn events() -> Vec<EventSpec> {
    let mut token_count = vec![
        field("info", Json, "the counts, as JSON text; null on a count of rate limits only"),
        super::FieldSpec {
            absent: Absent::Required,
            ..named(
                "info.total_token_usage",
                "total_token_usage",
                Json,
                "the running totals, as JSON text; required where `info` is",
            )
        },
        named(
            "info.last_token_usage",
            "last_token_usage",
            Json,
            "the latest response's usage, as JSON text; absent where a line has totals only",
        ),
    ];
    token_count.extend(usage("total"));
    token_count.extend(usage("last"));
    token_count.push(named("info.model_context_window", "model_context_window", Int, "the context window"));
    token_count.push(field("rate_limits", Json, "the plan's rate-limit windows and credits, as JSON text"));
    vec![
        event(
            "session_meta",
            "the thread's start: its id, where and by what it runs (a child's file replays its \
             parent's too)",
            vec![
                field("id", Str, "the thread id"),
                named("timestamp", "started_at", Timestamp, "when the thread started (UTC)"),
                field("cwd", Str, "the working directory"),
                field("originator", Str, "what started it: codex_cli_rs, codex_vscode, ..."),
                field("cli_version", Str, "the Codex version"),
                field("source", Json, "cli, vscode, exec, mcp, or {\"subagent\": ...}, as JSON text"),
                field("model_provider", Str, "the provider: openai, ..."),
                field("forked_from_id", Str, "the thread this one was forked from"),
                named(
                    "source.subagent.thread_spawn.parent_thread_id",
                    "parent_thread_id",
                    Str,
                    "the thread that spawned this one",
                ),
                named("source.subagent.thread_spawn.depth", "spawn_depth", Int, "how deep in the spawn tree"),
                field("agent_nickname", Str, "a spawned agent's name"),
                field("agent_role", Str, "a spawned agent's role"),
                named("git.commit_hash", "git_commit", Str, "the commit checked out"),
                named("git.branch", "git_branch", Str, "the branch checked out"),
                named("git.repository_url", "git_repository_url", Str, "the repository's remote"),
                field("memory_mode", Str, "the memory mode"),
            ],
        ),
        event(
            "turn_context",
            "a turn's settings; a new one may switch the model",
            vec![
                field("turn_id", Str, "the turn's id"),
                field("cwd", Str, "the working directory"),
                field("approval_policy", Str, "when Codex asks before acting"),
                field("sandbox_policy", Json, "the sandbox, as JSON text"),
                field("model", Str, "the model of the turn"),
                field("effort", Str, "the reasoning effort"),
                field("summary", Str, "the reasoning summary setting"),
            ],
        ),
        event(
            "response_item.message",
            "a message of the conversation: a prompt (role user; also Codex's injected context), \
             an answer (assistant), or instructions (developer)",
            vec![
                field("role", Str, "user, assistant or developer"),
                field("content", Json, "the parts (input_text, output_text, input_image), as JSON text"),
            ],
        ),
        event(
            "response_item.reasoning",
            "the model's reasoning: a summary, the rest encrypted",
            vec![
                field("summary", Json, "the summary parts, as JSON text"),
                field("content", Json, "the reasoning text where written, as JSON text"),
                field("encrypted_content", Str, "the reasoning, encrypted"),
            ],
        ),
        event(
            "response_item.function_call",
            "a tool call (exec_command, update_plan, spawn_agent, ...)",
            vec![
                field("name", Str, "the tool"),
                field("arguments", Str, "its arguments: JSON, as a string"),
                field("call_id", Str, "the call's id"),
            ],
        ),
        event(
            "response_item.function_call_output",
            "what a tool call returned",
            vec![
                field("call_id", Str, "the call it answers"),
                field(
                    "output",
                    Json,
                    "the output, as JSON text: a string (for a command: `Process exited with code N` \
                     among its header lines), or parts for an image",
                ),
            ],
        ),
        event(
            "response_item.custom_tool_call",
            "a call of a free-form tool (apply_patch)",
            vec![
                field("status", Str, "completed, ..."),
                field("call_id", Str, "the call's id"),
                field("name", Str, "the tool"),
                field("input", Str, "its input (a patch)"),
            ],
        ),
        event(
            "response_item.custom_tool_call_output",
            "what a free-form tool call returned",
            vec![
                field("call_id", Str, "the call it answers"),
                field("output", Json, "the output, as JSON text"),
            ],
        ),
        event(
            "response_item.local_shell_call",
            "a shell command the model ran by the local shell tool",
            vec![
                field("call_id", Str, "the call's id"),
                field("status", Str, "its status"),
                field("action", Json, "the command, as JSON text"),
            ],
        ),
        event(
            "response_item.web_search_call",
            "a web search",
            vec![field("status", Str, "its status"), field("action", Json, "the search, as JSON text")],
        ),
        event(
            "event_msg.token_count",
            "the thread's token counts after a response: cumulative totals and the latest call's; \
             re-emitted with unchanged totals when only the rate limits are refreshed (not a call)",
            token_count,
        ),
        event(
            "event_msg.user_message",
            "a prompt as the person typed it (not written by Codex 0.148 and later)",
            vec![field("message", Str, "the prompt"), field("images", Json, "attached images, as JSON text")],
        ),
        event("event_msg.agent_message", "an answer as shown", vec![field("message", Str, "the answer")]),
        event("event_msg.agent_reasoning", "reasoning as shown", vec![field("text", Str, "the reasoning")]),
        event(
            "event_msg.task_started",
            "a turn began",
            vec![field("model_context_window", Int, "the context window")],
        ),
        event(
            "event_msg.task_complete",
            "a turn ended",
            vec![field("last_agent_message", Str, "the turn's last answer")],
        ),
        event("event_msg.turn_aborted", "a turn was stopped", vec![field("reason", Str, "why")]),
        event(
            "event_msg.mcp_tool_call_end",
            "an MCP tool call ended: the server and tool it ran",
            vec![
                field("call_id", Str, "the call it answers"),
                named("invocation.server", "server", Str, "the MCP server"),
                named("invocation.tool", "tool", Str, "the tool, as the server names it"),
                field("duration", Json, "how long it ran ({\"secs\", \"nanos\"}), as JSON text"),
                field("result", Json, "its result ({\"Ok\": ...} or {\"Err\": ...}), as JSON text"),
            ],
        ),
        event("event_msg.thread_rolled_back", "turns were undone", vec![field("num_turns", Int, "how many")]),
        event(
            "event_msg.patch_apply_end",
            "a patch was applied",
            vec![
                field("call_id", Str, "the call it answers"),
                field("success", Bool, "whether it applied"),
                field("stdout", Str, "what it printed"),
                field("stderr", Str, "its errors"),
            ],
        ),
        event(
            "event_msg.exec_command_end",
            "a command ended (written in extended mode)",
            vec![
                field("call_id", Str, "the call it answers"),
                field("command", Json, "the command's words, as JSON text"),
                field("exit_code", Int, "its exit code"),
                field("duration", Json, "how long it ran ({\"secs\", \"nanos\"}), as JSON text"),
                field("aggregated_output", Str, "its output (up to 10 kB)"),
            ],
        ),
        event(
            "compacted",
            "the conversation was compacted",
            vec![
                field("message", Str, "the summary"),
                field("replacement_history", Json, "the history that replaces it, as JSON text"),
            ],
        ),
    ]
}

/// A unit per rollout. Codex never writes that a thread ended: a rollout is taken as settled, and
/// one that changed since it was exported is written again whole.
const EXPORT_UNITS: &str = "select f.file, f.file as id, coalesce(s.thread_id, f.file) as run_id, \
    false as open, cast(cast(s.started_at as date) as varchar) as day \
    from codex.files f left join (select file, min(thread_id) as thread_id, min(timestamp) as started_at \
      from codex.events group by file) s on s.file = f.file where f.transcript";

/// Each rollout's thread: its first session_meta, and the thread it was forked from or spawned
/// by (a query's `threads`).
macro_rules! threads {
    () => {
        "threads AS (
  SELECT file, id AS session_id, coalesce(forked_from_id, parent_thread_id) AS parent_session_id,
         cwd, model_provider
  FROM (SELECT *, row_number() OVER (PARTITION BY file ORDER BY line) AS nth FROM codex.session_meta)
  WHERE nth = 1 AND id IS NOT NULL
)"
    };
}

/// The calls: each token_count with info whose totals moved from the previous one of the file
/// (a re-emitted count is not a call; totals that drop start a new baseline), unless a parent
/// thread has a count with the same totals (a child's replay of its parent's history: found
/// among the counts that moved, which hold every thread's every totals, by a window over equal
/// totals, so that the counts are read once). A count whose totals cannot all be read (a figure
/// missing, null, of the wrong type or out of range: listed in `errors`) is no evidence of a
/// call, and the count before it stays the baseline.
/// Figures from last_token_usage where all of its figures can be read, else the totals less the
/// baseline; the model of the latest turn_context, else of the latest count that names one.
const CALLS: &str = concat!(
    "WITH ",
    threads!(),
    ", counts AS (
  SELECT file, line, timestamp, coalesce(turn_model, count_model) AS turn_model,
         starts_with(last_token_usage, '{') AND last_input_tokens IS NOT NULL
           AND last_cached_input_tokens IS NOT NULL AND last_cache_write_input_tokens IS NOT NULL
           AND last_output_tokens IS NOT NULL AND last_reasoning_output_tokens IS NOT NULL
           AND last_total_tokens IS NOT NULL AS has_last,
         total_input_tokens AS t_in, total_cached_input_tokens AS t_cached,
         total_cache_write_input_tokens AS t_write, total_output_tokens AS t_out,
         total_reasoning_output_tokens AS t_reasoning, total_tokens AS t_total,
         last_input_tokens AS l_in, last_cached_input_tokens AS l_cached,
         last_cache_write_input_tokens AS l_write, last_output_tokens AS l_out,
         last_reasoning_output_tokens AS l_reasoning
  FROM codex.token_count
  WHERE info IS NOT NULL AND total_input_tokens IS NOT NULL AND total_cached_input_tokens IS NOT NULL
    AND total_cache_write_input_tokens IS NOT NULL AND total_output_tokens IS NOT NULL
    AND total_reasoning_output_tokens IS NOT NULL AND total_tokens IS NOT NULL
), steps AS (
  SELECT c.*, t.session_id, t.parent_session_id, t.model_provider,
         lag(t_in) OVER w AS p_in, lag(t_cached) OVER w AS p_cached, lag(t_write) OVER w AS p_write,
         lag(t_out) OVER w AS p_out, lag(t_reasoning) OVER w AS p_reasoning, lag(t_total) OVER w AS p_total
  FROM counts c JOIN threads t ON t.file = c.file
  WINDOW w AS (PARTITION BY c.file ORDER BY c.line)
), moved AS (
  SELECT *,
         p_in IS NOT NULL AND (t_in < p_in OR t_cached < p_cached OR t_write < p_write OR t_out < p_out
                               OR t_reasoning < p_reasoning OR t_total < p_total) AS dropped
  FROM steps
  WHERE p_in IS NULL OR t_in <> p_in OR t_cached <> p_cached OR t_write <> p_write OR t_out <> p_out
        OR t_reasoning <> p_reasoning OR t_total <> p_total
), marked AS (
  SELECT *, array_has(array_agg(session_id) OVER (PARTITION BY t_in, t_cached, t_write, t_out, t_reasoning, t_total),
                      parent_session_id) AS replayed
  FROM moved
)
SELECT 'codex' AS harness, m.session_id, m.parent_session_id, m.timestamp AS ts,
       coalesce(m.model_provider, 'openai') AS provider, m.turn_model AS model,
       CASE WHEN m.has_last THEN m.l_in
            WHEN m.dropped OR m.p_in IS NULL THEN m.t_in ELSE m.t_in - m.p_in END AS input_tokens,
       CASE WHEN m.has_last THEN m.l_cached
            WHEN m.dropped OR m.p_in IS NULL THEN m.t_cached ELSE m.t_cached - m.p_cached END AS cache_read_tokens,
       CASE WHEN m.has_last THEN m.l_write
            WHEN m.dropped OR m.p_in IS NULL THEN m.t_write ELSE m.t_write - m.p_write END AS cache_write_tokens,
       CASE WHEN m.has_last THEN m.l_out
            WHEN m.dropped OR m.p_in IS NULL THEN m.t_out ELSE m.t_out - m.p_out END AS output_tokens,
       CASE WHEN m.has_last THEN m.l_reasoning
            WHEN m.dropped OR m.p_in IS NULL THEN m.t_reasoning ELSE m.t_reasoning - m.p_reasoning END
         AS reasoning_tokens,
       CAST(NULL AS VARCHAR) AS service_tier, m.file, m.line
FROM marked m
WHERE NOT coalesce(m.replayed, false)"
);

/// The tool calls: each function_call of a rollout whose call_id its parent thread has not (a
/// child's replay, found by a window over equal call_ids: the calls are read once), joined to
/// the first output of that call_id in the same file: not ok when it says `Process exited with
/// code N` with N ≠ 0, its text the error then; its result's bytes those of the output (its
/// text, or its parts as JSON text). Its MCP server the `invocation.server` of the first
/// `mcp_tool_call_end` of its call_id in the file, else the <server> of a name
/// mcp__<server>__<tool>. The response that asked for it: the first token_count with info after
/// it in the file, before the next `task_started` (Codex writes a response's items, then its
/// count); a call of `CALLS` unless that count is a re-emit or a replay.
const TOOL_CALLS: &str = concat!(
    "WITH ",
    threads!(),
    ", uses AS (
  SELECT t.session_id, t.parent_session_id, c.file, c.line, c.timestamp, c.name, c.call_id
  FROM codex.function_call c JOIN threads t ON t.file = c.file
  WHERE c.call_id IS NOT NULL
), outputs AS (
  SELECT file, call_id, json_as_text(output) AS text,
         CAST((regexp_match(json_as_text(output), 'Process exited with code (-?[0-9]+)'))[1] AS BIGINT) AS exit_code,
         row_number() OVER (PARTITION BY file, call_id ORDER BY line) AS nth
  FROM codex.function_call_output
), servers AS (
  SELECT file, call_id, first_value(server ORDER BY line) AS server
  FROM codex.mcp_tool_call_end WHERE call_id IS NOT NULL AND server IS NOT NULL
  GROUP BY file, call_id
), marks AS (
  SELECT file, line, 'use' AS kind FROM codex.function_call
  UNION ALL SELECT file, line, 'count' AS kind FROM codex.token_count WHERE info IS NOT NULL
  UNION ALL SELECT file, line, 'turn' AS kind FROM codex.task_started
), answered AS (
  SELECT file, line,
         min(CASE WHEN kind = 'count' THEN line END) OVER after AS count_line,
         min(CASE WHEN kind = 'turn' THEN line END) OVER after AS turn_line
  FROM marks
  WINDOW after AS (PARTITION BY file ORDER BY line ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
), responses AS (
  SELECT file, line,
         CASE WHEN turn_line IS NULL OR count_line < turn_line THEN count_line END AS response_line
  FROM answered
)
SELECT 'codex' AS harness, u.session_id, u.timestamp AS ts, u.name AS tool, u.call_id,
       coalesce(o.exit_code, 0) = 0 AS ok,
       CASE WHEN coalesce(o.exit_code, 0) <> 0 THEN o.text END AS error,
       CAST(NULL AS BIGINT) AS duration_ms,
       CASE WHEN o.call_id IS NOT NULL THEN CAST(coalesce(octet_length(o.text), 0) AS BIGINT) END AS result_bytes,
       coalesce(s.server, (regexp_match(u.name, '^mcp__(.+?)__.'))[1]) AS mcp_server, u.parent_session_id,
       CASE WHEN p.response_line IS NOT NULL THEN u.file END AS response_file, p.response_line, u.file
FROM (SELECT *, array_has(array_agg(session_id) OVER (PARTITION BY call_id), parent_session_id) AS replayed
      FROM uses) u
LEFT JOIN outputs o ON o.file = u.file AND o.call_id = u.call_id AND o.nth = 1
LEFT JOIN servers s ON s.file = u.file AND s.call_id = u.call_id
LEFT JOIN responses p ON p.file = u.file AND p.line = u.line
WHERE NOT coalesce(u.replayed, false)"
);

/// The rate limits: a row per window (`primary`, `secondary`) of each token_count whose
/// `rate_limits` has that window as an object (null limits or a window missing: no row), its
/// figures NULL where malformed (a percent not a number, a reset not whole unix seconds of years
/// 1970 to 9999). A child's row equal to a row of its parent thread in its window, figures, plan
/// and the count's totals (null with the totals) is the parent's observation replayed (a child
/// begins by replaying its parent's lines, re-stamped or not): kept once, as the parent's.
const RATE_LIMITS: &str = concat!(
    "WITH ",
    threads!(),
    ", windows AS (
  SELECT c.file, c.line, c.timestamp, t.session_id, t.parent_session_id,
         json_get_str(c.rate_limits, 'plan_type') AS plan,
         concat_ws(',', c.total_input_tokens, c.total_cached_input_tokens, c.total_cache_write_input_tokens,
                   c.total_output_tokens, c.total_reasoning_output_tokens, c.total_tokens) AS totals,
         w.name AS \"window\", json_get_json(c.rate_limits, w.name) AS limits
  FROM codex.token_count c JOIN threads t ON t.file = c.file
  CROSS JOIN (VALUES ('primary'), ('secondary')) AS w(name)
  WHERE c.rate_limits IS NOT NULL
), rows AS (
  SELECT file, line, timestamp, session_id, parent_session_id, plan, totals, \"window\",
         json_get_int(limits, 'window_minutes') AS window_minutes,
         json_get_float(limits, 'used_percent') AS used_percent,
         json_get_int(limits, 'resets_at') AS resets_at
  FROM windows
  WHERE starts_with(ltrim(limits), '{')
), marked AS (
  SELECT *, array_has(array_agg(session_id) OVER (
           PARTITION BY \"window\", window_minutes, used_percent, resets_at, plan, totals), parent_session_id)
         AS replayed
  FROM rows
)
SELECT 'codex' AS harness, session_id, timestamp AS ts, \"window\", window_minutes, used_percent,
       to_timestamp_seconds(CASE WHEN resets_at BETWEEN 0 AND 253402300799 THEN resets_at END) AS resets_at,
       plan, file, line
FROM marked
WHERE NOT coalesce(replayed, false)"
);

/// A session per rollout's thread, with its parent; its times those of its lines.
const SESSIONS: &str = concat!(
    "WITH ",
    threads!(),
    "
SELECT 'codex' AS harness, t.session_id,
       regexp_replace(t.file, '^(.*/sessions/|.*/)?(.*?)\\.jsonl(\\.zst)?$', '\\2') AS file_session_id,
       t.parent_session_id,
       min(e.timestamp) AS started_at, max(e.timestamp) AS ended_at, t.cwd, g.git_branch, g.git_commit, t.file
FROM threads t JOIN codex.events e ON e.file = t.file AND e.thread_id IS NOT NULL
LEFT JOIN (SELECT file, nullif(git_branch, '') AS git_branch, nullif(git_commit, '') AS git_commit
           FROM (SELECT *, row_number() OVER (PARTITION BY file ORDER BY line) AS nth FROM codex.session_meta)
           WHERE nth = 1) g ON g.file = t.file
GROUP BY t.session_id, t.parent_session_id, t.cwd, g.git_branch, g.git_commit, t.file"
);

#[cfg(test)]
mod tests {
    #[test]
    fn the_patterns_claim_rollouts_in_both_trees_and_nothing_else() {
        let formats = vec![super::format()];
        let claimer = |path: &std::path::Path| crate::source::discover::claim(&formats, path).is_some();
        for (path, claimed) in [
            ("/h/.codex/sessions/2026/09/03/rollout-2026-09-03T06-02-11-0199a3c4.jsonl", true),
            ("/h/.codex/sessions/2026/09/03/rollout-2026-09-03T06-02-11-0199a3c4.jsonl.zst", true),
            ("/h/.codex/archived_sessions/rollout-2026-09-03T06-02-11-0199a3c4.jsonl", true),
            ("/h/.codex/archived_sessions/rollout-x.jsonl.zst", true),
            ("/h/.codex/history.jsonl", false),
            ("/h/.codex/session_index.jsonl", false),
            ("/h/.codex/sessions/2026/09/03/notes.jsonl", false),
        ] {
            assert_eq!(claimer(std::path::Path::new(path)), claimed, "{path}");
        }
    }
}
