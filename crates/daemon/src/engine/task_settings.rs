//! Changing a pending task's settings (`PATCH /tasks/:id` with providerId, approval,
//! isolation, baseRef, checks, maxAttempts): each checked as a new task's would be, and only
//! while nothing has run yet.

use super::tasks::Placement;
use super::{Engine, EngineError, EngineResult, TaskEventKind};
use orchestra_proto::task::{Isolation, TaskStatus};
use orchestra_proto::wire::request::TaskChange;

fn not_pending(status: TaskStatus) -> EngineError {
    EngineError::Conflict(format!(
        "task is {status}; only a pending task's settings can be changed"
    ))
}

impl Engine {
    /// Applies the settings part of `change` to pending task `id` (`task:updated`).
    pub(super) async fn edit_task_settings(
        &self,
        id: &str,
        change: &TaskChange,
    ) -> EngineResult<()> {
        let task = self.get_task(id)?;
        if task.status() != TaskStatus::Pending {
            return Err(not_pending(task.status()));
        }
        let moves_place =
            change.provider_id.is_some() || change.isolation.is_some() || change.base_ref.is_some();
        if moves_place && (task.metadata.is_variant_parent() || task.metadata.variant.is_some()) {
            return Err(EngineError::Conflict(
                "a best-of-N variant keeps its provider and its worktree from the shared base; change its approval or checks, or make a new request".into(),
            ));
        }
        if change.checks.iter().flatten().any(|c| c.trim().is_empty()) {
            return Err(EngineError::Invalid(
                "checks holds a blank command: give each check as the command line to run".into(),
            ));
        }
        let provider_id = match change.provider_id.as_deref() {
            Some(p) => self.resolve_provider(Some(p))?,
            None => task.metadata.provider_id.clone(),
        };
        if provider_id != task.metadata.provider_id {
            self.check_description(&provider_id, &task.description)?;
            self.ensure_task_provider(&provider_id)?;
        }
        let placement = if change.isolation.is_some() || change.base_ref.is_some() {
            let base_ref = match change.base_ref.as_deref().map(str::trim) {
                Some("") => None,
                Some(b) => Some(b.to_string()),
                None if change.isolation == Some(Isolation::None) => None,
                None => task.metadata.base_ref.clone(),
            };
            let asked = change.isolation.unwrap_or(if base_ref.is_some() {
                Isolation::Worktree
            } else {
                task.metadata.isolation
            });
            Some(
                self.resolve_isolation(
                    &provider_id,
                    &task.metadata.working_directory,
                    Some(asked),
                    base_ref,
                )
                .await?,
            )
        } else {
            None
        };
        self.mutate(id, |t| {
            if t.status() != TaskStatus::Pending {
                return Err(not_pending(t.status()));
            }
            if placement.is_some() && t.metadata.worktree.is_some() {
                return Err(EngineError::Conflict(
                    "the task already has its worktree, so its isolation and base stay".into(),
                ));
            }
            let before = t.metadata.clone();
            t.metadata.provider_id = provider_id;
            if let Some(a) = change.approval {
                t.metadata.approval = Some(a);
            }
            if let Some(Placement {
                isolation,
                base_ref,
                ..
            }) = placement
            {
                t.metadata.isolation = isolation;
                t.metadata.base_ref = base_ref;
            }
            if let Some(checks) = &change.checks {
                t.metadata.checks = checks.clone();
            }
            if let Some(n) = change.max_attempts {
                t.metadata.max_attempts = Some(n);
            }
            let events = if t.metadata != before {
                vec![(TaskEventKind::Updated, vec![])]
            } else {
                vec![]
            };
            Ok((events, ()))
        })
        .await
        .map(|_| ())
    }
}
