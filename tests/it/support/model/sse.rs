//! Server-sent-event encoders: a [`Reply`] as each API streams it.

use super::conversation::{Conversation, TOOL_SEARCH};
use super::script::{Reply, ToolCall};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

/// One event: its `event:` name (Anthropic and Responses name them) and its data.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: Option<String>,
    pub data: Value,
}

fn named(name: &str, data: Value) -> Event {
    Event {
        name: Some(name.to_string()),
        data,
    }
}

fn unnamed(data: Value) -> Event {
    Event { name: None, data }
}

/// The SSE text of the events; `done` ends it with `data: [DONE]` (Chat Completions).
pub fn render(events: &[Event], done: bool) -> String {
    let mut out = String::new();
    for e in events {
        if let Some(n) = &e.name {
            out.push_str(&format!("event: {n}\n"));
        }
        out.push_str(&format!("data: {}\n\n", e.data));
    }
    if done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

/// The text in two pieces, so clients see more than one delta.
fn halves(t: &str) -> Vec<String> {
    let chars: Vec<char> = t.chars().collect();
    if chars.len() < 2 {
        return vec![t.to_string()];
    }
    let (a, b) = chars.split_at(chars.len() / 2);
    vec![a.iter().collect(), b.iter().collect()]
}

/// A call's id, unique in the server's life: a conversation may call one tool several times
/// (an agent waiting on its children again), and a CLI pairs each result with its call by id.
fn call_id(t: &ToolCall) -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    format!("call_{n}_{}", t.name.to_ascii_lowercase())
}

/// A tool input as a string: a string input as itself, else its JSON.
fn input_string(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

// ---- Anthropic Messages ----

fn anthropic_stop(reply: &Reply) -> &'static str {
    if reply.tool.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn anthropic_blocks(reply: &Reply) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(t) = &reply.text {
        blocks.push(json!({"type": "text", "text": t}));
    }
    if let Some(t) = &reply.tool {
        blocks.push(
            json!({"type": "tool_use", "id": format!("toolu_{}", call_id(t)),
                           "name": t.name, "input": t.input}),
        );
    }
    blocks
}

fn usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 5,
           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

/// A message id of its own for each reply: Claude Code joins the content of assistant
/// messages that share an id into one, so that a reply after a tool result would be put
/// before the call, and a prompt typed after it after every later result.
fn message_id() -> String {
    static MESSAGES: AtomicU64 = AtomicU64::new(0);
    format!("msg_scripted_{}", MESSAGES.fetch_add(1, Ordering::Relaxed))
}

/// The non-streamed message.
pub fn anthropic_message(reply: &Reply, model: &str) -> Value {
    json!({"id": message_id(), "type": "message", "role": "assistant", "model": model,
           "content": anthropic_blocks(reply), "stop_reason": anthropic_stop(reply),
           "stop_sequence": null, "usage": usage()})
}

pub fn anthropic_events(reply: &Reply, model: &str) -> Vec<Event> {
    let mut start = anthropic_message(reply, model);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut ev = vec![named(
        "message_start",
        json!({"type": "message_start", "message": start}),
    )];
    for (index, block) in anthropic_blocks(reply).into_iter().enumerate() {
        let (empty, deltas) = if block["type"] == "text" {
            let t = block["text"].as_str().unwrap_or_default();
            let deltas = halves(t)
                .into_iter()
                .map(|h| json!({"type": "text_delta", "text": h}))
                .collect::<Vec<_>>();
            (json!({"type": "text", "text": ""}), deltas)
        } else {
            let mut e = block.clone();
            e["input"] = json!({});
            let deltas = halves(&block["input"].to_string())
                .into_iter()
                .map(|h| json!({"type": "input_json_delta", "partial_json": h}))
                .collect();
            (e, deltas)
        };
        ev.push(named(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": empty}),
        ));
        for d in deltas {
            ev.push(named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        ev.push(named(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    ev.push(named(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": anthropic_stop(reply), "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
    ));
    ev.push(named("message_stop", json!({"type": "message_stop"})));
    ev
}

// ---- OpenAI Responses ----

fn responses_items(reply: &Reply, c: &Conversation) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(t) = &reply.text {
        items.push(
            json!({"type": "message", "id": "msg_scripted", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": t, "annotations": []}]}),
        );
    }
    if let Some(t) = &reply.tool {
        let custom = c.tool(&t.name).is_some_and(|x| x.custom);
        items.push(if t.name == TOOL_SEARCH {
            json!({"type": "tool_search_call", "id": "tsc_scripted", "call_id": call_id(t),
                   "execution": "client", "arguments": t.input, "status": "completed"})
        } else if custom {
            json!({"type": "custom_tool_call", "id": "ctc_scripted", "call_id": call_id(t),
                   "name": t.name, "input": input_string(&t.input), "status": "completed"})
        } else if let Some(ns) = c.tool(&t.name).and_then(|x| x.namespace.as_deref()) {
            // A namespaced tool is called by its namespace and its own name.
            let name = t.name.strip_prefix(&format!("{ns}__")).unwrap_or(&t.name);
            json!({"type": "function_call", "id": "fc_scripted", "call_id": call_id(t),
                   "namespace": ns, "name": name, "arguments": t.input.to_string(),
                   "status": "completed"})
        } else {
            json!({"type": "function_call", "id": "fc_scripted", "call_id": call_id(t),
                   "name": t.name, "arguments": t.input.to_string(), "status": "completed"})
        });
    }
    items
}

pub fn responses_events(reply: &Reply, c: &Conversation, model: &str) -> Vec<Event> {
    let items = responses_items(reply, c);
    let response = |status: &str, output: Vec<Value>| {
        json!({"id": "resp_scripted", "object": "response", "model": model, "status": status,
               "output": output,
               "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                         "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens_details": {"reasoning_tokens": 0}}})
    };
    let mut ev = vec![named(
        "response.created",
        json!({"type": "response.created", "response": response("in_progress", vec![])}),
    )];
    for (i, item) in items.iter().enumerate() {
        let mut added = item.clone();
        if item["type"] == "message" {
            added["content"] = json!([]);
            added["status"] = json!("in_progress");
        }
        ev.push(named(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i, "item": added}),
        ));
        if item["type"] == "message" {
            let t = item["content"][0]["text"].as_str().unwrap_or_default();
            for h in halves(t) {
                ev.push(named(
                    "response.output_text.delta",
                    json!({"type": "response.output_text.delta", "item_id": item["id"],
                           "output_index": i, "content_index": 0, "delta": h}),
                ));
            }
        }
        ev.push(named(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": i, "item": item}),
        ));
    }
    ev.push(named(
        "response.completed",
        json!({"type": "response.completed", "response": response("completed", items)}),
    ));
    ev
}

// ---- OpenAI Chat Completions ----

pub fn chat_events(reply: &Reply, model: &str) -> Vec<Event> {
    let chunk = |delta: Value, finish: Value| {
        unnamed(
            json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
            "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut ev = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(t) = &reply.text {
        for h in halves(t) {
            ev.push(chunk(json!({"content": h}), Value::Null));
        }
    }
    if let Some(t) = &reply.tool {
        ev.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": call_id(t), "type": "function",
                                   "function": {"name": t.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for h in halves(&t.input.to_string()) {
            ev.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": h}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if reply.tool.is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    ev.push(chunk(json!({}), json!(finish)));
    ev.push(unnamed(
        json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
        "created": 0, "model": model, "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    ));
    ev
}

// ---- Gemini ----

fn gemini_parts(reply: &Reply) -> Vec<Value> {
    let mut parts = Vec::new();
    if let Some(t) = &reply.text {
        parts.push(json!({"text": t}));
    }
    if let Some(t) = &reply.tool {
        parts.push(json!({"functionCall": {"name": t.name, "args": t.input}}));
    }
    parts
}

fn gemini_chunk(parts: Vec<Value>, finish: Option<&str>) -> Value {
    let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    json!({"candidates": [cand],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                             "totalTokenCount": 15},
           "modelVersion": "scripted"})
}

/// The non-streamed `generateContent` answer.
pub fn gemini_response(reply: &Reply) -> Value {
    gemini_chunk(gemini_parts(reply), Some("STOP"))
}

pub fn gemini_events(reply: &Reply) -> Vec<Event> {
    let mut pieces: Vec<Value> = reply
        .text
        .as_deref()
        .map(halves)
        .unwrap_or_default()
        .into_iter()
        .map(|h| json!({"text": h}))
        .collect();
    if let Some(t) = &reply.tool {
        pieces.push(json!({"functionCall": {"name": t.name, "args": t.input}}));
    }
    if pieces.is_empty() {
        pieces.push(json!({"text": ""}));
    }
    let last = pieces.len() - 1;
    pieces
        .into_iter()
        .enumerate()
        .map(|(i, p)| unnamed(gemini_chunk(vec![p], (i == last).then_some("STOP"))))
        .collect()
}
