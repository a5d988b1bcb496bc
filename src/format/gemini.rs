//! Gemini CLI chats, as data: `<gemini-home>/.gemini/tmp/<slug>/chats/session-<time>-<id8>.jsonl`
//! (a subagent's in `chats/<parentSessionId>/<sessionId>.jsonl`) of lines typed by which keys they
//! have: a metadata line, messages re-appended whole on every update (the last write of an id
//! wins), `$set` patches and `$rewindTo` rewinds; and their rows of the normalized `calls`,
//! `tool_calls` and `sessions`.

use super::build::{event, field, named};
use super::{
    ContextColumn, ContextSource, Contribution, Envelope, EventSpec, ExportUnits, FieldsAt, FileMatch,
    Format, KeyRule, KeyShape, Kind, LookedFor, Naming, Normalized, TypeRule, View,
};
use Kind::{Count, Json, Str, Timestamp};

/// How a line's type is found, in the order Gemini CLI's loader tests them.
const LINE_TYPES: &[KeyRule] = &[
    KeyRule { key: "$rewindTo", shape: KeyShape::Str, also: &[], type_name: "rewind" },
    KeyRule { key: "id", shape: KeyShape::Str, also: &[], type_name: "message" },
    KeyRule { key: "$set", shape: KeyShape::Object, also: &[], type_name: "set" },
    KeyRule { key: "sessionId", shape: KeyShape::Str, also: &["projectHash"], type_name: "metadata" },
];

/// The Gemini CLI format.
pub fn format() -> Format {
    Format {
        id: "gemini",
        name: "gemini",
        about: "Gemini CLI chats: <gemini-home>/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl, a \
                subagent's in chats/<parentSessionId>/<sessionId>.jsonl; the home is $GEMINI_CLI_HOME, \
                else ~",
        default_roots: &[&["$GEMINI_CLI_HOME/.gemini/tmp", "~/.gemini/tmp"]],
        files: FileMatch::Patterns(&["tmp/*/chats/*.jsonl", "tmp/*/chats/*/*.jsonl"]),
        looked_for: Some(LookedFor { transcripts: "Gemini CLI chats", files: "tmp/*/chats/**/*.jsonl" }),
        beside: None,
        copies: None,
        envelope: Envelope { types: TypeRule::ByKeys(LINE_TYPES), fields: FieldsAt::Beside },
        times: &["timestamp", "startTime", "lastUpdated"],
        table_naming: Naming::AsIs,
        column_naming: Naming::SnakeCase,
        required_type: None,
        not_transcripts: &[],
        project_folder: None,
        context: vec![
            ContextColumn {
                name: "chat_session_id",
                source: ContextSource::Carried { event: "metadata", key: "sessionId", first: true },
                about: "the chat's session: the sessionId of its metadata line (null before it)",
            },
            ContextColumn {
                name: "parent_session_id",
                source: ContextSource::Below("chats"),
                about: "for a subagent's chat, the session it ran under (the folder it lies in, \
                        chats/<parentSessionId>/); null for a main chat",
            },
            ContextColumn {
                name: "project",
                source: ContextSource::Below("tmp"),
                about: "the project's folder under tmp/: a short name from the directory's (billing-api, \
                        billing-api-1), or the sha256 of its path in older installs",
            },
            ContextColumn {
                name: "project_root",
                source: ContextSource::FileText { below: "tmp", name: ".project_root" },
                about: "the project's directory, as the .project_root marker in its folder names it",
            },
            ContextColumn {
                name: "line",
                source: ContextSource::LineNumber,
                about: "1-based line number in the file",
            },
            ContextColumn { name: "file", source: ContextSource::FilePath, about: "path of the chat file" },
        ],
        common_fields: vec![],
        events: events(),
        views: vec![messages_view()],
        lines_table: None,
        export: ExportUnits::Rows { sql: EXPORT_UNITS, noun: "chat" },
        normalized: vec![
            Contribution { table: Normalized::Calls, sql: CALLS },
            Contribution { table: Normalized::ToolCalls, sql: TOOL_CALLS },
            Contribution { table: Normalized::Sessions, sql: SESSIONS },
        ],
        report_sections: vec![],
        queries: &[],
        model_family: None,
    }
}

fn events() -> Vec<EventSpec> {
    let tokens = |key: &'static str, name: &'static str, about: &'static str| named(key, name, Count, about);
    vec![
        event(
            "metadata",
            "the chat's first line: its session, project and start (a line with sessionId and projectHash)",
            vec![
                field("sessionId", Str, "the session"),
                field("projectHash", Str, "the sha256 of the project's directory"),
                field("startTime", Timestamp, "when the chat started (UTC)"),
                field("lastUpdated", Timestamp, "when it was last written, as of this line"),
                field("kind", Str, "main or subagent"),
                field("directories", Json, "the directories the session may use, as JSON text"),
                field("summary", Str, "the chat's summary"),
            ],
        ),
        event(
            "message",
            "one write of a message (a line with a string id): Gemini CLI re-appends the whole \
             message on every update, so an id has as many rows as writes; `messages` keeps the last",
            vec![
                field("id", Str, "the message's id"),
                field("timestamp", Timestamp, "when the message was made (UTC)"),
                field("type", Str, "user, gemini (a model response), info, error or warning"),
                field("content", Json, "the text or parts, as JSON text"),
                field("displayContent", Json, "what was shown instead, as JSON text"),
                field("model", Str, "the model that answered (gemini)"),
                field("thoughts", Json, "the model's thought summaries, as JSON text"),
                field("tokens", Json, "the response's token counts, as JSON text; absent until they arrive"),
                tokens("tokens.input", "input_tokens", "prompt tokens, cached included (promptTokenCount)"),
                tokens("tokens.output", "output_tokens", "response tokens, thoughts excluded"),
                tokens("tokens.cached", "cached_tokens", "prompt tokens read from the cache"),
                tokens("tokens.thoughts", "thoughts_tokens", "thinking tokens (billed as output)"),
                tokens("tokens.tool", "tool_tokens", "tool-use prompt tokens (billed as input)"),
                tokens("tokens.total", "total_tokens", "input + output + thoughts + tool"),
                field("toolCalls", Json, "the tool calls of the response with their results, as JSON text"),
            ],
        ),
        event(
            "set",
            "a patch of the chat's metadata (a line with an object $set): lastUpdated, summary, ...",
            vec![named("$set", "patch", Json, "the patched keys and their values, as JSON text")],
        ),
        event(
            "rewind",
            "a rewind (a line with a string $rewindTo): the message named and every one after it \
             leave the transcript (their tokens were still spent)",
            vec![named("$rewindTo", "message_id", Str, "the first message dropped")],
        ),
    ]
}

/// Each message's last write, and whether a rewind dropped it.
fn messages_view() -> View {
    View {
        name: "messages",
        about: "one row per message of a chat: its last write (an update re-appends the whole \
                message under the same id), in the order first written",
        sql: "WITH writes AS (
  SELECT *, row_number() OVER (PARTITION BY file, id ORDER BY line DESC) AS nth,
         min(line) OVER (PARTITION BY file, id) AS first_line
  FROM message
), rewinds AS (
  SELECT r.file, r.line, w.first_line
  FROM rewind r JOIN (SELECT DISTINCT file, id, first_line FROM writes) w
    ON w.file = r.file AND w.id = r.message_id
), dropped AS (
  SELECT DISTINCT w.file, w.id
  FROM writes w JOIN rewinds r ON r.file = w.file AND r.first_line <= w.first_line AND w.first_line < r.line
)
SELECT w.chat_session_id, w.id, w.timestamp, w.type, w.model, w.content, w.tokens, w.input_tokens,
       w.output_tokens, w.cached_tokens, w.thoughts_tokens, w.tool_tokens, w.total_tokens, w.tool_calls,
       d.id IS NOT NULL AS rewound, w.first_line, w.line, w.file
FROM writes w LEFT JOIN dropped d ON d.file = w.file AND d.id = w.id
WHERE w.nth = 1",
        columns: &[
            ("chat_session_id", "the chat's session"),
            ("id", "the message's id"),
            ("timestamp", "when it was made"),
            ("type", "user, gemini, info, error or warning"),
            ("model", "the model that answered"),
            ("content", "the text or parts, as JSON text"),
            ("tokens", "the token counts, as JSON text"),
            ("input_tokens", "prompt tokens, cached included"),
            ("output_tokens", "response tokens, thoughts excluded"),
            ("cached_tokens", "prompt tokens read from the cache"),
            ("thoughts_tokens", "thinking tokens"),
            ("tool_tokens", "tool-use prompt tokens"),
            ("total_tokens", "all of them"),
            ("tool_calls", "the tool calls with their results, as JSON text"),
            ("rewound", "a later $rewindTo dropped it from the transcript (its tokens were spent)"),
            ("first_line", "the line of its first write"),
            ("line", "the line of its last write"),
            ("file", "the chat file"),
        ],
    }
}

/// A unit per chat file. Gemini CLI never writes that a chat ended: a chat is taken as settled,
/// and one that changed since it was exported is written again whole.
const EXPORT_UNITS: &str = "select f.file, f.file as id, coalesce(s.session_id, f.file) as run_id, \
    false as open, cast(cast(s.started_at as date) as varchar) as day \
    from gemini.files f left join (select file, min(session_id) as session_id, min(start_time) as started_at \
      from gemini.metadata group by file) s on s.file = f.file where f.transcript";

/// The calls: the last write of each message of type gemini that has tokens, rewound or not.
const CALLS: &str = "\
SELECT 'gemini' AS harness, m.chat_session_id AS session_id, s.parent_session_id, m.timestamp AS ts,
       'google' AS provider, m.model,
       coalesce(m.input_tokens, 0) + coalesce(m.tool_tokens, 0) AS input_tokens,
       coalesce(m.cached_tokens, 0) AS cache_read_tokens, 0 AS cache_write_tokens,
       coalesce(m.output_tokens, 0) + coalesce(m.thoughts_tokens, 0) AS output_tokens,
       coalesce(m.thoughts_tokens, 0) AS reasoning_tokens, CAST(NULL AS VARCHAR) AS service_tier, m.file, m.line
FROM gemini.messages m
JOIN (SELECT DISTINCT file, parent_session_id FROM gemini.metadata) s ON s.file = m.file
WHERE m.type = 'gemini' AND m.tokens IS NOT NULL AND starts_with(m.tokens, '{')
  AND m.chat_session_id IS NOT NULL";

/// The tool calls: those of each message's last write, ok when their status is success; their
/// result's bytes those of the first part's functionResponse.response as JSON text; their MCP
/// server the <server> of a name <server>__<tool> (Gemini CLI qualifies an MCP tool so; a chat
/// file names no server otherwise). The response that asked for them: that message (its last
/// write, the line of its call).
const TOOL_CALLS: &str = "\
SELECT 'gemini' AS harness, c.session_id, CAST(json_get_str(call, 'timestamp') AS TIMESTAMP) AS ts,
       json_get_str(call, 'name') AS tool, json_get_str(call, 'id') AS call_id,
       coalesce(json_get_str(call, 'status') = 'success', false) AS ok,
       CASE WHEN coalesce(json_get_str(call, 'status'), '') <> 'success' THEN
         coalesce(json_get_str(call, 'result', 0, 'functionResponse', 'response', 'error'),
                  json_get_str(call, 'status'), '')
       END AS error,
       CAST(NULL AS BIGINT) AS duration_ms,
       CAST(octet_length(json_get_json(call, 'result', 0, 'functionResponse', 'response')) AS BIGINT)
         AS result_bytes,
       (regexp_match(json_get_str(call, 'name'), '^(.+?)__.'))[1] AS mcp_server,
       s.parent_session_id, c.file AS response_file, c.line AS response_line, c.file
FROM (SELECT chat_session_id AS session_id, file, line, unnest(json_get_array(tool_calls)) AS call
      FROM gemini.messages WHERE tool_calls IS NOT NULL AND chat_session_id IS NOT NULL) c
LEFT JOIN (SELECT DISTINCT file, parent_session_id FROM gemini.metadata) s ON s.file = c.file";

/// A session per chat: its metadata's session, its parent the folder a subagent's chat lies in,
/// its times from the start and every message write, its directory the project's.
const SESSIONS: &str = "\
SELECT 'gemini' AS harness, s.session_id, s.session_id AS file_session_id, s.parent_session_id,
       least(s.started_at, w.first_write) AS started_at, greatest(s.started_at, w.last_write) AS ended_at,
       s.project_root AS cwd, CAST(NULL AS VARCHAR) AS git_branch, CAST(NULL AS VARCHAR) AS git_commit, s.file
FROM (SELECT file, session_id, parent_session_id, project_root, start_time AS started_at,
             row_number() OVER (PARTITION BY file ORDER BY line) AS nth
      FROM gemini.metadata WHERE session_id IS NOT NULL) s
LEFT JOIN (SELECT file, min(timestamp) AS first_write, max(timestamp) AS last_write
           FROM gemini.message GROUP BY file) w ON w.file = s.file
WHERE s.nth = 1";

#[cfg(test)]
mod tests {
    #[test]
    fn the_patterns_claim_chats_and_subagents_and_nothing_else() {
        let formats = vec![super::format()];
        let claimer = |path: &std::path::Path| crate::source::discover::claim(&formats, path).is_some();
        for (path, claimed) in [
            ("/h/.gemini/tmp/billing-api/chats/session-2026-09-04T07-30-7d2e9b40.jsonl", true),
            ("/h/.gemini/tmp/billing-api/chats/7d2e9b40-1c3a/0c1d2e3f.jsonl", true),
            ("/h/.gemini/tmp/billing-api/logs.json", false),
            ("/h/.gemini/tmp/billing-api/.project_root", false),
            ("/h/.gemini/projects.json", false),
            ("/h/.gemini/tmp/billing-api/checkpoints/x.jsonl", false),
        ] {
            assert_eq!(claimer(std::path::Path::new(path)), claimed, "{path}");
        }
    }
}
