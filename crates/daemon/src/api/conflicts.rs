//! The conflict radar's answers: `GET /tasks/:id/conflicts` and `GET /conflicts`.

use super::error::ApiError;
use super::rights::{Principal, may_see_task};
use crate::engine::Engine;
use axum::Json;
use axum::extract::{Path, State};
use orchestra_proto::wire::{ConflictList, ConflictReport};

/// A task's conflicts with the other live worktree tasks and with its base as they are now.
/// An agent's credential sees only the tasks of its own family in it.
pub async fn task(
    State(engine): State<Engine>,
    principal: Option<axum::Extension<Principal>>,
    Path(id): Path<String>,
) -> Result<Json<ConflictReport>, ApiError> {
    let mut report = engine.task_conflicts(&id).await?;
    if let Some(agent @ Principal::Session(_)) = principal.as_deref() {
        report
            .with_tasks
            .retain(|t| may_see_task(&engine, Some(agent), &t.task_id));
        report
            .merge_order
            .retain(|t| may_see_task(&engine, Some(agent), t));
    }
    Ok(Json(report))
}

/// Every live worktree task's conflicts.
pub async fn list(State(engine): State<Engine>) -> Json<ConflictList> {
    Json(ConflictList {
        reports: engine.all_conflicts().await,
    })
}
