//! The tools: their catalog (names, descriptions, schemas), their arguments, and what each
//! does through the daemon's API. A call never fails the protocol: bad arguments and every
//! refusal are tool errors (`isError: true`) with a sentence the model can act on.

pub mod args;
pub mod catalog;
mod output;
mod refusal;
mod tasks;
mod view;
mod wait;
mod worktree;

use crate::feed::Feed;
use crate::remote::{Failed, Remote};
use orchestra_proto::routes;
use orchestra_proto::task::Task;
use orchestra_proto::wire::{SessionBody, SessionInfo, TaskBody};
use refusal::Tool;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

pub use wait::Reported;

/// What every tool works with.
pub struct Ctx {
    pub remote: Remote,
    pub feed: Feed,
    pub reported: Reported,
    /// Where relative working directories are taken from: this server's own directory
    /// (the agent's, when an agent runs it).
    pub cwd: PathBuf,
}

/// A tool's outcome: its answer, or the text of a tool error.
type Outcome = Result<Value, String>;

/// Runs tool `name`; `None` when there is no such tool.
pub async fn call(
    ctx: &Arc<Ctx>,
    name: &str,
    args: Option<JsonObject>,
    rc: &RequestContext<RoleServer>,
) -> Option<CallToolResult> {
    let outcome = match name {
        "list_providers" => tasks::providers(ctx, args).await,
        "create_task" => tasks::create(ctx, args).await,
        "start_task" => tasks::start(ctx, args).await,
        "pause_task" => tasks::control(ctx, args, Tool::Pause).await,
        "resume_task" => tasks::control(ctx, args, Tool::Resume).await,
        "cancel_task" => tasks::control(ctx, args, Tool::Cancel).await,
        "continue_task" => tasks::continue_(ctx, args).await,
        "get_task" => tasks::get(ctx, args).await,
        "list_tasks" => tasks::list(ctx, args).await,
        "wait_for_task" => wait::run(ctx, args, rc).await,
        "read_output" => output::read(ctx, args).await,
        "send_message" => output::send(ctx, args).await,
        "answer_prompt" => output::answer(ctx, args).await,
        "task_diff" => worktree::diff(ctx, args).await,
        "merge_task" => worktree::merge(ctx, args).await,
        "discard_task" => worktree::discard(ctx, args).await,
        "pick_variant" => worktree::pick(ctx, args).await,
        _ => return None,
    };
    Some(match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(text) => {
            tracing::info!(tool = name, error = %text, "tool error");
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    })
}

/// The call's arguments as `T`, or a tool error naming what is wrong.
fn parse<T: DeserializeOwned>(tool: &str, args: Option<JsonObject>) -> Result<T, String> {
    let value = Value::Object(args.unwrap_or_default());
    serde_json::from_value(value)
        .map_err(|e| format!("bad arguments for {tool}: {e}; its input schema lists what it takes"))
}

/// `failed` as the tool error of `tool`.
fn refused(tool: Tool, failed: Failed) -> String {
    refusal::text(tool, &failed)
}

/// The task `id` as it is now.
async fn fetch_task(ctx: &Ctx, id: &str, tool: Tool) -> Result<Arc<Task>, String> {
    ctx.remote
        .get::<TaskBody>(routes::at(routes::TASK, &[id]), "a task")
        .await
        .map(|b| b.task)
        .map_err(|e| refused(tool, e))
}

/// The task's current session, when it has one (best effort: a view without it is still
/// right about the task).
async fn fetch_session(ctx: &Ctx, task: &Task) -> Option<SessionInfo> {
    let sid = task.metadata.session_id.as_deref()?;
    ctx.remote
        .get::<SessionBody>(routes::at(routes::SESSION, &[sid]), "a session")
        .await
        .ok()
        .map(|b| b.session)
}

/// A task's view with its session's question, read now.
async fn task_answer(ctx: &Ctx, task: &Task) -> Value {
    let session = fetch_session(ctx, task).await;
    view::task(task, session.as_ref(), view::VIEW_LINES)
}
