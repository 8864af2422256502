//! Where a key is pressed ([`Context`]) and which contexts' keys work there ([`layers`]):
//! the pane with focus or the overlay with the keyboard decides what a key means.

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
