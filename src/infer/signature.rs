//! Type signatures (a type's name and its fields with their shapes) numbered once per corpus, and
//! what one file holds by signature: the compact form that the cache keeps and the corpus is
//! built from. Tens of thousands of files hold a handful of signatures; a file is then a few
//! numbers.

use crate::infer::stats::{FieldShapes, FileStats, TypeStats};
use crate::infer::varint;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// A shape's number in its [`SignatureTable`].
pub(crate) type SignatureId = u32;

/// A type as one file's events showed it: its name and its fields with their values' shapes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TypeSignature {
    pub(crate) name: Arc<str>,
    pub(crate) fields: Arc<FieldShapes>,
}

/// Every shape met, each once.
#[derive(Debug, Default)]
pub struct SignatureTable {
    shapes: Vec<TypeSignature>,
    index: HashMap<TypeSignature, SignatureId>,
    /// Every file's shapes with their events ([`FileSummary`]), each distinct list once: a
    /// million files of one session's shape share one.
    lists: HashSet<Arc<[u8]>, foldhash::fast::RandomState>,
}

impl SignatureTable {
    /// The number of a shape, added when new.
    pub(crate) fn intern(&mut self, shape: TypeSignature) -> SignatureId {
        if let Some(&id) = self.index.get(&shape) {
            return id;
        }
        let id = self.shapes.len() as SignatureId;
        self.shapes.push(shape.clone());
        self.index.insert(shape, id);
        id
    }

    /// The shapes of a file's whole lines and of its tail, with their events, as kept in a
    /// [`FileSummary`]: shared with every file that holds the same.
    fn list_of(&mut self, whole: &[(SignatureId, u64)], tail: &[(SignatureId, u64)]) -> Arc<[u8]> {
        let bytes = list_bytes(whole, tail);
        if let Some(list) = self.lists.get(bytes.as_slice()) {
            return list.clone();
        }
        let list: Arc<[u8]> = Arc::from(bytes);
        self.lists.insert(list.clone());
        list
    }

    pub(crate) fn get(&self, id: SignatureId) -> Option<&TypeSignature> {
        self.shapes.get(id as usize)
    }

    pub(crate) fn len(&self) -> usize {
        self.shapes.len()
    }

    /// What a read of a file found, by shape.
    pub fn summarize(&mut self, stats: &FileStats) -> FileSummary {
        let mut by_shape = |types: &BTreeMap<Arc<str>, TypeStats>| -> Vec<(SignatureId, u64)> {
            types
                .iter()
                .map(|(name, t)| {
                    (self.intern(TypeSignature { name: name.clone(), fields: t.fields.clone() }), t.events)
                })
                .collect()
        };
        let (whole, tail) = (by_shape(&stats.types), by_shape(&stats.tail_types));
        let mut summary = FileSummary {
            complete_bytes: stats.complete_bytes,
            damaged_lines: stats.damaged_lines,
            lines: stats.lines,
            max_line_bytes: stats.max_line_bytes as u64,
            ..Default::default()
        };
        summary.set_shapes(&whole, &tail, self);
        summary
    }

    /// The stats a summary stands for (to extend them with a read of what was appended). Its
    /// shapes are this table's.
    pub(crate) fn stats(&self, summary: &FileSummary) -> FileStats {
        FileStats {
            types: self.by_name(summary.whole()),
            tail_types: self.by_name(summary.tail()),
            complete_bytes: summary.complete_bytes,
            damaged_lines: summary.damaged_lines,
            lines: summary.lines,
            max_line_bytes: summary.max_line_bytes as usize,
            unreadable: None,
            read_in_part: None,
            read_note: None,
        }
    }

    /// ShapeSet with their events as types by name.
    fn by_name(&self, shapes: impl Iterator<Item = (SignatureId, u64)>) -> BTreeMap<Arc<str>, TypeStats> {
        shapes
            .filter_map(|(id, events)| {
                let shape = self.get(id)?;
                Some((shape.name.clone(), TypeStats { events, fields: shape.fields.clone() }))
            })
            .collect()
    }
}

/// What one file holds: [`FileStats`] with each type's name and fields as a shape's number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSummary {
    /// The shapes of the whole lines' events and of an unterminated last line that is whole
    /// JSON, each with its events, as varints: how many of the whole lines', then the pairs. (A
    /// file is a few dozen bytes here, not a few hundred: a cache holds tens of thousands, and
    /// the corpus shares them.)
    shapes: Arc<[u8]>,
    pub(crate) complete_bytes: u64,
    pub(crate) damaged_lines: u64,
    pub(crate) lines: u64,
    pub(crate) max_line_bytes: u64,
}

impl FileSummary {
    /// Sets the shapes of the whole lines and of the tail, with their events (numbers of
    /// `table`, which keeps each distinct list once).
    pub(crate) fn set_shapes(
        &mut self,
        whole: &[(SignatureId, u64)],
        tail: &[(SignatureId, u64)],
        table: &mut SignatureTable,
    ) {
        self.shapes = table.list_of(whole, tail);
    }

    /// Sets the shapes of the whole lines and of the tail, with their events, in bytes of the
    /// summary's own (not shared through a table: a cache's entry read in passing, most often
    /// dropped again at once).
    pub(crate) fn set_shapes_unshared(&mut self, whole: &[(SignatureId, u64)], tail: &[(SignatureId, u64)]) {
        self.shapes = Arc::from(list_bytes(whole, tail));
    }

    /// A summary of `shapes` (shared) with `damaged_lines` and `lines`: what settling a file
    /// needs of it (its other numbers are 0).
    pub(crate) fn of_signature(shapes: &SignatureBytes, damaged_lines: u64, lines: u64) -> FileSummary {
        FileSummary { shapes: shapes.0.clone(), damaged_lines, lines, ..FileSummary::default() }
    }

    /// Every shape with its events, the whole lines' then the tail's.
    pub(crate) fn shapes(&self) -> impl Iterator<Item = (SignatureId, u64)> + '_ {
        pairs(&self.shapes).1
    }

    /// The shapes of the whole lines.
    pub(crate) fn whole(&self) -> impl Iterator<Item = (SignatureId, u64)> + '_ {
        let (whole, pairs) = pairs(&self.shapes);
        pairs.take(whole)
    }

    /// The shapes of an unterminated last line.
    pub(crate) fn tail(&self) -> impl Iterator<Item = (SignatureId, u64)> + '_ {
        let (whole, pairs) = pairs(&self.shapes);
        pairs.skip(whole)
    }

    /// The shapes as [`SignatureBytes`], shared.
    pub(crate) fn signature_bytes(&self) -> SignatureBytes {
        SignatureBytes(self.shapes.clone())
    }

    /// Whether no line of the file is an event.
    pub(crate) fn holds_no_event(&self) -> bool {
        self.shapes().next().is_none()
    }
}

/// A file's shapes with their events, shared with its [`FileSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SignatureBytes(Arc<[u8]>);

impl SignatureBytes {
    /// Every shape with its events (the whole lines' then the tail's).
    pub(crate) fn shapes(&self) -> impl Iterator<Item = (SignatureId, u64)> + '_ {
        pairs(&self.0).1
    }

    /// The bytes, as they are kept.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The shapes of `bytes` as [`SignatureBytes::as_bytes`] gave them. Bytes that are not such
    /// (a damaged message) give the shapes before the damage, never a panic.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Self {
        SignatureBytes(Arc::from(bytes))
    }
}

/// The shapes of a file's whole lines and of its tail, with their events, as a [`FileSummary`]
/// keeps them: how many of the whole lines', then the pairs, as varints.
fn list_bytes(whole: &[(SignatureId, u64)], tail: &[(SignatureId, u64)]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(1 + 4 * (whole.len() + tail.len()));
    varint::put(&mut bytes, whole.len() as u64);
    for &(id, events) in whole.iter().chain(tail) {
        varint::put(&mut bytes, u64::from(id));
        varint::put(&mut bytes, events);
    }
    bytes
}

/// How many of the pairs in `bytes` are the whole lines', and the pairs.
fn pairs(mut bytes: &[u8]) -> (usize, impl Iterator<Item = (SignatureId, u64)> + '_) {
    let whole = varint::take(&mut bytes).unwrap_or(0) as usize;
    let pairs = std::iter::from_fn(move || {
        let id = SignatureId::try_from(varint::take(&mut bytes)?).ok()?;
        Some((id, varint::take(&mut bytes)?))
    });
    (whole, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::stats::ShapeSet;

    fn stats(types: &[(&str, u64, &[&str])], tail: &[(&str, u64, &[&str])]) -> FileStats {
        let map = |list: &[(&str, u64, &[&str])]| {
            list.iter()
                .map(|(name, events, keys)| {
                    let fields: FieldShapes =
                        keys.iter().map(|k| (k.to_string(), ShapeSet::from_bits(16))).collect();
                    (Arc::from(*name), TypeStats { events: *events, fields: Arc::new(fields) })
                })
                .collect()
        };
        FileStats {
            types: map(types),
            tail_types: map(tail),
            complete_bytes: 10,
            damaged_lines: 2,
            lines: 9,
            max_line_bytes: 1000,
            unreadable: None,
            read_in_part: None,
            read_note: None,
        }
    }

    #[test]
    fn files_with_the_same_fields_share_a_shape() {
        let mut table = SignatureTable::default();
        let a = table.summarize(&stats(&[("usage", 3, &["model", "tokens"])], &[]));
        let b = table.summarize(&stats(&[("usage", 5, &["model", "tokens"])], &[("usage", 1, &["model"])]));
        assert_eq!(table.len(), 2);
        assert_eq!(a.whole().collect::<Vec<_>>(), vec![(0, 3)]);
        assert_eq!(a.tail().count(), 0);
        assert_eq!(b.whole().collect::<Vec<_>>(), vec![(0, 5)]);
        assert_eq!(b.tail().collect::<Vec<_>>(), vec![(1, 1)]);
        assert_eq!(b.shapes().collect::<Vec<_>>(), vec![(0, 5), (1, 1)]);
    }

    #[test]
    fn a_summary_stands_for_its_stats() {
        let mut table = SignatureTable::default();
        let original = stats(&[("a", 1, &["x"]), ("b", 2, &[])], &[("c", 1, &["y", "z"])]);
        let summary = table.summarize(&original);
        let back = table.stats(&summary);
        assert_eq!(format!("{back:?}"), format!("{original:?}"));
    }
}
