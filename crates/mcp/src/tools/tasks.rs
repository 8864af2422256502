//! The task tools: providers, create, start, pause, resume, cancel, continue, get, list.

use super::args::{Continue, Control, CreateTask, ListTasks, NoArgs, TaskId};
use super::refusal::Tool;
use super::{Ctx, Outcome, fetch_task, parse, refused, task_answer, view};
use orchestra_client::http::{Failure, Method, segment};
use orchestra_proto::routes;
use orchestra_proto::task::Approval;
use orchestra_proto::wire::request::{ContinueTask, NewTask};
use orchestra_proto::wire::{ProviderList, TaskBody, TaskList, started_anyway};
use serde_json::{Value, json};

/// Output lines each task of a list carries.
const LIST_LINES: usize = 3;

pub async fn providers(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    parse::<NoArgs>("list_providers", args)?;
    let list: ProviderList = ctx
        .remote
        .get(routes::PROVIDERS.to_string(), "the providers")
        .await
        .map_err(|e| refused(Tool::Providers, e))?;
    let presets: Vec<Value> = Approval::ALL
        .into_iter()
        .map(|a| {
            let what = match a {
                Approval::Manual => "the agent asks before every tool; orchestra answers nothing by itself",
                Approval::Safe => "the agent asks about tools and edits; orchestra answers housekeeping prompts only",
                Approval::Auto => "the agent's own non-interactive mode: it runs tools without asking",
            };
            json!({"id": a.as_str(), "description": what})
        })
        .collect();
    Ok(json!({"providers": list.providers, "approvalPresets": presets}))
}

pub async fn create(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    let a: CreateTask = parse("create_task", args)?;
    // The model's directory, not the daemon's: a relative path means where the agent is.
    let dir = match a
        .working_directory
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    {
        Some(d) => ctx.cwd.join(d),
        None => ctx.cwd.clone(),
    };
    let body = NewTask {
        name: a.name,
        description: a.description,
        provider_id: a.provider_id,
        working_directory: Some(dir.to_string_lossy().into_owned()),
        isolation: a.isolation,
        base_ref: a.base_ref,
        approval: a.approval,
        parent_task_id: a.parent_task_id,
        answers: a.answers,
        delegate: a.delegate,
        variants: a.variants,
        checks: a.checks,
        max_attempts: a.max_attempts,
        ..Default::default()
    };
    let created: TaskBody = ctx
        .remote
        .send(Method::Post, routes::TASKS.to_string(), body, "a task")
        .await
        .map_err(|e| refused(Tool::Create, e))?;
    if !a.start.unwrap_or(false) {
        return Ok(view::task(&created.task, None, view::VIEW_LINES));
    }
    let id = created.task.id.clone();
    start_id(ctx, &id).await.map_err(|e| {
        format!("created task {id} (pending), but it did not start: {e}; start_task tries again")
    })
}

pub async fn start(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    let a: TaskId = parse("start_task", args)?;
    start_id(ctx, &a.id).await
}

/// Starts `id`; a start someone else made first (the autopilot, a person) counts as done.
async fn start_id(ctx: &Ctx, id: &str) -> Outcome {
    let started = ctx
        .remote
        .send::<_, TaskBody>(
            Method::Post,
            routes::at(routes::TASK_START, &[id]),
            (),
            "a task",
        )
        .await;
    // No read of the new session for the answer: it is starting, and the round trip is
    // what a model waits for on every delegation.
    match started {
        Ok(body) => Ok(view::task(&body.task, None, view::VIEW_LINES)),
        Err(crate::remote::Failed::Api(e))
            if matches!(e.failure(), Failure::Refused { status: 409, .. }) =>
        {
            let now = fetch_task(ctx, id, Tool::Start).await?;
            if started_anyway(&e.to_string(), Some(now.metadata.status)) {
                Ok(task_answer(ctx, &now).await)
            } else {
                Err(refused(Tool::Start, crate::remote::Failed::Api(e)))
            }
        }
        Err(e) => Err(refused(Tool::Start, e)),
    }
}

pub async fn control(ctx: &Ctx, args: Option<rmcp::model::JsonObject>, tool: Tool) -> Outcome {
    let (name, pattern) = match tool {
        Tool::Pause => ("pause_task", routes::TASK_PAUSE),
        Tool::Resume => ("resume_task", routes::TASK_RESUME),
        _ => ("cancel_task", routes::TASK_CANCEL),
    };
    let a: Control = parse(name, args)?;
    let mut path = routes::at(pattern, &[&a.id]);
    if a.children.unwrap_or(false) {
        path.push_str("?children=true");
    }
    let body: TaskBody = ctx
        .remote
        .send(Method::Post, path, (), "a task")
        .await
        .map_err(|e| refused(tool, e))?;
    Ok(task_answer(ctx, &body.task).await)
}

pub async fn continue_(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    let a: Continue = parse("continue_task", args)?;
    let body: TaskBody = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::TASK_CONTINUE, &[&a.id]),
            ContinueTask { message: a.message },
            "a task",
        )
        .await
        .map_err(|e| refused(Tool::Continue, e))?;
    Ok(task_answer(ctx, &body.task).await)
}

pub async fn get(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    let a: TaskId = parse("get_task", args)?;
    let task = fetch_task(ctx, &a.id, Tool::Get).await?;
    Ok(task_answer(ctx, &task).await)
}

pub async fn list(ctx: &Ctx, args: Option<rmcp::model::JsonObject>) -> Outcome {
    let a: ListTasks = parse("list_tasks", args)?;
    let mut query = Vec::new();
    if let Some(s) = a.status {
        query.push(format!("status={}", s.as_str()));
    }
    if let Some(p) = &a.parent {
        query.push(format!("parent={}", segment(p)));
    }
    let mut path = routes::TASKS.to_string();
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query.join("&"));
    }
    let list: TaskList = ctx
        .remote
        .get(path, "a task list")
        .await
        .map_err(|e| refused(Tool::List, e))?;
    let tasks: Vec<Value> = list
        .tasks
        .iter()
        .map(|t| view::task(t, None, LIST_LINES))
        .collect();
    Ok(json!({"tasks": tasks}))
}
