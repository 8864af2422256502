//! Fields shared by the task and session routes.

use super::body::Body;
use super::error::ApiError;
use crate::wire::Approval;

/// `approval`: manual, safe or auto.
pub fn approval(body: &Body) -> Result<Option<Approval>, ApiError> {
    body.opt_str("approval")?
        .map(|a| a.parse::<Approval>().map_err(ApiError::bad_request))
        .transpose()
}
