//! What the inference pass learns, as data: per field the set of shapes its values took, per
//! event type its fields and count, per file its types (whole and in a cut-off tail) and damage,
//! and per format the sum over its files.

use crate::json::Shape;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The set of shapes a field's values took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct ShapeSet(u8);

impl ShapeSet {
    pub(crate) fn add(&mut self, shape: Shape) {
        self.0 |= 1 << shape as u8;
    }
    pub(crate) fn union(&mut self, other: ShapeSet) {
        self.0 |= other.0;
    }
    fn union_of(self, other: ShapeSet) -> ShapeSet {
        ShapeSet(self.0 | other.0)
    }
    /// The set as one byte (for the cache).
    pub(crate) fn bits(self) -> u8 {
        self.0
    }
    pub(crate) fn from_bits(bits: u8) -> ShapeSet {
        ShapeSet(bits)
    }
    /// The shapes other than null.
    pub(crate) fn non_null(&self) -> ShapeSet {
        ShapeSet(self.0 & !(1 << Shape::Null as u8))
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0 == 0
    }
    fn only(shape: Shape) -> ShapeSet {
        ShapeSet(1 << shape as u8)
    }
    /// Whether every value fits in one of the `allowed` shapes.
    pub(crate) fn within(&self, allowed: &[Shape]) -> bool {
        let mask = allowed.iter().fold(0u8, |m, s| m | ShapeSet::only(*s).0);
        self.non_null().0 & !mask == 0
    }
}

/// Each key found among a type's fields, in the order first seen, with its values' shapes.
pub(crate) type FieldShapes = Vec<(String, ShapeSet)>;

/// What one event type looked like in the data.
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeStats {
    /// How many valid events of the type.
    pub(crate) events: u64,
    /// Its fields: shared between the files whose fields look the same (as the cache reads them).
    pub(crate) fields: Arc<FieldShapes>,
}

impl TypeStats {
    pub(crate) fn field(&mut self, key: &str, shape: Shape) {
        let fields = Arc::make_mut(&mut self.fields);
        match fields.iter_mut().find(|(k, _)| k == key) {
            Some((_, shapes)) => shapes.add(shape),
            None => {
                let mut shapes = ShapeSet::default();
                shapes.add(shape);
                fields.push((key.to_string(), shapes));
            }
        }
    }

    fn merge(&mut self, other: &TypeStats) {
        self.events += other.events;
        merge_fields_into(&mut self.fields, &other.fields);
    }
}

fn merge_fields_into(mine: &mut Arc<FieldShapes>, other: &FieldShapes) {
    if mine.is_empty() {
        *mine = Arc::new(other.clone());
        return;
    }
    for (key, shapes) in other {
        match mine.iter().position(|(k, _)| k == key) {
            Some(at) if mine[at].1.union_of(*shapes) == mine[at].1 => {}
            Some(at) => Arc::make_mut(mine)[at].1.union(*shapes),
            None => Arc::make_mut(mine).push((key.clone(), *shapes)),
        }
    }
}

/// What one file holds.
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    /// Event types by name as written, in the whole lines.
    pub(crate) types: BTreeMap<Arc<str>, TypeStats>,
    /// The event of an unterminated last line, if it is whole JSON: kept apart, since the next
    /// read of a growing file reads that line again.
    pub(crate) tail_types: BTreeMap<Arc<str>, TypeStats>,
    /// The offset just past the last newline: what later reads of a growing file can skip.
    pub(crate) complete_bytes: u64,
    /// Damaged lines (the cut-off last line of a file is not damage).
    pub(crate) damaged_lines: u64,
    /// Lines read (damaged ones included).
    pub lines: u64,
    /// The line limit of the read: a longer line was damage.
    pub(crate) max_line_bytes: usize,
    /// A problem that stopped the read (the file is then left out).
    pub unreadable: Option<String>,
    /// Damage that stopped the read of a compressed file after some of its lines, which are
    /// kept: the file is warned of (and read again next time, to be warned of again).
    pub read_in_part: Option<String>,
    /// How the file was read, said whole (an object replaced since it was listed, read as it is
    /// now; a file cut shorter as it was read): warned of, and not remembered.
    pub read_note: Option<String>,
}

impl FileStats {
    /// Adds what a read of the bytes after `complete_bytes` found; the old tail is read again.
    pub(crate) fn extend(&mut self, later: FileStats) {
        for (name, stats) in later.types {
            self.types.entry(name).or_default().merge(&stats);
        }
        self.tail_types = later.tail_types;
        self.complete_bytes = later.complete_bytes;
        self.damaged_lines += later.damaged_lines;
        self.lines += later.lines;
        self.unreadable = later.unreadable;
        self.read_in_part = later.read_in_part;
        self.read_note = later.read_note;
    }
}

/// What a format's files hold, all together.
#[derive(Debug, Clone, Default)]
pub struct FormatStats {
    pub(crate) types: BTreeMap<Arc<str>, TypeStats>,
}

impl FormatStats {
    /// Adds a file's events of one type with these fields; the fields are merged when
    /// `merge_fields` (a signature met before is merged already: tens of thousands of files share
    /// a handful of signatures).
    pub(crate) fn add_type(
        &mut self,
        name: &Arc<str>,
        fields: &FieldShapes,
        events: u64,
        merge_fields: bool,
    ) {
        let mine = match self.types.get_mut(name) {
            Some(mine) => mine,
            None => self.types.entry(name.clone()).or_default(),
        };
        mine.events += events;
        if merge_fields {
            merge_fields_into(&mut mine.fields, fields);
        }
    }

    /// Adds everything one file holds.
    pub fn add(&mut self, file: &FileStats) {
        for (name, stats) in file.types.iter().chain(&file.tail_types) {
            self.add_type(name, &stats.fields, stats.events, true);
        }
    }
}
