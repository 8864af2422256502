//! Which orchestra this MCP server talks to, found as the CLI finds it: the environment's
//! `ORCHESTRA_URL` (inside an agent's session, with that session's own `ORCHESTRA_TOKEN`),
//! else a session file, else the daemon of the state directory, started if none runs.

use crate::error::Error;
use crate::url::normalize_url;
use orchestra_client::daemon::{self, Endpoint};
use std::path::PathBuf;

/// What the command line and the environment say.
#[derive(Debug, Default, Clone)]
pub struct Where {
    /// `ORCHESTRA_URL`.
    pub url: Option<String>,
    /// `ORCHESTRA_TOKEN` or `--token`.
    pub token: Option<String>,
    /// `--session-file`.
    pub session_file: Option<PathBuf>,
    /// `--state-dir` or `ORCHESTRA_STATE_DIR`.
    pub state_dir: Option<PathBuf>,
}

/// The orchestra to talk to. Blocking (it may start a daemon and wait for it to listen).
pub fn locate(w: &Where) -> Result<Endpoint, Error> {
    let token = w.token.clone().filter(|t| !t.is_empty());
    if let Some(url) = w.url.as_deref().filter(|u| !u.trim().is_empty()) {
        let url = normalize_url(url)?;
        // The token given, else this machine's orchestra's when the URL is its own.
        let token = token.or_else(|| {
            orchestra_sys::state_dir::resolve(w.state_dir.as_deref())
                .ok()
                .and_then(|dir| daemon::token_for_url(&dir, &url))
        });
        return Ok(Endpoint { url, token });
    }
    if let Some(path) = &w.session_file {
        return crate::session_file::read(path);
    }
    let dir = orchestra_sys::state_dir::resolve(w.state_dir.as_deref())
        .map_err(|e| Error::StateDir(e.to_string()))?;
    let (endpoint, _started) = daemon::find_or_start(&dir, &[], token.as_deref())
        .map_err(|e| Error::Daemon(format!("{e:#}")))?;
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_comes_before_the_session_file() {
        let w = Where {
            url: Some("127.0.0.1:9".into()),
            token: Some("t".into()),
            session_file: Some("/nonexistent".into()),
            state_dir: None,
        };
        let e = locate(&w).unwrap();
        assert_eq!(
            (e.url.as_str(), e.token.as_deref()),
            ("http://127.0.0.1:9", Some("t"))
        );
    }
}
