//! Compressed transcripts (`<name>.<ext>.zst`, zstd, as Codex CLI keeps a rollout idle for a week):
//! read as their decompressed lines, so that every answer over a corpus with some files compressed
//! is the answer over the same corpus plain; a compressed copy beside its plain file is left out;
//! a damaged one costs that file alone; the cache never reads one on from an offset; the shell
//! takes in a new one; an export holds its rows.

use crate::util::{command, int, parse_ndjson, text, txq};
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use txq::generate::{Expected, ReevalOptions, RupuOptions, write_reeval_corpus, write_rupu_corpus};

/// `file` with `.zst` after its name.
fn zst(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".zst");
    name.into()
}

/// Compresses `file` to `file.zst` (zstd level 3, as Codex CLI does) and removes the plain one.
fn compress(file: &Path) -> PathBuf {
    let compressed = zst(file);
    std::fs::write(&compressed, zstd::encode_all(&std::fs::read(file).unwrap()[..], 3).unwrap()).unwrap();
    std::fs::remove_file(file).unwrap();
    compressed
}

/// A generated corpus (rupu, with netflow ledgers, and reeval) written twice: plain, and with a
/// share of every kind of file compressed (transcripts damaged or not, archived ones, ledgers,
/// step logs, reeval attempts and their raw streams).
struct Corpora {
    plain: tempfile::TempDir,
    compressed: tempfile::TempDir,
    expected: Expected,
    /// The files compressed, relative to the corpus folder.
    squeezed: BTreeSet<String>,
}

impl Corpora {
    fn new() -> Corpora {
        let options = RupuOptions { v0_74_percent: 50, ..RupuOptions::default() };
        let (plain, compressed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let expected = write_rupu_corpus(plain.path(), &options).unwrap();
        assert_eq!(write_rupu_corpus(compressed.path(), &options).unwrap(), expected);
        for dir in [&plain, &compressed] {
            write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
        }
        let damaged: BTreeSet<&String> = expected.errors.iter().map(|(file, _)| file).collect();
        let mut squeezed: BTreeSet<String> = BTreeSet::new();
        squeezed.extend(expected.runs.iter().step_by(2).map(|r| r.file.clone()));
        squeezed.extend(damaged.iter().step_by(2).map(|f| f.to_string()));
        squeezed.extend(expected.ledgers.iter().step_by(2).cloned());
        squeezed.extend(expected.non_transcripts.iter().cloned());
        let reeval: Vec<String> = walkdir::WalkDir::new(compressed.path())
            .sort_by_file_name()
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.file_name().is_some_and(|n| n == "transcript.jsonl" || n == "transcript.raw.jsonl"))
            .map(|p| p.strip_prefix(compressed.path()).unwrap().to_str().unwrap().to_string())
            .collect();
        squeezed.extend(reeval.into_iter().step_by(2));
        assert!(squeezed.iter().any(|f| f.contains("/archive/")), "an archived run is compressed");
        assert!(squeezed.iter().any(|f| damaged.contains(f)), "a damaged transcript is compressed");
        for file in &squeezed {
            compress(&compressed.path().join(file));
        }
        Corpora { plain, compressed, expected, squeezed }
    }
}

/// What the binary answers to `sql` over `.` in `dir` (ndjson), and what it warned of.
fn answer(dir: &Path, sql: &str) -> (Vec<serde_json::Map<String, serde_json::Value>>, String) {
    let out = txq(&["--no-cache", "--format", "ndjson", "-e", sql, "."], dir);
    assert_eq!(out.code, 0, "{sql}: {}", out.stderr);
    (parse_ndjson(&out.stdout), out.stderr)
}

/// The rows of an answer over the compressed corpus, sorted, with each compressed file's name
/// spelled as the plain one's: the answer over the plain corpus, if every compressed file read as
/// its lines.
fn as_plain(rows: &[serde_json::Map<String, serde_json::Value>]) -> Vec<String> {
    let mut rows: Vec<String> = rows
        .iter()
        .map(|r| serde_json::Value::Object(r.clone()).to_string().replace(".jsonl.zst", ".jsonl"))
        .collect();
    rows.sort();
    rows
}

#[test]
fn every_answer_over_compressed_transcripts_is_the_answer_over_the_plain_ones() {
    let corpora = Corpora::new();
    let (plain, compressed) = (corpora.plain.path(), corpora.compressed.path());

    // Counts per table, every table of every schema.
    let (tables, _) = answer(
        plain,
        "select table_schema, table_name from information_schema.tables \
         where table_schema not in ('information_schema') order by 1, 2",
    );
    assert!(tables.len() > 30, "{} tables", tables.len());
    let counts = tables
        .iter()
        .map(|t| {
            let (schema, table) = (text(t, "table_schema"), text(t, "table_name"));
            format!("select '{schema}.{table}' as t, count(*) as n from \"{schema}\".\"{table}\"")
        })
        .collect::<Vec<_>>()
        .join(" union all ")
        + " order by t";
    let plain_counts = answer(plain, &counts);
    assert_eq!(as_plain(&answer(compressed, &counts).0), as_plain(&plain_counts.0));
    assert!(plain_counts.0.iter().any(|r| text(r, "t") == "rupu.usage" && int(r, "n") > Some(0)));
    assert!(plain_counts.0.iter().any(|r| text(r, "t") == "rupu_netflow.flows" && int(r, "n") > Some(0)));

    // Whole rows of the tables that sum up the others (each line's values, not only counts).
    for sql in [
        "select * from rupu.runs order by run_id",
        "select * from rupu.errors order by file, line",
        "select * from rupu_netflow.flows",
        "select * from reeval.attempts",
        "select * from reeval.errors",
        "select * from rupu.files order by file",
    ] {
        let (got, warned) = answer(compressed, sql);
        let (want, plain_warned) = answer(plain, sql);
        if sql.contains("files") {
            // `bytes` is the size on disk: the compressed size for a compressed file.
            for row in &got {
                let file = text(row, "file");
                assert_eq!(
                    int(row, "bytes"),
                    Some(std::fs::metadata(compressed.join(&file)).unwrap().len() as i64)
                );
            }
            let without_bytes = |rows: &[serde_json::Map<String, serde_json::Value>]| -> Vec<_> {
                let mut rows: Vec<String> = rows
                    .iter()
                    .map(|r| r.iter().filter(|(k, _)| *k != "bytes").collect::<BTreeMap<_, _>>())
                    .map(|r| format!("{r:?}").replace(".jsonl.zst", ".jsonl"))
                    .collect();
                rows.sort();
                rows
            };
            assert_eq!(without_bytes(&got), without_bytes(&want));
        } else {
            assert_eq!(as_plain(&got), as_plain(&want), "{sql}");
        }
        // The same warnings (damaged lines skipped, files that are no transcripts), by the same
        // names but for `.zst`.
        assert_eq!(warned.replace(".jsonl.zst", ".jsonl"), plain_warned, "{sql}");
    }

    // And the generator's own tally: token sums by model, errors by file and line, runs.
    let (tokens, _) = answer(
        compressed,
        "select model, sum(input_tokens) i, sum(output_tokens) o, sum(cached_tokens) k from rupu.usage group by model",
    );
    let tokens: BTreeMap<String, (i64, i64, i64)> = tokens
        .iter()
        .map(|r| (text(r, "model"), (int(r, "i").unwrap(), int(r, "o").unwrap(), int(r, "k").unwrap())))
        .collect();
    assert_eq!(tokens, corpora.expected.tokens_by_model);
    let (errors, _) = answer(compressed, "select file, line from rupu.errors order by file, line");
    let errors: Vec<(String, u64)> =
        errors.iter().map(|r| (text(r, "file"), int(r, "line").unwrap() as u64)).collect();
    let mut expected: Vec<(String, u64)> = (corpora.expected.errors.iter())
        .map(|(file, line)| {
            let file =
                if corpora.squeezed.contains(file) { format!("./{file}.zst") } else { format!("./{file}") };
            (file, *line)
        })
        .collect();
    expected.sort();
    let mut errors = errors;
    errors.sort();
    assert_eq!(errors, expected);
    assert!(errors.iter().any(|(file, _)| file.ends_with(".zst")));
    let (runs, _) =
        answer(compressed, "select run_id, status, input_tokens, file from rupu.runs order by run_id");
    let mut want: Vec<(String, String, i64, String)> = (corpora.expected.runs.iter())
        .map(|r| {
            let file = if corpora.squeezed.contains(&r.file) {
                format!("./{}.zst", r.file)
            } else {
                format!("./{}", r.file)
            };
            (r.run_id.clone(), r.status.clone(), r.input_tokens, file)
        })
        .collect();
    want.sort();
    let got: Vec<(String, String, i64, String)> = runs
        .iter()
        .map(|r| (text(r, "run_id"), text(r, "status"), int(r, "input_tokens").unwrap(), text(r, "file")))
        .collect();
    assert_eq!(got, want);
}

/// Every Parquet file of an export, relative to `out`, with its rows' `file` column.
fn exported(out: &Path) -> BTreeMap<String, Vec<String>> {
    let mut tables = BTreeMap::new();
    for entry in walkdir::WalkDir::new(out).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(entry.path()).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        let mut files = Vec::new();
        for batch in &batches {
            if let Some(column) = batch.column_by_name("file") {
                let column = cast(column, &DataType::Utf8).unwrap();
                files.extend(column.as_string::<i32>().iter().map(|v| v.unwrap_or_default().to_string()));
            } else {
                files.extend(std::iter::repeat_n(String::new(), batch.num_rows()));
            }
        }
        let name = entry.path().strip_prefix(out).unwrap().to_str().unwrap().to_string();
        tables.insert(name, files);
    }
    tables
}

#[test]
fn an_export_holds_the_lines_of_compressed_transcripts_under_their_own_paths() {
    let corpora = Corpora::new();
    let (plain, compressed) = (corpora.plain.path(), corpora.compressed.path());
    for dir in [plain, compressed] {
        let out = txq(&["-q", "export", "--out", "out", "."], dir);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let (got, want) = (exported(&compressed.join("out")), exported(&plain.join("out")));
    assert!(!want.is_empty());
    // The same Parquet files (a compressed ledger joins its run's unit, and day), the same rows.
    // (Files are spread over the writers by their size on disk, so in another order.)
    let plainly = |files: &[String]| -> Vec<String> {
        let mut files: Vec<String> = files.iter().map(|f| f.replace(".jsonl.zst", ".jsonl")).collect();
        files.sort();
        files
    };
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    for (name, files) in &got {
        assert_eq!(plainly(files), plainly(&want[name]), "{name}");
    }
    // Each compressed transcript's rows name it as it is on disk.
    let named: BTreeSet<&str> = got.values().flatten().map(String::as_str).collect();
    for file in corpora.squeezed.iter().filter(|f| !corpora.expected.non_transcripts.contains(f)) {
        assert!(named.contains(format!("./{file}.zst").as_str()), "{file}.zst has no rows");
    }
}

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

fn usage(tokens: u64) -> String {
    format!("{{\"type\":\"usage\",\"data\":{{\"input_tokens\":{tokens}}}}}\n")
}

/// A transcript of `START` and a usage line for each of `tokens`.
fn transcript(tokens: &[u64]) -> String {
    format!("{START}\n{}", tokens.iter().map(|&t| usage(t)).collect::<String>())
}

/// `text` compressed (zstd level 3).
fn zstd_of(text: &str) -> Vec<u8> {
    zstd::encode_all(text.as_bytes(), 3).unwrap()
}

/// The CSV answer of `sql` over `.` in `dir` with the cache in `cache`, and the warnings.
fn csv(dir: &Path, cache: &Path, sql: &str) -> (String, String) {
    let out = command(dir)
        .args(["--format", "csv", "-e", sql, "."])
        .env("TXQ_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("txq runs");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

#[test]
fn a_compressed_copy_beside_its_plain_file_is_listed_as_skipped_and_the_plain_one_read() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The copy is older: the plain file was inflated from it and appended to.
    std::fs::write(dir.path().join("run_1.jsonl"), transcript(&[5, 7])).unwrap();
    std::fs::write(dir.path().join("run_1.jsonl.zst"), zstd_of(&transcript(&[5]))).unwrap();
    let (sums, warned) = csv(dir.path(), cache.path(), "select count(*) n, sum(input_tokens) s from usage");
    assert_eq!(sums, "n,s\n2,12\n");
    assert_eq!(warned, "");
    let (files, _) =
        csv(dir.path(), cache.path(), "select file, run_id, transcript, skipped from files order by file");
    assert_eq!(
        files,
        "file,run_id,transcript,skipped\n\
         ./run_1.jsonl,run_1,true,\n\
         ./run_1.jsonl.zst,run_1,false,\"a compressed copy of run_1.jsonl beside it, which is read instead\"\n"
    );
    // Once the plain file is gone (compressed again), the copy is read.
    std::fs::remove_file(dir.path().join("run_1.jsonl")).unwrap();
    let (sums, _) =
        csv(dir.path(), cache.path(), "select count(*) n, sum(input_tokens) s, min(run_id) r from usage");
    assert_eq!(sums, "n,s,r\n1,5,run_1\n");
}

#[test]
fn a_corrupt_or_cut_off_compressed_file_costs_that_file_alone_with_a_warning_naming_it() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("run_1.jsonl"), transcript(&[1, 2])).unwrap();
    // Cut off mid-frame: long enough to inflate in parts, so that lines come before the cut.
    let long: Vec<u64> = (0..200_000).collect();
    let whole = zstd_of(&transcript(&long).replace("run_1", "run_2"));
    let cut = &whole[..whole.len() / 2];
    std::fs::write(dir.path().join("run_2.jsonl.zst"), cut).unwrap();
    // Not zstd at all; and a good frame followed by garbage.
    std::fs::write(dir.path().join("run_3.jsonl.zst"), transcript(&[100])).unwrap();
    let good_then_garbage =
        [zstd_of(&transcript(&[1000, 2000]).replace("run_1", "run_4")), b"garbage!".repeat(4)].concat();
    std::fs::write(dir.path().join("run_4.jsonl.zst"), good_then_garbage).unwrap();

    // What the cut-off file's lines before the cut hold, inflated here as far as they go.
    let mut inflated = Vec::new();
    let mut decoder = zstd::stream::read::Decoder::new(cut).unwrap();
    let mut buffer = vec![0u8; 1 << 16];
    while let Ok(n @ 1..) = std::io::Read::read(&mut decoder, &mut buffer) {
        inflated.extend_from_slice(&buffer[..n]);
    }
    let whole_lines = &inflated[..inflated.iter().rposition(|&b| b == b'\n').unwrap() + 1];
    let before_cut =
        whole_lines.split(|&b| b == b'\n').filter(|l| l.starts_with(b"{\"type\":\"usage\"")).count() as u64;
    assert!(before_cut > 1000 && before_cut < 200_000, "{before_cut} lines before the cut");
    let sum_before_cut: u64 = (0..before_cut).sum();

    let sql = "select run_id, count(*) n, sum(input_tokens) s from usage group by run_id order by run_id";
    let expected = format!("run_id,n,s\nrun_1,2,3\nrun_2,{before_cut},{sum_before_cut}\nrun_4,2,3000\n");
    // Twice: a damaged file is not cached, so the second run (with the cache) warns again.
    for run in ["first", "second"] {
        let (answer, warned) = csv(dir.path(), cache.path(), sql);
        assert_eq!(answer, expected, "{run} run");
        let warnings: Vec<&str> = warned.lines().collect();
        assert_eq!(warnings.len(), 3, "{run} run: {warned}");
        assert!(
            warnings.iter().any(|w| w.starts_with(
                "txq: warning: ./run_2.jsonl.zst: read in part: the zstd data is cut off mid-frame after "
            ) && w.ends_with(" decompressed bytes; the lines before are read")),
            "{run} run: {warned}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("txq: warning: ./run_3.jsonl.zst: not read: not valid zstd data (")),
            "{run} run: {warned}"
        );
        assert!(
            warnings.iter().any(
                |w| w.starts_with("txq: warning: ./run_4.jsonl.zst: read in part: not valid zstd data (")
            ),
            "{run} run: {warned}"
        );
    }
    // Nor do they break the files table or the errors: the cut-off last line is not damage.
    let (files, _) = csv(dir.path(), cache.path(), "select file, transcript from files order by file");
    assert_eq!(
        files,
        "file,transcript\n./run_1.jsonl,true\n./run_2.jsonl.zst,true\n./run_4.jsonl.zst,true\n"
    );
    let (errors, _) = csv(dir.path(), cache.path(), "select count(*) n from errors");
    assert_eq!(errors, "n\n0\n");
}

/// What the cache in `cache` (of the folder `dir`) knows now of the one file of `dir`.
fn cached(dir: &Path, cache: &Path) -> &'static str {
    let formats = txq::format::all();
    let rupu = formats.iter().position(|f| f.name == "rupu").unwrap();
    let discovery = txq::source::discover::discover(&formats, &[dir.to_path_buf()]).unwrap();
    assert_eq!(discovery.files[rupu].len(), 1, "one transcript");
    let file = &discovery.files[rupu].get(0);
    let mut loaded = txq::infer::cache::InferenceCache::load(cache, &[dir.to_path_buf()]);
    let store = txq::source::read::local_store();
    match futures::executor::block_on(loaded.lookup(&store, "rupu", file)) {
        txq::infer::cache::Lookup::Same(_) => "same: not read",
        txq::infer::cache::Lookup::Grown(..) => "grown: read on",
        txq::infer::cache::Lookup::Unknown => "unknown: read whole",
    }
}

#[test]
fn an_unchanged_compressed_file_is_not_read_again_and_a_longer_one_is_read_whole() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl.zst");
    std::fs::write(&file, zstd_of(&transcript(&[5]))).unwrap();
    const EVENTS: &str = "select type, count(*) n from events group by type order by type";
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,1\n");
    assert_eq!(cached(dir.path(), cache.path()), "same: not read");
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,1\n");

    // Replaced by a longer one (inflated, appended to, compressed again): its compressed bytes
    // begin as the old ones did, but it is read again whole, never on from an old offset.
    std::fs::write(&file, zstd_of(&transcript(&[5, 7, 30]))).unwrap();
    assert_eq!(cached(dir.path(), cache.path()), "unknown: read whole");
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,3\n");
    assert_eq!(csv(dir.path(), cache.path(), "select sum(input_tokens) s from usage").0, "s\n42\n");
    assert_eq!(cached(dir.path(), cache.path()), "same: not read");
    // Only touched: read again whole too.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    drop(f);
    assert_eq!(cached(dir.path(), cache.path()), "unknown: read whole");
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,3\n");

    // A plain file that grew is still read on from its known lines.
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let plain = dir.path().join("run_1.jsonl");
    std::fs::write(&plain, transcript(&[5])).unwrap();
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,1\n");
    std::fs::OpenOptions::new().append(true).open(&plain).unwrap().write_all(usage(7).as_bytes()).unwrap();
    assert_eq!(cached(dir.path(), cache.path()), "grown: read on");
    assert_eq!(csv(dir.path(), cache.path(), EVENTS).0, "type,n\nrun_start,1\nusage,2\n");
}

use std::io::Write as _;

/// The shell's engine takes in, before a statement, a transcript compressed beside its plain
/// file (still the plain one read), the plain one removed (the copy read, the same answer), and a
/// new compressed transcript.
#[test]
fn the_live_engine_follows_a_transcript_through_its_compression_and_sees_a_new_compressed_one() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("run_1.jsonl");
    std::fs::write(&plain, transcript(&[5, 7])).unwrap();
    let options = txq::table::corpus::ReadOptions { cache_dir: None, ..Default::default() };
    let places = txq::sql::session::Places::Given(vec![dir.path().to_path_buf()]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut live = txq::sql::session::LiveEngine::open(places, options).await.unwrap();
        let ask = async |live: &txq::sql::session::LiveEngine, sql: &str| {
            let batches = live.engine.ctx.sql(sql).await.unwrap().collect().await.unwrap();
            datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string()
        };
        const SUM: &str = "select count(*) n, sum(input_tokens) s from usage";
        const FILES: &str = "select file, transcript from files order by file";
        assert!(ask(&live, SUM).await.contains("| 2 | 12 |"));

        // Compressed: the copy is written first, the plain file removed after.
        std::fs::write(zst(&plain), zstd_of(&transcript(&[5, 7]))).unwrap();
        assert!(live.refresh().await.unwrap().is_some());
        assert!(ask(&live, SUM).await.contains("| 2 | 12 |"), "{}", ask(&live, SUM).await);
        let files = ask(&live, FILES).await;
        assert!(
            files.contains("run_1.jsonl     | true ") && files.contains("run_1.jsonl.zst | false "),
            "{files}"
        );
        std::fs::remove_file(&plain).unwrap();
        assert!(live.refresh().await.unwrap().is_some());
        assert!(ask(&live, SUM).await.contains("| 2 | 12 |"), "{}", ask(&live, SUM).await);
        assert!(ask(&live, FILES).await.contains("run_1.jsonl.zst | true "), "{}", ask(&live, FILES).await);
        assert!(live.refresh().await.unwrap().is_none(), "nothing changed");

        // A new compressed transcript.
        let other = transcript(&[100]).replace("run_1", "run_2");
        std::fs::write(dir.path().join("run_2.jsonl.zst"), zstd_of(&other)).unwrap();
        assert!(live.refresh().await.unwrap().is_some());
        let sums =
            ask(&live, "select run_id, sum(input_tokens) s from usage group by run_id order by run_id").await;
        assert!(sums.contains("| run_1  | 12  |") && sums.contains("| run_2  | 100 |"), "{sums}");
    });
}
