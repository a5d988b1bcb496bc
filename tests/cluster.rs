//! The same SQL on a real Ballista cluster: one `txq scheduler` and two `txq executor`s started
//! as processes on loopback ports, all reading the s3s-fs server of [`crate::s3`], each
//! statement's result, warnings and exit code compared with the run on this machine; and a
//! cluster that loses an executor mid-query, which must end the statement, not hang it.

use crate::remote_store::{Uploaded, uploaded};
use crate::s3::server;
use crate::util::{Output, command};
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Processes started by a test, killed by their ids when it ends, however it ends.
struct Started(Vec<(String, Child)>);

impl Drop for Started {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A cluster of one scheduler and `executors` executors, each process with the S3 server's
/// environment; ready once the scheduler's `/readyz` says so.
struct Cluster {
    processes: Started,
    port: u16,
    _work: tempfile::TempDir,
}

impl Cluster {
    fn start(executors: usize, extra_scheduler: &[&str]) -> Cluster {
        let work = tempfile::tempdir().unwrap();
        let port = free_port();
        let spawn = |name: String, args: Vec<String>| -> (String, Child) {
            let log = std::fs::File::create(work.path().join(format!("{name}.log"))).unwrap();
            let child = command(work.path())
                .envs(server().env())
                .env("RUST_LOG", std::env::var("TXQ_TEST_CLUSTER_LOG").unwrap_or_else(|_| "warn".into()))
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("a txq process starts");
            (name, child)
        };
        let mut scheduler: Vec<String> =
            ["scheduler", "--bind-host", "127.0.0.1", "--external-host", "127.0.0.1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        scheduler.extend(["--bind-port".into(), port.to_string(), "-s".into(), "pull-staged".into()]);
        scheduler.extend(["--min-ready-executors".into(), executors.to_string()]);
        scheduler.extend(extra_scheduler.iter().map(|s| s.to_string()));
        let mut processes = Started(vec![spawn("scheduler".into(), scheduler)]);
        // An executor that finds no scheduler listening gives up: the scheduler's port first.
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "the scheduler does not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        for i in 0..executors {
            let dir = work.path().join(format!("executor-{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let mut args: Vec<String> = vec!["executor".into()];
            for (flag, value) in [
                ("--bind-host", "127.0.0.1".to_string()),
                ("--scheduler-host", "127.0.0.1".to_string()),
                ("--scheduler-port", port.to_string()),
                ("--bind-port", free_port().to_string()),
                ("--bind-grpc-port", free_port().to_string()),
                ("--bind-health-port", free_port().to_string()),
                ("--work-dir", dir.to_str().unwrap().to_string()),
                ("--vcores", "1".to_string()),
                ("--memory-pool-size", "1GB".to_string()),
                ("--executor-heartbeat-interval-seconds", "1".to_string()),
                ("-s", "pull-staged".to_string()),
            ] {
                args.extend([flag.to_string(), value]);
            }
            processes.0.push(spawn(format!("executor-{i}"), args));
        }
        let cluster = Cluster { processes, port, _work: work };
        cluster.wait_ready();
        cluster
    }

    fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.port)
    }

    /// Waits (60 s at most) for `/readyz` to answer 200: every executor has registered.
    fn wait_ready(&self) {
        let started = Instant::now();
        loop {
            if self.readyz() == Some(200) {
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "the cluster is not ready: {}", self.logs());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn readyz(&self) -> Option<u16> {
        self.get("/readyz").map(|(status, _)| status)
    }

    /// The status and body of a GET of the scheduler's `path`.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        let status = answer.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, answer))
    }

    /// What the processes wrote on stderr, for a failure's message.
    fn logs(&self) -> String {
        self.processes
            .0
            .iter()
            .map(|(name, _)| {
                let log = std::fs::read_to_string(self._work.path().join(format!("{name}.log")))
                    .unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                format!("--- {name}\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// txq with the S3 server's environment, at most `limit` long (then killed: a test fails, it
/// does not hang).
fn run(args: &[&str], c: &Uploaded, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command(c.rupu.dir.path())
        .envs(server().env())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("txq {args:?} ran over {limit:?}: {}", err.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output { code, stdout: out.join().unwrap(), stderr: err.join().unwrap() };
    (output, started.elapsed())
}

/// Statements that need a shuffle (group by, join), a JSON function, a view over every format
/// priced with `call_cost`, a LIMIT, the `files` and `prices` tables, and one that fails.
const STATEMENTS: &[&str] = &[
    "select type, count(*) n from rupu.events group by type order by type",
    "select c.tool, count(*) n, count(r.error) failed from rupu.tool_call c join rupu.tool_result r \
     on c.run_id = r.run_id and c.call_id = r.call_id group by c.tool order by c.tool",
    "select json_get_str(data, 'tool') tool, count(*) n from rupu.events where type = 'tool_call' \
     group by tool order by tool",
    "select model, count(*) calls, sum(input_tokens) input, round(sum(cost_usd), 6) cost from calls \
     group by model order by model",
    "select file, line from rupu.errors order by file, line",
    "select run_id, model from rupu.usage order by run_id, line limit 5",
    "select count(*) files, sum(bytes) bytes from rupu.files",
    "select tool, count(*) n, count(*) filter (where not ok) failed from reeval.tool group by tool order by tool",
    "select model, input from prices where model = 'claude-opus-4-1'",
    "select no_such_column from rupu.usage",
];

#[test]
fn statements_on_a_two_executor_cluster_equal_the_local_run() {
    let c = uploaded("cluster");
    let cluster = Cluster::start(2, &[]);
    let remote = c.remote();
    for sql in STATEMENTS {
        let args = ["--no-cache", "--format", "csv", "-e", sql, remote.as_str()];
        let (local, _) = run(&args, &c, Duration::from_secs(120));
        let url = cluster.url();
        let mut on_cluster = args.to_vec();
        on_cluster.extend(["--cluster", url.as_str()]);
        let (distributed, _) = run(&on_cluster, &c, Duration::from_secs(120));
        assert_eq!(distributed.code, local.code, "{sql}: {}\n{}", distributed.stderr, cluster.logs());
        assert_eq!(distributed.stdout, local.stdout, "{sql}\n{}", cluster.logs());
        assert_eq!(distributed.stderr, local.stderr, "{sql}");
        if local.code == 0 {
            assert!(local.stdout.lines().count() > 1, "{sql}: {}", local.stdout);
        }
    }
    // The damaged lines the executors skipped are the statement's warning, as here.
    let (errors, _) = run(
        &["--no-cache", "--format", "csv", "--cluster", &cluster.url(), "-e", STATEMENTS[0], &remote],
        &c,
        Duration::from_secs(120),
    );
    assert!(errors.stderr.contains("damaged lines"), "{}", errors.stderr);
    // A canned query and a script too.
    for args in [
        vec!["--no-cache", "--format", "csv", "query", "denied_tools", remote.as_str()],
        vec!["--no-cache", "--format", "csv", "query", "spend_by_model_day", remote.as_str()],
    ] {
        let (local, _) = run(&args, &c, Duration::from_secs(120));
        let url = cluster.url();
        let mut on_cluster = args.clone();
        on_cluster.extend(["--cluster", url.as_str()]);
        let (distributed, _) = run(&on_cluster, &c, Duration::from_secs(120));
        assert_eq!((distributed.code, &distributed.stdout), (local.code, &local.stdout), "{args:?}");
    }
    // And the shell's statements.
    use rexpect::session::{Options, spawn_with_options};
    let home = tempfile::tempdir().unwrap();
    let mut shell = command(c.rupu.dir.path());
    shell.envs(server().env()).env("TERM", "xterm").env("HOME", home.path());
    shell.env("TXQ_HISTORY", home.path().join("history"));
    shell.args(["--no-cache", "--cluster", &cluster.url(), &remote]);
    let options = Options::new().timeout_ms(Some(60_000)).strip_ansi_escape_codes(true);
    let mut s = spawn_with_options(shell, options).expect("the shell starts");
    s.exp_string("txq> ").unwrap();
    s.send_line("select count(*) as n from rupu.usage;").unwrap();
    let out = s.exp_string("1 row in ").unwrap();
    let usage = c.rupu.expected.events_by_type["usage"];
    assert!(out.contains(&format!(" {usage} |")), "{out}\n{}", cluster.logs());
    s.exp_string("txq> ").unwrap();
    s.send_line("\\q").unwrap();
    s.exp_eof().unwrap();
}

#[test]
fn a_cluster_that_is_not_there_and_local_only_commands_are_clear_errors() {
    let c = crate::remote_store::corpus();
    let url = format!("df://127.0.0.1:{}", free_port());
    let (out, took) = run(&["--cluster", &url, "-e", "select 1"], c, Duration::from_secs(60));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains(&url) && out.stderr.contains("no scheduler answers"), "{}", out.stderr);
    assert!(took < Duration::from_secs(30));
    for args in [
        vec!["--cluster", "http://127.0.0.1:1", "-e", "select 1"],
        vec!["--cluster", &url, "--follow", "-e", "select 1"],
        vec!["--cluster", &url, "report", "--out", "-"],
    ] {
        let (out, _) = run(&args, c, Duration::from_secs(60));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.starts_with("txq: error: "), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn an_executor_killed_mid_query_ends_the_statement_and_nothing_hangs() {
    let c = uploaded("failover");
    let mut cluster = Cluster::start(
        2,
        &["--executor-timeout-seconds", "4", "--expire-dead-executor-interval-seconds", "1"],
    );
    // A statement of some seconds: every pair of events, shuffled by a join.
    let sql = "select a.type, count(*) n from rupu.events a join rupu.events b on a.run_id = b.run_id \
               join rupu.events d on d.run_id = a.run_id group by a.type order by a.type";
    let remote = c.remote();
    let (local, _) =
        run(&["--no-cache", "--format", "csv", "-e", sql, &remote], &c, Duration::from_secs(300));
    assert_eq!(local.code, 0, "{}", local.stderr);
    let url = cluster.url();
    let args: Vec<String> = ["--no-cache", "--format", "csv", "--cluster", &url, "-e", sql, &remote]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let client = {
        let c_dir = c.rupu.dir.path().to_path_buf();
        std::thread::spawn(move || {
            let started = Instant::now();
            let out = command(&c_dir).envs(server().env()).args(&args).stdin(Stdio::null()).output().unwrap();
            (out, started.elapsed())
        })
    };
    // Once the job runs (the scheduler's REST API says so), one executor dies (SIGKILL: no
    // goodbye to the scheduler).
    let started = Instant::now();
    while !cluster.get("/api/jobs").is_some_and(|(_, body)| body.contains("Running")) {
        assert!(started.elapsed() < Duration::from_secs(120), "no job runs: {}", cluster.logs());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!client.is_finished(), "the statement ended before an executor could be killed");
    let (_, executor) = &mut cluster.processes.0[1];
    executor.kill().unwrap();
    let _ = executor.wait();
    let started = Instant::now();
    while !client.is_finished() {
        assert!(started.elapsed() < Duration::from_secs(240), "the statement hangs: {}", cluster.logs());
        std::thread::sleep(Duration::from_millis(100));
    }
    let (out, took) = client.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("with an executor killed: exit {:?} after {took:?}: {stderr}", out.status.code());
    match out.status.code() {
        // Finished on the executor left: the same answer.
        Some(0) => assert_eq!(String::from_utf8_lossy(&out.stdout), local.stdout, "{stderr}"),
        // Or a failure that says so, in one message, not a panic.
        Some(1) => {
            assert!(stderr.starts_with("txq: error: "), "{stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
        other => panic!("exit {other:?} after {took:?}: {stderr}"),
    }
}
