//! What a tool answers about a task: the facts a model needs to decide its next step, not
//! the whole record (a task keeps up to 2,000 output lines; a model gets the last few, and
//! read_output for more).

use orchestra_proto::prompt::Prompt;
use orchestra_proto::task::Task;
use orchestra_proto::wire::SessionInfo;
use serde_json::{Map, Value, json};

/// Output lines a task's view carries.
pub const VIEW_LINES: usize = 10;

/// The task, with its last `lines` output lines, and what it waits on (`prompt`) when
/// `session` (its session) or the task itself says it is blocked.
pub fn task(task: &Task, session: Option<&SessionInfo>, lines: usize) -> Value {
    let m = &task.metadata;
    let mut v = Map::new();
    let mut put = |k: &str, value: Value| {
        if !value.is_null() {
            v.insert(k.to_string(), value);
        }
    };
    put("id", json!(task.id));
    put("name", json!(task.name));
    put("status", json!(m.status));
    if let Some(p) = blocked_on(task, session) {
        put("blocked", json!(true));
        put("prompt", prompt(p));
    }
    put("progress", json!(m.progress));
    put("providerId", json!(m.provider_id));
    put("approval", json!(m.approval));
    put("isolation", json!(m.isolation));
    put("answers", json!(m.answers));
    if m.delegate {
        put("delegate", json!(true));
    }
    put("parentTaskId", json!(m.parent_task_id));
    put("sessionId", json!(m.session_id));
    if let Some(s) = session.filter(|s| Some(&s.id) == m.session_id.as_ref()) {
        put("sessionStatus", json!(s.status));
    }
    put("workingDirectory", json!(m.working_directory));
    if let Some(w) = &m.worktree {
        put(
            "worktree",
            json!({"path": w.at.path, "branch": w.at.branch, "baseBranch": w.at.base_branch,
                "outcome": w.outcome, "snapshot": w.snapshot}),
        );
    }
    if !m.checks.is_empty() {
        put("checks", json!(m.checks));
        put("checkAttempts", json!(m.check_attempts));
    }
    put("retryOf", json!(m.retry_of));
    put("result", json!(m.result));
    put("error", json!(m.error));
    if !m.steps.is_empty() {
        put(
            "steps",
            Value::Array(
                m.steps
                    .iter()
                    .map(|s| json!({"description": s.description, "status": s.status}))
                    .collect(),
            ),
        );
    }
    if lines > 0 {
        put("lastOutput", json!(last_lines(task, lines)));
    }
    put("createdAt", json!(m.created_at));
    put("startedAt", json!(m.started_at));
    put("completedAt", json!(m.completed_at));
    Value::Object(v)
}

/// The question the task waits on: its own (trust in its repository, before its agent
/// starts), else its session's while that is blocked.
pub fn blocked_on<'a>(task: &'a Task, session: Option<&'a SessionInfo>) -> Option<&'a Prompt> {
    if let Some(p) = &task.metadata.prompt {
        return Some(p);
    }
    let s = session?;
    let current = task.metadata.session_id.as_deref() == Some(s.id.as_str());
    let blocked = s.status == orchestra_proto::wire::SessionStatus::Blocked;
    (current && blocked && !task.metadata.status.is_final())
        .then_some(s.prompt.as_ref())
        .flatten()
}

/// A prompt as a model answers it: the text and the keys answer_prompt takes.
pub fn prompt(p: &Prompt) -> Value {
    json!({
        "kind": p.kind,
        "text": p.text,
        "options": p.options.iter().map(|o| json!({"key": o.key, "label": o.label})).collect::<Vec<_>>(),
    })
}

/// The task's newest `n` output lines, oldest first.
pub fn last_lines(task: &Task, n: usize) -> Vec<&str> {
    let mut out: Vec<&str> = task
        .metadata
        .output
        .iter()
        .rev()
        .take(n)
        .map(|l| l.as_str())
        .collect();
    out.reverse();
    out
}
