//! The app: state, and how keys, mouse, engine events and command results change it.
//! Drawing is in `view.rs`; the loop that feeds this is in `mod.rs`.

use super::backend::{Cockpit, Command, Outcome, Snapshot};
use super::form::{Form, FormAction, LineEdit};
use super::keymap::{self, Action, Context, KeyMap};
use super::keys;
use super::text_edit::Edited;
use crate::engine::SessionStatus;
use crate::engine::{Event, TaskEventKind};
use crate::session::Key;
use crate::task::{Task, TaskStatus};
use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc};

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Tasks,
    Steps,
    Terminal,
}

/// One line of the tasks pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// Index into the snapshot's tasks.
    Task(usize),
    /// The "sessions" heading (not selectable).
    Header,
    /// A status's heading when the list is grouped by status (not selectable).
    Group(TaskStatus),
    /// Index into the snapshot's sessions.
    Session(usize),
}

impl Row {
    /// A heading: shown, never selected.
    pub fn is_heading(self) -> bool {
        matches!(self, Row::Header | Row::Group(_))
    }
}

/// What is selected, by id, so it survives reordering and refreshes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selected {
    Task(String),
    Session(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    Cancel {
        task_id: String,
        name: String,
    },
    EndSession {
        session_id: String,
        name: String,
    },
    /// Delete a finished task (kept in the trash).
    DeleteTask {
        task_id: String,
        name: String,
    },
    /// Remove an ended session's row (its transcript is kept in the trash).
    RemoveSession {
        session_id: String,
        name: String,
    },
    /// Stop orchestra, ending `live` agents (counted by orchestra when the key was pressed).
    Stop {
        live: usize,
    },
}

/// An overlay that takes the keyboard.
#[derive(Debug, Clone)]
pub enum Modal {
    None,
    Help,
    Form(Box<Form>),
    Confirm(Confirm),
    Message {
        session_id: String,
        name: String,
        edit: LineEdit,
    },
    Filter(LineEdit),
    /// Typing a search in the shown transcript.
    Search(LineEdit),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

#[derive(Debug, Clone)]
pub struct Notice {
    pub text: String,
    pub level: Level,
    pub until: Instant,
}

/// A frozen copy of a session's screen, scrolled back.
pub struct ScrollView {
    pub session_id: String,
    pub screen: vt100::Screen,
    pub offset: usize,
    pub max: usize,
    /// The live screen changed since the copy was taken.
    pub new_output: bool,
}

/// Where a command came from, so its result goes to the right place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Form,
    Action,
    /// Results nobody needs to see (resizes).
    Quiet,
    /// Reading a transcript: a failure ends the wait for it.
    Transcript,
}

/// A finished command.
#[derive(Debug)]
pub struct AppMsg {
    pub origin: Origin,
    pub result: Result<Outcome, String>,
}

/// Rectangles of the last frame, for mouse hits and the PTY size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    pub top: Rect,
    pub bottom: Rect,
    pub tasks: Rect,
    pub steps: Rect,
    pub term: Rect,
    pub term_inner: Rect,
}

/// The character that answers an option with this key from the TUI, if any: a single
/// visible character that is not bound to a command (see [`keymap::command_chars`]; those
/// are answered in the agent's terminal). Digits are never bound, so numbered options always
/// work.
pub fn answer_char(key: &str, keys: &KeyMap) -> Option<char> {
    let mut chars = key.chars();
    let c = chars.next()?;
    if chars.next().is_some()
        || c.is_whitespace()
        || c.is_control()
        || keys.command_chars().contains(&c)
    {
        return None;
    }
    Some(c)
}

/// One choice of a blocked agent's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptChoice {
    /// What answers it (`POST /answer {option}`).
    pub key: String,
    pub label: String,
    /// The character that answers it from the TUI (see [`answer_char`]).
    pub answer: Option<char>,
}

impl PromptChoice {
    /// Whether pressing the key in the TUI answers it.
    pub fn answerable(&self) -> bool {
        self.answer.is_some()
    }
}

/// What a blocked agent asks, read from its session's `prompt` (`{kind, text, options}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownPrompt {
    pub session_id: String,
    /// `permission`, `trust`…; empty when unknown.
    pub kind: String,
    /// The question; empty when unknown.
    pub text: String,
    pub options: Vec<PromptChoice>,
}

impl ShownPrompt {
    pub fn new(session_id: &str, prompt: Option<&serde_json::Value>, keys: &KeyMap) -> ShownPrompt {
        let field = |k: &str| {
            prompt
                .and_then(|p| p.get(k))
                .and_then(|v| v.as_str())
                .filter(|s| !s.trim().is_empty())
        };
        let text = field("question")
            .or_else(|| field("text"))
            .or_else(|| field("name"))
            .unwrap_or_default()
            .to_string();
        let options = prompt
            .and_then(|p| p.get("options"))
            .and_then(|o| o.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|o| {
                        let key = o.get("key")?.as_str()?.to_string();
                        let label = o
                            .get("label")
                            .and_then(|l| l.as_str())
                            .unwrap_or(&key)
                            .to_string();
                        let answer = answer_char(&key, keys);
                        Some(PromptChoice { key, label, answer })
                    })
                    .collect()
            })
            .unwrap_or_default();
        ShownPrompt {
            session_id: session_id.to_string(),
            kind: field("kind").unwrap_or_default().to_string(),
            text,
            options,
        }
    }

    /// The option a pressed character answers.
    pub fn option_for(&self, c: char) -> Option<&PromptChoice> {
        self.options.iter().find(|o| o.answer == Some(c))
    }

    /// The keys that answer it from the TUI, for hints: `1–3`, `y/1`; `None` when none does.
    pub fn keys_hint(&self) -> Option<String> {
        keys_text(self.options.iter().filter(|o| o.answerable()))
    }

    /// The keys that must be answered in the agent's terminal (bound to TUI commands, or
    /// longer than one character).
    pub fn terminal_keys_hint(&self) -> Option<String> {
        keys_text(self.options.iter().filter(|o| !o.answerable()))
    }
}

/// `1–3` for a run of consecutive digits (in order), else the keys joined by `/`.
fn keys_text<'a>(options: impl Iterator<Item = &'a PromptChoice>) -> Option<String> {
    let keys: Vec<&str> = options.map(|o| o.key.as_str()).collect();
    let digits: Option<Vec<u32>> = keys
        .iter()
        .map(|k| {
            let mut cs = k.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => c.to_digit(10),
                _ => None,
            }
        })
        .collect();
    match (keys.len(), digits) {
        (0, _) => None,
        (n, Some(d)) if n >= 2 && d.windows(2).all(|w| w[1] == w[0] + 1) => {
            Some(format!("{}–{}", d[0], d[n - 1]))
        }
        _ => Some(keys.join("/")),
    }
}

pub struct App {
    pub(crate) cockpit: Arc<dyn Cockpit>,
    /// The keys in force (the defaults with the config file's `[keys]`).
    pub keymap: KeyMap,
    pub(crate) snap: Snapshot,
    pub(crate) rows: Vec<Row>,
    pub(crate) selected: Option<Selected>,
    pub focus: Focus,
    /// Keys go to the agent (the terminal pane has focus and input).
    pub typing: bool,
    pub modal: Modal,
    pub(crate) filter: String,
    /// Tasks that finished while not selected.
    pub(crate) unseen: HashSet<String>,
    pub(crate) notice: Option<Notice>,
    pub(crate) scroll: Option<ScrollView>,
    pub(crate) steps_scroll: u16,
    pub(crate) list_offset: usize,
    /// First line of the help overlay shown; how many it showed in the last frame, of how many.
    pub(crate) help_scroll: usize,
    pub(crate) help_rows: usize,
    pub(crate) help_len: usize,
    /// A session's transcript shown in the terminal pane (`t`, or a terminal that is gone).
    pub(crate) transcript: Option<super::transcript_view::Transcript>,
    /// The session whose transcript was last asked for (asked once per selection).
    pub(crate) transcript_requested: Option<String>,
    /// That transcript is still being read.
    pub(crate) transcript_pending: bool,
    /// How the task list is ordered (kept in the state directory).
    pub(crate) order: super::list_prefs::ListOrder,
    pub(crate) areas: Option<Areas>,
    resize_sent: HashMap<String, (u16, u16)>,
    /// The snapshot is out of date.
    stale: bool,
    /// Something visible changed since the last frame.
    pub dirty: bool,
    quit: bool,
    /// What to print once the terminal is restored (orchestra was stopped).
    pub farewell: Option<String>,
    /// Colours on (off with NO_COLOR).
    pub color: bool,
    /// A fixed clock (ms since the epoch), for tests.
    pub clock: Option<i64>,
    tx: mpsc::UnboundedSender<AppMsg>,
    rx: Option<mpsc::UnboundedReceiver<AppMsg>>,
}

/// A key for a one-line editor (filter, message). Alt combinations are not text and are
/// bound to nothing here: they do nothing (the editor would type the letter).
fn edit_line(edit: &mut LineEdit, key: &KeyEvent) {
    if !key.modifiers.contains(crossterm::event::KeyModifiers::ALT) {
        edit.handle(key);
    }
}

/// What a session without a task is called: the first line of what it runs, else its
/// provider's id.
pub fn session_name(s: &crate::engine::SessionInfo) -> String {
    match s.task.lines().next().map(str::trim) {
        Some(first) if !first.is_empty() => first.to_string(),
        _ => format!("{} session", s.provider_id),
    }
}

impl App {
    pub fn new(cockpit: Arc<dyn Cockpit>) -> App {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut app = App {
            cockpit,
            keymap: KeyMap::default(),
            snap: Snapshot::default(),
            rows: Vec::new(),
            selected: None,
            focus: Focus::Tasks,
            typing: false,
            modal: Modal::None,
            filter: String::new(),
            unseen: HashSet::new(),
            notice: None,
            scroll: None,
            steps_scroll: 0,
            list_offset: 0,
            help_scroll: 0,
            transcript: None,
            transcript_requested: None,
            transcript_pending: false,
            order: super::list_prefs::ListOrder::default(),
            help_rows: 0,
            help_len: 0,
            areas: None,
            resize_sent: HashMap::new(),
            stale: true,
            dirty: true,
            quit: false,
            farewell: None,
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            clock: None,
            tx,
            rx: Some(rx),
        };
        if let Some(dir) = app.cockpit.state_dir() {
            app.order = super::list_prefs::load(&dir);
        }
        app.refresh();
        app
    }

    /// The receiver of command results, for the event loop (once).
    pub fn take_results(&mut self) -> Option<mpsc::UnboundedReceiver<AppMsg>> {
        self.rx.take()
    }

    /// Applies every command result that has arrived (when the loop did not take them).
    pub fn pump(&mut self) {
        let mut got = Vec::new();
        if let Some(rx) = self.rx.as_mut() {
            while let Ok(m) = rx.try_recv() {
                got.push(m);
            }
        }
        for m in got {
            self.on_result(m);
        }
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    pub fn request_quit_now(&mut self) {
        self.quit = true;
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.unwrap_or_else(crate::engine::now_ms)
    }

    // ---------------------------------------------------------------- snapshot and rows

    /// Re-reads the snapshot if something changed.
    pub fn refresh_if_stale(&mut self) {
        if self.stale {
            self.refresh();
        }
    }

    pub fn refresh(&mut self) {
        self.snap = self.cockpit.snapshot();
        self.stale = false;
        self.rebuild_rows();
        self.dirty = true;
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    fn matches_filter(&self, text: &str) -> bool {
        self.filter.is_empty() || text.to_lowercase().contains(&self.filter.to_lowercase())
    }

    pub(crate) fn rebuild_rows(&mut self) {
        let mut rows = Vec::new();
        let mut group = None;
        for i in self.order.arrange(&self.snap.tasks) {
            let t = &self.snap.tasks[i];
            if self.matches_filter(&t.name) {
                if self.order.grouped() && group != Some(t.status()) {
                    group = Some(t.status());
                    rows.push(Row::Group(t.status()));
                }
                rows.push(Row::Task(i));
            }
        }
        let mut header = false;
        for (i, s) in self.snap.sessions.iter().enumerate() {
            if s.task_id.is_none() && self.matches_filter(&session_name(s)) {
                if !header {
                    rows.push(Row::Header);
                    header = true;
                }
                rows.push(Row::Session(i));
            }
        }
        self.rows = rows;
        if self.selected_index().is_none() {
            let first = self.rows.iter().position(|r| !r.is_heading());
            self.select_index(first);
        }
    }

    fn row_selected(&self, row: Row) -> Option<Selected> {
        match row {
            Row::Task(i) => self.snap.tasks.get(i).map(|t| Selected::Task(t.id.clone())),
            Row::Session(i) => self
                .snap
                .sessions
                .get(i)
                .map(|s| Selected::Session(s.id.clone())),
            Row::Header | Row::Group(_) => None,
        }
    }

    pub fn selected_index(&self) -> Option<usize> {
        let sel = self.selected.as_ref()?;
        self.rows
            .iter()
            .position(|r| self.row_selected(*r).as_ref() == Some(sel))
    }

    fn select_index(&mut self, i: Option<usize>) {
        let new = i
            .and_then(|i| self.rows.get(i).copied())
            .and_then(|r| self.row_selected(r));
        if new != self.selected {
            self.selected = new;
            self.scroll = None;
            self.transcript = None;
            self.transcript_requested = None;
            self.transcript_pending = false;
            self.steps_scroll = 0;
            self.dirty = true;
        }
        if let Some(Selected::Task(id)) = &self.selected {
            self.unseen.remove(id);
        }
    }

    /// Selects a task by id (it is shown even if the filter hid it: the filter is cleared).
    pub fn select_task(&mut self, id: &str) {
        self.refresh();
        let want = Selected::Task(id.to_string());
        if !self
            .rows
            .iter()
            .any(|r| self.row_selected(*r).as_ref() == Some(&want))
        {
            self.filter.clear();
            self.rebuild_rows();
        }
        let i = self
            .rows
            .iter()
            .position(|r| self.row_selected(*r).as_ref() == Some(&want));
        self.select_index(i);
    }

    fn move_selection(&mut self, delta: isize) {
        let selectable: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_heading())
            .map(|(i, _)| i)
            .collect();
        if selectable.is_empty() {
            return;
        }
        let cur = self
            .selected_index()
            .and_then(|i| selectable.iter().position(|&s| s == i));
        let next = match cur {
            None => 0,
            Some(c) => (c as isize + delta).clamp(0, selectable.len() as isize - 1) as usize,
        };
        self.select_index(Some(selectable[next]));
    }

    pub fn selected_task(&self) -> Option<&Arc<Task>> {
        match &self.selected {
            Some(Selected::Task(id)) => self.snap.tasks.iter().find(|t| &t.id == id),
            _ => None,
        }
    }

    pub fn selected_session_info(&self) -> Option<&crate::engine::SessionInfo> {
        let sid = self.shown_session_id()?;
        self.snap.sessions.iter().find(|s| s.id == sid)
    }

    /// The session whose terminal the right pane shows.
    pub fn shown_session_id(&self) -> Option<String> {
        match &self.selected {
            Some(Selected::Task(_)) => self.selected_task()?.metadata.session_id.clone(),
            Some(Selected::Session(id)) => Some(id.clone()),
            None => None,
        }
    }

    fn shown_session_live(&self) -> bool {
        self.selected_session_info().is_some_and(|s| !s.ended)
    }

    pub fn is_blocked(&self, task: &Task) -> bool {
        task.metadata.session_id.as_ref().is_some_and(|sid| {
            self.snap
                .sessions
                .iter()
                .any(|s| &s.id == sid && !s.ended && s.status == SessionStatus::Blocked)
        })
    }

    /// The prompt the shown session is blocked on (the selected task's agent, or the
    /// selected session), when it waits for an answer.
    pub fn shown_prompt(&self) -> Option<ShownPrompt> {
        let s = self.selected_session_info()?;
        (!s.ended && s.status == SessionStatus::Blocked)
            .then(|| ShownPrompt::new(&s.id, s.prompt.as_ref(), &self.keymap))
    }

    /// A character pressed outside typing mode that may answer the shown prompt: a digit
    /// always does (or says why not); another character only when it is an option's key and
    /// not a command. `false`: not consumed, the key is a command.
    fn try_answer(&mut self, c: char) -> bool {
        let digit = c.is_ascii_digit();
        let Some(p) = self.shown_prompt() else {
            if digit {
                self.notify(
                    format!("nothing to answer with {c}: no agent shown here waits on a prompt"),
                    Level::Error,
                );
            }
            return digit;
        };
        match p.option_for(c) {
            Some(o) => {
                self.notify(format!("answering {} ({})…", o.key, o.label), Level::Info);
                let cmd = Command::Answer {
                    session_id: p.session_id.clone(),
                    option: o.key.clone(),
                };
                self.run(cmd, Origin::Action);
                true
            }
            None if digit => {
                let how = match p.keys_hint() {
                    Some(keys) => format!("press {keys} to answer"),
                    None => "answer it in the agent's terminal (Enter)".to_string(),
                };
                self.notify(format!("the prompt has no option {c}: {how}"), Level::Error);
                true
            }
            None => false,
        }
    }

    pub fn is_unseen(&self, task_id: &str) -> bool {
        self.unseen.contains(task_id)
    }

    // ---------------------------------------------------------------- notices and commands

    pub fn notify(&mut self, text: impl Into<String>, level: Level) {
        let text = text.into();
        let secs = if level == Level::Error { 8 } else { 4 };
        self.notice = Some(Notice {
            text,
            level,
            until: Instant::now() + Duration::from_secs(secs),
        });
        self.dirty = true;
    }

    pub fn notice(&self) -> Option<&Notice> {
        self.notice.as_ref()
    }

    /// Runs a command off the UI loop; its result comes back as an [`AppMsg`].
    pub(crate) fn run(&mut self, cmd: Command, origin: Origin) {
        let fut = self.cockpit.execute(cmd);
        let tx = self.tx.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn(async move {
                    let result = fut.await;
                    let _ = tx.send(AppMsg { origin, result });
                });
            }
            Err(_) => tracing::warn!("no runtime: command dropped"),
        }
    }

    pub fn on_result(&mut self, m: AppMsg) {
        self.stale = true;
        self.dirty = true;
        match (m.origin, m.result) {
            (Origin::Quiet, _) => {}
            (Origin::Form, Ok(Outcome::Created { task_id, note })) => {
                if matches!(self.modal, Modal::Form(_)) {
                    self.modal = Modal::None;
                }
                self.select_task(&task_id);
                match note {
                    Some(n) => self.notify(n, Level::Error),
                    None => {
                        let text = self.created_notice("task created");
                        self.notify(text, Level::Info)
                    }
                }
            }
            (Origin::Form, Ok(Outcome::Done(text))) => {
                // An edit was saved.
                if matches!(self.modal, Modal::Form(_)) {
                    self.modal = Modal::None;
                }
                self.notify(text, Level::Info);
            }
            (Origin::Form, Err(e)) => match &mut self.modal {
                Modal::Form(f) => f.engine_error(e),
                _ => self.notify(e, Level::Error),
            },
            (_, Ok(Outcome::Created { task_id, note })) => {
                self.select_task(&task_id);
                let text = self.created_notice(note.as_deref().unwrap_or("task created"));
                self.notify(text, Level::Info);
            }
            (_, Ok(Outcome::Transcript { session_id, bytes })) => {
                self.on_transcript(session_id, bytes)
            }
            (_, Ok(Outcome::Live(live))) => {
                if matches!(self.modal, Modal::None) {
                    self.open(Modal::Confirm(Confirm::Stop { live }));
                }
            }
            (_, Ok(Outcome::Stopped(text))) => {
                self.farewell = Some(text);
                self.quit = true;
            }
            (_, Ok(Outcome::Done(text))) => {
                if !text.is_empty() {
                    self.notify(text, Level::Info);
                }
            }
            (Origin::Transcript, Err(e)) => {
                self.transcript_pending = false;
                self.notify(format!("cannot read the transcript: {e}"), Level::Error);
            }
            (_, Err(e)) => self.notify(e, Level::Error),
        }
    }

    /// A notice for a task just created and selected: what starts it, if it waits.
    fn created_notice(&self, what: &str) -> String {
        match self.selected_task() {
            Some(t) if t.status() == TaskStatus::Pending => {
                format!("{what}: {}", self.pending_hint())
            }
            _ => what.to_string(),
        }
    }

    /// What starts a pending task, true to the state now: autopilot when it is on, else a key.
    pub fn pending_hint(&self) -> String {
        let key = |a| {
            self.keymap
                .key_for(self.pane_context(), a)
                .unwrap_or_default()
        };
        if self.snap.autopilot {
            format!(
                "autopilot will start it ({} starts it now)",
                key(Action::Start)
            )
        } else {
            format!(
                "press {} to start it, or {} to turn autopilot on",
                key(Action::Start),
                key(Action::Autopilot)
            )
        }
    }

    // ---------------------------------------------------------------- engine events

    pub fn on_engine(&mut self, ev: Result<Event, broadcast::error::RecvError>) {
        match ev {
            Ok(Event::Screen { session_id }) => {
                if self.shown_session_id().as_deref() == Some(session_id.as_str()) {
                    match &mut self.scroll {
                        Some(s) => {
                            if !s.new_output {
                                s.new_output = true;
                                self.dirty = true;
                            }
                        }
                        None => self.dirty = true,
                    }
                }
            }
            Ok(Event::Task { kind, task, .. }) => {
                if matches!(
                    kind,
                    TaskEventKind::Completed | TaskEventKind::Failed | TaskEventKind::Cancelled
                ) && self.selected != Some(Selected::Task(task.id.clone()))
                {
                    self.unseen.insert(task.id.clone());
                }
                self.stale = true;
                self.dirty = true;
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                self.stale = true;
                self.dirty = true;
            }
            Err(broadcast::error::RecvError::Closed) => {}
        }
    }

    /// When the loop must wake up by itself: elapsed times tick while a task runs, and
    /// notices expire. `None`: nothing animates, sleep until input.
    pub fn next_wake(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut wake: Option<Instant> = None;
        let now_ms = self.now_ms();
        // The next time a running task's elapsed time changes on screen.
        let next_change = self
            .snap
            .tasks
            .iter()
            .filter(|t| t.status() == TaskStatus::Running)
            .filter_map(|t| t.metadata.started_at)
            .map(|start| {
                let el = (now_ms - start).max(0);
                match super::views::elapsed_resolution_ms(el) {
                    // Seconds: every task ticks on the same wall-clock second, so twenty
                    // running tasks cost one frame a second, not twenty.
                    1000 => 1000 - now_ms.rem_euclid(1000),
                    res => res - el.rem_euclid(res),
                }
            })
            .min();
        if let Some(ms) = next_change {
            wake = Some(now + Duration::from_millis(ms.clamp(1, 60_000) as u64));
        }
        if let Some(n) = &self.notice {
            wake = Some(wake.map_or(n.until, |w| w.min(n.until)));
        }
        wake
    }

    /// Called when the wake-up time passed.
    pub fn on_tick(&mut self) {
        if let Some(n) = &self.notice
            && n.until <= Instant::now()
        {
            self.notice = None;
        }
        self.dirty = true;
    }

    // ---------------------------------------------------------------- input

    pub fn on_terminal_event(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::Paste(text) => self.on_paste(&text),
            TermEvent::Resize(..) => {
                self.resize_sent.clear();
                self.dirty = true;
            }
            _ => {}
        }
    }

    fn on_paste(&mut self, text: &str) {
        match &mut self.modal {
            Modal::Form(f) => f.paste(text),
            Modal::Search(edit) => {
                edit.insert_str(text);
                let query = edit.text().to_string();
                self.search_for(&query);
            }
            Modal::Message { edit, .. } | Modal::Filter(edit) => {
                if let Edited::JoinedLines(n) = edit.insert_str(text) {
                    self.notify(
                        format!("one line only: {n} pasted line breaks became spaces"),
                        Level::Info,
                    );
                }
            }
            _ if self.typing => {
                if let Some(sid) = self.shown_session_id() {
                    let mut bracketed = false;
                    self.cockpit
                        .with_screen(&sid, &mut |s| bracketed = s.bracketed_paste());
                    let bytes = crate::session::encode_paste(text, bracketed);
                    self.send_to_agent(&sid, bytes);
                }
            }
            _ => {}
        }
        if let Modal::Filter(edit) = &self.modal {
            self.filter = edit.text().to_string();
            self.rebuild_rows();
        }
        self.dirty = true;
    }

    fn send_to_agent(&mut self, sid: &str, bytes: Vec<u8>) {
        // Typing returns to the live view.
        if self.scroll.take().is_some() {
            self.dirty = true;
        }
        if let Err(e) = self.cockpit.write_input(sid, bytes) {
            self.notify(e, Level::Error);
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        self.dirty = true;
        if !matches!(self.modal, Modal::None) {
            self.on_modal_key(key);
            return;
        }
        if self.typing {
            self.on_typing_key(key);
            return;
        }
        self.on_command_key(key);
    }

    fn on_typing_key(&mut self, key: KeyEvent) {
        match self.keymap.lookup(Context::Typing, &key) {
            Some(Action::LeaveTyping) => {
                self.typing = false;
                self.focus = Focus::Tasks;
                return;
            }
            Some(Action::PageBack) => return self.scroll_page(true),
            Some(Action::PageForward) => return self.scroll_page(false),
            _ => {}
        }
        let Some(sid) = self.shown_session_id() else {
            self.typing = false;
            return;
        };
        if !self.shown_session_live() {
            self.typing = false;
            self.notify("the agent has exited; Ctrl-q is not needed", Level::Error);
            return;
        }
        let mut app_cursor = false;
        self.cockpit
            .with_screen(&sid, &mut |s| app_cursor = s.application_cursor());
        if let Some(bytes) = keys::to_key(&key).and_then(|k| k.encode(app_cursor)) {
            self.send_to_agent(&sid, bytes);
        }
    }

    fn on_modal_key(&mut self, key: KeyEvent) {
        let action = self.keymap.lookup(self.key_context(), &key);
        let modal = std::mem::replace(&mut self.modal, Modal::None);
        self.modal = match modal {
            Modal::None => Modal::None,
            Modal::Help => match action {
                Some(Action::CloseHelp) => Modal::None,
                Some(Action::HelpUp) => self.scroll_help(-1),
                Some(Action::HelpDown) => self.scroll_help(1),
                Some(Action::HelpPageUp) => self.scroll_help(-(self.help_page() as isize)),
                Some(Action::HelpPageDown) => self.scroll_help(self.help_page() as isize),
                _ => Modal::Help,
            },
            Modal::Form(mut form) => match form.handle(&key) {
                FormAction::Cancel => Modal::None,
                FormAction::None => Modal::Form(form),
                FormAction::Submit => {
                    form.busy = true;
                    self.run(form.command(), Origin::Form);
                    Modal::Form(form)
                }
            },
            Modal::Confirm(c) => match action {
                Some(Action::Yes) => {
                    match c {
                        Confirm::Cancel { task_id, name } => {
                            self.notify(format!("cancelling {name:?}…"), Level::Info);
                            self.run(Command::Cancel(task_id), Origin::Action);
                        }
                        Confirm::EndSession { session_id, name } => {
                            self.notify(format!("ending {name:?}…"), Level::Info);
                            self.run(Command::EndSession(session_id), Origin::Action)
                        }
                        Confirm::DeleteTask { task_id, name } => {
                            self.notify(format!("deleting {name:?}…"), Level::Info);
                            self.run(Command::DeleteTask(task_id), Origin::Action);
                        }
                        Confirm::RemoveSession { session_id, .. } => {
                            self.run(Command::RemoveSession(session_id), Origin::Action)
                        }
                        Confirm::Stop { .. } => {
                            self.notify("stopping orchestra…", Level::Info);
                            self.run(Command::StopOrchestra, Origin::Action)
                        }
                    }
                    Modal::None
                }
                Some(Action::No) => Modal::None,
                _ => Modal::Confirm(c),
            },
            Modal::Message {
                session_id,
                name,
                mut edit,
            } => match action {
                Some(Action::CancelMessage) => Modal::None,
                Some(Action::SendMessage) => {
                    let text = edit.text().trim().to_string();
                    if !text.is_empty() {
                        self.run(Command::Message { session_id, text }, Origin::Action);
                    }
                    Modal::None
                }
                _ => {
                    edit_line(&mut edit, &key);
                    Modal::Message {
                        session_id,
                        name,
                        edit,
                    }
                }
            },
            Modal::Search(edit) => self.on_search_key(action, &key, edit),
            Modal::Filter(mut edit) => match action {
                Some(Action::ClearFilter) => {
                    self.filter.clear();
                    self.rebuild_rows();
                    Modal::None
                }
                Some(Action::KeepFilter) => Modal::None,
                Some(Action::SelectPrev) => {
                    self.move_selection(-1);
                    Modal::Filter(edit)
                }
                Some(Action::SelectNext) => {
                    self.move_selection(1);
                    Modal::Filter(edit)
                }
                _ => {
                    edit_line(&mut edit, &key);
                    self.filter = edit.text().to_string();
                    self.rebuild_rows();
                    Modal::Filter(edit)
                }
            },
        };
    }

    /// Rows of help the overlay shows at once (from the last frame).
    fn help_page(&self) -> usize {
        self.help_rows.max(1)
    }

    fn scroll_help(&mut self, delta: isize) -> Modal {
        // Before the overlay is first drawn its length is unknown: drawing clamps it.
        let max = match self.help_len {
            0 => isize::MAX as usize,
            n => n.saturating_sub(self.help_rows),
        };
        self.help_scroll = (self.help_scroll as isize + delta).clamp(0, max as isize) as usize;
        Modal::Help
    }

    fn selected_task_or_notice(&mut self) -> Option<Arc<Task>> {
        match self.selected_task() {
            Some(t) => Some(t.clone()),
            None => {
                self.notify("select a task first", Level::Error);
                None
            }
        }
    }

    /// The context of the keys outside typing mode and overlays: the focused pane.
    pub fn pane_context(&self) -> Context {
        match self.focus {
            Focus::Tasks => Context::Tasks,
            Focus::Steps => Context::Steps,
            Focus::Terminal if self.shown_transcript().is_some() => Context::Transcript,
            Focus::Terminal => Context::Terminal,
        }
    }

    /// Where the keyboard is now: an overlay, typing mode, or the focused pane.
    pub fn key_context(&self) -> Context {
        match &self.modal {
            Modal::Help => Context::Help,
            Modal::Form(_) => Context::Form,
            Modal::Confirm(_) => Context::Confirm,
            Modal::Filter(_) => Context::Filter,
            Modal::Message { .. } => Context::Message,
            Modal::Search(_) => Context::Search,
            Modal::None if self.typing => Context::Typing,
            Modal::None => self.pane_context(),
        }
    }

    /// Opens an overlay; an older notice is dropped so it does not come back when it closes.
    pub(crate) fn open(&mut self, modal: Modal) {
        self.notice = None;
        self.help_scroll = 0;
        self.modal = modal;
    }

    fn on_command_key(&mut self, key: KeyEvent) {
        // Digits, and option keys that are not commands, answer a shown prompt.
        let k = keymap::normalize(&key);
        if let KeyCode::Char(c) = k.code
            && k.mods.is_empty()
            && self.try_answer(c)
        {
            return;
        }
        if let Some(action) = self.keymap.lookup(self.pane_context(), &key) {
            self.perform(action);
        }
    }

    /// Does what a key bound outside typing mode and overlays asks.
    fn perform(&mut self, action: Action) {
        match action {
            // Agents belong to orchestra: leaving the TUI ends none of them.
            Action::Detach => self.quit = true,
            // The question names the agents running now, as orchestra counts them (one started
            // from the CLI a moment ago included), not the ones last drawn.
            Action::Stop => self.run(Command::CountLive, Origin::Action),
            Action::Refresh => self.refresh(),
            Action::Help => self.open(Modal::Help),
            Action::Filter => {
                self.focus = Focus::Tasks;
                self.open(Modal::Filter(LineEdit::new(&self.filter)));
            }
            Action::Back => {
                let was_scrolled = self.scroll.take().is_some();
                if !was_scrolled && !self.filter.is_empty() {
                    self.filter.clear();
                    self.rebuild_rows();
                }
            }
            Action::NewTask => {
                let form = Form::new(
                    self.cockpit.providers(),
                    self.cockpit.default_provider().as_deref(),
                    &self.cockpit.default_dir(),
                );
                self.open(Modal::Form(Box::new(form)));
            }
            Action::Start => {
                if let Some(t) = self.selected_task_or_notice() {
                    self.run(Command::Start(t.id.clone()), Origin::Action);
                }
            }
            Action::Pause => {
                if let Some(t) = self.selected_task_or_notice() {
                    self.run(Command::Pause(t.id.clone()), Origin::Action);
                }
            }
            Action::Resume => {
                if let Some(t) = self.selected_task_or_notice() {
                    self.run(Command::Resume(t.id.clone()), Origin::Action);
                }
            }
            Action::Retry => {
                if let Some(t) = self.selected_task_or_notice() {
                    self.run(Command::Retry(t.id.clone()), Origin::Action);
                }
            }
            Action::Cancel => self.ask_cancel(),
            Action::Autopilot => {
                let on = !self.snap.autopilot;
                self.run(Command::SetAutopilot(on), Origin::Action);
            }
            Action::Message => match self.shown_session_id() {
                Some(sid) if self.shown_session_live() => {
                    let name = self.shown_name();
                    self.open(Modal::Message {
                        session_id: sid,
                        name,
                        edit: LineEdit::default(),
                    });
                }
                _ => self.notify(
                    "no running agent to message: start the task first",
                    Level::Error,
                ),
            },
            Action::Transcript => self.toggle_transcript(),
            Action::Search => self.open_search(),
            Action::CloseTranscript => self.close_transcript(),
            Action::Delete => self.ask_delete(),
            Action::Edit => self.open_edit(),
            Action::Order => self.next_order(),
            Action::Type => self.enter_terminal(),
            Action::NextPane => self.cycle_focus(true),
            Action::PrevPane => self.cycle_focus(false),
            Action::PageBack => self.scroll_page(true),
            Action::PageForward => self.scroll_page(false),
            Action::SelectPrev => self.move_selection(-1),
            Action::SelectNext => self.move_selection(1),
            Action::SelectFirst => {
                self.select_index(self.rows.iter().position(|r| !r.is_heading()))
            }
            Action::SelectLast => {
                let last = self.rows.iter().rposition(|r| !r.is_heading());
                self.select_index(last)
            }
            Action::StepsUp => self.steps_scroll = self.steps_scroll.saturating_sub(1),
            Action::StepsDown => self.steps_scroll = self.steps_scroll.saturating_add(1),
            Action::StepsTop => self.steps_scroll = 0,
            Action::StepsBottom => self.steps_scroll = u16::MAX / 2,
            Action::LineBack => self.scroll_by(1),
            Action::LineForward => self.scroll_by(-1),
            Action::Oldest => self.scroll_by(isize::MAX / 2),
            Action::Live => match self.shown_transcript_mut() {
                Some(t) => t.to_end(),
                None => self.scroll = None,
            },
            // Bound only in typing mode and overlays (handled there).
            Action::LeaveTyping
            | Action::FormNextField
            | Action::FormPrevField
            | Action::FormPrevChoice
            | Action::FormNextChoice
            | Action::FormSubmit
            | Action::FormCancel
            | Action::FormNewLine
            | Action::SearchNext
            | Action::SearchPrev
            | Action::SearchDone
            | Action::Yes
            | Action::No
            | Action::KeepFilter
            | Action::ClearFilter
            | Action::SendMessage
            | Action::CancelMessage
            | Action::CloseHelp
            | Action::HelpUp
            | Action::HelpDown
            | Action::HelpPageUp
            | Action::HelpPageDown => {}
        }
    }

    /// `c`: a task is cancelled after y/n, a session without a task is ended after y/n.
    fn ask_cancel(&mut self) {
        match &self.selected {
            Some(Selected::Session(sid)) => {
                if self.shown_session_live() {
                    let confirm = Confirm::EndSession {
                        session_id: sid.clone(),
                        name: self.shown_name(),
                    };
                    self.open(Modal::Confirm(confirm));
                } else {
                    self.notify("this session has already ended", Level::Error);
                }
            }
            _ => {
                if let Some(t) = self.selected_task_or_notice() {
                    if t.status().is_final() {
                        self.notify(
                            format!("{:?} is already {}", t.name, t.status()),
                            Level::Error,
                        );
                    } else {
                        self.open(Modal::Confirm(Confirm::Cancel {
                            task_id: t.id.clone(),
                            name: t.name.clone(),
                        }));
                    }
                }
            }
        }
    }

    /// The name of what the terminal pane shows: the task's name, or for a session without a
    /// task the first line of what it runs (its provider when that is empty).
    pub fn shown_name(&self) -> String {
        if let Some(t) = self.selected_task() {
            return t.name.clone();
        }
        self.selected_session_info()
            .map(session_name)
            .unwrap_or_default()
    }

    fn cycle_focus(&mut self, forward: bool) {
        self.focus = match (self.focus, forward) {
            (Focus::Tasks, true) | (Focus::Terminal, false) => Focus::Steps,
            (Focus::Steps, true) | (Focus::Tasks, false) => Focus::Terminal,
            (Focus::Terminal, true) | (Focus::Steps, false) => Focus::Tasks,
        };
    }

    /// Focuses the terminal pane, sending keys to the agent when it runs.
    pub fn enter_terminal(&mut self) {
        match self.shown_session_id() {
            Some(_) if self.shown_session_live() => {
                self.focus = Focus::Terminal;
                self.typing = true;
                self.scroll = None;
                self.transcript = None;
            }
            Some(_) => {
                self.focus = Focus::Terminal;
                self.notify(
                    "the agent has exited: its last screen is shown",
                    Level::Info,
                );
            }
            None => {
                let hint = match self.selected_task() {
                    Some(t) if t.status() == TaskStatus::Pending => {
                        format!("this task has no agent yet: {}", self.pending_hint())
                    }
                    Some(_) => "this task has no agent terminal".to_string(),
                    None => format!(
                        "nothing selected: press {} to create a task",
                        self.keymap
                            .key_for(self.pane_context(), Action::NewTask)
                            .unwrap_or_default()
                    ),
                };
                self.notify(hint, Level::Error);
            }
        }
    }

    fn page_rows(&self) -> usize {
        self.areas
            .map(|a| a.term_inner.height.max(2) as usize - 1)
            .unwrap_or(10)
    }

    fn scroll_page(&mut self, up: bool) {
        let n = self.page_rows() as isize;
        self.scroll_by(if up { n } else { -n });
    }

    /// How many lines the terminal pane is scrolled back; `None`: the live view.
    pub fn scrolled_back(&self) -> Option<usize> {
        self.scroll.as_ref().map(|v| v.offset)
    }

    /// Scrolls the terminal pane back (`delta` > 0) or forward; 0 back is the live view.
    pub fn scroll_by(&mut self, delta: isize) {
        self.dirty = true;
        if let Some(t) = self.shown_transcript_mut() {
            t.scroll_by(delta);
            return;
        }
        let Some(sid) = self.shown_session_id() else {
            return;
        };
        if self.scroll.as_ref().is_some_and(|s| s.session_id != sid) {
            self.scroll = None;
        }
        if self.scroll.is_none() {
            if delta <= 0 {
                return;
            }
            let mut copy: Option<vt100::Screen> = None;
            self.cockpit
                .with_screen(&sid, &mut |s| copy = Some(s.clone()));
            let Some(mut screen) = copy else { return };
            screen.set_scrollback(usize::MAX);
            let max = screen.scrollback();
            if max == 0 {
                if screen.alternate_screen() {
                    self.notify(
                        "no scrollback: the agent is a full-screen program",
                        Level::Info,
                    );
                } else {
                    // Nothing above the screen here (an attached terminal gets the screen
                    // only): what scrolled away is in the transcript, which scrolls.
                    self.toggle_transcript();
                }
                return;
            }
            self.scroll = Some(ScrollView {
                session_id: sid,
                screen,
                offset: 0,
                max,
                new_output: false,
            });
        }
        let view = self.scroll.as_mut().expect("set above");
        let offset = (view.offset as isize)
            .saturating_add(delta)
            .clamp(0, view.max as isize) as usize;
        if offset == 0 {
            self.scroll = None;
            return;
        }
        view.offset = offset;
        view.screen.set_scrollback(offset);
    }

    pub fn on_mouse(&mut self, m: MouseEvent) {
        let Some(a) = self.areas else { return };
        if !matches!(self.modal, Modal::None) {
            return;
        }
        let pos = Position::new(m.column, m.row);
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.dirty = true;
                if a.tasks.contains(pos) {
                    self.typing = false;
                    self.focus = Focus::Tasks;
                    let inner_y = a.tasks.y + 1;
                    if m.row >= inner_y && m.row < a.tasks.bottom().saturating_sub(1) {
                        let i = self.list_offset + usize::from(m.row - inner_y);
                        if self.rows.get(i).is_some_and(|r| !r.is_heading()) {
                            self.select_index(Some(i));
                        }
                    }
                } else if a.steps.contains(pos) {
                    self.typing = false;
                    self.focus = Focus::Steps;
                } else if a.term.contains(pos) {
                    if self.shown_session_live() {
                        self.enter_terminal();
                    } else {
                        self.typing = false;
                        self.focus = Focus::Terminal;
                    }
                }
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = m.kind == MouseEventKind::ScrollUp;
                if a.term.contains(pos) {
                    // A shown transcript scrolls itself; the agent gets the wheel otherwise.
                    if self.scroll.is_none()
                        && self.shown_transcript().is_none()
                        && self.wheel_to_agent(up, pos, a.term_inner)
                    {
                        return;
                    }
                    self.scroll_by(if up { 3 } else { -3 });
                } else if a.tasks.contains(pos) {
                    self.move_selection(if up { -1 } else { 1 });
                } else if a.steps.contains(pos) {
                    self.steps_scroll = if up {
                        self.steps_scroll.saturating_sub(1)
                    } else {
                        self.steps_scroll.saturating_add(1)
                    };
                    self.dirty = true;
                }
            }
            _ => {}
        }
    }

    /// A full-screen agent gets the wheel as a real terminal gives it: as mouse reports when
    /// it asked for the mouse, else as arrow keys on the alternate screen (xterm's
    /// alternateScroll). `false`: the wheel scrolls our scrollback instead.
    fn wheel_to_agent(&mut self, up: bool, pos: Position, inner: Rect) -> bool {
        if !self.shown_session_live() {
            return false;
        }
        let Some(sid) = self.shown_session_id() else {
            return false;
        };
        let mut state = None;
        self.cockpit.with_screen(&sid, &mut |s| {
            state = Some((
                s.mouse_protocol_mode(),
                s.mouse_protocol_encoding(),
                s.alternate_screen(),
                s.application_cursor(),
            ))
        });
        let Some((mode, encoding, alternate, app_cursor)) = state else {
            return false;
        };
        let bytes = if mode != vt100::MouseProtocolMode::None {
            let col = pos.x.saturating_sub(inner.x) + 1;
            let row = pos.y.saturating_sub(inner.y) + 1;
            let button = if up { 64 } else { 65 };
            if encoding == vt100::MouseProtocolEncoding::Sgr {
                format!("\x1b[<{button};{col};{row}M").into_bytes()
            } else {
                let c = |v: u16| (32 + v.min(223)) as u8;
                vec![0x1b, b'[', b'M', 32 + button as u8, c(col), c(row)]
            }
        } else if alternate {
            // The wheel scrolls a full-screen program as three arrow presses.
            use crate::session::KeyCode as Arrow;
            let arrow = Key::from(if up { Arrow::Up } else { Arrow::Down });
            arrow.encode(app_cursor).unwrap_or_default().repeat(3)
        } else {
            return false;
        };
        let _ = self.cockpit.write_input(&sid, bytes);
        true
    }

    // ---------------------------------------------------------------- PTY size

    /// A frame: the state brought up to date and laid out for the frame's size, drawn, then
    /// the shown PTY sized to the pane it is drawn in (decided here, never while drawing).
    pub fn draw(&mut self, frame: &mut ratatui::Frame) {
        self.refresh_if_stale();
        self.areas = super::views::layout(frame.area());
        if self.areas.is_some() {
            self.prepare_transcript();
        }
        self.render(frame);
        self.sync_pty_size();
    }

    /// Resizes the shown session's PTY to the terminal pane's inner size when they differ.
    pub(crate) fn sync_pty_size(&mut self) {
        let Some(a) = self.areas else { return };
        let (cols, rows) = (a.term_inner.width, a.term_inner.height);
        if cols == 0 || rows == 0 || !self.shown_session_live() {
            return;
        }
        let Some(sid) = self.shown_session_id() else {
            return;
        };
        let mut size = None;
        self.cockpit
            .with_screen(&sid, &mut |s| size = Some(s.size()));
        let Some((cur_rows, cur_cols)) = size else {
            return;
        };
        if (cur_cols, cur_rows) == (cols, rows) || self.resize_sent.get(&sid) == Some(&(cols, rows))
        {
            return;
        }
        self.resize_sent.insert(sid.clone(), (cols, rows));
        self.run(
            Command::Resize {
                session_id: sid,
                cols,
                rows,
            },
            Origin::Quiet,
        );
    }
}
