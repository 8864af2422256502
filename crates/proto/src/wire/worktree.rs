//! Task worktrees: a task's changes (`GET /tasks/:id/diff`), merging them
//! (`POST /tasks/:id/merge`) or opening a pull request for them (`POST /tasks/:id/pr`), and the disk worktrees use (`/api/coding-agents/worktrees`).
//! A diff and a merge are the git module's own records.

use crate::task::{Task, TaskStatus};
pub use crate::worktree::{Diff, FileDiff, FileStatus, Merged, PullRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `GET /tasks/:id/diff`: `{diff}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffBody {
    pub diff: Diff,
}

/// `POST /tasks/:id/merge`: the task and what the merge did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergedTask {
    pub task: Arc<Task>,
    pub merge: Merged,
}

/// `POST /tasks/:id/pr`: the task (recording the pull request) and the pull request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestTask {
    pub task: Arc<Task>,
    pub pull_request: PullRequest,
}

/// One live task worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeInfo {
    pub task_id: String,
    pub status: TaskStatus,
    pub path: String,
    pub branch: String,
    pub base_branch: String,
    pub bytes: u64,
}

/// `GET /worktrees`: each live worktree and the bytes of all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeList {
    pub worktrees: Vec<WorktreeInfo>,
    pub bytes: u64,
}

/// A worktree `orchestra gc` removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collected {
    pub task_id: String,
    pub path: String,
    pub branch: String,
    pub bytes: u64,
    /// The snapshot commit its work is kept under.
    pub snapshot: Option<String>,
}

/// `POST /worktrees/gc`: what was removed and the bytes freed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollectedList {
    pub collected: Vec<Collected>,
    pub bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn diffs_and_merges_encode_as_documented() {
        round_trip(
            &DiffBody {
                diff: Diff {
                    branch: "orchestra/t1".into(),
                    base_branch: "main".into(),
                    base_commit: "abc".into(),
                    base_now: None,
                    base_moved: false,
                    files: vec![
                        FileDiff {
                            path: "a.rs".into(),
                            status: FileStatus::Modified,
                            added: Some(2),
                            removed: Some(1),
                        },
                        FileDiff {
                            path: "logo.png".into(),
                            status: FileStatus::Added,
                            added: None,
                            removed: None,
                        },
                    ],
                    patch: "+x\n".into(),
                },
            },
            json!({"diff": {"branch": "orchestra/t1", "baseBranch": "main", "baseCommit": "abc",
                "baseNow": null, "baseMoved": false, "files": [
                    {"path": "a.rs", "status": "modified", "added": 2, "removed": 1},
                    {"path": "logo.png", "status": "added", "added": null, "removed": null}],
                "patch": "+x\n"}}),
        );
        let merged = MergedTask {
            task: Arc::new(crate::wire::task::tests::task()),
            merge: Merged {
                base_branch: "main".into(),
                commit: "def".into(),
                fast_forward: true,
                base_moved: false,
                files: vec!["a.rs".into()],
            },
        };
        let v = serde_json::to_value(&merged).unwrap();
        assert_eq!(
            v["merge"],
            json!({"baseBranch": "main", "commit": "def", "fastForward": true,
                "baseMoved": false, "files": ["a.rs"]})
        );
        assert_eq!(serde_json::from_value::<MergedTask>(v).unwrap(), merged);
        assert!(serde_json::from_value::<FileStatus>(json!("renamed")).is_err());
    }

    #[test]
    fn worktrees_encode_as_documented() {
        round_trip(
            &WorktreeList {
                worktrees: vec![WorktreeInfo {
                    task_id: "t1".into(),
                    status: TaskStatus::Completed,
                    path: "/w/.wt/t1".into(),
                    branch: "orchestra/t1".into(),
                    base_branch: "main".into(),
                    bytes: 10,
                }],
                bytes: 10,
            },
            json!({"worktrees": [{"taskId": "t1", "status": "completed", "path": "/w/.wt/t1",
                "branch": "orchestra/t1", "baseBranch": "main", "bytes": 10}], "bytes": 10}),
        );
        round_trip(
            &CollectedList {
                collected: vec![Collected {
                    task_id: "t1".into(),
                    path: "/w/.wt/t1".into(),
                    branch: "orchestra/t1".into(),
                    bytes: 10,
                    snapshot: None,
                }],
                bytes: 10,
            },
            json!({"collected": [{"taskId": "t1", "path": "/w/.wt/t1", "branch": "orchestra/t1",
                "bytes": 10, "snapshot": null}], "bytes": 10}),
        );
    }
}
