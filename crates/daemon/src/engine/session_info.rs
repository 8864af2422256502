//! The reply text of a send: what a session's screen gained after it. (Sessions and their
//! messages are wire types: `orchestra_proto::wire::{SessionInfo, Message}`.)

/// The text a send produced: the lines that are new on the screen and scrollback since the
/// send, without the echoed input and without the prompt that was already there before.
pub fn reply_text(before: &[String], after: &[String], sent: &str) -> String {
    let common = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let mut new: Vec<&str> = after[common..].iter().map(|s| s.as_str()).collect();
    let sent_lines: Vec<&str> = sent
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    while let Some(first) = new.first() {
        let t = first.trim();
        if t.is_empty() || sent_lines.iter().any(|s| t.contains(s)) {
            new.remove(0);
        } else {
            break;
        }
    }
    while new.last().is_some_and(|l| l.trim().is_empty()) {
        new.pop();
    }
    // The prompt the agent returned to is chrome, not reply.
    let prompt = before
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim());
    if let (Some(p), Some(last)) = (prompt, new.last())
        && last.trim() == p
    {
        new.pop();
    }
    new.join("\n").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn shell_reply_drops_echo_and_prompt() {
        let before = v(&["$ ls", "a b", "$"]);
        let after = v(&["$ ls", "a b", "$ echo hi", "hi", "$"]);
        assert_eq!(reply_text(&before, &after, "echo hi"), "hi");
    }

    #[test]
    fn multi_line_output_kept() {
        let before = v(&["$"]);
        let after = v(&["$ seq 3", "1", "2", "3", "$"]);
        assert_eq!(reply_text(&before, &after, "seq 3"), "1\n2\n3");
    }

    #[test]
    fn nothing_new_is_empty() {
        let before = v(&["$"]);
        assert_eq!(reply_text(&before, &before, "x"), "");
    }
}
