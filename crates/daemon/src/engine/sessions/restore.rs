//! The sessions of the last run, read back from the store at start: all of them ended with
//! that run (their processes are gone), so they come back ended, with their messages.

use super::{SessionEntry, session_record};
use crate::engine::status::{Facts, decide_with_source};
use crate::engine::{Engine, now_ms};
use crate::store::Record;
use orchestra_proto::wire::{Message, SessionInfo};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

impl Engine {
    /// Restores sessions and messages from the store: all of them ended with the last run.
    pub(crate) fn restore_sessions(
        &self,
        sessions: Vec<Record>,
        messages: Vec<Record>,
    ) -> Vec<Record> {
        let mut by_session: BTreeMap<String, Vec<Message>> = BTreeMap::new();
        for m in messages {
            if let (Some(owner), Ok(msg)) =
                (m.owner.clone(), serde_json::from_str::<Message>(&m.json))
            {
                by_session.entry(owner).or_default().push(msg);
            }
        }
        let mut repairs = Vec::new();
        let now = now_ms();
        let mut table = self.inner.sessions.write();
        for rec in sessions {
            let Ok(mut info) = serde_json::from_str::<SessionInfo>(&rec.json) else {
                tracing::warn!(id = %rec.id, "skipping an unreadable stored session");
                continue;
            };
            if !info.ended {
                info.ended = true;
                (info.status, info.status_source) =
                    decide_with_source(&Facts::ended(), None, false);
                info.ended_at = Some(now);
                info.prompt = None;
                repairs.push(session_record(&info, rec.seq));
            }
            let entry = Arc::new(SessionEntry {
                seq: rec.seq,
                status_watch: tokio::sync::watch::Sender::new(info.status),
                messages: Mutex::new(by_session.remove(&info.id).unwrap_or_default()),
                info: Mutex::new(info),
                pty: None,
                provider: None,
                reply: Mutex::new(None),
                first_instruction: Mutex::new(None),
                typing: tokio::sync::Mutex::new(()),
                accepting: tokio::sync::Mutex::new(()),
                ending_on_purpose: AtomicBool::new(false),
                quiet_spells: std::sync::atomic::AtomicU64::new(0),
                typed_line: Default::default(),
                agent: Default::default(),
                facts: Mutex::new(Facts::ended()),
                credential: None,
            });
            table.by_id.insert(rec.id, entry.clone());
            table.order.push(entry);
        }
        repairs
    }
}
