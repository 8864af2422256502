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
    // The API's `state` says `paused` when autopilot is off, even while tasks run: say what
    // is going on instead (`autopilot off · 2 running · 1 pending`).
    let autopilot = match str_at(status, "/state") {
        Some("running") => "autopilot on",
        Some("paused") => "autopilot off",
        Some("stopped") => "orchestrator stopped",
        _ => "autopilot ?",
    };
    let by = pick("/tasks/byStatus").and_then(Value::as_object);
    let n = |s: &str| {
        by.and_then(|b| b.get(s))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let mut now = vec![autopilot.to_string()];
    for s in ["running", "paused", "pending"] {
        if n(s) > 0 {
            now.push(format!("{} {s}", n(s)));
        }
    }
    if now.len() == 1 {
        now.push("nothing running".to_string());
    }
    let note = match str_at(status, "/state") {
        Some("running") => pick("/limits/maxConcurrent")
            .and_then(Value::as_u64)
            .map(|m| format!(" (pending tasks start by themselves, at most {m} at once)"))
            .unwrap_or_else(|| " (pending tasks start by themselves)".to_string()),
        Some("paused") if n("pending") > 0 => " (pending tasks wait for `task start`)".to_string(),
        _ => String::new(),
    };
    text.push_str(&format!("{:<10} {}{note}\n", "state", now.join(" · ")));
    let total = pick("/tasks/total").and_then(Value::as_u64).unwrap_or(0);
    let finished: Vec<String> = ["completed", "failed", "cancelled"]
        .into_iter()
        .filter(|s| n(s) > 0)
        .map(|s| format!("{} {s}", n(s)))
        .collect();
    let detail = if finished.is_empty() {
        String::new()
    } else {
        format!(" ({})", finished.join(", "))
    };
    text.push_str(&format!("{:<10} {total} in all{detail}\n", "tasks"));
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
