//! Git for task isolation: a worktree per task, its diff against the base, merging it back,
//! and a snapshot ref before anything is removed. The user's own uncommitted work is never
//! touched: orchestra reads it, and refuses when it is in the way.

pub mod diff;
pub mod merge;
pub mod publish;
pub mod radar;
pub mod run;
pub mod snapshot;
pub mod worktree;

pub use orchestra_proto::worktree::{Diff, FileDiff, FileStatus, Merged, Worktree};
pub use worktree::Base;

use std::path::{Path, PathBuf};

/// What can go wrong, each as a sentence a person can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not inside a git repository; use isolation \"none\" or a directory in one")]
    NotARepo(String),
    #[error("the repository at {0} has no commit yet; commit once, or use isolation \"none\"")]
    NoCommit(String),
    #[error("HEAD is detached in {0}; check out a branch or give baseRef (a branch) to start from")]
    Detached(String),
    #[error("baseRef {0:?} is not a branch of this repository")]
    BadBase(String),
    #[error("branch {0} already exists; orchestra will not reuse or overwrite it")]
    BranchExists(String),
    #[error("the merge conflicts in {}; nothing was changed", .0.join(", "))]
    Conflicts(Vec<String>),
    #[error(
        "your uncommitted changes in {} are in the way of the merge into {branch}; commit or stash them first; nothing was changed",
        .files.join(", ")
    )]
    Dirty { branch: String, files: Vec<String> },
    #[error("branch {0} moved while orchestra was merging; try again")]
    Moved(String),
    #[error("the task's worktree is gone: {0}")]
    Gone(String),
    #[error("git {command} failed: {message}")]
    Failed { command: String, message: String },
    #[error("git {0} did not finish in time and was stopped")]
    TimedOut(String),
    #[error("git could not be run: {0}")]
    Missing(String),
}

impl GitError {
    /// The request was wrong (400), as opposed to a state in the way (409) or a failure.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            GitError::NotARepo(_)
                | GitError::NoCommit(_)
                | GitError::Detached(_)
                | GitError::BadBase(_)
        )
    }

    /// The repository's state is in the way (409).
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            GitError::BranchExists(_)
                | GitError::Conflicts(_)
                | GitError::Dirty { .. }
                | GitError::Moved(_)
                | GitError::Gone(_)
        )
    }
}

/// Where a directory sits in a repository.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The top of the work tree the directory is in.
    pub root: PathBuf,
    /// The git directory shared by all worktrees of the repository.
    pub common_dir: PathBuf,
    /// The directory relative to `root` (`""` or ending in `/`).
    pub prefix: String,
}

impl Repo {
    /// The repository `dir` is in.
    /// The repository a task's worktree belongs to.
    pub fn of(wt: &Worktree) -> Result<Repo, GitError> {
        Repo::discover(Path::new(&wt.repo))
    }

    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let out = run::git(
            dir,
            &[
                "rev-parse",
                "--show-toplevel",
                "--git-common-dir",
                "--show-prefix",
            ],
        )
        .output()?;
        let shown = dir.display().to_string();
        if !out.ok() {
            return Err(GitError::NotARepo(shown));
        }
        let text = out.text();
        let mut lines = text.lines();
        let (Some(root), Some(common)) = (lines.next(), lines.next()) else {
            return Err(GitError::NotARepo(shown));
        };
        let root = PathBuf::from(root);
        let common = Path::new(common);
        let common_dir = if common.is_absolute() {
            common.to_path_buf()
        } else {
            dir.join(common)
        };
        Ok(Repo {
            root,
            common_dir: common_dir.canonicalize().unwrap_or(common_dir),
            prefix: lines.next().unwrap_or("").to_string(),
        })
    }

    /// The commit `rev` names, if it names one.
    pub fn commit_of(&self, rev: &str) -> Result<Option<String>, GitError> {
        let out = run::git(&self.root, &["rev-parse", "--verify", "--quiet"])
            .arg(format!("{rev}^{{commit}}"))
            .output()?;
        Ok(out.ok().then(|| out.text()))
    }

    /// The branch checked out in the work tree, or `None` on a detached HEAD.
    pub fn current_branch(&self) -> Result<Option<String>, GitError> {
        let out = run::git(&self.root, &["symbolic-ref", "-q", "--short", "HEAD"]).output()?;
        Ok(out.ok().then(|| out.text()))
    }

    /// Whether `refs/heads/<name>` exists.
    pub fn has_branch(&self, name: &str) -> Result<bool, GitError> {
        run::git(&self.root, &["show-ref", "--verify", "--quiet"])
            .arg(format!("refs/heads/{name}"))
            .check()
    }

    /// Runs `f` holding this repository's lock: orchestra's git operations on one
    /// repository never race each other.
    pub fn locked<T>(&self, f: impl FnOnce() -> T) -> T {
        let lock = run::repo_lock(&self.common_dir);
        let _held = lock.lock();
        f()
    }
}

/// Test helpers: real repositories in temporary directories.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;
    use std::process::Command;

    pub fn sh(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// A repository on branch `main` with one commit of `a.txt` and `b.txt`.
    pub fn repo() -> tempfile::TempDir {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path();
        sh(p, &["init", "-q", "-b", "main"]);
        std::fs::write(p.join("a.txt"), "a\n").expect("write");
        std::fs::write(p.join("b.txt"), "b\n").expect("write");
        sh(p, &["add", "."]);
        sh(p, &["commit", "-qm", "init"]);
        d
    }
}
