//! The state directory is private: 0700, its files 0600, a wide-open one tightened at
//! start-up with a notice; while files the agents create in the user's directory keep the
//! usual modes (orchestra does not change the umask its sessions inherit).

use crate::support;

use serde_json::json;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use support::*;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Every path under `root` (itself included), depth first, but for the empty `home` the test
/// harness gives the sessions there (not orchestra's).
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    if root.is_dir() {
        for e in std::fs::read_dir(root).expect("read_dir").flatten() {
            if e.file_name() != "home" {
                out.extend(walk(&e.path()));
            }
        }
    }
    out
}

/// Serves on `<root>/state` and runs an exec task that writes `made` in `<root>/work`, to its
/// end, so the state directory holds a database with its log, a transcript and the server's
/// files. Returns the server, the state directory and the work directory.
fn serve_a_task(root: &Path) -> (Server, PathBuf, PathBuf) {
    let state = root.join("state");
    let work = root.join("work");
    std::fs::create_dir(&work).expect("work dir");
    let s = Server::start_in(&state, &[]);
    run_a_task(&s, &work);
    (s, state, work)
}

fn run_a_task(s: &Server, work: &Path) {
    let task = create_task(
        s,
        "touch",
        json!({"providerId": "exec", "description": "echo hi > made", "workingDirectory": work}),
    );
    let id = task["id"].as_str().expect("id");
    let r = s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"));
    assert!(r.status < 300, "{}", r.body);
    wait_task_status(s, id, "completed");
}

fn assert_private(state: &Path) {
    let paths = walk(state);
    for name in [
        "orchestra.db",
        "orchestra.db-wal",
        "orchestra.db-shm",
        "orchestra.lock",
        "server.json",
        "logs/orchestra.log",
        "transcripts",
    ] {
        assert!(
            state.join(name).exists(),
            "{name} missing; there is {paths:?}"
        );
    }
    for p in paths {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&p), want, "{} is {:o}", p.display(), mode(&p));
    }
}

#[test]
fn the_state_directory_is_private_and_the_users_files_are_not_affected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mut s, state, work) = serve_a_task(tmp.path());
    assert!(
        std::fs::read_dir(state.join("transcripts"))
            .expect("transcripts")
            .count()
            > 0
    );
    assert_private(&state);

    // The agent's file got the mode this process's umask gives, not a private one.
    let mine = tmp.path().join("mine");
    std::fs::write(&mine, b"").expect("write");
    assert_eq!(mode(&work.join("made")), mode(&mine));
    s.stop();
}

#[test]
fn a_wide_open_state_directory_is_tightened_with_a_notice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (mut s, state, _) = serve_a_task(tmp.path());
    s.stop();
    // As an older orchestra (or a careless copy) left it.
    for p in walk(&state) {
        let wide = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(wide)).expect("chmod");
    }
    assert_eq!(mode(&state.join("orchestra.db")), 0o644);

    let mut s = Server::start_in(&state, &[]);
    let mut stderr = s
        .child
        .as_mut()
        .and_then(|c| c.stderr.take())
        .expect("stderr");
    assert_private(&state);
    s.stop();
    let mut err = String::new();
    stderr.read_to_string(&mut err).expect("stderr");
    assert!(
        err.contains("private") && err.contains(&state.display().to_string()),
        "no notice on stderr: {err:?}"
    );
    let log = std::fs::read_to_string(state.join("logs/orchestra.log")).expect("log");
    assert!(
        log.contains("WARN") && log.contains("private"),
        "no warning in the log: {log}"
    );
}
