//! Fields shared by the task and session routes.

use super::body::Body;
use super::error::ApiError;

/// `approval`: manual, safe or auto.
pub fn approval(body: &Body) -> Result<Option<String>, ApiError> {
    match body.opt_str("approval")? {
        None => Ok(None),
        Some(a) if matches!(a.as_str(), "manual" | "safe" | "auto") => Ok(Some(a)),
        Some(a) => Err(ApiError::bad_request(format!(
            "unknown approval {a:?}: use manual, safe or auto"
        ))),
    }
}
