//! Request bodies, as clients build them. The API reads bodies field by field (so that a
//! wrong field gets a sentence naming it, API.md's 400s); these types are what the CLI and
//! the TUI send, and their JSON is what the API reads.

use crate::task::{Answers, Approval, Isolation, StepStatus, TaskStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /tasks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewTask {
    /// What the task is called (not blank).
    #[schemars(length(min = 1), pattern(r"\S"))]
    pub name: String,
    /// The first instruction: needed (not blank) when its provider runs it
    /// (`needsDescription` in `GET /providers`).
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// What the provider must be able to do (recorded on the task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_capabilities: Vec<String>,
    /// The task this one is a child of. An agent's own credential makes children of its
    /// task (or of its task's descendants) only, and this is where they go when it is left
    /// out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// Who answers the task's questions besides the human (default `human`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Answers>,
    /// Give the task's agent orchestra's MCP server, so it can hand work to other agents
    /// (default: the provider's `delegate` setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegate: Option<bool>,
    /// Commands (`sh -c`, in the task's worktree or directory) that must all pass before the
    /// task is `completed`; none: the agent's word decides, as before. The repository's
    /// `.orchestra.toml` `[checks]` adds its own once trusted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// How many times the checks may fail and go back to the agent before the task fails
    /// (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 20))]
    pub max_attempts: Option<u32>,
    /// How long one check may run before it fails for taking too long (default 1800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 86400))]
    pub check_timeout_seconds: Option<u64>,
    /// Best of N: the same request raced on several agents. Given, the task is a parent
    /// with one child per variant, each in its own worktree from the same base.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<crate::task::VariantSpec>,
}

/// `PATCH /tasks/:id`: only the fields given change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    /// 0–100; the server refuses any other number (400), so a client passes what it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub progress: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A new name (not blank), while the task is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1), pattern(r"\S"))]
    pub name: Option<String>,
    /// A new description, while the task is pending (not blank if its provider runs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Another provider, while the task is pending (not for a best-of-N variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// Another approval preset, while the task is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Another isolation, while the task is pending and has no worktree yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// Another base branch, while the task is pending and has no worktree yet; `""`: the
    /// checked-out branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    /// New checks (replacing the old ones; `[]`: none), while the task is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    /// Another bound on the checks' attempts, while the task is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 20))]
    pub max_attempts: Option<u32>,
}

impl TaskChange {
    /// Whether it changes a pending task's settings (beyond its name and description).
    pub fn edits_settings(&self) -> bool {
        self.provider_id.is_some()
            || self.approval.is_some()
            || self.isolation.is_some()
            || self.base_ref.is_some()
            || self.checks.is_some()
            || self.max_attempts.is_some()
    }
}

/// `POST /tasks/:id/pick`: the variant to keep, by its label (`codex`, `codex-2`) or its
/// task id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PickVariant {
    #[schemars(length(min = 1))]
    pub variant: String,
}

/// `POST /tasks/:id/result`: how the task ended, as its agent (or a script) says. The
/// children's outcomes are orchestra's to add.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultReport {
    /// `true` completes the task (progress 100), `false` fails it.
    pub success: bool,
    pub summary: String,
    #[serde(default)]
    pub files_modified: Vec<String>,
    #[serde(default)]
    pub files_created: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl From<ResultReport> for crate::task::TaskResult {
    fn from(r: ResultReport) -> Self {
        crate::task::TaskResult {
            success: r.success,
            summary: r.summary,
            files_modified: r.files_modified,
            files_created: r.files_created,
            error: r.error,
            children: Vec::new(),
            checks: Vec::new(),
        }
    }
}

/// `POST /tasks/:id/output`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutputLines {
    pub output: String,
}

/// `POST /tasks/:id/steps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewStep {
    /// What the step does (not blank).
    #[schemars(length(min = 1), pattern(r"\S"))]
    pub description: String,
}

/// `PATCH /tasks/:id/steps/:stepId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepChange {
    pub status: StepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// `POST /tasks/:id/continue`: the agent's next request on the task's conversation
/// (without one, the engine's default, "Continue where you left off.").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContinueTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `POST /sessions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 1000))]
    pub cols: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 500))]
    pub rows: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// `POST /sessions/:id/messages`: text typed and submitted, or named keys pressed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendMessage {
    Text(String),
    Keys(Vec<String>),
}

/// `POST /sessions/:id/answer` and `POST /tasks/:id/answer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// The key of one of the prompt's options (a number is taken as its digits).
    #[schemars(with = "OptionKey")]
    pub option: String,
}

/// `POST /trust` and `POST /trust/revoke`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TrustPath {
    /// An absolute path: a repository's `.orchestra.toml`, or the directory holding it.
    #[schemars(length(min = 1), pattern(r"^/"))]
    pub path: String,
}

/// `POST /sessions/:id/resize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resize {
    #[schemars(range(min = 2, max = 1000))]
    pub cols: u16,
    #[schemars(range(min = 2, max = 500))]
    pub rows: u16,
}

/// `POST /sessions/:id/hook`: an agent's own report of what it does, sent by `orchestra hook
/// EVENT` from the agent's hooks with the session's hook token (`X-Orchestra-Hook-Token`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookReport {
    /// The event as the CLI names it: Claude Code's `UserPromptSubmit`, `PermissionRequest`,
    /// `PostToolUse`, `Notification`, `Stop`; Gemini CLI's `BeforeAgent`, `AfterTool`,
    /// `Notification`, `AfterAgent`; Codex's `agent-turn-complete`.
    pub event: String,
    /// The agent's last reply, when the event carries it (Claude's `last_assistant_message`,
    /// Codex's `last-assistant-message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What a `Notification` is about (Claude's `notification_type`, e.g. `permission_prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    /// What the agent asks, in its own words, when the event says it asks permission (a
    /// `Notification`'s `message`; the tool a `PermissionRequest` names): the session's
    /// prompt until its dialog is read from the screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// The requests the finished turn worked on, when the event says (Codex's
    /// `input-messages`): Codex notifies side turns too (its title generation), which are
    /// not the agent's turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_messages: Option<Vec<String>>,
}

/// The header that carries a session's hook token.
pub const HOOK_TOKEN_HEADER: &str = "x-orchestra-hook-token";

/// `POST /worktrees/gc`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Gc {
    /// Worktrees of tasks finished longer ago than this go (default: 7 days).
    #[serde(default = "Gc::default_older_than")]
    #[schemars(range(min = 0))]
    pub older_than_seconds: f64,
}

impl Gc {
    /// `orchestra gc`'s default: worktrees of tasks finished over a week ago.
    pub const DEFAULT_OLDER_THAN_SECS: f64 = 7.0 * 24.0 * 3600.0;

    fn default_older_than() -> f64 {
        Gc::DEFAULT_OLDER_THAN_SECS
    }
}

/// An option's key as `POST …/answer` takes it: a string, or a number for its digits.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum OptionKey {
    Key(String),
    Number(f64),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn task_requests_encode_as_the_api_reads_them() {
        round_trip(
            &NewTask {
                name: "n".into(),
                description: "d".into(),
                ..Default::default()
            },
            json!({"name": "n", "description": "d"}),
        );
        round_trip(
            &NewTask {
                name: "n".into(),
                description: "d".into(),
                provider_id: Some("shell".into()),
                working_directory: Some("/w".into()),
                isolation: Some(Isolation::Worktree),
                base_ref: Some("main".into()),
                approval: Some(Approval::Manual),
                required_capabilities: vec!["git".into()],
                ..Default::default()
            },
            json!({"name": "n", "description": "d", "providerId": "shell",
                "workingDirectory": "/w", "isolation": "worktree", "baseRef": "main",
                "approval": "manual", "requiredCapabilities": ["git"]}),
        );
        round_trip(
            &TaskChange {
                progress: Some(42.5),
                name: Some("m".into()),
                ..Default::default()
            },
            json!({"progress": 42.5, "name": "m"}),
        );
        round_trip(
            &StepChange {
                status: StepStatus::Completed,
                output: Some("ok".into()),
            },
            json!({"status": "completed", "output": "ok"}),
        );
        round_trip(
            &OutputLines {
                output: "a\nb".into(),
            },
            json!({"output": "a\nb"}),
        );
        round_trip(
            &NewStep {
                description: "s".into(),
            },
            json!({"description": "s"}),
        );
        round_trip(&ContinueTask::default(), json!({}));
        round_trip(
            &ContinueTask {
                message: Some("and now tests".into()),
            },
            json!({"message": "and now tests"}),
        );
    }

    #[test]
    fn session_requests_encode_as_the_api_reads_them() {
        round_trip(&NewSession::default(), json!({}));
        round_trip(
            &NewSession {
                task: Some("ls".into()),
                provider_id: Some("shell".into()),
                cols: Some(80),
                rows: Some(24),
                ..Default::default()
            },
            json!({"task": "ls", "providerId": "shell", "cols": 80, "rows": 24}),
        );
        round_trip(&SendMessage::Text("hi".into()), json!({"text": "hi"}));
        round_trip(
            &SendMessage::Keys(vec!["ctrl-c".into()]),
            json!({"keys": ["ctrl-c"]}),
        );
        round_trip(&Answer { option: "1".into() }, json!({"option": "1"}));
        round_trip(
            &Resize {
                cols: 100,
                rows: 30,
            },
            json!({"cols": 100, "rows": 30}),
        );
        round_trip(
            &Gc {
                older_than_seconds: 60.0,
            },
            json!({"olderThanSeconds": 60.0}),
        );
        round_trip(
            &HookReport {
                event: "Stop".into(),
                message: Some("Done.".into()),
                notification_type: None,
                asks: None,
                input_messages: Some(vec!["hi".into()]),
            },
            json!({"event": "Stop", "message": "Done.", "inputMessages": ["hi"]}),
        );
    }
}
