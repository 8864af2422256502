//! Publishing a task's branch: the remote it goes to, what it changed (`git diff --stat`),
//! and the push. The user's checkout is never touched: the push sends the task's branch
//! from its own worktree, under the same name, and never forces.

use super::run::git;
use super::{GitError, Repo, Worktree};

/// The remote a task's branch is pushed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub name: String,
    pub url: String,
}

/// Where the task's branch goes: the remote the base branch tracks (its upstream), else
/// `origin`; `None` when the repository has neither.
pub fn remote_for(wt: &Worktree) -> Result<Option<Remote>, GitError> {
    let repo = Repo::of(wt)?;
    let upstream = git(&repo.root, &["config", "--get"])
        .arg(format!("branch.{}.remote", wt.base_branch))
        .output()?;
    // `.` is the repository itself (a base tracking another local branch): not a remote.
    let tracked = upstream
        .ok()
        .then(|| upstream.text())
        .filter(|r| !r.is_empty() && r != ".");
    for name in tracked.into_iter().chain(["origin".to_string()]) {
        let url = git(&repo.root, &["remote", "get-url", "--"])
            .arg(&name)
            .output()?;
        if url.ok() {
            return Ok(Some(Remote {
                url: url.text(),
                name,
            }));
        }
    }
    Ok(None)
}

/// What the task's branch changed since it left its base (`git diff --stat base...branch`).
pub fn diffstat(wt: &Worktree) -> Result<String, GitError> {
    git(wt.path(), &["diff", "--stat=100", "--no-color"])
        .arg(format!("{}...{}", wt.base_branch, wt.branch))
        .run()
}

/// Pushes the task's branch to `remote` under the same name (never forced: a branch that
/// moved there is git's refusal, said as git says it).
pub fn push(wt: &Worktree, remote: &Remote) -> Result<(), GitError> {
    git(wt.path(), &["push", "--"])
        .arg(&remote.name)
        .arg(format!("refs/heads/{b}:refs/heads/{b}", b = wt.branch))
        .run()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::super::worktree;
    use super::*;

    #[test]
    fn the_base_branchs_upstream_remote_comes_before_origin() {
        let d = repo();
        let state = tempfile::tempdir().unwrap();
        let base = worktree::plan(d.path(), None).unwrap();
        let wt = worktree::create(&base, state.path(), "id1", "t").unwrap();
        assert_eq!(remote_for(&wt).unwrap(), None);
        sh(
            d.path(),
            &["remote", "add", "origin", "/nowhere/origin.git"],
        );
        assert_eq!(remote_for(&wt).unwrap().unwrap().name, "origin");
        sh(d.path(), &["remote", "add", "up", "/nowhere/up.git"]);
        sh(d.path(), &["config", "branch.main.remote", "up"]);
        let r = remote_for(&wt).unwrap().unwrap();
        assert_eq!((r.name.as_str(), r.url.as_str()), ("up", "/nowhere/up.git"));
        // A base tracking a local branch pushes to origin.
        sh(d.path(), &["config", "branch.main.remote", "."]);
        assert_eq!(remote_for(&wt).unwrap().unwrap().name, "origin");
    }

    #[test]
    fn the_push_lands_in_the_remote_and_a_refusal_says_gits_reason() {
        let d = repo();
        let bare = tempfile::tempdir().unwrap();
        sh(bare.path(), &["init", "-q", "--bare"]);
        let url = bare.path().display().to_string();
        sh(d.path(), &["remote", "add", "origin", &url]);
        let state = tempfile::tempdir().unwrap();
        let base = worktree::plan(d.path(), None).unwrap();
        let wt = worktree::create(&base, state.path(), "id1", "t").unwrap();
        std::fs::write(wt.path().join("n.txt"), "n\n").unwrap();
        sh(wt.path(), &["add", "n.txt"]);
        sh(wt.path(), &["commit", "-qm", "n"]);
        assert!(diffstat(&wt).unwrap().contains("n.txt"));
        let remote = remote_for(&wt).unwrap().unwrap();
        push(&wt, &remote).unwrap();
        let tip = sh(wt.path(), &["rev-parse", "HEAD"]);
        let there = sh(
            bare.path(),
            &["rev-parse", &format!("refs/heads/{}", wt.branch)],
        );
        assert_eq!(tip, there);
        // The branch moved on the remote: not forced over.
        sh(wt.path(), &["commit", "-q", "--amend", "-m", "other"]);
        let e = push(&wt, &remote).unwrap_err().to_string();
        assert!(
            e.contains("rejected") || e.contains("fetch first") || e.contains("non-fast-forward"),
            "{e}"
        );
    }
}
