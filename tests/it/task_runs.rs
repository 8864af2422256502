//! Tasks run on real subagent sessions: exit codes, pause/resume/cancel of the process group,
//! autopilot, reporting back over HTTP, restart after kill -9, result files from git.

use crate::support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

fn exec_task(s: &Server, name: &str, command: &str, dir: Option<&std::path::Path>) -> String {
    let mut extra = json!({"providerId": "exec"});
    if let Some(d) = dir {
        extra["workingDirectory"] = json!(d);
    }
    let mut body = json!({"name": name, "description": command});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let r = s.post(TASKS, body);
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()["task"]["id"].as_str().unwrap().to_string()
}

/// Starts the task; the id of the session it runs in.
fn start_session(s: &Server, id: &str) -> String {
    start(s, id)["metadata"]["sessionId"]
        .as_str()
        .expect("a started task names its session")
        .to_string()
}

fn start(s: &Server, id: &str) -> serde_json::Value {
    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["task"].clone()
}

#[test]
fn exit_codes_decide_the_task() {
    let s = Server::start();
    let bad = exec_task(&s, "bad", "echo one; echo two; exit 3", None);
    let t = start(&s, &bad);
    assert!(t["metadata"]["sessionId"].is_string());
    assert!(t["metadata"]["startedAt"].is_i64());
    let t = wait_task_status(&s, &bad, "failed");
    assert_eq!(t["metadata"]["output"], json!(["one", "two"]));
    assert!(
        t["metadata"]["error"].as_str().unwrap().contains("code 3"),
        "{t}"
    );
    assert!(t["metadata"]["completedAt"].is_i64());

    let good = exec_task(&s, "good", "printf 'done\\n'", None);
    start(&s, &good);
    let t = wait_task_status(&s, &good, "completed");
    assert_eq!(t["metadata"]["progress"], 100);
    assert_eq!(t["metadata"]["output"], json!(["done"]));
    assert_eq!(
        s.post_empty(&format!("{TASKS}/{good}/start")).status,
        409,
        "only pending starts"
    );

    let killed = exec_task(&s, "killed", "kill -9 $$", None);
    start(&s, &killed);
    let t = wait_task_status(&s, &killed, "failed");
    assert!(
        t["metadata"]["error"].as_str().unwrap().contains("SIGKILL"),
        "{t}"
    );
}

#[test]
fn pause_resume_cancel_act_on_the_process_group() {
    let s = Server::start_with(&["--grace", "1"]);
    let id = exec_task(&s, "sleeper", "sleep 600 & sleep 601; wait", None);
    let t = start(&s, &id);
    let sid = t["metadata"]["sessionId"].as_str().unwrap().to_string();
    assert!(wait_until(Duration::from_secs(5), || session_pids(&sid)
        .len()
        >= 3));
    let pids = session_pids(&sid);

    let r = s.post_empty(&format!("{TASKS}/{id}/pause"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["task"]["metadata"]["status"], "paused");
    assert!(wait_until(Duration::from_secs(2), || pids
        .iter()
        .all(|p| process_state(*p) == Some('T'))));
    let sess = s.get(&format!("/api/coding-agents/sessions/{sid}")).json()["session"].clone();
    assert_eq!(sess["status"], "paused");

    let r = s.post_empty(&format!("{TASKS}/{id}/resume"));
    assert_eq!(r.json()["task"]["metadata"]["status"], "running");
    assert!(wait_until(Duration::from_secs(2), || pids
        .iter()
        .all(|p| process_state(*p) != Some('T'))));

    let r = s.post_empty(&format!("{TASKS}/{id}/cancel"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["task"]["metadata"]["status"], "cancelled");
    assert!(
        session_pids(&sid).is_empty(),
        "left: {:?}",
        session_pids(&sid)
    );
    let sess = s.get(&format!("/api/coding-agents/sessions/{sid}")).json()["session"].clone();
    assert_eq!(sess["ended"], true);
}

#[test]
fn patch_to_paused_or_cancelled_acts_on_the_agent_too() {
    let s = Server::start_with(&["--grace", "1"]);
    let id = exec_task(&s, "sleeper", "sleep 600", None);
    let sid = start_session(&s, &id);
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&sid).is_empty()));
    let pids = session_pids(&sid);
    assert_eq!(
        s.patch(&format!("{TASKS}/{id}"), json!({"status": "paused"}))
            .status,
        200
    );
    assert!(wait_until(Duration::from_secs(2), || pids
        .iter()
        .all(|p| process_state(*p) == Some('T'))));
    assert_eq!(
        s.patch(&format!("{TASKS}/{id}"), json!({"status": "cancelled"}))
            .status,
        200
    );
    assert!(session_pids(&sid).is_empty());
}

#[test]
fn autopilot_runs_two_at_a_time_until_all_are_done() {
    let s = Server::start_with(&["--max-concurrent", "2"]);
    let ids: Vec<String> = (0..5)
        .map(|i| {
            exec_task(
                &s,
                &format!("t{i}"),
                &format!("sleep 0.4; echo task-{i}"),
                None,
            )
        })
        .collect();
    assert_eq!(
        s.post_empty("/api/agent/resume").json()["status"],
        "running"
    );
    let mut most_running = 0;
    let done = wait_until(Duration::from_secs(30), || {
        let tasks = s.get(TASKS).json()["tasks"].clone();
        let tasks = tasks.as_array().unwrap();
        let running = tasks
            .iter()
            .filter(|t| t["metadata"]["status"] == "running")
            .count();
        most_running = most_running.max(running);
        tasks.iter().all(|t| t["metadata"]["status"] == "completed")
    });
    assert!(done, "not all completed");
    assert!(most_running <= 2, "ran {most_running} at once");
    assert!(most_running >= 1);
    // Oldest first: start times follow creation order.
    let started: Vec<i64> = ids
        .iter()
        .map(|id| {
            s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"]["startedAt"]
                .as_i64()
                .unwrap()
        })
        .collect();
    let mut sorted = started.clone();
    sorted.sort();
    assert_eq!(started, sorted);
    // Paused autopilot starts nothing.
    s.post_empty("/api/agent/pause");
    let idle = exec_task(&s, "idle", "true", None);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        s.get(&format!("{TASKS}/{idle}")).json()["task"]["metadata"]["status"],
        "pending"
    );
}

#[test]
fn stop_cancels_running_tasks_and_turns_autopilot_off() {
    let s = Server::start_with(&["--grace", "1"]);
    let id = exec_task(&s, "long", "sleep 600", None);
    let sid = start_session(&s, &id);
    s.post_empty("/api/agent/resume");
    let r = s.post_empty("/api/agent/stop");
    assert_eq!(r.json()["status"], "stopped");
    let m = s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "cancelled");
    assert_eq!(
        m["error"], "cancelled: every agent was stopped (/api/agent/stop)",
        "{m}"
    );
    assert!(session_pids(&sid).is_empty());
}

#[test]
fn commands_are_busy_while_they_live_never_ready() {
    // `ready` means waiting for input; a command that prints now and then, or nothing at
    // all, is working. The session's settle time is 500 ms: between the ticks (1 s apart)
    // an interactive session would turn ready, so watching a few ticks is the check.
    let s = Server::start();
    let session_of = |id: &str| {
        start(&s, id)["metadata"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let ticking = session_of(&exec_task(
        &s,
        "ticks",
        "while :; do echo tick; sleep 1; done",
        None,
    ));
    let quiet = session_of(&exec_task(&s, "quiet", "sleep 300", None));
    let status = |sid: &str| {
        s.get(&format!("/api/coding-agents/sessions/{sid}")).json()["session"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut seen = std::collections::BTreeSet::new();
    let three_ticks = wait_until(Duration::from_secs(20), || {
        seen.insert(format!("ticks {}", status(&ticking)));
        seen.insert(format!("quiet {}", status(&quiet)));
        screen(&s, &ticking).matches("tick").count() >= 3
    });
    assert!(
        three_ticks,
        "the ticks never came:\n{}",
        screen(&s, &ticking)
    );
    let seen: Vec<String> = seen.into_iter().collect();
    assert_eq!(seen, ["quiet busy", "ticks busy"], "statuses seen");
}

/// Adds a step to a task and sets its status; returns the step's id.
fn step(s: &Server, task: &str, status: &str) -> String {
    let r = s.post(
        &format!("{TASKS}/{task}/steps"),
        json!({"description": format!("a {status} step")}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let step = r.json()["stepId"].as_str().expect("stepId").to_string();
    let r = s.patch(
        &format!("{TASKS}/{task}/steps/{step}"),
        json!({"status": status}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    step
}

#[test]
fn sigterm_cancels_running_tasks_saying_so_and_closes_their_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &["--grace", "1"]);
    let run = exec_task(&s, "run", "sleep 600", None);
    let sid = start_session(&s, &run);
    step(&s, &run, "running");
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&sid).is_empty()));
    assert_eq!(s.stop(), Some(0));
    assert!(session_pids(&sid).is_empty());

    let s = Server::start_in(dir.path(), &[]);
    let m = s.get(&format!("{TASKS}/{run}")).json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "cancelled", "{m}");
    assert_eq!(
        m["error"], "cancelled: orchestra was stopped by SIGTERM",
        "{m}"
    );
    assert!(
        m.get("result").is_none(),
        "no 'killed by signal' result: {m}"
    );
    assert_eq!(m["steps"][0]["status"], "failed", "{m}");
}

#[test]
fn a_finished_task_closes_the_steps_still_open() {
    let s = Server::start();
    let driven = |name: &str| {
        let id = create_task(&s, name, json!({}))["id"]
            .as_str()
            .unwrap()
            .to_string();
        let r = s.patch(&format!("{TASKS}/{id}"), json!({"status": "running"}));
        assert_eq!(r.status, 200, "{}", r.body);
        step(&s, &id, "completed");
        step(&s, &id, "running");
        step(&s, &id, "pending");
        id
    };
    let statuses = |id: &str| -> Vec<String> {
        let t = s.get(&format!("{TASKS}/{id}")).json()["task"].clone();
        t["metadata"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["status"].as_str().unwrap().to_string())
            .collect()
    };

    let ok = driven("ok");
    let r = s.post(
        &format!("{TASKS}/{ok}/result"),
        json!({"success": true, "summary": "done"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(statuses(&ok), ["completed", "completed", "completed"]);

    let bad = driven("bad");
    let r = s.post(
        &format!("{TASKS}/{bad}/result"),
        json!({"success": false, "summary": "tests fail"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(statuses(&bad), ["completed", "failed", "failed"]);

    let gone = driven("gone");
    let r = s.post_empty(&format!("{TASKS}/{gone}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(statuses(&gone), ["completed", "failed", "failed"]);

    // A task whose session exits on its own closes them too.
    let id = exec_task(&s, "exits", "sleep 600", None);
    start(&s, &id);
    step(&s, &id, "running");
    let t = s.get(&format!("{TASKS}/{id}")).json()["task"].clone();
    let sid = t["metadata"]["sessionId"].as_str().unwrap().to_string();
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&sid).is_empty()));
    for pid in session_pids(&sid) {
        // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    wait_task_status(&s, &id, "failed");
    assert_eq!(statuses(&id), ["failed"]);
}

#[test]
fn a_subagent_reports_steps_progress_and_result_over_http() {
    let s = Server::start();
    let script = r#"
        api="$ORCHESTRA_URL/api/coding-agents/tasks/$ORCHESTRA_TASK_ID"
        step=$(curl -s -XPOST "$api/steps" -H "Authorization: Bearer $ORCHESTRA_TOKEN" -H 'Content-Type: application/json' -d '{"description":"Running tests"}' | sed 's/.*"stepId":"\([^"]*\)".*/\1/')
        curl -s -XPATCH "$api/steps/$step" -H "Authorization: Bearer $ORCHESTRA_TOKEN" -d '{"status":"completed"}' >/dev/null
        curl -s -XPATCH "$api" -H "Authorization: Bearer $ORCHESTRA_TOKEN" -d '{"progress":40}' >/dev/null
        curl -s -XPOST "$api/result" -H "Authorization: Bearer $ORCHESTRA_TOKEN" -d '{"success":true,"summary":"all green"}' >/dev/null
        exit 9
    "#;
    let id = exec_task(&s, "reporter", script, None);
    start(&s, &id);
    let t = wait_task_status(&s, &id, "completed");
    let m = &t["metadata"];
    assert_eq!(m["steps"][0]["description"], "Running tests");
    assert_eq!(m["steps"][0]["status"], "completed");
    assert_eq!(
        m["result"]["summary"], "all green",
        "the result wins over exit 9: {t}"
    );
    // The session really ended with its own code.
    let sid = m["sessionId"].as_str().unwrap();
    assert!(wait_until(Duration::from_secs(5), || {
        s.get(&format!("/api/coding-agents/sessions/{sid}")).json()["session"]["exitCode"] == 9
    }));
}

#[test]
fn kill_9_then_restart_marks_running_tasks_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let run = exec_task(&s, "run", "sleep 600", None);
    let sid = start_session(&s, &run);
    let outside = create_task(&s, "outside", json!({}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.patch(
        &format!("{TASKS}/{outside}"),
        json!({"status": "running", "progress": 20}),
    );
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&sid).is_empty()));
    s.crash();
    assert!(
        wait_until(Duration::from_secs(5), || session_pids(&sid).is_empty()),
        "children outlived kill -9: {:?}",
        session_pids(&sid)
    );
    let s = Server::start_in(dir.path(), &[]);
    let t = s.get(&format!("{TASKS}/{run}")).json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "failed");
    assert_eq!(
        t["metadata"]["error"],
        "interrupted: orchestra stopped while this task was running"
    );
    let o = s.get(&format!("{TASKS}/{outside}")).json()["task"].clone();
    assert_eq!(o["metadata"]["status"], "running");
    assert_eq!(o["metadata"]["progress"], 20);
    let r = s.post_empty(&format!("{TASKS}/{run}/retry"));
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["task"]["metadata"]["retryOf"], run.as_str());
}

/// The task's output as the database holds it (read beside the running server, as WAL allows).
fn stored_output(state: &std::path::Path, id: &str) -> serde_json::Value {
    let Ok(conn) = rusqlite::Connection::open_with_flags(
        state.join("orchestra.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return serde_json::Value::Null;
    };
    conn.query_row("SELECT data FROM tasks WHERE id = ?1", [id], |r| {
        r.get::<_, String>(0)
    })
    .ok()
    .and_then(|data| serde_json::from_str::<serde_json::Value>(&data).ok())
    .map(|t| t["metadata"]["output"].clone())
    .unwrap_or_default()
}

#[test]
fn output_is_saved_within_seconds_without_other_writes_and_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let run = exec_task(&s, "run", "echo first-line; sleep 600", None);
    let sid = start_session(&s, &run);
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{TASKS}/{run}")).json()["task"]["metadata"]["output"]
            == json!(["first-line"])
    }));
    // Output is written behind acknowledged writes, a little later, with nothing else
    // touching the task to carry it.
    assert!(
        wait_until(Duration::from_secs(15), || stored_output(dir.path(), &run)
            == json!(["first-line"])),
        "output never reached the database: {}",
        stored_output(dir.path(), &run)
    );
    s.crash();
    assert!(wait_until(Duration::from_secs(5), || session_pids(&sid).is_empty()));
    let s = Server::start_in(dir.path(), &[]);
    let t = s.get(&format!("{TASKS}/{run}")).json()["task"].clone();
    assert_eq!(t["metadata"]["output"], json!(["first-line"]), "{t}");
    assert_eq!(t["metadata"]["status"], "failed");
}

#[test]
fn result_files_come_from_git_when_none_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(d)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["init", "-q"]);
    std::fs::write(d.join("keep.txt"), "k").unwrap();
    std::fs::write(d.join("edit.txt"), "e").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "init"]);
    let head = std::fs::read_to_string(d.join(".git/HEAD")).unwrap();
    let s = Server::start();
    let id = exec_task(
        &s,
        "edits",
        "echo more >> edit.txt; echo new > created.txt",
        Some(d),
    );
    start(&s, &id);
    let t = wait_task_status(&s, &id, "completed");
    assert_eq!(
        t["metadata"]["result"]["filesModified"],
        json!(["edit.txt"]),
        "{t}"
    );
    assert_eq!(
        t["metadata"]["result"]["filesCreated"],
        json!(["created.txt"])
    );
    assert_eq!(std::fs::read_to_string(d.join(".git/HEAD")).unwrap(), head);
}

/// Where `needle` first shows on the session's screen, once it shows.
fn screen_position(s: &Server, sid: &str, needle: &str) -> usize {
    wait_screen(s, sid, needle);
    screen(s, sid).find(needle).unwrap_or(usize::MAX)
}

#[test]
fn a_shell_task_runs_its_first_line_before_what_is_sent_after_a_quick_pause() {
    let s = Server::start();
    let r = s.post(
        TASKS,
        json!({"name": "first", "description": "echo first-$((1+1))", "providerId": "shell"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["task"]["id"].as_str().unwrap().to_string();
    let t = start(&s, &id);
    let sid = t["metadata"]["sessionId"].as_str().unwrap().to_string();
    // Paused and resumed at once: the shell has not settled at its prompt, so the first
    // line is still to be typed when the next input comes.
    let r = s.post_empty(&format!("{TASKS}/{id}/pause"));
    assert_eq!(
        r.json()["task"]["metadata"]["status"],
        "paused",
        "{}",
        r.body
    );
    let r = s.post_empty(&format!("{TASKS}/{id}/resume"));
    assert_eq!(
        r.json()["task"]["metadata"]["status"],
        "running",
        "{}",
        r.body
    );
    let r = s.post(
        &format!("/api/coding-agents/sessions/{sid}/messages"),
        json!({"text": "echo second-$((2+2))"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);

    let first = screen_position(&s, &sid, "\nfirst-2");
    let second = screen_position(&s, &sid, "\nsecond-4");
    assert!(
        first < second,
        "the first line ran after what was sent later:\n{}",
        screen(&s, &sid)
    );
    let sent: Vec<String> = s
        .get(&format!("/api/coding-agents/sessions/{sid}/messages"))
        .json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(sent, ["echo first-$((1+1))", "echo second-$((2+2))"]);
    let r = s.post_empty(&format!("{TASKS}/{id}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(session_pids(&sid).is_empty());
}

/// A flooding agent's output reaches its task in batches, a few a second, not as one
/// `task:output` event (each carrying the whole task) per read of its terminal: hundreds a
/// second made every event-stream client and attached TUI parse megabytes a second. Nothing
/// is lost at the end: the task keeps the newest lines, the last one included.
#[test]
fn a_flood_of_output_reaches_the_task_a_few_times_a_second() {
    let s = Server::start();
    let mut events = Events::open(&s);
    let id = exec_task(&s, "flood", "seq 1 200000", None);
    start(&s, &id);
    let mut outputs: Vec<Instant> = Vec::new();
    loop {
        let Some((name, data)) = events.next() else {
            panic!("the event stream ended before the task finished");
        };
        if data["taskId"] != id.as_str() {
            continue;
        }
        match name.as_str() {
            "task:output" => outputs.push(Instant::now()),
            "task:completed" | "task:failed" => break,
            _ => {}
        }
    }
    let (Some(first), Some(last)) = (outputs.first(), outputs.last()) else {
        panic!("no task:output event");
    };
    // At most one per 250 ms (the engine's pace) while the task ran, plus the first and the
    // last (its end flushes what is left). Measured on the engine's clock (the task's start
    // and end), not on arrival: the connection may bring several at once.
    let t = wait_task_status(&s, &id, "completed");
    let ran_ms = t["metadata"]["completedAt"].as_i64().unwrap_or(0)
        - t["metadata"]["startedAt"].as_i64().unwrap_or(0);
    let allowed = ran_ms.max(0) as usize / 250 + 2;
    assert!(
        outputs.len() <= allowed,
        "{} task:output events while the task ran {ran_ms} ms (arriving over {:?})",
        outputs.len(),
        *last - *first
    );
    let kept = t["metadata"]["output"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(kept.last(), Some(&json!("200000")), "the last line is kept");
}
