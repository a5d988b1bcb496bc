//! `repository_root(path)`: the root of the git repository a directory lies in on this machine
//! (the nearest folder, the directory itself included, that holds a `.git` directory or file),
//! else the path as given; what `sessions.project` is. Found by a plain stat walk up the path's
//! own parents, once per distinct path in a session.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{ScalarValue, exec_err, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Component, Path};
use std::sync::{Arc, Mutex};

/// The function's name in SQL.
pub(crate) const NAME: &str = "repository_root";

/// A path longer than this is walked no further: given back as it is.
const LONGEST_PATH: usize = 4096;
/// How many folders up the walk goes at most.
const DEEPEST: usize = 256;
/// How many distinct paths a session's function remembers; past them each is walked again.
const REMEMBERED: usize = 100_000;

/// `repository_root`, to register in a session (and on a cluster's scheduler and executors).
pub(crate) fn scalar_function() -> ScalarUDF {
    ScalarUDF::from(RepositoryRoot::new())
}

/// The function, with the answers it has found (a path and its root).
#[derive(Debug)]
struct RepositoryRoot {
    signature: Signature,
    found: Arc<Mutex<HashMap<String, String>>>,
}

impl RepositoryRoot {
    fn new() -> Self {
        RepositoryRoot { signature: Signature::user_defined(Volatility::Stable), found: Arc::default() }
    }

    /// The root of `path`, remembered.
    fn root_of(&self, path: &str) -> String {
        if let Some(root) = self.found.lock().ok().and_then(|found| found.get(path).cloned()) {
            return root;
        }
        let root = repository_root(path).unwrap_or(path).to_string();
        if let Ok(mut found) = self.found.lock()
            && found.len() < REMEMBERED
        {
            found.insert(path.to_string(), root.clone());
        }
        root
    }
}

impl PartialEq for RepositoryRoot {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.found, &other.found)
    }
}

impl Eq for RepositoryRoot {}

impl Hash for RepositoryRoot {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.found).hash(state);
    }
}

/// Whether `t` is text this function reads.
fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

impl ScalarUDFImpl for RepositoryRoot {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(types
            .iter()
            .map(|t| match t {
                DataType::Null => DataType::Utf8,
                DataType::Dictionary(_, value) if is_text(value) => value.as_ref().clone(),
                t => t.clone(),
            })
            .collect())
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types {
            [t] if is_text(t) => Ok(DataType::Utf8),
            [t] => plan_err!("{NAME} takes a directory, text, not {t}"),
            _ => plan_err!("{NAME} takes one argument, a directory; {} given", types.len()),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [arg] = args.args.as_slice() else { return exec_err!("{NAME} takes one argument") };
        match arg {
            ColumnarValue::Scalar(value) => {
                let text = match value {
                    ScalarValue::Utf8(v) | ScalarValue::Utf8View(v) | ScalarValue::LargeUtf8(v) => v.clone(),
                    _ => None,
                };
                Ok(ColumnarValue::Scalar(ScalarValue::Utf8(text.map(|path| self.root_of(&path)))))
            }
            ColumnarValue::Array(array) => {
                let paths = cast(array, &DataType::Utf8)?;
                let paths = paths.as_string::<i32>();
                let mut roots = StringBuilder::with_capacity(paths.len(), paths.value_data().len());
                // Rows of one session repeat one path: each run of equal paths is looked up once.
                let mut last: Option<(&str, String)> = None;
                for path in paths.iter() {
                    match path {
                        None => roots.append_null(),
                        Some(path) => {
                            let root = match &last {
                                Some((before, root)) if *before == path => root.clone(),
                                _ => self.root_of(path),
                            };
                            roots.append_value(&root);
                            last = Some((path, root));
                        }
                    }
                }
                Ok(ColumnarValue::Array(Arc::new(roots.finish()) as ArrayRef))
            }
        }
    }
}

/// The nearest folder of `path` (itself, then each parent) holding a `.git` directory or file,
/// found by stat alone (the `.git` itself is not followed: a link named `.git` counts as found);
/// `None` for a path that is not absolute, holds `.` or `..` parts or a control character, is
/// longer than [`LONGEST_PATH`], or lies in no repository.
pub(crate) fn repository_root(path: &str) -> Option<&str> {
    if path.len() > LONGEST_PATH || path.chars().any(char::is_control) {
        return None;
    }
    let start = Path::new(path);
    let plain = start
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Prefix(_) | Component::Normal(_)))
        // `.` parts too, which a path's components leave out.
        && !path.split(['/', '\\']).any(|part| part == "." || part == "..");
    if !start.is_absolute() || !plain {
        return None;
    }
    start
        .ancestors()
        .take(DEEPEST)
        .find(|folder| {
            std::fs::symlink_metadata(folder.join(".git"))
                .is_ok_and(|m| m.is_dir() || m.is_file() || m.is_symlink())
        })
        .and_then(Path::to_str)
}

#[cfg(test)]
mod tests {
    use super::repository_root;

    #[test]
    fn the_root_is_the_nearest_folder_with_a_git_directory_or_file() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        let worktree = home.path().join("wt");
        std::fs::create_dir_all(worktree.join("lib")).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: /elsewhere\n").unwrap();
        let text = |p: &std::path::Path| p.to_str().unwrap().to_string();
        assert_eq!(repository_root(&text(&root.join("src/deep"))), Some(text(&root).as_str()));
        assert_eq!(repository_root(&text(&root)), Some(text(&root).as_str()));
        assert_eq!(repository_root(&text(&worktree.join("lib"))), Some(text(&worktree).as_str()));
        // A folder that does not exist is walked up all the same.
        assert_eq!(repository_root(&text(&root.join("gone/away"))), Some(text(&root).as_str()));
        let outside = home.path().join("plain");
        std::fs::create_dir_all(&outside).unwrap();
        assert_eq!(repository_root(&text(&outside)), None);
    }

    #[test]
    fn a_hostile_path_is_not_walked() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let text = root.to_str().unwrap();
        for path in [
            "repo/src".to_string(),
            "".to_string(),
            format!("{text}/src/../src"),
            format!("{text}/./src"),
            format!("{text}/src\n"),
            format!("{text}/\u{1b}[2J"),
            format!("{text}/{}", "a/".repeat(3000)),
        ] {
            assert_eq!(repository_root(&path), None, "{path:?}");
        }
        // Deep but short enough: walked up to the root.
        assert_eq!(repository_root(&format!("{text}/{}", "a/".repeat(200))), Some(text));
    }

    #[tokio::test]
    async fn the_function_gives_the_root_or_the_path_and_null_for_null() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let text = root.to_str().unwrap();
        let ctx = datafusion::prelude::SessionContext::new();
        ctx.register_udf(super::scalar_function());
        let sql = format!(
            "select repository_root(p) as r from (values ('{text}/a'), ('{text}/a'), ('relative/x'), (null), \
             ('{text}/b/c')) as t(p)"
        );
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let rows = datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string();
        let expected: Vec<String> =
            ["r".to_string(), text.into(), text.into(), "relative/x".into(), "".into(), text.into()]
                .into_iter()
                .collect();
        let got: Vec<String> = rows
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').trim().to_string())
            .collect();
        assert_eq!(got, expected);
        let scalar = format!("select repository_root(arrow_cast('{text}/z', 'Utf8View')) as r");
        let batches = ctx.sql(&scalar).await.unwrap().collect().await.unwrap();
        let rows = datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string();
        assert!(rows.contains(&format!("| {text} |")), "{rows}");
    }
}
