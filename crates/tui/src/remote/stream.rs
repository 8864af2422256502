//! The shown session's terminal over its WebSocket stream (docs/stream.md): a local vt100
//! parser fed by the server's output messages, input and resizes sent up the same socket.
//! One stream per shown session; dropping it closes the socket.

use super::key_writer;
use crate::keys::InputModes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use orchestra_client::http::Api;
use orchestra_proto::wire::Event;
use orchestra_proto::wire::{StreamEvent, StreamRequest};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// What the local terminal knows.
struct Term {
    parser: vt100::Parser,
    /// The server sent a screen (or is about to): the session has a terminal.
    has_terminal: bool,
}

/// What the UI thread asks of a stream on a key's path, kept beside the terminal: the
/// terminal's thread holds the terminal's lock while it parses, and a key must not wait.
struct Beside {
    /// The terminal's input modes after the last changes applied; `None` without a terminal.
    modes: Option<InputModes>,
    /// The link's generation when the socket closed (the session ended, or the daemon went
    /// away); `None` while it is open (see `Stream::reopen_worthy`).
    closed_in: Option<u64>,
}

/// A stream's local side, shared by the stream, its socket's task and its terminal's thread.
struct Local {
    term: Mutex<Term>,
    beside: Mutex<Beside>,
}

impl Local {
    /// The input modes of the terminal as it is now (called by the terminal's thread).
    fn publish_modes(&self) {
        let modes = {
            let t = self.term.lock();
            t.has_terminal.then(|| InputModes::of(t.parser.screen()))
        };
        self.beside.lock().modes = modes;
    }
}

/// Something to send up the socket.
enum Up {
    Input(Vec<u8>),
    Resize { cols: u16, rows: u16 },
}

pub struct Stream {
    pub session_id: String,
    local: Arc<Local>,
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
                let mut t = old.local.term.lock();
                std::mem::replace(&mut t.parser, vt100::Parser::new(2, 2, 0))
            }
            None => vt100::Parser::new(size.0.max(2), size.1.max(2), 0),
        };
        let local = Arc::new(Local {
            beside: Mutex::new(Beside {
                modes: Some(InputModes::of(parser.screen())),
                closed_in: None,
            }),
            term: Mutex::new(Term {
                parser,
                has_terminal: true,
            }),
        });
        let (up, rx) = mpsc::unbounded_channel();
        let url = format!(
            "{}{}",
            api.base().replacen("http://", "ws://", 1),
            orchestra_proto::routes::at(orchestra_proto::routes::SESSION_STREAM, &[session_id])
        );
        let task = rt.spawn(run(
            url,
            api.token().map(str::to_string),
            session_id.to_string(),
            local.clone(),
            rx,
            events,
            generation,
        ));
        Stream {
            session_id: session_id.to_string(),
            local,
            up,
            task,
        }
    }

    /// Closed, and the link has connected again since: orchestra went away and came back, so
    /// a new stream may show the session again.
    pub fn reopen_worthy(&self, generation: u64) -> bool {
        self.local
            .beside
            .lock()
            .closed_in
            .is_some_and(|closed_in| generation > closed_in)
    }

    /// How the terminal wants input encoded, without waiting for the terminal's lock.
    pub fn input_modes(&self) -> Option<InputModes> {
        self.local.beside.lock().modes
    }

    pub fn with_screen(&self, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        let term = self.local.term.lock();
        if !term.has_terminal {
            return false;
        }
        f(term.parser.screen());
        true
    }

    /// Sends typed bytes up the socket. Never waits for the terminal's lock, which the thread
    /// parsing the session's output holds while it parses a flood. Once the socket closed,
    /// its loop is gone and the send fails.
    pub fn input(&self, bytes: Vec<u8>) -> Result<(), String> {
        self.up
            .send(Up::Input(bytes))
            .map_err(|_| "this session's terminal is not connected".to_string())
    }

    pub fn resize(&self, cols: u16, rows: u16) -> bool {
        self.up.send(Up::Resize { cols, rows }).is_ok()
    }
}

/// Why a stream's socket loop stopped.
enum Ended {
    /// The socket closed or failed; `Some(has_terminal)` when it is known whether the session
    /// had one.
    Socket(Option<bool>),
    /// The local side went away (the stream was dropped, or its terminal's thread).
    Terminal,
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

/// Applies the server's changes to the local terminal on a thread of its own: parsing 16
/// flooding tiles on the async workers delayed the sockets that carry the user's keys. At
/// the normal priority: the UI thread draws under the terminal's lock, and a parser at the
/// priority of bulk work, preempted while holding it, held the frame back (keys do not take
/// that lock: see [`Beside`]).
fn spawn_term_thread(
    local: Arc<Local>,
    mut ops: mpsc::Receiver<TermOp>,
    screen_changed: impl Fn() + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("tui-stream".into())
        .spawn(move || {
            while let Some(first) = ops.blocking_recv() {
                apply(&local, first);
                // Everything that arrived meanwhile, before one redraw is asked for.
                while let Ok(more) = ops.try_recv() {
                    apply(&local, more);
                }
                local.publish_modes();
                screen_changed();
            }
        })
        .map(drop)
}

fn apply(local: &Local, op: TermOp) {
    let mut t = local.term.lock();
    match op {
        TermOp::Output(bytes) => t.parser.process(&bytes),
        TermOp::Reset(rows, cols) => t.parser = vt100::Parser::new(rows, cols, 0),
        TermOp::Resize(rows, cols) => t.parser.screen_mut().set_size(rows, cols),
        TermOp::Closed {
            generation,
            has_terminal,
        } => {
            if let Some(h) = has_terminal {
                t.has_terminal = h;
            }
            drop(t);
            local.beside.lock().closed_in = Some(generation);
        }
    }
}

async fn run(
    url: String,
    token: Option<String>,
    session_id: String,
    local: Arc<Local>,
    up: mpsc::UnboundedReceiver<Up>,
    events: broadcast::Sender<Event>,
    generation: Arc<AtomicU64>,
) {
    let (to_term, ops) = mpsc::channel(TERM_QUEUE);
    let screen_changed = move || {
        let _ = events.send(Event::Screen {
            session_id: session_id.clone(),
        });
    };
    if let Err(e) = spawn_term_thread(local.clone(), ops, screen_changed.clone()) {
        tracing::error!(error = %e, "cannot start a stream's terminal thread");
        apply(
            &local,
            TermOp::Closed {
                generation: generation.load(Ordering::SeqCst),
                has_terminal: None,
            },
        );
        local.publish_modes();
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
    let Some(request) = stream_request(&url, token.as_deref()) else {
        return finish(None).await;
    };
    // Without Nagle's algorithm: a key waited behind the previous key's acknowledgement.
    let socket = match tokio_tungstenite::connect_async_with_config(request, None, true).await {
        Ok((socket, _)) => socket,
        Err(_) => return finish(None).await,
    };
    let (sink, mut source) = socket.split();
    // Keys go up on their own loop: the reading loop waits whenever the terminal's thread
    // is behind (its queue full, under a flood), and a key that waited with it reached the
    // agent up to 145 ms late in the grid bench. That loop runs on the key writer's thread,
    // not on the workers that read the streams (see `key_writer`). It owns `up`, the
    // receiving end of the keys' channel: once either loop ends the writing half is aborted
    // and `up` goes with it, so a key sent after that is refused (`Stream::input`).
    let mut writing = key_writer::spawn(write_up(sink, up));
    let writing_goes_with_this_task = key_writer::AbortOnDrop(writing.abort_handle());
    let reading = read_down(&mut source, &to_term);
    let ended = tokio::select! {
        ended = reading => ended,
        ended = &mut writing => ended.unwrap_or(Ended::Terminal),
    };
    drop(writing_goes_with_this_task);
    if let Ended::Socket(has_terminal) = ended {
        finish(has_terminal).await;
    }
}

/// The request that opens the stream at `url`, the token (if any) as its bearer credential.
fn stream_request(url: &str, token: Option<&str>) -> Option<Request> {
    let mut r = url.into_client_request().ok()?;
    if let Some(t) = token.and_then(|t| format!("Bearer {t}").parse().ok()) {
        r.headers_mut().insert("Authorization", t);
    }
    Some(r)
}

/// Turns what the server sends down the socket into changes for the terminal's thread, in
/// order, until the socket closes or the local side goes.
async fn read_down(
    source: &mut SplitStream<WebSocketStream<MaybeTlsStream<TcpStream>>>,
    to_term: &mpsc::Sender<TermOp>,
) -> Ended {
    let mut got_screen = false;
    loop {
        let op = match source.next().await {
            Some(Ok(Message::Binary(bytes))) => {
                got_screen = true;
                TermOp::Output(bytes.to_vec())
            }
            Some(Ok(Message::Text(text))) => match serde_json::from_str::<StreamEvent>(&text) {
                Ok(StreamEvent::Hello { cols, rows, .. }) => {
                    // Sizes from the network: never one vt100 panics on.
                    let (rows, cols) = orchestra_proto::terminal::parser_size(rows, cols);
                    TermOp::Reset(rows, cols)
                }
                Ok(StreamEvent::Size { cols, rows }) => {
                    let (rows, cols) = orchestra_proto::terminal::parser_size(rows, cols);
                    TermOp::Resize(rows, cols)
                }
                // Status changes arrive on the event stream too; modes come with the
                // output that follows.
                _ => continue,
            },
            // A session from an earlier run: hello, exit, close, and no screen.
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                return Ended::Socket(Some(got_screen));
            }
            Some(Ok(_)) => continue,
        };
        if to_term.send(op).await.is_err() {
            return Ended::Terminal;
        }
    }
}

/// Sends what the UI thread asks for up the socket, in order, until the local side or the
/// socket goes.
async fn write_up(
    mut sink: SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>,
    mut up: mpsc::UnboundedReceiver<Up>,
) -> Ended {
    while let Some(out) = up.recv().await {
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
            return Ended::Socket(None);
        }
    }
    Ended::Terminal
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};

    /// A stream of session `s1` of the websocket server at `addr`, 24×80 until it says more.
    fn open_to(addr: std::net::SocketAddr) -> Stream {
        let (events, _) = broadcast::channel(16);
        Stream::open(
            &tokio::runtime::Handle::current(),
            &Api::new(
                &format!("http://{addr}"),
                None,
                orchestra_client::http::Caller::Tui,
            ),
            "s1",
            (24, 80),
            None,
            Arc::new(AtomicU64::new(0)),
            events,
        )
    }

    /// Polls `done` every 10 ms until it holds or `within` passed.
    async fn poll_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        done()
    }

    /// Types `k` into `stream`; what the server got first, if anything, within `within`.
    async fn type_k(
        stream: &Stream,
        got: &mut mpsc::UnboundedReceiver<Vec<u8>>,
        within: Duration,
    ) -> Option<Vec<u8>> {
        stream
            .input(b"k".to_vec())
            .expect("the stream takes the key");
        let mut key = None;
        poll_until(within, || {
            key = got.try_recv().ok();
            key.is_some()
        })
        .await;
        key
    }

    /// Under a flood the terminal's thread falls behind, its queue fills and the socket is no
    /// longer read; a key typed then still goes up at once, and nothing on its way waits for
    /// the terminal's lock. (It waited for the queue before,
    /// up to 145 ms with 16 flooding tiles.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_key_goes_up_while_the_terminal_is_behind() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let sent = Arc::new(AtomicUsize::new(0));
        let (got_tx, mut got) = mpsc::unbounded_channel::<Vec<u8>>();
        let flooded = sent.clone();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            let ws = tokio_tungstenite::accept_async(tcp)
                .await
                .expect("handshake");
            let (mut sink, mut source) = ws.split();
            let flood = async move {
                let frame = vec![b'x'; 16 * 1024];
                while sink
                    .send(Message::Binary(frame.clone().into()))
                    .await
                    .is_ok()
                {
                    flooded.fetch_add(1, Ordering::SeqCst);
                }
            };
            let read = async move {
                while let Some(Ok(msg)) = source.next().await {
                    if let Message::Binary(bytes) = msg {
                        let _ = got_tx.send(bytes.to_vec());
                    }
                }
            };
            tokio::join!(flood, read);
        });

        let stream = open_to(addr);
        // The terminal's thread stops at its first change, as a starved parser would: another
        // thread holds the terminal's lock until told to let go.
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (locked_tx, locked) = std::sync::mpsc::channel::<()>();
        let local = stream.local.clone();
        let holder = std::thread::spawn(move || {
            let _held = local.term.lock();
            let _ = locked_tx.send(());
            let _ = released.recv();
        });
        locked.recv().expect("the terminal's lock taken");
        // Until the flood stalls: the queue is full and the socket is no longer read.
        let mut last = (0, Instant::now());
        let stalled = poll_until(Duration::from_secs(30), || {
            let now = sent.load(Ordering::SeqCst);
            if now != last.0 {
                last = (now, Instant::now());
            }
            now > TERM_QUEUE && last.1.elapsed() >= Duration::from_millis(300)
        })
        .await;
        assert!(stalled, "the flood never stalled ({} frames sent)", last.0);

        // What typing asks of the stream besides the send (how to encode the key, whether the
        // stream is stale) is answered without the terminal's lock as well.
        let asked = std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel();
            let s = &stream;
            scope.spawn(move || {
                let _ = tx.send((s.input_modes(), s.reopen_worthy(1)));
            });
            let got = rx.recv_timeout(Duration::from_secs(10));
            if got.is_err() {
                let _ = release.send(());
            }
            got
        });
        let (modes, stale) = asked.expect("typing waited for the terminal's lock");
        assert!(modes.is_some(), "a stream with a terminal has input modes");
        assert!(!stale, "an open stream is not stale");

        let key = type_k(&stream, &mut got, Duration::from_secs(10)).await;
        assert_eq!(
            key.as_deref(),
            Some(&b"k"[..]),
            "the key did not go up while the terminal was behind"
        );

        let _ = release.send(());
        holder.join().expect("the lock's holder ended");
        drop(stream);
        let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
    }

    /// A key goes up while every worker of the TUI's runtime is busy (as when they read the
    /// streams of a flooding grid): the writing halves run on the key writer's thread. With
    /// the writing half on the runtime, this key waited for the worker.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_key_goes_up_while_every_worker_of_the_tui_is_busy() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let (got_tx, mut got) = mpsc::unbounded_channel::<Vec<u8>>();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            let mut ws = tokio_tungstenite::accept_async(tcp)
                .await
                .expect("handshake");
            ws.send(Message::Binary(b"ready".to_vec().into()))
                .await
                .expect("send");
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Binary(bytes) = msg {
                    let _ = got_tx.send(bytes.to_vec());
                }
            }
        });

        // The TUI's runtime, with one worker to keep busy.
        let tui = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the TUI's runtime");
        let (events, _) = broadcast::channel(16);
        let stream = Stream::open(
            tui.handle(),
            &Api::new(
                &format!("http://{addr}"),
                None,
                orchestra_client::http::Caller::Tui,
            ),
            "s1",
            (24, 80),
            None,
            Arc::new(AtomicU64::new(0)),
            events,
        );
        let connected = poll_until(Duration::from_secs(10), || {
            let mut shown = false;
            stream.with_screen(&mut |s| shown = s.contents().contains("ready"));
            shown
        })
        .await;
        assert!(connected, "the stream never showed the server's output");

        let (busy_tx, busy) = std::sync::mpsc::channel::<()>();
        let (release, released) = std::sync::mpsc::channel::<()>();
        tui.spawn(async move {
            let _ = busy_tx.send(());
            let _ = released.recv();
        });
        busy.recv_timeout(Duration::from_secs(10))
            .expect("the worker taken");

        let key = type_k(&stream, &mut got, Duration::from_secs(5)).await;
        let _ = release.send(());
        assert_eq!(
            key.as_deref(),
            Some(&b"k"[..]),
            "the key waited for the TUI's busy worker"
        );

        drop(stream);
        tui.shutdown_background();
        let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
    }

    /// The modes a key is encoded by follow the server's output: an agent that turns on
    /// application cursor keys and bracketed paste is typed into accordingly.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn input_modes_follow_the_output() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            let mut ws = tokio_tungstenite::accept_async(tcp)
                .await
                .expect("handshake");
            let modes_on = b"\x1b[?1h\x1b[?2004h".to_vec();
            ws.send(Message::Binary(modes_on.into()))
                .await
                .expect("send");
            // Until the client goes.
            while let Some(Ok(_)) = ws.next().await {}
        });
        let stream = open_to(addr);
        let before = stream.input_modes().expect("a terminal from the start");
        assert!(!before.application_cursor && !before.bracketed_paste);
        let followed = poll_until(Duration::from_secs(10), || {
            stream
                .input_modes()
                .is_some_and(|m| m.application_cursor && m.bracketed_paste)
        })
        .await;
        assert!(followed, "modes now: {:?}", stream.input_modes());
        drop(stream);
        let _ = tokio::time::timeout(Duration::from_secs(10), server).await;
    }
}
