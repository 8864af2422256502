//! The thread that writes the TUI's keys up their streams' sockets.
//!
//! A key went from the UI thread to its stream's task on one of the TUI's runtime workers,
//! which also read the 16 streams of a flooding grid: a worker woken for the key waited for
//! a turn on a CPU among the flooding agents, at the default time slice. The streams' writing
//! halves run here instead, on one thread that sleeps until a key or a resize comes and asks
//! for the key path's short slice. The sockets stay registered with the TUI's runtime, whose
//! I/O driver wakes a write here only when a socket's buffer was full.

use std::future::Future;
use std::sync::OnceLock;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The runtime of the key writer's thread; `None` when it could not be started (the
/// writing halves then run on the caller's runtime, as they did before).
fn runtime() -> Option<&'static Handle> {
    static KEY_WRITER: OnceLock<Option<Handle>> = OnceLock::new();
    KEY_WRITER.get_or_init(start).as_ref()
}

fn start() -> Option<Handle> {
    let (tx, rx) = std::sync::mpsc::channel();
    let started = std::thread::Builder::new()
        .name("tui-keys".into())
        .spawn(move || {
            orchestra_sys::niceness::mark_current_thread_as_key_path();
            let rt = match tokio::runtime::Builder::new_current_thread().build() {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::error!(error = %e, "the key writer's runtime did not start");
                    return;
                }
            };
            if tx.send(rt.handle().clone()).is_ok() {
                // Runs the writing halves spawned onto it for as long as the TUI runs.
                rt.block_on(std::future::pending::<()>());
            }
        });
    if let Err(e) = started {
        tracing::error!(error = %e, "the key writer's thread did not start");
        return None;
    }
    rx.recv().ok()
}

/// Runs `writing` (a stream's writing half) on the key writer's thread, or on the current
/// runtime if that thread could not be started.
pub fn spawn<F>(writing: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match runtime() {
        Some(keys) => keys.spawn(writing),
        None => tokio::spawn(writing),
    }
}

/// Aborts a task when dropped: a stream's writing half goes with the task that reads it.
pub struct AbortOnDrop(pub tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
