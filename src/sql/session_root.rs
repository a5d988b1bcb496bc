//! `session_root(session_id, parent_session_id) OVER (PARTITION BY harness)`: the window
//! function that gives `sessions.root_session_id`, the top of each session's chain of parents,
//! found over one harness's sessions in one pass (any depth; a cycle or a missing parent in
//! damaged data ends the walk, it never hangs).
//!
//! A row whose parent is null is its own root. Otherwise the walk goes up from its parent: the
//! parent of an id is that of the sessions of that id (null when one of them has none, as a
//! top-level session's; the least when they name several, as colliding agent ids may). The walk
//! ends at an id with no parent (the root), or at an id that is no session (a parent whose
//! transcript is missing: that id, the highest known, is the root), or on coming back to an id
//! it passed (a cycle: its least id is the root, the same for every session on it or under it).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{
    LimitEffect, PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use datafusion::physical_expr::PhysicalExpr;

/// The function's name in SQL.
pub(crate) const NAME: &str = "session_root";

/// `session_root`, to register in a session.
pub(crate) fn window_function() -> WindowUDF {
    WindowUDF::from(SessionRoot::new())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SessionRoot {
    signature: Signature,
}

impl SessionRoot {
    fn new() -> Self {
        // Two texts of any string type, checked when planned (`field`).
        SessionRoot { signature: Signature::any(2, Volatility::Immutable) }
    }
}

impl WindowUDFImpl for SessionRoot {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn partition_evaluator(&self, _args: PartitionEvaluatorArgs) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(Roots))
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        for nth in 0..2 {
            match args.get_input_field(nth).map(|f| f.data_type().clone()) {
                Some(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null) => {}
                Some(other) => plan_err!("{NAME} takes session ids, text, not {other}")?,
                None => plan_err!("{NAME} takes two arguments, the session id and its parent's")?,
            }
        }
        Ok(Arc::new(Field::new(args.name(), DataType::Utf8, true)))
    }

    fn limit_effect(&self, _args: &[Arc<dyn PhysicalExpr>]) -> LimitEffect {
        LimitEffect::Unknown
    }
}

/// The roots of one partition's sessions, row by row.
#[derive(Debug)]
struct Roots;

impl PartitionEvaluator for Roots {
    fn evaluate_all(&mut self, values: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
        let [ids, parents] = values else { return exec_err!("{NAME} takes two arguments") };
        let (ids, parents) = (cast(ids, &DataType::Utf8)?, cast(parents, &DataType::Utf8)?);
        let (Some(ids), Some(parents)) =
            (ids.as_any().downcast_ref::<StringArray>(), parents.as_any().downcast_ref::<StringArray>())
        else {
            return exec_err!("{NAME}: the session ids could not be read");
        };
        let sessions: Vec<(Option<&str>, Option<&str>)> =
            (0..rows).map(|row| (text(ids, row), text(parents, row))).collect();
        Ok(Arc::new(StringArray::from(roots(&sessions))))
    }
}

fn text(array: &StringArray, row: usize) -> Option<&str> {
    (row < array.len() && array.is_valid(row)).then(|| array.value(row))
}

/// The root of each (session id, parent id), in order (see the module's note).
pub(crate) fn roots(sessions: &[(Option<&str>, Option<&str>)]) -> Vec<Option<String>> {
    // Each id's parent: None when one of its sessions has none.
    let mut parent_of: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for &(id, parent) in sessions {
        let Some(id) = id else { continue };
        parent_of
            .entry(id)
            .and_modify(|kept| {
                *kept = match (*kept, parent) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    _ => None,
                }
            })
            .or_insert(parent);
    }
    let mut found: BTreeMap<&str, &str> = BTreeMap::new();
    sessions
        .iter()
        .map(|&(id, parent)| match parent {
            None => id.map(str::to_string),
            Some(parent) => Some(root_of(parent, &parent_of, &mut found).to_string()),
        })
        .collect()
}

/// The root above `start`, every id passed remembered with it in `found`.
fn root_of<'a>(
    start: &'a str,
    parent_of: &BTreeMap<&'a str, Option<&'a str>>,
    found: &mut BTreeMap<&'a str, &'a str>,
) -> &'a str {
    let mut path: Vec<&str> = Vec::new();
    let mut passed: BTreeSet<&str> = BTreeSet::new();
    let mut at = start;
    let root = loop {
        if let Some(&root) = found.get(at) {
            break root;
        }
        if passed.contains(at) {
            // A cycle: the ids from `at`'s first visit on; its least is the root.
            let from = path.iter().position(|&id| id == at).unwrap_or(0);
            break path[from..].iter().copied().min().unwrap_or(at);
        }
        passed.insert(at);
        path.push(at);
        match parent_of.get(at) {
            Some(Some(up)) => at = up,
            // No parent, or no session of that id: the highest id known.
            _ => break at,
        }
    };
    for id in path {
        found.insert(id, root);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::roots;

    fn of(sessions: &[(&str, Option<&str>)]) -> Vec<String> {
        let rows: Vec<(Option<&str>, Option<&str>)> = sessions.iter().map(|&(id, p)| (Some(id), p)).collect();
        roots(&rows).into_iter().map(|root| root.unwrap_or_default()).collect()
    }

    #[test]
    fn a_chain_three_deep_has_its_top_as_root_in_any_order() {
        let sessions = [("c", Some("b")), ("d", Some("c")), ("a", None), ("b", Some("a")), ("e", None)];
        assert_eq!(of(&sessions), ["a", "a", "a", "a", "e"]);
    }

    #[test]
    fn a_missing_parent_is_the_root_of_what_hangs_under_it() {
        assert_eq!(of(&[("b", Some("gone")), ("c", Some("b"))]), ["gone", "gone"]);
    }

    #[test]
    fn a_cycle_ends_at_its_least_id_for_every_session_on_it_or_under_it() {
        let sessions = [("b", Some("a")), ("a", Some("b")), ("c", Some("b")), ("s", Some("s"))];
        assert_eq!(of(&sessions), ["a", "a", "a", "s"]);
        let long: Vec<(String, String)> =
            (0..1000).map(|i| (format!("{i:04}"), format!("{:04}", (i + 1) % 1000))).collect();
        let rows: Vec<(&str, Option<&str>)> =
            long.iter().map(|(id, p)| (id.as_str(), Some(p.as_str()))).collect();
        assert!(of(&rows).iter().all(|root| root == "0000"));
    }

    #[test]
    fn colliding_ids_go_up_from_their_own_parents_and_a_top_level_copy_wins() {
        // Agent ids collide across parents: each row walks from its own parent.
        let sessions = [("s1", None), ("s2", None), ("a1", Some("s1")), ("a1", Some("s2"))];
        assert_eq!(of(&sessions), ["s1", "s2", "s1", "s2"]);
        // An id that is top-level somewhere has no parent above a session under it.
        assert_eq!(of(&[("x", None), ("x", Some("y")), ("z", Some("x"))]), ["x", "y", "x"]);
    }

    #[test]
    fn a_null_id_is_its_own_null_root() {
        assert_eq!(roots(&[(None, None), (None, Some("p"))]), [None, Some("p".to_string())]);
    }
}
