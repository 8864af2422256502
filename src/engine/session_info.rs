//! What the engine records about a session and its messages (the API's JSON shapes).

use super::status::SessionStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: String,
    pub provider_id: String,
    pub task: String,
    pub working_directory: String,
    pub pid: u32,
    pub status: SessionStatus,
    pub ended: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub cols: u16,
    pub rows: u16,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub approval: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Value>,
    /// The raw transcript file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Agent,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub text: String,
    pub at: i64,
    /// Named keys, for a send of `{keys: [...]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// Set on sends orchestra made by itself (an automatic answer), saying what it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<String>,
}

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
