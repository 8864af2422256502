//! `orchestra status`

use super::Ctx;
use super::error::CliResult;
use super::output::{self, duration_ms, out, str_at};
use serde_json::{Value, json};

pub fn run(ctx: &Ctx) -> CliResult<()> {
    let status = ctx.client.get("/api/status")?;
    let agents = ctx.client.get("/api/coding-agents/status")?;
    if ctx.json {
        output::json(&json!({ "status": status, "codingAgents": agents }));
        return Ok(());
    }
    out(&render(ctx.client.base(), &status, &agents));
    Ok(())
}

fn count(v: &Value, pointer: &str) -> Option<u64> {
    v.pointer(pointer).and_then(Value::as_u64)
}

fn render(url: &str, status: &Value, agents: &Value) -> String {
    // Either answer may carry a field; prefer the coding-agents one for counts.
    let pick = |pointer: &str| agents.pointer(pointer).or_else(|| status.pointer(pointer));
    let mut text = String::new();
    let version = pick("/version").and_then(Value::as_str).unwrap_or("?");
    let uptime = pick("/uptimeMs")
        .and_then(Value::as_u64)
        .map(|ms| format!(", up {}", duration_ms(ms)))
        .unwrap_or_default();
    text.push_str(&format!("orchestra {version} at {url}{uptime}\n"));
    let state = str_at(status, "/state").unwrap_or("?");
    let autopilot = match state {
        "running" => "on (pending tasks start by themselves)",
        "paused" => "off (tasks run when started)",
        "stopped" => "stopped",
        _ => "?",
    };
    let max_concurrent = pick("/limits/maxConcurrent")
        .and_then(Value::as_u64)
        .map(|n| format!("; at most {n} tasks at once"))
        .unwrap_or_default();
    text.push_str(&format!(
        "{:<10} {state}: autopilot {autopilot}{max_concurrent}\n",
        "state"
    ));
    let total = pick("/tasks/total").and_then(Value::as_u64).unwrap_or(0);
    let mut parts = Vec::new();
    if let Some(by) = pick("/tasks/byStatus").and_then(Value::as_object) {
        for s in [
            "running",
            "paused",
            "pending",
            "completed",
            "failed",
            "cancelled",
        ] {
            if let Some(n) = by.get(s).and_then(Value::as_u64).filter(|n| *n > 0) {
                parts.push(format!("{n} {s}"));
            }
        }
    }
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    };
    text.push_str(&format!("{:<10} {total}{detail}\n", "tasks"));
    let active = count(agents, "/sessions/active")
        .or_else(|| count(status, "/sessions/active"))
        .unwrap_or(0);
    let all = count(agents, "/sessions/total")
        .or_else(|| count(status, "/sessions/total"))
        .unwrap_or(0);
    let max_sessions = pick("/limits/maxSessions")
        .and_then(Value::as_u64)
        .map(|n| format!(" (at most {n} live)"))
        .unwrap_or_default();
    text.push_str(&format!(
        "{:<10} {active} active, {all} in all{max_sessions}\n",
        "sessions"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reads_both_answers() {
        let s = json!({"state": "paused"});
        let a = json!({"tasks": {"total": 3, "byStatus": {"pending": 2, "running": 1}},
            "sessions": {"active": 1, "total": 2}, "limits": {"maxConcurrent": 4, "maxSessions": 16},
            "uptimeMs": 62000, "version": "0.1.0"});
        let text = render("http://h:1", &s, &a);
        assert!(
            text.contains("orchestra 0.1.0 at http://h:1, up 1m 2s"),
            "{text}"
        );
        assert!(text.contains("3: 1 running, 2 pending"), "{text}");
        assert!(
            text.contains("1 active, 2 in all (at most 16 live)"),
            "{text}"
        );
    }
}
