//! A pull request instead of a local merge: the task's branch (what the agent left
//! uncommitted committed first, as a merge does) is pushed to the repository's remote and a
//! pull request is opened with the user's own `gh` (or `glab`). Everything that can refuse
//! (no remote, no CLI, not logged in) is asked before anything is committed or pushed; the
//! user's checkout is never touched; the worktree stays, so the task can be continued,
//! merged or discarded after.

use super::task_message::{Evidence, pull_request_body, subject, task_commit_message};
use super::worktrees::blocking_engine;
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::forge::{self, Forge, PullRequestSpec};
use crate::git::{self, Worktree};
use orchestra_proto::task::Task;
use orchestra_proto::worktree::PullRequest;
use std::path::PathBuf;
use std::sync::Arc;

/// Files of the diffstat a pull request's body lists (the rest are counted).
const DIFFSTAT_FILES: usize = 60;

/// `git diff --stat`'s lines, at most [`DIFFSTAT_FILES`] files and its summary line.
fn capped_diffstat(stat: &str) -> String {
    let lines: Vec<&str> = stat.lines().collect();
    let Some((summary, files)) = lines.split_last() else {
        return String::new();
    };
    if files.len() <= DIFFSTAT_FILES {
        return stat.to_string();
    }
    let mut kept: Vec<String> = files[..DIFFSTAT_FILES]
        .iter()
        .map(|l| l.to_string())
        .collect();
    kept.push(format!(" … and {} more", files.len() - DIFFSTAT_FILES));
    kept.push(summary.to_string());
    kept.join("\n")
}

/// The forge CLI to use and where it is.
struct Cli {
    forge: Forge,
    program: PathBuf,
}

/// The CLI that serves `address`, found on PATH.
fn find_cli(address: Option<&forge::RemoteAddress>) -> EngineResult<Cli> {
    let forge = forge::forge_for(address, |f| crate::providers::which(f.program()).is_some())
        .map_err(|e| EngineError::Unprocessable(format!("{e}; nothing was pushed")))?;
    let program = crate::providers::which(forge.program()).ok_or_else(|| {
        EngineError::Unprocessable(format!(
            "{} is no longer on PATH; nothing was pushed",
            forge.program()
        ))
    })?;
    Ok(Cli { forge, program })
}

/// Refuses unless the CLI is logged in (to the remote's host when known).
fn ensure_logged_in(cli: &Cli, host: Option<&str>, wt: &Worktree) -> EngineResult<()> {
    let name = cli.forge.program();
    let out = forge::run(
        &cli.program,
        &forge::auth_args(host),
        wt.path(),
        forge::AUTH_TIMEOUT,
    )
    .map_err(|e| EngineError::Unprocessable(format!("{e}; nothing was pushed")))?;
    if out.ok() {
        return Ok(());
    }
    let to = host.map(|h| format!(" to {h}")).unwrap_or_default();
    Err(EngineError::Unprocessable(format!(
        "{name} is not logged in{to} (`{name} auth status`: {}): run `{name} auth login`; nothing was pushed",
        forge::failure(&out)
    )))
}

/// Everything after the checks: commit the leftovers, push, open the pull request.
fn publish(task: &Task, wt: &Worktree) -> EngineResult<PullRequest> {
    let remote = git::publish::remote_for(wt)?.ok_or_else(|| {
        EngineError::Unprocessable(format!(
            "the repository has no remote to push {} to: add one (`git remote add origin URL`) or give {} an upstream; nothing was pushed",
            wt.branch, wt.base_branch
        ))
    })?;
    let address = forge::remote_address(&remote.url);
    let cli = find_cli(address.as_ref())?;
    ensure_logged_in(&cli, address.as_ref().map(|a| a.host.as_str()), wt)?;

    let evidence = Evidence::of(task);
    git::merge::commit_leftovers(wt, &task_commit_message(task, &evidence))?;
    let diffstat = capped_diffstat(&git::publish::diffstat(wt)?);
    git::publish::push(wt, &remote).map_err(|e| {
        EngineError::Upstream(format!(
            "the push of {} to {} failed: {e}; no {} was opened",
            wt.branch,
            remote.name,
            cli.forge.request_name()
        ))
    })?;

    let (title, body) = (subject(task), pull_request_body(task, &evidence, &diffstat));
    let args = forge::create_args(
        cli.forge,
        &PullRequestSpec {
            title: &title,
            body: &body,
            branch: &wt.branch,
            base: &wt.base_branch,
            repo: address.as_ref(),
        },
    );
    let pushed = format!("{} was pushed to {}, but", wt.branch, remote.name);
    let out = forge::run(&cli.program, &args, wt.path(), forge::CREATE_TIMEOUT)
        .map_err(|e| EngineError::Upstream(format!("{pushed} {e}")))?;
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let url = if out.ok() {
        forge::url_in(&printed)
    } else if forge::already_exists(&out.stderr) {
        // The push updated the one already open: that is the task's.
        forge::url_in(&out.stderr)
    } else {
        None
    };
    let url = url.ok_or_else(|| {
        EngineError::Upstream(format!(
            "{pushed} {} could not open the {}: {}",
            cli.forge.program(),
            cli.forge.request_name(),
            if out.ok() {
                format!("it printed no address ({})", printed.trim())
            } else {
                forge::failure(&out)
            }
        ))
    })?;
    Ok(PullRequest {
        url,
        branch: wt.branch.clone(),
        remote: remote.name,
        at: now_ms(),
    })
}

impl Engine {
    /// Pushes a finished worktree task's branch and opens a pull request for it; the task
    /// records it. Held under the same lock as merges and discards, so none of them can
    /// remove the worktree halfway.
    pub async fn open_pull_request(&self, id: &str) -> EngineResult<(Arc<Task>, PullRequest)> {
        let _one = self.inner.finishing.lock().await;
        let (task, wt) = self.live_worktree(id)?;
        Self::ensure_finished(&task, "open a pull request for")?;
        let opened = {
            let (task, at) = (task.clone(), wt.at.clone());
            blocking_engine(move || publish(&task, &at)).await?
        };
        let (task, ()) = self
            .mutate(id, |t| {
                t.metadata.pull_request = Some(opened.clone());
                Ok((vec![(TaskEventKind::Updated, vec![])], ()))
            })
            .await?;
        tracing::info!(task = %id, url = %opened.url, remote = %opened.remote, "pull request opened");
        Ok((task, opened))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_diffstat_keeps_its_summary() {
        let mut stat: Vec<String> = (0..70).map(|i| format!(" f{i} | 1 +")).collect();
        stat.push(" 70 files changed, 70 insertions(+)".into());
        let capped = capped_diffstat(&stat.join("\n"));
        let lines: Vec<&str> = capped.lines().collect();
        assert_eq!(lines.len(), DIFFSTAT_FILES + 2);
        assert_eq!(lines[DIFFSTAT_FILES], " … and 10 more");
        assert_eq!(lines.last(), Some(&" 70 files changed, 70 insertions(+)"));
        assert_eq!(
            capped_diffstat(" a | 1 +\n 1 file changed"),
            " a | 1 +\n 1 file changed"
        );
    }
}
