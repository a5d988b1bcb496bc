//! rupu's netflow ledgers, as data: `.rupu/netflow/<run_id>.jsonl`, beside the transcripts, one
//! `{"type":"flow", ...flow record...}` line per connection and a `{"type":"complete", ...}` line
//! for a flow whose body ended later (a streamed provider call): the only true size of its body.

use super::build::{event, field};
use super::{
    Beside, ContextColumn, ContextSource, Envelope, EventSpec, ExportUnits, FieldsAt, FileMatch, Format,
    Kind, Naming, TypeRule, View,
};
use Kind::{Int, Str};

/// The ledger format: its own schema, `rupu_netflow`, so that its `events`, `errors` and `files`
/// stand apart from the transcripts'.
pub(crate) fn format() -> Format {
    Format {
        id: "rupu_netflow",
        name: "rupu_netflow",
        about: "rupu netflow ledgers: <project>/.rupu/netflow/<run_id>.jsonl, read with the transcripts \
                beside them (any netflow/ folder of .jsonl files is one)",
        default_roots: &[],
        files: FileMatch::InFolder { folder: "netflow", extension: "jsonl" },
        looked_for: None,
        beside: Some(Beside { searched: "transcripts", folder: "netflow" }),
        copies: None,
        envelope: Envelope { types: TypeRule::Key("type"), fields: FieldsAt::Beside },
        times: &["ts"],
        table_naming: Naming::AsIs,
        column_naming: Naming::AsIs,
        required_type: None,
        not_transcripts: &[],
        project_folder: None,
        context: vec![
            ContextColumn {
                name: "run_id",
                source: ContextSource::FileStem,
                about: "the run the ledger belongs to: the file name without .jsonl (run_<ULID>)",
            },
            ContextColumn {
                name: "line",
                source: ContextSource::LineNumber,
                about: "1-based line number in the file",
            },
            ContextColumn { name: "file", source: ContextSource::FilePath, about: "path of the ledger file" },
        ],
        common_fields: vec![],
        events: events(),
        views: vec![flows_view()],
        lines_table: None,
        export: ExportUnits::Joins { schema: "rupu", key: run_of, alone: "netflow", noun: "ledger" },
        normalized: vec![],
        report_sections: vec![],
        queries: &[],
        model_family: None,
    }
}

fn events() -> Vec<EventSpec> {
    vec![
        event(
            "flow",
            "one outbound connection as the netflow sink recorded it: the flow record's fields at \
             the line's top level (a streamed call's flow has body_complete false and no bytes_in)",
            super::rupu::flow_fields(),
        ),
        event(
            "complete",
            "the end of a flow's body, recorded after its flow line: its final size and time",
            vec![
                field("id", Str, "the flow's ULID (joins flow.id and rupu.net_flow.id)"),
                field("bytes_in", Int, "bytes received, final"),
                field("duration_ms", Int, "how long the flow took, final"),
            ],
        ),
    ]
}

fn flows_view() -> View {
    View {
        name: "flows",
        about: "one row per flow line of the ledgers, with its final bytes_in and duration from its complete line",
        sql: r#"
WITH completes AS (
  SELECT file, id, max(bytes_in) AS bytes_in, max(duration_ms) AS duration_ms
  FROM complete GROUP BY file, id
)
SELECT f.run_id, f.id, f.ts, f.host, f.method, f.path, f.outcome, f.bytes_out,
       CASE WHEN c.id IS NOT NULL THEN c.bytes_in ELSE f.bytes_in END AS bytes_in,
       CASE WHEN c.id IS NOT NULL THEN c.duration_ms ELSE f.duration_ms END AS duration_ms,
       f.body_complete OR c.id IS NOT NULL AS confirmed,
       f.file
FROM flow f
LEFT JOIN completes c ON c.file = f.file AND c.id = f.id
"#,
        columns: &[
            ("run_id", "the ledger's run (file name)"),
            ("id", "flow.id"),
            ("ts", "flow.ts"),
            ("host", "flow.host"),
            ("method", "flow.method"),
            ("path", "flow.path"),
            ("outcome", "flow.outcome"),
            ("bytes_out", "flow.bytes_out"),
            ("bytes_in", "the complete line's bytes_in where the flow has one, else flow.bytes_in"),
            ("duration_ms", "the complete line's duration_ms where the flow has one, else flow.duration_ms"),
            (
                "confirmed",
                "bytes_in is final: the flow line had body_complete, or a complete line followed it",
            ),
            ("file", "path of the ledger"),
        ],
    }
}
/// A ledger belongs to the run of its name: `<project>/.rupu/netflow/<run_id>.jsonl` to
/// `<project>/.rupu/transcripts/<run_id>.jsonl`, or to `transcripts/archive/<run_id>.jsonl` once
/// rupu archived the run; both are keyed `<project>/.rupu/<run_id>` (the folder above the nearest
/// `transcripts` or `netflow` folder, then the run).
fn run_of(file: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut folder = file.parent()?;
    while !matches!(folder.file_name()?.to_str()?, "transcripts" | "netflow") {
        folder = folder.parent()?;
    }
    Some(folder.parent()?.join(super::claimed_stem(file)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_is_keyed_as_its_runs_transcript_is_archived_or_not() {
        use std::path::Path;
        let key = |p: &str| run_of(Path::new(p)).map(|k| k.display().to_string());
        assert_eq!(key("p/.rupu/netflow/run_1.jsonl").as_deref(), Some("p/.rupu/run_1"));
        assert_eq!(key("p/.rupu/transcripts/run_1.jsonl"), key("p/.rupu/netflow/run_1.jsonl"));
        assert_eq!(key("p/.rupu/transcripts/archive/run_1.jsonl"), key("p/.rupu/netflow/run_1.jsonl"));
        assert_eq!(
            key("p/.rupu/transcripts/netflow/run_1.jsonl").as_deref(),
            Some("p/.rupu/transcripts/run_1")
        );
        assert_eq!(key("p/.rupu/netflow/run_1.jsonl.zst"), key("p/.rupu/netflow/run_1.jsonl"));
        assert_eq!(key("run_1.jsonl"), None);
    }
}
