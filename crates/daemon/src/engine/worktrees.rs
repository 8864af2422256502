//! Task isolation: which tasks get a worktree, creating it before the agent starts, and
//! finishing it (merge, discard, collect, delete), always with a snapshot before removal.

use super::task_message::{Evidence, task_commit_message};
use super::tasks::Placement;
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::git::{self, Diff, GitError, Merged, Worktree};
use orchestra_proto::task::{Isolation, Task, TaskWorktree, WorktreeOutcome};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

impl From<GitError> for EngineError {
    fn from(e: GitError) -> Self {
        if e.is_bad_input() {
            EngineError::Invalid(e.to_string())
        } else if e.is_conflict() {
            EngineError::Conflict(e.to_string())
        } else {
            EngineError::Internal(e.to_string())
        }
    }
}

/// Runs blocking git work off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, GitError> + Send + 'static,
) -> EngineResult<T> {
    blocking_engine(move || f().map_err(EngineError::from)).await
}

/// Runs blocking work (git, a forge's CLI) that answers in the engine's errors off the
/// async workers.
pub(super) async fn blocking_engine<T: Send + 'static>(
    f: impl FnOnce() -> EngineResult<T> + Send + 'static,
) -> EngineResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| EngineError::Internal(format!("git work failed: {e}")))?
}

pub use orchestra_proto::wire::Collected;

/// Bytes of the regular files under `path` (symlinks not followed).
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| disk_usage(&e.path())).sum())
        .unwrap_or(0)
}

impl Engine {
    /// The directory task worktrees live in.
    pub fn worktrees_dir(&self) -> PathBuf {
        self.state_dir()
            .join(orchestra_sys::state_dir::WORKTREES_DIR)
    }

    /// Every live task worktree with the bytes it holds (measured now, off the async
    /// workers: a walk of the worktrees' files).
    pub async fn worktree_usage(&self) -> Vec<orchestra_proto::wire::WorktreeInfo> {
        let live: Vec<_> = self
            .list_tasks(None, None)
            .into_iter()
            .filter_map(|t| {
                let wt = t.metadata.worktree.clone().filter(|w| w.is_live())?;
                Some((t.id.clone(), t.status(), wt.at))
            })
            .collect();
        tokio::task::spawn_blocking(move || {
            live.into_iter()
                .map(
                    |(task_id, status, at)| orchestra_proto::wire::WorktreeInfo {
                        bytes: disk_usage(at.path()),
                        task_id,
                        status,
                        path: at.path,
                        branch: at.branch,
                        base_branch: at.base_branch,
                    },
                )
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    /// Decides a new task's isolation. Asked for, `worktree` must be possible here (a
    /// repository with a commit, a branch to start from). Not asked for: a worktree for
    /// coding agents in a repository where one is possible, unless the config says `none`;
    /// never for plain shells and commands.
    pub(crate) async fn resolve_isolation(
        &self,
        provider_id: &str,
        dir: &str,
        asked: Option<Isolation>,
        base_ref: Option<String>,
    ) -> EngineResult<Placement> {
        let plan = {
            let dir = PathBuf::from(dir);
            let base_ref = base_ref.clone();
            move || git::worktree::plan(&dir, base_ref.as_deref())
        };
        match asked {
            Some(Isolation::None) if base_ref.is_some() => Err(EngineError::Invalid(
                "baseRef needs isolation \"worktree\"".into(),
            )),
            Some(Isolation::None) => Ok(Placement::default()),
            Some(Isolation::Worktree) => {
                blocking(plan).await?;
                Ok(Placement {
                    isolation: Isolation::Worktree,
                    base_ref,
                    base_commit: None,
                })
            }
            // A base given means a worktree is wanted.
            None if base_ref.is_some() => {
                Box::pin(self.resolve_isolation(
                    provider_id,
                    dir,
                    Some(Isolation::Worktree),
                    base_ref,
                ))
                .await
            }
            None => {
                let coding = self
                    .providers()
                    .get(provider_id)
                    .is_some_and(|p| p.coding_agent);
                let allowed = self.config().isolation != Some(Isolation::None);
                let possible = coding && allowed && blocking(plan).await.is_ok();
                Ok(Placement {
                    isolation: if possible {
                        Isolation::Worktree
                    } else {
                        Isolation::None
                    },
                    base_ref: None,
                    base_commit: None,
                })
            }
        }
    }

    /// Where a starting task's agent runs: its worktree (created now if it has none yet; its
    /// repository's set-up is the caller's), or its directory. A worktree that cannot be made
    /// fails the task with git's reason.
    pub(crate) async fn prepare_worktree(&self, task: &Task) -> EngineResult<Option<Worktree>> {
        if task.metadata.isolation != Isolation::Worktree {
            return Ok(None);
        }
        if let Some(wt) = task.metadata.worktree.as_ref().filter(|w| w.is_live()) {
            return Ok(Some(wt.at.clone()));
        }
        let created = {
            let dir = PathBuf::from(&task.metadata.working_directory);
            let base_ref = task.metadata.base_ref.clone();
            let base_commit = task.metadata.base_commit.clone();
            let worktrees = self.worktrees_dir();
            let (id, name) = (task.id.clone(), task.name.clone());
            blocking(move || {
                let mut base = git::worktree::plan(&dir, base_ref.as_deref())?;
                // Fixed when the task was made (a variant): where its siblings start too.
                if let Some(commit) = base_commit {
                    base.commit = commit;
                }
                git::worktree::create(&base, &worktrees, &id, &name)
            })
            .await
        };
        let wt = match created {
            Ok(wt) => wt,
            Err(e) => {
                let why = format!("could not create the task's worktree: {e}");
                if let Err(m) = self
                    .move_task(
                        &task.id,
                        orchestra_proto::task::TaskStatus::Failed,
                        Some(why),
                    )
                    .await
                {
                    tracing::warn!(task = %task.id, error = %m, "could not fail the task");
                }
                return Err(e);
            }
        };
        self.set_worktree(
            &task.id,
            TaskWorktree {
                at: wt.clone(),
                outcome: None,
                snapshot: None,
            },
        )
        .await?;
        tracing::info!(task = %task.id, path = %wt.path, branch = %wt.branch, "worktree created");
        if wt.path().join(".gitmodules").is_file() {
            // git does not check submodules out in a new worktree; say so rather than let
            // the agent find empty directories.
            self.append_output(
                &task.id,
                "note: this repository has submodules; they are not checked out in the task's worktree (run `git submodule update --init` there if the task needs them)",
            )
            .await?;
        }
        Ok(Some(wt))
    }

    pub(super) async fn set_worktree(&self, id: &str, wt: TaskWorktree) -> EngineResult<Arc<Task>> {
        let (task, ()) = self
            .mutate(id, |t| {
                t.metadata.worktree = Some(wt);
                Ok((vec![(TaskEventKind::Updated, vec![])], ()))
            })
            .await?;
        Ok(task)
    }

    /// The task's live worktree, or why it has none.
    pub(crate) fn live_worktree(&self, id: &str) -> EngineResult<(Arc<Task>, TaskWorktree)> {
        let task = self.get_task(id)?;
        match &task.metadata.worktree {
            Some(wt) if wt.is_live() => {
                let wt = wt.clone();
                Ok((task, wt))
            }
            Some(wt) => Err(EngineError::Conflict(format!(
                "the task's worktree was already {}",
                serde_json::to_value(wt.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ))),
            None if task.metadata.isolation == Isolation::Worktree => Err(EngineError::Conflict(
                "the task has no worktree yet: it gets one when it starts".into(),
            )),
            None => Err(EngineError::Conflict(
                "the task runs without isolation (isolation \"none\"): it has no worktree".into(),
            )),
        }
    }

    /// Refuses to finish a worktree while its agent may still write to it.
    pub(super) fn ensure_finished(task: &Task, what: &str) -> EngineResult<()> {
        if task.status().is_final() {
            Ok(())
        } else {
            Err(EngineError::Conflict(format!(
                "task is {}; {what} it once it has finished (or cancel it first)",
                task.status()
            )))
        }
    }

    /// The task's changes against its base.
    pub async fn task_diff(&self, id: &str) -> EngineResult<Diff> {
        let (_, wt) = self.live_worktree(id)?;
        blocking(move || git::diff::of(&wt.at)).await
    }

    /// Files a worktree task changed against its base: (modified, created).
    pub(crate) async fn worktree_changes(&self, task: &Task) -> Option<(Vec<String>, Vec<String>)> {
        let wt = task
            .metadata
            .worktree
            .as_ref()
            .filter(|w| w.is_live())?
            .at
            .clone();
        match blocking(move || git::diff::of(&wt)).await {
            Ok(d) => Some(d.result_files()),
            Err(e) => {
                tracing::warn!(task = %task.id, error = %e, "could not read the task's diff");
                Some(Default::default())
            }
        }
    }

    /// Merges a finished task's branch into its base branch (its leftovers committed first),
    /// then removes its worktree and branch. Refusals change nothing.
    pub async fn merge_task(&self, id: &str) -> EngineResult<(Arc<Task>, Merged)> {
        let _one = self.inner.finishing.lock().await;
        self.merge_holding_finish(id).await
    }

    /// [`Engine::merge_task`], its caller holding the one finishing lock (a pick merges
    /// one variant and discards the others under it).
    pub(super) async fn merge_holding_finish(&self, id: &str) -> EngineResult<(Arc<Task>, Merged)> {
        let (task, wt) = self.live_worktree(id)?;
        Self::ensure_finished(&task, "merge")?;
        let message = task_commit_message(&task, &Evidence::of(&task));
        let merged = {
            let at = wt.at.clone();
            tokio::task::spawn_blocking(move || git::merge::merge(&at, &message))
                .await
                .map_err(|e| EngineError::Internal(format!("git work failed: {e}")))?
        };
        let merged = match merged {
            Ok(m) => m,
            // The radar saw which merged task changed the same files: say so.
            Err(GitError::Conflicts(files)) => {
                return Err(match self.radar_explain(id, &files) {
                    Some(why) => EngineError::Conflict(why),
                    None => GitError::Conflicts(files).into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        self.radar_note_merged(&task);
        // Merged already. A worktree that cannot be removed now stays live: merging again is
        // then a no-op merge that retries the removal, and `gc` collects it.
        let task = match self.remove_worktree(id, &wt.at, "merged", false).await {
            Ok(snapshot) => {
                self.set_worktree(
                    id,
                    TaskWorktree {
                        outcome: Some(WorktreeOutcome::Merged),
                        snapshot,
                        ..wt
                    },
                )
                .await?
            }
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "merged, but the worktree could not be removed");
                self.get_task(id)?
            }
        };
        tracing::info!(task = %id, commit = %merged.commit, "task merged");
        Ok((task, merged))
    }

    /// Removes a finished task's worktree and branch; everything in them is kept under the
    /// task's snapshot ref.
    pub async fn discard_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let _one = self.inner.finishing.lock().await;
        self.discard_holding_finish(id).await
    }

    /// [`Engine::discard_task`], its caller holding the one finishing lock.
    pub(super) async fn discard_holding_finish(&self, id: &str) -> EngineResult<Arc<Task>> {
        let (task, wt) = self.live_worktree(id)?;
        Self::ensure_finished(&task, "discard")?;
        let snapshot = self.remove_worktree(id, &wt.at, "discarded", false).await?;
        self.set_worktree(
            id,
            TaskWorktree {
                outcome: Some(WorktreeOutcome::Discarded),
                snapshot,
                ..wt
            },
        )
        .await
    }

    async fn remove_worktree(
        &self,
        id: &str,
        wt: &Worktree,
        why: &'static str,
        keep_branch: bool,
    ) -> EngineResult<Option<String>> {
        let (wt, id) = (wt.clone(), id.to_string());
        blocking(move || git::worktree::remove(&wt, &id, why, keep_branch)).await
    }

    /// Before a task is deleted: its worktree is removed after a snapshot; branch kept.
    pub(crate) async fn release_worktree(&self, task: &Task) -> EngineResult<()> {
        if let Some(wt) = task.metadata.worktree.as_ref().filter(|w| w.is_live()) {
            self.remove_worktree(&task.id, &wt.at, "task deleted", true)
                .await
                .map_err(|e| {
                    EngineError::Conflict(format!(
                        "the task's worktree could not be kept safely, so nothing was deleted: {e}"
                    ))
                })?;
        }
        Ok(())
    }

    /// Removes the worktrees of tasks finished longer than `older_than` ago (snapshot
    /// first, branch kept) and says what each freed.
    pub async fn collect_worktrees(&self, older_than: Duration) -> EngineResult<Vec<Collected>> {
        let _one = self.inner.finishing.lock().await;
        let cutoff = now_ms().saturating_sub(older_than.as_millis() as i64);
        let mut collected = Vec::new();
        for task in self.list_tasks(None, None) {
            let Some(wt) = task.metadata.worktree.clone().filter(|w| w.is_live()) else {
                continue;
            };
            let old_enough =
                task.status().is_final() && task.metadata.completed_at.is_some_and(|t| t <= cutoff);
            if !old_enough {
                continue;
            }
            let bytes = {
                let p = wt.at.path().to_path_buf();
                tokio::task::spawn_blocking(move || disk_usage(&p))
                    .await
                    .unwrap_or(0)
            };
            let snapshot = self
                .remove_worktree(&task.id, &wt.at, "collected", true)
                .await?;
            collected.push(Collected {
                task_id: task.id.clone(),
                path: wt.at.path.clone(),
                branch: wt.at.branch.clone(),
                bytes,
                snapshot: snapshot.clone(),
            });
            self.set_worktree(
                &task.id,
                TaskWorktree {
                    outcome: Some(WorktreeOutcome::Collected),
                    snapshot,
                    ..wt
                },
            )
            .await?;
        }
        Ok(collected)
    }
}
