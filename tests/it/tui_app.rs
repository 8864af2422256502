//! The TUI's update function on a real engine: keys in, engine state out.

use crate::support;

use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
use orchestra_daemon::engine::{Engine, EngineConfig};
use orchestra_daemon::providers::Providers;
use orchestra_proto::task::TaskStatus;
use orchestra_sys::state_dir::StateDir;
use orchestra_tui::App;
use orchestra_tui::Cockpit;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn key(c: KeyCode) -> E {
    E::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        app.on_terminal_event(key(KeyCode::Char(c)));
    }
}

use support::app_wait_for as wait_for;
use support::shell_in_an_empty_home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_create_start_pause_resume_cancel_retry() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(shell_in_an_empty_home(dir.path()), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();

    // n, fill the form: name, description, provider shell, the directory, start now: no.
    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "from the form");
    app.on_terminal_event(key(KeyCode::Tab));
    typed(&mut app, "sleep 100");
    app.on_terminal_event(key(KeyCode::Tab));
    // Choose the shell provider: cycle until it is selected.
    for _ in 0..10 {
        let shown = format!("{:?}", {
            term.draw(|f| app.draw(f)).unwrap();
            term.backend().clone()
        });
        if shown.contains("(shell)") {
            break;
        }
        app.on_terminal_event(key(KeyCode::Right));
    }
    app.on_terminal_event(key(KeyCode::Tab));
    // The directory field holds the default; replace it with ours.
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    typed(&mut app, work.to_str().unwrap());
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Char('n')));
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the task to be created", |a| {
        a.selected_task().is_some() && matches!(a.modal, orchestra_tui::app::Modal::None)
    })
    .await;
    let tasks = engine.list_tasks(None, None);
    assert_eq!(tasks.len(), 1);
    let t = &tasks[0];
    assert_eq!(t.name, "from the form");
    assert_eq!(t.description, "sleep 100");
    assert_eq!(t.metadata.provider_id, "shell");
    assert_eq!(t.status(), TaskStatus::Pending);
    let id = t.id.clone();
    let status = |s: TaskStatus| {
        let engine = engine.clone();
        let id = id.clone();
        move |_: &mut App| engine.get_task(&id).unwrap().status() == s
    };

    // s starts it in a shell session.
    app.on_terminal_event(key(KeyCode::Char('s')));
    wait_for(
        &mut app,
        &mut events,
        "running",
        status(TaskStatus::Running),
    )
    .await;
    let sid = engine
        .get_task(&id)
        .unwrap()
        .metadata
        .session_id
        .clone()
        .unwrap();
    assert!(!engine.get_session(&sid).unwrap().ended);
    // Drawing resizes the PTY to the terminal pane.
    term.draw(|f| app.draw(f)).unwrap();
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
    let (w, h) = (areas.term_inner.width, areas.term_inner.height);
    let pty = engine.session_pty(&sid).unwrap();
    wait_for(&mut app, &mut events, "the resize", |_| {
        pty.with_screen(|s| s.size()) == (h, w)
    })
    .await;

    // p pauses, r resumes.
    app.on_terminal_event(key(KeyCode::Char('p')));
    wait_for(&mut app, &mut events, "paused", status(TaskStatus::Paused)).await;
    app.on_terminal_event(key(KeyCode::Char('r')));
    wait_for(
        &mut app,
        &mut events,
        "running again",
        status(TaskStatus::Running),
    )
    .await;

    // The task's first line runs (typed once the shell settled at its prompt, pause or not).
    wait_for(&mut app, &mut events, "sleep 100 to run", |_| {
        support::session_pids(&sid).iter().any(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == b"sleep\x00100\x00")
        })
    })
    .await;

    // Enter types into the agent; what is typed reaches the shell: Ctrl-c interrupts the
    // sleep (sent while bash itself sits at its prompt, it would race bash's own handling of
    // SIGINT with the keys typed after it).
    app.on_terminal_event(key(KeyCode::Enter));
    assert!(app.typing);
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    typed(&mut app, "echo tui-$((40+2))");
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the echo", |_| {
        pty.with_screen(|s| s.contents().contains("tui-42"))
    })
    .await;
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::CONTROL,
    )));
    assert!(!app.typing);

    // m sends a one-line message.
    app.on_terminal_event(key(KeyCode::Char('m')));
    typed(&mut app, "echo msg-$((5*5))");
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the message", |_| {
        pty.with_screen(|s| s.contents().contains("msg-25"))
    })
    .await;
    // The notice names the task, not the session's id.
    wait_for(&mut app, &mut events, "the message notice", |a| {
        a.notice()
            .is_some_and(|n| n.text == "message sent to \"from the form\"")
    })
    .await;

    // c asks first: n keeps it running, y cancels.
    app.on_terminal_event(key(KeyCode::Char('c')));
    app.on_terminal_event(key(KeyCode::Char('n')));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(engine.get_task(&id).unwrap().status(), TaskStatus::Running);
    app.on_terminal_event(key(KeyCode::Char('c')));
    app.on_terminal_event(key(KeyCode::Char('y')));
    wait_for(
        &mut app,
        &mut events,
        "cancelled",
        status(TaskStatus::Cancelled),
    )
    .await;
    assert!(engine.get_session(&sid).unwrap().ended);

    // R retries it as a new pending task, which gets selected.
    app.on_terminal_event(key(KeyCode::Char('R')));
    wait_for(&mut app, &mut events, "the retry", |a| {
        a.selected_task()
            .is_some_and(|t| t.id != id && t.status() == TaskStatus::Pending)
    })
    .await;
    assert_eq!(engine.list_tasks(None, None).len(), 2);

    // a toggles autopilot, which starts the pending retry.
    app.on_terminal_event(key(KeyCode::Char('a')));
    wait_for(&mut app, &mut events, "autopilot", |_| engine.autopilot()).await;
    wait_for(&mut app, &mut events, "the retry to run", |a| {
        a.selected_task()
            .is_some_and(|t| t.status() == TaskStatus::Running)
    })
    .await;
    app.on_terminal_event(key(KeyCode::Char('a')));
    wait_for(&mut app, &mut events, "autopilot off", |_| {
        !engine.autopilot()
    })
    .await;

    // Q asks, naming the agents the engine runs when it is pressed; n stays.
    use orchestra_tui::app::{Confirm, Modal};
    let asked = |a: &mut App| matches!(a.modal, Modal::Confirm(Confirm::Stop { live: 1 }));
    app.on_terminal_event(key(KeyCode::Char('Q')));
    wait_for(&mut app, &mut events, "the stop question", asked).await;
    app.on_terminal_event(key(KeyCode::Char('n')));
    assert!(!app.should_quit());
    assert!(matches!(app.modal, Modal::None));
    // y stops: every agent ended, then the app leaves, saying so.
    app.on_terminal_event(key(KeyCode::Char('Q')));
    wait_for(&mut app, &mut events, "the stop question", asked).await;
    app.on_terminal_event(key(KeyCode::Char('y')));
    wait_for(&mut app, &mut events, "the stop", |a| a.should_quit()).await;
    // The TUI waits for a daemon process to exit; this one is served in-process, so its
    // agents are seen to end instead.
    assert!(support::wait_until(Duration::from_secs(20), || engine
        .session_counts()
        .0
        == 0));
    assert_eq!(
        app.farewell.as_deref(),
        Some("orchestra stopped; 1 agent ended")
    );
    engine.shutdown().await;
}

/// q detaches at once: nothing is asked and nothing is ended (the agents belong to orchestra).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_detaches_without_asking_or_ending_anything() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, _events, _work) = engine_and_app(dir.path()).await;
    let session = engine
        .spawn_session(orchestra_daemon::engine::SpawnSession {
            provider_id: Some("shell".into()),
            ..Default::default()
        })
        .await
        .expect("a shell");
    app.refresh();
    app.on_terminal_event(key(KeyCode::Char('q')));
    assert!(app.should_quit());
    assert!(app.farewell.is_none());
    assert!(!engine.get_session(&session.id).unwrap().ended);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_from_the_api_side_show_up_and_filter_works() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let engine = Engine::open(
        &state,
        EngineConfig::new(shell_in_an_empty_home(dir.path()), dir.path().to_path_buf()),
    )
    .await
    .unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    for name in ["alpha", "beta", "gamma"] {
        engine
            .create_task(orchestra_proto::wire::request::NewTask {
                name: name.into(),
                description: "x".into(),
                provider_id: Some("shell".into()),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    wait_for(&mut app, &mut events, "three tasks", |a| {
        a.snapshot().tasks.len() == 3
    })
    .await;
    // A step and progress reported from outside reach the steps pane.
    let beta = engine.list_tasks(None, None)[1].clone();
    engine.add_step(&beta.id, "compile").await.unwrap();
    app.on_terminal_event(key(KeyCode::Char('/')));
    typed(&mut app, "bet");
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the step", |a| {
        a.selected_task()
            .is_some_and(|t| t.metadata.steps.len() == 1)
    })
    .await;
    assert_eq!(app.selected_task().unwrap().name, "beta");
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let shown = format!("{:?}", term.backend());
    assert!(shown.contains("compile"), "{shown}");
    assert!(!shown.contains("alpha"), "{shown}");
    // Esc clears the filter.
    app.on_terminal_event(key(KeyCode::Esc));
    term.draw(|f| app.draw(f)).unwrap();
    assert!(format!("{:?}", term.backend()).contains("alpha"));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_before_the_shell_settles_come_after_the_first_line() {
    use orchestra_tui::backend::Cockpit;
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let config = EngineConfig::new(shell_in_an_empty_home(dir.path()), dir.path().into());
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let task = engine
        .create_task(orchestra_proto::wire::request::NewTask {
            name: "first line".into(),
            description: "echo first-$((1+1))".into(),
            provider_id: Some("shell".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = engine.start_task(&task.id).await.unwrap();
    let sid = task.metadata.session_id.clone().unwrap();
    // Paused and resumed at once, then keys: the shell has not settled at its prompt yet.
    engine.pause_task(&task.id).await.unwrap();
    engine.resume_task(&task.id).await.unwrap();
    // The TUI types into a session it has seen on its event stream.
    assert!(support::wait_until(Duration::from_secs(15), || cockpit
        .snapshot()
        .sessions
        .iter()
        .any(|s| s.id == sid)));
    cockpit
        .write_input(&sid, b"echo second-$((2+2))\r".to_vec())
        .unwrap();
    let pty = engine.session_pty(&sid).unwrap();
    let shown = |needle: &str| pty.with_screen(|s| s.contents().find(needle));
    assert!(
        support::wait_until(Duration::from_secs(15), || shown("\nfirst-2").is_some()
            && shown("\nsecond-4").is_some()),
        "{}",
        pty.with_screen(|s| s.contents())
    );
    assert!(
        shown("\nfirst-2") < shown("\nsecond-4"),
        "the first line ran after the keys typed later:\n{}",
        pty.with_screen(|s| s.contents())
    );
    engine.cancel_task(&task.id).await.unwrap();
    assert!(support::session_pids(&sid).is_empty());
}

/// The fake coding agent (tests/fixtures/agents/fake/agent.py) as a provider in a user
/// config: `perm` makes it ask a permission, which `manual` approval leaves to the user.
fn fake_agent_providers(dir: &std::path::Path) -> Providers {
    let path = support::fake_agent_config(dir, &[]);
    let config = orchestra_daemon::providers::Config::load(Some(&path)).unwrap();
    Providers::from_config(&config, None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digit_answers_a_blocked_agent() {
    use orchestra_daemon::engine::SessionStatus;
    use orchestra_tui::backend::Cockpit;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(fake_agent_providers(dir.path()), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();

    // The task's description is typed into the agent: "perm" asks a permission.
    let task = engine
        .create_task(orchestra_proto::wire::request::NewTask {
            name: "needs a yes".into(),
            description: "perm".into(),
            provider_id: Some("fake".into()),
            approval: Some(orchestra_proto::wire::Approval::Manual),
            ..Default::default()
        })
        .await
        .unwrap();
    let id = task.id.clone();
    wait_for(&mut app, &mut events, "the task in the list", |a| {
        a.snapshot().tasks.iter().any(|t| t.id == id)
    })
    .await;
    app.select_task(&task.id);
    // Before anything waits, a digit only says there is nothing to answer.
    app.on_terminal_event(key(KeyCode::Char('1')));
    assert!(app.notice().unwrap().text.contains("nothing to answer"));
    app.on_terminal_event(key(KeyCode::Char('s')));
    let session = |engine: &Engine| {
        let sid = engine
            .get_task(&task.id)
            .unwrap()
            .metadata
            .session_id
            .clone()?;
        engine.get_session(&sid).ok()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        app.pump();
        while let Ok(ev) = events.try_recv() {
            app.on_engine(Ok(ev));
        }
        app.refresh_if_stale();
        if app
            .selected_session_info()
            .is_some_and(|s| s.status == SessionStatus::Blocked && s.prompt.is_some())
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the agent never blocked on the permission: {:?}",
            session(&engine).map(|s| (s.status, s.prompt))
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sid = app.shown_session_id().unwrap();
    let pty = engine.session_pty(&sid).unwrap();
    assert!(pty.with_screen(|s| s.contents().contains("Do you want to proceed?")));

    // The steps pane shows the prompt, its options and how to answer; the list marks it.
    term.draw(|f| app.draw(f)).unwrap();
    let shown = format!("{:?}", term.backend());
    for want in [
        "permission: Do you want to",
        "[1] Yes",
        "[2] No",
        "press 1–2 to answer",
    ] {
        assert!(shown.contains(want), "{want:?} not shown:\n{shown}");
    }

    // A digit that is not an option says so; the agent still waits.
    app.on_terminal_event(key(KeyCode::Char('7')));
    assert!(
        app.notice().unwrap().text.contains("no option 7"),
        "{:?}",
        app.notice()
    );
    assert_eq!(
        engine.get_session(&sid).unwrap().status,
        SessionStatus::Blocked
    );

    // 2 answers "No": the agent moves on and the prompt is gone.
    app.on_terminal_event(key(KeyCode::Char('2')));
    wait_for(
        &mut app,
        &mut events,
        "the answer to reach the agent",
        |_| pty.with_screen(|s| s.contents().contains("answered 2")),
    )
    .await;
    wait_for(&mut app, &mut events, "the session to leave blocked", |a| {
        a.selected_session_info()
            .is_some_and(|s| s.status != SessionStatus::Blocked && s.prompt.is_none())
            && a.notice()
                .is_some_and(|n| n.text == "answered 2 in \"needs a yes\"")
    })
    .await;
    term.draw(|f| app.draw(f)).unwrap();
    let shown = format!("{:?}", term.backend());
    assert!(!shown.contains("press 1–2 to answer"), "{shown}");

    // Answering again: the engine's refusal (409) shows in the bottom bar.
    app.on_result(orchestra_tui::app::AppMsg {
        origin: orchestra_tui::app::Origin::Action,
        result: support::attach_tui(&engine)
            .await
            .execute(orchestra_tui::backend::Command::Answer {
                session_id: sid.clone(),
                option: "1".into(),
            })
            .await,
    });
    let n = app.notice().unwrap();
    assert_eq!(n.level, orchestra_tui::app::Level::Error);
    assert!(n.text.contains("not blocked on a prompt"), "{}", n.text);
    engine.shutdown().await;
}

/// An engine over a fresh state directory, with a work directory; the app over it.
async fn engine_and_app(
    dir: &std::path::Path,
) -> (
    Engine,
    App,
    tokio::sync::broadcast::Receiver<orchestra_daemon::engine::Event>,
    std::path::PathBuf,
) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.join("state")).unwrap();
    let mut config = EngineConfig::new(shell_in_an_empty_home(dir), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let events = cockpit.subscribe();
    let app = App::new(cockpit);
    (engine, app, events, work)
}

/// What the screen shows, one string per row.
fn screen_rows(app: &mut App, w: u16, h: u16) -> Vec<String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let buf = term.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect())
        .collect()
}

/// With the form open on the Provider field: moves right until `id` is chosen.
fn choose_provider(app: &mut App, id: &str) {
    for _ in 0..12 {
        if screen_rows(app, 120, 40)
            .iter()
            .any(|r| r.contains(&format!("({id})")))
        {
            return;
        }
        app.on_terminal_event(key(KeyCode::Right));
    }
    panic!("provider {id} not offered");
}

fn paste(app: &mut App, text: &str) {
    app.on_terminal_event(E::Paste(text.to_string()));
}

/// From the Provider field: chooses `provider`, sets the directory, start now, creates.
fn finish_form(app: &mut App, provider: &str, work: &std::path::Path) {
    choose_provider(app, provider);
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    typed(app, work.to_str().unwrap());
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Char('y')));
    app.on_terminal_event(key(KeyCode::Enter));
}

/// The bytes a task's session printed, from its transcript.
fn transcript_of(engine: &Engine, task_id: &str) -> String {
    let Some(sid) = engine
        .get_task(task_id)
        .unwrap()
        .metadata
        .session_id
        .clone()
    else {
        return String::new();
    };
    let path = engine.get_session(&sid).unwrap().transcript.unwrap();
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pasted_and_typed_line_breaks_are_kept_in_the_description() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, work) = engine_and_app(dir.path()).await;

    app.on_terminal_event(key(KeyCode::Char('n')));
    // A one-line field says so when it joins lines.
    paste(&mut app, "two\r\nlines");
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("two lines"), "{shown}");
    assert!(
        shown.contains("the name is one line: 1 line break became spaces"),
        "{shown}"
    );
    app.on_terminal_event(key(KeyCode::Tab));
    // Pasted (\r\n, \r and \n alike) and typed (Alt-Enter, Ctrl-j) line breaks stay.
    paste(&mut app, "echo one-$((1+1))\r\necho two-$((2+2))\r");
    typed(&mut app, "echo three-$((3+3))");
    app.on_terminal_event(E::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)));
    typed(&mut app, "echo four");
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('j'),
        KeyModifiers::CONTROL,
    )));
    paste(&mut app, "echo five\n");
    // The field grew: each line on its own row of the form.
    let rows = screen_rows(&mut app, 120, 40);
    for want in [
        "echo one-",
        "echo two-",
        "echo three-",
        "echo four",
        "echo five",
    ] {
        assert_eq!(
            rows.iter().filter(|r| r.contains(want)).count(),
            1,
            "{want:?} is not on a row of its own:\n{}",
            rows.join("\n")
        );
    }
    app.on_terminal_event(key(KeyCode::Tab));
    finish_form(&mut app, "exec", &work);
    wait_for(&mut app, &mut events, "the task to finish", |a| {
        a.selected_task().is_some_and(|t| t.status().is_final())
    })
    .await;
    let task = app.selected_task().unwrap().clone();
    assert_eq!(task.name, "two lines");
    assert_eq!(
        task.description,
        "echo one-$((1+1))\necho two-$((2+2))\necho three-$((3+3))\necho four\necho five"
    );
    assert_eq!(
        task.status(),
        TaskStatus::Completed,
        "{:?}",
        task.metadata.error
    );
    // Both lines ran, as two commands.
    let out = transcript_of(&engine, &task.id);
    for want in ["one-2", "two-4", "three-6", "four", "five"] {
        assert!(out.contains(want), "{want:?} not run:\n{out}");
    }

    // In a shell the lines are typed: each runs as its own command.
    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "shell lines");
    app.on_terminal_event(key(KeyCode::Tab));
    paste(&mut app, "echo sh-$((5+5))\necho sh-$((6+6))");
    app.on_terminal_event(key(KeyCode::Tab));
    finish_form(&mut app, "shell", &work);
    wait_for(&mut app, &mut events, "the shell task", |a| {
        a.selected_task()
            .is_some_and(|t| t.name == "shell lines" && t.status() == TaskStatus::Running)
    })
    .await;
    let shell = app.selected_task().unwrap().clone();
    assert_eq!(shell.description, "echo sh-$((5+5))\necho sh-$((6+6))");
    let sid = shell.metadata.session_id.clone().unwrap();
    let pty = engine.session_pty(&sid).unwrap();
    wait_for(&mut app, &mut events, "both shell lines to run", |_| {
        pty.with_screen(|s| {
            let c = s.contents();
            c.contains("sh-10") && c.contains("sh-12")
        })
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_hundred_line_paste_keeps_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, work) = engine_and_app(dir.path()).await;
    let script: Vec<String> = (1..=200).map(|i| format!("echo line-{i}")).collect();
    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "long paste");
    app.on_terminal_event(key(KeyCode::Tab));
    paste(&mut app, &script.join("\r\n"));
    // The field stops growing and scrolls: the last lines and the cursor are in view, and
    // it says how many rows are out of view.
    let rows = screen_rows(&mut app, 120, 40);
    let shown = rows.join("\n");
    assert!(shown.contains("echo line-200"), "{shown}");
    assert!(!shown.contains("echo line-1\u{20}"), "{shown}");
    assert!(shown.contains("↑190 ↓0"), "{shown}");
    assert!(rows.iter().all(|r| !r.contains("line-199 echo")));
    app.on_terminal_event(key(KeyCode::Tab));
    finish_form(&mut app, "exec", &work);
    wait_for(&mut app, &mut events, "the task to finish", |a| {
        a.selected_task().is_some_and(|t| t.status().is_final())
    })
    .await;
    let task = app.selected_task().unwrap().clone();
    assert_eq!(task.description.lines().count(), 200);
    assert_eq!(task.description, script.join("\n"));
    assert_eq!(task.status(), TaskStatus::Completed);
    let out = transcript_of(&engine, &task.id);
    assert!(
        out.contains("line-1\r\n") && out.contains("line-200"),
        "{out}"
    );
    engine.shutdown().await;
}

/// The engine's cockpit, recording every command the app asks for (the engine still runs
/// each one): a key that does nothing asks for nothing.
struct Recording {
    inner: Arc<orchestra_tui::RemoteCockpit>,
    commands: parking_lot::Mutex<Vec<orchestra_tui::backend::Command>>,
}

impl orchestra_tui::backend::Cockpit for Recording {
    fn snapshot(&self) -> orchestra_tui::backend::Snapshot {
        self.inner.snapshot()
    }
    fn providers(&self) -> Vec<orchestra_tui::backend::ProviderChoice> {
        self.inner.providers()
    }
    fn default_provider(&self) -> Option<String> {
        self.inner.default_provider()
    }
    fn default_dir(&self) -> String {
        self.inner.default_dir()
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<orchestra_daemon::engine::Event> {
        self.inner.subscribe()
    }
    fn execute(
        &self,
        cmd: orchestra_tui::backend::Command,
    ) -> orchestra_tui::backend::CommandFuture {
        self.commands.lock().push(cmd.clone());
        self.inner.execute(cmd)
    }
    fn write_input(&self, session_id: &str, bytes: Vec<u8>) -> Result<(), String> {
        self.inner.write_input(session_id, bytes)
    }
    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        self.inner.with_screen(session_id, f)
    }
}

/// Issue 9 item 3: a key bound as `a` is not `Ctrl-a` or `Alt-a`. Command keys held with Ctrl
/// or Alt do nothing and say nothing, in every pane: autopilot stays off (it would start every
/// pending task), nothing pauses, no form opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_keys_with_ctrl_or_alt_do_nothing() {
    use orchestra_tui::app::{Focus, Modal};
    use orchestra_tui::backend::Command;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(shell_in_an_empty_home(dir.path()), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let inner = support::attach_tui(&engine).await;
    let mut events = inner.subscribe();
    let cockpit = Arc::new(Recording {
        inner,
        commands: Default::default(),
    });
    let mut app = App::new(cockpit.clone());
    let new = |name: &str| orchestra_proto::wire::request::NewTask {
        name: name.into(),
        description: "sleep 100".into(),
        provider_id: Some("shell".into()),
        ..Default::default()
    };
    let running = engine.create_task(new("runs")).await.unwrap();
    engine.start_task(&running.id).await.unwrap();
    let pending = engine.create_task(new("waits")).await.unwrap();
    app.select_task(&running.id);
    wait_for(&mut app, &mut events, "the running task", |a| {
        a.selected_task()
            .is_some_and(|t| t.status() == TaskStatus::Running)
    })
    .await;

    let held = [KeyModifiers::CONTROL, KeyModifiers::ALT];
    for focus in [Focus::Tasks, Focus::Steps, Focus::Terminal] {
        app.focus = focus;
        for m in held {
            for c in [
                'a', 'p', 'n', 's', 'r', 'R', 'c', 'm', 'i', '/', '?', 'q', 'G', 'j',
            ] {
                if c == 'c' && m == KeyModifiers::CONTROL {
                    continue; // Ctrl-c is bound: it quits (after asking).
                }
                app.on_terminal_event(E::Key(KeyEvent::new(KeyCode::Char(c), m)));
                assert!(
                    matches!(app.modal, Modal::None),
                    "{m:?}-{c} in {focus:?} opened an overlay"
                );
                assert!(
                    app.notice().is_none(),
                    "{m:?}-{c} in {focus:?} said {:?}",
                    app.notice().map(|n| &n.text)
                );
                assert!(!app.typing, "{m:?}-{c} in {focus:?} started typing");
                assert!(!app.should_quit());
            }
        }
        // Shift on a character is the character: Shift-R retries, so it is not tried here;
        // Ctrl-Shift-A is still not `a`.
        app.on_terminal_event(E::Key(KeyEvent::new(
            KeyCode::Char('A'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        )));
        assert_eq!(app.focus, focus, "a held key moved the focus");
    }
    let asked = cockpit.commands.lock().clone();
    assert!(
        asked.iter().all(|c| matches!(c, Command::Resize { .. })),
        "held keys ran commands: {asked:?}"
    );

    // The same keys without Ctrl do act: `p` pauses the running task (a sentinel: had any
    // held key asked for something, it would have been asked before this).
    app.focus = Focus::Tasks;
    app.on_terminal_event(key(KeyCode::Char('p')));
    wait_for(&mut app, &mut events, "p to pause", |_| {
        engine.get_task(&running.id).unwrap().status() == TaskStatus::Paused
    })
    .await;
    assert!(!engine.autopilot(), "autopilot was turned on");
    assert_eq!(
        engine.get_task(&pending.id).unwrap().status(),
        TaskStatus::Pending
    );
    engine.shutdown().await;
}

/// An engine over `dir/state` (made or reopened), running in `dir/work`.
async fn open_engine(dir: &std::path::Path) -> (StateDir, Engine) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.join("state")).unwrap();
    let mut config = EngineConfig::new(shell_in_an_empty_home(dir), work);
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    (state, engine)
}

/// Runs an exec session (with or without a task) to its end in the first orchestra.
async fn run_to_end(engine: &Engine, script: &str, with_task: bool) -> String {
    let sid = if with_task {
        let t = engine
            .create_task(orchestra_proto::wire::request::NewTask {
                name: "earlier task".into(),
                description: script.into(),
                provider_id: Some("exec".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        engine.start_task(&t.id).await.unwrap();
        engine
            .get_task(&t.id)
            .unwrap()
            .metadata
            .session_id
            .clone()
            .unwrap()
    } else {
        engine
            .spawn_session(orchestra_daemon::engine::SpawnSession {
                task: script.into(),
                provider_id: Some("exec".into()),
                ..Default::default()
            })
            .await
            .unwrap()
            .id
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !engine.get_session(&sid).is_ok_and(|s| s.ended) {
        assert!(Instant::now() < deadline, "{script:?} did not end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sid
}

fn cell_bg(app: &mut App, w: u16, h: u16, text: &str) -> Option<ratatui::style::Color> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let buf = term.backend().buffer().clone();
    for y in 0..h {
        let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        if let Some(i) = row.find(text) {
            let x = row[..i].chars().count() as u16;
            return Some(buf[(x, y)].bg);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_runs_session_shows_its_transcript_searchable_and_can_be_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let script = "i=1; while [ $i -le 300 ]; do echo row-$i; i=$((i+1)); done; echo the-very-end";
    let (task_sid, free_sid) = {
        let (state, engine) = open_engine(dir.path()).await;
        let task_sid = run_to_end(&engine, script, true).await;
        let free_sid = run_to_end(&engine, "echo free-$((20+1)); echo free-tail", false).await;
        engine.shutdown().await;
        drop(engine);
        drop(state);
        (task_sid, free_sid)
    };

    // A new orchestra: those sessions' terminals are gone, their transcripts are not.
    let (_state, engine) = open_engine(dir.path()).await;
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    assert!(engine.session_pty(&task_sid).is_none());
    let (w, h) = (120, 40);
    screen_rows(&mut app, w, h);
    assert_eq!(app.shown_session_id().as_deref(), Some(task_sid.as_str()));
    // Shown without asking, from the end, once the session's stream says it has no terminal
    // (each draw looks, as the TUI's loop draws on every change).
    wait_for(&mut app, &mut events, "the transcript", |a| {
        screen_rows(a, w, h);
        a.shown_transcript().is_some()
    })
    .await;
    let shown = screen_rows(&mut app, w, h).join("\n");
    assert!(
        shown.contains("the-very-end") && shown.contains("row-300"),
        "{shown}"
    );
    assert!(shown.contains("transcript · 301 rows · end "), "{shown}");
    assert!(!shown.contains("row-1 "), "{shown}");

    // The usual scroll keys scroll it: Tab to the terminal pane, Home goes to the start.
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Home));
    let rows = screen_rows(&mut app, w, h);
    assert!(
        rows.iter().any(|r| r.contains("┃row-1 ")),
        "{}",
        rows.join("\n")
    );
    app.on_terminal_event(key(KeyCode::PageDown));
    app.on_terminal_event(key(KeyCode::End));
    assert!(
        screen_rows(&mut app, w, h)
            .join("\n")
            .contains("the-very-end")
    );

    // / searches: the latest match first, highlighted; ↑ goes to older ones.
    app.on_terminal_event(key(KeyCode::Char('/')));
    typed(&mut app, "ROW-15");
    let t = app.shown_transcript().unwrap();
    // row-15 and row-150…159.
    assert_eq!(t.matches().len(), 11);
    assert_eq!(t.current(), Some(10));
    let shown = screen_rows(&mut app, w, h).join("\n");
    assert!(shown.contains("search: ROW-15  11/11"), "{shown}");
    assert_eq!(
        cell_bg(&mut app, w, h, "row-159"),
        Some(ratatui::style::Color::LightRed)
    );
    for _ in 0..10 {
        app.on_terminal_event(key(KeyCode::Up));
    }
    assert_eq!(app.shown_transcript().unwrap().current(), Some(0));
    let rows = screen_rows(&mut app, w, h);
    assert!(
        rows.iter().any(|r| r.contains("┃row-15 ")),
        "{}",
        rows.join("\n")
    );
    assert_eq!(
        cell_bg(&mut app, w, h, "row-15 "),
        Some(ratatui::style::Color::LightRed)
    );
    // Esc stops typing; the matches stay marked. Esc again closes the transcript.
    app.on_terminal_event(key(KeyCode::Esc));
    assert!(matches!(app.modal, orchestra_tui::app::Modal::None));
    assert_eq!(app.shown_transcript().unwrap().query(), "ROW-15");
    app.on_terminal_event(key(KeyCode::Esc));
    assert!(app.shown_transcript().is_none());
    // Drawn as the TUI draws on each change: the session's stream may reconnect meanwhile
    // and says again, when it closes, that there is no terminal.
    wait_for(
        &mut app,
        &mut events,
        "the hint to read the transcript",
        |a| {
            screen_rows(a, w, h)
                .join("\n")
                .contains("Press t to read its transcript.")
        },
    )
    .await;
    // t shows it again.
    app.on_terminal_event(key(KeyCode::Char('t')));
    wait_for(&mut app, &mut events, "the transcript again", |a| {
        screen_rows(a, w, h);
        a.shown_transcript().is_some()
    })
    .await;

    // The session without a task: its row, its transcript, and D deletes it after y/n.
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Char('G')));
    assert_eq!(app.shown_session_id().as_deref(), Some(free_sid.as_str()));
    screen_rows(&mut app, w, h);
    wait_for(
        &mut app,
        &mut events,
        "the free session's transcript",
        |a| {
            screen_rows(a, w, h);
            a.shown_transcript().is_some()
        },
    )
    .await;
    assert!(screen_rows(&mut app, w, h).join("\n").contains("free-21"));
    app.on_terminal_event(key(KeyCode::Char('D')));
    let shown = screen_rows(&mut app, w, h).join("\n");
    assert!(shown.contains("Delete the ended session"), "{shown}");
    app.on_terminal_event(key(KeyCode::Char('n')));
    assert!(engine.get_session(&free_sid).is_ok());
    app.on_terminal_event(key(KeyCode::Char('D')));
    app.on_terminal_event(key(KeyCode::Char('y')));
    let kept = dir.path().join("state/trash/sessions").join(&free_sid);
    wait_for(
        &mut app,
        &mut events,
        "the session's removal and its notice",
        |a| {
            engine.get_session(&free_sid).is_err()
                && !a.snapshot().sessions.iter().any(|s| s.id == free_sid)
                && a.notice()
                    .is_some_and(|n| n.text.contains(&kept.display().to_string()))
        },
    )
    .await;
    assert!(kept.exists(), "nothing kept in {}", kept.display());
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_cannot_be_deleted_but_shows_its_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let (_state, engine) = open_engine(dir.path()).await;
    let s = engine
        .spawn_session(orchestra_daemon::engine::SpawnSession {
            // It asks for the mouse, as full-screen agents do: the wheel goes to it, except
            // over its transcript.
            task: "printf '\\033[?1000h'; i=1; while [ $i -le 80 ]; do echo row-$i; i=$((i+1)); done; echo live-$((6*7)); sleep 30".into(),
            provider_id: Some("exec".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    wait_for(&mut app, &mut events, "the session row", |a| {
        a.shown_session_id().as_deref() == Some(s.id.as_str())
    })
    .await;
    let pty = engine.session_pty(&s.id).unwrap();
    wait_for(&mut app, &mut events, "its output", |_| {
        pty.with_screen(|sc| sc.contents().contains("live-42"))
    })
    .await;
    app.on_terminal_event(key(KeyCode::Char('D')));
    assert!(matches!(app.modal, orchestra_tui::app::Modal::None));
    assert!(
        app.notice().unwrap().text.contains("end it first"),
        "{:?}",
        app.notice()
    );
    // The transcript file follows the screen (written as output is read).
    let deadline = Instant::now() + Duration::from_secs(15);
    while !String::from_utf8_lossy(&engine.session_transcript(&s.id, None).await.unwrap())
        .contains("live-42")
    {
        assert!(
            Instant::now() < deadline,
            "the transcript never got the output"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    app.on_terminal_event(key(KeyCode::Char('t')));
    wait_for(&mut app, &mut events, "the live transcript", |a| {
        a.shown_transcript().is_some()
    })
    .await;
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("live-42"), "{shown}");
    let term = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 120, 40))
        .unwrap()
        .term_inner;
    app.on_terminal_event(E::Mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::ScrollUp,
        column: term.x + 2,
        row: term.y + 2,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(app.shown_transcript().unwrap().offset(), 3);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_edit_rerun_and_order_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let (_state, engine) = open_engine(dir.path()).await;
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let create = |name: &str, description: &str| {
        let engine = engine.clone();
        let (name, description) = (name.to_string(), description.to_string());
        async move {
            engine
                .create_task(orchestra_proto::wire::request::NewTask {
                    name,
                    description,
                    provider_id: Some("exec".into()),
                    ..Default::default()
                })
                .await
                .unwrap()
        }
    };
    let done = create("alpha done", "echo done-$((2*21))").await;
    let pending = create("zulu pending", "echo one").await;
    engine.start_task(&done.id).await.unwrap();
    // As the TUI sees them, over its event stream.
    wait_for(&mut app, &mut events, "the first task to complete", |a| {
        let tasks = &a.snapshot().tasks;
        tasks
            .iter()
            .any(|t| t.id == done.id && t.status() == TaskStatus::Completed)
            && tasks.iter().any(|t| t.id == pending.id)
    })
    .await;

    // e on a finished task says why not; on the pending one it opens the form, filled.
    app.select_task(&done.id);
    app.on_terminal_event(key(KeyCode::Char('e')));
    assert!(matches!(app.modal, orchestra_tui::app::Modal::None));
    assert!(app.notice().unwrap().text.contains("only a pending task"));
    app.select_task(&pending.id);
    app.on_terminal_event(key(KeyCode::Char('e')));
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("Edit task") && shown.contains("zulu pending"),
        "{shown}"
    );
    assert!(!shown.contains("Directory"), "{shown}");
    typed(&mut app, " renamed");
    app.on_terminal_event(key(KeyCode::Tab));
    paste(&mut app, "\necho two");
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the edit", |a| {
        matches!(a.modal, orchestra_tui::app::Modal::None)
    })
    .await;
    let edited = engine.get_task(&pending.id).unwrap();
    assert_eq!(edited.name, "zulu pending renamed");
    assert_eq!(edited.description, "echo one\necho two");
    assert_eq!(edited.status(), TaskStatus::Pending);

    // R reruns a completed task: a new pending task linked to it.
    app.select_task(&done.id);
    app.on_terminal_event(key(KeyCode::Char('R')));
    wait_for(&mut app, &mut events, "the rerun", |a| {
        a.selected_task().is_some_and(|t| {
            t.metadata.retry_of.as_deref() == Some(done.id.as_str())
                && t.status() == TaskStatus::Pending
        })
    })
    .await;
    let rerun = app.selected_task().unwrap().clone();
    assert_eq!(rerun.description, done.description);

    // D deletes only a finished task, after y/n, and says where it is kept.
    app.on_terminal_event(key(KeyCode::Char('D')));
    assert!(matches!(app.modal, orchestra_tui::app::Modal::None));
    assert!(app.notice().unwrap().text.contains("only a finished task"));
    app.select_task(&done.id);
    app.on_terminal_event(key(KeyCode::Char('D')));
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("Delete the task \"alpha done\"?"), "{shown}");
    app.on_terminal_event(key(KeyCode::Char('n')));
    assert!(engine.get_task(&done.id).is_ok());
    app.on_terminal_event(key(KeyCode::Char('D')));
    app.on_terminal_event(key(KeyCode::Char('y')));
    let kept = dir.path().join("state/trash").join(&done.id);
    // The list changes (an event) and the notice comes (the command's result), in any order.
    wait_for(&mut app, &mut events, "the deletion and its notice", |a| {
        engine.get_task(&done.id).is_err()
            && a.snapshot().tasks.len() == 2
            && a.notice()
                .is_some_and(|n| n.text.contains(&kept.display().to_string()))
    })
    .await;
    assert!(kept.exists(), "nothing in {}", kept.display());

    // o cycles the order: created, name, status, grouped; the choice survives a restart.
    // The task list's lines, headings by their status.
    let names = |a: &mut App| -> Vec<String> {
        let (w, h) = (120u16, 40u16);
        let tasks = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, w, h))
            .unwrap()
            .tasks;
        let rows = screen_rows(a, w, h);
        rows[tasks.y as usize + 1..tasks.bottom() as usize - 1]
            .iter()
            .map(|r| {
                let line: String = r
                    .chars()
                    .skip(tasks.x as usize + 1)
                    .take(tasks.width as usize - 2)
                    .collect();
                match line.trim().strip_prefix("── ") {
                    Some(heading) => heading.trim_end_matches(['─', ' ']).to_string(),
                    None => ["zulu pending renamed", "alpha done"]
                        .into_iter()
                        .find(|n| line.contains(n))
                        .unwrap_or("")
                        .to_string(),
                }
            })
            .filter(|n| !n.is_empty())
            .collect()
    };
    // Created: the pending one (older) first, then the rerun.
    assert_eq!(names(&mut app), ["zulu pending renamed", "alpha done"]);
    app.on_terminal_event(key(KeyCode::Char('o')));
    assert!(app.notice().unwrap().text.contains("task list: by name"));
    assert_eq!(names(&mut app), ["alpha done", "zulu pending renamed"]);
    engine.start_task(&rerun.id).await.unwrap();
    // As the list shows it (the app's snapshot, not only the engine).
    wait_for(&mut app, &mut events, "the rerun to finish", |a| {
        a.snapshot()
            .tasks
            .iter()
            .any(|t| t.id == rerun.id && t.status().is_final())
    })
    .await;
    app.on_terminal_event(key(KeyCode::Char('o')));
    // Status: pending before finished.
    assert_eq!(names(&mut app), ["zulu pending renamed", "alpha done"]);
    app.on_terminal_event(key(KeyCode::Char('o')));
    assert_eq!(
        names(&mut app),
        ["pending", "zulu pending renamed", "completed", "alpha done"]
    );
    let file = dir.path().join("state/tui-list-order");
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "grouped");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A new TUI over the same state directory keeps the grouping; headings are skipped.
    let mut again = App::new(support::attach_tui(&engine).await);
    assert_eq!(
        names(&mut again),
        ["pending", "zulu pending renamed", "completed", "alpha done"]
    );
    assert_eq!(again.selected_task().unwrap().id, pending.id);
    again.on_terminal_event(key(KeyCode::Down));
    assert_eq!(again.selected_task().unwrap().id, rerun.id);
    engine.shutdown().await;
}

/// A plain shell starts without a description; `exec` says inline that it needs one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_task_needs_no_description() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, work) = engine_and_app(dir.path()).await;
    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "no description");
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Tab));
    choose_provider(&mut app, "exec");
    app.on_terminal_event(key(KeyCode::Enter));
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("⚠ required for Command: what it should do"),
        "{shown}"
    );
    assert!(engine.list_tasks(None, None).is_empty());
    // The shell: optional, and it says so while the field is empty.
    app.on_terminal_event(key(KeyCode::Tab));
    choose_provider(&mut app, "shell");
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("optional: Shell just starts without one"),
        "{shown}"
    );
    finish_form(&mut app, "shell", &work);
    wait_for(&mut app, &mut events, "the shell to run", |a| {
        a.selected_task()
            .is_some_and(|t| t.status() == TaskStatus::Running)
    })
    .await;
    let t = app.selected_task().unwrap().clone();
    assert_eq!(t.description, "");
    assert_eq!(t.metadata.provider_id, "shell");
    engine.shutdown().await;
}
/// Every known provider is offered; one that is not installed says how to install it, and
/// creating a task on it is refused with the engine's message, shown in the form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_not_installed_is_offered_but_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[[provider]]\nid = \"ghost\"\nname = \"Ghost Agent\"\ncommand = \"orchestra-test-no-such-cli\"\ncoding_agent = true\ninstall = \"npm install -g ghost-agent\"\n",
    )
    .unwrap();
    let loaded = orchestra_daemon::providers::Config::load(Some(&config)).unwrap();
    let providers = Providers::from_config(&loaded, None).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let engine = Engine::open(&state, EngineConfig::new(providers, work.clone()))
        .await
        .unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "needs a ghost");
    app.on_terminal_event(key(KeyCode::Tab));
    typed(&mut app, "do it");
    app.on_terminal_event(key(KeyCode::Tab));
    choose_provider(&mut app, "ghost");
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("Ghost Agent (ghost) — not installed"),
        "{shown}"
    );
    assert!(
        shown.contains("install it with: npm install -g ghost-agent"),
        "{shown}"
    );
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    typed(&mut app, work.to_str().unwrap());
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(
        &mut app,
        &mut events,
        "the engine's answer",
        |a| matches!(&a.modal, orchestra_tui::app::Modal::Form(f) if !f.busy),
    )
    .await;
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("is not installed") && shown.contains("npm install -g ghost-agent"),
        "{shown}"
    );
    assert!(engine.list_tasks(None, None).is_empty());
    engine.shutdown().await;
}

/// "Start now" with autopilot on: whoever starts the task first, the form reports no failure
/// (the other start's refusal is not one). That it runs once is the engine's start claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_now_with_autopilot_on_reports_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, work) = engine_and_app(dir.path()).await;
    engine.set_autopilot(true).await;
    for i in 0..4 {
        app.on_terminal_event(key(KeyCode::Char('n')));
        typed(&mut app, &format!("raced {i}"));
        app.on_terminal_event(key(KeyCode::Tab));
        typed(&mut app, "sleep 30");
        app.on_terminal_event(key(KeyCode::Tab));
        finish_form(&mut app, "exec", &work);
        wait_for(&mut app, &mut events, "the task to run", |a| {
            matches!(a.modal, orchestra_tui::app::Modal::None)
                && a.selected_task().is_some_and(|t| {
                    t.name == format!("raced {i}") && t.status() == TaskStatus::Running
                })
        })
        .await;
        let n = app.notice().expect("a notice");
        assert_eq!(n.level, orchestra_tui::app::Level::Info, "{}", n.text);
    }
    engine.shutdown().await;
}

/// A key typed into the agent marks nothing to draw by itself: what it changes shows when
/// the agent's echo comes back (a screen event, which does). A frame drawn for the key made
/// that echo wait out the frame period behind it. Leaving typing mode changes the screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_typed_into_the_agent_draws_with_its_echo_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, _work) = engine_and_app(dir.path()).await;
    let task = engine
        .create_task(orchestra_proto::wire::request::NewTask {
            name: "typed into".into(),
            description: String::new(),
            provider_id: Some("shell".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let task = engine.start_task(&task.id).await.unwrap();
    let sid = task.metadata.session_id.clone().unwrap();
    let pty = engine.session_pty(&sid).unwrap();
    wait_for(&mut app, &mut events, "the shell shown", |a| {
        a.selected_task().is_some_and(|t| t.id == task.id) && a.selected_session_info().is_some()
    })
    .await;
    app.on_terminal_event(key(KeyCode::Enter));
    assert!(app.typing);
    screen_rows(&mut app, 120, 40);
    assert!(!app.dirty, "a frame was just drawn");
    for c in "echo typed-$((6*7))".chars() {
        app.on_terminal_event(key(KeyCode::Char(c)));
        assert!(!app.dirty, "{c:?} typed into the agent asked for a frame");
    }
    app.on_terminal_event(key(KeyCode::Enter));
    assert!(!app.dirty);
    wait_for(&mut app, &mut events, "the echo, drawn", |a| {
        pty.with_screen(|s| s.contents().contains("\ntyped-42")) && a.dirty
    })
    .await;
    screen_rows(&mut app, 120, 40);
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::CONTROL,
    )));
    assert!(!app.typing);
    assert!(app.dirty, "leaving typing mode changes the bottom bar");
    engine.shutdown().await;
}

/// The fake coding agent and a plain shell (in an empty home) as providers.
fn fake_agent_and_shell(dir: &std::path::Path) -> Providers {
    let path = support::fake_agent_config(dir, &[]);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[[provider]]\nid = \"shell\"\nenv = {{ HOME = {:?} }}\n",
        home.display().to_string()
    ));
    std::fs::write(&path, config).unwrap();
    let config = orchestra_daemon::providers::Config::load(Some(&path)).unwrap();
    Providers::from_config(&config, None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grid_shows_every_agent_types_pauses_and_w_goes_to_the_one_waiting() {
    use orchestra_daemon::engine::SessionStatus;
    use orchestra_proto::wire::request::NewTask;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(fake_agent_and_shell(dir.path()), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();

    // Three shells, each printing its own number (40, 41, 42) once started.
    let mut ids = Vec::new();
    for i in 0..3 {
        let t = engine
            .create_task(NewTask {
                name: format!("shell {i}"),
                description: format!("echo agent-$((40+{i}))"),
                provider_id: Some("shell".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        engine.start_task(&t.id).await.unwrap();
        ids.push(t.id.clone());
    }
    app.select_task(&ids[0]);
    app.on_terminal_event(key(KeyCode::Char('v')));
    assert!(app.grid_shown());
    wait_for(&mut app, &mut events, "each tile to show its agent", |a| {
        term.draw(|f| a.draw(f)).unwrap();
        let shown = format!("{:?}", term.backend());
        (40..43).all(|n| {
            shown.contains(&format!("agent-{n}\"")) || shown.contains(&format!("agent-{n} "))
        })
    })
    .await;
    // Each agent draws for its tile: its PTY took the tile's size.
    let page = app.grid_page().unwrap().clone();
    assert_eq!(page.tiles.len(), 3);
    wait_for(
        &mut app,
        &mut events,
        "each PTY to take its tile's size",
        |_| {
            page.tiles.iter().all(|t| {
                engine
                    .get_session(&t.session_id)
                    .is_ok_and(|s| (s.cols, s.rows) == (t.inner.width, t.inner.height))
            })
        },
    )
    .await;
    let sid = |i: usize| {
        engine
            .get_task(&ids[i])
            .unwrap()
            .metadata
            .session_id
            .clone()
            .unwrap()
    };

    // Type into the third tile.
    app.on_terminal_event(key(KeyCode::Right));
    app.on_terminal_event(key(KeyCode::Right));
    assert_eq!(
        app.selected_task().map(|t| t.id.clone()),
        Some(ids[2].clone())
    );
    app.on_terminal_event(key(KeyCode::Enter));
    assert!(app.typing);
    typed(&mut app, "echo typed-$((6*7))");
    app.on_terminal_event(key(KeyCode::Enter));
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::CONTROL,
    )));
    assert!(!app.typing && app.grid_shown());
    let screen = |i: usize| {
        engine
            .session_pty(&sid(i))
            .map(|p| p.with_screen(|s| s.contents()))
            .unwrap_or_default()
    };
    wait_for(
        &mut app,
        &mut events,
        "the typed line to run in the third",
        |_| screen(2).contains("typed-42"),
    )
    .await;
    assert!(!screen(0).contains("typed-42") && !screen(1).contains("typed-42"));

    // Pause the second tile's agent: its processes stop.
    app.on_terminal_event(key(KeyCode::Left));
    assert_eq!(
        app.selected_task().map(|t| t.id.clone()),
        Some(ids[1].clone())
    );
    app.on_terminal_event(key(KeyCode::Char('p')));
    wait_for(&mut app, &mut events, "the second agent to pause", |_| {
        engine.get_task(&ids[1]).unwrap().status() == TaskStatus::Paused
            && support::session_pids(&sid(1))
                .iter()
                .all(|p| support::process_state(*p) == Some('T'))
    })
    .await;
    assert!(app.waiting().is_empty());
    let _ = app.take_alerts();

    // An agent that asks a question while another is selected: queued, alerted, and `w`
    // selects it.
    let asking = engine
        .create_task(NewTask {
            name: "needs a yes".into(),
            description: "perm".into(),
            provider_id: Some("fake".into()),
            approval: Some(orchestra_proto::wire::Approval::Manual),
            ..Default::default()
        })
        .await
        .unwrap();
    engine.start_task(&asking.id).await.unwrap();
    wait_for(&mut app, &mut events, "the question to be queued", |a| {
        term.draw(|f| a.draw(f)).unwrap();
        a.waiting().len() == 1
    })
    .await;
    let alerts = app.take_alerts();
    assert_eq!(alerts.len(), 1);
    assert_eq!(
        (alerts[0].name.as_str(), alerts[0].status.as_str()),
        ("needs a yes", "blocked")
    );
    term.draw(|f| app.draw(f)).unwrap();
    let shown = format!("{:?}", term.backend());
    assert!(shown.contains("⚑ 1 waiting · w"), "{shown}");
    app.on_terminal_event(key(KeyCode::Char('w')));
    assert_eq!(
        app.selected_task().map(|t| t.id.clone()),
        Some(asking.id.clone())
    );
    assert!(app.waiting().is_empty());
    assert_eq!(
        app.selected_session_info().map(|s| s.status),
        Some(SessionStatus::Blocked)
    );
    assert!(
        app.notice()
            .is_some_and(|n| n.text.contains("needs a yes asks")),
        "{:?}",
        app.notice()
    );
    // Leaving the grid gives the other agents their size back; the shown one takes the pane.
    app.on_terminal_event(key(KeyCode::Char('v')));
    term.draw(|f| app.draw(f)).unwrap();
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 160, 48)).unwrap();
    let asking_sid = app.shown_session_id().unwrap();
    wait_for(
        &mut app,
        &mut events,
        "the shown PTY to take the pane's size",
        |_| {
            engine.get_session(&asking_sid).is_ok_and(|s| {
                (s.cols, s.rows) == (areas.term_inner.width, areas.term_inner.height)
            })
        },
    )
    .await;
    engine.shutdown().await;
}

/// A flooding agent's screen changes reach a watcher in the process at most about once a
/// frame, not once per read of its terminal: thousands a second woke the engine for nothing.
/// The last screen still arrives. They are not among the events every event-stream task is
/// woken for (50 busy agents woke each 500 times a second for an event it then dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_agent_sends_a_screen_event_a_frame_not_one_per_read() {
    let dir = tempfile::tempdir().unwrap();
    let (_state, engine) = open_engine(dir.path()).await;
    let mut events = engine.subscribe_screens();
    let mut changes = engine.subscribe();
    let started = Instant::now();
    let sid = engine
        .spawn_session(orchestra_daemon::engine::SpawnSession {
            // Lines a couple of milliseconds apart: each its own read and parse.
            task: "python3 -c 'import time;[(print(i,flush=True),time.sleep(0.002)) for i in range(500)]'; echo flood-done".into(),
            provider_id: Some("exec".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .id;
    let mut screens = 0u128;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !engine.get_session(&sid).is_ok_and(|s| s.ended) {
        assert!(Instant::now() < deadline, "the flood did not end");
        match tokio::time::timeout(Duration::from_millis(100), events.recv()).await {
            Ok(Ok(session_id)) if session_id == sid => screens += 1,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                panic!("{n} events missed: far more than one a frame")
            }
            _ => {}
        }
    }
    let pty = engine.session_pty(&sid).unwrap();
    assert!(pty.with_screen(|s| s.contents().contains("flood-done")));
    // One per 16 ms at most while the session lived (and the first at once).
    let lived = started.elapsed();
    assert!(screens > 0, "no screen event");
    assert!(
        screens <= lived.as_millis() / 16 + 1,
        "{screens} screen events over {lived:?}"
    );
    let mut others = 0;
    while let Ok(change) = changes.try_recv() {
        assert!(
            !change.is_local(),
            "a screen change among the events: {change:?}"
        );
        others += 1;
    }
    assert!(others > 0, "the session's own events were not seen");
    engine.shutdown().await;
}

/// Output lines of a task show only in its details: another task's output asks for no
/// frame (50 busy agents made the TUI redraw at its cap for one it showed), the selected
/// task's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_selected_tasks_output_asks_for_a_frame() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, _work) = engine_and_app(dir.path()).await;
    let mut ids = Vec::new();
    for name in ["shown", "elsewhere"] {
        let t = engine
            .create_task(orchestra_proto::wire::request::NewTask {
                name: name.into(),
                description: String::new(),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(t.id.clone());
    }
    let (shown, elsewhere) = (ids[0].clone(), ids[1].clone());
    wait_for(&mut app, &mut events, "a task listed", |a| {
        a.selected_task().is_some()
    })
    .await;
    for _ in 0..4 {
        if app.selected_task().is_some_and(|t| t.id == shown) {
            break;
        }
        app.on_terminal_event(key(KeyCode::Down));
    }
    assert_eq!(
        app.selected_task().map(|t| t.id.clone()),
        Some(shown.clone())
    );
    screen_rows(&mut app, 120, 40);
    assert!(!app.dirty, "a frame was just drawn");
    let output = |id: &str, line: &str| {
        let task = engine.get_task(id).unwrap();
        Ok(orchestra_daemon::engine::Event::Task {
            kind: orchestra_daemon::engine::TaskEventKind::Output,
            task,
            lines: std::sync::Arc::new(vec![line.to_string()]),
        })
    };
    app.on_engine(output(&elsewhere, "not shown"));
    assert_eq!(
        app.frame_wanted_by(),
        None,
        "another task's output asked for a frame"
    );
    let asked = std::time::Instant::now();
    app.on_engine(output(&shown, "shown"));
    let by = app.frame_wanted_by();
    assert!(
        by.is_some_and(|by| by <= asked + std::time::Duration::from_millis(500)),
        "the selected task's output shows in its details, soon: {by:?}"
    );
    // A change drawn at once (a key) takes the waiting one with it.
    app.dirty = true;
    assert!(
        app.frame_wanted_by()
            .is_some_and(|by| by <= std::time::Instant::now())
    );
    screen_rows(&mut app, 120, 40);
    assert_eq!(app.frame_wanted_by(), None, "both drawn in one frame");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_answers_the_trust_question_a_task_waits_on() {
    use orchestra_tui::app::Selected;
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut app, mut events, _work) = engine_and_app(dir.path()).await;
    let repo = support::git_repo();
    let root = repo.path().canonicalize().unwrap();
    let ran = dir.path().join("setup-ran");
    std::fs::write(
        root.join(".orchestra.toml"),
        format!("[worktree]\nsetup = \"echo ran >> {}\"\n", ran.display()),
    )
    .unwrap();
    let mut ids = Vec::new();
    for name in ["first", "second"] {
        let t = engine
            .create_task(orchestra_proto::wire::request::NewTask {
                name: name.into(),
                description: "true".into(),
                provider_id: Some("exec".into()),
                working_directory: Some(root.display().to_string()),
                isolation: Some(orchestra_proto::task::Isolation::Worktree),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.push(t.id.clone());
    }
    let (first, second) = (ids[0].clone(), ids[1].clone());
    app.select_task(&first);
    app.on_terminal_event(key(KeyCode::Char('s')));
    wait_for(&mut app, &mut events, "the trust question", |a| {
        a.shown_prompt().is_some()
            && a.notice()
                .is_some_and(|n| n.text.contains("waits for you to trust"))
    })
    .await;
    assert!(!ran.exists(), "the set-up ran before it was trusted");
    let task = engine.get_task(&first).unwrap();
    assert!(app.is_blocked(&task));
    assert_eq!(task.status(), TaskStatus::Running);

    // The details pane shows the question with the command, and the keys that answer it.
    let shown = screen_rows(&mut app, 160, 50).join("\n");
    for want in [
        "trust: Trust",
        "echo ran >>",
        "[1] Trust this content and run it",
        "[2] Decline: fail the task, run nothing",
        "press 1–2 to answer",
    ] {
        assert!(shown.contains(want), "{want:?} not shown:\n{shown}");
    }

    // Another task waiting while this one is looked at queues for `w`.
    engine.start_task(&second).await.unwrap();
    wait_for(&mut app, &mut events, "the second task in the queue", |a| {
        a.waiting()
            .iter()
            .any(|w| w.target == Selected::Task(second.clone()) && w.blocked())
    })
    .await;

    // A digit that is no option says so; 1 trusts: the set-up runs, then the agent.
    app.on_terminal_event(key(KeyCode::Char('7')));
    assert!(app.notice().unwrap().text.contains("no option 7"));
    app.on_terminal_event(key(KeyCode::Char('1')));
    wait_for(&mut app, &mut events, "the trusted task to complete", |a| {
        a.selected_task()
            .is_some_and(|t| t.status() == TaskStatus::Completed)
    })
    .await;
    // The second waited on the same file: it proceeds too, and no longer waits in the queue
    // (it is there as finished, until looked at).
    wait_for(&mut app, &mut events, "the second task to complete", |a| {
        engine
            .get_task(&second)
            .is_ok_and(|t| t.status() == TaskStatus::Completed)
            && !a.waiting().iter().any(|w| w.blocked())
    })
    .await;
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "ran\nran\n");
    engine.shutdown().await;
}

/// The form's settings reach the task, and `e` on the pending task changes its approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_sets_approval_isolation_and_checks_and_e_edits_them() {
    use orchestra_proto::task::{Approval, Isolation};
    let dir = tempfile::tempdir().unwrap();
    let repo = support::git_repo();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let config = EngineConfig::new(shell_in_an_empty_home(dir.path()), repo.path().into());
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);

    app.on_terminal_event(key(KeyCode::Char('n')));
    typed(&mut app, "with settings");
    app.on_terminal_event(key(KeyCode::Tab));
    typed(&mut app, "true");
    app.on_terminal_event(key(KeyCode::Tab));
    choose_provider(&mut app, "exec");
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    typed(&mut app, repo.path().to_str().unwrap());
    app.on_terminal_event(key(KeyCode::Tab));
    app.on_terminal_event(key(KeyCode::Char('n'))); // start now: no
    app.on_terminal_event(key(KeyCode::Tab)); // delegate
    app.on_terminal_event(key(KeyCode::Tab)); // approval
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("default (safe)"), "{shown}");
    // A command is no coding agent: no worktree unless asked for.
    assert!(shown.contains("default (none)"), "{shown}");
    for _ in 0..3 {
        app.on_terminal_event(key(KeyCode::Right)); // manual, safe, auto
    }
    app.on_terminal_event(key(KeyCode::Tab)); // isolation
    app.on_terminal_event(key(KeyCode::Right)); // worktree
    app.on_terminal_event(key(KeyCode::Tab)); // base branch, now offered
    typed(&mut app, "main");
    app.on_terminal_event(key(KeyCode::Tab)); // checks
    paste(&mut app, "true\nexit 0");
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the task to be created", |a| {
        a.selected_task().is_some() && matches!(a.modal, orchestra_tui::app::Modal::None)
    })
    .await;
    let tasks = engine.list_tasks(None, None);
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let t = tasks[0].clone();
    assert_eq!(t.metadata.provider_id, "exec");
    assert_eq!(t.metadata.approval, Some(Approval::Auto));
    assert_eq!(t.metadata.isolation, Isolation::Worktree);
    assert_eq!(t.metadata.base_ref.as_deref(), Some("main"));
    assert_eq!(t.metadata.checks, ["true", "exit 0"]);
    assert_eq!(t.status(), TaskStatus::Pending);

    // e: the same form, filled in; the approval goes back to safe and the checks lose a line.
    app.select_task(&t.id);
    app.on_terminal_event(key(KeyCode::Char('e')));
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(
        shown.contains("Edit task") && shown.contains("‹ auto ›"),
        "{shown}"
    );
    for _ in 0..3 {
        app.on_terminal_event(key(KeyCode::Tab)); // description, provider, approval
    }
    app.on_terminal_event(key(KeyCode::Left));
    app.on_terminal_event(key(KeyCode::Enter));
    wait_for(&mut app, &mut events, "the edit", |a| {
        matches!(a.modal, orchestra_tui::app::Modal::None)
    })
    .await;
    let edited = engine.get_task(&t.id).unwrap();
    assert_eq!(edited.metadata.approval, Some(Approval::Safe));
    assert_eq!(edited.metadata.checks, ["true", "exit 0"]);
    assert_eq!(edited.metadata.isolation, Isolation::Worktree);
    engine.shutdown().await;
}

/// Two command providers that write their own versions of a file, for best of N.
fn left_and_right(dir: &std::path::Path) -> Providers {
    let path = dir.join("variants.toml");
    std::fs::write(
        &path,
        "[[provider]]\nid = \"left\"\nname = \"Left\"\ncommand = \"/bin/sh\"\n\
         args = [\"-c\", \"echo left > shared.txt && echo L > left.txt && {task}\"]\n\
         deliver = \"arg\"\ninteractive = false\n\n\
         [[provider]]\nid = \"right\"\nname = \"Right\"\ncommand = \"/bin/sh\"\n\
         args = [\"-c\", \"echo right > shared.txt && {task}\"]\n\
         deliver = \"arg\"\ninteractive = false\n",
    )
    .unwrap();
    let config = orchestra_daemon::providers::Config::load(Some(&path)).unwrap();
    Providers::from_config(&config, None).unwrap()
}

/// `d` on a best-of-N task compares its variants file by file; `p` picks the left one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diff_view_compares_two_variants_and_p_picks_one() {
    use orchestra_proto::task::VariantSpec;
    use orchestra_proto::wire::request::NewTask;
    let dir = tempfile::tempdir().unwrap();
    let repo = support::git_repo();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let config = EngineConfig::new(left_and_right(dir.path()), repo.path().into());
    let engine = Engine::open(&state, config).await.unwrap();
    let variant = |p: &str| VariantSpec {
        provider_id: p.into(),
        approval: None,
    };
    let parent = engine
        .create_task(NewTask {
            name: "greet".into(),
            description: "true".into(),
            working_directory: Some(repo.path().to_string_lossy().into_owned()),
            variants: vec![variant("left"), variant("right")],
            ..Default::default()
        })
        .await
        .unwrap();
    engine.start_task(&parent.id).await.unwrap();
    let cockpit = support::attach_tui(&engine).await;
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let children = engine.children_of(&parent.id);
    assert_eq!(children.len(), 2);
    // As the TUI sees them (its copy follows the engine's events).
    wait_for(&mut app, &mut events, "both variants to finish", |a| {
        children.iter().all(|c| {
            a.snapshot()
                .tasks
                .iter()
                .any(|t| t.id == c.id && t.status() == TaskStatus::Completed)
        })
    })
    .await;
    app.select_task(&parent.id);
    app.on_terminal_event(key(KeyCode::Char('d')));
    wait_for(&mut app, &mut events, "the comparison", |a| {
        a.diff_view().is_some_and(|v| v.files().len() == 2)
    })
    .await;
    let files: Vec<(String, String)> = app
        .diff_view()
        .unwrap()
        .files()
        .iter()
        .map(|f| (f.path.clone(), f.status.clone()))
        .collect();
    assert_eq!(
        files,
        [
            ("left.txt".to_string(), "left".to_string()),
            ("shared.txt".to_string(), "both".to_string())
        ]
    );
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("Compare variants"), "{shown}");
    assert!(
        shown.contains("◀ left · completed · no checks ran"),
        "{shown}"
    );
    assert!(shown.contains("▶ right · completed"), "{shown}");
    assert!(shown.contains("changed by left only"), "{shown}");
    assert!(shown.contains("pick"), "the bar offers the pick: {shown}");
    // ] has no third variant to bring in; p asks first, then picks the left one.
    app.on_terminal_event(key(KeyCode::Char(']')));
    app.on_terminal_event(key(KeyCode::Char('p')));
    let shown = screen_rows(&mut app, 120, 40).join("\n");
    assert!(shown.contains("Pick left"), "{shown}");
    app.on_terminal_event(key(KeyCode::Char('y')));
    wait_for(&mut app, &mut events, "the pick", |_| {
        engine
            .get_task(&parent.id)
            .is_ok_and(|t| t.status() == TaskStatus::Completed)
    })
    .await;
    assert_eq!(
        support::git(repo.path(), &["show", "main:shared.txt"]),
        "left"
    );
    let done = engine.get_task(&parent.id).unwrap();
    assert!(
        done.metadata
            .result
            .as_ref()
            .is_some_and(|r| r.summary.starts_with("picked variant left")),
        "{:?}",
        done.metadata.result
    );
    engine.shutdown().await;
}
