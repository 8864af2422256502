//! Change events: what the engine publishes after every change, and what
//! `GET /api/coding-agents/events` sends (one Server-Sent Event each, its JSON in `data`).
//! Each carries the whole new state, so a subscriber never has to ask again; a subscriber
//! that keeps its own copy of each task's output may ask for `task:output` events with only
//! the new lines ([`OutputForm::Lines`]).

use super::{ConflictReport, Message, RunState, SessionInfo};
use crate::task::Task;
use crate::task::encoded::Encoded;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashSet;
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
    /// The question the task waits on (`metadata.prompt`) appeared or went (answered, or
    /// moot).
    Prompt,
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
            TaskEventKind::Prompt => "task:prompt",
        }
    }

    pub const ALL: [TaskEventKind; 13] = [
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
        TaskEventKind::Prompt,
    ];
}

/// A change to a session record (its messages are [`Event::Message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEventKind {
    Started,
    /// Its status changed (`status`, `statusSource`, `resetsAt`).
    Status,
    /// The prompt it waits on changed: it became blocked (what its hook said it asks, until
    /// the dialog is read from the screen), the dialog's options were read, or it stopped
    /// being blocked (`prompt` gone).
    Prompt,
    Exited,
    /// An ended session's record was removed; the event carries it as it was.
    Removed,
}

impl SessionEventKind {
    pub fn name(self) -> &'static str {
        match self {
            SessionEventKind::Started => "session:started",
            SessionEventKind::Status => "session:status",
            SessionEventKind::Prompt => "session:prompt",
            SessionEventKind::Exited => "session:exited",
            SessionEventKind::Removed => "session:removed",
        }
    }

    pub const ALL: [SessionEventKind; 5] = [
        SessionEventKind::Started,
        SessionEventKind::Status,
        SessionEventKind::Prompt,
        SessionEventKind::Exited,
        SessionEventKind::Removed,
    ];
}

const MESSAGE: &str = "session:message";
const SCREEN: &str = "session:screen";
const ORCHESTRATOR: &str = "orchestrator:state";
const CONFLICTS: &str = "task:conflicts";
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
    /// `{type: "task:conflicts", taskId, conflicts}`: the conflict radar's report of a task
    /// changed (a new conflict, one gone, a new merge order).
    Conflicts { report: Arc<ConflictReport> },
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Task { kind, .. } => kind.name(),
            Event::Session { kind, .. } => kind.name(),
            Event::Message { .. } => MESSAGE,
            Event::Screen { .. } => SCREEN,
            Event::Orchestrator { .. } => ORCHESTRATOR,
            Event::Conflicts { .. } => CONFLICTS,
        }
    }

    /// Whether it is a `task:output`: new output lines, the kind a busy agent sends many of.
    pub fn is_output(&self) -> bool {
        matches!(
            self,
            Event::Task {
                kind: TaskEventKind::Output,
                ..
            }
        )
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
    /// `{type: "task:output", taskId, lines}`: a `task:output` change in its light form,
    /// for a subscriber that asked for it ([`OutputForm::Lines`]).
    OutputLines(OutputLines),
    /// `{type: "lagged", missed}`.
    Lagged(Lagged),
}

/// New output lines of a task, without the task: appended to the task's
/// `metadata.output`, keeping the newest [`crate::task::OUTPUT_LINES_KEPT`], they make the
/// reader's copy what the daemon's is (a `task:output` change touches nothing else).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputLines {
    pub task_id: String,
    pub lines: Arc<Vec<String>>,
}

/// How `task:output` events reach a subscriber: `?output=` on the event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputForm {
    /// `output=task` (the default): the whole task, with all its output lines, and the new
    /// lines.
    #[default]
    Task,
    /// `output=lines`: the task's id and the new lines only, once the subscriber has been
    /// sent the task whole (see [`Framer`]).
    Lines,
    /// `output=last`: as `lines`, with only the newest of the new lines, for a reader that
    /// shows each task's last line and not its output (the TUI): sixteen flooding agents
    /// sent it hundreds of lines a second per agent it only parsed to throw away.
    Last,
}

impl std::str::FromStr for OutputForm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "task" => Ok(OutputForm::Task),
            "lines" => Ok(OutputForm::Lines),
            "last" => Ok(OutputForm::Last),
            other => Err(format!("output must be task, lines or last, not {other:?}")),
        }
    }
}

/// Makes one subscriber's frames in the form it asked for. A light `task:output` frame is
/// only a delta, so it is sent only for a task this subscriber has been sent whole since it
/// subscribed (or since it missed events): a reader subscribes, then reads the state, and a
/// change made between the two is both in what it read and in the stream. Replaying a whole
/// task there is harmless (the reader's copy goes back to that version, and the deltas that
/// follow bring it forward again); appending lines it already has would repeat them.
#[derive(Debug, Default)]
pub struct Framer {
    form: OutputForm,
    sent_whole: HashSet<String>,
}

impl Framer {
    pub fn new(form: OutputForm) -> Framer {
        Framer {
            form,
            sent_whole: HashSet::new(),
        }
    }

    /// The frame for `ev`.
    pub fn frame(&mut self, ev: Event) -> EventFrame {
        match ev {
            Event::Task {
                kind: TaskEventKind::Output,
                task,
                lines,
            } if self.form != OutputForm::Task && self.sent_whole.contains(&task.id) => {
                let lines = match self.form {
                    OutputForm::Last => Arc::new(lines.last().cloned().into_iter().collect()),
                    _ => lines,
                };
                EventFrame::OutputLines(OutputLines {
                    task_id: task.id.clone(),
                    lines,
                })
            }
            Event::Task { kind, task, lines } => {
                if kind == TaskEventKind::Deleted {
                    self.sent_whole.remove(&task.id);
                } else if self.form != OutputForm::Task {
                    self.sent_whole.insert(task.id.clone());
                }
                EventFrame::Change(Event::Task { kind, task, lines })
            }
            ev => EventFrame::Change(ev),
        }
    }

    /// The notice that this subscriber missed `missed` events: it reads the state again, so
    /// every task's next output goes whole again.
    pub fn lagged(&mut self, missed: u64) -> EventFrame {
        self.sent_whole.clear();
        EventFrame::Lagged(Lagged { missed })
    }
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
    /// Spliced in from the version's one encoding.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<Encoded<'a>>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    conflicts: Option<&'a ConflictReport>,
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
            conflicts: None,
        }
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut f = FrameOut::of(self.name());
        match self {
            Event::Task { kind, task, lines } => {
                f.task_id = Some(&task.id);
                f.task = Some(Encoded(task));
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
            Event::Conflicts { report } => {
                f.task_id = Some(&report.task_id);
                f.conflicts = Some(report);
            }
        }
        f.serialize(s)
    }
}

impl Serialize for EventFrame {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EventFrame::Change(ev) => ev.serialize(s),
            EventFrame::OutputLines(out) => FrameOut {
                task_id: Some(&out.task_id),
                lines: Some(&out.lines),
                ..FrameOut::of(TaskEventKind::Output.name())
            }
            .serialize(s),
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
    task_id: Option<String>,
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
    #[serde(default)]
    conflicts: Option<Arc<ConflictReport>>,
}

impl FrameIn {
    fn into_frame<E: serde::de::Error>(self) -> Result<EventFrame, E> {
        let need =
            |field: &'static str| E::custom(format!("a {} event has no `{field}`", self.kind));
        let name = self.kind.as_str();
        if let Some(kind) = TaskEventKind::ALL.into_iter().find(|k| k.name() == name) {
            if kind == TaskEventKind::Output && self.task.is_none() {
                return Ok(EventFrame::OutputLines(OutputLines {
                    task_id: self.task_id.clone().ok_or_else(|| need("taskId"))?,
                    lines: Arc::new(self.lines.ok_or_else(|| need("lines"))?),
                }));
            }
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
            CONFLICTS => EventFrame::Change(Event::Conflicts {
                report: self.conflicts.clone().ok_or_else(|| need("conflicts"))?,
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
            EventFrame::OutputLines(_) => Err(D::Error::custom(
                "a task:output event without its task is not a whole change",
            )),
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
                if kind != TaskEventKind::Output {
                    return branch(kind.name(), &fields);
                }
                fields.push(("lines", &lines));
                let mut output = branch(kind.name(), &fields);
                // Left out for a subscriber that asked for `?output=lines`.
                output["required"] = json!(["type", "taskId", "lines"]);
                output["description"] = json!(format!("New output lines. `task` is the whole task with all its output lines; it is left out when the stream was opened with `?output=lines` or `?output=last` (except in the first event of each task after subscribing or after a `lagged` notice), for a reader that appends `lines` to its own copy of the task's `metadata.output`, keeping the newest {} (nothing else of the task changes in a `task:output` event); with `last`, `lines` holds only the newest of the new lines.", crate::task::OUTPUT_LINES_KEPT));
                output
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
        let conflicts = generator.subschema_for::<ConflictReport>().to_value();
        branches.push(branch(
            CONFLICTS,
            &[("taskId", &string), ("conflicts", &conflicts)],
        ));
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
            &Event::Conflicts {
                report: Arc::new(ConflictReport {
                    task_id: "t1".into(),
                    checked_at: Some(5),
                    merge_order: vec!["t1".into()],
                    ..Default::default()
                }),
            },
            json!({"type": "task:conflicts", "taskId": "t1", "conflicts": {"taskId": "t1",
                "withBase": null, "withTasks": [], "checkedAt": 5, "mergeOrder": ["t1"]}}),
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

    #[test]
    fn a_light_output_frame_carries_the_id_and_lines_only() {
        let ev = || Event::Task {
            kind: TaskEventKind::Output,
            task: Arc::new(task()),
            lines: Arc::new(vec!["a".into(), "b".into()]),
        };
        // The first frame of a task a subscriber gets is whole, whatever its kind; the
        // output that follows is light.
        let mut light = Framer::new(OutputForm::Lines);
        assert_eq!(light.frame(ev()), EventFrame::Change(ev()));
        round_trip(
            &light.frame(ev()),
            json!({"type": "task:output", "taskId": "t1", "lines": ["a", "b"]}),
        );
        // After missed events, whole again, then light.
        assert_eq!(light.lagged(3), EventFrame::Lagged(Lagged { missed: 3 }));
        assert_eq!(light.frame(ev()), EventFrame::Change(ev()));
        assert!(matches!(light.frame(ev()), EventFrame::OutputLines(_)));
        // A deleted task is forgotten: an id used again starts whole.
        let deleted = Event::Task {
            kind: TaskEventKind::Deleted,
            task: Arc::new(task()),
            lines: Arc::new(vec![]),
        };
        assert_eq!(light.frame(deleted.clone()), EventFrame::Change(deleted));
        assert_eq!(light.frame(ev()), EventFrame::Change(ev()));
        // `last`: the newest of the new lines only.
        let mut last = Framer::new(OutputForm::Last);
        assert_eq!(last.frame(ev()), EventFrame::Change(ev()));
        round_trip(
            &last.frame(ev()),
            json!({"type": "task:output", "taskId": "t1", "lines": ["b"]}),
        );
        // The default form is the event as it always was; other kinds never get lighter.
        let mut whole = Framer::new(OutputForm::Task);
        assert_eq!(whole.frame(ev()), EventFrame::Change(ev()));
        assert_eq!(whole.frame(ev()), EventFrame::Change(ev()));
        let started = Event::Task {
            kind: TaskEventKind::Started,
            task: Arc::new(task()),
            lines: Arc::new(vec![]),
        };
        assert_eq!(light.frame(started.clone()), EventFrame::Change(started));
        // A light frame is not a whole change, and one without lines says so.
        let v = json!({"type": "task:output", "taskId": "t1", "lines": []});
        assert!(serde_json::from_value::<Event>(v).is_err());
        let e =
            serde_json::from_value::<EventFrame>(json!({"type": "task:output", "taskId": "t1"}))
                .unwrap_err()
                .to_string();
        assert!(e.contains("a task:output event has no `lines`"), "{e}");
        assert_eq!("lines".parse(), Ok(OutputForm::Lines));
        assert_eq!("task".parse(), Ok(OutputForm::Task));
        let e = "all".parse::<OutputForm>().unwrap_err();
        assert_eq!(e, "output must be task, lines or last, not \"all\"");
    }

    /// Every frame the encoder can make has the fields of its `type`'s branch in the schema
    /// (the OpenAPI document's `EventFrame`) and no others, the required ones all present;
    /// only a light `task:output` frame leaves one out (`task`, which is not required).
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
        frames.push(EventFrame::Change(Event::Conflicts {
            report: Arc::new(ConflictReport {
                task_id: "t1".into(),
                ..Default::default()
            }),
        }));
        frames.push(EventFrame::Lagged(Lagged { missed: 2 }));
        assert_eq!(frames.len(), branches.len(), "one branch per kind of frame");
        frames.push(EventFrame::OutputLines(OutputLines {
            task_id: "t1".into(),
            lines: Arc::new(vec!["a".into()]),
        }));
        for frame in frames {
            let json = serde_json::to_value(&frame).unwrap();
            let kind = json["type"].clone();
            let branch = branches
                .iter()
                .find(|b| b["properties"]["type"]["const"] == kind)
                .unwrap_or_else(|| panic!("no branch for {kind}"));
            let mut given: Vec<&String> = json.as_object().unwrap().keys().collect();
            let mut documented: Vec<&String> =
                branch["properties"].as_object().unwrap().keys().collect();
            given.sort();
            documented.sort();
            if matches!(frame, EventFrame::OutputLines(_)) {
                documented.retain(|f| *f != "task");
            }
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
