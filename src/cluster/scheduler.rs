//! A scheduler's server: Ballista's scheduler service behind txq's door. Every request (gRPC,
//! the REST API, `/healthz`, `/readyz`) must carry the cluster's secret when there is one; a
//! plan sent as anything but a logical plan is refused (the logical one is checked by
//! [`super::guard::ReadOnly`] where the scheduler plans it); and a job any of whose tasks failed
//! or was reset (its executor lost), or whose stage ran again, ends failed rather than
//! successful, so that its client never reads an answer that a part run twice made wrong; such a
//! job still running is failed (and cancelled) at its next status, not left to finish.

use super::secret::Secret;
use ballista_core::serde::protobuf::execute_query_params::Query;
use ballista_core::serde::protobuf::scheduler_grpc_server::{SchedulerGrpc, SchedulerGrpcServer};
use ballista_core::serde::protobuf::{self as wire, job_status, task_status};
use ballista_scheduler::scheduler_server::SchedulerServer;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use futures::StreamExt;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::{Request, Response, Status};

type Ballista = SchedulerServer<LogicalPlanNode, PhysicalPlanNode>;

/// The jobs remembered, the newest last: a job older than these is long over.
const JOBS_KEPT: usize = 4096;

/// How long a job that says it succeeded is said to run while Ballista's record of its tasks is
/// not there yet; then it is failed.
const RECORD_WAIT: Duration = Duration::from_secs(10);

/// What failed the job of an answer that may be wrong.
pub const RAN_AGAIN: &str = "an executor was lost or a task failed while the statement ran, and \
    Ballista ran part of it again: its answer could count some rows twice, so none is given; run \
    the statement again";

/// What the executors reported of each recent job: why its answer is not to be trusted, and since
/// when it has said it succeeded with no record of its tasks to check.
#[derive(Default)]
struct Jobs {
    order: VecDeque<String>,
    by_id: HashMap<String, Job>,
}

#[derive(Default)]
struct Job {
    ran_again: Option<String>,
    /// A stage of it ran a second attempt (its executor lost): not a task's own error, which
    /// Ballista may retry and then report.
    stage_ran_again: bool,
    unrecorded_since: Option<Instant>,
}

impl Jobs {
    fn job(&mut self, id: &str) -> &mut Job {
        if !self.by_id.contains_key(id) {
            self.order.push_back(id.to_string());
            if self.order.len() > JOBS_KEPT
                && let Some(oldest) = self.order.pop_front()
            {
                self.by_id.remove(&oldest);
            }
        }
        self.by_id.entry(id.to_string()).or_default()
    }

    /// A task given to an executor: one of a stage's second attempt is a part run again.
    fn launched(&mut self, task: &wire::TaskDefinition) {
        if task.stage_attempt_num > 0 {
            let job = self.job(&task.job_id);
            job.ran_again.get_or_insert(format!("stage {} ran again", task.stage_id));
            job.stage_ran_again = true;
        }
    }

    /// A task's status, as its executor reported it: a failure, or a stage's second attempt.
    fn reported(&mut self, status: &wire::TaskStatus) {
        let why = match &status.status {
            Some(task_status::Status::Failed(failed)) => {
                format!("a task of stage {} failed: {}", status.stage_id, failed.error)
            }
            _ if status.stage_attempt_num > 0 => format!("stage {} ran again", status.stage_id),
            _ => return,
        };
        let job = self.job(&status.job_id);
        job.ran_again.get_or_insert(why);
        job.stage_ran_again |= status.stage_attempt_num > 0;
    }
}

/// Why the tasks of a finished job, as Ballista recorded them, do not make a trusted answer: a
/// stage in a later attempt, a task that failed or was reset (its executor lost), an input
/// partition read by two tasks that succeeded.
fn distrust(graph: &dyn ballista_scheduler::state::execution_graph::ExecutionGraph) -> Option<String> {
    use ballista_scheduler::state::execution_stage::ExecutionStage;
    for (id, stage) in graph.stages() {
        let ExecutionStage::Successful(stage) = stage else {
            return Some(format!("stage {id} did not succeed"));
        };
        if stage.stage_attempt_num > 0 {
            return Some(format!("stage {id} ran again (attempt {})", stage.stage_attempt_num));
        }
        let mut read = HashSet::new();
        for task in &stage.task_infos {
            if !matches!(task.task_status, task_status::Status::Successful(_)) {
                return Some(format!("task {} of stage {id} failed or was reset", task.task_id));
            }
            if let Some(twice) = task.global_input_partition_ids.iter().find(|p| !read.insert(**p)) {
                return Some(format!("partition {twice} of stage {id} was read twice"));
            }
        }
    }
    None
}

/// Ballista's scheduler service, with the plans it takes checked and the jobs it ran watched.
#[derive(Clone)]
struct Guarded {
    inner: Ballista,
    jobs: Arc<Mutex<Jobs>>,
    /// Ballista's record of finished jobs, their stages and tasks.
    finished: Arc<dyn ballista_scheduler::cluster::JobState>,
}

impl Guarded {
    fn jobs(&self) -> std::sync::MutexGuard<'_, Jobs> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A running job one of whose stages has run again already (an executor lost), failed now
    /// and cancelled, rather than left to finish: its answer would be refused then anyway, and a
    /// job whose lost executor Ballista keeps rolling its stages back for may never finish.
    /// Any other job is left as it is (a task's own failure is Ballista's to retry and report).
    async fn fail_if_ran_again(&self, status: &mut wire::JobStatus, queued_at: u64, started_at: u64) {
        let why = self
            .jobs()
            .by_id
            .get(&status.job_id)
            .filter(|job| job.stage_ran_again)
            .and_then(|job| job.ran_again.clone());
        let Some(why) = why else { return };
        log::warn!("job {} ended failed while it ran: {why}", status.job_id);
        let cancel = Request::new(wire::CancelJobParams { job_id: status.job_id.clone() });
        if let Err(e) = SchedulerGrpc::cancel_job(&self.inner, cancel).await {
            log::warn!("job {} not cancelled: {e}", status.job_id);
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        status.status = Some(job_status::Status::Failed(wire::FailedJob {
            error: RAN_AGAIN.to_string(),
            queued_at,
            started_at,
            ended_at: now.as_millis() as u64,
        }));
    }

    /// `status`, failed when its job succeeded but ran a part again (so that its answer may
    /// count rows twice), and still running while Ballista's record of its tasks is not there.
    async fn checked(&self, status: Option<wire::JobStatus>) -> Option<wire::JobStatus> {
        let mut status = status?;
        if let Some(job_status::Status::Running(running)) = &status.status {
            let (queued_at, started_at) = (running.queued_at, running.started_at);
            self.fail_if_ran_again(&mut status, queued_at, started_at).await;
            return Some(status);
        }
        let Some(job_status::Status::Successful(done)) = &status.status else { return Some(status) };
        let job_id: ballista_core::JobId = status.job_id.clone().into();
        let record = self.finished.get_execution_graph(&job_id).await.ok().flatten();
        let mut jobs = self.jobs();
        let job = jobs.job(&status.job_id);
        let why = match &record {
            Some(graph) => job.ran_again.clone().or_else(|| distrust(graph.as_ref())),
            None => {
                let since = *job.unrecorded_since.get_or_insert_with(Instant::now);
                if since.elapsed() < RECORD_WAIT {
                    status.status = Some(job_status::Status::Running(wire::RunningJob {
                        queued_at: done.queued_at,
                        started_at: done.started_at,
                        scheduler: String::new(),
                    }));
                    return Some(status);
                }
                Some(job.ran_again.clone().unwrap_or_else(|| "no record of its tasks to check".to_string()))
            }
        };
        if let Some(why) = why {
            log::warn!("job {} ended failed, not successful: {why}", status.job_id);
            status.status = Some(job_status::Status::Failed(wire::FailedJob {
                error: RAN_AGAIN.to_string(),
                queued_at: done.queued_at,
                started_at: done.started_at,
                ended_at: done.ended_at,
            }));
        }
        Some(status)
    }
}

/// A plan other than a logical one, refused: txq's client sends logical plans only, and a physical
/// plan would run whatever it names (a CSV file's scan, a write) with no check.
fn refuse_other_plans(params: &wire::ExecuteQueryParams) -> Result<(), Status> {
    match &params.query {
        Some(Query::LogicalPlan(_)) => Ok(()),
        _ => Err(Status::permission_denied(
            "a txq cluster takes logical plans of txq's own reading statements only (docs/scale-out.md#security)",
        )),
    }
}

#[tonic::async_trait]
impl SchedulerGrpc for Guarded {
    async fn poll_work(
        &self,
        request: Request<wire::PollWorkParams>,
    ) -> Result<Response<wire::PollWorkResult>, Status> {
        for status in &request.get_ref().task_status {
            self.jobs().reported(status);
        }
        let response = SchedulerGrpc::poll_work(&self.inner, request).await?;
        for task in &response.get_ref().tasks {
            self.jobs().launched(task);
        }
        Ok(response)
    }

    async fn register_executor(
        &self,
        request: Request<wire::RegisterExecutorParams>,
    ) -> Result<Response<wire::RegisterExecutorResult>, Status> {
        SchedulerGrpc::register_executor(&self.inner, request).await
    }

    async fn heart_beat_from_executor(
        &self,
        request: Request<wire::HeartBeatParams>,
    ) -> Result<Response<wire::HeartBeatResult>, Status> {
        SchedulerGrpc::heart_beat_from_executor(&self.inner, request).await
    }

    async fn update_task_status(
        &self,
        request: Request<wire::UpdateTaskStatusParams>,
    ) -> Result<Response<wire::UpdateTaskStatusResult>, Status> {
        for status in &request.get_ref().task_status {
            self.jobs().reported(status);
        }
        SchedulerGrpc::update_task_status(&self.inner, request).await
    }

    async fn create_update_session(
        &self,
        request: Request<wire::CreateUpdateSessionParams>,
    ) -> Result<Response<wire::CreateUpdateSessionResult>, Status> {
        SchedulerGrpc::create_update_session(&self.inner, request).await
    }

    async fn remove_session(
        &self,
        request: Request<wire::RemoveSessionParams>,
    ) -> Result<Response<wire::RemoveSessionResult>, Status> {
        SchedulerGrpc::remove_session(&self.inner, request).await
    }

    type ExecuteQueryPushStream =
        futures::stream::BoxStream<'static, Result<wire::GetJobStatusResult, Status>>;

    async fn execute_query_push(
        &self,
        request: Request<wire::ExecuteQueryParams>,
    ) -> Result<Response<Self::ExecuteQueryPushStream>, Status> {
        refuse_other_plans(request.get_ref())?;
        let guarded = self.clone();
        let response = SchedulerGrpc::execute_query_push(&self.inner, request).await?;
        Ok(response.map(|statuses| {
            statuses
                .then(move |result| {
                    let guarded = guarded.clone();
                    async move {
                        let mut status = result?;
                        status.status = guarded.checked(status.status.take()).await;
                        Ok(status)
                    }
                })
                .boxed()
        }))
    }

    async fn execute_query(
        &self,
        request: Request<wire::ExecuteQueryParams>,
    ) -> Result<Response<wire::ExecuteQueryResult>, Status> {
        refuse_other_plans(request.get_ref())?;
        SchedulerGrpc::execute_query(&self.inner, request).await
    }

    async fn get_job_status(
        &self,
        request: Request<wire::GetJobStatusParams>,
    ) -> Result<Response<wire::GetJobStatusResult>, Status> {
        let mut response = SchedulerGrpc::get_job_status(&self.inner, request).await?;
        let status = response.get_mut().status.take();
        response.get_mut().status = self.checked(status).await;
        Ok(response)
    }

    async fn get_job_metrics(
        &self,
        request: Request<wire::GetJobMetricsParams>,
    ) -> Result<Response<wire::GetJobMetricsResult>, Status> {
        SchedulerGrpc::get_job_metrics(&self.inner, request).await
    }

    async fn executor_stopped(
        &self,
        request: Request<wire::ExecutorStoppedParams>,
    ) -> Result<Response<wire::ExecutorStoppedResult>, Status> {
        SchedulerGrpc::executor_stopped(&self.inner, request).await
    }

    async fn cancel_job(
        &self,
        request: Request<wire::CancelJobParams>,
    ) -> Result<Response<wire::CancelJobResult>, Status> {
        SchedulerGrpc::cancel_job(&self.inner, request).await
    }

    async fn clean_job_data(
        &self,
        request: Request<wire::CleanJobDataParams>,
    ) -> Result<Response<wire::CleanJobDataResult>, Status> {
        SchedulerGrpc::clean_job_data(&self.inner, request).await
    }
}

/// Serves `scheduler` on `listener` until `stop` resolves: its gRPC service (guarded), the
/// embedded Flight proxy when asked for, the REST API unless disabled, `/healthz` and `/readyz`,
/// each refusing a request without `secret` (when there is one).
pub async fn serve(
    listener: tokio::net::TcpListener,
    scheduler: Ballista,
    finished: Arc<dyn ballista_scheduler::cluster::JobState>,
    secret: Option<Secret>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use arrow_flight::flight_service_server::FlightServiceServer;
    let config = scheduler.state.config.clone();
    let (decoding, encoding) = (
        config.grpc_server_max_decoding_message_size as usize,
        config.grpc_server_max_encoding_message_size as usize,
    );
    let guarded = Guarded { inner: scheduler.clone(), jobs: Arc::default(), finished };
    let mut routes = tonic::service::RoutesBuilder::default();
    routes.add_service(
        SchedulerGrpcServer::new(guarded)
            .max_decoding_message_size(decoding)
            .max_encoding_message_size(encoding),
    );
    if config.enable_embedded_flight_proxy {
        let customize = config
            .override_create_grpc_client_endpoint
            .clone()
            .map(|f| Arc::new(ballista_core::extension::BallistaConfigGrpcEndpoint::new(f)));
        let proxy = ballista_core::flight_proxy_service::BallistaFlightProxyService::new(
            decoding,
            encoding,
            config.use_tls,
            customize,
        );
        routes.add_service(
            FlightServiceServer::new(proxy)
                .max_decoding_message_size(decoding)
                .max_encoding_message_size(encoding),
        );
    }
    let scheduler = Arc::new(scheduler);
    // `/readyz` says 200 once `--min-ready-executors` executors have registered, as Ballista's.
    let ready = scheduler.clone();
    let probes =
        super::executor::probes(move || ready.is_ready(), "not ready: too few executors registered\n");
    let mut router = routes.routes().into_axum_router().merge(probes);
    if !config.disable_rest_api {
        router = router.merge(ballista_scheduler::api::get_routes(scheduler));
    }
    let router = router
        .fallback(|| async { axum::http::StatusCode::NOT_FOUND })
        .layer(axum::middleware::from_fn_with_state(secret, super::secret::require));
    // The connecting address names an executor that gives no --external-host, as in Ballista's.
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, service).with_graceful_shutdown(stop).await
}
