//! Coding-agent sessions: their screen read through the provider's patterns.
//!
//! - A quiet screen is classified by the provider's patterns (a prompt, a busy indicator, its
//!   input prompt); `status.rs` decides the status from that and the session's facts.
//! - Under `approval: safe` (and `auto`) housekeeping prompts (trust this folder, update
//!   notices, telemetry, theme) are answered automatically, each answer recorded as a `user`
//!   message with `auto` saying what it was; permission and login prompts never are.
//! - A task run by an agent completes when, after working on its instruction (a reply to it,
//!   its busy indicator or a permission prompt once the instruction reached it — never
//!   start-up output, a trust screen or the echo of the instruction), the agent is back at
//!   `ready` and stays there for the settle time: its last reply is the summary.
//! - Agent replies are screen diffs with the provider's chrome removed.

use super::Engine;
use super::session_info::reply_text;
use super::sessions::{Input, SessionEntry};
use super::status::SessionStatus;
use crate::providers::Delivery;
use crate::providers::line_question::line_question;
use crate::providers::patterns::{Classifier, SeenPrompt, Verdict, find_option};
use crate::session::{Foreground, PtySession, cursor_lines};
use crate::task::{Task, TaskResult, TaskStatus};
use crate::wire::{Approval, PromptKind, Role, StatusSource};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// How often one and the same prompt is answered automatically before orchestra leaves it to
/// the user (an answer that does not move the CLI on must not loop).
const MAX_AUTO_ANSWERS: u32 = 2;

/// What the engine knows about a coding agent's screen and turn.
#[derive(Default)]
pub(crate) struct AgentState {
    classifier: Option<Arc<Classifier>>,
    /// The prompt the session is blocked on (set by `status.rs`).
    pub(super) prompt: Option<SeenPrompt>,
    /// Automatic answers given, by prompt text.
    answered: HashMap<String, u32>,
    /// The agent worked on its task's request: it replied to it, showed its busy indicator or
    /// asked permission for a tool after the request reached it. Output alone is not work:
    /// start-up screens, the echo of the request and trust questions are output too.
    worked: bool,
    /// Bumped on every status change: a finished-turn timer checks nothing happened since.
    turn: u64,
    /// The screen was recognised once (input prompt, prompt or busy): before that, a quiet
    /// screen the patterns do not know is a CLI still starting, not one waiting for input.
    pub(super) recognised: bool,
    /// The screen showed the CLI done starting (its `started` patterns) once.
    started: bool,
    /// When the screen was last read for a usage-limit wait.
    limit_wait_read: Option<std::time::Instant>,
    /// What the CLI said that the task must carry (`notices.rs`).
    pub(super) said: super::notices::Said,
}

impl SessionEntry {
    /// The provider's classifier, when this session runs a provider with screen patterns.
    fn classifier(&self) -> Option<Arc<Classifier>> {
        let provider = self.provider.as_ref()?;
        let mut st = self.agent.lock();
        if st.classifier.is_none() {
            st.classifier = Some(Arc::new(provider.classifier()));
        }
        st.classifier.clone().filter(|c| !c.is_empty())
    }

    /// Whether `reply` says the CLI's usage limit is reached (see `limits.rs`).
    pub(super) fn limit_in(&self, reply: &str) -> Option<Option<String>> {
        self.classifier()?.limit_in(reply)
    }

    /// Whether the screen shows the CLI waiting out a usage limit (see `limits.rs`): `None`
    /// when not read (no such patterns, or read less than `LIMIT_WAIT_EVERY` ago and not
    /// `now`), else `Some(Some(reset))` while it shows and `Some(None)` once it does not.
    pub(super) fn limit_wait_shown(&self, now: bool) -> Option<Option<Option<String>>> {
        let classifier = self.classifier()?;
        if !classifier.has_limit_wait() {
            return None;
        }
        {
            let mut st = self.agent.lock();
            let at = std::time::Instant::now();
            if !now
                && st
                    .limit_wait_read
                    .is_some_and(|t| at.duration_since(t) < super::limits::LIMIT_WAIT_EVERY)
            {
                return None;
            }
            st.limit_wait_read = Some(at);
        }
        let screen = self.pty.as_ref()?.snapshot(0, false).screen;
        Some(classifier.limit_wait_in(&screen))
    }

    /// New output lines: what they say that the task must carry (`notices.rs`); returns the
    /// notes for the task.
    pub(super) fn said_in_output(&self, lines: &[String]) -> Vec<String> {
        let Some(c) = self.classifier() else {
            return Vec::new();
        };
        let mut st = self.agent.lock();
        st.said.output(&c, lines);
        st.said.take_notes()
    }

    /// The tool failures its CLI printed in the turn that just finished, `screen` being the
    /// screen with its scrollback now.
    fn turn_failures(&self, screen: &[String]) -> Vec<String> {
        let Some(c) = self.classifier() else {
            return Vec::new();
        };
        self.agent.lock().said.turn_failures(&c, screen)
    }

    /// The agent replied to a request: it works on its task.
    pub(super) fn note_work(&self) {
        self.agent.lock().worked = true;
    }

    /// Its hook said it finished a turn: work on the task's request once that reached it.
    pub(super) fn note_turn_finished(&self) {
        if self.instruction_delivered() {
            self.note_work();
        }
    }

    /// What a quiet screen shows, from `status.rs`: a busy indicator or a permission prompt
    /// once the request reached the agent is the agent working on it.
    pub(super) fn note_screen(&self, agent: &mut AgentState, verdict: &Verdict) {
        let working = match verdict {
            Verdict::Busy => true,
            Verdict::Prompt(p) => p.prompt.kind == PromptKind::Permission,
            _ => false,
        };
        if working && !agent.worked && self.instruction_delivered() {
            agent.worked = true;
        }
    }

    /// Whether the task's instruction reached the agent: given as an argument, or typed.
    fn instruction_delivered(&self) -> bool {
        let by_arg = self.provider.as_ref().is_some_and(|p| {
            p.deliver == Delivery::Arg && p.args.iter().any(|a| a.contains("{task}"))
        }) && !self.info.lock().task.trim().is_empty();
        by_arg
            || self
                .messages
                .lock()
                .iter()
                .any(|m| m.role == Role::User && m.auto.is_none() && m.keys.is_none())
    }

    /// What the screen shows now, by the provider's patterns (`None`: it has none). Where
    /// the patterns know nothing, the terminal itself may say: a question asked by a program
    /// waiting for a typed line (a `read -p` in a shell, an installer's `[Y/n]`) is a
    /// prompt, and a command the leader runs in the foreground without reading (`sleep`, a
    /// quiet build) is busy.
    pub(super) fn classify_now(&self) -> Option<Verdict> {
        let pty = self.pty.as_ref()?;
        let by_patterns = self.classify_by_patterns(pty);
        if !matches!(by_patterns, None | Some(Verdict::Unknown)) {
            return by_patterns;
        }
        match pty.foreground() {
            // Keys are read as they come: no line is left half-typed.
            Some(Foreground::Keys) => {
                self.line_half_typed.store(false, Ordering::Relaxed);
                by_patterns
            }
            // A line the user is typing (no Enter yet) is theirs, not a question.
            Some(Foreground::Reading(_)) if self.line_half_typed.load(Ordering::Relaxed) => {
                by_patterns
            }
            Some(Foreground::Reading(reader)) => {
                let (before, above) = pty.with_screen(cursor_lines);
                line_question(&before, &above, reader.echo)
                    .map(Verdict::Prompt)
                    .or(by_patterns)
            }
            Some(Foreground::Running) => Some(Verdict::Busy),
            _ => by_patterns,
        }
    }

    fn classify_by_patterns(&self, pty: &PtySession) -> Option<Verdict> {
        let classifier = self.classifier()?;
        let screen = pty.snapshot(0, false).screen;
        let verdict = classifier.classify(&screen);
        let mut st = self.agent.lock();
        if st.said.awaits_notices(&classifier) {
            st.said.look_for_notices(&classifier, &screen);
        }
        if verdict != Verdict::Ready {
            return Some(verdict);
        }
        st.started |= classifier.shows_started(&screen);
        // An input prompt drawn before the CLI is done starting does not take input yet.
        Some(if st.started {
            Verdict::Ready
        } else {
            Verdict::Starting
        })
    }
}

/// The text of an automatic answer's `auto` field.
fn auto_reason(p: &SeenPrompt, label: &str, approval: Approval) -> String {
    format!(
        "answered the {} prompt \"{}\" ({}) with \"{}\" (approval: {})",
        p.prompt.kind, p.name, p.prompt.text, label, approval
    )
}

impl Engine {
    /// After a status change was published: automatic answers and finished turns.
    pub(crate) async fn agent_status_changed(
        &self,
        entry: &Arc<SessionEntry>,
        status: SessionStatus,
    ) {
        if entry.classifier().is_none() {
            return;
        }
        self.pass_on_notes(entry).await;
        let turn = {
            let mut st = entry.agent.lock();
            st.turn += 1;
            st.turn
        };
        match status {
            SessionStatus::Blocked => self.maybe_auto_answer(entry).await,
            SessionStatus::Ready => self.maybe_finish_turn(entry, turn),
            _ => {}
        }
    }

    /// Answers a housekeeping prompt under `safe`/`auto`; never a permission or login prompt.
    async fn maybe_auto_answer(&self, entry: &Arc<SessionEntry>) {
        let approval = entry.info.lock().approval;
        if !approval.answers_housekeeping() {
            return;
        }
        let chosen = {
            let mut st = entry.agent.lock();
            let Some(p) = st.prompt.clone() else { return };
            // The classifier sets `auto_answer` only for housekeeping trust/choice/question
            // prompts that do not speak of tools, commands or edits; check the kind again.
            if !p.prompt.kind.may_be_answered_automatically() {
                return;
            }
            let Some(option) = p
                .auto_answer
                .as_deref()
                .and_then(|a| find_option(&p.prompt.options, a))
                .cloned()
            else {
                return;
            };
            let n = st.answered.entry(p.prompt.text.clone()).or_default();
            if *n >= MAX_AUTO_ANSWERS {
                return;
            }
            *n += 1;
            (p, option)
        };
        let (prompt, option) = chosen;
        let keys = option
            .keys
            .clone()
            .unwrap_or_else(|| vec![option.key.clone()]);
        let reason = auto_reason(&prompt, &option.label, approval);
        tracing::info!(session = %entry.info.lock().id, %reason, "automatic answer");
        if let Err(e) = self.send_to(entry, Input::Keys(keys), Some(reason)).await {
            tracing::warn!(error = %e, "could not answer a prompt automatically");
        }
    }

    /// Back at `ready` after working on the task: if it stays there for the settle time, the
    /// turn is finished and the task completes with the agent's last reply as its summary.
    /// Ready by the agent's own hook, the turn is finished without waiting for the screen.
    fn maybe_finish_turn(&self, entry: &Arc<SessionEntry>, turn: u64) {
        let Some(task_id) = entry.info.lock().task_id.clone() else {
            return;
        };
        if !entry.agent.lock().worked {
            return;
        }
        let engine = self.clone();
        let entry = entry.clone();
        let settle = match entry.info.lock().status_source {
            StatusSource::Hook => std::time::Duration::ZERO,
            StatusSource::Screen => self.config().settle,
        };
        tokio::spawn(async move {
            tokio::time::sleep(settle).await;
            {
                let st = entry.agent.lock();
                let info = entry.info.lock();
                if st.turn != turn || info.ended || info.status != SessionStatus::Ready {
                    return;
                }
            }
            let Ok(task) = engine.get_task(&task_id) else {
                return;
            };
            let sid = entry.info.lock().id.clone();
            if task.status() != TaskStatus::Running
                || task.metadata.session_id.as_deref() != Some(sid.as_str())
            {
                return;
            }
            let summary = entry
                .messages
                .lock()
                .iter()
                .rev()
                .find(|m| m.role == Role::Agent && !m.text.trim().is_empty())
                .map(|m| m.text.clone())
                .or_else(|| task.last_output_line())
                .unwrap_or_else(|| "the agent finished its turn".into());
            let mut result = TaskResult {
                success: true,
                summary,
                files_modified: vec![],
                files_created: vec![],
                error: None,
            };
            engine.weigh_turn(&entry, &task, &mut result).await;
            match engine.set_result(&task_id, result).await {
                Ok(_) => tracing::info!(task = %task_id, "agent finished its turn: task completed"),
                Err(e) => tracing::debug!(error = %e, "finished turn not recorded"),
            }
        });
    }

    /// Weighs a finished turn's claimed success against the tool failures its CLI printed in
    /// it (`notices.rs`): the files are filled in first, and the note goes to the task.
    async fn weigh_turn(&self, entry: &Arc<SessionEntry>, task: &Task, result: &mut TaskResult) {
        let Some(pty) = entry.pty.clone() else {
            return;
        };
        let screen = super::sessions::screen_lines(&pty).await;
        let failures = entry.turn_failures(&screen);
        if failures.is_empty() {
            return;
        }
        self.fill_result_files(&task.id, result).await;
        let cli = entry
            .provider
            .as_ref()
            .map_or("the agent's CLI", |p| p.name.as_str());
        if let Some(note) = super::notices::weigh(result, cli, &failures, self.tracks_files(task))
            && let Err(e) = self.append_output(&task.id, &note).await
        {
            tracing::debug!(error = %e, "a tool failure not noted");
        }
    }

    /// Puts the notes of what a session's CLI said (`notices.rs`) on its task.
    pub(super) async fn pass_on_notes(&self, entry: &Arc<SessionEntry>) {
        let notes = entry.agent.lock().said.take_notes();
        let task_id = entry.info.lock().task_id.clone();
        if let (false, Some(task_id)) = (notes.is_empty(), task_id)
            && let Err(e) = self.append_output(&task_id, &notes.join("\n")).await
        {
            tracing::debug!(error = %e, "a note not passed on");
        }
    }

    /// The reply a send produced, without the provider's chrome (input box, status lines,
    /// spinners); the plain screen diff for providers without patterns.
    pub(crate) fn agent_reply_text(
        &self,
        entry: &SessionEntry,
        before: &[String],
        after: &[String],
        sent: &str,
    ) -> String {
        match entry.classifier() {
            Some(c) => reply_without_chrome(&c, before, after, sent),
            None => reply_text(before, after, sent),
        }
    }
}

/// `reply_text` over the screens with the chrome lines removed and reply markers stripped.
pub(crate) fn reply_without_chrome(
    c: &Classifier,
    before: &[String],
    after: &[String],
    sent: &str,
) -> String {
    let before = c.strip_chrome(before);
    let after = c.strip_chrome(after);
    let common = before
        .iter()
        .zip(&after)
        .take_while(|(a, b)| a == b)
        .count();
    // Full-screen CLIs redraw: a line that was on the screen before the send is not reply.
    let seen: std::collections::HashSet<&str> = before.iter().map(|l| l.trim()).collect();
    let fresh: Vec<String> = after[common..]
        .iter()
        .filter(|l| l.trim().is_empty() || !seen.contains(l.trim()))
        .cloned()
        .collect();
    let mut new: &[String] = &fresh;
    // The echo of what was sent: each sent line once (a reply may quote it again).
    let mut echo: Vec<&str> = sent
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    while let Some(first) = new.first() {
        let t = first.trim();
        if t.is_empty() {
            new = &new[1..];
        } else if let Some(i) = echo.iter().position(|s| t.contains(s)) {
            echo.remove(i);
            new = &new[1..];
        } else {
            break;
        }
    }
    // A CLI that queues what was typed shows it again further down ("Queued: …"): a line
    // that is a whole sent line is echo wherever it is (short ones may be real replies).
    let sent_lines: Vec<&str> = sent
        .lines()
        .map(str::trim)
        .filter(|l| l.chars().count() >= 8)
        .collect();
    // Stripping can leave blank edges and runs of blank lines.
    let mut out: Vec<&str> = Vec::new();
    for l in new
        .iter()
        .map(|l| l.as_str())
        .filter(|l| !sent_lines.contains(&l.trim()))
    {
        let l = l.trim_end();
        if l.trim().is_empty() && out.last().is_none_or(|p| p.trim().is_empty()) {
            continue;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ScreenPatterns;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn chrome_and_markers_are_stripped_from_replies() {
        let (c, e) = Classifier::new(
            &ScreenPatterns {
                ready: vec![r"^> ?\z".into()],
                chrome: vec![
                    "^> ?$".into(),
                    "esc to interrupt".into(),
                    "^Fake Agent".into(),
                ],
                strip: vec!["^⏺ ".into()],
                ..Default::default()
            },
            &[],
        );
        assert!(e.is_empty());
        let before = v(&["Fake Agent ready", "> "]);
        let after = v(&["Fake Agent ready", "> work hard", "⏺ Done: work hard", "> "]);
        assert_eq!(
            reply_without_chrome(&c, &before, &after, "work hard"),
            "Done: work hard"
        );
        // Queued input shown again below other chrome is echo, not a reply.
        let queued = v(&[
            "Fake Agent ready",
            "  Queued:",
            "    create hello.txt",
            "> ",
        ]);
        assert_eq!(
            reply_without_chrome(&c, &before, &queued, "create hello.txt"),
            "  Queued:"
        );
    }
}
