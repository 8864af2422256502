//! Faults around the daemon, with real parts: the real `orchestra serve`, real SQLite files,
//! real file systems (a small tmpfs for a full or read-only disk; mounting needs root, as in
//! CI, and each such test says so and skips where it cannot mount), real sockets.

use crate::support;

use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// What a `orchestra serve` that was expected to refuse did.
struct Refusal {
    code: Option<i32>,
    stderr: String,
}

/// Runs `orchestra serve` on `state` expecting it to refuse to start; panics if it listens.
fn serve_refuses(state: &Path, args: &[&str]) -> Refusal {
    let home = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(BIN)
        .args(["serve", "--state-dir"])
        .arg(state)
        .args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("no-config"))
        .env("ORCHESTRA_DEFAULT_PROVIDER", "shell")
        .env_remove("ORCHESTRA_TOKEN")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn orchestra serve");
    let mut stdout = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut stdout);
    if stdout.starts_with("orchestra listening on") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("orchestra started where it should have refused: {stdout}");
    }
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("orchestra neither listened nor exited; stderr: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!stderr.contains("panicked"), "it panicked: {stderr}");
    Refusal { code, stderr }
}

/// A tmpfs mounted on a fresh directory, unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    /// `None` (with the reason on stderr) where this sandbox cannot mount.
    fn tmpfs(size: &str, test: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Mount { dir }),
            Ok(o) => {
                eprintln!(
                    "SKIPPED {test}: cannot mount a tmpfs here (needs root): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED {test}: cannot run mount: {e}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, opts: &str) {
        let o = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(self.path())
            .output()
            .expect("mount runs");
        assert!(
            o.status.success(),
            "remount {opts}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Still busy (a process on its way out): detached now, gone once it is free.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// Fills the file system holding `dir` with `dir/filler` until it has no room left.
fn fill_disk(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).expect("filler");
    let chunk = vec![0x5a_u8; 64 * 1024];
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    // The last partial blocks too.
    while f.write(&[0x5a]).is_ok_and(|n| n == 1) {}
    path
}

fn task_ids(s: &Server) -> Vec<String> {
    let r = s.get("/api/coding-agents/tasks");
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn a_full_disk_refuses_writes_with_507_loses_nothing_acknowledged_and_recovers() {
    let Some(mount) = Mount::tmpfs("6m", "disk full") else {
        return;
    };
    let state = mount.path().join("state");
    let mut s = Server::start_in(&state, &[]);
    let mut acknowledged: Vec<String> = (0..3)
        .map(|i| {
            create_task(&s, &format!("before {i}"), json!({}))["id"]
                .as_str()
                .unwrap()
                .into()
        })
        .collect();

    let talker = spawn_session(
        &s,
        json!({"providerId": "exec", "task": "while :; do cat >/dev/null; done"}),
    );
    let filler = fill_disk(mount.path());
    // Big descriptions: the database needs new pages soon, whatever room SQLite kept.
    let description = "x".repeat(64 * 1024);
    let mut refused = None;
    for i in 0..400 {
        let r = s.post(
            "/api/coding-agents/tasks",
            json!({"name": format!("while full {i}"), "description": description}),
        );
        match r.status {
            201 => acknowledged.push(r.json()["task"]["id"].as_str().unwrap().into()),
            _ => {
                refused = Some(r);
                break;
            }
        }
    }
    let refused = refused.expect("a write was refused once the disk was full");
    assert_eq!(refused.status, 507, "{}", refused.body);
    let error = refused.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("disk") && error.contains("full"), "{error}");

    // Reads go on; nothing acknowledged went, nothing refused came.
    let mut listed = task_ids(&s);
    listed.sort();
    let mut want = acknowledged.clone();
    want.sort();
    assert_eq!(listed, want);
    // A change to an existing task is refused the same way, and the task is as it was.
    let first = &acknowledged[0];
    let r = s.post(
        &format!("/api/coding-agents/tasks/{first}/output"),
        json!({"output": description}),
    );
    if r.status != 200 {
        assert_eq!(r.status, 507, "{}", r.body);
        let task = s.get(&format!("/api/coding-agents/tasks/{first}")).json();
        assert_eq!(task["task"]["metadata"]["output"], json!([]), "{task}");
    }

    // Starting agents: a small record may still fit (then it is kept like any acknowledged
    // write); otherwise it is refused the same way, never a server failure.
    let mut sessions = Vec::new();
    let r = s.post(
        "/api/coding-agents/sessions",
        json!({"providerId": "exec", "task": "echo hi"}),
    );
    match r.status {
        201 => sessions.push(r.json()["sessionId"].as_str().unwrap().to_string()),
        _ => assert_eq!(r.status, 507, "{}", r.body),
    }
    let r = s.post_empty(&format!(
        "/api/coding-agents/tasks/{}/start",
        acknowledged[1]
    ));
    assert!(matches!(r.status, 200 | 507), "{} {}", r.status, r.body);
    // A message to an agent: kept (then typed), or refused with nothing typed.
    let mut messages = Vec::new();
    let r = s.post(
        &format!("/api/coding-agents/sessions/{talker}/messages"),
        json!({"text": "said while the disk was full"}),
    );
    match r.status {
        201 => messages.push(r.json()["message"]["id"].as_str().unwrap().to_string()),
        _ => assert_eq!(r.status, 507, "{}", r.body),
    }

    // Room again: writes succeed at once, without a restart.
    std::fs::remove_file(&filler).expect("free the disk");
    let after = create_task(&s, "after", json!({}));
    acknowledged.push(after["id"].as_str().unwrap().into());

    // Everything acknowledged is on disk.
    s.stop();
    let s = Server::start_in(&state, &[]);
    let mut listed = task_ids(&s);
    listed.sort();
    acknowledged.sort();
    assert_eq!(listed, acknowledged);
    for id in sessions {
        let r = s.get(&format!("/api/coding-agents/sessions/{id}"));
        assert_eq!(r.status, 200, "session {id} was acknowledged: {}", r.body);
    }
    let kept = s
        .get(&format!("/api/coding-agents/sessions/{talker}/messages"))
        .json();
    for id in messages {
        assert!(
            kept["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["id"] == json!(id))),
            "message {id} was acknowledged: {kept}"
        );
    }
    drop(s);
}

#[test]
fn a_full_disk_at_start_up_is_said_to_be_full_and_the_database_is_not_blamed() {
    let Some(mount) = Mount::tmpfs("2m", "disk full at start-up") else {
        return;
    };
    let state = mount.path().join("state");
    let mut s = Server::start_in(&state, &[]);
    create_task(&s, "kept", json!({}));
    assert_eq!(s.stop(), Some(0));
    let db = state.join("orchestra.db");
    let before = std::fs::read(&db).expect("db");
    let filler = fill_disk(mount.path());
    let refusal = serve_refuses(&state, &["--addr", "127.0.0.1:0"]);
    assert_eq!(refusal.code, Some(1), "{}", refusal.stderr);
    assert!(refusal.stderr.contains("full"), "{}", refusal.stderr);
    assert!(
        !refusal.stderr.contains("cannot be read") && !refusal.stderr.contains("move it away"),
        "a sound database is not to be moved away: {}",
        refusal.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // A new state directory on the full disk: the same sentence.
    let refusal = serve_refuses(&mount.path().join("new"), &["--addr", "127.0.0.1:0"]);
    assert!(refusal.stderr.contains("full"), "{}", refusal.stderr);
    // With room again it starts, with what it had.
    std::fs::remove_file(filler).unwrap();
    let s = Server::start_in(&state, &[]);
    assert_eq!(task_ids(&s).len(), 1);
}

#[test]
fn a_read_only_state_directory_is_refused_at_start_up() {
    let Some(mount) = Mount::tmpfs("4m", "read-only state directory") else {
        return;
    };
    let state = mount.path().join("state");
    // An orchestra ran here before; now the file system is read-only.
    let mut s = Server::start_in(&state, &[]);
    create_task(&s, "kept", json!({}));
    assert_eq!(s.stop(), Some(0));
    let before = std::fs::read(state.join("orchestra.db")).expect("db");
    mount.remount("ro");
    let refusal = serve_refuses(&state, &["--addr", "127.0.0.1:0"]);
    mount.remount("rw");
    assert_ne!(refusal.code, Some(0), "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains("read-only file system")
            && refusal.stderr.contains(state.to_str().unwrap()),
        "{}",
        refusal.stderr
    );
    assert_eq!(
        refusal.stderr.matches("os error").count(),
        0,
        "{}",
        refusal.stderr
    );
    assert_eq!(std::fs::read(state.join("orchestra.db")).unwrap(), before);
}

#[test]
fn a_damaged_database_is_refused_naming_the_file_and_kept_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("orchestra.db");
    // Not SQLite at all.
    let garbage: Vec<u8> = (0..16 * 1024u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let refusal = serve_refuses(dir.path(), &["--addr", "127.0.0.1:0"]);
    assert_eq!(refusal.code, Some(1), "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains(db.to_str().unwrap())
            && refusal.stderr.contains("not an SQLite database")
            && refusal.stderr.contains("left it as it is"),
        "{}",
        refusal.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), garbage);

    // SQLite's header, then damage: what SQLite itself cannot read.
    let mut damaged = b"SQLite format 3\0".to_vec();
    damaged.extend_from_slice(&garbage);
    std::fs::write(&db, &damaged).unwrap();
    let refusal = serve_refuses(dir.path(), &["--addr", "127.0.0.1:0"]);
    assert_eq!(refusal.code, Some(1), "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains(db.to_str().unwrap())
            && refusal.stderr.contains("left it as it is"),
        "{}",
        refusal.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), damaged);
    assert!(!dir.path().join("orchestra.db-wal").exists());
}

#[test]
fn another_programs_sqlite_database_is_refused_and_kept_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("orchestra.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);
             INSERT INTO moz_places (url) VALUES ('https://example.com');",
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let refusal = serve_refuses(dir.path(), &["--addr", "127.0.0.1:0"]);
    assert_eq!(refusal.code, Some(1), "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains(db.to_str().unwrap())
            && refusal.stderr.contains("another program's database")
            && refusal.stderr.contains("moz_places"),
        "{}",
        refusal.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file is untouched");
    assert!(!dir.path().join("orchestra.db-wal").exists());
}

#[test]
fn a_taken_port_is_refused_with_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let refusal = serve_refuses(dir.path(), &["--addr", &addr]);
    assert_eq!(refusal.code, Some(1), "{}", refusal.stderr);
    let line = refusal.stderr.trim();
    assert!(
        line.contains(&format!("cannot listen on {addr}")) && line.contains("already in use"),
        "{line}"
    );
    // Said once, on one line.
    assert_eq!(line.lines().count(), 1, "{line}");
    assert_eq!(line.matches("in use").count(), 1, "{line}");
    // Nothing announces an orchestra that is not there.
    assert!(!dir.path().join("server.json").exists());
}

/// Runs the CLI on `state` (no --url): its exit code and output.
fn cli(state: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("no-config"))
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .output()
        .expect("cli runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_stale_server_file_does_not_send_clients_to_whatever_answers_there_and_is_replaced() {
    // Another orchestra (another state directory) listens on the URL a dead one left behind.
    let other = Server::start();
    create_task(&other, "not yours", json!({}));
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    std::fs::write(
        state.join("server.json"),
        json!({"url": other.url, "pid": dead}).to_string(),
    )
    .unwrap();

    let (code, out, err) = cli(&state, &["task", "list"]);
    assert_ne!(code, Some(0), "the client was sent elsewhere: {out}");
    assert!(!out.contains("not yours"), "{out}");
    assert!(
        err.contains("left over") && err.contains(&dead.to_string()),
        "{err}"
    );

    // A new orchestra on the state directory takes over and announces itself.
    let mine = Server::start_in(&state, &[]);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("server.json")).unwrap()).unwrap();
    assert_eq!(file["url"], json!(mine.url));
    assert_eq!(file["pid"], json!(mine.pid()));
    let (code, out, err) = cli(&state, &["task", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("not yours"), "{out}");
}

#[test]
fn an_agent_writing_invalid_utf8_and_megabyte_lines_is_read_visibly_and_within_bounds() {
    let s = Server::start();
    // Invalid bytes, a 1 MiB line, a character cut by a flush, 2 more megabyte lines.
    let program = r#"python3 -c "
import sys
w = sys.stdout.buffer
w.write(b'bad \xff\xfe bytes\n'); w.flush()
w.write(b'x' * 1048576 + b'\n'); w.flush()
w.write(b'cut \xe7\x95'); w.flush(); w.write(b'\x8c here\n')
for i in range(2):
    w.write(b'y' * 1048576 + b'\n')
w.write(b'done\n')
""#;
    let task = create_task(
        &s,
        "flood",
        json!({"providerId": "exec", "description": program}),
    );
    let id = task["id"].as_str().unwrap();
    let r = s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    // Waited for here, not with `wait_task_status`: a failure must not print megabytes.
    let mut done = json!(null);
    let finished = wait_until(Duration::from_secs(60), || {
        done = s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"].clone();
        done["metadata"]["status"] == "completed"
    });
    assert!(
        finished,
        "the task is {} with {} output lines",
        done["metadata"]["status"],
        done["metadata"]["output"].as_array().map_or(0, Vec::len)
    );
    let output: Vec<String> = done["metadata"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    // Bad bytes are shown as such, not dropped and not fatal.
    assert!(
        output.iter().any(|l| l == "bad \u{fffd}\u{fffd} bytes"),
        "{:?}",
        output
            .first()
            .map(|l| l.chars().take(80).collect::<String>())
    );
    assert!(
        output.iter().any(|l| l == "cut 界 here"),
        "a character cut by a flush is whole"
    );
    assert_eq!(output.last().map(String::as_str), Some("done"));
    // Long lines are kept in bounded pieces, and only so many of them.
    let cap = orchestra_daemon::session::DEFAULT_MAX_LINE;
    assert!(output.iter().all(|l| l.chars().count() <= cap));
    assert!(output.len() <= orchestra_proto::task::OUTPUT_LINES_KEPT);
    let x: usize = output
        .iter()
        .filter(|l| l.starts_with('x'))
        .map(|l| l.len())
        .sum();
    assert_eq!(x, 1_048_576, "the megabyte line is all there, in pieces");
    // orchestra is well and its memory bounded (a generous bound: 3 MiB went through).
    assert_eq!(s.get("/api/status").status, 200);
    let rss = rss_kib(s.pid());
    assert!(
        rss < 400 * 1024,
        "orchestra holds {rss} KiB after the flood"
    );
    let session = done["metadata"]["sessionId"].as_str().unwrap();
    let peek = s.get(&format!(
        "/api/coding-agents/sessions/{session}/peek?lines=5"
    ));
    assert_eq!(peek.status, 200, "{}", peek.body);
}

/// The task's output lines.
fn output_lines(s: &Server, id: &str) -> Vec<String> {
    s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"]["metadata"]["output"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_daemon_stopped_for_30_s_and_continued_keeps_its_sessions_clients_and_output() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let enough = dir.path().join("enough");
    // An agent that keeps printing, five lines a second, until told to end.
    let program = format!(
        "i=0; while [ ! -e '{}' ]; do i=$((i+1)); echo tick$i; sleep 0.2; done; echo end",
        enough.display()
    );
    let task = create_task(
        &s,
        "ticking",
        json!({"providerId": "exec", "description": program}),
    );
    let id = task["id"].as_str().unwrap().to_string();
    let mut events = Events::open(&s);
    assert_eq!(
        s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"))
            .status,
        200
    );
    assert!(wait_until(Duration::from_secs(20), || output_lines(
        &s, &id
    )
    .len()
        >= 3));
    let session =
        s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"]["metadata"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
    let leader = s
        .get(&format!("/api/coding-agents/sessions/{session}"))
        .json()["session"]["pid"]
        .as_u64()
        .unwrap() as u32;

    let pid = s.pid() as i32;
    // SAFETY: signals to the orchestra this test started (still its child, not reaped).
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    assert!(wait_until(Duration::from_secs(5), || process_state(
        s.pid()
    ) == Some('T')));
    // A client asking meanwhile waits; the agent goes on working.
    let addr = s.addr.clone();
    let auth = s.auth();
    let waiting = std::thread::spawn(move || {
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        raw_request(&addr, "GET", "/api/coding-agents/sessions", None, &headers).status
    });
    std::thread::sleep(Duration::from_secs(30));
    assert!(
        process_state(leader).is_some_and(|st| st != 'Z'),
        "the agent ended"
    );
    // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
    unsafe { libc::kill(pid, libc::SIGCONT) };

    assert_eq!(
        waiting.join().unwrap(),
        200,
        "the waiting client got its answer"
    );
    // The session lives on; what it printed during the stop arrives, in order, none lost.
    let info = s
        .get(&format!("/api/coding-agents/sessions/{session}"))
        .json();
    assert_eq!(info["session"]["ended"], json!(false), "{info}");
    assert!(wait_until(Duration::from_secs(20), || output_lines(
        &s, &id
    )
    .len()
        >= 160));
    std::fs::write(&enough, b"").unwrap();
    wait_task_status(&s, &id, "completed");
    let lines = output_lines(&s, &id);
    let ticks: Vec<&String> = lines.iter().filter(|l| l.starts_with("tick")).collect();
    assert!(ticks.len() >= 150, "{} ticks", ticks.len());
    for (n, line) in ticks.iter().enumerate() {
        assert_eq!(**line, format!("tick{}", n + 1), "a line went missing");
    }
    assert_eq!(lines.last().map(String::as_str), Some("end"));
    // The event stream opened before the stop still delivers, and new clients connect.
    let mut seen = Vec::new();
    while let Some((name, data)) = events.next() {
        seen.push(name.clone());
        if name == "task:completed" && data["task"]["id"] == json!(id) {
            break;
        }
    }
    assert!(seen.iter().any(|n| n == "task:completed"), "{seen:?}");
    assert_eq!(s.get("/api/status").status, 200);
}

/// Fills the store of a stopped orchestra with `n` tasks in all (real SQLite, one
/// transaction): copies of the one it holds, every tenth completed. Returns their ids, oldest
/// first.
fn seed_tasks(state: &Path, n: usize) -> Vec<String> {
    let mut conn = rusqlite::Connection::open(state.join("orchestra.db")).unwrap();
    let (template_id, seq, data): (String, i64, String) = conn
        .query_row("SELECT id, seq, data FROM tasks", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    let template: serde_json::Value = serde_json::from_str(&data).unwrap();
    let mut ids = vec![template_id];
    let tx = conn.transaction().unwrap();
    for i in 1..n {
        let mut t = template.clone();
        let id = format!("seeded-{i:05}");
        t["id"] = json!(id);
        t["name"] = json!(format!("task {i}"));
        if i % 10 == 0 {
            let at = t["metadata"]["createdAt"].as_i64().unwrap() + 1000;
            t["metadata"]["status"] = json!("completed");
            t["metadata"]["progress"] = json!(100);
            t["metadata"]["startedAt"] = json!(at);
            t["metadata"]["completedAt"] = json!(at);
        }
        tx.execute(
            "INSERT INTO tasks (id, seq, owner, data) VALUES (?1, ?2, NULL, ?3)",
            rusqlite::params![id, seq + i as i64, t.to_string()],
        )
        .unwrap();
        ids.push(id);
    }
    tx.commit().unwrap();
    ids
}

fn listed(s: &Server, query: &str) -> Vec<String> {
    let r = s.get(&format!("/api/coding-agents/tasks{query}"));
    assert_eq!(
        r.status,
        200,
        "{query}: {}",
        r.body.chars().take(200).collect::<String>()
    );
    r.json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ten_thousand_tasks_are_listed_newest_first_with_filters_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    create_task(&s, "the first", json!({}));
    s.stop();
    let ids = seed_tasks(dir.path(), 10_000);
    let s = Server::start_in(dir.path(), &[]);

    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(listed(&s, ""), newest_first);
    assert_eq!(listed(&s, "?limit=50"), newest_first[..50]);
    let completed: Vec<String> = newest_first
        .iter()
        .filter(|id| id.strip_prefix("seeded-").is_some_and(|n| n.ends_with('0')))
        .cloned()
        .collect();
    assert_eq!(completed.len(), 999);
    assert_eq!(listed(&s, "?status=completed"), completed);
    assert_eq!(listed(&s, "?status=completed&limit=5"), completed[..5]);
    assert_eq!(listed(&s, "?limit=20000").len(), 10_000);
    for bad in ["?limit=0", "?limit=-1", "?limit=ten", "?status=done"] {
        let r = s.get(&format!("/api/coding-agents/tasks{bad}"));
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
    let status = s.get("/api/coding-agents/status").json();
    assert_eq!(status["tasks"]["total"], json!(10_000), "{status}");
    // A new one comes first.
    let new = create_task(&s, "the newest", json!({}));
    assert_eq!(listed(&s, "?limit=1"), [new["id"].as_str().unwrap()]);
}
