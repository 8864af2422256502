//! Error answers (`{"error": "<sentence>"}`) and reading answers into wire types.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Every error the API answers with: one sentence a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    pub error: String,
}

/// The sentence of an error answer, when the body is orchestra's.
pub fn error_sentence(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|b| b.error)
}

/// What a 401 adds when the client sent no token.
pub const TOKEN_HINT: &str = " (pass --token or set ORCHESTRA_TOKEN)";

/// An answer that is not the wire type expected: names what was expected and why it is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer is not {expected}: {reason}")]
pub struct DecodeError {
    /// What the answer should have been ("a task", "the session list").
    pub expected: String,
    /// serde's account: the field or value that did not fit, with its line and column.
    pub reason: String,
}

/// Reads an answer's body as `T`; `expected` says what it should be, for the error.
pub fn decode<T: DeserializeOwned>(body: &[u8], expected: &str) -> Result<T, DecodeError> {
    serde_json::from_slice(body).map_err(|e| DecodeError {
        expected: expected.to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::TaskBody;

    #[test]
    fn error_answers_read_back() {
        assert_eq!(
            error_sentence(br#"{"error": "no task with id \"x\""}"#).as_deref(),
            Some("no task with id \"x\"")
        );
        assert_eq!(error_sentence(b"<html>"), None);
        assert_eq!(error_sentence(br#"{"error": 3}"#), None);
    }

    #[test]
    fn a_body_that_does_not_fit_names_what_was_expected() {
        let e = decode::<TaskBody>(br#"{"tasks": []}"#, "a task").unwrap_err();
        assert_eq!(e.expected, "a task");
        assert!(e.reason.contains("missing field `task`"), "{e}");
        assert!(
            e.to_string().starts_with("the answer is not a task: "),
            "{e}"
        );
        let e = decode::<TaskBody>(b"not json", "a task").unwrap_err();
        assert!(e.to_string().contains("expected"), "{e}");
    }
}
