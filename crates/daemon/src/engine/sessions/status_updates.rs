//! How what a session's runtime reports becomes its status: a fact recorded, the status it
//! decides (see `status.rs`) saved and published, and what a new status sets off (the reply
//! taken, the first instruction typed, the task told).

use super::SessionEntry;
use super::session_record;
use crate::engine::status::{Changed, Fact, SessionStatus};
use crate::engine::{Engine, EngineResult, Event, SessionEventKind};
use orchestra_proto::wire::SessionInfo;
use std::sync::Arc;

impl Engine {
    pub(in crate::engine) fn publish_session(&self, kind: SessionEventKind, info: &SessionInfo) {
        self.publish(Event::Session {
            kind,
            session: Arc::new(info.clone()),
        });
        if let Ok(entry) = self.session_entry(&info.id) {
            entry.status_watch.send_replace(info.status);
        }
    }

    /// The session's status now, and a receiver that wakes when it changes.
    pub fn watch_session_status(
        &self,
        id: &str,
    ) -> EngineResult<tokio::sync::watch::Receiver<SessionStatus>> {
        Ok(self.session_entry(id)?.status_watch.subscribe())
    }

    /// Records a fact that is not the runtime's (a usage limit) and, when the status changed,
    /// persists and publishes it.
    pub(in crate::engine) fn apply_fact(&self, entry: &Arc<SessionEntry>, fact: Fact) {
        if let Some(changed) = entry.record_fact(fact) {
            self.save_status(entry, &changed);
        }
        if entry.agent.lock().answering.is_some() {
            let (engine, entry) = (self.clone(), entry.clone());
            tokio::spawn(async move { engine.answer_by_itself(&entry).await });
        }
    }

    /// Records a fact the session runtime reported; when the status it decides (see
    /// `status.rs`) changed, persists and publishes it and acts on it.
    pub(in crate::engine) async fn on_session_fact(&self, entry: &Arc<SessionEntry>, fact: Fact) {
        self.watch_limit_wait(entry, true);
        let look_again = fact == Fact::LookAgain;
        let changed = entry.record_fact(fact);
        // A fresh look at a quiet terminal (gone quiet, continued after a pause, …) starts a
        // fresh watch on it; a look taken by that watch does not.
        if !look_again && entry.facts.lock().activity.is_quiet() {
            self.keep_looking_while_a_command_runs(entry);
        }
        if let Some(changed) = changed {
            let status = changed.info.status;
            self.save_status(entry, &changed);
            if matches!(status, SessionStatus::Ready | SessionStatus::Blocked) {
                self.finish_reply(entry).await;
            }
            if status == SessionStatus::Ready {
                self.type_first_instruction(entry).await;
            }
            self.session_status_changed(entry, status).await;
        }
        // A prompt the preset answers, decided busy above: answered now.
        self.answer_by_itself(entry).await;
    }

    /// Persists and publishes what `record_fact` decided: `session:status` for a new status,
    /// `session:prompt` for a new prompt (both when a session becomes blocked or stops being
    /// so), each carrying the whole session.
    pub(super) fn save_status(&self, entry: &Arc<SessionEntry>, changed: &Changed) {
        let info = &changed.info;
        if let Some(resets_at) = changed.limit {
            tracing::info!(session = %info.id, ?resets_at, "usage limit reached (its prompt says)");
            self.limit_reached(entry, resets_at);
        }
        self.store()
            .put_later(vec![session_record(info, entry.seq)]);
        if changed.status {
            self.publish_session(SessionEventKind::Status, info);
        }
        if changed.prompt {
            self.publish_session(SessionEventKind::Prompt, info);
        }
    }
}
