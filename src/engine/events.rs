//! Typed change events, published to any number of subscribers.

use super::RunState;
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
    /// Name or description edited (pending tasks only), or the task's worktree changed.
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

    pub const ALL: [TaskEventKind; 12] = [
        TaskEventKind::Created,
        TaskEventKind::Started,
        TaskEventKind::Progress,
        TaskEventKind::Output,
        TaskEventKind::Step,
        TaskEventKind::Paused,
        TaskEventKind::Resumed,
        TaskEventKind::Completed,
        TaskEventKind::Failed,
        TaskEventKind::Cancelled,
        TaskEventKind::Updated,
        TaskEventKind::Deleted,
    ];
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

    pub const ALL: [SessionEventKind; 5] = [
        SessionEventKind::Started,
        SessionEventKind::Status,
        SessionEventKind::Message,
        SessionEventKind::Exited,
        SessionEventKind::Removed,
    ];
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

    /// Reads back what [`Event::to_json`] wrote (a client of the event stream gets the same
    /// events as an in-process subscriber). `None` for JSON that is no known event.
    pub fn from_json(v: &Value) -> Option<Event> {
        let name = v.get("type")?.as_str()?;
        if let Some(kind) = TaskEventKind::ALL.into_iter().find(|k| k.name() == name) {
            let task: Task = serde_json::from_value(v.get("task")?.clone()).ok()?;
            let lines: Vec<String> = v
                .get("lines")
                .and_then(|l| serde_json::from_value(l.clone()).ok())
                .unwrap_or_default();
            return Some(Event::Task {
                kind,
                task: Arc::new(task),
                lines: Arc::new(lines),
            });
        }
        if let Some(kind) = SessionEventKind::ALL.into_iter().find(|k| k.name() == name) {
            let key = if kind == SessionEventKind::Message {
                "message"
            } else {
                "session"
            };
            return Some(Event::Session {
                kind,
                session_id: v.get("sessionId")?.as_str()?.to_string(),
                data: Arc::new(v.get(key)?.clone()),
            });
        }
        if name == "orchestrator:state" {
            let state = v.get("state")?.as_str()?;
            let state = [RunState::Paused, RunState::Running, RunState::Stopped]
                .into_iter()
                .map(RunState::as_str)
                .find(|s| *s == state)?;
            return Some(Event::Orchestrator { state });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::NewTask;

    fn roundtrip(ev: &Event) -> Event {
        let json = ev.to_json().expect("sent over SSE");
        Event::from_json(&json).expect("read back")
    }

    #[test]
    fn events_read_back_what_they_wrote() {
        let task = Task::new(
            "t1".into(),
            NewTask {
                name: "build".into(),
                description: "make it".into(),
                provider_id: "shell".into(),
                working_directory: "/tmp".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
            },
            5,
        );
        let ev = Event::Task {
            kind: TaskEventKind::Output,
            task: Arc::new(task.clone()),
            lines: Arc::new(vec!["a".into()]),
        };
        match roundtrip(&ev) {
            Event::Task {
                kind,
                task: t,
                lines,
            } => {
                assert_eq!(kind, TaskEventKind::Output);
                assert_eq!(*t, task);
                assert_eq!(*lines, vec!["a".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        for kind in SessionEventKind::ALL {
            let ev = Event::Session {
                kind,
                session_id: "s1".into(),
                data: Arc::new(json!({"id": "s1"})),
            };
            match roundtrip(&ev) {
                Event::Session {
                    kind: k,
                    session_id,
                    data,
                } => {
                    assert_eq!((k, session_id.as_str()), (kind, "s1"));
                    assert_eq!(*data, json!({"id": "s1"}));
                }
                other => panic!("{other:?}"),
            }
        }
        match roundtrip(&Event::Orchestrator { state: "running" }) {
            Event::Orchestrator { state } => assert_eq!(state, "running"),
            other => panic!("{other:?}"),
        }
        assert!(Event::from_json(&json!({"type": "lagged", "missed": 3})).is_none());
        assert!(Event::from_json(&json!({"type": "task:created"})).is_none());
    }
}
