//! One client's screen updates, computed on a thread of the client's own.
//!
//! A diff reads the session's screen under its lock, which a flooding session's parser holds
//! most of the time, so it must not run on an async worker. It ran on tokio's blocking pool
//! at first: with 16 flooding sessions watched, a hundred or more pool tasks a second made
//! the async workers wait on the pool's own lock in `spawn_blocking` (seen with gdb), and the
//! websocket carrying a typed key went unread meanwhile. A thread per client costs one
//! sleeping thread and a channel; the async side only sends a request and awaits the reply.
//!
//! The thread runs at the normal priority, not as bulk work (`crate::niceness`): a diff takes
//! little CPU, and at the bulk priority the 16 differs of a flooding grid waited 20 ms and more
//! for a turn, so the TUI's frames came in bursts (45 a second instead of 50 and more).

use super::sync::{ScreenSync, Update};
use crate::session::PtySession;
use std::sync::Arc;
use std::sync::mpsc;
use tokio::sync::oneshot;

/// The differ's stack: a diff needs little (one pass over the visible cells).
const STACK_SIZE: usize = 512 * 1024;

/// A client's differ. Dropping it ends its thread.
pub struct Differ {
    requests: mpsc::Sender<oneshot::Sender<Update>>,
}

impl Differ {
    /// Starts the thread for a client that has no screen yet (its first update redraws all).
    pub fn start(pty: Arc<PtySession>) -> std::io::Result<Differ> {
        let (requests, incoming) = mpsc::channel::<oneshot::Sender<Update>>();
        std::thread::Builder::new()
            .name("stream-diff".into())
            .stack_size(STACK_SIZE)
            .spawn(move || {
                let mut sync = ScreenSync::new();
                // Ends when the client's `Differ` is dropped.
                while let Ok(reply) = incoming.recv() {
                    let update = pty.with_screen(|s| sync.diff(s));
                    // The client takes the update as sent: if it is gone, nothing reads
                    // what comes after either.
                    sync.sent(&update);
                    let _ = reply.send(update);
                }
            })?;
        Ok(Differ { requests })
    }

    /// What turns the client's screen into the current one, taken as sent. `None` when the
    /// thread is gone (it never is while the `Differ` lives, barring a panic).
    pub async fn update(&self) -> Option<Update> {
        let (reply, answer) = oneshot::channel();
        self.requests.send(reply).ok()?;
        answer.await.ok()
    }
}
