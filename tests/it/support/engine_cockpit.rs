//! The TUI's [`Cockpit`] over an in-process engine, for the tests that drive the app without
//! a daemon. It is test code: `orchestra` itself attaches through `RemoteCockpit` only.

use orchestra_daemon::engine::{CreateTask, Engine, EngineError, Event, Input, TaskPatch};
use orchestra_proto::task::TaskStatus;
use orchestra_tui::backend::*;
use orchestra_tui::diff_view::{PreparedDiff, WorktreeUsage};
use orchestra_tui::transcript_view::TRANSCRIPT_BYTES;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use tokio::sync::broadcast;

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
                    _ => format!("{:?}", orchestra_tui::app::session_name(&s)),
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
                        orchestra_tui::diff_view::merged_note(
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
                        orchestra_tui::diff_view::discarded_note(
                            &t.name,
                            &orchestra_proto::worktree::snapshot_ref(&t.id),
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
                        .shutdown_because(orchestra_daemon::engine::STOPPED_BY_USER)
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
