//! An attempt's files beside `transcript.jsonl`: the harness stream parts of
//! `transcript.raw.jsonl`, and the non-transcripts `diff.patch` and `judge-input.json`.

use serde_json::{Value, json};

use super::lines::{Fields, Line, pretty_object};
use super::{AttemptPlan, Harness};
use crate::generate::rng::Rng;

/// The stream parts a harness adapter sent for an attempt's events, unnormalised, each with its
/// `turn`: text and reasoning as deltas, tool calls and their results apart. Cursor's web calls
/// never reach the stream (its backend runs them), so they have no parts.
pub(super) fn raw_parts(lines: &[Line], harness: Harness, rng: &mut Rng) -> Vec<Line> {
    let mut parts = Vec::new();
    for line in lines {
        let (Some(kind), Some(turn)) = (line.kind(), line.get("turn")) else {
            continue;
        };
        let field = |key: &str| line.get(key).cloned().unwrap_or(Value::Null);
        let part = |kind: &'static str, fields: Fields| {
            let mut all = vec![("turn", turn.clone()), ("type", json!(kind))];
            all.extend(fields);
            Line::event(all)
        };
        let call = |tool: Value, input: Value, result: Result<Value, Value>| {
            let (id, name) = (("toolCallId", field("toolCallId")), ("toolName", tool));
            let (outcome_kind, outcome) = match result {
                Ok(output) => ("tool-result", ("output", output)),
                Err(error) => ("tool-error", ("error", error)),
            };
            [
                part("tool-call", vec![id.clone(), name.clone(), ("input", input)]),
                part(outcome_kind, vec![id, name, outcome]),
            ]
        };
        let ok = line.get("ok") != Some(&Value::Bool(false));
        match kind {
            "prompt" => parts.push(part("start-step", Vec::new())),
            "reasoning" | "text" => {
                let (delta_kind, prefix) =
                    if kind == "text" { ("text-delta", "txt") } else { ("reasoning-delta", "rs") };
                let id = json!(format!("{prefix}_{}", rng.hex(8)));
                let text = field("text");
                for delta in deltas(text.as_str().unwrap_or_default(), rng) {
                    parts.push(part(delta_kind, vec![("id", id.clone()), ("delta", json!(delta))]));
                }
            }
            "tool" => {
                let result = if ok { Ok(field("output")) } else { Err(field("output")) };
                parts.extend(call(field("tool"), field("input"), result));
            }
            "file-edit" => {
                let summary =
                    json!({"kind": field("kind"), "added": field("added"), "removed": field("removed")});
                parts.extend(call(json!("edit_file"), json!({"path": field("path")}), Ok(summary)));
            }
            "web-search" if harness != Harness::Cursor => {
                let result = if ok {
                    Ok(json!({"references": field("references")}))
                } else {
                    Err(json!("search refused: egress 403"))
                };
                parts.extend(call(json!("web_search"), json!({"query": field("query")}), result));
            }
            "web-fetch" if harness != Harness::Cursor => {
                let result = if ok { Ok(json!("200 OK")) } else { Err(json!("fetch failed: 403 Forbidden")) };
                parts.extend(call(json!("web_fetch"), json!({"url": field("url")}), result));
            }
            "retry" => parts.push(part(
                "error",
                vec![("error", json!({"message": field("message")})), ("willRetry", json!(true))],
            )),
            "error" => parts.push(part("error", vec![("error", json!({"message": field("message")}))])),
            "turn-end" => {
                let reason = match field("status").as_str() {
                    Some("completed") => "stop",
                    Some("aborted") => "abort",
                    _ => "error",
                };
                parts.push(part("finish", vec![("finishReason", json!(reason))]));
            }
            _ => {}
        }
    }
    parts
}

/// `text` in one to three pieces, split between characters.
fn deltas(text: &str, rng: &mut Rng) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let pieces = rng.size(1, 3);
    chars.chunks(chars.len().div_ceil(pieces).max(1)).map(|piece| piece.iter().collect()).collect()
}

/// The attempt's other files, (name, contents): `diff.patch` when it edited files,
/// `judge-input.json` when its eval is judged.
pub(super) fn side_files(plan: &AttemptPlan, lines: &[Line]) -> Vec<(&'static str, String)> {
    let edits: Vec<&Line> = lines.iter().filter(|line| line.kind() == Some("file-edit")).collect();
    let mut files = Vec::new();
    if !edits.is_empty() {
        files.push(("diff.patch", diff(&edits)));
    }
    if plan.eval.judged {
        let final_message = lines
            .iter()
            .rev()
            .find(|line| line.kind() == Some("text"))
            .and_then(|line| line.get("text"))
            .cloned()
            .unwrap_or(Value::Null);
        let judge_input = [
            ("eval", json!(plan.eval.slug)),
            ("cell", json!(plan.cell.slug)),
            ("attempt", json!(plan.number)),
            ("prompt", json!(plan.eval.prompts[0])),
            ("finalMessage", final_message),
            ("criteria", json!(["The tests pass.", "The diff touches only what the prompt asks."])),
        ];
        files.push(("judge-input.json", pretty_object(&judge_input)));
    }
    files
}

/// A unified diff with one hunk per edit, as many lines as its counts say (one when unknown),
/// paths relative to the workspace.
fn diff(edits: &[&Line]) -> String {
    let mut patch = String::new();
    for edit in edits {
        let path = edit.get("path").and_then(Value::as_str).unwrap_or_default();
        let path = path.rsplit_once("/work/").map_or(path, |(_, relative)| relative);
        let count = |key| edit.get(key).and_then(Value::as_i64).unwrap_or(1);
        let kind = edit.get("kind").and_then(Value::as_str).unwrap_or_default();
        let (header, added, removed) = match kind {
            "create" => (format!("new file mode 100644\n--- /dev/null\n+++ b/{path}"), count("added"), 0),
            "delete" => {
                (format!("deleted file mode 100644\n--- a/{path}\n+++ /dev/null"), 0, count("removed"))
            }
            _ => (format!("--- a/{path}\n+++ b/{path}"), count("added"), count("removed")),
        };
        let start = |lines: i64| i64::from(lines > 0);
        patch.push_str(&format!(
            "diff --git a/{path} b/{path}\n{header}\n@@ -{},{removed} +{},{added} @@\n",
            start(removed),
            start(added)
        ));
        for line in 1..=removed {
            patch.push_str(&format!("-  old line {line} of \"{path}\"\n"));
        }
        for line in 1..=added {
            patch.push_str(&format!("+  new line {line} of \"{path}\"\n"));
        }
    }
    patch
}
