//! The TUI's link to the daemon: one event-stream connection (SSE) that keeps a local copy
//! of tasks, sessions and autopilot current, and re-reads them whole whenever events may
//! have been missed (a connection made or made again, a `lagged` notice). When the daemon
//! goes away the snapshot says so (`offline`) and the link tries again with a backoff.

use crate::backend::{ProviderChoice, Snapshot};
use orchestra_client::events::{EventReader, Read1};
use orchestra_client::http::Api;
use orchestra_proto::routes;
use orchestra_proto::wire::{
    ConflictList, Event, EventFrame, OutputLines, ProviderList, RunState, SessionEventKind,
    SessionList, Status, TaskEventKind, TaskList,
};
use parking_lot::{Condvar, Mutex, RwLock};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::broadcast;

/// Finds the daemon to (re)connect to: a fixed URL, or the state directory's server.json
/// (a restarted daemon may listen on another port).
pub type Locate = Box<dyn Fn() -> Option<Api> + Send + Sync>;

/// Backoff between attempts to reach a daemon that is gone: no busy loop, yet back soon.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// What the link keeps, shared with the cockpit.
pub struct Shared {
    pub api: RwLock<Api>,
    pub snap: Mutex<Snapshot>,
    /// The providers and the default one; `None` until first read (detecting them runs
    /// programs on the daemon's side, so it is not waited for before the first frame).
    providers: Mutex<Option<(Vec<ProviderChoice>, Option<String>)>>,
    providers_read: Condvar,
    pub events: broadcast::Sender<Event>,
    /// Bumped each time the link (re)connects: a session stream opened before it is stale.
    pub generation: Arc<AtomicU64>,
    /// Signalled after every change to `snap`.
    changed: Condvar,
}

impl Shared {
    pub fn new(api: Api) -> Arc<Shared> {
        let (events, _) = broadcast::channel(4096);
        Arc::new(Shared {
            snap: Mutex::new(Snapshot {
                url: Some(api.base().to_string()),
                ..Default::default()
            }),
            api: RwLock::new(api),
            providers: Mutex::new(None),
            providers_read: Condvar::new(),
            events,
            generation: Arc::new(AtomicU64::new(0)),
            changed: Condvar::new(),
        })
    }

    pub fn api(&self) -> Api {
        self.api.read().clone()
    }

    /// The providers, waiting up to `budget` for their first read (the new-task form asks).
    pub fn providers(&self, budget: Duration) -> (Vec<ProviderChoice>, Option<String>) {
        let deadline = std::time::Instant::now() + budget;
        let mut p = self.providers.lock();
        while p.is_none() {
            if self.providers_read.wait_until(&mut p, deadline).timed_out() {
                break;
            }
        }
        p.clone().unwrap_or_default()
    }

    /// Waits (blocking, up to `budget`) until the copy satisfies `done`: a command's effect
    /// has come back on the event stream, so the app sees what it just did.
    pub fn wait_for(&self, budget: Duration, done: impl Fn(&Snapshot) -> bool) -> bool {
        let deadline = std::time::Instant::now() + budget;
        let mut snap = self.snap.lock();
        while !done(&snap) {
            if self.changed.wait_until(&mut snap, deadline).timed_out() {
                return done(&snap);
            }
        }
        true
    }

    fn replace(&self, snap: Snapshot) {
        *self.snap.lock() = snap;
        self.changed.notify_all();
    }

    /// Tells the app to look at the snapshot again (any event makes it re-read).
    fn nudge(&self) {
        let state = if self.snap.lock().autopilot {
            RunState::Running
        } else {
            RunState::Paused
        };
        let _ = self.events.send(Event::Orchestrator { state });
    }

    fn set_offline(&self, why: Option<String>) {
        let changed = {
            let mut snap = self.snap.lock();
            let changed = snap.offline != why;
            snap.offline = why;
            changed
        };
        if changed {
            self.nudge();
        }
    }
}

/// Reads tasks, sessions and autopilot whole.
pub fn fetch_snapshot(api: &Api) -> Result<Snapshot, String> {
    let e = |e: orchestra_client::http::ApiError| e.to_string();
    let list: TaskList = api.read(routes::TASKS, "the task list").map_err(e)?;
    let mut tasks = list.tasks;
    // The API lists newest first; the app wants oldest first.
    tasks.reverse();
    tasks.iter_mut().for_each(keep_newest_line);
    let sessions: SessionList = api.read(routes::SESSIONS, "the session list").map_err(e)?;
    let status: Status = api.read(routes::STATUS, "orchestra's status").map_err(e)?;
    let mut snap = Snapshot {
        tasks,
        sessions: sessions.sessions,
        autopilot: status.autopilot,
        url: Some(api.base().to_string()),
        offline: None,
        conflicts: Default::default(),
    };
    // The radar's reports are extra: without them the list shows no conflict markers.
    match api.read::<ConflictList>(routes::CONFLICTS, "the conflict reports") {
        Ok(list) => list
            .reports
            .into_iter()
            .for_each(|r| snap.set_conflicts(Arc::new(r))),
        Err(err) => tracing::debug!(error = %err, "could not read the conflict reports"),
    }
    Ok(snap)
}

/// The providers the new-task form offers, and the default one.
pub fn fetch_providers(api: &Api) -> Result<(Vec<ProviderChoice>, Option<String>), String> {
    let list: ProviderList = api
        .read(routes::PROVIDERS, "the provider list")
        .map_err(|e| e.to_string())?;
    let default = list.default_id().map(str::to_string);
    let choices = list
        .providers
        .into_iter()
        .map(|p| ProviderChoice {
            install: (!p.installed).then_some(p.install),
            installed: p.installed,
            needs_description: p.needs_description,
            coding_agent: p.coding_agent,
            name: p.name,
            id: p.id,
        })
        .collect();
    Ok((choices, default))
}

/// Applies one event to the local copy, as the daemon applied it to its own.
/// `false`: the copy cannot follow this event, read it whole.
fn apply(snap: &mut Snapshot, ev: &Event) -> bool {
    match ev {
        Event::Task { kind, task, .. } => {
            let at = snap.tasks.iter().position(|t| t.id == task.id);
            match (kind, at) {
                (TaskEventKind::Deleted, Some(i)) => {
                    snap.tasks.remove(i);
                    snap.conflicts.remove(&task.id);
                }
                (TaskEventKind::Deleted, None) => {}
                (_, Some(i)) => snap.tasks[i] = task.clone(),
                (_, None) => snap.tasks.push(task.clone()),
            }
            true
        }
        Event::Message { .. } => true,
        Event::Session {
            kind: SessionEventKind::Removed,
            session,
        } => {
            snap.sessions.retain(|s| s.id != session.id);
            true
        }
        Event::Session { session, .. } => {
            let info = session.as_ref().clone();
            match snap.sessions.iter_mut().find(|s| s.id == info.id) {
                Some(s) => *s = info,
                None => snap.sessions.push(info),
            }
            true
        }
        Event::Orchestrator { state } => {
            snap.autopilot = *state == RunState::Running;
            true
        }
        Event::Screen { .. } => true,
        Event::Conflicts { report } => {
            snap.set_conflicts(report.clone());
            true
        }
    }
}

/// The copy keeps only a task's newest output line: all the TUI shows of its output (the
/// details' `output` row; the terminal pane and the transcript show the rest), and all the
/// event stream sends it (`?output=last`).
fn keep_newest_line(task: &mut Arc<orchestra_proto::task::Task>) {
    let kept = task.metadata.output.len();
    if kept > 1 {
        Arc::make_mut(task).metadata.output.keep_newest(1);
    }
}

/// Appends a light `task:output` event's line to the copy of its task (see
/// [`keep_newest_line`]); returns the whole change for the app. `None`: the copy has no such
/// task, so it missed events.
fn append_output(snap: &mut Snapshot, out: OutputLines) -> Option<Event> {
    let task = snap.tasks.iter_mut().find(|t| t.id == out.task_id)?;
    Arc::make_mut(task).append_output_lines(out.lines.iter().cloned());
    keep_newest_line(task);
    Some(Event::Task {
        kind: TaskEventKind::Output,
        task: task.clone(),
        lines: out.lines,
    })
}

/// Starts the thread that keeps `shared` current for as long as the process runs.
pub fn spawn(shared: Arc<Shared>, locate: Locate) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("tui-link".into())
        .spawn(move || run(&shared, &locate))
        .map(|_| ())
}

fn run(shared: &Shared, locate: &Locate) {
    let mut wait = RETRY_FIRST;
    loop {
        let api = locate().unwrap_or_else(|| shared.api());
        // What matters first, for a narrow top bar: it is gone, and the TUI is on it.
        let gone = |why: String| {
            format!(
                "orchestra is not answering; reconnecting… ({}: {why})",
                api.base()
            )
        };
        match connect(shared, &api) {
            Ok(body) => {
                wait = RETRY_FIRST;
                let why = follow(shared, &api, body);
                shared.set_offline(Some(gone(why)));
            }
            Err(why) => shared.set_offline(Some(gone(why))),
        }
        std::thread::sleep(wait);
        wait = (wait * 2).min(RETRY_MAX);
    }
}

/// Subscribes, then reads the state whole: nothing that happens after the read is missed.
fn connect(shared: &Shared, api: &Api) -> Result<ureq::Body, String> {
    // Output events without their task, with only their newest line: the copy keeps that.
    // Parsing each busy agent's whole output four times a second was most of what the TUI
    // did, then parsing a flooding agent's every line (grid) most of what its link did.
    let body = api
        .open(&format!("{}?output=last", routes::EVENTS), true)
        .map_err(|e| e.to_string())?;
    let snap = fetch_snapshot(api)?;
    *shared.api.write() = api.clone();
    shared.replace(snap);
    shared.generation.fetch_add(1, Ordering::SeqCst);
    shared.nudge();
    // Then the providers (they rarely change; a failure leaves the last list). Events that
    // arrive meanwhile wait in the connection.
    if let Ok(found) = fetch_providers(api) {
        *shared.providers.lock() = Some(found);
        shared.providers_read.notify_all();
    }
    Ok(body)
}

/// Reads events until the connection ends; returns why it ended.
fn follow(shared: &Shared, api: &Api, body: ureq::Body) -> String {
    let mut reader = EventReader::new(body.into_reader());
    loop {
        // A lagged notice, or an event this copy cannot read: both mean read it all again.
        let frame = match reader.next_event() {
            Ok(Read1::Frame(frame)) => Some(frame),
            Ok(Read1::Unreadable(e)) => {
                tracing::warn!(error = %e, "an event from orchestra did not read; reading everything again");
                None
            }
            Err(why) => return why,
        };
        let (ev, followed) = match frame {
            Some(EventFrame::Change(mut ev)) => {
                if let Event::Task { task, .. } = &mut ev {
                    keep_newest_line(task);
                }
                let ok = apply(&mut shared.snap.lock(), &ev);
                (Some(ev), ok)
            }
            Some(EventFrame::OutputLines(out)) => {
                let ev = append_output(&mut shared.snap.lock(), out);
                let ok = ev.is_some();
                (ev, ok)
            }
            Some(EventFrame::Lagged(_)) | None => (None, false),
        };
        if ev.is_some() {
            shared.changed.notify_all();
        }
        if !followed {
            // Missed events (`lagged`) or one the copy cannot follow: read everything again.
            match fetch_snapshot(api) {
                Ok(snap) => shared.replace(snap),
                Err(e) => return e,
            }
        }
        match ev {
            Some(ev) => {
                let _ = shared.events.send(ev);
            }
            None => shared.nudge(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestra_proto::task::{NewTask, OUTPUT_LINES_KEPT, Task};

    fn task(id: &str, name: &str) -> Arc<Task> {
        Arc::new(Task::new(
            id.into(),
            NewTask {
                name: name.into(),
                description: String::new(),
                provider_id: "shell".into(),
                working_directory: "/tmp".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                ..Default::default()
            },
            1,
        ))
    }

    #[test]
    fn task_events_keep_the_copy_in_order() {
        let mut snap = Snapshot::default();
        let ev = |kind, t: &Arc<Task>| Event::Task {
            kind,
            task: t.clone(),
            lines: Arc::new(vec![]),
        };
        assert!(apply(
            &mut snap,
            &ev(TaskEventKind::Created, &task("a", "one"))
        ));
        assert!(apply(
            &mut snap,
            &ev(TaskEventKind::Created, &task("b", "two"))
        ));
        assert!(apply(
            &mut snap,
            &ev(TaskEventKind::Updated, &task("a", "uno"))
        ));
        let names: Vec<&str> = snap.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["uno", "two"]);
        assert!(apply(
            &mut snap,
            &ev(TaskEventKind::Deleted, &task("a", "uno"))
        ));
        assert_eq!(snap.tasks.len(), 1);
        assert!(apply(
            &mut snap,
            &Event::Orchestrator {
                state: RunState::Running
            }
        ));
        assert!(snap.autopilot);
    }

    #[test]
    fn light_output_leaves_the_copy_with_the_daemons_newest_line() {
        let mut snap = Snapshot {
            tasks: vec![task("a", "one")],
            ..Default::default()
        };
        // The daemon's own copy, changed the daemon's way.
        let mut daemons = (*task("a", "one")).clone();
        let held_by_the_app = snap.tasks[0].clone();
        for n in [1500, 700, 3] {
            let lines: Vec<String> = (0..n).map(|i| format!("{n}-{i}")).collect();
            daemons.append_output_lines(lines.iter().cloned());
            let out = OutputLines {
                task_id: "a".into(),
                lines: Arc::new(lines),
            };
            let Some(Event::Task { kind, task, lines }) = append_output(&mut snap, out) else {
                panic!("the task is in the copy")
            };
            assert_eq!(kind, TaskEventKind::Output);
            assert_eq!(lines.len(), n);
            assert!(Arc::ptr_eq(&task, &snap.tasks[0]));
        }
        // The copy is the daemon's task with its newest line only, whether the event
        // brought many lines (`?output=lines`) or that one (`?output=last`).
        assert_eq!(daemons.metadata.output.len(), OUTPUT_LINES_KEPT);
        let newest = daemons.metadata.output.last().cloned();
        daemons.metadata.output = newest.into_iter().collect();
        assert_eq!(*snap.tasks[0], daemons);
        let out = OutputLines {
            task_id: "a".into(),
            lines: Arc::new(vec!["last".into()]),
        };
        assert!(append_output(&mut snap, out).is_some());
        assert_eq!(snap.tasks[0].metadata.output, ["last"]);
        // What the app held is its own version, unchanged.
        assert!(held_by_the_app.metadata.output.is_empty());
        // Lines of a task the copy does not have: it missed events, and reads it all again.
        let stray = OutputLines {
            task_id: "b".into(),
            lines: Arc::new(vec!["x".into()]),
        };
        assert_eq!(append_output(&mut snap, stray), None);
    }

    /// A stand-in HTTP server on loopback answering every request with `body`.
    fn answering(body: &'static str) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = conn.read(&mut buf);
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        format!("http://{addr}")
    }

    #[test]
    fn an_answer_that_is_no_wire_type_is_an_error_naming_what_was_expected() {
        let api = Api::new(
            &answering(r#"{"tasks": [{"id": 1}]}"#),
            None,
            orchestra_client::http::Caller::Tui,
        );
        let Err(e) = fetch_snapshot(&api) else {
            panic!("a task list of numbers read as one")
        };
        assert!(e.contains("the answer is not the task list"), "{e}");
        assert!(e.contains("invalid type: integer `1`"), "{e}");
        let api = Api::new(
            &answering(r#"{"providers": {}}"#),
            None,
            orchestra_client::http::Caller::Tui,
        );
        let Err(e) = fetch_providers(&api) else {
            panic!("an object read as a provider list")
        };
        assert!(e.contains("the answer is not the provider list"), "{e}");
    }
}
