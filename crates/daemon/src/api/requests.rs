//! Every request body becomes its `orchestra-proto` type here, and only here: the CLI and the
//! TUI send those types, the handlers receive them, the engine takes them. The body is read
//! field by field (not with serde's derive) so that each wrong field gets its own sentence,
//! the 400s of the API contract.
//!
//! A handler that has nothing to check first takes [`Req<T>`], an axum extractor. One that must
//! answer 404 for an unknown id before it looks at the body (the contract's order) takes the
//! raw [`Body`] and decodes it after that check with [`FromBody::from_body`].

use super::body::Body;
use super::error::ApiError;
use axum::extract::{FromRequest, Request};
use orchestra_proto::task::{StepStatus, TaskStatus, VariantSpec};
use orchestra_proto::wire::Approval;
use orchestra_proto::wire::request::{
    Answer, ContinueTask, Gc, HookReport, NewSession, NewStep, NewTask, OutputLines, PickVariant,
    Resize, ResultReport, SendMessage, StepChange, TaskChange, TrustPath,
};

/// Terminal sizes we accept: anything a real terminal could be.
pub const MAX_COLS: u16 = 1000;
pub const MAX_ROWS: u16 = 500;

/// A request type read from a JSON object body.
pub trait FromBody: Sized {
    fn from_body(body: &Body) -> Result<Self, ApiError>;
}

/// The body decoded into `T` before the handler runs; a wrong body is refused with its
/// sentence (400), a body that is too large with 413.
pub struct Req<T>(pub T);

impl<S: Send + Sync, T: FromBody> FromRequest<S> for Req<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = Body::from_request(req, state).await?;
        T::from_body(&body).map(Req)
    }
}

/// `approval`: manual, safe or auto.
fn approval(body: &Body) -> Result<Option<Approval>, ApiError> {
    body.opt_str("approval")?
        .map(|a| a.parse::<Approval>().map_err(ApiError::bad_request))
        .transpose()
}

impl FromBody for NewTask {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(NewTask {
            name: body.non_empty_str("name")?,
            // Whether the provider needs one is the engine's call.
            description: body.opt_str("description")?.unwrap_or_default(),
            provider_id: body.opt_str("providerId")?,
            working_directory: body.opt_str("workingDirectory")?,
            required_capabilities: body
                .opt_str_list("requiredCapabilities")?
                .unwrap_or_default(),
            approval: approval(body)?,
            isolation: body
                .opt_str("isolation")?
                .map(|s| s.parse().map_err(ApiError::bad_request))
                .transpose()?,
            base_ref: body.opt_str("baseRef")?.filter(|s| !s.is_empty()),
            parent_task_id: body.opt_str("parentTaskId")?,
            answers: body
                .opt_str("answers")?
                .map(|s| s.parse().map_err(ApiError::bad_request))
                .transpose()?,
            delegate: body.opt_bool("delegate")?,
            checks: checks(body)?.unwrap_or_default(),
            max_attempts: body.opt_whole("maxAttempts", 1, 20)?.map(|n| n as u32),
            check_timeout_seconds: body.opt_whole("checkTimeoutSeconds", 1, 86_400)?,
            variants: variants(body)?,
        })
    }
}

/// `checks`, if given: commands, none of them blank (`[]`: none).
fn checks(body: &Body) -> Result<Option<Vec<String>>, ApiError> {
    let checks = body.opt_str_list("checks")?;
    if checks.iter().flatten().any(|c| c.trim().is_empty()) {
        return Err(ApiError::bad_request(
            "`checks` holds a blank command: give each check as the command line to run",
        ));
    }
    Ok(checks)
}

/// `variants`: `[{providerId, approval?}, …]`.
fn variants(body: &Body) -> Result<Vec<VariantSpec>, ApiError> {
    let items = match body.0.get("variants") {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::bad_request(
                "`variants` must be an array of {\"providerId\": …, \"approval\"?: …}",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let serde_json::Value::Object(fields) = item else {
                return Err(ApiError::bad_request(format!(
                    "`variants[{i}]` must be an object with `providerId` (and `approval`)"
                )));
            };
            let at = Body(fields.clone());
            if let Some(unknown) = fields
                .keys()
                .find(|k| !matches!(k.as_str(), "providerId" | "approval"))
            {
                return Err(ApiError::bad_request(format!(
                    "`variants[{i}]`: unknown field `{unknown}` (use providerId and approval)"
                )));
            }
            let place = format!("variants[{i}]");
            Ok(VariantSpec {
                provider_id: at
                    .non_empty_str("providerId")
                    .map_err(|e| e.within(&place))?,
                approval: approval(&at).map_err(|e| e.within(&place))?,
            })
        })
        .collect()
}

impl FromBody for TaskChange {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        let status = body
            .opt_str("status")?
            .map(|s| s.parse::<TaskStatus>().map_err(ApiError::bad_request))
            .transpose()?;
        // Its range is the engine's to check (for every caller), after the task's own 404.
        let change = TaskChange {
            status,
            progress: body.opt_f64("progress")?,
            error: body.opt_str("error")?,
            name: body.opt_str("name")?,
            description: body.opt_str("description")?,
            provider_id: body.opt_str("providerId")?,
            approval: approval(body)?,
            isolation: body
                .opt_str("isolation")?
                .map(|s| s.parse().map_err(ApiError::bad_request))
                .transpose()?,
            base_ref: body.opt_str("baseRef")?,
            // `null`, as for every field, is the field left out.
            checks: checks(body)?,
            max_attempts: body.opt_whole("maxAttempts", 1, 20)?.map(|n| n as u32),
        };
        if change == TaskChange::default() {
            return Err(ApiError::bad_request(
                "nothing to change: give at least one of status, progress, error, name, description, providerId, approval, isolation, baseRef, checks, maxAttempts",
            ));
        }
        Ok(change)
    }
}

impl FromBody for PickVariant {
    /// `variant`: a label (`codex`, `codex-2`) or a variant's task id.
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(PickVariant {
            variant: body.non_empty_str("variant")?,
        })
    }
}

impl FromBody for Answer {
    /// `option`: an option's key (a number is taken as its digits).
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        let option = match body.0.get("option") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "`option` must be a string (an option's key)",
                ));
            }
            None => {
                return Err(ApiError::bad_request(
                    "missing field `option` (the key of one of the prompt's options)",
                ));
            }
        };
        Ok(Answer { option })
    }
}

impl FromBody for ContinueTask {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(ContinueTask {
            message: body.opt_str("message")?,
        })
    }
}

impl FromBody for OutputLines {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(OutputLines {
            output: body.str("output")?,
        })
    }
}

impl FromBody for NewStep {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(NewStep {
            description: body.non_empty_str("description")?,
        })
    }
}

impl FromBody for StepChange {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(StepChange {
            status: body
                .str("status")?
                .parse::<StepStatus>()
                .map_err(ApiError::bad_request)?,
            output: body.opt_str("output")?,
        })
    }
}

impl FromBody for ResultReport {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(ResultReport {
            success: body.bool("success")?,
            summary: body.str("summary")?,
            files_modified: body.opt_str_list("filesModified")?.unwrap_or_default(),
            files_created: body.opt_str_list("filesCreated")?.unwrap_or_default(),
            error: body.opt_str("error")?,
        })
    }
}

impl FromBody for NewSession {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(NewSession {
            task: body.opt_str("task")?,
            provider_id: body.opt_str("providerId")?,
            working_directory: body.opt_str("workingDirectory")?,
            cols: body.opt_u16("cols", 2, MAX_COLS)?,
            rows: body.opt_u16("rows", 2, MAX_ROWS)?,
            approval: approval(body)?,
        })
    }
}

impl FromBody for SendMessage {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        match (body.opt_str("text")?, body.opt_str_list("keys")?) {
            (Some(_), Some(_)) => Err(ApiError::bad_request(
                "give either `text` or `keys`, not both",
            )),
            (None, None) => Err(ApiError::bad_request(
                "missing field: give `text` (a string) or `keys` (an array of key names)",
            )),
            (Some(t), None) => Ok(SendMessage::Text(t)),
            (None, Some(k)) if k.is_empty() => {
                Err(ApiError::bad_request("`keys` must not be empty"))
            }
            (None, Some(k)) => Ok(SendMessage::Keys(k)),
        }
    }
}

impl FromBody for Resize {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        let need = |k: &str, max: u16| -> Result<u16, ApiError> {
            body.opt_u16(k, 2, max)?.ok_or_else(|| {
                ApiError::bad_request(format!(
                    "missing field `{k}` (a whole number from 2 to {max})"
                ))
            })
        };
        Ok(Resize {
            cols: need("cols", MAX_COLS)?,
            rows: need("rows", MAX_ROWS)?,
        })
    }
}

impl FromBody for HookReport {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(HookReport {
            event: body.str("event")?,
            message: body.opt_str("message")?,
            notification_type: body.opt_str("notificationType")?,
            asks: body.opt_str("asks")?,
            input_messages: body.opt_str_list("inputMessages")?,
        })
    }
}

impl FromBody for TrustPath {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        Ok(TrustPath {
            path: body.str("path")?,
        })
    }
}

impl FromBody for Gc {
    fn from_body(body: &Body) -> Result<Self, ApiError> {
        let secs = body
            .opt_f64("olderThanSeconds")?
            .unwrap_or(Gc::DEFAULT_OLDER_THAN_SECS);
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(ApiError::bad_request(
                "olderThanSeconds must be a number of seconds, 0 or more",
            ));
        }
        Ok(Gc {
            older_than_seconds: secs,
        })
    }
}
