//! What a session's threads (reader, processing, waiter) and its [`PtySession`] handle share
//! ([`Shared`]), and the order of its locks, which every file of `pty` keeps:
//! - `parsed` is taken before `term` and `state` (never while holding them), and never with
//!   `inbox`;
//! - `term` → `master` (a resize changes the parser and the PTY together), and `term` → the
//!   visible copy's `mirror` → `latest` (see `visible.rs`);
//! - [`PtySession`]'s `terminate_lock` → `state`;
//! - `output_gate` → the engine's inbox of the session (output lines are delivered under the
//!   gate, so none follows the exit);
//! - `inbox`, `writer` and `transcript` are taken alone.
//!
//! The processing thread releases `term` with `unlock_fair` after each slice it parses
//! (`PARSE_SLICE`), so waiters get it in turn.

#[cfg(doc)]
use super::PtySession;
use crate::session::activity::{Activity, ActivityTracker};
use crate::session::screen::Terminal;
use crate::session::transcript::Transcript;
use crate::session::tree::TreeQuery;
use crate::session::visible::Visible;
use crate::session::{ExitInfo, SessionEvent};
use parking_lot::{Condvar, Mutex};
use portable_pty::MasterPty;
use std::io::Write;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the reader and the waiter hand to the processing thread: a bounded byte queue
/// (coalescing: whatever arrived while the parser was busy is taken in one go) and flags.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) data: Vec<u8>,
    /// The output lines the reader split from `data` (and from bytes already taken): they
    /// go out with the screen change of the same bytes, so the engine is woken once per
    /// write of the program, not once for its lines and again for its screen.
    pub(super) lines: Vec<String>,
    /// The reader saw EOF/EIO.
    pub(super) eof: bool,
    /// The leader was reaped (set by the waiter).
    pub(super) exit: bool,
    /// The processing thread is done; the reader stops.
    pub(super) closed: bool,
    /// A batch is being parsed (by the processing thread, or inline by the reader): the
    /// other waits, so output is parsed in the order it was read.
    pub(super) parsing: bool,
}

/// What parsing output keeps between batches, whichever thread parses.
pub(super) struct Parsed {
    pub(super) activity: ActivityTracker,
    /// Output processed since memory was last given back (see `memory.rs`).
    pub(super) since_trim: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sweeper {
    None,
    Waiter,
    Terminate,
}

pub(super) struct State {
    /// What the output is doing (kept by the processing thread; read by `activity`).
    pub(super) activity: Activity,
    /// Stopped by `pause` and not continued since.
    pub(super) paused: bool,
    /// Set when the leader exited (it may still be an unreaped zombie).
    pub(super) exit: Option<ExitInfo>,
    pub(super) reaped: bool,
    /// The Exited event was delivered; all output was processed.
    pub(super) finished: bool,
    /// Who ends the leftovers of the tree; the leader is reaped only after `tree_clean`.
    pub(super) sweeper: Sweeper,
    pub(super) tree_clean: bool,
}

/// The screen's modes that typing is encoded by, copied out under the parser's lock after
/// each slice it parses: a key sent while a flood is parsed reads them without waiting for
/// that lock (held by a bulk-priority thread, which may be preempted holding it).
#[derive(Default)]
pub(super) struct TypingModes {
    pub(super) application_cursor: AtomicBool,
    pub(super) bracketed_paste: AtomicBool,
}

impl TypingModes {
    pub(super) fn follow(&self, screen: &vt100::Screen) {
        self.application_cursor
            .store(screen.application_cursor(), Ordering::Relaxed);
        self.bracketed_paste
            .store(screen.bracketed_paste(), Ordering::Relaxed);
    }
}

pub(super) struct Shared {
    pub(super) pid: i32,
    pub(super) marker: String,
    /// The master's descriptor, non-blocking (shared by `writer`, the reader and `master`):
    /// a key is written from an async worker when the terminal has room, which it nearly
    /// always has, instead of on another thread that must first get a turn on a CPU.
    pub(super) fd: RawFd,
    pub(super) term: Mutex<Terminal>,
    pub(super) typing_modes: TypingModes,
    /// The visible screen for the streams, copied between parse slices while watched.
    pub(super) visible: Visible,
    pub(super) writer: Mutex<Box<dyn Write + Send>>,
    pub(super) master: Mutex<Box<dyn MasterPty + Send>>,
    pub(super) state: Mutex<State>,
    pub(super) cond: Condvar,
    pub(super) on_event: Box<dyn Fn(SessionEvent) + Send + Sync>,
    pub(super) inbox: Mutex<Inbox>,
    /// Signalled when the inbox has something for the processing thread.
    pub(super) inbox_ready: Condvar,
    /// Signalled when the processing thread took the inbox's bytes.
    pub(super) inbox_space: Condvar,
    /// Signalled when the reader finished parsing a batch inline.
    pub(super) inline_done: Condvar,
    /// Taken before `term` and `state` (never while holding them), never with `inbox`.
    pub(super) parsed: Mutex<Parsed>,
    /// Held while output lines are delivered; `true` once `Exited` is being delivered, so no
    /// line can follow it.
    pub(super) output_gate: Mutex<bool>,
    /// The raw transcript, written by the reader; `None` once the reader has ended (dropping
    /// it flushed it) or when the session keeps none.
    pub(super) transcript: Mutex<Option<Transcript>>,
    /// Bumped after each change to the terminal (a batch parsed, a resize, the end), so
    /// watchers wake on a change instead of polling; nothing queues however many bumps.
    pub(super) screen_generation: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    pub(super) fn emit(&self, event: SessionEvent) {
        (self.on_event)(event);
    }

    pub(super) fn query(&self) -> TreeQuery<'_> {
        TreeQuery {
            leader: self.pid,
            marker: &self.marker,
        }
    }

    pub(super) fn screen_changed(&self) {
        self.screen_generation
            .send_modify(|g| *g = g.wrapping_add(1));
    }
}
