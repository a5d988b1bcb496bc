//! The inference cache: a second query reads what the first learned, a grown transcript is read
//! on from where it was, a rewritten one whole.

use crate::util::{parse_ndjson, txq};
use std::io::Write;

fn count(dir: &std::path::Path, sql: &str) -> serde_json::Value {
    let out = txq(&["-q", "--format", "ndjson", "-e", sql, "."], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    parse_ndjson(&out.stdout)[0]["n"].clone()
}

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

#[test]
fn a_grown_transcript_shows_its_new_lines_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(
        &file,
        format!("{START}\n{{\"type\":\"usage\",\"data\":{{\"input_tokens\":5}}}}\n{{\"type\":\"usa"),
    )
    .unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 1);

    // The writer finishes the cut-off line and appends a new type with a new field.
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    write!(f, "ge\",\"data\":{{\"input_tokens\":7}}}}\n{{\"type\":\"budget_warning\",\"data\":{{\"spent_usd\":1.5}}}}\n").unwrap();
    drop(f);
    assert_eq!(count(dir.path(), "select sum(input_tokens) n from usage"), 12);
    assert_eq!(count(dir.path(), "select sum(spent_usd) n from budget_warning"), 1.5);
    assert_eq!(count(dir.path(), "select count(*) n from events"), 4);
}

#[test]
fn a_rewritten_transcript_is_read_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run_1.jsonl");
    std::fs::write(&file, format!("{START}\n{{\"type\":\"usage\",\"data\":{{\"input_tokens\":5}}}}\n"))
        .unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 1);
    std::fs::write(&file, format!("{START}\n{{\"type\":\"notice\",\"data\":{{\"kind\":\"k\",\"region\":\"eu\"}}}}\n{{\"type\":\"notice\",\"data\":{{}}}}\n")).unwrap();
    assert_eq!(count(dir.path(), "select count(*) n from usage"), 0);
    assert_eq!(count(dir.path(), "select count(region) n from notice"), 1);
}

/// The cache keeps each type's field list once for all the files that share it: a query read
/// from it must see the same tables, columns and counts as one that reads every file.
#[test]
fn a_cached_read_sees_the_same_catalog_as_a_fresh_one() {
    let corpus = crate::util::default_corpus();
    let dir = corpus.transcripts();
    let sql = "select table_schema, table_name, column_name, data_type from information_schema.columns \
               where table_schema <> 'information_schema' order by 1, 2, 3; \
               select type, count(*) n from events group by type order by type; \
               select count(*) n from errors";
    let run = |extra: &[&str]| {
        let mut args = vec!["-q", "--format", "csv", "-e", sql];
        args.extend_from_slice(extra);
        args.push(".");
        let out = txq(&args, &dir);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let fresh = run(&["--no-cache"]);
    assert!(fresh.contains("rupu,usage,input_tokens,Int64"), "{fresh}");
    let writes_cache = run(&[]);
    let reads_cache = run(&[]);
    assert_eq!(writes_cache, fresh);
    assert_eq!(reads_cache, fresh);
}

/// Runs `txq -q --format csv -e sql .` in `dir` with its cache in `cache`.
fn run_with_cache(dir: &std::path::Path, cache: &std::path::Path, sql: &str) -> String {
    let out = crate::util::command(dir)
        .args(["-q", "--format", "csv", "-e", sql, "."])
        .env("TXQ_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("txq runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn cache_files(cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(cache)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_damaged_cache_file_is_read_afresh_and_written_again() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let usage = |n: u64| format!("{{\"type\":\"usage\",\"data\":{{\"input_tokens\":{n}}}}}\n");
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{}{}", usage(5), usage(7))).unwrap();
    let sql = "select count(*) n, sum(input_tokens) s from usage";
    let expected = "n,s\n2,12\n";
    assert_eq!(run_with_cache(dir.path(), cache.path(), sql), expected);
    let [written] = &cache_files(cache.path())[..] else { panic!("one cache file") };
    let whole = std::fs::read(written).unwrap();
    let damaged: Vec<Vec<u8>> = vec![
        whole[..whole.len() / 2].to_vec(),
        b"not a cache".to_vec(),
        whole.iter().map(|b| b ^ 0x55).collect(),
        [whole.as_slice(), b"trailing"].concat(),
    ];
    for bytes in damaged {
        std::fs::write(written, &bytes).unwrap();
        assert_eq!(run_with_cache(dir.path(), cache.path(), sql), expected);
        assert_eq!(std::fs::read(written).unwrap(), whole, "the cache is written again whole");
    }
}

/// Regression: the cache file was named after the directories as given, so `txq .` in two
/// projects shared one file, and each run forgot the other project's files and read them again.
#[test]
fn each_directory_has_its_own_cache_however_it_is_named() {
    let cache = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&a, &b] {
        std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n")).unwrap();
        assert_eq!(run_with_cache(dir.path(), cache.path(), "select count(*) n from run_start"), "n\n1\n");
    }
    assert_eq!(cache_files(cache.path()).len(), 2, "{:?}", cache_files(cache.path()));
}

#[test]
fn saving_the_cache_removes_older_layouts_and_keeps_newer_ones() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The names older txq wrote, and others that only look like them (a `.keep` file was
    // deleted once): only the first go.
    let names = [
        "inference-v1.json",
        "inference-v2-0123456789abcdef.json",
        "inference-v4.77.tmp",
        "inference-v4.keep",
        "inference-v5-0123456789abcdef.bin",
        "inference-v5.77.tmp",
        "inference-v6-0123456789abcdef.bin",
        "inference-v6-0123456789abcdef.bin.77.tmp",
        "inference-v6-notes.txt",
        "inference-v8-0123.bin",
        "notes.txt",
    ];
    for name in names {
        std::fs::write(cache.path().join(name), "kept?").unwrap();
    }
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n")).unwrap();
    assert_eq!(run_with_cache(dir.path(), cache.path(), "select count(*) n from run_start"), "n\n1\n");
    let names: Vec<String> = cache_files(cache.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("inference-v7-"))
        .collect();
    assert_eq!(
        names,
        vec!["inference-v4.keep", "inference-v6-notes.txt", "inference-v8-0123.bin", "notes.txt"]
    );
}

/// What a first run learns is written aside until it is saved, and nothing of that is left in
/// the cache's directory; files named after a UUID (kept packed) keep their names in every
/// answer, cold, as the cache is filled, and warm.
#[test]
fn a_first_run_leaves_only_its_cache_and_uuid_names_come_back_whole() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut names = Vec::new();
    for n in 0..300u32 {
        let uuid = format!("{n:08x}-0a1b-4c2d-8e3f-{:012x}", u64::from(n) * 0x9e37_79b9);
        names.push(match n % 3 {
            0 => format!("{uuid}.jsonl"),
            1 => format!("run_{uuid}-part.jsonl"),
            _ => format!("run_{}.jsonl", uuid.to_uppercase()),
        });
    }
    for (n, name) in names.iter().enumerate() {
        let body = format!("{START}\n{{\"type\":\"usage\",\"data\":{{\"input_tokens\":{n}}}}}\n");
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let sql = "select file, sum(input_tokens) as n from usage group by file order by file";
    // The file as found: the searched path (`.`) joined with its name.
    let mut expected: Vec<(String, usize)> =
        names.iter().enumerate().map(|(n, name)| (format!("./{name}"), n)).collect();
    expected.sort();
    let expected: String = std::iter::once("file,n\n".to_string())
        .chain(expected.iter().map(|(file, n)| format!("{file},{n}\n")))
        .collect();
    let no_cache = crate::util::command(dir.path())
        .args(["-q", "--no-cache", "--format", "csv", "-e", sql, "."])
        .output()
        .expect("txq runs");
    assert!(String::from_utf8_lossy(&no_cache.stdout) == expected, "cold");
    assert!(run_with_cache(dir.path(), cache.path(), sql) == expected, "filling the cache");
    let left = cache_files(cache.path());
    assert_eq!(left.len(), 1, "only the cache file is left: {left:?}");
    assert!(run_with_cache(dir.path(), cache.path(), sql) == expected, "warm");
    assert_eq!(cache_files(cache.path()), left);
}
