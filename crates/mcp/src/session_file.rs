//! The session file: `{"url": …, "token": …}` in a file only its owner can read, written by
//! orchestra for an agent session it gives this MCP server to (`--session-file PATH`). The
//! path goes in the agent's MCP configuration, which is not secret; the token stays in the
//! file, never in an argument list or a log.

use crate::error::Error;
use orchestra_client::daemon::Endpoint;
use serde::Deserialize;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    url: String,
    #[serde(default)]
    token: Option<String>,
}

/// Reads the endpoint from `path`, refusing a file that others can read (its token would
/// then be theirs too, as ssh refuses a private key others can read).
pub fn read(path: &Path) -> Result<Endpoint, Error> {
    let fail = |why: String| Error::SessionFile {
        path: path.to_path_buf(),
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(fail(format!(
            "it is readable by others (mode {mode:04o}) and holds a token; make it 0600"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let file: SessionFile = serde_json::from_str(&text)
        .map_err(|e| fail(format!("it is not {{\"url\": …, \"token\": …}}: {e}")))?;
    let url = crate::url::normalize_url(&file.url).map_err(|e| fail(e.to_string()))?;
    Ok(Endpoint {
        url,
        token: file.token.filter(|t| !t.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(dir: &Path, mode: u32, text: &str) -> std::path::PathBuf {
        let p = dir.join("session.json");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn a_private_file_gives_its_url_and_token() {
        let d = tempfile::tempdir().unwrap();
        let p = file(d.path(), 0o600, r#"{"url":"127.0.0.1:4000","token":"t"}"#);
        let e = read(&p).unwrap();
        assert_eq!(e.url, "http://127.0.0.1:4000");
        assert_eq!(e.token.as_deref(), Some("t"));
    }

    #[test]
    fn a_file_others_can_read_or_a_bad_one_is_refused_without_quoting_it() {
        let d = tempfile::tempdir().unwrap();
        let p = file(
            d.path(),
            0o644,
            r#"{"url":"http://x","token":"secret-token"}"#,
        );
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("mode 0644"), "{e}");
        let p = file(d.path(), 0o600, r#"{"token":"secret-token"}"#);
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("missing field `url`"), "{e}");
        assert!(!e.contains("secret-token"), "{e}");
    }
}
