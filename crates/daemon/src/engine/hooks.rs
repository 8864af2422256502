//! Status from the agent itself: a coding agent's own hooks (Claude Code's hooks, Codex's
//! `notify`) run `orchestra hook EVENT`, which posts the event to the session's hook route with
//! the session's own token. Each event becomes a fact for `status.rs` (the one writer of the
//! status), so a hook event decides busy / blocked / ready before the screen patterns do; a
//! finished turn (`Stop`) carries the agent's reply, recorded without any screen chrome.
//!
//! The hooks are configured per session, never in the user's files: Claude Code gets a
//! settings file written here (0600, in the private state directory) through `--settings`;
//! Gemini CLI gets its hooks in the per-session system-defaults file its instructions are
//! given through (`{gemini_hooks}` in the provider's `instructions_files`). Gemini CLI runs
//! settings hooks only in a folder the user trusts (or with folder trust off); elsewhere its
//! status stays the screen's.

use super::sessions::SessionEntry;
use super::status::{Fact, HookStatus};
use super::{Engine, EngineError};
use orchestra_proto::wire::request::HookReport;
use orchestra_proto::wire::{Role, SessionInfo};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most a finished turn without its reply waits for the screen to settle.
const DRAW_WAIT: Duration = Duration::from_secs(5);

/// The Claude Code hook events orchestra listens to.
pub(crate) const CLAUDE_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
];

/// The Gemini CLI hook events orchestra listens to.
pub(crate) const GEMINI_EVENTS: &[&str] =
    &["BeforeAgent", "AfterTool", "Notification", "AfterAgent"];

/// Where a provider's `instructions_files` take Gemini CLI's hooks (a JSON object).
pub(crate) const GEMINI_HOOKS: &str = "{gemini_hooks}";

/// The variables `orchestra hook` reads, given in each Gemini CLI hook's own `env`: it runs
/// its hooks in a sanitized environment (none of ours under CI, no `*TOKEN*` with redaction
/// on) and adds a hook's `env` after that.
const HOOK_VARS: &[&str] = &[
    "ORCHESTRA_URL",
    "ORCHESTRA_SESSION_ID",
    "ORCHESTRA_HOOK_TOKEN",
    "ORCHESTRA_TOKEN",
];

/// What one hook event means for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookEffect {
    /// The status it stands for.
    Status(HookStatus),
    /// Its turn is finished: ready, and the task's request was worked on.
    TurnFinished,
    /// Nothing to change (a notification of another kind).
    Nothing,
}

/// The effect of `report`, or `None` for an event orchestra does not know.
pub(crate) fn effect(report: &HookReport) -> Option<HookEffect> {
    use HookEffect::*;
    Some(match report.event.as_str() {
        // Claude Code's, then Gemini CLI's: a request reached the agent, a tool ran.
        "UserPromptSubmit" | "PostToolUse" | "BeforeAgent" | "AfterTool" => {
            Status(HookStatus::Busy)
        }
        "PermissionRequest" => Status(asks(report)),
        "Notification" => match report.notification_type.as_deref() {
            // Claude Code's, Gemini CLI's.
            Some("permission_prompt" | "ToolPermission") => Status(asks(report)),
            Some("idle_prompt") => Status(HookStatus::Ready),
            _ => Nothing,
        },
        "Stop" | "agent-turn-complete" | "AfterAgent" => TurnFinished,
        _ => return None,
    })
}

/// Blocked on what the report says the agent asks (the session's prompt until its dialog is
/// read from the screen; see `status.rs`).
fn asks(report: &HookReport) -> HookStatus {
    HookStatus::Blocked(report.asks.clone().unwrap_or_default())
}

/// A single-quoted word for `sh`, whatever `s` holds.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The hooks object both CLIs read (`{EVENT: [{hooks: [command]}]}`): on each of `events`,
/// `orchestra hook EVENT`, with `extra` (its timeout, its environment) in each command.
fn hook_table(
    orchestra: &Path,
    events: &[&str],
    extra: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let exe = shell_quote(&orchestra.to_string_lossy());
    let hooks: serde_json::Map<String, serde_json::Value> = events
        .iter()
        .map(|event| {
            let mut command = serde_json::json!({
                "type": "command",
                "command": format!("{exe} hook {event}"),
            });
            if let Some(c) = command.as_object_mut() {
                c.extend(extra.clone());
            }
            (
                event.to_string(),
                serde_json::json!([{ "hooks": [command] }]),
            )
        })
        .collect();
    serde_json::Value::Object(hooks)
}

/// Claude Code settings that run `orchestra hook EVENT` on each of [`CLAUDE_EVENTS`].
pub(crate) fn claude_settings(orchestra: &Path) -> serde_json::Value {
    // Claude Code's timeouts are in seconds.
    let extra = serde_json::json!({ "timeout": 10 });
    let extra = extra.as_object().cloned().unwrap_or_default();
    serde_json::json!({ "hooks": hook_table(orchestra, CLAUDE_EVENTS, &extra) })
}

/// Gemini CLI's `hooks` setting: `orchestra hook EVENT` on each of [`GEMINI_EVENTS`], each
/// with the session's [`HOOK_VARS`] from `session_env` in its own environment.
pub(crate) fn gemini_hooks(
    orchestra: &Path,
    session_env: &[(String, String)],
) -> serde_json::Value {
    let env: serde_json::Map<String, serde_json::Value> = session_env
        .iter()
        .filter(|(k, _)| HOOK_VARS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    // Gemini CLI's timeouts are in milliseconds.
    let extra = serde_json::json!({ "timeout": 10_000, "env": env });
    let extra = extra.as_object().cloned().unwrap_or_default();
    hook_table(orchestra, GEMINI_EVENTS, &extra)
}

/// `content` (a file of a provider's `instructions_files`) with [`GEMINI_HOOKS`] filled in:
/// the hooks when orchestra's executable is known, else none.
pub(crate) fn fill_gemini_hooks(
    content: &str,
    orchestra: Option<&Path>,
    session_env: &[(String, String)],
) -> String {
    if !content.contains(GEMINI_HOOKS) {
        return content.to_string();
    }
    let hooks = orchestra.map_or_else(
        || serde_json::json!({}),
        |exe| gemini_hooks(exe, session_env),
    );
    content.replace(GEMINI_HOOKS, &hooks.to_string())
}

/// Writes the session's Claude Code hook settings to `<state>/hooks/<session>.json` (0600).
pub(crate) fn write_settings(
    state_dir: &Path,
    session_id: &str,
    orchestra: &Path,
) -> Option<PathBuf> {
    let text = serde_json::to_string_pretty(&claude_settings(orchestra)).ok()?;
    orchestra_sys::private::write_private_file(
        &state_dir.join("hooks"),
        &format!("{session_id}.json"),
        text.as_bytes(),
    )
    .ok()
}

/// Removes a session's hook settings once its CLI has ended.
pub(crate) fn remove_settings(state_dir: &Path, session_id: &str) {
    let _ = std::fs::remove_file(state_dir.join("hooks").join(format!("{session_id}.json")));
}

/// Why a hook request is refused.
#[derive(Debug, thiserror::Error)]
pub enum HookRefusal {
    #[error(
        "missing hook token: send the session's ORCHESTRA_HOOK_TOKEN in the X-Orchestra-Hook-Token header"
    )]
    Missing,
    #[error("wrong hook token for this session")]
    Wrong,
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl SessionEntry {
    /// Whether a finished turn is one of the agent's own: when the event names the requests
    /// it worked on, one of them must be a request sent to the session (the task, or a
    /// message); a side turn (Codex's title generation) works on a prompt of its own.
    fn turn_is_the_agents(&self, report: &HookReport) -> bool {
        let Some(inputs) = &report.input_messages else {
            return true;
        };
        let task = self.info.lock().task.trim().to_string();
        let messages = self.messages.lock();
        let mut sent = std::iter::once(task.as_str()).chain(
            messages
                .iter()
                .filter(|m| m.role == Role::User && m.keys.is_none())
                .map(|m| m.text.trim()),
        );
        sent.any(|s| !s.is_empty() && inputs.iter().any(|i| i.trim() == s))
    }
}

impl Engine {
    /// A hook event from the agent of session `id`, sent with `token`.
    pub async fn session_hook(
        &self,
        id: &str,
        token: Option<&str>,
        report: HookReport,
    ) -> Result<SessionInfo, HookRefusal> {
        let entry = self.session_entry(id)?;
        let token = token.ok_or(HookRefusal::Missing)?;
        match entry.credential.as_deref() {
            Some(want)
                if orchestra_sys::credentials::same_secret(token.as_bytes(), want.as_bytes()) => {}
            _ => return Err(HookRefusal::Wrong),
        }
        let effect = effect(&report).ok_or_else(|| {
            EngineError::Invalid(format!(
                "unknown hook event {:?}: orchestra knows {}, {} and agent-turn-complete",
                report.event,
                CLAUDE_EVENTS.join(", "),
                GEMINI_EVENTS.join(", ")
            ))
        })?;
        if entry.info.lock().ended {
            return Err(EngineError::Conflict(format!("session {id} has ended")).into());
        }
        tracing::debug!(session = %id, event = %report.event, "hook event");
        match effect {
            HookEffect::Status(s) => self.on_session_fact(&entry, Fact::Hook(Some(s))).await,
            HookEffect::TurnFinished if entry.turn_is_the_agents(&report) => {
                match report.message {
                    Some(m) => self.hook_turn_finished(&entry, Some(m)).await,
                    // No reply with it (Gemini CLI's): in the background, so the agent is
                    // not held waiting for its hook while it draws that reply.
                    None => {
                        let (engine, entry) = (self.clone(), entry.clone());
                        tokio::spawn(async move {
                            engine.turn_finished_once_drawn(&entry).await;
                        });
                    }
                }
            }
            HookEffect::TurnFinished | HookEffect::Nothing => {}
        }
        Ok(entry.snapshot_info())
    }

    /// A finished turn whose hook carries no reply: the reply is read from the screen, once
    /// the agent has drawn it (its hook runs before the last of it is on the screen), that is
    /// once the screen has not changed for the settle time; unless something was sent to the
    /// agent meanwhile (a new turn).
    async fn turn_finished_once_drawn(&self, entry: &Arc<SessionEntry>) {
        let sends = || {
            let messages = entry.messages.lock();
            messages.iter().filter(|m| m.role == Role::User).count()
        };
        let sent = sends();
        let settle = self.config().settle;
        let deadline = Instant::now() + DRAW_WAIT;
        tokio::time::sleep(settle).await;
        while !entry.facts.lock().activity.is_quiet() && Instant::now() < deadline {
            tokio::time::sleep((settle / 4).max(Duration::from_millis(10))).await;
        }
        if sends() == sent {
            self.hook_turn_finished(entry, None).await;
        }
    }

    /// The agent finished its turn: its reply (when the hook carries it) is the reply to the
    /// last request, in place of the screen's; the turn counts as work on the task's request
    /// once that reached it.
    async fn hook_turn_finished(&self, entry: &Arc<SessionEntry>, message: Option<String>) {
        if let Some(text) = message
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
        {
            entry.drop_pending_reply();
            let m = self
                .record_message(entry, Role::Agent, text, None, None)
                .await;
            // Before the ready: a reply that says the limit is reached keeps it limited.
            self.note_limit(entry, &m.text);
        }
        entry.note_turn_finished();
        self.on_session_fact(entry, Fact::Hook(Some(HookStatus::Ready)))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(event: &str, notification_type: Option<&str>) -> HookReport {
        HookReport {
            event: event.into(),
            message: None,
            notification_type: notification_type.map(str::to_string),
            asks: None,
            input_messages: None,
        }
    }

    #[test]
    fn events_map_to_statuses() {
        use HookEffect::*;
        let table = [
            (
                report("UserPromptSubmit", None),
                Some(Status(HookStatus::Busy)),
            ),
            (report("PostToolUse", None), Some(Status(HookStatus::Busy))),
            (
                report("PermissionRequest", None),
                Some(Status(HookStatus::Blocked(String::new()))),
            ),
            (
                report("Notification", Some("permission_prompt")),
                Some(Status(HookStatus::Blocked(String::new()))),
            ),
            (
                report("Notification", Some("idle_prompt")),
                Some(Status(HookStatus::Ready)),
            ),
            (report("Notification", Some("auth_success")), Some(Nothing)),
            (report("Stop", None), Some(TurnFinished)),
            (report("agent-turn-complete", None), Some(TurnFinished)),
            (report("BeforeAgent", None), Some(Status(HookStatus::Busy))),
            (report("AfterTool", None), Some(Status(HookStatus::Busy))),
            (
                report("Notification", Some("ToolPermission")),
                Some(Status(HookStatus::Blocked(String::new()))),
            ),
            (report("AfterAgent", None), Some(TurnFinished)),
            (report("Bogus", None), None),
        ];
        for (r, want) in table {
            assert_eq!(effect(&r), want, "{}", r.event);
        }
    }

    #[test]
    fn claude_settings_run_orchestra_hook_for_each_event() {
        let v = claude_settings(Path::new("/opt/it's/orchestra"));
        for event in CLAUDE_EVENTS {
            let command = v["hooks"][event][0]["hooks"][0]["command"]
                .as_str()
                .unwrap_or_default();
            assert_eq!(command, format!(r"'/opt/it'\''s/orchestra' hook {event}"));
        }
    }

    #[test]
    fn gemini_hooks_carry_the_sessions_variables_and_nothing_else() {
        let env = [
            ("ORCHESTRA_HOOK_TOKEN", "t0k"),
            ("ORCHESTRA_SESSION_ID", "s1"),
            ("GEMINI_API_KEY", "secret"),
            ("PATH", "/bin"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let template = r#"{"context":{},"hooks":{gemini_hooks}}"#;
        let filled = fill_gemini_hooks(template, Some(Path::new("/opt/orchestra")), &env);
        let v: serde_json::Value = serde_json::from_str(&filled).expect("JSON");
        for event in GEMINI_EVENTS {
            let command = &v["hooks"][event][0]["hooks"][0];
            assert_eq!(command["command"], format!("'/opt/orchestra' hook {event}"));
            assert_eq!(command["timeout"], 10_000);
            assert_eq!(
                command["env"],
                serde_json::json!({"ORCHESTRA_HOOK_TOKEN": "t0k", "ORCHESTRA_SESSION_ID": "s1"})
            );
        }
        // Without orchestra's executable: no hooks, still a valid file.
        let none = fill_gemini_hooks(template, None, &env);
        assert_eq!(none, r#"{"context":{},"hooks":{}}"#);
        assert_eq!(fill_gemini_hooks("plain", None, &env), "plain");
    }
}
