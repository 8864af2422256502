//! Everything in a work tree (committed, staged, unstaged, untracked) as one git tree,
//! built in a temporary index so the work tree's own index is never touched; and the
//! snapshot commit kept under `refs/orchestra/snapshots/<task-id>` before a removal.

use super::GitError;
use super::run::git;
use std::path::Path;

pub use orchestra_proto::worktree::snapshot_ref;

/// A temporary index file, removed when dropped.
struct TempIndex(std::path::PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Asks git where the work tree's own index is (then `extra` revisions): one process.
fn own_index_and(dir: &Path, extra: &[&str]) -> Result<Vec<String>, GitError> {
    let out = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )
    .args_from(extra)
    .run()?;
    let lines: Vec<String> = out.lines().map(str::to_string).collect();
    if lines.len() != extra.len() + 1 {
        return Err(GitError::Failed {
            command: "rev-parse".into(),
            message: format!("expected {} lines, got {out:?}", extra.len() + 1),
        });
    }
    Ok(lines)
}

/// The tree of the work tree at `dir` as it is on disk (ignored files excepted).
pub fn work_tree(dir: &Path) -> Result<String, GitError> {
    let own = own_index_and(dir, &[])?.remove(0);
    tree_on_disk(dir, &own)
}

/// [`work_tree`], given the work tree's own index file.
fn tree_on_disk(dir: &Path, own: &str) -> Result<String, GitError> {
    let tmp =
        TempIndex(std::env::temp_dir().join(format!("orchestra-index-{}", uuid::Uuid::new_v4())));
    let index = tmp.0.to_string_lossy().into_owned();
    // Start from a copy of the work tree's own index: its stat data lets `add -A` skip
    // rehashing unchanged files. Without one, from HEAD's tree. Either way `add -A` then
    // records exactly what is on disk, and the real index is only read.
    if std::fs::copy(own, &tmp.0).is_err() {
        git(dir, &["read-tree", "HEAD"])
            .env("GIT_INDEX_FILE", &index)
            .run()?;
    }
    git(dir, &["add", "-A", "--", "."])
        .env("GIT_INDEX_FILE", &index)
        .run()?;
    git(dir, &["write-tree"])
        .env("GIT_INDEX_FILE", &index)
        .run()
}

/// A work tree's work: its HEAD, and the tree of everything on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub head: String,
    head_tree: String,
    pub tree: String,
}

impl Work {
    /// Reads the work tree at `dir` (its own index only read).
    pub fn of(dir: &Path) -> Result<Work, GitError> {
        let [own, head, head_tree]: [String; 3] = own_index_and(dir, &["HEAD", "HEAD^{tree}"])?
            .try_into()
            .map_err(|_| GitError::Failed {
                command: "rev-parse".into(),
                message: "HEAD or its tree is missing".into(),
            })?;
        Ok(Work {
            tree: tree_on_disk(dir, &own)?,
            head,
            head_tree,
        })
    }

    /// The work as one commit: HEAD itself when nothing is uncommitted, else a commit of
    /// the tree on top of HEAD that no ref points to.
    pub fn commit(&self, dir: &Path, message: &str) -> Result<String, GitError> {
        if self.tree == self.head_tree {
            return Ok(self.head.clone());
        }
        commit_tree(dir, &self.tree, &[&self.head], message)
    }
}

/// An identity for orchestra's commits when the user has none configured.
fn with_identity<'a>(
    dir: &'a Path,
    g: super::run::Git<'a>,
) -> Result<super::run::Git<'a>, GitError> {
    if git(dir, &["var", "GIT_COMMITTER_IDENT"]).check()? {
        return Ok(g);
    }
    Ok(g.env("GIT_AUTHOR_NAME", "orchestra")
        .env("GIT_AUTHOR_EMAIL", "orchestra@localhost")
        .env("GIT_COMMITTER_NAME", "orchestra")
        .env("GIT_COMMITTER_EMAIL", "orchestra@localhost"))
}

/// A commit of `tree` with `parents`, made without touching any branch or index.
pub fn commit_tree(
    dir: &Path,
    tree: &str,
    parents: &[&str],
    message: &str,
) -> Result<String, GitError> {
    let mut g = git(dir, &["commit-tree", tree]);
    for p in parents {
        g = g.arg("-p").arg(*p);
    }
    with_identity(dir, g.arg("-m").arg(message))?.run()
}

/// Keeps everything in the work tree at `dir` (uncommitted and untracked included) as a
/// commit on top of its HEAD under the task's snapshot ref; returns the commit.
pub fn take(dir: &Path, task_id: &str, why: &str) -> Result<String, GitError> {
    let head = git(dir, &["rev-parse", "HEAD"]).run()?;
    let tree = work_tree(dir)?;
    let message = format!("orchestra: snapshot of task {task_id} ({why})");
    let commit = commit_tree(dir, &tree, &[&head], &message)?;
    git(
        dir,
        &[
            "update-ref",
            "-m",
            &message,
            &snapshot_ref(task_id),
            &commit,
        ],
    )
    .run()?;
    Ok(commit)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::*;

    #[test]
    fn snapshot_holds_uncommitted_and_untracked_without_touching_the_index() {
        let d = repo();
        let p = d.path();
        std::fs::write(p.join("a.txt"), "changed\n").unwrap();
        std::fs::write(p.join("b.txt"), "staged\n").unwrap();
        sh(p, &["add", "b.txt"]);
        std::fs::write(p.join("new.txt"), "untracked\n").unwrap();
        let status = sh(p, &["status", "--porcelain"]);
        let index = std::fs::read(p.join(".git/index")).unwrap();
        take(p, "t1", "test").unwrap();
        let r = snapshot_ref("t1");
        assert_eq!(sh(p, &["show", &format!("{r}:a.txt")]), "changed");
        assert_eq!(sh(p, &["show", &format!("{r}:b.txt")]), "staged");
        assert_eq!(sh(p, &["show", &format!("{r}:new.txt")]), "untracked");
        assert_eq!(sh(p, &["status", "--porcelain"]), status);
        assert_eq!(std::fs::read(p.join(".git/index")).unwrap(), index);
        assert_eq!(
            sh(p, &["rev-parse", &format!("{r}^")]),
            sh(p, &["rev-parse", "HEAD"])
        );
    }
}
