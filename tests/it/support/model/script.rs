//! A test's script: the turns the model answers, each matched on what the CLI sent.

use super::conversation::Conversation;
use super::results;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// A tool call the model makes; `{cwd}` in any string of `input` is the working directory,
/// and `{result:…}`, `{task:…}` what earlier tool results said (see `results::resolve`).
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub name: String,
    /// JSON arguments; for a freeform (custom) tool, a string that is its whole input.
    pub input: Value,
}

/// The provider refuses the request: the account's usage limit or quota is spent. Each API
/// answers it with its own error (see `limits.rs`), naming when it resets where the
/// provider's API does.
///
/// Like a provider's, it lasts from the first refusal until it resets: until then every
/// request its turn matches is refused (the CLI's own retries included), after it the turn
/// no longer applies and the turns after it answer.
#[derive(Debug, Clone)]
pub struct Limit {
    /// Seconds from the first refusal until the limit resets.
    pub resets_in: u64,
    /// When it resets (epoch seconds), from the first refusal on; shared by the clones.
    resets_at: Arc<Mutex<Option<u64>>>,
}

impl Limit {
    /// When the limit resets (epoch seconds): the first call starts it.
    pub fn resets_at(&self) -> u64 {
        *self
            .resets_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| now_secs() + self.resets_in)
    }

    /// Whether it has reset (it never started: not yet).
    fn is_over(&self) -> bool {
        self.resets_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| now_secs() >= at)
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// What the model answers on a turn: text, a tool call, or both (text first); or, with
/// `limit`, the provider's usage-limit error instead of an answer.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub text: Option<String>,
    pub tool: Option<ToolCall>,
    pub limit: Option<Limit>,
}

impl Reply {
    pub fn text(t: &str) -> Reply {
        Reply {
            text: Some(t.to_string()),
            ..Reply::default()
        }
    }

    pub fn tool(name: &str, input: Value) -> Reply {
        Reply {
            tool: Some(ToolCall {
                name: name.to_string(),
                input,
            }),
            ..Reply::default()
        }
    }

    /// The provider's usage-limit error, resetting `resets_in` seconds after it is given.
    pub fn limit(resets_in: u64) -> Reply {
        Reply {
            limit: Some(Limit {
                resets_in,
                resets_at: Arc::default(),
            }),
            ..Reply::default()
        }
    }
}

/// One turn: when it applies, and the reply.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The latest user prompt contains this.
    pub prompt_contains: Option<String>,
    /// The last message is a tool result (`true`) or a user prompt (`false`).
    pub after_tool_result: bool,
    /// The CLI offers this tool (e.g. `Write`): tells the main conversation from side requests.
    pub offers: Option<String>,
    /// The last message is the result of a call of this tool.
    pub result_of: Option<String>,
    /// The last tool result has these values at these JSON pointers.
    pub result_at: Vec<(String, Value)>,
    pub reply: Reply,
}

impl Turn {
    /// On a prompt containing `text` (not a tool result), reply.
    pub fn on_prompt(text: &str, reply: Reply) -> Turn {
        Turn {
            prompt_contains: Some(text.to_string()),
            reply,
            ..Turn::default()
        }
    }

    /// On a tool result in the conversation whose prompt contains `text`, reply.
    pub fn on_tool_result(text: &str, reply: Reply) -> Turn {
        Turn {
            prompt_contains: Some(text.to_string()),
            after_tool_result: true,
            reply,
            ..Turn::default()
        }
    }

    /// Only when the CLI offers this tool.
    pub fn offering(mut self, tool: &str) -> Turn {
        self.offers = Some(tool.to_string());
        self
    }

    /// Only on the result of a call of `tool` (for a turn made with `on_tool_result`).
    pub fn after(mut self, tool: &str) -> Turn {
        self.result_of = Some(tool.to_string());
        self
    }

    /// Only when the last tool result (as JSON) has `value` at `pointer`: tells apart the
    /// results of calls of one tool (which task a create_task made, whether a wait timed out).
    pub fn result_at(mut self, pointer: &str, value: Value) -> Turn {
        self.result_at.push((pointer.to_string(), value));
        self
    }

    fn matches(&self, c: &Conversation) -> bool {
        self.reply.limit.as_ref().is_none_or(|l| !l.is_over())
            && self.after_tool_result == c.tool_result
            && self
                .prompt_contains
                .as_ref()
                .is_none_or(|t| c.prompt.contains(t.as_str()))
            && self.offers.as_ref().is_none_or(|t| c.offers(t))
            && self
                .result_of
                .as_ref()
                .is_none_or(|t| c.result_of.as_deref() == Some(t.as_str()))
            && self.result_at.iter().all(|(pointer, value)| {
                c.tool_result
                    && c.results
                        .last()
                        .and_then(|r| r.pointer(pointer))
                        .is_some_and(|v| v == value)
            })
    }
}

/// The turns in order (the first that matches answers) and a plain-text fallback.
#[derive(Debug, Clone)]
pub struct Script {
    pub turns: Vec<Turn>,
    pub fallback: String,
    /// What `{cwd}` stands for.
    pub cwd: String,
}

impl Script {
    pub fn new(cwd: &Path) -> Script {
        Script {
            turns: Vec::new(),
            fallback: "OK.".to_string(),
            cwd: cwd.to_string_lossy().into_owned(),
        }
    }

    pub fn turn(mut self, t: Turn) -> Script {
        self.turns.push(t);
        self
    }

    pub fn fallback(mut self, text: &str) -> Script {
        self.fallback = text.to_string();
        self
    }

    /// The reply to a conversation, `{cwd}` and the earlier results' placeholders filled in.
    pub fn reply_to(&self, c: &Conversation) -> Reply {
        let reply = self
            .turns
            .iter()
            .find(|t| t.matches(c))
            .map(|t| t.reply.clone())
            .unwrap_or_else(|| Reply::text(&self.fallback));
        Reply {
            limit: reply.limit,
            text: reply
                .text
                .map(|t| results::fill(&t.replace("{cwd}", &self.cwd), &c.results)),
            tool: reply.tool.map(|t| ToolCall {
                name: t.name,
                input: fill(&t.input, &self.cwd, &c.results),
            }),
        }
    }
}

fn fill(v: &Value, cwd: &str, earlier: &[Value]) -> Value {
    match v {
        Value::String(s) => Value::String(results::fill(&s.replace("{cwd}", cwd), earlier)),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, cwd, earlier)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), fill(x, cwd, earlier)))
                .collect(),
        ),
        other => other.clone(),
    }
}
