//! What the scan does with each line of a file: find its type, skip it cheaply when the table does
//! not want it, follow the turn, and hand its values (or its damage) to the row decoder.

use super::ScanSource;
use crate::format::{ContextSource, Early};
use crate::infer::pass::descend;
use crate::json::{Damage, Shape, Want, parse_line_event, quick_refinement_of, quick_type_of};
use crate::scan::decode::{FileContext, LineValues, NulledValue, RowDecoder, excerpt};
use crate::source::files::SourceFile;
use crate::source::lines::Line;
use crate::table::corpus::Problem;
use crate::table::event_table::{ColumnSource, EventTable, Rows};
use std::collections::HashMap;
use std::sync::Arc;

/// Types whose value checkers `errors` keeps at once.
const MAX_CHECKERS: usize = 64;

/// Characters of a damaged line kept in `errors`.
const EXCERPT_CHARS: usize = 200;

/// What the lines of a file read so far leave for the lines after them: the turn they are in, and
/// the values carried from earlier lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReaderState {
    turn: Option<i64>,
    ended: Option<i64>,
    in_turn: bool,
    carried: Vec<Option<String>>,
}

/// The state of reading one table's rows out of one file after another.
pub struct LineReader {
    source: Arc<ScanSource>,
    /// The type this table wants, when it wants one type only.
    wanted: Option<String>,
    /// The type whose field sets the turn, and that field.
    turn_from: Option<(&'static str, &'static str)>,
    /// The types written before the turn they belong to, and the type that ends a turn.
    early: Option<Early>,
    /// The format's values carried from earlier lines: each `(type, key, first)` of its
    /// `Carried` context columns, in order, and the value each holds in the file so far.
    carried_from: Vec<(&'static str, &'static str, bool)>,
    carried: Vec<Option<String>>,
    /// Which of them the rows need: a value no column asks for is not followed.
    carried_needed: Vec<bool>,
    /// The rows of the current file not read yet, when known from its events by type: once
    /// none is left, the rest of the file is not read.
    rows_left: Option<u64>,
    /// Whether the format reads keys of the line beside the key its fields are under.
    line_keys: bool,
    file: Option<Arc<SourceFile>>,
    turn: Option<i64>,
    /// The field of the last line that ended a turn, when no turn has begun since.
    ended: Option<i64>,
    /// Whether a turn has begun and not ended.
    in_turn: bool,
    problems: Vec<NulledValue>,
    /// For `errors`: a decoder per event type, to check each value against its column.
    checkers: HashMap<String, RowDecoder>,
    /// What the table needs of each event's fields.
    want: Want,
    /// Bytes of the lines made rows since [`Self::clear_row_bytes`]: what the batch holds, about.
    row_bytes: u64,
    /// Counts the values read as null, when the scan's metrics ask.
    nulled: Option<datafusion::physical_plan::metrics::Count>,
}

impl LineReader {
    pub fn new(source: Arc<ScanSource>) -> Self {
        let wanted = match &source.table.rows {
            Rows::Type(t) => Some(t.clone()),
            _ => None,
        };
        let turn_from = source.data.format.context.iter().find_map(|c| match c.source {
            ContextSource::LastSeen { event, field, .. } => Some((event, field)),
            _ => None,
        });
        let early = source.data.format.context.iter().find_map(|c| match c.source {
            ContextSource::LastSeen { early, .. } => early,
            _ => None,
        });
        let format = &source.data.format;
        let carried_from: Vec<_> = format
            .context
            .iter()
            .filter_map(|c| match c.source {
                ContextSource::Carried { event, key, first } => Some((event, key, first)),
                _ => None,
            })
            .collect();
        let line_keys = format
            .common_fields
            .iter()
            .chain(format.events.iter().flat_map(|e| &e.fields))
            .any(|f| f.on_line);
        // `events` of a format with fields under a key and no common fields needs only their text.
        let text_only = source.table.rows == Rows::AllEvents
            && format.envelope.fields_key().is_some()
            && format.common_fields.is_empty();
        let want = if text_only { Want::Text } else { Want::Fields };
        Self {
            source,
            wanted,
            turn_from,
            early,
            carried: vec![None; carried_from.len()],
            carried_needed: vec![true; carried_from.len()],
            rows_left: None,
            carried_from,
            line_keys,
            file: None,
            turn: None,
            ended: None,
            in_turn: false,
            problems: Vec::new(),
            checkers: HashMap::new(),
            want,
            row_bytes: 0,
            nulled: None,
        }
    }

    /// The reader, counting in `nulled` each value read as null.
    pub(crate) fn counting_nulls(mut self, nulled: datafusion::physical_plan::metrics::Count) -> Self {
        self.nulled = Some(nulled);
        self
    }

    /// The reader of a scan that decodes only the columns `projection` lists (all: `None`): a
    /// value carried from earlier lines that none of them holds is not followed, so the lines
    /// that carry it need not be read.
    pub(crate) fn projecting(mut self, projection: Option<&[usize]>) -> Self {
        let Some(projection) = projection else { return self };
        let carried: Vec<usize> = (self.table().columns.iter().enumerate())
            .filter(|(_, c)| matches!(c.source, ColumnSource::Context(ContextSource::Carried { .. })))
            .map(|(i, _)| i)
            .collect();
        // `errors` shows every carried value of its rows, whatever the projection names.
        if carried.len() == self.carried_from.len() && self.table().rows != Rows::Errors {
            self.carried_needed = carried.iter().map(|i| projection.contains(i)).collect();
        }
        // Columns none of which lies among the event's fields need only the fields' text, which
        // is found without reading what is in it.
        let table = self.table();
        let among_fields = |i: &usize| {
            matches!(
                table.columns.get(*i).map(|c| &c.source),
                Some(ColumnSource::Field { on_line: false, .. })
            )
        };
        let rows_of_lines = match &table.rows {
            Rows::AllEvents => true,
            Rows::Type(_) => table.fields_path.is_empty(),
            Rows::Lines | Rows::Errors => false,
        };
        if rows_of_lines
            && self.source.data.format.envelope.fields_key().is_some()
            && !projection.iter().any(among_fields)
        {
            self.want = Want::Text;
        }
        self
    }

    pub(crate) fn row_bytes(&self) -> u64 {
        self.row_bytes
    }

    pub(crate) fn clear_row_bytes(&mut self) {
        self.row_bytes = 0;
    }

    /// Starts a file.
    pub fn start_file(&mut self, file: &Arc<SourceFile>, decoder: &mut RowDecoder) {
        decoder.start_file(FileContext::new(&self.source.table.columns, file));
        self.file = Some(file.clone());
        self.turn = None;
        self.ended = None;
        self.in_turn = false;
        self.carried.iter_mut().for_each(|value| *value = None);
        self.checkers.clear();
        self.rows_left = None;
    }

    /// Starts a file known to hold `rows` rows of the table: once they are read, its other lines
    /// are passed over unread.
    pub(crate) fn start_file_holding(&mut self, file: &Arc<SourceFile>, decoder: &mut RowDecoder, rows: u64) {
        self.start_file(file, decoder);
        self.rows_left = Some(rows);
    }

    /// What the lines read of the current file so far leave for the lines after them: a read
    /// of the rest of the file [`LineReader::resume_file`]s from it.
    pub(crate) fn state(&self) -> ReaderState {
        ReaderState {
            turn: self.turn,
            ended: self.ended,
            in_turn: self.in_turn,
            carried: self.carried.clone(),
        }
    }

    /// Starts reading a file on from where an earlier read of its first lines left `state`.
    pub(crate) fn resume_file(
        &mut self,
        file: &Arc<SourceFile>,
        decoder: &mut RowDecoder,
        state: &ReaderState,
    ) {
        self.start_file(file, decoder);
        self.turn = state.turn;
        self.ended = state.ended;
        self.in_turn = state.in_turn;
        if state.carried.len() == self.carried.len() {
            self.carried.clone_from(&state.carried);
        }
    }

    fn table(&self) -> &EventTable {
        &self.source.table
    }

    /// Notes a value read as null because it did not fit its column.
    fn record(&self, line: u64, column: &str) {
        if let Some(nulled) = &self.nulled {
            nulled.add(1);
        }
        let file = self.file.as_ref().map(|f| f.path.clone()).unwrap_or_default();
        self.source.problems.record(Problem::NulledValue { file, line, column: column.to_string() });
    }

    /// Reads one line into `decoder`, counting its bytes when it made a row.
    pub fn line(&mut self, line: Line<'_>, decoder: &mut RowDecoder) {
        let length = match &line {
            Line::Whole { bytes, .. } | Line::Unterminated { bytes, .. } => bytes.len() as u64,
            Line::TooLong { head, .. } => head.len() as u64,
        };
        if self.rows_left == Some(0) {
            return;
        }
        let rows = decoder.rows();
        self.read(line, decoder);
        if decoder.rows() > rows {
            self.row_bytes += length;
            let made = (decoder.rows() - rows) as u64;
            self.rows_left = self.rows_left.map(|left| left.saturating_sub(made));
        }
    }

    /// Whether a line may hold a row, or a value the rows carry or follow the turn by: false when
    /// its type, told without parsing it, says it cannot.
    fn may_be_wanted(&self, bytes: &[u8]) -> bool {
        let envelope = &self.source.data.format.envelope;
        let (Some(wanted), Some(quick)) = (&self.wanted, quick_type_of(bytes, envelope)) else {
            return true;
        };
        let followed = self.turn_from.is_some_and(|(event, _)| event == quick)
            || self.early.is_some_and(|early| early.end == quick);
        if followed {
            return true;
        }
        let carried = || {
            (self.carried_from.iter().zip(&self.carried_needed))
                .filter(|(_, needed)| **needed)
                .map(|((event, ..), _)| *event)
        };
        if !envelope.may_be(quick, wanted) && !carried().any(|event| envelope.may_be(quick, event)) {
            return false;
        }
        // A refined type's second part, where it is written the usual way, tells more.
        let Some(refinement) = quick_refinement_of(bytes, envelope, quick) else { return true };
        let is = |name: &str| name.strip_prefix(quick).and_then(|r| r.strip_prefix('.')) == Some(refinement);
        is(wanted) || carried().any(is)
    }

    /// Reads one line into `decoder`: a row, a row of `errors`, or nothing.
    fn read(&mut self, line: Line<'_>, decoder: &mut RowDecoder) {
        let (number, bytes, last) = match line {
            Line::Whole { number, bytes } => (number, bytes, false),
            Line::Unterminated { number, bytes } => (number, bytes, true),
            Line::TooLong { number, length, head } => {
                let damage = Damage::TooLong { length, limit: self.source.max_line_bytes };
                return self.damaged(number, &String::from_utf8_lossy(head), &damage, decoder);
            }
        };
        if !self.may_be_wanted(bytes) {
            return;
        }
        let envelope = &self.source.data.format.envelope;
        if self.source.data.format.lines_table.is_some() {
            return self.whole_line(number, bytes, last, decoder);
        }
        let event = match parse_line_event(bytes, envelope, self.want, self.line_keys) {
            Ok(event) => event,
            // A last line cut off by a crash (or still being written) is skipped silently.
            Err(_) if last && crate::json::is_cut_off(bytes) => return,
            Err(damage) => {
                return self.damaged(number, &String::from_utf8_lossy(bytes), &damage, decoder);
            }
        };
        for (at, (event_type, key, first)) in self.carried_from.iter().enumerate() {
            if self.carried_needed[at]
                && event.type_name == *event_type
                && !(*first && self.carried[at].is_some())
                && let Some(value) = string_at(&event, self.want, key)
            {
                self.carried[at] = Some(value);
            }
        }
        if let Some((event_type, field)) = self.turn_from
            && event.type_name == event_type
        {
            self.turn = int_field(&event, self.want, field);
            (self.in_turn, self.ended) = (true, None);
        }
        if let (Some(early), Some((_, field))) = (self.early, self.turn_from)
            && event.type_name.as_ref() == early.end
        {
            let ended = int_field(&event, self.want, field);
            (self.in_turn, self.ended) = (false, ended.or(self.turn));
        }
        // A line written before its turn's own lines falls in the turn about to begin.
        let turn = match self.early {
            Some(early) if !self.in_turn && early.types.contains(&event.type_name.as_ref()) => {
                Some(self.ended.map_or(0, |ended| ended.saturating_add(1)))
            }
            _ => self.turn,
        };
        let (fields, fields_text, line_keys) = (event.fields, event.fields_text, event.line);
        let type_name = event.type_name.as_ref();
        match &self.source.table.rows {
            Rows::Type(wanted) if wanted != type_name => {}
            Rows::Type(_) => {
                let path: Vec<&str> = self.table().fields_path.iter().map(String::as_str).collect();
                let fields = descend(fields, &path);
                if fields.is_none() {
                    self.record(number, &path.join("."));
                }
                let values = LineValues {
                    line: number,
                    turn,
                    type_name: Some(type_name),
                    fields: fields.as_ref(),
                    line_keys: line_keys.as_ref(),
                    carried: &self.carried,
                    ..Default::default()
                };
                decoder.push(&values, &mut self.problems);
                for problem in std::mem::take(&mut self.problems) {
                    self.record(number, &problem.column);
                }
            }
            Rows::AllEvents => {
                let values = LineValues {
                    line: number,
                    turn,
                    type_name: Some(type_name),
                    fields: Some(&fields),
                    fields_text: Some(fields_text),
                    line_keys: line_keys.as_ref(),
                    carried: &self.carried,
                    ..Default::default()
                };
                decoder.push(&values, &mut self.problems);
                for problem in std::mem::take(&mut self.problems) {
                    self.record(number, &problem.column);
                }
            }
            Rows::Lines => {}
            Rows::Errors => {
                // A line that parsed is valid UTF-8.
                let text = std::str::from_utf8(bytes).unwrap_or_default();
                self.check_values(number, type_name, fields, text, decoder)
            }
        }
    }

    /// For a format read as a table of lines: any JSON object is a row, anything else damage.
    fn whole_line(&mut self, number: u64, bytes: &[u8], last: bool, decoder: &mut RowDecoder) {
        let text = String::from_utf8_lossy(bytes);
        match crate::json::parse_line_object(bytes) {
            Ok(_) if self.source.table.rows != Rows::Lines => {}
            Ok(object) => {
                let values = LineValues {
                    line: number,
                    fields: Some(&object),
                    fields_text: Some(&text),
                    ..Default::default()
                };
                decoder.push(&values, &mut self.problems);
                for problem in std::mem::take(&mut self.problems) {
                    self.record(number, &problem.column);
                }
            }
            Err(_) if last && crate::json::is_cut_off(bytes) => {}
            Err(damage) => self.damaged(number, &text, &damage, decoder),
        }
    }

    /// For `errors`: a row for each value of the line that does not fit its column.
    fn check_values(
        &mut self,
        number: u64,
        type_name: &str,
        fields: crate::json::RawObject<'_>,
        text: &str,
        decoder: &mut RowDecoder,
    ) {
        let Some(table) = self.source.data.type_table(type_name) else { return };
        let path: Vec<&str> = table.fields_path.iter().map(String::as_str).collect();
        let fields = descend(fields, &path);
        let mut problems = Vec::new();
        if fields.is_none() {
            problems.push(NulledValue { column: path.join("."), why: "missing or not an object".into() });
        }
        // A checker keeps nothing a later line needs: a file of many types keeps a few at a time.
        if self.checkers.len() >= MAX_CHECKERS && !self.checkers.contains_key(type_name) {
            self.checkers.clear();
        }
        let checker = match self.checkers.get_mut(type_name) {
            Some(checker) => checker,
            None => self.checkers.entry(type_name.to_string()).or_insert_with(|| RowDecoder::checker(table)),
        };
        let values = LineValues { line: number, fields: fields.as_ref(), ..Default::default() };
        checker.push(&values, &mut problems);
        if checker.rows() >= 1024 {
            let _ = checker.finish();
        }
        for problem in problems {
            self.problem_row(
                number,
                &format!("{type_name}.{}: {}", problem.column, problem.why),
                text,
                decoder,
            );
        }
    }

    /// A damaged line is in no table but `errors` (the inference pass counted it already).
    fn damaged(&mut self, number: u64, text: &str, damage: &Damage, decoder: &mut RowDecoder) {
        if self.source.table.rows == Rows::Errors {
            self.problem_row(number, &damage.to_string(), text, decoder);
        }
    }

    /// One row of `errors`.
    fn problem_row(&self, number: u64, reason: &str, text: &str, decoder: &mut RowDecoder) {
        let values = LineValues {
            line: number,
            turn: self.turn,
            carried: &self.carried,
            problem: Some(reason),
            excerpt: Some(excerpt(text, EXCERPT_CHARS)),
            ..Default::default()
        };
        decoder.push(&values, &mut Vec::new());
    }
}

/// The string at `key` (`a.b` for a nested one) among an event's fields, whether they were parsed
/// or kept as text; `None` when absent or not a string.
fn string_at(event: &crate::json::Event<'_>, want: Want, key: &str) -> Option<String> {
    let parsed;
    let fields = match want {
        Want::Fields => event.fields.clone(),
        Want::Text => {
            parsed = crate::json::parse_object_text(event.fields_text).unwrap_or_default();
            parsed
        }
    };
    let mut path: Vec<&str> = key.split('.').collect();
    let last = path.pop()?;
    let object = descend(fields, &path)?;
    let raw = object.get(last).filter(|raw| Shape::of(raw) == Shape::Str)?;
    crate::json::string(raw).map(|s| s.into_owned())
}

/// An event's integer field (`turn_idx`), whether its fields were parsed or kept as text; `None`
/// when absent or not an integer.
fn int_field(event: &crate::json::Event<'_>, want: Want, field: &str) -> Option<i64> {
    let parsed;
    let fields = match want {
        Want::Fields => &event.fields,
        Want::Text => {
            parsed = crate::json::parse_object_text(event.fields_text).unwrap_or_default();
            &parsed
        }
    };
    fields.get(field).filter(|r| Shape::of(r) == Shape::Int).and_then(|r| r.get().parse().ok())
}
