//! Task operations. Each mutation runs under the task's own lock on a copy of the task,
//! is made durable, and only then becomes visible and is published: a failed write leaves
//! the task exactly as it was, and concurrent writers never see a half-applied change.

use super::{
    Engine, EngineError, EngineResult, Event, TaskEventKind, TaskSlot, now_ms, read,
    version_record, write,
};
use orchestra_proto::task::{
    Isolation, NewTask, Progress, Step, StepStatus, Task, TaskResult, TaskStatus, text_lines,
};
// The API's `NewTask` (what a client asks for) under another name here: the task model's
// `NewTask` is what the engine makes of it.
use orchestra_proto::wire::request::{NewTask as TaskRequest, TaskChange};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a task's new output lines may stay in memory only (see
/// `Engine::persist_output_later`).
const OUTPUT_SAVE_DELAY: Duration = Duration::from_secs(2);

/// When a task's change reaches the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Before the change is visible or acknowledged.
    Now,
    /// Within `OUTPUT_SAVE_DELAY` (output lines only: they are also in the transcript).
    Later,
}

/// Where a new task will run: in its own worktree (from which base branch) or not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placement {
    pub isolation: Isolation,
    pub base_ref: Option<String>,
    /// The commit its worktree starts from, when fixed at creation (variants).
    pub base_commit: Option<String>,
}

/// A partial update of a task's status, progress and error, and (while it is pending) of
/// its name and description.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskPatch {
    pub status: Option<TaskStatus>,
    pub progress: Option<Progress>,
    pub error: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
}

impl TaskPatch {
    fn edits_text(&self) -> bool {
        self.name.is_some() || self.description.is_some()
    }
}

/// The events a status move publishes.
fn move_event(from: TaskStatus, to: TaskStatus) -> TaskEventKind {
    match to {
        TaskStatus::Running if from == TaskStatus::Paused => TaskEventKind::Resumed,
        TaskStatus::Running => TaskEventKind::Started,
        TaskStatus::Paused => TaskEventKind::Paused,
        TaskStatus::Completed => TaskEventKind::Completed,
        TaskStatus::Failed => TaskEventKind::Failed,
        TaskStatus::Cancelled => TaskEventKind::Cancelled,
        TaskStatus::Pending => TaskEventKind::Progress,
    }
}

/// A best-of-N parent runs no agent, so it cannot be run again or continued: a new request
/// with the same variants can.
pub(super) fn refuse_for_variant_parent(task: &Task, verb: &str) -> EngineResult<()> {
    if task.metadata.is_variant_parent() {
        return Err(EngineError::Conflict(format!(
            "task is a best-of-N parent; it runs no agent of its own, so it cannot be {verb}: create a new one with the same variants"
        )));
    }
    Ok(())
}

fn not_found(id: &str) -> EngineError {
    EngineError::NotFound(format!("no task with id {id:?}"))
}

impl Engine {
    /// Checks a working directory and makes it absolute; `None` means the default.
    pub fn resolve_dir(&self, dir: Option<&str>) -> EngineResult<String> {
        let Some(dir) = dir else {
            return Ok(self.config().working_dir.to_string_lossy().into_owned());
        };
        if dir.is_empty() {
            return Err(EngineError::Invalid(
                "workingDirectory must not be empty".into(),
            ));
        }
        let p = Path::new(dir);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.config().working_dir.join(p)
        };
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => Ok(p.canonicalize().unwrap_or(p).to_string_lossy().into_owned()),
            Ok(_) => Err(EngineError::Invalid(format!(
                "workingDirectory {dir:?} is not a directory"
            ))),
            Err(_) => Err(EngineError::Invalid(format!(
                "workingDirectory {dir:?} does not exist"
            ))),
        }
    }

    pub(super) fn resolve_provider(&self, id: Option<&str>) -> EngineResult<String> {
        match id {
            Some(id) if self.providers().get(id).is_some() => Ok(id.to_string()),
            Some(id) => Err(EngineError::Invalid(format!(
                "unknown providerId {id:?}; known providers: {}",
                self.providers().ids().join(", ")
            ))),
            None => Ok(self.providers().default_for_task()),
        }
    }

    /// Providers that get the description as their instruction need one; a plain shell
    /// just starts without it.
    pub(super) fn check_description(
        &self,
        provider_id: &str,
        description: &str,
    ) -> EngineResult<()> {
        let needed = self
            .providers()
            .get(provider_id)
            .is_none_or(|p| p.needs_instruction());
        if needed && description.trim().is_empty() {
            return Err(EngineError::Invalid(format!(
                "description must be a non-empty string: provider {provider_id:?} runs it"
            )));
        }
        Ok(())
    }

    pub async fn create_task(&self, req: TaskRequest) -> EngineResult<Arc<Task>> {
        if !req.variants.is_empty() {
            return self.create_variants(req).await;
        }
        if req.name.trim().is_empty() {
            return Err(EngineError::Invalid(
                "name must be a non-empty string".into(),
            ));
        }
        let provider_id = self.resolve_provider(req.provider_id.as_deref())?;
        self.check_description(&provider_id, &req.description)?;
        self.check_parent(req.parent_task_id.as_deref())?;
        let delegate = self.delegate_for(&provider_id, req.delegate);
        let working_directory = self.resolve_dir(req.working_directory.as_deref())?;
        let placement = self
            .resolve_isolation(
                &provider_id,
                &working_directory,
                req.isolation,
                req.base_ref,
            )
            .await?;
        self.insert_task(
            NewTask {
                name: req.name,
                description: req.description,
                provider_id,
                working_directory,
                required_capabilities: req.required_capabilities,
                retry_of: None,
                approval: req.approval,
                parent_task_id: req.parent_task_id,
                answers: req.answers.unwrap_or_default(),
                delegate,
                checks: req.checks,
                max_attempts: req.max_attempts,
                check_timeout_seconds: req.check_timeout_seconds,
                variants: req.variants,
                variant: None,
            },
            placement,
        )
        .await
    }

    /// A `parentTaskId` must name a task.
    pub(super) fn check_parent(&self, parent: Option<&str>) -> EngineResult<()> {
        match parent {
            Some(parent) => self.slot(parent).map(|_| ()).map_err(|_| {
                EngineError::Invalid(format!("parentTaskId {parent:?}: no task has that id"))
            }),
            None => Ok(()),
        }
    }

    /// Whether a task's agent gets orchestra's MCP server: as asked, else its provider's
    /// `delegate` setting.
    pub(super) fn delegate_for(&self, provider_id: &str, asked: Option<bool>) -> bool {
        asked.unwrap_or_else(|| {
            self.providers()
                .get(provider_id)
                .is_some_and(|p| p.delegate)
        })
    }

    /// Refuses (503) a task whose provider is known but not installed here.
    pub(crate) fn ensure_task_provider(&self, provider_id: &str) -> EngineResult<()> {
        match self.providers().get(provider_id) {
            Some(p) => super::sessions::ensure_installed(p),
            None => Ok(()),
        }
    }

    pub(super) async fn insert_task(
        &self,
        spec: NewTask,
        placement: Placement,
    ) -> EngineResult<Arc<Task>> {
        // A best-of-N parent runs no agent: its provider need not be installed.
        if spec.variants.is_empty() {
            self.ensure_task_provider(&spec.provider_id)?;
        }
        let mut task = Task::new(uuid::Uuid::new_v4().to_string(), spec, now_ms());
        task.metadata.isolation = placement.isolation;
        task.metadata.base_ref = placement.base_ref;
        task.metadata.base_commit = placement.base_commit;
        let seq = self.next_seq();
        let task = Arc::new(task);
        self.store().put(vec![version_record(&task, seq)]).await?;
        let slot = Arc::new(TaskSlot::new(seq, task.clone()));
        {
            let mut table = write(&self.inner.tasks);
            table.by_id.insert(task.id.clone(), slot.clone());
            // Seqs are handed out before the await above, so keep `order` sorted.
            let at = table.order.partition_point(|s| s.seq < seq);
            table.order.insert(at, slot);
        }
        self.publish(Event::Task {
            kind: TaskEventKind::Created,
            task: task.clone(),
            lines: Arc::default(),
        });
        self.task_changed(&task);
        Ok(task)
    }

    pub(super) fn slot(&self, id: &str) -> EngineResult<Arc<TaskSlot>> {
        read(&self.inner.tasks)
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    pub fn get_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        Ok(self.slot(id)?.get())
    }

    /// Newest first, optionally only one status, at most `limit`.
    pub fn list_tasks(&self, status: Option<TaskStatus>, limit: Option<usize>) -> Vec<Arc<Task>> {
        let table = read(&self.inner.tasks);
        table
            .order
            .iter()
            .rev()
            .map(|s| s.get())
            .filter(|t| status.is_none_or(|st| t.status() == st))
            .take(limit.unwrap_or(usize::MAX))
            .collect()
    }

    /// Oldest first: the order autopilot dispatches in.
    pub fn tasks_oldest_first(&self) -> Vec<Arc<Task>> {
        read(&self.inner.tasks)
            .order
            .iter()
            .map(|s| s.get())
            .collect()
    }

    /// Applies `change` to a copy of the task under its lock, persists, then publishes.
    /// `change` returns the events to publish and a value for the caller.
    pub(crate) async fn mutate<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Task) -> EngineResult<(Vec<(TaskEventKind, Vec<String>)>, R)>,
    ) -> EngineResult<(Arc<Task>, R)> {
        self.mutate_as(id, Durability::Now, change).await
    }

    /// `mutate`, written to the database now (acknowledged once durable) or later.
    pub(crate) async fn mutate_as<R>(
        &self,
        id: &str,
        durability: Durability,
        change: impl FnOnce(&mut Task) -> EngineResult<(Vec<(TaskEventKind, Vec<String>)>, R)>,
    ) -> EngineResult<(Arc<Task>, R)> {
        let slot = self.slot(id)?;
        let _serialised = slot.change.lock().await;
        if slot.is_gone() {
            return Err(not_found(id));
        }
        let mut task = (*slot.get()).clone();
        let (events, out) = change(&mut task)?;
        if events.is_empty() {
            return Ok((slot.get(), out));
        }
        let task = Arc::new(task);
        match durability {
            Durability::Now => {
                self.store()
                    .put(vec![version_record(&task, slot.seq)])
                    .await?;
            }
            Durability::Later => self.persist_output_later(&slot),
        }
        slot.set(task.clone());
        for (kind, lines) in events {
            self.publish(Event::Task {
                kind,
                task: task.clone(),
                lines: Arc::new(lines),
            });
        }
        self.task_changed(&task);
        Ok((task, out))
    }

    /// Writes the task's output lines to the database within [`OUTPUT_SAVE_DELAY`], once
    /// for however many batches arrive meanwhile. A flooding agent's output used to rewrite
    /// its task (2,000 lines) and wait for an fsync four times a second; sixteen of them
    /// kept the store's writer busy and made every acknowledged write (a message, a status)
    /// queue behind output. Output lines are also in the session's transcript, so a crash
    /// loses at most the newest lines from the task's copy, never an acknowledged write.
    fn persist_output_later(&self, slot: &Arc<TaskSlot>) {
        if slot.output_unsaved.swap(true, Ordering::SeqCst) {
            return;
        }
        let engine = self.clone();
        let slot = slot.clone();
        tokio::spawn(async move {
            let mut closing = std::pin::pin!(engine.closing());
            tokio::select! {
                _ = tokio::time::sleep(OUTPUT_SAVE_DELAY) => {}
                // Shutdown writes what is unsaved itself (`save_all_unsaved_output`).
                _ = &mut closing => return,
            }
            engine.save_unsaved_output(&slot).await;
        });
    }

    /// Queues the task's current state when its output is unsaved (under its lock, so the
    /// write is never older than one already queued, and never brings a deleted task back).
    async fn save_unsaved_output(&self, slot: &Arc<TaskSlot>) {
        let _serialised = slot.change.lock().await;
        if !slot.output_unsaved.swap(false, Ordering::SeqCst) || slot.is_gone() {
            return;
        }
        self.store()
            .put_later(vec![version_record(&slot.get(), slot.seq)]);
    }

    /// Queues every task whose output is not saved yet (at shutdown, before the last flush).
    pub(crate) async fn save_all_unsaved_output(&self) {
        let slots: Vec<Arc<TaskSlot>> = read(&self.inner.tasks).order.to_vec();
        for slot in slots {
            if slot.output_unsaved.load(Ordering::SeqCst) {
                self.save_unsaved_output(&slot).await;
            }
        }
    }

    /// Moves a task's status, with the events that implies. No session is touched here.
    pub(crate) async fn move_task(
        &self,
        id: &str,
        to: TaskStatus,
        error: Option<String>,
    ) -> EngineResult<Arc<Task>> {
        let (task, ()) = self
            .mutate(id, |t| {
                let from = t.status();
                t.move_to(to, now_ms())?;
                if let Some(e) = error {
                    t.metadata.error = Some(e);
                }
                Ok((vec![(move_event(from, to), vec![])], ()))
            })
            .await?;
        Ok(task)
    }

    /// Ends a task still open as `to` (failed or cancelled), with `why` as its error; one that
    /// ended meanwhile is left as it ended.
    pub(crate) async fn end_if_open(
        &self,
        id: &str,
        to: TaskStatus,
        why: &str,
    ) -> EngineResult<()> {
        self.mutate(id, |t| {
            if t.status().is_final() {
                return Ok((vec![], ()));
            }
            let from = t.status();
            t.move_to(to, now_ms())?;
            t.metadata.error = Some(why.to_string());
            Ok((vec![(move_event(from, to), vec![])], ()))
        })
        .await
        .map(|_| ())
    }

    /// PATCH: status along the machine, progress 0–100, error. Status changes of a task that
    /// runs in a session act on the session (pause, resume, cancel).
    /// Applies a `PATCH /tasks/:id`: text edits (while pending), then a status move (acting
    /// on the agent where the move means it), then progress and error.
    pub async fn patch_task(&self, id: &str, change: TaskChange) -> EngineResult<Arc<Task>> {
        if change.edits_settings() {
            // Settings first and alone, like text edits: they need the task still pending.
            self.edit_task_settings(id, &change).await?;
            let rest = TaskChange {
                status: change.status,
                progress: change.progress,
                error: change.error.clone(),
                name: change.name.clone(),
                description: change.description.clone(),
                ..Default::default()
            };
            if rest == TaskChange::default() {
                return self.get_task(id);
            }
        }
        let progress = change
            .progress
            .map(|p| {
                Progress::new(p).ok_or_else(|| {
                    EngineError::Invalid(format!(
                        "progress must be a number from 0 to 100, not {p}"
                    ))
                })
            })
            .transpose()?;
        self.apply_patch(
            id,
            TaskPatch {
                status: change.status,
                progress,
                error: change.error,
                name: change.name,
                description: change.description,
            },
        )
        .await
    }

    async fn apply_patch(&self, id: &str, mut patch: TaskPatch) -> EngineResult<Arc<Task>> {
        let current = self.get_task(id)?;
        match patch.status {
            Some(TaskStatus::Paused) => self.refuse_while_checking(id, "paused")?,
            Some(TaskStatus::Completed) if !current.metadata.checks.is_empty() => {
                return Err(EngineError::Conflict(
                    "a task with checks is completed only when they pass: report its result (POST /tasks/:id/result) to run them".into(),
                ));
            }
            Some(TaskStatus::Failed) => self.refuse_while_checking(id, "failed by hand")?,
            _ => {}
        }
        if patch.edits_text() {
            // Text edits first and alone: they need the task still pending.
            self.edit_task_text(id, patch.name.take(), patch.description.take())
                .await?;
            if patch.status.is_none() && patch.progress.is_none() && patch.error.is_none() {
                return self.get_task(id);
            }
        }
        if let Some(to) = patch.status
            && to != current.status()
            && current.metadata.session_id.is_some()
        {
            let acted = match to {
                TaskStatus::Paused => Some(self.pause_task(id).await?),
                TaskStatus::Running if current.status() == TaskStatus::Paused => {
                    Some(self.resume_task(id).await?)
                }
                TaskStatus::Cancelled => Some(self.cancel_task(id).await?),
                _ => None,
            };
            if let Some(task) = acted {
                patch.status = None;
                if patch.progress.is_none() && patch.error.is_none() {
                    return Ok(task);
                }
            }
        }
        let (task, ()) = self
            .mutate(id, |t| {
                t.ensure_open()?;
                let mut events = Vec::new();
                if let Some(to) = patch.status
                    && to != t.status()
                {
                    if to == TaskStatus::Paused {
                        super::runs::refuse_pause_before_agent(t)?;
                    }
                    let from = t.status();
                    t.move_to(to, now_ms())?;
                    events.push((move_event(from, to), vec![]));
                }
                if let Some(p) = patch.progress
                    && t.status() != TaskStatus::Completed
                {
                    t.metadata.progress = p;
                    events.push((TaskEventKind::Progress, vec![]));
                }
                if let Some(e) = patch.error {
                    t.metadata.error = Some(e);
                    if events.is_empty() {
                        events.push((TaskEventKind::Progress, vec![]));
                    }
                }
                if events.is_empty() && patch.progress.is_some() {
                    events.push((TaskEventKind::Progress, vec![]));
                }
                Ok((events, ()))
            })
            .await?;
        Ok(task)
    }

    /// Renames a pending task or changes its description (`task:updated`).
    async fn edit_task_text(
        &self,
        id: &str,
        name: Option<String>,
        description: Option<String>,
    ) -> EngineResult<Arc<Task>> {
        if name.as_ref().is_some_and(|n| n.trim().is_empty()) {
            return Err(EngineError::Invalid(
                "name must be a non-empty string".into(),
            ));
        }
        if let Some(d) = &description {
            self.check_description(&self.get_task(id)?.metadata.provider_id, d)?;
        }
        let (task, ()) = self
            .mutate(id, |t| {
                if t.status() != TaskStatus::Pending {
                    return Err(EngineError::Conflict(format!(
                        "task is {}; only a pending task's name and description can be edited",
                        t.status()
                    )));
                }
                let mut changed = false;
                if let Some(n) = name
                    && n != t.name
                {
                    t.name = n;
                    changed = true;
                }
                if let Some(d) = description
                    && d != t.description
                {
                    t.description = d;
                    changed = true;
                }
                let events = if changed {
                    vec![(TaskEventKind::Updated, vec![])]
                } else {
                    vec![]
                };
                Ok((events, ()))
            })
            .await?;
        Ok(task)
    }

    pub async fn append_output(&self, id: &str, text: &str) -> EngineResult<Arc<Task>> {
        let lines = text_lines(text);
        let (task, ()) = self
            .mutate(id, |t| {
                t.ensure_open()?;
                if lines.is_empty() {
                    return Ok((vec![], ()));
                }
                t.append_output_lines(lines.iter().cloned());
                Ok((vec![(TaskEventKind::Output, lines)], ()))
            })
            .await?;
        Ok(task)
    }

    pub async fn add_step(&self, id: &str, description: &str) -> EngineResult<(Arc<Task>, Step)> {
        if description.trim().is_empty() {
            return Err(EngineError::Invalid(
                "description must be a non-empty string".into(),
            ));
        }
        self.mutate(id, |t| {
            t.ensure_open()?;
            let step = Step {
                id: uuid::Uuid::new_v4().to_string(),
                description: description.to_string(),
                status: StepStatus::Pending,
                output: None,
            };
            t.metadata.steps.push(step.clone());
            Ok((vec![(TaskEventKind::Step, vec![])], step))
        })
        .await
    }

    pub async fn update_step(
        &self,
        id: &str,
        step_id: &str,
        status: StepStatus,
        output: Option<String>,
    ) -> EngineResult<(Arc<Task>, Step)> {
        if status == StepStatus::Cancelled {
            // A running check's step: the check stops, and the task fails saying so.
            self.cancel_check_step(id, step_id);
        }
        self.mutate(id, |t| {
            if t.step_mut(step_id).is_none() {
                return Err(EngineError::NotFound(format!(
                    "task {id:?} has no step with id {step_id:?}"
                )));
            }
            t.ensure_open()?;
            let step = t.step_mut(step_id).ok_or_else(|| {
                EngineError::NotFound(format!("task {id:?} has no step with id {step_id:?}"))
            })?;
            step.status = status;
            if output.is_some() {
                step.output = output;
            }
            let step = step.clone();
            Ok((vec![(TaskEventKind::Step, vec![])], step))
        })
        .await
    }

    /// Sets the result and finishes the task. A session still running it is left alone:
    /// the agent reported that it is done, and its session stays open to follow up in. A
    /// success of a task with checks runs them instead (`checks.rs`): the task stays running
    /// and they decide it.
    pub async fn set_result(&self, id: &str, mut result: TaskResult) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        task.ensure_open()?;
        if self.checks_decide(&task, result.clone())? {
            return self.get_task(id);
        }
        self.fill_result_files(id, &mut result).await;
        // A parent's outcome says what became of the work it handed out.
        if result.children.is_empty() {
            result.children = self.child_outcomes(id);
        }
        let (task, ()) = self
            .mutate(id, |t| {
                let from = t.status();
                t.finish_with(result, now_ms())?;
                Ok((vec![(move_event(from, t.status()), vec![])], ()))
            })
            .await?;
        Ok(task)
    }

    /// A new pending task like a finished one (a retry, or a rerun of a completed one),
    /// linked to it by `retryOf`.
    pub async fn retry_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        // Not while it is being continued: one of the two wins.
        let (old, _claim) = self.claim_finished(id, "run again")?;
        refuse_for_variant_parent(&old, "run again")?;
        self.insert_task(
            NewTask {
                name: old.name.clone(),
                description: old.description.clone(),
                provider_id: old.metadata.provider_id.clone(),
                working_directory: old.metadata.working_directory.clone(),
                required_capabilities: old.metadata.required_capabilities.clone(),
                retry_of: Some(old.id.clone()),
                approval: old.metadata.approval,
                // A run again is still its parent's work, asked and equipped the same.
                parent_task_id: old.metadata.parent_task_id.clone(),
                answers: old.metadata.answers,
                delegate: old.metadata.delegate,
                // Its proof of done and its place among variants are the same too.
                checks: old.metadata.checks.clone(),
                max_attempts: old.metadata.max_attempts,
                check_timeout_seconds: old.metadata.check_timeout_seconds,
                variants: old.metadata.variants.clone(),
                variant: old.metadata.variant.clone(),
            },
            // A run again gets a fresh worktree from the same base; the old one stays.
            Placement {
                isolation: old.metadata.isolation,
                base_ref: old.metadata.base_ref.clone(),
                base_commit: old.metadata.base_commit.clone(),
            },
        )
        .await
    }

    /// Counts by status, for the status routes and the TUI's bar.
    pub fn task_counts(&self) -> std::collections::BTreeMap<TaskStatus, usize> {
        let mut counts: std::collections::BTreeMap<TaskStatus, usize> =
            TaskStatus::ALL.iter().map(|s| (*s, 0)).collect();
        for slot in read(&self.inner.tasks).order.iter() {
            *counts.entry(slot.get().status()).or_default() += 1;
        }
        counts
    }
}
