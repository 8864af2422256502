//! `orchestra mcp` driven by a real MCP client nobody here wrote (the official Python SDK's
//! stdio client, through tests/fixtures/mcp/driver.py) against a real daemon: the tools
//! listed, every tool called, bad arguments as tool errors with the server living on,
//! `wait_for_task` on status changes (with progress notifications) and on a question, a
//! worktree task reviewed, merged and discarded, and an agent's own credential making
//! children of its task only.

#[path = "../fixtures/mcp/client.rs"]
mod client;

use crate::support::*;
use client::{McpClient, ServerSpec, is_error, structured, text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TASKS: &str = "/api/coding-agents/tasks";

/// The SDK's python, or `None` (the test is skipped, saying why) when it cannot be installed.
fn sdk() -> Option<PathBuf> {
    match client::sdk_python() {
        Ok(p) => Some(p),
        Err(why) => {
            eprintln!("skipped: no MCP client to test with: {why}");
            None
        }
    }
}

/// `orchestra mcp` on the state directory of `s` (found through its server.json, as a user's
/// MCP configuration would find it), in `cwd`.
fn owner_client(python: &Path, s: &Server, cwd: &Path) -> McpClient {
    McpClient::start(
        python,
        &ServerSpec {
            bin: BIN,
            args: vec![
                "--state-dir".into(),
                s.state_dir.display().to_string(),
                "mcp".into(),
            ],
            env: vec![(
                "HOME".into(),
                s.state_dir.join("home").display().to_string(),
            )],
            cwd,
        },
    )
}

/// A tool's structured answer; a tool error fails the test with its text.
fn ok(c: &mut McpClient, tool: &str, args: Value) -> Value {
    let r = c.call(tool, args.clone());
    assert!(!is_error(&r), "{tool} {args}: {}", text(&r));
    structured(&r).clone()
}

/// A tool error's text; a success fails the test.
fn refused(c: &mut McpClient, tool: &str, args: Value) -> String {
    let r = c.call(tool, args.clone());
    assert!(is_error(&r), "{tool} {args} was not refused: {r}");
    text(&r)
}

/// A wait that answers at once that none of its tasks can get there any more.
fn nothing_left(c: &mut McpClient, args: Value) {
    let v = ok(c, "wait_for_task", args);
    assert!(v["arrived"].is_null() && v["timedOut"] == false, "{v}");
}

fn lines(v: &Value) -> Vec<String> {
    v["lines"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const TOOLS: [&str; 17] = [
    "list_providers",
    "create_task",
    "start_task",
    "pause_task",
    "resume_task",
    "cancel_task",
    "continue_task",
    "get_task",
    "list_tasks",
    "wait_for_task",
    "read_output",
    "send_message",
    "answer_prompt",
    "task_diff",
    "merge_task",
    "discard_task",
    "pick_variant",
];

#[test]
fn every_tool_answers_a_real_mcp_client() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let work = tempfile::tempdir().unwrap();
    let mut c = owner_client(&python, &s, work.path());
    assert_eq!(c.ready["serverInfo"]["name"], "orchestra", "{}", c.ready);

    let tools = c.list();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, TOOLS);
    for t in &tools {
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 60),
            "{t}"
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }

    let providers = ok(&mut c, "list_providers", json!({}));
    assert!(
        providers["providers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "exec"),
        "{providers}"
    );
    assert_eq!(providers["approvalPresets"][2]["id"], "auto");

    // A running task: its screen, a search of its output, a message typed to it.
    let ticking = ok(
        &mut c,
        "create_task",
        json!({"name": "ticker", "providerId": "exec", "start": true,
            "description": "i=0; while true; do i=$((i+1)); printf 'tick %s\\n' $i; sleep 0.2; done"}),
    );
    let id = ticking["id"].as_str().unwrap().to_string();
    assert_eq!(ticking["status"], "running", "{ticking}");
    // A relative directory is the MCP server's own: here, the test's temporary one.
    assert_eq!(
        ticking["workingDirectory"],
        work.path().display().to_string()
    );
    let mut screen = Value::Null;
    assert!(
        wait_until(Duration::from_secs(20), || {
            screen = ok(&mut c, "read_output", json!({"id": id, "lines": 5}));
            lines(&screen).iter().any(|l| l.starts_with("tick 3"))
        }),
        "{screen}"
    );
    assert_eq!(screen["source"], "screen");
    assert!(lines(&screen).len() <= 5, "{screen}");
    let found = ok(&mut c, "read_output", json!({"id": id, "search": "tick 2"}));
    assert_eq!(found["source"], "output");
    assert!(
        !lines(&found).is_empty() && lines(&found).iter().all(|l| l.contains("tick 2")),
        "{found}"
    );
    let sent = ok(&mut c, "send_message", json!({"id": id, "text": "hello"}));
    assert_eq!(sent["message"]["text"], "hello", "{sent}");

    // Its lifecycle.
    assert_eq!(
        ok(&mut c, "pause_task", json!({"id": id}))["status"],
        "paused"
    );
    assert_eq!(
        ok(&mut c, "resume_task", json!({"id": id}))["status"],
        "running"
    );
    let got = ok(&mut c, "get_task", json!({"id": id}));
    assert_eq!(got["status"], "running");
    assert!(
        got["lastOutput"].as_array().is_some_and(|l| !l.is_empty()),
        "{got}"
    );
    assert_eq!(
        ok(&mut c, "cancel_task", json!({"id": id, "children": true}))["status"],
        "cancelled"
    );
    let waited = ok(
        &mut c,
        "wait_for_task",
        json!({"id": id, "timeoutSeconds": 10}),
    );
    assert_eq!(waited["arrived"]["status"], "cancelled", "{waited}");
    // Returned once: a second wait says at once that nothing is left to come.
    nothing_left(&mut c, json!({"id": id, "timeoutSeconds": 10}));
    // exec cannot resume a conversation: a 409, as a sentence with what to do.
    let e = refused(
        &mut c,
        "continue_task",
        json!({"id": id, "message": "more"}),
    );
    assert!(e.contains("only a finished task continues"), "{e}");
    // A final task cannot be paused; the sentence says what can be.
    let e = refused(&mut c, "pause_task", json!({"id": id}));
    assert!(e.contains("get_task shows its status"), "{e}");

    // A pending task, started later; listed by status.
    let later = ok(
        &mut c,
        "create_task",
        json!({"name": "later", "providerId": "exec", "description": "printf 'done now\\n'"}),
    );
    assert_eq!(later["status"], "pending");
    let later_id = later["id"].as_str().unwrap().to_string();
    assert_eq!(
        ok(&mut c, "start_task", json!({"id": later_id}))["status"],
        "running"
    );
    let done = ok(
        &mut c,
        "wait_for_task",
        json!({"id": later_id, "timeoutSeconds": 30}),
    );
    assert_eq!(done["arrived"]["status"], "completed", "{done}");
    let listed = ok(&mut c, "list_tasks", json!({"status": "completed"}));
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, [later_id.as_str()], "{listed}");
    let out = ok(&mut c, "read_output", json!({"id": later_id}));
    assert!(lines(&out).iter().any(|l| l == "done now"), "{out}");

    // Worktree tools on a task without a worktree: refused with the daemon's sentence.
    let e = refused(&mut c, "task_diff", json!({"id": later_id}));
    assert!(
        e.contains("wait for it (wait_for_task) or cancel it"),
        "{e}"
    );
    refused(&mut c, "merge_task", json!({"id": later_id}));
    refused(&mut c, "discard_task", json!({"id": later_id}));
    let e = refused(
        &mut c,
        "answer_prompt",
        json!({"id": later_id, "option": 1}),
    );
    assert!(!e.is_empty());
}

#[test]
fn bad_arguments_are_tool_errors_and_the_server_lives_on() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let work = tempfile::tempdir().unwrap();
    let mut c = owner_client(&python, &s, work.path());
    let id = create_task_id(&s, "exists");
    for (tool, args, says) in [
        ("get_task", json!({}), "missing field `id`"),
        ("get_task", json!({"id": 5}), "invalid type"),
        (
            "get_task",
            json!({"task_id": "x"}),
            "unknown field `task_id`",
        ),
        (
            "get_task",
            json!({"id": "no-such-task"}),
            "list_tasks shows the ids",
        ),
        (
            "create_task",
            json!({"name": "   ", "providerId": "exec"}),
            "fix the argument",
        ),
        (
            "create_task",
            json!({"name": "x", "isolation": "sideways"}),
            "unknown variant `sideways`",
        ),
        (
            "create_task",
            json!({"name": "x", "providerId": "no-such-agent", "description": "d"}),
            "no-such-agent",
        ),
        (
            "list_tasks",
            json!({"status": "asleep"}),
            "unknown variant `asleep`",
        ),
        ("wait_for_task", json!({}), "give `id` or `ids`"),
        (
            "wait_for_task",
            json!({"id": id, "timeoutSeconds": -1}),
            "timeoutSeconds must be",
        ),
        (
            "wait_for_task",
            json!({"id": id, "until": ["done"]}),
            "unknown variant `done`",
        ),
        (
            "wait_for_task",
            json!({"ids": [id, "no-such-task"], "timeoutSeconds": 1}),
            "no-such-task",
        ),
        (
            "read_output",
            json!({"id": id, "lines": "many"}),
            "invalid type",
        ),
        ("send_message", json!({"id": id}), "missing field `text`"),
        (
            "send_message",
            json!({"id": id, "text": "hi"}),
            "has no session",
        ),
        (
            "answer_prompt",
            json!({"id": id, "option": [1]}),
            "bad arguments for answer_prompt",
        ),
        (
            "pause_task",
            json!({"id": id, "children": "yes"}),
            "invalid type",
        ),
    ] {
        let e = refused(&mut c, tool, args.clone());
        assert!(e.contains(says), "{tool} {args}: {e}");
    }
    // A tool that does not exist is the protocol's error (invalid params), not a crash.
    let tag = c.call_async("no_such_tool", json!({}), false);
    let v = c.answer(&tag, Duration::from_secs(30)).expect("answered");
    assert_eq!(v["op"], "error", "{v}");
    // And the server is still there.
    assert!(c.alive());
    assert_eq!(c.list().len(), TOOLS.len());
    assert_eq!(
        ok(&mut c, "get_task", json!({"id": id}))["status"],
        "pending"
    );
}

#[test]
fn wait_for_task_returns_on_a_status_change_and_reports_progress() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let work = tempfile::tempdir().unwrap();
    let mut c = owner_client(&python, &s, work.path());
    let id = create_task_id(&s, "driven from outside");

    let tag = c.call_async(
        "wait_for_task",
        json!({"id": id, "timeoutSeconds": 60}),
        true,
    );
    // The first notification says the wait is under way (subscribed, the task read).
    let first = c
        .progress(&tag, Duration::from_secs(30))
        .expect("a progress notification");
    assert!(
        first["message"].as_str().unwrap().contains("pending"),
        "{first}"
    );
    // Another client moves it: running is reported as progress, completed ends the wait.
    let r = s.patch(&format!("{TASKS}/{id}"), json!({"status": "running"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let running = c
        .progress(&tag, Duration::from_secs(30))
        .expect("progress on running");
    assert!(
        running["message"].as_str().unwrap().contains("running"),
        "{running}"
    );
    assert!(
        running["progress"].as_f64() > first["progress"].as_f64(),
        "{running}"
    );
    let r = s.patch(&format!("{TASKS}/{id}"), json!({"status": "completed"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let v = c
        .answer(&tag, Duration::from_secs(30))
        .expect("the wait answered");
    let arrived = &v["result"]["structuredContent"]["arrived"];
    assert_eq!(arrived["id"], id.as_str(), "{v}");
    assert_eq!(arrived["status"], "completed", "{v}");

    // On timeout: not an error; where the task is.
    let other = create_task_id(&s, "stays pending");
    let v = ok(
        &mut c,
        "wait_for_task",
        json!({"id": other, "timeoutSeconds": 0.3}),
    );
    assert_eq!(v["timedOut"], true, "{v}");
    assert!(v["arrived"].is_null());
    assert_eq!(v["tasks"][0]["status"], "pending", "{v}");

    // Several: each arrival once, in the order asked, then nothing left to come.
    let a = create_task_id(&s, "a");
    let b = create_task_id(&s, "b");
    for t in [&a, &b] {
        assert_eq!(s.post_empty(&format!("{TASKS}/{t}/cancel")).status, 200);
    }
    let ids = json!([a, b]);
    let first = ok(
        &mut c,
        "wait_for_task",
        json!({"ids": ids, "timeoutSeconds": 10}),
    );
    assert_eq!(first["arrived"]["id"], a.as_str(), "{first}");
    assert_eq!(first["others"][0]["status"], "cancelled", "{first}");
    let second = ok(
        &mut c,
        "wait_for_task",
        json!({"ids": ids, "timeoutSeconds": 10}),
    );
    assert_eq!(second["arrived"]["id"], b.as_str(), "{second}");
    nothing_left(&mut c, json!({"ids": ids, "timeoutSeconds": 10}));
    // A status asked for by name, the other one never reached: that too is said at once.
    nothing_left(
        &mut c,
        json!({"id": a, "until": ["running"], "timeoutSeconds": 10}),
    );
}

#[test]
fn wait_for_task_returns_blocked_with_the_prompt_and_answer_prompt_answers_it() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let work = tempfile::tempdir().unwrap();
    let mut c = owner_client(&python, &s, work.path());
    let task = ok(
        &mut c,
        "create_task",
        json!({"name": "asks", "providerId": "exec", "start": true,
            "description": "python3 -c \"a = input('Keep going? [y/n] '); print('got', a)\""}),
    );
    let id = task["id"].as_str().unwrap().to_string();
    let v = ok(
        &mut c,
        "wait_for_task",
        json!({"id": id, "until": ["blocked"], "timeoutSeconds": 30}),
    );
    let arrived = &v["arrived"];
    assert_eq!(arrived["blocked"], true, "{v}");
    assert_eq!(arrived["prompt"]["text"], "Keep going? [y/n]", "{v}");
    let key = arrived["prompt"]["options"][0]["key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(key, "y", "{v}");
    let answered = ok(&mut c, "answer_prompt", json!({"id": id, "option": key}));
    assert_eq!(answered["id"], id.as_str());
    let v = ok(
        &mut c,
        "wait_for_task",
        json!({"id": id, "timeoutSeconds": 30}),
    );
    assert_eq!(v["arrived"]["status"], "completed", "{v}");
    let out = ok(&mut c, "read_output", json!({"id": id, "search": "got"}));
    assert_eq!(lines(&out), ["got y"], "{out}");
}

#[test]
fn a_worktree_task_is_reviewed_merged_or_discarded() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let repo = git_repo();
    let mut c = owner_client(&python, &s, repo.path());
    let run = |c: &mut McpClient, name: &str, command: &str| {
        let t = ok(
            c,
            "create_task",
            json!({"name": name, "providerId": "exec", "isolation": "worktree", "start": true,
                "description": command}),
        );
        let id = t["id"].as_str().unwrap().to_string();
        let v = ok(c, "wait_for_task", json!({"id": id, "timeoutSeconds": 60}));
        assert_eq!(v["arrived"]["status"], "completed", "{v}");
        assert!(v["arrived"]["worktree"]["branch"].is_string(), "{v}");
        id
    };
    let id = run(&mut c, "hello", "printf 'hello\\n' > hello.txt");
    let d = ok(&mut c, "task_diff", json!({"id": id}));
    let files: Vec<&str> = d["diff"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(files, ["hello.txt"], "{d}");
    assert!(
        d["diff"]["patch"].as_str().unwrap().contains("+hello"),
        "{d}"
    );
    let m = ok(&mut c, "merge_task", json!({"id": id}));
    assert_eq!(m["task"]["worktree"]["outcome"], "merged", "{m}");
    assert_eq!(git(repo.path(), &["show", "main:hello.txt"]), "hello");
    // Merged already: refused, with what to do.
    let e = refused(&mut c, "merge_task", json!({"id": id}));
    assert!(e.contains("get_task shows its worktree"), "{e}");

    let id = run(&mut c, "unwanted", "printf 'x\\n' > x.txt");
    let gone = ok(&mut c, "discard_task", json!({"id": id}));
    assert!(
        gone["snapshotRef"]
            .as_str()
            .unwrap()
            .starts_with("refs/orchestra/snapshots/"),
        "{gone}"
    );
    assert_eq!(gone["task"]["worktree"]["outcome"], "discarded", "{gone}");
}

#[test]
fn an_agents_own_credential_makes_children_of_its_task_only() {
    let Some(python) = sdk() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let config = fake_agent_config(tmp.path(), &[]);
    let s = Server::start_with(&["--config", config.to_str().unwrap()]);
    // The parent: a shell under `safe`, whose session holds its own credential.
    let (parent_id, _sid, credential) = started_agent_task(&s, "parent", Some("safe"));
    // As the agent's own MCP server sees it: the environment of its session.
    let mut c = McpClient::start(
        &python,
        &ServerSpec {
            bin: BIN,
            args: vec!["mcp".into()],
            env: vec![
                ("ORCHESTRA_URL".into(), s.url.clone()),
                ("ORCHESTRA_TOKEN".into(), credential),
                (
                    "ORCHESTRA_STATE_DIR".into(),
                    tmp.path().join("no-state").display().to_string(),
                ),
            ],
            cwd: tmp.path(),
        },
    );
    let e = refused(
        &mut c,
        "create_task",
        json!({"name": "wider", "providerId": "fake", "description": "d", "approval": "auto"}),
    );
    assert!(
        e.contains("cannot get a wider approval preset (auto) than its parent's agent has (safe)"),
        "{e}"
    );
    assert!(e.contains("leave approval out"), "{e}");
    let e = refused(
        &mut c,
        "create_task",
        json!({"name": "cmd", "providerId": "exec", "description": "true"}),
    );
    assert!(e.contains("runs its command without asking"), "{e}");
    let child = ok(
        &mut c,
        "create_task",
        json!({"name": "child", "providerId": "fake", "description": "say hello", "answers": "parent"}),
    );
    assert_eq!(child["parentTaskId"], parent_id.as_str(), "{child}");
    assert_eq!(child["approval"], "safe", "{child}");
    assert_eq!(child["answers"], "parent", "{child}");
    let family = ok(&mut c, "list_tasks", json!({}));
    let mut ids: Vec<&str> = family["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    ids.sort_unstable();
    let mut want = vec![parent_id.as_str(), child["id"].as_str().unwrap()];
    want.sort_unstable();
    assert_eq!(ids, want, "{family}");
    let children = ok(&mut c, "list_tasks", json!({"parent": parent_id}));
    assert_eq!(children["tasks"].as_array().unwrap().len(), 1, "{children}");
    // Someone else's task is out of its reach.
    let stranger = create_task_id(&s, "not yours");
    let e = refused(&mut c, "cancel_task", json!({"id": stranger}));
    assert!(!e.is_empty());
    drop(c);
    assert_eq!(
        s.post_empty(&format!("{TASKS}/{parent_id}/cancel")).status,
        200
    );
}

#[test]
fn a_session_file_names_the_orchestra_and_its_credential() {
    use std::os::unix::fs::PermissionsExt;
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let id = create_task_id(&s, "seen through the file");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("session.json");
    std::fs::write(&file, json!({"url": s.addr, "token": s.token}).to_string()).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut c = McpClient::start(
        &python,
        &ServerSpec {
            bin: BIN,
            args: vec![
                "mcp".into(),
                "--session-file".into(),
                file.display().to_string(),
            ],
            // No state directory to fall back on: the file alone says where to go.
            env: vec![(
                "ORCHESTRA_STATE_DIR".into(),
                tmp.path().join("none").display().to_string(),
            )],
            cwd: tmp.path(),
        },
    );
    assert_eq!(
        ok(&mut c, "get_task", json!({"id": id}))["status"],
        "pending"
    );
}

/// The 50 children: a parent's agent makes 50 children through `orchestra mcp` with
/// its own credential, they are started at the same moment, and its waits on all of them
/// return each child once (every one completed, with one run), then say nothing is left.
#[test]
fn a_parent_waiting_on_fifty_children_started_at_once_gets_each_once() {
    let Some(python) = sdk() else { return };
    let s = Server::start_with(&["--max-sessions", "64"]);
    let dir = tempfile::tempdir().expect("tempdir");
    // The parent: an agent session under auto, whose credential the MCP server is given.
    let (parent, _sid, credential) = started_agent_task(&s, "parent", Some("auto"));
    let mut c = McpClient::start(
        &python,
        &ServerSpec {
            bin: BIN,
            args: vec!["mcp".into()],
            env: vec![
                ("ORCHESTRA_URL".into(), s.url.clone()),
                ("ORCHESTRA_TOKEN".into(), credential),
                (
                    "HOME".into(),
                    s.state_dir.join("home").display().to_string(),
                ),
            ],
            cwd: dir.path(),
        },
    );
    let children: Vec<String> = (0..50)
        .map(|n| {
            let t = ok(
                &mut c,
                "create_task",
                json!({
                    "name": format!("child {n}"),
                    "providerId": "exec",
                    "description": format!("printf 'ran\\n' >> run-{n}.log"),
                }),
            );
            assert_eq!(t["parentTaskId"], parent.as_str(), "{t}");
            t["id"].as_str().expect("id").to_string()
        })
        .collect();
    let barrier = std::sync::Barrier::new(children.len());
    std::thread::scope(|scope| {
        for id in &children {
            let (s, barrier) = (&s, &barrier);
            scope.spawn(move || {
                barrier.wait();
                let r = s.post_empty(&format!("{TASKS}/{id}/start"));
                assert_eq!(r.status, 200, "{id}: {}", r.body);
            });
        }
    });
    let ids = json!(children);
    let mut arrived = Vec::new();
    for _ in 0..children.len() {
        let v = ok(
            &mut c,
            "wait_for_task",
            json!({"ids": ids, "timeoutSeconds": 60}),
        );
        assert_eq!(v["arrived"]["status"], "completed", "{v}");
        arrived.push(v["arrived"]["id"].as_str().expect("arrived id").to_string());
    }
    nothing_left(&mut c, json!({"ids": ids, "timeoutSeconds": 10}));
    arrived.sort();
    let mut want = children.clone();
    want.sort();
    assert_eq!(arrived, want, "each child arrives exactly once");
    for n in 0..children.len() {
        let log =
            std::fs::read_to_string(dir.path().join(format!("run-{n}.log"))).unwrap_or_default();
        assert_eq!(log, "ran\n", "child {n} ran once");
    }
}

/// The same question asked twice is two arrivals: a wait returns the second once the first
/// was answered (what was returned is forgotten once the task is no longer there).
#[test]
fn the_same_question_asked_again_arrives_again() {
    let Some(python) = sdk() else { return };
    let s = Server::start();
    let work = tempfile::tempdir().unwrap();
    let mut c = owner_client(&python, &s, work.path());
    let ask = "input('Keep going? [y/n] ')";
    let task = ok(
        &mut c,
        "create_task",
        json!({"name": "asks twice", "providerId": "exec", "start": true,
            "description": format!("python3 -c \"{ask}; {ask}; print('both answered')\"")}),
    );
    let id = task["id"].as_str().unwrap().to_string();
    for round in 0..2 {
        let v = ok(
            &mut c,
            "wait_for_task",
            json!({"id": id, "until": ["blocked"], "timeoutSeconds": 30}),
        );
        assert_eq!(v["arrived"]["blocked"], true, "round {round}: {v}");
        ok(&mut c, "answer_prompt", json!({"id": id, "option": "y"}));
    }
    let v = ok(
        &mut c,
        "wait_for_task",
        json!({"id": id, "timeoutSeconds": 30}),
    );
    assert_eq!(v["arrived"]["status"], "completed", "{v}");
    let out = ok(&mut c, "read_output", json!({"id": id, "search": "both"}));
    assert_eq!(lines(&out), ["both answered"], "{out}");
}
