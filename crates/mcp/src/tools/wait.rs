//! `wait_for_task`: waits on the daemon's events for the first of some tasks to get to a
//! status, or to be blocked on a question. It subscribes first and reads the tasks after,
//! so a change made in between is seen either way; then it sleeps until an event about one
//! of them arrives (no polling: a wait on fifty quiet tasks costs nothing). Each arrival is
//! returned once per server, so a parent calling it again with all its children's ids gets
//! each child once.

use super::args::{Until, Wait};
use super::refusal::Tool;
use super::{Ctx, Outcome, parse, refused, view};
use crate::feed::Item;
use orchestra_proto::routes;
use orchestra_proto::task::{Task, TaskStatus};
use orchestra_proto::wire::{Event, EventFrame, SessionBody, SessionInfo, TaskBody};
use rmcp::RoleServer;
use rmcp::model::{JsonObject, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// Longer than any MCP client waits for a tool by default; a model calls again instead.
const MAX_TIMEOUT_SECS: f64 = 600.0;
const MAX_IDS: usize = 500;
/// Output lines an arrival carries.
const ARRIVAL_LINES: usize = 20;

/// What this server has returned already: task id → the arrival returned last (its status,
/// or the question it was blocked on).
#[derive(Default)]
pub struct Reported(Mutex<HashMap<String, String>>);

impl Reported {
    fn is_new(&self, id: &str, key: &str) -> bool {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(id).is_none_or(|k| k != key)
    }

    fn mark(&self, id: &str, key: String) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(id.to_string(), key);
    }

    /// Forgets what was returned for `id` once the task is no longer there (a continued
    /// task running again, a question answered): getting there again is a new arrival.
    fn forget_unless(&self, id: &str, now: &[String]) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(id).is_some_and(|k| !now.contains(k)) {
            map.remove(id);
        }
    }
}

/// What the wait is for.
struct Goal {
    statuses: Vec<TaskStatus>,
    blocked: bool,
}

impl Goal {
    fn of(until: Option<Vec<Until>>) -> Goal {
        let until = until.filter(|u| !u.is_empty()).unwrap_or_else(|| {
            vec![
                Until::Completed,
                Until::Failed,
                Until::Cancelled,
                Until::Blocked,
            ]
        });
        let statuses = until
            .iter()
            .filter_map(|u| match u {
                Until::Pending => Some(TaskStatus::Pending),
                Until::Running => Some(TaskStatus::Running),
                Until::Paused => Some(TaskStatus::Paused),
                Until::Completed => Some(TaskStatus::Completed),
                Until::Failed => Some(TaskStatus::Failed),
                Until::Cancelled => Some(TaskStatus::Cancelled),
                Until::Blocked => None,
            })
            .collect();
        Goal {
            statuses,
            blocked: until.contains(&Until::Blocked),
        }
    }
}

/// The tasks waited on, and their sessions (by session id) as the events left them.
#[derive(Default)]
struct Watched {
    tasks: HashMap<String, Arc<Task>>,
    sessions: HashMap<String, SessionInfo>,
}

impl Watched {
    fn session_of(&self, task: &Task) -> Option<&SessionInfo> {
        self.sessions.get(task.metadata.session_id.as_deref()?)
    }

    /// What `id` has got to that the goal asks for: its key, when it has.
    fn arrival(&self, id: &str, goal: &Goal) -> Option<String> {
        let task = self.tasks.get(id)?;
        if goal.blocked
            && let Some(key) = self.blocked_key(task)
        {
            return Some(key);
        }
        goal.statuses
            .contains(&task.metadata.status)
            .then(|| status_key(task))
    }

    /// The keys of where `id` is now, whatever a goal asks: its status, and its question.
    fn keys_now(&self, id: &str) -> Vec<String> {
        let Some(task) = self.tasks.get(id) else {
            return Vec::new();
        };
        std::iter::once(status_key(task))
            .chain(self.blocked_key(task))
            .collect()
    }

    fn blocked_key(&self, task: &Task) -> Option<String> {
        let p = view::blocked_on(task, self.session_of(task))?;
        let sid = task.metadata.session_id.as_deref().unwrap_or("");
        Some(format!("blocked\n{sid}\n{}", p.text))
    }

    /// What a watcher would call a change worth telling: status, progress, the question.
    fn state(&self, id: &str) -> String {
        let Some(task) = self.tasks.get(id) else {
            return String::new();
        };
        let prompt = view::blocked_on(task, self.session_of(task)).map(|p| p.text.as_str());
        format!(
            "{} {} {}",
            task.metadata.status,
            task.metadata.progress.value(),
            prompt.unwrap_or("")
        )
    }

    fn brief(&self, id: &str) -> Value {
        match self.tasks.get(id) {
            Some(t) => {
                let mut v = json!({"id": t.id, "name": t.name, "status": t.metadata.status,
                    "progress": t.metadata.progress});
                if view::blocked_on(t, self.session_of(t)).is_some() {
                    v["blocked"] = json!(true);
                }
                v
            }
            None => json!({"id": id}),
        }
    }
}

pub async fn run(
    ctx: &Arc<Ctx>,
    args: Option<JsonObject>,
    rc: &RequestContext<RoleServer>,
) -> Outcome {
    let a: Wait = parse("wait_for_task", args)?;
    let mut ids: Vec<String> = a.id.into_iter().chain(a.ids.unwrap_or_default()).collect();
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    if ids.is_empty() {
        return Err("bad arguments for wait_for_task: give `id` or `ids`".into());
    }
    if ids.len() > MAX_IDS {
        return Err(format!(
            "bad arguments for wait_for_task: at most {MAX_IDS} ids at once"
        ));
    }
    let timeout = a.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(0.0..=MAX_TIMEOUT_SECS).contains(&timeout) {
        return Err(format!(
            "bad arguments for wait_for_task: timeoutSeconds must be 0–{MAX_TIMEOUT_SECS}, not {timeout}"
        ));
    }
    let goal = Goal::of(a.until);
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(timeout);

    let mut rx = ctx
        .feed
        .subscribe()
        .await
        .map_err(|e| refused(Tool::Wait, e))?;
    let mut watched = load(ctx, &ids, goal.blocked).await?;
    let mut progress = Progress::of(rc);
    let mut told = false;
    loop {
        if let Some(mut answer) = arrived(ctx, &ids, &watched, &goal, started) {
            with_screen_if_no_output(ctx, &watched, &mut answer).await;
            return Ok(answer);
        }
        if !ids
            .iter()
            .any(|id| can_still_arrive(ctx, &watched, id, &goal))
        {
            return Ok(json!({
                "arrived": null,
                "timedOut": false,
                "tasks": ids.iter().map(|id| watched.brief(id)).collect::<Vec<_>>(),
                "message": "none of these tasks can get there any more: each has finished, and was returned already or finished otherwise than `until` asks",
            }));
        }
        if !told {
            // Once: the wait is under way (subscribed, the tasks read); where they are.
            progress.waiting(&watched, &ids).await;
            told = true;
        }
        let item = tokio::select! {
            () = rc.ct.cancelled() => return Err("the wait was cancelled".into()),
            () = tokio::time::sleep_until(deadline) => {
                return Ok(json!({
                    "arrived": null,
                    "timedOut": true,
                    "waitedSeconds": secs(started),
                    "tasks": ids.iter().map(|id| watched.brief(id)).collect::<Vec<_>>(),
                    "message": format!("none of the tasks got there within {timeout} s; call wait_for_task again to keep waiting"),
                }));
            }
            r = rx.recv() => r,
        };
        let changed = match item {
            Ok(item) => match &*item {
                Item::Frame(EventFrame::Change(ev)) => {
                    apply(ctx, &mut watched, ev, goal.blocked).await
                }
                Item::Frame(EventFrame::OutputLines(_)) => None,
                Item::Frame(EventFrame::Lagged(_)) | Item::Unreadable => {
                    watched = load(ctx, &ids, goal.blocked).await?;
                    None
                }
                Item::Ended(why) => {
                    return Err(format!(
                        "orchestra's event stream ended ({why}); if the daemon still runs, call wait_for_task again"
                    ));
                }
            },
            Err(RecvError::Lagged(_)) => {
                watched = load(ctx, &ids, goal.blocked).await?;
                None
            }
            Err(RecvError::Closed) => {
                // The reader left as this wait subscribed: subscribe anew, then read again.
                rx = ctx
                    .feed
                    .subscribe()
                    .await
                    .map_err(|e| refused(Tool::Wait, e))?;
                watched = load(ctx, &ids, goal.blocked).await?;
                None
            }
        };
        if let Some((id, before)) = changed
            && watched.state(&id) != before
        {
            progress.note(&watched, &id).await;
        }
    }
}

/// An agent drawn as a full-screen program (Codex, Claude Code) keeps few output lines: its
/// arrival carries the last lines of its screen instead, while its session lives.
async fn with_screen_if_no_output(ctx: &Ctx, watched: &Watched, answer: &mut Value) {
    let arrived = &answer["arrived"];
    if !arrived["lastOutput"]
        .as_array()
        .is_none_or(|l| l.is_empty())
    {
        return;
    }
    let Some(task) = arrived["id"].as_str().and_then(|id| watched.tasks.get(id)) else {
        return;
    };
    let Some(session) = super::fetch_session(ctx, task).await.filter(|s| !s.ended) else {
        return;
    };
    if let Ok(lines) = super::output::screen_lines(ctx, &session.id, ARRIVAL_LINES).await {
        answer["arrived"]["lastOutput"] = json!(lines);
        answer["arrived"]["lastOutputSource"] = json!("screen");
    }
}

/// A status arrival's key: a task finished again (continued, then done) is a new arrival.
fn status_key(task: &Task) -> String {
    let finished = task.metadata.completed_at.map(|at| at.to_string());
    format!("{}\n{}", task.metadata.status, finished.unwrap_or_default())
}

/// The first task, in the order asked, that got where the goal says and was not returned
/// so already: marked returned, and its answer.
fn arrived(
    ctx: &Ctx,
    ids: &[String],
    watched: &Watched,
    goal: &Goal,
    started: Instant,
) -> Option<Value> {
    for id in ids {
        ctx.reported.forget_unless(id, &watched.keys_now(id));
    }
    let (id, key) = ids.iter().find_map(|id| {
        let key = watched.arrival(id, goal)?;
        ctx.reported.is_new(id, &key).then_some((id, key))
    })?;
    ctx.reported.mark(id, key);
    let task = watched.tasks.get(id)?;
    let mut answer = json!({
        "arrived": view::task(task, watched.session_of(task), ARRIVAL_LINES),
        "waitedSeconds": secs(started),
    });
    if ids.len() > 1 {
        answer["others"] = json!(
            ids.iter()
                .filter(|o| *o != id)
                .map(|o| watched.brief(o))
                .collect::<Vec<_>>()
        );
    }
    Some(answer)
}

/// Whether `id` may still arrive: it has not finished, or it finished where the goal asks
/// and was not returned yet.
fn can_still_arrive(ctx: &Ctx, watched: &Watched, id: &str, goal: &Goal) -> bool {
    let Some(task) = watched.tasks.get(id) else {
        return false;
    };
    !task.metadata.status.is_final()
        || watched
            .arrival(id, goal)
            .is_some_and(|k| ctx.reported.is_new(id, &k))
}

/// Takes `ev` into `watched`: the watched task it concerns and its state before, if any.
async fn apply(
    ctx: &Ctx,
    watched: &mut Watched,
    ev: &Event,
    sessions: bool,
) -> Option<(String, String)> {
    match ev {
        Event::Task { task, .. } if watched.tasks.contains_key(&task.id) => {
            let before = watched.state(&task.id);
            watched.tasks.insert(task.id.clone(), task.clone());
            // A new session (a continue): read it, in case it asks before its events come.
            if sessions
                && let Some(sid) = task.metadata.session_id.as_deref()
                && !watched.sessions.contains_key(sid)
                && let Some(s) = fetch_session(ctx, sid).await
            {
                watched.sessions.insert(sid.to_string(), s);
            }
            Some((task.id.clone(), before))
        }
        Event::Session { session, .. } if sessions => {
            let tid = session.task_id.as_deref()?;
            if !watched.tasks.contains_key(tid) {
                return None;
            }
            let before = watched.state(tid);
            watched
                .sessions
                .insert(session.id.clone(), (**session).clone());
            Some((tid.to_string(), before))
        }
        _ => None,
    }
}

/// Reads each task (and, when a question is waited for, its session) as it is now.
async fn load(ctx: &Arc<Ctx>, ids: &[String], sessions: bool) -> Result<Watched, String> {
    let mut set = tokio::task::JoinSet::new();
    for id in ids {
        let (ctx, id) = (ctx.clone(), id.clone());
        set.spawn(async move {
            let task = ctx
                .remote
                .get::<TaskBody>(routes::at(routes::TASK, &[&id]), "a task")
                .await
                .map_err(|e| format!("task {id}: {}", refused(Tool::Wait, e)))?
                .task;
            let session = match task.metadata.session_id.as_deref() {
                Some(sid) if sessions => fetch_session(&ctx, sid).await,
                _ => None,
            };
            Ok::<_, String>((task, session))
        });
    }
    let mut watched = Watched::default();
    while let Some(done) = set.join_next().await {
        let (task, session) = done.map_err(|e| e.to_string())??;
        if let Some(s) = session {
            watched.sessions.insert(s.id.clone(), s);
        }
        watched.tasks.insert(task.id.clone(), task);
    }
    Ok(watched)
}

async fn fetch_session(ctx: &Ctx, sid: &str) -> Option<SessionInfo> {
    ctx.remote
        .get::<SessionBody>(routes::at(routes::SESSION, &[sid]), "a session")
        .await
        .ok()
        .map(|b| b.session)
}

fn secs(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
}

/// Progress notifications, when the client asked for them with a progress token.
struct Progress {
    to: Option<(ProgressToken, Peer<RoleServer>)>,
    count: u32,
}

impl Progress {
    fn of(rc: &RequestContext<RoleServer>) -> Progress {
        Progress {
            to: rc.meta.get_progress_token().map(|t| (t, rc.peer.clone())),
            count: 0,
        }
    }

    /// Tells the client the wait is under way, and where each task is.
    async fn waiting(&mut self, watched: &Watched, ids: &[String]) {
        let wheres: Vec<String> = ids
            .iter()
            .filter_map(|id| watched.tasks.get(id))
            .map(|t| format!("{} {}", t.id, t.metadata.status))
            .collect();
        self.send(format!("waiting: {}", wheres.join(", "))).await;
    }

    /// Tells the client where task `id` is now.
    async fn note(&mut self, watched: &Watched, id: &str) {
        let Some(task) = watched.tasks.get(id) else {
            return;
        };
        let mut message = format!(
            "{} ({}): {}, {}%",
            task.name,
            task.id,
            task.metadata.status,
            task.metadata.progress.value()
        );
        if let Some(p) = view::blocked_on(task, watched.session_of(task)) {
            message.push_str(&format!(", blocked: {}", p.text));
        }
        self.send(message).await;
    }

    async fn send(&mut self, message: String) {
        let Some((token, peer)) = &self.to else {
            return;
        };
        self.count += 1;
        let param = ProgressNotificationParam::new(token.clone(), f64::from(self.count))
            .with_message(message);
        if let Err(e) = peer.notify_progress(param).await {
            tracing::debug!(error = %e, "a progress notification did not go out");
        }
    }
}
