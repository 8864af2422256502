//! The results of the tool calls in a conversation, read from each API's own shape, so that a
//! script can use what an earlier call returned: an agent that delegates calls `create_task`,
//! and its next calls name the task by the id that call's result gave (`{result:/id}`,
//! `{task:NAME/id}`), as a model would.
//!
//! A result is kept as JSON when its text is JSON (an MCP tool answers JSON text; a CLI may
//! pass on the whole MCP `CallToolResult` instead, which is unwrapped), else as a JSON string.

use serde_json::Value;

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The text of a result's content: a string, or its text parts joined.
fn text_of(content: &Value) -> String {
    if let Some(s) = content.as_str() {
        return s.to_string();
    }
    arr(content)
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A result's text as the JSON it holds. An MCP `CallToolResult` (`content`, maybe
/// `structuredContent`) is unwrapped to what the tool said; text around one JSON object
/// (a CLI's note before it) is dropped; anything else stays a string.
pub fn value_of(text: &str) -> Value {
    let parsed = serde_json::from_str::<Value>(text.trim()).ok().or_else(|| {
        let (start, end) = (text.find('{')?, text.rfind('}')?);
        serde_json::from_str(text.get(start..=end)?).ok()
    });
    match parsed {
        Some(v) if v["structuredContent"].is_object() => v["structuredContent"].clone(),
        Some(v) if v["content"].is_array() && v.get("name").is_none() => {
            value_of(&text_of(&v["content"]))
        }
        Some(v) => v,
        None => Value::String(text.to_string()),
    }
}

/// Anthropic Messages: each `tool_result` part of the messages, in order.
pub fn anthropic(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|m| arr(&m["content"]))
        .filter(|p| p["type"] == "tool_result")
        .map(|p| value_of(&text_of(&p["content"])))
        .collect()
}

/// OpenAI Responses: each `*_call_output` item (a function's or a custom tool's; not the
/// tool search's, which lists tools), in order.
pub fn responses(input: &[Value]) -> Vec<Value> {
    input
        .iter()
        .filter(|m| {
            m["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("_call_output"))
        })
        .map(|m| value_of(&text_of(&m["output"])))
        .collect()
}

/// Chat Completions: each `tool` message, in order.
pub fn chat(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| value_of(&text_of(&m["content"])))
        .collect()
}

/// Gemini: each `functionResponse`'s response, in order (its `output` when it wraps one).
pub fn gemini(contents: &[Value]) -> Vec<Value> {
    contents
        .iter()
        .flat_map(|c| arr(&c["parts"]))
        .filter(|p| p["functionResponse"].is_object())
        .map(|p| {
            let r = &p["functionResponse"]["response"];
            match r["output"].as_str() {
                Some(text) => value_of(text),
                None => r.clone(),
            }
        })
        .collect()
}

/// What a placeholder stands for, from the conversation's results (`results`, in order):
/// - `{result:POINTER}`: the JSON pointer into the last result (`{result:/id}`);
/// - `{task:NAME/POINTER}`: into the newest object named NAME (`"name": NAME`) anywhere in the
///   results, newest result first, where the pointer leads somewhere (`{task:hello/id}`).
///
/// A string stands for itself, anything else for its JSON; `None` when nothing matches.
pub fn resolve(placeholder: &str, results: &[Value]) -> Option<String> {
    let found = if let Some(pointer) = placeholder.strip_prefix("result:") {
        results.last()?.pointer(pointer).cloned()
    } else {
        let (name, pointer) = placeholder.strip_prefix("task:")?.split_once('/')?;
        let pointer = format!("/{pointer}");
        results.iter().rev().find_map(|r| named(r, name, &pointer))
    }?;
    Some(
        found
            .as_str()
            .map_or_else(|| found.to_string(), str::to_string),
    )
}

/// The value at `pointer` in the first object within `v` named `name` that has it.
fn named(v: &Value, name: &str, pointer: &str) -> Option<Value> {
    let here = (v["name"] == name)
        .then(|| v.pointer(pointer))
        .flatten()
        .filter(|x| !x.is_null());
    if let Some(x) = here {
        return Some(x.clone());
    }
    match v {
        Value::Object(o) => o.values().find_map(|x| named(x, name, pointer)),
        Value::Array(a) => a.iter().find_map(|x| named(x, name, pointer)),
        _ => None,
    }
}

/// `text` with each `{result:…}` and `{task:…}` placeholder filled in from `results`; one
/// that resolves to nothing is left as it is, so the failure shows what was not found.
pub fn fill(text: &str, results: &[Value]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let inner = from[1..].split_once('}').map(|(inner, _)| inner);
        let value = inner
            .filter(|i| i.starts_with("result:") || i.starts_with("task:"))
            .and_then(|i| resolve(i, results));
        match (inner, value) {
            (Some(inner), Some(v)) => {
                out.push_str(&v);
                rest = &from[inner.len() + 2..];
            }
            _ => {
                out.push('{');
                rest = &from[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What orchestra's MCP server answers create_task with, as its text content.
    fn created() -> String {
        json!({"id": "t-1", "name": "hello", "status": "running"}).to_string()
    }

    #[test]
    fn anthropic_tool_results_as_text_parts_or_a_string() {
        let messages = [
            json!({"role": "user", "content": "delegate"}),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x"}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                   "content": [{"type": "text", "text": created()}]}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b",
                   "content": "plain words"}]}),
        ];
        let r = anthropic(&messages);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["id"], "t-1");
        assert_eq!(r[1], "plain words");
    }

    #[test]
    fn responses_function_outputs_and_a_wrapped_call_tool_result() {
        let wrapped = json!({"content": [{"type": "text", "text": created()}],
                             "isError": false})
        .to_string();
        let structured = json!({"content": [{"type": "text", "text": "{}"}],
                                "structuredContent": {"id": "t-2", "name": "exec"}})
        .to_string();
        let input = [
            json!({"role": "user", "content": [{"type": "input_text", "text": "go"}]}),
            json!({"type": "tool_search_output", "call_id": "s", "tools": []}),
            json!({"type": "function_call_output", "call_id": "a", "output": created()}),
            json!({"type": "function_call_output", "call_id": "b", "output": wrapped}),
            json!({"type": "function_call_output", "call_id": "c", "output": structured}),
            json!({"type": "custom_tool_call_output", "call_id": "d",
                   "output": [{"type": "input_text", "text": "Done"}]}),
        ];
        let r = responses(&input);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!(r[0]["id"], "t-1");
        assert_eq!(r[1]["id"], "t-1");
        assert_eq!(r[2]["id"], "t-2");
        assert_eq!(r[3], "Done");
    }

    #[test]
    fn chat_and_gemini_results() {
        let r = chat(&[
            json!({"role": "user", "content": "go"}),
            json!({"role": "tool", "tool_call_id": "a", "content": created()}),
        ]);
        assert_eq!(r[0]["name"], "hello");
        let r = gemini(&[json!({"role": "user", "parts": [
            {"functionResponse": {"name": "x", "response": {"output": created()}}},
            {"functionResponse": {"name": "y", "response": {"id": "t-3"}}}]})]);
        assert_eq!(r[0]["id"], "t-1");
        assert_eq!(r[1]["id"], "t-3");
    }

    #[test]
    fn a_note_before_the_json_is_dropped() {
        assert_eq!(value_of("Result:\n{\"id\": \"t-4\"}\n")["id"], "t-4");
        assert_eq!(value_of("no json here"), "no json here");
    }

    #[test]
    fn placeholders_take_the_last_result_or_a_named_task() {
        let results = [
            json!({"id": "t-1", "name": "hello", "status": "running"}),
            json!({"arrived": {"id": "t-1", "name": "hello",
                               "result": {"summary": "Created hello.txt."}},
                   "others": [{"id": "t-2", "name": "echo"}], "timedOut": false}),
        ];
        assert_eq!(
            fill("{result:/arrived/id} {result:/timedOut}", &results),
            "t-1 false"
        );
        assert_eq!(
            fill("It said: {task:hello/result/summary}", &results),
            "It said: Created hello.txt."
        );
        assert_eq!(fill("{task:echo/id}", &results), "t-2");
        // Not found, or not a placeholder: left as it is.
        assert_eq!(
            fill("{task:none/id} {cwd} {", &results),
            "{task:none/id} {cwd} {"
        );
        assert_eq!(fill("{result:/id}", &[]), "{result:/id}");
    }
}
