//! Helpers shared by the benches.
#![allow(dead_code)]

pub mod daemon;
pub mod figures;
pub mod soak;
pub mod tmux;

/// Whether the bench runs for figures (`cargo bench`); without `--bench` (as `cargo test
/// --all-targets` runs it) it is a small smoke run, and says so.
pub fn bench_mode(name: &str) -> bool {
    let bench = std::env::args().any(|a| a == "--bench");
    if !bench {
        println!("{name}: smoke run (no --bench); for figures run `cargo bench --bench {name}`");
    }
    bench
}

/// `git` in `dir` with a fixed identity and no global config, as the benches' own
/// repositories want it.
pub fn git_command(dir: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new("git");
    c.current_dir(dir)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    c
}

/// A whole number from the environment, or `default`.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[path = "../../tests/it/support/procfs.rs"]
mod procfs;
#[allow(unused_imports)] // each bench uses a part of `support`
pub use procfs::rss_kib;

/// User + system CPU ticks a process has used (`/proc/PID/stat`); 0 if it is gone.
pub fn cpu_ticks(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            let after = t.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = after.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

/// One JSON request: its status and body (`Null` when the body is not JSON), or why no answer
/// came. GET, DELETE, PATCH and POST, with or without a body.
pub fn http_request(
    http: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
) -> Result<(u16, serde_json::Value), String> {
    let resp = match (method, body) {
        ("GET", _) => http.get(url).call(),
        ("DELETE", _) => http.delete(url).call(),
        ("PATCH", b) => http
            .patch(url)
            .header("Content-Type", "application/json")
            .send(b.unwrap_or(serde_json::Value::Null).to_string().as_str()),
        (_, Some(b)) => http
            .post(url)
            .header("Content-Type", "application/json")
            .send(b.to_string().as_str()),
        (_, None) => http.post(url).send_empty(),
    };
    let mut resp = resp.map_err(|e| format!("{method} {url}: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{method} {url}: reading the body: {e}"))?;
    Ok((
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    ))
}

/// A JSON request to a bench's server: its body, `Null` when it fails (benches report what
/// they measured, they do not judge the API).
pub fn json_call(
    http: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
) -> serde_json::Value {
    http_request(http, method, url, body)
        .map(|(_, v)| v)
        .unwrap_or(serde_json::Value::Null)
}

/// Writes about `mb` MiB of coloured lines that all differ (so every screen update has work
/// in it) to `path`; returns the bytes written.
pub fn flood_file(path: &std::path::Path, mb: u64) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let (target, mut written, mut i) = (mb * 1024 * 1024, 0u64, 0u64);
    while written < target {
        let line = format!(
            "\x1b[3{c}m[{i:09}]\x1b[0m building unit {i} of the flood, \x1b[1mbold\x1b[0m and plain text {i:x}\r\n",
            c = i % 7 + 1
        );
        std::io::Write::write_all(&mut f, line.as_bytes())?;
        written += line.len() as u64;
        i += 1;
    }
    std::io::Write::flush(&mut f)?;
    Ok(written)
}

/// Puts a bench's `orchestra serve` in a session of its own, as `orchestra` starts its daemon
/// (`src/daemon.rs`): the kernel's autogroup scheduling then shares the CPU between the daemon
/// and the bench's own processes (the `tmux send-keys` that type, the clients that time) as it
/// does between a user's daemon and terminal. In the bench's session, the daemon's busy
/// threads took the bench's share, and every key typed through the TUI waited for them. It
/// still ends with the bench: SIGTERM when the bench's thread that started it goes away.
pub fn detach_as_orchestra_does(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid and prctl are async-signal-safe; between fork and exec they only change
    // the child's own session and parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// `orchestra serve` on 127.0.0.1 port 0 and `state` (with `extra` flags): the release
/// binary cargo builds for benches, or `ORCHESTRA_BIN`. Its child and its `host:port` once it
/// listens; `None` if it does not start.
pub fn spawn_serve(
    state: &std::path::Path,
    extra: &[&str],
) -> Option<(std::process::Child, String)> {
    let bin = orchestra_bin();
    let home = state.join("home");
    std::fs::create_dir_all(&home).ok()?;
    let mut cmd = std::process::Command::new(bin);
    // A throwaway rig: the benches' clients send no token (the check of one costs a compare).
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--insecure-no-auth"])
        .args(extra)
        .arg("--state-dir")
        .arg(state)
        .env("HOME", &home)
        .env("SHELL", "/bin/bash")
        .env("XDG_CONFIG_HOME", state.join("no-config"))
        .env_remove("ORCHESTRA_TOKEN")
        .current_dir(&home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    detach_as_orchestra_does(&mut cmd);
    let mut child = cmd.spawn().ok()?;
    let addr = listening_addr(&mut child)?;
    Some((child, addr))
}

/// The `orchestra` the benches run: the release binary cargo builds for them, or
/// `ORCHESTRA_BIN`.
pub fn orchestra_bin() -> std::path::PathBuf {
    std::env::var_os("ORCHESTRA_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_orchestra")))
}

/// The `host:port` a starting `orchestra serve` (stdout piped) says it listens on.
pub fn listening_addr(child: &mut std::process::Child) -> Option<String> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take()?)
        .read_line(&mut line)
        .ok()?;
    Some(
        line.trim()
            .strip_prefix("orchestra listening on http://")?
            .to_string(),
    )
}

/// An HTTP client for a bench's server: every status is an answer, no proxy.
pub fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent()
}

/// A cockpit in memory for the TUI benches: a snapshot, and a vt100 screen per session id.
pub struct MemoryCockpit {
    pub snap: orchestra_tui::backend::Snapshot,
    pub screens: parking_lot::Mutex<std::collections::HashMap<String, vt100::Parser>>,
    pub events: tokio::sync::broadcast::Sender<orchestra_daemon::engine::Event>,
}

impl MemoryCockpit {
    pub fn new(
        snap: orchestra_tui::backend::Snapshot,
        screens: std::collections::HashMap<String, vt100::Parser>,
    ) -> MemoryCockpit {
        MemoryCockpit {
            snap,
            screens: parking_lot::Mutex::new(screens),
            events: tokio::sync::broadcast::channel(16).0,
        }
    }
}

impl orchestra_tui::backend::Cockpit for MemoryCockpit {
    fn snapshot(&self) -> orchestra_tui::backend::Snapshot {
        self.snap.clone()
    }
    fn providers(&self) -> Vec<orchestra_tui::backend::ProviderChoice> {
        Vec::new()
    }
    fn default_provider(&self) -> Option<String> {
        None
    }
    fn default_dir(&self) -> String {
        "/".into()
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<orchestra_daemon::engine::Event> {
        self.events.subscribe()
    }
    fn execute(
        &self,
        cmd: orchestra_tui::backend::Command,
    ) -> orchestra_tui::backend::CommandFuture {
        // Resizes reach the screens at once, as the daemon's would come back.
        if let orchestra_tui::backend::Command::Resize {
            session_id,
            cols,
            rows,
        } = &cmd
            && let Some(p) = self.screens.lock().get_mut(session_id)
        {
            p.screen_mut().set_size(*rows, *cols);
        }
        Box::pin(async { Ok(orchestra_tui::backend::Outcome::Done(String::new())) })
    }
    fn write_input(&self, _: &str, _: Vec<u8>) -> Result<(), String> {
        Ok(())
    }
    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        match self.screens.lock().get(session_id) {
            Some(p) => {
                f(p.screen());
                true
            }
            None => false,
        }
    }
}
