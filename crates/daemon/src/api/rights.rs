//! Who sent a request, and what an agent session's credential may do.
//!
//! The owner (the owner's token, or anyone under `--insecure-no-auth`) may do everything.
//! An agent session's credential reaches only its own work, so that an agent under `manual`,
//! or any script it runs, cannot step around the approval preset the user chose by asking
//! orchestra instead (an `exec` task, another task's merge, `/api/daemon/stop`, another
//! agent's transcript):
//! - its own task: read it; report steps, progress, output and its result;
//! - its own session: read it, its messages, send itself a message, report hook events;
//! - the task list, which shows it its own task only.
//!
//! Everything else is refused with 403 before the route runs. The rule is a table of
//! routes, default deny: a route added later is the owner's until it is listed here.

use crate::engine::SessionGrant;
use axum::http::Method;

/// Who a request comes from, for the routes that answer each differently (the task list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Owner,
    Session(SessionGrant),
}

/// The one task a principal may see, or `None` for the owner (who sees every one).
pub fn visible_task(principal: Option<&Principal>) -> Option<Option<&str>> {
    match principal {
        Some(Principal::Session(grant)) => Some(grant.task_id.as_deref()),
        _ => None,
    }
}

/// The routes a session may use: method, then the path after `/api/coding-agents/`, where
/// `{task}` must be its task's id, `{session}` its session's, and `{any}` any one segment.
const ALLOWED: &[(&str, &str)] = &[
    ("GET", "tasks"),
    ("GET", "tasks/{task}"),
    ("PATCH", "tasks/{task}"),
    ("POST", "tasks/{task}/output"),
    ("POST", "tasks/{task}/steps"),
    ("PATCH", "tasks/{task}/steps/{any}"),
    ("POST", "tasks/{task}/result"),
    ("GET", "sessions/{session}"),
    ("GET", "sessions/{session}/messages"),
    ("POST", "sessions/{session}/messages"),
    ("POST", "sessions/{session}/hook"),
];

/// Whether one segment of a path fits one segment of a pattern.
fn fits(pattern: &str, given: &str, grant: &SessionGrant) -> bool {
    match pattern {
        "{task}" => grant.task_id.as_deref() == Some(given),
        "{session}" => given == grant.session_id,
        "{any}" => !given.is_empty(),
        literal => given == literal,
    }
}

/// Whether the session of `grant` may send `method path`; else the sentence that says why
/// not. Ids are compared as sent: an id spelled another way is refused, never let through.
pub fn session_may(method: &Method, path: &str, grant: &SessionGrant) -> Result<(), String> {
    let allowed = path
        .strip_prefix("/api/coding-agents/")
        .map(|rest| rest.split('/').collect::<Vec<_>>())
        .is_some_and(|segments| {
            ALLOWED.iter().any(|(m, pattern)| {
                let pattern: Vec<&str> = pattern.split('/').collect();
                *m == method.as_str()
                    && pattern.len() == segments.len()
                    && pattern
                        .iter()
                        .zip(&segments)
                        .all(|(p, s)| fits(p, s, grant))
            })
        });
    if allowed {
        return Ok(());
    }
    let whose = match &grant.task_id {
        Some(task) => format!("agent session {} of task {task}", grant.session_id),
        None => format!("agent session {}", grant.session_id),
    };
    Err(format!(
        "{method} {path} is refused: this is the credential of {whose}, which may only read and report on its own task (steps, progress, output, result) and read or message its own session; anything else is for the user who runs orchestra"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> SessionGrant {
        SessionGrant {
            session_id: "s1".into(),
            task_id: Some("t1".into()),
            approval: Default::default(),
        }
    }

    #[test]
    fn a_session_reaches_its_own_work_only() {
        let g = grant();
        let ok = [
            (Method::GET, "/api/coding-agents/tasks"),
            (Method::GET, "/api/coding-agents/tasks/t1"),
            (Method::PATCH, "/api/coding-agents/tasks/t1"),
            (Method::POST, "/api/coding-agents/tasks/t1/output"),
            (Method::POST, "/api/coding-agents/tasks/t1/steps"),
            (Method::PATCH, "/api/coding-agents/tasks/t1/steps/x"),
            (Method::POST, "/api/coding-agents/tasks/t1/result"),
            (Method::GET, "/api/coding-agents/sessions/s1"),
            (Method::GET, "/api/coding-agents/sessions/s1/messages"),
            (Method::POST, "/api/coding-agents/sessions/s1/messages"),
            (Method::POST, "/api/coding-agents/sessions/s1/hook"),
        ];
        for (m, p) in ok {
            assert_eq!(session_may(&m, p, &g), Ok(()), "{m} {p}");
        }
        let refused = [
            (Method::GET, "/api/coding-agents/tasks/t2"),
            (Method::PATCH, "/api/coding-agents/tasks/t2"),
            (Method::DELETE, "/api/coding-agents/tasks/t1"),
            (Method::POST, "/api/coding-agents/tasks"),
            (Method::POST, "/api/coding-agents/tasks/t1/start"),
            (Method::POST, "/api/coding-agents/tasks/t1/merge"),
            (Method::POST, "/api/coding-agents/tasks/t1/discard"),
            (Method::POST, "/api/coding-agents/tasks/t1/cancel"),
            (Method::POST, "/api/coding-agents/tasks/t1/answer"),
            (Method::GET, "/api/coding-agents/trust"),
            (Method::POST, "/api/coding-agents/trust"),
            (Method::POST, "/api/coding-agents/trust/revoke"),
            (Method::GET, "/api/coding-agents/tasks/t1/diff"),
            (Method::POST, "/api/coding-agents/tasks/t2/result"),
            (Method::PATCH, "/api/coding-agents/tasks/t2/steps/x"),
            (Method::PATCH, "/api/coding-agents/tasks/t1/steps/"),
            (Method::GET, "/api/coding-agents/tasks/t1/"),
            (Method::GET, "/api/coding-agents/tasks//t1"),
            (Method::GET, "/api/coding-agents/tasks/%74%31"),
            (Method::GET, "/api/coding-agents/sessions"),
            (Method::POST, "/api/coding-agents/sessions"),
            (Method::GET, "/api/coding-agents/sessions/s2"),
            (Method::POST, "/api/coding-agents/sessions/s2/messages"),
            (Method::GET, "/api/coding-agents/sessions/s1/stream"),
            (Method::GET, "/api/coding-agents/sessions/s1/transcript"),
            (Method::GET, "/api/coding-agents/sessions/s2/transcript"),
            (Method::POST, "/api/coding-agents/sessions/s1/answer"),
            (Method::DELETE, "/api/coding-agents/sessions/s1"),
            (Method::GET, "/api/coding-agents/events"),
            (Method::GET, "/api/coding-agents/status"),
            (Method::POST, "/api/daemon/stop"),
            (Method::POST, "/api/agent/resume"),
            (Method::GET, "/api/openapi.json"),
            (Method::GET, "/"),
        ];
        for (m, p) in refused {
            let why = session_may(&m, p, &g).expect_err(p);
            assert!(why.contains("own task") && why.contains("s1"), "{why}");
        }
    }

    #[test]
    fn a_session_without_a_task_has_no_task() {
        let g = SessionGrant {
            task_id: None,
            ..grant()
        };
        assert!(session_may(&Method::GET, "/api/coding-agents/tasks/t1", &g).is_err());
        assert!(session_may(&Method::GET, "/api/coding-agents/sessions/s1", &g).is_ok());
    }
}
