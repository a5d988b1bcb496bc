//! `txq scheduler` and `txq executor`: Ballista's scheduler and executor, with Ballista's own
//! flags (`--bind-host`, `--bind-port`, `-s pull-staged|push-staged`, ...) and txq's
//! (`--secret-file`, `--stop-timeout-seconds`), started with txq's codecs, the process's object
//! stores and the JSON functions, so that they plan and run the statements of `txq --cluster`,
//! and nothing else. Unlike Ballista's own, they listen on 127.0.0.1 and pull their tasks unless
//! told otherwise, refuse an address other machines reach without the cluster's secret, check
//! the secret on every endpoint, and end on SIGTERM or Ctrl-C (exit 0), a goodbye to the
//! scheduler included, within the stop timeout. Their log goes to stderr (`RUST_LOG` sets what it
//! holds).

use super::secret::Secret;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use clap::{Arg, ArgMatches, CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The address a scheduler or an executor listens on when `--bind-host` is not given.
pub const DEFAULT_BIND_HOST: &str = "127.0.0.1";
/// How long a stopped executor has to say goodbye to its scheduler and finish its tasks, when
/// `--stop-timeout-seconds` is not given.
pub const DEFAULT_STOP_TIMEOUT_SECONDS: u64 = 10;
/// How long an executor waits for its scheduler's first answer, when
/// `--scheduler-answer-timeout-seconds` is not given.
pub const DEFAULT_ANSWER_TIMEOUT_SECONDS: u64 = 10;

/// txq's own flags of `txq scheduler` and `txq executor`, beside Ballista's.
struct Own {
    secret: Option<Secret>,
    stop_timeout: Duration,
    answer_timeout: Duration,
}

/// Runs a scheduler with `args` (Ballista's scheduler flags, and txq's) until it is stopped
/// (SIGTERM, or Ctrl-C).
pub fn scheduler(args: Vec<OsString>) -> crate::error::Result<()> {
    let (mut options, matches) = parse::<ballista_scheduler::config::Config>("txq scheduler", args)?;
    let own = own_flags(&matches, false)?;
    let door = (&mut options.bind_host, &mut options.scheduler_policy);
    txq_defaults(&matches, door, "scheduler_policy", own.secret.as_ref())?;
    log(&options.log_level_setting);
    run(async move {
        let address = format!("{}:{}", options.bind_host, options.bind_port);
        let address: SocketAddr =
            address.parse().map_err(|e| usage(format!("--bind-host {address}: {e}")))?;
        let config: ballista_scheduler::config::SchedulerConfig = options.try_into().map_err(failed)?;
        let producer = session_config_producer(own.secret.clone());
        let mut config = config
            .with_override_config_producer(producer)
            .with_override_session_builder(Arc::new(super::scheduler_session_state));
        config.override_logical_codec = Some(Arc::new(super::TxqLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(super::TxqPhysicalCodec::default()));
        config.override_create_grpc_client_endpoint = own.secret.as_ref().map(Secret::endpoint_override);
        config.validate().map_err(|e| usage(e.to_string()))?;
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| usage(format!("cannot listen on {address}: {e}")))?;
        let cluster =
            ballista_scheduler::cluster::BallistaCluster::new_from_config(&config).await.map_err(failed)?;
        let finished = cluster.job_state();
        let scheduler = ballista_scheduler::scheduler_process::create_scheduler::<
            datafusion_proto::protobuf::LogicalPlanNode,
            datafusion_proto::protobuf::PhysicalPlanNode,
        >(cluster, Arc::new(config))
        .await
        .map_err(failed)?;
        log::info!("txq scheduler listening on {address}");
        // The server is dropped on a signal, its connections with it: an executor's stay open.
        tokio::select! {
            served = super::scheduler::serve(listener, scheduler, finished, own.secret, std::future::pending()) => {
                served.map_err(failed)
            }
            signal = stopped() => {
                log::info!("txq scheduler stopped by {signal}");
                Ok(())
            }
        }
    })
}

/// Runs an executor with `args` (Ballista's executor flags, and txq's) until it is stopped
/// (SIGTERM, or Ctrl-C).
pub fn executor(args: Vec<OsString>) -> crate::error::Result<()> {
    use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
    let (mut options, matches) = parse::<ballista_executor::config::Config>("txq executor", args)?;
    let own = own_flags(&matches, true)?;
    let door = (&mut options.bind_host, &mut options.task_scheduling_policy);
    txq_defaults(&matches, door, "task_scheduling_policy", own.secret.as_ref())?;
    run(async move {
        let health = format!("{}:{}", options.bind_host, options.bind_health_port);
        let health: SocketAddr =
            health.parse().map_err(|e| usage(format!("--bind-health-port {health}: {e}")))?;
        let scheduler = format!("http://{}:{}", options.scheduler_host, options.scheduler_port);
        let max_message = options.grpc_server_max_encoding_message_size as usize;
        let mut config: ExecutorProcessConfig = options.try_into().map_err(failed)?;
        log(&config.special_mod_log_level);
        // Said now, and within a timeout: Ballista's executor waits for ever on a scheduler
        // that takes the connection and never answers.
        super::answers(&scheduler, own.secret.as_ref(), own.answer_timeout).await.map_err(|why| {
            crate::error::Error::Cluster {
                url: scheduler.clone(),
                why: format!("{why} (the executor's scheduler)"),
            }
        })?;
        let work_dir = config.work_dir.clone();
        config.override_config_producer = Some(session_config_producer(own.secret.clone()));
        config.override_runtime_producer =
            Some(Arc::new(move |_: &datafusion::prelude::SessionConfig| super::runtime(work_dir.as_deref())));
        let state = super::session_state(super::session_config()).map_err(crate::error::Error::Sql)?;
        config.override_function_registry = Some(Arc::new(BallistaFunctionRegistry::from(&state)));
        config.override_logical_codec = Some(Arc::new(super::TxqLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(super::TxqPhysicalCodec::default()));
        config.override_create_grpc_client_endpoint = own.secret.as_ref().map(Secret::endpoint_override);
        config.override_arrow_flight_service =
            Some(super::executor::flight_server(own.secret.clone(), max_message));
        let listener = tokio::net::TcpListener::bind(health)
            .await
            .map_err(|e| usage(format!("cannot listen on {health}: {e}")))?;
        let (stop_health, health_stopped) = tokio::sync::oneshot::channel::<()>();
        let health =
            tokio::spawn(super::executor::serve_health(listener, config.health.clone(), own.secret, async {
                let _ = health_stopped.await;
            }));
        let process = start_executor_process(Arc::new(config));
        tokio::pin!(process);
        let result = tokio::select! {
            result = &mut process => result.map_err(failed),
            signal = stopped() => {
                // Ballista's executor hears the same signal, once it runs: it tells the scheduler
                // it stops and lets its tasks end, for as long as the stop timeout allows.
                log::info!("txq executor stopped by {signal}");
                match tokio::time::timeout(own.stop_timeout, &mut process).await {
                    Ok(result) => result.map_err(failed),
                    Err(_) => {
                        log::warn!("the executor did not stop within {:?}: ended", own.stop_timeout);
                        Ok(())
                    }
                }
            }
        };
        let _ = stop_health.send(());
        let _ = tokio::time::timeout(Duration::from_secs(1), health).await;
        result
    })
}

/// The session settings of a scheduler's or an executor's sessions: [`super::session_config`],
/// with every channel a Ballista client opens from them carrying `secret`.
fn session_config_producer(secret: Option<Secret>) -> ballista_core::ConfigProducer {
    Arc::new(move || super::with_secret(super::session_config(), secret.as_ref()))
}

/// txq's defaults of a process's address and policy where the flags leave them out (loopback,
/// pull-staged; the policy's flag is of id `policy_id`), then [`refuse_open_doors`].
fn txq_defaults(
    matches: &ArgMatches,
    (bind_host, policy): (&mut String, &mut TaskSchedulingPolicy),
    policy_id: &str,
    secret: Option<&Secret>,
) -> crate::error::Result<()> {
    if defaulted(matches, "bind_host") {
        *bind_host = DEFAULT_BIND_HOST.to_string();
    }
    if defaulted(matches, policy_id) {
        *policy = TaskSchedulingPolicy::PullStaged;
    }
    refuse_open_doors(bind_host, *policy, secret)
}

/// An address other machines reach, with no secret, is refused; so is `push-staged` with a
/// secret (Ballista's executor then serves a gRPC service that txq cannot guard).
fn refuse_open_doors(
    bind_host: &str,
    policy: TaskSchedulingPolicy,
    secret: Option<&Secret>,
) -> crate::error::Result<()> {
    let loopback = bind_host == "localhost"
        || bind_host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback());
    if !loopback && secret.is_none() {
        return Err(usage(format!(
            "--bind-host {bind_host} is reached from other machines: give the cluster a shared secret \
             first (TXQ_CLUSTER_SECRET or --secret-file; docs/scale-out.md#security)"
        )));
    }
    if secret.is_some() && matches!(policy, TaskSchedulingPolicy::PushStaged) {
        return Err(usage(
            "-s push-staged starts Ballista's executor gRPC service, which txq cannot guard with the \
             cluster's secret: use -s pull-staged (the default)"
                .to_string(),
        ));
    }
    Ok(())
}

/// Runs `work` on a runtime of its own, then leaves whatever it left running (a task stuck on a
/// scheduler that never answers) to the end of the process.
fn run(work: impl std::future::Future<Output = crate::error::Result<()>>) -> crate::error::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build()
        .map_err(|e| crate::error::Error::Usage(format!("cannot start a runtime: {e}")))?;
    let result = runtime.block_on(work);
    runtime.shutdown_background();
    result
}

/// Resolves at SIGTERM or Ctrl-C (SIGINT), naming which.
async fn stopped() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut interrupt)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = interrupt.recv() => "SIGINT",
            },
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

/// Ballista's flags of `command` with txq's beside them: `--help` and `--version` print and
/// exit 0 as clap does, bad flags are bad usage.
fn parse<T: FromArgMatches + CommandFactory>(
    command: &'static str,
    args: Vec<OsString>,
) -> crate::error::Result<(T, ArgMatches)> {
    let secret_file = Arg::new("secret-file").long("secret-file").value_name("PATH").help(
        "File holding the cluster's shared secret (else $TXQ_CLUSTER_SECRET, or the file of \
         $TXQ_CLUSTER_SECRET_FILE): every call must carry it. Needed for a --bind-host that \
         other machines reach",
    );
    let stop = Arg::new("stop-timeout-seconds")
        .long("stop-timeout-seconds")
        .value_name("SECONDS")
        .value_parser(clap::value_parser!(u64))
        .help(format!(
            "After SIGTERM or Ctrl-C, how long an executor may take to tell its scheduler and end \
             its tasks before it ends anyway [default: {DEFAULT_STOP_TIMEOUT_SECONDS}]"
        ));
    let answer = Arg::new("scheduler-answer-timeout-seconds")
        .long("scheduler-answer-timeout-seconds")
        .value_name("SECONDS")
        .value_parser(clap::value_parser!(u64))
        .help(format!(
            "How long an executor waits for its scheduler's first answer before it ends with exit \
             code 2 [default: {DEFAULT_ANSWER_TIMEOUT_SECONDS}]"
        ));
    let mut cli = T::command().name(command).bin_name(command).arg(secret_file);
    if command.ends_with("executor") {
        cli = cli.arg(stop).arg(answer);
    }
    let all = std::iter::once(OsString::from(command)).chain(args);
    let bad = |e: clap::Error| match e.kind() {
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => e.exit(),
        _ => usage(e.to_string().trim_start_matches("error: ").trim_end().to_string()),
    };
    let matches = cli.try_get_matches_from(all).map_err(bad)?;
    let options = T::from_arg_matches(&matches).map_err(bad)?;
    Ok((options, matches))
}

/// txq's flags, from `matches`; the secret from the environment when no `--secret-file` is given.
fn own_flags(matches: &ArgMatches, executor: bool) -> crate::error::Result<Own> {
    let secret = match matches.get_one::<String>("secret-file") {
        Some(path) => Some(Secret::of_file(std::path::Path::new(path))?),
        None => Secret::of_environment()?,
    };
    let seconds = |name: &str, default: u64| match executor {
        true => Duration::from_secs(matches.get_one::<u64>(name).copied().unwrap_or(default)),
        false => Duration::from_secs(default),
    };
    Ok(Own {
        secret,
        stop_timeout: seconds("stop-timeout-seconds", DEFAULT_STOP_TIMEOUT_SECONDS),
        answer_timeout: seconds("scheduler-answer-timeout-seconds", DEFAULT_ANSWER_TIMEOUT_SECONDS),
    })
}

/// Whether the flag of `id` was left out (its value is clap's default).
fn defaulted(matches: &ArgMatches, id: &str) -> bool {
    matches!(matches.value_source(id), None | Some(clap::parser::ValueSource::DefaultValue))
}

/// The process's log on stderr: `RUST_LOG` when set, else `level`.
fn log(level: &str) {
    let filter =
        std::env::var(tracing_subscriber::EnvFilter::DEFAULT_ENV).unwrap_or_else(|_| level.to_string());
    let _ = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .try_init();
}

fn usage(why: String) -> crate::error::Error {
    crate::error::Error::Usage(why)
}

fn failed(e: impl std::fmt::Display) -> crate::error::Error {
    crate::error::Error::Sql(datafusion::error::DataFusionError::Execution(e.to_string()))
}
