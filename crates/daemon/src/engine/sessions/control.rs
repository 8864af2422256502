//! Looking at and steering a live session: its screen (`peek`), its size, and pausing or
//! resuming it (a task's session through its task, so the task's status follows).

use super::{SCROLLBACK_LINES, SessionEntry, session_error, session_record};
use crate::engine::status::Fact;
use crate::engine::{Engine, EngineResult};
use orchestra_proto::wire::{Cursor, Peek, SessionInfo};
use std::sync::Arc;

impl Engine {
    pub fn peek(&self, id: &str, scrollback: usize, ansi: bool) -> EngineResult<Peek> {
        let entry = self.session_entry(id)?;
        let info = entry.snapshot_info();
        let asked = |lines: Vec<String>| (scrollback > 0).then_some(lines);
        Ok(match &entry.pty {
            Some(pty) => {
                let snap = pty.snapshot(scrollback.min(SCROLLBACK_LINES), ansi);
                Peek {
                    screen: snap.screen,
                    screen_ansi: snap.screen_ansi.filter(|_| ansi),
                    cursor: Cursor {
                        row: snap.cursor.0,
                        col: snap.cursor.1,
                    },
                    cols: snap.cols,
                    rows: snap.rows,
                    alternate_screen: Some(snap.alternate_screen),
                    scrollback: asked(snap.scrollback),
                    status: info.status,
                }
            }
            // Restored from a previous run: the terminal is gone, the transcript is on disk.
            None => Peek {
                screen: String::new(),
                screen_ansi: None,
                cursor: Cursor { row: 0, col: 0 },
                cols: info.cols,
                rows: info.rows,
                alternate_screen: None,
                scrollback: asked(Vec::new()),
                status: info.status,
            },
        })
    }

    pub async fn resize_session(
        &self,
        id: &str,
        cols: u16,
        rows: u16,
    ) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let pty = entry.live_pty()?.clone();
        pty.resize(cols, rows).map_err(session_error)?;
        let info = {
            let mut info = entry.info.lock();
            info.cols = cols;
            info.rows = rows;
            info.clone()
        };
        self.store()
            .put_later(vec![session_record(&info, entry.seq)]);
        Ok(info)
    }

    pub async fn pause_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let task_id = entry.info.lock().task_id.clone();
        if let Some(task_id) = task_id
            && self
                .get_task(&task_id)
                .is_ok_and(|t| t.status() == orchestra_proto::task::TaskStatus::Running)
        {
            self.pause_task(&task_id).await?;
            return self.get_session(id);
        }
        self.stop_group(&entry).await?;
        self.get_session(id)
    }

    pub async fn resume_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let task_id = entry.info.lock().task_id.clone();
        if let Some(task_id) = task_id
            && self
                .get_task(&task_id)
                .is_ok_and(|t| t.status() == orchestra_proto::task::TaskStatus::Paused)
        {
            self.resume_task(&task_id).await?;
            return self.get_session(id);
        }
        self.continue_group(&entry).await?;
        self.get_session(id)
    }

    /// SIGSTOP to the session's whole process group; the status is recorded at once (not
    /// when the follower gets to it), so the response already shows it.
    pub(crate) async fn stop_group(&self, entry: &Arc<SessionEntry>) -> EngineResult<()> {
        entry.live_pty()?.pause().map_err(session_error)?;
        self.on_session_fact(entry, Fact::Paused(true)).await;
        Ok(())
    }

    /// SIGCONT to the session's whole process group, recording the status it returns to.
    pub(crate) async fn continue_group(&self, entry: &Arc<SessionEntry>) -> EngineResult<()> {
        entry.live_pty()?.resume().map_err(session_error)?;
        self.on_session_fact(entry, Fact::Paused(false)).await;
        Ok(())
    }
}
