//! The HTTP API (API.md): one axum router over the engine.

mod body;
mod children;
mod conflicts;
mod error;
mod events;
pub mod guard;
pub mod openapi;
mod orchestrator;
mod pieces;
mod requests;
pub mod rights;
mod sessions;
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
    use orchestra_proto::routes;
    vec![
        (routes::OPENAPI, get(openapi::serve)),
        (routes::TASKS, get(tasks::list).post(tasks::create)),
        (
            routes::TASK,
            get(tasks::get).patch(tasks::patch).delete(tasks::delete),
        ),
        (routes::TASK_START, post(tasks::start)),
        (routes::TASK_ANSWER, post(tasks::answer)),
        (routes::TASK_PAUSE, post(tasks::pause)),
        (routes::TASK_RESUME, post(tasks::resume)),
        (routes::TASK_CANCEL, post(tasks::cancel)),
        (routes::TASK_RETRY, post(tasks::retry)),
        (routes::TASK_CONTINUE, post(tasks::continue_)),
        (routes::TASK_OUTPUT, post(tasks::output)),
        (routes::TASK_STEPS, post(tasks::add_step)),
        (routes::TASK_STEP, patch(tasks::update_step)),
        (routes::TASK_RESULT, post(tasks::result)),
        (routes::TASK_DIFF, get(tasks::diff)),
        (routes::TASK_MERGE, post(tasks::merge)),
        (routes::TASK_DISCARD, post(tasks::discard)),
        (routes::TASK_PR, post(tasks::pull_request)),
        (routes::TASK_PICK, post(tasks::pick)),
        (routes::TASK_CONFLICTS, get(conflicts::task)),
        (routes::CONFLICTS, get(conflicts::list)),
        (routes::TRUST, get(trust::list).post(trust::trust)),
        (routes::TRUST_REVOKE, post(trust::revoke)),
        (routes::WORKTREES, get(worktrees::list)),
        (routes::WORKTREES_GC, post(worktrees::gc)),
        (routes::SESSIONS, get(sessions::list).post(sessions::spawn)),
        (routes::SESSION, get(sessions::get).delete(sessions::delete)),
        (
            routes::SESSION_MESSAGES,
            get(sessions::messages).post(sessions::send),
        ),
        (routes::SESSION_PEEK, get(sessions::peek)),
        (
            routes::SESSION_STREAM,
            get(stream::connect).layer(axum::Extension(Arc::new(stream::Streams::default()))),
        ),
        (routes::SESSION_TRANSCRIPT, get(sessions::transcript)),
        (routes::SESSION_RESIZE, post(sessions::resize)),
        (routes::SESSION_PAUSE, post(sessions::pause)),
        (routes::SESSION_RESUME, post(sessions::resume)),
        (routes::SESSION_ANSWER, post(sessions::answer)),
        (routes::SESSION_HOOK, post(sessions::hook)),
        (routes::AGENTS_STATUS, get(orchestrator::status)),
        (routes::PROVIDERS, get(orchestrator::providers)),
        (routes::EVENTS, get(events::stream)),
        (routes::STATUS, get(orchestrator::status)),
        (routes::AGENT_START, post(orchestrator::agent_start)),
        (routes::AGENT_STOP, post(orchestrator::agent_stop)),
        (routes::AGENT_PAUSE, post(orchestrator::agent_pause)),
        (routes::AGENT_RESUME, post(orchestrator::agent_resume)),
        (routes::DAEMON_STOP, post(orchestrator::daemon_stop)),
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
