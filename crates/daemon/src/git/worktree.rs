//! A task's own worktree: a new branch `orchestra/<slug>-<id8>` from the base, checked out
//! under `<state>/worktrees/<repo-name>-<hash>/<id8>`; removed only after a snapshot.

use super::run::git;
use super::{GitError, Repo, Worktree, snapshot};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// Where a worktree task starts from: a branch of a repository and its commit then.
#[derive(Debug, Clone)]
pub struct Base {
    pub repo: Repo,
    pub branch: String,
    pub commit: String,
}

/// Checks that a worktree can start from `dir`'s repository: it has a commit, and the base
/// is `base_ref` (a branch) or the checked-out branch.
pub fn plan(dir: &Path, base_ref: Option<&str>) -> Result<Base, GitError> {
    let repo = Repo::discover(dir)?;
    let root = repo.root.display().to_string();
    if repo.commit_of("HEAD")?.is_none() {
        return Err(GitError::NoCommit(root));
    }
    let branch = match base_ref {
        Some(b) => {
            let b = b.strip_prefix("refs/heads/").unwrap_or(b);
            if !repo.has_branch(b)? {
                return Err(GitError::BadBase(b.to_string()));
            }
            b.to_string()
        }
        None => repo.current_branch()?.ok_or(GitError::Detached(root))?,
    };
    let commit = repo
        .commit_of(&format!("refs/heads/{branch}"))?
        .ok_or_else(|| GitError::BadBase(branch.clone()))?;
    Ok(Base {
        repo,
        branch,
        commit,
    })
}

/// Lowercase letters, digits and single dashes from a task name, at most 30 of them.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
        if s.len() >= 30 {
            break;
        }
    }
    let s = s.trim_end_matches('-');
    if s.is_empty() {
        "task".into()
    } else {
        s.into()
    }
}

fn short(id: &str) -> String {
    id.chars().filter(|c| *c != '-').take(8).collect()
}

/// The branch a task gets.
pub fn branch_name(task_name: &str, task_id: &str) -> String {
    format!("orchestra/{}-{}", slug(task_name), short(task_id))
}

/// `<worktrees>/<repo-name>-<hash of its path>`: one directory per repository.
pub fn repo_dir(worktrees: &Path, repo_root: &Path) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    repo_root.hash(&mut h);
    let name = repo_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into());
    worktrees.join(format!("{name}-{:08x}", h.finish() as u32))
}

/// Creates the task's branch from the base and checks it out in its own worktree.
pub fn create(
    base: &Base,
    worktrees: &Path,
    task_id: &str,
    task_name: &str,
) -> Result<Worktree, GitError> {
    let branch = branch_name(task_name, task_id);
    let dir = repo_dir(worktrees, &base.repo.root);
    orchestra_sys::private::create_private_dir(worktrees)
        .and_then(|()| std::fs::create_dir_all(&dir))
        .map_err(|e| GitError::Missing(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(short(task_id));
    base.repo.locked(|| {
        if base.repo.has_branch(&branch)? {
            return Err(GitError::BranchExists(branch.clone()));
        }
        git(
            &base.repo.root,
            &["worktree", "add", "--quiet", "-b", &branch],
        )
        .arg(path.to_string_lossy())
        .arg(&base.commit)
        .run()?;
        Ok(())
    })?;
    // The task's directory may hold nothing tracked (so git did not create it).
    let agent_dir = path.join(&base.repo.prefix);
    std::fs::create_dir_all(&agent_dir)
        .map_err(|e| GitError::Missing(format!("cannot create {}: {e}", agent_dir.display())))?;
    Ok(Worktree {
        repo: base.repo.root.to_string_lossy().into_owned(),
        path: path.to_string_lossy().into_owned(),
        branch,
        base_branch: base.branch.clone(),
        base_commit: base.commit.clone(),
        prefix: base.repo.prefix.clone(),
    })
}

/// Removes the worktree after keeping everything in it under the task's snapshot ref;
/// the branch is deleted too unless `keep_branch`. Returns the snapshot commit (`None` when
/// the worktree directory was already gone).
pub fn remove(
    wt: &Worktree,
    task_id: &str,
    why: &str,
    keep_branch: bool,
) -> Result<Option<String>, GitError> {
    let repo = Repo::discover(Path::new(&wt.repo))?;
    repo.locked(|| {
        let snap = if wt.path().is_dir() {
            let commit = snapshot::take(wt.path(), task_id, why)?;
            git(&repo.root, &["worktree", "remove", "--force", "--force"])
                .arg(&wt.path)
                .run()?;
            Some(commit)
        } else {
            // Gone already (removed by hand): forget it, keep the branch's work.
            git(&repo.root, &["worktree", "prune"]).run()?;
            if let Some(tip) = repo.commit_of(&format!("refs/heads/{}", wt.branch))? {
                git(
                    &repo.root,
                    &["update-ref", &snapshot::snapshot_ref(task_id), &tip],
                )
                .run()?;
            }
            None
        };
        if !keep_branch && repo.has_branch(&wt.branch)? {
            git(&repo.root, &["branch", "-D", "--quiet", &wt.branch]).run()?;
        }
        Ok(snap)
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::*;

    #[test]
    fn slugs_and_branch_names() {
        assert_eq!(slug("Fix the  Login bug!"), "fix-the-login-bug");
        assert_eq!(slug("!!!"), "task");
        assert_eq!(
            branch_name("Add tests", "0123abcd-ef00-1111"),
            "orchestra/add-tests-0123abcd"
        );
    }

    #[test]
    fn refuses_bad_starting_points() {
        let none = tempfile::tempdir().unwrap();
        assert!(matches!(
            plan(none.path(), None),
            Err(GitError::NotARepo(_))
        ));
        sh(none.path(), &["init", "-q"]);
        assert!(matches!(
            plan(none.path(), None),
            Err(GitError::NoCommit(_))
        ));
        let d = repo();
        sh(d.path(), &["checkout", "-q", "--detach"]);
        assert!(matches!(plan(d.path(), None), Err(GitError::Detached(_))));
        assert_eq!(plan(d.path(), Some("main")).unwrap().branch, "main");
        assert!(matches!(
            plan(d.path(), Some("nope")),
            Err(GitError::BadBase(_))
        ));
    }

    #[test]
    fn create_then_remove_keeps_a_snapshot() {
        let d = repo();
        let state = tempfile::tempdir().unwrap();
        let base = plan(d.path(), None).unwrap();
        let wt = create(&base, &state.path().join("worktrees"), "abcdef12-3", "T").unwrap();
        assert_eq!(wt.branch, "orchestra/t-abcdef12");
        assert!(wt.path().join("a.txt").is_file());
        assert!(matches!(
            create(&base, &state.path().join("worktrees"), "abcdef12-3", "T"),
            Err(GitError::BranchExists(_))
        ));
        std::fs::write(wt.path().join("new.txt"), "n\n").unwrap();
        remove(&wt, "abcdef12-3", "test", false).unwrap();
        assert!(!wt.path().exists());
        assert!(!base.repo.has_branch(&wt.branch).unwrap());
        let r = snapshot::snapshot_ref("abcdef12-3");
        assert_eq!(sh(d.path(), &["show", &format!("{r}:new.txt")]), "n");
    }
}
