//! Parents and children (issue 33): an agent's own credential makes child tasks of its
//! task at no wider an approval than its own, manages its descendants and nobody else's,
//! sees its family on the list and the event stream, and answers a child's question only
//! when the child sends its questions to its parent. Real daemon, real sessions.

use crate::support;

use serde_json::{Value, json};
use std::time::Duration;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const SESSIONS: &str = "/api/coding-agents/sessions";

/// A request sent with an agent's credential.
fn as_agent(
    s: &Server,
    credential: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Response {
    let b = body.map(|v| v.to_string());
    let auth = bearer(credential);
    raw_request(
        &s.addr,
        method,
        path,
        b.as_deref().map(str::as_bytes),
        &[("Authorization", auth.as_str())],
    )
}

fn ids(r: &Response) -> Vec<String> {
    let mut ids: Vec<String> = r.json()["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn an_agent_makes_children_of_its_own_task_at_no_wider_approval() {
    let s = Server::start();
    let (careful_task, _, careful) = started_agent_task(&s, "parent", Some("safe"));
    let other = create_task_id(&s, "other");
    let before = s.get(TASKS).json()["tasks"].as_array().map(Vec::len);

    // Refused, with a sentence, and nothing made.
    let refused = [
        (
            json!({"name": "wide", "providerId": "shell", "approval": "auto"}),
            "wider approval",
        ),
        (
            json!({"name": "cmd", "providerId": "exec", "description": "touch /tmp/never"}),
            "only an agent under auto",
        ),
        (
            json!({"name": "sh", "providerId": "shell"}),
            "only an agent under auto",
        ),
        // Checks are commands orchestra runs itself, asking nobody: a child's or a variant's.
        (
            json!({"name": "checked", "providerId": "claude", "description": "fix it",
                   "checks": ["touch /tmp/never"]}),
            "only an agent under auto",
        ),
        (
            json!({"name": "race", "description": "fix it", "checks": ["true"],
                   "variants": [{"providerId": "claude"}, {"providerId": "codex"}]}),
            "only an agent under auto",
        ),
        (
            json!({"name": "elsewhere", "providerId": "shell", "parentTaskId": other}),
            "children of its own task",
        ),
    ];
    for (body, says) in refused {
        let r = as_agent(&s, &careful, "POST", TASKS, Some(body.clone()));
        assert_eq!(r.status, 403, "{body}: {}", r.body);
        let error = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(error.contains(says), "{body}: {error}");
    }
    assert_eq!(
        s.get(TASKS).json()["tasks"].as_array().map(Vec::len),
        before
    );

    // Made: a child of its task, with the parent's preset where it named none.
    let (parent, _sid, cred) = started_agent_task(&s, "parent", Some("auto"));
    let r = as_agent(
        &s,
        &cred,
        "POST",
        TASKS,
        Some(json!({"name": "child", "providerId": "shell", "description": ""})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let child = r.json()["task"].clone();
    assert_eq!(
        child["metadata"]["parentTaskId"],
        parent.as_str(),
        "{child}"
    );
    assert_eq!(child["metadata"]["approval"], "auto", "{child}");
    let child = child["id"].as_str().expect("id").to_string();
    // A narrower preset, under its child: a grandchild.
    let r = as_agent(
        &s,
        &cred,
        "POST",
        TASKS,
        Some(
            json!({"name": "grandchild", "providerId": "shell", "approval": "manual", "parentTaskId": child}),
        ),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let grandchild = r.json()["task"]["id"].as_str().expect("id").to_string();

    // The agent sees its family; the owner sees a parent's children by query.
    let mine = as_agent(&s, &cred, "GET", TASKS, None);
    assert!(!ids(&mine).contains(&careful_task));
    assert_eq!(
        ids(&mine),
        sorted(vec![parent.clone(), child.clone(), grandchild.clone()])
    );
    assert_eq!(
        ids(&s.get(&format!("{TASKS}?parent={parent}"))),
        vec![child.clone()]
    );
    assert_eq!(
        ids(&as_agent(
            &s,
            &cred,
            "GET",
            &format!("{TASKS}?parent={child}"),
            None
        )),
        vec![grandchild.clone()]
    );
    assert_eq!(s.get(&format!("{TASKS}?parent=")).status, 400);

    // It manages its descendants, and nobody else's task.
    let r = as_agent(&s, &cred, "POST", &format!("{TASKS}/{child}/start"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let child_sid = r.json()["task"]["metadata"]["sessionId"]
        .as_str()
        .expect("child session")
        .to_string();
    let r = as_agent(
        &s,
        &cred,
        "POST",
        &format!("{SESSIONS}/{child_sid}/messages"),
        Some(json!({"text": "echo child-got-it"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_screen(&s, &child_sid, "child-got-it");
    let r = as_agent(
        &s,
        &cred,
        "GET",
        &format!("{SESSIONS}/{child_sid}/peek"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    for (method, path) in [
        ("POST", format!("{TASKS}/{other}/start")),
        ("GET", format!("{TASKS}/{other}")),
        ("POST", format!("{TASKS}/{parent}/cancel")),
        ("DELETE", format!("{TASKS}/{grandchild}")),
        ("PATCH", format!("{TASKS}/{child}")),
    ] {
        let r = as_agent(&s, &cred, method, &path, Some(json!({"name": "x"})));
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
    }
    assert_eq!(
        s.get(&format!("{TASKS}/{other}")).json()["task"]["metadata"]["status"],
        "pending"
    );

    // A result the parent records lists what became of its children.
    let r = as_agent(&s, &cred, "POST", &format!("{TASKS}/{child}/cancel"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent(
        &s,
        &cred,
        "POST",
        &format!("{TASKS}/{parent}/result"),
        Some(json!({"success": true, "summary": "handed out"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let outcomes = r.json()["task"]["metadata"]["result"]["children"].clone();
    assert_eq!(outcomes[0]["id"], child.as_str(), "{outcomes}");
    assert_eq!(outcomes[0]["status"], "cancelled", "{outcomes}");
    assert_eq!(outcomes.as_array().map(Vec::len), Some(1), "{outcomes}");
}

#[test]
fn the_event_stream_shows_an_agent_its_family_only() {
    let s = Server::start();
    let (_parent, _sid, cred) = started_agent_task(&s, "parent", Some("auto"));
    let other = create_task_id(&s, "other");
    let r = as_agent(
        &s,
        &cred,
        "POST",
        TASKS,
        Some(json!({"name": "child", "providerId": "shell"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let child = r.json()["task"]["id"].as_str().expect("id").to_string();
    let mut events = Events::open_as(&s, "", &bearer(&cred));
    // The other task changes first; a stream that showed it would carry it first.
    let r = s.patch(&format!("{TASKS}/{other}"), json!({"progress": 10}));
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s.patch(&format!("{TASKS}/{child}"), json!({"progress": 20}));
    assert_eq!(r.status, 200, "{}", r.body);
    loop {
        let (name, data) = events.next().expect("the child's change arrives");
        let id = data["taskId"].as_str().or(data["task"]["id"].as_str());
        assert_ne!(id, Some(other.as_str()), "{name}: {data}");
        assert_ne!(name, "orchestrator:state", "{data}");
        if id == Some(child.as_str()) && data["task"]["metadata"]["progress"] == 20 {
            break;
        }
    }
}

#[test]
fn a_childs_question_goes_to_its_parent_only_when_the_child_says_so() {
    let s = Server::start();
    let (_parent, _sid, cred) = started_agent_task(&s, "parent", Some("auto"));
    let ask = "read -p 'Ship it? [y/N] ' ans; echo shipped-$ans";
    let child_asking = |answers: &str| {
        let r = as_agent(
            &s,
            &cred,
            "POST",
            TASKS,
            Some(json!({"name": "asks", "providerId": "shell", "answers": answers})),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let id = r.json()["task"]["id"].as_str().expect("id").to_string();
        let r = as_agent(&s, &cred, "POST", &format!("{TASKS}/{id}/start"), None);
        assert_eq!(r.status, 200, "{}", r.body);
        let sid = r.json()["task"]["metadata"]["sessionId"]
            .as_str()
            .expect("session")
            .to_string();
        let r = as_agent(
            &s,
            &cred,
            "POST",
            &format!("{SESSIONS}/{sid}/messages"),
            Some(json!({"text": ask})),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let mut last = Value::Null;
        let blocked = wait_until(Duration::from_secs(15), || {
            last = s.get(&format!("{SESSIONS}/{sid}")).json()["session"].clone();
            last["status"] == "blocked"
        });
        assert!(blocked, "the child never asked: {last:#}");
        sid
    };

    // The human's question: the parent is refused and the child still waits.
    let human = child_asking("human");
    let r = as_agent(
        &s,
        &cred,
        "POST",
        &format!("{SESSIONS}/{human}/answer"),
        Some(json!({"option": "y"})),
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("not to its parent"), "{}", r.body);
    assert_eq!(
        s.get(&format!("{SESSIONS}/{human}")).json()["session"]["status"],
        "blocked"
    );

    // The parent's question: the parent answers it.
    let theirs = child_asking("parent");
    let r = as_agent(
        &s,
        &cred,
        "POST",
        &format!("{SESSIONS}/{theirs}/answer"),
        Some(json!({"option": "y"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    wait_screen(&s, &theirs, "shipped-y");
}

#[test]
fn cancelling_a_parent_with_its_children_ends_the_whole_family() {
    let s = Server::start();
    let parent = create_task_id(&s, "parent");
    let child = create_task(&s, "child", json!({"parentTaskId": parent}));
    let child = child["id"].as_str().expect("id").to_string();
    let grandchild = create_task(&s, "grandchild", json!({"parentTaskId": child}));
    let grandchild = grandchild["id"].as_str().expect("id").to_string();
    let loner = create_task_id(&s, "loner");
    let r = s.post(
        TASKS,
        json!({"name": "orphan", "parentTaskId": "no-such-task"}),
    );
    assert_eq!(r.status, 400, "{}", r.body);

    let r = s.post_empty(&format!("{TASKS}/{parent}/cancel?children=maybe"));
    assert_eq!(r.status, 400, "{}", r.body);
    let r = s.post_empty(&format!("{TASKS}/{parent}/cancel?children=true"));
    assert_eq!(r.status, 200, "{}", r.body);
    for id in [&parent, &child, &grandchild] {
        wait_task_status(&s, id, "cancelled");
    }
    assert_eq!(
        s.get(&format!("{TASKS}/{loner}")).json()["task"]["metadata"]["status"],
        "pending"
    );
}

#[test]
fn the_cli_makes_lists_and_cancels_a_family() {
    let s = Server::start();
    let parent = create_task_id(&s, "parent");
    let (ok, out, err) = cli(
        &s,
        &[
            "--json",
            "task",
            "add",
            "child",
            "--parent",
            &parent,
            "--answers",
            "parent",
        ],
    );
    assert!(ok, "{out}{err}");
    let child: Value = serde_json::from_str(&out).expect("json");
    let child = child["task"].clone();
    assert_eq!(
        child["metadata"]["parentTaskId"],
        parent.as_str(),
        "{child}"
    );
    assert_eq!(child["metadata"]["answers"], "parent", "{child}");
    let child = child["id"].as_str().expect("id").to_string();
    let (ok, out, err) = cli(&s, &["task", "list", "--parent", &parent]);
    assert!(
        ok && out.contains("child") && !out.contains("parent "),
        "{out}{err}"
    );
    let (ok, out, err) = cli(&s, &["task", "show", &child]);
    assert!(
        ok && out.contains(&format!("parent       {parent}")),
        "{out}{err}"
    );
    let (ok, out, err) = cli(&s, &["task", "cancel", &parent, "--children"]);
    assert!(ok, "{out}{err}");
    wait_task_status(&s, &child, "cancelled");
}

/// 50 children under one parent, each started at the same moment by the parent's agent:
/// every one runs once (one session each) and finishes.
#[test]
fn fifty_children_started_at_once_each_run_once_and_finish() {
    let s = Server::start_with(&["--max-sessions", "64"]);
    let (parent, _sid, cred) = started_agent_task(&s, "parent", Some("auto"));
    let dir = tempfile::tempdir().expect("tempdir");
    let children: Vec<String> = (0..50)
        .map(|n| {
            let r = as_agent(
                &s,
                &cred,
                "POST",
                TASKS,
                Some(json!({
                    "name": format!("child {n}"),
                    "providerId": "exec",
                    "workingDirectory": dir.path(),
                    "description": format!("printf 'ran\\n' >> run-{n}.log"),
                })),
            );
            assert_eq!(r.status, 201, "{}", r.body);
            r.json()["task"]["id"].as_str().expect("id").to_string()
        })
        .collect();
    let barrier = std::sync::Barrier::new(children.len());
    std::thread::scope(|scope| {
        for id in &children {
            let (s, cred, barrier) = (&s, &cred, &barrier);
            scope.spawn(move || {
                barrier.wait();
                let r = as_agent(s, cred, "POST", &format!("{TASKS}/{id}/start"), None);
                assert_eq!(r.status, 200, "{id}: {}", r.body);
            });
        }
    });
    for id in &children {
        wait_task_status(&s, id, "completed");
    }
    let sessions = s.get(SESSIONS).json()["sessions"].clone();
    for (n, id) in children.iter().enumerate() {
        let runs = sessions
            .as_array()
            .into_iter()
            .flatten()
            .filter(|x| x["taskId"] == id.as_str())
            .count();
        assert_eq!(runs, 1, "child {n} ran {runs} times");
        let log =
            std::fs::read_to_string(dir.path().join(format!("run-{n}.log"))).unwrap_or_default();
        assert_eq!(log, "ran\n", "child {n}");
    }
    let listed = ids(&s.get(&format!("{TASKS}?parent={parent}")));
    assert_eq!(listed, sorted(children));
}

/// A child the user made under a wider preset than its parent's agent (`task add --parent`)
/// is the agent's to watch, pause and cancel, never to drive: a `safe` agent does not start
/// or type into an `auto` (or command-running) child.
#[test]
fn an_agent_does_not_drive_a_child_wider_than_itself() {
    let s = Server::start();
    let (parent, _sid, cred) = started_agent_task(&s, "parent", Some("safe"));
    let wide = create_task(
        &s,
        "wide",
        json!({"providerId": "shell", "description": "", "parentTaskId": parent, "approval": "auto"}),
    );
    let wide = wide["id"].as_str().expect("id").to_string();
    let r = as_agent(&s, &cred, "GET", &format!("{TASKS}/{wide}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    for action in ["start", "retry", "continue"] {
        let r = as_agent(&s, &cred, "POST", &format!("{TASKS}/{wide}/{action}"), None);
        assert_eq!(r.status, 403, "{action}: {}", r.body);
        assert!(r.body.contains("no wider approval"), "{}", r.body);
    }
    assert_eq!(
        s.get(&format!("{TASKS}/{wide}")).json()["task"]["metadata"]["status"],
        "pending"
    );
    // Started by the user, its terminal is not the agent's to type into.
    let r = s.post_empty(&format!("{TASKS}/{wide}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let wide_sid = r.json()["task"]["metadata"]["sessionId"]
        .as_str()
        .expect("session")
        .to_string();
    let r = as_agent(
        &s,
        &cred,
        "POST",
        &format!("{SESSIONS}/{wide_sid}/messages"),
        Some(json!({"text": "touch /tmp/never"})),
    );
    assert_eq!(r.status, 403, "{}", r.body);
    let r = as_agent(
        &s,
        &cred,
        "GET",
        &format!("{SESSIONS}/{wide_sid}/peek"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent(&s, &cred, "POST", &format!("{TASKS}/{wide}/cancel"), None);
    assert_eq!(r.status, 200, "{}", r.body);
}

/// However a parent ends with a result (its agent reports one, or its program exits), the
/// result lists what became of its children.
#[test]
fn a_parent_whose_program_exits_lists_its_children() {
    let s = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let parent = create_task(
        &s,
        "parent",
        json!({"providerId": "exec", "workingDirectory": dir.path(),
            "description": "while [ ! -e go ]; do sleep 0.05; done"}),
    );
    let parent = parent["id"].as_str().expect("id").to_string();
    let r = s.post_empty(&format!("{TASKS}/{parent}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let child = create_task(&s, "child", json!({"parentTaskId": parent}));
    let child = child["id"].as_str().expect("id").to_string();
    let r = s.post_empty(&format!("{TASKS}/{child}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    std::fs::write(dir.path().join("go"), "").expect("go");
    let done = wait_task_status(&s, &parent, "completed");
    let children = &done["metadata"]["result"]["children"];
    assert_eq!(children[0]["id"], child.as_str(), "{done}");
    assert_eq!(children[0]["status"], "cancelled", "{done}");
}
