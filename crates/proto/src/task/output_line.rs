//! One line of a task's output, kept with its JSON text.
//!
//! A busy agent's task holds up to [`crate::task::OUTPUT_LINES_KEPT`] lines and changes a few
//! times a second; every new version of it is encoded again for the task list, its events and
//! the store. Escaping the same old lines again and again was the daemon's largest cost with 50
//! busy agents read through the API. A line is escaped once, when it is made, and every
//! encoding after that copies the escaped text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A line of output: its text, and its JSON string literal made once. Cheap to clone (shared):
/// each version of a task copies all its lines.
#[derive(Clone)]
pub struct OutputLine(Arc<Repr>);

struct Repr {
    /// The line as a JSON string literal, quotes included.
    json: Box<RawValue>,
    /// The text, kept apart only when escaping changed it; otherwise it is the literal
    /// without its quotes, and the line is stored once.
    escaped_differs: Option<Box<str>>,
}

impl OutputLine {
    pub fn new(text: &str) -> OutputLine {
        let json = match serde_json::value::to_raw_value(text) {
            Ok(json) => json,
            // Encoding a `str` cannot fail; should it ever, the line still reads as its text
            // (and is written as `null`) rather than panicking.
            Err(_) => RawValue::NULL.to_owned(),
        };
        let literal = json.get();
        let plain =
            literal.len() == text.len() + 2 && literal.get(1..literal.len() - 1) == Some(text);
        OutputLine(Arc::new(Repr {
            escaped_differs: (!plain).then(|| text.into()),
            json,
        }))
    }

    /// The line as a JSON string literal, quotes included.
    pub fn json(&self) -> &str {
        self.0.json.get()
    }

    pub fn as_str(&self) -> &str {
        match &self.0.escaped_differs {
            Some(text) => text,
            None => {
                let literal = self.0.json.get();
                literal.get(1..literal.len() - 1).unwrap_or_default()
            }
        }
    }
}

impl Deref for OutputLine {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for OutputLine {
    fn from(text: &str) -> OutputLine {
        OutputLine::new(text)
    }
}

impl From<String> for OutputLine {
    fn from(text: String) -> OutputLine {
        OutputLine::new(&text)
    }
}

impl PartialEq for OutputLine {
    fn eq(&self, other: &OutputLine) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Eq for OutputLine {}

impl PartialEq<str> for OutputLine {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for OutputLine {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for OutputLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for OutputLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for OutputLine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // `serde_json` writes a raw value as it is; other serializers see a string.
        self.0.json.serialize(s)
    }
}

impl<'de> Deserialize<'de> for OutputLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OutputLine, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(OutputLine::new(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_its_text_and_encodes_as_serde_json_would() {
        for text in [
            "",
            "plain",
            "quote \" and backslash \\",
            "tab\tand\u{1b}[0m escape",
            "⠋ Working… (12s · ↑ 4.4k tokens)",
            "\u{7f}\u{0}",
        ] {
            let line = OutputLine::new(text);
            assert_eq!(&*line, text);
            assert_eq!(line, text);
            let json = serde_json::to_string(&line).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            let back: OutputLine = serde_json::from_str(&json).unwrap();
            assert_eq!(back, line);
            // Through a `Value`, as other readers see it: a string.
            assert_eq!(
                serde_json::to_value(&line).unwrap(),
                serde_json::json!(text)
            );
        }
    }

    #[test]
    fn lines_in_a_list_encode_as_strings() {
        let lines: Vec<OutputLine> = ["a", "b\"c"].into_iter().map(OutputLine::from).collect();
        assert_eq!(serde_json::to_string(&lines).unwrap(), r#"["a","b\"c"]"#);
        let pretty = serde_json::to_string_pretty(&lines).unwrap();
        let back: Vec<String> = serde_json::from_str(&pretty).unwrap();
        assert_eq!(back, ["a", "b\"c"]);
    }
}
