//! A stream client's input (keys, pastes, resizes), read on a thread of its own that sleeps
//! in the kernel on the client's socket.
//!
//! A key used to be read by the client's async task, which a runtime worker must first pick
//! from its queue: with sixteen agents flooding, the workers were busy with the other
//! streams' frames (or preempted holding them) and the key waited tens of milliseconds in
//! the socket (BENCHMARKS.md, "Grid of agents"). Here the kernel wakes the thread when the
//! key arrives, as it wakes tmux's server, and the key is typed on that thread. The thread
//! reads only; what goes back to the client (a pong, an error) goes to the client's task,
//! which alone writes to the socket.

use super::{Activity, Client};
use crate::engine::EngineError;
use crate::session::fd_wait::{read_waiting, wait_ready};
use bytes::Bytes;
use orchestra_proto::wire::StreamRequest;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocket, WebSocketConfig};

/// What a client is told of input that found no terminal to type into.
const SESSION_ENDED: &str = "the session has ended; input was not delivered";

/// What the input thread asks the client's task to send.
pub(super) enum Reply {
    /// Advice on input that was not taken.
    Error(String),
    /// The answer to the client's ping.
    Pong(Bytes),
}

/// How the client's input ended.
pub(super) enum Ended {
    /// The client closed (its close frame, to be answered).
    Closed(Option<CloseFrame>),
    /// The connection ended without a close, or was shut down by the client's task.
    Gone,
}

/// What the input thread needs of its client.
pub(super) struct Input {
    pub client: Client,
    /// The session has a terminal to type into (not one restored from an earlier run).
    pub has_terminal: bool,
    pub runtime: Handle,
    pub replies: mpsc::Sender<Reply>,
}

/// Starts reading `socket` (which the client's task shares, non-blocking) on a new thread;
/// `already_read` is what came after the upgrade request with it. `ended` says how it ended.
pub(super) fn spawn(
    input: Input,
    socket: TcpStream,
    already_read: Bytes,
    config: WebSocketConfig,
    ended: oneshot::Sender<Ended>,
) -> std::io::Result<()> {
    let name = format!("stream-input-{}", input.client.id);
    std::thread::Builder::new().name(name).spawn(move || {
        orchestra_sys::niceness::mark_current_thread_as_key_path();
        let mut ws = WebSocket::from_partially_read(
            ReadOnly(socket),
            already_read.to_vec(),
            Role::Server,
            Some(config),
        );
        // The engine's futures run here, outside the runtime's workers; should one panic
        // (a runtime shutting down under a late key), the client is ended, not the thread
        // left dangling.
        let how = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| input.run(&mut ws)))
            .unwrap_or_else(|_| {
                tracing::error!("a stream's input failed; the client is closed");
                Ended::Gone
            });
        let _ = ended.send(how);
    })?;
    Ok(())
}

impl Input {
    /// Input and resizes from the client, in order, until it closes or goes.
    fn run(&self, ws: &mut WebSocket<ReadOnly>) -> Ended {
        loop {
            let Ok(message) = ws.read() else {
                return Ended::Gone;
            };
            let input = match message {
                Message::Binary(bytes) => bytes.to_vec(),
                Message::Text(text) => match serde_json::from_str::<StreamRequest>(&text) {
                    Ok(StreamRequest::Input { data }) => data.into_bytes(),
                    Ok(StreamRequest::Resize { cols, rows }) => {
                        match super::checked_size(cols, rows) {
                            Ok(()) => {
                                self.block_on(self.client.activity(Activity::Resize { cols, rows }))
                            }
                            Err(e) => self.report(e),
                        }
                        continue;
                    }
                    Err(e) => {
                        self.report(format!(
                            "not a stream message ({e}): send {{\"type\":\"input\",\"data\":\"...\"}} or {{\"type\":\"resize\",\"cols\":N,\"rows\":N}}"
                        ));
                        continue;
                    }
                },
                Message::Ping(payload) => {
                    let _ = self.replies.try_send(Reply::Pong(payload));
                    continue;
                }
                Message::Close(frame) => return Ended::Closed(frame),
                Message::Pong(_) | Message::Frame(_) => continue,
            };
            if !input.is_empty() {
                self.deliver(input);
            }
        }
    }

    /// Types `input` into the session, on this thread; this client's next input waits for
    /// it, so order is kept.
    fn deliver(&self, input: Vec<u8>) {
        if !self.has_terminal {
            return self.report(SESSION_ENDED.into());
        }
        let client = &self.client;
        // Through the engine, so it comes after the task's first instruction. The write
        // itself happens here when the terminal has room, which it nearly always has.
        let written = self.block_on(async {
            client.activity(Activity::Input).await;
            client.engine.write_input(&client.session_id, input).await
        });
        match written {
            Ok(()) => {}
            Err(EngineError::Conflict(_) | EngineError::NotFound(_)) => {
                self.report(SESSION_ENDED.into())
            }
            Err(e) => self.report(format!("input was not delivered: {e}")),
        }
    }

    fn block_on<T>(&self, work: impl Future<Output = T>) -> T {
        self.runtime.block_on(work)
    }

    /// Errors are advice; when the client does not read them, later ones are dropped.
    fn report(&self, error: String) {
        let _ = self.replies.try_send(Reply::Error(error));
    }
}

/// The client's socket, for reading: a read waits in the kernel for data as a blocking one
/// would (the socket is non-blocking, shared with the task that writes). Writes are
/// dropped: tungstenite's own answers (a pong, the close's echo) are sent by the client's
/// task, the one writer, so that no two writers' frames mix.
pub(super) struct ReadOnly(TcpStream);

impl Read for ReadOnly {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let fd = self.0.as_raw_fd();
        read_waiting(&mut self.0, buf, || wait_ready(fd, libc::POLLIN))
    }
}

impl Write for ReadOnly {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
