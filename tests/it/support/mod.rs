//! Test support: the real `orchestra serve` on 127.0.0.1 port 0 with a temp state dir, a raw
//! HTTP/1.1 client, and waiting by polling with a deadline.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_orchestra");

#[path = "procfs.rs"]
mod procfs;
pub mod svg;
#[allow(unused_imports)] // each test binary uses a part of `support`
pub use procfs::rss_kib;

/// The real agent CLIs are heavy (a Node.js process each, a model turn, a worktree): the tests
/// that run them (agents_e2e, agents_live) take this so only one runs at a time.
pub static REAL_CLIS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Polls `cond` until it holds or `timeout` passes; returns whether it held.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} (status {})", self.body, self.status))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One request over a fresh connection; `extra` headers are sent verbatim.
pub fn raw_request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    extra: &[(&str, &str)],
) -> Response {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !extra.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        // A Content-Type among `extra` replaces the JSON one.
        if !extra
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req.push_str("Content-Type: application/json\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write head");
    if let Some(b) = body {
        // The server may answer (413) before reading all of a huge body.
        let _ = s.write_all(b);
    }
    let mut reader = BufReader::new(s);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status code");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            if reader.read_line(&mut size).unwrap_or(0) == 0 {
                break;
            }
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).expect("chunk");
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        let _ = reader.read_to_end(&mut body);
    }
    Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Where `scripts/install-agent-clis` puts the real coding-agent CLIs:
/// `${ORCHESTRA_TOOLS_DIR:-$HOME/.cache/orchestra-tools}/bin`.
pub fn tools_bin() -> PathBuf {
    let dir = std::env::var_os("ORCHESTRA_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/orchestra-tools")
        });
    dir.join("bin")
}

/// A running `orchestra serve`; SIGTERMed and reaped on drop.
pub struct Server {
    pub child: Option<Child>,
    pub addr: String,
    pub url: String,
    pub state_dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    pub token: Option<String>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    pub fn start_with(args: &[&str]) -> Server {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut s = Server::start_in(tmp.path(), args);
        s._tmp = Some(tmp);
        s
    }

    /// Starts on an existing state directory (for restart tests).
    pub fn start_in(state_dir: &Path, args: &[&str]) -> Server {
        Server::try_start_in(state_dir, args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts with extra environment for the server (and so its sessions: `HOME`, `PATH`…).
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut s = Server::try_start_env(tmp.path(), args, env).unwrap_or_else(|e| panic!("{e}"));
        s._tmp = Some(tmp);
        s
    }

    pub fn try_start_in(state_dir: &Path, args: &[&str]) -> Result<Server, String> {
        Server::try_start_env(state_dir, args, &[])
    }

    pub fn try_start_env(
        state_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let _ = std::fs::create_dir_all(state_dir.join("home"));
        let mut cmd = Command::new(BIN);
        // Agent credentials and settings of whoever runs the tests stay out of them.
        for (k, _) in std::env::vars() {
            const AGENT_VARS: [&str; 8] = [
                "ANTHROPIC_",
                "CLAUDE_",
                "OPENAI_",
                "CODEX_",
                "GEMINI_",
                "GOOGLE_",
                "AIDER_",
                "OPENCODE_",
            ];
            if AGENT_VARS.iter().any(|p| k.starts_with(p)) {
                cmd.env_remove(k);
            }
        }
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--state-dir"])
            .arg(state_dir)
            .args(args)
            .env_remove("ORCHESTRA_TOKEN")
            .env("XDG_CONFIG_HOME", state_dir.join("no-config"))
            .env("SHELL", "/bin/bash")
            // Sessions start from the test's own empty home: no user rc files (slow version
            // managers, prompts) in the shells under test.
            .env("HOME", state_dir.join("home"))
            // Nor in a git repository: the crate's own would get task worktrees and branches.
            .current_dir(state_dir.join("home"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if !args.contains(&"--default-provider") {
            cmd.env("ORCHESTRA_DEFAULT_PROVIDER", "shell");
        }
        let mut child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let Some(url) = line.trim().strip_prefix("orchestra listening on ") else {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            let _ = child.wait();
            return Err(format!("no listening line: {line:?}; stderr: {err}"));
        };
        let url = url.to_string();
        let addr = url.trim_start_matches("http://").to_string();
        // The token it asks for: the one given, else the state directory's own (none under
        // --insecure-no-auth), as the CLI finds it.
        let token = args
            .iter()
            .position(|a| *a == "--token")
            .map(|i| args[i + 1].to_string())
            .or_else(|| {
                orchestra_sys::server_file::ServerFile::read(state_dir)
                    .ok()
                    .flatten()
                    .and_then(|f| f.token)
            });
        Ok(Server {
            child: Some(child),
            addr,
            url,
            state_dir: state_dir.to_path_buf(),
            _tmp: None,
            token,
        })
    }

    /// A handle on an orchestra this test did not start as its child (a daemon): requests
    /// only; dropping it does not stop it.
    pub fn attach(url: &str, state_dir: &Path, token: Option<&str>) -> Server {
        Server {
            child: None,
            addr: url.trim_start_matches("http://").to_string(),
            url: url.to_string(),
            state_dir: state_dir.to_path_buf(),
            _tmp: None,
            token: token.map(str::to_string),
        }
    }

    pub fn auth(&self) -> Vec<(String, String)> {
        self.token
            .iter()
            .map(|t| ("Authorization".to_string(), format!("Bearer {t}")))
            .collect()
    }

    pub fn request(&self, method: &str, path: &str, body: Option<Value>) -> Response {
        let b = body.map(|v| v.to_string());
        let auth = self.auth();
        let extra: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw_request(
            &self.addr,
            method,
            path,
            b.as_deref().map(str::as_bytes),
            &extra,
        )
    }

    /// [`raw_request`] to this server with its token (and `extra` headers verbatim).
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        extra: &[(&str, &str)],
    ) -> Response {
        let auth = self.auth();
        let mut headers: Vec<(&str, &str)> =
            auth.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        headers.extend_from_slice(extra);
        raw_request(&self.addr, method, path, body, &headers)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, None)
    }
    pub fn post(&self, path: &str, body: Value) -> Response {
        self.request("POST", path, Some(body))
    }
    pub fn post_empty(&self, path: &str) -> Response {
        self.request("POST", path, None)
    }
    pub fn patch(&self, path: &str, body: Value) -> Response {
        self.request("PATCH", path, Some(body))
    }
    pub fn delete(&self, path: &str) -> Response {
        self.request("DELETE", path, None)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// SIGTERM and wait; returns the exit status code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(st)) = child.try_wait() {
                return st.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL and reap, as a crash would.
    pub fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Creates a task and returns its id.
pub fn create_task_id(s: &Server, name: &str) -> String {
    create_task(s, name, serde_json::json!({}))["id"]
        .as_str()
        .expect("a task id")
        .to_string()
}

/// Creates a task and returns its JSON.
pub fn create_task(s: &Server, name: &str, extra: Value) -> Value {
    let mut body = serde_json::json!({"name": name, "description": format!("{name} description")});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    let r = s.post("/api/coding-agents/tasks", body);
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()["task"].clone()
}

/// Pids of live (non-zombie) processes whose environment holds `needle` (e.g. a marker).
pub fn pids_with_env(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
                && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
                && process_state(pid).is_some_and(|s| s != 'Z')
            {
                out.push(pid);
            }
        }
    }
    out
}

/// The state letter of a process (R, S, T, Z…), if it exists.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.trim_start().chars().next()
}

/// Spawns a session and returns its id.
pub fn spawn_session(s: &Server, body: Value) -> String {
    let r = s.post("/api/coding-agents/sessions", body);
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()["sessionId"]
        .as_str()
        .expect("sessionId")
        .to_string()
}

/// The visible screen of a session.
pub fn screen(s: &Server, id: &str) -> String {
    s.get(&format!("/api/coding-agents/sessions/{id}/peek"))
        .json()["screen"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits until the session's screen contains `needle`; panics with the screen if not.
pub fn wait_screen(s: &Server, id: &str, needle: &str) {
    let mut last = String::new();
    let ok = wait_until(Duration::from_secs(15), || {
        last = screen(s, id);
        last.contains(needle)
    });
    assert!(ok, "screen never showed {needle:?}; it shows:\n{last}");
}

/// Every live process started for a session (it carries the session id in its environment).
pub fn session_pids(id: &str) -> Vec<u32> {
    pids_with_env(&format!("ORCHESTRA_SESSION_ID={id}"))
}

/// The CLI against a server (its URL and state directory), piped (so never coloured), with
/// no orchestra environment: (succeeded, stdout, stderr).
pub fn cli(s: &Server, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .arg("--url")
        .arg(&s.url)
        .arg("--state-dir")
        .arg(&s.state_dir)
        .args(args)
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .env("HOME", s.state_dir.join("home"))
        .stdin(Stdio::null())
        .output()
        .expect("run the CLI");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits until the task reaches `status`; returns its JSON.
pub fn wait_task_status(s: &Server, id: &str, status: &str) -> Value {
    let mut last = Value::Null;
    let ok = wait_until(Duration::from_secs(20), || {
        last = s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"].clone();
        last["metadata"]["status"] == status
    });
    assert!(ok, "task never became {status}: {last}");
    last
}

/// An open `GET /api/coding-agents/events` stream, past its headers (so subscribed).
pub struct Events(BufReader<TcpStream>);

impl Events {
    pub fn open(s: &Server) -> Events {
        Events::open_with(s, "")
    }

    /// With a query (`"?output=lines"`).
    pub fn open_with(s: &Server, query: &str) -> Events {
        let auth: String = s
            .auth()
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        Events::open_authorized(s, query, &auth)
    }

    /// As whoever `authorization` (an `Authorization` header's value) stands for.
    pub fn open_as(s: &Server, query: &str, authorization: &str) -> Events {
        Events::open_authorized(s, query, &format!("Authorization: {authorization}\r\n"))
    }

    fn open_authorized(s: &Server, query: &str, auth: &str) -> Events {
        let mut stream = TcpStream::connect(&s.addr).expect("connect");
        write!(
            stream,
            "GET /api/coding-agents/events{query} HTTP/1.1\r\nHost: {}\r\n{auth}\r\n",
            s.addr
        )
        .expect("request");
        stream.set_read_timeout(Some(Duration::from_secs(20))).ok();
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        reader.read_line(&mut head).expect("status line");
        assert!(head.contains("200"), "{head}");
        loop {
            let mut l = String::new();
            reader.read_line(&mut l).expect("header");
            if l.trim().is_empty() {
                break;
            }
        }
        Events(reader)
    }

    /// The texts of session `id`'s prompts, one per `session:prompt` event, up to the one
    /// that says it no longer waits on any (`null`); every event of the session that shows
    /// it `blocked` carries its prompt (checked on the way).
    pub fn prompts_of(&mut self, id: &str) -> Vec<Value> {
        let mut prompts = Vec::new();
        while let Some((name, data)) = self.next() {
            let session = &data["session"];
            if session["id"] != id {
                continue;
            }
            if session["status"] == "blocked" {
                assert!(session["prompt"]["text"].is_string(), "{name}: {session}");
            }
            if name == "session:prompt" {
                prompts.push(session["prompt"]["text"].clone());
                if session["prompt"].is_null() {
                    break;
                }
            }
        }
        prompts
    }

    /// The next event's name and data; `None` when the stream ends or times out.
    pub fn next(&mut self) -> Option<(String, Value)> {
        let (name, data) = self.next_text()?;
        Some((name, serde_json::from_str(&data).unwrap_or(Value::Null)))
    }

    /// The next event's name and data as sent.
    pub fn next_text(&mut self) -> Option<(String, String)> {
        // Keep-alives arrive more often than the read timeout: give up on time as well.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut name = None;
        loop {
            if Instant::now() > deadline {
                return None;
            }
            let mut l = String::new();
            if self.0.read_line(&mut l).ok()? == 0 {
                return None;
            }
            let l = l.trim();
            if let Some(n) = l.strip_prefix("event: ") {
                name = Some(n.to_string());
            } else if let Some(d) = l.strip_prefix("data: ")
                && let Some(n) = name.take()
            {
                return Some((n, d.to_string()));
            }
        }
    }
}

/// Writes a config file with the fake coding agent (tests/fixtures/agents/fake) as provider
/// `fake`, started with `extra_args`; returns its path.
pub fn fake_agent_config(dir: &Path, extra_args: &[&str]) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/fake");
    let template =
        std::fs::read_to_string(fixtures.join("provider.toml")).expect("fake provider template");
    let extra: String = extra_args.iter().map(|a| format!(", {a:?}")).collect();
    let config = template
        .replace("{agent}", &fixtures.join("agent.py").display().to_string())
        .replace("{extra_args}", &extra);
    let path = dir.join("config.toml");
    std::fs::write(&path, config).expect("write config");
    path
}

/// The credential a session's agent was given (its `ORCHESTRA_TOKEN`), read from the
/// environment of its processes.
pub fn session_credential(sid: &str) -> String {
    let mut found = None;
    assert!(
        wait_until(Duration::from_secs(10), || {
            found = session_pids(sid).into_iter().find_map(|pid| {
                let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
                env.split(|b| *b == 0).find_map(|kv| {
                    String::from_utf8_lossy(kv)
                        .strip_prefix("ORCHESTRA_TOKEN=")
                        .map(str::to_string)
                })
            });
            found.is_some()
        }),
        "session {sid} has no ORCHESTRA_TOKEN"
    );
    found.unwrap_or_default()
}

/// Runs git in `dir` as the user would (their own identity, no global config).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "user")
        .env("GIT_AUTHOR_EMAIL", "user@example.com")
        .env("GIT_COMMITTER_NAME", "user")
        .env("GIT_COMMITTER_EMAIL", "user@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// A repository on `main` with `a.txt` and `b.txt` committed.
pub fn git_repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path();
    git(p, &["init", "-q", "-b", "main"]);
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    std::fs::write(p.join("b.txt"), "b\n").unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-qm", "init"]);
    d
}

/// Applies an app's command results and engine events until `ok` holds, or fails after 20 s.
pub async fn app_wait_for(
    app: &mut orchestra_tui::App,
    events: &mut tokio::sync::broadcast::Receiver<orchestra_daemon::engine::Event>,
    what: &str,
    mut ok: impl FnMut(&mut orchestra_tui::App) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        app.pump();
        while let Ok(ev) = events.try_recv() {
            app.on_engine(Ok(ev));
        }
        app.refresh_if_stale();
        if ok(app) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; the TUI's last notice: {:?}",
            app.notice().map(|n| n.text.clone())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// For an engine in the test's own process: the built-in providers, with the shell started in an empty HOME: a user's rc files (a
/// version manager's `init`, with its lock files) must not slow or stall the tests' shells.
pub fn shell_in_an_empty_home(dir: &Path) -> orchestra_daemon::providers::Providers {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = dir.join("shell-config.toml");
    let config = format!(
        "[[provider]]\nid = \"shell\"\nenv = {{ HOME = {:?} }}\n",
        home.display().to_string()
    );
    std::fs::write(&path, config).unwrap();
    let config = orchestra_daemon::providers::Config::load(Some(&path)).unwrap();
    orchestra_daemon::providers::Providers::from_config(&config, None).unwrap()
}

/// The TUI's own cockpit (the one client over HTTP, the event stream and the session
/// streams) attached to `engine`, which this process serves on 127.0.0.1 port 0: the TUI's
/// tests drive what users run, with the engine at hand to set things up and check them.
pub async fn attach_tui(
    engine: &orchestra_daemon::engine::Engine,
) -> std::sync::Arc<orchestra_tui::RemoteCockpit> {
    use orchestra_client::http::{Api, Caller};
    use orchestra_daemon::api;
    let bound = api::bind("127.0.0.1:0".parse().expect("address"), None)
        .await
        .expect("bind the API");
    let url = bound.url.clone();
    engine.set_url(url.clone());
    let router = api::router(
        engine.clone(),
        api::Access {
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        },
    );
    // As the daemon does: a stop asked over the API closes the server, then ends every agent.
    let served = engine.clone();
    tokio::spawn(async move {
        let closing = served.closing();
        let _ = api::serve(bound.listener, router, closing).await;
        served
            .shutdown_because(orchestra_daemon::engine::STOPPED_BY_USER)
            .await;
    });
    // The TUI keeps its own small choices (the list's order) in the state directory.
    let state_dir = engine.state_dir().to_path_buf();
    let cockpit = tokio::task::spawn_blocking(move || {
        orchestra_tui::RemoteCockpit::attach(
            Api::new(&url, None, Caller::Tui),
            Box::new(|| None),
            Some(state_dir),
        )
    })
    .await
    .expect("attaching")
    .expect("attach");
    std::sync::Arc::new(cockpit)
}

/// An `Authorization` header's value for `token`.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A started `shell` task under `approval` (`None`: the default): its id, its session's and
/// that session's own credential (what its agent, and any MCP server it runs, is given).
pub fn started_agent_task(
    s: &Server,
    name: &str,
    approval: Option<&str>,
) -> (String, String, String) {
    let mut extra = serde_json::json!({"providerId": "shell", "description": ""});
    if let Some(a) = approval {
        extra["approval"] = serde_json::json!(a);
    }
    let id = create_task(s, name, extra)["id"]
        .as_str()
        .expect("a task id")
        .to_string();
    let r = s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let sid = r.json()["task"]["metadata"]["sessionId"]
        .as_str()
        .expect("a session")
        .to_string();
    let credential = session_credential(&sid);
    (id, sid, credential)
}

/// What the stand-in `gh` of [`fake_gh`] prints as the pull request it opened.
pub const FAKE_PR_URL: &str = "https://github.example/octo/hello/pull/7";

/// A directory for `PATH` holding git and sh (where this machine has them), and no `gh` or
/// `glab` unless the test adds one.
pub fn bin_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    for program in ["git", "sh"] {
        let found = Command::new("/bin/sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .expect("sh runs");
        let at = String::from_utf8_lossy(&found.stdout).trim().to_string();
        assert!(!at.is_empty(), "{program} is not on this machine's PATH");
        std::os::unix::fs::symlink(&at, d.path().join(program)).expect("symlink");
    }
    d
}

/// Writes an executable script `name` into `dir`.
pub fn script(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write script");
    std::fs::set_permissions(
        &p,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .expect("chmod");
}

/// The stand-in `gh`: `auth status` answers `logged_in`; anything else records its arguments
/// (NUL-separated) in `argv` and prints the pull request's address.
pub fn fake_gh(dir: &Path, argv: &Path, logged_in: bool) {
    let auth = if logged_in {
        "exit 0"
    } else {
        "echo 'You are not logged into any GitHub hosts. To log in, run: gh auth login' >&2; exit 1"
    };
    script(
        dir,
        "gh",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = auth ]; then {auth}; fi\nprintf '%s\\0' \"$@\" > '{}'\necho {FAKE_PR_URL}\n",
            argv.display()
        ),
    );
}
