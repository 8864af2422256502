//! Every path of the HTTP API, declared once: the daemon's router serves these patterns
//! (axum's `{param}` syntax, which the OpenAPI document uses too), and the clients build
//! their request paths from the same constants with [`at`], so a path cannot differ between
//! the server and a front end.

use crate::wire::path_segment;

pub const OPENAPI: &str = "/api/openapi.json";
pub const STATUS: &str = "/api/status";

pub const TASKS: &str = "/api/coding-agents/tasks";
pub const TASK: &str = "/api/coding-agents/tasks/{id}";
pub const TASK_START: &str = "/api/coding-agents/tasks/{id}/start";
pub const TASK_ANSWER: &str = "/api/coding-agents/tasks/{id}/answer";
pub const TASK_PAUSE: &str = "/api/coding-agents/tasks/{id}/pause";
pub const TASK_RESUME: &str = "/api/coding-agents/tasks/{id}/resume";
pub const TASK_CANCEL: &str = "/api/coding-agents/tasks/{id}/cancel";
pub const TASK_RETRY: &str = "/api/coding-agents/tasks/{id}/retry";
pub const TASK_CONTINUE: &str = "/api/coding-agents/tasks/{id}/continue";
pub const TASK_OUTPUT: &str = "/api/coding-agents/tasks/{id}/output";
pub const TASK_STEPS: &str = "/api/coding-agents/tasks/{id}/steps";
pub const TASK_STEP: &str = "/api/coding-agents/tasks/{id}/steps/{stepId}";
pub const TASK_RESULT: &str = "/api/coding-agents/tasks/{id}/result";
pub const TASK_DIFF: &str = "/api/coding-agents/tasks/{id}/diff";
pub const TASK_MERGE: &str = "/api/coding-agents/tasks/{id}/merge";
pub const TASK_DISCARD: &str = "/api/coding-agents/tasks/{id}/discard";
pub const TASK_PR: &str = "/api/coding-agents/tasks/{id}/pr";
pub const TASK_PICK: &str = "/api/coding-agents/tasks/{id}/pick";
pub const TASK_CONFLICTS: &str = "/api/coding-agents/tasks/{id}/conflicts";
pub const CONFLICTS: &str = "/api/coding-agents/conflicts";

pub const TRUST: &str = "/api/coding-agents/trust";
pub const TRUST_REVOKE: &str = "/api/coding-agents/trust/revoke";

pub const WORKTREES: &str = "/api/coding-agents/worktrees";
pub const WORKTREES_GC: &str = "/api/coding-agents/worktrees/gc";

pub const SESSIONS: &str = "/api/coding-agents/sessions";
pub const SESSION: &str = "/api/coding-agents/sessions/{id}";
pub const SESSION_MESSAGES: &str = "/api/coding-agents/sessions/{id}/messages";
pub const SESSION_PEEK: &str = "/api/coding-agents/sessions/{id}/peek";
pub const SESSION_STREAM: &str = "/api/coding-agents/sessions/{id}/stream";
pub const SESSION_TRANSCRIPT: &str = "/api/coding-agents/sessions/{id}/transcript";
pub const SESSION_RESIZE: &str = "/api/coding-agents/sessions/{id}/resize";
pub const SESSION_PAUSE: &str = "/api/coding-agents/sessions/{id}/pause";
pub const SESSION_RESUME: &str = "/api/coding-agents/sessions/{id}/resume";
pub const SESSION_ANSWER: &str = "/api/coding-agents/sessions/{id}/answer";
pub const SESSION_HOOK: &str = "/api/coding-agents/sessions/{id}/hook";

pub const AGENTS_STATUS: &str = "/api/coding-agents/status";
pub const PROVIDERS: &str = "/api/coding-agents/providers";
pub const EVENTS: &str = "/api/coding-agents/events";

pub const AGENT_START: &str = "/api/agent/start";
pub const AGENT_STOP: &str = "/api/agent/stop";
pub const AGENT_PAUSE: &str = "/api/agent/pause";
pub const AGENT_RESUME: &str = "/api/agent/resume";
pub const DAEMON_STOP: &str = "/api/daemon/stop";

/// `pattern` with its parameters filled in order (`{id}`, then `{stepId}`), each
/// percent-encoded as one path segment. A pattern with fewer parameters ignores the rest;
/// one with more keeps the unfilled ones as they are (a caller's bug, visible in the path).
pub fn at(pattern: &str, params: &[&str]) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut rest = pattern;
    let mut values = params.iter();
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        match values.next() {
            Some(v) => out.push_str(&path_segment(v)),
            None => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_filled_in_order_and_escaped() {
        assert_eq!(at(TASK, &["t1"]), "/api/coding-agents/tasks/t1");
        assert_eq!(
            at(TASK_STEP, &["a b", "s/1"]),
            "/api/coding-agents/tasks/a%20b/steps/s%2F1"
        );
        assert_eq!(at(TASKS, &[]), TASKS);
        assert_eq!(at(TASK_START, &[]), TASK_START);
    }
}
