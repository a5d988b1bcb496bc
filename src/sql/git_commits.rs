//! The `git_commits` table of the default schema: one row per commit reachable from a local
//! branch head of each repository some session's `project` names, read with gix when a statement
//! scans it (a statement that does not name it pays nothing), at most [`MOST_COMMITS`] per
//! repository. A repository that cannot be read is a warning naming it, not a failed statement.

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{Session, TableProvider};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlan, TableType, col};
use datafusion::physical_plan::ExecutionPlan;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The table's name.
pub(crate) const NAME: &str = "git_commits";

/// How many commits of one repository are read at most (the newest branch heads' first, walking
/// parents breadth first): a huge repository's oldest history is left out, with a warning.
pub(crate) const MOST_COMMITS: usize = 20_000;

/// The table's columns: (name, what it holds), in order.
pub(crate) const COLUMNS: &[(&str, &str)] = &[
    ("project", "the repository's root: a sessions.project"),
    ("commit", "the commit's full hash (hex)"),
    ("authored_at", "its author time (UTC)"),
    ("author", "its author's name"),
    ("subject", "the first line of its message"),
    ("branches", "the local branches whose heads reach it, sorted, joined by commas"),
];

/// `git_commits` over the `sessions` of a session.
#[derive(Debug)]
pub(crate) struct GitCommits {
    /// The plan of `sessions`, whose distinct `project`s name the repositories.
    sessions: Arc<LogicalPlan>,
    schema: SchemaRef,
}

impl GitCommits {
    pub(crate) fn new(sessions: LogicalPlan) -> Self {
        GitCommits { sessions: Arc::new(sessions), schema: schema() }
    }
}

fn schema() -> SchemaRef {
    let time = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    Arc::new(Schema::new(vec![
        Field::new("project", DataType::Utf8, false),
        Field::new("commit", DataType::Utf8, false),
        Field::new("authored_at", time, true),
        Field::new("author", DataType::Utf8, true),
        Field::new("subject", DataType::Utf8, true),
        Field::new("branches", DataType::Utf8, false),
    ]))
}

#[async_trait]
impl TableProvider for GitCommits {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let session = state
            .as_any()
            .downcast_ref::<SessionState>()
            .ok_or_else(|| DataFusionError::Plan(format!("{NAME} is read in txq's own sessions only")))?;
        let projects = DataFrame::new(session.clone(), self.sessions.as_ref().clone())
            .select(vec![col("project")])?
            .filter(col("project").is_not_null())?
            .distinct()?
            .collect()
            .await?;
        let mut roots = BTreeSet::new();
        for batch in &projects {
            let column = cast(batch.column(0), &DataType::Utf8)?;
            for project in column.as_string::<i32>().iter().flatten() {
                if crate::sql::repository_root::repository_root(project) == Some(project) {
                    roots.insert(project.to_string());
                }
            }
        }
        let batch = tokio::task::spawn_blocking(move || rows(&roots))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))??;
        let table = MemTable::try_new(self.schema.clone(), vec![vec![batch]])?;
        table.scan(state, projection, filters, limit).await
    }
}

/// A commit as the table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Commit {
    pub(crate) hash: String,
    /// Seconds since the epoch, UTC.
    pub(crate) authored_at: Option<i64>,
    pub(crate) author: Option<String>,
    pub(crate) subject: Option<String>,
    /// Sorted.
    pub(crate) branches: Vec<String>,
}

/// The rows of every repository in `roots`; one that cannot be read is named in a warning.
fn rows(roots: &BTreeSet<String>) -> Result<RecordBatch> {
    let (mut project, mut hash, mut at, mut author, mut subject, mut branches) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for root in roots {
        let commits = match commits_of(std::path::Path::new(root)) {
            Ok((commits, complete)) => {
                if !complete {
                    warn(&format!(
                        "{NAME}: {root}: only {MOST_COMMITS} commits are read from a repository; its older ones are left out"
                    ));
                }
                commits
            }
            Err(why) => {
                warn(&format!("{NAME}: {root} cannot be read as a git repository: {why}"));
                continue;
            }
        };
        for commit in commits {
            project.push(root.clone());
            hash.push(commit.hash);
            at.push(commit.authored_at.and_then(|s| s.checked_mul(1_000_000)));
            author.push(commit.author);
            subject.push(commit.subject);
            branches.push(commit.branches.join(","));
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(project)),
        Arc::new(StringArray::from(hash)),
        Arc::new(TimestampMicrosecondArray::from(at).with_timezone("UTC")),
        Arc::new(StringArray::from(author)),
        Arc::new(StringArray::from(subject)),
        Arc::new(StringArray::from(branches)),
    ];
    Ok(RecordBatch::try_new(schema(), columns)?)
}

fn warn(message: &str) {
    eprintln!("txq: warning: {}", crate::text::escape::message(message));
}

/// The commits reachable from the local branch heads of the repository at `root` (a work tree,
/// its `.git` a folder or a file, or a bare repository), in the order found (breadth first from
/// the heads sorted by name), at most [`MOST_COMMITS`]: with whether that is all of them. Read
/// without the user's or the system's git configuration.
pub(crate) fn commits_of(root: &std::path::Path) -> std::result::Result<(Vec<Commit>, bool), String> {
    commits_at_most(root, MOST_COMMITS)
}

/// [`commits_of`], at most `most` of them.
fn commits_at_most(root: &std::path::Path, most: usize) -> std::result::Result<(Vec<Commit>, bool), String> {
    let repo = gix::open_opts(root, gix::open::Options::isolated()).map_err(|e| e.to_string())?;
    let references = repo.references().map_err(|e| e.to_string())?;
    let mut heads: Vec<(String, gix::ObjectId)> = Vec::new();
    for reference in references.local_branches().map_err(|e| e.to_string())? {
        let mut reference = reference.map_err(|e| e.to_string())?;
        let name = reference.name().shorten().to_string();
        // A branch that points at nothing readable (a broken ref) is left out.
        if let Ok(id) = reference.peel_to_id() {
            heads.push((name, id.detach()));
        }
    }
    heads.sort();
    // Breadth first from every head, each commit once.
    let mut index: HashMap<gix::ObjectId, usize> = HashMap::new();
    let mut found: Vec<(Commit, Vec<gix::ObjectId>)> = Vec::new();
    let mut queue: std::collections::VecDeque<gix::ObjectId> = heads.iter().map(|(_, id)| *id).collect();
    let mut complete = true;
    while let Some(id) = queue.pop_front() {
        if index.contains_key(&id) {
            continue;
        }
        if found.len() >= most {
            complete = false;
            break;
        }
        let Ok(commit) = repo.find_commit(id) else { continue };
        let parents: Vec<gix::ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        let decoded = commit.decode().map_err(|e| format!("commit {id}: {e}"))?;
        let author = decoded.author().ok();
        let message = String::from_utf8_lossy(decoded.message);
        let subject = message.lines().next().map(|l| l.trim_end().to_string());
        index.insert(id, found.len());
        found.push((
            Commit {
                hash: id.to_string(),
                authored_at: author.and_then(|a| a.time().ok()).map(|t| t.seconds),
                author: author.map(|a| a.name.to_string()),
                subject,
                branches: Vec::new(),
            },
            parents.clone(),
        ));
        queue.extend(parents);
    }
    // Which heads reach each commit: from each commit to its parents, children first (Kahn's
    // order over the commits read), one bit per head.
    let words = heads.len().div_ceil(64);
    let mut reached = vec![vec![0u64; words]; found.len()];
    for (n, (_, head)) in heads.iter().enumerate() {
        if let Some(&i) = index.get(head) {
            reached[i][n / 64] |= 1 << (n % 64);
        }
    }
    let parents_of = |i: usize| found[i].1.iter().filter_map(|p| index.get(p).copied()).collect::<Vec<_>>();
    let mut children = vec![0usize; found.len()];
    for i in 0..found.len() {
        for p in parents_of(i) {
            children[p] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..found.len()).filter(|&i| children[i] == 0).collect();
    while let Some(i) = ready.pop() {
        for p in parents_of(i) {
            let bits = reached[i].clone();
            for (word, bit) in reached[p].iter_mut().zip(bits) {
                *word |= bit;
            }
            children[p] -= 1;
            if children[p] == 0 {
                ready.push(p);
            }
        }
    }
    let commits = found
        .into_iter()
        .zip(reached)
        .map(|((mut commit, _), bits)| {
            commit.branches = (heads.iter().enumerate())
                .filter(|(n, _)| bits[n / 64] & (1 << (n % 64)) != 0)
                .map(|(_, (name, _))| name.clone())
                .collect();
            commit
        })
        .collect();
    Ok((commits, complete))
}

#[cfg(test)]
mod tests {
    use super::commits_at_most;

    /// A repository of four commits, one a merge: main c1 - c3 - c4 (merging topic's c2).
    fn merged() -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init(dir.path()).unwrap();
        let tree = repo.write_object(gix::objs::Tree::empty()).unwrap().detach();
        let mut ids: Vec<gix::ObjectId> = Vec::new();
        for (at, branch, message, parents) in [
            ("1000 +0000", "main", "one\n\nbody", vec![]),
            ("2000 +0000", "topic", "two", vec![0]),
            ("3000 +0000", "main", "three", vec![0]),
            ("4000 +0100", "main", "Merge topic", vec![2, 1]),
        ] {
            let who = gix::actor::SignatureRef { name: "A".into(), email: "a@example.com".into(), time: at };
            let parents: Vec<gix::ObjectId> = parents.into_iter().map(|p: usize| ids[p]).collect();
            let id =
                repo.commit_as(who, who, format!("refs/heads/{branch}").as_str(), message, tree, parents);
            ids.push(id.unwrap().detach());
        }
        (dir, ids.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn each_commit_names_the_branches_that_reach_it_through_merges() {
        let (dir, ids) = merged();
        let (mut commits, complete) = commits_at_most(dir.path(), 100).unwrap();
        assert!(complete);
        commits.sort_by_key(|c| c.authored_at);
        let both = vec!["main".to_string(), "topic".to_string()];
        let main = vec!["main".to_string()];
        let commit = |i: usize, at: i64, subject: &str, branches: &Vec<String>| super::Commit {
            hash: ids[i].clone(),
            authored_at: Some(at),
            author: Some("A".into()),
            subject: Some(subject.into()),
            branches: branches.clone(),
        };
        // The merge's author time is UTC whatever its zone (+0100).
        let want = vec![
            commit(0, 1000, "one", &both),
            commit(1, 2000, "two", &both),
            commit(2, 3000, "three", &main),
            commit(3, 4000, "Merge topic", &main),
        ];
        assert_eq!(commits, want);
    }

    #[test]
    fn a_repository_past_the_limit_gives_its_newest_commits_and_says_so() {
        let (dir, ids) = merged();
        let (commits, complete) = commits_at_most(dir.path(), 2).unwrap();
        assert!(!complete);
        let mut hashes: Vec<String> = commits.into_iter().map(|c| c.hash).collect();
        hashes.sort();
        // Breadth first from the heads (main's merge, topic's c2).
        let mut want = vec![ids[3].clone(), ids[1].clone()];
        want.sort();
        assert_eq!(hashes, want);
        assert!(commits_at_most(&dir.path().join("nowhere"), 2).is_err());
    }
}
