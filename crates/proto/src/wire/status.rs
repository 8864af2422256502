//! The orchestrator: its state, the counts `GET /api/status` reports, and the answers of
//! the autopilot switches and of stopping the daemon.

use crate::task::TaskStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether pending tasks start by themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Up, autopilot off: tasks run when started.
    Paused,
    /// Autopilot on: pending tasks are dispatched up to the concurrency limit.
    Running,
    /// Everything was stopped.
    Stopped,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Paused => "paused",
            RunState::Running => "running",
            RunState::Stopped => "stopped",
        }
    }
}

/// Tasks by status; every status is listed, with 0 when none has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskCounts {
    pub total: usize,
    pub by_status: BTreeMap<TaskStatus, usize>,
}

impl TaskCounts {
    /// How many tasks have `status`.
    pub fn of(&self, status: TaskStatus) -> usize {
        self.by_status.get(&status).copied().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCounts {
    /// Sessions whose process runs.
    pub active: usize,
    /// Every session listed, ended ones included.
    pub total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    pub max_concurrent: usize,
    pub max_sessions: usize,
}

/// `GET /api/status` and `GET /api/coding-agents/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub state: RunState,
    pub autopilot: bool,
    pub tasks: TaskCounts,
    pub sessions: SessionCounts,
    pub limits: Limits,
    pub uptime_ms: u64,
    pub version: String,
}

/// `POST /api/agent/start|stop|pause|resume`: `{ok, status}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Switched {
    pub ok: bool,
    pub status: RunState,
}

/// `POST /api/daemon/stop`: how many agents it is about to end, and how long they may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStopped {
    pub ok: bool,
    pub ended: usize,
    pub pid: u32,
    pub grace_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn status_encodes_as_documented() {
        let by_status = TaskStatus::ALL
            .into_iter()
            .map(|s| (s, usize::from(s == TaskStatus::Pending) * 2))
            .collect();
        let s = Status {
            state: RunState::Paused,
            autopilot: false,
            tasks: TaskCounts {
                total: 2,
                by_status,
            },
            sessions: SessionCounts {
                active: 1,
                total: 3,
            },
            limits: Limits {
                max_concurrent: 4,
                max_sessions: 16,
            },
            uptime_ms: 62_000,
            version: "0.1.0".into(),
        };
        round_trip(
            &s,
            json!({"state": "paused", "autopilot": false,
                "tasks": {"total": 2, "byStatus": {"pending": 2, "running": 0, "paused": 0,
                    "completed": 0, "failed": 0, "cancelled": 0}},
                "sessions": {"active": 1, "total": 3},
                "limits": {"maxConcurrent": 4, "maxSessions": 16},
                "uptimeMs": 62000, "version": "0.1.0"}),
        );
        assert_eq!(s.tasks.of(TaskStatus::Pending), 2);
        assert_eq!(s.tasks.of(TaskStatus::Failed), 0);
    }

    #[test]
    fn switches_and_stop_encode_as_documented() {
        round_trip(
            &Switched {
                ok: true,
                status: RunState::Running,
            },
            json!({"ok": true, "status": "running"}),
        );
        round_trip(
            &DaemonStopped {
                ok: true,
                ended: 2,
                pid: 99,
                grace_ms: 3000,
            },
            json!({"ok": true, "ended": 2, "pid": 99, "graceMs": 3000}),
        );
        assert!(serde_json::from_value::<RunState>(json!("asleep")).is_err());
    }
}
