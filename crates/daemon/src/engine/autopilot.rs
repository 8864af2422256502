//! The autopilot: while on, pending tasks start oldest first, at most `max_concurrent` at once.
//! A task waiting on the user's trust in its repository's file holds its slot, and no other
//! task of that repository starts until the question is answered.

use super::trust::{held_repositories, is_held};
use super::{Engine, EngineError, RunState, now_ms};
use crate::store::{Record, Table};
use orchestra_proto::task::TaskStatus;
use serde::{Deserialize, Serialize};

/// How often the autopilot looks again at tasks it skipped for a missing provider.
const RECHECK_SKIPPED: std::time::Duration = std::time::Duration::from_secs(5);

/// The settings record that keeps the autopilot switch.
const AUTOPILOT_SETTING: &str = "autopilot";

/// That record's JSON.
#[derive(Serialize, Deserialize)]
struct AutopilotSetting {
    on: bool,
}

impl Engine {
    /// Called after every task change: a freed slot or a new task may let the next one run.
    pub(crate) fn task_changed(&self, task: &orchestra_proto::task::Task) {
        self.variant_changed(task);
        // Variants run within the limit with autopilot off too: a slot freed (any task that
        // finished) or a variant's parent started lets the next one run.
        let variants_wait = task.metadata.variant.is_some()
            || task.metadata.is_variant_parent()
            || task.status().is_final();
        if self.run_state() == RunState::Running || variants_wait {
            self.inner.dispatch.notify_one();
        }
    }

    /// The user's switch: applied, and kept for the next start.
    pub async fn set_autopilot(&self, on: bool) {
        self.apply_autopilot(on);
        self.remember_autopilot(on).await;
    }

    fn apply_autopilot(&self, on: bool) {
        self.set_run_state(if on {
            RunState::Running
        } else {
            RunState::Paused
        });
        if on {
            self.inner.dispatch.notify_one();
        }
    }

    /// Keeps the switch in the store. Stopping orchestra is not turning autopilot off, so
    /// only the user's own switches (and `stop`) call this.
    pub(crate) async fn remember_autopilot(&self, on: bool) {
        let record = Record {
            table: Table::Settings,
            id: AUTOPILOT_SETTING.into(),
            seq: 0,
            owner: None,
            json: serde_json::to_string(&AutopilotSetting { on }).unwrap_or_default(),
        };
        if let Err(e) = self.store().put(vec![record]).await {
            tracing::error!(error = %e, "could not keep the autopilot switch");
        }
    }

    /// At start: autopilot as the user last left it.
    pub(crate) fn restore_autopilot(&self, settings: &[Record]) {
        let on = settings
            .iter()
            .find(|r| r.id == AUTOPILOT_SETTING)
            .and_then(|r| serde_json::from_str::<AutopilotSetting>(&r.json).ok())
            .is_some_and(|s| s.on);
        if on {
            tracing::info!("autopilot is on, as it was left");
            self.apply_autopilot(true);
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
                let waiting_for_install = weak
                    .upgrade()
                    .is_some_and(|inner| !inner.skipped.lock().is_empty());
                if waiting_for_install {
                    // A CLI installed meanwhile wakes nothing: look again now and then.
                    let _ = tokio::time::timeout(RECHECK_SKIPPED, notify.notified()).await;
                } else {
                    notify.notified().await;
                }
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                engine.dispatch().await;
            }
        });
    }

    /// Leaves a task it cannot start now (its provider is not installed) pending, saying so
    /// once per task rather than at every pass; it starts once the provider is installed.
    fn skip_task(&self, id: &str, why: &EngineError) {
        if self.inner.skipped.lock().insert(id.to_string()) {
            tracing::warn!(task = %id, reason = %why, "autopilot leaves a task pending");
        }
    }

    async fn dispatch(&self) {
        if self.run_state() == RunState::Stopped {
            return;
        }
        let tasks = self.tasks_oldest_first();
        self.inner.skipped.lock().retain(|id| {
            tasks
                .iter()
                .any(|t| &t.id == id && t.status() == TaskStatus::Pending)
        });
        // A task whose agent waits out a usage limit holds no slot.
        let limited = |sid: &str| {
            self.session_entry(sid).is_ok_and(|e| {
                e.info.lock().status == orchestra_proto::wire::SessionStatus::Limited
            })
        };
        // A task waiting on (or just given) the user's trust holds its slot: orchestra is
        // starting it.
        let mut busy = tasks
            .iter()
            .filter(|t| {
                matches!(t.status(), TaskStatus::Running | TaskStatus::Paused)
                    && (t.awaits_trust()
                        || t.metadata
                            .session_id
                            .as_deref()
                            .is_some_and(|s| !limited(s)))
            })
            .count();
        let mut held = held_repositories(&tasks);
        for t in tasks.iter().filter(|t| t.status() == TaskStatus::Pending) {
            if busy >= self.config().max_concurrent || self.run_state() == RunState::Stopped {
                break;
            }
            // A variant starts once its parent runs (autopilot or not); another task only
            // with autopilot on.
            let eligible = self
                .released_variant(t)
                .unwrap_or_else(|| self.run_state() == RunState::Running);
            if !eligible {
                continue;
            }
            // Its repository waits for the user's trust: it would only ask again.
            if is_held(t, &held) {
                tracing::debug!(task = %t.id, "autopilot holds a task: its repository waits for trust");
                continue;
            }
            if let Err(e) = self.ensure_task_provider(&t.metadata.provider_id) {
                self.skip_task(&t.id, &e);
                continue;
            }
            match self.start_task(&t.id).await {
                Ok(started) => {
                    // A best-of-N parent runs no agent: it holds no slot.
                    if !started.metadata.is_variant_parent() {
                        busy += 1;
                    }
                    self.inner.skipped.lock().remove(&t.id);
                    held.extend(held_repositories(std::slice::from_ref(&started)));
                }
                // Someone else started it first (the API, a key, the CLI): theirs to run.
                Err(EngineError::Conflict(why)) => {
                    tracing::debug!(task = %t.id, %why, "autopilot left a task to its starter");
                }
                // Missing right as it started: skipped like above, not failed.
                Err(e @ EngineError::Unavailable(_)) => self.skip_task(&t.id, &e),
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
