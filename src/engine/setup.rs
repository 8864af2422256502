//! Per-repository set-up of a new task worktree: files to copy in (e.g. `.env`, which git does
//! not carry) and a command to run before the agent (e.g. `npm ci`). Read from `.orchestra.toml`
//! at the repository's root, with the user config's `[[repo]]` entry for that path on top.

use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::git::Worktree;
use crate::task::{StepStatus, TaskStatus};
use serde::Deserialize;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The repository file's name.
pub const REPO_FILE: &str = ".orchestra.toml";

/// How long a set-up command may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How much of a set-up command's output a step keeps (its end).
const OUTPUT_KEPT: usize = 8 * 1024;

/// What a new worktree of a repository gets.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSetup {
    /// Paths relative to the repository's root, copied into each new worktree.
    #[serde(default)]
    pub copy: Vec<String>,
    /// A shell command run in the new worktree before the agent starts.
    #[serde(default)]
    pub setup: Option<String>,
}

/// The user config's entry for one repository.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    pub path: PathBuf,
    #[serde(default)]
    pub copy: Vec<String>,
    #[serde(default)]
    pub setup: Option<String>,
}

/// `.orchestra.toml`: `[worktree]` with `copy` and `setup`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RepoFile {
    #[serde(default)]
    worktree: RepoSetup,
}

/// The set-up for the repository at `root`: its file, then the user's entry for it.
pub fn for_repo(root: &Path, user: &[RepoConfig]) -> Result<RepoSetup, String> {
    let file = root.join(REPO_FILE);
    let mut setup = match std::fs::read_to_string(&file) {
        Ok(text) => {
            toml::from_str::<RepoFile>(&text)
                .map_err(|e| format!("{} is not valid: {}", file.display(), e.message()))?
                .worktree
        }
        Err(_) => RepoSetup::default(),
    };
    let same = |p: &Path| p == root || p.canonicalize().is_ok_and(|c| c == root);
    if let Some(entry) = user.iter().find(|r| same(&r.path)) {
        if !entry.copy.is_empty() {
            setup.copy = entry.copy.clone();
        }
        if entry.setup.is_some() {
            setup.setup = entry.setup.clone();
        }
    }
    Ok(setup)
}

/// A relative path that stays inside the directory it is joined to.
fn inside(rel: &str) -> Option<&Path> {
    let p = Path::new(rel);
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then_some(p)
        .filter(|p| !p.as_os_str().is_empty())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from)?;
        let _ = std::fs::remove_file(to);
        std::os::unix::fs::symlink(target, to)
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

/// Copies the listed paths from the repository into the worktree; says what it did.
pub fn copy_files(copy: &[String], repo: &Path, worktree: &Path) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for rel in copy {
        let Some(p) = inside(rel) else {
            return Err(format!(
                "copy path {rel:?} must be relative and stay inside the repository"
            ));
        };
        let from = repo.join(p);
        if std::fs::symlink_metadata(&from).is_err() {
            notes.push(format!("not copied (missing in the repository): {rel}"));
            continue;
        }
        copy_tree(&from, &worktree.join(p)).map_err(|e| format!("could not copy {rel}: {e}"))?;
        notes.push(format!("copied {rel}"));
    }
    Ok(notes)
}

/// The end of `text`, at most `OUTPUT_KEPT` bytes, cut at a character boundary.
fn tail(text: &str) -> String {
    if text.len() <= OUTPUT_KEPT {
        return text.to_string();
    }
    let mut at = text.len() - OUTPUT_KEPT;
    while !text.is_char_boundary(at) {
        at += 1;
    }
    format!("…{}", &text[at..])
}

/// Runs the set-up command with `sh -c` in `dir`; (succeeded, what it printed, how it ended).
pub fn run_command(command: &str, dir: &Path, timeout: Duration) -> (bool, String, String) {
    let mut child = match Command::new("/bin/sh")
        .arg("-c")
        // Both streams into one pipe, in the order they were written.
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return (false, String::new(), format!("could not be run: {e}")),
    };
    let reader = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        })
    });
    let deadline = Instant::now() + timeout;
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() > deadline => {
                // The whole group: a set-up's children must not outlive it.
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = child.wait();
                break Err(format!(
                    "did not finish within {} s and was stopped",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(e.to_string()),
        }
    };
    let output = reader
        .and_then(|r| r.join().ok())
        .map(|b| tail(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    match ended {
        Ok(status) if status.success() => (true, output, "exited with code 0".into()),
        Ok(status) => {
            let how = match status.code() {
                Some(c) => format!("exited with code {c}"),
                None => "was killed by a signal".into(),
            };
            (false, output, how)
        }
        Err(how) => (false, output, how),
    }
}

impl Engine {
    /// Prepares a new worktree as its repository asks: copies files in, then runs the set-up
    /// command as the task's first step. A failure fails the task (before any agent starts)
    /// with the command's output; the worktree stays for a look.
    pub(crate) async fn set_up_worktree(&self, task_id: &str, wt: &Worktree) -> EngineResult<()> {
        let setup = {
            let repo = PathBuf::from(&wt.repo);
            let user = self.config().repos.clone();
            tokio::task::spawn_blocking(move || for_repo(&repo, &user))
                .await
                .map_err(|e| EngineError::Internal(e.to_string()))?
        };
        let setup = match setup {
            Ok(s) => s,
            Err(e) => return self.fail_setup(task_id, e).await,
        };
        if !setup.copy.is_empty() {
            let (copy, repo, path) = (
                setup.copy.clone(),
                PathBuf::from(&wt.repo),
                wt.path().to_path_buf(),
            );
            let copied = tokio::task::spawn_blocking(move || copy_files(&copy, &repo, &path))
                .await
                .map_err(|e| EngineError::Internal(e.to_string()))?;
            match copied {
                Ok(notes) => {
                    self.append_output(task_id, &notes.join("\n")).await?;
                }
                Err(e) => return self.fail_setup(task_id, e).await,
            }
        }
        let Some(command) = setup.setup.filter(|c| !c.trim().is_empty()) else {
            return Ok(());
        };
        let (_, step) = self
            .add_step(task_id, &format!("set-up: {command}"))
            .await?;
        self.update_step(task_id, &step.id, StepStatus::Running, None)
            .await?;
        let dir = wt.agent_dir();
        let cmd = command.clone();
        let (ok, output, how) =
            tokio::task::spawn_blocking(move || run_command(&cmd, &dir, SETUP_TIMEOUT))
                .await
                .map_err(|e| EngineError::Internal(e.to_string()))?;
        let status = if ok {
            StepStatus::Completed
        } else {
            StepStatus::Failed
        };
        self.update_step(task_id, &step.id, status, Some(output.clone()))
            .await?;
        if ok {
            return Ok(());
        }
        let last: Vec<&str> = output.lines().rev().take(5).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        self.fail_setup(
            task_id,
            format!("the set-up command `{command}` {how}: {}", last.join(" / ")),
        )
        .await
    }

    async fn fail_setup(&self, task_id: &str, why: String) -> EngineResult<()> {
        let (_, ()) = self
            .mutate(task_id, |t| {
                t.move_to(TaskStatus::Failed, now_ms())?;
                t.metadata.error = Some(why.clone());
                Ok((vec![(TaskEventKind::Failed, vec![])], ()))
            })
            .await?;
        Err(EngineError::Conflict(format!(
            "the task's worktree set-up failed, so no agent was started: {why}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_repo_file_then_the_users_entry() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        assert_eq!(for_repo(&root, &[]).unwrap(), RepoSetup::default());
        std::fs::write(
            root.join(REPO_FILE),
            "[worktree]\ncopy = [\".env\"]\nsetup = \"make deps\"\n",
        )
        .unwrap();
        let s = for_repo(&root, &[]).unwrap();
        assert_eq!(s.copy, vec![".env"]);
        assert_eq!(s.setup.as_deref(), Some("make deps"));
        let user = RepoConfig {
            path: root.clone(),
            copy: vec![],
            setup: Some("true".into()),
        };
        let s = for_repo(&root, &[user]).unwrap();
        assert_eq!(
            (s.copy, s.setup.as_deref()),
            (vec![".env".to_string()], Some("true"))
        );
        std::fs::write(root.join(REPO_FILE), "[worktree]\nsetupp = 1\n").unwrap();
        assert!(for_repo(&root, &[]).unwrap_err().contains("not valid"));
    }

    #[test]
    fn copies_inside_only() {
        let repo = tempfile::tempdir().unwrap();
        let wt = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join(".env"), "KEY=1").unwrap();
        std::fs::create_dir_all(repo.path().join("conf/sub")).unwrap();
        std::fs::write(repo.path().join("conf/sub/x"), "x").unwrap();
        let notes = copy_files(
            &[".env".into(), "conf".into(), "missing".into()],
            repo.path(),
            wt.path(),
        )
        .unwrap();
        assert_eq!(notes.len(), 3);
        assert!(notes[2].contains("missing"));
        assert_eq!(
            std::fs::read_to_string(wt.path().join(".env")).unwrap(),
            "KEY=1"
        );
        assert_eq!(
            std::fs::read_to_string(wt.path().join("conf/sub/x")).unwrap(),
            "x"
        );
        assert!(copy_files(&["../x".into()], repo.path(), wt.path()).is_err());
        assert!(copy_files(&["/etc/passwd".into()], repo.path(), wt.path()).is_err());
    }

    #[test]
    fn runs_a_command_with_its_output_and_status() {
        let d = tempfile::tempdir().unwrap();
        let (ok, out, _) = run_command("echo out; echo err >&2", d.path(), Duration::from_secs(10));
        assert!(ok);
        assert_eq!(out, "out\nerr\n");
        let (ok, out, how) = run_command("echo bad; exit 3", d.path(), Duration::from_secs(10));
        assert!(!ok);
        assert_eq!(
            (out.as_str(), how.as_str()),
            ("bad\n", "exited with code 3")
        );
        let (ok, _, how) = run_command("sleep 30", d.path(), Duration::from_millis(200));
        assert!(!ok && how.contains("stopped"), "{how}");
    }
}
