//! `/api/coding-agents/worktrees`: the disk task worktrees use, and collecting old ones.

use crate::task::TaskStatus;
use serde::{Deserialize, Serialize};

/// One live task worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeList {
    pub worktrees: Vec<WorktreeInfo>,
    pub bytes: u64,
}

/// A worktree `orchestra gc` removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
