//! The tools as the model sees them: name, description, input schema (from `args`), and
//! whether each only reads. The descriptions are the model's manual: what the tool returns,
//! when to use it, and what its errors mean.

use super::args::*;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use std::sync::Arc;

const LIST_PROVIDERS: &str = "List the coding agents orchestra can run here (`id` is what create_task's providerId takes; `installed` says whether it can start now) and the approval presets a task can get (manual, safe, auto). Call it before create_task when you do not know which agents exist.";

const CREATE_TASK: &str = "Create a task for another coding agent (or a command, provider \"exec\") and, with start: true, start it at once. Returns the task: its `id` (what every other tool takes), `status` (pending, or running once started), worktree and session. Give the agent a complete instruction in `description`: it does not see your conversation. With isolation \"worktree\" it works on its own branch: review with task_diff, then merge_task or discard_task. Then use wait_for_task to learn when it finishes or asks something. Inside an orchestra session the task becomes your task's child, and cannot get a wider approval than yours (asking for more is refused: leave approval out). A 400 names the argument that is wrong.";

const START_TASK: &str = "Start a pending task on a session of its agent. Returns the task, now running (or running with a `prompt` when orchestra needs a person to trust its repository's set-up first). Only a pending task starts: for a finished one use continue_task.";

const PAUSE_TASK: &str = "Pause a running task: its agent's processes are stopped where they are until resume_task. With children: true, its child tasks are paused too. Returns the task.";

const RESUME_TASK: &str = "Resume a paused task (with children: true, its paused children too). Returns the task, running again.";

const CANCEL_TASK: &str = "Cancel a task: its agent is ended and the task becomes cancelled (final). With children: true its children are cancelled too. A worktree task's worktree stays until merge_task or discard_task. Returns the task.";

const CONTINUE_TASK: &str = "Run a finished task (completed, failed or cancelled) again on the same agent conversation, with `message` as its next request (e.g. a correction after reviewing its diff). Returns the task, running again; wait_for_task tells when it finishes. Refused for agents that cannot resume a conversation (shell, exec): create a new task then.";

const GET_TASK: &str = "Get a task as it is now: status, progress, result (summary, files changed, and its children's outcomes), error, worktree, the question it waits on (`blocked`, `prompt`) and its last output lines. It does not wait: use wait_for_task to wait for a change.";

const LIST_TASKS: &str = "List tasks, newest first, each with its status and last output lines. `status` keeps one status; `parent` keeps a task's children. Inside an orchestra session you see your own task's family only.";

const WAIT_FOR_TASK: &str = "Wait until a task (id) or the first of several (ids) gets to a status you name in `until` or is `blocked` on a question; by default until it finishes (completed, failed, cancelled) or is blocked. Returns `arrived`: the task with its status, result, the question (`prompt`, with option keys for answer_prompt) when blocked, and its last output lines. It waits on orchestra's events (no polling), and sends progress notifications while it waits when you asked for them. With several ids, call it again for the others: each arrival is returned once, and when none is left to come the answer says so at once. On timeout (timeoutSeconds, default 30, at most 600) the answer is not an error: `arrived` is null and `tasks` lists where each one is; call again to keep waiting.";

const READ_OUTPUT: &str = "Read a task's output: while its agent runs, the last lines of its terminal screen (what a person watching would see); otherwise, or with `search`, the task's recorded output lines (only those containing `search`). Returns `lines`, oldest first, and `source` (screen, output or transcript).";

const SEND_MESSAGE: &str = "Type a message into a running task's agent and submit it, as a person at its terminal would (a follow-up instruction, an answer in words). Returns the message as stored. Refused when the task has no live session: start_task or continue_task first. To choose an option of a question it asks, use answer_prompt.";

const ANSWER_PROMPT: &str = "Answer the question a blocked task waits on (wait_for_task or get_task shows `prompt` with its `options`): `option` is one option's `key`. Works for a child created with answers: \"parent\" (permission prompts of a child under manual approval stay with the human), and for a task waiting on a person to trust its repository only with orchestra's own token. Returns the task. A 409 means it no longer waits (someone answered first) or its options are not read yet.";

const TASK_DIFF: &str = "Show what a worktree task changed against the commit it started from: `files` (path, status, lines added and removed) and the unified `patch` (cut at 200 kB). Use it to review a finished child before merge_task.";

const MERGE_TASK: &str = "Merge a finished worktree task into its base branch (what its agent left uncommitted is committed first), then remove its worktree and branch. Returns the task and the merge (commit, files, fastForward). Refused, changing nothing, when it conflicts or when uncommitted changes in the base checkout are in the way: the sentence names the files. A running task cannot be merged: wait for it or cancel it.";

const DISCARD_TASK: &str = "Throw away a finished worktree task's work: its worktree and branch are removed (the work is kept under a snapshot ref, `snapshotRef`, for a person to recover). Returns the task.";

const PICK_VARIANT: &str = "Keep one variant of a best-of-N task (created with `variants`): merge it into its base branch, discard the others (their work kept under snapshot refs), and complete the task naming the pick. Returns the task, the merge, and the discarded variants. Every variant must have finished first (wait_for_task on the children: list_tasks with parent).";

fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    read_only: bool,
) -> Tool {
    // A type whose schema is not an object would be a bug here; the tool still lists.
    let schema = schema_for_input::<T>().unwrap_or_else(|_| Arc::new(JsonObject::new()));
    Tool::new(name, description, schema).with_annotations(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(matches!(name, "cancel_task" | "discard_task"))
            .open_world(false),
    )
}

/// Every tool, in the order a model meets them.
pub fn all() -> Vec<Tool> {
    vec![
        tool::<NoArgs>("list_providers", LIST_PROVIDERS, true),
        tool::<CreateTask>("create_task", CREATE_TASK, false),
        tool::<TaskId>("start_task", START_TASK, false),
        tool::<Control>("pause_task", PAUSE_TASK, false),
        tool::<Control>("resume_task", RESUME_TASK, false),
        tool::<Control>("cancel_task", CANCEL_TASK, false),
        tool::<Continue>("continue_task", CONTINUE_TASK, false),
        tool::<TaskId>("get_task", GET_TASK, true),
        tool::<ListTasks>("list_tasks", LIST_TASKS, true),
        tool::<Wait>("wait_for_task", WAIT_FOR_TASK, true),
        tool::<ReadOutput>("read_output", READ_OUTPUT, true),
        tool::<SendMessage>("send_message", SEND_MESSAGE, false),
        tool::<AnswerPrompt>("answer_prompt", ANSWER_PROMPT, false),
        tool::<TaskId>("task_diff", TASK_DIFF, true),
        tool::<TaskId>("merge_task", MERGE_TASK, false),
        tool::<TaskId>("discard_task", DISCARD_TASK, false),
        tool::<PickVariant>("pick_variant", PICK_VARIANT, false),
    ]
}
