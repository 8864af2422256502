//! Which API a request is for, and the answer to it.

use super::conversation::{Api, Conversation};
use super::limits::{self, Refusal};
use super::schema::value_for;
use super::script::{Reply, Script};
use super::sse;
use serde_json::{Value, json};

pub enum Answer {
    Json(Value),
    /// A whole event stream (the CLIs read it as it comes; all at once is fine for them).
    Sse(String),
    /// The provider refuses the request (a spent usage limit).
    Refused(Refusal),
}

/// The model the CLI asked for, else a name for the answer.
fn model_of(body: &Value) -> String {
    body["model"]
        .as_str()
        .unwrap_or("scripted-model")
        .to_string()
}

/// The scripted reply; a request for structured output is answered with JSON of its schema.
fn reply(script: &Script, c: &Conversation) -> Reply {
    match &c.schema {
        Some(s) => Reply::text(&value_for(s).to_string()),
        None => script.reply_to(c),
    }
}

fn model_list() -> Value {
    let models = ["claude-sonnet-4-5", "gpt-5.5", "gpt-4o", "gemini-2.5-pro"];
    json!({
        "object": "list",
        "data": models.iter().map(|m| json!({"id": m, "object": "model", "type": "model",
            "display_name": m, "created": 0, "owned_by": "scripted"})).collect::<Vec<_>>(),
        "has_more": false,
        "models": models.iter().map(|m| json!({"name": format!("models/{m}"),
            "displayName": m, "supportedGenerationMethods": ["generateContent"]}))
            .collect::<Vec<_>>(),
    })
}

pub fn answer(script: &Script, method: &str, path: &str, body: &Value) -> Option<Answer> {
    if method == "GET" {
        return (path.ends_with("/models") || path.ends_with("/models/"))
            .then(|| Answer::Json(model_list()));
    }
    if method != "POST" {
        return None;
    }
    if path.ends_with("/messages/count_tokens") {
        return Some(Answer::Json(json!({"input_tokens": 10})));
    }
    if path.ends_with(":countTokens") {
        return Some(Answer::Json(json!({"totalTokens": 10})));
    }
    let model = model_of(body);
    if path.ends_with("/messages") {
        let c = Conversation::read(Api::Anthropic, body);
        let r = reply(script, &c);
        if let Some(l) = &r.limit {
            return Some(Answer::Refused(limits::anthropic(l)));
        }
        return Some(if body["stream"] == true {
            Answer::Sse(sse::render(&sse::anthropic_events(&r, &model), false))
        } else {
            Answer::Json(sse::anthropic_message(&r, &model))
        });
    }
    if path.ends_with("/responses") {
        let c = Conversation::read(Api::Responses, body);
        let r = reply(script, &c);
        if let Some(l) = &r.limit {
            return Some(Answer::Refused(limits::responses(l)));
        }
        return Some(Answer::Sse(sse::render(
            &sse::responses_events(&r, &c, &model),
            false,
        )));
    }
    if path.ends_with("/chat/completions") {
        let c = Conversation::read(Api::Chat, body);
        let r = reply(script, &c);
        if let Some(l) = &r.limit {
            return Some(Answer::Refused(limits::chat(l)));
        }
        return Some(if body["stream"] == true {
            Answer::Sse(sse::render(&sse::chat_events(&r, &model), true))
        } else {
            Answer::Json(chat_completion(&r, &model))
        });
    }
    if path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent") {
        let c = Conversation::read(Api::Gemini, body);
        let r = reply(script, &c);
        if let Some(l) = &r.limit {
            return Some(Answer::Refused(limits::gemini(l)));
        }
        return Some(if path.ends_with(":streamGenerateContent") {
            Answer::Sse(sse::render(&sse::gemini_events(&r), false))
        } else {
            Answer::Json(sse::gemini_response(&r))
        });
    }
    None
}

fn chat_completion(r: &Reply, model: &str) -> Value {
    let mut message = json!({"role": "assistant", "content": r.text});
    if let Some(t) = &r.tool {
        message["tool_calls"] = json!([{"id": "call_scripted", "type": "function",
            "function": {"name": t.name, "arguments": t.input.to_string()}}]);
    }
    json!({"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
           "model": model,
           "choices": [{"index": 0, "message": message,
                        "finish_reason": if r.tool.is_some() { "tool_calls" } else { "stop" }}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}
