//! Typed change events, published to any number of subscribers.

use crate::task::Task;
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEventKind {
    Created,
    Started,
    Progress,
    Output,
    Step,
    Paused,
    Resumed,
    Completed,
    Failed,
    Cancelled,
    /// Name or description edited (pending tasks only).
    Updated,
    /// Removed from the store; the event carries the task as it was.
    Deleted,
}

impl TaskEventKind {
    pub fn name(self) -> &'static str {
        match self {
            TaskEventKind::Created => "task:created",
            TaskEventKind::Started => "task:started",
            TaskEventKind::Progress => "task:progress",
            TaskEventKind::Output => "task:output",
            TaskEventKind::Step => "task:step",
            TaskEventKind::Paused => "task:paused",
            TaskEventKind::Resumed => "task:resumed",
            TaskEventKind::Completed => "task:completed",
            TaskEventKind::Failed => "task:failed",
            TaskEventKind::Cancelled => "task:cancelled",
            TaskEventKind::Updated => "task:updated",
            TaskEventKind::Deleted => "task:deleted",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEventKind {
    Started,
    Status,
    Message,
    Exited,
    /// An ended session's record was removed; the event carries it as it was.
    Removed,
}

impl SessionEventKind {
    pub fn name(self) -> &'static str {
        match self {
            SessionEventKind::Started => "session:started",
            SessionEventKind::Status => "session:status",
            SessionEventKind::Message => "session:message",
            SessionEventKind::Exited => "session:exited",
            SessionEventKind::Removed => "session:removed",
        }
    }
}

/// One change. Carries the whole new state so a subscriber never has to ask again.
#[derive(Debug, Clone)]
pub enum Event {
    Task {
        kind: TaskEventKind,
        task: Arc<Task>,
        /// For `task:output`: only the lines this change added.
        lines: Arc<Vec<String>>,
    },
    Session {
        kind: SessionEventKind,
        session_id: String,
        /// The session JSON, or for `session:message` the message JSON.
        data: Arc<Value>,
    },
    /// A session's screen changed: for redraws only, never sent over SSE.
    Screen { session_id: String },
    /// Autopilot or orchestrator state changed.
    Orchestrator { state: &'static str },
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Task { kind, .. } => kind.name(),
            Event::Session { kind, .. } => kind.name(),
            Event::Screen { .. } => "session:screen",
            Event::Orchestrator { .. } => "orchestrator:state",
        }
    }

    /// The JSON sent to SSE subscribers; `None` for events that stay in-process.
    pub fn to_json(&self) -> Option<Value> {
        match self {
            Event::Task { kind, task, lines } => {
                let mut v = json!({"type": kind.name(), "taskId": task.id, "task": task.as_ref()});
                if *kind == TaskEventKind::Output {
                    v["lines"] = json!(lines.as_ref());
                }
                Some(v)
            }
            Event::Session {
                kind,
                session_id,
                data,
            } => {
                let key = if *kind == SessionEventKind::Message {
                    "message"
                } else {
                    "session"
                };
                Some(json!({"type": kind.name(), "sessionId": session_id, key: data.as_ref()}))
            }
            Event::Screen { .. } => None,
            Event::Orchestrator { state } => {
                Some(json!({"type": "orchestrator:state", "state": state}))
            }
        }
    }
}
