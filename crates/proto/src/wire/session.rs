//! Sessions: a live child in its own terminal, its status, approval preset, messages and
//! what its screen shows (`/api/coding-agents/sessions`).

use super::Prompt;
pub use crate::task::Approval;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    Starting,
    Ready,
    Busy,
    Blocked,
    Paused,
    /// The CLI said its usage limit is reached: it waits for the limit to reset (`resetsAt`
    /// when it named a time), whatever its screen does meanwhile.
    Limited,
    Exited,
}

impl SessionStatus {
    /// The lowercase name used in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Busy => "busy",
            Self::Blocked => "blocked",
            Self::Paused => "paused",
            Self::Limited => "limited",
            Self::Exited => "exited",
        }
    }
}

impl fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What decided a session's status: the agent itself through its hooks (authoritative once
/// it reported), or orchestra reading its screen (the fallback).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusSource {
    #[default]
    Screen,
    Hook,
}

impl StatusSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Screen => "screen",
            Self::Hook => "hook",
        }
    }
}

impl fmt::Display for StatusSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: String,
    pub provider_id: String,
    pub task: String,
    pub working_directory: String,
    pub pid: u32,
    pub status: SessionStatus,
    /// What decided `status`.
    #[serde(default)]
    pub status_source: StatusSource,
    pub ended: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub cols: u16,
    pub rows: u16,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub approval: Approval,
    /// What it asks while `blocked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Prompt>,
    /// When a `limited` session's usage limit resets (ms since the epoch), when the CLI
    /// named a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
    /// The raw transcript file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Agent,
}

/// What was sent to a session, or the agent's reply that followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub text: String,
    pub at: i64,
    /// Named keys, for a send of `{keys: [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// Set on sends orchestra made by itself (an automatic answer), saying what it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<String>,
}

/// A cursor position, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
}

/// `GET …/sessions/:id/peek`: what the terminal shows now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Peek {
    /// The visible screen: `rows` lines joined by `\n`, each right-trimmed.
    pub screen: String,
    /// The screen with its colours and attributes (`?ansi=1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_ansi: Option<String>,
    pub cursor: Cursor,
    pub cols: u16,
    pub rows: u16,
    /// Whether the program is on the alternate screen; absent for a session restored from a
    /// previous run (its terminal is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternate_screen: Option<bool>,
    /// The last lines that scrolled off the top, oldest first (`?lines=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrollback: Option<Vec<String>>,
    pub status: SessionStatus,
}

/// `{session}`: the answer of most session routes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionBody {
    pub session: SessionInfo,
}

/// `POST /sessions`: `{session, sessionId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCreated {
    pub session: SessionInfo,
    pub session_id: String,
}

/// `GET /sessions`: `{sessions}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
}

/// `POST …/messages`: `{message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageBody {
    pub message: Message,
}

/// `GET …/messages`: `{messages}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageList {
    pub messages: Vec<Message>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use crate::wire::{PromptKind, PromptOption};
    use serde_json::json;

    pub fn session(prompt: Option<Prompt>) -> SessionInfo {
        SessionInfo {
            id: "s1".into(),
            provider_id: "claude".into(),
            task: "fix it".into(),
            working_directory: "/w".into(),
            pid: 42,
            status: if prompt.is_some() {
                SessionStatus::Blocked
            } else {
                SessionStatus::Ready
            },
            status_source: StatusSource::Screen,
            ended: false,
            exit_code: None,
            signal: None,
            cols: 120,
            rows: 40,
            created_at: 7,
            ended_at: None,
            task_id: Some("t1".into()),
            approval: Approval::Safe,
            prompt,
            resets_at: None,
            transcript: None,
        }
    }

    #[test]
    fn a_session_without_a_prompt_encodes_as_documented() {
        round_trip(
            &SessionBody {
                session: session(None),
            },
            json!({"session": {"id": "s1", "providerId": "claude", "task": "fix it",
                "workingDirectory": "/w", "pid": 42, "status": "ready", "statusSource": "screen", "ended": false,
                "cols": 120, "rows": 40, "createdAt": 7, "taskId": "t1", "approval": "safe"}}),
        );
    }

    #[test]
    fn a_blocked_session_carries_its_prompt() {
        let prompt = Prompt {
            kind: PromptKind::Permission,
            text: "Do you want to proceed?".into(),
            options: vec![PromptOption {
                key: "1".into(),
                label: "Yes".into(),
                keys: Some(vec!["1".into()]),
            }],
        };
        let mut ended = session(Some(prompt));
        ended.exit_code = Some(0);
        ended.ended_at = Some(9);
        round_trip(
            &SessionList {
                sessions: vec![ended],
            },
            json!({"sessions": [{"id": "s1", "providerId": "claude", "task": "fix it",
                "workingDirectory": "/w", "pid": 42, "status": "blocked", "statusSource": "screen", "ended": false,
                "exitCode": 0, "cols": 120, "rows": 40, "createdAt": 7, "endedAt": 9,
                "taskId": "t1", "approval": "safe",
                "prompt": {"kind": "permission", "text": "Do you want to proceed?",
                    "options": [{"key": "1", "label": "Yes", "keys": ["1"]}]}}]}),
        );
    }

    #[test]
    fn created_sessions_and_messages_encode_as_documented() {
        round_trip(
            &SessionCreated {
                session: session(None),
                session_id: "s1".into(),
            },
            json!({"session": serde_json::to_value(session(None)).unwrap(), "sessionId": "s1"}),
        );
        let m = Message {
            id: "m1".into(),
            role: Role::User,
            text: "[enter]".into(),
            at: 3,
            keys: Some(vec!["enter".into()]),
            auto: None,
        };
        round_trip(
            &MessageBody { message: m.clone() },
            json!({"message": {"id": "m1", "role": "user", "text": "[enter]", "at": 3,
                "keys": ["enter"]}}),
        );
        round_trip(
            &MessageList {
                messages: vec![Message {
                    role: Role::Agent,
                    keys: None,
                    auto: Some("answered".into()),
                    ..m
                }],
            },
            json!({"messages": [{"id": "m1", "role": "agent", "text": "[enter]", "at": 3,
                "auto": "answered"}]}),
        );
    }

    #[test]
    fn peek_encodes_as_documented() {
        let live = Peek {
            screen: "$ ls\n$".into(),
            screen_ansi: None,
            cursor: Cursor { row: 1, col: 2 },
            cols: 80,
            rows: 2,
            alternate_screen: Some(false),
            scrollback: Some(vec!["old".into()]),
            status: SessionStatus::Busy,
        };
        round_trip(
            &live,
            json!({"screen": "$ ls\n$", "cursor": {"row": 1, "col": 2}, "cols": 80, "rows": 2,
                "alternateScreen": false, "scrollback": ["old"], "status": "busy"}),
        );
        let restored = Peek {
            screen: String::new(),
            screen_ansi: Some(String::new()),
            cursor: Cursor { row: 0, col: 0 },
            cols: 80,
            rows: 24,
            alternate_screen: None,
            scrollback: None,
            status: SessionStatus::Exited,
        };
        round_trip(
            &restored,
            json!({"screen": "", "screenAnsi": "", "cursor": {"row": 0, "col": 0}, "cols": 80,
                "rows": 24, "status": "exited"}),
        );
    }

    #[test]
    fn approvals_parse_with_a_clear_error() {
        for a in Approval::ALL {
            assert_eq!(a.as_str().parse::<Approval>(), Ok(a));
            assert_eq!(serde_json::to_value(a).unwrap(), json!(a.as_str()));
        }
        assert_eq!(
            "yolo".parse::<Approval>(),
            Err("unknown approval \"yolo\": use manual, safe or auto".to_string())
        );
        assert_eq!(Approval::default(), Approval::Safe);
    }
}
