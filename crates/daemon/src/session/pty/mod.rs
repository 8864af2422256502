//! One child in its own PTY: spawn, reader/processing/waiter threads, input, resize,
//! signals, termination and reaping.
//!
//! [`PtySession`] is the handle; what it and the session's three threads share, and the order
//! of their locks, is in [`shared`]. The rest, one file per purpose:
//! - [`spawn`]: the PTY opened, the leader forked and registered, the threads started;
//! - [`reader`]: the reader thread (transcript, line splitting, the bounded inbox);
//! - [`processing`]: the processing thread (parsing, replies, activity, the end of output);
//! - [`ending`]: the waiter thread, `terminate` and reaping;
//! - [`input`]: typing into the terminal (raw bytes, keys, text and its submit);
//! - [`control`]: resize, pause and resume, and what the session is doing;
//! - [`watching`]: the screen read for drawing, snapshots and live watchers.

mod control;
mod ending;
mod input;
mod processing;
mod reader;
mod shared;
mod spawn;
mod watching;

pub use watching::VisibleScreen;

use super::SessionError;
use parking_lot::Mutex;
use shared::Shared;
use std::sync::Arc;

/// A running (or ended) session. `Send + Sync`; share it behind the `Arc` `spawn` returns.
/// Dropping the last handle of a session that is still running terminates it (1 s grace).
pub struct PtySession {
    shared: Arc<Shared>,
    terminate_lock: Mutex<()>,
}

impl std::fmt::Debug for PtySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtySession")
            .field("pid", &self.shared.pid)
            .field("activity", &self.activity())
            .finish()
    }
}

/// A failure of the PTY library, as a session error.
fn pty_err(e: impl std::fmt::Display) -> SessionError {
    SessionError::Pty(e.to_string())
}

impl PtySession {
    /// The leader's pid (also its process group and session id).
    pub fn pid(&self) -> u32 {
        self.shared.pid as u32
    }

    /// The marker in the child's environment (`ORCHESTRA_SESSION_MARKER`).
    pub fn marker(&self) -> &str {
        &self.shared.marker
    }

    /// `Err(Ended)` once the leader exited.
    fn ensure_running(&self) -> Result<(), SessionError> {
        if self.shared.state.lock().exit.is_some() {
            Err(SessionError::Ended)
        } else {
            Ok(())
        }
    }
}
