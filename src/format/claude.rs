//! Claude Code sessions, as data: `<home>/projects/<encoded-cwd>/<sessionId>.jsonl` files of flat
//! `{"parentUuid", "sessionId", "type", "message", "timestamp", ...}` lines (the type key among
//! the others), subagents in `<sessionId>/subagents/agent-<agentId>.jsonl`; and their rows of
//! the normalized `calls`, `tool_calls` and `sessions`.

use super::build::{event, field, flag, named};
use super::{
    ContextColumn, ContextSource, Contribution, Envelope, EventSpec, ExportUnits, FieldsAt, FileMatch,
    Format, Kind, LookedFor, ModelFamily, Naming, Normalized, TypeRule, View,
};
use Kind::{Count, Int, Json, Str, Timestamp};

/// The Claude Code format.
pub fn format() -> Format {
    Format {
        id: "claude",
        name: "claude",
        about: "Claude Code sessions: <claude-home>/projects/<encoded-cwd>/<sessionId>.jsonl, their \
                subagents in <sessionId>/subagents/agent-<agentId>.jsonl (or, from older builds, \
                agent-<agentId>.jsonl beside them); the home is $CLAUDE_CONFIG_DIR, else ~/.claude, \
                and ~/.config/claude",
        default_roots: &[
            &["$CLAUDE_CONFIG_DIR/projects", "~/.claude/projects"],
            &["~/.config/claude/projects"],
        ],
        files: FileMatch::Patterns(&["projects/*/*.jsonl", "projects/*/*/subagents/*.jsonl"]),
        looked_for: Some(LookedFor { transcripts: "Claude Code sessions", files: "projects/*/*.jsonl" }),
        beside: None,
        copies: None,
        envelope: Envelope { types: TypeRule::Key("type"), fields: FieldsAt::Beside },
        times: &["timestamp"],
        table_naming: Naming::DashToUnderscore,
        column_naming: Naming::SnakeCase,
        required_type: None,
        not_transcripts: &[],
        project_folder: Some(project_folder),
        context: vec![
            ContextColumn {
                name: "project",
                source: ContextSource::Below("projects"),
                about: "the project folder: the session's cwd with every character outside \
                        [A-Za-z0-9] made a -, lossy (read cwd for the directory)",
            },
            ContextColumn {
                name: "file_session_id",
                source: ContextSource::FileStem,
                about: "the file name without .jsonl: the session id for a main file (a resumed \
                        session's may differ from the sessionId of its lines), agent-<agentId> for \
                        a subagent's",
            },
            ContextColumn {
                name: "subagent",
                source: ContextSource::UnderDirectory("subagents"),
                about: "true for a subagent's file (under <sessionId>/subagents/)",
            },
            ContextColumn {
                name: "line",
                source: ContextSource::LineNumber,
                about: "1-based line number in the file",
            },
            ContextColumn {
                name: "file",
                source: ContextSource::FilePath,
                about: "path of the session file",
            },
        ],
        common_fields: vec![
            field("uuid", Str, "the line's id"),
            field("parentUuid", Str, "the line it follows; null at a root (compaction starts a new one)"),
            flag("isSidechain", "the line is a side branch (a subagent's, or a /btw question's)"),
            field("sessionId", Str, "the session the line belongs to"),
            field("agentId", Str, "the subagent that wrote the line; null in the main session"),
            field("timestamp", Timestamp, "when the line was written (UTC); null on summary lines"),
            field("cwd", Str, "the working directory"),
            field("gitBranch", Str, "the git branch checked out"),
            field("version", Str, "the Claude Code version that wrote the line"),
            field("userType", Str, "external for a person's session"),
        ],
        events: events(),
        views: vec![content_blocks_view()],
        lines_table: None,
        export: ExportUnits::Rows { sql: EXPORT_UNITS, noun: "session" },
        normalized: vec![
            Contribution { table: Normalized::Calls, sql: CALLS },
            Contribution { table: Normalized::ToolCalls, sql: TOOL_CALLS },
            Contribution { table: Normalized::Sessions, sql: SESSIONS },
        ],
        report_sections: vec![],
        queries: &[],
        model_family: Some(ModelFamily { name: "claude", provider: "anthropic" }),
    }
}

fn events() -> Vec<EventSpec> {
    vec![
        event(
            "assistant",
            "one content block of a model response (a response of several blocks is several lines \
             sharing message.id, each repeating its usage: only output_tokens grows)",
            vec![
                field("requestId", Str, "the API request; absent behind gateways and on some subagent paths"),
                flag("isApiErrorMessage", "an error Claude Code wrote as a response (model <synthetic>)"),
                named("message.id", "message_id", Str, "the API response's id (msg_...)"),
                named("message.model", "model", Str, "the model that answered; <synthetic> for an error row"),
                named(
                    "message.stop_reason",
                    "stop_reason",
                    Str,
                    "why the response ended; null in a partial snapshot",
                ),
                named(
                    "message.usage.input_tokens",
                    "input_tokens",
                    Count,
                    "prompt tokens not read from or written to the cache",
                ),
                named(
                    "message.usage.cache_creation_input_tokens",
                    "cache_creation_input_tokens",
                    Count,
                    "prompt tokens written to the cache",
                ),
                named(
                    "message.usage.cache_read_input_tokens",
                    "cache_read_input_tokens",
                    Count,
                    "prompt tokens read from the cache",
                ),
                named(
                    "message.usage.output_tokens",
                    "output_tokens",
                    Count,
                    "tokens generated (thinking included) so far",
                ),
                named("message.usage.service_tier", "service_tier", Str, "standard, priority or batch"),
                named("message.usage.speed", "speed", Str, "standard or fast (fast mode)"),
                named(
                    "message.content",
                    "content",
                    Json,
                    "the content blocks (text, thinking, tool_use), as JSON text",
                ),
            ],
        ),
        event(
            "user",
            "a prompt, or the results of tool calls",
            vec![
                named(
                    "message.content",
                    "content",
                    Json,
                    "a prompt's text, or content blocks (tool_result, text, image), as JSON text",
                ),
                field(
                    "toolUseResult",
                    Json,
                    "what the tool returned, tool by tool (Bash: stdout, stderr; Glob: durationMs ...)",
                ),
                field("sourceToolUseID", Str, "the tool_use block this result answers"),
                field("promptId", Str, "the prompt's id"),
                flag("isCompactSummary", "the summary a compaction left"),
                flag("isMeta", "a line Claude Code wrote, not the person"),
            ],
        ),
        event(
            "system",
            "a note of Claude Code's: a compaction boundary, an API error, a turn's duration, ...",
            vec![
                field("subtype", Str, "compact_boundary, api_error, turn_duration, local_command, ..."),
                field("content", Str, "what it says"),
                field("level", Str, "info, warning, error"),
                field("compactMetadata", Json, "a compaction's trigger and token counts, as JSON text"),
                field("logicalParentUuid", Str, "the line a compaction boundary follows logically"),
                field("durationMs", Int, "a turn's duration"),
            ],
        ),
        event(
            "summary",
            "a session's title, written after a compaction (no timestamp, no session)",
            vec![
                field("summary", Str, "the summary"),
                field("leafUuid", Str, "the line it summarizes up to"),
            ],
        ),
        event(
            "progress",
            "a subagent's streamed progress; its nested usage is not a call of the session's",
            vec![
                field("data", Json, "the progress, as JSON text"),
                field("toolUseID", Str, "the tool call it belongs to"),
            ],
        ),
        EventSpec {
            type_name: "file-history-snapshot",
            about: "the files Claude Code backed up before a message",
            fields_path: &[],
            fields: vec![
                field("messageId", Str, "the message the snapshot belongs to"),
                field("snapshot", Json, "the backups, as JSON text"),
                flag("isSnapshotUpdate", "an update of an earlier snapshot"),
            ],
        },
    ]
}

/// The content blocks of every assistant and user line, one row each.
fn content_blocks_view() -> View {
    View {
        name: "content_blocks",
        about: "one row per content block of an assistant or user line (a prompt written as plain text \
                is no block): text, thinking, tool_use, tool_result, image, ... A response written as \
                several lines repeats its earlier blocks in none of them: each line holds its own",
        sql: "\
SELECT 'assistant' AS role, session_id, agent_id, is_sidechain, uuid, message_id, timestamp,
       json_get_str(block, 'type') AS block_type, json_get_str(block, 'text') AS text,
       json_get_str(block, 'thinking') AS thinking, json_get_str(block, 'id') AS tool_use_id,
       json_get_str(block, 'name') AS tool, json_get_json(block, 'input') AS input,
       CAST(NULL AS BOOLEAN) AS is_error, block, file, line
FROM (SELECT *, unnest(json_get_array(content)) AS block FROM assistant)
UNION ALL
SELECT 'user' AS role, session_id, agent_id, is_sidechain, uuid, CAST(NULL AS VARCHAR) AS message_id, timestamp,
       json_get_str(block, 'type') AS block_type,
       coalesce(json_get_str(block, 'text'), json_get_str(block, 'content'), json_get_json(block, 'content')) AS text,
       CAST(NULL AS VARCHAR) AS thinking, json_get_str(block, 'tool_use_id') AS tool_use_id,
       CAST(NULL AS VARCHAR) AS tool, CAST(NULL AS VARCHAR) AS input,
       json_get_bool(block, 'is_error') AS is_error, block, file, line
FROM (SELECT *, unnest(json_get_array(content)) AS block FROM user)",
        columns: &[
            ("role", "assistant or user: the line's type"),
            ("session_id", "the line's sessionId"),
            ("agent_id", "the subagent that wrote it; null in the main session"),
            ("is_sidechain", "the line is a side branch"),
            ("uuid", "the line's id"),
            ("message_id", "the response's id (assistant)"),
            ("timestamp", "when the line was written"),
            ("block_type", "text, thinking, tool_use, tool_result, image, ..."),
            ("text", "a text block's text, or a tool_result's content (text, or its blocks as JSON text)"),
            ("thinking", "a thinking block's text"),
            ("tool_use_id", "a tool_use's id, or the tool_use a tool_result answers"),
            ("tool", "a tool_use's tool"),
            ("input", "a tool_use's input, as JSON text"),
            ("is_error", "a tool_result's is_error"),
            ("block", "the whole block, as JSON text"),
            ("file", "the session file"),
            ("line", "the line"),
        ],
    }
}

/// A unit per session file. Claude Code never writes that a session ended: a file is taken as
/// settled, and one that changed since it was exported is written again whole.
const EXPORT_UNITS: &str = "select f.file, f.file as id, coalesce(s.session_id, f.file_session_id) as run_id, \
    false as open, cast(cast(s.started_at as date) as varchar) as day \
    from claude.files f left join (select file, min(session_id) as session_id, min(timestamp) as started_at \
      from claude.events group by file) s on s.file = f.file where f.transcript";

/// The copies of each response (one per line's sessionId and message.id, among assistant lines
/// of a real model), numbered: `nth = 1` is the copy whose figures count, the one with the most
/// output (the copies repeat the usage; only the output grows), on a tie the one that is not a
/// sidechain, then the main file's, then the first. `CALLS` keeps it, and `TOOL_CALLS` names it
/// as the response that asked for a tool call.
macro_rules! chosen_copy {
    () => {
        "         row_number() OVER (
           PARTITION BY session_id, message_id
           ORDER BY coalesce(output_tokens, 0) DESC, is_sidechain, agent_id IS NOT NULL, file, line
         ) AS nth
  FROM claude.assistant
  WHERE message_id IS NOT NULL AND session_id IS NOT NULL
    AND model IS NOT NULL AND model <> '<synthetic>'
"
    };
}

/// The calls: one per (line's sessionId, message.id) among assistant lines of a real model, its
/// figures those of the copy with the most output (the copies of one response repeat its usage;
/// only the output grows), on a tie the copy that is not a sidechain, then the main file's, then
/// the first. A subagent's call is in the subagent's session (its agentId).
const CALLS: &str = concat!(
    "\
WITH copies AS (
  SELECT session_id, agent_id, message_id, model, timestamp, file, line,
         CASE WHEN speed = 'fast' THEN 'fast' ELSE service_tier END AS tier,
         coalesce(input_tokens, 0) AS fresh,
         coalesce(cache_creation_input_tokens, 0) AS cache_write,
         coalesce(cache_read_input_tokens, 0) AS cache_read,
         coalesce(output_tokens, 0) AS output,
",
    chosen_copy!(),
    ")
SELECT 'claude' AS harness,
       coalesce(agent_id, session_id) AS session_id,
       CASE WHEN agent_id IS NOT NULL THEN session_id END AS parent_session_id,
       timestamp AS ts, 'anthropic' AS provider, model,
       fresh + cache_write + cache_read AS input_tokens,
       cache_read AS cache_read_tokens, cache_write AS cache_write_tokens,
       output AS output_tokens, CAST(NULL AS BIGINT) AS reasoning_tokens, tier AS service_tier, file, line
FROM copies WHERE nth = 1"
);

/// The tool calls: each tool_use block once per (line's sessionId, block id), the copy of a line
/// that is not a sidechain first, joined to its tool_result (the same preference): ok unless
/// is_error is true, the result's text its error then, its duration toolUseResult.durationMs;
/// its result's bytes those of the tool_result's content (its text, or its blocks as JSON text);
/// its MCP server the <server> of a tool named mcp__<server>__<tool>. The response that asked for
/// it: the call (`CALLS`'s chosen copy, by the same choice) of its line's message.id.
const TOOL_CALLS: &str = concat!(
    "\
WITH uses AS (
  SELECT session_id, agent_id, message_id, timestamp, is_sidechain, file, line,
         json_get_str(block, 'id') AS call_id, json_get_str(block, 'name') AS tool
  FROM (SELECT session_id, agent_id, message_id, timestamp, is_sidechain, file, line,
               unnest(json_get_array(content)) AS block
        FROM claude.assistant)
  WHERE json_get_str(block, 'type') = 'tool_use'
), chosen_uses AS (
  SELECT *, row_number() OVER (PARTITION BY session_id, call_id ORDER BY is_sidechain, file, line) AS nth
  FROM uses
), responses AS (
  SELECT session_id, message_id, file, line,
",
    chosen_copy!(),
    "), results AS (
  SELECT session_id, is_sidechain, file, line,
         json_get_str(block, 'tool_use_id') AS call_id,
         coalesce(json_get_bool(block, 'is_error'), false) AS failed,
         coalesce(json_get_str(block, 'content'), json_get_json(block, 'content')) AS text,
         json_get_int(tool_use_result, 'durationMs') AS duration_ms
  FROM (SELECT session_id, is_sidechain, file, line, tool_use_result,
               unnest(json_get_array(content)) AS block
        FROM claude.user)
  WHERE json_get_str(block, 'type') = 'tool_result'
), chosen_results AS (
  SELECT *, row_number() OVER (PARTITION BY session_id, call_id ORDER BY is_sidechain, file, line) AS nth
  FROM results
)
SELECT 'claude' AS harness, coalesce(u.agent_id, u.session_id) AS session_id, u.timestamp AS ts,
       u.tool, u.call_id, NOT coalesce(r.failed, false) AS ok,
       CASE WHEN r.failed THEN r.text END AS error, r.duration_ms,
       CASE WHEN r.call_id IS NOT NULL THEN CAST(coalesce(octet_length(r.text), 0) AS BIGINT) END AS result_bytes,
       (regexp_match(u.tool, '^mcp__(.+?)__.'))[1] AS mcp_server,
       CASE WHEN u.agent_id IS NOT NULL THEN u.session_id END AS parent_session_id,
       p.file AS response_file, p.line AS response_line, u.file
FROM chosen_uses u
LEFT JOIN chosen_results r ON r.session_id = u.session_id AND r.call_id = u.call_id AND r.nth = 1
LEFT JOIN responses p ON p.session_id = u.session_id AND p.message_id = u.message_id AND p.nth = 1
WHERE u.nth = 1"
);

/// The folder Claude Code keeps a project's sessions in, under `projects/`: its working directory
/// with every character outside `[A-Za-z0-9]` made a `-` (`/home/me/app` is `-home-me-app`).
fn project_folder(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// A session per main file's sessionId, and per subagent (its agentId, under its parent); as its
/// file names it, the file's stem (a resumed session's file may name it otherwise than its lines).
const SESSIONS: &str = "\
SELECT 'claude' AS harness, coalesce(agent_id, session_id) AS session_id,
       first_value(file_session_id ORDER BY file, line) AS file_session_id,
       CASE WHEN agent_id IS NOT NULL THEN session_id END AS parent_session_id,
       min(timestamp) AS started_at, max(timestamp) AS ended_at,
       first_value(cwd ORDER BY cwd IS NULL, file, line) AS cwd,
       first_value(nullif(git_branch, '') ORDER BY nullif(git_branch, '') IS NULL, file, line) AS git_branch,
       CAST(NULL AS VARCHAR) AS git_commit, min(file) AS file
FROM claude.events
WHERE session_id IS NOT NULL
GROUP BY 1, 2, 4";

#[cfg(test)]
mod tests {
    #[test]
    fn the_patterns_claim_sessions_and_subagents_and_nothing_else() {
        let formats = vec![super::format()];
        let claimer = |path: &std::path::Path| crate::source::discover::claim(&formats, path).is_some();
        for (path, claimed) in [
            ("/h/.claude/projects/-h-app/5b1f.jsonl", true),
            ("/h/.claude/projects/-h-app/agent-a1.jsonl", true),
            ("/h/.claude/projects/-h-app/5b1f/subagents/agent-a1.jsonl", true),
            ("/h/.claude/projects/-h-app/5b1f/subagents/agent-a1.meta.json", false),
            ("/h/.claude/history.jsonl", false),
            ("/h/.claude/projects/x.jsonl", false),
            ("projects/-h-app/5b1f.jsonl.zst", true),
        ] {
            assert_eq!(claimer(std::path::Path::new(path)), claimed, "{path}");
        }
    }
}
