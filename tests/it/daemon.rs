//! The daemon's life with the real binary: `daemon::find_or_start` starts `orchestra serve`
//! detached, finds it again, copes with a stale server.json and with two starts at once, and
//! `orchestra stop` ends it gracefully. Every daemon a test starts is stopped; a test that
//! fails half-way has its daemon's process group killed by [`Daemon`]'s drop.

use crate::support;

use orchestra_client::daemon::{self, Endpoint};
use orchestra_sys::process::pid_alive;
use orchestra_sys::server_file::ServerFile;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use support::{
    BIN, Events, Server, create_task, raw_request, session_pids, wait_task_status, wait_until,
};

/// A test's home and state directory, and a launcher that runs the built orchestra with the
/// test's environment (an empty home: no user rc files in the shells, no user config).
struct Place {
    tmp: tempfile::TempDir,
    exe: PathBuf,
}

impl Place {
    fn new() -> Place {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let exe = tmp.path().join("orchestra-in-test");
        let script = format!(
            "#!/bin/sh\n\
             unset ORCHESTRA_URL ORCHESTRA_STATE_DIR ORCHESTRA_CONFIG\n\
             export HOME='{home}' XDG_CONFIG_HOME='{home}/config' SHELL=/bin/bash\n\
             export ORCHESTRA_DEFAULT_PROVIDER=shell\n\
             exec '{BIN}' \"$@\"\n",
            home = home.display()
        );
        // Written by a child process, so no fork of this (threaded) test process can hold it
        // open for writing when it is executed (ETXTBSY).
        let mut writer = Command::new("sh")
            .args(["-c", "cat > \"$1\" && chmod 700 \"$1\"", "sh"])
            .arg(&exe)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        writer
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        assert!(writer.wait().unwrap().success());
        Place { tmp, exe }
    }

    fn state(&self) -> PathBuf {
        self.tmp.path().join("state")
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn find_or_start(&self, args: &[&str]) -> anyhow::Result<(Endpoint, bool)> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        daemon::find_or_start_with(&self.exe, &self.state(), &args, None)
    }

    /// Starts (or finds) the daemon; the guard ends it if the test does not.
    fn start(&self, args: &[&str]) -> (Endpoint, bool, Daemon) {
        let (endpoint, started) = self.find_or_start(args).unwrap();
        let pid = server_pid(&self.state());
        (endpoint, started, Daemon(pid))
    }

    /// `orchestra ARGS…` as a user would type it, with this place's environment.
    fn cli(&self, args: &[&str]) -> Output {
        Command::new(&self.exe)
            .args(args)
            .env("XDG_DATA_HOME", self.home().join("data"))
            .env_remove("ORCHESTRA_TOKEN")
            .env_remove("ORCHESTRA_SESSION_ID")
            .env_remove("ORCHESTRA_TASK_ID")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn stop(&self) -> Output {
        self.cli(&["stop", "--state-dir", self.state().to_str().unwrap()])
    }
}

/// A daemon this test started: SIGTERM then SIGKILL to its process group on drop if it still
/// runs (the test failed before it stopped it). Its guard then ends its sessions.
struct Daemon(u32);

impl Drop for Daemon {
    fn drop(&mut self) {
        let group = -(self.0 as i32);
        if !pid_alive(self.0) {
            return;
        }
        // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
        unsafe { libc::kill(group, libc::SIGTERM) };
        if !wait_until(Duration::from_secs(10), || !pid_alive(self.0)) {
            // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
            unsafe { libc::kill(group, libc::SIGKILL) };
            wait_until(Duration::from_secs(5), || !pid_alive(self.0));
        }
    }
}

fn server_pid(state: &Path) -> u32 {
    ServerFile::read(state)
        .unwrap()
        .and_then(|f| f.pid)
        .expect("server.json names a pid")
}

/// A loopback URL where nothing listens (a port just released).
fn quiet_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// Writes the server.json of an orchestra that was killed (its pid has ended, nothing
/// listens at its URL) into `state`; returns that pid.
fn left_over_server_file(state: &Path) -> u32 {
    std::fs::create_dir_all(state).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    ServerFile {
        url: quiet_url(),
        token: None,
        pid: Some(dead),
    }
    .write(state)
    .unwrap();
    dead
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// Fields of /proc/PID/stat after the command name: state, ppid, pgrp, session, tty_nr, …
fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    after.split_whitespace().map(str::to_string).collect()
}

/// Live processes whose command line names this state directory (orchestra serve).
fn serving(state: &Path) -> Vec<u32> {
    let needle = state.to_str().unwrap().as_bytes().to_vec();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == needle.as_slice())
            && pid_alive(pid)
        {
            out.push(pid);
        }
    }
    out
}

#[test]
fn find_or_start_starts_a_detached_daemon_then_finds_it_and_stop_ends_it() {
    let place = Place::new();
    let state = place.state();
    assert!(daemon::find(&state).is_none());
    let (endpoint, started, _daemon) = place.start(&[]);
    assert!(started);
    assert!(
        endpoint.url.starts_with("http://127.0.0.1:"),
        "{endpoint:?}"
    );
    // The state directory's own token, made at this first start; not in its arguments.
    let token = orchestra_sys::credentials::read_token(&state).unwrap();
    assert!(token.is_some());
    assert_eq!(endpoint.token, token);
    let pid = server_pid(&state);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains(token.as_deref().unwrap()));

    // Its own session and process group, no controlling terminal, stdin from /dev/null,
    // output into the daemon log (private).
    let fields = stat_fields(pid);
    assert_eq!(fields[2], pid.to_string(), "process group: {fields:?}");
    assert_eq!(fields[3], pid.to_string(), "session: {fields:?}");
    assert_eq!(fields[4], "0", "controlling terminal: {fields:?}");
    let fd = |n: u32| std::fs::read_link(format!("/proc/{pid}/fd/{n}")).unwrap();
    let log = state.join("logs/daemon.log");
    assert_eq!(fd(0), Path::new("/dev/null"));
    assert_eq!(fd(1), log);
    assert_eq!(fd(2), log);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let listening = format!("orchestra listening on {}", endpoint.url);
    assert!(wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains(&listening))
    }));
    // The state directory it made is private from the start: nothing had to be tightened.
    let mode = std::fs::metadata(&state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(!said.contains("private"), "{said}");

    // Found again, not started again.
    assert_eq!(daemon::find(&state), Some(endpoint.clone()));
    let (again, started_again) = place.find_or_start(&[]).unwrap();
    assert_eq!(again, endpoint);
    assert!(!started_again);
    assert_eq!(server_pid(&state), pid);
    assert_eq!(serving(&state), vec![pid]);

    let out = ok(&place.stop());
    assert_eq!(
        out,
        format!("stopped orchestra (pid {pid}); ended 0 agents\n")
    );
    assert!(!pid_alive(pid), "stop returns once the daemon has exited");
    assert!(!ServerFile::path(&state).exists());
    assert!(daemon::find(&state).is_none());
}

#[test]
fn a_token_given_to_the_daemon_it_starts_goes_through_its_environment() {
    let place = Place::new();
    let token = "given-by-the-user-0123456789";
    let (endpoint, started) =
        daemon::find_or_start_with(&place.exe, &place.state(), &[], Some(token)).unwrap();
    let _daemon = Daemon(server_pid(&place.state()));
    assert!(started);
    assert_eq!(endpoint.token.as_deref(), Some(token));
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmdline).contains(token),
                "{:?} shows the token in its arguments",
                entry.path()
            );
        }
    }
    ok(&place.stop());
}

#[test]
fn a_stale_server_file_is_ignored_and_replaced() {
    let place = Place::new();
    let state = place.state();
    // An orchestra that was killed: its pid ended, nothing listens at its URL.
    let dead = left_over_server_file(&state);
    assert!(daemon::find(&state).is_none());

    let (endpoint, started, _daemon) = place.start(&[]);
    assert!(started);
    let file = ServerFile::read(&state).unwrap().unwrap();
    assert_ne!(file.pid, Some(dead));
    assert_eq!(file.url, endpoint.url);
    assert!(file.pid_alive());

    // By a URL alone (as for another machine's orchestra): gone once its URL stops answering.
    let token = endpoint.token.clone().expect("a token");
    let out = ok(&place.cli(&["stop", "--url", &endpoint.url, "--token", &token]));
    assert_eq!(
        out,
        format!("stopped orchestra at {}; ended 0 agents\n", endpoint.url)
    );
    let pid = file.pid.unwrap();
    assert!(orchestra_sys::process::wait_exit(
        pid,
        Duration::from_secs(20)
    ));
}

#[test]
fn two_starts_at_once_end_with_one_daemon() {
    let place = Place::new();
    let barrier = std::sync::Barrier::new(2);
    let (a, b) = std::thread::scope(|s| {
        let go = || {
            barrier.wait();
            place.find_or_start(&[])
        };
        let a = s.spawn(go);
        let b = s.spawn(go);
        (a.join().unwrap(), b.join().unwrap())
    });
    // Whatever happened, the daemon that runs is stopped at the end.
    let _daemon = ServerFile::read(&place.state())
        .ok()
        .flatten()
        .and_then(|f| f.pid)
        .map(Daemon);
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.0, b.0, "both attach to the same orchestra");
    assert_eq!(
        [a.1, b.1].iter().filter(|s| **s).count(),
        1,
        "exactly one of them started it: {a:?} {b:?}"
    );
    let pid = server_pid(&place.state());
    // The loser's daemon gave up on the locked state directory and exited.
    assert!(
        wait_until(Duration::from_secs(10), || serving(&place.state())
            == vec![pid]),
        "{:?}",
        serving(&place.state())
    );
    ok(&place.stop());
}

#[test]
fn a_daemon_that_cannot_start_is_reported_with_its_log() {
    let place = Place::new();
    // Refused at start-up: a non-loopback address without authentication.
    let err = place
        .find_or_start(&["--addr", "0.0.0.0:0", "--insecure-no-auth"])
        .unwrap_err()
        .to_string();
    let log = place.state().join("logs/daemon.log");
    assert!(err.contains(log.to_str().unwrap()), "{err}");
    assert!(err.contains("exited"), "{err}");
    assert!(err.contains("refusing to listen on 0.0.0.0:0"), "{err}");
    assert!(daemon::find(&place.state()).is_none());
    assert!(serving(&place.state()).is_empty());
}

#[test]
fn stop_ends_the_agents_and_their_tasks_are_cancelled_by_the_user() {
    let place = Place::new();
    let state = place.state();
    let (endpoint, _, _daemon) = place.start(&["--grace", "1"]);
    let pid = server_pid(&state);
    let s = Server::attach(&endpoint.url, &state, endpoint.token.as_deref());
    let task = create_task(
        &s,
        "sleeper",
        json!({"providerId": "shell", "description": "sleep 600"}),
    );
    let id = task["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let running = wait_task_status(&s, &id, "running");
    let sid = running["metadata"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut agent = Vec::new();
    assert!(wait_until(Duration::from_secs(10), || {
        agent = session_pids(&sid);
        !agent.is_empty()
    }));
    // The guard: a child of the daemon that is not a session's.
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let children: Vec<u32> = children
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    assert!(!children.is_empty());

    // An attached client (an event stream) does not hold the stop up.
    let mut events = Events::open(&s);

    let out = ok(&place.stop());
    assert_eq!(
        out,
        format!("stopped orchestra (pid {pid}); ended 1 agent\n")
    );
    // What the stop did (tasks cancelled, sessions exited) may still be in flight; then the
    // stream ends with orchestra (a stream that outlived it would time out here instead).
    let started = std::time::Instant::now();
    let mut seen = Vec::new();
    while let Some((name, _)) = events.next() {
        seen.push(name);
    }
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the event stream did not end with orchestra; it sent {seen:?}"
    );
    assert!(!pid_alive(pid));
    let pids: Vec<String> = agent.iter().map(u32::to_string).collect();
    let ps = Command::new("ps")
        .args(["-o", "pid=,args=", "-p", &pids.join(",")])
        .output()
        .unwrap();
    assert!(
        text(&ps.stdout).trim().is_empty(),
        "the agent's processes are gone: {}",
        text(&ps.stdout)
    );
    assert!(
        wait_until(Duration::from_secs(10), || children
            .iter()
            .all(|c| !pid_alive(*c))),
        "the guard and the sessions are gone"
    );
    assert!(!ServerFile::path(&state).exists());

    // Started again, it remembers why the task ended.
    let (endpoint, started, _again) = place.start(&[]);
    assert!(started);
    let s = Server::attach(&endpoint.url, &state, endpoint.token.as_deref());
    let m = s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "cancelled", "{m}");
    assert_eq!(
        m["error"], "cancelled: orchestra was stopped by the user",
        "{m}"
    );
    ok(&place.stop());
}

#[test]
fn stop_with_nothing_running_says_so_with_exit_3() {
    let place = Place::new();
    let o = place.stop();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("orchestra: no orchestra is running on ")
            && err.contains("nothing to stop"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // A server.json whose orchestra was killed.
    let dead = left_over_server_file(&place.state());
    let o = place.stop();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("left over from pid {dead}")) && err.contains("nothing to stop"),
        "{err}"
    );

    // A URL where nothing listens.
    let o = place.cli(&["stop", "--url", &quiet_url()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot reach orchestra"));
}

#[test]
fn the_stop_route_follows_the_api_rules() {
    let place = Place::new();
    let state = place.state();
    // On every interface (so with a token), it is found on loopback.
    let (endpoint, _, _daemon) = place.start(&["--addr", "0.0.0.0:0", "--token", "sekrit"]);
    assert_eq!(endpoint.token.as_deref(), Some("sekrit"));
    assert!(
        endpoint.url.starts_with("http://127.0.0.1:"),
        "{endpoint:?}"
    );
    assert!(
        !place.find_or_start(&[]).unwrap().1,
        "found, not started again"
    );
    let pid = server_pid(&state);
    let addr = endpoint.url.trim_start_matches("http://");

    // No token, or a page of a foreign site: refused, and orchestra goes on.
    let r = raw_request(addr, "POST", "/api/daemon/stop", None, &[]);
    assert_eq!(r.status, 401, "{}", r.body);
    let r = raw_request(
        addr,
        "POST",
        "/api/daemon/stop",
        None,
        &[
            ("Authorization", "Bearer sekrit"),
            ("Origin", "http://evil.example"),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.body);
    let r = raw_request(
        addr,
        "GET",
        "/api/daemon/stop",
        None,
        &[("Authorization", "Bearer sekrit")],
    );
    assert_eq!(r.status, 405, "{}", r.body);
    assert!(pid_alive(pid));
    assert!(daemon::find(&state).is_some());

    // By URL (the token comes from the matching server.json): the answer, then the exit.
    let o = place.cli(&[
        "stop",
        "--json",
        "--url",
        &endpoint.url,
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    let answer: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["ended"], 0, "{answer}");
    assert_eq!(answer["pid"], pid, "{answer}");
    assert!(!pid_alive(pid));
    assert!(!ServerFile::path(&state).exists());
}

#[test]
fn a_build_for_another_operating_system_stops_with_one_sentence() {
    // The build script, built and run as cargo would for a macOS target.
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sys/build.rs");
    let exe = dir.path().join("build-script");
    let built = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--edition", "2024", "-o"])
        .arg(&exe)
        .arg(&script)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    for (os, ok) in [("macos", false), ("windows", false), ("linux", true)] {
        let out = Command::new(&exe)
            .env("CARGO_CFG_TARGET_OS", os)
            .output()
            .unwrap();
        assert_eq!(out.status.success(), ok, "{os}");
        if !ok {
            let said = text(&out.stdout);
            let error: Vec<&str> = said
                .lines()
                .filter(|l| l.starts_with("cargo::error="))
                .collect();
            assert_eq!(error.len(), 1, "{said}");
            assert!(
                error[0].contains("Linux only") && error[0].contains(os),
                "{said}"
            );
        }
    }
}
