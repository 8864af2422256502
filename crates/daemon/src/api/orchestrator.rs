//! Orchestrator routes: status, providers, the autopilot switches, and stopping the daemon.

use super::error::ApiError;
use crate::engine::Engine;
use axum::Json;
use axum::extract::State;
use orchestra_proto::wire::{
    DaemonStopped, Limits, ProviderList, RunState, SessionCounts, Status, Switched, TaskCounts,
};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn summary(engine: &Engine) -> Status {
    let by_status = engine.task_counts();
    let (active, total) = engine.session_counts();
    Status {
        state: engine.run_state(),
        autopilot: engine.run_state() == RunState::Running,
        tasks: TaskCounts {
            total: by_status.values().sum(),
            by_status,
        },
        sessions: SessionCounts { active, total },
        limits: Limits {
            max_concurrent: engine.config().max_concurrent,
            max_sessions: engine.config().max_sessions,
        },
        uptime_ms: engine.uptime().as_millis() as u64,
        version: VERSION.to_string(),
    }
}

/// `GET /api/status` and `GET /api/coding-agents/status`: the same summary.
pub async fn status(State(engine): State<Engine>) -> Json<Status> {
    Json(summary(&engine))
}

pub async fn providers(State(engine): State<Engine>) -> Json<ProviderList> {
    Json(ProviderList {
        providers: engine.provider_report().await,
    })
}

fn switched(engine: &Engine) -> Result<Json<Switched>, ApiError> {
    Ok(Json(Switched {
        ok: true,
        status: engine.run_state(),
    }))
}

pub async fn agent_start(State(engine): State<Engine>) -> Result<Json<Switched>, ApiError> {
    if engine.run_state() == RunState::Stopped {
        engine.set_autopilot(false).await;
    }
    switched(&engine)
}

pub async fn agent_stop(State(engine): State<Engine>) -> Result<Json<Switched>, ApiError> {
    engine.stop_all().await;
    switched(&engine)
}

pub async fn agent_pause(State(engine): State<Engine>) -> Result<Json<Switched>, ApiError> {
    engine.set_autopilot(false).await;
    switched(&engine)
}

pub async fn agent_resume(State(engine): State<Engine>) -> Result<Json<Switched>, ApiError> {
    engine.set_autopilot(true).await;
    switched(&engine)
}

/// `POST /api/daemon/stop`: answers how many agents it is about to end, then orchestra stops
/// gracefully (see [`crate::boot`]): the server finishes the requests in flight, this answer
/// among them, before any session is ended.
pub async fn daemon_stop(State(engine): State<Engine>) -> Json<DaemonStopped> {
    let ended = engine.session_counts().0;
    tracing::info!(agents = ended, "asked to stop over the API");
    engine.begin_shutdown();
    // `graceMs`: how long its agents may take to end, so a caller knows how long to wait.
    Json(DaemonStopped {
        ok: true,
        ended,
        pid: std::process::id(),
        grace_ms: engine.config().grace.as_millis() as u64,
    })
}
