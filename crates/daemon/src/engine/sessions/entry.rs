//! What the engine keeps of one session ([`SessionEntry`]): its record, its terminal, the
//! state of typing into it and of the reply awaited, and what its status is decided from.
//! Every other file of `sessions` reads or changes one of these.

use super::replies::PendingReply;
use crate::engine::agents::AgentState;
use crate::engine::status::{Facts, SessionStatus};
use crate::engine::{EngineError, EngineResult};
use crate::providers::Provider;
use crate::session::PtySession;
use orchestra_proto::wire::{Message, SessionInfo};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub(crate) struct SessionEntry {
    pub(crate) seq: i64,
    pub(crate) info: Mutex<SessionInfo>,
    /// `None` for sessions restored from a previous run: their process is gone.
    pub(crate) pty: Option<Arc<PtySession>>,
    pub(crate) provider: Option<Provider>,
    pub(crate) messages: Mutex<Vec<Message>>,
    pub(super) reply: Mutex<Option<PendingReply>>,
    /// The first instruction, still to be typed once the agent is ready (or before the first
    /// input someone else types, see [`Engine::write_input`](crate::engine::Engine::write_input)).
    pub(super) first_instruction: Mutex<Option<String>>,
    /// Held while anything is typed into the terminal: what is typed (the first instruction,
    /// sends, raw input) reaches it whole and in the order it was taken.
    pub(in crate::engine) typing: tokio::sync::Mutex<()>,
    /// Held while a send from outside is accepted (made durable, given its place in the
    /// `typing` queue): sends are accepted one at a time, in order, without waiting for the
    /// ones before them to be typed.
    pub(in crate::engine) accepting: tokio::sync::Mutex<()>,
    /// Ended on purpose (delete, cancel): the task it runs is cancelled, not failed.
    pub(crate) ending_on_purpose: AtomicBool,
    /// Counts the output's quiet spells: looks at the terminal scheduled in an earlier one
    /// stop (see `terminal_looks.rs`).
    pub(crate) quiet_spells: std::sync::atomic::AtomicU64,
    /// What was typed last did not end its line (no Enter yet): the text before the cursor
    /// of a program reading a line is the user's own, not a question (see `agents.rs`).
    pub(crate) line_half_typed: AtomicBool,
    /// Screen classification and turn state of coding agents (see `agents.rs`).
    pub(crate) agent: Mutex<AgentState>,
    /// What the session runtime reported, the status is decided from (see `status.rs`).
    pub(crate) facts: Mutex<Facts>,
    /// The status last published, for watchers of this one session (terminal streams).
    pub(super) status_watch: tokio::sync::watch::Sender<SessionStatus>,
    /// The session's own credential: its agent's `ORCHESTRA_TOKEN` (and the secret its hooks
    /// send, `hooks.rs`), good for its own task and session only (`api::rights`) and only
    /// while it lives. `None` for sessions restored from a previous run.
    pub(crate) credential: Option<String>,
}

impl SessionEntry {
    pub(crate) fn snapshot_info(&self) -> SessionInfo {
        self.info.lock().clone()
    }

    /// Forgets the reply being waited for: the agent's hook reported it.
    pub(in crate::engine) fn drop_pending_reply(&self) {
        self.reply.lock().take();
    }

    pub(super) fn live_pty(&self) -> EngineResult<&Arc<PtySession>> {
        match &self.pty {
            Some(p) if !self.info.lock().ended => Ok(p),
            _ => Err(EngineError::Conflict(format!(
                "session {} has ended",
                self.info.lock().id
            ))),
        }
    }
}
