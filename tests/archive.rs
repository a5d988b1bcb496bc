//! `txq archive` through the real binary, on a generated home of the three harnesses (every trap
//! and damaged line of the generator's): archived half written (half the files, each cut to its
//! first half of lines, one with a line it later loses), then whole (files grown, new ones, the
//! rewritten one archived again from its start), then the home deleted as Claude Code's cleanup
//! would: the archive alone answers every count and sum of `calls`, `tool_calls` and `sessions`
//! as the generator tallied, its rows carry the archiving machine, a run that finds nothing new
//! writes nothing, and the archive read beside the live home counts each line once. Runs killed
//! at points spread over a run (SIGKILL) leave an archive that reads, never more than the truth;
//! an archive in the test S3 server works the same; pyarrow, pandas, polars and DuckDB read its
//! parts, every line of every archived file once.

use crate::util::{command, ndjson_rows};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use txq::generate::harness::HarnessOptions;
use txq::generate::{HarnessExpected, write_harness_home};

/// Per harness: calls, input, output tokens; tool calls; sessions.
type Figures = BTreeMap<String, (i64, i64, i64, i64, i64)>;

const FIGURES: &str = "select c.harness, c.calls, c.input_tokens, c.output_tokens, \
    coalesce(t.tool_calls, 0) as tool_calls, coalesce(s.sessions, 0) as sessions from \
    (select harness, count(*) as calls, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens \
     from calls group by 1) c \
    left join (select harness, count(*) as tool_calls from tool_calls group by 1) t on t.harness = c.harness \
    left join (select harness, count(*) as sessions from sessions group by 1) s on s.harness = c.harness";

fn tally(expected: &HarnessExpected) -> Figures {
    expected
        .by_harness
        .iter()
        .filter(|(_, c)| c.calls > 0)
        .map(|(h, c)| {
            (
                h.clone(),
                (c.calls as i64, c.input_tokens, c.output_tokens, c.tool_calls as i64, c.sessions as i64),
            )
        })
        .collect()
}

fn figures(rows: &[Map<String, Value>]) -> Figures {
    let int = |row: &Map<String, Value>, c: &str| row[c].as_i64().unwrap_or_else(|| panic!("{c}: {row:?}"));
    rows.iter()
        .map(|r| {
            let harness = r["harness"].as_str().unwrap().to_string();
            let f = (
                int(r, "calls"),
                int(r, "input_tokens"),
                int(r, "output_tokens"),
                int(r, "tool_calls"),
                int(r, "sessions"),
            );
            (harness, f)
        })
        .collect()
}

/// Runs txq in `cwd` with `args` (its own cache folder under `cwd`, `TXQ_MACHINE` set to
/// `machine`); its stdout as rows of ndjson and its stderr, failing the test when it fails.
fn run(
    cwd: &Path,
    machine: &str,
    args: &[&str],
    env: &[(&str, String)],
) -> (Vec<Map<String, Value>>, String) {
    let mut txq = command(cwd);
    txq.env("TXQ_CACHE_DIR", cwd.join("cache")).env("TXQ_MACHINE", machine);
    txq.envs(env.iter().map(|(name, value)| (name, value)));
    ndjson_rows(txq, args)
}

/// A generated home of the three harnesses, in `root/full`, and its tally.
fn full_home(root: &Path) -> HarnessExpected {
    let options = HarnessOptions { seed: 11, sessions: 8, keep_rows: true, ..HarnessOptions::default() };
    write_harness_home(&root.join("full"), &options).unwrap()
}

/// Every file below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

fn copy(from: &Path, to: &Path, file: &str) {
    std::fs::create_dir_all(to.join(file).parent().unwrap()).unwrap();
    std::fs::copy(from.join(file), to.join(file)).unwrap();
}

/// What an archive folder holds: each file's path, size and modification time.
fn listing(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    files_below(dir)
        .into_iter()
        .map(|f| {
            let meta = std::fs::metadata(dir.join(&f)).unwrap();
            (f, meta.len(), meta.modified().unwrap())
        })
        .collect()
}

/// The summary line of an archive run.
fn summary(stderr: &str) -> &str {
    stderr.lines().find(|l| l.starts_with("txq: archive ")).unwrap_or_else(|| panic!("no summary: {stderr}"))
}

#[test]
fn an_archive_kept_through_growth_and_cleanup_answers_as_the_home_did() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let expected = full_home(root);
    let truth = tally(&expected);
    assert_eq!(truth.len(), 3, "{truth:?}");
    let (full, live) = (root.join("full"), root.join("live"));
    // The home half written: every file that is not a transcript, every second transcript cut
    // to its first half of lines (a compressed one whole), and one Claude session with a first
    // line it will lose (a rewrite: archived again, from its start).
    for file in &expected.other_files {
        copy(&full, &live, file);
    }
    let claude =
        expected.files.iter().find(|f| f.contains("/projects/") && !expected.shadowed.contains(f)).unwrap();
    for (i, file) in expected.files.iter().enumerate() {
        if i % 2 == 1 && file != claude {
            continue;
        }
        copy(&full, &live, file);
        if file.ends_with(".zst") {
            continue;
        }
        let bytes = std::fs::read(full.join(file)).unwrap();
        let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
        let mut kept: Vec<u8> = lines[..lines.len().div_ceil(2)].concat();
        if file == claude {
            kept.splice(
                0..0,
                b"{\"type\":\"summary\",\"summary\":\"a draft\",\"leafUuid\":\"x\"}\n".iter().copied(),
            );
        }
        std::fs::write(live.join(file), kept).unwrap();
    }
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    assert!(summary(&stderr).contains(": run 1: "), "{stderr}");
    assert!(root.join("arch/_txq_archive.json").is_file());
    // The whole home: grown files, new ones, the rewritten one.
    for file in expected.files.iter().chain(&expected.other_files) {
        copy(&full, &live, file);
    }
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    let line = summary(&stderr);
    assert!(line.contains(": run 2: ") && line.contains(" 1 rewritten files"), "{line}");
    assert!(!line.contains(" 0 grown") && !line.contains(" of 0 new"), "{line}");
    // Nothing new: nothing written.
    let before = listing(&root.join("arch"));
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    assert!(summary(&stderr).contains("nothing new"), "{stderr}");
    assert_eq!(listing(&root.join("arch")), before);
    // Codex CLI compressing a rollout in place: no new line, and the record follows the file,
    // so that the next run does not read it again.
    let rollout = expected
        .files
        .iter()
        .find(|f| {
            f.contains(".codex/sessions/")
                && f.ends_with(".jsonl")
                && !expected.files.contains(&format!("{f}.zst"))
        })
        .unwrap();
    let bytes = std::fs::read(live.join(rollout)).unwrap();
    std::fs::write(live.join(format!("{rollout}.zst")), zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    std::fs::remove_file(live.join(rollout)).unwrap();
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    assert!(summary(&stderr).contains("nothing new"), "{stderr}");
    let manifest = std::fs::read_to_string(root.join("arch/_txq_archive.json")).unwrap();
    assert!(manifest.contains(&format!("{rollout}.zst\"")), "{manifest}");
    let before = listing(&root.join("arch"));
    run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    assert_eq!(listing(&root.join("arch")), before);
    // Beside the live home, every line counts once; the live files' rows are this machine's.
    let (rows, stderr) = run(root, "laptop", &["-e", FIGURES, "live", "arch"], &[]);
    assert_eq!(figures(&rows), truth, "{stderr}");
    // The home cleaned up: the archive alone answers, its rows the archiving machine's.
    std::fs::remove_dir_all(&live).unwrap();
    let (rows, stderr) = run(root, "desktop", &["-e", FIGURES, "arch"], &[]);
    assert_eq!(figures(&rows), truth, "{stderr}");
    let sql = "select distinct machine from calls union select distinct machine from sessions";
    let (rows, _) = run(root, "desktop", &["-e", sql, "arch"], &[]);
    assert_eq!(rows.iter().map(|r| r["machine"].as_str().unwrap()).collect::<Vec<_>>(), ["laptop"]);
    // Read again (the restored tree from the cache), and with no cache at all: the same.
    let (rows, _) = run(root, "desktop", &["-e", FIGURES, "arch"], &[]);
    assert_eq!(figures(&rows), truth);
    let (rows, _) = run(root, "desktop", &["--no-cache", "-e", FIGURES, "arch"], &[]);
    assert_eq!(figures(&rows), truth);
    // The canned spend report over it sums the same cost as over the home.
    let cost = |place: &Path, cwd: &Path| -> f64 {
        let sql = "select sum(cost_usd) as cost from calls";
        let (rows, _) = run(cwd, "laptop", &["-e", sql, place.to_str().unwrap()], &[]);
        rows[0]["cost"].as_f64().unwrap()
    };
    let (home_cost, archive_cost) = (cost(&full, root), cost(&root.join("arch"), root));
    assert!((home_cost - archive_cost).abs() < 1e-9, "{home_cost} {archive_cost}");
}

#[test]
fn archive_runs_killed_at_any_point_leave_an_archive_that_reads_and_never_exceeds_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let expected = full_home(root);
    let truth = tally(&expected);
    let (full, live) = (root.join("full"), root.join("live"));
    for file in &expected.other_files {
        copy(&full, &live, file);
    }
    let files = &expected.files;
    let rounds = 8;
    for round in 0..rounds {
        // Each round, more of the home, and a run killed part way (spread from its start to
        // about its end on this machine's debug binary: where it lands is not asserted).
        for file in files.iter().skip(round * files.len() / rounds).take(files.len().div_ceil(rounds)) {
            copy(&full, &live, file);
        }
        let mut txq = command(root);
        txq.env("TXQ_CACHE_DIR", root.join("cache")).env("TXQ_MACHINE", "laptop");
        let mut child = txq
            .args(["-q", "archive", "--out", "arch", "live"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(25 + 85 * round as u64));
        let _ = child.kill();
        let _ = child.wait();
        if !root.join("arch/_txq_archive.json").exists() {
            continue;
        }
        let (rows, stderr) = run(root, "desktop", &["--no-cache", "-e", FIGURES, "arch"], &[]);
        for (harness, got) in figures(&rows) {
            let want = truth[&harness];
            assert!(
                got.0 <= want.0 && got.1 <= want.1 && got.2 <= want.2,
                "{harness}: {got:?} > {want:?}: {stderr}"
            );
        }
    }
    for file in files {
        copy(&full, &live, file);
    }
    run(root, "laptop", &["archive", "--out", "arch", "live"], &[]);
    std::fs::remove_dir_all(&live).unwrap();
    let (rows, _) = run(root, "desktop", &["-e", FIGURES, "arch"], &[]);
    assert_eq!(figures(&rows), truth);
    // What the runs killed left is gone: no staging folder, no part the manifest does not name.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("arch/_txq_archive.json")).unwrap()).unwrap();
    let named: Vec<&str> =
        manifest["parts"].as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap()).collect();
    for file in files_below(&root.join("arch")) {
        assert!(
            named.contains(&file.as_str()) || file == "_txq_archive.json" || file == ".txq-archive.lock",
            "left over: {file}"
        );
    }
}

#[test]
fn an_archive_in_an_object_store_is_written_and_read_the_same() {
    let server = crate::s3::server();
    server.make_bucket("keep");
    let env = server.env();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let expected = full_home(root);
    let (full, live) = (root.join("full"), root.join("live"));
    for file in &expected.other_files {
        copy(&full, &live, file);
    }
    let (first, rest) = expected.files.split_at(expected.files.len() / 2);
    for file in first {
        copy(&full, &live, file);
    }
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "s3://keep/arch", "live"], &env);
    assert!(summary(&stderr).contains(": run 1: "), "{stderr}");
    for file in rest {
        copy(&full, &live, file);
    }
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "s3://keep/arch", "live"], &env);
    assert!(summary(&stderr).contains(": run 2: "), "{stderr}");
    let (_, stderr) = run(root, "laptop", &["archive", "--out", "s3://keep/arch", "live"], &env);
    assert!(summary(&stderr).contains("nothing new"), "{stderr}");
    std::fs::remove_dir_all(&live).unwrap();
    let (rows, stderr) = run(root, "desktop", &["-e", FIGURES, "s3://keep/arch"], &env);
    assert_eq!(figures(&rows), tally(&expected), "{stderr}");
}

/// Reads every part below the folder in `argv[1]` with each reader, and prints per reader the
/// rows and the rows per format folder.
const READ_BACK: &str = r#"
import json, sys, collections
folder = sys.argv[1]
out = {}
import pyarrow.parquet as pq, pyarrow.dataset as ds
t = ds.dataset(folder, format="parquet", partitioning="hive", exclude_invalid_files=True).to_table()
out["pyarrow"] = t.num_rows
import pandas as pd
out["pandas"] = len(pd.read_parquet(folder))
import polars as pl
out["polars"] = pl.scan_parquet(folder + "/**/*.parquet", hive_partitioning=True).select(pl.len()).collect().item()
import duckdb
out["duckdb"] = duckdb.sql("select count(*) from read_parquet('%s/**/*.parquet', hive_partitioning = true)" % folder).fetchall()[0][0]
out["types"] = duckdb.sql("select count(distinct type) from read_parquet('%s/**/*.parquet', hive_partitioning = true)" % folder).fetchall()[0][0]
print(json.dumps(out))
"#;

#[test]
fn pyarrow_pandas_polars_and_duckdb_read_every_archived_line_once() {
    let Some(python) = crate::live_export::readers_or_skip("archive read back") else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let expected = full_home(root);
    run(root, "laptop", &["archive", "--out", "arch", "full"], &[]);
    // Every line of every file archived, counted off the files: whole lines, and a last line
    // without its line end when it is a JSON object.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("arch/_txq_archive.json")).unwrap()).unwrap();
    let mut lines = 0;
    for file in manifest["files"].as_array().unwrap() {
        let path = PathBuf::from(file["path"].as_str().unwrap());
        let mut bytes = std::fs::read(&path).unwrap();
        if path.extension().is_some_and(|e| e == "zst") {
            bytes = zstd::decode_all(&bytes[..]).unwrap();
        }
        lines += bytes.iter().filter(|&&b| b == b'\n').count();
        let tail = bytes.rsplit(|&b| b == b'\n').next().unwrap_or_default();
        if serde_json::from_slice::<Map<String, Value>>(tail).is_ok() {
            lines += 1;
        }
    }
    assert!(expected.files.len() > manifest["files"].as_array().unwrap().len() / 2);
    let out =
        std::process::Command::new(python).arg("-c").arg(READ_BACK).arg(root.join("arch")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Map<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    for reader in ["pyarrow", "pandas", "polars", "duckdb"] {
        assert_eq!(got[reader].as_u64(), Some(lines as u64), "{reader}: {got:?}");
    }
    assert!(got["types"].as_u64().unwrap() > 10, "{got:?}");
}

#[test]
fn a_damaged_or_hand_edited_archive_costs_only_what_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let options = HarnessOptions { seed: 5, sessions: 3, keep_rows: true, ..HarnessOptions::default() };
    let expected = write_harness_home(&root.join("full"), &options).unwrap();
    run(root, "laptop", &["archive", "--out", "arch", "full"], &[]);
    let manifest_path = root.join("arch/_txq_archive.json");
    let original = std::fs::read(&manifest_path).unwrap();
    let mut manifest: Value = serde_json::from_slice(&original).unwrap();
    // A file whose path would climb out of the cache: left out, with a warning naming it.
    // (a Codex rollout of calls; the archive then answers as the home without it does)
    let lone =
        expected.calls.iter().map(|c| c.file.clone()).find(|f| f.contains(".codex/sessions/")).unwrap();
    let files = manifest["files"].as_array_mut().unwrap();
    let climbing = files.iter().position(|f| f["path"].as_str().unwrap().ends_with(lone.as_str())).unwrap();
    files[climbing]["path"] = Value::from("/a/../../../../etc/passwd.jsonl");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let (rows, stderr) = run(root, "laptop", &["--no-cache", "-e", FIGURES, "arch"], &[]);
    assert!(stderr.contains("/a/../../../../etc/passwd.jsonl: not restored"), "{stderr}");
    let truth = tally(&expected);
    let without = root.join("without");
    for file in expected.files.iter().chain(&expected.other_files).filter(|f| **f != lone) {
        copy(&root.join("full"), &without, file);
    }
    let (home_without, _) = run(root, "laptop", &["--no-cache", "-e", FIGURES, "without"], &[]);
    assert_eq!(figures(&rows), figures(&home_without));
    assert_ne!(figures(&rows), truth);
    // A part cut short: its lines are left out, told with its name; the others are read.
    std::fs::write(&manifest_path, &original).unwrap();
    let part = manifest["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .find(|p| p.starts_with("gemini/"))
        .unwrap();
    let bytes = std::fs::read(root.join("arch").join(&part)).unwrap();
    std::fs::write(root.join("arch").join(&part), &bytes[..bytes.len() / 2]).unwrap();
    let (rows, stderr) = run(root, "laptop", &["-e", FIGURES, "arch"], &[]);
    assert!(stderr.contains(&part) && stderr.contains("left out of this reading"), "{stderr}");
    assert_eq!(figures(&rows)["claude"], truth["claude"]);
    // Mended, it is read on the next reading (from the cache's tree, that part only).
    std::fs::write(root.join("arch").join(&part), &bytes).unwrap();
    let (rows, stderr) = run(root, "laptop", &["-e", FIGURES, "arch"], &[]);
    assert_eq!(figures(&rows), truth, "{stderr}");
    // A manifest of a later version, or not a manifest: refused, with what to do, exit 2.
    for text in [br#"{"txq_archive": 2}"#.to_vec(), b"{not json".to_vec()] {
        std::fs::write(&manifest_path, &text).unwrap();
        for args in [&["-e", "select 1", "arch"][..], &["archive", "--out", "arch", "full"][..]] {
            let out = command(root).env("TXQ_CACHE_DIR", root.join("cache")).args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains("_txq_archive.json"), "{stderr}");
        }
    }
    // --follow and --cluster are refused.
    std::fs::write(&manifest_path, &original).unwrap();
    for flag in [&["--follow"][..], &["--cluster", "df://127.0.0.1:1"][..]] {
        let out = command(root).args(flag).args(["archive", "--out", "arch", "full"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag:?}");
    }
}
