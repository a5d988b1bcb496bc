//! The same SQL on a real Ballista cluster: one `txq scheduler` and two `txq executor`s started
//! as processes on loopback ports, all reading the s3s-fs server of [`crate::s3`], each
//! statement's result, warnings and exit code compared with the run on this machine; a cluster
//! that answers only calls carrying its secret and runs only txq's reading statements; a
//! cluster that loses an executor mid-query, which must give the local answer or fail, never a
//! wrong answer, and never hang; and processes that end on SIGTERM and Ctrl-C, and clients and
//! executors that give up on a scheduler that never answers, within their timeouts.

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

/// The shared secret of every cluster a test starts (and of its clients).
const SECRET: &str = "test-secret-0123456789abcdef";

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A cluster of one scheduler and `executors` executors, each process with the S3 server's
/// environment; ready once the scheduler's `/readyz` says so.
struct Cluster {
    processes: Started,
    port: u16,
    /// Each executor's Flight port and health port.
    executor_ports: Vec<(u16, u16)>,
    _work: tempfile::TempDir,
}

impl Cluster {
    fn start(executors: usize, extra_scheduler: &[&str]) -> Cluster {
        Cluster::start_with(executors, extra_scheduler, &[])
    }

    /// A cluster whose executors have `extra_executor` flags too.
    fn start_with(executors: usize, extra_scheduler: &[&str], extra_executor: &[&str]) -> Cluster {
        let work = tempfile::tempdir().unwrap();
        let port = free_port();
        let spawn = |name: String, args: Vec<String>| -> (String, Child) {
            let log = std::fs::File::create(work.path().join(format!("{name}.log"))).unwrap();
            let child = command(work.path())
                .envs(server().env())
                .env("TXQ_CLUSTER_SECRET", SECRET)
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
        let mut executor_ports = Vec::new();
        for i in 0..executors {
            let dir = work.path().join(format!("executor-{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let mut args: Vec<String> = vec!["executor".into()];
            let (flight, health) = (free_port(), free_port());
            executor_ports.push((flight, health));
            for (flag, value) in [
                ("--bind-host", "127.0.0.1".to_string()),
                ("--scheduler-host", "127.0.0.1".to_string()),
                ("--scheduler-port", port.to_string()),
                ("--bind-port", flight.to_string()),
                ("--bind-grpc-port", free_port().to_string()),
                ("--bind-health-port", health.to_string()),
                ("--work-dir", dir.to_str().unwrap().to_string()),
                ("--vcores", "1".to_string()),
                ("--memory-pool-size", "1GB".to_string()),
                ("--executor-heartbeat-interval-seconds", "1".to_string()),
                ("-s", "pull-staged".to_string()),
            ] {
                // A flag `extra_executor` gives is its own.
                if !extra_executor.contains(&flag) {
                    args.extend([flag.to_string(), value]);
                }
            }
            args.extend(extra_executor.iter().map(|s| s.to_string()));
            processes.0.push(spawn(format!("executor-{i}"), args));
        }
        let cluster = Cluster { processes, port, executor_ports, _work: work };
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

    /// The status and body of a GET of the scheduler's `path`, with the cluster's secret.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        http_get(self.port, path, Some(SECRET))
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

/// The status and body of a GET of `path` on the loopback `port`, with `Authorization: Bearer
/// SECRET` when a secret is given.
fn http_get(port: u16, path: &str, secret: Option<&str>) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let authorization = secret.map(|s| format!("Authorization: Bearer {s}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{authorization}Connection: close\r\n\r\n")
        .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, answer))
}

/// txq with the S3 server's environment and the cluster's secret, at most `limit` long (then
/// killed: a test fails, it does not hang).
fn run(args: &[&str], c: &Uploaded, limit: Duration) -> (Output, Duration) {
    run_with(args, c, limit, &[("TXQ_CLUSTER_SECRET", SECRET)])
}

/// [`run`] with the variables `env` (and without the cluster's secret unless `env` holds it).
fn run_with(args: &[&str], c: &Uploaded, limit: Duration, env: &[(&str, &str)]) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command(c.rupu.dir.path())
        .envs(server().env())
        .envs(env.iter().copied())
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
    // Canned queries (blocks and subagent_spend with txq's window functions, which the executors
    // must know) and a script too.
    for args in [
        vec!["--no-cache", "--format", "csv", "query", "denied_tools", remote.as_str()],
        vec!["--no-cache", "--format", "csv", "query", "spend_by_model_day", remote.as_str()],
        vec!["--no-cache", "--format", "csv", "query", "blocks", remote.as_str()],
        vec!["--no-cache", "--format", "csv", "query", "subagent_spend", remote.as_str()],
        // sessions.project: repository_root, which the executors must know too.
        vec!["--no-cache", "--format", "csv", "query", "branch_spend", remote.as_str()],
    ] {
        let (local, _) = run(&args, &c, Duration::from_secs(120));
        let url = cluster.url();
        let mut on_cluster = args.clone();
        on_cluster.extend(["--cluster", url.as_str()]);
        let (distributed, _) = run(&on_cluster, &c, Duration::from_secs(120));
        assert_eq!(
            (distributed.code, &distributed.stdout),
            (local.code, &local.stdout),
            "{args:?}: {}",
            distributed.stderr
        );
    }
    // And the shell's statements.
    use rexpect::session::{Options, spawn_with_options};
    let home = tempfile::tempdir().unwrap();
    let mut shell = command(c.rupu.dir.path());
    shell
        .envs(server().env())
        .env("TXQ_CLUSTER_SECRET", SECRET)
        .env("TERM", "xterm")
        .env("HOME", home.path());
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

/// Regression (issue 31): the scheduler refused the job's metrics ("Stage metrics size
/// mismatch"), and a statement run on the cluster lost the damaged-line warnings a local run
/// gives. A statement that shuffles and two that do not, over a folder and a store, on one
/// executor of four task slots and on two of one.
#[test]
fn a_shuffling_statements_damaged_line_warnings_on_a_cluster_equal_the_local_runs() {
    let corpus =
        crate::util::Generated::new(&txq::generate::RupuOptions { seed: 31, runs: 60, ..Default::default() });
    let c = uploaded("cluster-warnings");
    let (dir, remote) = (corpus.dir.path().to_str().unwrap().to_string(), c.remote());
    for (executors, vcores) in [(1, "4"), (2, "1")] {
        let cluster = Cluster::start_with(executors, &[], &["--vcores", vcores]);
        for sql in [
            "select type, count(*) n from rupu.events group by type order by type",
            "select run_id, model from rupu.usage order by run_id, line limit 5",
            "select count(*) n from rupu.events",
        ] {
            for place in [dir.as_str(), remote.as_str()] {
                let args = ["--no-cache", "--format", "csv", "-e", sql, place];
                let (local, _) = run(&args, &c, Duration::from_secs(120));
                assert!(local.stderr.contains("damaged lines"), "{sql}: {}", local.stderr);
                let url = cluster.url();
                let mut on_cluster = args.to_vec();
                on_cluster.extend(["--cluster", url.as_str()]);
                let (distributed, _) = run(&on_cluster, &c, Duration::from_secs(120));
                assert_eq!(distributed.stderr, local.stderr, "{sql} on {place}\n{}", cluster.logs());
                assert_eq!((distributed.code, distributed.stdout), (local.code, local.stdout), "{sql}");
            }
        }
    }
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
fn an_executor_killed_mid_statement_gives_the_local_answer_or_fails_never_a_wrong_one() {
    let c = uploaded("failover");
    // A statement of some seconds: every pair of events, shuffled by a join, then grouped.
    let sql = "select a.type, count(*) n from rupu.events a join rupu.events b on a.run_id = b.run_id \
               join rupu.events d on d.run_id = a.run_id group by a.type order by a.type";
    let remote = c.remote();
    let (local, _) =
        run(&["--no-cache", "--format", "csv", "-e", sql, &remote], &c, Duration::from_secs(300));
    assert_eq!(local.code, 0, "{}", local.stderr);
    // Each round: a fresh cluster of two executors, one killed (SIGKILL: no goodbye to the
    // scheduler) at a later point of the statement than the round before.
    let kill_after_ms = [0u64, 300, 700, 1200, 1800, 2600];
    let mut outcomes = Vec::new();
    for (round, delay) in kill_after_ms.iter().enumerate() {
        let mut cluster = Cluster::start(
            2,
            &["--executor-timeout-seconds", "4", "--expire-dead-executor-interval-seconds", "1"],
        );
        let url = cluster.url();
        let args: Vec<String> = ["--no-cache", "--format", "csv", "--cluster", &url, "-e", sql, &remote]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let client = {
            let c_dir = c.rupu.dir.path().to_path_buf();
            std::thread::spawn(move || {
                let started = Instant::now();
                let out = command(&c_dir)
                    .envs(server().env())
                    .env("TXQ_CLUSTER_SECRET", SECRET)
                    .args(&args)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                (out, started.elapsed())
            })
        };
        // Once the job runs (the scheduler's REST API says so), and `delay` later, one dies.
        let started = Instant::now();
        while !cluster.get("/api/jobs").is_some_and(|(_, body)| body.contains("Running")) {
            assert!(started.elapsed() < Duration::from_secs(120), "no job runs: {}", cluster.logs());
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(*delay));
        let killed = !client.is_finished();
        if killed {
            let (_, executor) = &mut cluster.processes.0[1 + round % 2];
            executor.kill().unwrap();
            let _ = executor.wait();
        }
        let started = Instant::now();
        while !client.is_finished() {
            assert!(started.elapsed() < Duration::from_secs(240), "the statement hangs: {}", cluster.logs());
            std::thread::sleep(Duration::from_millis(100));
        }
        let (out, took) = client.join().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let outcome = match out.status.code() {
            // The same answer as here, never another.
            Some(0) => {
                assert_eq!(String::from_utf8_lossy(&out.stdout), local.stdout, "round {round}: {stderr}");
                "the local answer"
            }
            // Or a failure that says so, in one message, not a panic.
            Some(1) => {
                assert!(
                    killed,
                    "round {round}: failed with no executor killed: {stderr}\n{}",
                    cluster.logs()
                );
                assert!(stderr.contains("txq: error: "), "round {round}: {stderr}");
                assert!(!stderr.contains("panicked"), "round {round}: {stderr}");
                "a failure"
            }
            other => panic!("round {round}: exit {other:?} after {took:?}: {stderr}"),
        };
        eprintln!(
            "round {round}, killed {delay} ms in: {} after {took:?}",
            if killed { outcome } else { "done before the kill" }
        );
        outcomes.push((killed, outcome));
    }
    assert!(
        outcomes.iter().filter(|(killed, _)| *killed).count() >= 2,
        "too few rounds killed an executor mid-statement: {outcomes:?}"
    );
}

#[test]
fn a_cluster_answers_only_calls_that_carry_its_secret() {
    let c = crate::remote_store::corpus();
    let cluster = Cluster::start(1, &[]);
    let (flight, health) = cluster.executor_ports[0];
    // Every HTTP endpoint of the scheduler and of the executor: refused without the secret.
    for (port, path) in [
        (cluster.port, "/api/jobs"),
        (cluster.port, "/api/executors"),
        (cluster.port, "/readyz"),
        (cluster.port, "/healthz"),
        (health, "/readyz"),
        (health, "/healthz"),
    ] {
        assert_eq!(http_get(port, path, None).map(|(status, _)| status), Some(401), "{port}{path}");
        assert_eq!(
            http_get(port, path, Some("not-the-secret-0123456789")).map(|(s, _)| s),
            Some(401),
            "{path}"
        );
        assert_eq!(http_get(port, path, Some(SECRET)).map(|(status, _)| status), Some(200), "{port}{path}");
    }
    // gRPC: the scheduler's service and the executor's Flight service, without the secret.
    crate::util::runtime().block_on(async {
        use arrow_flight::flight_service_client::FlightServiceClient;
        use ballista_core::serde::protobuf::{
            GetJobMetricsParams, scheduler_grpc_client::SchedulerGrpcClient,
        };
        let mut scheduler =
            SchedulerGrpcClient::connect(format!("http://127.0.0.1:{}", cluster.port)).await.unwrap();
        let refused =
            scheduler.get_job_metrics(GetJobMetricsParams { job_id: "any".into() }).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{flight}")).unwrap();
        let mut executor = FlightServiceClient::new(channel.connect().await.unwrap());
        let refused = executor.list_actions(arrow_flight::Empty {}).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
    });
    // A client without the secret, or with another: exit 2 before any statement, saying why.
    let url = cluster.url();
    for (env, why) in [
        (vec![], "the scheduler needs the cluster's secret"),
        (vec![("TXQ_CLUSTER_SECRET", "another-secret-0123456789")], "refused this process's secret"),
    ] {
        let (out, _) = run_with(&["--cluster", &url, "-e", "select 1"], c, Duration::from_secs(60), &env);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains(&url) && out.stderr.contains(why), "{}", out.stderr);
    }
    // With it: the answer.
    let (out, _) =
        run(&["--cluster", &url, "--format", "csv", "-e", "select 41 + 1 as n"], c, Duration::from_secs(60));
    assert_eq!((out.code, out.stdout.as_str()), (0, "n\n42\n"), "{}", out.stderr);
}

#[test]
fn a_cluster_listens_on_loopback_unless_told_and_refuses_an_open_address_without_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let quick = |args: &[&str], secret: Option<&str>| {
        let mut txq = command(dir.path());
        txq.env_remove("TXQ_CLUSTER_SECRET").env_remove("TXQ_CLUSTER_SECRET_FILE");
        if let Some(secret) = secret {
            txq.env("TXQ_CLUSTER_SECRET", secret);
        }
        let out = txq.args(args).stdin(Stdio::null()).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    for process in ["scheduler", "executor"] {
        // Reached from other machines, no secret: refused, exit 2.
        let (code, stderr) = quick(&[process, "--bind-host", "0.0.0.0"], None);
        assert_eq!(code, Some(2), "{process}: {stderr}");
        assert!(stderr.contains("--bind-host 0.0.0.0") && stderr.contains("TXQ_CLUSTER_SECRET"), "{stderr}");
        // push-staged with a secret: Ballista's executor service cannot be guarded, refused.
        let (code, stderr) = quick(&[process, "-s", "push-staged"], Some(SECRET));
        assert_eq!(code, Some(2), "{process}: {stderr}");
        assert!(stderr.contains("pull-staged"), "{stderr}");
        // A secret too short to be one.
        let (code, stderr) = quick(&[process, "--bind-host", "0.0.0.0"], Some("short"));
        assert_eq!(code, Some(2), "{process}: {stderr}");
    }
    // A --secret-file that is not there: named, exit 2.
    let (code, stderr) = quick(&["scheduler", "--secret-file", "no-such-secret"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no-such-secret"), "{stderr}");
    // With no --bind-host, the scheduler takes 127.0.0.1 only: not 127.0.0.2, which 0.0.0.0 takes.
    let port = free_port();
    let mut scheduler = Started(vec![(
        "scheduler".into(),
        command(dir.path())
            .env("TXQ_CLUSTER_SECRET", SECRET)
            .args(["scheduler", "--bind-port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )]);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "the scheduler does not listen on {port}");
        assert!(scheduler.0[0].1.try_wait().unwrap().is_none(), "the scheduler ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        std::net::TcpStream::connect(("127.0.0.2", port)).is_err(),
        "the scheduler listens beyond 127.0.0.1"
    );
}

#[test]
fn a_cluster_runs_only_reading_statements_over_txqs_tables() {
    let c = crate::remote_store::corpus();
    let cluster = Cluster::start(1, &[]);
    let url = cluster.url();
    let remote = c.remote();
    let secret_file = c.rupu.dir.path().join("not-for-the-cluster.csv");
    std::fs::write(&secret_file, "name,word\nroot,hunter2\n").unwrap();
    let target = tempfile::tempdir().unwrap();
    let written = target.path().join("written.csv");
    let (file, out_file) = (secret_file.to_str().unwrap(), written.to_str().unwrap());
    for sql in [
        format!(
            "CREATE EXTERNAL TABLE p STORED AS CSV LOCATION '{file}' OPTIONS ('format.has_header' 'true'); select * from p"
        ),
        format!("COPY (select type from rupu.events) TO '{out_file}' STORED AS CSV"),
        "create table t as select 1 as x; insert into t values (2)".to_string(),
        "select * from generate_series(1, 3)".to_string(),
    ] {
        let (out, _) =
            run(&["--no-cache", "--cluster", &url, "-e", &sql, &remote], c, Duration::from_secs(60));
        assert_eq!(out.code, 1, "{sql}: {}", out.stderr);
        assert!(out.stderr.contains("refused on a cluster"), "{sql}: {}", out.stderr);
        assert!(!out.stdout.contains("hunter2"), "{sql}: {}", out.stdout);
    }
    assert!(!written.exists(), "COPY wrote {}", written.display());
    // Whatever the client sends: a Ballista client of its own, with the secret, is refused by
    // the scheduler a table not txq's, and any plan but a logical one.
    crate::util::runtime().block_on(async {
        use ballista_core::extension::{SessionConfigExt, SessionStateExt};
        use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
        use ballista_core::serde::protobuf::{ExecuteQueryParams, execute_query_params::Query};
        let secret = txq::cluster::secret::Secret::of_text(SECRET, "test").unwrap();
        let scheduler = format!("df://127.0.0.1:{}", cluster.port);
        let config = datafusion::prelude::SessionConfig::new_with_ballista()
            .with_ballista_override_create_grpc_client_endpoint(secret.endpoint_override());
        let state = datafusion::execution::SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .build()
            .upgrade_for_ballista(scheduler)
            .unwrap();
        let ctx = datafusion::prelude::SessionContext::new_with_state(state);
        ctx.register_csv("p", file, Default::default()).await.unwrap();
        let refused = ctx.sql("select * from p").await.unwrap().collect().await.unwrap_err().to_string();
        assert!(refused.contains("refused on a cluster") && !refused.contains("hunter2"), "{refused}");
        let endpoint =
            tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", cluster.port)).unwrap();
        let endpoint = (secret.endpoint_override())(endpoint).unwrap();
        let mut client = SchedulerGrpcClient::new(endpoint.connect().await.unwrap());
        let physical =
            ExecuteQueryParams { query: Some(Query::PhysicalPlan(Vec::new())), ..Default::default() };
        let refused = client.execute_query(physical).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused}");
    });
    // txq's own reading statements still run.
    let (out, _) = run(
        &[
            "--no-cache",
            "--format",
            "csv",
            "--cluster",
            &url,
            "-e",
            "select count(*) > 0 as some from rupu.events",
            &remote,
        ],
        c,
        Duration::from_secs(60),
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "some\ntrue\n"), "{}", out.stderr);
}

#[test]
fn a_silent_scheduler_ends_its_client_and_executor_with_exit_2_within_their_timeouts() {
    let c = crate::remote_store::corpus();
    // A scheduler that takes connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming() {
            held.push(connection);
        }
    });
    let url = format!("df://127.0.0.1:{port}");
    let (out, took) = run_with(
        &["--cluster", &url, "-e", "select 1"],
        c,
        Duration::from_secs(60),
        &[("TXQ_CLUSTER_SECRET", SECRET), ("TXQ_CLUSTER_TIMEOUT", "2")],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no scheduler answers within 2 s"), "{}", out.stderr);
    assert!(took < Duration::from_secs(15), "{took:?}");
    let work = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = command(work.path())
        .env("TXQ_CLUSTER_SECRET", SECRET)
        .args(["executor", "--scheduler-host", "127.0.0.1", "--scheduler-port", &port.to_string()])
        .args(["--bind-port", &free_port().to_string(), "--bind-grpc-port", &free_port().to_string()])
        .args(["--bind-health-port", &free_port().to_string(), "--scheduler-answer-timeout-seconds", "2"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no scheduler answers within 2 s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
}

#[test]
fn schedulers_and_executors_end_on_sigterm_and_ctrl_c_even_with_their_scheduler_silent() {
    let mut cluster = Cluster::start_with(2, &[], &["--stop-timeout-seconds", "2"]);
    let signal = |child: &Child, signal: i32| assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let ended_within = |child: &mut Child, limit: Duration| {
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code();
            }
            if started.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // The scheduler stops answering; each executor still ends, one on SIGTERM, one on Ctrl-C.
    signal(&cluster.processes.0[0].1, libc::SIGSTOP);
    for (i, sig) in [(1, libc::SIGTERM), (2, libc::SIGINT)] {
        signal(&cluster.processes.0[i].1, sig);
        let code = ended_within(&mut cluster.processes.0[i].1, Duration::from_secs(10));
        assert_eq!(code, Some(0), "executor {i} after signal {sig}: {}", cluster.logs());
    }
    signal(&cluster.processes.0[0].1, libc::SIGCONT);
    signal(&cluster.processes.0[0].1, libc::SIGTERM);
    let code = ended_within(&mut cluster.processes.0[0].1, Duration::from_secs(10));
    assert_eq!(code, Some(0), "the scheduler after SIGTERM: {}", cluster.logs());
}

#[test]
fn scheduler_and_executor_help_lists_ballistas_flags_and_txqs_own() {
    let c = crate::remote_store::corpus();
    for process in ["scheduler", "executor"] {
        let (out, _) = run(&[process, "--help"], c, Duration::from_secs(60));
        assert_eq!(out.code, 0, "{process}: {}", out.stderr);
        let help = format!("{}{}", out.stdout, out.stderr);
        assert!(help.contains("--bind-host") && help.contains("--secret-file"), "{process}: {help}");
    }
}
