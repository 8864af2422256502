//! Orchestrator routes: status, providers, the autopilot switches, and stopping the daemon.

use super::error::ApiError;
use crate::engine::{Engine, RunState};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn summary(engine: &Engine) -> Value {
    let counts = engine.task_counts();
    let total: usize = counts.values().sum();
    let (active, all) = engine.session_counts();
    json!({
        "state": engine.run_state(),
        "autopilot": engine.run_state() == RunState::Running,
        "tasks": { "total": total, "byStatus": counts },
        "sessions": { "active": active, "total": all },
        "limits": {
            "maxConcurrent": engine.config().max_concurrent,
            "maxSessions": engine.config().max_sessions,
        },
        "uptimeMs": engine.uptime().as_millis() as u64,
        "version": VERSION,
    })
}

/// `GET /api/status` and `GET /api/coding-agents/status`: the same summary.
pub async fn status(State(engine): State<Engine>) -> Json<Value> {
    Json(summary(&engine))
}

pub async fn providers(State(engine): State<Engine>) -> Json<Value> {
    Json(json!({ "providers": engine.provider_report().await }))
}

fn switched(engine: &Engine) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!({ "ok": true, "status": engine.run_state() })))
}

pub async fn agent_start(State(engine): State<Engine>) -> Result<Json<Value>, ApiError> {
    if engine.run_state() == RunState::Stopped {
        engine.set_autopilot(false).await;
    }
    switched(&engine)
}

pub async fn agent_stop(State(engine): State<Engine>) -> Result<Json<Value>, ApiError> {
    engine.stop_all().await;
    switched(&engine)
}

pub async fn agent_pause(State(engine): State<Engine>) -> Result<Json<Value>, ApiError> {
    engine.set_autopilot(false).await;
    switched(&engine)
}

pub async fn agent_resume(State(engine): State<Engine>) -> Result<Json<Value>, ApiError> {
    engine.set_autopilot(true).await;
    switched(&engine)
}

/// `POST /api/daemon/stop`: answers how many agents it is about to end, then orchestra stops
/// gracefully (see [`crate::boot`]): the server finishes the requests in flight, this answer
/// among them, before any session is ended.
pub async fn daemon_stop(State(engine): State<Engine>) -> Json<Value> {
    let ended = engine.session_counts().0;
    tracing::info!(agents = ended, "asked to stop over the API");
    engine.begin_shutdown();
    // `graceMs`: how long its agents may take to end, so a caller knows how long to wait.
    Json(json!({
        "ok": true,
        "ended": ended,
        "pid": std::process::id(),
        "graceMs": engine.config().grace.as_millis() as u64,
    }))
}
