//! Which files a task changed in a git work tree, read without touching the user's index
//! or commits (`--no-optional-locks`, read-only commands only).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The dirty state of a work tree when a task started.
#[derive(Debug, Clone)]
pub struct GitSnapshot {
    root: PathBuf,
    /// Dirty paths (relative to the root) with a hash of their content then.
    dirty: BTreeMap<String, Option<u64>>,
    /// The commit checked out then (`None` in a repository without commits).
    head: Option<String>,
}

fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

fn content_hash(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Some(h.finish())
}

fn head(root: &Path) -> Option<String> {
    let out = git(root, &["rev-parse", "--verify", "-q", "HEAD"])?;
    Some(String::from_utf8_lossy(&out).trim().to_string())
}

/// (path, added) for every path that commits since `from` added or changed (not deleted).
fn committed_paths(root: &Path, from: &str) -> Vec<(String, bool)> {
    let range = format!("{from}..HEAD");
    let Some(out) = git(
        root,
        &["diff", "--name-status", "-z", "--no-renames", &range],
    ) else {
        return Vec::new();
    };
    let fields: Vec<&[u8]> = out.split(|b| *b == 0).filter(|f| !f.is_empty()).collect();
    fields
        .chunks(2)
        .filter_map(|pair| match pair {
            [status, path] if status.first() != Some(&b'D') => Some((
                String::from_utf8_lossy(path).into_owned(),
                status.first() == Some(&b'A'),
            )),
            _ => None,
        })
        .collect()
}

/// (path, untracked) for every dirty path, from `git status --porcelain -z`.
fn dirty_paths(root: &Path) -> Option<Vec<(String, bool)>> {
    let out = git(
        root,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )?;
    let mut paths = Vec::new();
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let code = &entry[..2];
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        // A rename carries its old path as the next field.
        if code[0] == b'R' || code[0] == b'C' {
            fields.next();
        }
        paths.push((path, code == b"??"));
    }
    Some(paths)
}

impl GitSnapshot {
    /// `None` when `dir` is not inside a git work tree (or git is missing).
    pub fn take(dir: &Path) -> Option<GitSnapshot> {
        let root = git(dir, &["rev-parse", "--show-toplevel"])?;
        let root = PathBuf::from(String::from_utf8_lossy(&root).trim());
        let dirty = dirty_paths(&root)?
            .into_iter()
            .map(|(p, _)| {
                let h = content_hash(&root.join(&p));
                (p, h)
            })
            .collect();
        let head = head(&root);
        Some(GitSnapshot { root, dirty, head })
    }

    /// Files changed since the snapshot: (modified tracked files, created untracked files),
    /// as paths relative to the work tree's root.
    pub fn changes(&self) -> (Vec<String>, Vec<String>) {
        let mut modified = BTreeSet::new();
        let mut created = BTreeSet::new();
        let changed = |path: &str| {
            let now = content_hash(&self.root.join(path));
            self.dirty.get(path).is_none_or(|then| *then != now)
        };
        // Agents that commit their own work (aider does) leave a clean tree: what their
        // commits added counts as created, what they changed as modified.
        let mut committed_new = BTreeSet::new();
        if let Some(from) = &self.head
            && head(&self.root).as_ref() != Some(from)
        {
            for (path, added) in committed_paths(&self.root, from) {
                if !changed(&path) {
                    continue;
                }
                if added {
                    committed_new.insert(path.clone());
                    created.insert(path);
                } else {
                    modified.insert(path);
                }
            }
        }
        for (path, untracked) in dirty_paths(&self.root).unwrap_or_default() {
            if !changed(&path) {
                continue;
            }
            if untracked || committed_new.contains(&path) {
                created.insert(path);
            } else {
                modified.insert(path);
            }
        }
        (
            modified.into_iter().collect(),
            created.into_iter().collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn reports_modified_and_created_since_the_snapshot() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        run(p, &["init", "-q"]);
        std::fs::write(p.join("a.txt"), "a").unwrap();
        std::fs::write(p.join("b.txt"), "b").unwrap();
        std::fs::write(p.join("dirty.txt"), "x").unwrap();
        run(p, &["add", "."]);
        run(p, &["commit", "-qm", "init"]);
        std::fs::write(p.join("dirty.txt"), "already dirty").unwrap();
        std::fs::write(p.join("old-untracked.txt"), "u").unwrap();
        let index_before = std::fs::read(p.join(".git/index")).unwrap();
        let snap = GitSnapshot::take(p).expect("a work tree");
        std::fs::write(p.join("a.txt"), "changed").unwrap();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/new.txt"), "n").unwrap();
        let (modified, created) = snap.changes();
        assert_eq!(modified, vec!["a.txt"]);
        assert_eq!(created, vec!["sub/new.txt"]);
        assert_eq!(
            std::fs::read(p.join(".git/index")).unwrap(),
            index_before,
            "index untouched"
        );
        assert!(
            GitSnapshot::take(&std::env::temp_dir().join("definitely-not-a-repo-xyz")).is_none()
        );
    }

    #[test]
    fn counts_what_the_agent_committed_itself() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        run(p, &["init", "-q"]);
        std::fs::write(p.join("a.txt"), "a").unwrap();
        std::fs::write(p.join("gone.txt"), "g").unwrap();
        std::fs::write(p.join("pending.txt"), "p").unwrap();
        run(p, &["add", "."]);
        run(p, &["commit", "-qm", "init"]);
        // The user's own pending change, which an agent may commit before its work.
        std::fs::write(p.join("pending.txt"), "user's change").unwrap();
        let snap = GitSnapshot::take(p).expect("a work tree");
        run(p, &["commit", "-qam", "the user's pending change"]);
        std::fs::write(p.join("a.txt"), "changed").unwrap();
        std::fs::write(p.join("hello.txt"), "hi").unwrap();
        std::fs::remove_file(p.join("gone.txt")).unwrap();
        run(p, &["add", "-A"]);
        run(p, &["commit", "-qm", "the agent's work"]);
        // Changed again after its commit: still a file the task created.
        std::fs::write(p.join("hello.txt"), "hi again").unwrap();
        let (modified, created) = snap.changes();
        assert_eq!(modified, vec!["a.txt"]);
        assert_eq!(created, vec!["hello.txt"]);
    }
}
