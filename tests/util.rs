//! Helpers: a generated corpus in a temporary directory; running the real binary on it, in an
//! environment of its own (HOME, XDG folders, cache and history in a temporary folder: a test
//! never writes to the real `~/.cache/txq` or `$HOME`); and running SQL in this process through
//! the library, for query tests that need no process.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::json::writer::{LineDelimited, WriterBuilder};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use txq::generate::{Expected, RupuOptions, write_rupu_corpus};

/// A generated corpus that lives as long as the value.
pub struct Generated {
    pub dir: tempfile::TempDir,
    pub expected: Expected,
}

impl Generated {
    pub fn new(options: &RupuOptions) -> Generated {
        let dir = tempfile::tempdir().expect("temp dir");
        let expected = write_rupu_corpus(dir.path(), options).expect("corpus written");
        Generated { dir, expected }
    }

    /// The transcripts directory.
    pub fn transcripts(&self) -> PathBuf {
        self.dir.path().join(&self.expected.transcripts_dir)
    }

    /// Rows of `sql` on the transcripts directory, run in this process ([`query_rows`]).
    pub fn rows(&self, sql: &str) -> Vec<Map<String, Value>> {
        query_rows(&[self.transcripts()], sql)
    }

    /// Rows of `sql` run by the real binary on the transcripts directory (`--format ndjson`).
    pub fn rows_by_binary(&self, sql: &str) -> Vec<Map<String, Value>> {
        let out =
            txq(&["--format", "ndjson", "-e", sql, self.transcripts().to_str().unwrap()], self.dir.path());
        assert_eq!(out.code, 0, "txq failed on {sql}: {}", out.stderr);
        parse_ndjson(&out.stdout)
    }
}

/// The default corpus (12 runs, every damage case), written once per test process.
pub fn default_corpus() -> &'static Generated {
    static CORPUS: std::sync::OnceLock<Generated> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| Generated::new(&RupuOptions::default()))
}

/// A larger corpus with another seed.
pub fn larger_corpus() -> &'static Generated {
    static CORPUS: std::sync::OnceLock<Generated> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| Generated::new(&RupuOptions { seed: 7, runs: 60, ..RupuOptions::default() }))
}

/// txq's session over some paths, in this process, through the library: the session `txq`
/// itself opens (built-in prices included), with no inference cache (nothing is written) and no
/// process started. It sees the files as they were when it was opened.
#[derive(Clone)]
pub struct Session(std::sync::Arc<txq::sql::session::Engine>);

impl Session {
    /// A new session over `paths`, reading them now.
    pub fn open(paths: &[PathBuf]) -> Session {
        Session::open_with(paths, Default::default())
    }

    /// A new session over `paths` read with `options` (an inference cache in a folder of the
    /// test's own, say).
    pub fn open_with(paths: &[PathBuf], options: txq::table::corpus::ReadOptions) -> Session {
        let engine = runtime()
            .block_on(txq::sql::session::open(paths, options))
            .unwrap_or_else(|e| panic!("no session over {paths:?}: {e}"));
        Session(std::sync::Arc::new(engine))
    }

    /// The session over `paths` opened once per test process: for corpora no test changes.
    pub fn shared(paths: &[PathBuf]) -> Session {
        type Sessions = std::sync::Mutex<HashMap<Vec<PathBuf>, Session>>;
        static SESSIONS: std::sync::OnceLock<Sessions> = std::sync::OnceLock::new();
        let sessions = SESSIONS.get_or_init(Default::default);
        if let Some(session) = sessions.lock().unwrap().get(paths) {
            return session.clone();
        }
        let opened = Session::open(paths);
        sessions.lock().unwrap().entry(paths.to_vec()).or_insert(opened).clone()
    }

    /// The batches of `sql`.
    pub fn batches(&self, sql: &str) -> Vec<RecordBatch> {
        runtime()
            .block_on(async { self.0.ctx.sql(sql).await?.collect().await })
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The columns `sql` answers with.
    pub fn schema(&self, sql: &str) -> datafusion::arrow::datatypes::SchemaRef {
        let frame = runtime().block_on(self.0.ctx.sql(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
        std::sync::Arc::new(frame.schema().as_arrow().clone())
    }

    /// The rows of `sql` as the binary's `--format ndjson` writes them (the same JSON writer,
    /// nulls explicit).
    pub fn rows(&self, sql: &str) -> Vec<Map<String, Value>> {
        let mut writer = WriterBuilder::new().with_explicit_nulls(true).build::<_, LineDelimited>(Vec::new());
        for batch in &self.batches(sql) {
            writer.write(batch).expect("rows as JSON");
        }
        writer.finish().expect("rows as JSON");
        parse_ndjson(&String::from_utf8(writer.into_inner()).expect("JSON is UTF-8"))
    }
}

/// The tokio runtime in-process queries run on.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime")
    })
}

/// The rows of `sql` over the default places of `dir` (as `txq` run in `dir` with no PATH finds
/// them, HOME aside), in this process, each `file` spelled relative to `dir` as the binary run
/// there spells it.
pub fn query_rows_in(dir: &Path, sql: &str) -> Vec<Map<String, Value>> {
    let places = txq::source::discover::default_paths(&txq::format::all(), dir, None)
        .unwrap_or_else(|e| panic!("no default places in {}: {e}", dir.display()));
    let places: Vec<PathBuf> = places.iter().map(|p| dir.join(p)).collect();
    let prefix = format!("{}/", dir.display());
    let mut rows = query_rows(&places, sql);
    for row in &mut rows {
        if let Some(Value::String(file)) = row.get_mut("file")
            && let Some(relative) = file.strip_prefix(&prefix)
        {
            *file = relative.to_string();
        }
    }
    rows
}

/// The rows of `sql` over `paths`, in this process, in the session [`Session::shared`] keeps.
pub fn query_rows(paths: &[PathBuf], sql: &str) -> Vec<Map<String, Value>> {
    Session::shared(paths).rows(sql)
}

/// The inference cache of every test run (shared: entries are keyed by file).
pub fn cache_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir")).path()
}

/// The home of every run of the binary: an empty temporary folder, never the real `$HOME`.
pub fn home_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir")).path()
}

/// The machine's time zone as [`command`] gives it (`TZ`): the spend reports' days are the
/// machine's, UTC unless a test says otherwise.
pub const TIME_ZONE: &str = "UTC";

/// The variables [`command`] sets, and what to: HOME and the XDG folders in [`home_dir`], the
/// cache in [`cache_dir`], the shell's history in the home. `TXQ_PRICES` is removed, so that
/// the prices a test sees are its own.
pub fn hermetic_env() -> Vec<(&'static str, PathBuf)> {
    let home = home_dir();
    vec![
        ("HOME", home.to_path_buf()),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("TXQ_CACHE_DIR", cache_dir().to_path_buf()),
        ("TXQ_HISTORY", home.join("txq-history")),
    ]
}

/// The real `txq` binary, to run in `cwd`, in the environment of [`hermetic_env`]: every test
/// that starts txq starts it through this (a test may set a variable again, to a folder of its
/// own).
pub fn command(cwd: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_txq"));
    command.current_dir(cwd).env_remove("TXQ_PRICES");
    // The harnesses' own places: a test that wants them sets them.
    for name in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"] {
        command.env_remove(name);
    }
    // The settings' own variables (docs/cli.md): a test that wants one sets it.
    for name in ["TXQ_FORMAT", "TXQ_MAXROWS", "TXQ_MEMORY_LIMIT", "TXQ_CONFIG", "TXQ_MACHINE"] {
        command.env_remove(name);
    }
    for (name, value) in hermetic_env() {
        command.env(name, value);
    }
    command.env("TZ", TIME_ZONE);
    command
}

/// What a run of the binary gave.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the real `txq` binary with `args` in `cwd`, with no terminal on stdin.
pub fn txq(args: &[&str], cwd: &Path) -> Output {
    let out = command(cwd).args(args).stdin(std::process::Stdio::null()).output().expect("txq runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs `txq` (a [`command`] given its flags) with `args` after `--format ndjson`: its stdout as
/// rows and its stderr, failing the test when it fails.
pub fn ndjson_rows(mut txq: Command, args: &[&str]) -> (Vec<Map<String, Value>>, String) {
    let out = txq.args(["--format", "ndjson"]).args(args).output().expect("txq runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (parse_ndjson(&String::from_utf8_lossy(&out.stdout)), stderr)
}

pub fn parse_ndjson(text: &str) -> Vec<Map<String, Value>> {
    text.lines()
        .map(|line| match serde_json::from_str(line) {
            Ok(Value::Object(map)) => map,
            other => panic!("not a JSON object line: {line:?} ({other:?})"),
        })
        .collect()
}

/// A row's text column.
pub fn text(row: &Map<String, Value>, column: &str) -> String {
    match &row[column] {
        Value::String(s) => s.clone(),
        other => panic!("{column} is not text: {other:?}"),
    }
}

/// A row's integer column (null as None).
pub fn int(row: &Map<String, Value>, column: &str) -> Option<i64> {
    match &row[column] {
        Value::Null => None,
        Value::Number(n) => Some(n.as_i64().expect("an integer")),
        other => panic!("{column} is not an integer: {other:?}"),
    }
}
