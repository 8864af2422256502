//! Subagent sessions: one child per pseudo-terminal and process group, read through vt100.
//!
//! This is the provider-agnostic runtime: it knows nothing of tasks, providers or HTTP. It
//! reports facts (output, screen changes, activity with timestamps, paused, exit); what they
//! mean for an agent's status is decided by the engine (`engine/status.rs`).
//!
//! ```text
//!  child ─▶ PTY master ─▶ reader thread ─┬─ transcript file (capped)
//!                                        ├─ line splitter ─▶ SessionEvent::Output
//!                                        └─▶ inbox (bounded: 1 MiB; full → the reader stops
//!                                            reading → the child blocks in write(2))
//!                                              │ whatever arrived while parsing, in one go
//!                                              ▼
//!                                        processing thread ─┬─ vt100 parser (+ replies written back)
//!                                                           ├─ SessionEvent::Screen (one per batch)
//!                                                           └─ activity (quiet timer) ─▶ SessionEvent::Activity
//!  waiter thread: waitid(leader, WNOWAIT) ─▶ exit info, leftover cleanup, reap ─▶ SessionEvent::Exited
//! ```
//!
//! # API
//! - [`PtySession::spawn`]`(SpawnSpec, on_event) -> Result<Arc<PtySession>, SessionError>`
//! - control: [`write`](PtySession::write), [`try_write`](PtySession::try_write),
//!   [`send_keys`](PtySession::send_keys),
//!   [`send_text`](PtySession::send_text), [`resize`](PtySession::resize),
//!   [`pause`](PtySession::pause), [`resume`](PtySession::resume),
//!   [`terminate`](PtySession::terminate) (blocking, idempotent)
//! - reading: [`activity`](PtySession::activity), [`is_paused`](PtySession::is_paused),
//!   [`exit_info`](PtySession::exit_info),
//!   [`snapshot`](PtySession::snapshot), [`with_screen`](PtySession::with_screen),
//!   [`watch_screen`](PtySession::watch_screen) (wakes on each change),
//!   [`watch_visible`](PtySession::watch_visible) (a copy of the visible screen that never
//!   waits for the parser),
//!   [`wait_exit`](PtySession::wait_exit), [`pid`](PtySession::pid)
//! - pure helpers: the one key encoder ([`Key`], [`encode_key`], [`encode_keys`],
//!   [`encode_text`], [`encode_paste`]), [`LineSplitter`],
//!   [`Transcript`], [`become_subreaper`], [`reap_orphans`].
//!
//! # Guarantees
//! - The child starts from a cleared environment plus exactly `SpawnSpec::env`, plus
//!   `ORCHESTRA_SESSION_MARKER=<marker>` ([`MARKER_VAR`]) which lets [`PtySession::terminate`]
//!   find descendants that left the process group (`setsid`, daemons). (portable-pty also sets
//!   `SHELL` when the spec does not.)
//! - The child is a session leader with the PTY as its controlling terminal (pgid == pid).
//!   Signals go to the whole group, and to the rest of its tree (see [`tree`]).
//! - A child that writes faster than we parse blocks in `write(2)`: the channel is bounded.
//! - An idle session costs no CPU: every thread blocks (poll, recv, waitid); the quiet timer
//!   only runs while output is arriving.
//! - The terminal's descriptor is non-blocking: [`PtySession::try_write`] types from an async
//!   worker without waiting; [`PtySession::write`] waits for room like a blocking write.
//! - Nothing outlives a session: on terminate, and when the leader exits by itself, the
//!   remaining processes of its tree get SIGTERM and then SIGKILL. The process becomes a child
//!   subreaper, and adopted orphans are reaped (see [`reaper`]).
//! - Events are delivered from the session's threads (mostly the processing thread); the
//!   callback must not block for long and must not call `terminate` or `wait_exit` inline.
//!   `pause`/`resume` report nothing: their caller knows (and [`PtySession::is_paused`] says).

mod activity;
pub mod fd_wait;
mod line_input;
mod lines;
mod memory;
mod pty;
pub mod reaper;
mod screen;
pub mod screen_sync;
mod transcript;
pub mod tree;
mod visible;

pub use activity::Activity;
pub use line_input::{Foreground, LineReader, cursor_lines};
pub use lines::{DEFAULT_MAX_LINE, LineSplitter};
pub use memory::use_an_arena_per_thread;
pub use orchestra_proto::keys::{
    Key, KeyCode, encode_key, encode_keys, encode_paste, encode_text, parse_keys,
};
pub use pty::{PtySession, VisibleScreen};
pub use reaper::{become_subreaper, reap_orphans};
pub use screen::{MIN_SIZE, Replies, ScreenSnapshot, Terminal, parser_size};
pub use transcript::Transcript;
pub use tree::MARKER_VAR;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to start a session.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Program name (looked up in the spec's `PATH`) or path.
    pub program: String,
    pub args: Vec<String>,
    /// Working directory; must be an existing directory.
    pub cwd: PathBuf,
    /// The COMPLETE environment: the child starts from a cleared environment plus exactly
    /// these (and the marker variable).
    pub env: Vec<(String, String)>,
    pub cols: u16,
    pub rows: u16,
    /// Scrollback kept by the parser, in lines.
    pub scrollback: usize,
    /// Raw transcript file (appended to), if any.
    pub transcript: Option<PathBuf>,
    /// Transcript cap in bytes; past it nothing more is written.
    pub transcript_cap: u64,
    /// How long nothing may change the screen before the output counts as quiet.
    pub settle: Duration,
    /// The same before the first output, when a program may still be starting.
    pub startup_quiet: Duration,
    /// Unique marker (the session id) put into the child's environment as
    /// `ORCHESTRA_SESSION_MARKER`; empty: a random one is generated.
    pub marker: String,
}

impl SpawnSpec {
    /// A spec with defaults: 80×24, 10 000 lines of scrollback, no transcript (cap 64 MiB if
    /// one is set), 500 ms settle time, 10 s start-up quiet time, a random marker, and an
    /// empty environment.
    pub fn new(program: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
            cols: 80,
            rows: 24,
            scrollback: 10_000,
            transcript: None,
            transcript_cap: 64 * 1024 * 1024,
            settle: Duration::from_millis(500),
            startup_quiet: Duration::from_secs(10),
            marker: String::new(),
        }
    }
}

/// How the session's leader ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitInfo {
    /// Exit code when it exited normally.
    pub code: Option<i32>,
    /// Signal name (`"SIGKILL"`, …) when a signal ended it.
    pub signal: Option<String>,
}

impl ExitInfo {
    /// Exited normally with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.code, &self.signal) {
            (Some(code), _) => write!(f, "exit code {code}"),
            (None, Some(sig)) => write!(f, "killed by {sig}"),
            (None, None) => f.write_str("ended (status unknown)"),
        }
    }
}

/// What a session reports to its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEvent {
    /// Complete output lines, ANSI stripped (the last partial line comes before `Exited`).
    /// Always followed at once by `Screen` (or `Exited`), so an owner may wait for that one
    /// to take both.
    Output(Vec<String>),
    /// The screen changed (coalesced: at most one per processed batch of output).
    Screen,
    /// The output's activity changed (active after a quiet spell, or quiet).
    Activity(Activity),
    /// The leader exited, was reaped, and all output was processed. Always the last event.
    Exited(ExitInfo),
}

/// Errors of the session runtime.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("working directory {0} is not a directory")]
    InvalidCwd(PathBuf),
    #[error("cannot start {program}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("pty: {0}")]
    Pty(String),
    #[error("session has ended")]
    Ended,
    #[error("unknown key {0:?}")]
    UnknownKey(String),
    #[error("signal: {0}")]
    Signal(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<orchestra_proto::keys::UnknownKey> for SessionError {
    fn from(e: orchestra_proto::keys::UnknownKey) -> Self {
        SessionError::UnknownKey(e.0)
    }
}
