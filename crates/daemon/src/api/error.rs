//! Every error leaves as `{"error": "<a sentence a person can act on>"}` with its status.

use crate::engine::EngineError;
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// The same error, said of a part of the body (`variants[1]`).
    pub fn within(self, place: &str) -> ApiError {
        ApiError::new(self.status, format!("{place}: {}", self.message))
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let status = match &e {
            EngineError::Invalid(_) => StatusCode::BAD_REQUEST,
            EngineError::NotFound(_) => StatusCode::NOT_FOUND,
            EngineError::Conflict(_) => StatusCode::CONFLICT,
            EngineError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            EngineError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            EngineError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            EngineError::Upstream(_) => StatusCode::BAD_GATEWAY,
            // Nothing was written; the request can succeed once there is room again.
            EngineError::Store(crate::store::StoreError::Full(_)) => {
                tracing::error!(error = %e, "request refused: the disk is full");
                StatusCode::INSUFFICIENT_STORAGE
            }
            EngineError::Store(_) | EngineError::Internal(_) => {
                tracing::error!(error = %e, "request failed");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        ApiError::new(status, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(self.status, &self.message)
    }
}

pub fn error_response(status: StatusCode, message: &str) -> Response {
    let mut r = (
        status,
        Json(orchestra_proto::wire::ErrorBody {
            error: message.to_string(),
        }),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    r
}

/// Turns the framework's own plain-text or empty error responses (405, 413, 415…) into the
/// JSON shape, keeping their headers (`Allow` on a 405).
pub async fn json_errors(resp: Response) -> Response {
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return resp;
    }
    let (parts, _) = resp.into_parts();
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = parts
                .headers
                .get(header::ALLOW)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(", ");
            format!("method not allowed on this route; allowed: {allow}")
        }
        StatusCode::PAYLOAD_TOO_LARGE => "request body is larger than 1 MiB".to_string(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send the body as application/json".to_string(),
        s => s.canonical_reason().unwrap_or("request failed").to_string(),
    };
    let mut fresh = error_response(status, &message);
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            fresh.headers_mut().insert(k.clone(), v.clone());
        }
    }
    fresh
}
