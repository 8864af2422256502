//! Why `orchestra mcp` could not start serving: each a sentence for the person who set the
//! MCP server up (printed on stderr; stdout is the protocol's channel).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot use the session file {}: {why}", path.display())]
    SessionFile { path: PathBuf, why: String },
    #[error("cannot find the state directory: {0}")]
    StateDir(String),
    #[error("{0}")]
    Daemon(String),
    #[error("{url:?} is not an http:// URL (orchestra serves plain HTTP)")]
    Url { url: String },
    #[error("the MCP connection failed: {0}")]
    Protocol(String),
}
