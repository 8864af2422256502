//! The attention queue: agents that came to need the user — blocked on a question, limited
//! by their usage limit, or their task finished — found by comparing one snapshot with the next. Whoever is looked at is
//! left out (the app decides that); the rest queue, oldest first, and each raises a
//! notification (see `notify`).

use super::backend::Snapshot;
use super::state::{Selected, session_name};
use crate::wire::SessionStatus;

/// One agent that needs the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// What jumping to it selects.
    pub target: Selected,
    /// Its agent, when it has one.
    pub session_id: Option<String>,
    pub name: String,
    /// `blocked`, `limited`, or the finished task's status (`completed`, `failed`,
    /// `cancelled`).
    pub status: String,
    /// The question a blocked agent asks (empty when unknown or not blocked).
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

/// What needs the user in `new` that did not in `old`: agents newly blocked, tasks newly
/// finished.
pub fn arrivals(old: &Snapshot, new: &Snapshot) -> Vec<Waiting> {
    let mut out = Vec::new();
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
    out
}

/// Whether a queued agent still needs the user: one that was blocked or limited and no
/// longer is (answered elsewhere, continued, or ended) does not; a finished task does until
/// it is looked at.
pub fn still_needed(w: &Waiting, snap: &Snapshot) -> bool {
    !matches!(w.status.as_str(), "blocked" | "limited")
        || w.session_id
            .as_deref()
            .is_some_and(|sid| waiting_in(snap, sid))
}
