//! Everything a key can do ([`Action`]), with the words the bottom bar and the help overlay
//! show for it: one enum, so that a new action cannot be bound without saying what it does.

use super::Context;

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
    /// Push the worktree task's branch and open a pull request with `gh`/`glab` (asks y/n).
    PullRequest,
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
    /// The task alone, not its children.
    OnlyThis,
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
    /// Comparing variants: another variant on the left / on the right.
    CompareLeft,
    CompareRight,
    /// Comparing variants: keep the left / right one (asks y/n).
    PickLeft,
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
            PullRequest => "PR",
            DiffUp | DiffDown => "scroll",
            DiffPageUp | DiffPageDown => "page",
            DiffTop | DiffBottom => "top/end",
            NextFile | PrevFile => "file",
            DiffLeft | DiffRight => "sideways",
            ReloadDiff => "reload",
            CloseDiff => "close",
            CompareLeft | CompareRight => "variants",
            PickLeft => "pick",
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
            OnlyThis => "only this",
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
            Edit => "edit a pending task: name, description, provider, approval, isolation, checks",
            Order => "order the list: created, name, status, grouped",
            Diff => "review a worktree task's changes (the diff view)",
            Merge => "merge a finished worktree task into its base branch (y/n)",
            Discard => {
                "discard a finished task's worktree and branch; a snapshot ref keeps the work (y/n)"
            }
            PullRequest => {
                "push a finished task's branch and open a pull request with gh or glab (y/n)"
            }
            DiffUp | DiffDown => "scroll a line",
            DiffPageUp | DiffPageDown => "scroll a page",
            DiffTop | DiffBottom => "the first / last line",
            NextFile | PrevFile => "the next / previous file",
            DiffLeft | DiffRight => "scroll long lines left / right",
            ReloadDiff => "read the diff again",
            CloseDiff => "close the diff view",
            CompareLeft | CompareRight => {
                "best of N (d on its task): compare another variant on the left / right"
            }
            PickLeft => {
                "best of N: pick the left variant (`[` brings another there; merged, the others discarded, y/n)"
            }
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
            OnlyThis => "the task alone, leaving its children as they are",
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
            Merge | Discard | PullRequest => context == Context::Diff,
            _ => true,
        }
    }
}
