//! Delegation: a task with `delegate` gets orchestra's MCP server (`orchestra mcp`) for its
//! session, the way its CLI takes one (the provider table's `mcp_args`, `mcp_config`,
//! `mcp_server`), so that the agent can hand work to other agents as children of its task.
//!
//! The server reaches the daemon with the session's own credential, never through its command
//! line (which `ps` shows) nor its environment (CLIs give MCP servers a filtered one: Codex CLI
//! only a short list of variables): a per-session file `{"url", "token"}`, 0600 in the private
//! state directory, named by `--session-file` and removed with the session. Nothing is written
//! to the user's own configuration.

use std::path::{Path, PathBuf};

/// The directory, in the state directory, of the files handed to delegating sessions.
const DIR: &str = "mcp";

/// Writes session `session_id`'s server file, `<state>/mcp/<session>.json` (0600): the URL
/// and the credential `orchestra mcp --session-file` reaches the daemon with.
pub(crate) fn write_session_file(
    state_dir: &Path,
    session_id: &str,
    url: &str,
    token: &str,
) -> Option<PathBuf> {
    let text = serde_json::json!({ "url": url, "token": token }).to_string();
    write(state_dir, &format!("{session_id}.json"), &text)
}

/// Writes the CLI's own MCP configuration for the session (`{mcp_config}`),
/// `<state>/mcp/<session>.config.json` (0600).
pub(crate) fn write_config(state_dir: &Path, session_id: &str, text: &str) -> Option<PathBuf> {
    write(state_dir, &format!("{session_id}.config.json"), text)
}

fn write(state_dir: &Path, name: &str, text: &str) -> Option<PathBuf> {
    match orchestra_sys::private::write_private_file(&state_dir.join(DIR), name, text.as_bytes()) {
        Ok(path) => Some(path),
        Err(e) => {
            tracing::warn!(error = %e, file = name, "cannot write a delegating session's file");
            None
        }
    }
}

/// Removes a session's files once its CLI has ended (its credential is withdrawn then too).
pub(crate) fn remove_files(state_dir: &Path, session_id: &str) {
    let dir = state_dir.join(DIR);
    for name in [
        format!("{session_id}.json"),
        format!("{session_id}.config.json"),
    ] {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// `content` with the provider's `{mcp_servers}` filled in: `servers` (our entry, keyed by
/// its name) for a delegating session, an empty object otherwise.
pub(crate) fn fill_servers(content: &str, servers: Option<&str>) -> String {
    content.replace(crate::providers::MCP_SERVERS, servers.unwrap_or("{}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_session_file_is_private_and_goes_with_the_session() {
        let state = tempfile::tempdir().expect("tempdir");
        let file =
            write_session_file(state.path(), "s1", "http://127.0.0.1:9", "t0k").expect("written");
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
        assert_eq!(mode & 0o077, 0);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
        assert_eq!(
            v,
            serde_json::json!({"url": "http://127.0.0.1:9", "token": "t0k"})
        );
        let config = write_config(state.path(), "s1", "{}").expect("written");
        remove_files(state.path(), "s1");
        assert!(!file.exists() && !config.exists());
    }

    #[test]
    fn servers_fill_in_or_leave_an_empty_object() {
        let t = r#"{"mcp":{mcp_servers}}"#;
        assert_eq!(fill_servers(t, None), r#"{"mcp":{}}"#);
        assert_eq!(
            fill_servers(t, Some(r#"{"orchestra":{}}"#)),
            r#"{"mcp":{"orchestra":{}}}"#
        );
    }
}
