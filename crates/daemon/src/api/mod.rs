//! The HTTP API (API.md): one axum router over the engine.

mod body;
mod error;
mod events;
pub mod guard;
pub mod openapi;
mod orchestrator;
mod pieces;
pub mod rights;
mod sessions;
mod sessions_common;
mod stream;
mod tasks;
mod trust;
mod worktrees;

pub use error::ApiError;
pub use guard::Access;
pub use orchestrator::VERSION;

use crate::engine::Engine;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::routing::{MethodRouter, get, post};
use std::net::SocketAddr;
use std::sync::Arc;

pub fn router(engine: Engine, access: Access) -> Router {
    // The routes are one service under an outer router's fallback so that the layers below
    // see each response as it leaves: a route's own layers run before axum adds the `Allow`
    // header of a 405, which the JSON error must name.
    let token_required = openapi::TokenRequired(access.token.is_some());
    let guard = guard::Guard {
        access,
        engine: engine.clone(),
    };
    Router::new()
        .fallback_service(routes(engine))
        .layer(axum::Extension(token_required))
        .layer(DefaultBodyLimit::max(body::MAX_BODY))
        .layer(axum::middleware::map_response(error::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            guard::check,
        ))
}

fn routes(engine: Engine) -> Router {
    route_table()
        .into_iter()
        .fold(Router::new(), |router, (path, methods)| {
            router.route(path, methods)
        })
        .fallback(unknown_route)
        .with_state(engine)
}

/// Every route path the router serves, in axum's (and OpenAPI's) `{param}` syntax: what
/// the OpenAPI document must cover (`tests/it/api_openapi.rs` checks each path's methods
/// against it).
pub fn route_paths() -> Vec<&'static str> {
    route_table().into_iter().map(|(path, _)| path).collect()
}

/// The routes, one entry per path: the one list both the router and [`route_paths`] read.
fn route_table() -> Vec<(&'static str, MethodRouter<Engine>)> {
    use axum::routing::patch;
    vec![
        ("/api/openapi.json", get(openapi::serve)),
        (
            "/api/coding-agents/tasks",
            get(tasks::list).post(tasks::create),
        ),
        (
            "/api/coding-agents/tasks/{id}",
            get(tasks::get).patch(tasks::patch).delete(tasks::delete),
        ),
        ("/api/coding-agents/tasks/{id}/start", post(tasks::start)),
        ("/api/coding-agents/tasks/{id}/answer", post(tasks::answer)),
        ("/api/coding-agents/tasks/{id}/pause", post(tasks::pause)),
        ("/api/coding-agents/tasks/{id}/resume", post(tasks::resume)),
        ("/api/coding-agents/tasks/{id}/cancel", post(tasks::cancel)),
        ("/api/coding-agents/tasks/{id}/retry", post(tasks::retry)),
        (
            "/api/coding-agents/tasks/{id}/continue",
            post(tasks::continue_),
        ),
        ("/api/coding-agents/tasks/{id}/output", post(tasks::output)),
        ("/api/coding-agents/tasks/{id}/steps", post(tasks::add_step)),
        (
            "/api/coding-agents/tasks/{id}/steps/{stepId}",
            patch(tasks::update_step),
        ),
        ("/api/coding-agents/tasks/{id}/result", post(tasks::result)),
        ("/api/coding-agents/tasks/{id}/diff", get(tasks::diff)),
        ("/api/coding-agents/tasks/{id}/merge", post(tasks::merge)),
        (
            "/api/coding-agents/tasks/{id}/discard",
            post(tasks::discard),
        ),
        (
            "/api/coding-agents/trust",
            get(trust::list).post(trust::trust),
        ),
        ("/api/coding-agents/trust/revoke", post(trust::revoke)),
        ("/api/coding-agents/worktrees", get(worktrees::list)),
        ("/api/coding-agents/worktrees/gc", post(worktrees::gc)),
        (
            "/api/coding-agents/sessions",
            get(sessions::list).post(sessions::spawn),
        ),
        (
            "/api/coding-agents/sessions/{id}",
            get(sessions::get).delete(sessions::delete),
        ),
        (
            "/api/coding-agents/sessions/{id}/messages",
            get(sessions::messages).post(sessions::send),
        ),
        ("/api/coding-agents/sessions/{id}/peek", get(sessions::peek)),
        (
            "/api/coding-agents/sessions/{id}/stream",
            get(stream::connect).layer(axum::Extension(Arc::new(stream::Streams::default()))),
        ),
        (
            "/api/coding-agents/sessions/{id}/transcript",
            get(sessions::transcript),
        ),
        (
            "/api/coding-agents/sessions/{id}/resize",
            post(sessions::resize),
        ),
        (
            "/api/coding-agents/sessions/{id}/pause",
            post(sessions::pause),
        ),
        (
            "/api/coding-agents/sessions/{id}/resume",
            post(sessions::resume),
        ),
        (
            "/api/coding-agents/sessions/{id}/answer",
            post(sessions::answer),
        ),
        (
            "/api/coding-agents/sessions/{id}/hook",
            post(sessions::hook),
        ),
        ("/api/coding-agents/status", get(orchestrator::status)),
        ("/api/coding-agents/providers", get(orchestrator::providers)),
        ("/api/coding-agents/events", get(events::stream)),
        ("/api/status", get(orchestrator::status)),
        ("/api/agent/start", post(orchestrator::agent_start)),
        ("/api/agent/stop", post(orchestrator::agent_stop)),
        ("/api/agent/pause", post(orchestrator::agent_pause)),
        ("/api/agent/resume", post(orchestrator::agent_resume)),
        ("/api/daemon/stop", post(orchestrator::daemon_stop)),
    ]
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
        "refusing to listen on {0} without authentication: anyone who can reach it could run commands; --insecure-no-auth is for loopback addresses only"
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
    use axum::serve::ListenerExt;
    // Small writes go out at once: with Nagle's algorithm a key typed into a session's stream
    // could wait for the acknowledgement of the previous one, which a busy peer delays.
    // Streams and events are small messages whose latency is what matters.
    let bound = bound.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
    });
    axum::serve(bound, app)
        .with_graceful_shutdown(shutdown)
        .await
}
