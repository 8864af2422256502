//! Tasks (`/api/coding-agents/tasks`). The task itself is the task model (`crate::task`):
//! its serde form is the wire form. Here: the answers that carry it (each task version's
//! JSON encoded once, `super::encoded`).

use crate::task::{Step, Task, TaskStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The words of the API's refusal (409) of a start when another starter got there first.
pub const STARTED_ELSEWHERE: &str = "it was started elsewhere";

/// Whether a task whose start was refused with a conflict was started all the same, by
/// someone else (autopilot, another client): the refusal says so (its start may still be
/// under way), or the task `now` is running or has already run. A client that asked for the
/// start reports it as done, once.
pub fn started_anyway(refusal: &str, now: Option<TaskStatus>) -> bool {
    refusal.contains(STARTED_ELSEWHERE)
        || matches!(
            now,
            Some(
                TaskStatus::Running
                    | TaskStatus::Paused
                    | TaskStatus::Completed
                    | TaskStatus::Failed
            )
        )
}

/// `{task}`: the answer of most task routes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskBody {
    #[serde(serialize_with = "crate::task::encoded::task")]
    pub task: Arc<Task>,
}

/// `GET /tasks`: `{tasks}`, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskList {
    #[serde(serialize_with = "crate::task::encoded::tasks")]
    pub tasks: Vec<Arc<Task>>,
}

/// `POST …/steps`: `{step, stepId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepAdded {
    pub step: Step,
    pub step_id: String,
}

/// `PATCH …/steps/:stepId`: `{step}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepBody {
    pub step: Step,
}

/// `POST …/discard`: the task, and the ref its work is kept under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Discarded {
    pub task: Arc<Task>,
    pub snapshot_ref: String,
}

/// `POST …/pick`: the best-of-N parent (completed, naming the pick), what merging the
/// picked variant did, and where each other variant's work is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Picked {
    pub task: Arc<Task>,
    /// The picked variant's label and task id.
    pub variant: String,
    pub variant_task_id: String,
    pub merge: crate::worktree::Merged,
    pub discarded: Vec<DiscardedVariant>,
}

/// A variant not picked: its worktree removed, its work kept under `snapshotRef`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscardedVariant {
    pub variant: String,
    pub task_id: String,
    pub snapshot_ref: String,
    /// The snapshot commit (none when its worktree was already gone: then the ref holds
    /// its branch's tip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::task::{NewTask, Progress, StepStatus, TaskResult, TaskStatus};
    use crate::wire::Approval;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    pub fn task() -> Task {
        Task::new(
            "t1".into(),
            NewTask {
                name: "build".into(),
                description: "make it".into(),
                provider_id: "shell".into(),
                working_directory: "/w".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                ..NewTask::default()
            },
            5,
        )
    }

    #[test]
    fn a_new_task_encodes_as_documented() {
        round_trip(
            &TaskBody {
                task: Arc::new(task()),
            },
            json!({"task": {"id": "t1", "name": "build", "description": "make it",
                "metadata": {"status": "pending", "progress": 0, "output": [], "steps": [],
                    "createdAt": 5, "providerId": "shell", "workingDirectory": "/w",
                    "isolation": "none"}}}),
        );
    }

    #[test]
    fn a_finished_task_carries_its_steps_result_and_times() {
        let mut t = task();
        t.metadata.status = TaskStatus::Failed;
        t.metadata.progress = Progress::new(12.5).unwrap();
        t.metadata.output = ["a"].into_iter().collect();
        t.metadata.steps = vec![Step {
            id: "p1".into(),
            description: "compile".into(),
            status: StepStatus::Failed,
            output: Some("boom".into()),
        }];
        t.metadata.result = Some(TaskResult {
            success: false,
            summary: "did not build".into(),
            files_modified: vec!["a.rs".into()],
            files_created: vec![],
            error: Some("exit 2".into()),
            ..Default::default()
        });
        t.metadata.error = Some("exit 2".into());
        t.metadata.started_at = Some(6);
        t.metadata.completed_at = Some(8);
        t.metadata.session_id = Some("s1".into());
        t.metadata.approval = Some(Approval::Auto);
        round_trip(
            &TaskList {
                tasks: vec![Arc::new(t)],
            },
            json!({"tasks": [{"id": "t1", "name": "build", "description": "make it",
                "metadata": {"status": "failed", "progress": 12.5, "output": ["a"],
                    "steps": [{"id": "p1", "description": "compile", "status": "failed",
                        "output": "boom"}],
                    "result": {"success": false, "summary": "did not build",
                        "filesModified": ["a.rs"], "filesCreated": [], "error": "exit 2"},
                    "error": "exit 2", "createdAt": 5, "startedAt": 6, "completedAt": 8,
                    "providerId": "shell", "workingDirectory": "/w", "sessionId": "s1",
                    "approval": "auto", "isolation": "none"}}]}),
        );
    }

    #[test]
    fn steps_and_discards_encode_as_documented() {
        let step = Step {
            id: "p1".into(),
            description: "compile".into(),
            status: StepStatus::Running,
            output: None,
        };
        round_trip(
            &StepAdded {
                step: step.clone(),
                step_id: "p1".into(),
            },
            json!({"step": {"id": "p1", "description": "compile", "status": "running"},
                "stepId": "p1"}),
        );
        round_trip(
            &StepBody { step },
            json!({"step": {"id": "p1", "description": "compile", "status": "running"}}),
        );
        let d = Discarded {
            task: Arc::new(task()),
            snapshot_ref: "refs/orchestra/snapshots/t1".into(),
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["snapshotRef"], "refs/orchestra/snapshots/t1");
        assert_eq!(serde_json::from_value::<Discarded>(v).unwrap(), d);
    }
}
