//! Finding the orchestra of a state directory, and starting one in the background when none
//! runs: what `orchestra` (the TUI) does before it attaches.
//!
//! A running orchestra announces itself in `<state>/server.json` (written by [`orchestra_daemon::boot`]).
//! That file can outlive its writer (SIGKILL, a crash, a reboot), so it is trusted only when
//! its pid is alive and its URL answers. A new daemon is `orchestra serve` in a session of its
//! own (no controlling terminal: closing the terminal that started it never reaches it), with
//! stdin from /dev/null and its output appended to `<state>/logs/daemon.log`.
//!
//! Everything here blocks (short HTTP calls, polling): call it before the async runtime, or
//! from a blocking context.

use anyhow::{Context, Result, bail};
use orchestra_sys::process::{pid_alive, poll_until};
use orchestra_sys::server_file::ServerFile;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The daemon's stdout and stderr, in the state directory's `logs/`.
pub const DAEMON_LOG: &str = "daemon.log";
/// How long a new daemon gets to start listening. It is waited out only when the daemon
/// neither listens nor exits; a debug build on a loaded machine has taken over 2 s to get
/// as far as refusing its flags.
pub const START_BUDGET: Duration = Duration::from_secs(10);
/// How many lines of the daemon's log an error quotes.
const LOG_LINES_QUOTED: usize = 12;

/// Where an orchestra answers, and the token it wants (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub token: Option<String>,
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
            && let Some(status) = ended(c, started.pid)
        {
            // It gave up. Most often another orchestra holds the state directory, started a
            // moment ago by someone else: keep looking for that one until the deadline.
            exit = Some(status);
            child = None;
        }
        // Gave up with nobody else there (a bad flag, a bad config): no reason to wait.
        let alone = exit.is_some() && !lock_holder(&state_dir).is_some_and(pid_alive);
        if alone || Instant::now() >= deadline {
            // One last look: it may have ended on its own a moment ago.
            if exit.is_none()
                && let Some(c) = child.as_mut()
                && let Some(status) = ended(c, started.pid)
            {
                exit = Some(status);
                child = None;
            }
            if let Some(c) = child.take() {
                // Not listening in time: do not leave a half-started daemon behind.
                end_child(c);
            }
            let how = match exit {
                Some(Some(status)) => format!("it exited ({status})"),
                Some(None) => "it exited".to_string(),
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

/// Whether the daemon just spawned has ended, with its status when this process could
/// still collect it. Another part of the same process may have reaped it first (a reaper of
/// orphans waits on children in other sessions, as the daemon is): then it is gone all the
/// same, with no status to tell.
fn ended(child: &mut std::process::Child, pid: u32) -> Option<Option<std::process::ExitStatus>> {
    match child.try_wait() {
        Ok(Some(status)) => Some(Some(status)),
        Ok(None) => None,
        Err(_) => (!pid_alive(pid)).then_some(None),
    }
}

/// The pid in the state directory's lock file: the orchestra that holds it, or held it last.
fn lock_holder(state_dir: &Path) -> Option<u32> {
    std::fs::read_to_string(state_dir.join(orchestra_sys::state_dir::LOCK_FILE))
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
        orchestra_sys::private::create_private_dir(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let log = logs.join(DAEMON_LOG);
    let out = orchestra_sys::private::private_file()
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
        .env_remove(orchestra_sys::process::INSTANCE_VAR)
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
