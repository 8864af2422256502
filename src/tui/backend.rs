//! The one interface the TUI uses to reach an orchestra: owned snapshots out, commands in, an
//! event stream, and per-session screens and input.
//!
//! `orchestra` uses [`super::RemoteCockpit`]: the API of a running orchestra (snapshot and
//! events from the API and its event stream, screens from each shown session's stream).
//! [`EngineCockpit`] implements it over an in-process [`Engine`], for tests that drive the
//! app without a daemon; the app and its views have one code path for both.

use super::diff_view::{PreparedDiff, WorktreeUsage};
use super::keys::InputModes;
use super::transcript_view::TRANSCRIPT_BYTES;
use crate::engine::{CreateTask, Engine, EngineError, Event, Input, SessionInfo, TaskPatch};
use crate::task::{Task, TaskStatus};
use parking_lot::Mutex;
use std::collections::HashMap;
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
}

/// What a start says: started, or stopped at the question the task now waits on.
pub(crate) fn started_note(t: &Task, name: &str) -> String {
    if t.metadata.prompt.is_some() && !t.status().is_final() {
        format!(
            "{name} waits for you to trust its repository's set-up before anything runs: {} trusts it, {} declines",
            crate::engine::TRUST_OPTION,
            crate::engine::DECLINE_OPTION
        )
    } else {
        format!("started {name}")
    }
}

/// What the TUI asks an orchestra to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    CreateTask {
        name: String,
        description: String,
        provider_id: Option<String>,
        working_directory: Option<String>,
        /// Start it right after creating it.
        start: bool,
    },
    Start(String),
    Pause(String),
    Resume(String),
    Cancel(String),
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
    /// Change a pending task's name and description.
    EditTask {
        task_id: String,
        name: String,
        description: String,
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

/// [`Cockpit`] over the in-process engine.
pub struct EngineCockpit {
    engine: Engine,
    /// One writer task per session typed into, so bytes keep their order: a write to a
    /// stopped child's full PTY holds that task, never the UI.
    writers: Mutex<HashMap<String, tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>,
}

impl EngineCockpit {
    pub fn new(engine: Engine) -> EngineCockpit {
        EngineCockpit {
            engine,
            writers: Mutex::new(HashMap::new()),
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

fn msg(e: EngineError) -> String {
    e.to_string()
}

impl Cockpit for EngineCockpit {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            tasks: self.engine.tasks_oldest_first(),
            sessions: self.engine.list_sessions(),
            autopilot: self.engine.autopilot(),
            url: self.engine.url(),
            offline: None,
        }
    }

    fn providers(&self) -> Vec<ProviderChoice> {
        self.engine
            .providers()
            .all()
            .iter()
            .map(|p| ProviderChoice {
                id: p.id.clone(),
                name: p.name.clone(),
                installed: p.installed(),
                install: (!p.installed()).then(|| p.install_hint()),
                needs_description: p.needs_instruction(),
            })
            .collect()
    }

    fn default_provider(&self) -> Option<String> {
        Some(self.engine.providers().default_for_task())
    }

    fn default_dir(&self) -> String {
        self.engine
            .config()
            .working_dir
            .to_string_lossy()
            .into_owned()
    }

    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.engine.subscribe()
    }

    fn execute(&self, cmd: Command) -> CommandFuture {
        let engine = self.engine.clone();
        Box::pin(async move {
            // Notices name what the user sees in the list: the task, else the session's command.
            let named = |sid: &str| match engine.get_session(sid) {
                Ok(s) => match s.task_id.as_deref().map(|t| engine.get_task(t)) {
                    Some(Ok(t)) => format!("{:?}", t.name),
                    _ => format!("{:?}", super::app::session_name(&s)),
                },
                Err(_) => format!("session {}", sid.chars().take(8).collect::<String>()),
            };
            match cmd {
                Command::CreateTask {
                    name,
                    description,
                    provider_id,
                    working_directory,
                    start,
                } => {
                    let task = engine
                        .create_task(CreateTask {
                            name,
                            description,
                            provider_id,
                            working_directory,
                            ..Default::default()
                        })
                        .await
                        .map_err(msg)?;
                    let mut note = None;
                    if start && let Err(e) = engine.start_task(&task.id).await {
                        // Started meanwhile by someone else (autopilot): what was asked
                        // for happened, once.
                        let started = engine.get_task(&task.id).is_ok_and(|t| {
                            matches!(t.status(), TaskStatus::Running | TaskStatus::Paused)
                        });
                        if !started {
                            note = Some(format!(
                                "created {:?}, but it did not start: {e}",
                                task.name
                            ));
                        }
                    }
                    Ok(Outcome::Created {
                        task_id: task.id.clone(),
                        note,
                    })
                }
                Command::Start(id) => {
                    let t = engine.start_task(&id).await.map_err(msg)?;
                    Ok(Outcome::Done(started_note(&t, &format!("{:?}", t.name))))
                }
                Command::Pause(id) => {
                    let t = engine.pause_task(&id).await.map_err(msg)?;
                    Ok(Outcome::Done(format!("paused {:?}", t.name)))
                }
                Command::Resume(id) => {
                    let t = engine.resume_task(&id).await.map_err(msg)?;
                    Ok(Outcome::Done(format!("resumed {:?}", t.name)))
                }
                Command::Cancel(id) => {
                    let t = engine.cancel_task(&id).await.map_err(msg)?;
                    Ok(Outcome::Done(format!("cancelled {:?}", t.name)))
                }
                Command::Retry(id) => {
                    let t = engine.retry_task(&id).await.map_err(msg)?;
                    Ok(Outcome::Created {
                        task_id: t.id.clone(),
                        note: Some(format!("retry of {:?} created", t.name)),
                    })
                }
                Command::Continue { id, message } => {
                    let t = engine
                        .continue_task(&id, message.as_deref())
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Done(format!("continued {:?}", t.name)))
                }
                Command::SetAutopilot(on) => {
                    engine.set_autopilot(on).await;
                    Ok(Outcome::Done(format!(
                        "autopilot {}",
                        if on { "on" } else { "off" }
                    )))
                }
                Command::Message { session_id, text } => {
                    engine
                        .send_message(&session_id, Input::Text(text))
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Done(format!(
                        "message sent to {}",
                        named(&session_id)
                    )))
                }
                Command::Answer { session_id, option } => {
                    engine
                        .answer_prompt(&session_id, &option)
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Done(format!(
                        "answered {option} in {}",
                        named(&session_id)
                    )))
                }
                Command::AnswerTask { task_id, option } => {
                    let t = engine.answer_task(&task_id, &option).await.map_err(msg)?;
                    Ok(Outcome::Done(format!("answered {option} for {:?}", t.name)))
                }
                Command::EndSession(id) => {
                    let name = named(&id);
                    engine.delete_session(&id).await.map_err(msg)?;
                    Ok(Outcome::Done(format!("ended {name}")))
                }
                Command::Transcript(id) => {
                    let bytes = engine
                        .session_transcript(&id, Some(TRANSCRIPT_BYTES))
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Transcript {
                        session_id: id,
                        bytes,
                    })
                }
                Command::RemoveSession(id) => {
                    let s = engine.remove_session(&id).await.map_err(msg)?;
                    let kept = engine
                        .state_dir()
                        .join("trash")
                        .join("sessions")
                        .join(&s.id);
                    Ok(Outcome::Done(format!(
                        "removed the session; its transcript is kept in {}",
                        kept.display()
                    )))
                }
                Command::DeleteTask(id) => {
                    let t = engine.delete_task(&id).await.map_err(msg)?;
                    let kept = engine.state_dir().join("trash").join(&t.id);
                    Ok(Outcome::Done(format!(
                        "deleted {:?}; it is kept in {}",
                        t.name,
                        kept.display()
                    )))
                }
                Command::EditTask {
                    task_id,
                    name,
                    description,
                } => {
                    let t = engine
                        .patch_task(
                            &task_id,
                            TaskPatch {
                                name: Some(name),
                                description: Some(description),
                                ..Default::default()
                            },
                        )
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Done(format!("saved {:?}", t.name)))
                }
                Command::Resize {
                    session_id,
                    cols,
                    rows,
                } => {
                    engine
                        .resize_session(&session_id, cols, rows)
                        .await
                        .map_err(msg)?;
                    Ok(Outcome::Done(String::new()))
                }
                Command::Diff(id) => {
                    let diff = engine
                        .task_diff(&id)
                        .await
                        .map(|d| Box::new(PreparedDiff::new(&id, d.into())))
                        .map_err(msg);
                    Ok(Outcome::Diff { task_id: id, diff })
                }
                Command::Merge(id) => {
                    let result = engine.merge_task(&id).await.map(|(t, merged)| {
                        super::diff_view::merged_note(
                            &t.name,
                            &merged.base_branch,
                            merged.fast_forward,
                            merged.files.len(),
                        )
                    });
                    Ok(Outcome::Finished {
                        task_id: id,
                        result: result.map_err(msg),
                    })
                }
                Command::Discard(id) => {
                    let result = engine.discard_task(&id).await.map(|t| {
                        super::diff_view::discarded_note(
                            &t.name,
                            &crate::git::snapshot::snapshot_ref(&t.id),
                        )
                    });
                    Ok(Outcome::Finished {
                        task_id: id,
                        result: result.map_err(msg),
                    })
                }
                Command::WorktreeUsage => {
                    let usage = engine.worktree_usage().await;
                    Ok(Outcome::Usage(WorktreeUsage {
                        bytes: usage.iter().map(|u| u.bytes).sum(),
                        per_task: usage.into_iter().map(|u| (u.task_id, u.bytes)).collect(),
                    }))
                }
                Command::CountLive => Ok(Outcome::Live(engine.session_counts().0)),
                Command::StopOrchestra => {
                    let ended = engine.session_counts().0;
                    engine
                        .shutdown_because(crate::engine::STOPPED_BY_USER)
                        .await;
                    Ok(Outcome::Stopped(format!(
                        "orchestra stopped; {ended} agent{} ended",
                        if ended == 1 { "" } else { "s" }
                    )))
                }
            }
        })
    }

    fn write_input(&self, session_id: &str, bytes: Vec<u8>) -> Result<(), String> {
        if self.engine.session_pty(session_id).is_none() {
            return Err("this session has no terminal".into());
        }
        let mut writers = self.writers.lock();
        if let Some(tx) = writers.get(session_id) {
            match tx.send(bytes) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    writers.remove(session_id);
                    return Err(format!(
                        "the session has ended ({} bytes not sent)",
                        e.0.len()
                    ));
                }
            }
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| "no runtime to type from: input was not sent".to_string())?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let engine = self.engine.clone();
        let id = session_id.to_string();
        // Through the engine, so what is typed comes after the task's first instruction.
        runtime.spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if engine.write_input(&id, bytes).await.is_err() {
                    // Ended: dropping the receiver makes the next send fail.
                    break;
                }
            }
        });
        let _ = tx.send(bytes);
        writers.insert(session_id.to_string(), tx);
        Ok(())
    }

    fn state_dir(&self) -> Option<PathBuf> {
        Some(self.engine.state_dir().to_path_buf())
    }

    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        match self.engine.session_pty(session_id) {
            Some(pty) => {
                pty.with_screen(|s| f(s));
                true
            }
            None => false,
        }
    }
}
