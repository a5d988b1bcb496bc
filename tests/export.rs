//! `txq export` read back with the parquet crate's own reader (not DataFusion): every table's rows
//! and sums against the generator's answers, the SQL tables' columns, Hive folders by day and
//! by run, `--overwrite` and `--append`, and `COPY ... TO` from `-e`.

use crate::queries::tally::{RupuTally, reeval_events};
use crate::util::{Generated, default_corpus, parse_ndjson, txq};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::basic::Compression;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use txq::generate::{ReevalOptions, RupuOptions, write_reeval_corpus, write_rupu_corpus};

/// Every Parquet file under `dir` and its rows.
fn read_dataset(dir: &Path) -> Vec<(PathBuf, RecordBatch)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        let file = std::fs::File::open(entry.path()).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let schema = builder.schema().clone();
        let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
        let batch = datafusion::arrow::compute::concat_batches(&schema, &batches).unwrap();
        out.push((entry.into_path(), batch));
    }
    out
}

fn rows(dataset: &[(PathBuf, RecordBatch)]) -> usize {
    dataset.iter().map(|(_, b)| b.num_rows()).sum()
}

/// A column as text, nulls as None.
fn strings(batch: &RecordBatch, column: &str) -> Vec<Option<String>> {
    let column = cast(batch.column_by_name(column).unwrap(), &DataType::Utf8).unwrap();
    column.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect()
}

fn ints(batch: &RecordBatch, column: &str) -> Vec<Option<i64>> {
    let column = cast(batch.column_by_name(column).unwrap(), &DataType::Int64).unwrap();
    let column = column.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
    (0..column.len()).map(|i| column.is_valid(i).then(|| column.value(i))).collect()
}

fn export(args: &[&str], cwd: &Path) -> crate::util::Output {
    let mut all = vec!["export"];
    all.extend(args);
    txq(&all, cwd)
}

/// Every (schema, table) of `out`, with its rows.
fn tables_of(out: &Path) -> BTreeMap<String, Vec<(PathBuf, RecordBatch)>> {
    let mut tables = BTreeMap::new();
    for schema in std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for table in std::fs::read_dir(&schema).unwrap().map(|e| e.unwrap().path()) {
            let name = format!(
                "{}.{}",
                schema.file_name().unwrap().to_string_lossy(),
                table.file_name().unwrap().to_string_lossy()
            );
            tables.insert(name, read_dataset(&table));
        }
    }
    tables
}

macro_rules! on_both_corpora {
    ($($name:ident => $check:path;)*) => {
        mod default { $( #[test] fn $name() { $check(crate::util::default_corpus()); } )* }
        mod larger { $( #[test] fn $name() { $check(crate::util::larger_corpus()); } )* }
    };
}

on_both_corpora! {
    every_table_reads_back_as_the_generator_wrote => super::every_table_reads_back_as_the_generator_wrote;
    date_folders_hold_the_rows_of_runs_started_that_day => super::date_folders_hold_the_rows_of_runs_started_that_day;
}

fn every_table_reads_back_as_the_generator_wrote(c: &Generated) {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("tx-parquet");
    let result = export(&["--out", out.to_str().unwrap(), c.transcripts().to_str().unwrap()], work.path());
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        result.stderr.contains(&format!("exported {} to", exported_units(&c.expected))),
        "{}",
        result.stderr
    );
    let leftovers: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("txq-"))
        .collect();
    assert!(leftovers.is_empty(), "nothing left beside OUT: {leftovers:?}");
    let tables = tables_of(&out);

    // Every table of the schema, with its SQL columns, names and types, but the format's own
    // normalized views; and the default schema's normalized tables, each computed across files
    // and written whole (docs/export.md).
    let columns = c.rows(
        "select table_schema, table_name, column_name, data_type from information_schema.columns \
         where (table_schema in ('rupu', 'rupu_netflow') \
         and table_name not in ('calls', 'tool_calls', 'sessions', 'rate_limits')) \
         or (table_schema = 'public' and table_name in ('calls', 'tool_calls', 'sessions', 'rate_limits')) \
         order by table_name, ordinal_position",
    );
    let normalized = c.rows(
        "select count(*) as n from information_schema.tables where table_schema = 'rupu' \
         and table_name in ('calls', 'tool_calls', 'sessions')",
    );
    assert_eq!(normalized[0]["n"], 3, "rupu's schema holds its normalized views");
    let mut sql_columns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &columns {
        let (schema, table, column, kind) = (
            row["table_schema"].as_str().unwrap(),
            row["table_name"].as_str().unwrap(),
            row["column_name"].as_str().unwrap(),
            row["data_type"].as_str().unwrap(),
        );
        sql_columns.entry(format!("{schema}.{table}")).or_default().push(format!("{column}: {kind}"));
    }
    assert_eq!(tables.keys().collect::<Vec<_>>(), sql_columns.keys().collect::<Vec<_>>());
    for (table, dataset) in &tables {
        assert!(!dataset.is_empty(), "{table} has a file, even when empty");
        for (path, batch) in dataset {
            let got: Vec<String> =
                batch.schema().fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
            assert_eq!(got, sql_columns[table], "{}", path.display());
            let props = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
            for group in props.metadata().row_groups() {
                for column in group.columns() {
                    assert!(matches!(column.compression(), Compression::ZSTD(_)), "{}", path.display());
                }
            }
        }
    }

    // Row counts: each event type, every event, every damaged line, every run.
    let e = &c.expected;
    // The ledgers' lines, as written: every one an event, of type flow or complete.
    let ledger_lines: Vec<serde_json::Value> = e
        .ledgers
        .iter()
        .flat_map(|l| {
            std::fs::read_to_string(c.dir.path().join(l))
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .map(|line| serde_json::from_str(&line).unwrap())
        .collect();
    let of_type = |kind: &str| ledger_lines.iter().filter(|l| l["type"] == kind).count();
    for (table, dataset) in &tables {
        if let Some(name) = table.strip_prefix("rupu_netflow.") {
            let expected = match name {
                "events" => ledger_lines.len(),
                "errors" => 0,
                "files" => e.ledgers.len(),
                "flows" => of_type("flow"),
                kind => of_type(kind),
            };
            assert_eq!(rows(dataset), expected, "{table}");
            continue;
        }
        if let Some(name) = table.strip_prefix("public.") {
            let live = c.rows(&format!("select count(*) as n from {name}"));
            assert_eq!(rows(dataset) as u64, live[0]["n"].as_u64().unwrap(), "{table}");
            continue;
        }
        let name = table.trim_start_matches("rupu.");
        let expected = match name {
            "events" => e.events_total as usize,
            "errors" => e.errors.len(),
            "runs" | "files" => e.runs.len(),
            kind => e.events_by_type.get(kind).copied().unwrap_or(0) as usize,
        };
        assert_eq!(rows(dataset), expected, "{table}");
    }

    // Sums: tokens by model, blocked calls by tool and decision, each run's summary.
    let mut tokens: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    for (_, batch) in &tables["rupu.usage"] {
        let models = strings(batch, "model");
        let (input, output, cached) =
            (ints(batch, "input_tokens"), ints(batch, "output_tokens"), ints(batch, "cached_tokens"));
        for i in 0..batch.num_rows() {
            let sums = tokens.entry(models[i].clone().unwrap()).or_default();
            *sums = (sums.0 + input[i].unwrap(), sums.1 + output[i].unwrap(), sums.2 + cached[i].unwrap());
        }
    }
    assert_eq!(tokens, e.tokens_by_model);
    let mut denied: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (_, batch) in &tables["rupu.tool_audit"] {
        let blocked = batch.column_by_name("blocked").unwrap().as_boolean().clone();
        let (tool, decision) = (strings(batch, "tool"), strings(batch, "decision"));
        for i in (0..batch.num_rows()).filter(|&i| blocked.value(i)) {
            *denied.entry((tool[i].clone().unwrap(), decision[i].clone().unwrap())).or_default() += 1;
        }
    }
    assert_eq!(denied, e.denied_tools);
    let mut runs: BTreeMap<String, (String, i64, i64, Option<i64>)> = BTreeMap::new();
    for (_, batch) in &tables["rupu.runs"] {
        let (id, status, input, turns, total) = (
            strings(batch, "run_id"),
            strings(batch, "status"),
            ints(batch, "input_tokens"),
            ints(batch, "turns"),
            ints(batch, "total_tokens"),
        );
        for i in 0..batch.num_rows() {
            runs.insert(
                id[i].clone().unwrap(),
                (status[i].clone().unwrap(), input[i].unwrap(), turns[i].unwrap(), total[i]),
            );
        }
    }
    let expected_runs: BTreeMap<String, (String, i64, i64, Option<i64>)> = e
        .runs
        .iter()
        .map(|r| (r.run_id.clone(), (r.status.clone(), r.input_tokens, r.turns as i64, r.total_tokens)))
        .collect();
    assert_eq!(runs, expected_runs);

    let manifest: txq::export::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join(txq::export::MANIFEST_FILE)).unwrap())
            .unwrap();
    let open: BTreeSet<&str> = manifest.units.iter().filter(|u| u.open).map(|u| u.id.as_str()).collect();
    let aborted: BTreeSet<&str> =
        e.runs.iter().filter(|r| r.status == "aborted").map(|r| r.run_id.as_str()).collect();
    assert_eq!(open, aborted, "a run without run_complete is still open");
    assert_eq!(manifest.units.len(), e.runs.len() + e.ledgers_of_no_run());
}

/// The run id and Hive value of every row of a partitioned table.
fn partitions(dataset: &[(PathBuf, RecordBatch)], key: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, batch) in dataset {
        let folder = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let value =
            folder.strip_prefix(&format!("{key}=")).unwrap_or_else(|| panic!("{folder} is not {key}=…"));
        assert!(batch.schema().index_of(key).is_err(), "{key} is in the path, not in the file");
        for run_id in strings(batch, "run_id") {
            out.push((run_id.unwrap(), value.to_string()));
        }
    }
    out
}

fn date_folders_hold_the_rows_of_runs_started_that_day(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("by-date");
    let args = ["--out", out.to_str().unwrap(), "--tables", "usage,runs,errors", "--partition-by", "date"];
    let result = export(&[&args[..], &[c.transcripts().to_str().unwrap()]].concat(), work.path());
    assert_eq!(result.code, 0, "{}", result.stderr);
    let tables = tables_of(&out);
    assert_eq!(tables.keys().collect::<Vec<_>>(), ["rupu.errors", "rupu.runs", "rupu.usage"]);
    for (table, dataset) in &tables {
        for (run_id, day) in partitions(dataset, "date") {
            assert_eq!(day, tally.run_starts[&run_id][..10], "{table}: {run_id}");
        }
    }
    assert_eq!(rows(&tables["rupu.usage"]), c.expected.events_by_type["usage"] as usize);
    assert_eq!(rows(&tables["rupu.errors"]), c.expected.errors.len());
    let days: BTreeSet<&str> = tally.run_starts.values().map(|s| &s[..10]).collect();
    let folders: BTreeSet<String> = std::fs::read_dir(out.join("rupu/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders, days.iter().map(|d| format!("date={d}")).collect());
}

#[test]
fn run_folders_hold_one_run_each() {
    let c = default_corpus();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("by-run");
    let result = export(
        &[
            "--out",
            out.to_str().unwrap(),
            "--tables",
            "rupu.tool_call,runs",
            "--partition-by",
            "run",
            c.transcripts().to_str().unwrap(),
        ],
        work.path(),
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let tables = tables_of(&out);
    for dataset in tables.values() {
        for (run_id, folder) in partitions(dataset, "run") {
            assert_eq!(run_id, folder);
        }
    }
    assert_eq!(rows(&tables["rupu.tool_call"]), c.expected.events_by_type["tool_call"] as usize);
    let folders = std::fs::read_dir(out.join("rupu/runs")).unwrap().count();
    assert_eq!(folders, c.expected.runs.len());
}

/// The rows of every table of `out`, as sorted (file, line) pairs, or run ids for views; a
/// normalized table's (no run id) as all their values.
fn row_keys(out: &Path) -> BTreeMap<String, Vec<String>> {
    row_keys_of(tables_of(out))
}

/// [`row_keys`] of tables read.
fn row_keys_of(tables: BTreeMap<String, Vec<(PathBuf, RecordBatch)>>) -> BTreeMap<String, Vec<String>> {
    tables
        .into_iter()
        .map(|(table, dataset)| {
            let mut keys = Vec::new();
            for (_, batch) in dataset.iter().filter(|_| table.starts_with("public.")) {
                let columns: Vec<Vec<Option<String>>> =
                    batch.schema().fields().iter().map(|f| strings(batch, f.name())).collect();
                for i in 0..batch.num_rows() {
                    keys.push(columns.iter().map(|c| format!("{:?}", c[i])).collect::<Vec<_>>().join(" "));
                }
            }
            for (_, batch) in dataset.iter().filter(|_| !table.starts_with("public.")) {
                let (files, lines) = (
                    strings(batch, "file"),
                    batch.schema().index_of("line").ok().map(|_| ints(batch, "line")),
                );
                let runs = strings(batch, "run_id");
                for i in 0..batch.num_rows() {
                    let line = lines.as_ref().map_or(String::new(), |l| format!("{:?}", l[i]));
                    keys.push(format!("{:?} {:?} {line}", files[i], runs[i]));
                }
            }
            keys.sort();
            (table, keys)
        })
        .collect()
}

/// What the summary says was exported: the runs, and the ledgers that are units of their own.
fn exported_units(expected: &txq::generate::Expected) -> String {
    let runs = format!("{} rupu runs", expected.runs.len());
    match expected.ledgers_of_no_run() {
        0 => runs,
        1 => format!("{runs} and 1 rupu_netflow ledger"),
        n => format!("{runs} and {n} rupu_netflow ledgers"),
    }
}

fn append_line(file: &Path, line: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "{line}").unwrap();
}

#[test]
fn append_adds_new_runs_and_redoes_whole_those_still_being_written() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    let expected = write_rupu_corpus(&corpus, &RupuOptions::default()).unwrap();
    let transcripts = corpus.join(&expected.transcripts_dir);
    let out = work.path().join("out");
    let first = export(&["--out", out.to_str().unwrap(), transcripts.to_str().unwrap()], work.path());
    assert_eq!(first.code, 0, "{}", first.stderr);

    // Two new runs arrive; an open run finishes; a finished run changes.
    let bigger = tempfile::tempdir().unwrap();
    let more = write_rupu_corpus(bigger.path(), &RupuOptions { runs: 14, ..RupuOptions::default() }).unwrap();
    for run in &more.runs[12..] {
        std::fs::copy(bigger.path().join(&run.file), corpus.join(&run.file)).unwrap();
    }
    let open: Vec<_> = expected.runs.iter().filter(|r| r.status == "aborted").collect();
    let finishing = open
        .iter()
        .find(|r| !expected.truncated_tails.contains(&r.file))
        .expect("an open run that ends whole");
    let usage = r#"{"type":"usage","data":{"provider":"openai","model":"gpt-5.1","input_tokens":7,"output_tokens":3}}"#;
    append_line(&corpus.join(&finishing.file), usage);
    let complete = format!(
        r#"{{"type":"run_complete","data":{{"run_id":"{}","status":"ok","total_tokens":10,"duration_ms":5}}}}"#,
        finishing.run_id
    );
    append_line(&corpus.join(&finishing.file), &complete);
    let changed = expected.runs.iter().find(|r| r.status == "ok").unwrap();
    append_line(
        &corpus.join(&changed.file),
        r#"{"type":"notice","data":{"kind":"late","message":"written after the end"}}"#,
    );

    let second =
        export(&["--out", out.to_str().unwrap(), "--append", transcripts.to_str().unwrap()], work.path());
    assert_eq!(second.code, 0, "{}", second.stderr);
    let redone = open.len() + 1;
    let kept = expected.runs.len() - redone + expected.ledgers_of_no_run();
    assert!(
        second.stderr.contains(&format!(": 2 new, {redone} written again whole (still being written, or changed, last time), {kept} already there")),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&format!("txq: warning: {} changed since it was exported", changed.run_id)),
        "{}",
        second.stderr
    );

    // OUT now holds what a fresh export of the corpus holds, each row once.
    let fresh = work.path().join("fresh");
    let whole = export(&["--out", fresh.to_str().unwrap(), transcripts.to_str().unwrap()], work.path());
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert_eq!(row_keys(&out), row_keys(&fresh));
    let manifest: txq::export::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join(txq::export::MANIFEST_FILE)).unwrap())
            .unwrap();
    assert_eq!(manifest.generation, 2);
    assert!(!manifest.unit("rupu", &finishing.run_id).unwrap().open, "finished since");
    assert_eq!(manifest.units.len(), 14 + expected.ledgers_of_no_run());

    // An append that an interruption cut short leaves files the next one removes.
    std::fs::create_dir_all(out.join(".txq-staging-3/rupu/usage")).unwrap();
    let usage_file = walkdir::WalkDir::new(out.join("rupu/usage"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .find(|p| p.is_file())
        .unwrap();
    std::fs::copy(&usage_file, out.join("rupu/usage/part-00003-settled-0-000.parquet")).unwrap();
    let third =
        export(&["--out", out.to_str().unwrap(), "--append", transcripts.to_str().unwrap()], work.path());
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(!out.join(".txq-staging-3").exists());
    assert_eq!(row_keys(&out), row_keys(&fresh));
}

#[test]
fn existing_folders_are_never_clobbered_by_mistake() {
    let c = default_corpus();
    let work = tempfile::tempdir().unwrap();
    let transcripts = c.transcripts();
    let out = work.path().join("out");
    let path = transcripts.to_str().unwrap();

    let crashed = work.path().join(".out.txq-partial-999999");
    std::fs::create_dir_all(crashed.join("rupu")).unwrap();
    let unknown = export(&["--out", out.to_str().unwrap(), "--tables", "nosuch", path], work.path());
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("no table nosuch"), "{}", unknown.stderr);
    assert!(!out.exists(), "a failed export leaves no OUT");

    assert_eq!(export(&["--out", out.to_str().unwrap(), "--tables", "usage", path], work.path()).code, 0);
    assert!(!crashed.exists(), "what an export cut short left beside OUT is removed");
    let again = export(&["--out", out.to_str().unwrap(), "--tables", "usage", path], work.path());
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--append") && again.stderr.contains("--overwrite"), "{}", again.stderr);
    let other_tables =
        export(&["--out", out.to_str().unwrap(), "--append", "--tables", "runs", path], work.path());
    assert_eq!(other_tables.code, 2, "{}", other_tables.stderr);

    let overwrite =
        export(&["--out", out.to_str().unwrap(), "--overwrite", "--tables", "runs", path], work.path());
    assert_eq!(overwrite.code, 0, "{}", overwrite.stderr);
    assert_eq!(tables_of(&out).keys().collect::<Vec<_>>(), ["rupu.runs"]);

    let mine = work.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep me").unwrap();
    let refused = export(&["--out", mine.to_str().unwrap(), "--overwrite", path], work.path());
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("is not a txq export"), "{}", refused.stderr);
    assert_eq!(std::fs::read_to_string(mine.join("notes.txt")).unwrap(), "keep me");
}

#[test]
fn reeval_attempts_export_by_the_day_they_started() {
    let work = tempfile::tempdir().unwrap();
    let expected = write_reeval_corpus(work.path(), &ReevalOptions::default()).unwrap();
    let out = work.path().join("out");
    let result = export(&["--out", out.to_str().unwrap(), "--partition-by", "date"], work.path());
    assert_eq!(result.code, 0, "{}", result.stderr);
    let tables = tables_of(&out);
    assert_eq!(rows(&tables["reeval.attempts"]), expected.attempts.len());
    assert_eq!(rows(&tables["reeval.tool"]), expected.events_by_type["tool"] as usize);
    assert_eq!(rows(&tables["reeval.raw"]), expected.raw_parts.values().sum::<u64>() as usize);
    assert_eq!(rows(&tables["reeval.raw_errors"]), expected.raw_errors.len());

    // An attempt's rows lie under the day of its first event.
    let mut first: BTreeMap<(String, String, String, i64, bool), String> = BTreeMap::new();
    for event in reeval_events(work.path()) {
        if let Some(ts) = event.fields.get("ts").and_then(|t| t.as_str()) {
            let (run, eval, cell, attempt) = event.attempt.clone();
            let day =
                first.entry((run, eval, cell, attempt, event.history)).or_insert_with(|| ts.to_string());
            *day = day.clone().min(ts.to_string());
        }
    }
    for (path, batch) in &tables["reeval.attempts"] {
        let folder = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let (runs, evals, cells, attempts) = (
            strings(batch, "run_id"),
            strings(batch, "eval"),
            strings(batch, "cell"),
            ints(batch, "attempt"),
        );
        let history = batch.column_by_name("history").unwrap().as_boolean().clone();
        for i in 0..batch.num_rows() {
            let key = (
                runs[i].clone().unwrap(),
                evals[i].clone().unwrap(),
                cells[i].clone().unwrap(),
                attempts[i].unwrap(),
                history.value(i),
            );
            assert_eq!(folder, format!("date={}", &first[&key][..10]), "{key:?}");
        }
    }
}

#[test]
fn copy_to_writes_parquet_csv_and_json_from_e() {
    let c = default_corpus();
    let work = tempfile::tempdir().unwrap();
    let (parquet, csv, json) =
        (work.path().join("runs.parquet"), work.path().join("runs.csv"), work.path().join("runs.json"));
    let sql = format!(
        "copy (select run_id, status from runs) to '{}' stored as parquet; \
         copy (select run_id, status from runs) to '{}'; copy (select run_id from runs) to '{}'",
        parquet.display(),
        csv.display(),
        json.display()
    );
    let out = txq(&["-q", "--format", "ndjson", "-e", &sql, c.transcripts().to_str().unwrap()], work.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let counts: Vec<i64> = parse_ndjson(&out.stdout).iter().map(|r| r["count"].as_i64().unwrap()).collect();
    let runs = c.expected.runs.len();
    assert_eq!(counts, [runs as i64; 3]);
    let back = read_dataset(&parquet);
    assert_eq!(rows(&back), runs);
    let aborted = strings(&back[0].1, "status").iter().filter(|s| s.as_deref() == Some("aborted")).count();
    assert_eq!(aborted, c.expected.runs.iter().filter(|r| r.status == "aborted").count());
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        runs + 1,
        "a header, then a line a run"
    );
    assert_eq!(std::fs::read_to_string(&json).unwrap().lines().count(), runs);
}

#[test]
fn a_runs_netflow_ledger_is_exported_in_its_runs_unit_and_day() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    let expected =
        write_rupu_corpus(&corpus, &RupuOptions { v0_74_percent: 100, ..RupuOptions::default() }).unwrap();
    let tally = RupuTally::read(&corpus.join(&expected.transcripts_dir));
    let out = work.path().join("out");
    let transcripts = corpus.join(&expected.transcripts_dir);
    let args = ["--out", out.to_str().unwrap(), "--partition-by", "date", transcripts.to_str().unwrap()];
    let result = export(&args, work.path());
    assert_eq!(result.code, 0, "{}", result.stderr);
    let alone = expected.ledgers_of_no_run();
    assert!(expected.ledgers.len() > alone, "the corpus has ledgers of runs");

    // Each ledger of a run is a file of that run's unit; the others are units of their own.
    let manifest: txq::export::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join(txq::export::MANIFEST_FILE)).unwrap())
            .unwrap();
    for ledger in &expected.ledgers {
        let holders: Vec<&txq::export::UnitRecord> =
            manifest.units.iter().filter(|u| u.files.iter().any(|f| f.ends_with(ledger.as_str()))).collect();
        assert_eq!(holders.len(), 1, "{ledger}");
        let stem = ledger.rsplit('/').next().unwrap().trim_end_matches(".jsonl");
        let of_run = expected.runs.iter().any(|r| {
            r.run_id == stem
                && ledger.ends_with(&format!("netflow/{stem}.jsonl"))
                && !r.file.contains("/netflow/")
        });
        if holders[0].schema == "rupu" {
            assert!(of_run, "{ledger} joined a run");
            assert_eq!(holders[0].id, stem, "{ledger} is in its run's unit");
            assert_eq!(holders[0].files.len(), 2);
        } else {
            assert_eq!(holders[0].schema, "rupu_netflow");
        }
    }
    assert_eq!(manifest.units.len(), expected.runs.len() + alone);

    // A ledger's rows lie in the folder of the day its run started.
    let tables = tables_of(&out);
    let flows = &tables["rupu_netflow.flow"];
    assert!(rows(flows) > 0);
    for (run_id, day) in partitions(flows, "date") {
        match tally.run_starts.get(&run_id) {
            Some(start) => assert_eq!(day, start[..10], "{run_id}"),
            None => assert_eq!(day, "unknown", "{run_id}: a ledger of no run read has no day"),
        }
    }
}

/// `txq export` in a home of every harness (`HOME` it), into `out`, with `args`.
fn export_home(home: &Path, out: &Path, args: &[&str]) -> crate::util::Output {
    let mut command = crate::util::command(home);
    command.args(["export", "--out", out.to_str().unwrap()]).args(args).env("HOME", home);
    let ran = command.stdin(std::process::Stdio::null()).output().unwrap();
    let output = crate::util::Output {
        code: ran.status.code().unwrap_or(-1),
        stdout: String::from_utf8(ran.stdout).unwrap(),
        stderr: String::from_utf8(ran.stderr).unwrap(),
    };
    assert_eq!(output.code, 0, "{}", output.stderr);
    output
}

/// A column's sum over a dataset: whole numbers exactly, `cost_usd` as a float.
fn sum_of(dataset: &[(PathBuf, RecordBatch)], column: &str) -> f64 {
    let mut sum = 0.0;
    for (_, batch) in dataset {
        let values = cast(batch.column_by_name(column).unwrap(), &DataType::Float64).unwrap();
        sum +=
            values.as_primitive::<datafusion::arrow::datatypes::Float64Type>().iter().flatten().sum::<f64>();
    }
    sum
}

/// The normalized tables of a home of every harness, exported: `public/calls`,
/// `public/tool_calls` and `public/sessions`, one dataset each (unpartitioned whatever
/// `--partition-by` says), holding what `txq -e` answers over the live files (rows, tokens,
/// cost) and the generator's tally; `--tables calls` writes that one alone; `--append` writes
/// them again whole, the old files gone.
#[test]
fn the_normalized_tables_export_whole_as_txq_reads_them_over_the_live_files() {
    use crate::harness_rows::rows as live_rows;
    use txq::generate::{HarnessOptions, write_harness_home};
    let home = tempfile::tempdir().unwrap();
    let expected = write_harness_home(home.path(), &HarnessOptions::default()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    export_home(home.path(), &out, &[]);
    let tables = tables_of(&out);
    for name in ["public.calls", "public.tool_calls", "public.sessions"] {
        assert!(tables.contains_key(name), "{name} is exported: {:?}", tables.keys());
    }
    for harness in ["claude", "codex", "gemini"] {
        assert!(!tables.contains_key(&format!("{harness}.calls")), "a harness's own view is not");
    }

    let env = [("HOME", home.path().to_path_buf())];
    let sql = "select count(*) as n, sum(input_tokens) as input, sum(cache_read_tokens) as read, \
               sum(cache_write_tokens) as write, sum(output_tokens) as output, sum(cost_usd) as cost, \
               count(cost_usd) as priced from calls";
    let live = &live_rows(home.path(), &[], &env, sql)[0];
    let calls = &tables["public.calls"];
    assert_eq!(rows(calls) as u64, live["n"].as_u64().unwrap());
    assert_eq!(rows(calls), expected.calls.len(), "the generator's tally");
    assert_eq!(live["priced"], live["n"], "every generated model is priced");
    for (column, name, tally) in [
        ("input_tokens", "input", expected.calls.iter().map(|c| c.input_tokens).sum::<i64>()),
        ("cache_read_tokens", "read", expected.calls.iter().map(|c| c.cache_read_tokens).sum()),
        ("cache_write_tokens", "write", expected.calls.iter().map(|c| c.cache_write_tokens).sum()),
        ("output_tokens", "output", expected.calls.iter().map(|c| c.output_tokens).sum()),
    ] {
        assert_eq!(sum_of(calls, column), live[name].as_i64().unwrap() as f64, "{column}");
        assert_eq!(sum_of(calls, column), tally as f64, "{column}: the generator's tally");
    }
    let cost = live["cost"].as_f64().unwrap();
    assert!(cost > 0.0 && (sum_of(calls, "cost_usd") - cost).abs() <= 1e-9 * cost, "{cost}");
    for (table, tally) in [("tool_calls", expected.tool_calls.len()), ("sessions", expected.sessions.len())] {
        let live = live_rows(home.path(), &[], &env, &format!("select count(*) as n from {table}"));
        assert_eq!(rows(&tables[&format!("public.{table}")]) as u64, live[0]["n"].as_u64().unwrap());
        assert_eq!(rows(&tables[&format!("public.{table}")]), tally, "{table}: the generator's tally");
    }
    let manifest: txq::export::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join(txq::export::MANIFEST_FILE)).unwrap())
            .unwrap();
    assert_eq!(manifest.folders["public.calls"], "public/calls");

    // An append writes them again whole: the same rows, in the new generation's files only.
    export_home(home.path(), &out, &["--append"]);
    let appended = tables_of(&out);
    for name in ["public.calls", "public.tool_calls", "public.sessions"] {
        assert_eq!(rows(&appended[name]), rows(&tables[name]), "{name}");
        for (path, _) in &appended[name] {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(file.starts_with("part-00002-whole-"), "{name}: {file}");
        }
    }
    let normalized = |tables: BTreeMap<String, Vec<(PathBuf, RecordBatch)>>| {
        row_keys_of(tables.into_iter().filter(|(name, _)| name.starts_with("public.")).collect())
    };
    assert_eq!(normalized(appended), normalized(tables));

    // `--tables calls` names the normalized table; partitioned by date, it is written whole.
    let only = work.path().join("only-calls");
    export_home(home.path(), &only, &["--tables", "calls", "--partition-by", "date"]);
    let tables = tables_of(&only);
    assert_eq!(tables.keys().collect::<Vec<_>>(), ["public.calls"]);
    assert_eq!(rows(&tables["public.calls"]), expected.calls.len());
    for (path, _) in &tables["public.calls"] {
        assert_eq!(path.parent().unwrap(), only.join("public/calls"), "no Hive folder");
    }
}

/// A call of a model with no price exports with a null `cost_usd` in `public/calls`, and the
/// export says so, as a statement does.
#[test]
fn an_exported_call_of_a_model_with_no_price_costs_null_and_is_named() {
    let work = tempfile::tempdir().unwrap();
    let transcripts = work.path().join(".rupu/transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let lines = [
        r#"{"type":"run_start","data":{"run_id":"run_U","workspace_id":"w","agent":"a","provider":"acme","model":"mystery-1","started_at":"2026-10-07T09:00:00Z","mode":"ask"}}"#,
        r#"{"type":"usage","data":{"provider":"acme","model":"mystery-1","input_tokens":10,"output_tokens":1}}"#,
        r#"{"type":"usage","data":{"provider":"openai","model":"gpt-5","input_tokens":1000000,"output_tokens":0}}"#,
    ];
    std::fs::write(transcripts.join("run_U.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = work.path().join("out");
    let result = export(&["--out", out.to_str().unwrap(), ".rupu/transcripts"], work.path());
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        result.stderr.contains(
            "txq: warning: no price for mystery-1: their cost is null; give prices with --prices FILE"
        ),
        "{}",
        result.stderr
    );
    let calls = &tables_of(&out)["public.calls"];
    let mut costs: Vec<(Option<String>, Option<String>)> = Vec::new();
    for (_, batch) in calls {
        costs.extend(strings(batch, "model").into_iter().zip(strings(batch, "cost_usd")));
    }
    costs.sort();
    // gpt-5: a million input tokens at $1.25.
    assert_eq!(
        costs,
        [(Some("gpt-5".to_string()), Some("1.25".to_string())), (Some("mystery-1".to_string()), None)]
    );
}
