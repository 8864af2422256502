//! A client of the soaked daemon.

use super::{API, STEP};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A client of the daemon: one keep-alive connection per thread, every status an answer.
pub(super) struct Api {
    base: String,
    http: ureq::Agent,
}

pub(super) type Answer = Result<(u16, Value), String>;

impl Api {
    pub(super) fn new(addr: &str) -> Api {
        Api {
            base: format!("http://{addr}{API}"),
            http: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .proxy(None)
                .timeout_global(Some(Duration::from_secs(120)))
                .build()
                .new_agent(),
        }
    }

    pub(super) fn call(&self, method: &str, path: &str, body: Option<Value>) -> Answer {
        let url = format!("{}{path}", self.base);
        super::super::http_request(&self.http, method, &url, body)
    }

    /// A call that must answer `want`; its body.
    pub(super) fn expect(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        want: u16,
    ) -> Result<Value, String> {
        let (status, v) = self.call(method, path, body)?;
        if status == want {
            Ok(v)
        } else {
            Err(format!("{method} {path}: {status} {v}"))
        }
    }

    /// Polls `path` until `ok` holds for its body; the last body either way.
    pub(super) fn wait_for(
        &self,
        path: &str,
        what: &str,
        ok: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + STEP;
        loop {
            let v = self.expect("GET", path, None, 200)?;
            if ok(&v) {
                return Ok(v);
            }
            if Instant::now() > deadline {
                return Err(format!("{path} never {what}: {v}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
