//! `txq scheduler` and `txq executor`: Ballista's scheduler and executor, with Ballista's own
//! flags (`--bind-host`, `--bind-port`, `-s pull-staged|push-staged`, ...), started with txq's
//! codecs, the process's object stores and the JSON functions, so that they plan and run the
//! statements of `txq --cluster`. Their log goes to stderr (`RUST_LOG` sets what it holds).

use ballista_core::registry::BallistaFunctionRegistry;
use clap::Parser;
use std::ffi::OsString;
use std::sync::Arc;

/// Runs a scheduler with `args` (Ballista's scheduler flags) until it is stopped.
pub fn scheduler(args: Vec<OsString>) -> crate::error::Result<()> {
    let options = parse::<ballista_scheduler::config::Config>("txq scheduler", args)?;
    log(&options.log_level_setting);
    runtime()?.block_on(async move {
        let address = format!("{}:{}", options.bind_host, options.bind_port);
        let address = address.parse().map_err(|e| usage(format!("--bind-host {address}: {e}")))?;
        let config: ballista_scheduler::config::SchedulerConfig = options.try_into().map_err(failed)?;
        let mut config = config
            .with_override_config_producer(Arc::new(super::session_config))
            .with_override_session_builder(Arc::new(super::session_state));
        config.override_logical_codec = Some(Arc::new(super::TxqLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(super::TxqPhysicalCodec::default()));
        let cluster =
            ballista_scheduler::cluster::BallistaCluster::new_from_config(&config).await.map_err(failed)?;
        ballista_scheduler::scheduler_process::start_server(cluster, address, Arc::new(config))
            .await
            .map_err(failed)
    })
}

/// Runs an executor with `args` (Ballista's executor flags) until it is stopped (Ctrl-C, or
/// SIGTERM).
pub fn executor(args: Vec<OsString>) -> crate::error::Result<()> {
    use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
    let options = parse::<ballista_executor::config::Config>("txq executor", args)?;
    runtime()?.block_on(async move {
        let health = format!("{}:{}", options.bind_host, options.bind_health_port);
        let health: std::net::SocketAddr =
            health.parse().map_err(|e| usage(format!("--bind-health-port {health}: {e}")))?;
        let mut config: ExecutorProcessConfig = options.try_into().map_err(failed)?;
        log(&config.special_mod_log_level);
        let work_dir = config.work_dir.clone();
        config.override_config_producer = Some(Arc::new(super::session_config));
        config.override_runtime_producer =
            Some(Arc::new(move |_: &datafusion::prelude::SessionConfig| super::runtime(work_dir.as_deref())));
        let state = super::session_state(super::session_config()).map_err(crate::error::Error::Sql)?;
        config.override_function_registry = Some(Arc::new(BallistaFunctionRegistry::from(&state)));
        config.override_logical_codec = Some(Arc::new(super::TxqLogicalCodec::default()));
        config.override_physical_codec = Some(Arc::new(super::TxqPhysicalCodec::default()));
        let (stop_health, stopped) = tokio::sync::oneshot::channel();
        let health = ballista_executor::health::spawn_health_server(health, config.health.clone(), stopped);
        let result = start_executor_process(Arc::new(config)).await;
        let _ = stop_health.send(());
        let _ = health.await;
        result.map_err(failed)
    })
}

/// Ballista's flags of `command`: `--help` and `--version` print and exit 0 as clap does, bad
/// flags are bad usage.
fn parse<T: Parser>(command: &str, args: Vec<OsString>) -> crate::error::Result<T> {
    let all = std::iter::once(OsString::from(command)).chain(args);
    T::try_parse_from(all).map_err(|e| match e.kind() {
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => e.exit(),
        _ => usage(e.to_string().trim_start_matches("error: ").trim_end().to_string()),
    })
}

fn runtime() -> crate::error::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build()
        .map_err(|e| crate::error::Error::Usage(format!("cannot start a runtime: {e}")))
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
