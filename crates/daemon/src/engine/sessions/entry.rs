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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
    /// The line typed into a program reading one: the text before its cursor is the user's
    /// own, not a question, while it is half-typed (see `agents.rs`).
    pub(crate) typed_line: TypedLine,
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

/// Whether the line of a program reading one is the user's, half-typed.
#[derive(Default)]
pub(crate) struct TypedLine {
    /// What was typed last did not end its line (no Enter, Ctrl-C or Ctrl-U yet).
    half_typed: AtomicBool,
    /// The terminal's generation (see `PtySession::screen_generation`) when a key that ends
    /// the line was typed: until the terminal changed after it, the screen still shows the
    /// line as it was (the program's echo of the key is still on its way), and reading it as
    /// a question would show the user's own text as one.
    ended_at: AtomicU64,
}

impl TypedLine {
    /// Something was typed, ending the line or not, at the terminal's `generation`.
    pub(crate) fn typed(&self, ends_the_line: bool, generation: u64) {
        if ends_the_line {
            self.ended_at.store(generation, Ordering::Relaxed);
        }
        self.half_typed.store(!ends_the_line, Ordering::Relaxed);
    }

    /// The program reads keys as they come: no line is left half-typed.
    pub(crate) fn clear(&self) {
        self.half_typed.store(false, Ordering::Relaxed);
    }

    /// Whether the line before the cursor is still the user's, the terminal being at
    /// `generation`.
    pub(crate) fn is_users(&self, generation: u64) -> bool {
        self.half_typed.load(Ordering::Relaxed)
            || generation <= self.ended_at.load(Ordering::Relaxed)
    }
}
