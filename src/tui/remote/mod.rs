//! [`Cockpit`] over a running orchestra's API: what the TUI shows comes from the daemon's
//! event stream ([`link`]), every command is an HTTP call ([`http`]), and the shown session's
//! terminal comes over its WebSocket ([`stream`]). Agents belong to the daemon, so the TUI can
//! go away and come back without ending them.

pub mod http;
pub mod link;
pub mod stream;

use crate::engine::Event;
use crate::task::TaskStatus;
use crate::tui::backend::{Cockpit, Command, CommandFuture, Outcome, ProviderChoice, Snapshot};
use crate::tui::diff_view::{PreparedDiff, TaskDiff, WorktreeUsage};
use crate::tui::transcript_view::TRANSCRIPT_BYTES;
use http::{Api, ApiError, Method, segment};
use link::{Locate, Shared};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::broadcast;

/// How long the new-task form waits for the providers' first read (orchestra detects them
/// by running them: seconds on a machine with many agent CLIs).
const PROVIDERS_READ: std::time::Duration = std::time::Duration::from_secs(10);

/// How long `Q` waits for orchestra to end its agents and exit.
const STOP_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a command waits for its effect to come back on the event stream.
const CAUGHT_UP: std::time::Duration = std::time::Duration::from_secs(2);

pub struct RemoteCockpit {
    shared: Arc<Shared>,
    /// The shown session's stream; another session shown closes it.
    stream: Mutex<Option<stream::Stream>>,
    rt: tokio::runtime::Handle,
    state_dir: Option<PathBuf>,
}

/// How many agents run, asked of the daemon now (not from the last snapshot).
pub fn live_agents(api: &Api) -> Result<usize, ApiError> {
    let status = api.get("/api/status")?;
    Ok(status
        .pointer("/sessions/active")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize)
}

impl RemoteCockpit {
    /// Attaches to the orchestra `api` names: reads its state whole, then follows its events.
    /// `locate` finds it again after it went away; `state_dir` is where the TUI keeps its own
    /// small choices (none when attached by URL to an orchestra elsewhere).
    /// Must be called inside a tokio runtime.
    pub fn attach(
        api: Api,
        locate: Locate,
        state_dir: Option<PathBuf>,
    ) -> Result<RemoteCockpit, String> {
        // Only what the first frame shows; the providers (whose detection runs programs)
        // come with the event stream's connection, on the link's thread.
        let snap = link::fetch_snapshot(&api)?;
        let shared = Shared::new(api);
        *shared.snap.lock() = snap;
        link::spawn(shared.clone(), locate)
            .map_err(|e| format!("cannot start the event thread: {e}"))?;
        Ok(RemoteCockpit {
            shared,
            stream: Mutex::new(None),
            rt: tokio::runtime::Handle::current(),
            state_dir,
        })
    }

    pub fn api(&self) -> Api {
        self.shared.api()
    }

    /// Runs `f` on the stream of `session_id`, opening it first when another session (or
    /// none) was shown, or when it closed and the link has reconnected since. While orchestra
    /// is gone a closed stream is kept: its last screen stays shown.
    fn on_stream<R>(&self, session_id: &str, f: impl FnOnce(&stream::Stream) -> R) -> Option<R> {
        let generation = self.shared.generation.load(Ordering::SeqCst);
        let mut slot = self.stream.lock();
        let (size, online) = {
            let snap = self.shared.snap.lock();
            let size = snap
                .sessions
                .iter()
                .find(|s| s.id == session_id)
                .map(|info| (info.rows, info.cols));
            (size, snap.offline.is_none())
        };
        let stale = match slot.as_ref() {
            Some(s) if s.session_id == session_id => online && s.reopen_worthy(generation),
            _ => true,
        };
        if stale {
            let size = size?;
            // The same session again: its last screen stays until the new one arrives.
            let before = slot.take().filter(|s| s.session_id == session_id);
            // Dropping the old stream closes its socket.
            *slot = Some(stream::Stream::open(
                &self.rt,
                &self.shared.api(),
                session_id,
                size,
                before,
                self.shared.generation.clone(),
                self.shared.events.clone(),
            ));
        }
        slot.as_ref().map(f)
    }
}

/// The name a notice gives a task or session id, from the snapshot.
fn named(snap: &Snapshot, session_id: &str) -> String {
    let Some(s) = snap.sessions.iter().find(|s| s.id == session_id) else {
        return format!("session {}", session_id.chars().take(8).collect::<String>());
    };
    match s
        .task_id
        .as_deref()
        .and_then(|t| snap.tasks.iter().find(|x| x.id == t))
    {
        Some(t) => format!("{:?}", t.name),
        None => format!("{:?}", crate::tui::app::session_name(s)),
    }
}

/// The task in an answer (`{"task": {…}}`).
fn task_of(v: &Value) -> &Value {
    v.get("task").unwrap_or(v)
}

fn task_name(v: &Value) -> String {
    let name = task_of(v).get("name").and_then(Value::as_str);
    format!("{:?}", name.unwrap_or("task"))
}

fn task_id(v: &Value) -> Result<String, String> {
    task_of(v)
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "the answer names no task".to_string())
}

impl Cockpit for RemoteCockpit {
    fn snapshot(&self) -> Snapshot {
        self.shared.snap.lock().clone()
    }

    fn providers(&self) -> Vec<ProviderChoice> {
        self.shared.providers(PROVIDERS_READ).0
    }

    fn default_provider(&self) -> Option<String> {
        self.shared.providers(PROVIDERS_READ).1
    }

    /// Tasks run where the user started the TUI, as they would with a CLI in that directory.
    fn default_dir(&self) -> String {
        std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    fn execute(&self, cmd: Command) -> CommandFuture {
        // A resize of the shown session goes up its stream (making this TUI the session's
        // latest client, whose size the terminal takes).
        if let Command::Resize {
            session_id,
            cols,
            rows,
        } = &cmd
            && self
                .on_stream(session_id, |s| s.resize(*cols, *rows))
                .unwrap_or(false)
        {
            return Box::pin(async { Ok(Outcome::Done(String::new())) });
        }
        let shared = self.shared.clone();
        let state_dir = self.state_dir.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let snap = shared.snap.lock().clone();
                let start = matches!(cmd, Command::CreateTask { start: true, .. });
                let outcome = run_command(&shared.api(), &snap, state_dir, cmd)?;
                // A task just created is selected next: wait until the event stream has
                // brought it (and its start), so the app finds it as it is.
                if let Outcome::Created { task_id, note } = &outcome {
                    let started = start && note.is_none();
                    shared.wait_for(CAUGHT_UP, |s| {
                        s.tasks.iter().any(|t| {
                            &t.id == task_id && (!started || t.status() != TaskStatus::Pending)
                        })
                    });
                }
                Ok(outcome)
            })
            .await
            .map_err(|e| format!("the command did not finish: {e}"))?
        })
    }

    fn write_input(&self, session_id: &str, bytes: Vec<u8>) -> Result<(), String> {
        self.on_stream(session_id, |s| s.input(bytes))
            .unwrap_or_else(|| Err("this session has no terminal".into()))
    }

    fn with_screen(&self, session_id: &str, f: &mut dyn FnMut(&vt100::Screen)) -> bool {
        self.on_stream(session_id, |s| s.with_screen(f))
            .unwrap_or(false)
    }

    fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir.clone()
    }
}

/// One command as HTTP calls (blocking; run off the UI thread).
fn run_command(
    api: &Api,
    snap: &Snapshot,
    state_dir: Option<PathBuf>,
    cmd: Command,
) -> Result<Outcome, String> {
    let e = |e: ApiError| e.to_string();
    let task =
        |id: &str, action: &str| format!("/api/coding-agents/tasks/{}/{action}", segment(id));
    let session = |id: &str| format!("/api/coding-agents/sessions/{}", segment(id));
    let trash = |rest: &str| match &state_dir {
        Some(d) => d.join("trash").join(rest).display().to_string(),
        None => "the trash of its state directory".into(),
    };
    match cmd {
        Command::CreateTask {
            name,
            description,
            provider_id,
            working_directory,
            start,
        } => {
            let mut body = json!({"name": name, "description": description});
            if let Some(p) = provider_id {
                body["providerId"] = json!(p);
            }
            if let Some(d) = working_directory {
                body["workingDirectory"] = json!(d);
            }
            let created = api
                .post("/api/coding-agents/tasks", Some(body))
                .map_err(e)?;
            let id = task_id(&created)?;
            let mut note = None;
            if start && let Err(err) = api.post(&task(&id, "start"), None) {
                // Started meanwhile by someone else (autopilot): what was asked for happened.
                let started = api
                    .get(&format!("/api/coding-agents/tasks/{}", segment(&id)))
                    .ok()
                    .and_then(|t| {
                        task_of(&t)
                            .pointer("/metadata/status")
                            .and_then(Value::as_str)
                            .and_then(|s| s.parse::<TaskStatus>().ok())
                    })
                    .is_some_and(|s| matches!(s, TaskStatus::Running | TaskStatus::Paused));
                if !started {
                    note = Some(format!(
                        "created {}, but it did not start: {err}",
                        task_name(&created)
                    ));
                }
            }
            Ok(Outcome::Created { task_id: id, note })
        }
        Command::Start(id) => {
            let t = api.post(&task(&id, "start"), None).map_err(e)?;
            Ok(Outcome::Done(format!("started {}", task_name(&t))))
        }
        Command::Pause(id) => {
            let t = api.post(&task(&id, "pause"), None).map_err(e)?;
            Ok(Outcome::Done(format!("paused {}", task_name(&t))))
        }
        Command::Resume(id) => {
            let t = api.post(&task(&id, "resume"), None).map_err(e)?;
            Ok(Outcome::Done(format!("resumed {}", task_name(&t))))
        }
        Command::Cancel(id) => {
            let t = api.post(&task(&id, "cancel"), None).map_err(e)?;
            Ok(Outcome::Done(format!("cancelled {}", task_name(&t))))
        }
        Command::Retry(id) => {
            let t = api.post(&task(&id, "retry"), None).map_err(e)?;
            Ok(Outcome::Created {
                task_id: task_id(&t)?,
                note: Some(format!("retry of {} created", task_name(&t))),
            })
        }
        Command::SetAutopilot(on) => {
            let path = if on {
                "/api/agent/resume"
            } else {
                "/api/agent/pause"
            };
            api.post(path, None).map_err(e)?;
            Ok(Outcome::Done(format!(
                "autopilot {}",
                if on { "on" } else { "off" }
            )))
        }
        Command::Message { session_id, text } => {
            api.post(
                &format!("{}/messages", session(&session_id)),
                Some(json!({"text": text})),
            )
            .map_err(e)?;
            Ok(Outcome::Done(format!(
                "message sent to {}",
                named(snap, &session_id)
            )))
        }
        Command::Answer { session_id, option } => {
            api.post(
                &format!("{}/answer", session(&session_id)),
                Some(json!({"option": option})),
            )
            .map_err(e)?;
            Ok(Outcome::Done(format!(
                "answered {option} in {}",
                named(snap, &session_id)
            )))
        }
        Command::EndSession(id) => {
            api.request(Method::Delete, &session(&id), None)
                .map_err(e)?;
            Ok(Outcome::Done(format!("ended {}", named(snap, &id))))
        }
        Command::Transcript(id) => {
            let bytes = api
                .request_bytes(
                    Method::Get,
                    &format!("{}/transcript?bytes={TRANSCRIPT_BYTES}", session(&id)),
                    None,
                )
                .map_err(e)?;
            Ok(Outcome::Transcript {
                session_id: id,
                bytes,
            })
        }
        Command::RemoveSession(id) => {
            api.request(
                Method::Delete,
                &format!("{}?remove=true", session(&id)),
                None,
            )
            .map_err(e)?;
            Ok(Outcome::Done(format!(
                "removed the session; its transcript is kept in {}",
                trash(&format!("sessions/{id}"))
            )))
        }
        Command::DeleteTask(id) => {
            let name = snap
                .tasks
                .iter()
                .find(|t| t.id == id)
                .map(|t| format!("{:?}", t.name))
                .unwrap_or_else(|| "the task".into());
            api.request(
                Method::Delete,
                &format!("/api/coding-agents/tasks/{}", segment(&id)),
                None,
            )
            .map_err(e)?;
            Ok(Outcome::Done(format!(
                "deleted {name}; it is kept in {}",
                trash(&id)
            )))
        }
        Command::EditTask {
            task_id,
            name,
            description,
        } => {
            let t = api
                .request(
                    Method::Patch,
                    &format!("/api/coding-agents/tasks/{}", segment(&task_id)),
                    Some(json!({"name": name, "description": description})),
                )
                .map_err(e)?;
            Ok(Outcome::Done(format!("saved {}", task_name(&t))))
        }
        Command::Resize {
            session_id,
            cols,
            rows,
        } => {
            api.post(
                &format!("{}/resize", session(&session_id)),
                Some(json!({"cols": cols, "rows": rows})),
            )
            .map_err(e)?;
            Ok(Outcome::Done(String::new()))
        }
        Command::Diff(id) => {
            let diff = api.get(&task(&id, "diff")).map_err(e).and_then(|v| {
                v.get("diff")
                    .cloned()
                    .and_then(|d| serde_json::from_value::<TaskDiff>(d).ok())
                    .map(|d| Box::new(PreparedDiff::new(&id, d)))
                    .ok_or_else(|| "orchestra's answer holds no diff".to_string())
            });
            Ok(Outcome::Diff { task_id: id, diff })
        }
        Command::Merge(id) => {
            let result = api.post(&task(&id, "merge"), None).map_err(e).map(|v| {
                let m = v.get("merge").unwrap_or(&Value::Null);
                crate::tui::diff_view::merged_note(
                    task_of(&v)
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("task"),
                    m.get("baseBranch")
                        .and_then(Value::as_str)
                        .unwrap_or("its base"),
                    m.get("fastForward")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    m.get("files").and_then(Value::as_array).map_or(0, Vec::len),
                )
            });
            Ok(Outcome::Finished {
                task_id: id,
                result,
            })
        }
        Command::Discard(id) => {
            let result = api.post(&task(&id, "discard"), None).map_err(e).map(|v| {
                let snapshot = v
                    .get("snapshotRef")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| crate::git::snapshot::snapshot_ref(&id));
                crate::tui::diff_view::discarded_note(
                    task_of(&v)
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("task"),
                    &snapshot,
                )
            });
            Ok(Outcome::Finished {
                task_id: id,
                result,
            })
        }
        Command::WorktreeUsage => {
            let v = api.get("/api/coding-agents/worktrees").map_err(e)?;
            let per_task = v
                .get("worktrees")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|w| {
                            let id = w.get("taskId")?.as_str()?.to_string();
                            Some((id, w.get("bytes")?.as_u64()?))
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(Outcome::Usage(WorktreeUsage {
                bytes: v.get("bytes").and_then(Value::as_u64).unwrap_or(0),
                per_task,
            }))
        }
        Command::CountLive => live_agents(api).map(Outcome::Live).map_err(e),
        Command::StopOrchestra => {
            // Found through its state directory: wait until it is gone (its agents ended),
            // as `orchestra stop` does, so that nothing runs once the TUI has left.
            let pid = state_dir
                .as_deref()
                .and_then(|d| crate::daemon::ServerFile::read(d).ok().flatten())
                .filter(|f| f.url.trim_end_matches('/') == api.base)
                .and_then(|f| f.pid);
            let r = api.post("/api/daemon/stop", None).map_err(e)?;
            if let Some(pid) = pid {
                crate::daemon::wait_exit(pid, STOP_BUDGET);
            }
            let ended = r.get("ended").and_then(Value::as_u64).unwrap_or(0);
            Ok(Outcome::Stopped(format!(
                "orchestra stopped; {ended} agent{} ended",
                if ended == 1 { "" } else { "s" }
            )))
        }
    }
}
