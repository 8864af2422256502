//! [`Cockpit`] over a running orchestra's API: what the TUI shows comes from the daemon's
//! event stream ([`link`]), every command is an HTTP call ([`http`]), and the shown session's
//! terminal comes over its WebSocket ([`stream`]). Agents belong to the daemon, so the TUI can
//! go away and come back without ending them.

mod key_writer;
pub mod link;
pub mod stream;

use crate::backend::{Cockpit, Command, CommandFuture, Outcome, ProviderChoice, Snapshot};
use crate::diff_view::{PreparedDiff, TaskDiff, WorktreeUsage};
use crate::transcript_view::TRANSCRIPT_BYTES;
use link::{Locate, Shared};
use orchestra_client::http::{Api, ApiError, Failure, Method};
use orchestra_proto::routes;
use orchestra_proto::task::FamilyOp;
use orchestra_proto::task::{Task, TaskStatus};
use orchestra_proto::wire;
use orchestra_proto::wire::request::{Answer, NewTask, Resize, SendMessage, TaskChange};
use orchestra_proto::wire::started_anyway;
use orchestra_proto::wire::{DaemonStopped, Event, MessageBody, SessionBody, Status, TaskBody};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
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
    /// The shown sessions' streams: the one last asked for and those kept (the grid's
    /// tiles); another session shown closes the rest.
    streams: Mutex<HashMap<String, stream::Stream>>,
    /// The sessions whose streams stay open while others are shown (see `keep_streams`).
    keep: Mutex<HashSet<String>>,
    /// The session last shown outside the kept ones (the terminal pane's); `None` since the
    /// kept set last changed.
    pane: Mutex<Option<String>>,
    rt: tokio::runtime::Handle,
    state_dir: Option<PathBuf>,
}

/// How many agents run, asked of the daemon now (not from the last snapshot).
pub fn live_agents(api: &Api) -> Result<usize, ApiError> {
    let status: Status = api.read(routes::STATUS, "orchestra's status")?;
    Ok(status.sessions.active)
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
            streams: Mutex::new(HashMap::new()),
            keep: Mutex::new(HashSet::new()),
            pane: Mutex::new(None),
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
        let mut streams = self.streams.lock();
        {
            // Dropping a stream closes its socket.
            let keep = self.keep.lock();
            streams.retain(|id, _| id == session_id || keep.contains(id));
            if !keep.contains(session_id) {
                *self.pane.lock() = Some(session_id.to_string());
            }
        }
        let mut slot = streams.remove(session_id);
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
            slot = Some(stream::Stream::open(
                &self.rt,
                &self.shared.api(),
                session_id,
                size,
                before,
                self.shared.generation.clone(),
                self.shared.events.clone(),
            ));
        }
        let out = slot.as_ref().map(f);
        if let Some(s) = slot {
            streams.insert(session_id.to_string(), s);
        }
        out
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
        None => format!("{:?}", crate::app::session_name(s)),
    }
}

/// How a notice names a task.
fn task_name(t: &Task) -> String {
    format!("{:?}", t.name)
}

/// A task route's answer (`{task}`).
fn task_call(
    api: &Api,
    method: Method,
    path: &str,
    body: &impl serde::Serialize,
) -> Result<Arc<Task>, ApiError> {
    let answer: TaskBody = api.send(method, path, body, "a task")?;
    Ok(answer.task)
}

/// A session route's answer (`{session}`); what the notice needs is in the snapshot.
fn session_call(
    api: &Api,
    method: Method,
    path: &str,
    body: &impl serde::Serialize,
) -> Result<(), ApiError> {
    api.send::<_, SessionBody>(method, path, body, "a session")
        .map(|_| ())
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
        // A resize of a shown session goes up its stream (making this TUI the session's
        // latest client, whose size the terminal takes); one not shown (the grid gives a
        // tile's agent its size back) by a call: its stream, if still open, is about to
        // close, and what is queued on it would be lost.
        if let Command::Resize {
            session_id,
            cols,
            rows,
        } = &cmd
        {
            // One lock at a time, none held while taking the streams'.
            let kept = self.keep.lock().contains(session_id);
            let shown = kept || self.pane.lock().as_deref() == Some(session_id.as_str());
            let sent = shown
                && self
                    .streams
                    .lock()
                    .get(session_id)
                    .is_some_and(|s| s.resize(*cols, *rows));
            if sent {
                return Box::pin(async { Ok(Outcome::Done(String::new())) });
            }
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

    fn input_modes(&self, session_id: &str) -> Option<crate::keys::InputModes> {
        self.on_stream(session_id, stream::Stream::input_modes)
            .flatten()
    }

    fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir.clone()
    }

    fn keep_streams(&self, sessions: &[String]) {
        let keep: HashSet<String> = sessions.iter().cloned().collect();
        // Streams no longer kept close when the next screen is asked for (`on_stream`).
        *self.keep.lock() = keep;
        *self.pane.lock() = None;
    }
}

/// One command as HTTP calls (blocking; run off the UI thread): each command's calls are in
/// a function of their own, grouped as below.
fn run_command(
    api: &Api,
    snap: &Snapshot,
    state_dir: Option<PathBuf>,
    cmd: Command,
) -> Result<Outcome, String> {
    let state_dir = state_dir.as_deref();
    match cmd {
        // A task's life.
        Command::CreateTask { task, start } => create_task(api, &task, start),
        Command::Start(id) => task_step(api, routes::TASK_START, &id, |t| {
            super::backend::started_note(t, &task_name(t))
        }),
        Command::Pause(id) => task_step(api, routes::TASK_PAUSE, &id, |t| {
            format!("paused {}", task_name(t))
        }),
        Command::Resume(id) => task_step(api, routes::TASK_RESUME, &id, |t| {
            format!("resumed {}", task_name(t))
        }),
        Command::Cancel(id) => task_step(api, routes::TASK_CANCEL, &id, |t| {
            format!("cancelled {}", task_name(t))
        }),
        Command::Family { op, id } => family_step(api, op, &id),
        Command::Retry(id) => retry_task(api, &id),
        Command::Continue { id, message } => continue_task(api, &id, message),
        Command::AnswerTask { task_id, option } => answer_task(api, &task_id, option),
        Command::DeleteTask(id) => delete_task(api, snap, state_dir, &id),
        Command::EditTask { task_id, change } => edit_task(api, &task_id, change),
        // Sessions.
        Command::Message { session_id, text } => send_message(api, snap, &session_id, text),
        Command::Answer { session_id, option } => answer_prompt(api, snap, &session_id, option),
        Command::EndSession(id) => end_session(api, snap, &id),
        Command::Transcript(id) => read_transcript(api, id),
        Command::RemoveSession(id) => remove_session(api, state_dir, &id),
        Command::Resize {
            session_id,
            cols,
            rows,
        } => resize_session(api, &session_id, cols, rows),
        // Worktrees: what the diff view asks for.
        Command::Diff(id) => Ok(read_diff(api, id)),
        Command::Merge(id) => Ok(merge_task(api, id)),
        Command::Discard(id) => Ok(discard_task(api, id)),
        Command::PullRequest(id) => Ok(open_pull_request(api, id)),
        Command::Pick { task_id, variant } => Ok(pick_variant(api, task_id, variant)),
        Command::WorktreeUsage => worktree_usage(api),
        // Orchestra itself.
        Command::SetAutopilot(on) => set_autopilot(api, on),
        Command::CountLive => live_agents(api)
            .map(Outcome::Live)
            .map_err(|e| e.to_string()),
        Command::StopOrchestra => stop_orchestra(api, state_dir),
    }
}

/// A task route of the task `id` (`pattern` one of `routes::TASK_*`).
fn task_route(pattern: &str, id: &str) -> String {
    routes::at(pattern, &[id])
}

/// Where the trash keeps `rest`, for a notice.
fn in_trash(state_dir: Option<&Path>, rest: &str) -> String {
    match state_dir {
        Some(d) => d.join("trash").join(rest).display().to_string(),
        None => "the trash of its state directory".into(),
    }
}

/// Creates a task and, when asked, starts it; a start that fails is a note on the creation.
fn create_task(api: &Api, body: &NewTask, start: bool) -> Result<Outcome, String> {
    let e = |e: ApiError| e.to_string();
    let task = |pattern: &str, id: &str| routes::at(pattern, &[id]);
    let created = task_call(api, Method::Post, routes::TASKS, body).map_err(e)?;
    let id = created.id.clone();
    let mut note = None;
    if start && let Err(err) = task_call(api, Method::Post, &task(routes::TASK_START, &id), &()) {
        // Started meanwhile by someone else (autopilot): what was asked for happened, once.
        let conflict = matches!(err.failure(), Failure::Refused { status: 409, .. });
        let now = api
            .read::<TaskBody>(&routes::at(routes::TASK, &[&id]), "a task")
            .ok()
            .map(|t| t.task.status());
        let started = conflict && started_anyway(&err.to_string(), now);
        if !started {
            note = Some(format!(
                "created {}, but it did not start: {err}",
                task_name(&created)
            ));
        }
    }
    Ok(Outcome::Created { task_id: id, note })
}

/// A step in a task's life with no body (start, pause, resume, cancel), and the notice
/// `done` makes of the task it answers with.
fn task_step(
    api: &Api,
    pattern: &str,
    id: &str,
    done: impl FnOnce(&Task) -> String,
) -> Result<Outcome, String> {
    let t =
        task_call(api, Method::Post, &task_route(pattern, id), &()).map_err(|e| e.to_string())?;
    Ok(Outcome::Done(done(&t)))
}

/// Pauses, resumes or cancels a task and, as far as each one's state allows, its
/// descendants.
fn family_step(api: &Api, op: FamilyOp, id: &str) -> Result<Outcome, String> {
    let path = format!("{}?children=true", task_route(op.route(), id));
    let t = task_call(api, Method::Post, &path, &()).map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "{} {} and its children",
        match op {
            FamilyOp::Pause => "paused",
            FamilyOp::Resume => "resumed",
            FamilyOp::Cancel => "cancelled",
        },
        task_name(&t)
    )))
}

fn retry_task(api: &Api, id: &str) -> Result<Outcome, String> {
    let t = task_call(api, Method::Post, &task_route(routes::TASK_RETRY, id), &())
        .map_err(|e| e.to_string())?;
    Ok(Outcome::Created {
        task_id: t.id.clone(),
        note: Some(format!("retry of {} created", task_name(&t))),
    })
}

fn continue_task(api: &Api, id: &str, message: Option<String>) -> Result<Outcome, String> {
    let body = orchestra_proto::wire::request::ContinueTask { message };
    let t = task_call(
        api,
        Method::Post,
        &task_route(routes::TASK_CONTINUE, id),
        &body,
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!("continued {}", task_name(&t))))
}

fn answer_task(api: &Api, task_id: &str, option: String) -> Result<Outcome, String> {
    let body = Answer {
        option: option.clone(),
    };
    let t = task_call(
        api,
        Method::Post,
        &task_route(routes::TASK_ANSWER, task_id),
        &body,
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "answered {option} for {}",
        task_name(&t)
    )))
}

fn delete_task(
    api: &Api,
    snap: &Snapshot,
    state_dir: Option<&Path>,
    id: &str,
) -> Result<Outcome, String> {
    let name = snap
        .tasks
        .iter()
        .find(|t| t.id == id)
        .map(|t| format!("{:?}", t.name))
        .unwrap_or_else(|| "the task".into());
    task_call(api, Method::Delete, &routes::at(routes::TASK, &[id]), &())
        .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "deleted {name}; it is kept in {}",
        in_trash(state_dir, id)
    )))
}

fn edit_task(api: &Api, task_id: &str, change: TaskChange) -> Result<Outcome, String> {
    let t = task_call(
        api,
        Method::Patch,
        &routes::at(routes::TASK, &[task_id]),
        &change,
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!("saved {}", task_name(&t))))
}

fn send_message(
    api: &Api,
    snap: &Snapshot,
    session_id: &str,
    text: String,
) -> Result<Outcome, String> {
    api.send::<_, MessageBody>(
        Method::Post,
        &routes::at(routes::SESSION_MESSAGES, &[session_id]),
        &SendMessage::Text(text),
        "a message",
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "message sent to {}",
        named(snap, session_id)
    )))
}

fn answer_prompt(
    api: &Api,
    snap: &Snapshot,
    session_id: &str,
    option: String,
) -> Result<Outcome, String> {
    session_call(
        api,
        Method::Post,
        &routes::at(routes::SESSION_ANSWER, &[session_id]),
        &Answer {
            option: option.clone(),
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "answered {option} in {}",
        named(snap, session_id)
    )))
}

fn end_session(api: &Api, snap: &Snapshot, id: &str) -> Result<Outcome, String> {
    session_call(
        api,
        Method::Delete,
        &routes::at(routes::SESSION, &[id]),
        &(),
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!("ended {}", named(snap, id))))
}

fn read_transcript(api: &Api, id: String) -> Result<Outcome, String> {
    let bytes = api
        .request_bytes(
            Method::Get,
            &format!(
                "{}?bytes={TRANSCRIPT_BYTES}",
                routes::at(routes::SESSION_TRANSCRIPT, &[&id])
            ),
            None,
        )
        .map_err(|e| e.to_string())?;
    Ok(Outcome::Transcript {
        session_id: id,
        bytes,
    })
}

fn remove_session(api: &Api, state_dir: Option<&Path>, id: &str) -> Result<Outcome, String> {
    session_call(
        api,
        Method::Delete,
        &format!("{}?remove=true", routes::at(routes::SESSION, &[id])),
        &(),
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "removed the session; its transcript is kept in {}",
        in_trash(state_dir, &format!("sessions/{id}"))
    )))
}

fn resize_session(api: &Api, session_id: &str, cols: u16, rows: u16) -> Result<Outcome, String> {
    session_call(
        api,
        Method::Post,
        &routes::at(routes::SESSION_RESIZE, &[session_id]),
        &Resize { cols, rows },
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(String::new()))
}

/// The diff of a worktree task, or why there is none (for its view: not a failed command).
fn read_diff(api: &Api, id: String) -> Outcome {
    let diff = api
        .read::<wire::DiffBody>(&task_route(routes::TASK_DIFF, &id), "a task's diff")
        .map(|b| Box::new(PreparedDiff::new(&id, TaskDiff::from(b.diff))))
        .map_err(|e| e.to_string());
    Outcome::Diff { task_id: id, diff }
}

/// Merges a worktree task; what it did, or orchestra's refusal, for the diff view.
fn pick_variant(api: &Api, id: String, variant: String) -> Outcome {
    let result = api
        .send::<_, wire::Picked>(
            Method::Post,
            &task_route(routes::TASK_PICK, &id),
            &orchestra_proto::wire::request::PickVariant { variant },
            "a pick",
        )
        .map(|p| crate::diff_view::picked_note(&p))
        .map_err(|e| e.to_string());
    Outcome::Finished {
        task_id: id,
        result,
    }
}

fn merge_task(api: &Api, id: String) -> Outcome {
    let result = api
        .send::<_, wire::MergedTask>(
            Method::Post,
            &task_route(routes::TASK_MERGE, &id),
            &(),
            "a merged task",
        )
        .map(|m| {
            crate::diff_view::merged_note(
                &m.task.name,
                &m.merge.base_branch,
                m.merge.fast_forward,
                m.merge.files.len(),
            )
        })
        .map_err(|e| e.to_string());
    Outcome::Finished {
        task_id: id,
        result,
    }
}

/// Discards a worktree task's worktree; what it did, or orchestra's refusal.
fn discard_task(api: &Api, id: String) -> Outcome {
    let result = api
        .send::<_, wire::Discarded>(
            Method::Post,
            &task_route(routes::TASK_DISCARD, &id),
            &(),
            "a discarded task",
        )
        .map(|d| crate::diff_view::discarded_note(&d.task.name, &d.snapshot_ref))
        .map_err(|e| e.to_string());
    Outcome::Finished {
        task_id: id,
        result,
    }
}

/// Pushes a worktree task's branch and opens a pull request; where it is, or the refusal.
fn open_pull_request(api: &Api, id: String) -> Outcome {
    let result = api
        .send::<_, wire::PullRequestTask>(
            Method::Post,
            &task_route(routes::TASK_PR, &id),
            &(),
            "a task with its pull request",
        )
        .map(|p| crate::diff_view::published_note(&p.task.name, &p.pull_request))
        .map_err(|e| e.to_string());
    Outcome::Published {
        task_id: id,
        result,
    }
}

fn worktree_usage(api: &Api) -> Result<Outcome, String> {
    let list = api
        .read::<wire::WorktreeList>(routes::WORKTREES, "the worktree list")
        .map_err(|e| e.to_string())?;
    Ok(Outcome::Usage(WorktreeUsage {
        bytes: list.bytes,
        per_task: list
            .worktrees
            .into_iter()
            .map(|w| (w.task_id, w.bytes))
            .collect(),
    }))
}

fn set_autopilot(api: &Api, on: bool) -> Result<Outcome, String> {
    let path = if on {
        routes::AGENT_RESUME
    } else {
        routes::AGENT_PAUSE
    };
    api.send::<_, orchestra_proto::wire::Switched>(
        Method::Post,
        path,
        &(),
        "the autopilot's state",
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome::Done(format!(
        "autopilot {}",
        if on { "on" } else { "off" }
    )))
}

/// Stops orchestra, waiting until it is gone.
fn stop_orchestra(api: &Api, state_dir: Option<&Path>) -> Result<Outcome, String> {
    // Found through its state directory: wait until it is gone (its agents ended),
    // as `orchestra stop` does, so that nothing runs once the TUI has left.
    let pid = state_dir
        .and_then(|d| {
            orchestra_sys::server_file::ServerFile::read(d)
                .ok()
                .flatten()
        })
        .filter(|f| f.url.trim_end_matches('/') == api.base())
        .and_then(|f| f.pid);
    let r: DaemonStopped = api
        .send(
            Method::Post,
            routes::DAEMON_STOP,
            &(),
            "the answer to a stop",
        )
        .map_err(|e| e.to_string())?;
    if let Some(pid) = pid {
        orchestra_sys::process::wait_exit(pid, STOP_BUDGET);
    }
    let ended = r.ended;
    Ok(Outcome::Stopped(format!(
        "orchestra stopped; {ended} agent{} ended",
        if ended == 1 { "" } else { "s" }
    )))
}
