//! What a CLI sent, in one shape for every API: the latest user prompt, whether the last
//! message is a tool result, the tools it offers, and the JSON schema it wants the answer in.

use super::results;
use serde_json::Value;

/// The API a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Responses,
    Chat,
    Gemini,
}

/// The tool Codex CLI searches its deferred tools with (an MCP server's): a Responses tool
/// of that type, called with a `tool_search_call` item.
pub const TOOL_SEARCH: &str = "tool_search";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// Its whole name; a tool in a namespace (Codex's MCP tools) is `<namespace>__<name>`.
    pub name: String,
    /// A freeform (custom) tool whose input is plain text, not JSON arguments.
    pub custom: bool,
    /// The namespace it is called in (its call names the namespace and the inner name).
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The text of the latest user message that holds text (tool results are not prompts).
    pub prompt: String,
    /// The last message is the result of a tool call.
    pub tool_result: bool,
    pub tools: Vec<Tool>,
    /// A JSON schema the answer must follow (structured output), if asked for.
    pub schema: Option<Value>,
    /// The tool whose result is the last message (when it is one, and the call is found).
    pub result_of: Option<String>,
    /// Every tool result so far, in order, as JSON where it is JSON (see `results.rs`).
    pub results: Vec<Value>,
}

impl Conversation {
    pub fn read(api: Api, body: &Value) -> Conversation {
        match api {
            Api::Anthropic => anthropic(body),
            Api::Responses => responses(body),
            Api::Chat => chat(body),
            Api::Gemini => gemini(body),
        }
    }

    pub fn offers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t.name == tool)
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Text of a message's content: a string, or the `text` of its parts of the given types.
fn content_text(content: &Value, text_types: &[&str]) -> String {
    if let Some(s) = content.as_str() {
        return s.to_string();
    }
    arr(content)
        .iter()
        .filter(|p| text_types.contains(&str_of(&p["type"])))
        .map(|p| str_of(&p["text"]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A user message's own text: claude adds `<system-reminder>` notes, which are not prompts,
/// and "Tool loaded." beside the result of its tool search (2.1.332).
fn anthropic_user_text(m: &Value) -> String {
    if let Some(s) = m["content"].as_str() {
        return s.to_string();
    }
    let with_result = arr(&m["content"])
        .iter()
        .any(|p| p["type"] == "tool_result");
    arr(&m["content"])
        .iter()
        .filter(|p| p["type"] == "text")
        .map(|p| str_of(&p["text"]))
        .filter(|t| !t.trim_start().starts_with("<system-reminder>"))
        .filter(|t| !(with_result && t.trim() == "Tool loaded."))
        .collect::<Vec<_>>()
        .join("\n")
}

fn anthropic(body: &Value) -> Conversation {
    // Claude Code 2.1.332 puts notes of its own between the turns as `system` messages (the
    // tools an MCP server made available): they are neither prompts nor results.
    let messages: Vec<Value> = arr(&body["messages"])
        .iter()
        .filter(|m| m["role"] != "system")
        .cloned()
        .collect();
    // Claude puts a prompt typed after a tool call into the message with the tool result:
    // that message is a new prompt.
    let is_result = |m: &Value| {
        arr(&m["content"])
            .iter()
            .any(|p| p["type"] == "tool_result")
            && anthropic_user_text(m).trim().is_empty()
    };
    let prompt = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(anthropic_user_text)
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default();
    // The call the last result answers (claude may put several results in one message):
    // its `tool_use_id` among the calls the model made.
    let result_of = messages.last().and_then(|m| {
        let id = arr(&m["content"])
            .iter()
            .rfind(|p| p["type"] == "tool_result")?["tool_use_id"]
            .as_str()?;
        messages
            .iter()
            .flat_map(|m| arr(&m["content"]))
            .find(|p| p["type"] == "tool_use" && p["id"] == id)
            .and_then(|p| p["name"].as_str())
            .map(str::to_string)
    });
    Conversation {
        results: results::anthropic(&messages),
        result_of,
        prompt,
        tool_result: messages.last().is_some_and(is_result),
        tools: arr(&body["tools"])
            .iter()
            .filter_map(|t| t["name"].as_str())
            .map(|n| Tool {
                name: n.to_string(),
                custom: false,
                namespace: None,
            })
            .collect(),
        schema: body["output_format"]["schema"]
            .is_object()
            .then(|| body["output_format"]["schema"].clone()),
    }
}

fn responses(body: &Value) -> Conversation {
    let input = arr(&body["input"]);
    let prompt = if let Some(s) = body["input"].as_str() {
        s.to_string()
    } else {
        input
            .iter()
            .rev()
            .filter(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"], &["input_text"]))
            .find(|t| !t.trim().is_empty())
            .unwrap_or_default()
    };
    let last_type = input.last().map(|m| str_of(&m["type"])).unwrap_or_default();
    let result_of = input.last().and_then(|last| {
        let id = last["call_id"].as_str()?;
        let call = input.iter().find(|m| {
            m["call_id"] == id && m["type"].as_str().is_some_and(|t| t.ends_with("_call"))
        })?;
        match (call["type"].as_str(), call["namespace"].as_str()) {
            (Some("tool_search_call"), _) => Some(TOOL_SEARCH.to_string()),
            (_, Some(ns)) => Some(format!("{ns}__{}", call["name"].as_str()?)),
            _ => call["name"].as_str().map(str::to_string),
        }
    });
    Conversation {
        results: results::responses(input),
        result_of,
        prompt,
        tool_result: last_type.ends_with("_output"),
        tools: arr(&body["tools"])
            .iter()
            .filter_map(|t| {
                // Codex's search of its deferred tools (MCP servers') is named by its type.
                let name = match t["type"].as_str() {
                    Some(TOOL_SEARCH) => TOOL_SEARCH,
                    _ => t["name"].as_str()?,
                };
                Some(Tool {
                    name: name.to_string(),
                    custom: t["type"] == "custom",
                    namespace: None,
                })
            })
            .chain(searched_tools(input))
            .collect(),
        schema: body["text"]["format"]["schema"]
            .is_object()
            .then(|| body["text"]["format"]["schema"].clone()),
    }
}

/// The tools Codex's tool searches made available (`tool_search_output` items): a
/// namespace's tools, each offered as `<namespace>__<name>`.
fn searched_tools(input: &[Value]) -> impl Iterator<Item = Tool> + '_ {
    input
        .iter()
        .filter(|m| m["type"] == "tool_search_output")
        .flat_map(|m| arr(&m["tools"]))
        .filter(|t| t["type"] == "namespace")
        .flat_map(|ns| {
            let space = str_of(&ns["name"]).to_string();
            arr(&ns["tools"]).iter().filter_map(move |t| {
                Some(Tool {
                    name: format!("{space}__{}", t["name"].as_str()?),
                    custom: false,
                    namespace: Some(space.clone()),
                })
            })
        })
}

fn chat(body: &Value) -> Conversation {
    let messages = arr(&body["messages"]);
    let prompt = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(|m| content_text(&m["content"], &["text"]))
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default();
    let result_of = messages.last().and_then(|last| {
        let id = last["tool_call_id"].as_str()?;
        messages
            .iter()
            .flat_map(|m| arr(&m["tool_calls"]))
            .find(|c| c["id"] == id)
            .and_then(|c| c["function"]["name"].as_str())
            .map(str::to_string)
    });
    Conversation {
        results: results::chat(messages),
        result_of,
        prompt,
        tool_result: messages.last().is_some_and(|m| m["role"] == "tool"),
        tools: arr(&body["tools"])
            .iter()
            .filter_map(|t| {
                Some(Tool {
                    name: t["function"]["name"].as_str()?.to_string(),
                    custom: false,
                    namespace: None,
                })
            })
            .collect(),
        schema: body["response_format"]["json_schema"]["schema"]
            .is_object()
            .then(|| body["response_format"]["json_schema"]["schema"].clone()),
    }
}

fn gemini(body: &Value) -> Conversation {
    let contents = arr(&body["contents"]);
    let text_of = |c: &Value| {
        arr(&c["parts"])
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let prompt = contents
        .iter()
        .rev()
        .filter(|c| c["role"] == "user")
        .map(text_of)
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default();
    let config = &body["generationConfig"];
    let schema = ["responseJsonSchema", "responseSchema"]
        .iter()
        .map(|k| &config[*k])
        .find(|s| s.is_object())
        .cloned();
    let result_of = contents.last().and_then(|c| {
        arr(&c["parts"])
            .iter()
            .find_map(|p| p["functionResponse"]["name"].as_str())
            .map(str::to_string)
    });
    Conversation {
        results: results::gemini(contents),
        result_of,
        prompt,
        tool_result: contents.last().is_some_and(|c| {
            arr(&c["parts"])
                .iter()
                .any(|p| p["functionResponse"].is_object())
        }),
        tools: arr(&body["tools"])
            .iter()
            .flat_map(|t| arr(&t["functionDeclarations"]))
            .filter_map(|f| {
                Some(Tool {
                    name: f["name"].as_str()?.to_string(),
                    custom: false,
                    namespace: None,
                })
            })
            .collect(),
        schema,
    }
}
