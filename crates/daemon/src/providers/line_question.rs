//! The question a program asks while it waits for a typed line (see
//! `session::line_input`), read from its screen: what it printed before the cursor, or the
//! line above when it asked there and moved on to a new line; and the answers a `[y/N]`,
//! `(yes/no)` or `[a/b/c]` after the question offers.

use super::patterns::{Prompt, PromptKind, PromptOption, SeenPrompt};
use regex::Regex;

/// What a blocked session's prompt is called when it is a line read.
pub const NAME: &str = "a question waiting for a typed line";

/// The prompt a line read shows, from the text of the cursor's line up to the cursor and
/// the line above it (see `session::cursor_lines`). `echo`: the terminal echoes typing (off:
/// a password, a `login` prompt). `None` when nothing on the screen asks: an empty line (a
/// program reading its input, not asking), or a shell's or an interpreter's own input
/// prompt (`$ `, `# `, `>>> `).
pub fn line_question(before_cursor: &str, line_above: &str, echo: bool) -> Option<SeenPrompt> {
    let before_cursor = before_cursor.trim();
    let text = if before_cursor.is_empty() {
        // `echo "Continue?"; read answer`: the question is the line above.
        let above = line_above.trim();
        if !above.ends_with(['?', ':']) {
            return None;
        }
        above
    } else {
        before_cursor
    };
    if text.contains('\n') || text.ends_with(['$', '#', '%', '>']) {
        return None;
    }
    Some(SeenPrompt {
        prompt: Prompt {
            kind: if echo {
                PromptKind::Question
            } else {
                PromptKind::Login
            },
            text: text.to_string(),
            options: choices(text),
        },
        name: NAME.to_string(),
        auto_answer: None,
        limit: None,
    })
}

/// The answers the last `[…/…]` or `(…/…)` in `text` offers: each word typed, then Enter.
/// Its key is the word's first letter when those differ, else its place (`1`, `2`, …).
fn choices(text: &str) -> Vec<PromptOption> {
    static GROUP: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let group = GROUP.get_or_init(|| {
        Regex::new(r"\[([A-Za-z][A-Za-z /\[\]]*/[A-Za-z /\[\]]*)\]|\(([A-Za-z][A-Za-z /\[\]]*/[A-Za-z /\[\]]*)\)")
            .expect("a valid pattern")
    });
    let Some(caps) = group.captures_iter(text).last() else {
        return Vec::new();
    };
    let inside = caps.get(1).or(caps.get(2)).map_or("", |m| m.as_str());
    // Words only: a placeholder such as ssh's `[fingerprint]` is not something to type.
    let words: Vec<&str> = inside
        .split('/')
        .map(str::trim)
        .filter(|w| (1..=12).contains(&w.len()) && w.chars().all(|c| c.is_ascii_alphabetic()))
        .collect();
    if words.len() < 2 {
        return Vec::new();
    }
    let initial = |w: &str| w.chars().next().map(|c| c.to_ascii_lowercase());
    let mut initials: Vec<_> = words.iter().map(|w| initial(w)).collect();
    initials.sort();
    initials.dedup();
    let by_initial = initials.len() == words.len();
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let typed = if w.len() == 1 {
                w.to_ascii_lowercase()
            } else {
                w.to_string()
            };
            let mut keys: Vec<String> = typed.chars().map(String::from).collect();
            keys.push("enter".into());
            PromptOption {
                key: match initial(w) {
                    Some(c) if by_initial => c.to_string(),
                    _ => (i + 1).to_string(),
                },
                label: label(w),
                keys: Some(keys),
            }
        })
        .collect()
}

/// How an answer reads in the prompt's list: `y` and `yes` as "Yes", and so on.
fn label(word: &str) -> String {
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" => "Yes".into(),
        "n" | "no" => "No".into(),
        "a" | "all" => "All".into(),
        "q" | "quit" => "Quit".into(),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(before: &str, above: &str) -> Option<Prompt> {
        line_question(before, above, true).map(|p| p.prompt)
    }

    fn keys(p: &Prompt) -> Vec<(&str, &str, Vec<&str>)> {
        p.options
            .iter()
            .map(|o| {
                (
                    o.key.as_str(),
                    o.label.as_str(),
                    o.keys
                        .iter()
                        .flatten()
                        .map(String::as_str)
                        .collect::<Vec<_>>(),
                )
            })
            .collect()
    }

    #[test]
    fn the_question_before_the_cursor_with_its_answers() {
        let p = ask("Delete the cache? [y/N] ", "$ ./clean.sh").expect("a question");
        assert_eq!(p.kind, PromptKind::Question);
        assert_eq!(p.text, "Delete the cache? [y/N]");
        assert_eq!(
            keys(&p),
            vec![
                ("y", "Yes", vec!["y", "enter"]),
                ("n", "No", vec!["n", "enter"])
            ]
        );
    }

    #[test]
    fn words_are_typed_whole_and_share_no_key() {
        let p = ask("Are you sure (yes/no/[fingerprint])?", "").expect("asks");
        assert_eq!(
            keys(&p),
            vec![
                ("y", "Yes", vec!["y", "e", "s", "enter"]),
                ("n", "No", vec!["n", "o", "enter"])
            ]
        );
        let p = ask("Keep which? [apple/avocado]", "").expect("asks");
        assert_eq!(p.options[0].key, "1");
        assert_eq!(p.options[1].key, "2");
        assert_eq!(p.options[1].label, "avocado");
    }

    #[test]
    fn a_question_without_choices_is_answered_in_words() {
        let p = ask("Name of the branch: ", "").expect("asks");
        assert_eq!(p.text, "Name of the branch:");
        assert!(p.options.is_empty());
        assert!(ask("Press Enter to go on", "").is_some());
    }

    #[test]
    fn a_question_on_the_line_above_an_empty_one() {
        let p = ask("", "Continue?").expect("asks");
        assert_eq!(p.text, "Continue?");
        assert_eq!(ask("", "some output"), None, "no question: just reading");
        assert_eq!(ask("", ""), None);
        assert_eq!(ask("  ", "Name:  ").map(|p| p.text), Some("Name:".into()));
    }

    #[test]
    fn a_shell_or_interpreter_prompt_is_not_a_question() {
        for prompt in ["$ ", "root@vm:/# ", ">>> ", "% "] {
            assert_eq!(ask(prompt, "Continue?"), None, "{prompt:?}");
        }
    }

    #[test]
    fn no_echo_is_a_password() {
        let p = line_question("[sudo] password for ana: ", "", false).expect("asks");
        assert_eq!(p.prompt.kind, PromptKind::Login);
        assert_eq!(p.name, NAME);
        assert_eq!(p.auto_answer, None);
    }
}
