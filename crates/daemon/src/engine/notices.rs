//! What a CLI says about its own work that its task must carry, because the task would
//! otherwise read better than the truth:
//!
//! - A notice: the CLI skipped something orchestra handed it, or could not set itself up
//!   (Gemini CLI skipping the settings file with orchestra's instructions and hooks, Codex CLI
//!   not making its helper commands). Each of the provider's `notices` found in its output or
//!   on its screen becomes a `note:` line in the task's output, once per session, in words a
//!   user can act on; so does a place for its files that orchestra knows it will refuse.
//! - A failed tool: a turn whose agent says it is done while its CLI printed that a tool
//!   failed (`screen.tool_failed`). Orchestra cannot read the agent's mind, but it knows what
//!   the CLI printed and which files changed: a failure in a turn that changed no file (where
//!   git can tell) fails the task with both facts; otherwise the result stands and the failure
//!   is noted beside it.

use crate::providers::{Classifier, Provider};
use orchestra_proto::task::TaskResult;
use std::collections::{HashMap, HashSet};

/// The start of every line orchestra adds to a task's output about what a CLI said.
const NOTE: &str = "note: ";

/// What a session's CLI said that its task has not been told yet.
#[derive(Default)]
pub(crate) struct Said {
    /// Notes not on the task yet.
    pending: Vec<String>,
    /// The notices already noted: each once per session.
    noted: HashSet<usize>,
    /// Tool-failure lines seen in its output since the last finished turn.
    failed_in_output: Vec<String>,
    /// How often each tool-failure line was on its screen (and scrollback) when the last
    /// turn finished: a turn's failures are the ones that showed up since.
    failures_seen: HashMap<String, usize>,
}

impl Said {
    /// Notes for the task from the session's start.
    pub(crate) fn add_notes(&mut self, notes: Vec<String>) {
        self.pending.extend(notes);
    }

    /// Whether some of the CLI's notices were not seen yet.
    pub(crate) fn awaits_notices(&self, c: &Classifier) -> bool {
        self.noted.len() < c.notice_count()
    }

    /// Looks for notices in `text` (output lines, or the screen).
    pub(crate) fn look_for_notices(&mut self, c: &Classifier, text: &str) {
        for (i, means) in c.notices_in(text) {
            if self.noted.insert(i) {
                self.pending.push(format!("{NOTE}{means}"));
            }
        }
    }

    /// New output lines: notices, and tool failures that scroll by.
    pub(crate) fn output(&mut self, c: &Classifier, lines: &[String]) {
        if self.awaits_notices(c) {
            self.look_for_notices(c, &lines.join("\n"));
        }
        self.failed_in_output
            .extend(c.tool_failures(lines).into_iter().map(str::to_string));
    }

    /// The notes not on the task yet.
    pub(crate) fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }

    /// The tool failures of the turn that just finished, given what the screen (with its
    /// scrollback) shows now: each failure line that shows more often than when the last
    /// turn finished, and those that scrolled by in the output.
    pub(crate) fn turn_failures(&mut self, c: &Classifier, screen: &[String]) -> Vec<String> {
        let mut now: HashMap<String, usize> = HashMap::new();
        for line in c.tool_failures(screen) {
            *now.entry(line.to_string()).or_default() += 1;
        }
        let mut failures = std::mem::take(&mut self.failed_in_output);
        for (line, n) in &now {
            let before = self.failures_seen.get(line).copied().unwrap_or(0);
            if *n > before && !failures.contains(line) {
                failures.push(line.clone());
            }
        }
        self.failures_seen = now;
        failures
    }
}

/// The note for files a CLI asks to find in places none of which meets its rule.
pub(crate) fn unplaced(provider: &Provider, reasons: &[String]) -> String {
    format!(
        "{NOTE}{} reads the files orchestra hands it for this session (its instructions and \
         hooks) only from a place {}, and none was found ({}): it will likely skip them and \
         run without them, its status read from its screen only",
        provider.name,
        provider.instructions_dir_rule.describe(),
        reasons.join("; ")
    )
}

/// Weighs a finished turn's `result` (its files filled in) against the tool failures its CLI
/// (`cli`, by name) printed in it; `tracked`: git can tell which files the task changed.
/// Returns the note for the task's output, when there were failures.
pub(crate) fn weigh(
    result: &mut TaskResult,
    cli: &str,
    failures: &[String],
    tracked: bool,
) -> Option<String> {
    if failures.is_empty() {
        return None;
    }
    let quoted = failures
        .iter()
        .map(|f| format!("\u{201c}{f}\u{201d}"))
        .collect::<Vec<_>>()
        .join(", ");
    let nothing_changed =
        tracked && result.files_created.is_empty() && result.files_modified.is_empty();
    if result.success && nothing_changed {
        result.success = false;
        result.error = Some(format!(
            "{cli} printed {quoted} and no file changed, though the agent's reply says it is \
             done: check the work before trusting the summary"
        ));
    }
    Some(format!(
        "{NOTE}{cli} printed {quoted} during this turn{}",
        if nothing_changed {
            "; no file changed"
        } else if tracked {
            "; check the files it changed"
        } else {
            "; orchestra cannot tell which files changed here (not a git work tree)"
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{NoticeRule, ScreenPatterns};

    fn classifier() -> Classifier {
        let screen = ScreenPatterns {
            ready: vec!["^> ".into()],
            tool_failed: vec!["^✘ Failed to apply patch".into()],
            ..Default::default()
        };
        let mut errors = Vec::new();
        let c = Classifier::new(&screen, &[]).0.with_notices(
            &[NoticeRule {
                pattern: "could not create PATH aliases".into(),
                means: "no helper commands".into(),
            }],
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        c
    }

    fn lines(s: &[&str]) -> Vec<String> {
        s.iter().map(|l| l.to_string()).collect()
    }

    fn done(files: &[&str]) -> TaskResult {
        TaskResult {
            success: true,
            summary: "Created hello.txt for you.".into(),
            files_modified: vec![],
            files_created: files.iter().map(|f| f.to_string()).collect(),
            error: None,
            ..Default::default()
        }
    }

    #[test]
    fn a_place_the_cli_refuses_is_said_with_its_rule_and_why() {
        let gemini = crate::providers::Providers::built_in()
            .get("gemini")
            .cloned()
            .expect("gemini");
        let note = unplaced(&gemini, &["orchestra runs as uid 1000".into()]);
        assert!(note.starts_with("note: Gemini CLI reads"), "{note}");
        assert!(note.contains("owned by root"), "{note}");
        assert!(note.contains("uid 1000"), "{note}");
    }

    #[test]
    fn a_notice_is_noted_once_per_session() {
        let c = classifier();
        let mut said = Said::default();
        let warning = "WARNING: proceeding, even though we could not create PATH aliases: x";
        said.output(&c, &lines(&[warning]));
        said.look_for_notices(&c, warning);
        assert_eq!(
            said.take_notes(),
            vec!["note: no helper commands".to_string()]
        );
        said.output(&c, &lines(&[warning]));
        assert!(said.take_notes().is_empty());
    }

    #[test]
    fn a_turn_has_the_failures_that_showed_up_in_it() {
        let c = classifier();
        let mut said = Said::default();
        let first = lines(&["› create", "✘ Failed to apply patch", "• Done"]);
        assert_eq!(
            said.turn_failures(&c, &first),
            vec!["✘ Failed to apply patch".to_string()]
        );
        // The next turn still shows the old one: not this turn's.
        let second = lines(&["✘ Failed to apply patch", "• Done", "› more", "• Fine"]);
        assert!(said.turn_failures(&c, &second).is_empty());
        // A second one in a later turn is.
        let third = lines(&["✘ Failed to apply patch", "✘ Failed to apply patch"]);
        assert_eq!(said.turn_failures(&c, &third).len(), 1);
        // One that scrolled by in the output counts even when the screen no longer shows it.
        said.output(&c, &lines(&["  ✘ Failed to apply patch  "]));
        assert_eq!(
            said.turn_failures(&c, &third),
            vec!["✘ Failed to apply patch".to_string()]
        );
    }

    #[test]
    fn a_claimed_success_with_a_failed_tool_and_no_change_fails() {
        let failures = vec!["✘ Failed to apply patch".to_string()];
        let mut r = done(&[]);
        let note = weigh(&mut r, "Codex CLI", &failures, true).expect("a note");
        assert!(!r.success);
        let error = r.error.clone().unwrap_or_default();
        assert!(error.contains("Failed to apply patch"), "{error}");
        assert!(error.contains("no file changed"), "{error}");
        assert_eq!(
            r.summary, "Created hello.txt for you.",
            "the agent's words stay"
        );
        assert!(note.starts_with("note: Codex CLI printed"), "{note}");
        // Files changed: the result stands, with the failure noted.
        let mut r = done(&["hello.txt"]);
        let note = weigh(&mut r, "Codex CLI", &failures, true).expect("a note");
        assert!(r.success && r.error.is_none());
        assert!(note.contains("check the files"), "{note}");
        // Git cannot tell: the result stands, and the note says orchestra cannot tell.
        let mut r = done(&[]);
        let note = weigh(&mut r, "Codex CLI", &failures, false).expect("a note");
        assert!(r.success);
        assert!(note.contains("cannot tell"), "{note}");
        // No failure: nothing to say.
        let mut r = done(&[]);
        assert_eq!(weigh(&mut r, "Codex CLI", &[], true), None);
        assert!(r.success);
    }
}
