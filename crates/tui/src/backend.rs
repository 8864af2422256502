//! The one interface the TUI uses to reach an orchestra: owned snapshots out, commands in, an
//! event stream, and per-session screens and input.
//!
//! `orchestra` uses [`super::RemoteCockpit`]: the API of a running orchestra (snapshot and
//! events from the API and its event stream, screens from each shown session's stream).

use super::diff_view::{PreparedDiff, WorktreeUsage};
use super::keys::InputModes;
use orchestra_proto::task::Task;
use orchestra_proto::wire::{Event, SessionInfo};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::broadcast;

/// A provider the new-task form can offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderChoice {
    pub id: String,
    pub name: String,
    pub installed: bool,
    /// How to install it (the engine's hint), when it is not installed.
    pub install: Option<String>,
    /// A task on it needs a description (a plain shell does not: it just starts).
    pub needs_description: bool,
    /// A coding agent (a worktree by default in a git repository), not a shell or command.
    pub coding_agent: bool,
}

/// Everything the screen shows except terminal contents, owned.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Oldest first.
    pub tasks: Vec<Arc<Task>>,
    /// In creation order.
    pub sessions: Vec<SessionInfo>,
    pub autopilot: bool,
    /// The HTTP API's URL, when it is served.
    pub url: Option<String>,
    /// Why orchestra cannot be reached right now (the TUI is trying again); `None`: it can.
    pub offline: Option<String>,
    /// The conflict radar's reports of the tasks that conflict (with another task or their
    /// base), by task id.
    pub conflicts: std::collections::HashMap<String, Arc<orchestra_proto::wire::ConflictReport>>,
}

impl Snapshot {
    /// The radar's report of task `id`, when it conflicts.
    pub fn conflicts_of(&self, id: &str) -> Option<&orchestra_proto::wire::ConflictReport> {
        self.conflicts.get(id).map(|r| r.as_ref())
    }

    /// Keeps `report` when it shows a conflict, else forgets the task's.
    pub fn set_conflicts(&mut self, report: Arc<orchestra_proto::wire::ConflictReport>) {
        if report.conflicts() {
            self.conflicts.insert(report.task_id.clone(), report);
        } else {
            self.conflicts.remove(&report.task_id);
        }
    }
}

/// What a start says: started, or stopped at the question the task now waits on.
pub fn started_note(t: &Task, name: &str) -> String {
    if t.metadata.prompt.is_some() && !t.status().is_final() {
        format!(
            "{name} waits for you to trust its repository's set-up before anything runs: {} trusts it, {} declines",
            orchestra_proto::wire::TRUST_OPTION,
            orchestra_proto::wire::DECLINE_OPTION
        )
    } else {
        format!("started {name}")
    }
}

/// What the TUI asks an orchestra to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// The API's own request, as `POST /tasks` takes it.
    CreateTask {
        task: orchestra_proto::wire::request::NewTask,
        /// Start it right after creating it.
        start: bool,
    },
    Start(String),
    Pause(String),
    Resume(String),
    Cancel(String),
    /// Pause, resume or cancel a task and its descendants (those in a state for it).
    Family {
        op: orchestra_proto::task::FamilyOp,
        id: String,
    },
    Retry(String),
    /// Start a finished task's agent again on its conversation.
    Continue {
        id: String,
        message: Option<String>,
    },
    SetAutopilot(bool),
    /// Type one line into a session and submit it.
    Message {
        session_id: String,
        text: String,
    },
    /// Answer a blocked session's prompt with one of its options (by the option's `key`).
    Answer {
        session_id: String,
        option: String,
    },
    /// Answer the question a task waits on before its agent starts (trust in its
    /// repository's file), by the option's `key`.
    AnswerTask {
        task_id: String,
        option: String,
    },
    /// End a session (one without a task; tasks are cancelled instead).
    EndSession(String),
    /// Read what a session printed (the end of its transcript file).
    Transcript(String),
    /// Remove an ended session's record (its transcript is kept in the trash).
    RemoveSession(String),
    /// Delete a finished task (kept in the trash).
    DeleteTask(String),
    /// Change a pending task: its name and description, and the settings that changed.
    EditTask {
        task_id: String,
        change: orchestra_proto::wire::request::TaskChange,
    },
    Resize {
        session_id: String,
        cols: u16,
        rows: u16,
    },
    /// A worktree task's changes against its base.
    Diff(String),
    /// Merge a finished worktree task into its base branch.
    Merge(String),
    /// Remove a finished task's worktree and branch (a snapshot ref keeps the work).
    Discard(String),
    /// Push a finished worktree task's branch and open a pull request for it.
    PullRequest(String),
    /// Keep one variant of a best-of-N task: merge it, discard the others.
    Pick {
        task_id: String,
        variant: String,
    },
    /// The disk the live task worktrees use.
    WorktreeUsage,
    /// How many agents run now (asked of the engine, not read from a snapshot).
    CountLive,
    /// Stop orchestra: every agent ended, state flushed.
    StopOrchestra,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A task was created; `note` says what went wrong after (e.g. it did not start).
    Created {
        task_id: String,
        note: Option<String>,
    },
    /// Done; a short line for the status bar (may be empty: nothing worth saying).
    Done(String),
    /// A session's transcript (at most [`TRANSCRIPT_BYTES`], its end).
    Transcript { session_id: String, bytes: Vec<u8> },
    /// The answer to [`Command::Diff`]: the diff, or why there is none (for that task's
    /// view, whichever is open when it arrives).
    Diff {
        task_id: String,
        diff: Result<Box<PreparedDiff>, String>,
    },
    /// The answer to [`Command::Merge`] and [`Command::Discard`]: a line saying what was
    /// done, or orchestra's refusal (naming the files in the way).
    Finished {
        task_id: String,
        result: Result<String, String>,
    },
    /// The answer to [`Command::PullRequest`]: a line saying where the pull request is, or
    /// orchestra's refusal. The worktree stays, and so does its diff view.
    Published {
        task_id: String,
        result: Result<String, String>,
    },
    /// The answer to [`Command::WorktreeUsage`].
    Usage(WorktreeUsage),
    /// The answer to [`Command::CountLive`].
    Live(usize),
    /// Orchestra was stopped; the line says what ended. The TUI leaves.
    Stopped(String),
}

pub type CommandFuture = Pin<Box<dyn Future<Output = Result<Outcome, String>> + Send + 'static>>;

/// The TUI's view of an orchestra.
pub trait Cockpit: Send + Sync + 'static {
    /// Tasks, sessions, autopilot and URL as they are now.
    fn snapshot(&self) -> Snapshot;
    /// Providers for the new-task form.
    fn providers(&self) -> Vec<ProviderChoice>;
    /// The provider a task gets when none is chosen.
    fn default_provider(&self) -> Option<String>;
    /// The working directory a task gets when none is given.
    fn default_dir(&self) -> String;
    /// Every change from now on.
    fn subscribe(&self) -> broadcast::Receiver<Event>;
    /// Runs a command; the caller decides where the future runs (the TUI spawns it, so the
    /// UI loop never waits on a slow operation such as a cancel's grace period).
    fn execute(&self, cmd: Command) -> CommandFuture;
    /// Sends raw bytes to a session's terminal without blocking the caller (a stopped or
    /// flooding child must not stall the UI). Bytes to one session keep their order.
    fn write_input(&self, session_id: &str, bytes: Vec<u8>) -> Result<(), String>;
    /// Runs `f` on the session's current screen; `false` when the session has no terminal.
    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool;
    /// How the session's terminal wants input encoded; `None` when it has no terminal. Read
    /// for every typed key: a cockpit whose screens are parsed while the user types answers
    /// without waiting for the parsing (the default reads the screen).
    fn input_modes(&self, session_id: &str) -> Option<InputModes> {
        let mut modes = None;
        self.with_screen(session_id, &mut |s| modes = Some(InputModes::of(s)));
        modes
    }
    /// The sessions whose screens are on show together (the grid's tiles): a cockpit that
    /// streams screens keeps these streams open, with the one last asked for, and closes the
    /// rest. Empty: only the one last asked for (the terminal pane's).
    fn keep_streams(&self, _sessions: &[String]) {}
    /// The state directory, where the TUI keeps its own small choices (the list's order);
    /// `None`: nowhere to keep them.
    fn state_dir(&self) -> Option<PathBuf> {
        None
    }
}
