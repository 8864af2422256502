//! The request body: at most 1 MiB of JSON object, read field by field with clear errors.

use super::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde_json::{Map, Value};

pub const MAX_BODY: usize = 1024 * 1024;

/// A JSON object body. An empty body reads as `{}`, so a missing field is named as such.
pub struct Body(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            let status = e.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(status, "request body is larger than 1 MiB")
            } else {
                ApiError::bad_request(format!("could not read the request body: {e}"))
            }
        })?;
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(Body(Map::new()));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => Ok(Body(m)),
            Ok(_) => Err(ApiError::bad_request("request body must be a JSON object")),
            Err(e) => Err(ApiError::bad_request(format!(
                "request body is not valid JSON: {e}"
            ))),
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Body {
    /// A field that may be absent; `null` counts as absent.
    fn field(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(ApiError::bad_request(format!(
                "`{key}` must be a string, not {}",
                type_name(v)
            ))),
        }
    }

    pub fn str(&self, key: &str) -> Result<String, ApiError> {
        self.opt_str(key)?
            .ok_or_else(|| ApiError::bad_request(format!("missing field `{key}` (a string)")))
    }

    /// A string that must have something in it.
    pub fn non_empty_str(&self, key: &str) -> Result<String, ApiError> {
        let s = self.str(key)?;
        if s.trim().is_empty() {
            return Err(ApiError::bad_request(format!("`{key}` must not be empty")));
        }
        Ok(s)
    }

    pub fn opt_f64(&self, key: &str) -> Result<Option<f64>, ApiError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_f64()
                .map(Some)
                .ok_or_else(|| ApiError::bad_request(format!("`{key}` is not a usable number"))),
            Some(v) => Err(ApiError::bad_request(format!(
                "`{key}` must be a number, not {}",
                type_name(v)
            ))),
        }
    }

    pub fn opt_u16(&self, key: &str, min: u16, max: u16) -> Result<Option<u16>, ApiError> {
        Ok(self
            .opt_whole(key, min.into(), max.into())?
            .map(|n| n as u16))
    }

    /// A whole number from `min` to `max`, if given.
    pub fn opt_whole(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ApiError> {
        match self.opt_f64(key)? {
            None => Ok(None),
            Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(Some(n as u64)),
            Some(_) => Err(ApiError::bad_request(format!(
                "`{key}` must be a whole number from {min} to {max}"
            ))),
        }
    }

    pub fn bool(&self, key: &str) -> Result<bool, ApiError> {
        self.opt_bool(key)?
            .ok_or_else(|| ApiError::bad_request(format!("missing field `{key}` (true or false)")))
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(ApiError::bad_request(format!(
                "`{key}` must be true or false, not {}",
                type_name(v)
            ))),
        }
    }

    pub fn opt_str_list(&self, key: &str) -> Result<Option<Vec<String>>, ApiError> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ApiError::bad_request(format!(
                        "`{key}` must be an array of strings; it holds {}",
                        type_name(other)
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(ApiError::bad_request(format!(
                "`{key}` must be an array of strings, not {}",
                type_name(v)
            ))),
        }
    }
}
