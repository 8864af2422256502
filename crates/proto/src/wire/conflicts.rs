//! The conflict radar: which live worktree tasks would conflict if merged, with each other
//! or with their base branch as it is now (`GET /tasks/:id/conflicts`, `GET /conflicts`,
//! and the `task:conflicts` event).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One task's conflicts as the radar last saw them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictReport {
    pub task_id: String,
    /// Merging the task into its base branch as it is now conflicts in these files; `null`
    /// when it merges cleanly.
    pub with_base: Option<BaseConflict>,
    /// Live worktree tasks of the same repository and base branch whose merge together
    /// with this one conflicts, oldest first.
    pub with_tasks: Vec<TaskConflict>,
    /// When the radar last looked (ms since the epoch); `null`: it has not looked yet.
    pub checked_at: Option<i64>,
    /// The live worktree tasks of the same repository and base branch (this one included)
    /// in the order that conflicts least: tasks that conflict with nothing first, then by
    /// fewest conflicts, a conflict with the base last; ties by creation order.
    pub merge_order: Vec<String>,
    /// Why there is nothing to report, when there is not (the task has no live worktree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ConflictReport {
    /// Whether the task conflicts with anything.
    pub fn conflicts(&self) -> bool {
        self.with_base.is_some() || !self.with_tasks.is_empty()
    }

    /// The same conflicts (what changed is worth telling; a new look alone is not).
    pub fn same_conflicts(&self, other: &ConflictReport) -> bool {
        self.with_base == other.with_base
            && self.with_tasks == other.with_tasks
            && self.merge_order == other.merge_order
            && self.note == other.note
    }
}

/// A conflict with the base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaseConflict {
    pub base_branch: String,
    /// The base branch's commit the radar merged with.
    pub base_commit: String,
    pub files: Vec<String>,
}

/// A conflict with another task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskConflict {
    pub task_id: String,
    pub name: String,
    pub files: Vec<String>,
}

/// `GET /conflicts`: the report of every live worktree task.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ConflictList {
    pub reports: Vec<ConflictReport>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn reports_encode_as_documented() {
        round_trip(
            &ConflictReport {
                task_id: "t1".into(),
                with_base: Some(BaseConflict {
                    base_branch: "main".into(),
                    base_commit: "abc".into(),
                    files: vec!["a.rs".into()],
                }),
                with_tasks: vec![TaskConflict {
                    task_id: "t2".into(),
                    name: "fix".into(),
                    files: vec!["a.rs".into()],
                }],
                checked_at: Some(7),
                merge_order: vec!["t2".into(), "t1".into()],
                note: None,
            },
            json!({"taskId": "t1",
                "withBase": {"baseBranch": "main", "baseCommit": "abc", "files": ["a.rs"]},
                "withTasks": [{"taskId": "t2", "name": "fix", "files": ["a.rs"]}],
                "checkedAt": 7, "mergeOrder": ["t2", "t1"]}),
        );
        round_trip(
            &ConflictList {
                reports: vec![ConflictReport {
                    task_id: "t3".into(),
                    note: Some("the task runs without isolation".into()),
                    ..Default::default()
                }],
            },
            json!({"reports": [{"taskId": "t3", "withBase": null, "withTasks": [],
                "checkedAt": null, "mergeOrder": [],
                "note": "the task runs without isolation"}]}),
        );
    }
}
