//! The autopilot: while on, pending tasks start oldest first, at most `max_concurrent` at once.

use super::{Engine, RunState, now_ms};
use crate::task::TaskStatus;

impl Engine {
    /// Called after every task change: a freed slot or a new task may let the next one run.
    pub(crate) fn task_changed(&self, _task: &crate::task::Task) {
        if self.run_state() == RunState::Running {
            self.inner.dispatch.notify_one();
        }
    }

    pub async fn set_autopilot(&self, on: bool) {
        self.set_run_state(if on {
            RunState::Running
        } else {
            RunState::Paused
        });
        if on {
            self.inner.dispatch.notify_one();
        }
    }

    pub fn autopilot(&self) -> bool {
        self.run_state() == RunState::Running
    }

    /// The dispatcher: sleeps until told something changed, then fills free slots.
    pub(crate) fn spawn_dispatcher(&self) {
        let weak = std::sync::Arc::downgrade(&self.inner);
        let notify = self.inner.dispatch_handle();
        tokio::spawn(async move {
            loop {
                notify.notified().await;
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                engine.dispatch().await;
            }
        });
    }

    async fn dispatch(&self) {
        if self.run_state() != RunState::Running {
            return;
        }
        let tasks = self.tasks_oldest_first();
        let mut busy = tasks
            .iter()
            .filter(|t| {
                matches!(t.status(), TaskStatus::Running | TaskStatus::Paused)
                    && t.metadata.session_id.is_some()
            })
            .count();
        for t in tasks.iter().filter(|t| t.status() == TaskStatus::Pending) {
            if busy >= self.config().max_concurrent || self.run_state() != RunState::Running {
                break;
            }
            match self.start_task(&t.id).await {
                Ok(_) => busy += 1,
                // Someone else started it first (the API, a key, the CLI): theirs to run.
                Err(super::EngineError::Conflict(why)) => {
                    tracing::debug!(task = %t.id, %why, "autopilot left a task to its starter");
                }
                Err(e) => {
                    tracing::warn!(task = %t.id, error = %e, "autopilot could not start a task");
                    let _ = self
                        .mutate(&t.id, |task| {
                            if task.status() != TaskStatus::Pending {
                                return Ok((vec![], ()));
                            }
                            task.move_to(TaskStatus::Failed, now_ms())?;
                            task.metadata.error = Some(format!("could not start: {e}"));
                            Ok((vec![(super::TaskEventKind::Failed, vec![])], ()))
                        })
                        .await;
                }
            }
        }
    }
}
