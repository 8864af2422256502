//! Requests to the orchestra the TUI is attached to: wire types in and out, the server's
//! `{"error": …}` sentence as the error. Blocking (ureq); callers run it off the UI thread.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Largest answer read (a task keeps a bounded number of output lines).
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// Where the orchestra is and how to be let in.
#[derive(Clone)]
pub struct Api {
    agent: ureq::Agent,
    /// No response timeout: the event stream stays open for as long as the daemon runs.
    streaming: ureq::Agent,
    pub base: String,
    token: Option<String>,
}

#[derive(Debug, Clone, Copy)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

/// Why a request failed: the daemon could not be reached, or it answered with a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    Unreachable(String),
    Refused { status: u16, error: String },
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Unreachable(s) => f.write_str(s),
            ApiError::Refused { error, .. } => f.write_str(error),
        }
    }
}

pub use orchestra_proto::wire::path_segment as segment;

impl Api {
    pub fn new(base: &str, token: Option<String>) -> Api {
        let builder = || {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .proxy(None)
                .timeout_connect(Some(Duration::from_secs(3)))
                .user_agent(concat!("orchestra-tui/", env!("CARGO_PKG_VERSION")))
        };
        let agent = builder()
            .timeout_send_request(Some(Duration::from_secs(30)))
            // Ending a session may wait out its grace period before the answer.
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .timeout_recv_body(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        Api {
            agent,
            streaming: builder().build().new_agent(),
            base: base.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.is_empty()),
        }
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// A GET whose answer is the wire type `T` (`expected` names it, for the error).
    pub fn read<T: DeserializeOwned>(&self, path: &str, expected: &str) -> Result<T, ApiError> {
        let bytes = self.request_bytes(Method::Get, path, None)?;
        self.decode(path, &bytes, expected)
    }

    /// A request with `body` (none for `()`) whose answer is the wire type `T`.
    pub fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        expected: &str,
    ) -> Result<T, ApiError> {
        let payload = serde_json::to_string(body)
            .map_err(|e| ApiError::Unreachable(format!("cannot encode the request: {e}")))?;
        let payload = (payload != "null").then_some(payload);
        let bytes = self.request_bytes(method, path, payload)?;
        self.decode(path, &bytes, expected)
    }

    fn decode<T: DeserializeOwned>(
        &self,
        path: &str,
        bytes: &[u8],
        expected: &str,
    ) -> Result<T, ApiError> {
        orchestra_proto::wire::decode(bytes, expected).map_err(|e| {
            ApiError::Unreachable(format!("{}{path}: {e}; is that an orchestra?", self.base))
        })
    }

    /// One request with a JSON payload; a 2xx answer's body as it is (a transcript is
    /// terminal output).
    pub fn request_bytes(
        &self,
        method: Method,
        path: &str,
        payload: Option<String>,
    ) -> Result<Vec<u8>, ApiError> {
        let mut resp = self.call(&self.agent, method, path, payload)?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| {
                ApiError::Unreachable(format!("cannot read the answer from {}: {e}", self.base))
            })?;
        if !(200..300).contains(&status) {
            let mut error = orchestra_proto::wire::error_sentence(&bytes)
                .unwrap_or_else(|| format!("{path} failed with HTTP {status}"));
            if status == 401 && self.token.is_none() {
                error.push_str(orchestra_proto::wire::TOKEN_HINT);
            }
            return Err(ApiError::Refused { status, error });
        }
        Ok(bytes)
    }

    /// A GET whose body is read as it arrives (the event stream), with no timeout.
    pub fn open_stream(&self, path: &str) -> Result<ureq::Body, ApiError> {
        let resp = self.call(&self.streaming, Method::Get, path, None)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(ApiError::Refused {
                status,
                error: format!("{path} failed with HTTP {status}"),
            });
        }
        Ok(resp.into_body())
    }

    fn call(
        &self,
        agent: &ureq::Agent,
        method: Method,
        path: &str,
        payload: Option<String>,
    ) -> Result<ureq::http::Response<ureq::Body>, ApiError> {
        let uri = format!("{}{path}", self.base);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let result = match method {
            Method::Get | Method::Delete => {
                let mut rb = match method {
                    Method::Get => agent.get(&uri),
                    _ => agent.delete(&uri),
                };
                if let Some(a) = &auth {
                    rb = rb.header("Authorization", a);
                }
                rb.call()
            }
            Method::Post | Method::Patch => {
                let mut rb = match method {
                    Method::Post => agent.post(&uri),
                    _ => agent.patch(&uri),
                };
                if let Some(a) = &auth {
                    rb = rb.header("Authorization", a);
                }
                match payload {
                    Some(p) => rb
                        .header("Content-Type", "application/json")
                        .send(p.as_str()),
                    None => rb.send_empty(),
                }
            }
        };
        result.map_err(|e| {
            ApiError::Unreachable(format!("cannot reach orchestra at {}: {e}", self.base))
        })
    }
}
