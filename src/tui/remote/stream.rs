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

async fn run(
    url: String,
    token: Option<String>,
    session_id: String,
    term: Arc<Mutex<Term>>,
    mut up: mpsc::UnboundedReceiver<Up>,
    events: broadcast::Sender<Event>,
    generation: Arc<AtomicU64>,
) {
    let screen_changed = || {
        let _ = events.send(Event::Screen {
            session_id: session_id.clone(),
        });
    };
    let finish = |has_terminal: Option<bool>| {
        let mut t = term.lock();
        t.closed = true;
        t.closed_in = generation.load(Ordering::SeqCst);
        if let Some(h) = has_terminal {
            t.has_terminal = h;
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
        Err(_) => return finish(None),
    };
    let socket = match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => socket,
        Err(_) => {
            finish(None);
            return screen_changed();
        }
    };
    let (mut sink, mut source) = socket.split();
    let mut got_screen = false;
    loop {
        tokio::select! {
            msg = source.next() => match msg {
                Some(Ok(Message::Binary(bytes))) => {
                    got_screen = true;
                    term.lock().parser.process(&bytes);
                    screen_changed();
                }
                Some(Ok(Message::Text(text))) => {
                    match serde_json::from_str::<StreamEvent>(&text) {
                        Ok(StreamEvent::Hello { cols, rows, .. }) => {
                            // Sizes from the network: never one vt100 panics on.
                            let (rows, cols) = crate::session::parser_size(rows, cols);
                            term.lock().parser = vt100::Parser::new(rows, cols, 0);
                        }
                        Ok(StreamEvent::Size { cols, rows }) => {
                            let (rows, cols) = crate::session::parser_size(rows, cols);
                            term.lock().parser.screen_mut().set_size(rows, cols);
                        }
                        // Status changes arrive on the event stream too; modes come with the
                        // output that follows.
                        _ => {}
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    // A session from an earlier run: hello, exit, close, and no screen.
                    finish(Some(got_screen));
                    return screen_changed();
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
                    finish(None);
                    return screen_changed();
                }
            }
        }
    }
}
