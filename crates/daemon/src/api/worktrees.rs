//! `/api/coding-agents/worktrees`: the disk task worktrees use, and collecting old ones.

use super::error::ApiError;
use super::requests::Req;
use crate::engine::Engine;
use axum::Json;
use axum::extract::State;
use orchestra_proto::wire::request::Gc;
use orchestra_proto::wire::{CollectedList, WorktreeList};
use std::time::Duration;

/// Every live task worktree with the bytes it holds.
pub async fn list(State(engine): State<Engine>) -> Json<WorktreeList> {
    let worktrees = engine.worktree_usage().await;
    let bytes: u64 = worktrees.iter().map(|w| w.bytes).sum();
    Json(WorktreeList { worktrees, bytes })
}

/// Removes worktrees of tasks finished more than `olderThanSeconds` ago (default 7 days),
/// each after a snapshot; their branches stay.
pub async fn gc(
    State(engine): State<Engine>,
    Req(gc): Req<Gc>,
) -> Result<Json<CollectedList>, ApiError> {
    let secs = gc.older_than_seconds;
    let collected = engine
        .collect_worktrees(Duration::from_secs_f64(secs.min(1e12)))
        .await?;
    let bytes: u64 = collected.iter().map(|c| c.bytes).sum();
    Ok(Json(CollectedList { collected, bytes }))
}
