//! The messages of a session: what was sent to it and its agent's replies, each made
//! durable in the store before it is published (and, for a send, before it is accepted and
//! typed).

use super::SessionEntry;
use crate::engine::{Engine, EngineResult, Event, now_ms};
use crate::store::{Record, Table};
use orchestra_proto::wire::{Message, Role};
use std::sync::Arc;

/// A message stamped now.
pub(super) fn new_message(
    role: Role,
    text: String,
    keys: Option<Vec<String>>,
    auto: Option<String>,
) -> Message {
    Message {
        id: uuid::Uuid::new_v4().to_string(),
        role,
        text,
        at: now_ms(),
        keys,
        auto,
    }
}

fn message_record(session_id: &str, m: &Message, seq: i64) -> Record {
    Record {
        table: Table::Messages,
        id: m.id.clone(),
        seq,
        owner: Some(session_id.to_string()),
        json: serde_json::to_string(m).unwrap_or_else(|_| "{}".into()),
    }
}

impl Engine {
    pub(in crate::engine) async fn record_message(
        &self,
        entry: &Arc<SessionEntry>,
        role: Role,
        text: String,
        keys: Option<Vec<String>>,
        auto: Option<String>,
    ) -> Message {
        let seq = self.next_seq();
        self.record_message_at(entry, role, text, keys, auto, seq)
            .await
    }

    /// `record_message` with its place in the store's order given: a reply taken after the
    /// send that ends it was accepted goes before that send (see `typing.rs`).
    pub(in crate::engine) async fn record_message_at(
        &self,
        entry: &Arc<SessionEntry>,
        role: Role,
        text: String,
        keys: Option<Vec<String>>,
        auto: Option<String>,
        seq: i64,
    ) -> Message {
        let m = new_message(role, text, keys, auto);
        if let Err(e) = self.store_message(entry, &m, seq).await {
            tracing::error!(error = %e, "could not persist a message");
        }
        self.add_message(entry, m)
    }

    /// Writes a message of the session to the store at `seq` (its place in the session's
    /// order when loaded again); returns once it is durable.
    pub(super) async fn store_message(
        &self,
        entry: &Arc<SessionEntry>,
        m: &Message,
        seq: i64,
    ) -> EngineResult<()> {
        let session_id = entry.info.lock().id.clone();
        let record = message_record(&session_id, m, seq);
        Ok(self.store().put(vec![record]).await?)
    }

    /// Adds a message to the session's list and publishes it.
    pub(super) fn add_message(&self, entry: &Arc<SessionEntry>, m: Message) -> Message {
        entry.messages.lock().push(m.clone());
        let session_id = entry.info.lock().id.clone();
        self.publish(Event::Message {
            session_id,
            message: Arc::new(m.clone()),
        });
        m
    }

    pub fn session_messages(&self, id: &str) -> EngineResult<Vec<Message>> {
        Ok(self.session_entry(id)?.messages.lock().clone())
    }
}
