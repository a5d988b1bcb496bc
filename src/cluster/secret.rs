//! The shared secret of a cluster: where a process finds it (`TXQ_CLUSTER_SECRET`, or the file of
//! `--secret-file` or `TXQ_CLUSTER_SECRET_FILE`), how every gRPC call a txq process makes carries
//! it (in its `user-agent`, the one header a Ballista channel lets txq set), and the check every
//! endpoint of a scheduler and an executor makes of a request (that header, or
//! `Authorization: Bearer SECRET` for a person's HTTP client).

use ballista_core::extension::EndpointOverrideFn;
use std::path::Path;
use std::sync::Arc;

/// The variable that holds the secret itself.
pub const SECRET_VARIABLE: &str = "TXQ_CLUSTER_SECRET";
/// The variable that names a file holding the secret.
pub const SECRET_FILE_VARIABLE: &str = "TXQ_CLUSTER_SECRET_FILE";
/// The shortest secret taken: a secret is a password nobody types, and a short one is guessed.
pub const SHORTEST_SECRET: usize = 16;
/// What starts the `user-agent` of a call that carries the secret: `txq-cluster/SECRET`.
const AGENT: &str = "txq-cluster/";
/// The most a secret file may hold: a secret is a line.
const SECRET_FILE_LIMIT: u64 = 4096;
/// What a request without the secret is told.
pub const REFUSED: &str = "this txq cluster needs its shared secret (TXQ_CLUSTER_SECRET)";

/// A cluster's shared secret: printable ASCII, no spaces, at least [`SHORTEST_SECRET`] long.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// The secret of this process's environment: `TXQ_CLUSTER_SECRET`, else the file named by
    /// `TXQ_CLUSTER_SECRET_FILE`; `None` when neither is set.
    pub fn of_environment() -> crate::error::Result<Option<Secret>> {
        if let Some(value) = std::env::var_os(SECRET_VARIABLE) {
            let text = value
                .into_string()
                .map_err(|_| crate::error::Error::Usage(format!("{SECRET_VARIABLE}: not text")))?;
            return Secret::of_text(&text, SECRET_VARIABLE).map(Some);
        }
        match std::env::var_os(SECRET_FILE_VARIABLE) {
            Some(path) if !path.is_empty() => Secret::of_file(Path::new(&path)).map(Some),
            _ => Ok(None),
        }
    }

    /// The secret held by the file at `path` (surrounding white space left out).
    pub fn of_file(path: &Path) -> crate::error::Result<Secret> {
        let text = crate::text::settings_file::read(path, SECRET_FILE_LIMIT).map_err(|e| {
            crate::error::Error::Input {
                file: path.display().to_string(),
                why: format!("cannot read the cluster's secret: {e}"),
            }
        })?;
        Secret::of_text(&text, &path.display().to_string())
    }

    /// `text` (from `whence`, for the message) as a secret, surrounding white space left out.
    pub fn of_text(text: &str, whence: &str) -> crate::error::Result<Secret> {
        let secret = text.trim();
        let refused = |why: &str| crate::error::Error::Usage(format!("{whence}: {why}"));
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(refused("a cluster's secret is printable ASCII with no spaces"));
        }
        if secret.len() < SHORTEST_SECRET {
            return Err(refused(&format!(
                "a cluster's secret is at least {SHORTEST_SECRET} characters long (`openssl rand -hex 32` makes one)"
            )));
        }
        Ok(Secret(secret.into()))
    }

    /// What makes every channel a Ballista client opens from it carry the secret.
    pub fn endpoint_override(&self) -> EndpointOverrideFn {
        let agent = format!("{AGENT}{}", self.0);
        Arc::new(move |endpoint| Ok(endpoint.user_agent(agent.clone())?))
    }

    /// Whether a request with these headers carries the secret: `user-agent` starting with
    /// `txq-cluster/SECRET` (then a space or nothing), or `authorization: Bearer SECRET`.
    pub fn admits(&self, headers: &axum::http::HeaderMap) -> bool {
        let header = |name| headers.get(name).map(|value| value.as_bytes());
        let by_agent = header(axum::http::header::USER_AGENT).is_some_and(|agent| {
            let mut words = agent.split(|b| *b == b' ');
            words.next().and_then(|word| word.strip_prefix(AGENT.as_bytes())).is_some_and(|s| self.is(s))
        });
        let by_bearer = header(axum::http::header::AUTHORIZATION)
            .and_then(|value| value.strip_prefix(b"Bearer "))
            .is_some_and(|s| self.is(s));
        by_agent || by_bearer
    }

    /// `given` is the secret; compared in a time that does not tell how much of it matched.
    fn is(&self, given: &[u8]) -> bool {
        let secret = self.0.as_bytes();
        given.len() == secret.len() && given.iter().zip(secret).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
    }
}

/// The answer to a request without the secret: gRPC's UNAUTHENTICATED to a gRPC call, HTTP 401
/// to any other.
pub fn refusal(headers: &axum::http::HeaderMap) -> axum::response::Response {
    let grpc = headers
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/grpc"));
    if grpc {
        return tonic::Status::unauthenticated(REFUSED).into_http();
    }
    let mut response = axum::response::IntoResponse::into_response((
        axum::http::StatusCode::UNAUTHORIZED,
        format!("{REFUSED}: send Authorization: Bearer SECRET\n"),
    ));
    response
        .headers_mut()
        .insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
    response
}

/// An axum layer's check: a request without the secret (when there is one) is refused.
pub async fn require(
    axum::extract::State(secret): axum::extract::State<Option<Secret>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match &secret {
        Some(secret) if !secret.admits(request.headers()) => refusal(request.headers()),
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> axum::http::HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| (axum::http::HeaderName::from_static(name), value.parse().unwrap()))
            .collect()
    }

    #[test]
    fn a_secret_is_admitted_by_agent_or_bearer_and_nothing_else() {
        let secret = Secret::of_text("  0123456789abcdef0123\n", "test").unwrap();
        assert!(secret.admits(&headers(&[("user-agent", "txq-cluster/0123456789abcdef0123 tonic/0.14.9")])));
        assert!(secret.admits(&headers(&[("authorization", "Bearer 0123456789abcdef0123")])));
        for refused in [
            vec![],
            vec![("user-agent", "txq-cluster/0123456789abcdef012 tonic/0.14.9")],
            vec![("user-agent", "txq-cluster/0123456789abcdef01234")],
            vec![("user-agent", "curl/8 txq-cluster/0123456789abcdef0123")],
            vec![("authorization", "Bearer 0123456789abcdef0124")],
            vec![("authorization", "Basic 0123456789abcdef0123")],
        ] {
            assert!(!secret.admits(&headers(&refused)), "{refused:?}");
        }
    }

    #[test]
    fn a_short_or_spaced_secret_is_refused() {
        assert!(Secret::of_text("short", "test").is_err());
        assert!(Secret::of_text("0123456789 abcdef0123", "test").is_err());
    }
}
