//! The app's state: what is shown, selected, focused and open, and the questions asked of it.
//! How it changes is in `update/`; how it is drawn in `views/`; the loop that feeds it in `mod.rs`.

use super::backend::{Cockpit, Outcome, Snapshot};
use super::form::{Form, LineEdit};
use super::keymap::{Action, Context, KeyMap};
use orchestra_proto::task::{Task, TaskStatus};
use orchestra_proto::wire::{Prompt, PromptKind, SessionStatus};
use ratatui::layout::Rect;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

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
        /// How many of its descendants are not finished (asked whether they go too).
        children: usize,
    },
    /// Pause or resume a task that has descendants the same could be done to.
    Family {
        op: orchestra_proto::task::FamilyOp,
        task_id: String,
        name: String,
        children: usize,
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
    /// Merge a worktree task's branch into its base branch.
    Merge {
        task_id: String,
        name: String,
        branch: String,
        base_branch: String,
    },
    /// Remove a worktree task's worktree and branch (a snapshot ref keeps the work).
    Discard {
        task_id: String,
        name: String,
        branch: String,
    },
    /// Push a worktree task's branch and open a pull request for it.
    PullRequest {
        task_id: String,
        name: String,
        branch: String,
        base_branch: String,
    },
    /// Keep one variant of a best-of-N task (merged), discarding the others.
    Pick {
        task_id: String,
        name: String,
        variant: String,
        others: Vec<String>,
    },
}

impl Confirm {
    /// Whether the question offers the task alone (`o`) besides yes and no.
    pub fn asks_about_children(&self) -> bool {
        match self {
            Confirm::Cancel { children, .. } | Confirm::Family { children, .. } => *children > 0,
            _ => false,
        }
    }
}

/// Where a one-line message typed in the bottom bar goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageTo {
    /// Typed into a live session.
    Session(String),
    /// The next request of a finished task continued on its conversation (empty: the
    /// server's default request).
    Continue(String),
}

/// An overlay that takes the keyboard.
#[derive(Debug, Clone)]
pub enum Modal {
    None,
    Help,
    Form(Box<Form>),
    Confirm(Confirm),
    Message {
        to: MessageTo,
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
    /// Measuring the worktrees' disk: a failure is not worth a notice.
    Usage,
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

/// The grid while it is shown: the page the last frame laid out, and the sizes to give the
/// agents' PTYs back when it closes.
#[derive(Debug, Clone, Default)]
pub struct GridView {
    pub page: super::grid::GridPage,
    /// Each agent resized for a tile, with the size it had before (cols, rows).
    pub restore: HashMap<String, (u16, u16)>,
    /// The sessions whose streams the cockpit was last told to keep.
    pub streamed: Vec<String>,
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

/// Who asks a shown prompt, and so where its answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptOwner {
    /// A blocked agent (`POST /sessions/:id/answer`).
    Session(String),
    /// A task waiting before its agent starts (`POST /tasks/:id/answer`).
    Task(String),
}

/// What a blocked agent asks, read from its session's `prompt`, or what a task waits on
/// before its agent starts, from the task's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownPrompt {
    pub owner: PromptOwner,
    /// `permission`, `trust`…; `None` when the session says no prompt.
    pub kind: Option<PromptKind>,
    /// The question; empty when unknown.
    pub text: String,
    pub options: Vec<PromptChoice>,
}

impl ShownPrompt {
    pub fn new(owner: PromptOwner, prompt: Option<&Prompt>, keys: &KeyMap) -> ShownPrompt {
        let options = prompt
            .map(|p| {
                p.options
                    .iter()
                    .map(|o| PromptChoice {
                        key: o.key.clone(),
                        label: if o.label.trim().is_empty() {
                            o.key.clone()
                        } else {
                            o.label.clone()
                        },
                        answer: answer_char(&o.key, keys),
                    })
                    .collect()
            })
            .unwrap_or_default();
        ShownPrompt {
            owner,
            kind: prompt.map(|p| p.kind),
            text: prompt
                .map(|p| p.text.trim().to_string())
                .unwrap_or_default(),
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
    /// How deep each row sits in its family (0: not a child of a task shown above it).
    pub(crate) row_depth: Vec<u8>,
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
    /// The diff view, the merge or discard in flight, the worktrees' disk.
    pub(crate) review: super::diff_view::Review,
    pub(crate) resize_sent: HashMap<String, (u16, u16)>,
    /// The grid of every live agent, while it is shown (instead of the three panes).
    pub(crate) grid: Option<GridView>,
    /// The terminal pane (or in the grid, the selected tile) fills the window.
    pub(crate) zoom: bool,
    /// Agents that need the user (blocked, or finished) and were not looked at, oldest first.
    pub(crate) waiting: Vec<super::attention::Waiting>,
    /// Arrivals in the queue not yet notified (the loop takes them).
    pub(crate) alerts: Vec<super::attention::Waiting>,
    /// A snapshot was read: later ones are compared with it for arrivals.
    pub(crate) loaded: bool,
    /// The snapshot is out of date.
    pub(crate) stale: bool,
    /// Something visible changed since the last frame.
    pub dirty: bool,
    /// Something visible changed that can wait for the next frame until this time (see
    /// `App::redraw_within`).
    pub(crate) dirty_by: Option<Instant>,
    pub(crate) quit: bool,
    /// What to print once the terminal is restored (orchestra was stopped).
    pub farewell: Option<String>,
    /// Colours on (off with NO_COLOR).
    pub color: bool,
    /// A fixed clock (ms since the epoch), for tests.
    pub clock: Option<i64>,
    pub(crate) tx: mpsc::UnboundedSender<AppMsg>,
    pub(crate) rx: Option<mpsc::UnboundedReceiver<AppMsg>>,
}

/// What a session without a task is called: the first line of what it runs, else its
/// provider's id.
pub fn session_name(s: &orchestra_proto::wire::SessionInfo) -> String {
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
            row_depth: Vec::new(),
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
            review: Default::default(),
            resize_sent: HashMap::new(),
            grid: None,
            zoom: false,
            waiting: Vec::new(),
            alerts: Vec::new(),
            loaded: false,
            stale: true,
            dirty: true,
            dirty_by: None,
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
        app.ask_usage();
        app
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.unwrap_or_else(orchestra_proto::clock::now_ms)
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    pub(crate) fn matches_filter(&self, text: &str) -> bool {
        self.filter.is_empty() || text.to_lowercase().contains(&self.filter.to_lowercase())
    }

    pub fn selected_index(&self) -> Option<usize> {
        let sel = self.selected.as_ref()?;
        self.rows
            .iter()
            .position(|r| self.row_selected(*r).as_ref() == Some(sel))
    }

    pub fn selected_task(&self) -> Option<&Arc<Task>> {
        match &self.selected {
            Some(Selected::Task(id)) => self.snap.tasks.iter().find(|t| &t.id == id),
            _ => None,
        }
    }

    pub fn selected_session_info(&self) -> Option<&orchestra_proto::wire::SessionInfo> {
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

    pub(crate) fn shown_session_live(&self) -> bool {
        self.selected_session_info().is_some_and(|s| !s.ended)
    }

    /// Whether the task needs an answer: its agent is blocked on a prompt, or the task waits
    /// on a question before its agent starts.
    pub fn is_blocked(&self, task: &Task) -> bool {
        if task.metadata.prompt.is_some() && !task.status().is_final() {
            return true;
        }
        task.metadata.session_id.as_ref().is_some_and(|sid| {
            self.snap
                .sessions
                .iter()
                .any(|s| &s.id == sid && !s.ended && s.status == SessionStatus::Blocked)
        })
    }

    /// The question the selected task waits on before its agent starts, else the prompt the
    /// shown session is blocked on (the selected task's agent, or the selected session), when
    /// it waits for an answer.
    pub fn shown_prompt(&self) -> Option<ShownPrompt> {
        if let Some(t) = self.selected_task()
            && let Some(p) = t.metadata.prompt.as_ref()
            && !t.status().is_final()
        {
            return Some(ShownPrompt::new(
                PromptOwner::Task(t.id.clone()),
                Some(p),
                &self.keymap,
            ));
        }
        let s = self.selected_session_info()?;
        (!s.ended && s.status == SessionStatus::Blocked).then(|| {
            ShownPrompt::new(
                PromptOwner::Session(s.id.clone()),
                s.prompt.as_ref(),
                &self.keymap,
            )
        })
    }

    pub fn is_unseen(&self, task_id: &str) -> bool {
        self.unseen.contains(task_id)
    }

    pub fn notice(&self) -> Option<&Notice> {
        self.notice.as_ref()
    }

    /// A notice for a task just created and selected: what starts it, if it waits.
    pub(crate) fn created_notice(&self, what: &str) -> String {
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

    /// Rows of help the overlay shows at once (from the last frame).
    pub(crate) fn help_page(&self) -> usize {
        self.help_rows.max(1)
    }

    /// The context of the keys outside typing mode and overlays: the focused pane.
    pub fn pane_context(&self) -> Context {
        if self.grid.is_some() {
            return Context::Grid;
        }
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
            Modal::None if self.review.diff.is_some() => Context::Diff,
            Modal::None if self.typing => Context::Typing,
            Modal::None => self.pane_context(),
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

    pub(crate) fn page_rows(&self) -> usize {
        self.areas
            .map(|a| a.term_inner.height.max(2) as usize - 1)
            .unwrap_or(10)
    }

    /// How many lines the terminal pane is scrolled back; `None`: the live view.
    pub fn scrolled_back(&self) -> Option<usize> {
        self.scroll.as_ref().map(|v| v.offset)
    }
}
