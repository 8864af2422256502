//! The HTTP API (API.md): one axum router over the engine.

mod body;
mod error;
mod events;
pub mod guard;
mod orchestrator;
mod sessions;
mod sessions_common;
mod stream;
mod tasks;
mod worktrees;

pub use error::ApiError;
pub use guard::Access;
pub use orchestrator::VERSION;

use crate::engine::Engine;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::routing::{get, post};
use std::net::SocketAddr;
use std::sync::Arc;

pub fn router(engine: Engine, access: Access) -> Router {
    // The routes are one service under an outer router's fallback so that the layers below
    // see each response as it leaves: a route's own layers run before axum adds the `Allow`
    // header of a 405, which the JSON error must name.
    Router::new()
        .fallback_service(routes(engine))
        .layer(DefaultBodyLimit::max(body::MAX_BODY))
        .layer(axum::middleware::map_response(error::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(access),
            guard::check,
        ))
}

fn routes(engine: Engine) -> Router {
    const T: &str = "/api/coding-agents/tasks";
    const S: &str = "/api/coding-agents/sessions";
    Router::new()
        .route(T, get(tasks::list).post(tasks::create))
        .route(
            &format!("{T}/{{id}}"),
            get(tasks::get).patch(tasks::patch).delete(tasks::delete),
        )
        .route(&format!("{T}/{{id}}/start"), post(tasks::start))
        .route(&format!("{T}/{{id}}/pause"), post(tasks::pause))
        .route(&format!("{T}/{{id}}/resume"), post(tasks::resume))
        .route(&format!("{T}/{{id}}/cancel"), post(tasks::cancel))
        .route(&format!("{T}/{{id}}/retry"), post(tasks::retry))
        .route(&format!("{T}/{{id}}/continue"), post(tasks::continue_))
        .route(&format!("{T}/{{id}}/output"), post(tasks::output))
        .route(&format!("{T}/{{id}}/steps"), post(tasks::add_step))
        .route(
            &format!("{T}/{{id}}/steps/{{step_id}}"),
            axum::routing::patch(tasks::update_step),
        )
        .route(&format!("{T}/{{id}}/result"), post(tasks::result))
        .route(&format!("{T}/{{id}}/diff"), get(tasks::diff))
        .route(&format!("{T}/{{id}}/merge"), post(tasks::merge))
        .route(&format!("{T}/{{id}}/discard"), post(tasks::discard))
        .route("/api/coding-agents/worktrees", get(worktrees::list))
        .route("/api/coding-agents/worktrees/gc", post(worktrees::gc))
        .route(S, get(sessions::list).post(sessions::spawn))
        .route(
            &format!("{S}/{{id}}"),
            get(sessions::get).delete(sessions::delete),
        )
        .route(
            &format!("{S}/{{id}}/messages"),
            get(sessions::messages).post(sessions::send),
        )
        .route(&format!("{S}/{{id}}/peek"), get(sessions::peek))
        .route(
            &format!("{S}/{{id}}/stream"),
            get(stream::connect).layer(axum::Extension(Arc::new(stream::Streams::default()))),
        )
        .route(&format!("{S}/{{id}}/transcript"), get(sessions::transcript))
        .route(&format!("{S}/{{id}}/resize"), post(sessions::resize))
        .route(&format!("{S}/{{id}}/pause"), post(sessions::pause))
        .route(&format!("{S}/{{id}}/resume"), post(sessions::resume))
        .route(&format!("{S}/{{id}}/answer"), post(sessions::answer))
        .route(&format!("{S}/{{id}}/hook"), post(sessions::hook))
        .route("/api/coding-agents/status", get(orchestrator::status))
        .route("/api/coding-agents/providers", get(orchestrator::providers))
        .route("/api/coding-agents/events", get(events::stream))
        .route("/api/status", get(orchestrator::status))
        .route("/api/agent/start", post(orchestrator::agent_start))
        .route("/api/agent/stop", post(orchestrator::agent_stop))
        .route("/api/agent/pause", post(orchestrator::agent_pause))
        .route("/api/agent/resume", post(orchestrator::agent_resume))
        .route("/api/daemon/stop", post(orchestrator::daemon_stop))
        .fallback(unknown_route)
        .with_state(engine)
}

async fn unknown_route(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!("no route {method} {}", uri.path()))
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(
        "cannot listen on {0}: the port is already in use (another orchestra or program listens there); pass another --addr, or port 0 for any free one"
    )]
    InUse(SocketAddr),
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could run commands; pass --token or ORCHESTRA_TOKEN"
    )]
    ExposedWithoutToken(SocketAddr),
}

/// A bound listener and the URL it answers at (the port resolved when 0 was asked).
pub struct Bound {
    pub listener: tokio::net::TcpListener,
    pub url: String,
}

pub async fn bind(addr: SocketAddr, token: Option<&str>) -> Result<Bound, ServeError> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(ServeError::ExposedWithoutToken(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => ServeError::InUse(addr),
            _ => ServeError::Bind { addr, source },
        })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    Ok(Bound {
        listener,
        url: format!("http://{local}"),
    })
}

/// Serves until `shutdown` resolves; in-flight requests finish first.
pub async fn serve(
    bound: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(bound, app)
        .with_graceful_shutdown(shutdown)
        .await
}
