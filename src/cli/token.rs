//! `orchestra token`: prints the token that lets a client into the orchestra of a state
//! directory. The TUI, the CLI and the agents' hooks on this machine find it by themselves;
//! it is for a client elsewhere (`orchestra --url` through an ssh tunnel, a script, a web
//! page's user) to be given, through `ORCHESTRA_TOKEN` rather than a flag `ps` would show.
//!
//! Only whoever can read the state directory (its owner, and root) can print it: that is
//! what keeps every other account on the machine out.

use crate::cli::client::error::{CliError, CliResult};
use orchestra_sys::server_file::ServerFile;
use std::path::Path;
use std::process::ExitCode;

/// `orchestra token`: the running orchestra's token (server.json's), else the state
/// directory's own, made now if it has none yet (the next orchestra started there uses it).
pub fn run(state_dir: Option<&Path>) -> ExitCode {
    match token(state_dir) {
        Ok(token) => {
            println!("{token}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("orchestra: {}", e.message);
            e.exit_code()
        }
    }
}

fn token(state_dir: Option<&Path>) -> CliResult<String> {
    let dir = orchestra_sys::state_dir::resolve(state_dir)
        .map_err(|e| CliError::usage(format!("cannot find the state directory: {e}")))?;
    let running = ServerFile::read(&dir)
        .map_err(|e| CliError::refused(e.to_string()))?
        .filter(ServerFile::pid_alive);
    if let Some(file) = running {
        return file.token.ok_or_else(|| {
            CliError::refused(format!(
                "the orchestra running on {} asks for no token: it was started with --insecure-no-auth",
                dir.display()
            ))
        });
    }
    orchestra_sys::private::create_private_dir(&dir)
        .map_err(|e| CliError::refused(format!("cannot use {}: {e}", dir.display())))?;
    orchestra_sys::credentials::token_for(&dir).map_err(|e| CliError::refused(e.to_string()))
}
