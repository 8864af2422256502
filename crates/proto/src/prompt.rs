//! The prompt a blocked agent shows: what it asks and the options that answer it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a prompt asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PromptKind {
    /// To run a tool, a command, or change files.
    Permission,
    /// To trust a folder.
    Trust,
    /// To log in.
    Login,
    /// A choice (a theme, an update, telemetry).
    Choice,
    /// A question to answer in words.
    Question,
}

impl PromptKind {
    pub const ALL: [PromptKind; 5] = [
        PromptKind::Permission,
        PromptKind::Trust,
        PromptKind::Login,
        PromptKind::Choice,
        PromptKind::Question,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PromptKind::Permission => "permission",
            PromptKind::Trust => "trust",
            PromptKind::Login => "login",
            PromptKind::Choice => "choice",
            PromptKind::Question => "question",
        }
    }

    /// Whether orchestra may ever answer it by itself: never a permission or a login.
    pub fn may_be_answered_automatically(self) -> bool {
        matches!(
            self,
            PromptKind::Trust | PromptKind::Choice | PromptKind::Question
        )
    }
}

impl fmt::Display for PromptKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One answer to a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PromptOption {
    /// What `POST …/answer {option}` takes: its digit, or its place for unnumbered choices.
    pub key: String,
    pub label: String,
    /// The keys that choose it (named keys, as `POST …/messages {keys}` takes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// A session's `prompt`: set while it is `blocked`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prompt {
    pub kind: PromptKind,
    /// The question as the screen shows it.
    pub text: String,
    pub options: Vec<PromptOption>,
}

impl Prompt {
    /// The option with this key.
    pub fn option(&self, key: &str) -> Option<&PromptOption> {
        self.options.iter().find(|o| o.key == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn a_prompt_encodes_as_documented() {
        let p = Prompt {
            kind: PromptKind::Trust,
            text: "Do you trust this folder?".into(),
            options: vec![
                PromptOption {
                    key: "1".into(),
                    label: "Yes".into(),
                    keys: Some(vec!["enter".into()]),
                },
                PromptOption {
                    key: "2".into(),
                    label: "No".into(),
                    keys: None,
                },
            ],
        };
        round_trip(
            &p,
            json!({"kind": "trust", "text": "Do you trust this folder?", "options": [
                {"key": "1", "label": "Yes", "keys": ["enter"]},
                {"key": "2", "label": "No"}]}),
        );
        assert_eq!(p.option("2").map(|o| o.label.as_str()), Some("No"));
    }

    #[test]
    fn every_kind_reads_back_and_an_unknown_one_is_named() {
        for k in PromptKind::ALL {
            let v = serde_json::to_value(k).unwrap();
            assert_eq!(v, json!(k.as_str()));
            assert_eq!(serde_json::from_value::<PromptKind>(v).unwrap(), k);
        }
        let e = serde_json::from_value::<PromptKind>(json!("nag")).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("unknown variant `nag`"), "{e}");
        assert!(e.contains("permission") && e.contains("question"), "{e}");
    }
}
