//! The task model and its state machine. Pure: no I/O, no clocks except the `now` passed in.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

pub mod encoded;
pub mod family;
pub mod output;
pub mod output_line;

pub use output::TaskOutput;
pub use output_line::OutputLine;

/// Where a task is in its life. `Completed`, `Failed` and `Cancelled` are final.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Pending,
    Running,
    Paused,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 6] = [
        TaskStatus::Pending,
        TaskStatus::Running,
        TaskStatus::Paused,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Running => "running",
            TaskStatus::Paused => "paused",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The one place that decides which moves are legal (API.md's state machine).
    pub fn can_move_to(self, to: TaskStatus) -> bool {
        use TaskStatus::*;
        match self {
            Pending => matches!(to, Running | Completed | Failed | Cancelled),
            Running => matches!(to, Paused | Completed | Failed | Cancelled),
            Paused => matches!(to, Running | Completed | Failed | Cancelled),
            Completed | Failed | Cancelled => false,
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown status {s:?}: use one of pending, running, paused, completed, failed, cancelled"
                )
            })
    }
}

/// A step's status. Steps are looser than tasks: any status may follow any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    Pending,
    Running,
    Paused,
    Completed,
    Failed,
    Cancelled,
    Skipped,
}

impl StepStatus {
    /// Not yet done: the step is still to run or running.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            StepStatus::Pending | StepStatus::Running | StepStatus::Paused
        )
    }

    /// What a step still open becomes when its task ends as `task`: the work it stood for
    /// was done if the task completed, and was not otherwise.
    pub fn closed_by(task: TaskStatus) -> StepStatus {
        if task == TaskStatus::Completed {
            StepStatus::Completed
        } else {
            StepStatus::Failed
        }
    }
}

impl FromStr for StepStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "pending" => StepStatus::Pending,
            "running" => StepStatus::Running,
            "paused" => StepStatus::Paused,
            "completed" => StepStatus::Completed,
            "failed" => StepStatus::Failed,
            "cancelled" => StepStatus::Cancelled,
            "skipped" => StepStatus::Skipped,
            _ => {
                return Err(format!(
                    "unknown step status {s:?}: use one of pending, running, paused, completed, failed, cancelled, skipped"
                ));
            }
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    pub id: String,
    pub description: String,
    pub status: StepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    pub success: bool,
    pub summary: String,
    #[serde(default)]
    pub files_modified: Vec<String>,
    #[serde(default)]
    pub files_created: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What became of the task's children (tasks its agent made), as they were when this
    /// result was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildOutcome>,
    /// The evidence of the task's checks, as they ran last: all passed for a completed task
    /// that has checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckRun>,
}

/// One check as it ran in the task's worktree (or directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckRun {
    /// The command, run with `sh -c`.
    pub command: String,
    /// Its exit code; none when it did not exit by itself (timed out, cancelled, killed by
    /// a signal, or could not be run: see `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The last 8 KiB of its output (stdout and stderr together).
    #[serde(default)]
    pub output_tail: String,
    /// Why it failed without an exit code of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CheckRun {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && self.error.is_none()
    }
}

/// One agent of a best-of-N request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariantSpec {
    pub provider_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

impl FromStr for VariantSpec {
    type Err = String;
    /// `provider` or `provider:approval` (`codex:auto`), as the CLI and the form take it.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (provider, approval) = match s.split_once(':') {
            Some((p, a)) => (p.trim(), Some(a.trim().parse::<Approval>()?)),
            None => (s.trim(), None),
        };
        if provider.is_empty() {
            return Err(format!(
                "variant {s:?} names no provider: use PROVIDER or PROVIDER:APPROVAL (codex:auto)"
            ));
        }
        Ok(VariantSpec {
            provider_id: provider.to_string(),
            approval,
        })
    }
}

impl TaskMetadata {
    /// A best-of-N parent: it runs no agent of its own; its children do.
    pub fn is_variant_parent(&self) -> bool {
        !self.variants.is_empty()
    }
}

/// How many times a task's checks may fail before it fails, when the request says nothing.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// How long one check may run, when the request says nothing.
pub const DEFAULT_CHECK_TIMEOUT_SECONDS: u64 = 30 * 60;

/// One child task's outcome, as its parent's result lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChildOutcome {
    pub id: String,
    pub name: String,
    pub status: TaskStatus,
    /// The child's result summary, or its error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// Progress is a number from 0 to 100; whole numbers serialise as integers.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Deserialize, JsonSchema)]
pub struct Progress(#[schemars(range(min = 0, max = 100))] f64);

impl Progress {
    pub fn new(value: f64) -> Option<Progress> {
        (value.is_finite() && (0.0..=100.0).contains(&value)).then_some(Progress(value))
    }
    pub const DONE: Progress = Progress(100.0);
    pub fn value(self) -> f64 {
        self.0
    }
}

impl Serialize for Progress {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 {
            s.serialize_u64(self.0 as u64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    pub status: TaskStatus,
    pub progress: Progress,
    // Each change to a task is a copy of it, and a busy agent's task (up to
    // `OUTPUT_LINES_KEPT` lines) is copied for every batch of its output: the lines are in
    // blocks the copies share (see `TaskOutput`), and each line carries its JSON text.
    #[schemars(with = "Vec<String>")]
    pub output: TaskOutput,
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<TaskResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    pub provider_id: String,
    pub working_directory: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_capabilities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Whether the task runs in its own git worktree.
    #[serde(default)]
    pub isolation: Isolation,
    /// The branch a worktree task starts from (default: the checked-out one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    /// The commit its worktree starts from, fixed when the task was made (best-of-N
    /// variants: all start from one commit even if the base branch moves); none: the base
    /// branch's commit when the task starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The task's worktree once it has one (kept, with its outcome, after removal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<TaskWorktree>,
    /// The agent's conversation, pinned by orchestra at the first start (the provider's
    /// `conversation_args`): `continue` resumes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The question the task waits on before its agent starts (kind `trust`: a repository's
    /// commands the user has not trusted yet). The task is `running` meanwhile, with no
    /// session; `POST /tasks/:id/answer` answers it. Gone once answered or the task ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<crate::prompt::Prompt>,
    /// The repository file whose trust the start needs (see [`crate::wire::TrustRequest`]):
    /// set with `prompt`, kept after the answer until the agent has started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<crate::trust::TrustRequest>,
    /// The task whose agent made this one (through its MCP server or its own credential):
    /// the parent sees it, manages it and may answer its questions (see `answers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// Who the task's questions go to: the human (the attention queue), or its parent's
    /// agent as well (`wait_for_task` returns `blocked`); the human can always answer first.
    #[serde(default, skip_serializing_if = "Answers::is_human")]
    pub answers: Answers,
    /// Whether the task's agent gets orchestra's MCP server for its session, so that it can
    /// hand work to other agents (child tasks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delegate: bool,
    /// Commands that must pass in the task's worktree before it is `completed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// How many times the checks may fail and go back to the agent (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// How long one check may run (default 1800 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_timeout_seconds: Option<u64>,
    /// How many times the checks have failed and gone back to the agent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub check_attempts: u32,
    /// A best-of-N parent: the agents its request is raced on, one child each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSpec>,
    /// A best-of-N child: its label among its parent's variants (the provider's id, with
    /// a number when one provider runs twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The pull request opened for the task's branch (`POST /tasks/:id/pr`), the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<crate::worktree::PullRequest>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What can be done to a task together with its descendants (`?children=true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyOp {
    Pause,
    Resume,
    Cancel,
}

impl FamilyOp {
    /// The verb, as a user reads it.
    pub fn verb(self) -> &'static str {
        match self {
            FamilyOp::Pause => "pause",
            FamilyOp::Resume => "resume",
            FamilyOp::Cancel => "cancel",
        }
    }

    /// Whether a task in `status` is one this does something to.
    pub fn applies_to(self, status: TaskStatus) -> bool {
        match self {
            FamilyOp::Pause => status == TaskStatus::Running,
            FamilyOp::Resume => status == TaskStatus::Paused,
            FamilyOp::Cancel => !status.is_final(),
        }
    }

    /// Its route (`routes::TASK_PAUSE`, …).
    pub fn route(self) -> &'static str {
        match self {
            FamilyOp::Pause => crate::routes::TASK_PAUSE,
            FamilyOp::Resume => crate::routes::TASK_RESUME,
            FamilyOp::Cancel => crate::routes::TASK_CANCEL,
        }
    }
}

/// Who answers a task's questions besides the human.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Answers {
    /// The human alone (the attention queue).
    #[default]
    Human,
    /// The parent task's agent too, through `answer_prompt`; a permission prompt of a task
    /// under `manual` still goes to the human only.
    Parent,
}

impl Answers {
    pub fn is_human(&self) -> bool {
        *self == Answers::Human
    }
}

impl FromStr for Answers {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "human" => Ok(Answers::Human),
            "parent" => Ok(Answers::Parent),
            _ => Err(format!(
                "unknown answers {s:?}: use \"human\" or \"parent\""
            )),
        }
    }
}

/// How much a session's agent may do without asking: the preset chooses the CLI's own flags
/// (`approval_args` in the provider table) and which prompts orchestra answers by itself.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// The agent asks; orchestra answers nothing by itself.
    Manual,
    /// The agent asks about tools and edits; orchestra answers housekeeping prompts (trust
    /// this folder, update notices, telemetry), never a permission or a login.
    #[default]
    Safe,
    /// The CLI's own non-interactive mode, plus what `safe` answers.
    Auto,
}

impl Approval {
    pub const ALL: [Approval; 3] = [Approval::Manual, Approval::Safe, Approval::Auto];

    pub fn as_str(self) -> &'static str {
        match self {
            Approval::Manual => "manual",
            Approval::Safe => "safe",
            Approval::Auto => "auto",
        }
    }

    /// Whether orchestra answers housekeeping prompts by itself under this preset.
    pub fn answers_housekeeping(self) -> bool {
        matches!(self, Approval::Safe | Approval::Auto)
    }
}

impl fmt::Display for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Approval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Approval::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| format!("unknown approval {s:?}: use manual, safe or auto"))
    }
}

/// Where a task's agent works: its own git worktree, or the directory as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    Worktree,
    #[default]
    None,
}

impl FromStr for Isolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "worktree" => Ok(Isolation::Worktree),
            "none" => Ok(Isolation::None),
            _ => Err(format!(
                "unknown isolation {s:?}: use \"worktree\" or \"none\""
            )),
        }
    }
}

/// What became of a task's worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorktreeOutcome {
    /// Merged into the base branch; worktree and branch removed.
    Merged,
    /// Removed with its branch; its work is kept under the snapshot ref.
    Discarded,
    /// Removed by `orchestra gc`; branch and snapshot ref kept.
    Collected,
}

/// A task's worktree and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskWorktree {
    #[serde(flatten)]
    pub at: crate::worktree::Worktree,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<WorktreeOutcome>,
    /// The snapshot commit kept when the worktree was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
}

impl TaskWorktree {
    /// The worktree is still on disk (not merged, discarded or collected).
    pub fn is_live(&self) -> bool {
        self.outcome.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    pub id: String,
    pub name: String,
    pub description: String,
    pub metadata: TaskMetadata,
    /// This version's JSON once encoded for a reader (see `crate::task::encoded`); not part
    /// of the task's data.
    #[serde(skip)]
    pub(crate) encoded: crate::task::encoded::EncodedOnce,
}

/// Why a change to a task was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransitionError {
    #[error("task is {from} and can no longer change")]
    Finished { from: TaskStatus },
    #[error("task is {from}; it cannot become {to}")]
    Illegal { from: TaskStatus, to: TaskStatus },
}

/// The fields a new task starts from.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    pub name: String,
    pub description: String,
    pub provider_id: String,
    pub working_directory: String,
    pub required_capabilities: Vec<String>,
    pub retry_of: Option<String>,
    pub approval: Option<Approval>,
    pub parent_task_id: Option<String>,
    pub answers: Answers,
    pub delegate: bool,
    pub checks: Vec<String>,
    pub max_attempts: Option<u32>,
    pub check_timeout_seconds: Option<u64>,
    pub variants: Vec<VariantSpec>,
    pub variant: Option<String>,
}

/// How many output lines a task keeps; the full transcript lives on disk.
pub const OUTPUT_LINES_KEPT: usize = 2000;

impl Task {
    pub fn new(id: String, spec: NewTask, now: i64) -> Task {
        Task {
            id,
            name: spec.name,
            description: spec.description,
            metadata: TaskMetadata {
                status: TaskStatus::Pending,
                progress: Progress::default(),
                output: TaskOutput::default(),
                steps: Vec::new(),
                result: None,
                error: None,
                created_at: now,
                started_at: None,
                completed_at: None,
                provider_id: spec.provider_id,
                working_directory: spec.working_directory,
                session_id: None,
                retry_of: spec.retry_of,
                required_capabilities: spec.required_capabilities,
                approval: spec.approval,
                isolation: Isolation::None,
                base_ref: None,
                base_commit: None,
                worktree: None,
                conversation_id: None,
                prompt: None,
                trust: None,
                parent_task_id: spec.parent_task_id,
                answers: spec.answers,
                delegate: spec.delegate,
                checks: spec.checks,
                max_attempts: spec.max_attempts,
                check_timeout_seconds: spec.check_timeout_seconds,
                check_attempts: 0,
                variants: spec.variants,
                variant: spec.variant,
                pull_request: None,
            },
            encoded: Default::default(),
        }
    }

    pub fn status(&self) -> TaskStatus {
        self.metadata.status
    }

    /// Whether orchestra is starting the task's agent outside a start call: it waits on the
    /// user's trust in its repository's file, or was just trusted and is being set up.
    pub fn awaits_trust(&self) -> bool {
        self.metadata.trust.is_some() && self.metadata.session_id.is_none()
    }

    /// Refuses any change once the task is final.
    pub fn ensure_open(&self) -> Result<(), TransitionError> {
        let from = self.status();
        if from.is_final() {
            Err(TransitionError::Finished { from })
        } else {
            Ok(())
        }
    }

    /// Moves the task along the state machine and stamps the times the move implies.
    pub fn move_to(&mut self, to: TaskStatus, now: i64) -> Result<(), TransitionError> {
        let from = self.status();
        self.ensure_open()?;
        if !from.can_move_to(to) {
            return Err(TransitionError::Illegal { from, to });
        }
        self.metadata.status = to;
        if to == TaskStatus::Running && self.metadata.started_at.is_none() {
            self.metadata.started_at = Some(now);
        }
        if to.is_final() {
            self.metadata.completed_at = Some(now);
            // Nothing is waited for any more: the question is moot and nothing will start.
            self.metadata.prompt = None;
            self.metadata.trust = None;
            // A finished task has no step left running (a `▶` forever).
            for step in self
                .metadata
                .steps
                .iter_mut()
                .filter(|s| s.status.is_open())
            {
                step.status = StepStatus::closed_by(to);
            }
        }
        if to == TaskStatus::Completed {
            self.metadata.progress = Progress::DONE;
        }
        Ok(())
    }

    /// Runs a finished task again on its earlier conversation (`continue`): its steps, output
    /// and start time are kept, its earlier outcome becomes a step saying what was asked next.
    pub fn reopen(&mut self, message: &str) -> Result<(), TransitionError> {
        let from = self.status();
        if !from.is_final() {
            return Err(TransitionError::Illegal {
                from,
                to: TaskStatus::Running,
            });
        }
        let earlier = self
            .metadata
            .result
            .as_ref()
            .map(|r| r.summary.clone())
            .or_else(|| self.metadata.error.clone())
            .filter(|s| !s.trim().is_empty())
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        self.metadata.steps.push(Step {
            id: uuid::Uuid::new_v4().to_string(),
            description: format!("continued: {message}"),
            status: StepStatus::Completed,
            output: Some(format!("it had {from}{earlier}")),
        });
        self.metadata.status = TaskStatus::Running;
        self.metadata.completed_at = None;
        self.metadata.result = None;
        self.metadata.error = None;
        // A continue is a new effort: its checks get their attempts afresh.
        self.metadata.check_attempts = 0;
        if self.metadata.progress == Progress::DONE {
            self.metadata.progress = Progress::default();
        }
        Ok(())
    }

    /// The last output line with something on it: what a finished agent said last.
    pub fn last_output_line(&self) -> Option<String> {
        self.metadata
            .output
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.to_string())
    }

    /// Appends text as lines, keeping only the newest `OUTPUT_LINES_KEPT`.
    pub fn append_output_lines<I: IntoIterator<Item = String>>(&mut self, lines: I) {
        // A copy changed in place (`Arc::make_mut`) is another version.
        self.encoded = Default::default();
        self.metadata
            .output
            .extend(lines.into_iter().map(OutputLine::from));
        self.metadata.output.keep_newest(OUTPUT_LINES_KEPT);
    }

    /// Records a result and finishes the task: completed if it succeeded, else failed.
    pub fn finish_with(&mut self, result: TaskResult, now: i64) -> Result<(), TransitionError> {
        let to = if result.success {
            TaskStatus::Completed
        } else {
            TaskStatus::Failed
        };
        self.move_to(to, now)?;
        if !result.success {
            self.metadata.error = Some(
                result
                    .error
                    .clone()
                    .filter(|e| !e.is_empty())
                    .unwrap_or_else(|| result.summary.clone()),
            );
        }
        self.metadata.result = Some(result);
        Ok(())
    }

    /// A task with checks: which attempt at them this is (from 1), and how many it may have.
    pub fn check_attempt(&self) -> Option<(u32, u32)> {
        if self.metadata.checks.is_empty() {
            return None;
        }
        let max = self.metadata.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
        Some(((self.metadata.check_attempts + 1).min(max), max))
    }

    pub fn step_mut(&mut self, step_id: &str) -> Option<&mut Step> {
        self.metadata.steps.iter_mut().find(|s| s.id == step_id)
    }
}

/// Splits posted text into lines: `\n` and `\r\n` separate, a trailing newline adds no empty line.
pub fn text_lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn a_variant_is_a_provider_with_an_approval_or_not() {
        let v: VariantSpec = "codex:auto".parse().unwrap();
        assert_eq!(v.provider_id, "codex");
        assert_eq!(v.approval, Some(Approval::Auto));
        let v: VariantSpec = "claude".parse().unwrap();
        assert_eq!((v.provider_id.as_str(), v.approval), ("claude", None));
        assert!(
            "codex:yolo"
                .parse::<VariantSpec>()
                .unwrap_err()
                .contains("yolo")
        );
        assert!(
            ":auto"
                .parse::<VariantSpec>()
                .unwrap_err()
                .contains("names no provider")
        );
    }

    #[test]
    fn every_pair_of_the_state_machine() {
        let legal = [
            (Pending, Running),
            (Pending, Completed),
            (Pending, Failed),
            (Pending, Cancelled),
            (Running, Paused),
            (Running, Completed),
            (Running, Failed),
            (Running, Cancelled),
            (Paused, Running),
            (Paused, Completed),
            (Paused, Failed),
            (Paused, Cancelled),
        ];
        for from in TaskStatus::ALL {
            for to in TaskStatus::ALL {
                assert_eq!(
                    from.can_move_to(to),
                    legal.contains(&(from, to)),
                    "{from} -> {to}"
                );
            }
        }
    }

    fn task() -> Task {
        Task::new(
            "t".into(),
            NewTask {
                name: "n".into(),
                description: "d".into(),
                provider_id: "shell".into(),
                working_directory: "/".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                ..NewTask::default()
            },
            1,
        )
    }

    #[test]
    fn stamps_started_once_and_completed_on_final() {
        let mut t = task();
        t.move_to(Running, 10).unwrap();
        t.move_to(Paused, 20).unwrap();
        t.move_to(Running, 30).unwrap();
        assert_eq!(t.metadata.started_at, Some(10));
        assert_eq!(t.metadata.completed_at, None);
        t.move_to(Completed, 40).unwrap();
        assert_eq!(t.metadata.completed_at, Some(40));
        assert_eq!(t.metadata.progress, Progress::DONE);
        assert_eq!(
            t.move_to(Running, 50),
            Err(TransitionError::Finished { from: Completed })
        );
    }

    #[test]
    fn reopening_runs_a_finished_task_again_keeping_its_history() {
        let mut t = task();
        assert!(
            t.reopen("more").is_err(),
            "a pending task is started, not continued"
        );
        t.move_to(Running, 10).unwrap();
        t.append_output_lines(["working".to_string()]);
        t.finish_with(
            TaskResult {
                success: true,
                summary: "did it".into(),
                files_modified: vec![],
                files_created: vec![],
                error: None,
                ..Default::default()
            },
            20,
        )
        .unwrap();
        t.reopen("and the tests").unwrap();
        assert_eq!(t.status(), Running);
        assert_eq!(t.metadata.started_at, Some(10));
        assert_eq!(t.metadata.completed_at, None);
        assert!(t.metadata.result.is_none());
        assert_eq!(t.metadata.progress, Progress::default());
        assert_eq!(t.metadata.output, ["working"]);
        let step = t.metadata.steps.last().unwrap();
        assert_eq!(step.description, "continued: and the tests");
        assert_eq!(step.output.as_deref(), Some("it had completed: did it"));
        assert!(
            t.reopen("again").is_err(),
            "a running task is not continued"
        );
    }

    #[test]
    fn a_task_with_checks_counts_its_attempts_and_a_continue_starts_them_again() {
        let mut t = task();
        assert_eq!(t.check_attempt(), None);
        t.metadata.checks = vec!["cargo test -q".into()];
        assert_eq!(t.check_attempt(), Some((1, DEFAULT_MAX_ATTEMPTS)));
        t.metadata.max_attempts = Some(2);
        t.metadata.check_attempts = 1;
        assert_eq!(t.check_attempt(), Some((2, 2)));
        t.metadata.check_attempts = 5;
        assert_eq!(t.check_attempt(), Some((2, 2)), "never past the last");
        t.move_to(Running, 1).unwrap();
        t.move_to(Failed, 2).unwrap();
        t.reopen("fix it").unwrap();
        assert_eq!(t.metadata.check_attempts, 0);
    }

    fn with_steps(statuses: &[StepStatus]) -> Task {
        let mut t = task();
        t.metadata.steps = statuses
            .iter()
            .enumerate()
            .map(|(i, st)| Step {
                id: i.to_string(),
                description: format!("step {i}"),
                status: *st,
                output: None,
            })
            .collect();
        t
    }

    #[test]
    fn finishing_closes_the_steps_still_open() {
        use StepStatus as S;
        let steps = [
            S::Completed,
            S::Running,
            S::Pending,
            S::Paused,
            S::Skipped,
            S::Failed,
            S::Cancelled,
        ];
        for (end, open_become) in [
            (Completed, S::Completed),
            (Failed, S::Failed),
            (Cancelled, S::Failed),
        ] {
            let mut t = with_steps(&steps);
            t.move_to(Running, 1).unwrap();
            t.move_to(end, 2).unwrap();
            let got: Vec<S> = t.metadata.steps.iter().map(|s| s.status).collect();
            assert_eq!(
                got,
                vec![
                    S::Completed,
                    open_become,
                    open_become,
                    open_become,
                    S::Skipped,
                    S::Failed,
                    S::Cancelled
                ],
                "task {end}"
            );
        }
        // Pausing or running on leaves steps as the agent set them.
        let mut t = with_steps(&[S::Running]);
        t.move_to(Running, 1).unwrap();
        t.move_to(Paused, 2).unwrap();
        assert_eq!(t.metadata.steps[0].status, S::Running);
        // A result finishes the task too.
        let mut t = with_steps(&[S::Running]);
        t.move_to(Running, 1).unwrap();
        t.finish_with(
            TaskResult {
                success: true,
                summary: "done".into(),
                files_modified: vec![],
                files_created: vec![],
                error: None,
                ..Default::default()
            },
            3,
        )
        .unwrap();
        assert_eq!(t.metadata.steps[0].status, S::Completed);
    }

    #[test]
    fn json_shape_is_absent_until_set() {
        let t = task();
        let v = serde_json::to_value(&t).unwrap();
        let m = &v["metadata"];
        for absent in ["result", "error", "startedAt", "completedAt", "sessionId"] {
            assert!(m.get(absent).is_none(), "{absent} should be absent");
        }
        assert_eq!(m["status"], "pending");
        assert_eq!(m["progress"], 0);
        assert_eq!(m["createdAt"], 1);
        assert_eq!(m["providerId"], "shell");
        assert_eq!(m["workingDirectory"], "/");
    }

    #[test]
    fn failed_result_carries_its_error() {
        let mut t = task();
        t.finish_with(
            TaskResult {
                success: false,
                summary: "tests fail".into(),
                files_modified: vec![],
                files_created: vec![],
                error: None,
                ..Default::default()
            },
            5,
        )
        .unwrap();
        assert_eq!(t.status(), Failed);
        assert_eq!(t.metadata.error.as_deref(), Some("tests fail"));
    }

    #[test]
    fn output_is_bounded_and_split_into_lines() {
        assert_eq!(text_lines("a\nb\r\nc\n"), vec!["a", "b", "c"]);
        assert_eq!(text_lines("a\n\nb"), vec!["a", "", "b"]);
        assert!(text_lines("").is_empty());
        let mut t = task();
        t.append_output_lines((0..OUTPUT_LINES_KEPT + 5).map(|i| i.to_string()));
        assert_eq!(t.metadata.output.len(), OUTPUT_LINES_KEPT);
        assert_eq!(&*t.metadata.output[0], "5");
    }

    #[test]
    fn progress_bounds() {
        assert!(Progress::new(-0.1).is_none());
        assert!(Progress::new(100.1).is_none());
        assert!(Progress::new(f64::NAN).is_none());
        assert_eq!(
            serde_json::to_string(&Progress::new(40.0).unwrap()).unwrap(),
            "40"
        );
        assert_eq!(
            serde_json::to_string(&Progress::new(40.5).unwrap()).unwrap(),
            "40.5"
        );
    }
}
