//! Helpers: a generated corpus in a temporary directory, and running the real binary on it.

use serde_json::{Map, Value};
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

    /// Rows of `sql` run by the real binary on the transcripts directory.
    pub fn rows(&self, sql: &str) -> Vec<Map<String, Value>> {
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

/// The inference cache of every test run (shared: entries are keyed by file).
pub fn cache_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir")).path()
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
    let out = Command::new(env!("CARGO_BIN_EXE_txq"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env("TXQ_CACHE_DIR", cache_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("txq runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
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
