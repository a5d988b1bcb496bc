//! Transcripts in an object store: a generated corpus put in an S3-compatible server on loopback
//! (s3s-fs, which checks signatures), read over `s3://` by the real binary in every way a local
//! path is (`-e`, `txq query`, the shell, export), and each figure checked against the
//! generator's tally and the same statement over the local copy; and a store that misbehaves
//! (an object replaced between listing and reading, a key no store path names, an endpoint that
//! never answers, an error body of many lines) gives a clear warning or error, never a wrong count.

use crate::s3::server;
use crate::util::{Generated, Output, command, int, parse_ndjson, text};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use txq::generate::{ReevalExpected, ReevalOptions, RupuOptions, write_reeval_corpus};

/// A corpus of both formats, one transcript compressed, and its tallies; put in bucket `bucket`
/// under `team/` once per bucket name.
pub(crate) struct Uploaded {
    pub(crate) rupu: Generated,
    reeval_dir: tempfile::TempDir,
    reeval: ReevalExpected,
    bucket: &'static str,
}

pub(crate) fn uploaded(bucket: &'static str) -> Uploaded {
    let rupu = Generated::new(&RupuOptions { seed: 16, runs: 14, ..RupuOptions::default() });
    // One transcript as its compressed copy alone: the tally holds for it as for the plain one.
    let first = rupu.dir.path().join(&rupu.expected.runs[0].file);
    let bytes = std::fs::read(&first).unwrap();
    std::fs::write(first.with_extension("jsonl.zst"), zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    std::fs::remove_file(&first).unwrap();
    let reeval_dir = tempfile::tempdir().unwrap();
    let reeval =
        write_reeval_corpus(reeval_dir.path(), &ReevalOptions { seed: 16, ..ReevalOptions::default() })
            .expect("a reeval corpus");
    let s3 = server();
    assert!(s3.upload(bucket, rupu.dir.path(), "team/rupu") > 14);
    assert!(s3.upload(bucket, reeval_dir.path(), "team/reeval") > 0);
    Uploaded { rupu, reeval_dir, reeval, bucket }
}

impl Uploaded {
    pub(crate) fn remote(&self) -> String {
        format!("s3://{}/team", self.bucket)
    }

    /// The run of txq over the store (`s3://bucket/team`), and over the local copies (the same
    /// files), each in a folder that holds both.
    fn both(&self, args: &[&str]) -> (Output, Output) {
        let remote = self.remote();
        let local = [self.rupu.dir.path().to_str().unwrap(), self.reeval_dir.path().to_str().unwrap()];
        let run = |paths: &[&str]| {
            let mut all: Vec<&str> = args.to_vec();
            all.extend_from_slice(paths);
            s3_txq(&all, self.rupu.dir.path())
        };
        (run(&[remote.as_str()]), run(&local))
    }

    /// Rows of `sql` over the store, after asserting that the local run gives the same rows and
    /// the same warnings (each place's paths written as `<root>/`).
    fn rows(&self, sql: &str) -> Vec<Map<String, Value>> {
        let (remote, local) = self.both(&["--no-cache", "--format", "ndjson", "-e", sql]);
        assert_eq!(remote.code, 0, "{sql}: {}", remote.stderr);
        assert_eq!(local.code, 0, "{sql}: {}", local.stderr);
        assert_eq!(self.same_places(&remote.stdout), self.same_places(&local.stdout), "{sql}");
        assert_eq!(self.same_places(&remote.stderr), self.same_places(&local.stderr), "{sql}");
        parse_ndjson(&self.same_places(&remote.stdout))
    }

    /// `text` with the store's places and the local folders written alike.
    fn same_places(&self, text: &str) -> String {
        text.replace(&format!("{}/rupu/", self.remote()), "<rupu>/")
            .replace(&format!("{}/reeval/", self.remote()), "<reeval>/")
            .replace(&format!("{}/", self.rupu.dir.path().display()), "<rupu>/")
            .replace(&format!("{}/", self.reeval_dir.path().display()), "<reeval>/")
    }
}

/// The real binary with the server's endpoint and keys in its environment.
fn s3_txq(args: &[&str], cwd: &Path) -> Output {
    s3_txq_with(args, cwd, &[])
}

/// [`s3_txq`], with `env` over the server's variables (another endpoint, a timeout).
fn s3_txq_with(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let out = command(cwd)
        .envs(server().env())
        .envs(env.iter().copied())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("txq runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

pub(crate) fn corpus() -> &'static Uploaded {
    static CORPUS: std::sync::OnceLock<Uploaded> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| uploaded("fleet"))
}

#[test]
fn figures_over_s3_equal_the_generators_tally_and_the_local_run() {
    let c = corpus();
    let e = &c.rupu.expected;
    let by_type: BTreeMap<String, u64> = c
        .rows("select type, count(*) n from rupu.events group by type order by type")
        .iter()
        .map(|r| (text(r, "type"), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(by_type, e.events_by_type);
    let tokens: BTreeMap<String, (i64, i64, i64)> = c
        .rows("select model, sum(input_tokens) i, sum(output_tokens) o, sum(cached_tokens) k from rupu.usage group by model order by model")
        .iter()
        .map(|r| (text(r, "model"), (int(r, "i").unwrap(), int(r, "o").unwrap(), int(r, "k").unwrap())))
        .collect();
    assert_eq!(tokens, e.tokens_by_model);
    // Every damaged line, by its object and line.
    let errors: Vec<(String, u64)> = c
        .rows("select file, line from rupu.errors order by file, line")
        .iter()
        .map(|r| (text(r, "file").replacen("<rupu>/", "", 1), int(r, "line").unwrap() as u64))
        .collect();
    let mut expected = e.errors.clone();
    expected.sort();
    let compressed = format!("{}.zst", e.runs[0].file);
    let errors: Vec<(String, u64)> = errors
        .into_iter()
        .map(|(f, l)| (if f == compressed { e.runs[0].file.clone() } else { f }, l))
        .collect();
    let mut errors_sorted = errors.clone();
    errors_sorted.sort();
    assert_eq!(errors_sorted, expected);
    // reeval: tool calls and failures by tool, and its damaged lines.
    let tools: BTreeMap<String, (u64, u64)> = c
        .rows("select tool, count(*) n, count(*) filter (where not ok) failed from reeval.tool group by tool order by tool")
        .iter()
        .map(|r| (text(r, "tool"), (int(r, "n").unwrap() as u64, int(r, "failed").unwrap() as u64)))
        .collect();
    assert_eq!(tools, c.reeval.tool_by_name);
    // A join that needs both sides' files, and a JSON function over the lines.
    c.rows(
        "select c.tool, count(*) n from rupu.tool_call c join rupu.tool_result r \
         on c.run_id = r.run_id and c.call_id = r.call_id group by c.tool order by c.tool",
    );
    c.rows("select json_get_str(data, 'tool') t, count(*) n from rupu.events where type = 'tool_call' group by t order by t");
    // The files of both formats, each with its size.
    let files = c.rows("select file, bytes from rupu.files order by file");
    assert!(files.iter().any(|f| text(f, "file").ends_with(".jsonl.zst")), "{files:?}");
}

#[test]
fn a_canned_query_and_a_script_over_s3_equal_the_local_run() {
    let c = corpus();
    for args in [
        vec!["--no-cache", "--format", "csv", "query", "denied_tools"],
        vec!["--no-cache", "--format", "csv", "query", "spend_by_model_day"],
    ] {
        let (remote, local) = c.both(&args);
        assert_eq!(remote.code, 0, "{args:?}: {}", remote.stderr);
        assert_eq!(c.same_places(&remote.stdout), c.same_places(&local.stdout), "{args:?}");
        assert!(remote.stdout.lines().count() > 1, "{args:?}: {}", remote.stdout);
    }
    let script = c.rupu.dir.path().join("script.sql");
    std::fs::write(&script, "select count(*) n from rupu.usage;\nselect count(*) n from reeval.tool;\n")
        .unwrap();
    let (remote, local) = c.both(&["--no-cache", "--format", "csv", "-f", script.to_str().unwrap()]);
    assert_eq!(remote.code, 0, "{}", remote.stderr);
    assert_eq!(remote.stdout, local.stdout);
    let usage = c.rupu.expected.events_by_type["usage"];
    assert!(remote.stdout.contains(&format!("\n{usage}\n")), "{}", remote.stdout);
}

#[test]
fn the_inference_cache_keys_objects_by_their_metadata_and_sees_a_rewritten_object() {
    let c = uploaded("cached");
    let cache = tempfile::tempdir().unwrap();
    let sql = "select count(*) n from rupu.usage";
    let run = || {
        let out = command(c.rupu.dir.path())
            .envs(server().env())
            .env("TXQ_CACHE_DIR", cache.path())
            .args(["--format", "csv", "-e", sql, &c.remote()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let usage = c.rupu.expected.events_by_type["usage"];
    assert_eq!(run(), format!("n\n{usage}\n"));
    let saved: Vec<_> = std::fs::read_dir(cache.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(saved.len(), 1, "one cache file for the place: {saved:?}");
    // The same answer from the cache; then an object rewritten with one more usage line (a new
    // e_tag, a new size) is read again.
    assert_eq!(run(), format!("n\n{usage}\n"));
    let run_file = &c.rupu.expected.runs[1].file;
    let mut bytes = std::fs::read(c.rupu.dir.path().join(run_file)).unwrap();
    let line =
        bytes.split(|&b| b == b'\n').find(|l| l.windows(7).any(|w| w == b"\"usage\"")).unwrap().to_vec();
    bytes.extend_from_slice(&line);
    bytes.push(b'\n');
    let store = server().bucket(c.bucket);
    let key = object_store::path::Path::parse(format!("team/rupu/{run_file}")).unwrap();
    crate::util::runtime().block_on(async {
        use object_store::ObjectStoreExt;
        store.put(&key, bytes.into()).await.unwrap();
    });
    assert_eq!(run(), format!("n\n{}\n", usage + 1));
}

#[test]
fn wrong_keys_a_missing_bucket_and_a_missing_prefix_are_clear_errors() {
    let c = corpus();
    let dir = c.rupu.dir.path();
    let wrong = command(dir)
        .envs(server().env())
        .env("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        .args(["--no-cache", "-e", "select 1", &c.remote()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("s3://fleet/team") && stderr.contains("cannot list"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for place in ["s3://no-such-bucket/team", "s3://fleet/no/such/prefix"] {
        let out = s3_txq(&["--no-cache", "-e", "select 1", place], dir);
        assert_eq!(out.code, 2, "{place}: {}", out.stderr);
        assert!(out.stderr.contains(place), "{place}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

#[test]
fn keys_come_from_an_aws_profile_when_the_environment_has_none() {
    let c = corpus();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws/credentials"),
        format!(
            "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n[fleet]\n\
             aws_access_key_id = {}\naws_secret_access_key = {}\n",
            crate::s3::ACCESS_KEY,
            crate::s3::SECRET_KEY
        ),
    )
    .unwrap();
    std::fs::write(home.path().join(".aws/config"), "[profile fleet]\nregion = us-east-1\n").unwrap();
    let run = |profile: Option<&str>| {
        let mut cmd = command(c.rupu.dir.path());
        cmd.envs(server().env()).env_remove("AWS_ACCESS_KEY_ID").env_remove("AWS_SECRET_ACCESS_KEY");
        cmd.env_remove("AWS_REGION").env("HOME", home.path());
        if let Some(profile) = profile {
            cmd.env("AWS_PROFILE", profile);
        }
        cmd.args(["--no-cache", "--format", "csv", "-e", "select count(*) n from rupu.usage", &c.remote()]);
        cmd.output().unwrap()
    };
    let good = run(Some("fleet"));
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    let usage = c.rupu.expected.events_by_type["usage"];
    assert_eq!(String::from_utf8_lossy(&good.stdout), format!("n\n{usage}\n"));
    // The default profile's keys are wrong: refused, not read.
    assert_eq!(run(None).status.code(), Some(2));
}

#[test]
fn the_shell_reads_a_store_and_sees_a_new_object() {
    use rexpect::session::{Options, spawn_with_options};
    let c = uploaded("shell");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = command(c.rupu.dir.path());
    cmd.envs(server().env()).env("TERM", "xterm").env("HOME", home.path());
    cmd.env("TXQ_HISTORY", home.path().join("history")).arg("--no-cache").arg(c.remote());
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    let mut s = spawn_with_options(cmd, options).expect("the shell starts");
    s.exp_string("txq> ").unwrap();
    let runs = c.rupu.expected.runs.len();
    s.send_line("select count(*) as n from rupu.files where transcript;").unwrap();
    let out = s.exp_string("1 row in ").unwrap();
    assert!(out.contains(&format!("| {runs} |")) || out.contains(&format!(" {runs} |")), "{out}");
    // A transcript put in the store since is in the next statement's answer.
    let again = c.rupu.dir.path().join(&c.rupu.expected.runs[1].file);
    let store = server().bucket(c.bucket);
    let key = object_store::path::Path::parse(format!(
        "team/rupu/{}/run_new.jsonl",
        c.rupu.expected.transcripts_dir
    ))
    .unwrap();
    crate::util::runtime().block_on(async {
        use object_store::ObjectStoreExt;
        store.put(&key, std::fs::read(again).unwrap().into()).await.unwrap();
    });
    s.exp_string("txq> ").unwrap();
    s.send_line("select count(*) as n from rupu.files where transcript;").unwrap();
    let out = s.exp_string("1 row in ").unwrap();
    assert!(out.contains(&format!(" {} |", runs + 1)), "{out}");
    s.exp_string("txq> ").unwrap();
    s.send_line("\\q").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn an_export_reads_from_a_store_and_writes_into_one_as_into_a_folder() {
    let c = uploaded("exports");
    let out = tempfile::tempdir().unwrap();
    let local_out = out.path().join("parquet");
    let local = s3_txq(
        &["--no-cache", "export", "--out", local_out.to_str().unwrap(), c.rupu.dir.path().to_str().unwrap()],
        c.rupu.dir.path(),
    );
    assert_eq!(local.code, 0, "{}", local.stderr);
    let remote_in = format!("s3://{}/team/rupu", c.bucket);
    let remote_out = format!("s3://{}/parquet/a", c.bucket);
    let export = |extra: &[&str]| {
        let mut args = vec!["--no-cache", "export", "--out", remote_out.as_str()];
        args.extend_from_slice(extra);
        args.push(remote_in.as_str());
        s3_txq(&args, c.rupu.dir.path())
    };
    let first = export(&[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    // The same files, by their place below OUT, as the export into a folder.
    let mut files: Vec<String> = walkdir::WalkDir::new(&local_out)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(&local_out).unwrap().to_str().unwrap().to_string())
        .collect();
    files.sort();
    let keys = |prefix: &str| -> Vec<String> {
        use futures::TryStreamExt;
        use object_store::ObjectStore;
        let store = server().bucket(c.bucket);
        let prefix = object_store::path::Path::from(prefix);
        let mut keys: Vec<String> = crate::util::runtime().block_on(async {
            let objects: Vec<_> = store.list(Some(&prefix)).try_collect().await.unwrap();
            objects.into_iter().map(|o| o.location.to_string()).collect()
        });
        keys.sort();
        keys.iter().map(|k| k.strip_prefix("parquet/a/").unwrap().to_string()).collect()
    };
    assert!(files.iter().any(|f| f.ends_with(".parquet")), "{files:?}");
    // The same tables (a table's parts may be numbered otherwise: units are dealt by the order of
    // their paths, which differs from place to place).
    let tables = |files: &[String]| -> std::collections::BTreeSet<String> {
        files.iter().map(|f| f.rsplit_once('/').map_or(f.clone(), |(dir, _)| dir.to_string())).collect()
    };
    let written = keys("parquet/a");
    assert_eq!(tables(&written), tables(&files));
    assert_eq!(written.len(), files.len());
    let files = written;
    // A second export into it is refused, as into a folder; --append adds nothing new and keeps
    // every object; --overwrite replaces them.
    let again = export(&[]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.contains(&remote_out) && again.stderr.contains("already holds an export"),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains("txq-export-"), "the staging folder is not named: {}", again.stderr);
    // (The runs still open are written again whole, under new part numbers: the parts they
    // replace are gone from the store.)
    let append = export(&["--append"]);
    assert_eq!(append.code, 0, "{}", append.stderr);
    assert!(append.stderr.contains("already there"), "{}", append.stderr);
    let appended = keys("parquet/a");
    assert_eq!((tables(&appended), appended.len()), (tables(&files), files.len()));
    let overwrite = export(&["--overwrite"]);
    assert_eq!(overwrite.code, 0, "{}", overwrite.stderr);
    let replaced = keys("parquet/a");
    assert_eq!((tables(&replaced), replaced.len()), (tables(&files), files.len()));
}

/// The usage lines of `file`, and its bytes with one more of them at the end.
fn with_one_more_usage_line(file: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(file).unwrap();
    let line =
        bytes.split(|&b| b == b'\n').find(|l| l.windows(7).any(|w| w == b"\"usage\"")).unwrap().to_vec();
    bytes.extend_from_slice(&line);
    bytes.push(b'\n');
    bytes
}

#[test]
fn an_object_replaced_between_listing_and_reading_is_read_as_it_now_is() {
    // The listing sees one version; by the first read of it, another (one usage line longer) is
    // there. Read as the listed size's first bytes of the new one, it counted the old lines.
    let c = uploaded("replaced");
    let run_file = c.rupu.expected.runs[1].file.clone();
    let bytes = with_one_more_usage_line(&c.rupu.dir.path().join(&run_file));
    let name = Path::new(&run_file).file_name().unwrap().to_str().unwrap().to_string();
    let key = object_store::path::Path::parse(format!("team/rupu/{run_file}")).unwrap();
    let proxy = server().replacing_proxy(&name, move || {
        let store = server().bucket("replaced");
        crate::util::runtime().block_on(async {
            use object_store::ObjectStoreExt;
            store.put(&key, bytes.into()).await.unwrap();
        });
    });
    let out = s3_txq_with(
        &[
            "--no-cache",
            "--format",
            "csv",
            "-e",
            "select count(*) n from rupu.usage where input_tokens >= 0",
            &c.remote(),
        ],
        c.rupu.dir.path(),
        &[("AWS_ENDPOINT_URL", &proxy)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let usage = c.rupu.expected.events_by_type["usage"];
    assert_eq!(out.stdout, format!("n\n{}\n", usage + 1), "{}", out.stderr);
    // Said, since `files` shows the object as it was listed; once, though both the inference
    // pass and a scan (a filter makes one) read it as it is now.
    let said = format!("{name}: read as it is now: replaced since it was listed");
    assert_eq!(out.stderr.matches(&said).count(), 1, "{}", out.stderr);
}

#[test]
fn an_object_key_no_store_path_names_is_left_out_and_the_rest_of_the_prefix_is_read() {
    // A key with a control character (as `..`, `.` or `//` would) failed the listing of every
    // object under the prefix: exit 2, nothing read.
    let c = uploaded("oddkeys");
    let odd = format!("team/rupu/{}/run_odd\tkey.jsonl", c.rupu.expected.transcripts_dir);
    let first = std::fs::read(c.rupu.dir.path().join(&c.rupu.expected.runs[1].file)).unwrap();
    server().put_as_file("oddkeys", &odd, &first);
    let out = s3_txq(
        &["--no-cache", "--format", "csv", "-e", "select count(*) n from rupu.usage", &c.remote()],
        c.rupu.dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let usage = c.rupu.expected.events_by_type["usage"];
    assert_eq!(out.stdout, format!("n\n{usage}\n"), "{}", out.stderr);
    assert!(!out.stderr.contains("cannot list"), "{}", out.stderr);
    // The object left out is named, its key's tab escaped, in one warning of one line.
    assert!(
        out.stderr.contains("run_odd\\tkey.jsonl: not read: no object store path names this key"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_store_that_never_answers_ends_the_run_with_a_clear_error_within_the_store_timeout() {
    // An endpoint that takes the connection and says nothing: the wait is TXQ_STORE_TIMEOUT's
    // (half a second here), then exit 2 naming the place, as for any place that cannot be read.
    let dir = tempfile::tempdir().unwrap();
    let silent = crate::s3::silent_endpoint();
    let place = "s3://silent/team";
    let out = s3_txq_with(
        &["--no-cache", "-e", "select 1", place],
        dir.path(),
        &[("AWS_ENDPOINT_URL", &silent), ("TXQ_STORE_TIMEOUT", "0.5")],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains(place) && out.stderr.contains("cannot list"), "{}", out.stderr);
    assert!(out.stderr.contains("no answer within 0.5 s (TXQ_STORE_TIMEOUT"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    // A timeout that is no number of seconds is refused, naming the variable.
    let out =
        s3_txq_with(&["--no-cache", "-e", "select 1", place], dir.path(), &[("TXQ_STORE_TIMEOUT", "soon")]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("TXQ_STORE_TIMEOUT=soon"), "{}", out.stderr);
}

#[test]
fn a_stores_error_body_of_many_lines_is_a_warning_of_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = "<?xml version=\"1.0\"?>\n<Error>\n  <Code>AccessDenied</Code>\n  <Message>no\u{1b}[31m reading</Message>\n</Error>\n";
    let endpoint = crate::s3::refusing_endpoint("team/run_1.jsonl", 100, body);
    let out = s3_txq_with(
        &["--no-cache", "--format", "csv", "-e", "select count(*) n from rupu.events", "s3://refusing/team"],
        dir.path(),
        &[("AWS_ENDPOINT_URL", &endpoint), ("TXQ_STORE_TIMEOUT", "5")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings: Vec<&str> =
        out.stderr.lines().filter(|l| l.contains("s3://refusing/team/run_1.jsonl")).collect();
    assert!(!warnings.is_empty(), "{}", out.stderr);
    for line in out.stderr.lines() {
        assert!(line.starts_with("txq: "), "every line of stderr is one of txq's: {}", out.stderr);
    }
    assert!(
        warnings.iter().any(|w| w.contains("<Code>AccessDenied</Code> <Message>no\\x1b[31m reading")),
        "{}",
        out.stderr
    );
}
