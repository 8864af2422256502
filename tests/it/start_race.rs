//! Starting a task is one atomic claim: with autopilot on and several starters asking at
//! once, every task runs exactly once, has exactly one session, and the losers get a 409 and
//! start nothing.

use crate::support;

use serde_json::json;
use std::path::Path;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const ROUNDS: usize = 4;
const TASKS_PER_ROUND: usize = 8;
const STARTERS: usize = 3;

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[test]
fn every_task_runs_once_whoever_starts_it() {
    let s = Server::start_with(&["--max-sessions", "500", "--max-concurrent", "8"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let r = s.post_empty("/api/agent/resume");
    assert!(r.status < 300, "{}", r.body);
    let mut ids = Vec::new();
    let mut refusals = Vec::new();
    for round in 0..ROUNDS {
        for i in 0..TASKS_PER_ROUND {
            let file = dir.path().join(format!("{round}-{i}"));
            let task = create_task(
                &s,
                &format!("t{round}-{i}"),
                json!({"providerId": "exec", "description": format!("echo x >> {}", file.display())}),
            );
            let id = task["id"].as_str().expect("id").to_string();
            // The autopilot was told about the new task; these race it and each other.
            let answers: Vec<(u16, String)> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..STARTERS)
                    .map(|_| {
                        let (s, id) = (&s, &id);
                        scope.spawn(move || {
                            let r = s.post_empty(&format!("{TASKS}/{id}/start"));
                            (r.status, r.body)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("starter thread"))
                    .collect()
            });
            for (status, body) in answers {
                assert!(
                    status == 200 || status == 409,
                    "start answered {status}: {body}"
                );
                if status == 409 {
                    refusals.push(body);
                }
            }
            ids.push((id, file));
        }
    }
    for (id, _) in &ids {
        wait_task_status(&s, id, "completed");
    }
    let sessions = s.get("/api/coding-agents/sessions").json()["sessions"].clone();
    for (id, file) in &ids {
        assert_eq!(lines(file), 1, "task {id} ran {} times", lines(file));
        let own = sessions.as_array().map_or(0, |a| {
            a.iter().filter(|x| x["taskId"] == id.as_str()).count()
        });
        assert_eq!(own, 1, "task {id} has {own} sessions: {sessions}");
    }
    // Every task had more starters than runs: the others were told why.
    assert!(
        refusals.len() >= ids.len() * (STARTERS - 1),
        "{} refusals for {} tasks",
        refusals.len(),
        ids.len()
    );
    for body in &refusals {
        let error = serde_json::from_str::<serde_json::Value>(body).expect("JSON")["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            error.contains("already running")
                || error.contains("being started")
                || error.contains("already completed"),
            "{error}"
        );
    }
}
