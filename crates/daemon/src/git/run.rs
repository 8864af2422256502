//! Running git: never a pager, a prompt or an editor waiting for input, never the user's
//! hooks on orchestra's own commits, always a timeout; errors as sentences. Orchestra's
//! operations on one repository run one at a time, and a lock held by the user's own git
//! is waited out briefly.

use super::GitError;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long one git command may take before it is killed.
const TIMEOUT: Duration = Duration::from_secs(60);
/// How long a lock held by someone else's git is waited out.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// One git invocation: arguments, directory and extra environment.
pub struct Git<'a> {
    dir: &'a Path,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// What a finished git command printed.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim_end().to_string()
    }
}

/// Starts a git command in `dir`.
pub fn git<'a>(dir: &'a Path, args: &[&str]) -> Git<'a> {
    Git {
        dir,
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
    }
}

impl Git<'_> {
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args_from(mut self, a: &[&str]) -> Self {
        self.args.extend(a.iter().map(|s| s.to_string()));
        self
    }

    pub fn env(mut self, k: &str, v: impl Into<String>) -> Self {
        self.env.push((k.to_string(), v.into()));
        self
    }

    /// Runs it and returns what it printed, whatever its exit status.
    pub fn output(&self) -> Result<Output, GitError> {
        let started = Instant::now();
        loop {
            let out = self.once()?;
            if out.ok() || !held_lock(&out.stderr) || started.elapsed() > LOCK_WAIT {
                return Ok(out);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs it; a non-zero exit is an error carrying git's own message.
    pub fn run(&self) -> Result<String, GitError> {
        let out = self.output()?;
        if out.ok() {
            Ok(out.text())
        } else {
            Err(self.failed(&out))
        }
    }

    /// Runs it for its yes/no answer (exit 0 or not).
    pub fn check(&self) -> Result<bool, GitError> {
        Ok(self.output()?.ok())
    }

    pub fn failed(&self, out: &Output) -> GitError {
        GitError::Failed {
            command: self.args.join(" "),
            message: first_lines(&out.stderr),
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new("git");
        c.arg("-C")
            .arg(self.dir)
            .args(["-c", "core.pager=cat", "-c", "core.hooksPath=/dev/null"])
            .args(["-c", "advice.detachedHead=false", "-c", "color.ui=false"])
            .args(&self.args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_EDITOR", "true")
            .env("GIT_PAGER", "cat")
            .env("GIT_ASKPASS", "true")
            .env("LC_ALL", "C");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    fn once(&self) -> Result<Output, GitError> {
        match run_bounded(self.command(), TIMEOUT) {
            Ok(Bounded::Done(out)) => Ok(out),
            Ok(Bounded::TimedOut) => Err(GitError::TimedOut(self.args.join(" "))),
            Err(e) => Err(GitError::Missing(e.to_string())),
        }
    }
}

/// How a command run with [`run_bounded`] ended.
#[derive(Debug)]
pub enum Bounded {
    Done(Output),
    /// It ran past its time: its process group was killed and reaped.
    TimedOut,
}

/// Runs `cmd` (stdin closed, its output read) in a process group of its own, so that what it
/// starts (ssh under a push, a helper of `gh`) ends with it: the whole group is killed and
/// reaped when it runs past `timeout`. Blocking: callers run it off the async workers.
pub fn run_bounded(mut cmd: Command, timeout: Duration) -> std::io::Result<Bounded> {
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() > deadline => {
                // The group is the child's pid (process_group(0)).
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = child.wait();
                return Ok(Bounded::TimedOut);
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        }
    };
    let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok(Bounded::Done(Output {
        code: status.code(),
        stdout: join(stdout),
        stderr: String::from_utf8_lossy(&join(stderr)).into_owned(),
    }))
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// git says another git holds one of its lock files (`index.lock`, a ref's `.lock`).
fn held_lock(stderr: &str) -> bool {
    stderr.contains(".lock': File exists")
        || stderr.contains("Unable to create") && stderr.contains(".lock")
        || stderr.contains("cannot lock ref")
}

/// The first lines of what a command printed on stderr, hints left out, as one line.
pub fn first_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .take(3)
        .collect();
    if lines.is_empty() {
        "git failed without saying why".into()
    } else {
        lines.join("; ")
    }
}

/// The lock that serialises orchestra's git operations on one repository (keyed by its
/// common git directory, shared by all its worktrees).
pub fn repo_lock(common_dir: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let key = common_dir
        .canonicalize()
        .unwrap_or_else(|_| common_dir.to_path_buf());
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .entry(key)
        .or_default()
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_messages_are_recognised() {
        assert!(held_lock(
            "fatal: Unable to create '/r/.git/index.lock': File exists."
        ));
        assert!(held_lock("error: cannot lock ref 'refs/heads/x'"));
        assert!(!held_lock("fatal: not a git repository"));
    }

    #[test]
    fn errors_carry_gits_message() {
        let d = tempfile::tempdir().unwrap();
        let e = git(d.path(), &["rev-parse", "HEAD"]).run().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("not a git repository"), "{text}");
        assert!(text.contains("rev-parse HEAD"), "{text}");
    }
}
