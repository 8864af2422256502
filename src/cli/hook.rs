//! `orchestra hook EVENT [PAYLOAD]`: run by a coding agent's own hooks (Claude Code's and
//! Gemini CLI's hooks, Codex's `notify`) inside a session orchestra started. It posts the
//! event to the session's hook route with the session's hook token, all from the environment
//! the session set (ORCHESTRA_URL, ORCHESTRA_SESSION_ID, ORCHESTRA_HOOK_TOKEN,
//! ORCHESTRA_TOKEN; Gemini CLI's hooks get them in their own `env`).
//!
//! It must never disturb the agent: it waits at most a few seconds, prints nothing on stdout
//! (Claude Code reads a hook's stdout), and exits 0 whatever happened, orchestra gone included.

use clap::Args;
use orchestra_proto::wire::request::{HOOK_TOKEN_HEADER, HookReport};
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::time::Duration;

/// The most a hook waits for orchestra: the agent waits for its hooks.
const TIMEOUT: Duration = Duration::from_secs(3);
/// The most of a payload read from stdin (Claude's hook input is a small JSON object).
const MAX_PAYLOAD: u64 = 4 << 20;

/// `orchestra hook …`
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The event: Claude Code's hook event name (UserPromptSubmit, PermissionRequest,
    /// PostToolUse, Notification, Stop), Gemini CLI's (BeforeAgent, AfterTool, Notification,
    /// AfterAgent) or Codex's agent-turn-complete.
    #[arg(value_name = "EVENT")]
    pub event: String,
    /// The event's JSON (as Codex's notify passes it); read from stdin when absent (as
    /// Claude Code's hooks pass it).
    #[arg(value_name = "PAYLOAD")]
    pub payload: Option<String>,
}

/// What the agent's JSON says that orchestra uses.
pub fn report(event: &str, payload: &str) -> HookReport {
    let v: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
            .map(str::to_string)
    };
    HookReport {
        event: event.to_string(),
        // Not Gemini CLI's AfterAgent `prompt_response`: 0.61 joins the streamed chunks of
        // a reply with spaces (and repeats some), so the screen's reply is the better copy.
        message: text(&["last_assistant_message", "last-assistant-message"]),
        notification_type: text(&["notification_type"]),
        asks: asks(event, &v),
        input_messages: v.get("input-messages").and_then(|m| m.as_array()).map(|m| {
            m.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        }),
    }
}

/// The most of what an agent asks that is kept: one line of a prompt, not a whole file.
const MAX_ASKS: usize = 300;

/// What the agent asks in its own words, for the events that say it asks permission: a
/// notification's `message` (Claude Code's, Gemini CLI's), or the tool a Claude Code
/// `PermissionRequest` names with what it would touch ("Write: /repo/hello.txt").
fn asks(event: &str, v: &serde_json::Value) -> Option<String> {
    let said = match event {
        "Notification" => v.get("message").and_then(|m| m.as_str())?.to_string(),
        "PermissionRequest" => {
            let tool = v.get("tool_name").and_then(|t| t.as_str())?;
            let input = v.get("tool_input");
            let what = ["command", "file_path", "path", "url", "pattern"]
                .iter()
                .find_map(|k| input.and_then(|i| i.get(*k)).and_then(|x| x.as_str()));
            match what {
                Some(w) => format!("Permission to use {tool}: {w}"),
                None => format!("Permission to use {tool}"),
            }
        }
        _ => return None,
    };
    let one_line = said.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut kept: String = one_line.chars().take(MAX_ASKS).collect();
    if kept.len() < one_line.len() {
        kept.push('…');
    }
    Some(kept).filter(|s| !s.is_empty())
}

/// Posts the event; always exits 0 (a failure is one line on stderr).
pub fn run(args: &HookArgs, token: Option<&str>) -> ExitCode {
    if let Err(e) = post(args, token) {
        eprintln!("orchestra hook: {e}");
    }
    ExitCode::SUCCESS
}

fn post(args: &HookArgs, token: Option<&str>) -> Result<(), String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{name} is not set: run inside a session orchestra started"))
    };
    let url = var("ORCHESTRA_URL")?;
    let session = var("ORCHESTRA_SESSION_ID")?;
    let hook_token = var("ORCHESTRA_HOOK_TOKEN")?;
    let payload = match &args.payload {
        Some(p) => p.clone(),
        // Run by hand at a terminal there is no payload to wait for.
        None if std::io::stdin().is_terminal() => String::new(),
        None => {
            let mut s = String::new();
            std::io::stdin()
                .take(MAX_PAYLOAD)
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read the hook's input: {e}"))?;
            s
        }
    };
    let body = serde_json::to_string(&report(&args.event, &payload)).map_err(|e| e.to_string())?;
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("orchestra-hook/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let uri = format!(
        "{}/api/coding-agents/sessions/{}/hook",
        url.trim_end_matches('/'),
        orchestra_proto::wire::path_segment(&session)
    );
    let mut rb = agent
        .post(&uri)
        .header("Content-Type", "application/json")
        .header(HOOK_TOKEN_HEADER, &hook_token);
    if let Some(t) = token {
        rb = rb.header("Authorization", &format!("Bearer {t}"));
    }
    let resp = rb.send(body.as_str()).map_err(|e| format!("{uri}: {e}"))?;
    match resp.status().as_u16() {
        200 => Ok(()),
        status => Err(format!("{uri} answered {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claude_and_codex_payloads() {
        let r = report(
            "Stop",
            r#"{"session_id":"x","transcript_path":"/t","last_assistant_message":"Done."}"#,
        );
        assert_eq!(r.message.as_deref(), Some("Done."));
        let r = report(
            "agent-turn-complete",
            r#"{"type":"agent-turn-complete","last-assistant-message":"Ok"}"#,
        );
        assert_eq!(r.message.as_deref(), Some("Ok"));
        let r = report(
            "agent-turn-complete",
            r#"{"input-messages":["create hello.txt"],"last-assistant-message":"Ok"}"#,
        );
        assert_eq!(r.input_messages, Some(vec!["create hello.txt".to_string()]));
        let r = report(
            "Notification",
            r#"{"notification_type":"permission_prompt"}"#,
        );
        assert_eq!(r.notification_type.as_deref(), Some("permission_prompt"));
        assert_eq!(report("Stop", "not json").message, None);
        let r = report(
            "AfterAgent",
            r#"{"hook_event_name":"AfterAgent","prompt":"hi","prompt_response":"Do ne."}"#,
        );
        assert_eq!(r.message, None);
        let r = report("Notification", r#"{"notification_type":"ToolPermission"}"#);
        assert_eq!(r.notification_type.as_deref(), Some("ToolPermission"));
    }

    #[test]
    fn reads_what_the_agent_asks() {
        let r = report(
            "Notification",
            r#"{"notification_type":"permission_prompt","message":"Claude needs your permission to use Write"}"#,
        );
        assert_eq!(
            r.asks.as_deref(),
            Some("Claude needs your permission to use Write")
        );
        let r = report(
            "PermissionRequest",
            r#"{"tool_name":"Write","tool_input":{"file_path":"/repo/hello.txt","content":"hi\nthere"}}"#,
        );
        assert_eq!(
            r.asks.as_deref(),
            Some("Permission to use Write: /repo/hello.txt")
        );
        let r = report(
            "PermissionRequest",
            r#"{"tool_name":"Bash","tool_input":{}}"#,
        );
        assert_eq!(r.asks.as_deref(), Some("Permission to use Bash"));
        // Other events ask nothing; a long command is kept to one short line.
        assert_eq!(report("Stop", r#"{"message":"x"}"#).asks, None);
        let long = format!(
            r#"{{"tool_name":"Bash","tool_input":{{"command":"echo {}\nrm x"}}}}"#,
            "a".repeat(1000)
        );
        let asks = report("PermissionRequest", &long).asks.unwrap_or_default();
        assert!(
            asks.chars().count() <= MAX_ASKS + 1 && !asks.contains('\n'),
            "{asks}"
        );
        assert!(asks.ends_with('…'), "{asks}");
    }
}
