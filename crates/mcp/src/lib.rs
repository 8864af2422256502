//! `orchestra mcp`: orchestra's MCP server on stdio, so that coding agents can hand work to
//! other agents (create a task, wait for it, read its result and diff, merge it) through the
//! tools they already speak. A front end like the TUI: it knows the protocol's types and
//! routes (`orchestra-proto`) and reaches the daemon through the one client
//! (`orchestra-client`), never the daemon's code. See docs/mcp.md.
//!
//! stdout is the protocol's channel: nothing else may write there (logs go to a file).

mod endpoint;
mod error;
mod feed;
pub mod log;
mod remote;
mod server;
mod session_file;
pub mod tools;
mod url;

pub use endpoint::{Where, locate};
pub use error::Error;

use rmcp::ServiceExt;

/// Serves MCP on stdin/stdout against the orchestra at `endpoint` until the client closes
/// the connection.
pub async fn serve(endpoint: orchestra_client::daemon::Endpoint) -> Result<(), Error> {
    let remote = remote::Remote::new(&endpoint);
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let ctx = tools::Ctx {
        feed: feed::Feed::new(remote.clone()),
        remote,
        reported: tools::Reported::default(),
        cwd,
    };
    tracing::info!(url = %endpoint.url, "serving MCP on stdio");
    let running = server::Server::new(ctx)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Protocol(e.to_string()))?;
    let why = running
        .waiting()
        .await
        .map_err(|e| Error::Protocol(e.to_string()))?;
    tracing::info!(?why, "the MCP client closed the connection");
    Ok(())
}
