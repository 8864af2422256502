//! Managing tasks and sessions over the API, against the real server and real processes:
//! delete (kept in the trash), edit a pending task, rerun a finished one, remove an ended
//! session, read a session's raw transcript, and that all of it holds across a restart.

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const SESSIONS: &str = "/api/coding-agents/sessions";

fn exec_task(s: &Server, name: &str, command: &str) -> String {
    let r = s.post(
        TASKS,
        json!({"name": name, "description": command, "providerId": "exec"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()["task"]["id"].as_str().unwrap().to_string()
}

fn start(s: &Server, id: &str) -> Value {
    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["task"].clone()
}

/// Reads events until one named `name` for which `pred` holds.
fn wait_event(events: &mut Events, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
    while let Some((n, data)) = events.next() {
        if n == name && pred(&data) {
            return data;
        }
    }
    panic!("the stream ended without a {name} event");
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

#[test]
fn deleting_a_finished_task_keeps_it_in_the_trash_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let id = exec_task(&s, "to delete", "printf 'deleted-%s\\n' $((6*7))");
    let sid = start(&s, &id)["metadata"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    wait_task_status(&s, &id, "completed");
    let transcript = s.get(&format!("{SESSIONS}/{sid}")).json()["session"]["transcript"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(read(Path::new(&transcript)).contains("deleted-42"));

    let mut events = Events::open(&s);
    let r = s.delete(&format!("{TASKS}/{id}"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["task"]["id"], id.as_str());
    assert_eq!(r.json()["task"]["metadata"]["status"], "completed");
    // Its sessions go first, then the task.
    wait_event(&mut events, "session:removed", |d| {
        d["sessionId"] == sid.as_str()
    });
    let e = wait_event(&mut events, "task:deleted", |d| d["taskId"] == id.as_str());
    assert_eq!(e["task"]["name"], "to delete");

    // Gone from the API and from the transcripts; all of it is in the trash.
    assert_eq!(s.get(&format!("{TASKS}/{id}")).status, 404);
    assert_eq!(s.get(&format!("{SESSIONS}/{sid}")).status, 404);
    assert_eq!(s.delete(&format!("{TASKS}/{id}")).status, 404);
    assert!(!Path::new(&transcript).exists());
    let trash = dir.path().join("trash").join(&id);
    let kept: Value = serde_json::from_str(&read(&trash.join("task.json"))).unwrap();
    assert_eq!(kept["id"], id.as_str());
    assert_eq!(kept["description"], "printf 'deleted-%s\\n' $((6*7))");
    let kept_session: Value =
        serde_json::from_str(&read(&trash.join(format!("session-{sid}.json")))).unwrap();
    assert_eq!(kept_session["session"]["id"], sid.as_str());
    assert!(read(&trash.join(format!("{sid}.log"))).contains("deleted-42"));

    // Still gone after a restart.
    s.stop();
    let s = Server::start_in(dir.path(), &[]);
    assert_eq!(s.get(&format!("{TASKS}/{id}")).status, 404);
    assert_eq!(s.get(TASKS).json()["tasks"], json!([]));
    assert_eq!(s.get(SESSIONS).json()["sessions"], json!([]));
}

#[test]
fn only_finished_tasks_can_be_deleted() {
    let s = Server::start();
    let pending = exec_task(&s, "pending", "true");
    let r = s.delete(&format!("{TASKS}/{pending}"));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("pending"));
    let running = exec_task(&s, "running", "sleep 600");
    start(&s, &running);
    let r = s.delete(&format!("{TASKS}/{running}"));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("cancel it first")
    );
    assert_eq!(
        s.get(&format!("{TASKS}/{running}")).json()["task"]["metadata"]["status"],
        "running"
    );
    assert_eq!(
        s.delete(&format!("{TASKS}/00000000-0000-0000-0000-000000000000"))
            .status,
        404
    );
    // Cancelled is finished: now it can go, and its session with it.
    assert_eq!(
        s.post_empty(&format!("{TASKS}/{running}/cancel")).status,
        200
    );
    assert_eq!(s.delete(&format!("{TASKS}/{running}")).status, 200);
    assert_eq!(s.get(&format!("{TASKS}/{pending}")).status, 200);
}

#[test]
fn a_finished_task_whose_session_is_still_open_is_deleted_with_it() {
    let s = Server::start();
    let t = create_task(&s, "open", json!({"providerId": "shell"}));
    let id = t["id"].as_str().unwrap();
    let sid = start(&s, id)["metadata"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s.post(
        &format!("{TASKS}/{id}/result"),
        json!({"success": true, "summary": "done"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&sid).is_empty()));
    assert_eq!(s.delete(&format!("{TASKS}/{id}")).status, 200);
    assert!(
        wait_until(Duration::from_secs(10), || session_pids(&sid).is_empty()),
        "left behind: {:?}",
        session_pids(&sid)
    );
    assert_eq!(s.get(&format!("{SESSIONS}/{sid}")).status, 404);
}

#[test]
fn a_pending_tasks_name_and_description_can_be_edited() {
    let s = Server::start();
    let id = exec_task(&s, "before", "echo before");
    let path = format!("{TASKS}/{id}");
    let mut events = Events::open(&s);
    let r = s.patch(
        &path,
        json!({"name": "after", "description": "echo edited-$((6*7))"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["task"]["name"], "after");
    assert_eq!(r.json()["task"]["description"], "echo edited-$((6*7))");
    let e = wait_event(&mut events, "task:updated", |d| d["taskId"] == id.as_str());
    assert_eq!(e["task"]["name"], "after");
    for bad in [
        json!({"name": ""}),
        json!({"name": "  "}),
        json!({"name": 5}),
        json!({"description": ["x"]}),
        // `exec` runs the description: it cannot be empty.
        json!({"description": ""}),
    ] {
        let r = s.patch(&path, bad.clone());
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
    assert_eq!(s.get(&path).json()["task"]["name"], "after");

    // It runs as edited, and once it is no longer pending it cannot be edited.
    start(&s, &id);
    let done = wait_task_status(&s, &id, "completed");
    assert!(
        done["metadata"]["output"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "edited-42"),
        "{done}"
    );
    let r = s.patch(&path, json!({"name": "later"}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(s.get(&path).json()["task"]["name"], "after");
}

#[test]
fn a_shell_task_needs_no_description_but_exec_does() {
    let s = Server::start();
    for body in [
        json!({"name": "plain shell", "providerId": "shell"}),
        json!({"name": "blank shell", "providerId": "shell", "description": "  "}),
    ] {
        let r = s.post(TASKS, body.clone());
        assert_eq!(r.status, 201, "{body}: {}", r.body);
    }
    let r = s.post(TASKS, json!({"name": "no command", "providerId": "exec"}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("description"));

    // A shell task without one starts a shell that waits, with nothing typed.
    let t = create_task(
        &s,
        "empty",
        json!({"providerId": "shell", "description": ""}),
    );
    let id = t["id"].as_str().unwrap();
    let sid = start(&s, id)["metadata"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{SESSIONS}/{sid}")).json()["session"]["status"] == "ready"
    }));
    assert_eq!(
        s.get(&format!("{SESSIONS}/{sid}/messages")).json()["messages"],
        json!([])
    );
    assert_eq!(s.post_empty(&format!("{TASKS}/{id}/cancel")).status, 200);
}

#[test]
fn a_completed_task_can_be_rerun_but_not_an_open_one() {
    let s = Server::start();
    let id = exec_task(&s, "rerun", "echo ran");
    assert_eq!(s.post_empty(&format!("{TASKS}/{id}/retry")).status, 409);
    start(&s, &id);
    wait_task_status(&s, &id, "completed");
    let r = s.post_empty(&format!("{TASKS}/{id}/retry"));
    assert_eq!(r.status, 201, "{}", r.body);
    let again = r.json()["task"].clone();
    assert_eq!(again["metadata"]["retryOf"], id.as_str());
    assert_eq!(again["metadata"]["status"], "pending");
    assert_eq!(again["description"], "echo ran");

    let busy = exec_task(&s, "busy", "sleep 600");
    start(&s, &busy);
    assert_eq!(s.post_empty(&format!("{TASKS}/{busy}/retry")).status, 409);
    assert_eq!(s.post_empty(&format!("{TASKS}/{busy}/pause")).status, 200);
    assert_eq!(s.post_empty(&format!("{TASKS}/{busy}/retry")).status, 409);
    assert_eq!(s.post_empty(&format!("{TASKS}/{busy}/cancel")).status, 200);
}

#[test]
fn an_ended_session_can_be_removed_and_stays_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let sid = spawn_session(
        &s,
        json!({"task": "echo removed-$((6*7))", "providerId": "shell"}),
    );
    wait_screen(&s, &sid, "removed-42");
    let transcript = s.get(&format!("{SESSIONS}/{sid}")).json()["session"]["transcript"]
        .as_str()
        .unwrap()
        .to_string();

    let remove = format!("{SESSIONS}/{sid}?remove=true");
    let r = s.delete(&remove);
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("end it first"));
    assert!(!session_pids(&sid).is_empty(), "a refused remove ended it");
    assert_eq!(
        s.delete(&format!("{SESSIONS}/{sid}?remove=maybe")).status,
        400
    );

    // Plain DELETE still only ends it, and stays idempotent.
    let r = s.delete(&format!("{SESSIONS}/{sid}"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["session"]["ended"], true);
    assert_eq!(s.delete(&format!("{SESSIONS}/{sid}")).status, 200);

    let mut events = Events::open(&s);
    let r = s.delete(&remove);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["session"]["id"], sid.as_str());
    wait_event(&mut events, "session:removed", |d| {
        d["sessionId"] == sid.as_str()
    });
    assert_eq!(s.get(&format!("{SESSIONS}/{sid}")).status, 404);
    assert_eq!(s.delete(&remove).status, 404);
    assert!(!Path::new(&transcript).exists());
    let trash = dir.path().join("trash/sessions").join(&sid);
    assert!(read(&trash.join(format!("{sid}.log"))).contains("removed-42"));
    assert!(read(&trash.join(format!("session-{sid}.json"))).contains(&sid));

    s.stop();
    let s = Server::start_in(dir.path(), &[]);
    assert_eq!(s.get(&format!("{SESSIONS}/{sid}")).status, 404);
    assert_eq!(s.get(SESSIONS).json()["sessions"], json!([]));
}

#[test]
fn a_sessions_raw_transcript_live_ended_and_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let sid = spawn_session(
        &s,
        json!({"task": "printf '\\033[31mred-%s\\033[0m\\n' $((6*7))", "providerId": "shell"}),
    );
    wait_screen(&s, &sid, "red-42");
    let path = format!("{SESSIONS}/{sid}/transcript");
    let r = s.get(&path);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert!(r.body.contains("\u{1b}[31mred-42\u{1b}[0m"), "{:?}", r.body);
    // Ended, so nothing more arrives between the two reads below.
    assert_eq!(s.delete(&format!("{SESSIONS}/{sid}")).status, 200);
    let full = s.get(&path).body;
    assert!(full.contains("red-42"), "{full:?}");
    let tail = s.get(&format!("{path}?bytes=10")).body;
    assert_eq!(tail.len(), 10);
    assert!(full.ends_with(&tail));
    assert_eq!(s.get(&format!("{path}?bytes=0")).body, "");
    for bad in ["-1", "ten", "1.5"] {
        let r = s.get(&format!("{path}?bytes={bad}"));
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
    assert_eq!(
        s.get(&format!("{SESSIONS}/no-such-session/transcript"))
            .status,
        404
    );

    // Of an earlier run: read from its file.
    s.stop();
    let s = Server::start_in(dir.path(), &[]);
    let r = s.get(&path);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("\u{1b}[31mred-42"), "{:?}", r.body);
}

#[test]
fn the_autopilot_switch_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let status = |s: &Server| s.get("/api/status").json();
    let mut s = Server::start_in(dir.path(), &[]);
    assert_eq!(status(&s)["autopilot"], false);
    assert_eq!(
        s.post_empty("/api/agent/resume").json()["status"],
        "running"
    );
    // SIGTERM stops orchestra; it does not turn autopilot off.
    s.stop();
    let mut s = Server::start_in(dir.path(), &[]);
    assert_eq!(status(&s)["autopilot"], true);
    assert_eq!(status(&s)["state"], "running");
    let id = exec_task(&s, "by autopilot", "echo auto");
    wait_task_status(&s, &id, "completed");

    assert_eq!(s.post_empty("/api/agent/pause").json()["status"], "paused");
    s.stop();
    let mut s = Server::start_in(dir.path(), &[]);
    assert_eq!(status(&s)["autopilot"], false);
    assert_eq!(status(&s)["state"], "paused");

    // `stop` turns it off for good too.
    s.post_empty("/api/agent/resume");
    assert_eq!(s.post_empty("/api/agent/stop").json()["status"], "stopped");
    s.stop();
    let s = Server::start_in(dir.path(), &[]);
    assert_eq!(status(&s)["autopilot"], false);
}

/// A coding agent's working block (a spinner line and a detail line under a title, a status
/// bar below) redrawn in place forty times gives its rows once, with their last text, when
/// the agent goes quiet: not two output lines per redraw.
#[test]
fn rows_an_agent_redraws_in_place_reach_its_output_once() {
    let s = Server::start();
    let script = r#"python3 -c '
import sys, time
w = sys.stdout.write
w("Refactoring\r\n\r\n\r\n")
for i in range(40):
    w("\x1b[2A\r\x1b[2K\x1b[1m*\x1b[0m Working (%ds)\r\n\x1b[2K  step %d of 40\r\n\x1b[2K\x1b[7m ? for shortcuts \x1b[0m" % (i, i + 1))
    sys.stdout.flush()
    time.sleep(0.01)
time.sleep(300)
'"#;
    let id = exec_task(&s, "redraws", script);
    start(&s, &id);
    let path = format!("{TASKS}/{id}");
    let output = || s.get(&path).json()["task"]["metadata"]["output"].clone();
    assert!(
        wait_until(Duration::from_secs(20), || output()
            .as_array()
            .is_some_and(|o| o.iter().any(|l| l == "  step 40 of 40"))),
        "the block's last text never reached the output: {}",
        output()
    );
    assert_eq!(
        output(),
        json!(["Refactoring", "", "", "* Working (39s)", "  step 40 of 40"])
    );
    assert_eq!(s.post_empty(&format!("{path}/cancel")).status, 200);
}
