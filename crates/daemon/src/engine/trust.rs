//! Commands that come from a repository run only once the user trusted them.
//!
//! A task whose repository's `.orchestra.toml` asks orchestra to run or copy anything (see
//! `repo_file.rs`) starts only if the user trusted that file's exact content (the list in
//! `trust_store.rs`). Otherwise its start stops at a question before anything runs: the task
//! is `running` with no session (so it holds its autopilot slot), `metadata.prompt` asks
//! (kind `trust`, quoting every command and copy path and the file), `metadata.trust` names
//! the file and the content's hash, and a step shows that it waits. The autopilot starts no
//! other task of that repository meanwhile. Answering "trust" (`POST /tasks/:id/answer`, a
//! key in the TUI, or `orchestra trust PATH`) records the trust, and every task waiting on
//! that file proceeds, its set-up and then its agent as any start; "decline" fails the task,
//! running nothing. The question is taken under the task's lock, so of two answers at once
//! exactly one wins and the other is refused. A proceeding task reads the file again: if it
//! changed since, it asks again.

use super::repo_file::{REPO_FILE, read_at};
use super::runs::{Launch, RepoStep};
use super::trust_store::TrustStore;
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::store::StoreError;
use orchestra_proto::task::{Step, StepStatus, Task, TaskStatus};
use orchestra_proto::wire::{
    Prompt, PromptKind, PromptOption, RepoAskKind, TrustRequest, Trusted, TrustedFile,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use orchestra_proto::wire::{DECLINE_OPTION, TRUST_OPTION};

/// How the step of a task waiting on trust begins (followed by the file).
const WAIT_STEP: &str = "trust: waiting for you to trust ";

/// Text from a repository's file as the question quotes it: exactly, with control characters
/// spelled out (`\u{1b}`) so that they show rather than act on a terminal.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The question a task waiting on `req` asks.
pub fn trust_prompt(req: &TrustRequest) -> Prompt {
    let file = visible(&req.file);
    let mut text = format!("Trust {file}? It asks orchestra to run or copy, with your rights:");
    for ask in &req.asks {
        let label = match ask.kind {
            RepoAskKind::Setup => "set-up (sh -c, in the task's new worktree)",
            RepoAskKind::Copy => "copy (from the repository into the task's worktree)",
            RepoAskKind::Check => "check (sh -c, in the task's worktree, when its agent is done)",
        };
        text.push_str(&format!("\n  {label}:"));
        for line in ask.value.lines() {
            text.push_str(&format!("\n    {}", visible(line)));
        }
    }
    text.push_str(&format!(
        "\nOnly this exact content is trusted: any change to the file asks again. From a shell: orchestra trust {file}"
    ));
    Prompt {
        kind: PromptKind::Trust,
        text,
        options: vec![
            PromptOption {
                key: TRUST_OPTION.into(),
                label: "Trust this content and run it".into(),
                keys: None,
            },
            PromptOption {
                key: DECLINE_OPTION.into(),
                label: "Decline: fail the task, run nothing".into(),
                keys: None,
            },
        ],
    }
}

/// Closes the open step that says the task waits on trust.
fn close_wait_step(t: &mut Task, status: StepStatus, output: &str) {
    if let Some(step) = t
        .metadata
        .steps
        .iter_mut()
        .rev()
        .find(|s| s.status.is_open() && s.description.starts_with(WAIT_STEP))
    {
        step.status = status;
        step.output = Some(output.to_string());
    }
}

/// The repository file a `POST /trust` path names: the path, or its `.orchestra.toml` when
/// it is a directory.
fn named_file(path: &str) -> EngineResult<PathBuf> {
    if path.trim().is_empty() {
        return Err(EngineError::Invalid(
            "path must name a repository's .orchestra.toml (or the directory holding it)".into(),
        ));
    }
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(EngineError::Invalid(format!(
            "path {path:?} must be absolute (orchestra's working directory is not yours)"
        )));
    }
    let file = if p.is_dir() {
        p.join(REPO_FILE)
    } else {
        p.to_path_buf()
    };
    if file.file_name() != Some(std::ffi::OsStr::new(REPO_FILE)) {
        return Err(EngineError::Invalid(format!(
            "path {path:?} is not a repository's {REPO_FILE} (nor a directory holding one): only those are trusted"
        )));
    }
    Ok(file)
}

/// Repositories that have a task waiting on the user's trust: the autopilot starts no other
/// task in them meanwhile.
pub(super) fn held_repositories(tasks: &[Arc<Task>]) -> Vec<PathBuf> {
    tasks
        .iter()
        .filter(|t| t.metadata.prompt.is_some())
        .filter_map(|t| t.metadata.trust.as_ref())
        .map(|r| PathBuf::from(&r.repository))
        .collect()
}

/// Whether `task` works in one of the `held` repositories.
pub(super) fn is_held(task: &Task, held: &[PathBuf]) -> bool {
    let dir = Path::new(&task.metadata.working_directory);
    held.iter().any(|r| dir.starts_with(r))
}

fn write_error(file: &str, e: std::io::Error) -> EngineError {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        EngineError::Store(StoreError::Full(format!(
            "the disk holding the state directory is full: could not keep the trust in {file}"
        )))
    } else {
        EngineError::Internal(format!("could not keep the trust in {file}: {e}"))
    }
}

impl Engine {
    /// Whether the user trusted the file `req` names with exactly the content it was read with.
    pub(super) async fn trusts(&self, req: &TrustRequest) -> bool {
        self.inner.trust.lock().await.trusts(&req.file, &req.sha256)
    }

    /// Every file the user trusted.
    pub async fn trusted_files(&self) -> Vec<TrustedFile> {
        self.inner.trust.lock().await.list()
    }

    /// Keeps the trust of `file` with this content (on disk before it counts).
    async fn record_trust(&self, file: &str, sha256: &str) -> EngineResult<TrustedFile> {
        let mut store = self.inner.trust.lock().await;
        let entry = TrustedFile {
            file: file.to_string(),
            sha256: sha256.to_string(),
            trusted_at: now_ms(),
        };
        let files = store.with(entry.clone());
        let (dir, written) = (store.dir().to_path_buf(), files.clone());
        tokio::task::spawn_blocking(move || TrustStore::write(&dir, &written))
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?
            .map_err(|e| write_error(file, e))?;
        store.replace(files);
        tracing::info!(%file, %sha256, "repository file trusted");
        Ok(entry)
    }

    /// `POST /trust`: trusts the current content of a repository's file (`path`, or its
    /// `.orchestra.toml` for a directory); every task waiting on that file proceeds.
    pub async fn trust_path(&self, path: &str) -> EngineResult<Trusted> {
        let file = named_file(path)?;
        let shown = file.display().to_string();
        let read = tokio::task::spawn_blocking(move || read_at(&file))
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?
            .map_err(|e| EngineError::Invalid(format!("{e}; fix it before trusting it")))?
            .ok_or_else(|| {
                EngineError::Invalid(format!("there is no file {shown}: nothing to trust"))
            })?;
        let file = read.path.to_string_lossy().into_owned();
        let trusted = self.record_trust(&file, &read.sha256).await?;
        let tasks = self.release_waiting(&file).await;
        Ok(Trusted {
            trusted,
            asks: read.file.asks(),
            tasks,
        })
    }

    /// `POST /trust/revoke`: the file is no longer trusted; the next task that needs it asks.
    pub async fn revoke_trust(&self, path: &str) -> EngineResult<TrustedFile> {
        let file = named_file(path)?;
        let key = file
            .canonicalize()
            .unwrap_or(file)
            .to_string_lossy()
            .into_owned();
        let mut store = self.inner.trust.lock().await;
        let Some(old) = store.get(&key).cloned() else {
            return Err(EngineError::NotFound(format!(
                "{key} is not trusted (`orchestra trust --list` shows what is)"
            )));
        };
        let files = store.without(&key);
        let (dir, written) = (store.dir().to_path_buf(), files.clone());
        tokio::task::spawn_blocking(move || TrustStore::write(&dir, &written))
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?
            .map_err(|e| write_error(&key, e))?;
        store.replace(files);
        tracing::info!(file = %key, "trust revoked");
        Ok(old)
    }

    /// Stops a starting task at the question `req` asks: it becomes (or stays) `running`
    /// without a session, waiting for an answer.
    pub(super) async fn ask_trust(&self, id: &str, req: TrustRequest) -> EngineResult<Arc<Task>> {
        let prompt = trust_prompt(&req);
        let file = req.file.clone();
        let (task, ()) = self
            .mutate(id, |t| {
                let mut events = Vec::new();
                match t.status() {
                    TaskStatus::Pending => {
                        t.move_to(TaskStatus::Running, now_ms())?;
                        events.push((TaskEventKind::Started, vec![]));
                    }
                    // Trusted once, and the file changed before the set-up read it again.
                    TaskStatus::Running if t.awaits_trust() && t.metadata.prompt.is_none() => {}
                    other => {
                        return Err(EngineError::Conflict(format!(
                            "task is {other}; it can no longer wait for trust"
                        )));
                    }
                }
                t.metadata.steps.push(Step {
                    id: uuid::Uuid::new_v4().to_string(),
                    description: format!("{WAIT_STEP}{}", visible(&req.file)),
                    status: StepStatus::Running,
                    output: None,
                });
                t.metadata.prompt = Some(prompt);
                t.metadata.trust = Some(req);
                events.push((TaskEventKind::Prompt, vec![]));
                Ok((events, ()))
            })
            .await?;
        tracing::info!(task = %id, %file, "the task waits for the user to trust its repository's file");
        Ok(task)
    }

    /// `POST /tasks/:id/answer`: answers the question the task waits on. Trusting records
    /// the trust, and this task and every other waiting on the same file proceed; declining
    /// fails the task. The task as answered.
    pub async fn answer_task(&self, id: &str, option: &str) -> EngineResult<Arc<Task>> {
        let (task, (req, trusted)) = self
            .mutate(id, |t| {
                let Some(prompt) = t.metadata.prompt.as_ref() else {
                    return Err(EngineError::Conflict(format!(
                        "task is {} and waits on no question (it was answered already, or never asked one)",
                        t.status()
                    )));
                };
                if prompt.option(option).is_none() {
                    let options: Vec<String> = prompt
                        .options
                        .iter()
                        .map(|o| format!("{} ({})", o.key, o.label))
                        .collect();
                    return Err(EngineError::Invalid(format!(
                        "the question has no option {option:?}; answer with one of: {}",
                        options.join(", ")
                    )));
                }
                let Some(req) = t.metadata.trust.clone() else {
                    return Err(EngineError::Internal(
                        "the task's question has no file to trust".into(),
                    ));
                };
                t.metadata.prompt = None;
                let trusted = option == TRUST_OPTION;
                let mut events = vec![(TaskEventKind::Prompt, vec![])];
                if trusted {
                    close_wait_step(t, StepStatus::Completed, "trusted");
                } else {
                    close_wait_step(t, StepStatus::Failed, "declined");
                    t.move_to(TaskStatus::Failed, now_ms())?;
                    t.metadata.error = Some(format!(
                        "you declined to trust {}: nothing it asks for was run or copied, and no agent started",
                        req.file
                    ));
                    events.push((TaskEventKind::Failed, vec![]));
                }
                Ok((events, (req, trusted)))
            })
            .await?;
        if !trusted {
            tracing::info!(task = %id, file = %req.file, "trust declined: task failed");
            return Ok(task);
        }
        if let Err(e) = self.record_trust(&req.file, &req.sha256).await {
            self.fail_unstarted(
                id,
                format!(
                    "your trust in {} could not be kept ({e}); nothing was run",
                    req.file
                ),
            )
            .await;
            return Err(e);
        }
        self.release_waiting(&req.file).await;
        self.proceed_later(id);
        Ok(task)
    }

    /// Takes the question of every task waiting on `file` (now trusted) and lets it proceed;
    /// their ids. A task whose question someone else took meanwhile is theirs.
    async fn release_waiting(&self, file: &str) -> Vec<String> {
        let waits_on = |t: &Task| {
            t.metadata.prompt.is_some() && t.metadata.trust.as_ref().is_some_and(|r| r.file == file)
        };
        let mut released = Vec::new();
        for task in self.list_tasks(None, None).into_iter().rev() {
            if !waits_on(&task) {
                continue;
            }
            let took = self
                .mutate(&task.id, |t| {
                    if !waits_on(t) {
                        return Ok((vec![], false));
                    }
                    t.metadata.prompt = None;
                    close_wait_step(t, StepStatus::Completed, "trusted");
                    Ok((vec![(TaskEventKind::Prompt, vec![])], true))
                })
                .await;
            if matches!(took, Ok((_, true))) {
                self.proceed_later(&task.id);
                released.push(task.id.clone());
            }
        }
        released
    }

    /// Lets a task whose question was answered with trust go on, off the caller's request.
    fn proceed_later(&self, id: &str) {
        let (engine, id) = (self.clone(), id.to_string());
        tokio::spawn(async move { engine.proceed_after_trust(&id).await });
    }

    /// Starts a trusted task as any start would: the file is read again (asking again if it
    /// changed), the set-up runs, the agent starts. A failure fails the task with why.
    async fn proceed_after_trust(&self, id: &str) {
        let Ok(task) = self.get_task(id) else { return };
        let ready = task.status() == TaskStatus::Running
            && task.awaits_trust()
            && task.metadata.prompt.is_none();
        if !ready {
            return;
        }
        let outcome = match self.repo_step(&task).await {
            Ok(RepoStep::Ask(req)) => self.ask_trust(id, req).await.map(|_| ()),
            Ok(RepoStep::Go(setup)) => self
                .launch(&task, setup, Launch::AfterTrust)
                .await
                .map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            tracing::warn!(task = %id, error = %e, "a trusted task could not start");
            self.fail_unstarted(id, format!("could not start: {e}"))
                .await;
        }
    }

    /// Fails a task orchestra was starting on its own (after trust) with `why`, unless it
    /// ended already (a set-up that failed says why itself; a cancel is the user's).
    async fn fail_unstarted(&self, id: &str, why: String) {
        if let Err(e) = self.end_if_open(id, TaskStatus::Failed, &why).await {
            tracing::warn!(task = %id, error = %e, "could not fail a task that did not start");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestra_proto::wire::RepoAsk;

    #[test]
    fn the_question_quotes_every_command_and_path_exactly() {
        let req = TrustRequest {
            repository: "/r".into(),
            file: "/r/.orchestra.toml".into(),
            sha256: "ab".into(),
            asks: vec![
                RepoAsk {
                    kind: RepoAskKind::Setup,
                    value: "npm ci\nprintf '\u{1b}[2J'".into(),
                },
                RepoAsk {
                    kind: RepoAskKind::Copy,
                    value: ".env".into(),
                },
            ],
        };
        let p = trust_prompt(&req);
        assert_eq!(p.kind, PromptKind::Trust);
        assert!(
            p.text.starts_with("Trust /r/.orchestra.toml?"),
            "{}",
            p.text
        );
        assert!(
            p.text.contains("\n    npm ci\n    printf '\\u{1b}[2J'"),
            "{}",
            p.text
        );
        assert!(p.text.contains("copy (from the repository"), "{}", p.text);
        assert!(p.text.contains("\n    .env\n"), "{}", p.text);
        assert!(p.text.contains("orchestra trust /r/.orchestra.toml"));
        assert!(!p.text.contains('\u{1b}'));
        let keys: Vec<&str> = p.options.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, [TRUST_OPTION, DECLINE_OPTION]);
    }
}
