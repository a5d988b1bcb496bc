//! The inference cache is never trusted blindly: a file rewritten behind its size and modification
//! time, edited and then grown, or a cache file with a bit flipped, gives the answer a read
//! without the cache gives; a failed save leaves nothing behind; the cache file's name is stable.

use std::ffi::OsStr;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use txq::generate::rng::Rng;

const START: &str =
    r#"{"type":"run_start","data":{"run_id":"run_1","agent":"a","started_at":"2026-10-07T09:14:03Z"}}"#;

fn usage(tokens: u64) -> String {
    format!("{{\"type\":\"usage\",\"data\":{{\"input_tokens\":{tokens}}}}}\n")
}

/// What a run of the real binary gave.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `txq args` in `dir` with `TXQ_CACHE_DIR` set to `cache` (and HOME to `dir`: nothing of
/// the user's is read or written).
fn txq_with_cache(dir: &Path, cache: &OsStr, args: &[&str]) -> Run {
    let out = crate::util::command(dir)
        .args(args)
        .env("HOME", dir)
        .env("TXQ_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("txq runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8"),
    }
}

/// The CSV result of `sql` over `.` in `dir`, with the cache in `cache`.
fn answer(dir: &Path, cache: &Path, sql: &str) -> String {
    let run = txq_with_cache(dir, cache.as_os_str(), &["-q", "--format", "csv", "-e", sql, "."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// The files in `dir`, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Overwrites the bytes of `file` at `at` with `bytes`, in place.
fn write_at(file: &Path, at: u64, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(bytes).unwrap();
}

fn append(file: &Path, text: &str) {
    std::fs::OpenOptions::new().append(true).open(file).unwrap().write_all(text.as_bytes()).unwrap();
}

const SUM: &str = "select count(*) n, sum(input_tokens) s from usage";

/// Events by type: answered from the counts the inference pass kept (no transcript read), so
/// from the cache when it is used.
const EVENTS: &str = "select type, count(*) n from events group by type order by type";

/// `text` with its first `usage` event made a `nudge` one (as long), in place at the same offset.
fn nudge_at(file: &Path, text: &str, from: usize) {
    let at = from + text[from..].find("\"usage\"").unwrap() + 1;
    write_at(file, at as u64, b"nudge");
}

/// Regression: an entry was used for any file of the same size and modification time, so a
/// rewrite that kept both (`touch -r`, a restore from backup, `set_modified`) was never seen.
#[test]
fn a_rewrite_with_the_same_size_and_mtime_is_read_afresh() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    let text = format!("{START}\n{}", usage(5));
    std::fs::write(&file, &text).unwrap();
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nrun_start,1\nusage,1\n");
    let before = std::fs::metadata(&file).unwrap();

    std::fs::write(&file, text.replace("usage", "nudge")).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
    drop(f);
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!((after.len(), after.modified().unwrap()), (before.len(), before.modified().unwrap()));

    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nnudge,1\nrun_start,1\n");
}

/// An edit of the last whole line, then an append: not growth, the file is read again whole.
#[test]
fn an_edit_of_the_last_line_then_an_append_is_read_afresh() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    let text = format!("{START}\n{}{}", usage(5), usage(6));
    std::fs::write(&file, &text).unwrap();
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nrun_start,1\nusage,2\n");

    nudge_at(&file, &text, text.rfind("{\"type\"").unwrap());
    append(&file, &usage(1));
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nnudge,1\nrun_start,1\nusage,2\n");
    assert_eq!(answer(dir.path(), cache.path(), SUM), "n,s\n2,6\n");
}

/// Regression: only the last 64 bytes of the whole lines were compared, so an edit before them
/// followed by an append was taken as growth and the edit never seen.
#[test]
fn an_edit_far_before_the_end_then_an_append_is_read_afresh() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    let notice = "{\"type\":\"notice\",\"data\":{\"kind\":\"padding well past the bytes compared\"}}\n";
    let text = format!("{START}\n{}{}", usage(5), notice.repeat(20));
    std::fs::write(&file, &text).unwrap();
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nnotice,20\nrun_start,1\nusage,1\n");

    nudge_at(&file, &text, 0);
    append(&file, &usage(1));
    assert_eq!(
        answer(dir.path(), cache.path(), EVENTS),
        "type,n\nnotice,20\nnudge,1\nrun_start,1\nusage,1\n"
    );
}

/// What the cache of the directory `dir` (in `cache`) says of its file `run_1.jsonl` now: the
/// offset it is read on from, or `None` when it is read whole.
fn read_on_from(dir: &Path, cache: &Path) -> Option<u64> {
    let formats = txq::format::all();
    let rupu = formats.iter().position(|f| f.name == "rupu").unwrap();
    let discovery = txq::source::discover::discover(&formats, &[dir.to_path_buf()]).unwrap();
    assert_eq!(discovery.files[rupu].len(), 1, "one transcript");
    let file = &discovery.files[rupu].get(0);
    let mut loaded = txq::infer::cache::InferenceCache::load(cache, &[dir.to_path_buf()]);
    let store = txq::source::read::local_store();
    match futures::executor::block_on(loaded.lookup(&store, "rupu", file)) {
        txq::infer::cache::Lookup::Grown(_, from, _) => Some(from),
        txq::infer::cache::Lookup::Same(_) => panic!("the file changed, yet it is taken as the same"),
        txq::infer::cache::Lookup::Unknown => None,
    }
}

/// A transcript that grew is still read on from its known lines (after a hash of them, at memory
/// speed), not parsed again; and what was appended is in the answer.
#[test]
fn a_grown_transcript_is_read_on_from_its_known_lines() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("run_1.jsonl");
    let text = format!("{START}\n{}{{\"type\":\"usa", usage(5));
    std::fs::write(&file, &text).unwrap();
    assert_eq!(answer(dir.path(), cache.path(), SUM), "n,s\n1,5\n");
    let known_lines = text.rfind('\n').unwrap() as u64 + 1;

    append(&file, &format!("ge\",\"data\":{{\"input_tokens\":7}}}}\n{}", usage(30)));
    assert_eq!(read_on_from(dir.path(), cache.path()), Some(known_lines));
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nrun_start,1\nusage,3\n");
    assert_eq!(answer(dir.path(), cache.path(), SUM), "n,s\n3,42\n");

    // The hash of the lines the second read knew goes on from the first's: a third read is on
    // from the second's end.
    let known_lines = std::fs::metadata(&file).unwrap().len();
    append(&file, &usage(100));
    assert_eq!(read_on_from(dir.path(), cache.path()), Some(known_lines));
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nrun_start,1\nusage,4\n");
    assert_eq!(answer(dir.path(), cache.path(), SUM), "n,s\n4,142\n");

    // A file only touched (its lines the same) is checked by hash and read on from its end.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    drop(f);
    let size = std::fs::metadata(&file).unwrap().len();
    assert_eq!(read_on_from(dir.path(), cache.path()), Some(size));
    assert_eq!(answer(dir.path(), cache.path(), EVENTS), "type,n\nrun_start,1\nusage,4\n");
}

/// Regression: 13 of 300 single bit flips of a cache file were read as a valid cache with wrong
/// counts, and stayed (the cache was not written again). Every one must now be refused whole:
/// the answers are those of a read without the cache, and the cache is written again as it was.
#[test]
fn no_bit_flip_of_the_cache_file_changes_an_answer() {
    // In process, through the library (the same inference pass and cache as the binary's):
    // 300 runs of the binary made this the suite's slowest test by far.
    let corpus = crate::util::default_corpus();
    let dir = corpus.transcripts();
    let cache = tempfile::tempdir().unwrap();
    let statements = [
        "select type, count(*) n from events group by type order by type",
        "select count(*) n, sum(input_tokens) s, count(distinct run_id) r from usage",
        "select count(*) n from errors",
        "select table_name, column_name from information_schema.columns \
         where table_schema = 'rupu' order by 1, 2",
    ];
    let run = |cache_dir: Option<&Path>| {
        let options = txq::table::corpus::ReadOptions {
            cache_dir: cache_dir.map(Path::to_path_buf),
            ..Default::default()
        };
        let session = crate::util::Session::open_with(std::slice::from_ref(&dir), options);
        statements.iter().map(|sql| session.rows(sql)).collect::<Vec<_>>()
    };
    let fresh = run(None);
    assert_eq!(run(Some(cache.path())), fresh);
    let [name] = &names_in(cache.path())[..] else { panic!("one cache file: {:?}", names_in(cache.path())) };
    let path = cache.path().join(name);
    let whole = std::fs::read(&path).unwrap();
    let mut rng = Rng::new(12);
    for flip in 0..300 {
        let bit = rng.below(whole.len() as u64 * 8);
        let mut flipped = whole.clone();
        flipped[(bit / 8) as usize] ^= 1 << (bit % 8);
        std::fs::write(&path, &flipped).unwrap();
        assert_eq!(run(Some(cache.path())), fresh, "flip {flip}: bit {bit} of {}", whole.len() * 8);
        assert!(
            std::fs::read(&path).unwrap() == whole,
            "flip {flip}: bit {bit}: the cache is not written again"
        );
    }
}

/// Regression: the name came from std's `DefaultHasher`, which a Rust release may change (every
/// user's cache then lost). Two processes name it alike, as `txq::infer::cache::file_name` says (whose
/// unit test pins it to the reference XXH3).
#[test]
fn the_cache_file_has_the_same_name_in_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{}", usage(5))).unwrap();
    let expected = txq::infer::cache::file_name(&[std::fs::canonicalize(dir.path()).unwrap()]);
    for _ in 0..2 {
        let cache = tempfile::tempdir().unwrap();
        assert_eq!(answer(dir.path(), cache.path(), SUM), "n,s\n1,5\n");
        assert_eq!(names_in(cache.path()), vec![expected.clone()]);
    }
}

/// Regression: a save that failed after writing its temporary file left it behind, one per run.
/// (Root ignores permission bits, so the failure is a rename onto a directory that is not empty.)
#[test]
fn a_failed_save_leaves_no_temporary_file() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{}", usage(5))).unwrap();
    let name = txq::infer::cache::file_name(&[std::fs::canonicalize(dir.path()).unwrap()]);
    let in_the_way = cache.path().join(&name);
    std::fs::create_dir(&in_the_way).unwrap();
    std::fs::write(in_the_way.join("keep"), "mine").unwrap();
    for _ in 0..2 {
        let run = txq_with_cache(dir.path(), cache.path().as_os_str(), &["--format", "csv", "-e", SUM, "."]);
        assert_eq!((run.code, run.stdout.as_str()), (0, "n,s\n1,5\n"), "{}", run.stderr);
        let warning = format!("txq: warning: {}: cache not saved: ", in_the_way.display());
        assert!(run.stderr.starts_with(&warning), "{}", run.stderr);
        assert_eq!(names_in(cache.path()), vec![name.clone()], "only the directory in the way is left");
        assert_eq!(names_in(&in_the_way), vec!["keep"]);
    }

    // A cache directory that cannot be made (a file is where its parent should be) writes nothing.
    let not_a_dir = cache.path().join("not-a-dir");
    std::fs::write(&not_a_dir, "").unwrap();
    let run =
        txq_with_cache(dir.path(), not_a_dir.join("txq").as_os_str(), &["--format", "csv", "-e", SUM, "."]);
    assert_eq!((run.code, run.stdout.as_str()), (0, "n,s\n1,5\n"), "{}", run.stderr);
    assert!(run.stderr.contains("cache not saved: "), "{}", run.stderr);
    assert_eq!(names_in(cache.path()), vec![name, "not-a-dir".to_string()]);
}

/// Regression: an empty `TXQ_CACHE_DIR` put the cache in the working directory.
#[test]
fn an_empty_txq_cache_dir_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run_1.jsonl"), format!("{START}\n{}", usage(5))).unwrap();
    let run = txq_with_cache(dir.path(), OsStr::new(""), &["--format", "csv", "-e", SUM, "."]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "txq: error: TXQ_CACHE_DIR is set but empty: set it to a directory for the inference cache, \
         unset it to use ~/.cache/txq, or pass --no-cache\n"
    );
    assert_eq!(names_in(dir.path()), vec!["run_1.jsonl"], "nothing written in the working directory");

    let run = txq_with_cache(dir.path(), OsStr::new(""), &["--no-cache", "--format", "csv", "-e", SUM, "."]);
    assert_eq!((run.code, run.stdout.as_str()), (0, "n,s\n1,5\n"), "{}", run.stderr);
}
