//! The one HTTP client of orchestra's API, used by the CLI and the TUI alike: requests carry
//! wire types out and in, the token goes in `Authorization`, and every failure is an
//! [`ApiError`] that keeps what each front end needs to say it its own way. Blocking (ureq);
//! async callers run it on a blocking thread.

use orchestra_proto::wire::{DecodeError, TOKEN_HINT, decode, error_sentence};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

pub use orchestra_proto::wire::path_segment as segment;

/// Largest answer read (a task keeps a bounded number of output lines).
const MAX_BODY: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// Why a request did not give the answer asked for (boxed: it travels in every `Result`).
#[derive(Debug, Clone)]
pub struct ApiError(Box<Failure>);

/// What went wrong, with what each front end needs to say it its own way.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The request could not be encoded as JSON.
    Encode(String),
    /// Nothing answered: `cause` says why in a few words ("nothing accepts connections there").
    Transport {
        method: Method,
        path: String,
        base: String,
        cause: String,
    },
    /// It answered, but the answer could not be read to its end.
    Unreadable {
        method: Method,
        path: String,
        base: String,
        cause: String,
    },
    /// It answered with a status that is not 2xx: its `{"error": …}` sentence when it sent
    /// one, and the answer's text.
    Refused {
        method: Method,
        path: String,
        status: u16,
        sentence: Option<String>,
        text: String,
        /// A 401 to a request sent without a token: the sentence gets the hint where to find it.
        tokenless: bool,
    },
    /// A 2xx answer that is not the wire type asked for (is that an orchestra?).
    NotWire {
        method: Method,
        path: String,
        base: String,
        status: u16,
        text: String,
        error: DecodeError,
    },
}

impl From<Failure> for ApiError {
    fn from(f: Failure) -> Self {
        ApiError(Box::new(f))
    }
}

impl ApiError {
    pub fn failure(&self) -> &Failure {
        &self.0
    }

    /// The sentence for a refusal: the server's own, else the status; with the token hint
    /// on a 401 sent without one.
    pub fn refusal_sentence(&self) -> Option<String> {
        let Failure::Refused {
            method,
            path,
            status,
            sentence,
            text,
            tokenless,
        } = self.failure()
        else {
            return None;
        };
        let mut out = sentence.clone().unwrap_or_else(|| {
            let snippet: String = text.trim().chars().take(200).collect();
            if snippet.is_empty() {
                format!("{} {path} failed with HTTP {status}", method.as_str())
            } else {
                format!(
                    "{} {path} failed with HTTP {status}: {snippet}",
                    method.as_str()
                )
            }
        });
        if *status == 401 && *tokenless {
            out.push_str(TOKEN_HINT);
        }
        Some(out)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.failure() {
            Failure::Encode(e) => write!(f, "cannot encode the request: {e}"),
            Failure::Transport { base, cause, .. } => {
                write!(f, "cannot reach orchestra at {base}: {cause}")
            }
            Failure::Unreadable { base, cause, .. } => {
                write!(f, "cannot read the answer from {base}: {cause}")
            }
            Failure::Refused { .. } => f.write_str(&self.refusal_sentence().unwrap_or_default()),
            Failure::NotWire {
                base, path, error, ..
            } => write!(f, "{base}{path}: {error}; is that an orchestra?"),
        }
    }
}

impl std::error::Error for ApiError {}

/// A 2xx answer: the wire type it reads as, and its text as the server sent it.
#[derive(Debug, Clone)]
pub struct Reply<T> {
    pub value: T,
    pub raw: String,
}

/// Which front end is asking, for the `User-Agent` and its timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Cli,
    Tui,
    /// `orchestra mcp`: an agent's tool calls, with the CLI's patience.
    Mcp,
}

/// An orchestra's API: where it is and how to be let in.
#[derive(Clone)]
pub struct Api {
    agent: ureq::Agent,
    /// No response timeout: the event stream stays open for as long as the daemon runs.
    streaming: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Api").field("base", &self.base).finish()
    }
}

impl Api {
    /// `base` is `http://host:port` (a trailing `/` is dropped); an empty token is none.
    pub fn new(base: &str, token: Option<String>, caller: Caller) -> Api {
        let user_agent = match caller {
            Caller::Cli => concat!("orchestra-cli/", env!("CARGO_PKG_VERSION")),
            Caller::Tui => concat!("orchestra-tui/", env!("CARGO_PKG_VERSION")),
            Caller::Mcp => concat!("orchestra-mcp/", env!("CARGO_PKG_VERSION")),
        };
        let connect = match caller {
            Caller::Cli | Caller::Mcp => Duration::from_secs(5),
            // The TUI tries again by itself: it gives up on a dead address sooner.
            Caller::Tui => Duration::from_secs(3),
        };
        let builder = || {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .proxy(None)
                .timeout_connect(Some(connect))
                .user_agent(user_agent)
        };
        let agent = builder()
            .timeout_send_request(Some(Duration::from_secs(30)))
            .timeout_send_body(Some(Duration::from_secs(30)))
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

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// A GET whose answer is the wire type `T` (`expected` names it, for the error).
    pub fn read<T: DeserializeOwned>(&self, path: &str, expected: &str) -> Result<T, ApiError> {
        Ok(self.request(Method::Get, path, &(), expected)?.value)
    }

    /// A request with `body` (none for `&()`) whose answer is the wire type `T`.
    pub fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        expected: &str,
    ) -> Result<T, ApiError> {
        Ok(self.request(method, path, body, expected)?.value)
    }

    /// A request with `body` (none for `&()`); the answer as `T` and as the text it came as.
    pub fn request<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        expected: &str,
    ) -> Result<Reply<T>, ApiError> {
        let payload = serde_json::to_string(body)
            .map_err(|e| ApiError::from(Failure::Encode(e.to_string())))?;
        let payload = (payload != "null").then_some(payload);
        let (status, bytes) = self.exchange(method, path, payload)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let value = decode(&bytes, expected).map_err(|error| {
            ApiError::from(Failure::NotWire {
                method,
                path: path.to_string(),
                base: self.base.clone(),
                status,
                text: text.clone(),
                error,
            })
        })?;
        Ok(Reply { value, raw: text })
    }

    /// One request with a JSON payload; a 2xx answer's body as it is (a transcript is
    /// terminal output), with its status.
    pub fn exchange(
        &self,
        method: Method,
        path: &str,
        payload: Option<String>,
    ) -> Result<(u16, Vec<u8>), ApiError> {
        let mut resp = self.call(&self.agent, method, path, payload)?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| {
                ApiError::from(Failure::Unreadable {
                    method,
                    path: path.to_string(),
                    base: self.base.clone(),
                    cause: e.to_string(),
                })
            })?;
        if !(200..300).contains(&status) {
            return Err(self.refused(method, path, status, &bytes));
        }
        Ok((status, bytes))
    }

    /// A 2xx body as it is.
    pub fn request_bytes(
        &self,
        method: Method,
        path: &str,
        payload: Option<String>,
    ) -> Result<Vec<u8>, ApiError> {
        Ok(self.exchange(method, path, payload)?.1)
    }

    /// A GET whose 2xx body is read as it arrives. `streaming`: with no timeout (the event
    /// stream); else with the usual ones (a download).
    pub fn open(&self, path: &str, streaming: bool) -> Result<ureq::Body, ApiError> {
        let agent = if streaming {
            &self.streaming
        } else {
            &self.agent
        };
        let mut resp = self.call(agent, Method::Get, path, None)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let bytes = resp
                .body_mut()
                .with_config()
                .limit(MAX_BODY)
                .read_to_vec()
                .unwrap_or_default();
            return Err(self.refused(Method::Get, path, status, &bytes));
        }
        Ok(resp.into_body())
    }

    fn refused(&self, method: Method, path: &str, status: u16, bytes: &[u8]) -> ApiError {
        Failure::Refused {
            method,
            path: path.to_string(),
            status,
            sentence: error_sentence(bytes),
            text: String::from_utf8_lossy(bytes).into_owned(),
            tokenless: self.token.is_none(),
        }
        .into()
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
                rb = rb.header("Accept", "application/json");
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
                rb = rb.header("Accept", "application/json");
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
            Failure::Transport {
                method,
                path: path.to_string(),
                base: self.base.clone(),
                cause: transport_cause(&e),
            }
            .into()
        })
    }
}

/// Why nothing answered, in a few words.
fn transport_cause(e: &ureq::Error) -> String {
    match e {
        ureq::Error::ConnectionFailed => "connection failed".to_string(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "nothing accepts connections there".to_string()
        }
        ureq::Error::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}
