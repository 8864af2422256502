//! The live terminal over a WebSocket (docs/stream.md), with real shells, a real server and
//! a real WebSocket client whose own vt100 parser is fed the frames.

use crate::support;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::*;
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};

const SESSIONS: &str = "/api/coding-agents/sessions";

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A stream client as docs/stream.md describes one: a terminal (a vt100 parser) created at
/// the hello's size, resized on `size`, fed every binary message. The socket is read only
/// inside its methods, so between calls it reads nothing (a stalled client).
struct StreamClient {
    rt: tokio::runtime::Runtime,
    socket: Socket,
    term: Option<vt100::Parser>,
    /// Every text message, in order.
    events: Vec<Value>,
    /// Bytes of terminal output received.
    output_bytes: usize,
    closed: bool,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn stream_url(s: &Server, id: &str) -> String {
    format!("ws://{}{SESSIONS}/{id}/stream", s.addr)
}

/// The HTTP answer of a refused upgrade.
#[derive(Debug)]
struct Refused {
    status: u16,
    body: Value,
}

/// Opens the stream with extra headers; the server's refusal as an HTTP response.
fn try_connect(s: &Server, id: &str, headers: &[(&str, &str)]) -> Result<StreamClient, Refused> {
    try_connect_with(s, id, headers, None)
}

/// `try_connect`, optionally with a small receive buffer (so that a client that stops
/// reading soon stops taking data, instead of the kernel buffering megabytes for it).
fn try_connect_with(
    s: &Server,
    id: &str,
    headers: &[(&str, &str)],
    recv_buffer: Option<u32>,
) -> Result<StreamClient, Refused> {
    let rt = runtime();
    let mut request = stream_url(s, id).into_client_request().expect("request");
    // The server's token, unless the test sends its own.
    let auth = s.auth();
    let owned: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    for (k, v) in owned.iter().chain(headers) {
        request.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
            v.parse().expect("value"),
        );
    }
    let addr: std::net::SocketAddr = s.addr.parse().expect("address");
    let connected = rt.block_on(async {
        let tcp = tokio::net::TcpSocket::new_v4().expect("socket");
        if let Some(size) = recv_buffer {
            tcp.set_recv_buffer_size(size).expect("SO_RCVBUF");
        }
        let tcp = tcp.connect(addr).await.expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        tokio_tungstenite::client_async(request, tokio_tungstenite::MaybeTlsStream::Plain(tcp))
            .await
    });
    match connected {
        Ok((socket, _)) => Ok(StreamClient {
            rt,
            socket,
            term: None,
            events: Vec::new(),
            output_bytes: 0,
            closed: false,
        }),
        Err(tungstenite::Error::Http(response)) => Err(Refused {
            status: response.status().as_u16(),
            body: serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                .unwrap_or(Value::Null),
        }),
        Err(e) => panic!("connect: {e}"),
    }
}

fn connect(s: &Server, id: &str) -> StreamClient {
    connect_with(s, id, None)
}

fn connect_with(s: &Server, id: &str, recv_buffer: Option<u32>) -> StreamClient {
    let mut c =
        try_connect_with(s, id, &[], recv_buffer).unwrap_or_else(|r| panic!("refused: {r:?}"));
    c.wait(|c| c.output_bytes > 0, "the hello and the first screen");
    c
}

impl StreamClient {
    /// Reads and applies one message; false when none came within `timeout` or it closed.
    fn pump(&mut self, timeout: Duration) -> bool {
        if self.closed {
            return false;
        }
        let next = self
            .rt
            .block_on(async { tokio::time::timeout(timeout, self.socket.next()).await });
        match next {
            Err(_) => false,
            Ok(None) | Ok(Some(Err(_))) | Ok(Some(Ok(Message::Close(_)))) => {
                self.closed = true;
                false
            }
            Ok(Some(Ok(Message::Text(t)))) => {
                let v: Value = serde_json::from_str(&t).expect("JSON text message");
                match v["type"].as_str() {
                    Some("hello") => {
                        assert!(self.term.is_none(), "one hello, first");
                        let (rows, cols) = (num(&v["rows"]), num(&v["cols"]));
                        self.term = Some(vt100::Parser::new(rows, cols, 0));
                    }
                    Some("size") => {
                        let (rows, cols) = (num(&v["rows"]), num(&v["cols"]));
                        self.term_mut().screen_mut().set_size(rows, cols);
                    }
                    _ => {}
                }
                self.events.push(v);
                true
            }
            Ok(Some(Ok(Message::Binary(b)))) => {
                self.output_bytes += b.len();
                self.term_mut().process(&b);
                true
            }
            Ok(Some(Ok(_))) => true,
        }
    }

    /// Reads until `cond` holds (15 s at most); panics with the screen if it never does.
    fn wait(&mut self, mut cond: impl FnMut(&StreamClient) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !cond(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || (!self.pump(left) && self.closed && !cond(self)) {
                panic!(
                    "never saw {what}; screen:\n{}\nevents: {:?}",
                    self.text(),
                    self.events
                );
            }
        }
    }

    fn wait_text(&mut self, needle: &str) {
        self.wait(|c| c.text().contains(needle), needle);
    }

    fn term_mut(&mut self) -> &mut vt100::Parser {
        self.term.as_mut().expect("output before hello")
    }

    fn screen(&self) -> &vt100::Screen {
        self.term.as_ref().expect("hello").screen()
    }

    /// The client's screen as peek shows one: every row, right-trimmed.
    fn text(&self) -> String {
        let Some(t) = &self.term else {
            return String::new();
        };
        let (_, cols) = t.screen().size();
        t.screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn event(&self, kind: &str) -> Option<&Value> {
        self.events.iter().find(|e| e["type"] == kind)
    }

    fn send(&mut self, message: Message) {
        self.rt
            .block_on(self.socket.send(message))
            .expect("send to the stream");
    }

    fn type_text(&mut self, data: &str) {
        self.send(Message::text(
            json!({"type": "input", "data": data}).to_string(),
        ));
    }

    fn resize(&mut self, cols: u16, rows: u16) {
        self.send(Message::text(
            json!({"type": "resize", "cols": cols, "rows": rows}).to_string(),
        ));
    }
}

fn num(v: &Value) -> u16 {
    v.as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .expect("a size")
}

fn shell(s: &Server, task: &str, cols: u16, rows: u16) -> String {
    let dir = s.state_dir.join("home");
    spawn_session(
        s,
        json!({"task": task, "providerId": "shell", "workingDirectory": dir, "cols": cols, "rows": rows}),
    )
}

fn session(s: &Server, id: &str) -> Value {
    s.get(&format!("{SESSIONS}/{id}")).json()["session"].clone()
}

#[test]
fn hello_then_the_screen_then_what_is_typed() {
    let s = Server::start();
    let id = shell(&s, "echo ready-$((6*7))", 90, 25);
    wait_screen(&s, &id, "ready-42");
    let mut c = connect(&s, &id);
    let hello = c.events[0].clone();
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["sessionId"], id.as_str());
    assert_eq!(
        (hello["cols"].as_u64(), hello["rows"].as_u64()),
        (Some(90), Some(25))
    );
    assert!(hello["status"].is_string(), "{hello}");
    // bash's readline turns bracketed paste on; the rest is off at a prompt.
    assert_eq!(hello["modes"]["bracketedPaste"], true, "{hello}");
    assert!(c.screen().bracketed_paste());
    for mode in ["altScreen", "appCursor", "appKeypad", "hideCursor"] {
        assert_eq!(hello["modes"][mode], false, "{hello}");
    }
    assert_eq!(hello["modes"]["mouse"], "none");
    c.wait_text("ready-42");

    // Typed through the stream; the command's output (not just its echo) arrives.
    c.type_text("echo hi-$((20+22))\r");
    c.wait_text("hi-42");
    // Binary frames work as input too.
    c.send(Message::binary(b"echo bin-$((5*5))\r".to_vec()));
    c.wait_text("bin-25");
    // The session went busy and ready again: status messages say so.
    c.wait(
        |c| c.events.iter().any(|e| e["type"] == "status"),
        "a status message",
    );
    // Once quiet, the client's screen is the server's, cursor included.
    assert!(wait_until(Duration::from_secs(10), || {
        while c.pump(Duration::from_millis(50)) {}
        let peek = s.get(&format!("{SESSIONS}/{id}/peek")).json();
        c.text() == peek["screen"].as_str().unwrap_or_default()
            && c.screen().cursor_position()
                == (num(&peek["cursor"]["row"]), num(&peek["cursor"]["col"]))
    }));
}

#[test]
fn modes_and_the_alternate_screen_reach_the_client() {
    let s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut c = connect(&s, &id);
    c.type_text("printf '\\033[?1049h\\033[?1h\\033[?2004h\\033[?1002h\\033[?1006hFULL-%s' SCREEN; sleep 60\r");
    c.wait_text("FULL-SCREEN");
    c.wait(
        |c| c.screen().alternate_screen() && c.screen().bracketed_paste(),
        "the modes",
    );
    assert!(c.screen().application_cursor());
    assert_eq!(
        c.screen().mouse_protocol_mode(),
        vt100::MouseProtocolMode::ButtonMotion
    );
    assert_eq!(
        c.screen().mouse_protocol_encoding(),
        vt100::MouseProtocolEncoding::Sgr
    );
    let modes = c
        .events
        .iter()
        .rev()
        .find(|e| e["type"] == "modes")
        .expect("a modes message")["modes"]
        .clone();
    assert_eq!(modes["altScreen"], true);
    assert_eq!(modes["appCursor"], true);
    assert_eq!(modes["bracketedPaste"], true);
    assert_eq!(modes["mouse"], "buttonMotion");
    assert_eq!(modes["mouseEncoding"], "sgr");

    // A client that joins now starts on the alternate screen with the same modes.
    let late = connect(&s, &id);
    assert_eq!(late.events[0]["modes"], modes);
    assert!(late.screen().alternate_screen());
    assert!(late.text().contains("FULL-SCREEN"));
}

#[test]
fn two_clients_both_see_what_one_types() {
    let s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut a = connect(&s, &id);
    let mut b = connect(&s, &id);
    a.type_text("echo from-a-$((2*3))\r");
    b.wait_text("from-a-6");
    a.wait_text("from-a-6");
    b.type_text("echo from-b-$((3*3))\r");
    a.wait_text("from-b-9");
    b.wait_text("from-b-9");
}

#[test]
fn the_terminal_takes_the_size_of_the_latest_active_client() {
    let s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut a = connect(&s, &id);
    let mut b = connect(&s, &id);
    a.resize(100, 30);
    assert!(wait_until(
        Duration::from_secs(10),
        || session(&s, &id)["cols"] == 100
    ));
    b.resize(70, 20);
    assert!(wait_until(
        Duration::from_secs(10),
        || session(&s, &id)["cols"] == 70
    ));
    b.type_text("stty size\r");
    b.wait_text("20 70");
    // Both clients follow the terminal's size.
    a.wait(|c| c.screen().size() == (20, 70), "the size 70x20");
    assert!(a.events.iter().any(|e| e["type"] == "size"));

    // A types: it is the latest active client, so its size wins again.
    a.type_text("stty size\r");
    a.wait_text("30 100");
    b.wait(|c| c.screen().size() == (30, 100), "the size 100x30");
    let info = session(&s, &id);
    assert_eq!(
        (info["cols"].as_u64(), info["rows"].as_u64()),
        (Some(100), Some(30))
    );

    // When A leaves, B (the one active before) sets the size.
    drop(a);
    assert!(wait_until(
        Duration::from_secs(10),
        || session(&s, &id)["cols"] == 70
    ));

    // A size out of range is refused with an error message; the stream goes on.
    b.resize(1, 5000);
    b.wait(|c| c.event("error").is_some(), "an error message");
    b.type_text("echo still-$((1+1))\r");
    b.wait_text("still-2");
}

/// Lines that all differ (a counter) and fill a wide terminal: every frame redraws the
/// screen. Runs about 10 s, then prints a marker computed by the shell.
const FLOOD: &str = "python3 -c 'import itertools,time\nend=time.time()+10\nfor i in itertools.count():\n  print(str(i)*(190//len(str(i))))\n  if time.time()>end: break'; echo flood-$((40+2))\r";

#[test]
fn a_client_that_stops_reading_costs_bounded_memory_and_then_gets_the_current_screen() {
    let s = Server::start();
    let id = shell(&s, "", 200, 50);
    // Its socket takes little while it reads nothing: what is in flight stays small.
    let mut slow = connect_with(&s, &id, Some(16 * 1024));
    // A client that keeps reading, so the server produces frames all along.
    let mut fast = connect(&s, &id);
    // Fill the scrollback with wide lines first, so the flood's memory is the terminal's own.
    slow.type_text("python3 -c 'print(\"w\"*190*12000)'; echo warm-$((1+1))\r");
    slow.wait_text("warm-2");
    fast.wait_text("warm-2");
    let before = rss_kib(s.pid());

    // A flood of about 10 s; `slow` reads nothing meanwhile.
    slow.type_text(FLOOD);
    let start = Instant::now();
    let mut peak = before;
    let fast_before = fast.output_bytes;
    while start.elapsed() < Duration::from_secs(11) {
        fast.pump(Duration::from_millis(100));
        peak = peak.max(rss_kib(s.pid()));
    }
    let fast_bytes = fast.output_bytes - fast_before;
    eprintln!(
        "server RSS: {before} KiB before the flood, at most {peak} KiB during it; a reading client got {fast_bytes} bytes"
    );
    // Nothing queues for the client that reads nothing: it is owed a frame at a time.
    assert!(
        peak < before + 32 * 1024,
        "the server grew from {before} KiB to {peak} KiB while a client read nothing"
    );

    // Reading again, it catches up to the current screen: the flood's end and the prompt.
    wait_screen(&s, &id, "flood-42");
    let resumed_at = slow.output_bytes;
    assert!(wait_until(Duration::from_secs(15), || {
        while slow.pump(Duration::from_millis(50)) {}
        let peek = s.get(&format!("{SESSIONS}/{id}/peek")).json();
        slow.text() == peek["screen"].as_str().unwrap_or_default()
    }));
    assert!(slow.text().contains("flood-42"));
    // What it read after the stall is what was in flight (the kernel's buffers: the
    // server's send buffer is at most 4 MiB here) plus the current screen, not the flood.
    let caught_up = slow.output_bytes - resumed_at;
    eprintln!("the stalled client read {caught_up} bytes after the stall");
    assert!(
        caught_up < 8 * 1024 * 1024,
        "read {caught_up} bytes after the stall"
    );
    slow.type_text("echo after-$((3+4))\r");
    slow.wait_text("after-7");
}

#[test]
fn an_ended_session_sends_its_final_screen_exit_and_closes() {
    let s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut live = connect(&s, &id);
    live.type_text("echo bye-$((3*3)); exit 3\r");
    live.wait(|c| c.closed, "the close");
    assert!(live.text().contains("bye-9"), "{}", live.text());
    let exit = live.event("exit").expect("an exit message").clone();
    assert_eq!(exit, json!({"type": "exit", "exitCode": 3, "signal": null}));
    // Nothing after the exit but the close.
    assert_eq!(live.events.last(), Some(&exit));

    // Someone who connects later still sees the last screen.
    assert!(wait_until(
        Duration::from_secs(10),
        || session(&s, &id)["ended"] == true
    ));
    let mut late = connect(&s, &id);
    assert_eq!(late.events[0]["status"], "exited");
    late.wait(|c| c.closed, "the close");
    assert!(late.text().contains("bye-9"), "{}", late.text());
    assert_eq!(late.event("exit"), Some(&exit));
}

#[test]
fn killed_session_exit_names_the_signal() {
    let s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut c = connect(&s, &id);
    c.type_text("echo pid-$$\r");
    c.wait_text("pid-");
    let pid = session(&s, &id)["pid"].as_i64().expect("pid") as i32;
    // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    c.wait(|c| c.closed, "the close");
    assert_eq!(
        c.event("exit"),
        Some(&json!({"type": "exit", "exitCode": null, "signal": "SIGKILL"}))
    );
}

#[test]
fn refusals_unknown_session_cross_site_page_not_a_websocket_bad_messages() {
    let s = Server::start();
    let r = try_connect(&s, "no-such-session", &[])
        .err()
        .expect("refused");
    assert_eq!(r.status, 404);
    assert!(
        r.body["error"]
            .as_str()
            .unwrap_or("")
            .contains("no-such-session")
    );

    let id = shell(&s, "", 80, 24);
    // A page of another site must not drive the terminal (browsers apply no CORS here).
    let r = try_connect(&s, &id, &[("Origin", "http://evil.example")])
        .err()
        .expect("refused");
    assert_eq!(r.status, 403);
    assert!(
        r.body["error"]
            .as_str()
            .unwrap_or("")
            .contains("evil.example")
    );
    // The API's own origin is fine.
    let own = format!("http://{}", s.addr);
    let mut c = try_connect(&s, &id, &[("Origin", own.as_str())]).expect("own origin");
    c.wait(|c| c.term.is_some(), "the hello");

    // A plain GET is told to use a WebSocket.
    let r = s.get(&format!("{SESSIONS}/{id}/stream"));
    assert_eq!(r.status, 426, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("WebSocket")
    );

    // Messages it does not understand get an error message; the stream goes on.
    c.send(Message::text("{\"type\":\"dance\"}"));
    c.wait(|c| c.event("error").is_some(), "an error message");
    c.type_text("echo ok-$((2+2))\r");
    c.wait_text("ok-4");
}

#[test]
fn the_token_is_required_when_set() {
    let s = Server::start_with(&["--token", "sekrit"]);
    let dir = s.state_dir.join("home");
    let r = s.post(
        SESSIONS,
        json!({"task": "", "providerId": "shell", "workingDirectory": dir}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["sessionId"].as_str().expect("id").to_string();
    let r = try_connect(&s, &id, &[("Authorization", "Bearer wrong")])
        .err()
        .expect("refused");
    assert_eq!(r.status, 401);
    let mut c = try_connect(&s, &id, &[("Authorization", "Bearer sekrit")]).expect("token");
    c.wait(|c| c.term.is_some(), "the hello");
}

#[test]
fn a_session_of_an_earlier_run_says_hello_and_exit_without_a_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Server::start_in(dir.path(), &[]);
    let id = shell(&first, "", 80, 24);
    first.stop();
    let s = Server::start_in(dir.path(), &[]);
    let mut c = try_connect(&s, &id, &[]).expect("an ended session can be watched");
    c.wait(|c| c.closed, "the close");
    let kinds: Vec<&str> = c.events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds, ["hello", "exit"], "{:?}", c.events);
    assert_eq!(c.events[0]["status"], "exited");
    assert_eq!(c.output_bytes, 0, "its terminal is gone");
}

#[test]
fn a_page_of_an_allowed_origin_may_watch() {
    let s = Server::start_with(&["--allow-origin", "http://localhost:3000"]);
    let id = shell(&s, "", 80, 24);
    let mut c = try_connect(&s, &id, &[("Origin", "http://localhost:3000")])
        .expect("an allowed origin connects");
    c.wait(|c| c.output_bytes > 0, "the first screen");
    let r = try_connect(&s, &id, &[("Origin", "http://localhost:3001")])
        .err()
        .expect("another origin is refused");
    assert_eq!(r.status, 403);
}

#[test]
fn the_server_stops_cleanly_while_clients_watch() {
    let mut s = Server::start();
    let id = shell(&s, "", 80, 24);
    let mut reading = connect(&s, &id);
    // And one that reads nothing while the session floods.
    let _stalled = connect_with(&s, &id, Some(16 * 1024));
    reading.type_text("seq 1 1000000000\r");
    reading.wait(
        |c| c.text().lines().any(|l| l.len() >= 6),
        "the flood past 100000",
    );
    assert_eq!(s.stop(), Some(0), "SIGTERM ends the server, exit 0");
    // The stream ends with the server (its `exit` message is sent only if the server gets
    // to it before its process ends).
    reading.wait(|c| c.closed, "the end of the stream");
}

/// A key typed into a stream is read and typed while every worker of the server's runtime
/// is busy: a stream's input has a thread of its own, so a key never waits for workers that
/// other streams' frames keep busy (the grid of flooding agents, BENCHMARKS.md).
#[test]
fn a_key_is_typed_while_every_worker_of_the_server_is_busy() {
    use orchestra_daemon::engine::{Engine, EngineConfig};
    use orchestra_sys::state_dir::StateDir;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = tempfile::tempdir().expect("tempdir");
    let providers = shell_in_an_empty_home(dir.path());
    let home = dir.path().join("home");
    let state = StateDir::lock(&dir.path().join("state")).expect("state dir");
    // One worker: a task that keeps it busy leaves the runtime no other.
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (engine, addr) = server.block_on(async {
        let engine = Engine::open(&state, EngineConfig::new(providers, home.clone()))
            .await
            .expect("engine");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let app =
            orchestra_daemon::api::router(engine.clone(), orchestra_daemon::api::Access::default());
        tokio::spawn(orchestra_daemon::api::serve(
            listener,
            app,
            std::future::pending(),
        ));
        (engine, addr)
    });
    let s = Server::attach(&format!("http://{addr}"), state.path.as_path(), None);
    // Where `shell` starts its sessions.
    std::fs::create_dir_all(s.state_dir.join("home")).expect("working directory");
    let id = shell(&s, "echo ready-$((6*7))", 80, 24);
    let mut c = connect(&s, &id);
    c.wait_text("ready-42");
    // A key waits for a send in progress (keys keep their order behind it), and the first
    // instruction's send ends on a worker: once its bytes are written, the worker this test
    // blocks must still record it as sent. So the worker is blocked only after that.
    assert!(
        wait_until(Duration::from_secs(10), || engine
            .session_messages(&id)
            .is_ok_and(|m| m.iter().any(|m| m.text.contains("ready-")))),
        "the first instruction is recorded as sent"
    );
    let on_screen = |needle: &str| {
        engine
            .peek(&id, 0, false)
            .is_ok_and(|p| p.screen.contains(needle))
    };

    let busy = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let (b, r) = (busy.clone(), release.clone());
    server.spawn(async move {
        b.store(true, Ordering::SeqCst);
        // Blocks the one worker: nothing else runs on the runtime until released.
        while !r.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    assert!(wait_until(Duration::from_secs(10), || busy.load(Ordering::SeqCst)));
    c.type_text("echo typed-$((3*14))\r");
    let typed = wait_until(Duration::from_secs(15), || on_screen("typed-42"));
    release.store(true, Ordering::SeqCst);
    assert!(
        typed,
        "the key waited for the busy worker: {:?}",
        engine.peek(&id, 0, false).map(|p| p.screen)
    );
    // And the stream goes on once the worker is free.
    c.wait_text("typed-42");
    drop(c);
    server.block_on(engine.shutdown());
}

/// The threads of the daemon that read stream clients' input, by name.
fn input_threads(s: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", s.pid()))
        .map(|tasks| {
            tasks
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|name| name.starts_with("stream-input"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// The next message that `pick` takes (others are skipped), within 10 s.
fn next_such<T>(c: &mut StreamClient, mut pick: impl FnMut(&Message) -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let next =
            c.rt.block_on(async { tokio::time::timeout(left, c.socket.next()).await });
        match next {
            Ok(Some(Ok(m))) => {
                if let Some(found) = pick(&m) {
                    return Some(found);
                }
            }
            _ => return None,
        }
    }
}

#[test]
fn a_ping_is_answered_a_close_is_echoed_and_a_client_that_goes_leaves_no_thread() {
    let s = Server::start();
    let id = shell(&s, "echo ready-$((6*7))", 80, 24);
    wait_screen(&s, &id, "ready-42");

    let mut c = connect(&s, &id);
    assert!(wait_until(Duration::from_secs(10), || input_threads(&s) == 1));
    c.send(Message::Ping(b"are-you-there".to_vec().into()));
    let pong = next_such(&mut c, |m| match m {
        Message::Pong(p) => Some(p.to_vec()),
        _ => None,
    });
    assert_eq!(pong.as_deref(), Some(&b"are-you-there"[..]));
    // The client closes: the server answers the close, and its reading thread ends.
    c.send(Message::Close(None));
    let echoed = next_such(&mut c, |m| matches!(m, Message::Close(_)).then_some(()));
    assert!(echoed.is_some(), "the server did not answer the close");
    assert!(
        wait_until(Duration::from_secs(10), || input_threads(&s) == 0),
        "{} input threads left after a clean close",
        input_threads(&s)
    );

    // A client that vanishes without a close (its socket dropped) leaves nothing either,
    // and the session goes on: a new client types into it.
    let gone = connect(&s, &id);
    assert!(wait_until(Duration::from_secs(10), || input_threads(&s) == 1));
    drop(gone);
    assert!(
        wait_until(Duration::from_secs(10), || input_threads(&s) == 0),
        "{} input threads left after a client vanished",
        input_threads(&s)
    );
    let mut again = connect(&s, &id);
    again.type_text("echo again-$((6*7))\r");
    again.wait_text("again-42");
}
