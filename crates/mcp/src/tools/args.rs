//! Each tool's arguments: what the tool list's JSON schemas say (schemars, from these types
//! and their doc comments, which the model reads), and what a call is read into. Unknown
//! fields are refused, so a misspelt argument is an error the model can fix rather than one
//! silently ignored.

use orchestra_proto::task::{Answers, Approval, Isolation, TaskStatus, VariantSpec};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateTask {
    /// A short name for the task, shown in orchestra's task list.
    pub name: String,
    /// The agent's first instruction: what to do, written as you would ask a colleague.
    /// For the `exec` provider, the command line to run. Required by every provider but a
    /// plain `shell`.
    #[serde(default)]
    pub description: String,
    /// Which agent runs it: an `id` from list_providers (e.g. "claude", "codex", "exec").
    /// Default: the daemon's default provider.
    pub provider_id: Option<String>,
    /// The directory it works in; a relative path is taken from this MCP server's own
    /// directory. Default: this MCP server's directory.
    pub working_directory: Option<String>,
    /// "worktree": its own git worktree and branch (review with task_diff, then
    /// merge_task or discard_task); "none": the directory as it is. Default: worktree for
    /// coding agents in a git repository, else none.
    pub isolation: Option<Isolation>,
    /// The branch a worktree task starts from and merges into. Default: the checked-out one.
    pub base_ref: Option<String>,
    /// How much its agent may do without asking: "manual", "safe" or "auto". A child can
    /// never get more than its parent. Default: inside an orchestra session, your own task's
    /// preset (ask for less to keep a child on a shorter leash); otherwise "safe".
    pub approval: Option<Approval>,
    /// Who answers its questions besides the human: "human" (default) or "parent" (you:
    /// wait_for_task returns it blocked, with the question, and answer_prompt answers it).
    pub answers: Option<Answers>,
    /// Give its agent orchestra's MCP server too, so it can delegate in turn.
    pub delegate: Option<bool>,
    /// The task to make it a child of. Inside an orchestra session it defaults to your own
    /// task.
    pub parent_task_id: Option<String>,
    /// Start it at once (default false: it stays pending until start_task).
    pub start: Option<bool>,
    /// Commands (run with `sh -c` in its worktree) that must all pass before it is
    /// completed, e.g. ["cargo test -q"]. A failure goes back to its agent to fix, up to
    /// maxAttempts times; then it fails. Default: none (its agent's word decides), plus any
    /// its repository's .orchestra.toml sets.
    #[serde(default)]
    pub checks: Vec<String>,
    /// How many times its checks may fail and go back to its agent (1-20, default 3).
    pub max_attempts: Option<u32>,
    /// Best of N: race the same request on 2–8 agents, e.g. [{"providerId": "claude"},
    /// {"providerId": "codex", "approval": "auto"}]. The task is then a parent with one child
    /// per variant (each in its own worktree from one base commit); when they have finished,
    /// compare them with task_diff and keep one with pick_variant.
    #[serde(default)]
    pub variants: Vec<VariantSpec>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PickVariant {
    /// The best-of-N task's id (the parent create_task returned).
    pub id: String,
    /// The variant to keep: its label (the provider's id, "codex-2" for a repeated one) or
    /// its task id.
    pub variant: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskId {
    /// The task's id (as create_task or list_tasks gave it).
    pub id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// The task's id.
    pub id: String,
    /// Apply it to the task's children (and theirs) too. Default false.
    pub children: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Continue {
    /// The id of a finished task.
    pub id: String,
    /// The agent's next request on the same conversation. Default: "Continue where you left
    /// off."
    pub message: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasks {
    /// Only tasks with this status.
    pub status: Option<TaskStatus>,
    /// Only the children of this task.
    pub parent: Option<String>,
}

/// What wait_for_task waits for: a status, or `blocked` (waiting on a question).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Until {
    Pending,
    Running,
    Paused,
    Completed,
    Failed,
    Cancelled,
    Blocked,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Wait {
    /// One task's id (or give `ids`).
    pub id: Option<String>,
    /// Several tasks' ids: the first to get there is returned; call again for the others
    /// (each is returned once).
    pub ids: Option<Vec<String>>,
    /// What to wait for. Default: any final status (completed, failed, cancelled) or
    /// blocked.
    pub until: Option<Vec<Until>>,
    /// How long to wait, 0–600 s (default 30). On timeout the answer is not an error: it
    /// says where each task is, and you can call again.
    pub timeout_seconds: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOutput {
    /// The task's id.
    pub id: String,
    /// How many lines, 1–2000 (default 40).
    pub lines: Option<u32>,
    /// Only lines containing this text (searches the task's whole kept output).
    pub search: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    /// The task's id.
    pub id: String,
    /// What to type into its agent, submitted as the agent expects.
    pub text: String,
}

/// An option's key: a string, or a number for its digits.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OptionKey {
    Key(String),
    Number(u64),
}

impl OptionKey {
    pub fn text(&self) -> String {
        match self {
            OptionKey::Key(k) => k.clone(),
            OptionKey::Number(n) => n.to_string(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerPrompt {
    /// The id of the task that is blocked.
    pub id: String,
    /// The `key` of one of the prompt's `options` (as wait_for_task or get_task showed it).
    pub option: OptionKey,
}
