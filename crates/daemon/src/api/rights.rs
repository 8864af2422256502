//! Who sent a request, and what an agent session's credential may do.
//!
//! The owner (the owner's token, or anyone under `--insecure-no-auth`) may do everything.
//! An agent session's credential reaches only its own work, so that an agent under `manual`,
//! or any script it runs, cannot step around the approval preset the user chose by asking
//! orchestra instead (an `exec` task, another task's merge, `/api/daemon/stop`, another
//! agent's transcript):
//! - its own task: read it and its conflicts (the conflict radar's report, with only its own
//!   family's tasks in it); report steps, progress, output and its result;
//! - its own session: read it, its messages, send itself a message, report hook events;
//! - children: create tasks under its own task (the handler holds them to no wider an
//!   approval preset than the session's own) and, for its task's descendants, read,
//!   start, pause, resume, cancel, continue, run again, diff, merge and discard (not open a
//!   pull request: that pushes under the user's own forge login, off the machine), and reach
//!   their sessions (read, message, peek, transcript, and answer where the handler finds
//!   the question is the parent's to answer); a task's own question (trust in a
//!   repository) stays the user's;
//! - the task list and the event stream, which show it its own task and its descendants;
//! - the provider list.
//!
//! Everything else is refused with 403 before the route runs. The rule is a table of
//! routes, default deny: a route added later is the owner's until it is listed here.

use crate::engine::{Engine, Kinship, SessionGrant};
use axum::http::Method;
use orchestra_proto::wire::{Approval, Event};

/// Who a request comes from, for the routes that answer each differently (the task list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    Owner,
    Session(SessionGrant),
}

/// What the rules need to know about tasks and sessions beyond the grant.
pub trait Lineage {
    /// Where task `id` stands to task `ancestor`.
    fn kinship(&self, id: &str, ancestor: &str) -> Kinship;
    /// The task a live session runs.
    fn session_task(&self, session_id: &str) -> Option<String>;
    /// How much task `id`'s agent may do without asking (see `Engine::reach`).
    fn reach(&self, id: &str) -> Option<Approval>;
}

impl Lineage for Engine {
    fn kinship(&self, id: &str, ancestor: &str) -> Kinship {
        Engine::kinship(self, id, ancestor)
    }
    fn session_task(&self, session_id: &str) -> Option<String> {
        Engine::session_task(self, session_id)
    }
    fn reach(&self, id: &str) -> Option<Approval> {
        self.task_reach(id)
    }
}

/// Whether `principal` may see task `id`: the owner sees every task, a session its own
/// task and that task's descendants.
pub fn may_see_task(lineage: &impl Lineage, principal: Option<&Principal>, id: &str) -> bool {
    match principal {
        Some(Principal::Session(grant)) => grant
            .task_id
            .as_deref()
            .is_some_and(|own| lineage.kinship(id, own) != Kinship::Unrelated),
        _ => true,
    }
}

/// Whether `principal` may see `event` on the event stream.
pub fn may_see_event(lineage: &impl Lineage, principal: Option<&Principal>, event: &Event) -> bool {
    let Some(Principal::Session(grant)) = principal else {
        return true;
    };
    let task = match event {
        Event::Task { task, .. } => Some(task.id.clone()),
        Event::Session { session, .. } => {
            if session.id == grant.session_id {
                return true;
            }
            session.task_id.clone()
        }
        Event::Message { session_id, .. } | Event::Screen { session_id } => {
            if *session_id == grant.session_id {
                return true;
            }
            lineage.session_task(session_id)
        }
        // A report names the tasks it conflicts with, of any family: an agent asks for its
        // own (`GET …/conflicts`), where only its family's are left in.
        Event::Orchestrator { .. } | Event::Conflicts { .. } => return false,
    };
    task.is_some_and(|t| may_see_task(lineage, principal, &t))
}

/// The routes a session may use: method, then the path after `/api/coding-agents/`, where
/// `{task}` must be its task's id, `{kin}` its task's or a descendant's, `{child}` a
/// descendant's, `{child-within}` a descendant's whose reach (its preset; `auto` for a
/// command provider) is no wider than the session's approval, `{session}` its session's,
/// `{child-session}` and `{child-session-within}` the same for a descendant's session, and
/// `{any}` any one segment.
const ALLOWED: &[(&str, &str)] = &[
    ("GET", "tasks"),
    ("POST", "tasks"),
    ("GET", "tasks/{kin}"),
    ("PATCH", "tasks/{task}"),
    ("POST", "tasks/{task}/output"),
    ("POST", "tasks/{task}/steps"),
    ("PATCH", "tasks/{task}/steps/{any}"),
    ("POST", "tasks/{task}/result"),
    ("POST", "tasks/{child-within}/start"),
    ("POST", "tasks/{child}/pause"),
    ("POST", "tasks/{child-within}/resume"),
    ("POST", "tasks/{child}/cancel"),
    ("POST", "tasks/{child-within}/continue"),
    ("POST", "tasks/{child-within}/retry"),
    ("GET", "tasks/{child}/diff"),
    ("GET", "tasks/{kin}/conflicts"),
    ("POST", "tasks/{child-within}/merge"),
    ("POST", "tasks/{child-within}/discard"),
    ("POST", "tasks/{child-within}/pick"),
    ("GET", "sessions/{session}"),
    ("GET", "sessions/{session}/messages"),
    ("POST", "sessions/{session}/messages"),
    ("POST", "sessions/{session}/hook"),
    ("GET", "sessions/{child-session}"),
    ("GET", "sessions/{child-session}/messages"),
    ("POST", "sessions/{child-session-within}/messages"),
    ("GET", "sessions/{child-session}/peek"),
    ("GET", "sessions/{child-session}/transcript"),
    ("POST", "sessions/{child-session-within}/answer"),
    ("GET", "events"),
    ("GET", "providers"),
];

/// Whether one segment of a path fits one segment of a pattern.
fn fits(pattern: &str, given: &str, grant: &SessionGrant, lineage: &impl Lineage) -> bool {
    let own = grant.task_id.as_deref();
    let descends =
        |id: &str| own.is_some_and(|own| lineage.kinship(id, own) == Kinship::Descendant);
    // Whatever made the child (this agent, or the user with `--parent`), the agent drives it
    // only if it could have made it: a `manual` agent does not steer an `auto` child.
    let within = |id: &str| descends(id) && lineage.reach(id).is_some_and(|r| r <= grant.approval);
    let session_of = |sid: &str| {
        (sid != grant.session_id)
            .then(|| lineage.session_task(sid))
            .flatten()
    };
    match pattern {
        "{task}" => own == Some(given),
        "{kin}" => own == Some(given) || descends(given),
        "{child}" => descends(given),
        "{child-within}" => within(given),
        "{session}" => given == grant.session_id,
        "{child-session}" => session_of(given).is_some_and(|t| descends(&t)),
        "{child-session-within}" => session_of(given).is_some_and(|t| within(&t)),
        "{any}" => !given.is_empty(),
        literal => given == literal,
    }
}

/// Whether the session of `grant` may send `method path`; else the sentence that says why
/// not. Ids are compared as sent: an id spelled another way is refused, never let through.
pub fn session_may(
    method: &Method,
    path: &str,
    grant: &SessionGrant,
    lineage: &impl Lineage,
) -> Result<(), String> {
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
                        .all(|(p, s)| fits(p, s, grant, lineage))
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
        "{method} {path} is refused: this is the credential of {whose}, which may only read and report on its own task (steps, progress, output, result), read or message its own session, and make and manage child tasks of its own task at no wider approval than its own; anything else is for the user who runs orchestra"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// t1 (the session's task) ← c1 ← g1; t2 unrelated. Sessions: s1 runs t1, sc runs c1,
    /// s2 runs t2.
    struct Family {
        parents: HashMap<&'static str, &'static str>,
        sessions: HashMap<&'static str, &'static str>,
    }

    impl Lineage for Family {
        fn kinship(&self, id: &str, ancestor: &str) -> Kinship {
            if id == ancestor {
                return Kinship::Itself;
            }
            let mut at = id;
            while let Some(p) = self.parents.get(at) {
                if *p == ancestor {
                    return Kinship::Descendant;
                }
                at = p;
            }
            Kinship::Unrelated
        }
        fn session_task(&self, session_id: &str) -> Option<String> {
            self.sessions.get(session_id).map(|t| t.to_string())
        }
        fn reach(&self, id: &str) -> Option<Approval> {
            Some(if id == "wide" {
                Approval::Auto
            } else {
                Approval::Safe
            })
        }
    }

    fn family() -> Family {
        Family {
            parents: HashMap::from([("c1", "t1"), ("g1", "c1"), ("wide", "t1")]),
            sessions: HashMap::from([("s1", "t1"), ("sc", "c1"), ("s2", "t2"), ("sw", "wide")]),
        }
    }

    fn grant() -> SessionGrant {
        SessionGrant {
            session_id: "s1".into(),
            task_id: Some("t1".into()),
            approval: Default::default(),
        }
    }

    #[test]
    fn a_session_reaches_its_own_work_and_its_children_only() {
        let g = grant();
        let f = family();
        let ok = [
            (Method::GET, "/api/coding-agents/tasks"),
            (Method::POST, "/api/coding-agents/tasks"),
            (Method::GET, "/api/coding-agents/tasks/t1"),
            (Method::GET, "/api/coding-agents/tasks/c1"),
            (Method::GET, "/api/coding-agents/tasks/g1"),
            (Method::PATCH, "/api/coding-agents/tasks/t1"),
            (Method::POST, "/api/coding-agents/tasks/t1/output"),
            (Method::POST, "/api/coding-agents/tasks/t1/steps"),
            (Method::PATCH, "/api/coding-agents/tasks/t1/steps/x"),
            (Method::POST, "/api/coding-agents/tasks/t1/result"),
            (Method::POST, "/api/coding-agents/tasks/c1/start"),
            (Method::POST, "/api/coding-agents/tasks/g1/cancel"),
            (Method::POST, "/api/coding-agents/tasks/c1/merge"),
            (Method::GET, "/api/coding-agents/tasks/c1/diff"),
            (Method::GET, "/api/coding-agents/tasks/t1/conflicts"),
            (Method::GET, "/api/coding-agents/tasks/g1/conflicts"),
            (Method::GET, "/api/coding-agents/sessions/s1"),
            (Method::GET, "/api/coding-agents/sessions/s1/messages"),
            (Method::POST, "/api/coding-agents/sessions/s1/messages"),
            (Method::POST, "/api/coding-agents/sessions/s1/hook"),
            (Method::GET, "/api/coding-agents/sessions/sc"),
            (Method::POST, "/api/coding-agents/sessions/sc/messages"),
            (Method::GET, "/api/coding-agents/sessions/sc/peek"),
            (Method::POST, "/api/coding-agents/sessions/sc/answer"),
            (Method::GET, "/api/coding-agents/events"),
            (Method::GET, "/api/coding-agents/providers"),
        ];
        for (m, p) in ok {
            assert_eq!(session_may(&m, p, &g, &f), Ok(()), "{m} {p}");
        }
        let refused = [
            (Method::GET, "/api/coding-agents/tasks/t2"),
            (Method::PATCH, "/api/coding-agents/tasks/t2"),
            (Method::PATCH, "/api/coding-agents/tasks/c1"),
            (Method::DELETE, "/api/coding-agents/tasks/t1"),
            (Method::DELETE, "/api/coding-agents/tasks/c1"),
            (Method::POST, "/api/coding-agents/tasks/t1/start"),
            (Method::POST, "/api/coding-agents/tasks/t1/merge"),
            (Method::POST, "/api/coding-agents/tasks/t1/discard"),
            (Method::POST, "/api/coding-agents/tasks/t1/cancel"),
            (Method::POST, "/api/coding-agents/tasks/t1/answer"),
            (Method::POST, "/api/coding-agents/tasks/c1/answer"),
            (Method::POST, "/api/coding-agents/tasks/t2/start"),
            (Method::POST, "/api/coding-agents/tasks/t2/merge"),
            (Method::POST, "/api/coding-agents/tasks/t1/pr"),
            // Publishing leaves the machine under the user's own forge login: theirs to do.
            (Method::POST, "/api/coding-agents/tasks/c1/pr"),
            (Method::POST, "/api/coding-agents/tasks/c1/result"),
            (Method::GET, "/api/coding-agents/trust"),
            (Method::POST, "/api/coding-agents/trust"),
            (Method::POST, "/api/coding-agents/trust/revoke"),
            (Method::GET, "/api/coding-agents/tasks/t1/diff"),
            (Method::GET, "/api/coding-agents/tasks/t2/conflicts"),
            (Method::GET, "/api/coding-agents/conflicts"),
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
            (Method::GET, "/api/coding-agents/sessions/sc/stream"),
            (Method::GET, "/api/coding-agents/sessions/s1/transcript"),
            (Method::GET, "/api/coding-agents/sessions/s2/transcript"),
            (Method::POST, "/api/coding-agents/sessions/s1/answer"),
            (Method::DELETE, "/api/coding-agents/sessions/s1"),
            (Method::DELETE, "/api/coding-agents/sessions/sc"),
            (Method::GET, "/api/coding-agents/status"),
            (Method::POST, "/api/daemon/stop"),
            (Method::POST, "/api/agent/resume"),
            (Method::GET, "/api/openapi.json"),
            (Method::GET, "/"),
        ];
        for (m, p) in refused {
            let why = session_may(&m, p, &g, &f).expect_err(p);
            assert!(why.contains("own task") && why.contains("s1"), "{why}");
        }
    }

    /// A child wider than the agent (made by the user under `auto`, or a command provider)
    /// is watched, paused and cancelled by it, never driven.
    #[test]
    fn a_child_wider_than_the_agent_is_watched_not_driven() {
        let g = grant(); // safe
        let f = family();
        for (m, p) in [
            (Method::GET, "/api/coding-agents/tasks/wide"),
            (Method::POST, "/api/coding-agents/tasks/wide/pause"),
            (Method::POST, "/api/coding-agents/tasks/wide/cancel"),
            (Method::GET, "/api/coding-agents/tasks/wide/diff"),
            (Method::GET, "/api/coding-agents/sessions/sw"),
            (Method::GET, "/api/coding-agents/sessions/sw/peek"),
        ] {
            assert_eq!(session_may(&m, p, &g, &f), Ok(()), "{m} {p}");
        }
        for (m, p) in [
            (Method::POST, "/api/coding-agents/tasks/wide/start"),
            (Method::POST, "/api/coding-agents/tasks/wide/resume"),
            (Method::POST, "/api/coding-agents/tasks/wide/continue"),
            (Method::POST, "/api/coding-agents/tasks/wide/retry"),
            (Method::POST, "/api/coding-agents/tasks/wide/merge"),
            (Method::POST, "/api/coding-agents/tasks/wide/discard"),
            (Method::POST, "/api/coding-agents/sessions/sw/messages"),
            (Method::POST, "/api/coding-agents/sessions/sw/answer"),
        ] {
            assert!(session_may(&m, p, &g, &f).is_err(), "{m} {p}");
        }
    }

    #[test]
    fn a_session_without_a_task_has_no_task_and_no_children() {
        let g = SessionGrant {
            task_id: None,
            ..grant()
        };
        let f = family();
        assert!(session_may(&Method::GET, "/api/coding-agents/tasks/t1", &g, &f).is_err());
        assert!(session_may(&Method::POST, "/api/coding-agents/tasks/c1/start", &g, &f).is_err());
        assert!(session_may(&Method::GET, "/api/coding-agents/sessions/s1", &g, &f).is_ok());
    }

    #[test]
    fn the_stream_and_the_list_show_a_session_its_family_only() {
        let f = family();
        let me = Principal::Session(grant());
        assert!(may_see_task(&f, Some(&me), "t1"));
        assert!(may_see_task(&f, Some(&me), "g1"));
        assert!(!may_see_task(&f, Some(&me), "t2"));
        assert!(may_see_task(&f, Some(&Principal::Owner), "t2"));
        assert!(may_see_task(&f, None, "t2"));
    }
}
