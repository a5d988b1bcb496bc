//! The inference pass: one read of every file that finds which event types it holds, which
//! fields each type has with the shapes of their values, and whether it is a transcript at all.

use crate::format::Format;
use crate::infer::signature::{FileSummary, SignatureTable};
use crate::infer::stats::{FileStats, TypeStats};
use crate::json::{Shape, Want, parse_line_event, parse_object};
use crate::source::files::SourceFile;
use crate::source::lines::{Line, LineSplitter};
use crate::source::prefix::PrefixHash;
use crate::source::read::BlockReader;
use object_store::ObjectStore;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Bytes read of a file in which no line is an event before it is taken as not JSON Lines and
/// read no further (one block of a read).
pub const JSON_LINES_PROOF_BYTES: u64 = crate::source::read::BLOCK_BYTES;

/// Reads one file from byte `from` (0, or where an earlier read's whole lines ended), on the
/// caller's thread when it is a local file, and tells what it holds. Every byte read is fed to
/// `prefix` too, when given (the cache's hash of the bytes before `from` already), with where the
/// whole lines end: hashed as it streams by, the file is read once.
pub async fn infer_file(
    store: Arc<dyn ObjectStore>,
    format: &Format,
    file: &SourceFile,
    max_line_bytes: usize,
    from: u64,
    mut prefix: Option<&mut PrefixHash>,
) -> FileStats {
    let mut stats = FileStats { complete_bytes: from, max_line_bytes, ..Default::default() };
    let mut reader = match BlockReader::open_at(store, file, from) {
        Ok(reader) => reader,
        Err(e) => {
            stats.unreadable = Some(e.to_string());
            return stats;
        }
    };
    let mut splitter = LineSplitter::new(max_line_bytes);
    let mut offset = from;
    loop {
        match reader.next_block().await {
            Ok(Some(block)) => {
                if let Some(last_newline) = memchr::memrchr2(b'\n', b'\r', &block) {
                    stats.complete_bytes = offset + last_newline as u64 + 1;
                }
                if let Some(prefix) = prefix.as_deref_mut() {
                    prefix.feed(&block, stats.complete_bytes);
                }
                offset += block.len() as u64;
                splitter.feed(&block, &mut |line| {
                    observe_line(format, line, &mut stats);
                });
                // A large file whose first block (4 MiB) holds no event (its lines damaged, or one
                // unfinished line that cannot be JSON) is not JSON Lines: it is read no further,
                // and no prefix is remembered to read on from.
                let no_event = stats.types.is_empty() && stats.tail_types.is_empty();
                let damaged =
                    stats.damaged_lines > 0 || splitter.pending().is_some_and(|p| !could_be_object(p));
                if from == 0 && offset >= JSON_LINES_PROOF_BYTES && no_event && damaged {
                    stats.complete_bytes = 0;
                    stats.damaged_lines = stats.damaged_lines.max(1);
                    return stats;
                }
            }
            Ok(None) => break,
            Err(e) => {
                stats.unreadable = Some(e.to_string());
                return stats;
            }
        }
    }
    // A compressed file damaged mid-stream keeps the lines inflated before the damage; one that
    // gave nothing is unreadable.
    if let Some(damage) = reader.damage() {
        match reader.given() {
            0 => {
                stats.unreadable = Some(damage.to_string());
                return stats;
            }
            given => stats.read_in_part = Some(format!("{damage} after {given} decompressed bytes")),
        }
    }
    stats.read_note = reader.read_note();
    let mut damaged_tail = false;
    splitter.finish(&mut |line| damaged_tail = observe_line(format, line, &mut stats));
    // A last line that is no JSON event and no unfinished one is damage that no append can
    // mend: later reads of a growing file start after it, so that it is counted once.
    if damaged_tail {
        stats.complete_bytes = offset;
    }
    stats
}

/// Notes what one line of a read from byte `from` holds; true for an unterminated last line that
/// is damaged (not merely cut off by a write still under way or lost in a crash).
fn observe_line(format: &Format, line: Line<'_>, stats: &mut FileStats) -> bool {
    stats.lines += 1;
    let damaged = match line {
        Line::Whole { bytes, .. } => !observe(format, bytes, &mut stats.types),
        // A last line cut off mid-write is not damage; one that is complete but no event is.
        Line::Unterminated { bytes, .. } => {
            let damaged = !observe(format, bytes, &mut stats.tail_types) && !crate::json::is_cut_off(bytes);
            stats.damaged_lines += u64::from(damaged);
            return damaged;
        }
        Line::TooLong { .. } => true,
    };
    stats.damaged_lines += u64::from(damaged);
    false
}

/// Why a file of a format's naming is not one of its transcripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotATranscript {
    /// No whole line yet: empty, blank, or one line still being written (a run just started).
    Empty,
    /// No line of the first ones read is a JSON event: binary, or another kind of text.
    NotJsonLines { lines: u64 },
    /// No line of the format's required type anywhere (rupu's step logs and netflow ledgers, or
    /// a transcript whose first line was lost: rupu's readers skip it too).
    NoRequired { required: &'static str },
    /// A compressed copy of the plain file of this name beside it, which is read instead (the
    /// newer of the two).
    PlainBeside { plain: String },
    /// A copy of this file, kept elsewhere by the format's rule, which is read instead (Codex's
    /// `archived_sessions/` copy of a thread in `sessions/`).
    CopyOf { kept: String },
}

impl std::fmt::Display for NotATranscript {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            NotATranscript::Empty => {
                write!(f, "no whole line yet (empty, or its first line is being written)")
            }
            NotATranscript::NotJsonLines { lines } => {
                write!(f, "not JSON Lines: none of the first {lines} lines read is a JSON event")
            }
            NotATranscript::NoRequired { required } => write!(f, "no {required} line"),
            NotATranscript::PlainBeside { plain } => {
                write!(f, "a compressed copy of {plain} beside it, which is read instead")
            }
            NotATranscript::CopyOf { kept } => write!(f, "a copy of {kept}, which is read instead"),
        }
    }
}

/// Why a file with these contents is not a transcript of `format`, or `None` when it is: a
/// file with no line of the format's required type anywhere is something else (rupu's step logs
/// and netflow ledgers), whatever else it holds, as rupu's own readers take it.
pub(crate) fn not_a_transcript(
    format: &Format,
    file: &FileSummary,
    shapes: &SignatureTable,
) -> Option<NotATranscript> {
    let required = format.required_type?;
    let holds_required =
        file.shapes().filter_map(|(id, _)| shapes.get(id)).any(|shape| shape.name.as_ref() == required);
    if holds_required {
        None
    } else if file.holds_no_event() && file.damaged_lines == 0 {
        Some(NotATranscript::Empty)
    } else if file.holds_no_event() {
        Some(NotATranscript::NotJsonLines { lines: file.lines })
    } else {
        Some(NotATranscript::NoRequired { required })
    }
}

/// The first line of `file` whose event is of type `type_name` (for a warning that points at it).
pub(crate) async fn first_line_of_type(
    store: Arc<dyn ObjectStore>,
    format: &Format,
    file: &SourceFile,
    type_name: &str,
    max_line_bytes: usize,
) -> Option<u64> {
    let mut reader = BlockReader::open(store, file).ok()?;
    let mut splitter = LineSplitter::new(max_line_bytes);
    let mut found = None;
    let envelope = &format.envelope;
    let on_line = |found: &mut Option<u64>, line: Line<'_>| {
        if let (None, Line::Whole { number, bytes } | Line::Unterminated { number, bytes }) = (*found, line)
            && parse_line_event(bytes, envelope, Want::Text, false)
                .is_ok_and(|event| event.type_name == type_name)
        {
            *found = Some(number);
        }
    };
    while let Ok(Some(block)) = reader.next_block().await {
        splitter.feed(&block, &mut |line| on_line(&mut found, line));
        if found.is_some() {
            return found;
        }
    }
    splitter.finish(&mut |line| on_line(&mut found, line));
    found
}

/// How many of a file's first lines [`decide_by_content`] reads.
const DECIDING_LINES: usize = 16;

/// Which of `candidates` (formats whose rules all claim `file`, the first by rank) the file is:
/// the one whose description documents the types of the most of its first lines, each line's
/// type read as that format reads it; on a tie, or when no line can be read, the first by rank.
/// One stray line (a damaged line whose type another format has) does not move a file; a rupu run
/// copied into a Claude project folder, whose every line is rupu's, moves. A format read as a
/// table of lines has no types: it keeps a file it wins by rank, and wins none by content.
pub(crate) async fn decide_by_content(
    store: Arc<dyn ObjectStore>,
    candidates: &[&Format],
    file: &SourceFile,
    max_line_bytes: usize,
) -> usize {
    if candidates.first().is_none_or(|f| f.lines_table.is_some()) {
        return 0;
    }
    let lines = first_lines(store, file, max_line_bytes, DECIDING_LINES).await;
    let documented = |format: &Format| {
        if format.lines_table.is_some() {
            return 0;
        }
        lines
            .iter()
            .filter(|line| {
                parse_line_event(line, &format.envelope, Want::Text, false)
                    .is_ok_and(|event| format.events.iter().any(|e| e.type_name == event.type_name))
            })
            .count()
    };
    let scores: Vec<usize> = candidates.iter().map(|format| documented(format)).collect();
    // The first of the highest: `max_by_key` keeps the last of equals, so the scan runs backwards.
    (0..scores.len()).rev().max_by_key(|&i| scores[i]).unwrap_or(0)
}

/// Up to `count` of the first lines of `file` with something on them, whole or the last one
/// unterminated; fewer where the file holds fewer, or cannot be read on.
async fn first_lines(
    store: Arc<dyn ObjectStore>,
    file: &SourceFile,
    max_line_bytes: usize,
    count: usize,
) -> Vec<Vec<u8>> {
    let Ok(mut reader) = BlockReader::open(store, file) else { return Vec::new() };
    let mut splitter = LineSplitter::new(max_line_bytes);
    let mut found: Vec<Vec<u8>> = Vec::new();
    let on_line = |found: &mut Vec<Vec<u8>>, line: Line<'_>| {
        if let Line::Whole { bytes, .. } | Line::Unterminated { bytes, .. } = line
            && found.len() < count
            && !bytes.iter().all(u8::is_ascii_whitespace)
        {
            found.push(bytes.to_vec());
        }
    };
    while let Ok(Some(block)) = reader.next_block().await {
        splitter.feed(&block, &mut |line| on_line(&mut found, line));
        if found.len() >= count {
            return found;
        }
    }
    splitter.finish(&mut |line| on_line(&mut found, line));
    found
}

/// Whether the first bytes of a line may start a JSON object (spaces, then `{`).
fn could_be_object(head: &[u8]) -> bool {
    head.iter().find(|b| !b.is_ascii_whitespace()).is_none_or(|b| *b == b'{')
}

/// Notes one line's type and field shapes; false for a damaged line, which adds nothing.
fn observe(format: &Format, line: &[u8], types: &mut BTreeMap<Arc<str>, TypeStats>) -> bool {
    if format.lines_table.is_some() {
        return crate::json::parse_line_object(line).is_ok();
    }
    let envelope = &format.envelope;
    let Ok(event) = parse_line_event(line, envelope, Want::Fields, false) else {
        return false;
    };
    let fields = event.fields;
    let stats = match types.get_mut(event.type_name.as_ref()) {
        Some(stats) => stats,
        None => types.entry(Arc::from(event.type_name.as_ref())).or_default(),
    };
    let path =
        format.events.iter().find(|e| e.type_name == event.type_name).map_or(&[][..], |e| e.fields_path);
    stats.events += 1;
    let Some(fields) = descend(fields, path) else {
        return true;
    };
    let type_key = envelope.type_key_among_fields(&event.type_name);
    for (at, (key, raw)) in fields.entries.iter().enumerate() {
        let is_type = type_key == Some(key.as_ref());
        // A repeated key's first value is the one every reading takes: the later ones give the
        // column no shape.
        if is_type || fields.entries[..at].iter().any(|(k, _)| k == key) {
            continue;
        }
        stats.field(key, Shape::of(raw));
    }
    true
}

/// Follows `path` down nested objects; `None` when a step is missing or not an object.
pub(crate) fn descend<'a>(
    mut object: crate::json::RawObject<'a>,
    path: &[&str],
) -> Option<crate::json::RawObject<'a>> {
    for key in path {
        object = parse_object(object.get(key)?).ok()?;
    }
    Some(object)
}
