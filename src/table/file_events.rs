//! Each transcript's events by type, for one format: which files a scan of one type reads, and
//! the rows of a statement that needs no value of a line. A file's part is the number of the
//! bytes of its summary among the distinct ones, which are shared (not copied) with the cache.

use crate::infer::signature::{FileSummary, SignatureBytes, SignatureTable};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// No type: a shape of no file here.
const NO_TYPE: u32 = u32::MAX;

/// The types met in a format's files, and each file's shapes with their events.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileEvents {
    /// Every type met in any of the files, in name order.
    types: Vec<Arc<str>>,
    /// For each shape (by number), its type in `types`.
    type_of_shape: Vec<u32>,
    /// Each distinct list of shapes with their events, once.
    lists: Vec<SignatureBytes>,
    /// For each file, its list.
    files: Vec<u32>,
}

/// Makes a format's [`FileEvents`] one file at a time, each distinct list of shapes kept once.
#[derive(Debug, Default)]
pub(crate) struct FileEventsBuilder {
    lists: Vec<SignatureBytes>,
    number: HashMap<SignatureBytes, u32, foldhash::fast::RandomState>,
    files: Vec<u32>,
}

impl FileEventsBuilder {
    /// A builder for at most `files` files, room for them made at once (a list of a million
    /// grown one doubling at a time leaves copies of itself resident).
    pub(crate) fn with_capacity(files: usize) -> Self {
        FileEventsBuilder { files: Vec::with_capacity(files), ..Self::default() }
    }

    /// Adds the next file, whose shapes are `list`.
    fn push_list(&mut self, list: SignatureBytes) {
        let lists = &mut self.lists;
        let number = *self.number.entry(list).or_insert_with_key(|list| {
            lists.push(list.clone());
            (lists.len() - 1) as u32
        });
        self.files.push(number);
    }

    /// Adds the next file.
    pub(crate) fn push(&mut self, file: &FileSummary) {
        self.push_list(file.signature_bytes());
    }

    /// The events by type of the files added, whose shapes are numbers of `shapes`.
    pub(crate) fn finish(self, shapes: &SignatureTable) -> FileEvents {
        let mut used = vec![false; shapes.len()];
        for list in &self.lists {
            for (id, _) in list.shapes() {
                if let Some(used) = used.get_mut(id as usize) {
                    *used = true;
                }
            }
        }
        let names: BTreeSet<&Arc<str>> = (0..shapes.len())
            .filter(|&id| used[id])
            .filter_map(|id| shapes.get(id as u32))
            .map(|shape| &shape.name)
            .collect();
        let types: Vec<Arc<str>> = names.into_iter().cloned().collect();
        let type_of_shape = (0..shapes.len())
            .map(|id| match shapes.get(id as u32) {
                Some(shape) if used[id] => types.binary_search(&shape.name).map_or(NO_TYPE, |i| i as u32),
                _ => NO_TYPE,
            })
            .collect();
        FileEvents { types, type_of_shape, lists: self.lists, files: self.files }
    }
}

impl FileEvents {
    /// The events by type of `files`.
    pub(crate) fn new<'a>(files: impl IntoIterator<Item = &'a FileSummary>, shapes: &SignatureTable) -> Self {
        let mut builder = FileEventsBuilder::default();
        for file in files {
            builder.push(file);
        }
        builder.finish(shapes)
    }

    /// How many files.
    pub(crate) fn files(&self) -> usize {
        self.files.len()
    }

    /// File `file`'s events by type: the whole lines' then those of a cut-off last line (a type
    /// in both comes twice).
    pub(crate) fn of(&self, file: usize) -> impl Iterator<Item = (&Arc<str>, u64)> + '_ {
        self.types_of(file).map(|(t, n)| (&self.types[t as usize], n))
    }

    /// How many events of `type_name` (of any type: `None`) file `file` holds.
    pub(crate) fn events_of(&self, file: usize, type_name: Option<&str>) -> u64 {
        self.of(file).filter(|(t, _)| type_name.is_none_or(|w| w == t.as_ref())).map(|(_, n)| n).sum()
    }

    fn types_of(&self, file: usize) -> impl Iterator<Item = (u32, u64)> + '_ {
        let list = self.files.get(file).and_then(|&list| self.lists.get(list as usize));
        list.into_iter().flat_map(|bytes| bytes.shapes()).filter_map(|(id, n)| {
            let t = *self.type_of_shape.get(id as usize)?;
            (t != NO_TYPE).then_some((t, n))
        })
    }

    /// The files holding events of `type_name`.
    pub(crate) fn files_holding(&self, type_name: &str) -> impl Iterator<Item = usize> + '_ {
        let wanted = self.types.binary_search_by(|t| t.as_ref().cmp(type_name)).ok().map(|i| i as u32);
        (0..self.files())
            .filter(move |&file| wanted.is_some_and(|w| self.types_of(file).any(|(t, _)| t == w)))
    }

    /// The same for only the files `kept` (indexes, in order).
    pub(crate) fn narrowed(&self, kept: &[usize]) -> FileEvents {
        FileEvents {
            types: self.types.clone(),
            type_of_shape: self.type_of_shape.clone(),
            lists: self.lists.clone(),
            files: kept.iter().filter_map(|&i| self.files.get(i).copied()).collect(),
        }
    }

    /// What the events are made of, to send them elsewhere ([`FileEvents::from_parts`]): the
    /// types, each shape's type, and each file's shapes as bytes.
    pub(crate) fn parts(&self) -> (&[Arc<str>], &[u32], impl Iterator<Item = &[u8]>) {
        (
            &self.types,
            &self.type_of_shape,
            self.files.iter().map(|&list| self.lists[list as usize].as_bytes()),
        )
    }

    /// The events made again of their [`FileEvents::parts`].
    pub(crate) fn from_parts(types: Vec<Arc<str>>, type_of_shape: Vec<u32>, files: Vec<Vec<u8>>) -> Self {
        let mut builder = FileEventsBuilder::default();
        for bytes in files {
            builder.push_list(SignatureBytes::from_bytes(bytes));
        }
        FileEvents { types, type_of_shape, lists: builder.lists, files: builder.files }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::stats::{FieldShapes, FileStats, TypeStats};
    use std::collections::BTreeMap;

    fn summary(shapes: &mut SignatureTable, whole: &[(&str, u64)], tail: &[(&str, u64)]) -> FileSummary {
        let map = |list: &[(&str, u64)]| -> BTreeMap<Arc<str>, TypeStats> {
            list.iter()
                .map(|(name, events)| {
                    let fields = Arc::new(FieldShapes::new());
                    (Arc::from(*name), TypeStats { events: *events, fields })
                })
                .collect()
        };
        shapes.summarize(&FileStats { types: map(whole), tail_types: map(tail), ..Default::default() })
    }

    fn listed(events: &FileEvents, file: usize) -> Vec<(String, u64)> {
        events.of(file).map(|(t, n)| (t.to_string(), n)).collect()
    }

    #[test]
    fn each_file_counts_its_types_whole_lines_first() {
        let mut shapes = SignatureTable::default();
        let files = vec![
            summary(&mut shapes, &[("usage", 3), ("run_start", 1)], &[("usage", 1)]),
            summary(&mut shapes, &[], &[]),
            summary(&mut shapes, &[("tool_call", 2)], &[("notice", 1)]),
        ];
        let events = FileEvents::new(&files, &shapes);
        assert_eq!(events.files(), 3);
        assert_eq!(
            listed(&events, 0),
            vec![("run_start".into(), 1), ("usage".into(), 3), ("usage".into(), 1)]
        );
        assert_eq!(listed(&events, 1), vec![]);
        assert_eq!(listed(&events, 2), vec![("tool_call".into(), 2), ("notice".into(), 1)]);
        assert_eq!(events.files_holding("usage").collect::<Vec<_>>(), vec![0]);
        assert_eq!(events.files_holding("notice").collect::<Vec<_>>(), vec![2]);
        assert_eq!(events.files_holding("nothing").count(), 0);
        let (types, type_of_shape, bytes) = events.parts();
        let (types, type_of_shape) = (types.to_vec(), type_of_shape.to_vec());
        let sent = FileEvents::from_parts(types, type_of_shape, bytes.map(<[u8]>::to_vec).collect());
        assert!((0..3).all(|file| listed(&sent, file) == listed(&events, file)));
        let narrowed = events.narrowed(&[2, 0]);
        assert_eq!(listed(&narrowed, 0), listed(&events, 2));
        assert_eq!(listed(&narrowed, 1), listed(&events, 0));
        assert_eq!(narrowed.files_holding("usage").collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn neighbouring_files_keep_their_own_counts() {
        let mut shapes = SignatureTable::default();
        let files = vec![summary(&mut shapes, &[("a", 1)], &[]), summary(&mut shapes, &[("a", 2)], &[])];
        let events = FileEvents::new(&files, &shapes);
        assert_eq!(listed(&events, 0), vec![("a".into(), 1)]);
        assert_eq!(listed(&events, 1), vec![("a".into(), 2)]);
    }
}
