//! `/api/coding-agents/sessions`: the session routes of API.md.

use super::body::Body;
use super::error::ApiError;
use super::requests::{FromBody, Req};
use crate::engine::{Engine, EngineError, HookRefusal, SpawnSession};
use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use orchestra_proto::wire::request::{
    Answer, HOOK_TOKEN_HEADER, HookReport, NewSession, Resize, SendMessage,
};
use orchestra_proto::wire::{MessageBody, MessageList, SessionBody, SessionCreated, SessionList};

type ApiResult = Result<Response, ApiError>;

fn session_body(session: orchestra_proto::wire::SessionInfo) -> SessionBody {
    SessionBody { session }
}

pub async fn spawn(State(engine): State<Engine>, Req(new): Req<NewSession>) -> ApiResult {
    let info = engine.spawn_session(SpawnSession::from(new)).await?;
    Ok((
        StatusCode::CREATED,
        Json(SessionCreated {
            session_id: info.id.clone(),
            session: info,
        }),
    )
        .into_response())
}

pub async fn list(State(engine): State<Engine>) -> Json<SessionList> {
    Json(SessionList {
        sessions: engine.list_sessions(),
    })
}

pub async fn get(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    Ok(Json(session_body(engine.get_session(&id)?)).into_response())
}

/// Ends a session (idempotent); with `?remove=true`, removes an ended one's record.
pub async fn delete(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let mut remove = false;
    for (k, v) in super::tasks::url_pairs(q.as_deref().unwrap_or("")) {
        if k == "remove" {
            remove = flag("remove", &v)?;
        }
    }
    let info = if remove {
        engine.remove_session(&id).await?
    } else {
        engine.delete_session(&id).await?
    };
    Ok(Json(session_body(info)).into_response())
}

/// A query flag: `1`/`true` (or bare) is on, `0`/`false` off.
fn flag(name: &str, v: &str) -> Result<bool, ApiError> {
    match v {
        "1" | "true" | "" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "{name} must be true or false (1 or 0), not {v:?}"
        ))),
    }
}

/// The raw bytes a session printed (`?bytes=N`: only the last N).
pub async fn transcript(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    engine.get_session(&id)?;
    let mut max = None;
    for (k, v) in super::tasks::url_pairs(q.as_deref().unwrap_or("")) {
        if k == "bytes" {
            max = Some(super::tasks::count(&v).ok_or_else(|| {
                ApiError::bad_request(format!("bytes must be a whole number of bytes, not {v:?}"))
            })?);
        }
    }
    let bytes = engine.session_transcript(&id, max).await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
        bytes,
    )
        .into_response())
}

pub async fn send(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_session(&id)?;
    let input = SendMessage::from_body(&body)?;
    let message = engine.send_message(&id, input).await?;
    Ok((StatusCode::CREATED, Json(MessageBody { message })).into_response())
}

pub async fn messages(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    Ok(Json(MessageList {
        messages: engine.session_messages(&id)?,
    })
    .into_response())
}

pub async fn peek(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    engine.get_session(&id)?;
    let mut lines = 0usize;
    let mut ansi = false;
    for (k, v) in super::tasks::url_pairs(q.as_deref().unwrap_or("")) {
        match k.as_str() {
            "lines" => {
                lines = super::tasks::count(&v).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "lines must be a whole number of lines, not {v:?}"
                    ))
                })?
            }
            "ansi" => ansi = flag("ansi", &v)?,
            _ => {}
        }
    }
    // Reading the screen waits for its parser, busy while the session floods: off the
    // async workers.
    let peek = tokio::task::spawn_blocking(move || engine.peek(&id, lines, ansi))
        .await
        .map_err(|e| EngineError::Internal(format!("reading the screen failed: {e}")))??;
    Ok(Json(peek).into_response())
}

pub async fn resize(State(engine): State<Engine>, Path(id): Path<String>, body: Body) -> ApiResult {
    engine.get_session(&id)?;
    let Resize { cols, rows } = Resize::from_body(&body)?;
    Ok(Json(session_body(engine.resize_session(&id, cols, rows).await?)).into_response())
}

pub async fn pause(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    Ok(Json(session_body(engine.pause_session(&id).await?)).into_response())
}

pub async fn resume(State(engine): State<Engine>, Path(id): Path<String>) -> ApiResult {
    Ok(Json(session_body(engine.resume_session(&id).await?)).into_response())
}

pub async fn answer(
    State(engine): State<Engine>,
    principal: Option<axum::Extension<super::rights::Principal>>,
    Path(id): Path<String>,
    body: Body,
) -> ApiResult {
    engine.get_session(&id)?;
    let Answer { option } = Answer::from_body(&body)?;
    if let Some(super::rights::Principal::Session(_)) = principal.as_deref() {
        super::children::may_answer(&engine, &id)?;
    }
    Ok(Json(session_body(engine.answer_prompt(&id, &option).await?)).into_response())
}

/// `POST /sessions/:id/hook`: an event from the agent's own hooks (`orchestra hook EVENT`),
/// with the session's hook token; 401 without one, 403 with another session's or a wrong one.
pub async fn hook(
    State(engine): State<Engine>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
    Req(report): Req<HookReport>,
) -> ApiResult {
    let token = headers.get(HOOK_TOKEN_HEADER).and_then(|v| v.to_str().ok());
    match engine.session_hook(&id, token, report).await {
        Ok(session) => Ok(Json(session_body(session)).into_response()),
        Err(HookRefusal::Engine(e)) => Err(e.into()),
        Err(e @ HookRefusal::Missing) => {
            Err(ApiError::new(StatusCode::UNAUTHORIZED, e.to_string()))
        }
        Err(e @ HookRefusal::Wrong) => Err(ApiError::new(StatusCode::FORBIDDEN, e.to_string())),
    }
}
