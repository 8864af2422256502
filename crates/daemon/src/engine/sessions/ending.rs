//! Ending sessions: on request (delete, cancel, shutdown) and when they end by themselves,
//! recorded once with the files and the credential handed to them withdrawn.

use super::{SessionEntry, session_record};
use crate::engine::{Engine, EngineResult, SessionEventKind, delegation, hooks, instructions};
use crate::session::ExitInfo;
use orchestra_proto::wire::SessionInfo;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// How long ending a session waits for the sends it accepted to be typed.
const ACCEPTED_SENDS_TYPED: std::time::Duration = std::time::Duration::from_secs(2);

impl Engine {
    /// Ends a session (SIGTERM, then SIGKILL after the grace period) and reaps it.
    pub async fn delete_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        self.end_session(&entry).await;
        self.get_session(id)
    }

    /// Terminates a live session on purpose and records its end; idempotent.
    pub(crate) async fn end_session(&self, entry: &Arc<SessionEntry>) {
        let Some(pty) = entry.pty.clone() else { return };
        if entry.info.lock().ended {
            return;
        }
        // A send already accepted (its 201 sent, see `send_accepted`) is typed before the
        // session is ended, as its caller was told; a new one is refused from here on (the
        // mark is set between two acceptances, so every accepted send is queued for typing
        // ahead of this wait). A turn held longer (a write to a stopped child) does not hold
        // the end up.
        let _typed = tokio::time::timeout(ACCEPTED_SENDS_TYPED, async {
            let accepting = entry.accepting.lock().await;
            entry.ending_on_purpose.store(true, Ordering::SeqCst);
            drop(accepting);
            entry.typing.lock().await
        })
        .await;
        entry.ending_on_purpose.store(true, Ordering::SeqCst);
        let grace = self.config().grace;
        let exit = match tokio::task::spawn_blocking(move || pty.terminate(grace)).await {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(error = %e, "terminate failed");
                ExitInfo::default()
            }
        };
        self.finish_reply(entry).await;
        self.mark_exited(entry, exit).await;
    }

    /// Records a session's end once (the follower and `end_session` may both get here).
    pub(super) async fn mark_exited(&self, entry: &Arc<SessionEntry>, exit: ExitInfo) {
        // The files handed to its CLI at start are of no use to anyone now; gone before the
        // session reads as ended, so that nobody who sees it ended finds them.
        let id = entry.info.lock().id.clone();
        if let Some(credential) = &entry.credential {
            self.withdraw_credential(credential);
        }
        instructions::remove_file(self.state_dir(), &id);
        hooks::remove_settings(self.state_dir(), &id);
        delegation::remove_files(self.state_dir(), &id);
        let Some(info) = entry.record_exit(&exit) else {
            return;
        };
        if let Err(e) = self
            .store()
            .put(vec![session_record(&info, entry.seq)])
            .await
        {
            tracing::error!(error = %e, "could not persist a session's end");
        }
        self.publish_session(SessionEventKind::Exited, &info);
        self.session_status_changed(entry, info.status).await;
        tracing::info!(session = %info.id, %exit, "session ended");
        self.session_exited(entry, &info, &exit).await;
    }

    /// Ends every live session (at shutdown, and for `/api/agent/stop`).
    pub async fn end_all_sessions(&self) {
        let live: Vec<Arc<SessionEntry>> = self
            .inner
            .sessions
            .read()
            .order
            .iter()
            .filter(|e| !e.info.lock().ended && e.pty.is_some())
            .cloned()
            .collect();
        let ends = live.into_iter().map(|e| {
            let engine = self.clone();
            tokio::spawn(async move { engine.end_session(&e).await })
        });
        for h in ends.collect::<Vec<_>>() {
            let _ = h.await;
        }
    }
}
