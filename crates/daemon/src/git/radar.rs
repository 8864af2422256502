//! The conflict radar's git side: given commits, which merges would conflict and in which
//! files, worked out with `git merge-tree --write-tree` (no checkout, no index, no ref
//! moved; the merged trees it writes are objects nothing refers to).

use super::GitError;
use super::merge::nul_fields;
use super::run::git;
use std::collections::BTreeSet;
use std::path::Path;

/// What merging two commits would give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeTree {
    /// A clean merge: its tree.
    Clean(String),
    /// The files the merge conflicts in, sorted.
    Conflicts(Vec<String>),
}

/// Merges `ours` and `theirs` (commits of the repository at `dir`) in memory.
pub fn merge_tree(dir: &Path, ours: &str, theirs: &str) -> Result<MergeTree, GitError> {
    let out = git(
        dir,
        &[
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            "-z",
        ],
    )
    .arg(ours)
    .arg(theirs)
    .output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut fields = nul_fields(&text);
    let tree = fields.next().unwrap_or("").to_string();
    match out.code {
        Some(0) => Ok(MergeTree::Clean(tree)),
        // git also exits 1 when it cannot merge at all (a commit it does not know): then
        // it printed no tree and names no file.
        Some(1) if !tree.is_empty() => {
            let files: BTreeSet<String> = fields.map(str::to_string).collect();
            Ok(MergeTree::Conflicts(files.into_iter().collect()))
        }
        _ => Err(GitError::Failed {
            command: "merge-tree".into(),
            message: out.stderr.trim().to_string(),
        }),
    }
}

/// The files merging `ours` and `theirs` would conflict in (empty: a clean merge).
pub fn conflicting_files(dir: &Path, ours: &str, theirs: &str) -> Result<Vec<String>, GitError> {
    Ok(match merge_tree(dir, ours, theirs)? {
        MergeTree::Clean(_) => Vec::new(),
        MergeTree::Conflicts(files) => files,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{repo, sh};
    use super::*;

    /// A commit on a new branch `name` from `main` writing `files`.
    fn branch(dir: &Path, name: &str, files: &[(&str, &str)]) -> String {
        sh(dir, &["checkout", "-qb", name, "main"]);
        for (f, text) in files {
            std::fs::write(dir.join(f), text).unwrap();
        }
        sh(dir, &["add", "."]);
        sh(dir, &["commit", "-qm", name]);
        let c = sh(dir, &["rev-parse", "HEAD"]);
        sh(dir, &["checkout", "-q", "main"]);
        c
    }

    #[test]
    fn merges_that_touch_the_same_lines_conflict_and_nothing_moves() {
        let d = repo();
        let p = d.path();
        let a = branch(p, "a", &[("a.txt", "from a\n")]);
        let b = branch(p, "b", &[("a.txt", "from b\n"), ("c.txt", "c\n")]);
        let c = branch(p, "c", &[("b.txt", "from c\n")]);
        let status = sh(p, &["status", "--porcelain"]);
        let head = sh(p, &["rev-parse", "HEAD"]);
        let index = std::fs::read(p.join(".git/index")).unwrap();
        assert_eq!(conflicting_files(p, &a, &b).unwrap(), vec!["a.txt"]);
        assert_eq!(conflicting_files(p, &b, &c).unwrap(), Vec::<String>::new());
        assert!(matches!(merge_tree(p, &a, &c).unwrap(), MergeTree::Clean(t) if t.len() == 40));
        assert_eq!(sh(p, &["status", "--porcelain"]), status);
        assert_eq!(sh(p, &["rev-parse", "HEAD"]), head);
        assert_eq!(std::fs::read(p.join(".git/index")).unwrap(), index);
    }

    #[test]
    fn a_bad_commit_is_an_error_not_a_conflict() {
        let d = repo();
        let e =
            merge_tree(d.path(), "HEAD", "0123456789abcdef0123456789abcdef01234567").unwrap_err();
        assert!(matches!(e, GitError::Failed { .. }), "{e:?}");
    }
}
