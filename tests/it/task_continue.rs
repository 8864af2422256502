//! `POST /tasks/:id/continue`: the agent started again on the task's conversation, on the fake
//! agent (tests/fixtures/agents/fake/agent.py), which keeps each conversation's requests by the
//! id it was given (`--session-id`) and shows them when resumed (`--resume`).

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use support::*;

const API: &str = "/api/coding-agents";

/// A config with the fake agent able to pin and resume its conversations, run as its own
/// program: its flags are fitted to its `--help` like a real CLI's. It keeps them in
/// `dir/conversations`.
fn config(dir: &Path) -> String {
    let path = fake_agent_config(dir, &[]);
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/fake/agent.py");
    let cfg = std::fs::read_to_string(&path)
        .unwrap()
        .replace("command = \"python3\"", &format!("command = {:?}", agent.display().to_string()))
        .replace(&format!("args = [{:?}]", agent.display().to_string()), "args = []")
        .replace(
            "coding_agent = true\n",
            &format!("coding_agent = true\nenv = {{ FAKE_AGENT_CONVERSATIONS = {:?} }}\nconversation_args = [\"--session-id\", \"{{conversation}}\"]\nresume_args = [\"--resume\", \"{{conversation}}\"]\n", dir.join("conversations").display().to_string()),
        );
    assert!(cfg.contains("args = []"), "{cfg}");
    std::fs::write(&path, cfg).unwrap();
    path.to_string_lossy().into_owned()
}

fn start_fake_task(s: &Server, description: &str) -> String {
    let task = create_task(
        s,
        "t",
        json!({"description": description, "providerId": "fake", "approval": "safe"}),
    );
    let tid = task["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{API}/tasks/{tid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    tid
}

fn continue_task(s: &Server, tid: &str, body: Value) -> Value {
    let r = s.post(&format!("{API}/tasks/{tid}/continue"), body);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["task"].clone()
}

fn wait_screen_of_task(s: &Server, task: &Value, needle: &str) {
    wait_screen(s, task["metadata"]["sessionId"].as_str().unwrap(), needle);
}

#[test]
fn continue_resumes_the_conversation_with_a_new_request() {
    let d = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let tid = start_fake_task(&s, "work one");
    let first = wait_task_status(&s, &tid, "completed");
    let conversation = first["metadata"]["conversationId"]
        .as_str()
        .expect("a conversation id recorded at the start")
        .to_string();

    let running = continue_task(&s, &tid, json!({"message": "work two"}));
    assert_eq!(running["metadata"]["status"], "running", "{running}");
    assert!(running["metadata"]["result"].is_null(), "{running}");
    assert_ne!(
        running["metadata"]["sessionId"],
        first["metadata"]["sessionId"]
    );
    let step = running["metadata"]["steps"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    let step = step.expect("the continue is a step");
    assert_eq!(step["description"], "continued: work two", "{step}");
    assert!(
        step["output"].as_str().unwrap().contains("Done: work one"),
        "the earlier result is kept in the step: {step}"
    );

    // The agent was started on the same conversation: it shows the earlier request.
    wait_screen_of_task(&s, &running, &format!("Resumed {conversation}: work one"));
    // And completes again only after working on the new request.
    let done = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        done["metadata"]["result"]["summary"], "Done: work two",
        "{done}"
    );
    assert_eq!(done["metadata"]["conversationId"], conversation.as_str());
    let output = done["metadata"]["output"].to_string();
    assert!(output.contains("Done: work one"), "output kept: {output}");
}

#[test]
fn continue_after_orchestra_restarts_with_the_default_request() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cfg = config(d.path());
    let mut s = Server::start_in(state.path(), &["--config", &cfg]);
    // The agent thinks for 3 s: orchestra is stopped meanwhile, the task interrupted.
    let tid = start_fake_task(&s, "slow thinking");
    let running = wait_task_status(&s, &tid, "running");
    // The agent took the request up (its conversation holds it), then orchestra stops.
    let log = d.path().join("conversations").join(
        running["metadata"]["conversationId"]
            .as_str()
            .expect("a conversation id"),
    );
    let taken = wait_until(std::time::Duration::from_secs(20), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("slow thinking"))
    });
    assert!(taken, "the agent never took the request up");
    s.stop();

    let s = Server::start_in(state.path(), &["--config", &cfg]);
    let interrupted = s.get(&format!("{API}/tasks/{tid}")).json()["task"].clone();
    assert_eq!(
        interrupted["metadata"]["status"], "cancelled",
        "{interrupted}"
    );
    let conversation = interrupted["metadata"]["conversationId"]
        .as_str()
        .expect("the conversation id survives the restart")
        .to_string();
    let running = continue_task(&s, &tid, json!({}));
    wait_screen_of_task(
        &s,
        &running,
        &format!("Resumed {conversation}: slow thinking"),
    );
    let done = wait_task_status(&s, &tid, "completed");
    assert_eq!(
        done["metadata"]["result"]["summary"], "You said: Continue where you left off.",
        "{done}"
    );
}

#[test]
fn only_a_finished_task_of_a_provider_that_can_resume_is_continued() {
    let d = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let pending = create_task(&s, "p", json!({"providerId": "fake"}));
    let r = s.post_empty(&format!(
        "{API}/tasks/{}/continue",
        pending["id"].as_str().unwrap()
    ));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("only a finished task"),
        "{}",
        r.body
    );

    let tid = start_fake_task(&s, "slow and quiet");
    wait_task_status(&s, &tid, "running");
    let r = s.post(
        &format!("{API}/tasks/{tid}/continue"),
        json!({"message": "x"}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("task is running"),
        "{}",
        r.body
    );
    wait_task_status(&s, &tid, "completed");

    // A command has no conversation: its task is run again by a retry.
    let exec = create_task(
        &s,
        "e",
        json!({"description": "true", "providerId": "exec"}),
    );
    let eid = exec["id"].as_str().unwrap();
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/{eid}/start")).status,
        200
    );
    wait_task_status(&s, eid, "completed");
    let r = s.post_empty(&format!("{API}/tasks/{eid}/continue"));
    assert_eq!(r.status, 409, "{}", r.body);
    let e = r.json()["error"].as_str().unwrap().to_string();
    assert!(e.contains("provider 'exec' cannot continue"), "{e}");

    let r = s.post(
        &format!("{API}/tasks/{tid}/continue"),
        json!({"message": 5}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/nope/continue")).status,
        404
    );
}

#[test]
fn of_continues_racing_each_other_exactly_one_wins() {
    let d = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let tid = start_fake_task(&s, "work first");
    wait_task_status(&s, &tid, "completed");
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (s, tid) = (&s, &tid);
                scope.spawn(move || {
                    s.post(
                        &format!("{API}/tasks/{tid}/continue"),
                        json!({"message": format!("work {i}")}),
                    )
                    .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|c| **c == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|c| **c == 409).count(),
        3,
        "{statuses:?}"
    );
    let done = wait_task_status(&s, &tid, "completed");
    let continued = done["metadata"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|st| st["description"].as_str().unwrap().starts_with("continued"))
        .count();
    assert_eq!(continued, 1, "{done}");
    let live = s.get(&format!("{API}/sessions")).json()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["ended"] == false)
        .count();
    assert_eq!(
        live, 1,
        "only the continue's session: the first run's was ended"
    );
}

/// `orchestra task continue ID [--message M]` against the server at `s`.
fn cli_continue(s: &Server, args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    std::process::Command::new(BIN)
        .args(["task", "continue"])
        .args(args)
        .args(["--url", &s.url])
        .arg("--state-dir")
        .arg(&s.state_dir)
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .env_remove("ORCHESTRA_TASK_ID")
        .env_remove("ORCHESTRA_STATE_DIR")
        .env_remove("ORCHESTRA_SESSION_ID")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the orchestra CLI")
}

#[test]
fn the_cli_continues_a_task_by_a_prefix_of_its_id() {
    let d = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let tid = start_fake_task(&s, "work one");
    wait_task_status(&s, &tid, "completed");
    let out = cli_continue(&s, &[&tid[..8], "--message", "work again", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let task: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(task["task"]["metadata"]["status"], "running", "{task}");
    let done = wait_task_status(&s, &tid, "completed");
    assert_eq!(done["metadata"]["result"]["summary"], "Done: work again");

    // A running task: the server's sentence, and the conflict's exit code.
    let running = start_fake_task(&s, "slow going");
    let out = cli_continue(&s, &[&running]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only a finished task"), "{err}");
    wait_task_status(&s, &running, "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_continues_a_finished_task_with_a_typed_request() {
    use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
    use orchestra_daemon::engine::{Engine, EngineConfig};
    use orchestra_proto::task::TaskStatus;
    use orchestra_proto::wire::request::NewTask;
    use orchestra_tui::App;
    let key = |c| E::Key(KeyEvent::new(c, KeyModifiers::NONE));
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let cfg = config(dir.path());
    let providers = orchestra_daemon::providers::Providers::from_config(
        &orchestra_daemon::providers::Config::load(Some(Path::new(&cfg))).unwrap(),
        None,
    )
    .unwrap();
    let state = orchestra_sys::state_dir::StateDir::lock(&dir.path().join("state")).unwrap();
    let engine = Engine::open(&state, EngineConfig::new(providers, work))
        .await
        .unwrap();
    let cockpit = crate::support::attach_tui(&engine).await;
    let mut events = orchestra_tui::Cockpit::subscribe(&*cockpit);
    let mut app = App::new(cockpit);
    let task = engine
        .create_task(NewTask {
            name: "t".into(),
            description: "work one".into(),
            provider_id: Some("fake".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = task.id.clone();
    app_wait_for(&mut app, &mut events, "the task in the list", |a| {
        a.snapshot().tasks.iter().any(|t| t.id == id)
    })
    .await;
    app.select_task(&task.id);
    // Not finished yet: C says so.
    app.on_terminal_event(key(KeyCode::Char('C')));
    assert!(
        app.notice()
            .is_some_and(|n| n.text.contains("only a finished task")),
        "{:?}",
        app.notice()
    );
    engine.start_task(&task.id).await.unwrap();
    let status = |engine: &Engine| engine.get_task(&task.id).unwrap().status();
    app_wait_for(&mut app, &mut events, "completed", |_| {
        status(&engine) == TaskStatus::Completed
    })
    .await;

    // C asks for the next request, Enter continues with it.
    app.on_terminal_event(key(KeyCode::Char('C')));
    for c in "work two".chars() {
        app.on_terminal_event(key(KeyCode::Char(c)));
    }
    app.on_terminal_event(key(KeyCode::Enter));
    app_wait_for(&mut app, &mut events, "the continue", |a| {
        a.notice().is_some_and(|n| n.text == "continued \"t\"")
    })
    .await;
    app_wait_for(&mut app, &mut events, "the continued turn", |_| {
        let t = engine.get_task(&task.id).unwrap();
        t.metadata
            .result
            .as_ref()
            .is_some_and(|r| r.summary == "Done: work two")
    })
    .await;
    assert_eq!(status(&engine), TaskStatus::Completed);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_attached_to_a_daemon_continues_over_the_api() {
    use orchestra_client::http::{Api, Caller};
    use orchestra_tui::backend::{Cockpit, Command, Outcome};
    use orchestra_tui::remote::RemoteCockpit;
    let d = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let tid = start_fake_task(&s, "work one");
    wait_task_status(&s, &tid, "completed");
    let dir = s.state_dir.clone();
    let cockpit = RemoteCockpit::attach(
        Api::new(&s.url, s.token.clone(), Caller::Tui),
        Box::new(move || {
            orchestra_client::daemon::find(&dir).map(|e| Api::new(&e.url, e.token, Caller::Tui))
        }),
        Some(s.state_dir.clone()),
    )
    .expect("attach");
    let done = cockpit
        .execute(Command::Continue {
            id: tid.clone(),
            message: Some("work two".into()),
        })
        .await
        .expect("continued");
    assert!(
        matches!(&done, Outcome::Done(n) if n.starts_with("continued")),
        "{done:?}"
    );
    let t = wait_task_status(&s, &tid, "completed");
    assert_eq!(t["metadata"]["result"]["summary"], "Done: work two", "{t}");
    // Refused: the server's sentence reaches the TUI.
    let exec = create_task(
        &s,
        "e",
        json!({"description": "true", "providerId": "exec"}),
    );
    let eid = exec["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/{eid}/start")).status,
        200
    );
    wait_task_status(&s, &eid, "completed");
    let refused = cockpit
        .execute(Command::Continue {
            id: eid,
            message: None,
        })
        .await
        .expect_err("exec cannot continue");
    assert!(refused.contains("cannot continue"), "{refused}");
}

#[test]
fn a_worktree_task_continues_in_its_worktree_until_it_is_discarded() {
    let d = tempfile::tempdir().unwrap();
    let repo = git_repo();
    let s = Server::start_with(&["--config", &config(d.path())]);
    let task = create_task(
        &s,
        "t",
        json!({"description": "work one", "providerId": "fake", "isolation": "worktree",
               "workingDirectory": repo.path()}),
    );
    let tid = task["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post_empty(&format!("{API}/tasks/{tid}/start")).status,
        200
    );
    let first = wait_task_status(&s, &tid, "completed");
    let worktree = first["metadata"]["worktree"]["path"]
        .as_str()
        .expect("a worktree")
        .to_string();

    let running = continue_task(&s, &tid, json!({"message": "work two"}));
    let sid = running["metadata"]["sessionId"].as_str().unwrap();
    let session = s.get(&format!("{API}/sessions/{sid}")).json()["session"].clone();
    assert_eq!(session["workingDirectory"], worktree.as_str(), "{session}");
    wait_task_status(&s, &tid, "completed");

    let r = s.post_empty(&format!("{API}/tasks/{tid}/discard"));
    assert_eq!(r.status, 200, "{}", r.body);
    let r = s.post_empty(&format!("{API}/tasks/{tid}/continue"));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("worktree is gone"),
        "{}",
        r.body
    );
}
