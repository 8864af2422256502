//! The TUI's update function on a real engine: keys in, engine state out.

mod support;

use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
use orchestra::engine::{Engine, EngineConfig};
use orchestra::providers::Providers;
use orchestra::state_dir::StateDir;
use orchestra::task::TaskStatus;
use orchestra::tui::{App, EngineCockpit};
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

/// Applies command results and engine events until `ok` holds, or fails after 15 s.
async fn wait_for(
    app: &mut App,
    events: &mut tokio::sync::broadcast::Receiver<orchestra::engine::Event>,
    what: &str,
    mut ok: impl FnMut(&mut App) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        app.pump();
        while let Ok(ev) = events.try_recv() {
            app.on_engine(Ok(ev));
        }
        app.refresh_if_stale();
        if ok(app) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_create_start_pause_resume_cancel_retry() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(Providers::built_in(), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let cockpit = Arc::new(EngineCockpit::new(engine.clone()));
    let mut events = engine.subscribe();
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
        a.selected_task().is_some() && matches!(a.modal, orchestra::tui::app::Modal::None)
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
    let areas = orchestra::tui::view::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
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

    // Enter types into the agent; what is typed reaches the shell.
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

    // q asks because an agent runs; n stays, y quits.
    app.on_terminal_event(key(KeyCode::Char('q')));
    app.on_terminal_event(key(KeyCode::Char('n')));
    assert!(!app.should_quit());
    app.on_terminal_event(key(KeyCode::Char('q')));
    app.on_terminal_event(key(KeyCode::Char('y')));
    assert!(app.should_quit());
    engine.shutdown().await;
    assert_eq!(engine.session_counts().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_from_the_api_side_show_up_and_filter_works() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let engine = Engine::open(
        &state,
        EngineConfig::new(Providers::built_in(), dir.path().to_path_buf()),
    )
    .await
    .unwrap();
    let mut events = engine.subscribe();
    let mut app = App::new(Arc::new(EngineCockpit::new(engine.clone())));
    for name in ["alpha", "beta", "gamma"] {
        engine
            .create_task(orchestra::engine::CreateTask {
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

/// The fake coding agent (tests/fixtures/agents/fake/agent.py) as a provider in a user
/// config: `perm` makes it ask a permission, which `manual` approval leaves to the user.
fn fake_agent_providers(dir: &std::path::Path) -> Providers {
    let path = support::fake_agent_config(dir, &[]);
    let config = orchestra::providers::Config::load(Some(&path)).unwrap();
    Providers::from_config(&config, None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digit_answers_a_blocked_agent() {
    use orchestra::engine::SessionStatus;
    use orchestra::tui::backend::Cockpit;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(fake_agent_providers(dir.path()), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let mut events = engine.subscribe();
    let mut app = App::new(Arc::new(EngineCockpit::new(engine.clone())));
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();

    // The task's description is typed into the agent: "perm" asks a permission.
    let task = engine
        .create_task(orchestra::engine::CreateTask {
            name: "needs a yes".into(),
            description: "perm".into(),
            provider_id: Some("fake".into()),
            approval: Some("manual".into()),
            ..Default::default()
        })
        .await
        .unwrap();
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
    app.on_result(orchestra::tui::app::AppMsg {
        origin: orchestra::tui::app::Origin::Action,
        result: EngineCockpit::new(engine.clone())
            .execute(orchestra::tui::backend::Command::Answer {
                session_id: sid.clone(),
                option: "1".into(),
            })
            .await,
    });
    let n = app.notice().unwrap();
    assert_eq!(n.level, orchestra::tui::app::Level::Error);
    assert!(n.text.contains("not blocked on a prompt"), "{}", n.text);
    engine.shutdown().await;
}

/// The engine's cockpit, recording every command the app asks for (the engine still runs
/// each one): a key that does nothing asks for nothing.
struct Recording {
    inner: EngineCockpit,
    commands: parking_lot::Mutex<Vec<orchestra::tui::backend::Command>>,
}

impl orchestra::tui::backend::Cockpit for Recording {
    fn snapshot(&self) -> orchestra::tui::backend::Snapshot {
        self.inner.snapshot()
    }
    fn providers(&self) -> Vec<orchestra::tui::backend::ProviderChoice> {
        self.inner.providers()
    }
    fn default_provider(&self) -> Option<String> {
        self.inner.default_provider()
    }
    fn default_dir(&self) -> String {
        self.inner.default_dir()
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<orchestra::engine::Event> {
        self.inner.subscribe()
    }
    fn execute(
        &self,
        cmd: orchestra::tui::backend::Command,
    ) -> orchestra::tui::backend::CommandFuture {
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
    use orchestra::tui::app::{Focus, Modal};
    use orchestra::tui::backend::Command;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let state = StateDir::lock(&dir.path().join("state")).unwrap();
    let mut config = EngineConfig::new(Providers::built_in(), work.clone());
    config.grace = Duration::from_millis(500);
    let engine = Engine::open(&state, config).await.unwrap();
    let mut events = engine.subscribe();
    let cockpit = Arc::new(Recording {
        inner: EngineCockpit::new(engine.clone()),
        commands: Default::default(),
    });
    let mut app = App::new(cockpit.clone());
    let new = |name: &str| orchestra::engine::CreateTask {
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
