//! What a task changed: its worktree as it is on disk (committed, staged, unstaged and
//! untracked alike) against the commit it started from.

use super::run::git;
use super::{Diff, FileDiff, FileStatus, GitError, Repo, Worktree, snapshot};

fn status_of(code: &str) -> FileStatus {
    match code.chars().next() {
        Some('A') => FileStatus::Added,
        Some('D') => FileStatus::Deleted,
        _ => FileStatus::Modified,
    }
}

/// The worktree's changes against its base commit.
pub fn of(wt: &Worktree) -> Result<Diff, GitError> {
    if !wt.path().is_dir() {
        return Err(GitError::Gone(wt.path.clone()));
    }
    let dir = wt.path();
    let tree = snapshot::work_tree(dir)?;
    let range = [wt.base_commit.as_str(), tree.as_str()];
    let names = git(dir, &["diff", "--no-renames", "--name-status", "-z"])
        .args_from(&range)
        .run()?;
    let counts = git(dir, &["diff", "--no-renames", "--numstat", "-z"])
        .args_from(&range)
        .run()?;
    let patch = git(
        dir,
        &["diff", "--no-renames", "--no-color", "--no-ext-diff"],
    )
    .args_from(&range)
    .run()?;
    let mut files: Vec<FileDiff> = Vec::new();
    let mut fields = names.split('\0').filter(|f| !f.is_empty());
    while let (Some(code), Some(path)) = (fields.next(), fields.next()) {
        files.push(FileDiff {
            path: path.to_string(),
            status: status_of(code),
            added: None,
            removed: None,
        });
    }
    // numstat -z: "<added>\t<removed>\t<path>\0" for each file; "-" for binary.
    for entry in counts.split('\0').filter(|f| !f.is_empty()) {
        let mut parts = entry.splitn(3, '\t');
        let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if let Some(f) = files.iter_mut().find(|f| f.path == path) {
            f.added = a.parse().ok();
            f.removed = r.parse().ok();
        }
    }
    let repo = Repo::of(wt)?;
    let base_now = repo.commit_of(&format!("refs/heads/{}", wt.base_branch))?;
    Ok(Diff {
        branch: wt.branch.clone(),
        base_branch: wt.base_branch.clone(),
        base_commit: wt.base_commit.clone(),
        base_moved: base_now.as_deref() != Some(wt.base_commit.as_str()),
        base_now,
        files,
        patch,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::super::worktree;
    use super::*;

    #[test]
    fn counts_committed_staged_unstaged_and_untracked() {
        let d = repo();
        let state = tempfile::tempdir().unwrap();
        let base = worktree::plan(d.path(), None).unwrap();
        let wt = worktree::create(&base, state.path(), "id1", "t").unwrap();
        let p = wt.path();
        std::fs::write(p.join("c.txt"), "c\n").unwrap();
        sh(p, &["add", "c.txt"]);
        sh(p, &["commit", "-qm", "c"]);
        std::fs::write(p.join("a.txt"), "a\na2\n").unwrap();
        sh(p, &["add", "a.txt"]);
        std::fs::remove_file(p.join("b.txt")).unwrap();
        std::fs::write(p.join("u.txt"), "u\nu\n").unwrap();
        let diff = of(&wt).unwrap();
        let summary: Vec<(&str, &str, Option<u64>, Option<u64>)> = diff
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.status.as_str(), f.added, f.removed))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("a.txt", "modified", Some(1), Some(0)),
                ("b.txt", "deleted", Some(0), Some(1)),
                ("c.txt", "added", Some(1), Some(0)),
                ("u.txt", "added", Some(2), Some(0)),
            ]
        );
        assert!(diff.patch.contains("+a2"), "{}", diff.patch);
        assert!(!diff.base_moved);
        assert_eq!(
            diff.result_files(),
            (
                vec!["a.txt".to_string(), "b.txt".to_string()],
                vec!["c.txt".to_string(), "u.txt".to_string()]
            )
        );
        std::fs::write(d.path().join("a.txt"), "user\n").unwrap();
        sh(d.path(), &["commit", "-qam", "user moved main"]);
        assert!(of(&wt).unwrap().base_moved);
    }
}
