//! Fields shared by the task and session routes.

use super::body::Body;
use super::error::ApiError;
use orchestra_proto::wire::Approval;

/// `approval`: manual, safe or auto.
pub fn approval(body: &Body) -> Result<Option<Approval>, ApiError> {
    body.opt_str("approval")?
        .map(|a| a.parse::<Approval>().map_err(ApiError::bad_request))
        .transpose()
}

/// `option` of an answer: an option's key (a number is taken as its digits).
pub fn option(body: &Body) -> Result<String, ApiError> {
    match body.0.get("option") {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(ApiError::bad_request(
            "`option` must be a string (an option's key)",
        )),
        None => Err(ApiError::bad_request(
            "missing field `option` (the key of one of the prompt's options)",
        )),
    }
}
