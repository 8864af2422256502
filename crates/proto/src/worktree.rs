//! A task's worktree and what it changed, as the API and the front ends see them. The git
//! work behind them (creating, diffing, merging) is the daemon's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The ref a task's snapshot is kept under.
pub fn snapshot_ref(task_id: &str) -> String {
    format!("refs/orchestra/snapshots/{task_id}")
}

/// A task's worktree, as the task records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Worktree {
    /// The top of the repository's main work tree.
    pub repo: String,
    /// The worktree's directory.
    pub path: String,
    /// The task's branch.
    pub branch: String,
    /// The branch the task started from and merges into.
    pub base_branch: String,
    /// The base branch's commit when the task started.
    pub base_commit: String,
    /// Where the agent runs, relative to the worktree (the task's directory in the repo).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
}

impl Worktree {
    pub fn path(&self) -> &Path {
        Path::new(&self.path)
    }
    /// The directory the agent runs in.
    pub fn agent_dir(&self) -> PathBuf {
        self.path().join(&self.prefix)
    }
}

/// What happened to a file (a rename shows as a deletion and an addition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
        }
    }
}

impl fmt::Display for FileStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub path: String,
    pub status: FileStatus,
    /// Line counts; `None` for a binary file.
    pub added: Option<u64>,
    pub removed: Option<u64>,
}

/// A task's changes against its base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    pub branch: String,
    pub base_branch: String,
    pub base_commit: String,
    /// The base branch's commit now; differs from `base_commit` when it moved meanwhile.
    pub base_now: Option<String>,
    pub base_moved: bool,
    pub files: Vec<FileDiff>,
    /// The unified diff of all files.
    pub patch: String,
}

impl Diff {
    /// Paths the task added, and paths it changed or deleted: a result's file lists.
    pub fn result_files(&self) -> (Vec<String>, Vec<String>) {
        let (created, modified): (Vec<&FileDiff>, Vec<&FileDiff>) = self
            .files
            .iter()
            .partition(|f| f.status == FileStatus::Added);
        let paths = |v: Vec<&FileDiff>| v.into_iter().map(|f| f.path.clone()).collect();
        (paths(modified), paths(created))
    }
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Merged {
    pub base_branch: String,
    /// The base branch's commit after the merge.
    pub commit: String,
    pub fast_forward: bool,
    /// The base branch had moved since the task started (so the merge may carry both).
    pub base_moved: bool,
    /// Files the merge changed on the base branch.
    pub files: Vec<String>,
}

/// A pull request opened for a task's branch (`POST /tasks/:id/pr`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullRequest {
    /// The pull (or merge) request's page, as `gh` or `glab` printed it.
    pub url: String,
    /// The task's branch, pushed under the same name.
    pub branch: String,
    /// The remote it was pushed to (`origin`, or the base branch's upstream remote).
    pub remote: String,
    /// When it was opened (ms since the epoch).
    pub at: i64,
}
