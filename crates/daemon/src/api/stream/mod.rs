//! `GET /api/coding-agents/sessions/:id/stream`: a session's live terminal over a WebSocket
//! (protocol: docs/stream.md).
//!
//! Each client has one task that sleeps until the session's terminal changes
//! ([`PtySession::watch_screen`]), then sends what turns the client's screen into the current
//! one ([`ScreenSync`]) and waits until it is written. The current screen is the session's
//! published copy ([`PtySession::watch_visible`]), so a diff never waits for the parser. A
//! slow client therefore skips the states it had no time for and gets the current one;
//! nothing queues for it, and the session, the daemon and other clients never wait for it.
//! An idle stream sleeps without timers.
//!
//! What the client sends is read on a thread of the client's own ([`input`]), not by the
//! task: a key must not wait for a runtime worker busy with other streams' frames. The task
//! is the socket's one writer, the thread its one reader.

mod handshake;
mod input;
mod size;
mod socket;

use super::error::ApiError;
use crate::engine::{Engine, SessionStatus};
use crate::session::screen_sync::{ScreenSync, Update};
use crate::session::{PtySession, VisibleScreen};
use axum::Extension;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use futures_util::SinkExt;
use hyper_util::rt::TokioIo;
use input::{Ended, Input, Reply};
use orchestra_proto::wire::StreamEvent;
use size::{ClientId, LatestSize};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

/// Largest client message: a big paste, like the API's body limit.
const MAX_MESSAGE: usize = 1024 * 1024;
/// Screen updates to one client are at least this far apart (about 60 a second, a
/// terminal's refresh and the TUI's frame cap) while a program floods; the first change
/// after a quiet spell goes out at once. At 120 a second a TUI showing 16 flooding agents
/// parsed twice the updates it could draw, and the CPU that cost made the scheduler hold
/// back its thread that reads the user's keys (see BENCHMARKS.md, "Grid of agents").
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How long a client may take to answer the server's close.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// Terminal sizes accepted, as on the resize route.
const MAX_COLS: u16 = 1000;
const MAX_ROWS: u16 = 500;

/// The clients of every watched session, for the size rule; one per router.
#[derive(Default)]
pub struct Streams {
    next_id: AtomicU64,
    /// Held while a size is decided and applied, so sizes are applied in decision order.
    sizes: tokio::sync::Mutex<HashMap<String, LatestSize>>,
}

/// What a client did, for the size rule.
enum Activity {
    Join,
    Input,
    Resize { cols: u16, rows: u16 },
    Leave,
}

impl Streams {
    fn new_client(&self) -> ClientId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Records what a client did and gives the session the latest active client's size.
    async fn activity(&self, engine: &Engine, session_id: &str, client: ClientId, what: Activity) {
        let mut sizes = self.sizes.lock().await;
        let clients = sizes.entry(session_id.to_string()).or_default();
        let want = match what {
            Activity::Join => {
                clients.join(client);
                None
            }
            Activity::Input => clients.input(client),
            Activity::Resize { cols, rows } => clients.resize(client, cols, rows),
            Activity::Leave => clients.leave(client),
        };
        if clients.is_empty() {
            sizes.remove(session_id);
        }
        let Some((cols, rows)) = want else { return };
        let Ok(info) = engine.get_session(session_id) else {
            return;
        };
        if info.ended || (info.cols, info.rows) == (cols, rows) {
            return;
        }
        if let Err(e) = engine.resize_session(session_id, cols, rows).await {
            tracing::debug!(session = session_id, error = %e, "stream resize not applied");
        }
    }
}

pub async fn connect(
    State(engine): State<Engine>,
    Extension(streams): Extension<Arc<Streams>>,
    Path(id): Path<String>,
    mut request: Request,
) -> Result<Response, ApiError> {
    engine.get_session(&id)?;
    let accepted = handshake::accept(&mut request).map_err(|e| {
        ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            format!("this route is a WebSocket: connect with a WebSocket client ({e})"),
        )
    })?;
    let status = engine.watch_session_status(&id)?;
    let pty = engine.session_pty(&id);
    let client = Client {
        id: streams.new_client(),
        session_id: id,
        engine,
        streams,
    };
    tokio::spawn(async move {
        let upgraded = match accepted.upgrade.await {
            Ok(u) => u,
            Err(e) => {
                tracing::debug!(error = %e, "a stream's upgrade did not complete");
                return;
            }
        };
        // The server's connections are TCP sockets: the socket is taken back from hyper so
        // that a thread can read it while the task writes.
        match hyper_util::server::conn::auto::upgrade::downcast::<TokioIo<TcpStream>>(upgraded) {
            Ok(parts) => {
                client
                    .run(parts.io.into_inner(), parts.read_buf, pty, status)
                    .await
            }
            Err(_) => tracing::error!("a stream's connection is not a TCP socket; it was closed"),
        }
    });
    Ok(accepted.response)
}

fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// One connected client.
#[derive(Clone)]
struct Client {
    id: ClientId,
    session_id: String,
    engine: Engine,
    streams: Arc<Streams>,
}

impl Client {
    /// Serves the client on its upgraded `socket` (`already_read`: what came with the
    /// upgrade request) until the session ends or the client goes.
    async fn run(
        self,
        socket: TcpStream,
        already_read: Bytes,
        pty: Option<Arc<PtySession>>,
        status: watch::Receiver<SessionStatus>,
    ) {
        let socket::Split { writing, reading } = match socket::split(socket) {
            Ok(split) => split,
            Err(e) => {
                tracing::warn!(error = %e, "a stream's socket could not be shared; closed");
                return;
            }
        };
        let mut sink =
            WebSocketStream::from_raw_socket(writing, Role::Server, Some(socket_config())).await;
        let (replies_tx, replies) = mpsc::channel(8);
        let (ended_tx, mut ended) = oneshot::channel();
        self.activity(Activity::Join).await;
        let input = Input {
            client: self.clone(),
            has_terminal: pty.is_some(),
            runtime: tokio::runtime::Handle::current(),
            replies: replies_tx,
        };
        match input::spawn(input, reading, already_read, socket_config(), ended_tx) {
            Err(e) => tracing::warn!(error = %e, "no thread for a stream's input; closed"),
            Ok(()) => match self
                .send_loop(&mut sink, pty, status, replies, &mut ended)
                .await
            {
                Some(Ended::Closed(frame)) => {
                    let _ = sink.send(Message::Close(frame)).await;
                }
                Some(Ended::Gone) => {}
                None => {
                    // The session ended and the close went out: give the client a moment to
                    // answer it, so the connection ends with a clean close handshake.
                    let _ = tokio::time::timeout(CLOSE_GRACE, &mut ended).await;
                }
            },
        }
        // Wakes the input thread if it still waits for the client: it ends with the socket.
        sink.get_ref().shut_down();
        self.activity(Activity::Leave).await;
    }

    async fn activity(&self, what: Activity) {
        self.streams
            .activity(&self.engine, &self.session_id, self.id, what)
            .await;
    }

    /// Hello and the current screen, then every change, status and error until the session
    /// ends (final screen, `exit`, close: `None`) or the client's input ends (how).
    async fn send_loop(
        &self,
        sink: &mut Sink,
        pty: Option<Arc<PtySession>>,
        mut status: watch::Receiver<SessionStatus>,
        mut replies: mpsc::Receiver<Reply>,
        input_ended: &mut oneshot::Receiver<Ended>,
    ) -> Option<Ended> {
        let Some(pty) = pty else {
            // Restored from an earlier run: its terminal is gone, only its end is known.
            self.send_restored(sink).await;
            return None;
        };
        let mut changes = pty.watch_screen();
        changes.borrow_and_update();
        let finished = pty.is_finished();
        // The first copy waits for the parser's lock once: off the async workers.
        let watching = pty.clone();
        let Ok(visible) = tokio::task::spawn_blocking(move || watching.watch_visible()).await
        else {
            return None;
        };
        let mut sync = ScreenSync::new();
        let first = next_update(&mut sync, &visible);
        let (rows, cols) = first.size.unwrap_or_default();
        let hello = StreamEvent::Hello {
            session_id: self.session_id.clone(),
            cols,
            rows,
            status: *status.borrow_and_update(),
            modes: first.modes.unwrap_or_default(),
        };
        if send_event(sink, &hello).await.is_err() || send_output(sink, first.bytes).await.is_err()
        {
            return Some(Ended::Gone);
        }
        if finished {
            send_exit(sink, &pty).await;
            return None;
        }
        let mut status_open = true;
        let mut next_frame = Instant::now();
        loop {
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    // While output keeps coming, let it gather for a moment.
                    tokio::time::sleep_until(next_frame).await;
                    changes.borrow_and_update();
                    let finished = pty.is_finished();
                    let update = next_update(&mut sync, &visible);
                    if send_update(sink, update).await.is_err() {
                        return Some(Ended::Gone);
                    }
                    next_frame = Instant::now() + FRAME_INTERVAL;
                    if finished {
                        send_exit(sink, &pty).await;
                        return None;
                    }
                }
                changed = status.changed(), if status_open => {
                    if changed.is_err() {
                        status_open = false;
                        continue;
                    }
                    let now = *status.borrow_and_update();
                    if send_event(sink, &StreamEvent::Status { status: now }).await.is_err() {
                        return Some(Ended::Gone);
                    }
                }
                Some(reply) = replies.recv() => {
                    let sent = match reply {
                        Reply::Error(error) => send_event(sink, &StreamEvent::Error { error }).await,
                        Reply::Pong(payload) => sink.send(Message::Pong(payload)).await.map_err(Gone::from),
                    };
                    if sent.is_err() {
                        return Some(Ended::Gone);
                    }
                }
                ended = &mut *input_ended => return Some(ended.unwrap_or(Ended::Gone)),
            }
        }
    }

    /// A session whose process belongs to an earlier run: hello, its end, close.
    async fn send_restored(&self, sink: &mut Sink) {
        let Ok(info) = self.engine.get_session(&self.session_id) else {
            return;
        };
        let hello = StreamEvent::Hello {
            session_id: info.id.clone(),
            cols: info.cols,
            rows: info.rows,
            status: info.status,
            modes: Default::default(),
        };
        let exit = StreamEvent::Exit {
            exit_code: info.exit_code,
            signal: info.signal.clone(),
        };
        if send_event(sink, &hello).await.is_ok() && send_event(sink, &exit).await.is_ok() {
            let _ = sink.send(close_message()).await;
        }
    }
}

type Sink = WebSocketStream<socket::WriteOnly>;

/// The client is gone (a write failed).
struct Gone;

impl From<tokio_tungstenite::tungstenite::Error> for Gone {
    fn from(_: tokio_tungstenite::tungstenite::Error) -> Self {
        Gone
    }
}

/// What turns the client's screen into the newest copy, taken as sent: if the client is
/// gone, nothing reads what would come after either. One pass over the visible cells.
fn next_update(sync: &mut ScreenSync, visible: &VisibleScreen) -> Update {
    let screen = visible.current();
    let update = sync.diff(&screen);
    sync.sent(&update);
    update
}

fn checked_size(cols: u16, rows: u16) -> Result<(), String> {
    if (2..=MAX_COLS).contains(&cols) && (2..=MAX_ROWS).contains(&rows) {
        Ok(())
    } else {
        Err(format!(
            "resize needs cols from 2 to {MAX_COLS} and rows from 2 to {MAX_ROWS}, not {cols}x{rows}"
        ))
    }
}

async fn send_event(sink: &mut Sink, event: &StreamEvent) -> Result<(), Gone> {
    let text = serde_json::to_string(event).map_err(|_| Gone)?;
    Ok(sink.send(Message::text(text)).await?)
}

async fn send_output(sink: &mut Sink, bytes: Vec<u8>) -> Result<(), Gone> {
    if bytes.is_empty() {
        return Ok(());
    }
    Ok(sink.send(Message::binary(bytes)).await?)
}

/// A size change, then a mode change, then the output: the order a client applies them in.
async fn send_update(sink: &mut Sink, update: Update) -> Result<(), Gone> {
    if let Some((rows, cols)) = update.size {
        send_event(sink, &StreamEvent::Size { cols, rows }).await?;
    }
    if let Some(modes) = update.modes {
        send_event(sink, &StreamEvent::Modes { modes }).await?;
    }
    send_output(sink, update.bytes).await
}

/// The session ended: say how, then close.
async fn send_exit(sink: &mut Sink, pty: &PtySession) {
    let exit = pty.exit_info().unwrap_or_default();
    let event = StreamEvent::Exit {
        exit_code: exit.code,
        signal: exit.signal,
    };
    if send_event(sink, &event).await.is_ok() {
        let _ = sink.send(close_message()).await;
    }
}

fn close_message() -> Message {
    Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "the session ended".into(),
    }))
}
