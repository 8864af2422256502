//! `/api/coding-agents/tasks`: the task routes of API.md.

use super::body::Body;
use super::error::ApiError;
use super::requests::{FromBody, Req};
use crate::engine::{Engine, FamilyOp};
use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use orchestra_proto::task::TaskStatus;
use orchestra_proto::wire::request::{
    Answer, ContinueTask, NewStep, NewTask, OutputLines, PickVariant, ResultReport, StepChange,
    TaskChange,
};
use orchestra_proto::wire::{
    DiffBody, Discarded, MergedTask, Picked, PullRequestTask, StepAdded, StepBody, TaskBody,
};
use serde::Serialize;
use std::sync::Arc;

type ApiResult = Result<axum::response::Response, ApiError>;

fn task_body(task: &Arc<orchestra_proto::task::Task>) -> TaskBody {
    TaskBody { task: task.clone() }
}

fn ok(v: impl Serialize) -> ApiResult {
    Ok(Json(v).into_response())
}

fn created(v: impl Serialize) -> ApiResult {
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

pub async fn create(
    State(engine): State<Engine>,
    principal: Option<axum::Extension<super::rights::Principal>>,
    Req(req): Req<NewTask>,
) -> ApiResult {
    let req = match principal.as_deref() {
        Some(super::rights::Principal::Session(grant)) => {
            super::children::child_task(&engine, grant, req)?
        }
        _ => req,
    };
    let task = engine.create_task(req).await?;
    created(task_body(&task))
}

/// What `GET /tasks` was asked for.
#[derive(Debug, Default, PartialEq)]
struct ListQuery {
    status: Option<TaskStatus>,
    limit: Option<usize>,
    /// Only the children of this task.
    parent: Option<String>,
}

/// Parses `status`, `limit` and `parent`; other query keys are ignored.
fn list_query(raw: Option<&str>) -> Result<ListQuery, ApiError> {
    let mut status = None;
    let mut limit = None;
    let mut parent = None;
    for (k, v) in url_pairs(raw.unwrap_or("")) {
        match k.as_str() {
            "status" => status = Some(v.parse::<TaskStatus>().map_err(ApiError::bad_request)?),
            "parent" if v.is_empty() => {
                return Err(ApiError::bad_request("parent must be a task id, not empty"));
            }
            "parent" => parent = Some(v),
            "limit" => {
                let n = count(&v).filter(|n| *n > 0).ok_or_else(|| {
                    ApiError::bad_request(format!("limit must be a positive integer, not {v:?}"))
                })?;
                limit = Some(n);
            }
            _ => {}
        }
    }
    Ok(ListQuery {
        status,
        limit,
        parent,
    })
}

/// A query count: decimal digits only; one too large for memory means "all" (it is a
/// bound, and no list is that long), not a refusal.
pub fn count(v: &str) -> Option<usize> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(v.parse::<usize>().unwrap_or(usize::MAX))
}

/// Decodes `a=b&c=d` with percent-escapes and `+` as space.
pub fn url_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub async fn list(
    State(engine): State<Engine>,
    principal: Option<axum::Extension<super::rights::Principal>>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let ListQuery {
        status,
        limit,
        parent,
    } = list_query(q.as_deref())?;
    let principal = principal.as_deref();
    let owner = !matches!(principal, Some(super::rights::Principal::Session(_)));
    let tasks: Vec<_> = if owner && parent.is_none() {
        // The common case stays a bounded copy of the newest (10k tasks, `limit=50`).
        engine.list_tasks(status, limit)
    } else {
        engine
            .list_tasks(status, None)
            .into_iter()
            .filter(|t| {
                parent.is_none() || t.metadata.parent_task_id.as_deref() == parent.as_deref()
            })
            // An agent's session sees its own task and its descendants only.
            .filter(|t| super::rights::may_see_task(&engine, principal, &t.id))
            .take(limit.unwrap_or(usize::MAX))
            .collect()
    };
    match orchestra_proto::task::encoded::task_list_pieces(&tasks) {
        Ok(pieces) => Ok(super::pieces::JsonPieces::new(pieces).into_response()),
        Err(e) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the task list could not be encoded: {e}"),
        )),
    }
}

pub async fn get(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    ok(task_body(&engine.get_task(&id)?))
}

pub async fn patch(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_task(&id)?;
    let change = TaskChange::from_body(&body)?;
    ok(task_body(&engine.patch_task(&id, change).await?))
}

/// Deletes a finished task; answers with the task as it was.
pub async fn delete(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    ok(task_body(&engine.delete_task(&id).await?))
}

/// The task's changes against its base (worktree tasks).
pub async fn diff(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    ok(DiffBody {
        diff: engine.task_diff(&id).await?,
    })
}

/// Merges a finished worktree task into its base branch; 409 naming the files when the
/// merge conflicts or the user's uncommitted changes are in the way.
pub async fn merge(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    let (task, merged) = engine.merge_task(&id).await?;
    ok(MergedTask {
        task,
        merge: merged,
    })
}

/// Pushes a finished worktree task's branch and opens a pull request for it: 409 when the
/// task cannot be published now, 422 when the set-up cannot (no remote, no `gh`/`glab`, not
/// logged in; nothing pushed), 502 when the push or the CLI failed (with its reason).
pub async fn pull_request(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    let (task, pull_request) = engine.open_pull_request(&id).await?;
    ok(PullRequestTask { task, pull_request })
}

/// Removes a finished task's worktree and branch, keeping a snapshot ref.
pub async fn discard(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    let task = engine.discard_task(&id).await?;
    ok(Discarded {
        snapshot_ref: crate::git::snapshot::snapshot_ref(&task.id),
        task,
    })
}

/// `POST /tasks/:id/pick {variant}`: merges one variant of a best-of-N parent, discards the
/// others (snapshots kept) and completes the parent naming the pick.
pub async fn pick(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_task(&id)?;
    let PickVariant { variant } = PickVariant::from_body(&body)?;
    let out = engine.pick_variant(&id, &variant).await?;
    ok(Picked {
        task: out.parent,
        variant: out.label,
        variant_task_id: out.picked_task_id,
        merge: out.merged,
        discarded: out.discarded,
    })
}

pub async fn start(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    ok(task_body(&engine.start_task(&id).await?))
}

/// `POST /tasks/:id/answer {option}`: answers the question the task waits on.
pub async fn answer(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_task(&id)?;
    let Answer { option } = Answer::from_body(&body)?;
    ok(task_body(&engine.answer_task(&id, &option).await?))
}

/// `?children=true`: the task's descendants go with it (each as far as its state allows).
fn with_children(raw: Option<&str>) -> Result<bool, ApiError> {
    let mut children = false;
    for (k, v) in url_pairs(raw.unwrap_or("")) {
        if k == "children" {
            children = match v.as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "children must be true or false, not {v:?}"
                    )));
                }
            };
        }
    }
    Ok(children)
}

/// Pauses, resumes or cancels a task, and its descendants too when asked.
async fn family_op(engine: &Engine, id: &str, q: Option<&str>, op: FamilyOp) -> ApiResult {
    // A best-of-N parent stands for its variants: what is done to it is done to them.
    let children = with_children(q)? || engine.get_task(id)?.metadata.is_variant_parent();
    let task = match op {
        FamilyOp::Pause => engine.pause_task(id).await?,
        FamilyOp::Resume => engine.resume_task(id).await?,
        FamilyOp::Cancel => engine.cancel_task(id).await?,
    };
    if children {
        engine.apply_to_descendants(id, op).await;
    }
    ok(task_body(&task))
}

pub async fn pause(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    family_op(&engine, &id, q.as_deref(), FamilyOp::Pause).await
}

pub async fn resume(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    family_op(&engine, &id, q.as_deref(), FamilyOp::Resume).await
}

pub async fn cancel(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    family_op(&engine, &id, q.as_deref(), FamilyOp::Cancel).await
}

pub async fn retry(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    created(task_body(&engine.retry_task(&id).await?))
}

/// Starts the agent again on the task's conversation; `message` (optional) is its next request.
pub async fn continue_(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    Req(ContinueTask { message }): Req<ContinueTask>,
) -> ApiResult {
    ok(task_body(
        &engine.continue_task(&id, message.as_deref()).await?,
    ))
}

pub async fn output(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_task(&id)?;
    let OutputLines { output } = OutputLines::from_body(&body)?;
    ok(task_body(&engine.append_output(&id, &output).await?))
}

pub async fn add_step(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    engine.get_task(&id)?;
    let NewStep { description } = NewStep::from_body(&body)?;
    let (_, step) = engine.add_step(&id, &description).await?;
    created(StepAdded {
        step_id: step.id.clone(),
        step,
    })
}

pub async fn update_step(
    State(engine): State<Engine>,
    Path((id, step_id)): Path<(String, String)>,
    body: Body,
) -> ApiResult {
    let task = engine.get_task(&id)?;
    if !task.metadata.steps.iter().any(|s| s.id == step_id) {
        return Err(ApiError::not_found(format!(
            "task {id:?} has no step with id {step_id:?}"
        )));
    }
    let StepChange { status, output } = StepChange::from_body(&body)?;
    let (_, step) = engine.update_step(&id, &step_id, status, output).await?;
    ok(StepBody { step })
}

pub async fn result(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_task(&id)?;
    let report = ResultReport::from_body(&body)?;
    ok(task_body(&engine.set_result(&id, report.into()).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parsing() {
        assert_eq!(
            url_pairs("a=b%20c&d=e+f&g"),
            vec![
                ("a".to_string(), "b c".to_string()),
                ("d".to_string(), "e f".to_string()),
                ("g".to_string(), String::new()),
            ]
        );
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert!(list_query(Some("limit=0")).is_err());
        assert!(list_query(Some("limit=-1")).is_err());
        assert!(list_query(Some("limit=1.5")).is_err());
        assert!(list_query(Some("limit=+5")).is_err());
        assert!(list_query(Some("limit=")).is_err());
        assert_eq!(
            list_query(Some("limit=45304900206886280757248")).unwrap(),
            ListQuery {
                limit: Some(usize::MAX),
                ..ListQuery::default()
            }
        );
        assert!(list_query(Some("status=bogus")).is_err());
        assert_eq!(
            list_query(Some("status=failed&limit=3&parent=p%201")).unwrap(),
            ListQuery {
                status: Some(TaskStatus::Failed),
                limit: Some(3),
                parent: Some("p 1".into()),
            }
        );
        assert!(list_query(Some("parent=")).is_err());
        assert!(with_children(Some("children=true")).unwrap());
        assert!(!with_children(None).unwrap());
        assert!(with_children(Some("children=yes")).is_err());
    }
}
