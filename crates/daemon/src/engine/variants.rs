//! Best of N: one request raced on several agents. The parent runs no agent of its own (its
//! `providerId` is its first variant's, for show); each variant is a child in its own
//! worktree, all from one base commit fixed at creation. Starting the parent releases its
//! children to the dispatcher (within the concurrency limit, autopilot or not); once every
//! variant has finished the parent stays `running` at its step "pick a variant" until a pick
//! merges one variant and discards the others (each kept under its snapshot ref).

use super::tasks::Placement;
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::git;
use orchestra_proto::task::{
    Isolation, NewTask, Progress, Step, StepStatus, Task, TaskResult, TaskStatus, VariantSpec,
    WorktreeOutcome,
};
use orchestra_proto::wire::request::NewTask as TaskRequest;
use orchestra_proto::wire::{DiscardedVariant, Merged};
use std::path::PathBuf;
use std::sync::Arc;

/// How many variants one request may race.
pub const MIN_VARIANTS: usize = 2;
pub const MAX_VARIANTS: usize = 8;

/// The parent's last step, open while the user has a choice to make.
const PICK_STEP: &str = "pick";
const PICK_STEP_TEXT: &str = "pick a variant";

fn variant_step_id(label: &str) -> String {
    format!("variant:{label}")
}

/// Each variant's label: its provider's id, numbered from the second time a provider repeats
/// (`codex`, `codex-2`).
pub fn variant_labels(specs: &[VariantSpec]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    specs
        .iter()
        .map(|s| {
            let n = seen.entry(s.provider_id.as_str()).or_default();
            *n += 1;
            if *n == 1 {
                s.provider_id.clone()
            } else {
                format!("{}-{n}", s.provider_id)
            }
        })
        .collect()
}

/// The step status that mirrors a variant's task status.
fn step_of(status: TaskStatus) -> StepStatus {
    match status {
        TaskStatus::Pending => StepStatus::Pending,
        TaskStatus::Running => StepStatus::Running,
        TaskStatus::Paused => StepStatus::Paused,
        TaskStatus::Completed => StepStatus::Completed,
        TaskStatus::Failed => StepStatus::Failed,
        TaskStatus::Cancelled => StepStatus::Cancelled,
    }
}

/// What a pick did: the parent as it ended, and each variant's fate.
pub struct PickOutcome {
    pub parent: Arc<Task>,
    pub label: String,
    pub picked_task_id: String,
    pub merged: Merged,
    pub discarded: Vec<DiscardedVariant>,
}

impl Engine {
    /// `POST /tasks` with `variants`: the parent and one pending child per variant.
    pub(super) async fn create_variants(&self, req: TaskRequest) -> EngineResult<Arc<Task>> {
        if req.name.trim().is_empty() {
            return Err(EngineError::Invalid(
                "name must be a non-empty string".into(),
            ));
        }
        let n = req.variants.len();
        if !(MIN_VARIANTS..=MAX_VARIANTS).contains(&n) {
            return Err(EngineError::Invalid(format!(
                "variants holds {n}; best of N races {MIN_VARIANTS} to {MAX_VARIANTS} agents"
            )));
        }
        if req.isolation == Some(Isolation::None) {
            return Err(EngineError::Invalid(
                "each variant runs in its own worktree, so isolation \"none\" cannot go with variants".into(),
            ));
        }
        for (i, v) in req.variants.iter().enumerate() {
            let at = |e: EngineError| match e {
                EngineError::Invalid(m) => EngineError::Invalid(format!("variants[{i}]: {m}")),
                other => other,
            };
            let provider = self.resolve_provider(Some(&v.provider_id)).map_err(at)?;
            self.check_description(&provider, &req.description)
                .map_err(at)?;
            self.ensure_task_provider(&provider).map_err(at)?;
        }
        self.check_parent(req.parent_task_id.as_deref())?;
        let working_directory = self.resolve_dir(req.working_directory.as_deref())?;
        // The base once, now: every variant starts from this commit even if the branch moves.
        let base = {
            let dir = PathBuf::from(&working_directory);
            let base_ref = req.base_ref.clone();
            tokio::task::spawn_blocking(move || git::worktree::plan(&dir, base_ref.as_deref()))
                .await
                .map_err(|e| EngineError::Internal(e.to_string()))?
                .map_err(|e| {
                    EngineError::Invalid(format!(
                        "variants need a git repository with a commit, since each runs in its own worktree: {e}"
                    ))
                })?
        };
        let labels = variant_labels(&req.variants);
        let parent = self
            .insert_task(
                NewTask {
                    name: req.name.clone(),
                    description: req.description.clone(),
                    provider_id: req.variants[0].provider_id.clone(),
                    working_directory: working_directory.clone(),
                    required_capabilities: req.required_capabilities.clone(),
                    retry_of: None,
                    approval: req.approval,
                    parent_task_id: req.parent_task_id.clone(),
                    answers: req.answers.unwrap_or_default(),
                    delegate: false,
                    // The checks are each variant's: the parent has no worktree to run them in.
                    checks: Vec::new(),
                    max_attempts: None,
                    check_timeout_seconds: None,
                    variants: req.variants.clone(),
                    variant: None,
                },
                Placement::default(),
            )
            .await?;
        self.mutate(&parent.id, |t| {
            t.metadata.steps = labels
                .iter()
                .map(|l| Step {
                    id: variant_step_id(l),
                    description: format!("variant {l}"),
                    status: StepStatus::Pending,
                    output: None,
                })
                .chain([Step {
                    id: PICK_STEP.into(),
                    description: PICK_STEP_TEXT.into(),
                    status: StepStatus::Pending,
                    output: None,
                }])
                .collect();
            Ok((vec![(TaskEventKind::Step, vec![])], ()))
        })
        .await?;
        for (spec, label) in req.variants.iter().zip(&labels) {
            let delegate = self.delegate_for(&spec.provider_id, req.delegate);
            let child = NewTask {
                name: format!("{} · {label}", req.name),
                description: req.description.clone(),
                provider_id: spec.provider_id.clone(),
                working_directory: working_directory.clone(),
                required_capabilities: req.required_capabilities.clone(),
                retry_of: None,
                approval: spec.approval.or(req.approval),
                parent_task_id: Some(parent.id.clone()),
                answers: req.answers.unwrap_or_default(),
                delegate,
                checks: req.checks.clone(),
                max_attempts: req.max_attempts,
                check_timeout_seconds: req.check_timeout_seconds,
                variants: Vec::new(),
                variant: Some(label.clone()),
            };
            let placement = Placement {
                isolation: Isolation::Worktree,
                base_ref: Some(base.branch.clone()),
                base_commit: Some(base.commit.clone()),
            };
            if let Err(e) = self.insert_task(child, placement).await {
                let why = format!("could not create variant {label}: {e}");
                self.end_if_open(&parent.id, TaskStatus::Failed, &why)
                    .await?;
                return Err(e);
            }
        }
        self.get_task(&parent.id)
    }

    /// Starting a parent: it runs (no agent of its own) and its pending variants become the
    /// dispatcher's to start, within the concurrency limit.
    pub(super) async fn start_variant_parent(&self, id: &str) -> EngineResult<Arc<Task>> {
        let (_, _claim) = self.claim_start(id)?;
        let task = self.move_task(id, TaskStatus::Running, None).await?;
        self.inner.dispatch.notify_one();
        self.sync_variant_parent(id).await;
        self.get_task(id).or(Ok(task))
    }

    /// Whether the dispatcher may start this pending task even with autopilot off: a variant
    /// whose parent runs. A variant of a parent not running waits for it either way.
    pub(super) fn released_variant(&self, task: &Task) -> Option<bool> {
        task.metadata.variant.as_ref()?;
        let parent = task.metadata.parent_task_id.as_deref()?;
        Some(
            self.get_task(parent)
                .is_ok_and(|p| p.status() == TaskStatus::Running),
        )
    }

    /// After a variant changed: its parent's steps follow when the status they mirror moved.
    pub(super) fn variant_changed(&self, task: &Task) {
        let (Some(label), Some(parent)) = (
            task.metadata.variant.as_deref(),
            task.metadata.parent_task_id.as_deref(),
        ) else {
            return;
        };
        let behind = self.get_task(parent).is_ok_and(|p| {
            !p.status().is_final()
                && p.metadata
                    .steps
                    .iter()
                    .find(|s| s.id == variant_step_id(label))
                    .is_some_and(|s| s.status != step_of(task.status()))
        });
        if behind {
            let engine = self.clone();
            let parent = parent.to_string();
            tokio::spawn(async move { engine.sync_variant_parent(&parent).await });
        }
    }

    /// The parent's steps and progress as its variants stand: one step per variant, then
    /// "pick a variant", running once every variant has finished.
    async fn sync_variant_parent(&self, id: &str) {
        let children: Vec<_> = self
            .children_of(id)
            .into_iter()
            .filter(|c| c.metadata.variant.is_some())
            .collect();
        let synced = self
            .mutate(id, |t| {
                if t.status().is_final() || !t.metadata.is_variant_parent() {
                    return Ok((vec![], ()));
                }
                let mut changed = false;
                // Oldest first: a variant run again stands for its label.
                for c in &children {
                    let label = c.metadata.variant.as_deref().unwrap_or_default();
                    if let Some(step) = t.step_mut(&variant_step_id(label))
                        && step.status != step_of(c.status())
                    {
                        step.status = step_of(c.status());
                        changed = true;
                    }
                }
                let finished = children.iter().filter(|c| c.status().is_final()).count();
                let all_done = !children.is_empty() && finished == children.len();
                let pick = if all_done && t.status() == TaskStatus::Running {
                    StepStatus::Running
                } else {
                    StepStatus::Pending
                };
                if let Some(step) = t.step_mut(PICK_STEP)
                    && step.status != pick
                {
                    step.status = pick;
                    changed = true;
                }
                let progress = (finished * 100 / (children.len() + 1)) as f64;
                if let Some(p) = Progress::new(progress)
                    && t.metadata.progress != p
                {
                    t.metadata.progress = p;
                    changed = true;
                }
                Ok((
                    if changed {
                        vec![(TaskEventKind::Step, vec![])]
                    } else {
                        vec![]
                    },
                    (),
                ))
            })
            .await;
        if let Err(e) = synced {
            tracing::debug!(task = id, error = %e, "a best-of-N parent's steps were left as they were");
        }
    }

    /// Merges the variant `which` (a label or a task id) of parent `id` and discards the
    /// others, then completes the parent naming it. Under the one finishing lock, so a pick
    /// racing another pick, a merge or a discard: exactly one wins.
    pub async fn pick_variant(&self, id: &str, which: &str) -> EngineResult<PickOutcome> {
        let _one = self.inner.finishing.lock().await;
        let parent = self.get_task(id)?;
        if !parent.metadata.is_variant_parent() {
            return Err(EngineError::Conflict(format!(
                "task {:?} is not a best-of-N parent: it has no variants to pick from (merge it instead)",
                parent.name
            )));
        }
        if parent.status().is_final() {
            let picked = parent
                .metadata
                .result
                .as_ref()
                .map(|r| format!(" ({})", r.summary))
                .unwrap_or_default();
            return Err(EngineError::Conflict(format!(
                "task is {}; its variants were already settled{picked}",
                parent.status()
            )));
        }
        let children: Vec<_> = self
            .children_of(id)
            .into_iter()
            .filter(|c| c.metadata.variant.is_some())
            .collect();
        let label_of = |t: &Task| t.metadata.variant.clone().unwrap_or_default();
        // The newest run of a label stands for it (a variant may have been run again).
        let chosen = children
            .iter()
            .rev()
            .find(|c| c.id == which || label_of(c) == which)
            .cloned()
            .ok_or_else(|| {
                let mut labels: Vec<_> = children.iter().map(|c| label_of(c)).collect();
                labels.dedup();
                EngineError::NotFound(format!(
                    "no variant {which:?}; the variants are {}",
                    labels.join(", ")
                ))
            })?;
        if let Some(open) = children.iter().find(|c| !c.status().is_final()) {
            return Err(EngineError::Conflict(format!(
                "variant {} is still {}; wait for it or cancel it",
                label_of(open),
                open.status()
            )));
        }
        let label = label_of(&chosen);
        // A conflict (or the user's changes in the way) refuses here, before any discard.
        let (picked, merged) = self.merge_holding_finish(&chosen.id).await?;
        let mut discarded = Vec::new();
        for other in children.iter().filter(|c| c.id != chosen.id) {
            if !other
                .metadata
                .worktree
                .as_ref()
                .is_some_and(|w| w.is_live())
            {
                continue;
            }
            match self.discard_holding_finish(&other.id).await {
                Ok(t) => discarded.push(DiscardedVariant {
                    variant: label_of(other),
                    task_id: other.id.clone(),
                    snapshot_ref: git::snapshot::snapshot_ref(&other.id),
                    snapshot: t
                        .metadata
                        .worktree
                        .as_ref()
                        .filter(|w| w.outcome == Some(WorktreeOutcome::Discarded))
                        .and_then(|w| w.snapshot.clone()),
                }),
                // Its worktree stays live; the user may discard it by hand.
                Err(e) => {
                    tracing::warn!(task = %other.id, error = %e, "a variant not picked could not be discarded")
                }
            }
        }
        let result = pick_result(&picked, &label, &merged);
        let parent = self.finish_variant_parent(id, result).await?;
        tracing::info!(task = id, variant = %label, commit = %merged.commit, "variant picked");
        Ok(PickOutcome {
            parent,
            label,
            picked_task_id: chosen.id.clone(),
            merged,
            discarded,
        })
    }

    async fn finish_variant_parent(&self, id: &str, result: TaskResult) -> EngineResult<Arc<Task>> {
        let mut result = result;
        result.children = self.child_outcomes(id);
        let (task, ()) = self
            .mutate(id, |t| {
                if let Some(step) = t.step_mut(PICK_STEP) {
                    step.status = StepStatus::Completed;
                }
                t.finish_with(result, now_ms())?;
                Ok((vec![(TaskEventKind::Completed, vec![])], ()))
            })
            .await?;
        Ok(task)
    }
}

/// The parent's result: the picked variant named, with its summary and files.
fn pick_result(picked: &Task, label: &str, merged: &Merged) -> TaskResult {
    let own = picked.metadata.result.as_ref();
    let summary = own
        .map(|r| r.summary.trim())
        .filter(|s| !s.is_empty())
        .map(|s| format!("picked variant {label}: {s}"))
        .unwrap_or_else(|| format!("picked variant {label}"));
    let (modified, created) = match own {
        Some(r) if !(r.files_modified.is_empty() && r.files_created.is_empty()) => {
            (r.files_modified.clone(), r.files_created.clone())
        }
        _ => (merged.files.clone(), Vec::new()),
    };
    TaskResult {
        success: true,
        summary,
        files_modified: modified,
        files_created: created,
        error: None,
        children: Vec::new(),
        checks: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(p: &str) -> VariantSpec {
        VariantSpec {
            provider_id: p.into(),
            approval: None,
        }
    }

    #[test]
    fn a_repeated_provider_is_numbered_from_its_second_run() {
        let labels = variant_labels(&[spec("codex"), spec("claude"), spec("codex"), spec("codex")]);
        assert_eq!(labels, ["codex", "claude", "codex-2", "codex-3"]);
    }

    #[test]
    fn a_variant_step_mirrors_its_task() {
        assert_eq!(step_of(TaskStatus::Cancelled), StepStatus::Cancelled);
        assert_eq!(step_of(TaskStatus::Running), StepStatus::Running);
    }
}
