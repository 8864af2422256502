//! Merging a task's branch into its base branch. Everything is worked out first without
//! touching anything (the agent's leftovers become a commit no ref points to yet, the merge
//! is computed with `merge-tree`); only when the merge is clean and the user's uncommitted
//! changes are not in the files it touches are refs, index and files moved.

use super::run::git;
use super::{GitError, Merged, Repo, Worktree, radar, snapshot};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub(super) fn nul_fields(s: &str) -> impl Iterator<Item = &str> {
    s.split('\0').filter(|f| !f.is_empty())
}

/// The worktree that has `branch` checked out, if one does.
fn checked_out_at(repo: &Repo, branch: &str) -> Result<Option<PathBuf>, GitError> {
    let list = git(&repo.root, &["worktree", "list", "--porcelain", "-z"]).run()?;
    let want = format!("branch refs/heads/{branch}");
    let mut path = None;
    for field in nul_fields(&list) {
        if let Some(p) = field.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
        } else if field == want {
            return Ok(path);
        }
    }
    Ok(None)
}

/// Paths with uncommitted changes (staged, unstaged or untracked) in a work tree.
fn dirty_paths(dir: &Path) -> Result<BTreeSet<String>, GitError> {
    let out = git(
        dir,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )
    .run()?;
    let mut paths = BTreeSet::new();
    let mut fields = nul_fields(&out);
    while let Some(entry) = fields.next() {
        let Some(path) = entry.get(3..) else { continue };
        paths.insert(path.to_string());
        // A rename or copy carries its source as the next field; both are the user's.
        if matches!(entry.as_bytes().first(), Some(b'R' | b'C'))
            && let Some(from) = fields.next()
        {
            paths.insert(from.to_string());
        }
    }
    Ok(paths)
}

/// The task's work as one commit: its branch tip, plus what the agent left uncommitted.
fn task_commit(wt: &Worktree, message: &str) -> Result<String, GitError> {
    snapshot::Work::of(wt.path())?.commit(wt.path(), message)
}

/// Commits what the agent left uncommitted in the task's worktree onto its branch with
/// `message` (nothing when it left nothing); the branch's tip after.
pub fn commit_leftovers(wt: &Worktree, message: &str) -> Result<String, GitError> {
    if !wt.path().is_dir() {
        return Err(GitError::Gone(wt.path.clone()));
    }
    let repo = Repo::of(wt)?;
    repo.locked(|| {
        let work = task_commit(wt, message)?;
        follow_task_branch(wt, &work)?;
        Ok(work)
    })
}

fn is_ancestor(repo: &Repo, a: &str, b: &str) -> Result<bool, GitError> {
    git(&repo.root, &["merge-base", "--is-ancestor", a, b]).check()
}

/// Merges the task's branch into its base branch, committing what the agent left
/// uncommitted with `message` first. Fast-forward when possible, else a merge commit.
pub fn merge(wt: &Worktree, message: &str) -> Result<Merged, GitError> {
    if !wt.path().is_dir() {
        return Err(GitError::Gone(wt.path.clone()));
    }
    let repo = Repo::of(wt)?;
    repo.locked(|| merge_locked(&repo, wt, message))
}

fn merge_locked(repo: &Repo, wt: &Worktree, message: &str) -> Result<Merged, GitError> {
    let base_ref = format!("refs/heads/{}", wt.base_branch);
    let base = repo
        .commit_of(&base_ref)?
        .ok_or_else(|| GitError::BadBase(wt.base_branch.clone()))?;
    let work = task_commit(wt, message)?;
    let (new, fast_forward) = if is_ancestor(repo, &work, &base)? {
        (base.clone(), true)
    } else if is_ancestor(repo, &base, &work)? {
        (work.clone(), true)
    } else {
        (merge_commit(repo, &base, &work, message)?, false)
    };
    let touched = changed_files(repo, &base, &new)?;
    if new != base {
        match checked_out_at(repo, &wt.base_branch)? {
            Some(dir) => move_checked_out_base(&dir, wt, &base_ref, &base, &new, &touched)?,
            None => {
                update_base_ref(&repo.root, &base_ref, &base, &new)
                    .map_err(|_| GitError::Moved(wt.base_branch.clone()))?;
            }
        }
    }
    follow_task_branch(wt, &work)?;
    Ok(Merged {
        base_branch: wt.base_branch.clone(),
        commit: new,
        fast_forward,
        base_moved: base != wt.base_commit,
        files: touched,
    })
}

/// The merge commit of `base` and `work` (neither an ancestor of the other), computed with
/// `merge-tree` without touching any work tree: refused with the conflicting files when the
/// merge is not clean.
fn merge_commit(repo: &Repo, base: &str, work: &str, message: &str) -> Result<String, GitError> {
    let tree = match radar::merge_tree(&repo.root, base, work)? {
        radar::MergeTree::Clean(tree) => tree,
        radar::MergeTree::Conflicts(files) => return Err(GitError::Conflicts(files)),
    };
    // Its message is the task's, as the leftovers commit's: `git log` on the base branch
    // names the task, not "Merge branch 'orchestra/…'".
    snapshot::commit_tree(&repo.root, &tree, &[base, work], message)
}

/// The files that differ between two commits.
fn changed_files(repo: &Repo, from: &str, to: &str) -> Result<Vec<String>, GitError> {
    Ok(nul_fields(
        &git(
            &repo.root,
            &["diff", "--name-only", "--no-renames", "-z", from, to],
        )
        .run()?,
    )
    .map(str::to_string)
    .collect())
}

/// Moves `base_ref` from `base` to `new`, only if it still points at `base`.
fn update_base_ref(dir: &Path, base_ref: &str, base: &str, new: &str) -> Result<String, GitError> {
    git(
        dir,
        &["update-ref", "-m", "orchestra: merge", base_ref, new, base],
    )
    .run()
}

/// Moves the base branch checked out in `dir` from `base` to `new`, its index and files with
/// it: refused, changing nothing, when the user's uncommitted changes are in the `touched`
/// files.
fn move_checked_out_base(
    dir: &Path,
    wt: &Worktree,
    base_ref: &str,
    base: &str,
    new: &str,
    touched: &[String],
) -> Result<(), GitError> {
    let dirty = dirty_paths(dir)?;
    let in_way: Vec<String> = touched
        .iter()
        .filter(|f| dirty.contains(*f))
        .cloned()
        .collect();
    if !in_way.is_empty() {
        return Err(GitError::Dirty {
            branch: wt.base_branch.clone(),
            files: in_way,
        });
    }
    // Like `git checkout`: moves index and files from base to new, keeping every other
    // change of the user's; refuses (changing nothing) if one is in the way after all.
    git(dir, &["read-tree", "-m", "-u", base, new]).run()?;
    if let Err(e) = update_base_ref(dir, base_ref, base, new) {
        // Put the files back as they were; the branch did not move.
        let _ = git(dir, &["read-tree", "-m", "-u", new, base]).run();
        return Err(e);
    }
    Ok(())
}

/// The task's branch now holds the agent's leftovers as a commit (`work`); its index
/// follows.
fn follow_task_branch(wt: &Worktree, work: &str) -> Result<(), GitError> {
    let head = git(wt.path(), &["rev-parse", "HEAD"]).run()?;
    if work != head {
        git(wt.path(), &["update-ref", "HEAD", work, &head]).run()?;
        git(wt.path(), &["reset", "-q"]).run()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::super::worktree;
    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Worktree) {
        let d = repo();
        let state = tempfile::tempdir().unwrap();
        let base = worktree::plan(d.path(), None).unwrap();
        let wt = worktree::create(&base, state.path(), "id1", "t").unwrap();
        (d, state, wt)
    }

    #[test]
    fn fast_forward_commits_leftovers_and_keeps_unrelated_user_changes() {
        let (d, _s, wt) = setup();
        std::fs::write(wt.path().join("a.txt"), "agent\n").unwrap();
        std::fs::write(wt.path().join("new.txt"), "new\n").unwrap();
        std::fs::write(d.path().join("b.txt"), "user's own\n").unwrap();
        let m = merge(&wt, "agent work").unwrap();
        assert!(m.fast_forward);
        assert_eq!(m.files, vec!["a.txt", "new.txt"]);
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "agent\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("new.txt")).unwrap(),
            "new\n"
        );
        assert_eq!(sh(d.path(), &["status", "--porcelain"]), " M b.txt");
        assert_eq!(sh(d.path(), &["log", "-1", "--format=%s"]), "agent work");
        assert_eq!(sh(wt.path(), &["status", "--porcelain"]), "");
    }

    #[test]
    fn merge_commit_when_base_moved() {
        let (d, _s, wt) = setup();
        std::fs::write(wt.path().join("new.txt"), "new\n").unwrap();
        std::fs::write(d.path().join("b.txt"), "user\n").unwrap();
        sh(d.path(), &["commit", "-qam", "user"]);
        let m = merge(&wt, "fix2\n\nexited with code 0\n").unwrap();
        assert!(!m.fast_forward);
        // Both the leftovers commit and the merge commit say what they carry.
        assert_eq!(
            sh(d.path(), &["log", "-1", "--format=%B", "HEAD"]),
            "fix2\n\nexited with code 0"
        );
        assert_eq!(
            sh(d.path(), &["log", "-1", "--format=%s", "HEAD^2"]),
            "fix2"
        );
        assert_eq!(
            sh(d.path(), &["rev-list", "--parents", "-1", "HEAD"])
                .split(' ')
                .count(),
            3
        );
        assert_eq!(sh(d.path(), &["status", "--porcelain"]), "");
        assert!(d.path().join("new.txt").is_file());
    }

    #[test]
    fn refusals_change_nothing() {
        let (d, _s, wt) = setup();
        std::fs::write(wt.path().join("a.txt"), "agent\n").unwrap();
        std::fs::write(d.path().join("a.txt"), "user\n").unwrap();
        let before = (
            sh(d.path(), &["status", "--porcelain"]),
            sh(d.path(), &["rev-parse", "HEAD"]),
        );
        let e = merge(&wt, "x").unwrap_err();
        assert_eq!(
            e,
            GitError::Dirty {
                branch: "main".into(),
                files: vec!["a.txt".into()]
            }
        );
        // The user commits a rival change: now it conflicts.
        sh(d.path(), &["commit", "-qam", "user"]);
        let before2 = (
            sh(d.path(), &["status", "--porcelain"]),
            sh(d.path(), &["rev-parse", "HEAD"]),
        );
        assert_ne!(before, before2);
        assert_eq!(
            merge(&wt, "x").unwrap_err(),
            GitError::Conflicts(vec!["a.txt".into()])
        );
        let after = (
            sh(d.path(), &["status", "--porcelain"]),
            sh(d.path(), &["rev-parse", "HEAD"]),
        );
        assert_eq!(before2, after);
        assert_eq!(sh(wt.path(), &["status", "--porcelain"]), " M a.txt");
    }
}
