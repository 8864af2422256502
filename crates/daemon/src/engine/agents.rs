//! Coding-agent sessions: their screen read through the provider's patterns.
//!
//! - A quiet screen is classified by the provider's patterns (a prompt, a busy indicator, its
//!   input prompt); `status.rs` decides the status from that and the session's facts.
//! - Under `approval: safe` (and `auto`) housekeeping prompts (trust this folder, update
//!   notices, telemetry, theme) are answered automatically, each answer recorded as a `user`
//!   message with `auto` saying what it was; permission and login prompts never are. Such a
//!   prompt is decided to be answered before its status is published (`status.rs`): the
//!   session shows `busy` meanwhile, never `blocked` on a prompt nobody else has to answer.
//! - A task run by an agent completes when, after working on its instruction (a reply to it,
//!   its busy indicator or a permission prompt once the instruction reached it — never
//!   start-up output, a trust screen or the echo of the instruction), the agent is back at
//!   `ready` and stays there for the settle time: its last reply is the summary.
//! - Agent replies are screen diffs with the provider's chrome removed.

use super::Engine;
use super::session_info::reply_text;
use super::sessions::{SendMessage, SessionEntry};
use super::status::{Fact, SessionStatus};
use crate::providers::Delivery;
use crate::providers::line_question::line_question;
use crate::providers::patterns::{Classifier, PromptOption, SeenPrompt, Verdict, find_option};
use crate::session::{Foreground, PtySession, cursor_lines};
use orchestra_proto::task::{Task, TaskResult, TaskStatus};
use orchestra_proto::wire::{Approval, PromptKind, Role, StatusSource};
use std::collections::HashMap;
use std::sync::Arc;

/// How often one and the same prompt is answered automatically before orchestra leaves it to
/// the user (an answer that does not move the CLI on must not loop).
const MAX_AUTO_ANSWERS: u32 = 2;

/// How long after an automatic answer the same prompt still on the screen is taken for one
/// the CLI has not redrawn yet, not one it ignored: then the screen is read again.
const ANSWER_TAKES: std::time::Duration = std::time::Duration::from_secs(2);

/// What the engine knows about a coding agent's screen and turn.
#[derive(Default)]
pub(crate) struct AgentState {
    classifier: Option<Arc<Classifier>>,
    /// The prompt the session is blocked on (set by `status.rs`).
    pub(super) prompt: Option<SeenPrompt>,
    /// The prompt on the screen the preset answers, the session busy meanwhile (set by
    /// `status.rs`, answered by [`Engine::answer_by_itself`]).
    pub(super) answering: Option<SeenPrompt>,
    /// Automatic answers given, by prompt text.
    answered: HashMap<String, u32>,
    /// The last automatic answer: to which prompt text, and when.
    last_answer: Option<(String, std::time::Instant)>,
    /// The screen last read showed a prompt that reports a usage limit (noticed once).
    pub(super) limit_prompt_shown: bool,
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

impl AgentState {
    /// The option the preset answers `p` with by itself, if it does: a housekeeping prompt
    /// (never a permission or a login) under a preset that answers those, answered fewer
    /// than [`MAX_AUTO_ANSWERS`] times already.
    pub(super) fn answers_itself(
        &self,
        p: &SeenPrompt,
        approval: Approval,
    ) -> Option<PromptOption> {
        if !approval.answers_housekeeping() || !p.prompt.kind.may_be_answered_automatically() {
            return None;
        }
        if self.answered.get(&p.prompt.text).copied().unwrap_or(0) >= MAX_AUTO_ANSWERS {
            return None;
        }
        // The classifier sets `auto_answer` only for housekeeping trust/choice/question
        // prompts that do not speak of tools, commands or edits.
        p.auto_answer
            .as_deref()
            .and_then(|a| find_option(&p.prompt.options, a))
            .cloned()
    }
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

    /// Orchestra sends the agent more work on its task (a failed check): a turn counts as
    /// finished again only once it worked on that.
    pub(super) fn expect_new_work(&self) {
        self.agent.lock().worked = false;
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
                self.typed_line.clear();
                by_patterns
            }
            // A line the user is typing (no Enter yet) is theirs, not a question.
            Some(Foreground::Reading(_)) if self.typed_line.is_users(pty.screen_generation()) => {
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
    /// After a status change was published: finished turns.
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
        if status == SessionStatus::Ready {
            self.maybe_finish_turn(entry, turn);
        }
    }

    /// Answers the housekeeping prompt the status decision left to orchestra (see
    /// `status.rs`), if one is on the screen: under the session's typing turn, once, and only
    /// while the screen still shows it. An answer the CLI has not taken within
    /// [`ANSWER_TAKES`] is given again (at most [`MAX_AUTO_ANSWERS`] times, then the prompt
    /// is the user's and the session `blocked` on it).
    pub(crate) async fn answer_by_itself(&self, entry: &Arc<SessionEntry>) {
        if entry.agent.lock().answering.is_none() {
            return;
        }
        let approval = entry.info.lock().approval;
        let _turn = entry.typing.lock().await;
        let Some(prompt) = entry.agent.lock().answering.clone() else {
            return;
        };
        let recent = |st: &AgentState| {
            st.last_answer.as_ref().is_some_and(|(text, at)| {
                *text == prompt.prompt.text && at.elapsed() < ANSWER_TAKES
            })
        };
        if recent(&entry.agent.lock()) {
            return;
        }
        // Still on the screen (it may have gone while the turn was waited for).
        let shown = matches!(entry.classify_now(), Some(Verdict::Prompt(p)) if p.prompt.text == prompt.prompt.text);
        let option = {
            let mut st = entry.agent.lock();
            let option = st.answers_itself(&prompt, approval).filter(|_| shown);
            if option.is_some() {
                *st.answered.entry(prompt.prompt.text.clone()).or_default() += 1;
                st.last_answer = Some((prompt.prompt.text.clone(), std::time::Instant::now()));
            }
            option
        };
        let Some(option) = option else {
            return;
        };
        let keys = option
            .keys
            .clone()
            .unwrap_or_else(|| vec![option.key.clone()]);
        let reason = auto_reason(&prompt, &option.label, approval);
        tracing::info!(session = %entry.info.lock().id, %reason, "automatic answer");
        if let Err(e) = self
            .type_now(entry, SendMessage::Keys(keys), Some(reason))
            .await
        {
            tracing::warn!(error = %e, "could not answer a prompt automatically");
            return;
        }
        self.look_once_the_answer_took(entry);
    }

    /// A CLI that takes an automatic answer redraws, and its screen is read again; one that
    /// does not is looked at again once the answer had time to take.
    fn look_once_the_answer_took(&self, entry: &Arc<SessionEntry>) {
        let (engine, entry) = (self.clone(), entry.clone());
        tokio::spawn(async move {
            tokio::time::sleep(ANSWER_TAKES).await;
            let waiting = entry.agent.lock().answering.is_some();
            if waiting && !entry.info.lock().ended {
                engine.on_session_fact(&entry, Fact::LookAgain).await;
            }
        });
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
                ..Default::default()
            };
            engine.weigh_turn(&entry, &task, &mut result).await;
            match engine.set_result(&task_id, result).await {
                Ok(t) => {
                    tracing::info!(task = %task_id, status = %t.status(), "agent finished its turn")
                }
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

/// `reply_text` over the screens with the chrome lines removed and reply markers stripped:
/// what the agent said after what was sent, and nothing of the CLI's own (its start-up
/// banner, the echo of the send, a question it asks now, the line of a question keys
/// answered, its status lines and hints).
pub(crate) fn reply_without_chrome(
    c: &Classifier,
    before: &[String],
    after: &[String],
    sent: &str,
) -> String {
    // A question the CLI asks now, below what was there before, is not reply: the reply
    // ends where it begins.
    let unchanged = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let after = match c.prompt_line(after) {
        Some(at) if at >= unchanged => &after[..at],
        _ => after,
    };
    // Keys typed into a question on its line ("Create new file? (Y)es/(N)o [Yes]: y"): that
    // line, answer and all, is the question's, not reply.
    let typed_into = sent
        .trim()
        .is_empty()
        .then(|| before.iter().rev().find(|l| !l.trim().is_empty()))
        .flatten()
        .map(|l| l.trim().to_string());
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
        .filter(|l| {
            !typed_into
                .as_deref()
                .is_some_and(|q| !q.is_empty() && l.trim().starts_with(q))
        })
        .cloned()
        .collect();
    // The reply follows the echo of what was sent: what the screen gained before the echo
    // (a CLI still starting, drawing its banner under the typed text) is not reply to it.
    let head: Option<String> = sent
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(30).collect());
    let echo_at = head
        .as_deref()
        .and_then(|h| fresh.iter().position(|l| l.contains(h)));
    let mut new: &[String] = &fresh[echo_at.unwrap_or(0)..];
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
    // A CLI that queues what was typed shows it again further down ("Queued: …"), and one
    // typed to before it took input shows it again at its prompt once it does: a line that
    // is a whole sent line, alone or after an input prompt, is echo wherever it is (short
    // ones may be real replies).
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
        .filter(|l| !sent_lines.iter().any(|s| is_echo_of(l, s)))
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

/// Whether `line` is the echo of the sent line `sent`: that line alone, or after an input
/// prompt (`> `, `❯ `, `architect> `, `$ `).
fn is_echo_of(line: &str, sent: &str) -> bool {
    let line = line.trim();
    let Some(before) = line.strip_suffix(sent) else {
        return false;
    };
    let before = before
        .trim_end()
        .trim_start_matches(|c: char| c.is_whitespace() || "│┃|".contains(c));
    before.is_empty()
        || (before.chars().count() <= 20
            && before.ends_with(['>', '❯', '›', '$', '#', '%'])
            && !before.contains(char::is_whitespace))
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
            ""
        );
    }

    fn built_in(cli: &str) -> Classifier {
        crate::providers::Providers::built_in()
            .get(cli)
            .map(|p| p.classifier())
            .unwrap_or_default()
    }

    /// A reply is what the agent said after what was sent, without the CLI's own lines:
    /// its banner drawn under the typed text, the echo at its prompt, a question it asks
    /// now, the line of a question keys answered, and its status lines (aider's screens as
    /// 0.86.2 draws them under `manual`).
    #[test]
    fn a_reply_is_the_agents_words_only() {
        let aider = built_in("aider");
        let answered = v(&[
            "Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]: y",
            "Added .aider* to .gitignore",
        ]);
        let banner = [
            "Aider v0.86.2",
            "Main model: openai/gpt-4o with diff edit format",
            "Weak model: gpt-4o-mini",
            "Git repo: .git with 2 files",
            "Repo-map: using 4096 tokens, auto refresh",
            "Added instructions.md to the chat",
            "(read-only).",
            "create hello.txt containing hi",
            "> create hello.txt containing hi",
            "",
        ];
        let mut started = answered.clone();
        started.extend(v(&banner));
        let sent = "create hello.txt containing hi";
        // Typed before it took input: its banner and the echo are not a reply yet.
        assert_eq!(reply_without_chrome(&aider, &answered, &started, sent), "");
        let mut asking = started.clone();
        asking.extend(v(&[
            "Created hello.txt for you.",
            "",
            "<<<<<<< SEARCH",
            "=======",
            "hi",
            ">>>>>>> REPLACE",
            "",
            "Tokens: 2.8k sent, 22 received.",
            "",
            "Create new file? (Y)es/(N)o [Yes]:",
        ]));
        assert_eq!(
            reply_without_chrome(&aider, &answered, &asking, sent),
            "Created hello.txt for you.\n\n<<<<<<< SEARCH\n=======\nhi\n>>>>>>> REPLACE"
        );
        // The answer to its question: the question's line and its status lines only.
        let mut done = asking.clone();
        done.pop();
        done.extend(v(&[
            "Create new file? (Y)es/(N)o [Yes]: y",
            "Applied edit to hello.txt",
            "Commit d03a423 Add hello.txt",
            "You can use /undo to undo and discard each aider commit.",
            "────────────────────────────────",
            "Readonly: /state/instructions.md",
            "Editable: hello.txt",
            ">",
        ]));
        assert_eq!(reply_without_chrome(&aider, &asking, &done, ""), "");

        // Claude Code: the reply ends where its permission dialog begins.
        let claude = built_in("claude");
        let before = v(&["❯ create hello.txt containing hi"]);
        let after = v(&[
            "❯ create hello.txt containing hi",
            "⏺ I will create it.",
            "",
            " Do you want to create hello.txt?",
            " ❯ 1. Yes",
            "   2. No",
        ]);
        assert_eq!(
            reply_without_chrome(&claude, &before, &after, sent),
            "I will create it."
        );

        // Gemini CLI: its report of a tool call, and the preview under it, is not reply.
        let gemini = built_in("gemini");
        let before = v(&[" > create hello.txt containing hi"]);
        let after = v(&[
            " > create hello.txt containing hi",
            "",
            "  ✓  WriteFile  hello.txt → Accepted (+1, -0)",
            "",
            "      1 hi",
            "",
            "✦ Created hello.txt for you.",
            "  It holds hi.",
            "",
            " Shift+Tab to accept edits                1 GEMINI.md file",
        ]);
        assert_eq!(
            reply_without_chrome(&gemini, &before, &after, sent),
            "Created hello.txt for you.\n  It holds hi."
        );

        // A line question answered with keys (no patterns know it): its line is not reply.
        let plain = Classifier::default();
        let before = v(&["$ ./clean", "Delete the cache? [y/N] "]);
        let after = v(&["$ ./clean", "Delete the cache? [y/N] y", "deleted", "$"]);
        assert_eq!(
            reply_without_chrome(&plain, &before, &after, ""),
            "deleted\n$"
        );
    }

    #[test]
    fn echo_is_the_sent_line_alone_or_after_an_input_prompt() {
        let sent = "create hello.txt containing hi";
        for echo in [
            sent,
            "> create hello.txt containing hi",
            "  │ > create hello.txt containing hi",
            "architect> create hello.txt containing hi",
            "❯ create hello.txt containing hi",
        ] {
            assert!(is_echo_of(echo, sent), "{echo}");
        }
        for reply in [
            "I did: create hello.txt containing hi",
            "Next > create hello.txt containing hi",
            "done",
        ] {
            assert!(!is_echo_of(reply, sent), "{reply}");
        }
    }
}
