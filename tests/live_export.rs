//! `txq export` read back by the readers people use on it, pyarrow, pandas, polars and DuckDB (in
//! the Python `TXQ_TEST_PYTHON` names: `.ci/run` makes one), each as docs/export.md shows, and
//! compared with txq's own SQL answers: rows, sums and partition values of every table, after a
//! first export and after an `--append` that widened a table. With no such Python the reader
//! test says SKIPPED on stderr and what is missing; with `TXQ_REQUIRE_READERS=1` (CI) it fails.
//! Also: a unit of no known day gets a partition folder every reader takes, and an append that
//! would change a column's type is refused, naming the column.

use crate::util::{Session, txq};
use datafusion::arrow::datatypes::DataType;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use txq::generate::{ReevalOptions, RupuOptions, write_reeval_corpus, write_rupu_corpus};

/// The readers, as the Python modules they are.
const READERS: [&str; 4] = ["pyarrow", "pandas", "polars", "duckdb"];

/// The readings compared: each reader as docs/export.md shows it, and polars and DuckDB also
/// with their own guesses of the partition column's type (a date, or text when a
/// `date=unknown` folder is there), which must read the same rows.
const READINGS: [&str; 6] = ["pyarrow", "pandas", "polars", "polars guessing", "duckdb", "duckdb guessing"];

/// Reads every table folder the spec names with each reader, the way docs/export.md shows, and
/// prints per reader and table: the row count, the sum of each integer column, the rows per
/// partition value, the names of the columns, and the rows of the columns asked for, sorted.
const READ_BACK: &str = r#"
import json, math, sys
spec = json.loads(sys.argv[1])

def plain(v):
    if v is None: return None
    if isinstance(v, float):
        if math.isnan(v): return None
        if v.is_integer(): return int(v)
    if hasattr(v, "item"): v = v.item()
    if isinstance(v, float) and math.isnan(v): return None
    if isinstance(v, bool): return v
    if isinstance(v, int): return v
    return str(v)

def answers(name, columns, column, count):
    out = {"count": count, "columns": sorted(c for c in columns if c != spec["key"])}
    out["sums"] = {c: plain(column(c, "sum")) or 0 for c in spec["tables"][name]["sums"]}
    out["partitions"] = {str(k): int(v) for k, v in column(spec["key"], "values").items()} if spec["key"] in columns else None
    wanted = spec["tables"][name]["rows"]
    out["rows"] = sorted([[plain(v) for v in row] for row in column(wanted, "rows")], key=json.dumps) if wanted else []
    return out

def arrow_column(table):
    import pyarrow.compute as pc
    def column(c, what):
        if what == "sum": return pc.sum(table.column(c)).as_py()
        if what == "values":
            return {k: v for k, v in __import__("collections").Counter(str(x) for x in table.column(c).to_pylist()).items()}
        return [list(r.values()) for r in table.select(c).to_pylist()]
    return column

result = {}
for reader in spec["readers"]:
    result[reader] = {}
    for name, table in spec["tables"].items():
        folder = table["folder"]
        if reader == "pyarrow":
            import pyarrow.parquet as pq
            t = pq.read_table(folder)
            got = answers(name, t.column_names, arrow_column(t), t.num_rows)
        elif reader == "pandas":
            import pandas as pd
            d = pd.read_parquet(folder)
            def column(c, what, d=d):
                if what == "sum": return d[c].sum()
                if what == "values": return {str(k): v for k, v in d[c].astype(str).value_counts().items()}
                return d[c].astype(object).itertuples(index=False, name=None)
            got = answers(name, list(d.columns), column, len(d))
        elif reader.startswith("polars"):
            import polars as pl
            guess = reader.endswith("guessing")
            d = pl.scan_parquet(folder + "/**/*.parquet", hive_partitioning=True, try_parse_hive_dates=guess).collect()
            def column(c, what, d=d):
                if what == "sum": return d[c].sum()
                if what == "values": return {str(k): v for k, v in d[c].value_counts().iter_rows()}
                return d.select(c).iter_rows()
            got = answers(name, d.columns, column, d.height)
        elif reader.startswith("duckdb"):
            import duckdb
            con = duckdb.connect()
            guess = "true" if reader.endswith("guessing") else "false"
            source = "read_parquet('%s/**/*.parquet', hive_partitioning = true, hive_types_autocast = %s)" % (folder.replace("'", "''"), guess)
            def q(sql): return con.sql(sql).fetchall()
            def column(c, what):
                if what == "sum": return q('select sum("%s") from %s' % (c, source))[0][0]
                if what == "values": return dict(q('select "%s", count(*) from %s group by 1' % (c, source)))
                return q("select %s from %s" % (", ".join('"%s"' % x for x in c), source))
            got = answers(name, con.sql("select * from " + source).columns, column, q("select count(*) from %s" % source)[0][0])
        result[reader][name] = got
print(json.dumps(result))
"#;

/// The Python with the readers, or why there is none: `TXQ_TEST_PYTHON` unset, or some of
/// [`READERS`] not importable there.
fn readers_python() -> Result<PathBuf, String> {
    let Some(python) = std::env::var_os("TXQ_TEST_PYTHON").filter(|p| !p.is_empty()) else {
        return Err("TXQ_TEST_PYTHON is not set (.ci/run sets it to a virtual environment with \
                    pyarrow, pandas, polars and duckdb)"
            .into());
    };
    let python = PathBuf::from(python);
    let mut missing = Vec::new();
    for module in READERS {
        let found = Command::new(&python).args(["-c", &format!("import {module}")]).output();
        if !found.is_ok_and(|o| o.status.success()) {
            missing.push(module);
        }
    }
    if missing.is_empty() {
        Ok(python)
    } else {
        Err(format!("{} cannot import {}", python.display(), missing.join(", ")))
    }
}

/// The readers' Python, or None after saying on stderr that `test` is skipped and why; with
/// `TXQ_REQUIRE_READERS=1`, a missing reader fails the test instead.
pub fn readers_or_skip(test: &str) -> Option<PathBuf> {
    match readers_python() {
        Ok(python) => Some(python),
        Err(why) if std::env::var_os("TXQ_REQUIRE_READERS").is_some_and(|v| v == "1") => {
            panic!("{test}: TXQ_REQUIRE_READERS=1 and the readers are missing: {why}")
        }
        Err(why) => {
            // Straight to the process's stderr: the harness keeps what `eprintln!` says of a
            // test that passes, and a skip must be seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: {why}; the export was not read back by pyarrow, pandas, polars or duckdb"
            );
            None
        }
    }
}

/// A line of JSON with `edit` applied to it.
fn edited(line: &str, edit: impl FnOnce(&mut Map<String, Value>)) -> String {
    let mut value: Value = serde_json::from_str(line).unwrap();
    edit(value.as_object_mut().unwrap());
    value.to_string()
}

/// A copy of the rupu transcript `from` as the new run `run_id`, each line passed through
/// `edit` (with the line's `type`), written into the same folder.
fn copy_run(from: &Path, run_id: &str, mut edit: impl FnMut(&str, &mut Map<String, Value>)) -> PathBuf {
    let text = std::fs::read_to_string(from).unwrap();
    let old_id = from.file_stem().unwrap().to_str().unwrap();
    let mut out = String::new();
    for line in text.replace(old_id, run_id).lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(_)) => {
                out.push_str(&edited(line, |event| {
                    let kind = event.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
                    if let Some(Value::Object(data)) = event.get_mut("data") {
                        edit(&kind, data);
                    }
                }));
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    let to = from.with_file_name(format!("{run_id}.jsonl"));
    std::fs::write(&to, out).unwrap();
    to
}

/// The first transcript of a generated corpus that has a `run_complete` and `usage` lines.
fn complete_run(transcripts: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(transcripts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .find(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.contains("\"run_complete\"") && text.contains("\"usage\"")
        })
        .expect("a complete run with usage")
}

/// What txq's own SQL says of the tables the export in `out` holds, in the readers' terms, and
/// the spec for [`READ_BACK`].
fn txq_answers(corpus: &Path, out: &Path) -> (Value, BTreeMap<String, Value>) {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("_txq_export.json")).unwrap())
            .expect("the manifest is JSON");
    let session = Session::open(&[corpus.to_path_buf()]);
    let mut spec_tables = Map::new();
    let mut answers = BTreeMap::new();
    for (table, folder) in manifest["folders"].as_object().unwrap() {
        let (schema, name) = table.split_once('.').unwrap();
        let mut quoted = format!("\"{schema}\".\"{name}\"");
        let columns = session.schema(&format!("select * from {quoted}"));
        if name == "files" && columns.index_of("transcript").is_ok() {
            // An export holds the files of its units: the files txq read as no transcripts
            // (step logs, netflow ledgers) have no unit (docs/export.md).
            quoted = format!("(select * from {quoted} where transcript)");
        }
        let sums: Vec<String> = columns
            .fields()
            .iter()
            .filter(|f| f.data_type() == &DataType::Int64)
            .map(|f| f.name().clone())
            .collect();
        let mut select = vec!["count(*) as count".to_string()];
        select.extend(sums.iter().map(|c| format!("coalesce(sum(\"{c}\"), 0) as \"{c}\"")));
        let figures = &session.rows(&format!("select {} from {quoted}", select.join(", ")))[0];
        let count = figures["count"].as_i64().unwrap();
        let sum_map: Map<String, Value> = sums.iter().map(|c| (c.clone(), figures[c].clone())).collect();
        // The rows of a few text and integer columns of the views people read first.
        let wanted: Vec<&str> = match table.as_str() {
            "rupu.runs" => vec!["run_id", "status", "agent", "turns", "input_tokens", "output_tokens"],
            "rupu.usage" => vec!["run_id", "line", "model", "input_tokens", "cached_tokens", "output_tokens"],
            "reeval.attempts" => vec!["run_id", "eval", "cell", "attempt", "status"],
            _ => vec![],
        };
        let wanted: Vec<&str> = wanted.into_iter().filter(|c| columns.index_of(c).is_ok()).collect();
        let mut rows: Vec<Value> = if wanted.is_empty() {
            vec![]
        } else {
            let list = wanted.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
            session
                .rows(&format!("select {list} from {quoted}"))
                .into_iter()
                .map(|row| Value::Array(wanted.iter().map(|c| plain(&row[*c])).collect()))
                .collect()
        };
        rows.sort_by_key(|r| r.to_string());
        let mut names: Vec<String> = columns.fields().iter().map(|f| f.name().clone()).collect();
        names.sort();
        answers.insert(
            table.clone(),
            json!({"count": count, "columns": names, "sums": sum_map, "rows": rows, "partitions": Value::Null}),
        );
        let folder = out.join(folder.as_str().unwrap());
        if !folder.exists() {
            // A partitioned export writes no file for a table with no rows.
            assert_eq!(count, 0, "{table} has rows and no folder");
            answers.remove(table);
            continue;
        }
        spec_tables.insert(table.clone(), json!({"folder": folder, "sums": sums, "rows": wanted}));
    }
    let key = manifest["partition_by"].as_str().unwrap_or("-").to_string();
    (json!({"key": key, "readers": READINGS, "tables": spec_tables}), answers)
}

/// A value as the readers' answers print it: integers and text as they are, others as text.
fn plain(value: &Value) -> Value {
    match value {
        Value::Null | Value::Number(_) | Value::Bool(_) | Value::String(_) => value.clone(),
        other => Value::String(other.to_string()),
    }
}

/// The rows of each partition value of the rupu tables that have runs, as txq's SQL puts each
/// row under its run's start day, `unknown` when it has none.
fn txq_partitions(corpus: &Path, table: &str) -> Map<String, Value> {
    let sql = format!(
        "select coalesce(cast(cast(r.started_at as date) as varchar), 'unknown') as day, count(*) as n \
         from rupu.{table} t left join rupu.runs r on r.file = t.file group by 1"
    );
    Session::open(&[corpus.to_path_buf()])
        .rows(&sql)
        .into_iter()
        .map(|row| (row["day"].as_str().unwrap().to_string(), row["n"].clone()))
        .collect()
}

/// Reads `out` back with every reader and checks each against txq's answers.
fn check_readers(python: &Path, corpus: &Path, out: &Path, when: &str) {
    let (spec, answers) = txq_answers(corpus, out);
    let read = Command::new(python).args(["-c", READ_BACK, &spec.to_string()]).output().expect("python runs");
    assert!(read.status.success(), "{when}: the readers failed: {}", String::from_utf8_lossy(&read.stderr));
    let got: Value = serde_json::from_slice(&read.stdout).expect("the readers' answers are JSON");
    for reader in READINGS {
        for (table, expected) in &answers {
            let mut got = got[reader][table].clone();
            let partitions = got["partitions"].take();
            assert_eq!(&got, expected, "{when}: {reader} reads {table} as txq's SQL answers it");
            if ["rupu.runs", "rupu.usage"].contains(&table.as_str()) {
                let by_day: Map<String, Value> =
                    partitions.as_object().expect("a date column").clone().into_iter().collect();
                assert_eq!(by_day, txq_partitions(corpus, &table[5..]), "{when}: {reader}'s date of {table}");
            }
        }
    }
}

#[test]
fn every_reader_reads_the_export_as_txq_answers_before_and_after_an_append_that_widened_it() {
    let Some(python) = readers_or_skip(
        "every_reader_reads_the_export_as_txq_answers_before_and_after_an_append_that_widened_it",
    ) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    let expected = write_rupu_corpus(&corpus, &RupuOptions::default()).unwrap();
    write_reeval_corpus(&corpus, &ReevalOptions::default()).unwrap();
    let transcripts = corpus.join(&expected.transcripts_dir);
    let model = complete_run(&transcripts);
    // A run whose start time is unreadable: its rows go to date=unknown.
    copy_run(&model, "run_01UNKNOWNDAY00000000000000", |kind, data| {
        if kind == "run_start" {
            data.insert("started_at".into(), json!("not a time"));
        }
    });
    let out = work.path().join("tx-parquet");
    let path = corpus.to_str().unwrap();
    let first =
        txq(&["export", "-q", "--out", out.to_str().unwrap(), "--partition-by", "date", path], work.path());
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        out.join("rupu/runs/date=unknown").is_dir(),
        "the run of no known day has a folder every reader takes"
    );
    check_readers(&python, &corpus, &out, "the first export");

    // A new run whose usage lines have a field never seen: the append widens rupu.usage.
    copy_run(&model, "run_01WIDENED000000000000000", |kind, data| {
        if kind == "usage" {
            data.insert("rack".into(), json!("r-17"));
        }
    });
    let append = txq(&["export", "-q", "--out", out.to_str().unwrap(), "--append", path], work.path());
    assert_eq!(append.code, 0, "{}", append.stderr);
    check_readers(&python, &corpus, &out, "after the append");
    let regions = Session::open(std::slice::from_ref(&corpus))
        .rows("select count(rack) as n from rupu.usage where rack = 'r-17'");
    assert!(regions[0]["n"].as_i64().unwrap() > 0, "the new field is in the rows compared");
}

/// Every Parquet file below `dir` and the names of its columns.
fn file_columns(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.path().extension().is_some_and(|x| x == "parquet"))
        .map(|e| {
            let file = std::fs::File::open(e.path()).unwrap();
            let builder =
                datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                    .unwrap();
            let names = builder.schema().fields().iter().map(|f| f.name().clone()).collect();
            (e.into_path(), names)
        })
        .collect()
}

fn manifest_columns(out: &Path, table: &str) -> Vec<String> {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("_txq_export.json")).unwrap())
            .expect("the manifest is JSON");
    manifest["tables"][table].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect()
}

#[test]
fn an_append_after_a_new_field_widens_every_file_and_the_manifest_instead_of_demanding_overwrite() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    let expected = write_rupu_corpus(&corpus, &RupuOptions::default()).unwrap();
    let transcripts = corpus.join(&expected.transcripts_dir);
    let model = complete_run(&transcripts);
    let out = work.path().join("out");
    let export = |extra: &[&str]| {
        let mut args = vec!["export", "-q", "--out", out.to_str().unwrap(), "--tables", "usage,runs"];
        args.extend(extra);
        args.push(transcripts.to_str().unwrap());
        txq(&args, work.path())
    };
    let first = export(&["--partition-by", "date"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!manifest_columns(&out, "rupu.usage").iter().any(|c| c.starts_with("zone: ")));
    copy_run(&model, "run_01WIDENED000000000000001", |kind, data| {
        if kind == "usage" {
            data.insert("zone".into(), json!(7));
        }
    });
    let append = export(&["--append"]);
    assert_eq!(append.code, 0, "an append does not demand --overwrite: {}", append.stderr);
    assert!(manifest_columns(&out, "rupu.usage").contains(&"zone: Int64".to_string()));
    let files = file_columns(&out.join("rupu/usage"));
    assert!(files.len() >= 2, "{files:?}");
    for (file, columns) in &files {
        assert!(columns.contains(&"zone".to_string()), "{}: {columns:?}", file.display());
    }
    assert_eq!(
        files.iter().map(|(_, c)| c).collect::<std::collections::BTreeSet<_>>().len(),
        1,
        "one schema"
    );

    // The same field as an object now: its column would be JSON text, not bigint.
    copy_run(&model, "run_01RETYPED000000000000002", |kind, data| {
        if kind == "usage" {
            data.insert("zone".into(), json!({"name": "eu"}));
        }
    });
    let before = std::fs::read_to_string(out.join("_txq_export.json")).unwrap();
    let refused = export(&["--append"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let now_type = Session::open(std::slice::from_ref(&transcripts))
        .schema("select zone from rupu.usage")
        .field(0)
        .data_type()
        .to_string();
    assert_eq!(
        refused.stderr.trim_end(),
        format!(
            "txq: error: rupu.usage: the column zone was Int64 when {} was written and is {now_type} now: \
             no reader reads one column with two types; export again with --overwrite",
            out.display()
        )
    );
    assert_eq!(std::fs::read_to_string(out.join("_txq_export.json")).unwrap(), before, "OUT is as it was");
}

#[test]
fn tests_start_txq_only_in_an_environment_of_their_own_and_leave_home_empty() {
    // Every run of the binary goes through crate::util::command, which sets HOME, the XDG
    // folders, the cache and the history into temporary folders.
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut direct = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.file_name().is_some_and(|n| n == "util.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains(concat!("Command::new(env!(\"CARGO_BIN_", "EXE_txq\"))")) {
            direct.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(direct.is_empty(), "start txq with crate::util::command(cwd), not Command::new, in {direct:?}");
    let temp = std::env::temp_dir();
    for (name, value) in crate::util::hermetic_env() {
        assert!(value.starts_with(&temp), "{name}={} is not in a temporary folder", value.display());
    }
    // A run that writes the inference cache writes it to TXQ_CACHE_DIR, and nothing in HOME.
    let work = tempfile::tempdir().unwrap();
    write_rupu_corpus(work.path(), &RupuOptions { runs: 2, ..RupuOptions::default() }).unwrap();
    let cache = work.path().join("cache");
    let out = crate::util::command(work.path())
        .args(["-q", "-e", "select count(*) from usage", ".rupu/transcripts"])
        .env("TXQ_CACHE_DIR", &cache)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_dir(&cache).unwrap().count() > 0, "the cache was written where it was told");
    let left: Vec<PathBuf> = walkdir::WalkDir::new(crate::util::home_dir())
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect();
    assert!(left.is_empty(), "the tests' HOME holds {left:?}");
}
