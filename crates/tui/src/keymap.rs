//! The key map: every key the TUI answers to, in one table.
//!
//! A binding is a key code with its EXACT modifiers, in one context (a pane, typing mode, an
//! overlay). Dispatch (`App::on_key`), the `?` help and the bottom bar are all drawn from
//! [`BINDINGS`], so a key shown is a key that works, and a key not listed does nothing: `a`
//! toggles autopilot, `Ctrl-a` and `Alt-a` do not.
//!
//! Shift on a printable character is the character itself: terminals report `R` as `R`, often
//! with SHIFT set, sometimes as `r` with SHIFT; both are `R` here (see [`normalize`]).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a key is pressed: which pane has focus, or which overlay has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// The task list has focus.
    Tasks,
    /// The details pane (a task's steps, or a session's facts) has focus.
    Steps,
    /// The terminal pane has focus, not typing.
    Terminal,
    /// The terminal pane has focus and shows a session's transcript (its keys first, then
    /// the terminal pane's, then any pane's).
    Transcript,
    /// Typing a search in a transcript.
    Search,
    /// Any of the three panes (not typing): looked up after the focused pane's own keys.
    Panes,
    /// Keys go to the agent, except these.
    Typing,
    /// The new-task form (its keys are handled by `form.rs`; listed here for the help and bar).
    Form,
    /// A y/n question.
    Confirm,
    /// Typing a filter for the task list.
    Filter,
    /// Typing a one-line message to an agent.
    Message,
    /// The help overlay.
    Help,
    /// The diff view of a worktree task.
    Diff,
    /// The grid of every live agent (not typing): its own keys, then any pane's.
    Grid,
}

impl Context {
    /// The heading of this context's section in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Context::Tasks => "Tasks pane",
            Context::Steps => "Details pane",
            Context::Terminal => "Terminal pane",
            Context::Transcript => "Terminal pane showing a transcript",
            Context::Search => "Searching a transcript",
            Context::Panes => "Any pane",
            Context::Typing => "Typing into an agent",
            Context::Form => "New-task form",
            Context::Confirm => "A question (y/n)",
            Context::Filter => "Filter",
            Context::Message => "Message to an agent",
            Context::Help => "This help",
            Context::Diff => "Diff view",
            Context::Grid => "Grid of agents",
        }
    }

    /// What the table cannot say: keys that are not bindings (text, prompt answers).
    pub fn note(self) -> Option<&'static str> {
        match self {
            Context::Panes => Some("1–9, y…: answer the prompt of a waiting agent"),
            Context::Typing => Some("every other key goes to the agent"),
            Context::Form | Context::Filter | Context::Message | Context::Search => {
                Some("other keys edit the text")
            }
            _ => None,
        }
    }

    /// The order of sections in the help overlay.
    pub const HELP_ORDER: [Context; 14] = [
        Context::Panes,
        Context::Grid,
        Context::Tasks,
        Context::Steps,
        Context::Terminal,
        Context::Transcript,
        Context::Search,
        Context::Diff,
        Context::Typing,
        Context::Form,
        Context::Confirm,
        Context::Filter,
        Context::Message,
        Context::Help,
    ];
}

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    // Any pane.
    /// Leave the TUI; the agents keep running in orchestra.
    Detach,
    /// Stop orchestra: end every agent (asks first).
    Stop,
    Refresh,
    Help,
    Filter,
    /// Leave the scrolled-back view; else clear the filter.
    Back,
    NewTask,
    Start,
    Pause,
    Resume,
    Cancel,
    Retry,
    /// Start a finished task's agent again on its conversation, with a typed request.
    Continue,
    Message,
    Autopilot,
    /// Show the shown session's transcript (its whole output, from its file).
    Transcript,
    /// Delete the selected finished task or ended session (asks y/n).
    Delete,
    /// Edit the selected pending task's name and description.
    Edit,
    /// Cycle how the task list is ordered: by created, name, status; grouped by status.
    Order,
    /// Open the diff view of the selected worktree task.
    Diff,
    /// Merge the selected worktree task into its base branch (asks y/n).
    Merge,
    /// Remove the selected task's worktree and branch, keeping a snapshot (asks y/n).
    Discard,
    /// Focus the terminal and type into the agent.
    Type,
    /// Switch between the three panes and the grid of every live agent.
    Grid,
    /// The terminal pane (in the grid, the selected tile) fills the window, or no longer.
    Zoom,
    /// Select the next agent in the attention queue (blocked or finished unseen).
    NextWaiting,
    NextPane,
    PrevPane,
    /// Scroll the shown terminal a page back / forward.
    PageBack,
    PageForward,
    // Tasks pane.
    SelectPrev,
    SelectNext,
    SelectFirst,
    SelectLast,
    // Details pane.
    StepsUp,
    StepsDown,
    StepsTop,
    StepsBottom,
    // Terminal pane.
    LineBack,
    LineForward,
    Oldest,
    /// Back to the live view.
    Live,
    // A transcript.
    Search,
    CloseTranscript,
    // Searching.
    SearchNext,
    SearchPrev,
    SearchDone,
    // Typing.
    LeaveTyping,
    // Form.
    FormNextField,
    FormPrevField,
    FormPrevChoice,
    FormNextChoice,
    FormSubmit,
    FormCancel,
    /// A line break in the description.
    FormNewLine,
    // Confirmation.
    Yes,
    No,
    // Filter.
    KeepFilter,
    ClearFilter,
    // Message.
    SendMessage,
    CancelMessage,
    // Help.
    CloseHelp,
    HelpUp,
    HelpDown,
    HelpPageUp,
    HelpPageDown,
    // The diff view.
    DiffUp,
    DiffDown,
    DiffPageUp,
    DiffPageDown,
    DiffTop,
    DiffBottom,
    NextFile,
    PrevFile,
    DiffLeft,
    DiffRight,
    ReloadDiff,
    CloseDiff,
    // The grid.
    TileLeft,
    TileRight,
    TileUp,
    TileDown,
}

impl Action {
    /// A word or two for the bottom bar. Adjacent actions with the same label share one hint
    /// (`↑/↓ select`).
    pub fn label(self) -> &'static str {
        use Action::*;
        match self {
            Detach => "detach",
            Stop => "stop all",
            Refresh => "refresh",
            Help => "help",
            Filter => "filter",
            Back => "back",
            NewTask => "new",
            Start => "start",
            Pause => "pause",
            Resume => "resume",
            Cancel => "cancel",
            Retry => "retry",
            Continue => "continue",
            Message => "msg",
            Autopilot => "autopilot",
            Transcript => "transcript",
            Delete => "delete",
            Edit => "edit",
            Order => "order",
            Diff => "diff",
            Merge => "merge",
            Discard => "discard",
            DiffUp | DiffDown => "scroll",
            DiffPageUp | DiffPageDown => "page",
            DiffTop | DiffBottom => "top/end",
            NextFile | PrevFile => "file",
            DiffLeft | DiffRight => "sideways",
            ReloadDiff => "reload",
            CloseDiff => "close",
            Search => "search",
            CloseTranscript => "close",
            SearchNext => "newer",
            SearchPrev => "older",
            SearchDone => "done",
            Type => "type",
            Grid => "grid",
            Zoom => "zoom",
            NextWaiting => "next waiting",
            TileLeft | TileRight | TileUp | TileDown => "move",
            NextPane | PrevPane => "pane",
            PageBack | PageForward => "scroll",
            SelectPrev | SelectNext => "select",
            SelectFirst | SelectLast => "first/last",
            StepsUp | StepsDown => "scroll",
            StepsTop | StepsBottom => "top/bottom",
            LineBack | LineForward => "scroll",
            Oldest => "oldest",
            Live => "live",
            LeaveTyping => "leave",
            FormNextField | FormPrevField => "field",
            FormPrevChoice | FormNextChoice => "choose",
            FormSubmit => "create",
            FormCancel => "cancel",
            FormNewLine => "new line",
            Yes => "yes",
            No => "no",
            KeepFilter => "keep",
            ClearFilter => "clear",
            SendMessage => "send",
            CancelMessage => "cancel",
            CloseHelp => "close",
            HelpUp | HelpDown => "scroll",
            HelpPageUp | HelpPageDown => "page",
        }
    }

    /// What it does, for the help overlay. Adjacent actions with the same text share a line.
    pub fn help(self) -> &'static str {
        use Action::*;
        match self {
            Detach => "detach: leave the TUI; the agents keep running",
            Stop => "stop orchestra and end every agent (asks first)",
            Refresh => "re-read everything and redraw",
            Help => "this help",
            Filter => "filter tasks by name",
            Back => "leave the scrolled-back view, else clear the filter",
            NewTask => "new task",
            Start => "start the selected task",
            Pause | Resume => "pause / resume it",
            Cancel => "cancel it (asks y/n); ends a session without a task",
            Retry => "run a finished task again (a new task)",
            Continue => "continue a finished task's conversation (a new request)",
            Message => "send a one-line message to the agent",
            Autopilot => "autopilot on/off (it starts pending tasks)",
            Transcript => "the session's whole transcript (ended ones too)",
            Delete => "delete a finished task / ended session (y/n)",
            Edit => "edit a pending task's name and description",
            Order => "order the list: created, name, status, grouped",
            Diff => "review a worktree task's changes (the diff view)",
            Merge => "merge a finished worktree task into its base branch (y/n)",
            Discard => {
                "discard a finished task's worktree and branch; a snapshot ref keeps the work (y/n)"
            }
            DiffUp | DiffDown => "scroll a line",
            DiffPageUp | DiffPageDown => "scroll a page",
            DiffTop | DiffBottom => "the first / last line",
            NextFile | PrevFile => "the next / previous file",
            DiffLeft | DiffRight => "scroll long lines left / right",
            ReloadDiff => "read the diff again",
            CloseDiff => "close the diff view",
            Search => "search the transcript (not the task filter)",
            CloseTranscript => "close the transcript",
            SearchNext | SearchPrev => "the next (newer) / previous (older) match",
            SearchDone => "stop typing; the matches stay marked",
            Type => "type into the agent (every key goes to it)",
            Grid => "the grid of every live agent / the three panes",
            Zoom => "the terminal (grid: the selected tile) fills the window / back",
            NextWaiting => "go to the next agent that waits or finished (the top bar count)",
            TileLeft | TileRight | TileUp | TileDown => "select the tile left / right / up / down",
            NextPane | PrevPane => "focus the next / previous pane",
            PageBack | PageForward => "scroll the terminal a page back / forward",
            SelectPrev | SelectNext => "select the previous / next task",
            SelectFirst | SelectLast => "select the first / last task",
            StepsUp | StepsDown => "scroll up / down",
            StepsTop | StepsBottom => "scroll to the top / bottom",
            LineBack | LineForward => "scroll back / forward a line",
            Oldest => "scroll to the oldest line",
            Live => "back to the live view",
            LeaveTyping => "stop typing into the agent",
            FormNextField | FormPrevField => "next / previous field",
            FormPrevChoice | FormNextChoice => "choose the provider, or start now (y/n too)",
            FormSubmit => "create the task",
            FormCancel => "close the form",
            FormNewLine => "a new line in the description (also Ctrl-j)",
            Yes => "yes",
            No => "no",
            KeepFilter => "keep the filter",
            ClearFilter => "clear the filter",
            SendMessage => "send it",
            CancelMessage => "do not send it",
            CloseHelp => "close the help",
            HelpUp | HelpDown => "scroll",
            HelpPageUp | HelpPageDown => "scroll a page",
        }
    }

    /// Whether the bottom bar offers it in this context (the rest are in `?`, which the bar
    /// always offers).
    pub fn in_bar(self, context: Context) -> bool {
        use Action::*;
        match self {
            PageBack | PageForward => context == Context::Typing,
            Refresh | Back | PrevPane | Help | Oldest | HelpPageUp | HelpPageDown | StepsTop
            | StepsBottom | SelectFirst | SelectLast | Order | Edit | Transcript | Delete
            | Diff | DiffTop | DiffBottom | DiffLeft | DiffRight | ReloadDiff | Continue => false,
            // Named in the top bar (the waiting count) and `?`; the grid offers its own keys.
            Grid | Zoom | NextWaiting => false,
            // Offered where the diff is read; in the panes they are in `?`.
            Merge | Discard => context == Context::Diff,
            _ => true,
        }
    }
}

/// A key code with its exact modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    pub const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }

    pub const fn shift(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::SHIFT,
        }
    }

    /// How the key is written in the help and the bar: `Ctrl-q`, `Shift-PgUp`, `↑`, `R`.
    pub fn name(self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("Alt-");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            out.push_str("Shift-");
        }
        out + &base
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub key: Key,
    pub action: Action,
}

const fn bind(context: Context, key: Key, action: Action) -> Binding {
    Binding {
        context,
        key,
        action,
    }
}

use Action as A;
use Context as C;
use KeyCode as K;

/// Every binding. Order matters for display: the help and the bar list actions in this order,
/// and an action's first key is the one the bar shows.
pub const BINDINGS: &[Binding] = &[
    // The task list.
    bind(C::Tasks, Key::plain(K::Up), A::SelectPrev),
    bind(C::Tasks, Key::plain(K::Down), A::SelectNext),
    bind(C::Tasks, Key::ch('k'), A::SelectPrev),
    bind(C::Tasks, Key::ch('j'), A::SelectNext),
    bind(C::Tasks, Key::plain(K::Home), A::SelectFirst),
    bind(C::Tasks, Key::plain(K::End), A::SelectLast),
    bind(C::Tasks, Key::ch('g'), A::SelectFirst),
    bind(C::Tasks, Key::ch('G'), A::SelectLast),
    // The details pane.
    bind(C::Steps, Key::plain(K::Up), A::StepsUp),
    bind(C::Steps, Key::plain(K::Down), A::StepsDown),
    bind(C::Steps, Key::ch('k'), A::StepsUp),
    bind(C::Steps, Key::ch('j'), A::StepsDown),
    bind(C::Steps, Key::plain(K::Home), A::StepsTop),
    bind(C::Steps, Key::plain(K::End), A::StepsBottom),
    bind(C::Steps, Key::ch('g'), A::StepsTop),
    bind(C::Steps, Key::ch('G'), A::StepsBottom),
    // The terminal pane (not typing).
    bind(C::Terminal, Key::plain(K::Up), A::LineBack),
    bind(C::Terminal, Key::plain(K::Down), A::LineForward),
    bind(C::Terminal, Key::ch('k'), A::LineBack),
    bind(C::Terminal, Key::ch('j'), A::LineForward),
    bind(C::Terminal, Key::plain(K::End), A::Live),
    bind(C::Terminal, Key::ch('G'), A::Live),
    bind(C::Terminal, Key::plain(K::Home), A::Oldest),
    bind(C::Terminal, Key::ch('g'), A::Oldest),
    // The terminal pane showing a transcript (the rest as in the terminal pane).
    bind(C::Transcript, Key::ch('/'), A::Search),
    bind(C::Transcript, Key::plain(K::Esc), A::CloseTranscript),
    // Typing a search.
    bind(C::Search, Key::plain(K::Enter), A::SearchNext),
    bind(C::Search, Key::plain(K::Down), A::SearchNext),
    bind(C::Search, Key::plain(K::Up), A::SearchPrev),
    bind(C::Search, Key::plain(K::Esc), A::SearchDone),
    // Any pane.
    bind(C::Panes, Key::plain(K::Enter), A::Type),
    bind(C::Panes, Key::ch('i'), A::Type),
    bind(C::Panes, Key::ch('n'), A::NewTask),
    bind(C::Panes, Key::ch('s'), A::Start),
    bind(C::Panes, Key::ch('p'), A::Pause),
    bind(C::Panes, Key::ch('r'), A::Resume),
    bind(C::Panes, Key::ch('c'), A::Cancel),
    bind(C::Panes, Key::ch('R'), A::Retry),
    bind(C::Panes, Key::ch('m'), A::Message),
    bind(C::Panes, Key::ch('a'), A::Autopilot),
    bind(C::Panes, Key::ch('t'), A::Transcript),
    bind(C::Panes, Key::ch('D'), A::Delete),
    bind(C::Panes, Key::ch('e'), A::Edit),
    bind(C::Panes, Key::ch('o'), A::Order),
    bind(C::Panes, Key::ch('d'), A::Diff),
    bind(C::Panes, Key::ch('M'), A::Merge),
    bind(C::Panes, Key::ch('X'), A::Discard),
    bind(C::Panes, Key::ch('C'), A::Continue),
    bind(C::Panes, Key::ch('q'), A::Detach),
    bind(C::Panes, Key::ctrl('c'), A::Detach),
    bind(C::Panes, Key::ch('Q'), A::Stop),
    bind(C::Panes, Key::ch('/'), A::Filter),
    bind(C::Panes, Key::plain(K::Tab), A::NextPane),
    bind(C::Panes, Key::plain(K::BackTab), A::PrevPane),
    bind(C::Panes, Key::plain(K::PageUp), A::PageBack),
    bind(C::Panes, Key::plain(K::PageDown), A::PageForward),
    bind(C::Panes, Key::plain(K::Esc), A::Back),
    bind(C::Panes, Key::ctrl('l'), A::Refresh),
    bind(C::Panes, Key::ch('?'), A::Help),
    bind(C::Panes, Key::ch('v'), A::Grid),
    bind(C::Panes, Key::ch('z'), A::Zoom),
    bind(C::Panes, Key::ch('w'), A::NextWaiting),
    // The grid of agents (the rest as in any pane: Enter types into the selected tile).
    bind(C::Grid, Key::plain(K::Left), A::TileLeft),
    bind(C::Grid, Key::plain(K::Right), A::TileRight),
    bind(C::Grid, Key::plain(K::Up), A::TileUp),
    bind(C::Grid, Key::plain(K::Down), A::TileDown),
    bind(C::Grid, Key::ch('h'), A::TileLeft),
    bind(C::Grid, Key::ch('l'), A::TileRight),
    bind(C::Grid, Key::ch('k'), A::TileUp),
    bind(C::Grid, Key::ch('j'), A::TileDown),
    // Typing into the agent: every other key goes to it.
    bind(C::Typing, Key::ctrl('q'), A::LeaveTyping),
    bind(C::Typing, Key::shift(K::PageUp), A::PageBack),
    bind(C::Typing, Key::shift(K::PageDown), A::PageForward),
    // The new-task form; other keys edit the field.
    bind(C::Form, Key::plain(K::Tab), A::FormNextField),
    bind(C::Form, Key::plain(K::BackTab), A::FormPrevField),
    bind(C::Form, Key::plain(K::Down), A::FormNextField),
    bind(C::Form, Key::plain(K::Up), A::FormPrevField),
    bind(C::Form, Key::plain(K::Left), A::FormPrevChoice),
    bind(C::Form, Key::plain(K::Right), A::FormNextChoice),
    bind(C::Form, Key::plain(K::Enter), A::FormSubmit),
    bind(C::Form, Key::plain(K::Esc), A::FormCancel),
    bind(
        C::Form,
        Key {
            code: K::Enter,
            mods: KeyModifiers::ALT,
        },
        A::FormNewLine,
    ),
    bind(C::Form, Key::ctrl('j'), A::FormNewLine),
    // A confirmation: nothing else answers it.
    bind(C::Confirm, Key::ch('y'), A::Yes),
    bind(C::Confirm, Key::ch('n'), A::No),
    bind(C::Confirm, Key::ch('Y'), A::Yes),
    bind(C::Confirm, Key::ch('N'), A::No),
    bind(C::Confirm, Key::plain(K::Esc), A::No),
    // The filter line; other keys edit it.
    bind(C::Filter, Key::plain(K::Up), A::SelectPrev),
    bind(C::Filter, Key::plain(K::Down), A::SelectNext),
    bind(C::Filter, Key::plain(K::Enter), A::KeepFilter),
    bind(C::Filter, Key::plain(K::Esc), A::ClearFilter),
    // The message line; other keys edit it.
    bind(C::Message, Key::plain(K::Enter), A::SendMessage),
    bind(C::Message, Key::plain(K::Esc), A::CancelMessage),
    // The help overlay.
    bind(C::Help, Key::plain(K::Up), A::HelpUp),
    bind(C::Help, Key::plain(K::Down), A::HelpDown),
    bind(C::Help, Key::ch('k'), A::HelpUp),
    bind(C::Help, Key::ch('j'), A::HelpDown),
    bind(C::Help, Key::plain(K::PageUp), A::HelpPageUp),
    bind(C::Help, Key::plain(K::PageDown), A::HelpPageDown),
    bind(C::Help, Key::plain(K::Esc), A::CloseHelp),
    bind(C::Help, Key::ch('?'), A::CloseHelp),
    bind(C::Help, Key::ch('q'), A::CloseHelp),
    bind(C::Help, Key::plain(K::Enter), A::CloseHelp),
    // The diff view.
    bind(C::Diff, Key::plain(K::Up), A::DiffUp),
    bind(C::Diff, Key::plain(K::Down), A::DiffDown),
    bind(C::Diff, Key::ch('k'), A::DiffUp),
    bind(C::Diff, Key::ch('j'), A::DiffDown),
    bind(C::Diff, Key::plain(K::PageUp), A::DiffPageUp),
    bind(C::Diff, Key::plain(K::PageDown), A::DiffPageDown),
    bind(C::Diff, Key::ch('b'), A::DiffPageUp),
    bind(C::Diff, Key::ch(' '), A::DiffPageDown),
    bind(C::Diff, Key::plain(K::Home), A::DiffTop),
    bind(C::Diff, Key::plain(K::End), A::DiffBottom),
    bind(C::Diff, Key::ch('g'), A::DiffTop),
    bind(C::Diff, Key::ch('G'), A::DiffBottom),
    bind(C::Diff, Key::ch('n'), A::NextFile),
    bind(C::Diff, Key::ch('N'), A::PrevFile),
    bind(C::Diff, Key::plain(K::Tab), A::NextFile),
    bind(C::Diff, Key::plain(K::BackTab), A::PrevFile),
    bind(C::Diff, Key::plain(K::Left), A::DiffLeft),
    bind(C::Diff, Key::plain(K::Right), A::DiffRight),
    bind(C::Diff, Key::ch('M'), A::Merge),
    bind(C::Diff, Key::ch('X'), A::Discard),
    bind(C::Diff, Key::ch('r'), A::ReloadDiff),
    bind(C::Diff, Key::plain(K::Esc), A::CloseDiff),
    bind(C::Diff, Key::ch('q'), A::CloseDiff),
    bind(C::Diff, Key::ch('d'), A::CloseDiff),
    bind(C::Diff, Key::ch('?'), A::Help),
];

/// The key as the table writes it: a printable character carries no SHIFT (it is in the
/// character: `r` with SHIFT is `R`), Shift-Tab is `BackTab` without SHIFT.
pub fn normalize(key: &KeyEvent) -> Key {
    let mut mods = key.modifiers;
    let code = match key.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::Char(if c.is_lowercase() {
                c.to_uppercase().next().unwrap_or(c)
            } else {
                c
            })
        }
        KeyCode::BackTab => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        other => other,
    };
    Key { code, mods }
}

/// The contexts whose keys work where `context` has the keyboard, in the order they are shown.
pub(crate) fn layers(context: Context) -> &'static [Context] {
    match context {
        Context::Tasks => &[Context::Tasks, Context::Panes],
        Context::Steps => &[Context::Steps, Context::Panes],
        Context::Terminal => &[Context::Terminal, Context::Panes],
        Context::Transcript => &[Context::Transcript, Context::Terminal, Context::Panes],
        Context::Search => &[Context::Search],
        Context::Panes => &[Context::Panes],
        Context::Typing => &[Context::Typing],
        Context::Form => &[Context::Form],
        Context::Confirm => &[Context::Confirm],
        Context::Filter => &[Context::Filter],
        Context::Message => &[Context::Message],
        Context::Help => &[Context::Help],
        Context::Diff => &[Context::Diff],
        Context::Grid => &[Context::Grid, Context::Panes],
    }
}

/// The bindings in force: [`BINDINGS`], with the user's `[keys]` from the config file
/// applied (see [`KeyMap::from_config`]). Dispatch, the help and the bar all read this one.
#[derive(Debug, Clone)]
pub struct KeyMap {
    bindings: Vec<Binding>,
}

impl Default for KeyMap {
    fn default() -> KeyMap {
        KeyMap {
            bindings: BINDINGS.to_vec(),
        }
    }
}

impl KeyMap {
    pub(crate) fn from_bindings(bindings: Vec<Binding>) -> KeyMap {
        KeyMap { bindings }
    }

    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// The action of a key in a context (a pane's own keys, then those of any pane). `None`:
    /// the key is not bound there and does nothing.
    pub fn lookup(&self, context: Context, key: &KeyEvent) -> Option<Action> {
        let key = normalize(key);
        layers(context).iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == *ctx && b.key == key)
                .map(|b| b.action)
        })
    }

    /// Each action bound in exactly this context, with its keys, in table order.
    fn actions_in(&self, context: Context) -> Vec<(Action, Vec<Key>)> {
        let mut out: Vec<(Action, Vec<Key>)> = Vec::new();
        for b in self.bindings.iter().filter(|b| b.context == context) {
            match out.iter_mut().find(|(a, _)| *a == b.action) {
                Some((_, keys)) => keys.push(b.key),
                None => out.push((b.action, vec![b.key])),
            }
        }
        out
    }

    /// The first key bound to `action` where `context` has the keyboard, as written.
    pub fn key_for(&self, context: Context, action: Action) -> Option<String> {
        layers(context).iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == *ctx && b.action == action)
                .map(|b| b.key.name())
        })
    }

    /// The bottom bar's hints where `context` has the keyboard: `(keys, label)`, most specific
    /// first.
    pub fn bar(&self, context: Context) -> Vec<(String, &'static str)> {
        layers(context)
            .iter()
            .flat_map(|ctx| {
                let shown = self
                    .actions_in(*ctx)
                    .into_iter()
                    .filter(|(a, _)| a.in_bar(*ctx))
                    .collect();
                merged(shown, Action::label, false)
            })
            .collect()
    }

    /// The bottom bar's hints over the form editing a pending task: its two text fields
    /// have no choices, and Enter saves rather than creates.
    pub fn edit_form_bar(&self) -> Vec<(String, &'static str)> {
        let shown = self
            .actions_in(Context::Form)
            .into_iter()
            .filter(|(a, _)| {
                a.in_bar(Context::Form)
                    && !matches!(a, Action::FormPrevChoice | Action::FormNextChoice)
            })
            .collect();
        merged(
            shown,
            |a| match a {
                Action::FormSubmit => "save",
                other => other.label(),
            },
            false,
        )
    }

    /// The help overlay's lines for one context: `(keys, what)`, every key listed.
    pub fn help(&self, context: Context) -> Vec<(String, &'static str)> {
        merged(self.actions_in(context), Action::help, true)
    }

    /// Characters bound, without modifiers, to a command in some pane. A prompt option whose
    /// key is one of these is answered in the agent's terminal, not by its key from the list.
    pub fn command_chars(&self) -> Vec<char> {
        let mut out = Vec::new();
        for b in self.bindings.iter().filter(|b| {
            matches!(
                b.context,
                Context::Tasks
                    | Context::Steps
                    | Context::Terminal
                    | Context::Panes
                    | Context::Grid
            ) && b.key.mods.is_empty()
        }) {
            if let KeyCode::Char(c) = b.key.code
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
        out
    }
}

/// Adjacent actions that share a text, with their keys: the first keys of each joined by `/`,
/// then the second keys, and so on (`↑/↓  k/j`).
fn merged(
    actions: Vec<(Action, Vec<Key>)>,
    text: impl Fn(Action) -> &'static str,
    all_keys: bool,
) -> Vec<(String, &'static str)> {
    let mut groups: Vec<(Vec<Vec<Key>>, &'static str)> = Vec::new();
    for (a, keys) in actions {
        match groups.last_mut() {
            Some((ks, t)) if *t == text(a) => ks.push(keys),
            _ => groups.push((vec![keys], text(a))),
        }
    }
    groups
        .into_iter()
        .map(|(ks, t)| {
            let ranks = if all_keys {
                ks.iter().map(Vec::len).max().unwrap_or(0)
            } else {
                1
            };
            let keys = (0..ranks)
                .map(|r| {
                    let row: Vec<Key> = ks.iter().filter_map(|k| k.get(r)).copied().collect();
                    join_keys(&row)
                })
                .collect::<Vec<_>>()
                .join("  ");
            (keys, t)
        })
        .collect()
}

/// Keys joined by `/`, a modifier shared with the first written once: `Shift-PgUp/PgDn`.
fn join_keys(keys: &[Key]) -> String {
    let Some(first) = keys.first() else {
        return String::new();
    };
    let mut out = first.name();
    for k in &keys[1..] {
        out.push('/');
        if k.mods == first.mods {
            out.push_str(&Key::plain(k.code).name());
        } else {
            out.push_str(&k.name());
        }
    }
    out
}

/// The key reference (docs/keys.md): every section of the help overlay, in its order, as
/// markdown. Generated so that it cannot drift from the table; a test keeps the file current.
pub fn key_reference(keys: &KeyMap) -> String {
    let mut out = String::from(
        "# Keys\n\n\
         <!-- Generated from the binding table in crates/tui/src/keymap.rs; do not edit. \
         Regenerate with `ORCHESTRA_WRITE_DOCS=1 cargo test -p orchestra-tui key_reference`. -->\n\n\
         The keys of the TUI with the defaults, pane by pane, as `?` shows them. The focused \
         pane's own keys come first, then those of any pane. Every binding can be changed in \
         the config file's `[keys]` section (see [configuration.md](configuration.md)).\n",
    );
    for ctx in Context::HELP_ORDER {
        let rows = keys.help(ctx);
        if rows.is_empty() && ctx.note().is_none() {
            continue;
        }
        out.push_str(&format!("\n## {}\n\n", ctx.title()));
        if !rows.is_empty() {
            out.push_str("| Keys | What it does |\n|---|---|\n");
            for (k, what) in rows {
                let k = k.replace('|', "\\|");
                out.push_str(&format!(
                    "| `{}` | {} |\n",
                    k.trim(),
                    what.replace('|', "\\|")
                ));
            }
        }
        if let Some(note) = ctx.note() {
            if !rows_empty_line(&out) {
                out.push('\n');
            }
            out.push_str(&format!("{note}.\n"));
        }
    }
    out
}

/// Whether `out` ends with a blank line already.
fn rows_empty_line(out: &str) -> bool {
    out.ends_with("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn a_key_is_not_the_same_key_with_ctrl_or_alt() {
        let a = |m| KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::Char('a'), m));
        assert_eq!(a(KeyModifiers::NONE), Some(Action::Autopilot));
        assert_eq!(a(KeyModifiers::CONTROL), None);
        assert_eq!(a(KeyModifiers::ALT), None);
        assert_eq!(a(KeyModifiers::CONTROL | KeyModifiers::ALT), None);
        let n = |m| KeyMap::default().lookup(Context::Steps, &ev(KeyCode::Char('n'), m));
        assert_eq!(n(KeyModifiers::NONE), Some(Action::NewTask));
        assert_eq!(n(KeyModifiers::ALT), None);
        assert_eq!(n(KeyModifiers::CONTROL), None);
        // Ctrl-c detaches, c alone cancels.
        assert_eq!(
            KeyMap::default().lookup(
                Context::Tasks,
                &ev(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Action::Detach)
        );
        assert_eq!(
            KeyMap::default().lookup(
                Context::Confirm,
                &ev(KeyCode::Char('y'), KeyModifiers::CONTROL)
            ),
            None
        );
    }

    #[test]
    fn shift_on_a_character_is_the_character() {
        for key in [
            ev(KeyCode::Char('R'), KeyModifiers::SHIFT),
            ev(KeyCode::Char('R'), KeyModifiers::NONE),
            ev(KeyCode::Char('r'), KeyModifiers::SHIFT),
        ] {
            assert_eq!(
                KeyMap::default().lookup(Context::Tasks, &key),
                Some(Action::Retry),
                "{key:?}"
            );
        }
        assert_eq!(
            KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
        assert_eq!(
            KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::PrevPane)
        );
        // Shift on other keys counts: PgUp scrolls while typing only with Shift.
        assert_eq!(
            KeyMap::default().lookup(Context::Typing, &ev(KeyCode::PageUp, KeyModifiers::SHIFT)),
            Some(Action::PageBack)
        );
        assert_eq!(
            KeyMap::default().lookup(Context::Typing, &ev(KeyCode::PageUp, KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            KeyMap::default().lookup(
                Context::Typing,
                &ev(KeyCode::Char('Q'), KeyModifiers::CONTROL)
            ),
            None
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                let clash = a.key == b.key
                    && (a.context == b.context
                        || (b.context == Context::Panes
                            && matches!(
                                a.context,
                                Context::Tasks | Context::Steps | Context::Terminal | Context::Grid
                            )));
                assert!(!clash, "{:?} is bound twice: {a:?} and {b:?}", a.key);
            }
        }
    }

    #[test]
    fn the_bar_and_the_help_come_from_the_table() {
        let bar = KeyMap::default().bar(Context::Tasks);
        assert_eq!(bar[0], ("↑/↓".to_string(), "select"));
        assert!(bar.contains(&("a".to_string(), "autopilot")));
        let help = KeyMap::default().help(Context::Tasks);
        assert_eq!(
            help[0],
            ("↑/↓  k/j".to_string(), "select the previous / next task")
        );
        assert_eq!(
            KeyMap::default()
                .key_for(Context::Terminal, Action::Live)
                .as_deref(),
            Some("End")
        );
        assert_eq!(
            KeyMap::default().key_for(Context::Tasks, Action::Live),
            None
        );
        assert_eq!(
            KeyMap::default()
                .key_for(Context::Tasks, Action::Back)
                .as_deref(),
            Some("Esc")
        );
        let chars = KeyMap::default().command_chars();
        for c in ['q', 'n', 's', 'R', 'a', 'g', 'G', '?', '/'] {
            assert!(chars.contains(&c), "{c}");
        }
        assert!(!chars.iter().any(|c| c.is_ascii_digit()));
    }

    /// docs/keys.md is generated from the table; it must be the table as it is now.
    #[test]
    fn the_key_reference_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/keys.md");
        let want = key_reference(&KeyMap::default());
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("ORCHESTRA_WRITE_DOCS").is_some() {
                std::fs::write(path, &want).expect("write docs/keys.md");
            } else {
                panic!(
                    "docs/keys.md is not the binding table's; regenerate it with \
                     ORCHESTRA_WRITE_DOCS=1 cargo test -p orchestra-tui key_reference"
                );
            }
        }
    }
}
