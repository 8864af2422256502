//! Deleting finished tasks and removing ended sessions: each is written to the trash first,
//! then taken out of the store, then out of memory, then announced.

use super::sessions::SessionEntry;
use super::trash::{self, KeptSession};
use super::{Engine, EngineError, EngineResult, Event, SessionEventKind, TaskEventKind, write};
use crate::store::{Removal, Table};
use orchestra_proto::task::Task;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

fn kept(entry: &SessionEntry) -> KeptSession {
    // An ended session's reader may still be buffering what a leftover process printed:
    // the copy kept in the trash has it all. (At most one buffer's write, on a rare path.)
    if let Some(pty) = &entry.pty {
        pty.flush_transcript();
    }
    KeptSession {
        info: entry.snapshot_info(),
        messages: entry.messages.lock().clone(),
    }
}

fn session_removals(sessions: &[KeptSession]) -> impl Iterator<Item = Removal> + '_ {
    sessions.iter().flat_map(|s| {
        [
            Removal::Record(Table::Sessions, s.info.id.clone()),
            Removal::OwnedBy(Table::Messages, s.info.id.clone()),
        ]
    })
}

impl Engine {
    /// Deletes a finished task with its sessions' records and transcripts, after keeping
    /// them under `<state>/trash/<task-id>/`. A session still open on it (an agent that
    /// reported its result and waits) is ended first: the task it served is gone.
    pub async fn delete_task(&self, id: &str) -> EngineResult<Arc<Task>> {
        let _one_removal = self.inner.removing.lock().await;
        let _no_merge_meanwhile = self.inner.finishing.lock().await;
        let slot = self.slot(id)?;
        let _serialised = slot.change.lock().await;
        if slot.is_gone() {
            return Err(EngineError::NotFound(format!("no task with id {id:?}")));
        }
        let task = slot.get();
        if !task.status().is_final() {
            return Err(EngineError::Conflict(format!(
                "task is {}; cancel it first: only a finished task (completed, failed or cancelled) can be deleted",
                task.status()
            )));
        }
        let entries = self.sessions_of_task(id);
        for entry in &entries {
            // The task is final, so its end changes nothing on the task (which we hold).
            self.end_session(entry).await;
        }
        // Its worktree goes, its work stays: a snapshot ref and the branch.
        self.release_worktree(&task).await?;
        let sessions: Vec<KeptSession> = entries.iter().map(|e| kept(e)).collect();
        let dir = trash::task_dir(self.state_dir(), id);
        let sessions = self
            .to_trash(dir, sessions, {
                let task = task.clone();
                move |dir, sessions| trash::keep_task(dir, &task, sessions)
            })
            .await?;
        let mut removals = vec![Removal::Record(Table::Tasks, id.to_string())];
        removals.extend(session_removals(&sessions));
        self.store().remove(removals).await?;
        slot.gone.store(true, Ordering::SeqCst);
        {
            let mut table = write(&self.inner.tasks);
            table.by_id.remove(id);
            table.order.retain(|s| !Arc::ptr_eq(s, &slot));
        }
        self.inner.git.lock().remove(id);
        self.forget_sessions(&sessions);
        trash::drop_transcripts(&sessions);
        self.publish(Event::Task {
            kind: TaskEventKind::Deleted,
            task: task.clone(),
            lines: Arc::default(),
        });
        tracing::info!(task = %id, "task deleted (kept in the trash)");
        Ok(task)
    }

    /// Removes an ended session's record, after keeping it and its transcript under
    /// `<state>/trash/sessions/<session-id>/`. A live session must be ended first.
    pub async fn remove_session(&self, id: &str) -> EngineResult<super::SessionInfo> {
        let _one_removal = self.inner.removing.lock().await;
        let entry = self.session_entry(id)?;
        if entry.pty.is_some() && !entry.info.lock().ended {
            return Err(EngineError::Conflict(format!(
                "session {id} is still running; end it first (DELETE without remove=true), then remove it"
            )));
        }
        let dir = trash::session_dir(self.state_dir(), id);
        let sessions = self
            .to_trash(dir, vec![kept(&entry)], |dir, sessions| {
                sessions
                    .iter()
                    .try_for_each(|s| trash::keep_session(dir, s))
            })
            .await?;
        self.store()
            .remove(session_removals(&sessions).collect())
            .await?;
        self.forget_sessions(&sessions);
        trash::drop_transcripts(&sessions);
        tracing::info!(session = %id, "session removed (kept in the trash)");
        Ok(entry.snapshot_info())
    }

    /// Every session (live or of an earlier run) that ran the task.
    fn sessions_of_task(&self, task_id: &str) -> Vec<Arc<SessionEntry>> {
        self.inner
            .sessions
            .read()
            .order
            .iter()
            .filter(|e| e.info.lock().task_id.as_deref() == Some(task_id))
            .cloned()
            .collect()
    }

    /// Writes to the trash off the async workers; a failure leaves everything in place.
    async fn to_trash(
        &self,
        dir: PathBuf,
        sessions: Vec<KeptSession>,
        keep: impl FnOnce(&std::path::Path, &[KeptSession]) -> std::io::Result<()> + Send + 'static,
    ) -> EngineResult<Vec<KeptSession>> {
        let shown = dir.display().to_string();
        tokio::task::spawn_blocking(move || keep(&dir, &sessions).map(|()| sessions))
            .await
            .map_err(|e| EngineError::Internal(format!("writing to the trash failed: {e}")))?
            .map_err(|e| {
                EngineError::Internal(format!(
                    "could not keep a copy in {shown}, so nothing was deleted: {e}"
                ))
            })
    }

    /// Drops removed sessions from memory and announces each.
    fn forget_sessions(&self, sessions: &[KeptSession]) {
        {
            let mut table = self.inner.sessions.write();
            for s in sessions {
                table.by_id.remove(&s.info.id);
            }
            table
                .order
                .retain(|e| !sessions.iter().any(|s| s.info.id == e.info.lock().id));
        }
        for s in sessions {
            self.publish_session(SessionEventKind::Removed, &s.info);
        }
    }
}
