//! `orchestra stop`: asks the running orchestra to stop (`POST /api/daemon/stop`), then waits
//! until it has exited, so that when this returns its agents are gone and its state is saved.

use super::error::{CliError, CliResult, Exit};
use super::http::{PrintJson, Reply};
use super::output::out;
use super::{ClientArgs, Ctx};
use crate::cli::GlobalArgs;
use orchestra_proto::wire::{DaemonStopped, Status};
use orchestra_sys::process;
use orchestra_sys::server_file::ServerFile;
use std::time::Duration;

/// Time allowed for flushing and exiting beyond the agents' grace period.
const EXIT_MARGIN: Duration = Duration::from_secs(30);

pub fn run(args: &ClientArgs, global: &GlobalArgs) -> CliResult<()> {
    if args.url.is_none() {
        running_here(global)?;
    }
    let ctx = Ctx::connect(args, global)?;
    let answer: Reply<DaemonStopped> = ctx.client.post(
        orchestra_proto::routes::DAEMON_STOP,
        &(),
        "the answer to a stop (`{ok, ended, pid, graceMs}`)",
    )?;
    let stopped = answer.value;
    let ended = stopped.ended;
    let grace = Duration::from_millis(stopped.grace_ms);
    let budget = grace + EXIT_MARGIN;
    // The pid is only ours to watch when this machine's server.json names the one that
    // answered: a --url may be another machine's orchestra. Otherwise it is gone once its URL
    // no longer answers.
    let pid = ctx.client.server_pid().filter(|p| *p == stopped.pid);
    let gone = match pid {
        Some(pid) => process::wait_exit(pid, budget),
        None => process::poll_until(budget, || {
            ctx.client
                .get::<Status>(orchestra_proto::routes::STATUS, "orchestra's status")
                .is_err_and(|e| e.exit == Exit::Unreachable)
        }),
    };
    let who = match pid {
        Some(pid) => format!("orchestra (pid {pid})"),
        None => format!("orchestra at {}", ctx.client.base()),
    };
    if !gone {
        let log = ctx
            .client
            .state_dir()
            .map(|d| format!("; see {}", d.join("logs/orchestra.log").display()))
            .unwrap_or_default();
        return Err(CliError::server(format!(
            "{who} was asked to stop but is still running after {} s{log}",
            budget.as_secs()
        )));
    }
    if ctx.json {
        answer.print_json();
    } else {
        let agents = if ended == 1 { "agent" } else { "agents" };
        out(&format!("stopped {who}; ended {ended} {agents}"));
    }
    Ok(())
}

/// Without --url: an orchestra must be running on the state directory, else there is nothing
/// to stop (exit 3), said plainly rather than as a connection failure.
fn running_here(global: &GlobalArgs) -> CliResult<()> {
    let dir = orchestra_sys::state_dir::resolve(global.state_dir.as_deref())
        .map_err(|e| CliError::unreachable(format!("cannot find orchestra: {e}; or pass --url")))?;
    let why = match ServerFile::read(&dir) {
        Ok(Some(ServerFile { pid: Some(pid), .. })) if !process::pid_alive(pid) => {
            super::http::left_over(&ServerFile::path(&dir), pid)
        }
        Ok(Some(_)) => return Ok(()),
        Ok(None) => format!("no {}", ServerFile::path(&dir).display()),
        // Unreadable or invalid: let the connection say what is wrong with it.
        Err(_) => return Ok(()),
    };
    Err(CliError::unreachable(format!(
        "no orchestra is running on {} ({why}); nothing to stop",
        dir.display()
    )))
}
