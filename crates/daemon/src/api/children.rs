//! What an agent may ask for its children: the rules a session's credential meets on the
//! routes `rights` lets it reach, where the route alone does not decide (the body does).

use super::error::ApiError;
use crate::engine::{Engine, Kinship, SessionGrant};
use axum::http::StatusCode;
use orchestra_proto::prompt::PromptKind;
use orchestra_proto::task::{Answers, Approval};
use orchestra_proto::wire::request::NewTask;

fn forbidden(message: String) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, message)
}

/// `req` as an agent's session may make it: a child of its own task (or of a descendant
/// it names), at no wider an approval preset than the session's own. A task left without a
/// preset gets the session's, since the default could be wider than a parent's `manual`.
pub fn child_task(
    engine: &Engine,
    grant: &SessionGrant,
    mut req: NewTask,
) -> Result<NewTask, ApiError> {
    let Some(own) = grant.task_id.clone() else {
        return Err(forbidden(format!(
            "agent session {} runs no task, so it has nothing to make child tasks of",
            grant.session_id
        )));
    };
    let parent = req.parent_task_id.clone().unwrap_or_else(|| own.clone());
    if engine.kinship(&parent, &own) == Kinship::Unrelated {
        return Err(forbidden(format!(
            "parentTaskId {parent:?} is not task {own} or one of its children; an agent makes children of its own task only"
        )));
    }
    let approval = capped_approval(engine, grant, req.provider_id.as_deref(), req.approval)?;
    // Checks are commands orchestra runs itself when the child is done, asking nobody, as a
    // command provider's are (the repository's own need the user's trust instead).
    if !req.checks.is_empty() && grant.approval != Approval::Auto {
        return Err(forbidden(format!(
            "checks are commands orchestra runs without asking anyone, which only an agent under auto may hand out; this agent is under {}",
            grant.approval
        )));
    }
    // Each variant is a child too, under the same bound.
    for v in &mut req.variants {
        v.approval = Some(capped_approval(
            engine,
            grant,
            Some(&v.provider_id),
            Some(v.approval.unwrap_or(approval)),
        )?);
    }
    req.parent_task_id = Some(parent);
    req.approval = Some(approval);
    Ok(req)
}

/// The preset a child on `provider` gets when asked for `asked`: no wider than the agent's.
fn capped_approval(
    engine: &Engine,
    grant: &SessionGrant,
    provider: Option<&str>,
    asked: Option<Approval>,
) -> Result<Approval, ApiError> {
    let approval = asked.unwrap_or(grant.approval);
    if approval > grant.approval {
        return Err(forbidden(format!(
            "a child task cannot get a wider approval preset ({approval}) than its parent's agent has ({}); ask for {} or less",
            grant.approval, grant.approval
        )));
    }
    if engine.reach(provider, Some(approval)) > grant.approval {
        return Err(forbidden(format!(
            "provider {:?} runs its command without asking anyone, which only an agent under auto may hand out; this agent is under {}",
            provider.unwrap_or_default(),
            grant.approval
        )));
    }
    Ok(approval)
}

/// Whether the agent of `grant` may answer the prompt of session `session_id` (a
/// descendant's, as `rights` checked): only a task made with `answers: "parent"`, and
/// never a login or trust question, nor a permission prompt of a task under `manual`:
/// those stay with the human.
pub fn may_answer(engine: &Engine, session_id: &str) -> Result<(), ApiError> {
    let info = engine.get_session(session_id)?;
    let Some(task) = info
        .task_id
        .as_deref()
        .and_then(|t| engine.get_task(t).ok())
    else {
        return Err(forbidden(format!(
            "session {session_id} runs no task of yours; its questions are the user's"
        )));
    };
    if task.metadata.answers != Answers::Parent {
        return Err(forbidden(format!(
            "task {} sends its questions to the user, not to its parent; create it with answers: \"parent\" to answer them",
            task.id
        )));
    }
    let Some(prompt) = &info.prompt else {
        return Ok(()); // the engine says there is nothing to answer
    };
    let manual = task.metadata.approval == Some(Approval::Manual);
    match prompt.kind {
        PromptKind::Login | PromptKind::Trust => Err(forbidden(format!(
            "task {} asks a {} question, which only the user answers",
            task.id,
            prompt.kind.as_str()
        ))),
        PromptKind::Permission if manual => Err(forbidden(format!(
            "task {} runs under manual, so its permission prompts go to the user only",
            task.id
        ))),
        _ => Ok(()),
    }
}
