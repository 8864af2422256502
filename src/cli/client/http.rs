//! The HTTP client: where orchestra is (flag, env, server.json), its token, requests, and how
//! each failure maps onto an exit code.

use super::error::{CliError, CliResult};
use orchestra_sys::process::pid_alive;
use orchestra_sys::server_file::{ServerFile, ServerFileError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest response body read (a task keeps a bounded number of output lines).
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// Where the base URL came from; shapes the message when nothing answers there.
#[derive(Debug, Clone)]
enum Source {
    /// `--url` or `ORCHESTRA_URL`; the pid when this machine's server.json names that URL.
    Given { pid: Option<u32> },
    /// A running orchestra's `server.json`.
    ServerFile { path: PathBuf, pid: Option<u32> },
}

pub struct Client {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
    source: Source,
}

#[derive(Debug, Clone, Copy)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// Reads `DIR/server.json`. `Ok(None)` when there is none.
fn read_server_file(dir: &Path) -> CliResult<Option<ServerFile>> {
    ServerFile::read(dir).map_err(|e| match e {
        ServerFileError::Read { .. } => {
            CliError::unreachable(format!("{e}; pass --url to name the orchestra to use"))
        }
        ServerFileError::Invalid { .. } => {
            CliError::unreachable(format!("{e}; restart orchestra or pass --url"))
        }
    })
}

/// The refusal when no orchestra runs on the state directory, saying `why`.
fn no_orchestra(why: &str) -> CliError {
    CliError::unreachable(format!(
        "no orchestra is running ({why}); start one with `orchestra` or `orchestra serve`, or pass --url"
    ))
}

/// Why a server.json is not believed: its writer has ended.
pub(super) fn left_over(file: &Path, pid: u32) -> String {
    format!(
        "{} is left over from pid {pid}, which is no longer running",
        file.display()
    )
}

/// `host:port` → `http://host:port`; no trailing slash.
fn normalize_url(raw: &str) -> CliResult<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(CliError::usage(
            "--url is empty; pass e.g. --url http://127.0.0.1:4000",
        ));
    }
    let url = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    if !url.starts_with("http://") {
        return Err(CliError::usage(format!(
            "cannot use {url}: this client speaks plain http:// only (orchestra serves plain HTTP)"
        )));
    }
    Ok(url.trim_end_matches('/').to_string())
}

pub use orchestra_proto::wire::path_segment as segment;

/// A 2xx answer: the wire type it reads as, and its text as the server sent it (what
/// `--json` prints).
pub struct Reply<T> {
    pub value: T,
    raw: String,
}

impl<T> Reply<T> {
    /// The answer's text as the server sent it.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Prints the server's JSON as it sent it, pretty.
    pub fn print_json(&self) {
        super::output::json_text(&self.raw);
    }
}

impl Client {
    /// Finds orchestra: `url` (from `--url` or `ORCHESTRA_URL`), else `server.json` in the state
    /// directory. The token is `token` (`--token`/`ORCHESTRA_TOKEN`), else server.json's when
    /// server.json names the same URL (a token is never sent to a server it was not issued by).
    pub fn discover(
        url: Option<&str>,
        state_dir: Option<&Path>,
        token: Option<&str>,
    ) -> CliResult<Client> {
        let token = token.filter(|t| !t.is_empty()).map(str::to_string);
        let dir = orchestra_sys::state_dir::resolve(state_dir);
        let (base, file_token, source) = match url.filter(|u| !u.trim().is_empty()) {
            Some(u) => {
                let base = normalize_url(u)?;
                // Best effort: a matching server.json may supply the token (and the pid).
                let file = dir
                    .as_deref()
                    .ok()
                    .and_then(|d| read_server_file(d).ok().flatten())
                    .filter(|f| normalize_url(&f.url).is_ok_and(|fu| fu == base));
                let pid = file.as_ref().and_then(|f| f.pid);
                (base, file.and_then(|f| f.token), Source::Given { pid })
            }
            None => {
                let dir = dir.map_err(|e| {
                    CliError::unreachable(format!("cannot find orchestra: {e}; or pass --url"))
                })?;
                let Some(file) = read_server_file(&dir)? else {
                    return Err(CliError::unreachable(format!(
                        "no orchestra is running (looked for {}); start one with `orchestra` or `orchestra serve`, or pass --url",
                        dir.join("server.json").display()
                    )));
                };
                // Left by an orchestra that is gone: whatever answers at its URL now (another
                // orchestra, another program) is not this state directory's.
                if let Some(pid) = file.pid.filter(|p| !pid_alive(*p)) {
                    return Err(no_orchestra(&left_over(&ServerFile::path(&dir), pid)));
                }
                let base = normalize_url(&file.url)?;
                let source = Source::ServerFile {
                    path: ServerFile::path(&dir),
                    pid: file.pid,
                };
                (base, file.token, source)
            }
        };
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_send_request(Some(Duration::from_secs(30)))
            .timeout_send_body(Some(Duration::from_secs(30)))
            // Ending a session may wait out its grace period before the answer.
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .timeout_recv_body(Some(Duration::from_secs(60)))
            .user_agent(concat!("orchestra-cli/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Client {
            agent: config.new_agent(),
            base,
            token: token.or(file_token),
            source,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The pid of the orchestra on this machine, when a server.json names its URL.
    pub fn server_pid(&self) -> Option<u32> {
        match &self.source {
            Source::ServerFile { pid, .. } | Source::Given { pid } => *pid,
        }
    }

    /// The orchestra's state directory, when it was found through its server.json.
    pub fn state_dir(&self) -> Option<&Path> {
        match &self.source {
            Source::ServerFile { path, .. } => path.parent(),
            Source::Given { .. } => None,
        }
    }

    /// A GET whose answer is the wire type `T` (`expected` names it, for the error).
    pub fn get<T: DeserializeOwned>(&self, path: &str, expected: &str) -> CliResult<Reply<T>> {
        self.request(Method::Get, path, &(), expected)
    }
    /// A POST with `body` (none for `&()`).
    pub fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
        expected: &str,
    ) -> CliResult<Reply<T>> {
        self.request(Method::Post, path, body, expected)
    }
    pub fn patch<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
        expected: &str,
    ) -> CliResult<Reply<T>> {
        self.request(Method::Patch, path, body, expected)
    }
    pub fn delete<T: DeserializeOwned>(&self, path: &str, expected: &str) -> CliResult<Reply<T>> {
        self.request(Method::Delete, path, &(), expected)
    }

    /// One request; a 2xx answer read as `T`, else the server's error sentence with its exit
    /// code. An answer that is not a `T` is a server failure naming what was expected.
    pub fn request<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &B,
        expected: &str,
    ) -> CliResult<Reply<T>> {
        let payload = serde_json::to_string(body)
            .map_err(|e| CliError::usage(format!("cannot encode the request: {e}")))?;
        let payload = (payload != "null").then_some(payload);
        let mut resp = self.call(method, path, payload)?;
        let status = resp.status().as_u16();
        let text = self.read_text(method, path, &mut resp)?;
        if !(200..300).contains(&status) {
            return Err(self.refusal(method, path, status, &text));
        }
        let value = orchestra_proto::wire::decode(text.as_bytes(), expected).map_err(|e| {
            let what = if serde_json::from_str::<Value>(&text).is_ok() {
                format!("something that is not {}: {}", e.expected, e.reason)
            } else {
                "something that is not JSON".to_string()
            };
            CliError::server(format!(
                "{} {path}: {} answered {status} with {what}; is that URL an orchestra?",
                method.as_str(),
                self.base
            ))
        })?;
        Ok(Reply { value, raw: text })
    }

    /// A GET whose 2xx body is copied to `out` as it arrives (raw bytes, no size cap). A reader
    /// that went away (`… | head`) ends the copy quietly.
    pub fn download(&self, path: &str, out: &mut dyn std::io::Write) -> CliResult<()> {
        use std::io::{ErrorKind, Read};
        let mut resp = self.call(Method::Get, path, None)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let text = self.read_text(Method::Get, path, &mut resp)?;
            return Err(self.refusal(Method::Get, path, status, &text));
        }
        let mut reader = resp.body_mut().as_reader();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(CliError::server(format!(
                        "GET {path}: cannot read the answer from {}: {e}",
                        self.base
                    )));
                }
            };
            match out.write_all(&buf[..n]) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => {
                    return Err(CliError::usage(format!("cannot write to stdout: {e}")));
                }
            }
        }
        match out.flush() {
            Err(e) if e.kind() != ErrorKind::BrokenPipe => {
                Err(CliError::usage(format!("cannot write to stdout: {e}")))
            }
            _ => Ok(()),
        }
    }

    /// Sends one request; any HTTP answer is `Ok`.
    fn call(
        &self,
        method: Method,
        path: &str,
        payload: Option<String>,
    ) -> CliResult<ureq::http::Response<ureq::Body>> {
        let uri = format!("{}{path}", self.base);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let result = match method {
            Method::Get | Method::Delete => {
                let mut rb = match method {
                    Method::Get => self.agent.get(&uri),
                    _ => self.agent.delete(&uri),
                };
                rb = rb.header("Accept", "application/json");
                if let Some(a) = &auth {
                    rb = rb.header("Authorization", a);
                }
                rb.call()
            }
            Method::Post | Method::Patch => {
                let mut rb = match method {
                    Method::Post => self.agent.post(&uri),
                    _ => self.agent.patch(&uri),
                };
                rb = rb.header("Accept", "application/json");
                if let Some(a) = &auth {
                    rb = rb.header("Authorization", a);
                }
                match &payload {
                    Some(p) => rb
                        .header("Content-Type", "application/json")
                        .send(p.as_str()),
                    None => rb.send_empty(),
                }
            }
        };
        result.map_err(|e| self.transport_error(method, path, e))
    }

    fn read_text(
        &self,
        method: Method,
        path: &str,
        resp: &mut ureq::http::Response<ureq::Body>,
    ) -> CliResult<String> {
        resp.body_mut()
            .with_config()
            .limit(MAX_BODY)
            .lossy_utf8(true)
            .read_to_string()
            .map_err(|e| {
                CliError::server(format!(
                    "{} {path}: cannot read the answer from {}: {e}",
                    method.as_str(),
                    self.base
                ))
            })
    }

    /// The error for a non-2xx answer: the server's sentence (`{"error": …}`) when it sent one.
    /// A 4xx is a refusal; so is a 503 that says why (something the request needs is missing,
    /// e.g. the provider is not installed): the server is fine, the request cannot be done.
    /// A 500, or a 5xx that is not orchestra's answer, is a server failure.
    fn refusal(&self, method: Method, path: &str, status: u16, text: &str) -> CliError {
        let ours = orchestra_proto::wire::error_sentence(text.as_bytes());
        let sentence = ours.clone().unwrap_or_else(|| {
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
        let sentence = if status == 401 && self.token.is_none() {
            format!("{sentence}{}", orchestra_proto::wire::TOKEN_HINT)
        } else {
            sentence
        };
        let refused = status < 500 || (status == 503 && ours.is_some());
        let error = if refused {
            CliError::refused(sentence)
        } else {
            CliError::server(sentence)
        };
        error.with_http_status(status)
    }

    fn transport_error(&self, method: Method, path: &str, e: ureq::Error) -> CliError {
        let cause = match &e {
            ureq::Error::ConnectionFailed => "connection failed".to_string(),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                "nothing accepts connections there".to_string()
            }
            ureq::Error::Io(io) => io.to_string(),
            other => other.to_string(),
        };
        match &self.source {
            Source::ServerFile { path: file, pid } => {
                let why = match pid.filter(|p| !pid_alive(*p)) {
                    Some(dead) => left_over(file, dead),
                    None => format!("{} names {}, but {cause}", file.display(), self.base),
                };
                no_orchestra(&why)
            }
            Source::Given { .. } => CliError::unreachable(format!(
                "cannot reach orchestra at {} ({} {path}: {cause}); is it running? start one with `orchestra` or `orchestra serve`",
                self.base,
                method.as_str()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalized() {
        assert_eq!(
            normalize_url("127.0.0.1:4000/").ok().as_deref(),
            Some("http://127.0.0.1:4000")
        );
        assert_eq!(
            normalize_url("http://h:1").ok().as_deref(),
            Some("http://h:1")
        );
        assert!(normalize_url("https://h:1").is_err());
        assert!(normalize_url(" ").is_err());
    }

    #[test]
    fn segments_are_escaped() {
        assert_eq!(segment("ab-12_x.y~"), "ab-12_x.y~");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
    }
}
