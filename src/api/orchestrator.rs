//! Orchestrator routes: status, providers, and the autopilot switches.

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
