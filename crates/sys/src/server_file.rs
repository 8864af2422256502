//! `server.json`: how a running orchestra tells clients where it answers. The daemon writes
//! it; every client reads it.

use crate::process::pid_alive;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The name of the file a running orchestra writes into its state directory.
pub const SERVER_FILE: &str = "server.json";
/// `server.json`: how clients find a running orchestra. It may hold the token, so it is
/// written 0600.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFile {
    pub url: String,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub pid: Option<u32>,
}

/// Why `server.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ServerFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid server file ({why})")]
    Invalid { path: PathBuf, why: String },
}

impl ServerFile {
    pub fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(SERVER_FILE)
    }

    /// Reads `<state_dir>/server.json`; `Ok(None)` when there is none.
    pub fn read(state_dir: &Path) -> Result<Option<ServerFile>, ServerFileError> {
        let path = ServerFile::path(state_dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ServerFileError::Read { path, source }),
        };
        let invalid = |why: String| ServerFileError::Invalid {
            path: path.clone(),
            why,
        };
        let mut file: ServerFile =
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if file.url.trim().is_empty() {
            return Err(invalid("no url".into()));
        }
        file.token = file.token.filter(|t| !t.is_empty());
        Ok(Some(file))
    }

    /// Writes it atomically (a temporary file renamed over it), 0600.
    pub fn write(&self, state_dir: &Path) -> std::io::Result<()> {
        let path = ServerFile::path(state_dir);
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut f = crate::private::private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(&body)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }

    /// Whether its writer still runs.
    pub fn pid_alive(&self) -> bool {
        self.pid.is_some_and(pid_alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_file_round_trips_privately() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        assert!(ServerFile::read(dir.path()).unwrap().is_none());
        let file = ServerFile {
            url: "http://127.0.0.1:1".into(),
            token: Some("t".into()),
            pid: Some(std::process::id()),
        };
        file.write(dir.path()).unwrap();
        assert_eq!(ServerFile::read(dir.path()).unwrap(), Some(file.clone()));
        let mode = std::fs::metadata(ServerFile::path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(file.pid_alive());
    }

    #[test]
    fn a_server_file_without_url_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(ServerFile::path(dir.path()), r#"{"url":"","pid":1}"#).unwrap();
        let err = ServerFile::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no url"), "{err}");
        std::fs::write(ServerFile::path(dir.path()), "not json").unwrap();
        assert!(ServerFile::read(dir.path()).is_err());
    }
}
