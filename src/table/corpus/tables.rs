//! Opening a corpus, last step: a format's share made of what its files settled as: its
//! transcripts, the files of its naming that are none (said in warnings), its tables, and a
//! warning for each type whose table is named otherwise.

use super::FormatData;
use super::owners::Copies;
use super::settle::SettledFiles;
use crate::format::Format;
use crate::infer::pass::{NotATranscript, first_line_of_type};
use crate::source::files::{SourceFile, SourceFiles};
use crate::table::event_table::{EventTable, all_tables};
use object_store::ObjectStore;
use std::sync::{Arc, OnceLock};

/// The share of `format`: its `files` that `settled` says are transcripts, with their events
/// and damage; those that are not, then its `copies`, listed with why; and its tables. Adds the
/// warnings for the files that are not transcripts, then for the renamed types (found by a read
/// of lines at most `max_line_bytes` long).
pub(super) async fn format_data(
    store: &Arc<dyn ObjectStore>,
    format: Format,
    mut files: SourceFiles,
    settled: SettledFiles,
    copies: Copies,
    max_line_bytes: usize,
    warnings: &mut Vec<String>,
) -> FormatData {
    let SettledFiles { stats, is_transcript, file_events, damage, not_transcripts } = settled;
    let mut not_transcripts: Vec<(Arc<SourceFile>, NotATranscript)> =
        not_transcripts.into_iter().map(|(i, why)| (Arc::new(files.get(i)), why)).collect();
    warnings.extend(not_transcripts_warnings(&format, &not_transcripts));
    not_transcripts.extend(copies);
    let tables: Vec<Arc<EventTable>> = all_tables(&format, &stats).into_iter().map(Arc::new).collect();
    files.retain(|i| is_transcript[i]);
    let format_data = FormatData {
        format,
        files,
        file_damage: damage,
        file_events,
        not_transcripts,
        tables,
        by_type: OnceLock::new(),
        stats,
    };
    warnings.extend(renamed_warnings(store, &format_data, max_line_bytes).await);
    format_data
}

/// The warnings for the files of a format's naming that are not its transcripts (each listed in
/// `files` with why): one for each that is not JSON Lines at all, one for all that lack the
/// required line (a step log or ledger beside every run would make a line each too many).
fn not_transcripts_warnings(format: &Format, skipped: &[(Arc<SourceFile>, NotATranscript)]) -> Vec<String> {
    let mut warnings: Vec<String> = skipped
        .iter()
        .filter(|(_, why)| matches!(why, NotATranscript::NotJsonLines { .. }))
        .map(|(file, why)| format!("{}: not read: {why}", crate::text::escape::path(&file.path)))
        .collect();
    let lacking: Vec<&(Arc<SourceFile>, NotATranscript)> =
        skipped.iter().filter(|(_, why)| matches!(why, NotATranscript::NoRequired { .. })).collect();
    if let Some((first, why)) = lacking.first() {
        let others = match lacking.len() {
            1 => String::new(),
            2 => " and 1 other file".to_string(),
            n => format!(" and {} other files", n - 1),
        };
        // What else the format's naming holds, as its description says (`(step logs?)`).
        let guess = match format.not_transcripts {
            [] => String::new(),
            kinds => format!(" ({}?)", kinds.join(" or ")),
        };
        warnings.push(format!(
            "{}{others}: not read: {why}, so not {} transcripts{guess}; \
             `select file, skipped from {}.files where not transcript` lists each with why",
            crate::text::escape::path(&first.path),
            format.name,
            format.name
        ));
    }
    warnings
}

/// A warning for each type found in the data whose table is named otherwise, naming the file and
/// line that brought the type in (the first [`MAX_RENAME_WARNINGS`]; one line counts the rest).
async fn renamed_warnings(
    store: &Arc<dyn ObjectStore>,
    data: &FormatData,
    max_line_bytes: usize,
) -> Vec<String> {
    let renamed: Vec<(&Arc<EventTable>, &String, &String)> = data
        .type_tables()
        .filter_map(|table| match (&table.renamed, &table.rows) {
            (Some(why), crate::table::event_table::Rows::Type(type_name)) => Some((table, why, type_name)),
            _ => None,
        })
        .collect();
    let mut warnings = Vec::new();
    for &(table, why, type_name) in renamed.iter().take(MAX_RENAME_WARNINGS) {
        let Some(file) = data.file_events.files_holding(type_name).next().map(|i| data.files.get(i)) else {
            continue;
        };
        let line = first_line_of_type(store.clone(), &data.format, &file, type_name, max_line_bytes).await;
        let place = match line {
            Some(line) => format!("{}:{line}", crate::text::escape::path(&file.path)),
            None => crate::text::escape::path(&file.path),
        };
        warnings.push(format!(
            "{place}: event type {} is table {}.{} ({why})",
            crate::text::escape::text(&serde_json::Value::String(type_name.clone()).to_string()),
            data.format.name,
            table.name
        ));
    }
    if renamed.len() > MAX_RENAME_WARNINGS {
        warnings.push(format!(
            "and {} more event types are tables of other names; `select table_name from \
             information_schema.tables where table_schema = '{}'` lists them",
            renamed.len() - MAX_RENAME_WARNINGS,
            data.format.name
        ));
    }
    warnings
}

/// Renamed types named one by one, each with its file and line (found by a read of that file);
/// the rest are counted in one more line.
const MAX_RENAME_WARNINGS: usize = 10;
