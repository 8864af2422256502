//! Tasks run on sessions: start spawns the task's agent, pause/resume/cancel act on it, and
//! the task follows its session's output and exit.

use super::gitfiles::GitSnapshot;
use super::repo_file::{RepoPlan, plan_for};
use super::sessions::{SessionEntry, SpawnSession};
use super::setup::check_copies;
use super::status::SessionStatus;
use super::tasks::Durability;
use super::{Engine, EngineError, EngineResult, RunState, STOPPED_BY_API, TaskEventKind, now_ms};
use crate::session::ExitInfo;
use orchestra_proto::task::{Isolation, OUTPUT_LINES_KEPT, Task, TaskResult, TaskStatus};
use orchestra_proto::wire::TrustRequest;
use orchestra_proto::wire::{ProviderInfo, STARTED_ELSEWHERE, SessionInfo};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// How a process ended, as a task's error says it.
fn exit_sentence(exit: &ExitInfo) -> String {
    match (&exit.code, &exit.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended without an exit status".into(),
    }
}

/// The request a continue without a message gives the agent.
pub const DEFAULT_CONTINUE_MESSAGE: &str = "Continue where you left off.";

fn conflict(task: &Task, wanted: &str) -> EngineError {
    EngineError::Conflict(format!("task is {}; {wanted}", task.status()))
}

/// A task whose agent orchestra has not started yet (it waits on the user's trust, or is
/// being set up after it) has nothing to pause.
pub(super) fn refuse_pause_before_agent(task: &Task) -> EngineResult<()> {
    if task.awaits_trust() {
        let why = if task.metadata.prompt.is_some() {
            "it waits for you to trust its repository's file; answer the question or cancel it"
        } else {
            "its agent is being started; pause it once it runs"
        };
        return Err(EngineError::Conflict(format!(
            "task cannot be paused: {why}"
        )));
    }
    Ok(())
}

/// What a starting task's repository asks before its agent runs (see `Engine::repo_step`).
pub(super) enum RepoStep {
    /// Nothing, or a set-up that may run and checks the task takes on (the user's own, or
    /// ones they trusted).
    Go(Option<RepoPlan>),
    /// The user's trust in this file first.
    Ask(TrustRequest),
}

/// Where a launch starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Launch {
    /// A pending task, claimed by its starter.
    Pending,
    /// A running task that waited on the user's trust and got it.
    AfterTrust,
}

/// One starter's exclusive right to start a pending task, taken before anything is spawned
/// and given back when dropped: by then the task is running, or the start failed and another
/// may try. Autopilot, the TUI, the API and the CLI all start through it, so each run gets
/// exactly one session.
pub(super) struct StartClaim {
    engine: Engine,
    id: String,
}

impl Drop for StartClaim {
    fn drop(&mut self) {
        self.engine.inner.starting.lock().remove(&self.id);
    }
}

impl Engine {
    /// Claims a pending task for this starter, or says why it cannot be started. Whoever
    /// asks first wins; the others learn that it was started elsewhere.
    pub(super) fn claim_start(&self, id: &str) -> EngineResult<(Arc<Task>, StartClaim)> {
        let mut starting = self.inner.starting.lock();
        // Read under the claim lock: a claim is released only after its task left pending.
        let task = self.get_task(id)?;
        match task.status() {
            TaskStatus::Pending if starting.contains(&task.id) => Err(EngineError::Conflict(
                format!("task is being started ({STARTED_ELSEWHERE})"),
            )),
            TaskStatus::Pending => {
                starting.insert(task.id.clone());
                let claim = StartClaim {
                    engine: self.clone(),
                    id: task.id.clone(),
                };
                Ok((task, claim))
            }
            TaskStatus::Running | TaskStatus::Paused => Err(EngineError::Conflict(format!(
                "task is already {} ({STARTED_ELSEWHERE})",
                task.status()
            ))),
            _ => Err(conflict(&task, "only a pending task can be started")),
        }
    }

    /// The live session running a task, if it has one.
    pub(super) fn task_session(&self, task: &Task) -> Option<Arc<SessionEntry>> {
        let sid = task.metadata.session_id.as_deref()?;
        let entry = self.session_entry(sid).ok()?;
        (!entry.info.lock().ended && entry.pty.is_some()).then_some(entry)
    }

    /// Runs a pending task on a session of its provider, in its directory. A repository
    /// set-up the user has not trusted stops it at a question instead (see `trust.rs`): the
    /// task is then `running`, waiting, and the start returns at once.
    pub async fn start_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        if self.get_task(id)?.metadata.is_variant_parent() {
            return self.start_variant_parent(id).await;
        }
        let (task, _claim) = self.claim_start(id)?;
        // A missing CLI releases the claim at once: the task stays pending, nothing spawned.
        self.ensure_task_provider(&task.metadata.provider_id)?;
        match self.repo_step(&task).await? {
            RepoStep::Ask(req) => self.ask_trust(&task.id, req).await,
            RepoStep::Go(setup) => self.launch(&task, setup, Launch::Pending).await,
        }
    }

    /// What the task's repository asks before its agent starts: nothing (no new worktree, or
    /// a repository that asks nothing), a set-up that may run, or trust the user has not
    /// given. A repository file that is not valid, or a copy path that leaves the
    /// repository, fails the task here, before anything runs.
    pub(super) async fn repo_step(&self, task: &Task) -> EngineResult<RepoStep> {
        let has_worktree = task.metadata.worktree.as_ref().is_some_and(|w| w.is_live());
        if task.metadata.isolation != Isolation::Worktree || has_worktree {
            return Ok(RepoStep::Go(None));
        }
        let root = {
            let dir = PathBuf::from(&task.metadata.working_directory);
            let base_ref = task.metadata.base_ref.clone();
            tokio::task::spawn_blocking(move || {
                crate::git::worktree::plan(&dir, base_ref.as_deref()).map(|b| b.repo.root)
            })
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?
        };
        // No worktree can be made: making it fails the task with git's reason.
        let Ok(root) = root else {
            return Ok(RepoStep::Go(None));
        };
        let user = self.config().repos.clone();
        let planned = tokio::task::spawn_blocking(move || {
            let plan = plan_for(&root, &user)?;
            check_copies(&plan.setup.copy, &root)?;
            Ok::<_, String>(plan)
        })
        .await
        .map_err(|e| EngineError::Internal(e.to_string()))?;
        let plan = match planned {
            Ok(p) => p,
            Err(why) => return Err(self.setup_failed(&task.id, why).await),
        };
        match plan.trust {
            Some(req) if !self.trusts(&req).await => Ok(RepoStep::Ask(req)),
            _ => Ok(RepoStep::Go(Some(plan))),
        }
    }

    /// Starts the task's agent: its worktree (made now if need be) set up as `setup` says,
    /// then its session. `how` says whether the task is still pending (claimed by this
    /// starter) or already running, trusted after it waited.
    pub(super) async fn launch(
        &self,
        task: &Task,
        plan: Option<RepoPlan>,
        how: Launch,
    ) -> EngineResult<Arc<Task>> {
        let provider = self.fitted_provider(&task.metadata.provider_id).await?;
        // Its conversation gets an id of ours, so that `continue` can resume it.
        let conversation = uuid::Uuid::new_v4().to_string();
        let pinned = provider.pin_conversation(&conversation);
        let worktree = self.prepare_worktree(task).await?;
        let repo_checks = plan.as_ref().map(|p| p.checks.clone());
        if let (Some(wt), Some(plan)) = (&worktree, plan) {
            self.set_up_worktree(&task.id, wt, plan.setup).await?;
        }
        let (dir, snapshot) = match worktree {
            // Its files are judged against the base, not a snapshot of the directory.
            Some(wt) => (wt.agent_dir().to_string_lossy().into_owned(), None),
            None => {
                let dir = task.metadata.working_directory.clone();
                (dir.clone(), Self::git_snapshot(dir).await)
            }
        };
        let conversation = pinned.is_some().then_some(conversation);
        let info = self
            .spawn_session(SpawnSession {
                task: task.description.clone(),
                provider_id: Some(task.metadata.provider_id.clone()),
                working_directory: Some(dir),
                task_id: Some(task.id.clone()),
                approval: task.metadata.approval,
                delegate: task.metadata.delegate,
                conversation_args: pinned.unwrap_or_default(),
                ..Default::default()
            })
            .await?;
        if let Some(s) = snapshot {
            self.inner.git.lock().insert(task.id.clone(), s);
        }
        let sid = info.id.clone();
        let kind = match how {
            Launch::Pending => TaskEventKind::Started,
            // It was announced started when it began to wait.
            Launch::AfterTrust => TaskEventKind::Updated,
        };
        self.run_on_session(&task.id, &sid, kind, |t| {
            match how {
                Launch::Pending => t.move_to(TaskStatus::Running, now_ms())?,
                Launch::AfterTrust => {
                    if t.status() != TaskStatus::Running || !t.awaits_trust() {
                        return Err(conflict(t, "its start after trust was overtaken"));
                    }
                    t.metadata.trust = None;
                }
            }
            t.metadata.conversation_id = conversation;
            // The checks it will run are on it from its start: the evidence names them.
            if let Some(repo) = &repo_checks {
                super::checks::adopt_repo_checks(t, repo);
            }
            Ok(())
        })
        .await
    }

    /// Starts the agent of a finished task again on its earlier conversation (the provider's
    /// `resume_args`), with `message` as its new request; the task runs again, its steps,
    /// output and earlier outcome kept. A retry, by contrast, starts a fresh task.
    pub async fn continue_task(&self, id: &str, message: Option<&str>) -> EngineResult<Arc<Task>> {
        let message = message
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .unwrap_or(DEFAULT_CONTINUE_MESSAGE)
            .to_string();
        let (task, _claim) = self.claim_finished(id, "continued")?;
        super::tasks::refuse_for_variant_parent(&task, "continued")?;
        self.resume_agent(&task, &message, TaskEventKind::Started, |t| {
            Ok(t.reopen(&message)?)
        })
        .await
    }

    /// Starts the task's agent again on its earlier conversation with `message` as its new
    /// request, on a new session; `change` moves the task as that implies.
    async fn resume_agent(
        &self,
        task: &Task,
        message: &str,
        kind: TaskEventKind,
        change: impl FnOnce(&mut Task) -> EngineResult<()>,
    ) -> EngineResult<Arc<Task>> {
        self.ensure_task_provider(&task.metadata.provider_id)?;
        let provider = self.fitted_provider(&task.metadata.provider_id).await?;
        let resume = provider
            .resume_conversation(task.metadata.conversation_id.as_deref())
            .map_err(|e| EngineError::Conflict(e.to_string()))?;
        // The agent left open after its turn holds the conversation: it ends first (the task
        // is finished, so its exit decides nothing).
        if let Some(entry) = self.task_session(task) {
            self.end_session(&entry).await;
        }
        let dir = match task.metadata.isolation {
            Isolation::Worktree => match task.metadata.worktree.as_ref() {
                Some(wt) if wt.is_live() => wt.at.agent_dir().to_string_lossy().into_owned(),
                _ => {
                    return Err(EngineError::Conflict(
                        "the task's worktree is gone (merged, discarded or never made); retry it instead".into(),
                    ));
                }
            },
            Isolation::None => {
                let dir = task.metadata.working_directory.clone();
                // Files are judged from the first start while orchestra runs; after a
                // restart, from the continue.
                if !self.inner.git.lock().contains_key(&task.id)
                    && let Some(s) = Self::git_snapshot(dir.clone()).await
                {
                    self.inner.git.lock().insert(task.id.clone(), s);
                }
                dir
            }
        };
        let info = self
            .spawn_session(SpawnSession {
                task: message.to_string(),
                provider_id: Some(task.metadata.provider_id.clone()),
                working_directory: Some(dir),
                task_id: Some(task.id.clone()),
                approval: task.metadata.approval,
                delegate: task.metadata.delegate,
                conversation_args: resume,
                ..Default::default()
            })
            .await?;
        self.run_on_session(&task.id, &info.id, kind, change).await
    }

    /// Claims a finished task to be `verb` (continued or retried), as [`Engine::claim_start`]
    /// claims a pending one for a start: of continues and retries racing each other exactly
    /// one wins. The claim ends when the returned guard is dropped.
    pub(super) fn claim_finished(
        &self,
        id: &str,
        verb: &str,
    ) -> EngineResult<(Arc<Task>, impl Drop + use<>)> {
        let mut starting = self.inner.starting.lock();
        let task = self.get_task(id)?;
        if starting.contains(&task.id) {
            return Err(EngineError::Conflict(
                "task is being continued or retried elsewhere".into(),
            ));
        }
        if !task.status().is_final() {
            return Err(conflict(
                &task,
                &format!("only a finished task (completed, failed or cancelled) can be {verb}"),
            ));
        }
        starting.insert(task.id.clone());
        let claim = StartClaim {
            engine: self.clone(),
            id: task.id.clone(),
        };
        Ok((task, claim))
    }

    /// The task's provider with its `--help` read (off the async workers), so its flags
    /// can be fitted to the installed version.
    async fn fitted_provider(&self, id: &str) -> EngineResult<crate::providers::Provider> {
        let provider = self
            .providers()
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::Invalid(format!("unknown providerId {id:?}")))?;
        let for_help = provider.clone();
        let _ = tokio::task::spawn_blocking(move || for_help.help()).await;
        Ok(provider)
    }

    async fn git_snapshot(dir: String) -> Option<GitSnapshot> {
        tokio::task::spawn_blocking(move || GitSnapshot::take(Path::new(&dir)))
            .await
            .ok()
            .flatten()
    }

    /// Marks the task as run by the new session `sid` (`change` moves it to running); if
    /// someone else moved it meanwhile the session is ended, and if the session ended
    /// before, its exit decides the task.
    async fn run_on_session(
        &self,
        id: &str,
        sid: &str,
        kind: TaskEventKind,
        change: impl FnOnce(&mut Task) -> EngineResult<()>,
    ) -> EngineResult<Arc<Task>> {
        let moved = self
            .mutate(id, |t| {
                change(t)?;
                t.metadata.session_id = Some(sid.to_string());
                Ok((vec![(kind, vec![])], ()))
            })
            .await;
        match moved {
            Ok((task, ())) => {
                // The session may have ended before the task was marked running.
                let entry = self.session_entry(sid)?;
                let info = entry.snapshot_info();
                if info.ended {
                    let exit = ExitInfo {
                        code: info.exit_code,
                        signal: info.signal.clone(),
                    };
                    self.session_exited(&entry, &info, &exit).await;
                    return self.get_task(id);
                }
                Ok(task)
            }
            Err(e) => {
                // Someone else moved the task meanwhile: this session has nothing to do.
                if let Ok(entry) = self.session_entry(sid) {
                    self.end_session(&entry).await;
                }
                Err(e)
            }
        }
    }

    pub async fn pause_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        if task.status() != TaskStatus::Running {
            return Err(conflict(&task, "only a running task can be paused"));
        }
        self.refuse_while_checking(id, "paused")?;
        refuse_pause_before_agent(&task)?;
        if let Some(entry) = self.task_session(&task) {
            self.stop_group(&entry).await?;
        }
        self.move_task(id, TaskStatus::Paused, None).await
    }

    pub async fn resume_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        if task.status() != TaskStatus::Paused {
            return Err(conflict(&task, "only a paused task can be resumed"));
        }
        if let Some(entry) = self.task_session(&task) {
            self.continue_group(&entry).await?;
        }
        self.move_task(id, TaskStatus::Running, None).await
    }

    /// Cancels a task; a session running it is ended (TERM, then KILL after the grace
    /// period) and the task is `cancelled` once the process is reaped.
    pub async fn cancel_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        task.ensure_open()?;
        // A check running now stops (its process group ended and reaped by its runner).
        self.stop_checks(id).await;
        if let Some(entry) = self.task_session(&task) {
            self.end_session(&entry).await;
        }
        let task = self.get_task(id)?;
        if task.status().is_final() {
            return Ok(task);
        }
        match self.move_task(id, TaskStatus::Cancelled, None).await {
            // The session's exit, ended just now on purpose, cancelled it between the read
            // above and this move: the cancel happened, once.
            Err(e @ EngineError::Conflict(_)) => match self.get_task(id) {
                Ok(task) if task.status() == TaskStatus::Cancelled => Ok(task),
                _ => Err(e),
            },
            moved => moved,
        }
    }

    /// Output lines of a session reach its task (the newest ones; all are in the transcript).
    pub(crate) async fn session_output(&self, entry: &Arc<SessionEntry>, mut lines: Vec<String>) {
        let Some(task_id) = entry.info.lock().task_id.clone() else {
            return;
        };
        // What the lines say that the task must carry goes right after them.
        lines.extend(entry.said_in_output(&lines));
        if lines.len() > OUTPUT_LINES_KEPT {
            lines.drain(..lines.len() - OUTPUT_LINES_KEPT);
        }
        let result = self
            .mutate_as(&task_id, Durability::Later, |t| {
                if t.status().is_final() {
                    return Ok((vec![], ()));
                }
                t.append_output_lines(lines.iter().cloned());
                Ok((vec![(TaskEventKind::Output, lines)], ()))
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, task = %task_id, "could not record session output");
        }
    }

    /// Hook for status changes of a session (providers use it to decide finished turns).
    pub(crate) async fn session_status_changed(
        &self,
        entry: &Arc<SessionEntry>,
        status: SessionStatus,
    ) {
        self.agent_status_changed(entry, status).await;
    }

    /// A session ended: its task is decided by how, unless a result decided it already.
    pub(crate) async fn session_exited(
        &self,
        entry: &Arc<SessionEntry>,
        info: &SessionInfo,
        exit: &ExitInfo,
    ) {
        let Some(task_id) = info.task_id.clone() else {
            return;
        };
        let Ok(task) = self.get_task(&task_id) else {
            return;
        };
        if task.status().is_final() || task.metadata.session_id.as_deref() != Some(info.id.as_str())
        {
            return;
        }
        let shutting_down = self.inner.shutting_down.load(Ordering::SeqCst);
        let on_purpose = entry.ending_on_purpose.load(Ordering::SeqCst);
        if !shutting_down && !on_purpose && self.checks_decide_exit(&task, exit) {
            return;
        }
        let (modified, created) = self.git_changes(&task_id).await;
        let stop_reason = self.inner.stop_reason.lock().clone();
        // As `set_result` does: an outcome says what became of the work it handed out.
        let children = self.child_outcomes(&task_id);
        let outcome = self
            .mutate(&task_id, |t| {
                if t.status().is_final() {
                    return Ok((vec![], ()));
                }
                let now = now_ms();
                let (to, error) = if shutting_down {
                    (TaskStatus::Cancelled, stop_reason.clone())
                } else if on_purpose {
                    (TaskStatus::Cancelled, None)
                } else if exit.success() {
                    (TaskStatus::Completed, None)
                } else {
                    (TaskStatus::Failed, Some(exit_sentence(exit)))
                };
                t.move_to(to, now)?;
                if to == TaskStatus::Cancelled {
                    if error.is_some() {
                        t.metadata.error = error.clone();
                    }
                } else {
                    t.metadata.error = error.clone();
                    t.metadata.result = Some(TaskResult {
                        success: to == TaskStatus::Completed,
                        summary: t.last_output_line().unwrap_or_else(|| exit_sentence(exit)),
                        files_modified: modified.clone(),
                        files_created: created.clone(),
                        error,
                        children: children.clone(),
                        checks: Vec::new(),
                    });
                }
                let kind = match to {
                    TaskStatus::Completed => TaskEventKind::Completed,
                    TaskStatus::Cancelled => TaskEventKind::Cancelled,
                    _ => TaskEventKind::Failed,
                };
                Ok((vec![(kind, vec![])], ()))
            })
            .await;
        if let Err(e) = outcome {
            tracing::warn!(error = %e, task = %task_id, "could not record how a task's session ended");
        }
    }

    /// An agent that ended by itself while its task has checks: a success runs them (they
    /// decide the task), and while they run the exit decides nothing (a failure of theirs
    /// resumes the agent). Whether the checks took it.
    fn checks_decide_exit(&self, task: &Task, exit: &ExitInfo) -> bool {
        if self.checks_running(&task.id) {
            return true;
        }
        if !exit.success() || task.metadata.checks.is_empty() {
            return false;
        }
        let result = TaskResult {
            success: true,
            summary: task
                .last_output_line()
                .unwrap_or_else(|| exit_sentence(exit)),
            ..Default::default()
        };
        match self.checks_decide(task, result) {
            Ok(took) => took,
            // Another trigger started them a moment ago: they decide. Else (a task that is
            // not running) its exit decides, as without checks.
            Err(_) => self.checks_running(&task.id),
        }
    }

    /// Starts the agent of a running task again on its conversation with `message` (its
    /// checks failed after its session ended): the task stays running, on the new session.
    pub(super) async fn resume_for_checks(
        &self,
        id: &str,
        message: &str,
    ) -> EngineResult<Arc<Task>> {
        let task = self.get_task(id)?;
        self.resume_agent(&task, message, TaskEventKind::Updated, |t| {
            if t.status() != TaskStatus::Running {
                return Err(conflict(t, "its agent is not resumed for its checks"));
            }
            Ok(())
        })
        .await
    }

    /// Files changed in the task's git work tree since it started, if it is in one.
    pub(crate) async fn git_changes(&self, task_id: &str) -> (Vec<String>, Vec<String>) {
        if let Ok(task) = self.get_task(task_id)
            && let Some(files) = self.worktree_changes(&task).await
        {
            return files;
        }
        let snap = self.inner.git.lock().get(task_id).cloned();
        match snap {
            Some(s) => tokio::task::spawn_blocking(move || s.changes())
                .await
                .unwrap_or_default(),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Whether git can tell which files the task changed: it has a worktree, or it started in
    /// a git work tree.
    pub(crate) fn tracks_files(&self, task: &Task) -> bool {
        task.metadata.worktree.as_ref().is_some_and(|w| w.is_live())
            || self.inner.git.lock().contains_key(&task.id)
    }

    /// A result that lists no files gets the ones git saw change.
    pub(crate) async fn fill_result_files(&self, task_id: &str, result: &mut TaskResult) {
        if result.files_modified.is_empty() && result.files_created.is_empty() {
            let (m, c) = self.git_changes(task_id).await;
            result.files_modified = m;
            result.files_created = c;
        }
    }

    /// Ends every running task's session and all other sessions; autopilot off.
    pub async fn stop_all(&self) {
        self.set_run_state(RunState::Stopped);
        self.remember_autopilot(false).await;
        self.cancel_runs(STOPPED_BY_API).await;
        self.end_all_sessions().await;
    }

    /// Cancels, saying `reason`, every task running or paused in a session (or whose agent
    /// orchestra is starting after the user's trust), before those sessions are ended: ended
    /// on purpose, they must not read as failed or killed. A task still waiting on the user's
    /// answer keeps waiting: nothing of it runs, and its question is there after a restart.
    pub(crate) async fn cancel_runs(&self, reason: &str) {
        for t in self.list_tasks(None, None) {
            let starting = t.awaits_trust() && t.metadata.prompt.is_none();
            if !(matches!(t.status(), TaskStatus::Running | TaskStatus::Paused)
                && (t.metadata.session_id.is_some() || starting))
            {
                continue;
            }
            let cancelled = self.end_if_open(&t.id, TaskStatus::Cancelled, reason).await;
            if let Err(e) = cancelled {
                tracing::warn!(task = %t.id, error = %e, "could not cancel a task");
            }
        }
    }

    /// Every provider with whether it is installed here and which is the default.
    pub async fn provider_report(&self) -> Vec<ProviderInfo> {
        let default = self.providers().default_id();
        let all = self.providers().all().to_vec();
        let found = tokio::task::spawn_blocking(move || {
            let d = crate::providers::detect::detect_all(&all);
            all.into_iter().zip(d).collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        found
            .into_iter()
            .map(|(p, d)| ProviderInfo {
                installed: d.installed,
                install: p.install_hint(),
                path: d.path.map(|p| p.to_string_lossy().into_owned()),
                version: d.version,
                coding_agent: p.coding_agent,
                needs_description: p.needs_instruction(),
                default: default.as_deref() == Some(p.id.as_str()),
                id: p.id,
                name: p.name,
                command: p.command,
            })
            .collect()
    }
}
