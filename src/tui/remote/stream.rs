//! The shown session's terminal over its WebSocket stream (docs/stream.md): a local vt100
//! parser fed by the server's output messages, input and resizes sent up the same socket.
//! One stream per shown session; dropping it closes the socket.

use super::http::{Api, segment};
use crate::wire::Event;
use crate::wire::{StreamEvent, StreamRequest};
use futures_util::{SinkExt, StreamExt};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// What the local terminal knows.
struct Term {
    parser: vt100::Parser,
    /// The server sent a screen (or is about to): the session has a terminal.
    has_terminal: bool,
    /// The socket closed (session ended, or the daemon went away)…
    closed: bool,
    /// …while the link was in this generation (see `Stream::reopen_worthy`).
    closed_in: u64,
}

/// Something to send up the socket.
enum Up {
    Input(Vec<u8>),
    Resize { cols: u16, rows: u16 },
}

pub struct Stream {
    pub session_id: String,
    term: Arc<Mutex<Term>>,
    up: mpsc::UnboundedSender<Up>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stream {
    /// Opens the stream of `session_id`; until its first screen arrives, the terminal shows
    /// `before` (the screen of the session's previous stream), else is blank at `size`
    /// (rows, cols). `generation` counts the link's connections.
    pub fn open(
        rt: &tokio::runtime::Handle,
        api: &Api,
        session_id: &str,
        size: (u16, u16),
        before: Option<Stream>,
        generation: Arc<AtomicU64>,
        events: broadcast::Sender<Event>,
    ) -> Stream {
        let parser = match before {
            Some(old) => {
                let mut t = old.term.lock();
                std::mem::replace(&mut t.parser, vt100::Parser::new(2, 2, 0))
            }
            None => vt100::Parser::new(size.0.max(2), size.1.max(2), 0),
        };
        let term = Arc::new(Mutex::new(Term {
            parser,
            has_terminal: true,
            closed: false,
            closed_in: 0,
        }));
        let (up, rx) = mpsc::unbounded_channel();
        let url = format!(
            "{}/api/coding-agents/sessions/{}/stream",
            api.base.replacen("http://", "ws://", 1),
            segment(session_id)
        );
        let task = rt.spawn(run(
            url,
            api.token().map(str::to_string),
            session_id.to_string(),
            term.clone(),
            rx,
            events,
            generation,
        ));
        Stream {
            session_id: session_id.to_string(),
            term,
            up,
            task,
        }
    }

    /// Whether the socket closed (the session ended or the daemon went away).
    pub fn closed(&self) -> bool {
        self.term.lock().closed
    }

    /// Closed, and the link has connected again since: orchestra went away and came back, so
    /// a new stream may show the session again.
    pub fn reopen_worthy(&self, generation: u64) -> bool {
        let t = self.term.lock();
        t.closed && generation > t.closed_in
    }

    pub fn with_screen(&self, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        let term = self.term.lock();
        if !term.has_terminal {
            return false;
        }
        f(term.parser.screen());
        true
    }

    pub fn input(&self, bytes: Vec<u8>) -> Result<(), String> {
        if self.closed() {
            return Err("this session's terminal is not connected".into());
        }
        self.up
            .send(Up::Input(bytes))
            .map_err(|_| "this session's terminal is not connected".to_string())
    }

    pub fn resize(&self, cols: u16, rows: u16) -> bool {
        !self.closed() && self.up.send(Up::Resize { cols, rows }).is_ok()
    }
}

/// A change to the local terminal, applied in the order the server sent them.
enum TermOp {
    Output(Vec<u8>),
    /// A new screen of this size (rows, cols): the server's hello.
    Reset(u16, u16),
    /// The server's terminal took this size (rows, cols).
    Resize(u16, u16),
    /// The socket closed in this link generation; `Some(has_terminal)` when it is known
    /// whether the session had one.
    Closed {
        generation: u64,
        has_terminal: Option<bool>,
    },
}

/// At most this many changes wait for the terminal's thread; past it the socket is not
/// read, and the server, which sends a client only the latest screen, skips states.
const TERM_QUEUE: usize = 64;

/// Applies the server's changes to the local terminal on a thread of its own, at the
/// priority of bulk work: parsing 16 flooding tiles on the async workers delayed the
/// sockets that carry the user's keys (see `crate::niceness`).
fn spawn_term_thread(
    term: Arc<Mutex<Term>>,
    mut ops: mpsc::Receiver<TermOp>,
    screen_changed: impl Fn() + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("tui-stream".into())
        .spawn(move || {
            crate::niceness::mark_current_thread_as_bulk_work();
            while let Some(first) = ops.blocking_recv() {
                apply(&term, first);
                // Everything that arrived meanwhile, before one redraw is asked for.
                while let Ok(more) = ops.try_recv() {
                    apply(&term, more);
                }
                screen_changed();
            }
        })
        .map(drop)
}

fn apply(term: &Mutex<Term>, op: TermOp) {
    let mut t = term.lock();
    match op {
        TermOp::Output(bytes) => t.parser.process(&bytes),
        TermOp::Reset(rows, cols) => t.parser = vt100::Parser::new(rows, cols, 0),
        TermOp::Resize(rows, cols) => t.parser.screen_mut().set_size(rows, cols),
        TermOp::Closed {
            generation,
            has_terminal,
        } => {
            t.closed = true;
            t.closed_in = generation;
            if let Some(h) = has_terminal {
                t.has_terminal = h;
            }
        }
    }
}

async fn run(
    url: String,
    token: Option<String>,
    session_id: String,
    term: Arc<Mutex<Term>>,
    mut up: mpsc::UnboundedReceiver<Up>,
    events: broadcast::Sender<Event>,
    generation: Arc<AtomicU64>,
) {
    let (to_term, ops) = mpsc::channel(TERM_QUEUE);
    let screen_changed = move || {
        let _ = events.send(Event::Screen {
            session_id: session_id.clone(),
        });
    };
    if let Err(e) = spawn_term_thread(term.clone(), ops, screen_changed.clone()) {
        tracing::error!(error = %e, "cannot start a stream's terminal thread");
        apply(
            &term,
            TermOp::Closed {
                generation: generation.load(Ordering::SeqCst),
                has_terminal: None,
            },
        );
        return screen_changed();
    }
    // Applied (and the redraw asked for) by the terminal's thread, after what came before.
    let finish = |has_terminal: Option<bool>| {
        let to_term = to_term.clone();
        let generation = generation.load(Ordering::SeqCst);
        async move {
            let _ = to_term
                .send(TermOp::Closed {
                    generation,
                    has_terminal,
                })
                .await;
        }
    };
    let request = match url.as_str().into_client_request() {
        Ok(mut r) => {
            if let Some(t) = token
                .as_deref()
                .and_then(|t| format!("Bearer {t}").parse().ok())
            {
                r.headers_mut().insert("Authorization", t);
            }
            r
        }
        Err(_) => return finish(None).await,
    };
    let socket = match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => socket,
        Err(_) => return finish(None).await,
    };
    let (mut sink, mut source) = socket.split();
    let mut got_screen = false;
    loop {
        tokio::select! {
            msg = source.next() => match msg {
                Some(Ok(Message::Binary(bytes))) => {
                    got_screen = true;
                    if to_term.send(TermOp::Output(bytes.to_vec())).await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Text(text))) => {
                    let op = match serde_json::from_str::<StreamEvent>(&text) {
                        Ok(StreamEvent::Hello { cols, rows, .. }) => {
                            // Sizes from the network: never one vt100 panics on.
                            let (rows, cols) = crate::session::parser_size(rows, cols);
                            TermOp::Reset(rows, cols)
                        }
                        Ok(StreamEvent::Size { cols, rows }) => {
                            let (rows, cols) = crate::session::parser_size(rows, cols);
                            TermOp::Resize(rows, cols)
                        }
                        // Status changes arrive on the event stream too; modes come with the
                        // output that follows.
                        _ => continue,
                    };
                    if to_term.send(op).await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    // A session from an earlier run: hello, exit, close, and no screen.
                    return finish(Some(got_screen)).await;
                }
                Some(Ok(_)) => {}
            },
            out = up.recv() => {
                let Some(out) = out else { return };
                let msg = match out {
                    Up::Input(bytes) => Message::Binary(bytes.into()),
                    Up::Resize { cols, rows } => {
                        match serde_json::to_string(&StreamRequest::Resize { cols, rows }) {
                            Ok(s) => Message::Text(s.into()),
                            Err(_) => continue,
                        }
                    }
                };
                if sink.send(msg).await.is_err() {
                    return finish(None).await;
                }
            }
        }
    }
}
