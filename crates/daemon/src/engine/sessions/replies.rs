//! The agent's reply to what was sent: the screen before a send is kept, and the reply is
//! what the screen shows once the agent is ready again (or, for an instruction given on the
//! command line, what follows its echo). A reply becomes an `agent` message.

use super::SessionEntry;
use crate::engine::Engine;
use crate::session::PtySession;
use orchestra_proto::wire::Role;
use std::sync::Arc;

/// How much scrollback a reply is read from: a longer reply keeps its last lines.
pub(super) const REPLY_SCROLLBACK: usize = 2_000;

/// The screen-diff state between a send and the reply it produces.
pub(super) struct PendingReply {
    pub(super) before: Vec<String>,
    pub(super) sent: String,
    /// A request to the agent (the task's instruction, or text a user sent): a reply to it
    /// is the agent working on its task. Keys and automatic answers are not requests.
    pub(super) request: bool,
    /// The reply is what follows the echo of `sent` on the screen, wherever that is (the
    /// instruction given as an argument: the CLI shows it once it takes it up, after any
    /// start-up screens), rather than what changed since `before`.
    pub(super) after_echo: bool,
}

impl PendingReply {
    /// The reply to an instruction given on the command line.
    pub(super) fn to_argument(instruction: &str) -> Self {
        Self {
            before: Vec::new(),
            sent: instruction.to_string(),
            request: true,
            after_echo: true,
        }
    }
}

/// The screen and the last [`REPLY_SCROLLBACK`] lines of scrollback as lines, trailing blank
/// lines dropped: what replies are diffed on. Copying them out costs milliseconds a call (a
/// flooding session's more, starved of CPU), so it runs off the async workers: on them, a few
/// flooding sessions' replies kept every worker busy and keystrokes waited seconds.
pub(in crate::engine) async fn screen_lines(pty: &Arc<PtySession>) -> Vec<String> {
    let pty = pty.clone();
    let snap = tokio::task::spawn_blocking(move || pty.snapshot(REPLY_SCROLLBACK, false))
        .await
        .unwrap_or_default();
    let mut lines = snap.scrollback;
    lines.extend(snap.screen.split('\n').map(|l| l.trim_end().to_string()));
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// Where the echo of `sent` ends in `lines` (the index after its last line), when its first
/// line shows: the CLI took the instruction up. Matched on the start of that line, which
/// fits a screen line even where the rest wraps.
fn echo_end(lines: &[String], sent: &str) -> Option<usize> {
    let first = sent.lines().map(str::trim).find(|l| !l.is_empty())?;
    let head: String = first.chars().take(30).collect();
    let start = lines.iter().position(|l| l.contains(head.as_str()))?;
    let rest: Vec<&str> = sent
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let wrapped = lines[start + 1..]
        .iter()
        .take_while(|l| {
            let t = l.trim();
            !t.is_empty() && rest.iter().any(|r| r.contains(t))
        })
        .count();
    Some(start + 1 + wrapped)
}

impl Engine {
    /// Records the agent's reply to the last send, if there is one pending.
    pub(super) async fn finish_reply(&self, entry: &Arc<SessionEntry>) {
        if entry.reply.lock().is_none() {
            return;
        }
        let Some(pty) = &entry.pty else { return };
        let after = screen_lines(pty).await;
        if let Some((request, text)) = self.take_reply(entry, &after) {
            let m = self
                .record_message(entry, Role::Agent, text, None, None)
                .await;
            self.reply_taken(entry, request, &m.text);
        }
    }

    /// The reply to the last send, when one is pending and `after` (the screen now) shows it:
    /// whether the send was the task's request, and the reply's text. Else the wait goes on.
    pub(super) fn take_reply(
        &self,
        entry: &Arc<SessionEntry>,
        after: &[String],
    ) -> Option<(bool, String)> {
        let pending = entry.reply.lock().take()?;
        // After the echo, the echo is behind: a reply that quotes the request is reply. No
        // echo yet: the CLI has not taken the instruction up (a trust screen first).
        let text = if pending.after_echo {
            echo_end(after, &pending.sent)
                .map(|end| self.agent_reply_text(entry, &after[..end], after, ""))
                .unwrap_or_default()
        } else {
            self.agent_reply_text(entry, &pending.before, after, &pending.sent)
        };
        if text.is_empty() {
            // No reply yet (the agent only echoed the send, or looked idle before it began
            // working): keep waiting for it, or the reply that follows is never recorded.
            entry.reply.lock().get_or_insert(pending);
            return None;
        }
        Some((pending.request, text))
    }

    /// What a reply tells: work done on the request, a usage limit reached.
    pub(super) fn reply_taken(&self, entry: &Arc<SessionEntry>, request: bool, text: &str) {
        if request {
            entry.note_work();
        }
        self.note_limit(entry, text);
    }
}
