//! An executor's servers behind txq's door: its Arrow Flight service (the shuffle files and the
//! results it serves) and its `/healthz` and `/readyz`, each refusing a request without the
//! cluster's secret (when there is one). Ballista's own would answer anyone.

use super::secret::Secret;
use arrow_flight::flight_service_server::FlightServiceServer;
use ballista_core::error::BallistaError;
use ballista_executor::ArrowFlightServerProvider;
use ballista_executor::flight_service::BallistaFlightService;
use ballista_executor::health::ExecutorHealth;
use std::sync::Arc;

/// The Flight server an executor starts, as Ballista's built-in one, with every call checked
/// for `secret`; `max` is its message size limit, each way.
pub fn flight_server(secret: Option<Secret>, max: usize) -> Arc<ArrowFlightServerProvider> {
    Arc::new(move |work_dir, address, mut shutdown, grpc| {
        let secret = secret.clone();
        tokio::spawn(async move {
            let check = move |request: tonic::Request<()>| match &secret {
                Some(secret) if !secret.admits(&request.metadata().clone().into_headers()) => {
                    Err(tonic::Status::unauthenticated(super::secret::REFUSED))
                }
                _ => Ok(request),
            };
            let flight = FlightServiceServer::new(BallistaFlightService::new(work_dir))
                .max_decoding_message_size(max)
                .max_encoding_message_size(max);
            let service = tonic::service::interceptor::InterceptedService::new(flight, check);
            log::info!("txq's arrow flight server listening on {address}");
            ballista_core::utils::create_grpc_server(&grpc)
                .add_service(service)
                .serve_with_shutdown(address, shutdown.recv())
                .await
                .map_err(BallistaError::TonicError)
        })
    })
}

/// Serves `/healthz` (200 while the process runs) and `/readyz` (200 once the executor's last
/// call to its scheduler was answered) on `listener` until `stop` resolves, each refusing a
/// request without `secret` (when there is one).
pub async fn serve_health(
    listener: tokio::net::TcpListener,
    health: ExecutorHealth,
    secret: Option<Secret>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = probes(move || health.is_ready(), "not ready: the scheduler has not answered\n")
        .fallback(|| async { axum::http::StatusCode::NOT_FOUND })
        .layer(axum::middleware::from_fn_with_state(secret, super::secret::require));
    axum::serve(listener, router.into_make_service()).with_graceful_shutdown(stop).await
}

/// `/healthz` (200 while the process runs) and `/readyz` (200 when `ready` says so, else 503
/// with `not_ready`): the probes of a scheduler and of an executor.
pub fn probes(
    ready: impl Fn() -> bool + Clone + Send + Sync + 'static,
    not_ready: &'static str,
) -> axum::Router {
    use axum::http::StatusCode;
    let readyz = move || {
        let answer = match ready() {
            true => (StatusCode::OK, "ready\n"),
            false => (StatusCode::SERVICE_UNAVAILABLE, not_ready),
        };
        async move { answer }
    };
    axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { (StatusCode::OK, "ok\n") }))
        .route("/readyz", axum::routing::get(readyz))
}
