//! Untrusted names meet the file system and the terminal: event types that spell paths
//! (`../../../victim`, `/abs/x`, `a/b`, `""`, `.`, `..`, NUL, newline, ESC, 300 characters)
//! exported, appended and overwritten without a byte written or removed outside OUT, a link
//! planted inside OUT never written through; values and folder names with escape sequences and
//! control characters (and folder names that are not UTF-8) shown escaped in table output,
//! warnings and errors, exact in CSV, and their files read.

use crate::util::txq;
use datafusion::arrow::array::{AsArray, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The event types that name paths, each with a marker field that says which it is.
const HOSTILE_TYPES: [&str; 9] =
    ["../../../victim", "/abs/x", "a/b", "", "..", ".", "nul\u{0}x", "nl\nx", "esc\u{1b}[31mx"];

fn long_type() -> String {
    "l".repeat(300)
}

fn hostile_types() -> Vec<String> {
    HOSTILE_TYPES.iter().map(|t| t.to_string()).chain([long_type()]).collect()
}

/// One rupu run: its start, one event of each of `types` (field `marker` = its place), a usage
/// line with `model`, and, if `complete`, its end.
fn run_transcript(run_id: &str, types: &[String], model: &str, complete: bool) -> String {
    let mut lines = vec![serde_json::json!({"type": "run_start", "data": {
        "run_id": run_id, "started_at": "2026-10-07T09:45:11Z", "agent": "a", "model": "m", "schema": 2}})];
    for (i, kind) in types.iter().enumerate() {
        lines.push(serde_json::json!({"type": kind, "data": {"marker": format!("m{i}")}}));
    }
    lines.push(
        serde_json::json!({"type": "usage", "data": {"model": model, "input_tokens": 1, "output_tokens": 2}}),
    );
    if complete {
        lines.push(serde_json::json!({"type": "run_complete", "data": {"run_id": run_id, "status": "ok"}}));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

const RUN_1: &str = "run_01M4AW1BJPRM1GJ0VSDRRVXJ01";
const RUN_2: &str = "run_01M4AW1BJPRM1GJ0VSDRRVXJ02";

/// What a tree holds, links not followed, but for the trees `leave_out`: each path with its
/// content (a link's target), as a digest.
fn snapshot(dir: &Path, leave_out: &[&Path]) -> BTreeMap<PathBuf, String> {
    use sha2::Digest;
    let mut found = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let entry = entry.unwrap();
        if leave_out.iter().any(|p| entry.path().starts_with(p)) {
            continue;
        }
        let kind = entry.file_type();
        let content = if kind.is_symlink() {
            let mut text = b"link:".to_vec();
            text.extend(std::fs::read_link(entry.path()).unwrap().as_os_str().as_encoded_bytes());
            text
        } else if kind.is_file() {
            std::fs::read(entry.path()).unwrap()
        } else {
            b"folder".to_vec()
        };
        let digest: String = sha2::Sha256::digest(&content).iter().map(|b| format!("{b:02x}")).collect();
        found.insert(entry.into_path(), digest);
    }
    found
}

/// A Parquet file whose one row names `file` in its `file` column: what an append that took a
/// folder outside OUT for a table's would read as that run's rows, and delete.
fn write_victim(path: &Path, file: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("file", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec![file]))]).unwrap();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// The Parquet files below `dir`.
fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect()
}

/// The rows of every Parquet file below `dir`.
fn read_rows(dir: &Path) -> Vec<RecordBatch> {
    let mut batches = Vec::new();
    for file in parquet_files(dir) {
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap())
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(Result::unwrap));
    }
    batches
}

fn column_text(batch: &RecordBatch, column: &str) -> Option<Vec<String>> {
    let column = cast(batch.column_by_name(column)?, &DataType::Utf8).unwrap();
    Some(column.as_string::<i32>().iter().map(|v| v.unwrap_or_default().to_string()).collect())
}

/// Checks OUT: every table the manifest names is in a folder of the documented form, right
/// inside `OUT/<schema>/`, a real folder; each hostile type's rows (found by their marker) are
/// in exactly one table's folder, `runs` rows each; `usage` holds `runs` rows.
fn check_out(out: &Path, runs: usize) {
    let manifest: txq::export::Manifest =
        serde_json::from_str(&std::fs::read_to_string(out.join(txq::export::MANIFEST_FILE)).unwrap())
            .unwrap();
    assert_eq!(manifest.folders.len(), manifest.tables.len(), "every table's folder is recorded");
    let mut markers: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut folders = BTreeSet::new();
    for (table, folder) in &manifest.folders {
        let (schema, name) = folder.split_once('/').expect("<schema>/<table>");
        if schema == "public" {
            // The normalized tables, written whole.
            assert!(
                ["public/calls", "public/sessions", "public/tool_calls", "public/rate_limits"]
                    .contains(&folder.as_str())
            );
            continue;
        }
        assert_eq!(schema, "rupu", "{table:?}");
        assert!(
            !name.is_empty()
                && name.len() <= 120
                && !name.starts_with('.')
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-%~ABCDEF".contains(&b)),
            "{table:?} is in {folder:?}, not a folder name of the documented form"
        );
        assert!(folders.insert(folder.clone()), "{folder} holds one table");
        let path = out.join(schema).join(name);
        let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{table:?}: {path:?}: {e}"));
        assert!(meta.is_dir(), "{path:?} is a real folder");
        assert!(!parquet_files(&path).is_empty(), "{path:?} holds the table's files");
        let batches = read_rows(&path);
        for batch in &batches {
            for marker in column_text(batch, "marker").unwrap_or_default() {
                let entry = markers.entry(marker).or_insert((table.clone(), 0));
                assert_eq!(entry.0, *table, "a type's rows are in one table");
                entry.1 += 1;
            }
        }
        if table == "rupu.usage" {
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), runs);
        }
    }
    let expected: BTreeMap<String, usize> =
        (0..hostile_types().len()).map(|i| (format!("m{i}"), runs)).collect();
    let got: BTreeMap<String, usize> = markers.into_iter().map(|(m, (_, n))| (m, n)).collect();
    assert_eq!(got, expected, "each hostile type's rows, once a run");
    // Nothing in OUT but its manifest and its schemas' folders (the normalized tables' `public`).
    let top: BTreeSet<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let schemas = [txq::export::MANIFEST_FILE, "public", "rupu"];
    assert_eq!(top, schemas.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>());
}

#[test]
fn table_names_that_spell_paths_are_exported_inside_out_and_nothing_outside_is_touched() {
    let work = tempfile::tempdir().unwrap();
    // OUT three folders down, so that `rupu/../../../victim` below it (or below the new export
    // written beside it) lands in `work/d1/victim`, where the victim waits.
    let out = work.path().join("d1/d2/out");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let transcripts = work.path().join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let types = hostile_types();
    let first = transcripts.join(format!("{RUN_1}.jsonl"));
    // Still open: an append writes it again, taking its old rows out of the files that hold them.
    std::fs::write(&first, run_transcript(RUN_1, &types, "m", false)).unwrap();
    let file_column = first.to_str().unwrap().to_string();
    for name in
        ["part-00001-open-0-000.parquet", "part-00001-settled-0-000.parquet", "part-00002-open-0-000.parquet"]
    {
        write_victim(&work.path().join("d1/victim").join(name), &file_column);
    }
    let abs = || if Path::new("/abs").exists() { snapshot(Path::new("/abs"), &[]) } else { BTreeMap::new() };
    let abs_before = abs();
    let before = snapshot(work.path(), &[&out, &transcripts]);

    let check_nothing_outside = |what: &str| {
        assert_eq!(
            snapshot(work.path(), &[&out, &transcripts]),
            before,
            "{what}: nothing outside OUT changed"
        );
        assert_eq!(abs(), abs_before, "{what}: nothing written at /abs");
    };
    let run = |extra: &[&str]| {
        let mut args = vec!["export", "--out", out.to_str().unwrap()];
        args.extend(extra);
        args.push(transcripts.to_str().unwrap());
        let result = txq(&args, work.path());
        assert_eq!(result.code, 0, "txq {args:?}: {}", result.stderr);
        result
    };

    run(&[]);
    check_nothing_outside("export");
    check_out(&out, 1);

    std::fs::write(transcripts.join(format!("{RUN_2}.jsonl")), run_transcript(RUN_2, &types, "m", true))
        .unwrap();
    let appended = run(&["--append"]);
    assert!(appended.stderr.contains("1 new, 1 written again whole"), "{}", appended.stderr);
    check_nothing_outside("export --append");
    check_out(&out, 2);

    run(&["--overwrite"]);
    check_nothing_outside("export --overwrite");
    check_out(&out, 2);
    let beside: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".txq-"))
        .collect();
    assert!(beside.is_empty(), "nothing of the export left beside OUT: {beside:?}");
}

#[cfg(unix)]
#[test]
fn a_link_planted_inside_out_is_never_written_through() {
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let transcripts = work.path().join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let first = transcripts.join(format!("{RUN_1}.jsonl"));
    std::fs::write(&first, run_transcript(RUN_1, &[], "m", false)).unwrap();
    let export = |extra: &[&str]| {
        let mut args = vec!["export", "--out", out.to_str().unwrap()];
        args.extend(extra);
        args.push(transcripts.to_str().unwrap());
        txq(&args, work.path())
    };
    let first_export = export(&[]);
    assert_eq!(first_export.code, 0, "{}", first_export.stderr);
    std::fs::write(transcripts.join(format!("{RUN_2}.jsonl")), run_transcript(RUN_2, &[], "m", true))
        .unwrap();

    // What the links point to: a folder holding a Parquet file of the open run's rows, a file.
    write_victim(&elsewhere.path().join("part-00001-open-0-000.parquet"), first.to_str().unwrap());
    std::fs::write(elsewhere.path().join("victim.json"), "precious").unwrap();
    let untouched = snapshot(elsewhere.path(), &[]);

    // An append over a link is refused, naming it, and writes nothing where the link points.
    let append_is_refused_naming = |link: &str| {
        let refused = export(&["--append"]);
        assert_eq!(refused.code, 2, "{link}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(&format!("{}: a symbolic link inside", out.join(link).display())),
            "{link}: {}",
            refused.stderr
        );
        assert_eq!(snapshot(elsewhere.path(), &[]), untouched, "{link}: nothing written there");
    };
    // A link in a table's folder (a partition's folder, a file): refused, naming it.
    for link in ["rupu/usage/date=2026-10-07", "rupu/usage/more.parquet"] {
        std::os::unix::fs::symlink(elsewhere.path(), out.join(link)).unwrap();
        append_is_refused_naming(link);
        std::fs::remove_file(out.join(link)).unwrap();
    }
    // A table's folder, or the schema's, replaced by a link: the append is refused, naming it.
    for link in ["rupu/usage", "rupu"] {
        let saved = out.join(format!("{}.saved", link.replace('/', "-")));
        std::fs::rename(out.join(link), &saved).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), out.join(link)).unwrap();
        append_is_refused_naming(link);
        std::fs::remove_file(out.join(link)).unwrap();
        std::fs::rename(&saved, out.join(link)).unwrap();
    }

    // Links named as the export's own leftovers are removed, themselves, and the append goes on.
    std::os::unix::fs::symlink(elsewhere.path(), out.join(".txq-staging-2")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("victim.json"), out.join("_txq_export.json.partial"))
        .unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("part-00001-open-0-000.parquet"),
        out.join("rupu/usage/part-00002-open-0-000.parquet"),
    )
    .unwrap();
    let appended = export(&["--append"]);
    assert_eq!(appended.code, 0, "{}", appended.stderr);
    assert_eq!(snapshot(elsewhere.path(), &[]), untouched, "nothing written there");
    let usage: usize = read_rows(&out.join("rupu/usage")).iter().map(|b| b.num_rows()).sum();
    assert_eq!(usage, 2, "the append wrote both runs' usage inside OUT");
    let replaced = std::fs::symlink_metadata(out.join("rupu/usage/part-00002-open-0-000.parquet")).unwrap();
    assert!(replaced.is_file(), "the link is replaced by the append's own file");

    // --overwrite puts a new export in OUT's place; a link in the old one goes with it, alone.
    std::os::unix::fs::symlink(elsewhere.path(), out.join("rupu/net_flow.link")).unwrap();
    let replaced = export(&["--overwrite"]);
    assert_eq!(replaced.code, 0, "{}", replaced.stderr);
    assert!(std::fs::symlink_metadata(out.join("rupu/net_flow.link")).is_err());
    assert_eq!(snapshot(elsewhere.path(), &[]), untouched, "nothing written there");
}

/// Values a terminal would act on: colour, window title, screen clear, the C1 CSI.
const HOSTILE_VALUES: [&str; 4] = ["\u{1b}[31mred", "\u{1b}]0;title\u{7}", "\u{1b}[2J", "\u{9b}2Jc1"];

/// Every character of `text` a terminal acts on, but for line breaks.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && (c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)))
        .collect()
}

/// A folder name with a newline, a tab, an ESC and, on unix, a byte that is not UTF-8; and how
/// txq shows it.
fn hostile_folder() -> (std::ffi::OsString, &'static str) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        (
            std::ffi::OsStr::from_bytes(b"runs\nof\tme\x1b[2J\xff").to_os_string(),
            "runs\\nof\\tme\\x1b[2J\\xff",
        )
    }
    #[cfg(not(unix))]
    {
        (std::ffi::OsString::from("runs\nof\tme\u{1b}[2J"), "runs\\nof\\tme\\x1b[2J")
    }
}

#[test]
fn values_and_folder_names_reach_the_terminal_escaped_and_csv_exact() {
    let work = tempfile::tempdir().unwrap();
    let (folder, shown) = hostile_folder();
    let dir = work.path().join("t").join(&folder);
    std::fs::create_dir_all(&dir).unwrap();
    let run_ids = [
        "run_01M4AW1BJPRM1GJ0VSDRRVXJ11",
        "run_01M4AW1BJPRM1GJ0VSDRRVXJ12",
        "run_01M4AW1BJPRM1GJ0VSDRRVXJ13",
        "run_01M4AW1BJPRM1GJ0VSDRRVXJ14",
    ];
    for (run_id, model) in run_ids.iter().zip(HOSTILE_VALUES) {
        std::fs::write(dir.join(format!("{run_id}.jsonl")), run_transcript(run_id, &[], model, true))
            .unwrap();
    }
    // A file of the format's naming that is not JSON Lines: a warning names it.
    std::fs::write(dir.join("junk.jsonl"), "not json\nnor this\n").unwrap();
    let t = work.path().join("t");
    let t = t.to_str().unwrap();

    // Table format: every value, and the path in the warning, escaped; no raw control byte.
    let table = txq(&["-e", "select file, model from usage order by model", t], work.path());
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert_eq!(raw_controls(&table.stdout), Vec::<char>::new(), "{}", table.stdout);
    assert_eq!(raw_controls(&table.stderr), Vec::<char>::new(), "{}", table.stderr);
    for escaped in ["\\x1b[31mred", "\\x1b]0;title\\x07", "\\x1b[2J", "\\u{9b}2Jc1"] {
        assert!(table.stdout.contains(escaped), "{escaped} in {}", table.stdout);
    }
    assert!(table.stdout.contains(&format!("{shown}/{}.jsonl", run_ids[0])), "{}", table.stdout);
    assert_eq!(table.stdout.lines().count(), 4 + 4, "one line a row: {}", table.stdout);
    assert!(
        table.stderr.contains(&format!("{shown}/junk.jsonl: not read: not JSON Lines")),
        "{}",
        table.stderr
    );

    // CSV keeps the exact text (a path's bytes that are not UTF-8 are `\xff` in the column).
    let csv = txq(&["--format", "csv", "-e", "select model from usage order by model", t], work.path());
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let mut sorted = HOSTILE_VALUES.to_vec();
    sorted.sort();
    let rows: Vec<String> = sorted.iter().map(|v| format!("{v}\n")).collect();
    assert_eq!(csv.stdout, format!("model\n{}", rows.concat()));
    let files =
        txq(&["--format", "ndjson", "-e", "select distinct file from usage order by file", t], work.path());
    let files: Vec<String> =
        crate::util::parse_ndjson(&files.stdout).iter().map(|r| crate::util::text(r, "file")).collect();
    let raw_folder = shown.replace("\\n", "\n").replace("\\t", "\t").replace("\\x1b", "\u{1b}");
    let expected: Vec<String> = run_ids.iter().map(|id| format!("{t}/{raw_folder}/{id}.jsonl")).collect();
    assert_eq!(files, expected, "every file beneath the folder is read, and named exactly");

    // An error quoting a value, and an export's warnings and summary, escaped too.
    let error = txq(&["-e", "select cast(model as int) from usage", t], work.path());
    assert_eq!(error.code, 1, "{}", error.stderr);
    assert_eq!(raw_controls(&error.stderr), Vec::<char>::new(), "{}", error.stderr);
    assert!(
        error.stderr.contains("Cannot cast string '\\x1b")
            || error.stderr.contains("Cannot cast string '\\u{9b}"),
        "the value is in the message, escaped: {}",
        error.stderr
    );
    let export = txq(&["export", "--out", "out\n\u{1b}]0;x\u{7}", t], work.path());
    assert_eq!(export.code, 0, "{}", export.stderr);
    assert_eq!(raw_controls(&export.stderr), Vec::<char>::new(), "{}", export.stderr);
    assert!(export.stderr.contains("to out\\n\\x1b]0;x\\x07 ("), "{}", export.stderr);
    assert!(export.stderr.contains("junk.jsonl: not read"), "{}", export.stderr);
}

#[cfg(unix)]
#[test]
fn files_beneath_folders_whose_names_are_not_utf8_are_read_and_told_apart() {
    use std::os::unix::ffi::OsStrExt;
    let work = tempfile::tempdir().unwrap();
    let runs = [
        ("run_01M4AW1BJPRM1GJ0VSDRRVXJ21", b"a\xff".as_slice()),
        ("run_01M4AW1BJPRM1GJ0VSDRRVXJ22", b"a\xfe"),
    ];
    for (run_id, folder) in runs {
        let dir = work.path().join("t").join(std::ffi::OsStr::from_bytes(folder));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{run_id}.jsonl")), run_transcript(run_id, &[], "m", true)).unwrap();
    }
    let result = txq(
        &["--format", "csv", "-e", "select count(*) as n, count(distinct file) as files from usage", "t"],
        work.path(),
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.stdout, "n,files\n2,2\n", "{}", result.stderr);
    let files = txq(&["--format", "csv", "-e", "select file from usage order by file", "t"], work.path());
    assert_eq!(
        files.stdout,
        "file\nt/a\\xfe/run_01M4AW1BJPRM1GJ0VSDRRVXJ22.jsonl\nt/a\\xff/run_01M4AW1BJPRM1GJ0VSDRRVXJ21.jsonl\n"
    );
    // Exported, appended: each run its own unit.
    let out = work.path().join("out");
    let export = txq(&["export", "--out", out.to_str().unwrap(), "t"], work.path());
    assert_eq!(export.code, 0, "{}", export.stderr);
    assert!(export.stderr.contains("exported 2 rupu runs"), "{}", export.stderr);
    let again = txq(&["export", "--append", "--out", out.to_str().unwrap(), "t"], work.path());
    assert!(
        again.stderr.contains(
            "0 new, 0 written again whole (still being written, or changed, last time), 2 already there"
        ),
        "{}",
        again.stderr
    );
}

#[test]
fn an_export_written_before_folders_were_named_safely_is_appended_to_only_where_they_agree() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let transcripts = work.path().join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let export = |types: &[String], extra: &[&str]| {
        let mut args = vec!["export", "--out", out.to_str().unwrap()];
        args.extend(extra);
        args.push(transcripts.to_str().unwrap());
        std::fs::write(transcripts.join(format!("{RUN_1}.jsonl")), run_transcript(RUN_1, types, "m", false))
            .unwrap();
        txq(&args, work.path())
    };
    // The manifest of an older txq has no folders: each table was where its name said.
    let forget_folders = || {
        let path = out.join(txq::export::MANIFEST_FILE);
        let mut manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        manifest.as_object_mut().unwrap().remove("folders").unwrap();
        std::fs::write(&path, manifest.to_string()).unwrap();
    };
    assert_eq!(export(&[], &[]).code, 0);
    forget_folders();
    let appended = export(&[], &["--append"]);
    assert_eq!(appended.code, 0, "names that were safe folder names already: {}", appended.stderr);

    let odd = vec!["Odd".to_string()];
    let overwritten = export(&odd, &["--overwrite"]);
    assert_eq!(overwritten.code, 0, "{}", overwritten.stderr);
    forget_folders();
    // The table's name as this txq's catalog makes it: if it is a safe folder name already, the
    // old export put it in the same folder, and the append goes on.
    let names = txq(
        &[
            "--format",
            "csv",
            "-e",
            "select table_name from information_schema.tables where lower(table_name) like 'odd%'",
            transcripts.to_str().unwrap(),
        ],
        work.path(),
    );
    let name = names.stdout.lines().nth(1).expect("the table of type Odd").to_string();
    let safe = name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let again = export(&odd, &["--append"]);
    if safe {
        assert_eq!(again.code, 0, "{}", again.stderr);
    } else {
        assert_eq!(again.code, 2, "{}", again.stderr);
        assert!(
            again.stderr.contains(&format!("in the folder rupu/{name}"))
                && again.stderr.contains("--overwrite"),
            "{}",
            again.stderr
        );
    }
}

/// `txq export` run where no file may grow past `bytes` (as on a disk that fills): writes fail
/// with "file too large" rather than the signal that would end the process.
fn export_on_a_full_disk(cwd: &Path, args: &[&str], bytes: u64) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut command = crate::util::command(cwd);
    command.arg("export").args(args).stdin(std::process::Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

/// An export that hit a full disk left its staging folder behind: a fresh export leaves nothing
/// beside OUT, an append nothing inside it, and the export there before is still whole.
#[test]
fn an_export_that_fills_the_disk_leaves_no_staging_folder() {
    let corpus =
        crate::util::Generated::new(&txq::generate::RupuOptions { seed: 5, runs: 40, ..Default::default() });
    let parent = tempfile::tempdir().unwrap();
    let out = parent.path().join("out");
    let transcripts = corpus.transcripts();
    let (out_arg, from) = (out.to_str().unwrap(), transcripts.to_str().unwrap());
    let failed = export_on_a_full_disk(parent.path(), &["--out", out_arg, from], 16 << 10);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "{stderr}");
    assert!(stderr.contains("txq: error"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(parent.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing beside OUT: {left:?}");

    let done = txq(&["-q", "export", "--out", out_arg, from], parent.path());
    assert_eq!(done.code, 0, "{}", done.stderr);
    let before = snapshot(&out, &[]);
    // A run more, appended on the full disk.
    let more = corpus.dir.path().join("more/.rupu/transcripts");
    std::fs::create_dir_all(&more).unwrap();
    for entry in std::fs::read_dir(&transcripts).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, more.join(path.file_name().unwrap())).unwrap();
        }
    }
    let extra = run_transcript(
        "01JZZZZZZZZZZZZZZZZZZZZZZZ",
        &vec!["note".to_string(); 2000],
        "claude-sonnet-4-6",
        true,
    );
    std::fs::write(more.join("run_01JZZZZZZZZZZZZZZZZZZZZZZZ.jsonl"), extra).unwrap();
    let failed = export_on_a_full_disk(
        parent.path(),
        &["--append", "--out", out_arg, more.to_str().unwrap()],
        4 << 10,
    );
    assert!(!failed.status.success(), "{}", String::from_utf8_lossy(&failed.stderr));
    let staging: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".txq-staging-"))
        .collect();
    assert!(staging.is_empty(), "no staging folder: {staging:?}");
    assert_eq!(snapshot(&out, &[]), before, "the export before is whole");
}
