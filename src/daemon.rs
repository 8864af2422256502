//! Finding the orchestra of a state directory, and starting one in the background when none
//! runs: what `orchestra` (the TUI) does before it attaches.
//!
//! A running orchestra announces itself in `<state>/server.json` (written by [`crate::boot`]).
//! That file can outlive its writer (SIGKILL, a crash, a reboot), so it is trusted only when
//! its pid is alive and its URL answers. A new daemon is `orchestra serve` in a session of its
//! own (no controlling terminal: closing the terminal that started it never reaches it), with
//! stdin from /dev/null and its output appended to `<state>/logs/daemon.log`.
//!
//! Everything here blocks (short HTTP calls, polling): call it before the async runtime, or
//! from a blocking context.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The name of the file a running orchestra writes into its state directory.
pub const SERVER_FILE: &str = "server.json";
/// The daemon's stdout and stderr, in the state directory's `logs/`.
pub const DAEMON_LOG: &str = "daemon.log";
/// How long a new daemon gets to start listening.
pub const START_BUDGET: Duration = Duration::from_secs(2);
/// How many lines of the daemon's log an error quotes.
const LOG_LINES_QUOTED: usize = 12;

/// Where an orchestra answers, and the token it wants (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub token: Option<String>,
}

/// `server.json`: how clients find a running orchestra. It may hold the token, so it is
/// written 0600.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFile {
    pub url: String,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub pid: Option<u32>,
}

/// Why `server.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ServerFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid server file ({why})")]
    Invalid { path: PathBuf, why: String },
}

impl ServerFile {
    pub fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(SERVER_FILE)
    }

    /// Reads `<state_dir>/server.json`; `Ok(None)` when there is none.
    pub fn read(state_dir: &Path) -> Result<Option<ServerFile>, ServerFileError> {
        let path = ServerFile::path(state_dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ServerFileError::Read { path, source }),
        };
        let invalid = |why: String| ServerFileError::Invalid {
            path: path.clone(),
            why,
        };
        let mut file: ServerFile =
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if file.url.trim().is_empty() {
            return Err(invalid("no url".into()));
        }
        file.token = file.token.filter(|t| !t.is_empty());
        Ok(Some(file))
    }

    /// Writes it atomically (a temporary file renamed over it), 0600.
    pub fn write(&self, state_dir: &Path) -> std::io::Result<()> {
        let path = ServerFile::path(state_dir);
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut f = crate::state_dir::private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(&body)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }

    /// Whether its writer still runs.
    pub fn pid_alive(&self) -> bool {
        self.pid.is_some_and(pid_alive)
    }
}

/// Whether a process with this pid exists and is not a zombie (a killed orchestra its parent
/// has not reaped yet is not running either). Signal 0 checks without sending anything.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    exists && !zombie
}

/// Whether an orchestra answers `GET /api/status` at `endpoint` (with its token).
pub fn answers(endpoint: &Endpoint) -> bool {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(2)))
        .build()
        .new_agent();
    let mut request = agent.get(format!("{}/api/status", endpoint.url.trim_end_matches('/')));
    if let Some(token) = &endpoint.token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    request
        .call()
        .is_ok_and(|resp| resp.status().as_u16() == 200)
}

/// The token to send to `url`: server.json's in `state_dir`, when that names the same URL
/// (a token is never sent to a server it was not issued by).
pub fn token_for_url(state_dir: &Path, url: &str) -> Option<String> {
    let file = ServerFile::read(state_dir).ok().flatten()?;
    let same = |u: &str| u.trim().trim_end_matches('/').to_ascii_lowercase();
    (same(&file.url) == same(url))
        .then_some(file.token)
        .flatten()
}

/// The orchestra running on `state_dir`, if one does: its server.json names a live pid and
/// its URL answers. Never starts anything.
pub fn find(state_dir: &Path) -> Option<Endpoint> {
    let file = ServerFile::read(state_dir).ok().flatten()?;
    if !file.pid_alive() {
        return None;
    }
    let endpoint = Endpoint {
        url: file.url,
        token: file.token,
    };
    answers(&endpoint).then_some(endpoint)
}

/// The orchestra of `state_dir`, started now (detached) if none runs; `true` when this call
/// started it. `serve_args` go after `orchestra serve --state-dir DIR`; `token`, the one the
/// user gave (else the state directory's own is used), goes through the environment.
pub fn find_or_start(
    state_dir: &Path,
    serve_args: &[String],
    token: Option<&str>,
) -> Result<(Endpoint, bool)> {
    let exe = std::env::current_exe().context("cannot find the orchestra executable")?;
    find_or_start_with(&exe, state_dir, serve_args, token)
}

/// [`find_or_start`] running `exe` as orchestra (tests run the built binary this way).
pub fn find_or_start_with(
    exe: &Path,
    state_dir: &Path,
    serve_args: &[String],
    token: Option<&str>,
) -> Result<(Endpoint, bool)> {
    if let Some(endpoint) = find(state_dir) {
        return Ok((endpoint, false));
    }
    let state_dir = std::path::absolute(state_dir)
        .with_context(|| format!("cannot use state directory {}", state_dir.display()))?;
    let started = spawn_daemon(exe, &state_dir, serve_args, token)?;
    let deadline = started.at + START_BUDGET;
    let mut child = Some(started.child);
    let mut exit = None;
    loop {
        if let Some(endpoint) = find(&state_dir) {
            let ours = ServerFile::read(&state_dir)
                .ok()
                .flatten()
                .and_then(|f| f.pid)
                .is_some_and(|pid| pid == started.pid);
            // Ours: reap it whenever it ends, so it never lingers as a zombie of this process.
            // Another's (two started at once and the other took the state directory): ours
            // has ended or will, reaped the same way.
            if let Some(mut c) = child.take() {
                let _ = std::thread::Builder::new()
                    .name("daemon-reaper".into())
                    .spawn(move || c.wait());
            }
            return Ok((endpoint, ours));
        }
        if exit.is_none()
            && let Some(c) = child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            // It gave up. Most often another orchestra holds the state directory, started a
            // moment ago by someone else: keep looking for that one until the deadline.
            exit = Some(status);
            child = None;
        }
        // Gave up with nobody else there (a bad flag, a bad config): no reason to wait.
        let alone = exit.is_some() && !lock_holder(&state_dir).is_some_and(pid_alive);
        if alone || Instant::now() >= deadline {
            if let Some(c) = child.take() {
                // Not listening in time: do not leave a half-started daemon behind.
                end_child(c);
            }
            let how = match exit {
                Some(status) => format!("it exited ({status})"),
                None => format!(
                    "it did not listen within {} s and was stopped",
                    START_BUDGET.as_secs()
                ),
            };
            bail!(
                "could not start orchestra for {}: {how}; see {}{}",
                state_dir.display(),
                started.log.display(),
                quote_log(&started.log, started.log_offset)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid in the state directory's lock file: the orchestra that holds it, or held it last.
fn lock_holder(state_dir: &Path) -> Option<u32> {
    std::fs::read_to_string(state_dir.join(crate::state_dir::LOCK_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Ends a daemon that did not start in time: SIGTERM (it stops gracefully if it got that far),
/// then SIGKILL; reaped either way.
fn end_child(mut child: std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: a signal to our own child, not yet reaped, so its pid is still ours.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    if !poll_until(Duration::from_secs(1), || {
        matches!(child.try_wait(), Ok(Some(_)))
    }) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Waits until process `pid` has exited (it is gone or a zombie), up to `timeout`; whether
/// it did. For a stop: the agents are gone and the state is saved once orchestra has exited.
pub fn wait_exit(pid: u32, timeout: Duration) -> bool {
    poll_until(timeout, || !pid_alive(pid))
}

/// Checks `done` every 20 ms until it holds or `timeout` passes; whether it held.
pub fn poll_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A daemon just spawned.
struct Spawned {
    child: std::process::Child,
    pid: u32,
    at: Instant,
    log: PathBuf,
    /// The log's length before the daemon wrote to it: what it says starts here.
    log_offset: u64,
}

/// `exe serve --state-dir DIR ARGS…` in its own session, stdin from /dev/null, output
/// appended to the daemon log, `token` (if any) in its environment.
fn spawn_daemon(
    exe: &Path,
    state_dir: &Path,
    serve_args: &[String],
    token: Option<&str>,
) -> Result<Spawned> {
    // The state directory first, so that it is made private (0700), not with the usual mode.
    let logs = state_dir.join("logs");
    for dir in [state_dir, &logs] {
        crate::state_dir::create_private_dir(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let log = logs.join(DAEMON_LOG);
    let out = crate::state_dir::private_file()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let log_offset = out.metadata().map(|m| m.len()).unwrap_or(0);
    let err = out
        .try_clone()
        .with_context(|| format!("cannot open {}", log.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve")
        .arg("--state-dir")
        .arg(state_dir)
        .args(serve_args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        // Started from inside an agent's session, it must not carry that orchestra's marks:
        // that orchestra's guard would end it along with its own sessions.
        .env_remove(crate::engine::INSTANCE_VAR)
        .env_remove("ORCHESTRA_SESSION_ID")
        .env_remove("ORCHESTRA_TASK_ID")
        .env_remove("ORCHESTRA_HOOK_TOKEN");
    // In the environment, not the arguments: `ps` shows arguments to every account.
    match token.filter(|t| !t.is_empty()) {
        Some(t) => cmd.env("ORCHESTRA_TOKEN", t),
        None => cmd.env_remove("ORCHESTRA_TOKEN"),
    };
    // SAFETY: setsid is async-signal-safe; between fork and exec it only detaches the child
    // from this process's session and terminal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let at = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {} serve", exe.display()))?;
    Ok(Spawned {
        pid: child.id(),
        child,
        at,
        log,
        log_offset,
    })
}

/// The last lines the daemon wrote to its log (after `offset`), as an indented quote.
fn quote_log(log: &Path, offset: u64) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(log) {
        let _ = f.seek(SeekFrom::Start(offset));
        let mut bytes = Vec::new();
        let _ = f.take(256 * 1024).read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "; it wrote nothing there".to_string();
    }
    let tail = &lines[lines.len().saturating_sub(LOG_LINES_QUOTED)..];
    let mut out = String::from("; its last lines:");
    for line in tail {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_file_round_trips_privately() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        assert!(ServerFile::read(dir.path()).unwrap().is_none());
        let file = ServerFile {
            url: "http://127.0.0.1:1".into(),
            token: Some("t".into()),
            pid: Some(std::process::id()),
        };
        file.write(dir.path()).unwrap();
        assert_eq!(ServerFile::read(dir.path()).unwrap(), Some(file.clone()));
        let mode = std::fs::metadata(ServerFile::path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(file.pid_alive());
    }

    #[test]
    fn a_server_file_without_url_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(ServerFile::path(dir.path()), r#"{"url":"","pid":1}"#).unwrap();
        let err = ServerFile::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no url"), "{err}");
        std::fs::write(ServerFile::path(dir.path()), "not json").unwrap();
        assert!(ServerFile::read(dir.path()).is_err());
    }

    #[test]
    fn a_stale_server_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that ran and ended (reaped): nothing runs there now.
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        ServerFile {
            url: "http://127.0.0.1:9".into(),
            token: None,
            pid: Some(pid),
        }
        .write(dir.path())
        .unwrap();
        assert!(!pid_alive(pid));
        assert!(find(dir.path()).is_none());
    }

    #[test]
    fn a_live_pid_whose_url_does_not_answer_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        // This test's own pid is alive; nothing listens on a port just released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        ServerFile {
            url: format!("http://127.0.0.1:{port}"),
            token: None,
            pid: Some(std::process::id()),
        }
        .write(dir.path())
        .unwrap();
        assert!(find(dir.path()).is_none());
    }

    #[test]
    fn wait_exit_sees_a_reaped_child_go() {
        let mut child = Command::new("sleep").arg("0.2").spawn().unwrap();
        let pid = child.id();
        assert!(!wait_exit(pid, Duration::from_millis(1)));
        // Reaped by a thread of its own, as `find_or_start` does for the daemon.
        let reaper = std::thread::spawn(move || child.wait());
        assert!(wait_exit(pid, Duration::from_secs(10)));
        reaper.join().unwrap().unwrap();
    }

    #[test]
    fn the_log_quote_starts_at_the_offset_and_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("daemon.log");
        let mut text = String::from("an earlier run\n");
        let offset = text.len() as u64;
        for i in 0..20 {
            text.push_str(&format!("line {i}\n"));
        }
        std::fs::write(&log, &text).unwrap();
        let quote = quote_log(&log, offset);
        assert!(!quote.contains("earlier"), "{quote}");
        assert!(
            quote.contains("line 19") && quote.contains("line 8"),
            "{quote}"
        );
        assert!(!quote.lines().any(|l| l.trim() == "line 7"), "{quote}");
        assert_eq!(
            quote_log(&log, text.len() as u64),
            "; it wrote nothing there"
        );
    }
}
