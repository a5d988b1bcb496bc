//! txq on an Apache DataFusion Ballista cluster: one environment for the client, the scheduler
//! and the executors (txq's codecs, the process's object stores, the JSON functions), the
//! client's session over a cluster (`--cluster df://HOST:PORT`), and the problems the
//! executors' scans met, fetched back from the scheduler for the statement's warnings. Every
//! channel carries the cluster's secret when there is one ([`secret`]), and a cluster runs only
//! txq's reading statements ([`guard`]).

mod codec;
mod corpora;
mod executor;
mod guard;
pub mod process;
mod scheduler;
pub mod secret;

pub use codec::{TxqLogicalCodec, TxqPhysicalCodec};

use crate::table::corpus::Problem;
use ballista_core::execution_plans::DistributedQueryExec;
use ballista_core::extension::{SessionConfigExt, SessionStateExt};
use ballista_core::serde::protobuf::{GetJobMetricsParams, scheduler_grpc_client::SchedulerGrpcClient};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::SessionState;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::protobuf::LogicalPlanNode;
use secret::Secret;
use std::sync::Arc;
use std::time::Duration;

/// The variable that sets how long the client waits for the scheduler's first answer.
pub const TIMEOUT_VARIABLE: &str = "TXQ_CLUSTER_TIMEOUT";
/// How long the client waits for the scheduler's first answer when `TXQ_CLUSTER_TIMEOUT` is not set.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 10;

/// The session settings of every process of a cluster: Ballista's, with txq's codecs.
pub fn session_config() -> SessionConfig {
    with_codecs(SessionConfig::new_with_ballista().with_information_schema(true))
        .with_extension(Arc::new(crate::scan::SplitScans))
}

/// `config` as a cluster's: Ballista's settings, txq's codecs, and the static planner (the
/// adaptive one, experimental in Ballista 55, plans the stages of txq's views again and again
/// and never ends).
fn with_codecs(config: SessionConfig) -> SessionConfig {
    config
        .upgrade_for_ballista()
        .set_bool(ballista_core::config::BALLISTA_ADAPTIVE_PLANNER_ENABLED, false)
        .with_ballista_logical_extension_codec(Arc::new(TxqLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(TxqPhysicalCodec::default()))
}

/// The runtime of a scheduler's or an executor's sessions: the process's object stores (each
/// bucket's made from this process's environment), spill files in `work_dir`.
pub fn runtime(work_dir: Option<&str>) -> Result<Arc<RuntimeEnv>> {
    let mut builder = RuntimeEnvBuilder::new().with_object_store_registry(crate::source::remote::registry());
    if let Some(dir) = work_dir {
        builder = builder.with_temp_file_path(dir);
    }
    builder.build_arc()
}

/// A scheduler's or an executor's session: DataFusion's functions with Ballista's, the JSON
/// functions, and the runtime of [`runtime`].
pub fn session_state(config: SessionConfig) -> Result<SessionState> {
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime(None)?)
        .with_default_features()
        .with_scalar_functions(ballista_core::extension::ballista_scalar_functions())
        .build();
    datafusion_functions_json::register_all(&mut state)?;
    datafusion::execution::FunctionRegistry::register_udwf(
        &mut state,
        Arc::new(crate::sql::blocks::window_function()),
    )?;
    datafusion::execution::FunctionRegistry::register_udwf(
        &mut state,
        Arc::new(crate::sql::session_root::window_function()),
    )?;
    datafusion::execution::FunctionRegistry::register_udf(
        &mut state,
        Arc::new(crate::sql::repository_root::scalar_function()),
    )?;
    Ok(state)
}

/// `config` with every channel a Ballista client opens from it carrying `secret`.
fn with_secret(config: SessionConfig, secret: Option<&Secret>) -> SessionConfig {
    match secret {
        Some(secret) => config.with_ballista_override_create_grpc_client_endpoint(secret.endpoint_override()),
        None => config,
    }
}

/// A scheduler's session: [`session_state`], and only txq's reading statements planned in it
/// ([`guard::ReadOnly`]), whatever a client sent.
fn scheduler_session_state(config: SessionConfig) -> Result<SessionState> {
    let mut state = session_state(config)?;
    state.add_analyzer_rule(Arc::new(guard::ReadOnly));
    Ok(state)
}

/// Whether a scheduler answers at `url` (`http://HOST:PORT`) within `timeout`, the call
/// carrying `secret`: why not, when it does not (or refuses the secret).
async fn answers(url: &str, secret: Option<&Secret>, timeout: Duration) -> std::result::Result<(), String> {
    let seconds = timeout.as_secs_f64();
    let probe = async {
        let endpoint = endpoint(url, secret, timeout).map_err(|e| e.to_string())?.timeout(timeout);
        let channel =
            endpoint.connect().await.map_err(|e| format!("no scheduler answers ({})", source_of(&e)))?;
        let probe = GetJobMetricsParams { job_id: "txq-probe".into() };
        match SchedulerGrpcClient::new(channel).get_job_metrics(probe).await {
            Err(status) if status.code() == tonic::Code::Unauthenticated => Err(match secret {
                Some(_) => format!(
                    "the scheduler refused this process's secret: give it the cluster's ({})",
                    secret::SECRET_VARIABLE
                ),
                None => format!(
                    "the scheduler needs the cluster's secret: set {} or {}",
                    secret::SECRET_VARIABLE,
                    secret::SECRET_FILE_VARIABLE
                ),
            }),
            // A job of that name is not there: the scheduler answered.
            Ok(_) => Ok(()),
            Err(status) if status.code() == tonic::Code::NotFound => Ok(()),
            Err(status) if status.code() == tonic::Code::Cancelled => {
                Err(format!("no scheduler answers within {seconds} s"))
            }
            Err(status) => Err(format!("no scheduler answers ({})", status.message())),
        }
    };
    match tokio::time::timeout(timeout, probe).await {
        Ok(answered) => answered,
        Err(_) => Err(format!("no scheduler answers within {seconds} s")),
    }
}

/// A channel's endpoint at `url`, its calls carrying `secret`, connecting within `timeout`.
fn endpoint(
    url: &str,
    secret: Option<&Secret>,
    timeout: Duration,
) -> std::result::Result<tonic::transport::Endpoint, Box<dyn std::error::Error + Send + Sync>> {
    let endpoint = tonic::transport::Endpoint::from_shared(url.to_string())?.connect_timeout(timeout);
    match secret {
        Some(secret) => (secret.endpoint_override())(endpoint),
        None => Ok(endpoint),
    }
}

/// How long the client waits for the scheduler's first answer: `TXQ_CLUSTER_TIMEOUT` seconds.
fn client_timeout() -> crate::error::Result<Duration> {
    match std::env::var(TIMEOUT_VARIABLE) {
        Err(_) => Ok(Duration::from_secs(DEFAULT_TIMEOUT_SECONDS)),
        Ok(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                crate::error::Error::Usage(format!("{TIMEOUT_VARIABLE}={text}: not a number of seconds"))
            }),
    }
}

/// `ctx` (a session over a corpus, its tables and functions registered) made to run its
/// statements on the cluster whose scheduler is at `url` (`df://HOST:PORT`): planned here,
/// sent as a logical plan, split into stages by the scheduler, run by its executors.
pub async fn connect(ctx: SessionContext, url: &str) -> crate::error::Result<SessionContext> {
    let scheduler = scheduler_address(url)?;
    let secret = Secret::of_environment()?;
    // Said now, not at the first statement: a scheduler not there, one that takes the
    // connection and never answers, one that refuses the secret.
    let timeout = client_timeout()?;
    answers(&scheduler, secret.as_ref(), timeout)
        .await
        .map_err(|why| crate::error::Error::Cluster { url: url.to_string(), why })?;
    // The views not yet planned are planned in the session made here.
    let views = crate::sql::planned_on_use::ViewSession::of(&ctx);
    let state = ctx.state();
    // Ballista's upgrade keeps only its own functions: the session's are registered again.
    let functions: Vec<_> = state.scalar_functions().values().cloned().collect();
    let window_functions: Vec<_> = state.window_functions().values().cloned().collect();
    // The session's catalog is kept: a default one made afresh would hold none of its tables.
    let config = with_codecs(state.config().clone())
        .with_create_default_catalog_and_schema(false)
        .with_extension(Arc::new(Scheduler { url: scheduler.clone(), secret: secret.clone() }));
    let config = with_secret(config, secret.as_ref());
    // Every later call of Ballista's client: a connection within the same wait, an answer
    // within the larger of it and Ballista's own 20 s.
    let seconds = timeout.as_secs_f64().ceil().max(1.0) as usize;
    let config = config
        .set_usize(ballista_core::config::BALLISTA_CLIENT_GRPC_CONNECT_TIMEOUT_SECONDS, seconds)
        .set_usize(ballista_core::config::BALLISTA_CLIENT_GRPC_TIMEOUT_SECONDS, seconds.max(20));
    let state = SessionStateBuilder::new_from_existing(state).with_config(config).build();
    let mut state = state.upgrade_for_ballista(scheduler).map_err(crate::error::Error::Sql)?;
    // Refused here, before the scheduler refuses them: what writes, and tables not txq's.
    state.add_analyzer_rule(Arc::new(guard::ReadOnly));
    *state.table_factories_mut() = guard::refusing_factories(state.table_factories());
    let ctx = SessionContext::new_with_state(state);
    views.bind(&ctx);
    for function in functions {
        ctx.register_udf(function.as_ref().clone());
    }
    // Those Ballista's upgrade lost (`block_start`, `session_root`); the built-in ones it kept.
    for function in window_functions {
        if ctx.state().window_functions().get(function.name()).is_none() {
            ctx.register_udwf(function.as_ref().clone());
        }
    }
    Ok(ctx)
}

/// `http://HOST:PORT` of `df://HOST:PORT` (the port 50050 when none is given).
fn scheduler_address(url: &str) -> crate::error::Result<String> {
    let bad = |why: &str| crate::error::Error::Usage(format!("--cluster {url}: {why}; give df://HOST:PORT"));
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    if parsed.scheme() != "df" {
        return Err(bad("not a df:// address"));
    }
    let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("no host"))?;
    Ok(format!("http://{host}:{}", parsed.port().unwrap_or(50050)))
}

/// The innermost cause of an error, in one line.
fn source_of(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The problems the scans of a statement run on a cluster met, each once: read from the
/// metrics the executors reported to the scheduler for the statement's job. Nothing for a
/// statement run here.
pub(crate) async fn problems_of_job(
    plan: &Arc<dyn ExecutionPlan>,
    ctx: &SessionContext,
) -> Result<Vec<Problem>> {
    let Some(job) = plan.downcast_ref::<DistributedQueryExec<LogicalPlanNode>>() else {
        return Ok(Vec::new());
    };
    let scheduler = ctx.state().config().get_extension::<Scheduler>();
    let (Some(job_id), Some(scheduler)) = (job.job_id(), scheduler) else { return Ok(Vec::new()) };
    let failed = |e: &dyn std::fmt::Display| {
        DataFusionError::Execution(format!("the warnings of the statement's job could not be fetched: {e}"))
    };
    let timeout = client_timeout().map_err(|e| failed(&e))?;
    let endpoint = endpoint(&scheduler.url, scheduler.secret.as_ref(), timeout).map_err(|e| failed(&e))?;
    let mut scheduler = SchedulerGrpcClient::new(endpoint.connect().await.map_err(|e| failed(&e))?);
    let metrics = scheduler
        .get_job_metrics(GetJobMetricsParams { job_id: job_id.to_string() })
        .await
        .map_err(|e| failed(&e))?
        .into_inner();
    let mut problems: Vec<Problem> = metrics
        .stages
        .iter()
        .flat_map(|stage| &stage.operators)
        .flat_map(|operator| &operator.metrics)
        .filter_map(|metric| match &metric.metric {
            Some(ballista_core::serde::protobuf::operator_metric::Metric::Count(count)) => {
                crate::scan::problem_metric::problem_of_metric(&count.name)
            }
            _ => None,
        })
        .collect();
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// The scheduler a session over a cluster sends its statements to: its address, and the secret
/// its calls carry.
#[derive(Debug)]
struct Scheduler {
    url: String,
    secret: Option<Secret>,
}
