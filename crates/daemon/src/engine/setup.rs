//! Per-repository set-up of a new task worktree: files to copy in (e.g. `.env`, which git does
//! not carry) and a command to run before the agent (e.g. `npm ci`), as `repo_file.rs` plans
//! them. Copies never reach out of the repository: a path that names a place outside it, by
//! `..`, as an absolute path or through a symlink anywhere along it (or inside a directory it
//! copies), is refused before anything is copied.

use super::repo_file::RepoSetup;
use super::shell_run::{self, Ending, ShellCommand};
use super::{Engine, EngineError, EngineResult, TaskEventKind, now_ms};
use crate::git::Worktree;
use orchestra_proto::task::{StepStatus, TaskStatus};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// How long a set-up command may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

fn refused(rel: &str, why: &str) -> String {
    format!("copy path {rel:?} is refused: {why}; nothing was copied")
}

/// `path` with `.` and `..` resolved by name, without asking the file system.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where the symlink `link` leads, when that is outside `root` (canonical); `None` inside.
fn link_outside(link: &Path, root: &Path) -> Option<String> {
    let Ok(target) = std::fs::read_link(link) else {
        return Some("a target that cannot be read".into());
    };
    let inside = match link.canonicalize() {
        Ok(resolved) => resolved.starts_with(root),
        // Dangling, or a loop: judged by the target's name from the link's directory.
        Err(_) => {
            let base = link
                .parent()
                .map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
                .unwrap_or_default();
            lexically_normal(&base.join(&target)).starts_with(root)
        }
    };
    (!inside).then(|| target.display().to_string())
}

/// A symlink anywhere under the directory `dir` that leads out of `root`: its path below
/// `root` and its target.
fn escaping_link_under(dir: &Path, root: &Path) -> Option<(PathBuf, String)> {
    let entries = std::fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if let Some(to) = link_outside(&path, root) {
                return Some((path, to));
            }
        } else if meta.is_dir()
            && let Some(found) = escaping_link_under(&path, root)
        {
            return Some(found);
        }
    }
    None
}

/// Refuses a copy path that leaves `root` (canonical; `place` names it in the sentence): by
/// its name, or through a symlink on the way or, for a directory, inside it.
fn check_copy_path(rel: &str, root: &Path, place: &str) -> Result<(), String> {
    let p = Path::new(rel);
    if rel.trim().is_empty() {
        return Err(refused(rel, "it is empty"));
    }
    if p.is_absolute() {
        return Err(refused(
            rel,
            "it is absolute; copy paths are relative to the repository's root",
        ));
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Err(refused(
            rel,
            "it contains \"..\"; copy paths stay inside the repository",
        ));
    }
    let parts: Vec<&std::ffi::OsStr> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    let mut at = root.to_path_buf();
    let mut named = PathBuf::new();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        named.push(part);
        match std::fs::symlink_metadata(&at) {
            // Missing: nothing to copy there (noted and skipped when copying).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(refused(rel, &format!("cannot read {}: {e}", at.display()))),
            Ok(m) if m.file_type().is_symlink() => {
                if let Some(to) = link_outside(&at, root) {
                    return Err(refused(
                        rel,
                        &format!(
                            "{:?} {place} is a symlink pointing out of it (to {to})",
                            named.display().to_string()
                        ),
                    ));
                }
                // The last one is copied as a symlink, not followed.
                if i + 1 == parts.len() {
                    return Ok(());
                }
            }
            Ok(_) => {}
        }
    }
    if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir())
        && let Some((link, to)) = escaping_link_under(&at, root)
    {
        let below = link.strip_prefix(root).unwrap_or(&link);
        return Err(refused(
            rel,
            &format!(
                "{:?} {place} is a symlink pointing out of it (to {to})",
                below.display().to_string()
            ),
        ));
    }
    Ok(())
}

/// Checks every copy path against the repository before anything is copied.
pub fn check_copies(copy: &[String], repo: &Path) -> Result<(), String> {
    if copy.is_empty() {
        return Ok(());
    }
    let root = repo
        .canonicalize()
        .map_err(|e| format!("cannot read the repository {}: {e}", repo.display()))?;
    copy.iter()
        .try_for_each(|rel| check_copy_path(rel, &root, "in the repository"))
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
        // Whatever was at `to` (a tracked file, or a symlink) is replaced, never written
        // through.
        let _ = std::fs::remove_file(to);
        std::fs::copy(from, to).map(|_| ())
    }
}

/// Copies the listed paths from the repository into the worktree; says what it did. Every
/// path is checked, on both sides, before anything is copied.
pub fn copy_files(copy: &[String], repo: &Path, worktree: &Path) -> Result<Vec<String>, String> {
    check_copies(copy, repo)?;
    let into = worktree
        .canonicalize()
        .map_err(|e| format!("cannot read the worktree {}: {e}", worktree.display()))?;
    for rel in copy {
        check_copy_path(rel, &into, "in the task's worktree")?;
    }
    let mut notes = Vec::new();
    for rel in copy {
        let from = repo.join(rel);
        if std::fs::symlink_metadata(&from).is_err() {
            notes.push(format!("not copied (missing in the repository): {rel}"));
            continue;
        }
        copy_tree(&from, &into.join(rel)).map_err(|e| format!("could not copy {rel}: {e}"))?;
        notes.push(format!("copied {rel}"));
    }
    Ok(notes)
}

/// Runs the set-up command with `sh -c` in `dir` (see `shell_run`); (succeeded, what it
/// printed, how it ended).
pub fn run_command(
    command: &str,
    dir: &Path,
    timeout: Duration,
    grace: Duration,
) -> (bool, String, String) {
    let ran = shell_run::run(
        &ShellCommand {
            command,
            dir,
            timeout,
            grace,
            env: &[],
        },
        &|| false,
    );
    let how = match &ran.ending {
        Ending::Exited(c) => format!("exited with code {c}"),
        Ending::Signalled(_) => "was killed by a signal".into(),
        Ending::TimedOut | Ending::Stopped => format!(
            "did not finish within {} s and was stopped",
            timeout.as_secs()
        ),
        Ending::NotRun(why) => why.clone(),
    };
    (ran.succeeded(), ran.output, how)
}

impl Engine {
    /// Prepares a new worktree as its repository asks: copies files in, then runs the set-up
    /// command as the task's first step. A failure fails the task (before any agent starts)
    /// with the command's output; the worktree stays for a look.
    pub(crate) async fn set_up_worktree(
        &self,
        task_id: &str,
        wt: &Worktree,
        setup: RepoSetup,
    ) -> EngineResult<()> {
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
        let Some(command) = setup.command().map(str::to_string) else {
            return Ok(());
        };
        let (_, step) = self
            .add_step(task_id, &format!("set-up: {command}"))
            .await?;
        self.update_step(task_id, &step.id, StepStatus::Running, None)
            .await?;
        let dir = wt.agent_dir();
        let cmd = command.clone();
        let grace = self.config().grace;
        let (ok, output, how) =
            tokio::task::spawn_blocking(move || run_command(&cmd, &dir, SETUP_TIMEOUT, grace))
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

    pub(super) async fn fail_setup(&self, task_id: &str, why: String) -> EngineResult<()> {
        Err(self.setup_failed(task_id, why).await)
    }

    /// Fails the task because its worktree's set-up failed (`why`); the error to answer with.
    pub(super) async fn setup_failed(&self, task_id: &str, why: String) -> EngineError {
        let failed = self
            .mutate(task_id, |t| {
                t.move_to(TaskStatus::Failed, now_ms())?;
                t.metadata.error = Some(why.clone());
                Ok((vec![(TaskEventKind::Failed, vec![])], ()))
            })
            .await;
        match failed {
            Err(e) => e,
            Ok(_) => EngineError::Conflict(format!(
                "the task's worktree set-up failed, so no agent was started: {why}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn copies_never_reach_out_of_the_repository() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        std::fs::create_dir_all(r.join("conf/deep")).unwrap();
        std::fs::write(r.join("conf/deep/x"), "x").unwrap();
        std::fs::write(r.join(".env"), "KEY=1").unwrap();
        symlink(outside.path(), r.join("out")).unwrap();
        symlink(outside.path().join("secret"), r.join("secret-link")).unwrap();
        symlink("../../..", r.join("conf/up")).unwrap();
        symlink("conf", r.join("inside")).unwrap();
        symlink(".env", r.join("env-link")).unwrap();
        let wt = tempfile::tempdir().unwrap();
        let refused_with = |path: &str| {
            let e = copy_files(&[".env".into(), path.into()], r, wt.path()).unwrap_err();
            assert!(
                !wt.path().join(".env").exists(),
                "nothing is copied: {path}"
            );
            e
        };
        for (path, why) in [
            ("../x", "contains \"..\""),
            ("conf/../../x", "contains \"..\""),
            ("/etc/passwd", "absolute"),
            ("", "empty"),
            (
                "out",
                "\"out\" in the repository is a symlink pointing out of it",
            ),
            ("out/secret", "\"out\" in the repository is a symlink"),
            (
                "secret-link",
                "\"secret-link\" in the repository is a symlink",
            ),
            ("conf/up/etc", "\"conf/up\" in the repository is a symlink"),
            // A directory holding a symlink out is refused too.
            ("conf", "\"conf/up\" in the repository is a symlink"),
        ] {
            let e = refused_with(path);
            assert!(e.contains(&format!("copy path {path:?} is refused")), "{e}");
            assert!(e.contains(why), "{path}: {e}");
            assert!(e.ends_with("nothing was copied"), "{e}");
        }
        // Symlinks that stay inside are fine: along the way, followed; last, kept a link.
        std::fs::remove_file(r.join("conf/up")).unwrap();
        let notes = copy_files(&["inside/deep/x".into(), "env-link".into()], r, wt.path()).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(
            std::fs::read_to_string(wt.path().join("inside/deep/x")).unwrap(),
            "x"
        );
        assert_eq!(
            std::fs::read_link(wt.path().join("env-link")).unwrap(),
            Path::new(".env")
        );
        // The worktree's side: a symlink out there is never written through.
        let wt2 = tempfile::tempdir().unwrap();
        symlink(outside.path(), wt2.path().join("conf")).unwrap();
        let e = copy_files(&["conf/deep/x".into()], r, wt2.path()).unwrap_err();
        assert!(
            e.contains("\"conf\" in the task's worktree is a symlink pointing out of it"),
            "{e}"
        );
        assert!(!outside.path().join("deep").exists());
    }

    const GRACE: Duration = Duration::from_millis(200);

    #[test]
    fn runs_a_command_with_its_output_and_status() {
        let d = tempfile::tempdir().unwrap();
        let (ok, out, _) = run_command(
            "echo out; echo err >&2",
            d.path(),
            Duration::from_secs(10),
            GRACE,
        );
        assert!(ok);
        assert_eq!(out, "out\nerr\n");
        let (ok, out, how) =
            run_command("echo bad; exit 3", d.path(), Duration::from_secs(10), GRACE);
        assert!(!ok);
        assert_eq!(
            (out.as_str(), how.as_str()),
            ("bad\n", "exited with code 3")
        );
        let (ok, _, how) = run_command("sleep 30", d.path(), Duration::from_millis(200), GRACE);
        assert!(!ok && how.contains("stopped"), "{how}");
    }
}
