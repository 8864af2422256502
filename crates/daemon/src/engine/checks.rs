//! Checks decide completion. A task that carries `checks` (commands, from its request and
//! its repository's `[checks]`) is not `completed` on its agent's word: where it would be (a
//! finished turn, a reported success, a session that exits with success) its checks run
//! instead, one after another with `sh -c` in its worktree (or its directory), each as a
//! step `check: COMMAND` with its output's end, exit code and duration. The agent is left as
//! it is. Meanwhile the task stays `running`.
//!
//! - All pass: `completed`, the result (the agent's summary) carrying the evidence.
//! - One fails (the rest are skipped): while attempts remain, the agent is sent the failure
//!   as an `auto` message ("The check `…` failed: … Fix it, then say you are done.") and its
//!   next finished turn runs the checks again; an agent whose session ended is resumed on its
//!   conversation with that message, if its provider can. Else `failed`, with the evidence;
//!   the worktree is kept.
//! - One run at a time per task: a second trigger meanwhile is refused. A cancel of the
//!   task stops the running check's process group (the task is `cancelled`); a cancel of the
//!   check's step fails the task. A pause is refused while checks run.

use super::repo_file::RepoChecks;
use super::shell_run::{self, Ending, ShellCommand};
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use orchestra_proto::task::{
    CheckRun, DEFAULT_CHECK_TIMEOUT_SECONDS, DEFAULT_MAX_ATTEMPTS, Step, StepStatus, Task,
    TaskResult, TaskStatus,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// How a check's step is named: this, then the command.
pub const CHECK_STEP: &str = "check: ";

/// How many of a failed check's last output lines go back to the agent.
const LINES_SENT_BACK: usize = 20;

/// At most this much of a failed check's output goes back to the agent (its end).
const DETAIL_SENT_BACK: usize = 2000;

/// Why a running check is to stop.
const GO_ON: u8 = 0;
const TASK_ENDED: u8 = 1;
const STEP_CANCELLED: u8 = 2;

/// One task's checks while they run.
#[derive(Default)]
pub(crate) struct CheckRunning {
    stop: AtomicU8,
    /// The step of the check running now.
    step: parking_lot::Mutex<Option<String>>,
}

/// The checks running now, by task id.
pub(crate) type ChecksTable = parking_lot::Mutex<HashMap<String, Arc<CheckRunning>>>;

/// A task's one run of its checks: taken before they start, given back when dropped.
struct CheckClaim {
    engine: Engine,
    id: String,
}

impl Drop for CheckClaim {
    fn drop(&mut self) {
        self.engine.inner.checks.lock().remove(&self.id);
    }
}

/// The checks a task runs: its own, then its repository's that it does not have already
/// (the same command twice runs once); its limits, else the repository's.
pub(super) fn adopt_repo_checks(t: &mut Task, repo: &RepoChecks) {
    for c in repo.commands() {
        if !t.metadata.checks.iter().any(|own| own == c) {
            t.metadata.checks.push(c.to_string());
        }
    }
    if t.metadata.checks.is_empty() {
        return;
    }
    t.metadata.max_attempts = t.metadata.max_attempts.or(repo.max_attempts);
    t.metadata.check_timeout_seconds = t.metadata.check_timeout_seconds.or(repo.timeout_seconds);
}

/// How a check ran, as its evidence says it.
fn evidence(command: &str, ran: &shell_run::Ran, timeout: Duration) -> CheckRun {
    let (exit_code, error) = match &ran.ending {
        Ending::Exited(c) => (Some(*c), None),
        Ending::Signalled(s) => (None, Some(format!("killed by signal {s}"))),
        Ending::TimedOut => (
            None,
            Some(format!("ran longer than {} s", timeout.as_secs())),
        ),
        Ending::Stopped => (None, Some("cancelled".to_string())),
        Ending::NotRun(why) => (None, Some(why.clone())),
    };
    CheckRun {
        command: command.to_string(),
        exit_code,
        duration_ms: ran.duration.as_millis() as u64,
        output_tail: ran.output.clone(),
        error,
    }
}

/// How a check ended, in a few words: "exited with code 1", "ran longer than 30 s".
fn ending_words(run: &CheckRun) -> String {
    match (&run.error, run.exit_code) {
        (Some(e), _) => e.clone(),
        (None, Some(c)) => format!("exited with code {c}"),
        (None, None) => "ended without an exit code".into(),
    }
}

/// A check step's output: how it ended and how long it took, then its output's end.
fn step_output(run: &CheckRun) -> String {
    let head = format!(
        "{} after {:.1} s",
        ending_words(run),
        run.duration_ms as f64 / 1000.0
    );
    if run.output_tail.trim().is_empty() {
        head
    } else {
        format!("{head}\n{}", run.output_tail)
    }
}

/// What the agent is sent when a check fails: one line (a line break would submit it early
/// in CLIs without bracketed paste), with the output's last lines.
pub fn failure_message(run: &CheckRun) -> String {
    let lines: Vec<&str> = run
        .output_tail
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let last = &lines[lines.len().saturating_sub(LINES_SENT_BACK)..];
    let mut detail = last.join(" / ");
    if detail.len() > DETAIL_SENT_BACK {
        let mut at = detail.len() - DETAIL_SENT_BACK;
        while !detail.is_char_boundary(at) {
            at += 1;
        }
        detail = format!("…{}", &detail[at..]);
    }
    let detail = match (&run.error, run.exit_code, detail.is_empty()) {
        (Some(e), _, true) => e.clone(),
        (Some(e), _, false) => format!("{e}: {detail}"),
        (None, Some(c), true) => format!("it exited with code {c} and printed nothing"),
        _ => detail,
    };
    format!(
        "The check `{}` failed: {detail}. Fix it, then say you are done.",
        run.command
    )
}

/// Where a task's checks run: its live worktree's agent directory, else its directory.
fn check_dir(task: &Task) -> PathBuf {
    match task.metadata.worktree.as_ref().filter(|w| w.is_live()) {
        Some(wt) => wt.at.agent_dir(),
        None => PathBuf::from(&task.metadata.working_directory),
    }
}

/// The limits of a task's checks: (max attempts, timeout per check).
fn limits(task: &Task) -> (u32, Duration) {
    (
        task.metadata.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
        Duration::from_secs(
            task.metadata
                .check_timeout_seconds
                .unwrap_or(DEFAULT_CHECK_TIMEOUT_SECONDS),
        ),
    )
}

fn running_elsewhere() -> EngineError {
    EngineError::Conflict(
        "task's checks are running; their outcome decides it (cancel the task to stop them)".into(),
    )
}

impl Engine {
    /// Whether the task's checks are running now.
    pub(crate) fn checks_running(&self, id: &str) -> bool {
        self.inner.checks.lock().contains_key(id)
    }

    /// Refuses a change a running check run would not survive (a pause, another outcome).
    pub(crate) fn refuse_while_checking(&self, id: &str, what: &str) -> EngineResult<()> {
        if self.checks_running(id) {
            return Err(EngineError::Conflict(format!(
                "task cannot be {what}: its checks are running (cancel it, or wait for their outcome)"
            )));
        }
        Ok(())
    }

    /// Where a task would complete with `result`: whether its checks decide instead. If
    /// they do, they start now (off the caller) and `Ok(true)` is returned; a run already
    /// going is refused (exactly one runs).
    pub(crate) fn checks_decide(&self, task: &Task, result: TaskResult) -> EngineResult<bool> {
        if result.success
            && !task.metadata.checks.is_empty()
            && task.status() != TaskStatus::Running
        {
            return Err(EngineError::Conflict(format!(
                "task is {}; a task with checks is completed only when they pass, and they run while it is running",
                task.status()
            )));
        }
        if task.metadata.checks.is_empty() || !result.success {
            if !result.success && self.checks_running(&task.id) {
                return Err(running_elsewhere());
            }
            return Ok(false);
        }
        let run = Arc::new(CheckRunning::default());
        {
            let mut table = self.inner.checks.lock();
            if table.contains_key(&task.id) {
                return Err(running_elsewhere());
            }
            table.insert(task.id.clone(), run.clone());
        }
        let claim = CheckClaim {
            engine: self.clone(),
            id: task.id.clone(),
        };
        let engine = self.clone();
        tokio::spawn(async move {
            let id = claim.id.clone();
            if let Err(e) = engine.run_checks(&id, result, &run).await {
                tracing::warn!(task = %id, error = %e, "a task's checks did not finish");
                engine.stop_checked(&id, &e.to_string()).await;
            }
            drop(claim);
        });
        Ok(true)
    }

    /// A cancel of the task: its running check is stopped at once, and its check steps say
    /// so (cancelled, the rest skipped) rather than failed.
    pub(crate) async fn stop_checks(&self, id: &str) {
        let Some(run) = self.inner.checks.lock().get(id).cloned() else {
            return;
        };
        run.stop.store(TASK_ENDED, Ordering::SeqCst);
        let closed = self
            .mutate(id, |t| {
                let mut changed = false;
                for s in t
                    .metadata
                    .steps
                    .iter_mut()
                    .filter(|s| s.status.is_open() && s.description.starts_with(CHECK_STEP))
                {
                    s.status = match s.status {
                        StepStatus::Pending => StepStatus::Skipped,
                        _ => StepStatus::Cancelled,
                    };
                    changed = true;
                }
                let events = if changed {
                    vec![(TaskEventKind::Step, vec![])]
                } else {
                    vec![]
                };
                Ok((events, ()))
            })
            .await;
        if let Err(e) = closed {
            tracing::debug!(task = %id, error = %e, "check steps not closed");
        }
    }

    /// A step being cancelled: if it is the running check's, that check is stopped and the
    /// task fails saying so.
    pub(crate) fn cancel_check_step(&self, id: &str, step_id: &str) {
        if let Some(run) = self.inner.checks.lock().get(id)
            && run.step.lock().as_deref() == Some(step_id)
        {
            run.stop.store(STEP_CANCELLED, Ordering::SeqCst);
        }
    }

    /// At shutdown: every running check stopped, and waited for (each is reaped) up to the
    /// grace and a little more.
    pub(crate) async fn end_all_checks(&self) {
        for run in self.inner.checks.lock().values() {
            run.stop.store(TASK_ENDED, Ordering::SeqCst);
        }
        let deadline = tokio::time::Instant::now() + self.config().grace + Duration::from_secs(2);
        while !self.inner.checks.lock().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Runs the task's checks once and decides the task by them.
    async fn run_checks(
        &self,
        id: &str,
        result: TaskResult,
        run: &Arc<CheckRunning>,
    ) -> EngineResult<()> {
        let task = self.get_task(id)?;
        let dir = check_dir(&task);
        let (_, timeout) = limits(&task);
        let commands = task.metadata.checks.clone();
        let (_, steps) = self
            .mutate(id, |t| {
                if t.status() != TaskStatus::Running {
                    return Err(EngineError::Conflict(format!(
                        "task is {}; its checks do not run",
                        t.status()
                    )));
                }
                let ids: Vec<String> = commands
                    .iter()
                    .map(|c| {
                        let step = Step {
                            id: uuid::Uuid::new_v4().to_string(),
                            description: format!("{CHECK_STEP}{c}"),
                            status: StepStatus::Pending,
                            output: None,
                        };
                        let id = step.id.clone();
                        t.metadata.steps.push(step);
                        id
                    })
                    .collect();
                Ok((vec![(TaskEventKind::Step, vec![])], ids))
            })
            .await?;
        tracing::info!(task = %id, checks = commands.len(), "running the task's checks");
        let mut runs: Vec<CheckRun> = Vec::new();
        for (command, step) in commands.iter().zip(&steps) {
            *run.step.lock() = Some(step.clone());
            self.set_check_step(id, step, StepStatus::Running, None)
                .await?;
            let ran = self.run_one_check(id, command, &dir, timeout, run).await?;
            let check = evidence(command, &ran, timeout);
            let status = match ran.ending {
                _ if check.passed() => StepStatus::Completed,
                Ending::Stopped => StepStatus::Cancelled,
                _ => StepStatus::Failed,
            };
            *run.step.lock() = None;
            if run.stop.load(Ordering::SeqCst) == TASK_ENDED {
                // The task ended (a cancel): its steps were closed with it.
                return Ok(());
            }
            self.set_check_step(id, step, status, Some(step_output(&check)))
                .await?;
            let passed = check.passed();
            runs.push(check);
            if !passed {
                break;
            }
        }
        for step in &steps[runs.len()..] {
            self.set_check_step(id, step, StepStatus::Skipped, None)
                .await?;
        }
        self.decide_by_checks(id, result, runs, run).await
    }

    /// Runs one check off the async workers, stopped when its task ends or its step is
    /// cancelled.
    async fn run_one_check(
        &self,
        id: &str,
        command: &str,
        dir: &std::path::Path,
        timeout: Duration,
        run: &Arc<CheckRunning>,
    ) -> EngineResult<shell_run::Ran> {
        let (engine, id, command, dir, run) = (
            self.clone(),
            id.to_string(),
            command.to_string(),
            dir.to_path_buf(),
            run.clone(),
        );
        let grace = self.config().grace;
        let env = vec![(
            super::INSTANCE_VAR.to_string(),
            self.config().instance.clone(),
        )];
        tokio::task::spawn_blocking(move || {
            let stop = || {
                if run.stop.load(Ordering::SeqCst) != GO_ON {
                    return true;
                }
                let ended = engine.get_task(&id).map_or(true, |t| t.status().is_final());
                if ended {
                    run.stop.store(TASK_ENDED, Ordering::SeqCst);
                }
                ended
            };
            shell_run::run(
                &ShellCommand {
                    command: &command,
                    dir: &dir,
                    timeout,
                    grace,
                    env: &env,
                },
                &stop,
            )
        })
        .await
        .map_err(|e| EngineError::Internal(format!("a check could not be run: {e}")))
    }

    async fn set_check_step(
        &self,
        id: &str,
        step: &str,
        status: StepStatus,
        output: Option<String>,
    ) -> EngineResult<()> {
        self.update_step(id, step, status, output).await.map(|_| ())
    }

    /// The outcome of one run of the checks: completed, sent back, or failed.
    async fn decide_by_checks(
        &self,
        id: &str,
        mut result: TaskResult,
        runs: Vec<CheckRun>,
        run: &Arc<CheckRunning>,
    ) -> EngineResult<()> {
        let task = self.get_task(id)?;
        // A cancel that came while they ran wins over their outcome.
        if task.status() != TaskStatus::Running || run.stop.load(Ordering::SeqCst) == TASK_ENDED {
            return Ok(());
        }
        let Some(failed) = runs.iter().find(|r| !r.passed()).cloned() else {
            result.checks = runs;
            self.finish_checked(id, result).await?;
            tracing::info!(task = %id, "checks passed: task completed");
            return Ok(());
        };
        let (max, _) = limits(&task);
        let attempt = task.metadata.check_attempts + 1;
        if run.stop.load(Ordering::SeqCst) == STEP_CANCELLED {
            let why = format!("the check `{}` was cancelled", failed.command);
            return self.fail_checked(id, result, runs, why).await;
        }
        if attempt >= max {
            let why = format!(
                "the check `{}` failed (attempt {attempt} of {max})",
                failed.command
            );
            return self.fail_checked(id, result, runs, why).await;
        }
        match self.send_back(&task, &failed, attempt, max).await {
            Ok(()) => Ok(()),
            Err(cannot) => {
                let why = format!(
                    "the check `{}` failed (attempt {attempt} of {max}), and its agent cannot be asked to fix it: {cannot}",
                    failed.command
                );
                self.fail_checked(id, result, runs, why).await
            }
        }
    }

    /// Sends the failure back to the task's agent: typed into its live session, or its
    /// conversation resumed with it. The attempt is counted first.
    async fn send_back(
        &self,
        task: &Task,
        failed: &CheckRun,
        attempt: u32,
        max: u32,
    ) -> Result<(), String> {
        let message = failure_message(failed);
        let live = self.task_session(task);
        let coding_agent = self
            .providers()
            .get(&task.metadata.provider_id)
            .is_some_and(|p| p.coding_agent);
        if !coding_agent {
            return Err(format!(
                "its provider `{}` is not a coding agent",
                task.metadata.provider_id
            ));
        }
        self.mutate(&task.id, |t| {
            if t.status() != TaskStatus::Running {
                return Err(EngineError::Conflict(format!("task is {}", t.status())));
            }
            t.metadata.check_attempts = attempt;
            Ok((vec![(TaskEventKind::Updated, vec![])], ()))
        })
        .await
        .map_err(|e| e.to_string())?;
        let why = format!(
            "the check `{}` failed (attempt {attempt} of {max}): sent back to the agent",
            failed.command
        );
        tracing::info!(task = %task.id, %why);
        match live {
            Some(entry) => {
                // Its next finished turn counts only once it worked on this.
                entry.expect_new_work();
                self.send_request_to(&entry, message, why)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            None => self
                .resume_for_checks(&task.id, &message)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
        }
    }

    /// Finishes a running task with `result`: completed if its checks passed, else failed.
    async fn finish_checked(&self, id: &str, mut result: TaskResult) -> EngineResult<()> {
        self.fill_result_files(id, &mut result).await;
        if result.children.is_empty() {
            result.children = self.child_outcomes(id);
        }
        self.mutate(id, |t| {
            if t.status() != TaskStatus::Running {
                return Ok((vec![], ()));
            }
            t.finish_with(result, now_ms())?;
            let kind = match t.status() {
                TaskStatus::Completed => TaskEventKind::Completed,
                _ => TaskEventKind::Failed,
            };
            Ok((vec![(kind, vec![])], ()))
        })
        .await
        .map(|_| ())
    }

    /// Fails a running task saying `why`, its result carrying the checks' evidence; its
    /// worktree stays.
    async fn fail_checked(
        &self,
        id: &str,
        mut result: TaskResult,
        runs: Vec<CheckRun>,
        why: String,
    ) -> EngineResult<()> {
        tracing::info!(task = %id, %why, "checks failed: task failed");
        result.success = false;
        result.error = Some(why);
        result.checks = runs;
        self.finish_checked(id, result).await
    }

    /// A run of the checks that broke off (the store failed): the task fails saying so,
    /// rather than stay running with nothing left to decide it.
    async fn stop_checked(&self, id: &str, why: &str) {
        let open = self
            .get_task(id)
            .is_ok_and(|t| t.status() == TaskStatus::Running);
        if open
            && let Err(e) = self
                .end_if_open(
                    id,
                    TaskStatus::Failed,
                    &format!("its checks could not be run: {why}"),
                )
                .await
        {
            tracing::warn!(task = %id, error = %e, "could not fail a task whose checks broke off");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(exit_code: Option<i32>, error: Option<&str>, output: &str) -> CheckRun {
        CheckRun {
            command: "cargo test -q".into(),
            exit_code,
            duration_ms: 1234,
            output_tail: output.into(),
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_message_sent_back_names_the_check_and_its_last_lines() {
        let output: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let m = failure_message(&check(Some(101), None, &output));
        assert!(
            m.starts_with("The check `cargo test -q` failed: line 11 / line 12 / "),
            "{m}"
        );
        assert!(
            m.ends_with("line 30. Fix it, then say you are done."),
            "{m}"
        );
        assert!(!m.contains('\n'));
        let m = failure_message(&check(None, Some("ran longer than 1 s"), ""));
        assert_eq!(
            m,
            "The check `cargo test -q` failed: ran longer than 1 s. Fix it, then say you are done."
        );
        let m = failure_message(&check(Some(1), None, "\n"));
        assert!(
            m.contains("it exited with code 1 and printed nothing"),
            "{m}"
        );
        let long = "x".repeat(5000);
        assert!(failure_message(&check(Some(1), None, &long)).len() < DETAIL_SENT_BACK + 200);
    }

    #[test]
    fn a_step_says_how_it_ended_and_how_long_it_took() {
        assert_eq!(
            step_output(&check(Some(0), None, "ok\n")),
            "exited with code 0 after 1.2 s\nok\n"
        );
        assert_eq!(
            step_output(&check(None, Some("ran longer than 1 s"), "")),
            "ran longer than 1 s after 1.2 s"
        );
    }

    #[test]
    fn the_repositorys_checks_follow_the_tasks_own_once_each() {
        let mut t = Task::new(
            "t".into(),
            orchestra_proto::task::NewTask {
                name: "t".into(),
                checks: vec!["make lint".into()],
                ..Default::default()
            },
            0,
        );
        let repo = RepoChecks {
            commands: vec!["cargo test -q".into(), "make lint".into(), " ".into()],
            max_attempts: Some(2),
            timeout_seconds: None,
        };
        adopt_repo_checks(&mut t, &repo);
        assert_eq!(t.metadata.checks, ["make lint", "cargo test -q"]);
        assert_eq!(t.metadata.max_attempts, Some(2));
        assert_eq!(limits(&t), (2, Duration::from_secs(1800)));
        // Without checks of any kind, nothing changes.
        let mut plain = Task::new("p".into(), Default::default(), 0);
        adopt_repo_checks(&mut plain, &RepoChecks::default());
        assert!(plain.metadata.checks.is_empty() && plain.metadata.max_attempts.is_none());
    }
}
