//! Widget and layout snapshots of the TUI with ratatui's TestBackend, over an in-memory
//! cockpit (the same trait the engine implements).

use orchestra::engine::{Event, SessionInfo};
use orchestra::session::SessionStatus;
use orchestra::task::{NewTask, Progress, Step, StepStatus, Task, TaskResult, TaskStatus};
use orchestra::tui::App;
use orchestra::tui::backend::{Cockpit, Command, CommandFuture, Outcome, ProviderChoice, Snapshot};
use orchestra::tui::term_view::TermView;
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::broadcast;

const NOW: i64 = 1_800_000_000_000;

struct Fake {
    snap: Mutex<Snapshot>,
    screens: Mutex<HashMap<String, vt100::Parser>>,
    commands: Mutex<Vec<Command>>,
    input: Mutex<Vec<(String, Vec<u8>)>>,
    events: broadcast::Sender<Event>,
}

impl Cockpit for Fake {
    fn snapshot(&self) -> Snapshot {
        self.snap.lock().clone()
    }
    fn providers(&self) -> Vec<ProviderChoice> {
        vec![
            ProviderChoice {
                id: "claude".into(),
                name: "Claude Code".into(),
                installed: false,
            },
            ProviderChoice {
                id: "shell".into(),
                name: "Shell".into(),
                installed: true,
            },
            ProviderChoice {
                id: "exec".into(),
                name: "Command".into(),
                installed: true,
            },
        ]
    }
    fn default_provider(&self) -> Option<String> {
        Some("shell".into())
    }
    fn default_dir(&self) -> String {
        "/work/project".into()
    }
    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }
    fn execute(&self, cmd: Command) -> CommandFuture {
        self.commands.lock().push(cmd);
        Box::pin(async { Ok(Outcome::Done(String::new())) })
    }
    fn write_input(&self, session_id: &str, bytes: Vec<u8>) -> Result<(), String> {
        self.input.lock().push((session_id.to_string(), bytes));
        Ok(())
    }
    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        match self.screens.lock().get(session_id) {
            Some(p) => {
                f(p.screen());
                true
            }
            None => false,
        }
    }
}

fn task(id: &str, name: &str, status: TaskStatus) -> Task {
    let mut t = Task::new(
        id.into(),
        NewTask {
            name: name.into(),
            description: format!("work on {name}"),
            provider_id: "shell".into(),
            working_directory: "/work/project".into(),
            required_capabilities: vec![],
            retry_of: None,
            approval: None,
        },
        NOW - 600_000,
    );
    t.metadata.status = status;
    if status != TaskStatus::Pending {
        t.metadata.started_at = Some(NOW - 125_000);
    }
    if status.is_final() {
        t.metadata.completed_at = Some(NOW - 5_000);
    }
    t
}

fn session(id: &str, task_id: Option<&str>, status: SessionStatus, ended: bool) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        provider_id: "shell".into(),
        task: "tail -f build.log".into(),
        working_directory: "/work/project".into(),
        pid: 4242,
        status,
        ended,
        exit_code: ended.then_some(0),
        signal: None,
        cols: 40,
        rows: 10,
        created_at: NOW - 130_000,
        ended_at: None,
        task_id: task_id.map(str::to_string),
        approval: "default".into(),
        prompt: None,
        transcript: None,
    }
}

fn screen_parser(rows: u16, cols: u16) -> vt100::Parser {
    let mut p = vt100::Parser::new(rows, cols, 100);
    p.process(b"$ make test\r\n");
    p.process(b"\x1b[32mok\x1b[0m   parser \x1b[1mbold\x1b[0m \x1b[4munder\x1b[0m\r\n");
    p.process(b"\x1b[31;1mFAIL\x1b[0m \x1b[7minverse\x1b[0m \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e wide\r\n");
    p.process(b"$ ");
    p
}

fn fake() -> Arc<Fake> {
    let mut running = task("t-run", "fix the parser", TaskStatus::Running);
    running.metadata.progress = Progress::new(45.0).unwrap();
    running.metadata.session_id = Some("s-run".into());
    running.metadata.steps = vec![
        Step {
            id: "1".into(),
            description: "read the failing test".into(),
            status: StepStatus::Completed,
            output: None,
        },
        Step {
            id: "2".into(),
            description: "patch the tokenizer".into(),
            status: StepStatus::Running,
            output: Some("editing src/lex.rs".into()),
        },
        Step {
            id: "3".into(),
            description: "run the suite".into(),
            status: StepStatus::Pending,
            output: None,
        },
    ];
    let mut blocked = task("t-blk", "upgrade deps", TaskStatus::Running);
    blocked.metadata.session_id = Some("s-blk".into());
    let paused = task("t-pau", "write docs", TaskStatus::Paused);
    let mut done = task("t-done", "add CI", TaskStatus::Completed);
    done.metadata.progress = Progress::DONE;
    done.metadata.result = Some(TaskResult {
        success: true,
        summary: "CI runs tests on push".into(),
        files_modified: vec!["a".into()],
        files_created: vec![],
        error: None,
    });
    let mut failed = task(
        "t-fail",
        "a task with a rather long name that gets cut",
        TaskStatus::Failed,
    );
    failed.metadata.error = Some("exit code 2".into());
    let cancelled = task("t-can", "refactor", TaskStatus::Cancelled);
    let pending = task("t-pen", "benchmarks", TaskStatus::Pending);
    let snap = Snapshot {
        tasks: [running, blocked, paused, done, failed, cancelled, pending]
            .into_iter()
            .map(Arc::new)
            .collect(),
        sessions: vec![
            session("s-run", Some("t-run"), SessionStatus::Ready, false),
            session("s-blk", Some("t-blk"), SessionStatus::Blocked, false),
            session("s-free", None, SessionStatus::Busy, false),
        ],
        autopilot: false,
        url: Some("http://127.0.0.1:4000".into()),
    };
    let mut screens = HashMap::new();
    screens.insert("s-run".to_string(), screen_parser(10, 40));
    Arc::new(Fake {
        snap: Mutex::new(snap),
        screens: Mutex::new(screens),
        commands: Mutex::new(vec![]),
        input: Mutex::new(vec![]),
        events: broadcast::channel(16).0,
    })
}

fn app(f: &Arc<Fake>) -> App {
    let mut app = App::new(f.clone());
    app.clock = Some(NOW);
    app.color = true;
    app
}

fn render(app: &mut App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    t
}

fn key(c: crossterm::event::KeyCode) -> crossterm::event::Event {
    crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        c,
        crossterm::event::KeyModifiers::NONE,
    ))
}

#[test]
fn layout_80x24() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn layout_120x40() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 120, 40);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn too_small() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 40, 10);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn empty_state_and_form() {
    let f = Arc::new(Fake {
        snap: Mutex::new(Snapshot {
            url: Some("http://127.0.0.1:4000".into()),
            ..Default::default()
        }),
        screens: Mutex::new(HashMap::new()),
        commands: Mutex::new(vec![]),
        input: Mutex::new(vec![]),
        events: broadcast::channel(16).0,
    });
    let mut a = app(&f);
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!("empty", t.backend());
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('n')));
    // Enter on an empty form shows what is missing, inline.
    a.on_terminal_event(key(crossterm::event::KeyCode::Enter));
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!("form_errors", t.backend());
    assert!(f.commands.lock().is_empty());
}

#[test]
fn help_overlay() {
    let f = fake();
    let mut a = app(&f);
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('?')));
    let t = render(&mut a, 100, 32);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn selection_steps_and_marks() {
    let f = fake();
    let mut a = app(&f);
    // The blocked task carries "!", a task finishing while not selected gets "•".
    let done = f.snap.lock().tasks[3].clone();
    a.on_engine(Ok(Event::Task {
        kind: orchestra::engine::TaskEventKind::Completed,
        task: done,
        lines: Arc::default(),
    }));
    a.on_terminal_event(key(crossterm::event::KeyCode::Down));
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn pty_follows_the_pane_size() {
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    let cmds = f.commands.lock().clone();
    let areas = orchestra::tui::view::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
    assert_eq!(
        cmds,
        vec![Command::Resize {
            session_id: "s-run".into(),
            cols: areas.term_inner.width,
            rows: areas.term_inner.height
        }]
    );
    // Drawing again at the same size asks nothing more.
    render(&mut a, 120, 40);
    assert_eq!(f.commands.lock().len(), 1);
}

#[test]
fn typing_goes_to_the_agent_and_ctrl_q_leaves() {
    use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    a.on_terminal_event(key(KeyCode::Enter));
    assert!(a.typing);
    a.on_terminal_event(key(KeyCode::Char('q')));
    a.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    a.on_terminal_event(key(KeyCode::Up));
    a.on_terminal_event(E::Paste("a\nb".into()));
    assert!(!a.should_quit());
    let sent: Vec<Vec<u8>> = f.input.lock().iter().map(|(_, b)| b.clone()).collect();
    assert_eq!(
        sent,
        vec![b"q".to_vec(), vec![3], b"\x1b[A".to_vec(), b"a\rb".to_vec()]
    );
    a.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::CONTROL,
    )));
    assert!(!a.typing);
    let t = render(&mut a, 120, 40);
    assert!(format!("{:?}", t.backend()).contains("fix the parser"));
}

#[test]
fn scrollback_mark() {
    let f = fake();
    {
        let mut screens = f.screens.lock();
        let p = screens.get_mut("s-run").unwrap();
        for i in 0..40 {
            p.process(format!("line {i}\r\n").as_bytes());
        }
    }
    let mut a = app(&f);
    render(&mut a, 80, 24);
    a.on_terminal_event(key(crossterm::event::KeyCode::PageUp));
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!(t.backend());
    a.on_terminal_event(key(crossterm::event::KeyCode::End));
    let t = render(&mut a, 80, 24);
    assert!(!format!("{:?}", t.backend()).contains("scrolled back"));
}

#[test]
fn vt100_widget_colours_attributes_and_wide_chars() {
    let p = screen_parser(5, 30);
    let mut t = Terminal::new(TestBackend::new(30, 5)).unwrap();
    t.draw(|f| f.render_widget(TermView::new(p.screen()), f.area()))
        .unwrap();
    insta::assert_snapshot!(t.backend());
    let buf = t.backend().buffer();
    // "ok" is green.
    assert_eq!(buf[(0, 1)].fg, Color::Green);
    assert_eq!(buf[(0, 1)].symbol(), "o");
    // "bold", "under".
    assert!(buf[(12, 1)].modifier.contains(Modifier::BOLD));
    assert!(buf[(17, 1)].modifier.contains(Modifier::UNDERLINED));
    // FAIL is bold red, "inverse" reversed.
    assert_eq!(buf[(0, 2)].fg, Color::Red);
    assert!(buf[(0, 2)].modifier.contains(Modifier::BOLD));
    assert!(buf[(5, 2)].modifier.contains(Modifier::REVERSED));
    // 日本語 takes two columns per character.
    assert_eq!(buf[(13, 2)].symbol(), "日");
    assert_eq!(buf[(15, 2)].symbol(), "本");
    assert_eq!(buf[(17, 2)].symbol(), "語");
    assert_eq!(buf[(20, 2)].symbol(), "w");

    // Cut in the middle of a wide character: a blank, never half a glyph.
    let mut t = Terminal::new(TestBackend::new(14, 5)).unwrap();
    t.draw(|f| f.render_widget(TermView::new(p.screen()), f.area()))
        .unwrap();
    assert_eq!(t.backend().buffer()[(13, 2)].symbol(), " ");

    // NO_COLOR: attributes stay, colours go.
    let mut t = Terminal::new(TestBackend::new(30, 5)).unwrap();
    t.draw(|f| f.render_widget(TermView::new(p.screen()).color(false), f.area()))
        .unwrap();
    let buf = t.backend().buffer();
    assert_eq!(buf[(0, 2)].fg, Color::Reset);
    assert!(buf[(0, 2)].modifier.contains(Modifier::BOLD));
}

#[test]
fn no_color_strips_every_colour() {
    let f = fake();
    let mut a = app(&f);
    a.color = false;
    let t = render(&mut a, 100, 30);
    for cell in t.backend().buffer().content.iter() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset));
    }
}

#[test]
fn mouse_click_selects_and_focuses() {
    use crossterm::event::{Event as E, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    let areas = orchestra::tui::view::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
    // Third task row.
    a.on_terminal_event(E::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: areas.tasks.x + 3,
        row: areas.tasks.y + 3,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t-pau"));
    a.on_terminal_event(E::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: areas.steps.x + 3,
        row: areas.steps.y + 3,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(a.focus, orchestra::tui::app::Focus::Steps);
}

fn permission_prompt() -> serde_json::Value {
    serde_json::json!({
        "kind": "permission",
        "text": "Do you want to proceed?",
        "options": [
            {"key": "1", "label": "Yes", "keys": ["1", "enter"]},
            {"key": "2", "label": "Yes, and don't ask again"},
            {"key": "3", "label": "No"},
        ],
    })
}

/// The fake with the blocked task's session waiting on `prompt`, that task selected.
fn blocked_on(prompt: serde_json::Value) -> (Arc<Fake>, App) {
    let f = fake();
    f.snap.lock().sessions[1].prompt = Some(prompt);
    let mut a = app(&f);
    a.on_terminal_event(key(crossterm::event::KeyCode::Down));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t-blk"));
    (f, a)
}

#[test]
fn blocked_prompt_in_the_steps_pane() {
    let (_f, mut a) = blocked_on(permission_prompt());
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!(t.backend());
    // The answer keys stand out: black on yellow.
    let buf = t.backend().buffer();
    let areas = orchestra::tui::view::layout(ratatui::layout::Rect::new(0, 0, 100, 30)).unwrap();
    let row = (areas.steps.y..areas.steps.bottom())
        .find(|&y| {
            (areas.steps.x..areas.steps.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("[2] Yes, and")
        })
        .expect("option 2 shown");
    let x = (areas.steps.x..areas.steps.right())
        .find(|&x| buf[(x, row)].symbol() == "[")
        .unwrap();
    assert_eq!(buf[(x, row)].bg, Color::Yellow);
    assert!(buf[(x, row)].modifier.contains(Modifier::BOLD));
    // The bottom bar leads with the answer keys.
    let bottom: String = (0..100).map(|x| buf[(x, 29)].symbol()).collect();
    assert!(bottom.starts_with(" 1–3 answer"), "{bottom}");
}

#[test]
fn digits_answer_the_shown_prompt() {
    use crossterm::event::KeyCode;
    let (f, mut a) = blocked_on(permission_prompt());
    render(&mut a, 100, 30);
    f.commands.lock().clear();
    a.on_terminal_event(key(KeyCode::Char('2')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![Command::Answer {
            session_id: "s-blk".into(),
            option: "2".into()
        }]
    );
    // A digit with no option says so and asks nothing.
    a.on_terminal_event(key(KeyCode::Char('7')));
    assert_eq!(f.commands.lock().len(), 1);
    let t = render(&mut a, 100, 30);
    let shown = format!("{:?}", t.backend());
    assert!(
        shown.contains("the prompt has no option 7: press 1–3 to answer"),
        "{shown}"
    );
    // From the steps and terminal panes too; never while typing (the agent gets the key).
    a.on_terminal_event(key(KeyCode::Tab));
    a.on_terminal_event(key(KeyCode::Char('1')));
    a.on_terminal_event(key(KeyCode::Tab));
    a.on_terminal_event(key(KeyCode::Char('3')));
    assert_eq!(f.commands.lock().len(), 3);
    a.on_terminal_event(key(KeyCode::Enter));
    assert!(a.typing);
    a.on_terminal_event(key(KeyCode::Char('1')));
    assert_eq!(f.commands.lock().len(), 3);
    assert_eq!(f.input.lock().last().unwrap().1, b"1".to_vec());
}

#[test]
fn letter_options_answer_unless_they_are_commands() {
    use crossterm::event::KeyCode;
    let (f, mut a) = blocked_on(serde_json::json!({
        "kind": "confirm",
        "text": "Apply the patch?",
        "options": [{"key": "y", "label": "yes"}, {"key": "n", "label": "no"}],
    }));
    let t = render(&mut a, 100, 30);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("press y to answer; n in its"), "{shown}");
    f.commands.lock().clear();
    a.on_terminal_event(key(KeyCode::Char('y')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![Command::Answer {
            session_id: "s-blk".into(),
            option: "y".into()
        }]
    );
    // n is "new task" here.
    a.on_terminal_event(key(KeyCode::Char('n')));
    assert!(matches!(a.modal, orchestra::tui::app::Modal::Form(_)));
    assert_eq!(f.commands.lock().len(), 1);
}

#[test]
fn digits_without_a_prompt_and_sessions_without_a_task() {
    use crossterm::event::KeyCode;
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 100, 30);
    f.commands.lock().clear();
    // The running task's agent does not wait: a notice, nothing sent.
    a.on_terminal_event(key(KeyCode::Char('1')));
    assert!(f.commands.lock().is_empty());
    assert!(a.notice().unwrap().text.contains("nothing to answer"));
    // A blocked session without a task shows its prompt in the details pane and answers.
    {
        let mut snap = f.snap.lock();
        snap.sessions[2].status = SessionStatus::Blocked;
        snap.sessions[2].prompt = Some(permission_prompt());
    }
    a.refresh();
    a.on_terminal_event(key(KeyCode::Char('G')));
    let t = render(&mut a, 100, 30);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("permission: Do you want to"), "{shown}");
    assert!(shown.contains("[3] No"), "{shown}");
    a.on_terminal_event(key(KeyCode::Char('3')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![Command::Answer {
            session_id: "s-free".into(),
            option: "3".into()
        }]
    );
}

#[test]
fn form_description_grows_then_scrolls() {
    let f = fake();
    let mut a = app(&f);
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('n')));
    a.on_terminal_event(crossterm::event::Event::Paste("three lines".into()));
    a.on_terminal_event(key(crossterm::event::KeyCode::Tab));
    a.on_terminal_event(crossterm::event::Event::Paste(
        "cargo build\r\ncargo test\r\nthen a line long enough to wrap onto the next row of the field, as prose does"
            .into(),
    ));
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("form_description_grown", t.backend());
    let more: Vec<String> = (4..=20).map(|i| format!("line {i}")).collect();
    a.on_terminal_event(crossterm::event::Event::Paste(format!(
        "\n{}",
        more.join("\n")
    )));
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("form_description_scrolled", t.backend());
}
