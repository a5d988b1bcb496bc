//! What a transcript format is, as data: where its files are, how a line's type is found, where its
//! fields live, what they mean, the derived tables built from them, and all else that is a
//! format's: how it is exported, its rows of the normalized tables, its report sections and canned
//! queries, the family of its models, and its words for users.
//!
//! One generic scan ([`crate::scan`]) reads every format; a format adds nothing but a description.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod reeval;
pub mod rupu;
pub(crate) mod rupu_netflow;

use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use std::sync::Arc;

/// A transcript format: everything the generic scan needs to know about it.
#[derive(Debug, Clone)]
pub struct Format {
    /// Its own name, unique among the formats (formats may share a schema `name`): how a plan
    /// sent to a cluster names it ([`by_id`]).
    pub id: &'static str,
    /// The SQL schema its tables live in (`rupu`, `reeval`).
    pub name: &'static str,
    /// One line for the docs (docs/tables.md, rendered by the tests).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) about: &'static str,
    /// Directories searched when txq is given no path, relative to the working directory
    /// (`~/` means the home directory). The first one that exists of each group wins.
    pub(crate) default_roots: &'static [&'static [&'static str]],
    /// Which files under a searched directory belong to this format.
    pub(crate) files: FileMatch,
    /// What its transcripts are called and which files they are, in words for users: for the help,
    /// and for what a search that found nothing looked for (`None`: a search is not for this
    /// format's files alone, as for files beside another's).
    pub(crate) looked_for: Option<LookedFor>,
    /// Where this format's files lie beside another format's directory, so that searching that
    /// directory searches this one too (rupu's netflow ledgers beside its transcripts).
    pub(crate) beside: Option<Beside>,
    /// Where a file is a copy of another of the format's files, which is read instead.
    pub(crate) copies: Option<Copies>,
    /// Where a line's type and fields are.
    pub(crate) envelope: Envelope,
    /// Where a line's time is, for the month `txq archive` files it under: the first of these
    /// keys, at the top of the line or among its fields, that holds an RFC 3339 time (a line with
    /// none takes the time of the line before it in its file).
    pub(crate) times: &'static [&'static str],
    /// How a type is written as a table name.
    pub(crate) table_naming: Naming,
    /// How a field key is written as a column name.
    pub(crate) column_naming: Naming,
    /// A file in which no line has this type is not a transcript (rupu's step logs, netflow ledgers).
    pub(crate) required_type: Option<&'static str>,
    /// What the files of its naming with no `required_type` line are, in words for users (`step
    /// logs`, `netflow ledgers`), for the warning about them and the docs.
    pub(crate) not_transcripts: &'static [&'static str],
    /// How the harness names a project's folder after its working directory, where it does
    /// (`txq daily --project` takes that name too, as ccusage does).
    pub(crate) project_folder: Option<fn(&str) -> String>,
    /// Columns every event table of this format carries, taken from the file or its position.
    pub(crate) context: Vec<ContextColumn>,
    /// Fields every event carries whatever its type (reeval's `turn`, `ts`, `durationMs`).
    pub(crate) common_fields: Vec<FieldSpec>,
    /// The documented event types and their fields.
    pub events: Vec<EventSpec>,
    /// Derived tables, as SQL over the event tables of this format.
    pub(crate) views: Vec<View>,
    /// Instead of a table per type: one table of every line (a stream of parts that need no
    /// type), with its own errors table.
    pub lines_table: Option<LinesTable>,
    /// How `txq export` cuts this format's files into units, each exported, kept or redone whole.
    pub(crate) export: ExportUnits,
    /// Its rows of the normalized tables of the default schema (`calls`, `tool_calls`,
    /// `sessions`), each a query over its tables.
    pub(crate) normalized: Vec<Contribution>,
    /// Its own sections of the `txq report` page, for what only its data holds (reeval's tool
    /// failures by eval and cell); the sections every format fills are the report's.
    pub(crate) report_sections: Vec<ReportSection>,
    /// Its own canned queries (`txq query NAME`), for what only its data holds; the queries over
    /// every format's rows are `queries/`'s own.
    pub queries: &'static [FormatQuery],
    /// The models its agent calls, when they are one seller's: a price entry whose model id
    /// names the family is that seller's, whatever provider it gives (a cache read's price
    /// falls back by the seller's rule).
    pub model_family: Option<ModelFamily>,
}

/// A family of models by their ids' first word, and who sells them.
#[derive(Debug, Clone, Copy)]
pub struct ModelFamily {
    /// The word every id of the family holds (`claude-sonnet-4-5`, `anthropic.claude-3-haiku`).
    pub name: &'static str,
    /// The seller, as LiteLLM's `litellm_provider` names it.
    pub provider: &'static str,
}

/// A canned query a format owns: its name, and its SQL (a file of `queries/`, embedded).
#[derive(Debug, Clone, Copy)]
pub struct FormatQuery {
    pub name: &'static str,
    pub sql: &'static str,
}

/// The names the formats give a project's folder after its working directory `cwd`.
pub fn project_folders(cwd: &str) -> Vec<String> {
    all().iter().filter_map(|f| f.project_folder).map(|name| name(cwd)).collect()
}

/// A section of the report page that one format's data fills: the rows of one of its canned
/// queries (`queries/NAME.sql`) under a heading, with bar charts of some of their columns, a bar
/// per row.
#[derive(Debug, Clone)]
pub struct ReportSection {
    /// The section's id in the page (`#evals`).
    pub id: &'static str,
    /// The canned query whose rows it shows.
    pub query: &'static str,
    pub heading: &'static str,
    /// A sentence under the heading, said whatever the rows.
    pub note: Option<&'static str>,
    /// The columns whose values name a row's bar, joined by ` / `.
    pub bar_named_by: &'static [&'static str],
    pub charts: &'static [ReportChart],
}

/// A bar chart of a [`ReportSection`]: one column of its query, a bar per row.
#[derive(Debug, Clone, Copy)]
pub struct ReportChart {
    pub column: &'static str,
    /// What the column counts, said along its axis.
    pub unit: &'static str,
    pub title: &'static str,
    /// The bars' colour: a place in the report's palette.
    pub colour: usize,
}

/// A table of the default schema that every format with the data contributes rows to, with the
/// same columns whatever the format (`sql::normalized` has them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Normalized {
    /// One row per billed model call.
    Calls,
    /// One row per tool call.
    ToolCalls,
    /// One row per session; a format gives its sessions' times, cwd and file, and the counts and
    /// sums come from its calls and tool calls.
    Sessions,
    /// One row per rate-limit window a line reports (how much of the plan's quota was used).
    RateLimits,
}

impl Normalized {
    pub(crate) const ALL: [Normalized; 4] =
        [Normalized::Calls, Normalized::ToolCalls, Normalized::Sessions, Normalized::RateLimits];

    /// The table's name, in the default schema and in each contributing format's own.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Normalized::Calls => "calls",
            Normalized::ToolCalls => "tool_calls",
            Normalized::Sessions => "sessions",
            Normalized::RateLimits => "rate_limits",
        }
    }
}

/// A format's rows of a normalized table: a query over its tables, each named with the format's
/// schema (`claude.assistant`), whose columns are the table's by name (types are cast).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contribution {
    pub(crate) table: Normalized,
    pub(crate) sql: &'static str,
}

/// The units of an export: what is exported, kept or redone whole, and what its rows are
/// partitioned by.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExportUnits {
    /// Each row of `sql`, a query over the format's tables with the columns `file, id, run_id,
    /// open, day`, is a unit: a transcript, its id (stable across exports), its run, whether it
    /// is still being written, and the UTC day it began. Every transcript must have a row.
    Rows {
        sql: &'static str,
        /// What a unit is called, in the export's summary (`run`, `attempt`).
        noun: &'static str,
    },
    /// Each file joins the unit of format `schema` whose transcript has the same `key` (a
    /// transcript's raw stream beside it, a run's ledger); a file with none is a unit of its
    /// own, with the id `<alone>/<file>`.
    Joins {
        schema: &'static str,
        key: fn(&std::path::Path) -> Option<std::path::PathBuf>,
        alone: &'static str,
        noun: &'static str,
    },
}

impl ExportUnits {
    pub(crate) fn noun(&self) -> &'static str {
        match self {
            ExportUnits::Rows { noun, .. } | ExportUnits::Joins { noun, .. } => noun,
        }
    }
}

/// A format read as one table of whole lines.
#[derive(Debug, Clone)]
pub struct LinesTable {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    /// The column holding the whole line as JSON text.
    pub(crate) line_column: &'static str,
    /// The table of its damaged lines.
    pub(crate) errors_name: &'static str,
}

/// What a format's transcripts are called and where they are, in words for users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LookedFor {
    /// What they are called (`Claude Code sessions`).
    pub(crate) transcripts: &'static str,
    /// Which files they are (`projects/*/*.jsonl`).
    pub(crate) files: &'static str,
}

/// A directory of a format's files beside a directory another format searches: when a directory
/// named `searched` is searched, its sibling named `folder` is searched too, if it exists
/// (`.rupu/transcripts` → `.rupu/netflow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Beside {
    pub(crate) searched: &'static str,
    pub(crate) folder: &'static str,
}

/// A file under a folder named `copy` whose name is that of a file under a folder named `kept`
/// is a copy of it, and is not read: Codex keeps a thread in `sessions/YYYY/MM/DD/` and may
/// leave an older copy in `archived_sessions/` (names compared as claimed: without `.zst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Copies {
    pub(crate) kept: &'static str,
    pub(crate) copy: &'static str,
}

/// Which files a format reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileMatch {
    /// Any file with this extension (`jsonl`).
    Extension(&'static str),
    /// Files with exactly this name (`transcript.jsonl`).
    Name(&'static str),
    /// Files with this extension whose own folder has this name (`netflow/<run_id>.jsonl`).
    InFolder { folder: &'static str, extension: &'static str },
    /// Files whose path ends as one of these patterns does, whatever folder was searched
    /// (`projects/*/*.jsonl` under a Claude Code home): `*` stands for a name or part of one,
    /// `**` for any number of folders.
    Patterns(&'static [&'static str]),
}

impl FileMatch {
    /// Whether a file of this name, in a folder of this name, belongs to the format.
    pub(crate) fn matches(&self, file_name: &str, folder: Option<&str>) -> bool {
        let has_extension =
            |ext: &str| file_name.rsplit_once('.').is_some_and(|(stem, e)| !stem.is_empty() && e == ext);
        match self {
            FileMatch::Extension(ext) => has_extension(ext),
            FileMatch::Name(name) => file_name == *name,
            FileMatch::InFolder { folder: wanted, extension } => {
                folder == Some(*wanted) && has_extension(extension)
            }
            // Matched on the whole path, by discovery's compiled patterns.
            FileMatch::Patterns(_) => false,
        }
    }

    /// Which claims first when two formats' rules match a file: an exact name, then a path
    /// pattern, then a folder, then an extension alone.
    pub(crate) fn claim_rank(&self) -> u8 {
        match self {
            FileMatch::Name(_) => 0,
            FileMatch::Patterns(_) => 1,
            FileMatch::InFolder { .. } => 2,
            FileMatch::Extension(_) => 3,
        }
    }
}

/// Whether a file is compressed (zstd): named `<name>.zst`, read as its decompressed lines and
/// claimed, by every format, as the file `<name>` would be (a rollout idle for a week is kept as
/// `rollout-*.jsonl.zst`).
pub(crate) fn is_compressed(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "zst") && path.file_stem().is_some_and(|s| !s.is_empty())
}

/// The name a file is claimed by: a compressed file's without its `.zst`.
pub(crate) fn claimed_name(path: &std::path::Path) -> Option<&std::ffi::OsStr> {
    if is_compressed(path) { path.file_stem() } else { path.file_name() }
}

/// The stem of the name a file is claimed by: `run_1` for `run_1.jsonl` and `run_1.jsonl.zst`.
pub(crate) fn claimed_stem(path: &std::path::Path) -> Option<&std::ffi::OsStr> {
    std::path::Path::new(claimed_name(path)?).file_stem()
}

/// Where a line's type and fields are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Envelope {
    /// How a line's type is found.
    pub(crate) types: TypeRule,
    /// Where the event's fields are.
    pub(crate) fields: FieldsAt,
}

/// How a line's type is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeRule {
    /// The string at this top-level key, wherever it is among the others (`type`).
    Key(&'static str),
    /// The string at `key`; for the types in `refined`, followed by `.` and the string at `sub`
    /// among the event's fields, when it has one: Codex's `{"type": "event_msg", "payload":
    /// {"type": "token_count", ..}}` is of type `event_msg.token_count`.
    Refined { key: &'static str, refined: &'static [&'static str], sub: &'static str },
    /// Which top-level keys the line has: the first rule that fits names its type (Gemini CLI's
    /// metadata, message, `$set` and `$rewindTo` lines). A line no rule fits has no type: damage.
    ByKeys(&'static [KeyRule]),
}

/// A line is of type `type_name` when it has the top-level key `key` with a value of `shape`,
/// and the keys `also` with any value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyRule {
    pub(crate) key: &'static str,
    pub(crate) shape: KeyShape,
    pub(crate) also: &'static [&'static str],
    pub(crate) type_name: &'static str,
}

/// The shape a [`KeyRule`]'s key must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyShape {
    Str,
    Object,
}

impl Envelope {
    /// The key the fields are under, if they are under one.
    pub(crate) fn fields_key(&self) -> Option<&'static str> {
        match self.fields {
            FieldsAt::Under(key) => Some(key),
            FieldsAt::Beside => None,
        }
    }

    /// The top-level key whose string is the type (or the first part of it), if there is one.
    pub(crate) fn type_key(&self) -> Option<&'static str> {
        match self.types {
            TypeRule::Key(key) | TypeRule::Refined { key, .. } => Some(key),
            TypeRule::ByKeys(_) => None,
        }
    }

    /// The key among an event of `type_name`'s fields that holds (part of) its type, and is no
    /// column: the type key when the fields are beside it, the refining key of a refined type.
    pub(crate) fn type_key_among_fields(&self, type_name: &str) -> Option<&'static str> {
        match (self.types, self.fields) {
            (TypeRule::Key(key), FieldsAt::Beside) => Some(key),
            (TypeRule::Refined { key, refined, sub }, fields) => {
                let refined_type =
                    type_name.split_once('.').is_some_and(|(outer, _)| refined.contains(&outer));
                if refined_type { Some(sub) } else { matches!(fields, FieldsAt::Beside).then_some(key) }
            }
            _ => None,
        }
    }

    /// Whether a line whose type key says `quick` may be of type `wanted` (for a refined type,
    /// whether `quick` is its first part).
    pub(crate) fn may_be(&self, quick: &str, wanted: &str) -> bool {
        match self.types {
            TypeRule::Refined { refined, .. } if refined.contains(&quick) => {
                wanted == quick || wanted.strip_prefix(quick).is_some_and(|rest| rest.starts_with('.'))
            }
            _ => wanted == quick,
        }
    }
}

/// Where an event's fields are within its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldsAt {
    /// In the object under this top-level key (`{"type": .., "data": {..}}`).
    Under(&'static str),
    /// Beside the type, in the line's own object (`{"type": .., "turn": 0, ..}`).
    Beside,
}

/// How a name in the data becomes an SQL name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// As written.
    AsIs,
    /// `-` becomes `_` (`turn-end` → `turn_end`).
    DashToUnderscore,
    /// camelCase becomes snake_case (`durationMs` → `duration_ms`).
    SnakeCase,
    /// The part after the last `.` (a refined type's own part: `event_msg.token_count` →
    /// `token_count`), `-` made `_`.
    LastPart,
}

impl Naming {
    /// The SQL name for a name in the data.
    pub fn apply(&self, name: &str) -> String {
        match self {
            Naming::AsIs => name.to_string(),
            Naming::DashToUnderscore => name.replace('-', "_"),
            Naming::LastPart => name.rsplit('.').next().unwrap_or(name).replace('-', "_"),
            Naming::SnakeCase => {
                let mut out = String::with_capacity(name.len() + 4);
                for (i, c) in name.chars().enumerate() {
                    if c.is_ascii_uppercase() {
                        if i > 0 {
                            out.push('_');
                        }
                        out.push(c.to_ascii_lowercase());
                    } else if c == '-' {
                        out.push('_');
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }
}

/// A documented event type.
#[derive(Debug, Clone)]
pub struct EventSpec {
    /// The type as written in the data.
    pub type_name: &'static str,
    /// What the event records.
    pub(crate) about: &'static str,
    /// A path of object keys below the fields (`["flow"]` for rupu's `net_flow`), whose object's
    /// keys are the columns instead.
    pub(crate) fields_path: &'static [&'static str],
    /// The documented fields.
    pub(crate) fields: Vec<FieldSpec>,
}

/// A documented field.
#[derive(Debug, Clone)]
pub(crate) struct FieldSpec {
    /// The key as written in the data; `a.b.c` is the key `c` of the object at `b` of the object
    /// at `a` (Claude Code's `message.usage.input_tokens`).
    pub(crate) key: &'static str,
    /// The column's name, when not the (last) key's under the format's naming.
    pub(crate) name: Option<&'static str>,
    /// Its type.
    pub(crate) kind: Kind,
    /// The value a missing key stands for.
    pub(crate) absent: Absent,
    /// What it means.
    pub(crate) about: &'static str,
    /// A column computed from this key's value rather than the value itself.
    pub(crate) derive: Option<Derive>,
    /// The key is the line's own, beside the type and the key the fields are under, not among
    /// the fields (Codex's `timestamp` beside `payload`).
    pub(crate) on_line: bool,
}

/// A column computed from a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derive {
    /// From a truncation marker `<prefix><omitted> of <total> characters, sha256 <hash>]` inside
    /// a text value (reeval's tool output over 128 KB).
    TruncationMarker { prefix: &'static str, part: MarkerPart },
}

/// Which part of a truncation marker a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkerPart {
    /// Whether the value carries the marker (boolean; null when the value is null).
    Present,
    /// The whole value's length in characters (bigint; null without a marker).
    TotalChars,
    /// The whole value's sha256 (text; null without a marker).
    Sha256,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Absent {
    /// Unknown: SQL null.
    Null,
    /// Never missing: a missing key or null is damage, read as null and listed in `errors`. A
    /// key of a nested object is required where that object is: with the object absent, it is
    /// null, and no damage of its own.
    Required,
    /// A boolean flag omitted when it has this value.
    Bool(bool),
    /// A count omitted when it has this value; written as null, it is damage.
    Int(i64),
}

/// The largest value of a [`Kind::Count`] column: 2<sup>32</sup> − 1, four billion tokens, far
/// beyond any call or run; 2<sup>31</sup> of them still sum within a bigint.
pub(crate) const MAX_COUNT: i64 = (1 << 32) - 1;

/// The type of a field's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A JSON integer, as Int64 (`1.0` and `1e2` are integers too).
    Int,
    /// A count of tokens, as Int64: a whole number from 0 to [`MAX_COUNT`]; any other value is
    /// damage, so that no sum of fewer than 2<sup>31</sup> counts can wrap around.
    Count,
    /// Any JSON number, as Float64.
    Float,
    /// A JSON string.
    Str,
    /// A JSON boolean.
    Bool,
    /// An RFC 3339 string, as a UTC timestamp (microseconds).
    Timestamp,
    /// Any JSON value, kept as JSON text for the JSON functions (`->>`, `json_get_str`).
    Json,
    /// A JSON array whose items are of one kind.
    List(Box<Kind>),
    /// A JSON object of a documented shape.
    Struct(Vec<(&'static str, Kind)>),
}

impl Kind {
    /// The Arrow type of the column.
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            Kind::Int | Kind::Count => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Str | Kind::Json => DataType::Utf8,
            Kind::Bool => DataType::Boolean,
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::List(item) => DataType::List(Arc::new(Field::new("item", item.data_type(), true))),
            Kind::Struct(fields) => DataType::Struct(Fields::from(
                fields
                    .iter()
                    .map(|(name, kind)| Field::new(*name, kind.data_type(), true))
                    .collect::<Vec<_>>(),
            )),
        }
    }

    /// The SQL-ish name shown in `\d` and the docs.
    pub(crate) fn describe(&self) -> String {
        match self {
            Kind::Int => "bigint".into(),
            Kind::Count => "bigint (a count)".into(),
            Kind::Float => "double".into(),
            Kind::Str => "text".into(),
            Kind::Bool => "boolean".into(),
            Kind::Timestamp => "timestamp (UTC)".into(),
            Kind::Json => "json text".into(),
            Kind::List(item) => format!("list<{}>", item.describe()),
            Kind::Struct(fields) => format!(
                "struct<{}>",
                fields.iter().map(|(n, k)| format!("{n}: {}", k.describe())).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// A column every event table of a format carries.
#[derive(Debug, Clone)]
pub(crate) struct ContextColumn {
    /// The column name.
    pub(crate) name: &'static str,
    /// Where its value comes from.
    pub(crate) source: ContextSource,
    /// What it means.
    pub(crate) about: &'static str,
}

/// Where a context column's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContextSource {
    /// The file name without its extension (text).
    FileStem,
    /// The file's path as found (text).
    FilePath,
    /// The 1-based line number in the file (bigint).
    LineNumber,
    /// The name of the `n`th directory above the file, 1 being its own folder (text).
    Ancestor(usize),
    /// The `n`th directory above the file, read as an integer (bigint; null if it is not one).
    AncestorInt(usize),
    /// Whether the file lies under a directory with this name (boolean).
    UnderDirectory(&'static str),
    /// Whether the file lies under this sequence of directories, e.g. `evals/.history` (boolean).
    UnderPath(&'static [&'static str]),
    /// The name of the directory just inside the nearest one above the file with this name
    /// (`projects` → the project folder of `projects/<project>/…`); null when there is none.
    Below(&'static str),
    /// The value of `field` on the last line of type `event` at or before this one, null before
    /// the first (bigint). With `early`, lines of those types are taken as written before the
    /// span they belong to (see [`Early`]).
    LastSeen { event: &'static str, field: &'static str, early: Option<Early> },
    /// The text of the file `name` in the directory just inside the nearest one above the file
    /// named `below`, its spaces and line ends trimmed (Gemini CLI's `tmp/<slug>/.project_root`,
    /// which names the project's directory); null when there is none or it cannot be read.
    FileText { below: &'static str, name: &'static str },
    /// The string at `key` (`a.b` for a nested key) among the fields of the latest line of type
    /// `event` at or before this one in the file that has a string there (the first such line's,
    /// with `first`), null before it (text): Codex's model from the latest `turn_context`, its
    /// thread from the first `session_meta`.
    Carried { event: &'static str, key: &'static str, first: bool },
}

impl ContextSource {
    /// Whether the value is the same for every line of a file (so a filter on it can skip whole
    /// files, and a file's row of `files` holds it); the line's number and a value carried from
    /// an earlier line are not.
    pub(crate) fn is_per_file(&self) -> bool {
        !matches!(
            self,
            ContextSource::LineNumber | ContextSource::LastSeen { .. } | ContextSource::Carried { .. }
        )
    }
}

impl ContextSource {
    /// The Arrow type of the column.
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            ContextSource::FileStem
            | ContextSource::FilePath
            | ContextSource::Ancestor(_)
            | ContextSource::Below(_)
            | ContextSource::FileText { .. }
            | ContextSource::Carried { .. } => DataType::Utf8,
            ContextSource::LineNumber | ContextSource::AncestorInt(_) | ContextSource::LastSeen { .. } => {
                DataType::Int64
            }
            ContextSource::UnderDirectory(_) | ContextSource::UnderPath(_) => DataType::Boolean,
        }
    }
}

/// Lines of some types written at once by a second writer while the format's own lines of a span
/// (from an `event` line to its `end` line) are buffered and land after them, as rupu's netflow
/// sink writes `net_flow` before the runner flushes that turn's `turn_start`. Such a line inside
/// a span (after `event`, before its `end`) falls in that span; one between spans falls in the
/// span about to begin: the last `end` line's `field` + 1, or 0 before the first span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Early {
    /// The type whose line ends a span (`turn_end`).
    pub(crate) end: &'static str,
    /// The types written early (`net_flow`).
    pub(crate) types: &'static [&'static str],
}

/// A derived table, defined in SQL over the format's own tables.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// The table name.
    pub(crate) name: &'static str,
    /// What one row is.
    pub(crate) about: &'static str,
    /// The query; table names in it are resolved in the format's schema.
    pub(crate) sql: &'static str,
    /// Each column and what it means, in the order of the query.
    pub(crate) columns: &'static [(&'static str, &'static str)],
}

/// Builders for the descriptions, so they read as tables of fields.
pub(crate) mod build {
    use super::{Absent, EventSpec, FieldSpec, Kind};

    pub(crate) use named_field as named;

    pub(crate) fn event(type_name: &'static str, about: &'static str, fields: Vec<FieldSpec>) -> EventSpec {
        EventSpec { type_name, about, fields_path: &[], fields }
    }

    pub(crate) fn field(key: &'static str, kind: Kind, about: &'static str) -> FieldSpec {
        FieldSpec { key, name: None, kind, absent: Absent::Null, about, derive: None, on_line: false }
    }

    /// A field whose column is named `name`, not after its key (for a nested key: `message.id`
    /// as `message_id`).
    pub(crate) fn named_field(
        key: &'static str,
        name: &'static str,
        kind: Kind,
        about: &'static str,
    ) -> FieldSpec {
        FieldSpec { key, name: Some(name), kind, absent: Absent::Null, about, derive: None, on_line: false }
    }

    /// A boolean flag omitted when false.
    pub(crate) fn flag(key: &'static str, about: &'static str) -> FieldSpec {
        FieldSpec {
            key,
            name: None,
            kind: Kind::Bool,
            absent: Absent::Bool(false),
            about,
            derive: None,
            on_line: false,
        }
    }

    /// A field that is the line's own, beside the key the fields are under.
    pub(crate) fn line_field(key: &'static str, kind: Kind, about: &'static str) -> FieldSpec {
        FieldSpec { on_line: true, ..field(key, kind, about) }
    }

    pub(crate) fn list(kind: Kind) -> Kind {
        Kind::List(Box::new(kind))
    }

    pub(crate) fn strs() -> Kind {
        list(Kind::Str)
    }
}

/// What a search of the paths looked for, in words: `rupu transcripts (...) and reeval attempts
/// (...)`.
pub(crate) fn looked_for(formats: &[Format]) -> String {
    let wanted: Vec<String> = formats
        .iter()
        .filter_map(|f| f.looked_for)
        .map(|l| format!("{} ({})", l.transcripts, l.files))
        .collect();
    match wanted.is_empty() {
        true => String::from("transcripts"),
        false => crate::text::words::listed(&wanted),
    }
}

/// What the formats' transcripts are called, in words: `rupu transcripts, reeval attempts, ...
/// and Gemini CLI chats`.
pub fn transcripts_read(formats: &[Format]) -> String {
    let named: Vec<&str> = formats.iter().filter_map(|f| f.looked_for).map(|l| l.transcripts).collect();
    crate::text::words::listed(&named)
}

/// The places searched when txq is given no path, in words: each group of each format's default
/// roots once, its first place then the others it falls back to (`./.rupu/transcripts (else
/// ~/.rupu/transcripts)`); a place relative to the working directory is written with `./`.
pub fn default_places(formats: &[Format]) -> String {
    let shown = |root: &str| match root.starts_with(['~', '$', '/']) {
        true => root.to_string(),
        false => format!("./{root}"),
    };
    let mut groups: Vec<&[&str]> = Vec::new();
    for group in formats.iter().flat_map(|f| f.default_roots.iter().copied()) {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    let places: Vec<String> = groups
        .iter()
        .filter_map(|group| {
            let (first, rest) = group.split_first()?;
            let rest: Vec<String> = rest.iter().map(|r| shown(r)).collect();
            Some(match rest.is_empty() {
                true => shown(first),
                false => format!("{} (else {})", shown(first), rest.join(", ")),
            })
        })
        .collect();
    places.join(", ")
}

/// Every format txq knows, in the order their tables resolve when unqualified.
pub fn all() -> Vec<Format> {
    vec![
        rupu::format(),
        reeval::format(),
        reeval::raw_format(),
        rupu_netflow::format(),
        claude::format(),
        codex::format(),
        gemini::format(),
    ]
}

/// The format of id `id` ([`Format::id`]).
pub fn by_id(id: &str) -> Option<Format> {
    all().into_iter().find(|f| f.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_an_id_of_its_own() {
        let formats = all();
        let mut ids: Vec<&str> = formats.iter().map(|f| f.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), formats.len());
        assert!(formats.iter().all(|f| by_id(f.id).is_some_and(|g| g.id == f.id && g.name == f.name)));
    }

    #[test]
    fn the_help_names_every_formats_transcripts_and_default_places_from_the_descriptions() {
        let formats = all();
        assert_eq!(
            transcripts_read(&formats),
            "rupu transcripts, reeval attempts, Claude Code sessions, Codex CLI rollouts and Gemini CLI chats"
        );
        assert_eq!(
            default_places(&formats),
            "./.rupu/transcripts (else ~/.rupu/transcripts), ./.reeval/runs, ./evals/.history, \
             $CLAUDE_CONFIG_DIR/projects (else ~/.claude/projects), ~/.config/claude/projects, \
             $CODEX_HOME/sessions (else ~/.codex/sessions), $CODEX_HOME/archived_sessions (else \
             ~/.codex/archived_sessions), $GEMINI_CLI_HOME/.gemini/tmp (else ~/.gemini/tmp)"
        );
        assert_eq!(
            looked_for(&formats[..2]),
            "rupu transcripts (*.jsonl files with a run_start line) and reeval attempts (transcript.jsonl)"
        );
    }

    #[test]
    fn naming_rules() {
        assert_eq!(Naming::SnakeCase.apply("durationMs"), "duration_ms");
        assert_eq!(Naming::SnakeCase.apply("toolCallId"), "tool_call_id");
        assert_eq!(Naming::SnakeCase.apply("ts"), "ts");
        assert_eq!(Naming::DashToUnderscore.apply("turn-end"), "turn_end");
        assert_eq!(Naming::AsIs.apply("tool_call"), "tool_call");
    }

    #[test]
    fn file_matching() {
        assert!(FileMatch::Extension("jsonl").matches("run_01.jsonl", None));
        assert!(!FileMatch::Extension("jsonl").matches(".jsonl", None));
        assert!(!FileMatch::Extension("jsonl").matches("run.json", None));
        assert!(FileMatch::Name("transcript.jsonl").matches("transcript.jsonl", None));
        assert!(!FileMatch::Name("transcript.jsonl").matches("transcript.raw.jsonl", None));
        let ledger = FileMatch::InFolder { folder: "netflow", extension: "jsonl" };
        assert!(ledger.matches("run_01.jsonl", Some("netflow")));
        assert!(!ledger.matches("run_01.jsonl", Some("transcripts")));
        assert!(!ledger.matches("run_01.jsonl", None));
    }

    #[test]
    fn a_compressed_file_is_claimed_and_named_as_the_file_inside() {
        use std::path::Path;
        for (path, compressed, name, stem) in [
            ("d/run_1.jsonl.zst", true, "run_1.jsonl", "run_1"),
            ("d/run_1.jsonl", false, "run_1.jsonl", "run_1"),
            ("d/transcript.jsonl.zst", true, "transcript.jsonl", "transcript"),
            ("d/x.zst", true, "x", "x"),
            ("d/.zst", false, ".zst", ".zst"),
        ] {
            let path = Path::new(path);
            assert_eq!(is_compressed(path), compressed, "{path:?}");
            assert_eq!(claimed_name(path).unwrap(), name, "{path:?}");
            assert_eq!(claimed_stem(path).unwrap(), stem, "{path:?}");
        }
    }
}
