//! What orchestra writes about a task's work where others read it: the message of the commits
//! a merge or a pull request makes (the agent's leftovers, the merge commit), and the title
//! and body of a pull request. One place, so that `git log` and the forge say the same thing:
//! the task's name, the result's summary, the checks that passed, and the task's id.

use orchestra_proto::task::Task;

/// The longest subject made from a task's description (git's own advice is ~50–72).
const SUBJECT_CHARS: usize = 72;

/// The trailer naming the task a commit carries the work of.
pub const TASK_TRAILER: &str = "Orchestra-Task";
/// The trailer naming the provider (the agent) that did the work.
pub const PROVIDER_TRAILER: &str = "Orchestra-Provider";

/// The checks that passed in the task's worktree, one line per check, as a commit message and
/// a pull request show them (say `cargo test -q: exit 0 in 12.3 s`). Empty: nothing is said
/// about checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    pub lines: Vec<String>,
}

impl Evidence {
    /// The checks that passed, as `task`'s result records them (the one place where a
    /// check's evidence becomes a line): none when the task has no checks or its result
    /// does not record them passing.
    pub fn of(task: &Task) -> Evidence {
        let runs = task.metadata.result.as_ref().map(|r| r.checks.as_slice());
        Evidence {
            lines: runs
                .unwrap_or_default()
                .iter()
                .filter(|c| c.passed())
                .map(|c| {
                    format!(
                        "{}: exit 0 in {:.1} s",
                        c.command,
                        c.duration_ms as f64 / 1000.0
                    )
                })
                .collect(),
        }
    }
}

/// One line of `text`, runs of whitespace (newlines included) made single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to `max` characters, with `…` when it was longer.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// The subject of a task's commits and the title of its pull request: its name, else (no
/// name) its description shortened, else its id.
pub fn subject(task: &Task) -> String {
    let name = one_line(&task.name);
    if !name.is_empty() {
        return name;
    }
    let description = one_line(&task.description);
    if !description.is_empty() {
        return shortened(&description, SUBJECT_CHARS);
    }
    format!("orchestra task {}", task.id)
}

/// The result's summary, unless there is none or it only repeats the subject.
fn summary(task: &Task, subject: &str) -> Option<String> {
    let s = task.metadata.result.as_ref()?.summary.trim();
    (!s.is_empty() && one_line(s) != subject).then(|| s.to_string())
}

/// The checks as a paragraph, or nothing when there are none.
fn checks_paragraph(evidence: &Evidence) -> Option<String> {
    let lines: Vec<String> = evidence
        .lines
        .iter()
        .map(|l| one_line(l))
        .filter(|l| !l.is_empty())
        .map(|l| format!("- {l}"))
        .collect();
    (!lines.is_empty()).then(|| format!("Checks passed:\n{}", lines.join("\n")))
}

fn trailers(task: &Task) -> String {
    format!(
        "{TASK_TRAILER}: {}\n{PROVIDER_TRAILER}: {}",
        task.id,
        one_line(&task.metadata.provider_id)
    )
}

/// The message of the commits that carry `task`'s work (its leftovers committed before a
/// merge or a push, and the merge commit): the subject, a blank line, the result's summary,
/// the checks that passed (`evidence`), and the trailers naming the task and its provider.
pub fn task_commit_message(task: &Task, evidence: &Evidence) -> String {
    let subject = subject(task);
    let mut paragraphs = vec![subject.clone()];
    paragraphs.extend(summary(task, &subject));
    paragraphs.extend(checks_paragraph(evidence));
    paragraphs.push(trailers(task));
    paragraphs.join("\n\n") + "\n"
}

/// The body of `task`'s pull request: the summary, the checks that passed, what changed
/// (`diffstat`, `git diff --stat`), and the task's id.
pub fn pull_request_body(task: &Task, evidence: &Evidence, diffstat: &str) -> String {
    let subject = subject(task);
    let mut paragraphs = Vec::new();
    paragraphs.extend(summary(task, &subject));
    paragraphs.extend(checks_paragraph(evidence));
    let diffstat = diffstat.trim_end();
    if !diffstat.is_empty() {
        paragraphs.push(format!("```\n{diffstat}\n```"));
    }
    paragraphs.push(format!(
        "Made by orchestra ({}): {TASK_TRAILER}: {}",
        one_line(&task.metadata.provider_id),
        task.id
    ));
    paragraphs.join("\n\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use orchestra_proto::task::{NewTask, TaskResult};

    fn task(name: &str, description: &str, summary: Option<&str>) -> Task {
        let mut t = Task::new(
            "t-123".into(),
            NewTask {
                name: name.into(),
                description: description.into(),
                provider_id: "exec".into(),
                working_directory: "/".into(),
                ..Default::default()
            },
            0,
        );
        t.metadata.result = summary.map(|s| TaskResult {
            success: true,
            summary: s.into(),
            ..Default::default()
        });
        t
    }

    #[test]
    fn the_subject_is_the_name_and_the_body_the_summary_and_the_task() {
        let t = task("fix2", "echo fixed", Some("exited with code 0"));
        assert_eq!(
            task_commit_message(&t, &Evidence::default()),
            "fix2\n\nexited with code 0\n\nOrchestra-Task: t-123\nOrchestra-Provider: exec\n"
        );
    }

    #[test]
    fn the_checks_that_passed_come_from_the_result() {
        use orchestra_proto::task::CheckRun;
        let mut t = task("fix2", "", Some("done"));
        let run = |command: &str, exit_code| CheckRun {
            command: command.into(),
            exit_code: Some(exit_code),
            duration_ms: 12_340,
            output_tail: String::new(),
            error: None,
        };
        if let Some(r) = t.metadata.result.as_mut() {
            r.checks = vec![run("cargo test -q", 0), run("make lint", 1)];
        }
        assert_eq!(
            Evidence::of(&t).lines,
            vec!["cargo test -q: exit 0 in 12.3 s".to_string()]
        );
    }

    #[test]
    fn checks_are_listed_before_the_trailers() {
        let t = task("fix2", "", None);
        let evidence = Evidence {
            lines: vec!["cargo test -q: exit 0 in 1.2 s".into(), "  ".into()],
        };
        assert_eq!(
            task_commit_message(&t, &evidence),
            "fix2\n\nChecks passed:\n- cargo test -q: exit 0 in 1.2 s\n\nOrchestra-Task: t-123\nOrchestra-Provider: exec\n"
        );
    }

    #[test]
    fn a_summary_that_repeats_the_name_is_said_once() {
        let t = task("Add the parser", "", Some("  Add the parser\n"));
        assert!(
            task_commit_message(&t, &Evidence::default())
                .starts_with("Add the parser\n\nOrchestra-Task")
        );
    }

    #[test]
    fn without_a_name_the_description_shortened_is_the_subject() {
        let long = "Make the parser accept\ntrailing commas in every list, and say which line is wrong when it does not";
        let t = task("  ", long, None);
        let s = subject(&t);
        assert!(
            s.starts_with("Make the parser accept trailing commas"),
            "{s}"
        );
        assert!(
            s.ends_with('…') && s.chars().count() <= SUBJECT_CHARS,
            "{s}"
        );
        assert_eq!(subject(&task("", "", None)), "orchestra task t-123");
    }

    #[test]
    fn a_pull_request_body_has_the_summary_the_checks_and_the_diffstat() {
        let t = task("fix2", "", Some("fixed the bug"));
        let evidence = Evidence {
            lines: vec!["make test: exit 0".into()],
        };
        let body = pull_request_body(&t, &evidence, " a.txt | 1 +\n 1 file changed\n");
        assert_eq!(
            body,
            "fixed the bug\n\nChecks passed:\n- make test: exit 0\n\n```\n a.txt | 1 +\n 1 file changed\n```\n\nMade by orchestra (exec): Orchestra-Task: t-123\n"
        );
    }
}
