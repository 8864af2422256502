//! Sessions through the API, against real processes: bash, vim, less, python3.

use crate::support;

use serde_json::json;
use std::time::Duration;
use support::*;

const SESSIONS: &str = "/api/coding-agents/sessions";

#[test]
fn bash_session_lifecycle_leaves_no_process() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let id = spawn_session(
        &s,
        json!({"task": "echo hello-$((6*7))", "providerId": "shell", "workingDirectory": dir.path(), "cols": 100, "rows": 30}),
    );
    wait_screen(&s, &id, "hello-42");
    let info = s.get(&format!("{SESSIONS}/{id}")).json()["session"].clone();
    assert_eq!(info["providerId"], "shell");
    assert_eq!(info["ended"], false);
    assert_eq!(info["cols"], 100);
    assert!(info["pid"].as_u64().unwrap() > 1);
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["status"] == "ready"
    }));

    // Typed into: a message, then its output.
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "sleep 1000 & echo bg-started"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["message"]["role"], "user");
    wait_screen(&s, &id, "bg-started");
    assert!(wait_until(Duration::from_secs(5), || session_pids(&id)
        .len()
        >= 2));

    // Paused: every process of the group is stopped.
    let r = s.post_empty(&format!("{SESSIONS}/{id}/pause"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["session"]["status"], "paused");
    let pids = session_pids(&id);
    assert!(wait_until(Duration::from_secs(5), || pids
        .iter()
        .all(|p| process_state(*p) == Some('T'))));
    let r = s.post_empty(&format!("{SESSIONS}/{id}/resume"));
    assert_eq!(r.status, 200);
    assert_ne!(r.json()["session"]["status"], "paused");
    assert!(wait_until(Duration::from_secs(5), || pids
        .iter()
        .all(|p| process_state(*p) != Some('T'))));
    // Continued at its prompt, with nothing printing: waiting for input again.
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["status"] == "ready"
    }));

    // Resized: the program sees the new size.
    let r = s.post(
        &format!("{SESSIONS}/{id}/resize"),
        json!({"cols": 70, "rows": 20}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["session"]["cols"], 70);
    s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "stty size"}),
    );
    wait_screen(&s, &id, "20 70");
    let peek = s.get(&format!("{SESSIONS}/{id}/peek")).json();
    assert_eq!(peek["cols"], 70);
    assert_eq!(peek["rows"], 20);
    assert_eq!(peek["screen"].as_str().unwrap().split('\n').count(), 20);

    // Deleted: no process of it is left, and it stays listed as ended.
    let r = s.delete(&format!("{SESSIONS}/{id}"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["session"]["ended"], true);
    assert!(
        session_pids(&id).is_empty(),
        "left behind: {:?}",
        session_pids(&id)
    );
    let listed = s.get(SESSIONS).json()["sessions"].clone();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == id.as_str() && x["ended"] == true)
    );
    // Idempotent, and an ended session takes no messages.
    assert_eq!(s.delete(&format!("{SESSIONS}/{id}")).status, 200);
    assert_eq!(
        s.post(&format!("{SESSIONS}/{id}/messages"), json!({"text": "x"}))
            .status,
        409
    );
    assert_eq!(
        s.post(
            &format!("{SESSIONS}/{id}/resize"),
            json!({"cols": 80, "rows": 24})
        )
        .status,
        409
    );
    assert_eq!(s.post_empty(&format!("{SESSIONS}/{id}/pause")).status, 409);
}

#[test]
fn messages_record_the_agents_reply() {
    let s = Server::start();
    let id = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["status"] == "ready"
    }));
    s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "printf 'alpha\\nbeta\\n'"}),
    );
    let mut msgs = serde_json::Value::Null;
    assert!(
        wait_until(Duration::from_secs(10), || {
            msgs = s.get(&format!("{SESSIONS}/{id}/messages")).json()["messages"].clone();
            msgs.as_array()
                .is_some_and(|m| m.iter().any(|x| x["role"] == "agent"))
        }),
        "no agent reply: {msgs}"
    );
    let reply = msgs
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "agent")
        .unwrap();
    assert_eq!(reply["text"], "alpha\nbeta", "{msgs}");
    assert!(reply["id"].is_string() && reply["at"].is_i64());
    // Keys: ctrl-c interrupts a running command.
    s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "sleep 1000"}),
    );
    // Interrupt only once the command runs, as a person would.
    assert!(wait_until(Duration::from_secs(10), || session_pids(&id)
        .len()
        >= 2));
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"keys": ["ctrl-c"]}),
    );
    assert_eq!(r.status, 201);
    s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "echo after-$((1+1))"}),
    );
    wait_screen(&s, &id, "after-2");
    s.delete(&format!("{SESSIONS}/{id}"));
}

#[test]
fn session_errors() {
    let s = Server::start();
    assert_eq!(s.get(&format!("{SESSIONS}/nope")).status, 404);
    assert_eq!(s.delete(&format!("{SESSIONS}/nope")).status, 404);
    assert_eq!(
        s.post(&format!("{SESSIONS}/nope/messages"), json!({"text": "x"}))
            .status,
        404
    );
    assert_eq!(s.get(&format!("{SESSIONS}/nope/peek")).status, 404);
    for (what, body) in [
        (
            "unknown provider",
            json!({"task": "x", "providerId": "nope"}),
        ),
        (
            "not a dir",
            json!({"task": "x", "providerId": "shell", "workingDirectory": "/etc/hostname"}),
        ),
        (
            "missing dir",
            json!({"task": "x", "providerId": "shell", "workingDirectory": "/no/such/dir"}),
        ),
        ("task a number", json!({"task": 1, "providerId": "shell"})),
        (
            "cols a string",
            json!({"task": "x", "providerId": "shell", "cols": "80"}),
        ),
        (
            "rows zero",
            json!({"task": "x", "providerId": "shell", "rows": 0}),
        ),
    ] {
        let r = s.post(SESSIONS, body);
        assert_eq!(r.status, 400, "{what}: {}", r.body);
        assert!(r.json()["error"].is_string());
    }
    let id = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    for body in [
        json!({}),
        json!({"text": 1}),
        json!({"keys": "enter"}),
        json!({"keys": ["no-such-key"]}),
        json!({"text": "a", "keys": ["enter"]}),
    ] {
        let r = s.post(&format!("{SESSIONS}/{id}/messages"), body.clone());
        assert_eq!(r.status, 400, "{body}: {}", r.body);
    }
    assert_eq!(
        s.post(&format!("{SESSIONS}/{id}/resize"), json!({"cols": 80}))
            .status,
        400
    );
    assert_eq!(
        s.get(&format!("{SESSIONS}/{id}/peek?lines=abc")).status,
        400
    );
    let r = s.post(&format!("{SESSIONS}/{id}/answer"), json!({"option": "1"}));
    assert_eq!(r.status, 409, "not blocked: {}", r.body);
    s.delete(&format!("{SESSIONS}/{id}"));
}

#[test]
fn no_provider_and_no_cli_is_503_naming_what_was_looked_for() {
    let s = Server::start_with(&["--default-provider", ""]);
    let r = s.post(SESSIONS, json!({"task": "x"}));
    // With an empty default, the first installed coding-agent CLI is used; none on PATH here
    // unless one is installed, in which case this spawns it.
    if r.status == 503 {
        let e = r.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains("claude") && e.contains("codex"), "{e}");
    } else {
        assert_eq!(r.status, 201, "{}", r.body);
        s.delete(&format!(
            "{SESSIONS}/{}",
            r.json()["sessionId"].as_str().unwrap()
        ));
    }
}

#[test]
fn max_sessions_is_429() {
    let s = Server::start_with(&["--max-sessions", "2"]);
    let a = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    let b = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    let r = s.post(SESSIONS, json!({"task": "", "providerId": "shell"}));
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("max-sessions"));
    s.delete(&format!("{SESSIONS}/{a}"));
    let c = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    for id in [b, c] {
        s.delete(&format!("{SESSIONS}/{id}"));
    }
}

#[test]
fn peek_shows_vim_less_and_python_as_a_terminal_would() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        "first line of notes\nsecond line\n",
    )
    .unwrap();
    let d = dir.path().to_string_lossy().to_string();

    let vim = spawn_session(
        &s,
        json!({"task": "vim -u NONE -N notes.txt", "providerId": "shell", "workingDirectory": d}),
    );
    wait_screen(&s, &vim, "first line of notes");
    wait_screen(&s, &vim, "~");
    let peek = s.get(&format!("{SESSIONS}/{vim}/peek?ansi=1")).json();
    assert!(
        peek["screenAnsi"]
            .as_str()
            .is_some_and(|a| a.contains('\u{1b}'))
    );
    s.post(
        &format!("{SESSIONS}/{vim}/messages"),
        json!({"keys": ["esc"]}),
    );
    s.post(
        &format!("{SESSIONS}/{vim}/messages"),
        json!({"text": ":q!"}),
    );
    assert!(wait_until(Duration::from_secs(10), || !screen(&s, &vim)
        .contains("second line")));

    let less = spawn_session(
        &s,
        json!({"task": "seq 1 500 | less", "providerId": "shell", "workingDirectory": d, "rows": 24}),
    );
    wait_screen(&s, &less, "23");
    let sc = screen(&s, &less);
    assert!(!sc.contains("499"), "less shows one page: {sc}");
    s.post(
        &format!("{SESSIONS}/{less}/messages"),
        json!({"keys": ["G"]}),
    );
    wait_screen(&s, &less, "500");
    s.post(
        &format!("{SESSIONS}/{less}/messages"),
        json!({"keys": ["q"]}),
    );

    let py = spawn_session(
        &s,
        json!({"task": "python3 -q", "providerId": "shell", "workingDirectory": d}),
    );
    wait_screen(&s, &py, ">>>");
    s.post(
        &format!("{SESSIONS}/{py}/messages"),
        json!({"text": "print(6*7, 'py')"}),
    );
    wait_screen(&s, &py, "42 py");

    let with_scrollback = spawn_session(
        &s,
        json!({"task": "seq 1 200", "providerId": "shell", "rows": 10}),
    );
    wait_screen(&s, &with_scrollback, "199\n200");
    let peek = s
        .get(&format!("{SESSIONS}/{with_scrollback}/peek?lines=50"))
        .json();
    let sb = peek["scrollback"].as_array().unwrap();
    assert_eq!(sb.len(), 50);
    assert!(peek["cursor"]["row"].is_u64());

    for id in [vim, less, py, with_scrollback] {
        s.delete(&format!("{SESSIONS}/{id}"));
        assert!(session_pids(&id).is_empty());
    }
}

#[test]
fn flood_and_sigterm_ignoring_children_are_handled() {
    let s = Server::start_with(&["--grace", "1"]);
    let flood = spawn_session(
        &s,
        json!({"task": "yes flood-line-with-some-text", "providerId": "exec"}),
    );
    let stubborn = spawn_session(
        &s,
        json!({"task": "trap '' TERM HUP; setsid sleep 1001 & echo armed; while true; do sleep 1; done", "providerId": "exec"}),
    );
    wait_screen(&s, &stubborn, "armed");
    wait_screen(&s, &flood, "flood-line");
    // The server stays responsive under the flood.
    assert_eq!(s.get("/api/status").status, 200);
    for id in [&flood, &stubborn] {
        let r = s.delete(&format!("{SESSIONS}/{id}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["session"]["ended"], true);
        assert!(
            session_pids(id).is_empty(),
            "left behind for {id}: {:?}",
            session_pids(id)
        );
    }
    let info = s.get(&format!("{SESSIONS}/{stubborn}")).json()["session"].clone();
    assert_eq!(info["signal"], "SIGKILL", "{info}");
}

#[test]
fn exec_session_ends_with_the_commands_status() {
    let s = Server::start();
    let id = spawn_session(
        &s,
        json!({"task": "echo out; exit 7", "providerId": "exec"}),
    );
    assert!(wait_until(Duration::from_secs(10), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["ended"] == true
    }));
    let info = s.get(&format!("{SESSIONS}/{id}")).json()["session"].clone();
    assert_eq!(info["exitCode"], 7);
    assert_eq!(info["status"], "exited");
    assert!(info["endedAt"].is_i64());
    assert!(screen(&s, &id).contains("out"));
}

#[test]
fn a_session_is_never_seen_exited_before_its_end_is_recorded() {
    // Status and end are written together: every read of an `exited` session has `ended`,
    // its exit code and its end time.
    let s = Server::start();
    for _ in 0..10 {
        let id = spawn_session(&s, json!({"task": "exit 4", "providerId": "exec"}));
        let mut torn = None;
        let ended = wait_until(Duration::from_secs(10), || {
            let info = s.get(&format!("{SESSIONS}/{id}")).json()["session"].clone();
            if info["status"] == "exited"
                && (info["ended"] != true || info["exitCode"] != 4 || !info["endedAt"].is_i64())
            {
                torn = Some(info.clone());
            }
            info["ended"] == true
        });
        assert!(ended);
        assert_eq!(torn, None, "read exited before its end was recorded");
    }
}

#[test]
fn kill_9_of_orchestra_takes_the_children_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let a = spawn_session(
        &s,
        json!({"task": "sleep 1000 & echo job-started", "providerId": "shell"}),
    );
    let b = spawn_session(&s, json!({"task": "sleep 1002", "providerId": "exec"}));
    // A daemon that left the session and ignores hang-up and termination.
    let c = spawn_session(
        &s,
        json!({"task": "setsid sh -c 'trap \"\" HUP TERM; sleep 1003' & trap '' HUP TERM; echo daemon-up; sleep 1004", "providerId": "exec"}),
    );
    wait_screen(&s, &c, "daemon-up");
    assert!(wait_until(Duration::from_secs(5), || session_pids(&c)
        .len()
        >= 3));
    wait_screen(&s, &a, "job-started");
    assert!(wait_until(Duration::from_secs(5), || !session_pids(&b).is_empty()));
    s.crash();
    let gone = wait_until(Duration::from_secs(5), || {
        session_pids(&a).is_empty() && session_pids(&b).is_empty() && session_pids(&c).is_empty()
    });
    let left: Vec<u32> = session_pids(&a)
        .into_iter()
        .chain(session_pids(&b))
        .chain(session_pids(&c))
        .collect();
    for p in &left {
        // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(gone, "left running after kill -9: {left:?}");
    // After a restart the sessions are listed as ended.
    let s = Server::start_in(dir.path(), &[]);
    let listed = s.get(SESSIONS).json()["sessions"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["ended"] == true)
    );
}

#[test]
fn session_events_reach_the_stream() {
    let s = Server::start();
    let mut events = Events::open(&s);
    let id = spawn_session(&s, json!({"task": "echo x", "providerId": "exec"}));
    let mut seen = Vec::new();
    while let Some((name, data)) = events.next() {
        assert_eq!(data["sessionId"], id.as_str(), "{data}");
        seen.push(name.clone());
        if name == "session:exited" {
            break;
        }
    }
    assert_eq!(
        seen.first().map(String::as_str),
        Some("session:started"),
        "{seen:?}"
    );
    assert!(seen.contains(&"session:exited".to_string()), "{seen:?}");
}

#[test]
fn approval_is_one_of_the_presets_or_a_400_naming_them() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    for bad in [json!("yolo"), json!("")] {
        let r = s.post(
            SESSIONS,
            json!({"providerId": "shell", "workingDirectory": dir.path(), "approval": bad}),
        );
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            r.json()["error"],
            format!("unknown approval {bad}: use manual, safe or auto")
        );
        let r = s.post(
            "/api/coding-agents/tasks",
            json!({"name": "n", "providerId": "shell", "workingDirectory": dir.path(), "approval": bad}),
        );
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            r.json()["error"],
            format!("unknown approval {bad}: use manual, safe or auto")
        );
    }
    assert_eq!(s.get(SESSIONS).json()["sessions"], json!([]));
    // A preset given is the one the session runs under; none given is `safe`.
    let id = spawn_session(
        &s,
        json!({"providerId": "shell", "workingDirectory": dir.path(), "approval": "manual"}),
    );
    assert_eq!(
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["approval"],
        "manual"
    );
    let pids = session_pids(&id);
    assert_eq!(s.delete(&format!("{SESSIONS}/{id}")).status, 200);
    assert!(wait_until(Duration::from_secs(10), || pids
        .iter()
        .all(|p| process_state(*p).is_none_or(|st| st == 'Z'))));
    let t = create_task(
        &s,
        "t",
        json!({"providerId": "shell", "workingDirectory": dir.path()}),
    );
    assert!(t["metadata"].get("approval").is_none(), "{t}");
    let t = create_task(
        &s,
        "t",
        json!({"providerId": "shell", "workingDirectory": dir.path(), "approval": "auto"}),
    );
    assert_eq!(t["metadata"]["approval"], "auto");
}

/// Every event the stream sends reads back as the wire type clients decode, named as its
/// `type` says: a session's life (started, status, message, exited) and its task's.
#[test]
fn events_on_the_stream_are_wire_events() {
    use orchestra_proto::wire::{Event, EventFrame, Role, SessionEventKind, TaskEventKind};
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let mut events = Events::open(&s);
    let t = create_task(
        &s,
        "ev",
        json!({"description": "echo wire-$((6*7)); exit 0", "providerId": "exec", "workingDirectory": dir.path()}),
    );
    let id = t["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post_empty(&format!("/api/coding-agents/tasks/{id}/start"))
            .status,
        200
    );
    let sid = spawn_session(
        &s,
        json!({"providerId": "shell", "workingDirectory": dir.path()}),
    );
    let r = s.post(
        &format!("{SESSIONS}/{sid}/messages"),
        json!({"text": "echo said-$((6*7))"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(s.delete(&format!("{SESSIONS}/{sid}")).status, 200);
    let mut seen = std::collections::BTreeSet::new();
    let wanted = [
        "task:created",
        "task:started",
        "task:completed",
        "session:started",
        "session:message",
        "session:exited",
    ];
    while !wanted.iter().all(|w| seen.contains(*w)) {
        let Some((name, data)) = events.next() else {
            panic!("the stream ended; seen {seen:?}")
        };
        assert_eq!(data["type"], name.as_str(), "{data}");
        let frame: EventFrame = serde_json::from_value(data.clone())
            .unwrap_or_else(|e| panic!("{name} is no wire event ({e}): {data}"));
        let EventFrame::Change(ev) = frame else {
            panic!("lagged on a quiet stream: {data}")
        };
        assert_eq!(ev.name(), name);
        match &ev {
            Event::Task { kind, task, .. } => {
                assert_eq!(task.id, id);
                if *kind == TaskEventKind::Completed {
                    assert_eq!(task.status(), orchestra_proto::task::TaskStatus::Completed);
                }
            }
            Event::Session { kind, session } => {
                if session.id == sid && *kind == SessionEventKind::Exited {
                    assert!(session.ended, "{data}");
                }
            }
            Event::Message {
                session_id,
                message,
            } => {
                if *session_id == sid && message.role == Role::User {
                    assert_eq!(message.text, "echo said-$((6*7))");
                }
            }
            other => panic!("not sent over SSE: {other:?}"),
        }
        seen.insert(name);
    }
}

/// The session's JSON once `pred` holds of it (15 s at most).
fn wait_session(
    s: &Server,
    id: &str,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    let ok = wait_until(Duration::from_secs(15), || {
        last = s.get(&format!("{SESSIONS}/{id}")).json()["session"].clone();
        pred(&last)
    });
    assert!(ok, "{what}: {last:#}");
    last
}

/// A shell whose command asks a question and waits for the typed answer (`read -p`, no
/// screen pattern knows it) is `blocked` on that question, with the answers its `[y/N]`
/// offers; answered, it is ready again. A question printed before the read begins is found
/// too.
#[test]
fn a_shell_asking_a_question_is_blocked_until_answered() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let mut events = Events::open(&s);
    let id = spawn_session(
        &s,
        json!({"task": "read -p 'Delete the cache? [y/N] ' ans; echo answered-$ans", "providerId": "shell", "workingDirectory": dir.path()}),
    );
    let info = wait_session(&s, &id, "blocked on the question", |v| {
        v["status"] == "blocked"
    });
    let prompt = &info["prompt"];
    assert_eq!(prompt["kind"], "question", "{prompt}");
    assert_eq!(prompt["text"], "Delete the cache? [y/N]");
    assert_eq!(
        prompt["options"],
        json!([
            {"key": "y", "label": "Yes", "keys": ["y", "enter"]},
            {"key": "n", "label": "No", "keys": ["n", "enter"]}
        ])
    );
    let r = s.post(
        &format!("{SESSIONS}/{id}/answer"),
        json!({"option": "maybe"}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    let r = s.post(&format!("{SESSIONS}/{id}/answer"), json!({"option": "y"}));
    assert_eq!(r.status, 200, "{}", r.body);
    wait_screen(&s, &id, "answered-y");
    let info = wait_session(&s, &id, "ready again", |v| v["status"] == "ready");
    assert!(info["prompt"].is_null(), "{info}");
    // Each change of the prompt was a `session:prompt` event, the question's first, then
    // its end; every blocked session the stream carried had its prompt.
    let prompts = events.prompts_of(&id);
    assert_eq!(
        prompts,
        vec![json!("Delete the cache? [y/N]"), json!(null)],
        "{prompts:?}"
    );

    // Asked, then a pause before the read: seen once the read begins.
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "echo 'Proceed with the upgrade?'; sleep 2; read x; echo got-$x"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let info = wait_session(&s, &id, "blocked after the pause", |v| {
        v["status"] == "blocked"
    });
    assert_eq!(info["prompt"]["text"], "Proceed with the upgrade?");
    assert_eq!(info["prompt"]["options"], json!([]));
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "fine"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_screen(&s, &id, "got-fine");
    wait_session(&s, &id, "ready after the answer", |v| {
        v["status"] == "ready"
    });
    s.delete(&format!("{SESSIONS}/{id}"));
}

/// A shell running a quiet command (`sleep`) is busy, not waiting for input at its prompt,
/// until the command ends and its prompt is back.
#[test]
fn a_shell_running_a_quiet_command_is_busy_until_its_prompt_returns() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let id = spawn_session(
        &s,
        json!({"task": "echo up", "providerId": "shell", "workingDirectory": dir.path()}),
    );
    wait_session(&s, &id, "ready at its prompt", |v| v["status"] == "ready");
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "sleep 4; echo slept-$((2+3))"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    // Quiet while it sleeps (for much longer than the quiet period): busy all along, never
    // ready, until its output. (The status is read before the screen: ready with the
    // output not on the screen yet was ready while sleep ran.)
    let (mut busy, mut ready_while_sleeping) = (false, false);
    let ok = wait_until(Duration::from_secs(15), || {
        let status = s.get(&format!("{SESSIONS}/{id}")).json()["session"]["status"].clone();
        let done = screen(&s, &id).contains("slept-5");
        if !done {
            ready_while_sleeping |= busy && status == "ready";
            busy |= status == "busy";
        }
        done
    });
    assert!(ok, "the command's output");
    assert!(
        busy && !ready_while_sleeping,
        "busy {busy}, ready while sleep ran {ready_while_sleeping}"
    );
    wait_screen(&s, &id, "slept-5");
    wait_session(&s, &id, "ready once its prompt is back", |v| {
        v["status"] == "ready"
    });
    s.delete(&format!("{SESSIONS}/{id}"));
}

/// A command (`exec`, no job control) that asks, pauses, then reads: blocked once the read
/// begins, though nothing was printed since the question.
#[test]
fn a_command_asking_after_a_pause_is_blocked() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let id = spawn_session(
        &s,
        json!({"task": "echo 'Overwrite the build directory?'; sleep 2; read x; echo got-$x; sleep 30", "providerId": "exec", "workingDirectory": dir.path()}),
    );
    let info = wait_session(&s, &id, "blocked once the read begins", |v| {
        v["status"] == "blocked"
    });
    assert_eq!(info["prompt"]["text"], "Overwrite the build directory?");
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "sure"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_screen(&s, &id, "got-sure");
    wait_session(&s, &id, "busy again: a command is never ready", |v| {
        v["status"] == "busy"
    });
    s.delete(&format!("{SESSIONS}/{id}"));
}

/// A question longer than the terminal is wide (a tile of the grid) reads whole.
#[test]
fn a_question_wrapped_on_a_narrow_terminal_reads_whole() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let id = spawn_session(
        &s,
        json!({"task": "read -p 'Do you want to continue with the installation? [Y/n] ' x", "providerId": "exec", "workingDirectory": dir.path(), "cols": 24, "rows": 8}),
    );
    let info = wait_session(&s, &id, "blocked", |v| v["status"] == "blocked");
    assert_eq!(
        info["prompt"]["text"],
        "Do you want to continue with the installation? [Y/n]"
    );
    assert_eq!(info["prompt"]["options"][0]["key"], "y");
    s.delete(&format!("{SESSIONS}/{id}"));
}

/// A line being typed into a shell without a line editor (dash reads its commands in
/// canonical mode, as a `read` does) is the user's own, not a question: the shell is ready.
/// Once it is thrown away, a question asked is one again.
#[test]
fn a_half_typed_line_is_not_a_question() {
    let s = Server::start_with_env(&[], &[("SHELL", "/bin/sh")]);
    let dir = tempfile::tempdir().unwrap();
    let id = spawn_session(
        &s,
        json!({"task": "", "providerId": "shell", "workingDirectory": dir.path()}),
    );
    wait_session(&s, &id, "ready at its prompt", |v| v["status"] == "ready");
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"keys": ["e", "c", "h", "o", "space", "h", "i"]}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    // Typed: busy while it echoes (for the quiet period, 500 ms), then quiet: ready, not
    // blocked on "echo hi".
    wait_session(&s, &id, "busy echoing", |v| v["status"] == "busy");
    let info = wait_session(&s, &id, "quiet after the typing", |v| {
        v["status"] == "ready" || v["status"] == "blocked"
    });
    assert!(screen(&s, &id).contains("echo hi"));
    assert_eq!(info["status"], "ready", "{info}");
    for keys in [json!(["ctrl-u"]), json!(["enter"])] {
        let r = s.post(
            &format!("{SESSIONS}/{id}/messages"),
            json!({ "keys": keys }),
        );
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "read -p 'Keep going? [y/n] ' x"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let info = wait_session(&s, &id, "blocked on the question", |v| {
        v["status"] == "blocked"
    });
    assert_eq!(info["prompt"]["text"], "Keep going? [y/n]");
    s.delete(&format!("{SESSIONS}/{id}"));
}
