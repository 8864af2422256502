//! Start, pause, resume and cancel: the operations that act on a task's agent when it has one.

use super::{Engine, EngineResult, RunState};
use crate::task::{Task, TaskStatus};
use std::sync::Arc;

impl Engine {
    pub async fn start_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        if task.status() != TaskStatus::Pending {
            return Err(super::EngineError::Conflict(format!(
                "task is {}; only a pending task can be started",
                task.status()
            )));
        }
        self.move_task(id, TaskStatus::Running, None).await
    }

    pub async fn pause_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        self.move_task(id, TaskStatus::Paused, None).await
    }

    pub async fn resume_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        if task.status() != TaskStatus::Paused {
            return Err(super::EngineError::Conflict(format!(
                "task is {}; only a paused task can be resumed",
                task.status()
            )));
        }
        self.move_task(id, TaskStatus::Running, None).await
    }

    pub async fn cancel_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        self.move_task(id, TaskStatus::Cancelled, None).await
    }

    /// Called after every task change: lets the autopilot fill freed slots.
    pub(crate) fn task_changed(&self, _task: &Task) {}

    pub async fn set_autopilot(&self, on: bool) {
        self.set_run_state(if on { RunState::Running } else { RunState::Paused });
    }
}

impl Engine {
    /// Live and total sessions.
    pub fn session_counts(&self) -> (usize, usize) {
        (0, 0)
    }

    /// Every provider with whether it is installed here and which is the default.
    pub async fn provider_report(&self) -> Vec<serde_json::Value> {
        let default = self.providers().default_id();
        self.providers()
            .all()
            .iter()
            .map(|p| {
                let path = p.resolved_path();
                serde_json::json!({
                    "id": p.id,
                    "name": p.name,
                    "command": p.command,
                    "installed": path.is_some(),
                    "path": path.map(|p| p.to_string_lossy().into_owned()),
                    "codingAgent": p.coding_agent,
                    "default": default.as_deref() == Some(p.id.as_str()),
                })
            })
            .collect()
    }

    /// Ends every running task and turns the autopilot off.
    pub async fn stop_all(&self) {
        for t in self.list_tasks(None, None) {
            if matches!(t.status(), TaskStatus::Running | TaskStatus::Paused) && t.metadata.session_id.is_some() {
                let _ = self.cancel_task(&t.id).await;
            }
        }
        self.set_run_state(RunState::Stopped);
    }
}

impl Engine {
    /// Ends every live session (used at shutdown).
    pub async fn end_all_sessions(&self) {}
}
