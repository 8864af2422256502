//! Change events: what the engine publishes after every change, and what
//! `GET /api/coding-agents/events` sends (one Server-Sent Event each, its JSON in `data`).
//! Each carries the whole new state, so a subscriber never has to ask again.

use super::{Message, RunState, SessionInfo};
use crate::task::Task;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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

/// A change to a session record (its messages are [`Event::Message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEventKind {
    Started,
    Status,
    Exited,
    /// An ended session's record was removed; the event carries it as it was.
    Removed,
}

impl SessionEventKind {
    pub fn name(self) -> &'static str {
        match self {
            SessionEventKind::Started => "session:started",
            SessionEventKind::Status => "session:status",
            SessionEventKind::Exited => "session:exited",
            SessionEventKind::Removed => "session:removed",
        }
    }

    pub const ALL: [SessionEventKind; 4] = [
        SessionEventKind::Started,
        SessionEventKind::Status,
        SessionEventKind::Exited,
        SessionEventKind::Removed,
    ];
}

const MESSAGE: &str = "session:message";
const SCREEN: &str = "session:screen";
const ORCHESTRATOR: &str = "orchestrator:state";
const LAGGED: &str = "lagged";

/// One change.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `{type: "task:…", taskId, task}`, and `lines` for `task:output`.
    Task {
        kind: TaskEventKind,
        task: Arc<Task>,
        /// For `task:output`: only the lines this change added.
        lines: Arc<Vec<String>>,
    },
    /// `{type: "session:…", sessionId, session}`.
    Session {
        kind: SessionEventKind,
        session: Arc<SessionInfo>,
    },
    /// `{type: "session:message", sessionId, message}`.
    Message {
        session_id: String,
        message: Arc<Message>,
    },
    /// A session's screen changed: for redraws only, never sent over SSE.
    Screen { session_id: String },
    /// `{type: "orchestrator:state", state}`: autopilot or orchestrator state changed.
    Orchestrator { state: RunState },
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Task { kind, .. } => kind.name(),
            Event::Session { kind, .. } => kind.name(),
            Event::Message { .. } => MESSAGE,
            Event::Screen { .. } => SCREEN,
            Event::Orchestrator { .. } => ORCHESTRATOR,
        }
    }

    /// Whether it stays in the process (never sent to event-stream subscribers).
    pub fn is_local(&self) -> bool {
        matches!(self, Event::Screen { .. })
    }
}

/// What one event-stream message carries: a change, or the notice that the reader fell
/// behind and missed some (then it reads the state whole again).
#[derive(Debug, Clone, PartialEq)]
pub enum EventFrame {
    Change(Event),
    /// `{type: "lagged", missed}`.
    Lagged(Lagged),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged {
    pub missed: u64,
}

/// The JSON of every frame: `type` and the fields its kind has.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FrameOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a Task>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a SessionInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<RunState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    missed: Option<u64>,
}

impl<'a> FrameOut<'a> {
    fn of(kind: &'static str) -> FrameOut<'a> {
        FrameOut {
            kind,
            task_id: None,
            task: None,
            lines: None,
            session_id: None,
            session: None,
            message: None,
            state: None,
            missed: None,
        }
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut f = FrameOut::of(self.name());
        match self {
            Event::Task { kind, task, lines } => {
                f.task_id = Some(&task.id);
                f.task = Some(task);
                if *kind == TaskEventKind::Output {
                    f.lines = Some(lines);
                }
            }
            Event::Session { session, .. } => {
                f.session_id = Some(&session.id);
                f.session = Some(session);
            }
            Event::Message {
                session_id,
                message,
            } => {
                f.session_id = Some(session_id);
                f.message = Some(message);
            }
            Event::Screen { session_id } => f.session_id = Some(session_id),
            Event::Orchestrator { state } => f.state = Some(*state),
        }
        f.serialize(s)
    }
}

impl Serialize for EventFrame {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EventFrame::Change(ev) => ev.serialize(s),
            EventFrame::Lagged(l) => FrameOut {
                missed: Some(l.missed),
                ..FrameOut::of(LAGGED)
            }
            .serialize(s),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameIn {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    task: Option<Arc<Task>>,
    #[serde(default)]
    lines: Option<Vec<String>>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    session: Option<Arc<SessionInfo>>,
    #[serde(default)]
    message: Option<Arc<Message>>,
    #[serde(default)]
    state: Option<RunState>,
    #[serde(default)]
    missed: Option<u64>,
}

impl FrameIn {
    fn into_frame<E: serde::de::Error>(self) -> Result<EventFrame, E> {
        let need =
            |field: &'static str| E::custom(format!("a {} event has no `{field}`", self.kind));
        let name = self.kind.as_str();
        if let Some(kind) = TaskEventKind::ALL.into_iter().find(|k| k.name() == name) {
            return Ok(EventFrame::Change(Event::Task {
                kind,
                task: self.task.clone().ok_or_else(|| need("task"))?,
                lines: Arc::new(self.lines.unwrap_or_default()),
            }));
        }
        if let Some(kind) = SessionEventKind::ALL.into_iter().find(|k| k.name() == name) {
            return Ok(EventFrame::Change(Event::Session {
                kind,
                session: self.session.clone().ok_or_else(|| need("session"))?,
            }));
        }
        Ok(match name {
            MESSAGE => EventFrame::Change(Event::Message {
                session_id: self.session_id.clone().ok_or_else(|| need("sessionId"))?,
                message: self.message.clone().ok_or_else(|| need("message"))?,
            }),
            SCREEN => EventFrame::Change(Event::Screen {
                session_id: self.session_id.clone().ok_or_else(|| need("sessionId"))?,
            }),
            ORCHESTRATOR => EventFrame::Change(Event::Orchestrator {
                state: self.state.ok_or_else(|| need("state"))?,
            }),
            LAGGED => EventFrame::Lagged(Lagged {
                missed: self.missed.unwrap_or(0),
            }),
            other => return Err(E::custom(format!("unknown event type {other:?}"))),
        })
    }
}

impl<'de> Deserialize<'de> for EventFrame {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FrameIn::deserialize(d)?.into_frame()
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match EventFrame::deserialize(d)? {
            EventFrame::Change(ev) => Ok(ev),
            EventFrame::Lagged(_) => Err(D::Error::custom("a lagged notice is not a change")),
        }
    }
}

/// The schema of one event-stream message: a `oneOf` with one branch per `type`, built from
/// the same kind lists and field names the encoder uses.
impl schemars::JsonSchema for EventFrame {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EventFrame".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use serde_json::{Value, json};
        let string = json!({"type": "string"});
        let task = generator.subschema_for::<Task>().to_value();
        let session = generator.subschema_for::<SessionInfo>().to_value();
        let message = generator.subschema_for::<Message>().to_value();
        let state = generator.subschema_for::<RunState>().to_value();
        let branch = |name: &str, fields: &[(&str, &Value)]| {
            let mut properties = serde_json::Map::new();
            properties.insert("type".into(), json!({"const": name}));
            let mut required = vec![json!("type")];
            for (field, schema) in fields {
                properties.insert((*field).into(), (*schema).clone());
                required.push(json!(field));
            }
            json!({"type": "object", "properties": properties, "required": required})
        };
        let lines = json!({"type": "array", "items": {"type": "string"},
            "description": "The lines this change added."});
        let mut branches: Vec<Value> = TaskEventKind::ALL
            .into_iter()
            .map(|kind| {
                let mut fields = vec![("taskId", &string), ("task", &task)];
                if kind == TaskEventKind::Output {
                    fields.push(("lines", &lines));
                }
                branch(kind.name(), &fields)
            })
            .collect();
        branches.extend(SessionEventKind::ALL.into_iter().map(|kind| {
            branch(
                kind.name(),
                &[("sessionId", &string), ("session", &session)],
            )
        }));
        branches.push(branch(
            MESSAGE,
            &[("sessionId", &string), ("message", &message)],
        ));
        branches.push(branch(ORCHESTRATOR, &[("state", &state)]));
        let missed = json!({"type": "integer", "minimum": 0,
            "description": "How many events the reader missed: read the state again."});
        branches.push(branch(LAGGED, &[("missed", &missed)]));
        schemars::json_schema!({
            "description": "One Server-Sent Event of `GET /api/coding-agents/events`: a change, carrying the whole new state, or the notice that the reader fell behind.",
            "oneOf": branches,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Role;
    use crate::wire::session::tests::session;
    use crate::wire::task::tests::task;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    fn task_json() -> serde_json::Value {
        serde_json::to_value(task()).unwrap()
    }

    fn session_json() -> serde_json::Value {
        serde_json::to_value(session(None)).unwrap()
    }

    #[test]
    fn every_task_event_encodes_as_documented() {
        for kind in TaskEventKind::ALL {
            let ev = Event::Task {
                kind,
                task: Arc::new(task()),
                lines: Arc::new(vec!["a".into()]),
            };
            let mut expected = json!({"type": kind.name(), "taskId": "t1", "task": task_json()});
            if kind == TaskEventKind::Output {
                expected["lines"] = json!(["a"]);
                round_trip(&ev, expected);
            } else {
                // Only `task:output` carries lines: they do not come back.
                assert_eq!(serde_json::to_value(&ev).unwrap(), expected);
                let back: Event = serde_json::from_value(expected).unwrap();
                assert_eq!(
                    back,
                    Event::Task {
                        kind,
                        task: Arc::new(task()),
                        lines: Arc::new(vec![]),
                    }
                );
            }
        }
    }

    #[test]
    fn every_session_event_encodes_as_documented() {
        for kind in SessionEventKind::ALL {
            round_trip(
                &Event::Session {
                    kind,
                    session: Arc::new(session(None)),
                },
                json!({"type": kind.name(), "sessionId": "s1", "session": session_json()}),
            );
        }
        round_trip(
            &Event::Message {
                session_id: "s1".into(),
                message: Arc::new(Message {
                    id: "m1".into(),
                    role: Role::Agent,
                    text: "done".into(),
                    at: 4,
                    keys: None,
                    auto: None,
                }),
            },
            json!({"type": "session:message", "sessionId": "s1",
                "message": {"id": "m1", "role": "agent", "text": "done", "at": 4}}),
        );
    }

    #[test]
    fn orchestrator_and_lagged_frames_encode_as_documented() {
        round_trip(
            &Event::Orchestrator {
                state: RunState::Running,
            },
            json!({"type": "orchestrator:state", "state": "running"}),
        );
        round_trip(
            &EventFrame::Lagged(Lagged { missed: 3 }),
            json!({"type": "lagged", "missed": 3}),
        );
        assert!(
            Event::Screen {
                session_id: "s1".into()
            }
            .is_local()
        );
    }

    #[test]
    fn frames_that_are_no_event_say_why() {
        let e = serde_json::from_value::<EventFrame>(json!({"type": "task:created"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a task:created event has no `task`"), "{e}");
        let e = serde_json::from_value::<EventFrame>(json!({"type": "party"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown event type \"party\""), "{e}");
        assert!(serde_json::from_value::<Event>(json!({"type": "lagged", "missed": 1})).is_err());
        // A session event whose session does not read names the field.
        let e = serde_json::from_value::<EventFrame>(
            json!({"type": "session:status", "sessionId": "s", "session": {"id": "s"}}),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing field"), "{e}");
    }

    /// Every frame the encoder can make has exactly the fields of its `type`'s branch in the
    /// schema (the OpenAPI document's `EventFrame`), the required ones all present.
    #[test]
    fn the_schema_has_one_branch_per_frame_with_its_fields() {
        let mut generator = schemars::SchemaGenerator::default();
        let schema = <EventFrame as schemars::JsonSchema>::json_schema(&mut generator).to_value();
        let branches = schema["oneOf"].as_array().expect("oneOf").clone();
        let mut frames: Vec<EventFrame> = TaskEventKind::ALL
            .into_iter()
            .map(|kind| {
                EventFrame::Change(Event::Task {
                    kind,
                    task: Arc::new(task()),
                    lines: Arc::new(vec!["a".into()]),
                })
            })
            .collect();
        frames.extend(SessionEventKind::ALL.into_iter().map(|kind| {
            EventFrame::Change(Event::Session {
                kind,
                session: Arc::new(session(None)),
            })
        }));
        frames.push(EventFrame::Change(Event::Message {
            session_id: "s1".into(),
            message: Arc::new(Message {
                id: "m1".into(),
                role: Role::User,
                text: "hi".into(),
                at: 1,
                keys: None,
                auto: None,
            }),
        }));
        frames.push(EventFrame::Change(Event::Orchestrator {
            state: RunState::Running,
        }));
        frames.push(EventFrame::Lagged(Lagged { missed: 2 }));
        assert_eq!(frames.len(), branches.len(), "one branch per kind of frame");
        for frame in frames {
            let json = serde_json::to_value(&frame).unwrap();
            let kind = json["type"].clone();
            let branch = branches
                .iter()
                .find(|b| b["properties"]["type"]["const"] == kind)
                .unwrap_or_else(|| panic!("no branch for {kind}"));
            let fields: Vec<&String> = json.as_object().unwrap().keys().collect();
            let mut documented: Vec<&String> =
                branch["properties"].as_object().unwrap().keys().collect();
            let mut given = fields.clone();
            given.sort();
            documented.sort();
            assert_eq!(given, documented, "{kind}");
            for required in branch["required"].as_array().unwrap() {
                assert!(
                    json.get(required.as_str().unwrap()).is_some(),
                    "{kind}: {required}"
                );
            }
        }
    }
}
