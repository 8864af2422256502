//! The TUI's client side against a real `orchestra serve`: [`RemoteCockpit`] keeps its copy of
//! tasks and sessions from the event stream, hands the app the same `Event`s an in-process
//! engine publishes, runs commands as API calls, shows the shown session's terminal from its
//! WebSocket and types into it, follows resizes, says when orchestra is gone and comes back to
//! it on another port.

use crate::support;

use orchestra_client::http::{Api, Caller};
use orchestra_daemon::engine::{Event, TaskEventKind};
use orchestra_proto::task::TaskStatus;
use orchestra_tui::App;
use orchestra_tui::backend::{Cockpit, Command, Outcome};
use orchestra_tui::remote::RemoteCockpit;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::Server;
use support::app_wait_for as wait_for;

/// Polls `ok` until it holds or 20 s pass (the cockpit works on its own threads and tasks).
async fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn screen_text(c: &RemoteCockpit, sid: &str) -> String {
    let mut text = String::new();
    c.with_screen(sid, &mut |s| text = s.contents());
    text
}

/// Attached to `state`'s orchestra, found again through its server.json.
fn attach(s: &Server) -> RemoteCockpit {
    let dir: PathBuf = s.state_dir.clone();
    RemoteCockpit::attach(
        Api::new(&s.url, s.token.clone(), Caller::Tui),
        Box::new(move || {
            orchestra_client::daemon::find(&dir).map(|e| Api::new(&e.url, e.token, Caller::Tui))
        }),
        Some(s.state_dir.clone()),
    )
    .expect("attach")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_typed_into_and_resized_over_the_api() {
    let s = Server::start();
    let cockpit = attach(&s);
    let mut events = cockpit.subscribe();
    // The providers come once the event stream is connected (the form waits for them).
    let providers = cockpit.providers();
    let needs = |id: &str| {
        providers
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.needs_description)
    };
    // A plain shell just starts; `exec` runs its description.
    assert_eq!(needs("shell"), Some(false), "{providers:?}");
    assert_eq!(needs("exec"), Some(true), "{providers:?}");
    assert_eq!(cockpit.default_provider().as_deref(), Some("shell"));
    let created = cockpit
        .execute(Command::CreateTask {
            task: orchestra_proto::wire::request::NewTask {
                name: "remote shell".into(),
                description: "echo first-$((2+3))".into(),
                provider_id: Some("shell".into()),
                ..Default::default()
            },
            start: true,
        })
        .await
        .expect("created");
    let Outcome::Created { task_id, note } = created else {
        panic!("{created:?}")
    };
    assert_eq!(note, None);
    // The command returns once its effect is in the copy: the app selects it as it runs.
    let snap = cockpit.snapshot();
    let task = snap
        .tasks
        .iter()
        .find(|t| t.id == task_id)
        .expect("in the copy");
    assert_ne!(task.status(), TaskStatus::Pending);
    // The app gets the engine's own events, decoded from the stream.
    let mut kinds = Vec::new();
    while let Ok(Ok(ev)) = tokio::time::timeout(Duration::from_secs(5), events.recv()).await {
        if let Event::Task { kind, task, .. } = ev
            && task.id == task_id
        {
            kinds.push(kind);
            if kind == TaskEventKind::Started {
                break;
            }
        }
    }
    assert_eq!(kinds.first(), Some(&TaskEventKind::Created), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&TaskEventKind::Started), "{kinds:?}");

    let sid = cockpit
        .snapshot()
        .tasks
        .iter()
        .find(|t| t.id == task_id)
        .and_then(|t| t.metadata.session_id.clone())
        .expect("a session");
    eventually("the first command's output", || {
        screen_text(&cockpit, &sid).contains("first-5")
    })
    .await;
    cockpit
        .write_input(&sid, b"echo typed-$((6*7))\r".to_vec())
        .expect("input");
    eventually("what was typed, run", || {
        screen_text(&cockpit, &sid).contains("typed-42")
    })
    .await;
    // A resize goes up the stream; the local screen takes the size orchestra gives it.
    cockpit
        .execute(Command::Resize {
            session_id: sid.clone(),
            cols: 70,
            rows: 20,
        })
        .await
        .expect("resize");
    eventually("the new size", || {
        let mut size = (0, 0);
        cockpit.with_screen(&sid, &mut |s| size = s.size());
        size == (20, 70)
    })
    .await;
    let info = s.get(&format!("/api/coding-agents/sessions/{sid}")).json()["session"].clone();
    assert_eq!(
        (info["cols"].as_u64(), info["rows"].as_u64()),
        (Some(70), Some(20))
    );

    // Orchestra counts what runs, now.
    let live = cockpit.execute(Command::CountLive).await.expect("count");
    assert_eq!(live, Outcome::Live(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orchestra_gone_then_back_on_another_port() {
    let mut s = Server::start();
    let state = s.state_dir.clone();
    let sid = support::spawn_session(&s, serde_json::json!({"providerId": "shell"}));
    let cockpit = attach(&s);
    assert_eq!(cockpit.snapshot().offline, None);
    // Shown at once (its stream opened before the event stream connects).
    assert!(cockpit.with_screen(&sid, &mut |_| {}));
    cockpit
        .write_input(&sid, b"echo shown-$((4*4))\r".to_vec())
        .expect("input");
    eventually("the shell's output", || {
        screen_text(&cockpit, &sid).contains("shown-16")
    })
    .await;
    s.crash();
    eventually("the offline notice", || {
        cockpit.snapshot().offline.is_some()
    })
    .await;
    // While orchestra is gone, the terminal shows what it last showed.
    for _ in 0..10 {
        assert!(
            screen_text(&cockpit, &sid).contains("shown-16"),
            "the last screen is kept"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let why = cockpit.snapshot().offline.unwrap_or_default();
    assert!(why.contains("not answering"), "{why}");
    // Commands say what is wrong instead of hanging.
    let r = cockpit.execute(Command::CountLive).await;
    assert!(r.is_err(), "{r:?}");

    let again = Server::start_in(&state, &[]);
    assert_ne!(again.url, s.url);
    eventually("the copy back on the new orchestra", || {
        let snap = cockpit.snapshot();
        snap.offline.is_none() && snap.url.as_deref() == Some(again.url.as_str())
    })
    .await;
    // Changes on the new one arrive.
    support::create_task(&again, "after the restart", serde_json::json!({}));
    eventually("the new task in the copy", || {
        cockpit
            .snapshot()
            .tasks
            .iter()
            .any(|t| t.name == "after the restart")
    })
    .await;
    drop(again);
}

/// Without a terminal `orchestra` says so, and starts no orchestra for a TUI that cannot run.
#[test]
fn without_a_terminal_nothing_is_started() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let out = std::process::Command::new(support::BIN)
        .arg("--state-dir")
        .arg(&state)
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run orchestra");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the TUI needs a terminal"), "{err}");
    assert!(!state.join("server.json").exists(), "no daemon was started");
}

/// What the app draws, as text.
fn drawn(app: &mut App) -> String {
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let buf = term.backend().buffer().clone();
    buf.content().iter().map(|c| c.symbol()).collect()
}

/// Output reaches the TUI as `task:output` events without the task and with only their
/// newest line (`?output=last`): the copy keeps each task's newest line, which the selected
/// task's details show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_keeps_the_newest_line_in_the_copy_and_the_details() {
    let s = Server::start();
    let id = support::create_task(&s, "chatty", serde_json::json!({}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let cockpit = Arc::new(attach(&s));
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit.clone());
    wait_for(&mut app, &mut events, "the task selected", |a| {
        a.selected_task().is_some_and(|t| t.id == id)
    })
    .await;
    for (tag, n) in [("a", 1500), ("b", 700), ("c", 5)] {
        let text = (0..n)
            .map(|i| format!("{tag}-{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let r = s.post(
            &format!("/api/coding-agents/tasks/{id}/output"),
            serde_json::json!({"output": text}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let want: Vec<String> = serde_json::from_value(
        s.get(&format!("/api/coding-agents/tasks/{id}")).json()["task"]["metadata"]["output"]
            .clone(),
    )
    .unwrap();
    assert_eq!(
        (want.len(), want.last().map(String::as_str)),
        (2000, Some("c-4"))
    );
    wait_for(
        &mut app,
        &mut events,
        "the newest line in the details",
        |a| drawn(a).contains("c-4"),
    )
    .await;
    let copy = cockpit.snapshot();
    let task = copy.tasks.iter().find(|t| t.id == id).expect("in the copy");
    let copied: Vec<&str> = task.metadata.output.iter().map(|l| &**l).collect();
    assert_eq!(copied, want[want.len() - 1..]);
}
