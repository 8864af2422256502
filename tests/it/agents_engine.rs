//! Coding-agent status, prompts, automatic answers and finished turns, on a fake agent
//! (tests/fixtures/agents/fake/agent.py) declared in a user config like any new CLI would be.

use crate::support;

use serde_json::{Value, json};
use std::time::Duration;
use support::*;

const API: &str = "/api/coding-agents";

fn config() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = fake_agent_config(dir.path(), &["--trust"]);
    let p = path.to_string_lossy().into_owned();
    (dir, p)
}

fn session(s: &Server, id: &str) -> Value {
    s.get(&format!("{API}/sessions/{id}")).json()["session"].clone()
}

fn wait_status(s: &Server, id: &str, status: &str) -> Value {
    let mut last = Value::Null;
    let ok = wait_until(Duration::from_secs(20), || {
        last = session(s, id);
        last["status"] == status
    });
    assert!(
        ok,
        "session never became {status}: {last}\nscreen:\n{}",
        screen(s, id)
    );
    last
}

fn messages(s: &Server, id: &str) -> Vec<Value> {
    s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn safe_answers_trust_but_never_a_permission() {
    let (_d, cfg) = config();
    let s = Server::start_with(&["--config", &cfg]);
    let mut events = Events::open(&s);
    let id = spawn_session(
        &s,
        json!({"providerId": "fake", "task": "", "approval": "safe"}),
    );
    // The trust prompt is housekeeping: answered, and the answer recorded. It waits for
    // nobody else: a script answering it at the same time is refused every time (orchestra
    // alone answers it), and no watcher ever sees the session blocked on it.
    let mut refused = 0;
    let ready = wait_until(Duration::from_secs(20), || {
        let r = s.post(
            &format!("{API}/sessions/{id}/answer"),
            json!({"option": "1"}),
        );
        assert_eq!(r.status, 409, "{}", r.body);
        refused += 1;
        session(&s, &id)["status"] == "ready"
    });
    assert!(ready && refused > 0, "{}", screen(&s, &id));
    wait_screen(&s, &id, "Fake Agent ready");
    while let Some((name, data)) = events.next() {
        let session = &data["session"];
        if session["id"] != id.as_str() {
            continue;
        }
        assert_ne!(session["status"], "blocked", "{name}: {session}");
        if session["status"] == "ready" {
            break;
        }
    }
    let auto: Vec<Value> = messages(&s, &id)
        .into_iter()
        .filter(|m| m["auto"].is_string())
        .collect();
    assert_eq!(auto.len(), 1, "{auto:?}");
    assert_eq!(auto[0]["role"], "user");
    assert!(
        auto[0]["auto"]
            .as_str()
            .unwrap()
            .contains("trust this folder"),
        "{auto:?}"
    );

    // A permission prompt blocks, with its options, and stays unanswered.
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "perm"}),
    );
    assert_eq!(r.status, 201);
    let blocked = wait_status(&s, &id, "blocked");
    let prompt = &blocked["prompt"];
    assert_eq!(prompt["kind"], "permission", "{blocked}");
    assert_eq!(prompt["text"], "Do you want to proceed?");
    assert_eq!(prompt["options"][0]["key"], "1");
    assert_eq!(prompt["options"][0]["label"], "Yes");
    assert_eq!(prompt["options"][1]["label"], "No");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(session(&s, &id)["status"], "blocked");
    let autos = messages(&s, &id)
        .iter()
        .filter(|m| m["auto"].is_string())
        .count();
    assert_eq!(autos, 1, "a permission prompt was answered automatically");

    // Answering moves it on.
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "2"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    wait_screen(&s, &id, "answered 2");
    let ready = wait_status(&s, &id, "ready");
    assert!(ready.get("prompt").is_none(), "{ready}");
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
}

#[test]
fn manual_leaves_the_trust_prompt_to_the_user() {
    let (_d, cfg) = config();
    let s = Server::start_with(&["--config", &cfg]);
    let id = spawn_session(&s, json!({"providerId": "fake", "approval": "manual"}));
    let blocked = wait_status(&s, &id, "blocked");
    assert_eq!(blocked["prompt"]["kind"], "trust");
    assert_eq!(
        blocked["prompt"]["options"][0]["label"],
        "Yes, trust this folder"
    );
    assert_eq!(blocked["prompt"]["options"][0]["keys"], json!(["enter"]));
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(session(&s, &id)["status"], "blocked");
    assert!(messages(&s, &id).is_empty());
    // Stopped, it is paused (nothing to answer); continued, the prompt still waits.
    let r = s.post_empty(&format!("{API}/sessions/{id}/pause"));
    assert_eq!(r.json()["session"]["status"], "paused", "{}", r.body);
    assert!(r.json()["session"].get("prompt").is_none(), "{}", r.body);
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    let r = s.post_empty(&format!("{API}/sessions/{id}/resume"));
    assert_eq!(r.status, 200, "{}", r.body);
    let blocked = wait_status(&s, &id, "blocked");
    assert_eq!(blocked["prompt"]["kind"], "trust");
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    wait_status(&s, &id, "ready");
    wait_screen(&s, &id, "Fake Agent ready");
}

#[test]
fn a_still_busy_line_is_busy_and_the_reply_has_no_chrome() {
    let (_d, cfg) = config();
    let s = Server::start_with(&["--config", &cfg]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    wait_status(&s, &id, "ready");
    s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "work hard"}),
    );
    wait_screen(&s, &id, "esc to interrupt");
    // Nothing arrives for well over the settle time, but the screen says it works.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(session(&s, &id)["status"], "busy", "{}", screen(&s, &id));
    wait_screen(&s, &id, "Done: work hard");
    wait_status(&s, &id, "ready");
    let ok = wait_until(Duration::from_secs(5), || {
        messages(&s, &id)
            .iter()
            .any(|m| m["role"] == "agent" && m["text"] == "Done: work hard")
    });
    assert!(ok, "{:?}", messages(&s, &id));
}

#[test]
fn a_finished_turn_completes_the_task_and_keeps_the_session() {
    let (_d, cfg) = config();
    let s = Server::start_with(&["--config", &cfg]);
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": "work on the thing", "providerId": "fake"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{API}/tasks/{tid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let task = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        task["metadata"]["result"]["summary"], "Done: work on the thing",
        "{task}"
    );
    let sid = task["metadata"]["sessionId"].as_str().unwrap();
    let info = session(&s, sid);
    assert_eq!(info["ended"], false, "{info}");
    assert_eq!(info["status"], "ready");
}

/// Starts a task for the fake agent configured at `cfg` and waits until it completes.
fn complete_task(s: &Server, description: &str) -> Value {
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": description, "providerId": "fake",
               "approval": "safe"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{API}/tasks/{tid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    wait_task_status(s, &tid, "completed")
}

#[test]
fn the_echo_of_a_typed_request_is_not_the_work() {
    // The agent echoes the request, then thinks for 3 s with no busy indicator: a quiet
    // screen that is not a prompt. The task waits for the reply.
    let (_d, cfg) = config();
    let s = Server::start_with(&["--config", &cfg]);
    let task = complete_task(&s, "slow down and think");
    assert_eq!(
        task["metadata"]["result"]["summary"], "Done: slow down and think",
        "{task}"
    );
}

#[test]
fn a_request_given_as_an_argument_waits_for_the_start_up_screens_and_the_reply() {
    // The instruction is on the command line; the CLI shows a trust prompt first (answered
    // under `safe`), then takes the request up, thinks quietly and replies.
    let dir = tempfile::tempdir().unwrap();
    let path = fake_agent_config(dir.path(), &["--trust", "--request", "{task}"]);
    let cfg = std::fs::read_to_string(&path)
        .unwrap()
        .replace("deliver = \"type\"", "deliver = \"arg\"");
    std::fs::write(&path, cfg).unwrap();
    let s = Server::start_with(&["--config", &path.to_string_lossy()]);
    let task = complete_task(&s, "slow and steady");
    assert_eq!(
        task["metadata"]["result"]["summary"], "Done: slow and steady",
        "{task}"
    );
    let sid = task["metadata"]["sessionId"].as_str().unwrap();
    let msgs = messages(&s, sid);
    assert!(
        msgs.iter()
            .any(|m| m["role"] == "user" && m["auto"].is_string()),
        "the trust prompt was answered automatically: {msgs:?}"
    );
}

#[test]
fn input_waits_until_the_cli_is_done_starting() {
    // The fake agent draws `> ` 2 s before it reads input and drops what was typed before;
    // its banner, a `started` pattern, says it has loaded.
    let dir = tempfile::tempdir().unwrap();
    let path = fake_agent_config(dir.path(), &["--late-banner"]);
    let cfg = std::fs::read_to_string(&path).unwrap().replace(
        "[provider.screen]\n",
        "[provider.screen]\nstarted = ['Fake Agent v1']\n",
    );
    std::fs::write(&path, cfg).unwrap();
    let s = Server::start_with(&["--config", &path.to_string_lossy()]);
    let task = complete_task(&s, "hello there");
    assert_eq!(
        task["metadata"]["result"]["summary"], "You said: hello there",
        "{task}"
    );
}

#[test]
fn a_usage_limit_is_waited_out_and_the_task_continues() {
    limit_waited_out(&["--trust"]);
}

#[test]
fn a_usage_limit_outranks_the_ready_its_stop_hook_reports() {
    limit_waited_out(&["--trust", "--hooks"]);
}

/// The agent says its limit is reached and resets in 3 s: the session is `limited` with
/// `resetsAt`, the task still runs, and after the reset orchestra continues it by itself.
fn limit_waited_out(agent_args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_agent_config(dir.path(), agent_args)
        .to_string_lossy()
        .into_owned();
    let s = Server::start_with(&["--config", &cfg]);
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": "limit me", "providerId": "fake", "approval": "safe"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/{tid}/start")).status,
        200
    );
    let mut sid = String::new();
    let limited = wait_until(Duration::from_secs(20), || {
        let t = s.get(&format!("{API}/tasks/{tid}")).json()["task"].clone();
        sid = t["metadata"]["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        !sid.is_empty() && session(&s, &sid)["status"] == "limited"
    });
    assert!(
        limited,
        "never limited: {}\n{}",
        session(&s, &sid),
        screen(&s, &sid)
    );
    let info = session(&s, &sid);
    let resets = info["resetsAt"].as_i64().expect("resetsAt");
    assert!(
        resets >= before + 2_000 && resets <= before + 60_000,
        "{info}"
    );
    let task = s.get(&format!("{API}/tasks/{tid}")).json()["task"].clone();
    assert_eq!(task["metadata"]["status"], "running", "{task}");
    let task = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        task["metadata"]["result"]["summary"], "You said: continue",
        "{task}"
    );
    let msgs = messages(&s, &sid);
    assert!(
        msgs.iter().any(|m| m["role"] == "user"
            && m["text"] == "continue"
            && m["auto"].as_str().is_some_and(|a| a.contains("limit"))),
        "{msgs:?}"
    );
}

#[test]
fn the_instructions_file_is_the_sessions_and_goes_with_it() {
    // A provider that takes orchestra's instructions as a file (as aider's `--read` does):
    // `cat` shows that it got them; once it has ended, the file is removed.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        "[[provider]]\nid = \"teller\"\nname = \"Teller\"\ncommand = \"cat\"\ndeliver = \"none\"\n\
         instructions_args = [\"{instructions_file}\"]\n",
    )
    .unwrap();
    let s = Server::start_with(&["--config", &cfg.to_string_lossy()]);
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": "tell", "providerId": "teller"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/{tid}/start")).status,
        200
    );
    let mut sid = String::new();
    let ended = wait_until(Duration::from_secs(20), || {
        let t = s.get(&format!("{API}/tasks/{tid}")).json()["task"].clone();
        sid = t["metadata"]["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        !sid.is_empty() && session(&s, &sid)["ended"] == true
    });
    assert!(ended, "{}", session(&s, &sid));
    assert!(
        screen(&s, &sid).contains("orchestra report step"),
        "{}",
        screen(&s, &sid)
    );
    let file = s.state_dir.join("instructions").join(format!("{sid}.md"));
    assert!(!file.exists(), "{} is still there", file.display());
}
