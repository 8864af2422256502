//! Status from the agent itself: the fake agent (tests/fixtures/agents/fake/agent.py) reports
//! through `orchestra hook EVENT` as Claude Code's hooks do; hook events decide the status
//! before the screen, each session says which source decided it, and a hook without the
//! session's own token is refused.

use crate::support;

use serde_json::{Value, json};
use std::time::Duration;
use support::*;

const API: &str = "/api/coding-agents";

fn session(s: &Server, id: &str) -> Value {
    s.get(&format!("{API}/sessions/{id}")).json()["session"].clone()
}

fn wait_session(s: &Server, id: &str, what: &str, mut ok: impl FnMut(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    let done = wait_until(Duration::from_secs(20), || {
        last = session(s, id);
        ok(&last)
    });
    assert!(
        done,
        "session never {what}: {last}\nscreen:\n{}",
        screen(s, id)
    );
    last
}

/// The hook token orchestra gave the session's agent, read from the agent's environment.
fn hook_token(id: &str) -> String {
    let pid = session_pids(id)[0];
    let env = std::fs::read(format!("/proc/{pid}/environ")).expect("agent environment");
    env.split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"ORCHESTRA_HOOK_TOKEN="))
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .expect("ORCHESTRA_HOOK_TOKEN in the agent's environment")
}

fn post_hook(s: &Server, id: &str, token: Option<&str>, body: Value) -> Response {
    let mut headers = vec![];
    if let Some(t) = token {
        headers.push(("X-Orchestra-Hook-Token", t));
    }
    s.raw(
        "POST",
        &format!("{API}/sessions/{id}/hook"),
        Some(body.to_string().as_bytes()),
        &headers,
    )
}

fn fake_with(args: &[&str]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_agent_config(dir.path(), args);
    let s = Server::start_with(&["--config", &cfg.to_string_lossy()]);
    (dir, s)
}

#[test]
fn a_hook_without_the_sessions_own_token_is_refused() {
    let (_d, s) = fake_with(&[]);
    let a = spawn_session(&s, json!({"providerId": "fake"}));
    let b = spawn_session(&s, json!({"providerId": "fake"}));
    wait_session(&s, &a, "ready", |v| v["status"] == "ready");
    let stop = json!({"event": "UserPromptSubmit"});
    let r = post_hook(&s, &a, None, stop.clone());
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(
        r.json()["error"].as_str().unwrap().contains("hook token"),
        "{}",
        r.body
    );
    let r = post_hook(&s, &a, Some("not-the-token"), stop.clone());
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.json()["error"].is_string(), "{}", r.body);
    // Another session's token is as wrong.
    let r = post_hook(&s, &a, Some(&hook_token(&b)), stop.clone());
    assert_eq!(r.status, 403, "{}", r.body);
    let after = session(&s, &a);
    assert_eq!(
        after["status"], "ready",
        "refused hooks change nothing: {after}"
    );
    assert_eq!(after["statusSource"], "screen");
    // Its own token is taken; an unknown event is a 400 with the events it knows.
    let token = hook_token(&a);
    let r = post_hook(&s, &a, Some(&token), json!({"event": "Bogus"}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"].as_str().unwrap().contains("Stop"),
        "{}",
        r.body
    );
    let r = post_hook(&s, &a, Some(&token), stop);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["session"]["status"], "busy", "{}", r.body);
}

#[test]
fn hook_events_decide_the_status_and_say_so() {
    let (_d, s) = fake_with(&[]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    let ready = wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    assert_eq!(ready["statusSource"], "screen", "{ready}");
    let token = hook_token(&id);
    // The screen shows the agent's input prompt, quiet; its hooks say otherwise, and win.
    let steps = [
        (json!({"event": "UserPromptSubmit"}), "busy"),
        (json!({"event": "PermissionRequest"}), "blocked"),
        (json!({"event": "PostToolUse"}), "busy"),
        (
            json!({"event": "Notification", "notificationType": "permission_prompt"}),
            "blocked",
        ),
        (json!({"event": "Stop", "message": "All done."}), "ready"),
    ];
    for (body, want) in steps {
        let r = post_hook(&s, &id, Some(&token), body.clone());
        assert_eq!(r.status, 200, "{body}: {}", r.body);
        let got = &r.json()["session"];
        assert_eq!(got["status"], want, "{body}: {got}");
        assert_eq!(got["statusSource"], "hook", "{body}: {got}");
        // It holds while the quiet screen is read again.
        std::thread::sleep(Duration::from_millis(300));
        let still = session(&s, &id);
        assert_eq!(still["status"], want, "{body}: {still}");
    }
    // The Stop hook's message is the agent's reply.
    let msgs = s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"].clone();
    assert!(
        msgs.as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "agent" && m["text"] == "All done."),
        "{msgs}"
    );
    // Typed input hands the status back to the screen until the next hook event.
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "hello"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let back = wait_session(&s, &id, "back on the screen", |v| {
        v["statusSource"] == "screen" && v["status"] == "ready"
    });
    assert!(back.get("prompt").is_none(), "{back}");
}

#[test]
fn a_task_completes_on_the_agents_stop_hook_with_its_reply() {
    // The agent shows a first line and its input prompt, stays quiet for 3 s, then answers:
    // by its screen it looks done early; its hooks say it is still busy until it stops.
    let (_d, s) = fake_with(&["--hooks"]);
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": "pause and think", "providerId": "fake"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{API}/tasks/{tid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let sid = {
        let mut sid = Value::Null;
        assert!(wait_until(Duration::from_secs(20), || {
            sid = s.get(&format!("{API}/tasks/{tid}")).json()["task"]["metadata"]["sessionId"]
                .clone();
            sid.is_string()
        }));
        sid.as_str().unwrap().to_string()
    };
    let busy = wait_session(&s, &sid, "busy by its hook", |v| {
        v["statusSource"] == "hook" && v["status"] == "busy"
    });
    assert_eq!(busy["status"], "busy");
    let task = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        task["metadata"]["result"]["summary"], "Finished: pause and think",
        "{task}"
    );
    let info = session(&s, &sid);
    assert_eq!(info["status"], "ready", "{info}");
    assert_eq!(info["statusSource"], "hook", "{info}");
}

/// Starts a task for the fake agent (with its hooks) and returns its id and its session's.
fn start_task(s: &Server, description: &str) -> (String, String) {
    let r = s.post(
        &format!("{API}/tasks"),
        json!({"name": "t", "description": description, "providerId": "fake"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let tid = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{API}/tasks/{tid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let mut sid = Value::Null;
    assert!(wait_until(Duration::from_secs(20), || {
        sid = s.get(&format!("{API}/tasks/{tid}")).json()["task"]["metadata"]["sessionId"].clone();
        sid.is_string()
    }));
    (tid, sid.as_str().unwrap_or_default().to_string())
}

#[test]
fn a_turn_end_without_its_reply_completes_with_the_reply_drawn_after_it() {
    // As Gemini CLI's AfterAgent: the hook says the turn ended, carrying no reply, and the
    // reply reaches the screen only after it.
    let (_d, s) = fake_with(&["--hooks"]);
    let (tid, sid) = start_task(&s, "late answer");
    let task = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        task["metadata"]["result"]["summary"],
        "Drawn late: late answer",
        "{task}\nscreen:\n{}",
        screen(&s, &sid)
    );
    let info = session(&s, &sid);
    assert_eq!(info["status"], "ready", "{info}");
    assert_eq!(info["statusSource"], "hook", "{info}");
}

#[test]
fn hooks_reach_an_orchestra_that_requires_its_api_token() {
    // `orchestra hook` sends the API token of the session's environment besides the hook
    // token: the agent's turn still finishes by its hook.
    let dir = tempfile::tempdir().unwrap();
    let cfg = fake_agent_config(dir.path(), &["--hooks"]);
    let s = Server::start_with(&["--config", &cfg.to_string_lossy(), "--token", "sekrit-42"]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "hi there"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_session(&s, &id, "ready by its Stop hook", |v| {
        v["status"] == "ready" && v["statusSource"] == "hook"
    });
    // The hook token alone is the session's own credential: enough for its own hook, and
    // for nothing of anyone else's.
    let own = hook_token(&id);
    let hook = |sid: &str, token: &str| {
        support::raw_request(
            &s.addr,
            "POST",
            &format!("{API}/sessions/{sid}/hook"),
            Some(json!({"event": "Stop"}).to_string().as_bytes()),
            &[("X-Orchestra-Hook-Token", token)],
        )
    };
    let r = hook(&id, &own);
    assert_eq!(r.status, 200, "{}", r.body);
    let other = spawn_session(&s, json!({"providerId": "fake"}));
    let r = hook(&other, &own);
    assert_eq!(r.status, 403, "{}", r.body);
    let r = hook(&id, "not-anyones-token");
    assert_eq!(r.status, 401, "{}", r.body);
}

#[test]
fn a_permission_asked_through_a_hook_shows_the_screens_options() {
    let (_d, s) = fake_with(&["--hooks"]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "perm"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let blocked = wait_session(&s, &id, "blocked with options", |v| {
        v["status"] == "blocked"
            && v["prompt"]["options"]
                .as_array()
                .is_some_and(|o| !o.is_empty())
    });
    assert_eq!(blocked["statusSource"], "hook", "{blocked}");
    assert_eq!(blocked["prompt"]["kind"], "permission", "{blocked}");
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let done = wait_session(&s, &id, "ready by its Stop hook", |v| {
        v["status"] == "ready" && v["statusSource"] == "hook"
    });
    assert!(done.get("prompt").is_none(), "{done}");
    let msgs = s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"].clone();
    assert!(
        msgs.as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "agent" && m["text"] == "answered 1"),
        "{msgs}"
    );
}

/// A hook that says the agent asks before its dialog is drawn: blocked at once, on the
/// hook's own words (no options, so an answer is refused with a sentence saying to wait);
/// then the dialog's options, each change a `session:prompt` event.
#[test]
fn a_permission_its_hook_reports_before_the_dialog_carries_the_hooks_words() {
    let (_d, s) = fake_with(&["--hooks"]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    let mut events = Events::open(&s);
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "perm-late"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let asked = wait_session(&s, &id, "blocked by its hook", |v| v["status"] == "blocked");
    assert_eq!(
        asked["prompt"],
        json!({"kind": "permission", "text": "Permission to use Bash: rm -rf build", "options": []}),
        "{asked}"
    );
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("session:prompt"), "{}", r.body);
    let drawn = wait_session(&s, &id, "blocked on the dialog", |v| {
        v["prompt"]["options"]
            .as_array()
            .is_some_and(|o| !o.is_empty())
    });
    assert_eq!(
        drawn["prompt"]["text"], "Do you want to proceed?",
        "{drawn}"
    );
    let r = s.post(
        &format!("{API}/sessions/{id}/answer"),
        json!({"option": "1"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    wait_session(&s, &id, "ready by its Stop hook", |v| {
        v["status"] == "ready" && v["statusSource"] == "hook"
    });
    // The stream said so: every blocked session with its prompt, and each prompt once.
    let prompts = events.prompts_of(&id);
    assert_eq!(
        prompts,
        vec![
            json!("Permission to use Bash: rm -rf build"),
            json!("Do you want to proceed?"),
            Value::Null
        ]
    );
}

#[test]
fn a_turn_complete_for_a_side_turn_is_not_the_agents_turn() {
    // Codex notifies every finished turn, its title generation's too: only a turn that worked
    // on a request sent to the session finishes the agent's turn.
    let (_d, s) = fake_with(&[]);
    let id = spawn_session(&s, json!({"providerId": "fake"}));
    wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    let r = s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "hello"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    // The 201 says it is accepted; it is typed once it is listed.
    let typed = wait_until(Duration::from_secs(20), || {
        s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"]
            .as_array()
            .is_some_and(|ms| ms.iter().any(|m| m["text"] == "hello"))
    });
    assert!(typed, "hello was never typed");
    wait_session(&s, &id, "ready", |v| v["status"] == "ready");
    let token = hook_token(&id);
    let side = json!({"event": "agent-turn-complete", "message": "{\"title\":\"Say hello\"}",
                      "inputMessages": ["Generate a concise title.\n\nUser prompt:\nhello"]});
    let r = post_hook(&s, &id, Some(&token), side);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["session"]["statusSource"], "screen", "{}", r.body);
    let own = json!({"event": "agent-turn-complete", "message": "Hello to you.",
                     "inputMessages": ["hello"]});
    let r = post_hook(&s, &id, Some(&token), own);
    assert_eq!(r.json()["session"]["statusSource"], "hook", "{}", r.body);
    assert_eq!(r.json()["session"]["status"], "ready", "{}", r.body);
    let texts: Vec<String> = s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "agent")
        .filter_map(|m| m["text"].as_str().map(str::to_string))
        .collect();
    assert!(texts.iter().any(|t| t == "Hello to you."), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("title")), "{texts:?}");
}
