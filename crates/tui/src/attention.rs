//! The attention queue: agents that came to need the user — blocked on a question, limited
//! by their usage limit, their task finished, or (without a task) their session ended — and
//! tasks waiting on a question before their agent starts (trust in a repository's file) or
//! whose work came to conflict with another task's or their base's (the conflict radar) —
//! found by comparing one snapshot with the next. Whoever is looked at is
//! left out (the app decides that); the rest queue, oldest first, and each raises a
//! notification (see `notify`).

use super::app::{Selected, session_name};
use super::backend::Snapshot;
use orchestra_proto::wire::SessionStatus;

/// One agent that needs the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// What jumping to it selects.
    pub target: Selected,
    /// Its agent, when it has one.
    pub session_id: Option<String>,
    pub name: String,
    /// `blocked`, `limited`, the finished task's status (`completed`, `failed`,
    /// `cancelled`), `exited` for a session without a task that ended, or `conflicts`.
    pub status: String,
    /// The question a blocked agent asks (empty when unknown or not blocked); for
    /// `conflicts`, what the new conflicts are.
    pub prompt: String,
}

impl Waiting {
    pub fn blocked(&self) -> bool {
        self.status == "blocked"
    }
}

/// The statuses of a live agent that need the user.
fn waits(status: SessionStatus) -> bool {
    matches!(status, SessionStatus::Blocked | SessionStatus::Limited)
}

/// Whether session `sid` is blocked or limited in `snap`.
fn waiting_in(snap: &Snapshot, sid: &str) -> bool {
    snap.sessions
        .iter()
        .any(|s| s.id == sid && !s.ended && waits(s.status))
}

/// Whether task `id` waits on a question of its own in `snap`.
fn task_asks(snap: &Snapshot, id: &str) -> bool {
    snap.tasks
        .iter()
        .any(|t| t.id == id && t.metadata.prompt.is_some() && !t.status().is_final())
}

/// What needs the user in `new` that did not in `old`: agents newly blocked or limited,
/// tasks newly waiting on a question, tasks newly finished, sessions without a task newly
/// ended.
pub fn arrivals(old: &Snapshot, new: &Snapshot) -> Vec<Waiting> {
    let mut out = Vec::new();
    for t in new
        .tasks
        .iter()
        .filter(|t| task_asks(new, &t.id) && !task_asks(old, &t.id))
    {
        out.push(Waiting {
            target: Selected::Task(t.id.clone()),
            session_id: None,
            name: t.name.clone(),
            status: "blocked".into(),
            prompt: t
                .metadata
                .prompt
                .as_ref()
                .map(|p| p.text.lines().next().unwrap_or_default().trim().to_string())
                .unwrap_or_default(),
        });
    }
    for s in new
        .sessions
        .iter()
        .filter(|s| !s.ended && waits(s.status) && !waiting_in(old, &s.id))
    {
        let task = s
            .task_id
            .as_deref()
            .and_then(|id| new.tasks.iter().find(|t| t.id == id));
        out.push(Waiting {
            target: match task {
                Some(t) => Selected::Task(t.id.clone()),
                None => Selected::Session(s.id.clone()),
            },
            session_id: Some(s.id.clone()),
            name: task.map_or_else(|| session_name(s), |t| t.name.clone()),
            status: s.status.as_str().into(),
            prompt: s
                .prompt
                .as_ref()
                .map(|p| p.text.trim().to_string())
                .unwrap_or_default(),
        });
    }
    // A session without a task that ended: its agent finished, and no task says so.
    for s in new
        .sessions
        .iter()
        .filter(|s| s.task_id.is_none() && s.ended)
    {
        let was_live = old.sessions.iter().any(|o| o.id == s.id && !o.ended);
        if was_live {
            out.push(Waiting {
                target: Selected::Session(s.id.clone()),
                session_id: Some(s.id.clone()),
                name: session_name(s),
                status: "exited".into(),
                prompt: String::new(),
            });
        }
    }
    for t in new.tasks.iter().filter(|t| t.status().is_final()) {
        let was_live = old
            .tasks
            .iter()
            .any(|o| o.id == t.id && !o.status().is_final());
        if was_live {
            out.push(Waiting {
                target: Selected::Task(t.id.clone()),
                session_id: t.metadata.session_id.clone(),
                name: t.name.clone(),
                status: t.status().as_str().into(),
                prompt: String::new(),
            });
        }
    }
    out.extend(new_conflicts(old, new));
    out
}

/// Tasks that came to conflict with a task or their base they did not conflict with in
/// `old`, each with what is new.
fn new_conflicts(old: &Snapshot, new: &Snapshot) -> Vec<Waiting> {
    let mut out = Vec::new();
    for t in &new.tasks {
        let Some(now) = new.conflicts_of(&t.id) else {
            continue;
        };
        let before = old.conflicts_of(&t.id);
        let mut what = Vec::new();
        if let Some(b) = &now.with_base
            && before.is_none_or(|r| r.with_base.is_none())
        {
            what.push(format!("{} in {}", b.base_branch, b.files.join(", ")));
        }
        for rival in &now.with_tasks {
            let known =
                before.is_some_and(|r| r.with_tasks.iter().any(|o| o.task_id == rival.task_id));
            if !known {
                what.push(format!("{} in {}", rival.name, rival.files.join(", ")));
            }
        }
        if !what.is_empty() {
            out.push(Waiting {
                target: Selected::Task(t.id.clone()),
                session_id: None,
                name: t.name.clone(),
                status: "conflicts".into(),
                prompt: format!("conflicts with {}", what.join("; ")),
            });
        }
    }
    out
}

/// Whether a queued agent still needs the user: one that was blocked or limited and no
/// longer is (answered elsewhere, continued, or ended) does not; a finished task does until
/// it is looked at.
pub fn still_needed(w: &Waiting, snap: &Snapshot) -> bool {
    if w.status == "conflicts" {
        return matches!(&w.target, Selected::Task(id) if snap.conflicts_of(id).is_some());
    }
    if !matches!(w.status.as_str(), "blocked" | "limited") {
        return true;
    }
    match (&w.session_id, &w.target) {
        (Some(sid), _) => waiting_in(snap, sid),
        (None, Selected::Task(id)) => task_asks(snap, id),
        (None, Selected::Session(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestra_proto::wire::SessionInfo;

    /// A live session of `task_id` (none: a session without a task).
    fn session(task_id: Option<&str>) -> SessionInfo {
        let mut v = serde_json::json!({"id": "s1", "providerId": "shell", "task": "watch the logs",
            "workingDirectory": "/w", "pid": 42, "status": "ready", "statusSource": "screen",
            "ended": false, "cols": 80, "rows": 24, "createdAt": 7, "approval": "manual"});
        if let Some(t) = task_id {
            v["taskId"] = t.into();
        }
        serde_json::from_value(v).expect("a session as the API gives it")
    }

    fn snap(sessions: Vec<SessionInfo>) -> Snapshot {
        Snapshot {
            sessions,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_session_without_a_task_that_ends_needs_the_user_once() {
        let live = session(None);
        let ended = SessionInfo {
            ended: true,
            status: SessionStatus::Exited,
            ..live.clone()
        };
        let came = arrivals(&snap(vec![live.clone()]), &snap(vec![ended.clone()]));
        assert_eq!(came.len(), 1, "{came:?}");
        assert_eq!(came[0].target, Selected::Session("s1".into()));
        assert_eq!(came[0].status, "exited");
        assert_eq!(came[0].name, "watch the logs");
        assert!(still_needed(&came[0], &snap(vec![ended.clone()])));
        // Ended before (restored from an earlier run): nothing new.
        assert!(arrivals(&snap(vec![ended.clone()]), &snap(vec![ended])).is_empty());
        // A task's session: its task's end says it (once).
        let task_session = SessionInfo {
            ended: true,
            ..session(Some("t1"))
        };
        assert!(arrivals(&snap(vec![session(Some("t1"))]), &snap(vec![task_session])).is_empty());
    }
}
