//! The CLI's side of the one client: where orchestra is (flag, env, server.json), its token,
//! and how each failure of a request maps onto a sentence and an exit code.

use super::error::{CliError, CliResult};
pub use orchestra_client::http::Method;
use orchestra_client::http::{Api, ApiError, Caller, Failure};
use orchestra_sys::process::pid_alive;
use orchestra_sys::server_file::{ServerFile, ServerFileError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the base URL came from; shapes the message when nothing answers there.
#[derive(Debug, Clone)]
enum Source {
    /// `--url` or `ORCHESTRA_URL`; the pid when this machine's server.json names that URL.
    Given { pid: Option<u32> },
    /// A running orchestra's `server.json`.
    ServerFile { path: PathBuf, pid: Option<u32> },
}

pub struct Client {
    api: Api,
    source: Source,
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

pub use orchestra_client::http::segment;

/// A 2xx answer: the wire type it reads as, and its text as the server sent it (what
/// `--json` prints).
pub use orchestra_client::http::Reply;

/// `--json`: a reply printed as the server sent it.
pub trait PrintJson {
    /// Prints the server's JSON as it sent it, pretty.
    fn print_json(&self);
}

impl<T> PrintJson for Reply<T> {
    fn print_json(&self) {
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
        Ok(Client {
            api: Api::new(&base, token.or(file_token), Caller::Cli),
            source,
        })
    }

    pub fn base(&self) -> &str {
        self.api.base()
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
        self.api
            .request(method, path, body, expected)
            .map_err(|e| self.cli_error(e))
    }

    /// A GET whose 2xx body is copied to `out` as it arrives (raw bytes, no size cap). A reader
    /// that went away (`… | head`) ends the copy quietly.
    pub fn download(&self, path: &str, out: &mut dyn std::io::Write) -> CliResult<()> {
        use std::io::{ErrorKind, Read};
        let mut body = self.api.open(path, false).map_err(|e| self.cli_error(e))?;
        let mut reader = body.as_reader();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(CliError::server(format!(
                        "GET {path}: cannot read the answer from {}: {e}",
                        self.base()
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

    /// What a failed request says on the command line, and with which exit code. A 4xx is a
    /// refusal; so is a 503 that says why (something the request needs is missing, e.g. the
    /// provider is not installed), and a 502 that says why (a program beyond orchestra failed,
    /// e.g. a push): the server is fine, the request cannot be done. A 500, or
    /// a 5xx that is not orchestra's answer, is a server failure.
    fn cli_error(&self, e: ApiError) -> CliError {
        match e.failure() {
            Failure::Encode(why) => CliError::usage(format!("cannot encode the request: {why}")),
            Failure::Transport {
                method,
                path,
                base,
                cause,
            } => match &self.source {
                Source::ServerFile { path: file, pid } => {
                    let why = match pid.filter(|p| !pid_alive(*p)) {
                        Some(dead) => left_over(file, dead),
                        None => format!("{} names {base}, but {cause}", file.display()),
                    };
                    no_orchestra(&why)
                }
                Source::Given { .. } => CliError::unreachable(format!(
                    "cannot reach orchestra at {base} ({} {path}: {cause}); is it running? start one with `orchestra` or `orchestra serve`",
                    method.as_str()
                )),
            },
            Failure::Unreadable {
                method,
                path,
                base,
                cause,
            } => CliError::server(format!(
                "{} {path}: cannot read the answer from {base}: {cause}",
                method.as_str()
            )),
            Failure::Refused {
                status, sentence, ..
            } => {
                let refused = *status < 500 || (matches!(*status, 502 | 503) && sentence.is_some());
                let words = e.refusal_sentence().unwrap_or_default();
                let error = if refused {
                    CliError::refused(words)
                } else {
                    CliError::server(words)
                };
                error.with_http_status(*status)
            }
            Failure::NotWire {
                method,
                path,
                base,
                status,
                text,
                error,
            } => {
                let what = if serde_json::from_str::<Value>(text).is_ok() {
                    format!("something that is not {}: {}", error.expected, error.reason)
                } else {
                    "something that is not JSON".to_string()
                };
                CliError::server(format!(
                    "{} {path}: {base} answered {status} with {what}; is that URL an orchestra?",
                    method.as_str()
                ))
            }
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
