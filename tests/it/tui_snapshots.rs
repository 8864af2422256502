//! Widget and layout snapshots of the TUI with ratatui's TestBackend, over an in-memory
//! cockpit (the same trait the engine implements).

use orchestra_daemon::engine::SessionStatus;
use orchestra_daemon::engine::{Event, SessionInfo};
use orchestra_proto::task::{NewTask, Progress, Step, StepStatus, Task, TaskResult, TaskStatus};
use orchestra_proto::wire::{Approval, Prompt};
use orchestra_tui::App;
use orchestra_tui::app::{AppMsg, Origin};
use orchestra_tui::backend::{Cockpit, Command, CommandFuture, Outcome, ProviderChoice, Snapshot};
use orchestra_tui::term_view::TermView;
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
                install: Some("npm install -g @anthropic-ai/claude-code".into()),
                needs_description: true,
                coding_agent: false,
            },
            ProviderChoice {
                id: "shell".into(),
                name: "Shell".into(),
                installed: true,
                install: None,
                needs_description: false,
                coding_agent: false,
            },
            ProviderChoice {
                id: "exec".into(),
                name: "Command".into(),
                installed: true,
                install: None,
                needs_description: true,
                coding_agent: false,
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
            ..Default::default()
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
        status_source: Default::default(),
        ended,
        exit_code: ended.then_some(0),
        signal: None,
        cols: 40,
        rows: 10,
        created_at: NOW - 130_000,
        ended_at: None,
        task_id: task_id.map(str::to_string),
        approval: Approval::default(),
        prompt: None,
        resets_at: None,
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
        ..Default::default()
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
        offline: None,
        url: Some("http://127.0.0.1:4000".into()),
        conflicts: HashMap::new(),
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
        kind: orchestra_daemon::engine::TaskEventKind::Completed,
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
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
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

/// A terminal with nothing above its screen (an attached TUI gets the screen only) scrolls
/// back into the session's transcript, which has everything it printed.
#[test]
fn scrolling_back_without_scrollback_shows_the_transcript() {
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 80, 24);
    a.on_terminal_event(key(crossterm::event::KeyCode::PageUp));
    assert_eq!(
        f.commands.lock().last(),
        Some(&Command::Transcript("s-run".into()))
    );
    assert_eq!(a.scrolled_back(), None);
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
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
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
    assert_eq!(a.focus, orchestra_tui::app::Focus::Steps);
}

fn permission_prompt() -> Prompt {
    prompt(serde_json::json!({
        "kind": "permission",
        "text": "Do you want to proceed?",
        "options": [
            {"key": "1", "label": "Yes", "keys": ["1", "enter"]},
            {"key": "2", "label": "Yes, and don't ask again"},
            {"key": "3", "label": "No"},
        ],
    }))
}

/// A prompt as the API sends it.
fn prompt(json: serde_json::Value) -> Prompt {
    serde_json::from_value(json).expect("a prompt as the API sends it")
}

/// The fake with the blocked task's session waiting on `prompt`, that task selected.
fn blocked_on(prompt: Prompt) -> (Arc<Fake>, App) {
    let f = fake();
    f.snap.lock().sessions[1].prompt = Some(prompt);
    // Its agent's hook said it asks permission: the details say what decided the status.
    f.snap.lock().sessions[1].status_source = orchestra_proto::wire::StatusSource::Hook;
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
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 100, 30)).unwrap();
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
    let (f, mut a) = blocked_on(prompt(serde_json::json!({
        "kind": "choice",
        "text": "Apply the patch?",
        "options": [{"key": "y", "label": "yes"}, {"key": "n", "label": "no"}],
    })));
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
    assert!(matches!(a.modal, orchestra_tui::app::Modal::Form(_)));
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

/// Renders at 80×24 and at the smallest size, 50×12, each as its own snapshot.
fn both_sizes(name: &str, f: &Arc<Fake>, setup: impl Fn(&mut App)) {
    for (w, h) in [(80, 24), (50, 12)] {
        let mut a = app(f);
        render(&mut a, w, h);
        setup(&mut a);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), t.backend());
    }
}

fn keys(a: &mut App, codes: &[crossterm::event::KeyCode]) {
    for c in codes {
        a.on_terminal_event(key(*c));
    }
}

#[test]
fn overlays_at_80x24_and_50x12() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    both_sizes("help", &f, |a| keys(a, &[Char('?')]));
    both_sizes("form", &f, |a| keys(a, &[Char('n')]));
    both_sizes("confirm_cancel", &f, |a| keys(a, &[Char('c')]));
    both_sizes("confirm_end_session", &f, |a| keys(a, &[End, Char('c')]));
    // Q asks orchestra how many agents run (no runtime here: its answer is handed over).
    both_sizes("confirm_stop", &f, |a| {
        keys(a, &[Char('Q')]);
        a.on_result(AppMsg {
            origin: Origin::Action,
            result: Ok(Outcome::Live(2)),
        });
    });
    both_sizes("filter", &f, |a| {
        keys(a, &[Char('/'), Char('f'), Char('i')])
    });
    both_sizes("message", &f, |a| {
        keys(a, &[Char('m'), Char('h'), Char('i')])
    });
    both_sizes("typing", &f, |a| keys(a, &[Enter]));
    both_sizes("steps_focus", &f, |a| keys(a, &[Tab]));
    both_sizes("terminal_focus", &f, |a| keys(a, &[Tab, Tab]));
    // The list-management overlays: delete a finished task, edit a pending one, remove an
    // ended session's row.
    both_sizes("confirm_delete_task", &f, |a| {
        a.select_task("t-done");
        keys(a, &[Char('D')]);
    });
    both_sizes("form_edit", &f, |a| {
        a.select_task("t-pen");
        keys(a, &[Char('e')]);
    });
    let g = fake();
    g.snap.lock().sessions.push(session(
        "s-old",
        None,
        orchestra_daemon::engine::SessionStatus::Exited,
        true,
    ));
    both_sizes("confirm_remove_session", &g, |a| keys(a, &[End, Char('D')]));
}

#[test]
fn the_help_overlay_fits_and_scrolls_to_its_last_line() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    for (w, h) in [(80, 24), (50, 12)] {
        let mut a = app(&f);
        keys(&mut a, &[Char('?')]);
        let t = render(&mut a, w, h);
        let shown = format!("{:?}", t.backend());
        assert!(shown.contains("Esc closes"), "{shown}");
        // PgDn until the end: the last line of the help shows, with its frame.
        for _ in 0..80 {
            keys(&mut a, &[PageDown]);
        }
        let t = render(&mut a, w, h);
        let shown = format!("{:?}", t.backend());
        assert!(shown.contains("answer in the terminal"), "{w}x{h}: {shown}");
        let last = orchestra_tui::views::help_lines(w as usize - 2).len();
        assert!(
            shown.contains(&format!("–{last} of {last}")),
            "{w}x{h}: {shown}"
        );
        insta::assert_snapshot!(format!("help_at_its_end_{w}x{h}"), t.backend());
        // Ctrl-? or other unbound keys leave it open; Esc closes it.
        keys(&mut a, &[Char('x')]);
        assert!(matches!(a.modal, orchestra_tui::app::Modal::Help));
        keys(&mut a, &[Esc]);
        assert!(matches!(a.modal, orchestra_tui::app::Modal::None));
    }
}

#[test]
fn too_small_30x8_still_says_what_to_do() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 30, 8);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("Enlarge the window"), "{shown}");
    assert!(
        shown.contains("press q") && shown.contains("to detach."),
        "{shown}"
    );
    insta::assert_snapshot!(t.backend());
}

/// Issue 9 item 14: the bar shows the keys of what has the keyboard.
#[test]
fn the_bottom_bar_follows_the_focus() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    let bar = |a: &mut App| {
        let t = render(a, 120, 40);
        let b = t.backend().buffer();
        (0..b.area.width)
            .map(|x| b[(x, b.area.height - 1)].symbol().to_string())
            .collect::<String>()
    };
    let mut a = app(&f);
    assert!(bar(&mut a).contains("s start"));
    keys(&mut a, &[Char('n')]);
    let b = bar(&mut a);
    assert!(
        b.contains("Enter create") && b.contains("Esc cancel"),
        "{b}"
    );
    assert!(!b.contains("s start"), "{b}");
    keys(&mut a, &[Esc, Char('c')]);
    let b = bar(&mut a);
    assert!(b.contains("y yes") && b.contains("n no"), "{b}");
    // Keys that do not answer a question leave it open.
    keys(&mut a, &[Char('x')]);
    assert!(matches!(a.modal, orchestra_tui::app::Modal::Confirm(_)));
    keys(&mut a, &[Char('n'), Char('?')]);
    let b = bar(&mut a);
    assert!(b.contains("Esc close"), "{b}");
    keys(&mut a, &[Esc, Enter]);
    let b = bar(&mut a);
    assert!(
        b.contains("Ctrl-q leave") && b.contains("goes to the agent"),
        "{b}"
    );
    assert!(!b.contains("s start"), "{b}");
    a.on_terminal_event(crossterm::event::Event::Key(
        crossterm::event::KeyEvent::new(Char('q'), crossterm::event::KeyModifiers::CONTROL),
    ));
    keys(&mut a, &[Tab, Tab]);
    let b = bar(&mut a);
    assert!(b.contains("End live") && b.contains("↑/↓ scroll"), "{b}");
}

/// Issue 9 item 14: a notice closed by opening the filter does not come back after it.
#[test]
fn an_old_notice_does_not_come_back_after_the_filter() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    let mut a = app(&f);
    keys(&mut a, &[Char('1')]);
    assert!(a.notice().is_some());
    keys(&mut a, &[Char('/'), Char('f'), Enter]);
    assert!(a.notice().is_none());
    let t = render(&mut a, 120, 40);
    let shown = format!("{:?}", t.backend());
    assert!(!shown.contains("nothing to answer"), "{shown}");
    assert!(shown.contains("s start"), "{shown}");
}

/// Issue 9 item 4: the scrolled-back mark names the key that returns from where the keyboard
/// is, and that key does return (End in the tasks pane selects the last task instead).
#[test]
fn the_scrolled_back_mark_names_a_key_that_works_here() {
    use crossterm::event::KeyCode::*;
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
    // PgUp in the tasks pane scrolls the terminal back.
    keys(&mut a, &[PageUp]);
    let t = render(&mut a, 80, 24);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("Esc returns"), "{shown}");
    assert!(!shown.contains("End returns"), "{shown}");
    insta::assert_snapshot!(t.backend());
    keys(&mut a, &[Esc]);
    assert!(a.scrolled_back().is_none());
    assert_eq!(a.selected_task().unwrap().id, "t-run");
    // In the terminal pane End is the key, and it returns.
    keys(&mut a, &[Tab, Tab, PageUp]);
    let t = render(&mut a, 80, 24);
    assert!(format!("{:?}", t.backend()).contains("End returns"));
    keys(&mut a, &[End]);
    assert!(a.scrolled_back().is_none());
}

/// Issue 9 item 17: a wide character just left of an overlay does not spill over its border.
#[test]
fn a_wide_character_does_not_cover_the_form_border() {
    let f = fake();
    {
        let mut snap = f.snap.lock();
        // Its third row is beside the form's left edge, whose column is the name's second.
        let mut t = (*snap.tasks[2]).clone();
        t.name = "修复解析器的一个错误".into();
        snap.tasks[2] = Arc::new(t);
    }
    let mut a = app(&f);
    keys(&mut a, &[crossterm::event::KeyCode::Char('n')]);
    let t = render(&mut a, 80, 24);
    let buf = t.backend().buffer();
    let form_x = (80 - 72) / 2;
    // (The form's height follows its description; its middle row is always a side.)
    assert_eq!(buf[(form_x, 12)].symbol(), "│", "{:?}", t.backend());
    // A terminal draws a wide character over the next column: none may sit just left of it.
    for y in 3..20 {
        let left = buf[(form_x - 1, y)].symbol();
        assert!(
            unicode_width::UnicodeWidthStr::width(left) <= 1,
            "row {y}: {left:?} covers the border\n{:?}",
            t.backend()
        );
    }
    insta::assert_snapshot!(t.backend());
}

/// Issue 9 item 17: a session without a task is named after what it runs (or its provider).
#[test]
fn a_session_without_a_task_has_a_name() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    f.snap.lock().sessions[2].task = String::new();
    let mut a = app(&f);
    keys(&mut a, &[End]);
    let t = render(&mut a, 100, 30);
    let shown = format!("{:?}", t.backend());
    assert!(
        shown.contains("Terminal shell session · shell · busy"),
        "{shown}"
    );
    assert!(shown.contains("$ shell session"), "{shown}");
    keys(&mut a, &[Char('c')]);
    let t = render(&mut a, 100, 30);
    assert!(format!("{:?}", t.backend()).contains("End the session \"shell session\"?"));
}

/// Issue 9 item 6: what a pending task needs is said from the state: with autopilot on it is
/// not "press s … or a to turn autopilot on", and a retry does not say "press s" when autopilot
/// will start it.
#[test]
fn hints_for_a_pending_task_follow_autopilot() {
    use crossterm::event::KeyCode::*;
    use orchestra_tui::app::{AppMsg, Origin};
    let f = fake();
    let shown = |a: &mut App| format!("{:?}", render(a, 100, 30).backend());
    let mut a = app(&f);
    a.select_task("t-pen");
    let off = shown(&mut a);
    assert!(
        off.contains("Press s to start it, or a to turn autopilot"),
        "{off}"
    );
    f.snap.lock().autopilot = true;
    a.refresh();
    let on = shown(&mut a);
    assert!(!on.contains("turn autopilot on"), "{on}");
    assert!(
        on.contains("Autopilot will start it (s starts it now)"),
        "{on}"
    );
    keys(&mut a, &[Enter]);
    let n = a.notice().unwrap().text.clone();
    assert_eq!(
        n,
        "this task has no agent yet: autopilot will start it (s starts it now)"
    );
    // R's result: the new pending task is selected and the notice says what starts it.
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Created {
            task_id: "t-pen".into(),
            note: Some("retry of \"benchmarks\" created".into()),
        }),
    });
    let n = a.notice().unwrap().text.clone();
    assert!(!n.contains("press s"), "{n}");
    assert!(n.contains("autopilot will start it"), "{n}");
    f.snap.lock().autopilot = false;
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Created {
            task_id: "t-pen".into(),
            note: Some("retry of \"benchmarks\" created".into()),
        }),
    });
    let n = a.notice().unwrap().text.clone();
    assert_eq!(
        n,
        "retry of \"benchmarks\" created: press s to start it, or a to turn autopilot on"
    );
}

/// Issue 9 item 9: with autopilot off, the top bar does not read as if running work stopped.
#[test]
fn autopilot_off_says_what_still_runs() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 80, 24);
    let top: String = (0..80)
        .map(|x| t.backend().buffer()[(x, 0)].symbol().to_string())
        .collect();
    assert!(top.contains("autopilot off · 2 running"), "{top}");
}

/// Issue 9 item 17: the terminal pane's title keeps the key that leaves typing mode whole, and
/// the scrolled-back mark beside it, at 80×24 and 50×12.
#[test]
fn the_typing_title_keeps_its_key() {
    use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
    let f = fake();
    {
        let mut screens = f.screens.lock();
        let p = screens.get_mut("s-run").unwrap();
        for i in 0..40 {
            p.process(format!("line {i}\r\n").as_bytes());
        }
    }
    for (w, h) in [(80, 24), (50, 12)] {
        let mut a = app(&f);
        render(&mut a, w, h);
        keys(&mut a, &[KeyCode::Enter]);
        a.on_terminal_event(E::Key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::SHIFT)));
        assert!(a.scrolled_back().is_some());
        let t = render(&mut a, w, h);
        let title: String = (0..w)
            .map(|x| t.backend().buffer()[(x, 1)].symbol().to_string())
            .collect();
        assert!(title.contains("Ctrl-q"), "{w}x{h}: {title}");
        assert!(title.contains("↑"), "{w}x{h}: {title}");
        if w == 80 {
            assert!(title.contains("TYPING · Ctrl-q"), "{w}x{h}: {title}");
            assert!(title.contains("typing returns"), "{w}x{h}: {title}");
        }
        insta::assert_snapshot!(format!("typing_scrolled_back_{w}x{h}"), t.backend());
    }
}

/// Issue 9 item 3 in the one-line editors: Alt with a letter types nothing into the filter.
#[test]
fn alt_letters_type_nothing_into_the_filter() {
    use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
    let f = fake();
    let mut a = app(&f);
    keys(&mut a, &[KeyCode::Char('/'), KeyCode::Char('f')]);
    a.on_terminal_event(E::Key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT)));
    keys(&mut a, &[KeyCode::Char('i')]);
    let t = render(&mut a, 100, 30);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("filter: fi "), "{shown}");
}

/// A transcript in the terminal pane, searched: the current match and the others marked, the
/// search line in the bar.
#[test]
fn transcript_searched_at_80x24_and_50x12() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    for (w, h) in [(80, 24), (50, 12)] {
        let mut a = app(&f);
        render(&mut a, w, h);
        keys(&mut a, &[Tab, Tab, Char('t')]);
        assert!(
            f.commands
                .lock()
                .contains(&Command::Transcript("s-run".into())),
            "t asks for the transcript"
        );
        let mut bytes = Vec::new();
        for i in 1..=60 {
            let line = if i % 20 == 0 {
                format!("step {i}: \x1b[31merror\x1b[0m in parse\r\n")
            } else {
                format!("step {i}: ok\r\n")
            };
            bytes.extend_from_slice(line.as_bytes());
        }
        a.on_result(AppMsg {
            origin: Origin::Action,
            result: Ok(Outcome::Transcript {
                session_id: "s-run".into(),
                bytes,
            }),
        });
        keys(&mut a, &[Char('/')]);
        for c in "ERROR".chars() {
            keys(&mut a, &[Char(c)]);
        }
        keys(&mut a, &[Up]);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("transcript_searched_{w}x{h}"), t.backend());
    }
}

/// `o` three times: the list grouped by status, each group under its heading.
#[test]
fn list_grouped_by_status() {
    use crossterm::event::KeyCode::*;
    let f = fake();
    let mut a = app(&f);
    keys(&mut a, &[Char('o'), Char('o'), Char('o')]);
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn the_details_pane_keeps_the_lines_of_multi_line_text() {
    let f = fake();
    {
        let mut snap = f.snap.lock();
        let mut t = (*snap.tasks[4]).clone();
        t.description = "echo one\necho two".into();
        t.metadata.error = Some("exit code 2\nsecond line of the error".into());
        t.name = "two\nwords".into();
        t.metadata.steps = vec![Step {
            id: "1".into(),
            description: "first step line\nsecond step line".into(),
            status: StepStatus::Failed,
            output: None,
        }];
        snap.tasks[4] = Arc::new(t);
    }
    let mut a = app(&f);
    a.refresh();
    a.select_task("t-fail");
    let t = render(&mut a, 100, 30);
    let text = format!("{:?}", t.backend());
    assert!(!text.contains("echo oneecho two"), "{text}");
    assert!(!text.contains("twowords"), "{text}");
    assert!(!text.contains("first step linesecond"), "{text}");
    for line in [
        "echo one ",
        "echo two ",
        "second line of the error",
        "two words",
        "first step line ",
        "second step line",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
}

/// `[keys]` in the config file: a rebound key works, its old key does nothing, and the help and
/// the bar show the new one. A wrong entry stops the TUI naming the file and the entry.
#[test]
fn keys_rebound_in_the_config_file_work_and_show() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[keys]\nstop = \"ctrl-x\"\nnew_task = [\"+\", \"n\"]\n[keys.terminal]\nlive = \"L\"\n",
    )
    .unwrap();
    let f = fake();
    let mut a = app(&f);
    a.keymap = orchestra_tui::load_keys(Some(&path)).unwrap();
    // Q stops no more (stopping starts by counting what runs).
    a.on_terminal_event(key(KeyCode::Char('Q')));
    assert!(!f.commands.lock().contains(&Command::CountLive));
    a.on_terminal_event(crossterm::event::Event::Key(KeyEvent::new(
        KeyCode::Char('x'),
        KeyModifiers::CONTROL,
    )));
    assert!(f.commands.lock().contains(&Command::CountLive));
    a.on_terminal_event(key(KeyCode::Char('n')));
    a.on_terminal_event(key(KeyCode::Char('+')));
    assert!(matches!(a.modal, orchestra_tui::app::Modal::Form(_)));
    a.on_terminal_event(key(KeyCode::Esc));
    let t = render(&mut a, 120, 40);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("+ new"), "{shown}");
    a.on_terminal_event(key(KeyCode::Char('?')));
    let t = render(&mut a, 120, 60);
    let shown = format!("{:?}", t.backend());
    assert!(shown.contains("Ctrl-x"), "{shown}");
    assert!(shown.contains("+  n"), "{shown}");
    assert!(!shown.contains(" Q "), "{shown}");

    std::fs::write(&path, "[keys]\nstop = \"k\"\n").unwrap();
    let err = orchestra_tui::load_keys(Some(&path))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("stop = \"k\"") && err.contains("select_prev"),
        "{err}"
    );
    std::fs::write(&path, "[keys]\nhalt = \"x\"\n").unwrap();
    let err = orchestra_tui::load_keys(Some(&path))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("halt") && err.contains("new_task, start"),
        "{err}"
    );
}

/// A finished worktree task whose diff the view shows.
fn worktree_task(id: &str, name: &str) -> Task {
    let mut t = task(id, name, TaskStatus::Completed);
    t.metadata.isolation = orchestra_proto::task::Isolation::Worktree;
    t.metadata.worktree = Some(orchestra_proto::task::TaskWorktree {
        at: orchestra_daemon::git::Worktree {
            repo: "/work/project".into(),
            path: "/state/worktrees/project-1a2b/t-wt".into(),
            branch: "orchestra/fix-the-lexer-t-wt".into(),
            base_branch: "main".into(),
            base_commit: "0123456789abcdef0123456789abcdef01234567".into(),
            prefix: String::new(),
        },
        outcome: None,
        snapshot: None,
    });
    t
}

/// Three files: one modified in two hunks (a tab in it), one added, one deleted.
fn sample_diff() -> orchestra_tui::diff_view::TaskDiff {
    use orchestra_tui::diff_view::{DiffFile, TaskDiff};
    let mut patch = String::from(
        "diff --git a/src/lexer.rs b/src/lexer.rs\nindex 1111111..2222222 100644\n--- a/src/lexer.rs\n+++ b/src/lexer.rs\n@@ -1,5 +1,6 @@\n use std::str::Chars;\n-fn next(c: &mut Chars) -> char {\n+fn next(c: &mut Chars) -> Option<char> {\n \tc.next()\n+    // an empty input ends the tokens\n }\n",
    );
    for i in 0..12 {
        patch.push_str(&format!(" // unchanged line {i}\n"));
    }
    patch.push_str("@@ -40,3 +41,3 @@ fn tokens()\n-    let t = next(&mut c);\n+    let Some(t) = next(&mut c) else { break };\n     out.push(t);\n");
    patch.push_str("diff --git a/tests/lexer_empty.rs b/tests/lexer_empty.rs\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/tests/lexer_empty.rs\n@@ -0,0 +1,4 @@\n+#[test]\n+fn empty_input_has_no_tokens() {\n+    assert!(tokens(\"\").is_empty());\n+}\n");
    patch.push_str("diff --git a/src/old_lexer.rs b/src/old_lexer.rs\ndeleted file mode 100644\nindex 4444444..0000000\n--- a/src/old_lexer.rs\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-// the old lexer\n-pub fn lex() {}\n");
    let file = |path: &str, status: &str, added, removed| DiffFile {
        path: path.into(),
        status: status.into(),
        added: Some(added),
        removed: Some(removed),
    };
    TaskDiff {
        branch: "orchestra/fix-the-lexer-t-wt".into(),
        base_branch: "main".into(),
        base_moved: false,
        files: vec![
            file("src/lexer.rs", "modified", 3, 2),
            file("tests/lexer_empty.rs", "added", 4, 0),
            file("src/old_lexer.rs", "deleted", 0, 2),
        ],
        patch,
    }
}

fn with_worktree_task() -> Arc<Fake> {
    let f = fake();
    f.snap
        .lock()
        .tasks
        .push(Arc::new(worktree_task("t-wt", "fix the lexer")));
    f
}

/// `d` on the worktree task, and its diff handed over as the cockpit would.
fn open_diff(a: &mut App, f: &Arc<Fake>) {
    a.select_task("t-wt");
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('d')));
    assert_eq!(
        f.commands.lock().last(),
        Some(&Command::Diff("t-wt".into())),
        "d asks for the diff"
    );
    hand_diff(a);
}

fn hand_diff(a: &mut App) {
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Diff {
            task_id: "t-wt".into(),
            diff: Ok(Box::new(orchestra_tui::diff_view::PreparedDiff::new(
                "t-wt",
                sample_diff(),
            ))),
        }),
    });
}

/// The diff view at 80×24 (no room for the file list: a line names the file), at 120×40 (the
/// list beside the diff) and at the smallest size; then jumped to the next file.
#[test]
fn the_diff_view_at_three_sizes() {
    use crossterm::event::KeyCode::*;
    let f = with_worktree_task();
    for (w, h) in [(80, 24), (120, 40), (50, 12)] {
        let mut a = app(&f);
        render(&mut a, w, h);
        a.select_task("t-wt");
        a.on_terminal_event(key(Char('d')));
        let t = render(&mut a, w, h);
        if (w, h) == (80, 24) {
            insta::assert_snapshot!("diff_view_reading_80x24", t.backend());
        }
        hand_diff(&mut a);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("diff_view_{w}x{h}"), t.backend());
        keys(&mut a, &[Char('n')]);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("diff_view_next_file_{w}x{h}"), t.backend());
    }
}

/// Added lines are green, removed red, hunk headers cyan, a file's first line yellow.
#[test]
fn the_diff_is_coloured_by_line() {
    use ratatui::layout::Position;
    let f = with_worktree_task();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    open_diff(&mut a, &f);
    let t = render(&mut a, 120, 40);
    let buf = t.backend().buffer();
    let fg_of = |needle: &str| {
        for y in 0..buf.area.height {
            let row: String = (0..buf.area.width)
                .map(|x| buf[Position::new(x, y)].symbol().to_string())
                .collect();
            if let Some(i) = row.find(needle) {
                let x = row[..i].chars().count() as u16;
                return buf[Position::new(x, y)].fg;
            }
        }
        panic!("{needle:?} not shown");
    };
    assert_eq!(fg_of("+fn next"), Color::Green);
    assert_eq!(fg_of("-fn next"), Color::Red);
    assert_eq!(fg_of("@@ -1,5"), Color::Cyan);
    assert_eq!(fg_of("diff --git a/src/lexer.rs"), Color::Yellow);
    assert_eq!(fg_of(" use std"), Color::Reset);
}

/// Merge and discard questions name the task, the base branch, the snapshot ref; a refusal is
/// shown whole in the diff view; a task without a worktree says so in a sentence.
#[test]
fn merge_discard_and_nothing_to_show() {
    use crossterm::event::KeyCode::*;
    let f = with_worktree_task();
    both_sizes("confirm_merge", &f, |a| {
        a.select_task("t-wt");
        keys(a, &[Char('M')]);
    });
    both_sizes("confirm_discard", &f, |a| {
        a.select_task("t-wt");
        keys(a, &[Char('X')]);
    });
    let mut a = app(&f);
    render(&mut a, 80, 24);
    open_diff(&mut a, &f);
    keys(&mut a, &[Char('M'), Char('y')]);
    assert_eq!(
        f.commands.lock().last(),
        Some(&Command::Merge("t-wt".into()))
    );
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Finished {
            task_id: "t-wt".into(),
            result: Err("your uncommitted changes in src/lexer.rs are in the way of the merge into main; commit or stash them first; nothing was changed".into()),
        }),
    });
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("diff_view_refused_80x24", t.backend());
    // A task without a worktree (isolation none) says so rather than showing an empty pane.
    keys(&mut a, &[Esc]);
    a.select_task("t-done");
    keys(&mut a, &[Char('d')]);
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("diff_view_no_worktree_80x24", t.backend());
    assert_ne!(
        f.commands.lock().last(),
        Some(&Command::Diff("t-done".into())),
        "nothing to ask orchestra"
    );
}

/// Answers come back for the task they were asked for: a diff of another task does not land in
/// the open view, and a refusal of a merge asked from the list opens that task's view.
#[test]
fn answers_reach_the_view_of_their_own_task() {
    use crossterm::event::KeyCode::*;
    let f = with_worktree_task();
    let mut a = app(&f);
    render(&mut a, 80, 24);
    a.select_task("t-wt");
    keys(&mut a, &[Char('d')]);
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Diff {
            task_id: "t-other".into(),
            diff: Err("not this one".into()),
        }),
    });
    let v = a.diff_view().expect("open");
    assert_eq!(v.body, orchestra_tui::diff_view::Body::Loading);
    keys(&mut a, &[Esc]);
    assert!(a.diff_view().is_none());
    // Refused while no view is open: the task's view opens with the sentence.
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Finished {
            task_id: "t-wt".into(),
            result: Err("the merge conflicts in src/lexer.rs; nothing was changed".into()),
        }),
    });
    let v = a.diff_view().expect("opened for the refusal");
    assert_eq!(v.task_id, "t-wt");
    assert_eq!(
        v.refusal.as_deref(),
        Some("the merge conflicts in src/lexer.rs; nothing was changed")
    );
    // Done: the view of that task closes and the line says what happened.
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Finished {
            task_id: "t-wt".into(),
            result: Ok("merged \"fix the lexer\" into main".into()),
        }),
    });
    assert!(a.diff_view().is_none());
    let t = render(&mut a, 80, 24);
    assert!(
        format!("{:?}", t.backend()).contains("merged \"fix the lexer\" into main"),
        "{:?}",
        t.backend()
    );
}

/// A base branch that moved since the task started is said above the diff; a binary file has
/// no line counts.
#[test]
fn the_diff_view_says_the_base_moved_and_marks_binary_files() {
    use crossterm::event::KeyCode::*;
    let f = with_worktree_task();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    a.select_task("t-wt");
    keys(&mut a, &[Char('d')]);
    let mut diff = sample_diff();
    diff.base_moved = true;
    diff.files.push(orchestra_tui::diff_view::DiffFile {
        path: "logo.png".into(),
        status: "added".into(),
        added: None,
        removed: None,
    });
    diff.patch
        .push_str("diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n");
    a.on_result(AppMsg {
        origin: Origin::Action,
        result: Ok(Outcome::Diff {
            task_id: "t-wt".into(),
            diff: Ok(Box::new(orchestra_tui::diff_view::PreparedDiff::new(
                "t-wt", diff,
            ))),
        }),
    });
    let t = render(&mut a, 120, 40);
    let shown = format!("{:?}", t.backend());
    assert!(
        shown.contains("main has moved since the task started"),
        "{shown}"
    );
    assert!(shown.contains("A logo.png"), "{shown}");
    assert!(shown.contains("binary"), "{shown}");
    keys(&mut a, &[End]);
    let t = render(&mut a, 120, 40);
    let shown = format!("{:?}", t.backend());
    assert!(
        shown.contains("Binary files /dev/null and b/logo.png differ"),
        "{shown}"
    );
    assert!(shown.contains("▸A logo.png"), "{shown}");
}

/// `n` running agents, each with its own screen; the `blocked` one waits on a prompt.
fn agents(n: usize, blocked: Option<usize>) -> Arc<Fake> {
    let mut tasks = Vec::new();
    let mut sessions = Vec::new();
    let mut screens = HashMap::new();
    for i in 0..n {
        let (tid, sid) = (format!("t{i:02}"), format!("s{i:02}"));
        let mut t = task(&tid, &format!("agent number {i}"), TaskStatus::Running);
        if i % 5 == 4 {
            t.metadata.status = TaskStatus::Paused;
        }
        t.metadata.session_id = Some(sid.clone());
        tasks.push(Arc::new(t));
        let status = if blocked == Some(i) {
            SessionStatus::Blocked
        } else {
            SessionStatus::Busy
        };
        sessions.push(session(&sid, Some(&tid), status, false));
        let mut p = vt100::Parser::new(24, 80, 0);
        p.process(format!("$ make agent-{i}\r\nbuilding {i}…\r\n$ ").as_bytes());
        screens.insert(sid, p);
    }
    Arc::new(Fake {
        snap: Mutex::new(Snapshot {
            tasks,
            sessions,
            autopilot: true,
            offline: None,
            url: None,
            conflicts: HashMap::new(),
        }),
        screens: Mutex::new(screens),
        commands: Mutex::new(vec![]),
        input: Mutex::new(vec![]),
        events: broadcast::channel(16).0,
    })
}

fn grid_of(f: &Arc<Fake>) -> App {
    let mut a = app(f);
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('v')));
    assert!(a.grid_shown());
    a
}

#[test]
fn the_grid_at_several_counts_and_sizes() {
    for (n, w, h) in [
        (1, 80, 24),
        (2, 80, 24),
        (3, 120, 40),
        (4, 120, 40),
        (7, 160, 50),
        (16, 240, 70),
        (40, 240, 70),
    ] {
        let f = agents(n, (n >= 4).then_some(2));
        let mut a = grid_of(&f);
        let t = render(&mut a, w, h);
        insta::assert_snapshot!(format!("grid_{n}_agents_{w}x{h}"), t.backend());
        let page = a.grid_page().unwrap();
        let tiles = page.tiles.len();
        assert!(tiles == n.min(page.per_page), "{n}: {tiles} tiles");
        for tile in &page.tiles {
            assert!(
                tile.area.width >= 40 && tile.area.height >= 8,
                "{n}: {tile:?}"
            );
        }
    }
}

#[test]
fn a_blocked_tile_stands_out_and_the_selected_one_is_bold() {
    let f = agents(4, Some(2));
    let mut a = grid_of(&f);
    let t = render(&mut a, 120, 40);
    let page = a.grid_page().unwrap().clone();
    let buf = t.backend().buffer();
    let blocked = page.tiles[2].area;
    assert_eq!(buf[(blocked.x, blocked.y)].fg, Color::Yellow);
    let title: String = (blocked.x..blocked.right())
        .map(|x| buf[(x, blocked.y)].symbol())
        .collect();
    assert!(
        title.contains("agent number 2") && title.contains("⚠ BLOCKED"),
        "{title}"
    );
    let selected = page.tiles[0].area;
    assert_eq!(buf[(selected.x, selected.y)].symbol(), "┏");
    assert_eq!(buf[(selected.x, selected.y)].fg, Color::LightCyan);
}

#[test]
fn more_agents_than_fit_page_and_the_page_is_shown() {
    use crossterm::event::KeyCode;
    let f = agents(7, None);
    let mut a = grid_of(&f);
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("grid_7_agents_80x24_page_1", t.backend());
    let page = a.grid_page().unwrap();
    assert_eq!((page.page, page.pages, page.tiles.len()), (0, 2, 4));
    a.on_terminal_event(key(KeyCode::PageDown));
    let t = render(&mut a, 80, 24);
    insta::assert_snapshot!("grid_7_agents_80x24_page_2", t.backend());
    let page = a.grid_page().unwrap();
    assert_eq!((page.page, page.tiles.len()), (1, 3));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t04"));
    // Arrows move within the layout: right, then down past the last row stays on the page's end.
    a.on_terminal_event(key(KeyCode::Right));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t05"));
    a.on_terminal_event(key(KeyCode::Char('j')));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t06"));
    a.on_terminal_event(key(KeyCode::Char('k')));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t04"));
    a.on_terminal_event(key(KeyCode::PageUp));
    render(&mut a, 80, 24);
    assert_eq!(a.grid_page().unwrap().page, 0);
}

#[test]
fn each_tile_s_pty_is_sized_once_and_given_back_when_the_grid_closes() {
    let f = agents(3, None);
    let mut a = grid_of(&f);
    render(&mut a, 120, 40);
    let page = a.grid_page().unwrap().clone();
    let sent = f.commands.lock().clone();
    let want: Vec<Command> = page
        .tiles
        .iter()
        .map(|t| Command::Resize {
            session_id: t.session_id.clone(),
            cols: t.inner.width,
            rows: t.inner.height,
        })
        .collect();
    assert_eq!(sent, want);
    // Frames at the same size ask nothing more.
    render(&mut a, 120, 40);
    render(&mut a, 120, 40);
    assert_eq!(f.commands.lock().len(), 3);
    // Leaving: the others get their size back (80×24), the shown one the terminal pane's.
    f.commands.lock().clear();
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('v')));
    assert!(!a.grid_shown());
    render(&mut a, 120, 40);
    let areas = orchestra_tui::views::layout(ratatui::layout::Rect::new(0, 0, 120, 40)).unwrap();
    let mut sent = f.commands.lock().clone();
    sent.sort_by_key(|c| format!("{c:?}"));
    assert_eq!(
        sent,
        vec![
            Command::Resize {
                session_id: "s00".into(),
                cols: areas.term_inner.width,
                rows: areas.term_inner.height,
            },
            Command::Resize {
                session_id: "s01".into(),
                cols: 80,
                rows: 24,
            },
            Command::Resize {
                session_id: "s02".into(),
                cols: 80,
                rows: 24,
            },
        ]
    );
}

#[test]
fn keys_in_the_grid_act_on_the_selected_tile() {
    use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers};
    let f = agents(4, None);
    let mut a = grid_of(&f);
    render(&mut a, 120, 40);
    // The third tile: right, then down-left (2×2).
    a.on_terminal_event(key(KeyCode::Char('l')));
    a.on_terminal_event(key(KeyCode::Down));
    a.on_terminal_event(key(KeyCode::Left));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t02"));
    a.on_terminal_event(key(KeyCode::Enter));
    assert!(a.typing);
    a.on_terminal_event(key(KeyCode::Char('x')));
    assert_eq!(
        f.input.lock().clone(),
        vec![("s02".to_string(), b"x".to_vec())]
    );
    a.on_terminal_event(E::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::CONTROL,
    )));
    assert!(!a.typing && a.grid_shown());
    f.commands.lock().clear();
    a.on_terminal_event(key(KeyCode::Char('p')));
    a.on_terminal_event(key(KeyCode::Char('r')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![Command::Pause("t02".into()), Command::Resume("t02".into())]
    );
    let t = render(&mut a, 120, 40);
    let bottom: String = (0..120)
        .map(|x| t.backend().buffer()[(x, 39)].symbol())
        .collect();
    assert!(bottom.contains("move"), "{bottom}");
}

#[test]
fn zoom_fills_the_window_with_the_terminal_or_the_selected_tile() {
    let f = agents(4, Some(1));
    let mut a = app(&f);
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('z')));
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!("zoomed_terminal", t.backend());
    let cmds = f.commands.lock().clone();
    assert_eq!(
        cmds,
        vec![Command::Resize {
            session_id: "s00".into(),
            cols: 98,
            rows: 26
        }]
    );
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('v')));
    a.on_terminal_event(key(crossterm::event::KeyCode::Right));
    let t = render(&mut a, 100, 30);
    insta::assert_snapshot!("zoomed_tile", t.backend());
    let page = a.grid_page().unwrap();
    assert_eq!(page.tiles.len(), 1);
    assert_eq!(page.tiles[0].session_id, "s01");
}

#[test]
fn an_agent_blocked_elsewhere_is_queued_and_w_goes_to_it() {
    use crossterm::event::KeyCode;
    let f = agents(3, None);
    let mut a = app(&f);
    render(&mut a, 120, 40);
    assert!(a.waiting().is_empty());
    // The selected agent blocking is being looked at: no queue, no alert.
    f.snap.lock().sessions[0].status = SessionStatus::Blocked;
    a.refresh();
    assert!(a.waiting().is_empty() && a.take_alerts().is_empty());
    // Another one blocking, and one finishing, are queued, oldest first.
    f.snap.lock().sessions[2].status = SessionStatus::Blocked;
    f.snap.lock().sessions[2].prompt = Some(permission_prompt());
    a.refresh();
    {
        let mut snap = f.snap.lock();
        let mut done = (*snap.tasks[1]).clone();
        done.metadata.status = TaskStatus::Completed;
        snap.tasks[1] = Arc::new(done);
    }
    a.refresh();
    let queued: Vec<String> = a.waiting().iter().map(|w| w.status.clone()).collect();
    assert_eq!(queued, ["blocked", "completed"]);
    let alerts = a.take_alerts();
    assert_eq!(alerts.len(), 2);
    assert_eq!(alerts[0].name, "agent number 2");
    let t = render(&mut a, 120, 40);
    insta::assert_snapshot!("attention_in_the_top_bar", t.backend());
    a.on_terminal_event(key(KeyCode::Char('w')));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t02"));
    assert_eq!(a.waiting().len(), 1);
    assert!(a.notice().unwrap().text.contains("agent number 2 asks"));
    // Answered elsewhere: a blocked agent that no longer waits leaves the queue; going to a
    // finished one by hand does too.
    a.on_terminal_event(key(KeyCode::Up));
    assert!(a.waiting().is_empty(), "{:?}", a.waiting());
    // In the grid, the selected tile is looked at; another tile in view is not.
    a.on_terminal_event(key(KeyCode::Char('v')));
    render(&mut a, 120, 40);
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t01"));
    for s in [1, 2] {
        f.snap.lock().sessions[s].status = SessionStatus::Busy;
    }
    a.refresh();
    for s in [1, 2] {
        f.snap.lock().sessions[s].status = SessionStatus::Blocked;
    }
    a.refresh();
    let queued: Vec<&str> = a.waiting().iter().map(|w| w.name.as_str()).collect();
    assert_eq!(queued, ["agent number 2"]);
    assert_eq!(a.take_alerts().len(), 1);
}

#[test]
fn a_click_on_a_tile_selects_it_and_types_into_it() {
    use crossterm::event::{Event as E, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let f = agents(4, None);
    let mut a = grid_of(&f);
    render(&mut a, 120, 40);
    let tile = a.grid_page().unwrap().tiles[3].area;
    a.on_terminal_event(E::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: tile.x + 3,
        row: tile.y + 3,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(a.selected_task().map(|t| t.id.as_str()), Some("t03"));
    assert!(a.typing && a.grid_shown());
}

#[test]
fn idle_agents_in_the_grid_wake_nothing() {
    let f = agents(16, None);
    let mut a = app(&f);
    render(&mut a, 240, 70);
    // The list shows elapsed times, which tick.
    assert!(a.next_wake().is_some());
    a.on_terminal_event(key(crossterm::event::KeyCode::Char('v')));
    render(&mut a, 240, 70);
    assert_eq!(a.next_wake(), None);
}

#[test]
fn w_goes_to_a_waiting_session_the_filter_hid() {
    use crossterm::event::KeyCode;
    let f = fake();
    let mut a = app(&f);
    render(&mut a, 120, 40);
    keys(
        &mut a,
        &[
            KeyCode::Char('/'),
            KeyCode::Char('f'),
            KeyCode::Char('i'),
            KeyCode::Char('x'),
            KeyCode::Enter,
        ],
    );
    let t = render(&mut a, 120, 40);
    assert!(format!("{:?}", t.backend()).contains("/fix"));
    f.snap.lock().sessions[2].status = SessionStatus::Blocked;
    a.refresh();
    assert_eq!(a.waiting().len(), 1);
    a.on_terminal_event(key(KeyCode::Char('w')));
    assert_eq!(
        a.selected_session_info().map(|s| s.id.as_str()),
        Some("s-free")
    );
    assert!(a.waiting().is_empty());
    let t = render(&mut a, 120, 40);
    // The filter that hid it is cleared.
    let shown = format!("{:?}", t.backend());
    assert!(
        shown.contains("Tasks (7)") && !shown.contains("/fix"),
        "{shown}"
    );
}

/// The README's picture (docs/tui.svg) is this rendering: the tasks, the selected task's
/// steps and its live terminal. Regenerate with `ORCHESTRA_WRITE_DOCS=1 cargo test --test it
/// the_readme_picture`.
#[test]
fn the_readme_picture_is_current() {
    let f = fake();
    let mut a = app(&f);
    let t = render(&mut a, 120, 30);
    let want = crate::support::svg::buffer_svg(t.backend().buffer());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tui.svg");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        if std::env::var_os("ORCHESTRA_WRITE_DOCS").is_some() {
            std::fs::write(&path, &want).expect("write docs/tui.svg");
        } else {
            panic!(
                "docs/tui.svg is not the TUI as it draws now; regenerate it with \
                 ORCHESTRA_WRITE_DOCS=1 cargo test --test it the_readme_picture"
            );
        }
    }
}

/// Parent and child tasks (issue 33): children sit under their parent in the list, the
/// grid's tiles follow the same order and mark children, and pausing or cancelling a
/// parent asks whether its children go too (`o`: the parent alone).
#[test]
fn children_sit_under_their_parent_and_go_with_it_when_asked() {
    use crossterm::event::KeyCode;
    let f = fake();
    {
        let mut snap = f.snap.lock();
        let child = |id: &str, name: &str, status: TaskStatus, parent: &str| {
            let mut t = task(id, name, status);
            t.metadata.parent_task_id = Some(parent.into());
            Arc::new(t)
        };
        // Listed newest first: the children come before their parent in the snapshot.
        snap.tasks
            .insert(0, child("t-c1", "child one", TaskStatus::Running, "t-run"));
        snap.tasks
            .insert(0, child("t-g1", "grandchild", TaskStatus::Running, "t-c1"));
        snap.tasks.insert(
            0,
            child("t-c2", "child two", TaskStatus::Completed, "t-run"),
        );
    }
    let mut a = app(&f);
    a.refresh();
    let t = render(&mut a, 100, 30);
    let rows: Vec<String> = (0..30)
        .map(|y| {
            (0..60)
                .map(|x| t.backend().buffer()[(x, y)].symbol())
                .collect()
        })
        .collect();
    let at = |needle: &str| {
        rows.iter()
            .position(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not listed:\n{}", rows.join("\n")))
    };
    let parent = at("fix the parser");
    let (one, two, grand) = (
        at("└ ▶ child one"),
        at("└ ✓ child two"),
        at("  └ ▶ grandchild"),
    );
    let family = parent + 1..=parent + 3;
    assert!(
        family.contains(&one) && family.contains(&two) && grand == one + 1,
        "{}",
        rows.join("\n")
    );

    a.select_task("t-run");
    f.commands.lock().clear();
    a.on_terminal_event(key(KeyCode::Char('c')));
    let t = render(&mut a, 100, 30);
    let screen: String = (0..30)
        .flat_map(|y| (0..100).map(move |x| (x, y)))
        .map(|(x, y)| t.backend().buffer()[(x, y)].symbol().to_string())
        .collect();
    assert!(
        screen.contains("its 2") && screen.contains("unfinished child tasks?"),
        "{screen}"
    );
    assert!(screen.contains("only this"), "{screen}");
    a.on_terminal_event(key(KeyCode::Char('o')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![Command::Cancel("t-run".into())]
    );

    f.commands.lock().clear();
    a.on_terminal_event(key(KeyCode::Char('p')));
    a.on_terminal_event(key(KeyCode::Char('y')));
    // A task without children is paused without a question.
    a.select_task("t-g1");
    a.on_terminal_event(key(KeyCode::Char('p')));
    assert_eq!(
        f.commands.lock().clone(),
        vec![
            Command::Family {
                op: orchestra_proto::task::FamilyOp::Pause,
                id: "t-run".into()
            },
            Command::Pause("t-g1".into())
        ]
    );
}

#[test]
fn a_conflicting_task_is_marked_listed_in_its_details_and_queued() {
    use orchestra_proto::wire::{BaseConflict, ConflictReport, TaskConflict};
    let f = fake();
    let mut a = app(&f);
    let report = |id: &str, rival: &str, name: &str, base: bool| {
        Arc::new(ConflictReport {
            task_id: id.into(),
            with_base: base.then(|| BaseConflict {
                base_branch: "main".into(),
                base_commit: "abc".into(),
                files: vec!["Cargo.toml".into()],
            }),
            with_tasks: vec![TaskConflict {
                task_id: rival.into(),
                name: name.into(),
                files: vec!["src/lex.rs".into()],
            }],
            checked_at: Some(NOW),
            merge_order: vec!["t-done".into(), "t-run".into()],
            note: None,
        })
    };
    let run = report("t-run", "t-done", "add CI", true);
    let done = report("t-done", "t-run", "fix the parser", false);
    for r in [&run, &done] {
        f.snap.lock().set_conflicts(r.clone());
        a.on_engine(Ok(Event::Conflicts { report: r.clone() }));
    }
    let t = render(&mut a, 100, 30);
    // The selected task is being looked at; the other one's new conflict queues.
    let queued: Vec<_> = a.waiting().iter().map(|w| w.name.clone()).collect();
    assert_eq!(queued, vec!["add CI"]);
    assert_eq!(a.waiting()[0].status, "conflicts");
    assert_eq!(
        a.waiting()[0].prompt,
        "conflicts with fix the parser in src/lex.rs"
    );
    insta::assert_snapshot!(t.backend());
}
