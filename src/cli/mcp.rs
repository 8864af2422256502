//! `orchestra mcp`: orchestra's MCP server on stdio (crates/mcp), for a coding agent to hand
//! work to other agents. This module only reads the command line and the environment.

use super::GlobalArgs;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

/// `orchestra mcp`
#[derive(Debug, Args)]
#[command(after_long_help = MCP_HELP)]
pub struct McpArgs {
    /// A file `{"url": …, "token": …}`, mode 0600, naming the orchestra to use and its
    /// credential (orchestra writes one for each agent session it gives this server to);
    /// used when ORCHESTRA_URL is not set.
    #[arg(long, value_name = "PATH")]
    pub session_file: Option<PathBuf>,
    /// `install`: the server added to an agent's own configuration (`mcp_install.rs`);
    /// without one, it serves.
    #[command(subcommand)]
    pub command: Option<super::mcp_install::McpCommand>,
}

const MCP_HELP: &str = "\
Which orchestra it talks to: ORCHESTRA_URL with ORCHESTRA_TOKEN when set (inside an
orchestra session, that session's own credential), else --session-file, else the orchestra of
the state directory, started in the background if none runs. Logs go to
<state-dir>/logs/mcp.log; stdout carries the protocol only. See docs/mcp.md.

Add it to Claude Code:  claude mcp add orchestra -- orchestra mcp
Add it to Codex:        codex mcp add orchestra -- orchestra mcp";

/// Serves MCP on stdin/stdout until the client goes.
pub async fn run(global: &GlobalArgs, args: &McpArgs) -> Result<()> {
    orchestra_mcp::log::init(global.state_dir.as_deref());
    let place = orchestra_mcp::Where {
        url: std::env::var("ORCHESTRA_URL").ok(),
        token: global.token.clone(),
        session_file: args.session_file.clone(),
        state_dir: global.state_dir.clone(),
    };
    // Finding (or starting) the daemon blocks: short HTTP calls, a wait for it to listen.
    let endpoint = tokio::task::spawn_blocking(move || orchestra_mcp::locate(&place))
        .await
        .context("finding orchestra failed")??;
    orchestra_mcp::serve(endpoint).await?;
    Ok(())
}
