//! Sessions in the engine: spawning a provider in a PTY, following what it does, sending it
//! messages, and ending it. A task run by a session follows it from here (see `runs.rs`).
//!
//! One file per part of a session's life, so each can be read on its own:
//! - [`entry`]: what the engine keeps of one session ([`SessionEntry`]);
//! - [`spawn`] and [`launch`]: starting one, and what its program is started with;
//! - [`follower`]: the task that takes what the session's threads report and acts on it;
//! - [`status_updates`]: a reported fact recorded, the status it decides saved and published;
//! - [`typing`], [`replies`], [`messages`] and [`prompts`]: what is typed into a session,
//!   the replies read off its screen, the messages kept of both, and answering its prompts;
//! - [`control`], [`ending`] and [`restore`]: its screen and size, pausing it, ending it,
//!   and the sessions of the last run read back.
//!
//! This file holds what they share: the request types, the session table, the lookups and
//! the conversions to store records and engine errors.

mod control;
mod ending;
mod entry;
mod follower;
mod launch;
mod messages;
mod prompts;
mod replies;
mod restore;
mod spawn;
mod status_updates;
mod typing;

pub(crate) use entry::SessionEntry;
pub(in crate::engine) use replies::screen_lines;
pub(crate) use spawn::ensure_installed;

use super::{Engine, EngineError, EngineResult};
use crate::session::{PtySession, SessionError};
use crate::store::{Record, Table};
use orchestra_proto::wire::{Approval, SessionInfo};
use replies::REPLY_SCROLLBACK;
use std::sync::Arc;

/// How much scrollback each session's terminal keeps: as much as a reply is read from
/// ([`REPLY_SCROLLBACK`]), and no more. Every line costs its full width in vt100 cells
/// (32 bytes each: 7.5 MiB at 120 columns); at 10,000 lines one flood left 40 MB behind
/// per session. The transcript on disk has everything.
const SCROLLBACK_LINES: usize = REPLY_SCROLLBACK;

/// A request to start a session.
#[derive(Debug, Clone, Default)]
pub struct SpawnSession {
    pub task: String,
    pub provider_id: Option<String>,
    pub working_directory: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    pub task_id: Option<String>,
    pub approval: Option<Approval>,
    /// Arguments before all others: a task's conversation pinned or resumed
    /// (`conversation_args`, `resume_args`), already fitted to the installed CLI.
    pub conversation_args: Vec<String>,
    /// Whether the agent gets orchestra's MCP server (its task's `delegate`).
    pub delegate: bool,
}

/// A session a client asked for (`POST /sessions`): no task, no conversation to resume.
impl From<orchestra_proto::wire::request::NewSession> for SpawnSession {
    fn from(new: orchestra_proto::wire::request::NewSession) -> Self {
        SpawnSession {
            task: new.task.unwrap_or_default(),
            provider_id: new.provider_id,
            working_directory: new.working_directory,
            cols: new.cols,
            rows: new.rows,
            task_id: None,
            approval: new.approval,
            conversation_args: Vec::new(),
            delegate: false,
        }
    }
}

/// What a send is: text to type and submit, or named keys (the API's own request type).
pub use orchestra_proto::wire::request::SendMessage;

#[derive(Default)]
pub(crate) struct SessionTable {
    pub(crate) by_id: std::collections::HashMap<String, Arc<SessionEntry>>,
    pub(crate) order: Vec<Arc<SessionEntry>>,
}

fn session_record(info: &SessionInfo, seq: i64) -> Record {
    Record {
        table: Table::Sessions,
        id: info.id.clone(),
        seq,
        owner: info.task_id.clone(),
        json: serde_json::to_string(info).unwrap_or_else(|_| "{}".into()),
    }
}

fn session_error(e: SessionError) -> EngineError {
    match e {
        SessionError::Ended => EngineError::Conflict("the session has ended".into()),
        SessionError::UnknownKey(k) => EngineError::Invalid(format!(
            "unknown key {k:?}: use names like enter, tab, shift-tab, esc, backspace, up, pageup, home, delete, f5, ctrl-c, alt-x, ctrl-up, or a single character"
        )),
        SessionError::InvalidCwd(p) => EngineError::Invalid(format!(
            "workingDirectory {} is not a directory",
            p.display()
        )),
        other => EngineError::Internal(other.to_string()),
    }
}

impl Engine {
    pub(crate) fn session_entry(&self, id: &str) -> EngineResult<Arc<SessionEntry>> {
        self.inner
            .sessions
            .read()
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NotFound(format!("no session with id {id:?}")))
    }

    fn live_session_count(&self) -> usize {
        self.inner
            .sessions
            .read()
            .order
            .iter()
            .filter(|s| !s.info.lock().ended)
            .count()
    }

    /// Live and total sessions.
    pub fn session_counts(&self) -> (usize, usize) {
        let total = self.inner.sessions.read().order.len();
        (self.live_session_count(), total)
    }

    pub fn get_session(&self, id: &str) -> EngineResult<SessionInfo> {
        Ok(self.session_entry(id)?.snapshot_info())
    }

    pub fn list_sessions(&self) -> Vec<SessionInfo> {
        self.inner
            .sessions
            .read()
            .order
            .iter()
            .map(|e| e.snapshot_info())
            .collect()
    }

    /// The live PTY of a session, for drawing its screen.
    pub fn session_pty(&self, id: &str) -> Option<Arc<PtySession>> {
        self.session_entry(id).ok().and_then(|e| e.pty.clone())
    }
}
