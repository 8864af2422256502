//! Where `orchestra mcp` logs: `<state-dir>/logs/mcp.log`, appended by every MCP server of
//! the machine (each line carries its pid). Never stdout, which is the protocol's channel;
//! never the token (the client's `Api` does not print it). `ORCHESTRA_LOG` filters, as for
//! the daemon.

use std::path::Path;

pub const LOG_FILE: &str = "mcp.log";

/// Logs to the state directory's `logs/mcp.log` when it can be opened; else nowhere.
pub fn init(state_dir: Option<&Path>) {
    let Ok(dir) = orchestra_sys::state_dir::resolve(state_dir) else {
        return;
    };
    let logs = dir.join("logs");
    if orchestra_sys::private::create_private_dir(&dir).is_err()
        || orchestra_sys::private::create_private_dir(&logs).is_err()
    {
        return;
    }
    let Ok(file) = orchestra_sys::private::private_file()
        .create(true)
        .append(true)
        .open(logs.join(LOG_FILE))
    else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ORCHESTRA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let pid = std::process::id();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    tracing::info!(pid, "orchestra mcp started");
}
