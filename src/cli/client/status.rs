//! `orchestra status`

use super::Ctx;
use super::error::CliResult;
use super::http::Reply;
use super::output::{self, duration_ms, out};
use orchestra_proto::task::TaskStatus;
use orchestra_proto::wire::{RunState, Status};

const STATUS: &str = "orchestra's status";

pub fn run(ctx: &Ctx) -> CliResult<()> {
    let status: Reply<Status> = ctx.client.get(orchestra_proto::routes::STATUS, STATUS)?;
    if ctx.json {
        // Both routes' answers as the server sent them (the JSON output's shape since the
        // start; both routes give the same summary).
        let agents: Reply<Status> = ctx
            .client
            .get(orchestra_proto::routes::AGENTS_STATUS, STATUS)?;
        let raw = |r: &Reply<Status>| -> serde_json::Value {
            serde_json::from_str(&r.raw).unwrap_or(serde_json::Value::Null)
        };
        output::json(&serde_json::json!({ "status": raw(&status), "codingAgents": raw(&agents) }));
        return Ok(());
    }
    out(&render(ctx.client.base(), &status.value));
    Ok(())
}

/// The summary a person reads: what the orchestrator does and the counts.
fn render(url: &str, status: &Status) -> String {
    let mut text = String::new();
    text.push_str(&format!(
        "orchestra {} at {url}, up {}\n",
        status.version,
        duration_ms(status.uptime_ms)
    ));
    // The API's `state` says `paused` when autopilot is off, even while tasks run: say what
    // is going on instead (`autopilot off · 2 running · 1 pending`).
    let autopilot = match status.state {
        RunState::Running => "autopilot on",
        RunState::Paused => "autopilot off",
        RunState::Stopped => "orchestrator stopped",
    };
    let n = |s: TaskStatus| status.tasks.of(s);
    let mut now = vec![autopilot.to_string()];
    for s in [TaskStatus::Running, TaskStatus::Paused, TaskStatus::Pending] {
        if n(s) > 0 {
            now.push(format!("{} {s}", n(s)));
        }
    }
    if now.len() == 1 {
        now.push("nothing running".to_string());
    }
    let note = match status.state {
        RunState::Running => format!(
            " (pending tasks start by themselves, at most {} at once)",
            status.limits.max_concurrent
        ),
        RunState::Paused if n(TaskStatus::Pending) > 0 => {
            " (pending tasks wait for `task start`)".to_string()
        }
        _ => String::new(),
    };
    text.push_str(&format!("{:<10} {}{note}\n", "state", now.join(" · ")));
    let finished: Vec<String> = [
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ]
    .into_iter()
    .filter(|s| n(*s) > 0)
    .map(|s| format!("{} {s}", n(s)))
    .collect();
    let detail = if finished.is_empty() {
        String::new()
    } else {
        format!(" ({})", finished.join(", "))
    };
    text.push_str(&format!(
        "{:<10} {} in all{detail}\n",
        "tasks", status.tasks.total
    ));
    text.push_str(&format!(
        "{:<10} {} active, {} in all (at most {} live)\n",
        "sessions", status.sessions.active, status.sessions.total, status.limits.max_sessions
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_reads_the_status() {
        let a: Status = serde_json::from_value(json!({"state": "paused", "autopilot": false,
            "tasks": {"total": 3, "byStatus": {"pending": 2, "running": 1}},
            "sessions": {"active": 1, "total": 2}, "limits": {"maxConcurrent": 4, "maxSessions": 16},
            "uptimeMs": 62000, "version": "0.1.0"}))
        .unwrap();
        let text = render("http://h:1", &a);
        assert!(
            text.contains("orchestra 0.1.0 at http://h:1, up 1m 2s"),
            "{text}"
        );
        assert!(
            text.contains("autopilot off · 1 running · 2 pending"),
            "{text}"
        );
        assert!(
            !text.contains("paused"),
            "running work is never called paused: {text}"
        );
        assert!(text.contains("3 in all"), "{text}");
        assert!(
            text.contains("1 active, 2 in all (at most 16 live)"),
            "{text}"
        );
    }
}
