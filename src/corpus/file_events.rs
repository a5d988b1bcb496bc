//! Each transcript's events by type, for one format, in three flat vectors: which files a scan of
//! one type reads, and the rows of a statement that needs no value of a line.

use crate::shapes::{FileSummary, ShapeTable};
use std::collections::BTreeSet;
use std::sync::Arc;

/// For file `i`, its types are `types_of[starts[i]..starts[i + 1]]` (indexes into `types`, in
/// name order) with their events in `counts` at the same places.
#[derive(Debug, Clone)]
pub struct FileEvents {
    /// Every type met in any of the files, in name order.
    types: Vec<Arc<str>>,
    starts: Vec<usize>,
    types_of: Vec<u32>,
    counts: Vec<u64>,
}

impl Default for FileEvents {
    fn default() -> Self {
        Self { types: Vec::new(), starts: vec![0], types_of: Vec::new(), counts: Vec::new() }
    }
}

impl FileEvents {
    /// The events by type of `files` (whole lines and a whole cut-off last line together).
    pub fn new<'a>(files: impl IntoIterator<Item = &'a FileSummary> + Clone, shapes: &ShapeTable) -> Self {
        // Each shape's type, numbered in name order.
        let mut used = vec![false; shapes.len()];
        for file in files.clone() {
            for (id, _) in file.shapes() {
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
        let type_of_shape: Vec<u32> = (0..shapes.len())
            .map(|id| match shapes.get(id as u32) {
                Some(shape) if used[id] => types.binary_search(&shape.name).map_or(u32::MAX, |i| i as u32),
                _ => u32::MAX,
            })
            .collect();
        let mut events = FileEvents { types, ..Default::default() };
        let mut one_file: Vec<(u32, u64)> = Vec::new();
        for file in files {
            one_file.clear();
            // (A shape of another table has no type here: it cannot be, and is left out.)
            one_file.extend(file.shapes().filter_map(|(id, n)| {
                type_of_shape.get(id as usize).filter(|&&t| t != u32::MAX).map(|&t| (t, n))
            }));
            one_file.sort_unstable_by_key(|(t, _)| *t);
            for &(t, n) in &one_file {
                // A type in the whole lines and in the tail: one count.
                if events.types_of.len() > events.starts[events.starts.len() - 1]
                    && events.types_of.last() == Some(&t)
                {
                    *events.counts.last_mut().expect("beside types_of") += n;
                } else {
                    events.types_of.push(t);
                    events.counts.push(n);
                }
            }
            events.starts.push(events.types_of.len());
        }
        events
    }

    /// How many files.
    pub fn files(&self) -> usize {
        self.starts.len() - 1
    }

    /// File `file`'s events by type, in name order.
    pub fn of(&self, file: usize) -> impl Iterator<Item = (&Arc<str>, u64)> + '_ {
        let range = self.starts[file]..self.starts[file + 1];
        self.types_of[range.clone()]
            .iter()
            .zip(&self.counts[range])
            .map(|(&t, &n)| (&self.types[t as usize], n))
    }

    /// The files holding events of `type_name`.
    pub fn files_holding(&self, type_name: &str) -> impl Iterator<Item = usize> + '_ {
        let wanted = self.types.binary_search_by(|t| t.as_ref().cmp(type_name)).ok().map(|i| i as u32);
        (0..self.files()).filter(move |&file| {
            wanted.is_some_and(|t| self.types_of[self.starts[file]..self.starts[file + 1]].contains(&t))
        })
    }

    /// The same for only the files `kept` (indexes, in order).
    pub fn narrowed(&self, kept: &[usize]) -> FileEvents {
        let mut events = FileEvents { types: self.types.clone(), ..Default::default() };
        for &file in kept {
            let range = self.starts[file]..self.starts[file + 1];
            events.types_of.extend_from_slice(&self.types_of[range.clone()]);
            events.counts.extend_from_slice(&self.counts[range]);
            events.starts.push(events.types_of.len());
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::{FieldShapes, FileStats, TypeStats};
    use std::collections::BTreeMap;

    fn summary(shapes: &mut ShapeTable, whole: &[(&str, u64)], tail: &[(&str, u64)]) -> FileSummary {
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
    fn each_file_counts_its_types_in_name_order() {
        let mut shapes = ShapeTable::default();
        let files = vec![
            summary(&mut shapes, &[("usage", 3), ("run_start", 1)], &[("usage", 1)]),
            summary(&mut shapes, &[], &[]),
            summary(&mut shapes, &[("tool_call", 2)], &[("notice", 1)]),
        ];
        let events = FileEvents::new(&files, &shapes);
        assert_eq!(events.files(), 3);
        assert_eq!(listed(&events, 0), vec![("run_start".into(), 1), ("usage".into(), 4)]);
        assert_eq!(listed(&events, 1), vec![]);
        assert_eq!(listed(&events, 2), vec![("notice".into(), 1), ("tool_call".into(), 2)]);
        assert_eq!(events.files_holding("usage").collect::<Vec<_>>(), vec![0]);
        assert_eq!(events.files_holding("notice").collect::<Vec<_>>(), vec![2]);
        assert_eq!(events.files_holding("nothing").count(), 0);
        let narrowed = events.narrowed(&[2, 0]);
        assert_eq!(listed(&narrowed, 0), listed(&events, 2));
        assert_eq!(listed(&narrowed, 1), listed(&events, 0));
        assert_eq!(narrowed.files_holding("usage").collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn a_type_in_two_neighbouring_files_is_not_merged_across_them() {
        let mut shapes = ShapeTable::default();
        let files = vec![summary(&mut shapes, &[("a", 1)], &[]), summary(&mut shapes, &[("a", 2)], &[])];
        let events = FileEvents::new(&files, &shapes);
        assert_eq!(listed(&events, 0), vec![("a".into(), 1)]);
        assert_eq!(listed(&events, 1), vec![("a".into(), 2)]);
    }
}
