//! The scripted model server (tests/it/support/model) over plain HTTP, no CLI: each API's
//! stream shape, the turn matching, `{cwd}`, structured output and the recording.

use crate::model;
use crate::support;

use model::{ModelServer, Reply, Script, Turn};
use serde_json::{Value, json};
use std::path::Path;
use support::{Response, raw_request};

fn post(m: &ModelServer, path: &str, body: Value) -> Response {
    let addr = m.url.trim_start_matches("http://").to_string();
    raw_request(&addr, "POST", path, Some(body.to_string().as_bytes()), &[])
}

/// The events of an SSE body: (event name, data).
fn events(body: &str) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    for block in body.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut name = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(n) = line.strip_prefix("event: ") {
                name = Some(n.to_string());
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
        out.push((name, data));
    }
    out
}

fn datas(body: &str) -> Vec<Value> {
    events(body)
        .into_iter()
        .filter(|(_, d)| d != "[DONE]")
        .map(|(_, d)| serde_json::from_str(&d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

/// Claude's hello.txt script: Write on the prompt, a reply on the result.
fn hello_script(cwd: &Path, tool: &str, input: Value) -> Script {
    Script::new(cwd)
        .turn(Turn::on_tool_result("hello.txt", Reply::text("Created hello.txt.")).offering(tool))
        .turn(Turn::on_prompt("hello.txt", Reply::tool(tool, input)).offering(tool))
        .fallback("Nothing scripted for that.")
}

fn write_input() -> Value {
    json!({"file_path": "{cwd}/hello.txt", "content": "hi"})
}

fn anthropic_body(messages: Value, stream: bool) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream,
           "tools": [{"name": "Write", "input_schema": {"type": "object"}}, {"name": "Bash"}],
           "messages": messages})
}

#[test]
fn anthropic_stream_calls_the_scripted_tool_with_the_cwd_filled_in() {
    let m = ModelServer::start(hello_script(Path::new("/w"), "Write", write_input()));
    let r = post(
        &m,
        "/v1/messages?beta=true",
        anthropic_body(
            json!([{"role": "user", "content": [{"type": "text", "text": "create hello.txt please"}]}]),
            true,
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let ev = events(&r.body);
    let names: Vec<&str> = ev.iter().filter_map(|(n, _)| n.as_deref()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let d = datas(&r.body);
    assert_eq!(d[1]["content_block"]["type"], "tool_use");
    assert_eq!(d[1]["content_block"]["name"], "Write");
    let json_text: String = d[2..4]
        .iter()
        .map(|e| e["delta"]["partial_json"].as_str().unwrap().to_string())
        .collect();
    let input: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(input, json!({"file_path": "/w/hello.txt", "content": "hi"}));
    assert_eq!(d[5]["delta"]["stop_reason"], "tool_use");
    // Recorded: path, query and body.
    let rec = m.requests_to("/v1/messages");
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].query, "beta=true");
    assert_eq!(rec[0].body["tools"][0]["name"], "Write");
}

#[test]
fn anthropic_tool_result_gets_the_reply_also_unstreamed() {
    let m = ModelServer::start(hello_script(Path::new("/w"), "Write", write_input()));
    let messages = json!([
        {"role": "user", "content": "create hello.txt"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    ]);
    let r = post(&m, "/v1/messages", anthropic_body(messages.clone(), true));
    let text: String = datas(&r.body)
        .iter()
        .filter(|e| e["delta"]["type"] == "text_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "Created hello.txt.");
    let r = post(&m, "/v1/messages", anthropic_body(messages.clone(), false));
    let v = r.json();
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": "Created hello.txt."}])
    );
    assert_eq!(v["stop_reason"], "end_turn");
    // A system reminder beside the result keeps it a result; a prompt typed after the tool
    // call (claude sends it in the same message) makes it a prompt.
    let reply_with = |text: &str| {
        let mut ms = messages.clone();
        ms[2]["content"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "text", "text": text}));
        post(&m, "/v1/messages", anthropic_body(ms, false)).json()["content"][0]["text"].clone()
    };
    assert_eq!(
        reply_with("<system-reminder>\nnote\n</system-reminder>"),
        "Created hello.txt."
    );
    assert_eq!(reply_with("and now?"), "Nothing scripted for that.");
}

#[test]
fn side_requests_count_tokens_models_and_structured_output() {
    let m = ModelServer::start(hello_script(Path::new("/w"), "Write", write_input()));
    let r = post(
        &m,
        "/v1/messages/count_tokens?beta=true",
        json!({"messages": []}),
    );
    assert_eq!(r.json()["input_tokens"], 10);
    let addr = m.url.trim_start_matches("http://").to_string();
    let r = raw_request(&addr, "GET", "/v1/models", None, &[]);
    assert!(r.json()["data"].as_array().unwrap().len() > 1, "{}", r.body);
    // A prompt about hello.txt that offers no Write and wants a title: JSON, not a tool call.
    let r = post(
        &m,
        "/v1/messages",
        json!({"model": "m", "stream": false,
               "messages": [{"role": "user", "content": "create hello.txt"}],
               "output_format": {"type": "json_schema", "schema": {"type": "object",
                   "properties": {"title": {"type": "string"}}, "required": ["title"]}}}),
    );
    let text = r.json()["content"][0]["text"].as_str().unwrap().to_string();
    let title: Value = serde_json::from_str(&text).unwrap();
    assert!(title["title"].is_string(), "{text}");
    // Unknown paths are a 404 with a sentence, and recorded too.
    let r = post(&m, "/v2/unknown", json!({}));
    assert_eq!(r.status, 404);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v2/unknown")
    );
    assert_eq!(m.requests().len(), 4);
}

#[test]
fn a_turn_for_a_tool_the_cli_does_not_offer_falls_back_to_text() {
    let m = ModelServer::start(hello_script(Path::new("/w"), "write_file", write_input()));
    let r = post(
        &m,
        "/v1/messages",
        anthropic_body(
            json!([{"role": "user", "content": "create hello.txt"}]),
            false,
        ),
    );
    assert_eq!(
        r.json()["content"],
        json!([{"type": "text", "text": "Nothing scripted for that."}])
    );
}

#[test]
fn responses_stream_uses_custom_and_function_tool_calls() {
    let cwd = Path::new("/repo");
    let patch = "*** Begin Patch\n*** Add File: {cwd}/hello.txt\n+hi\n*** End Patch";
    let script = Script::new(cwd)
        .turn(Turn::on_tool_result(
            "hello",
            Reply::text("Created hello.txt."),
        ))
        .turn(Turn::on_prompt(
            "hello",
            Reply::tool("apply_patch", json!(patch)),
        ))
        .turn(Turn::on_prompt(
            "list",
            Reply::tool("exec_command", json!({"cmd": "ls {cwd}"})),
        ));
    let m = ModelServer::start(script);
    let tools = json!([{"type": "function", "name": "exec_command", "parameters": {}},
                       {"type": "custom", "name": "apply_patch"}]);
    let user = |t: &str| {
        json!({"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": t}]})
    };
    let r = post(
        &m,
        "/v1/responses",
        json!({"model": "gpt-5.5", "stream": true, "tools": tools, "input": [user("create hello")]}),
    );
    let d = datas(&r.body);
    let types: Vec<&str> = d.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = &d[2]["item"];
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["input"], patch.replace("{cwd}", "/repo"));
    // Event names match the data's type.
    assert!(
        events(&r.body)
            .iter()
            .all(|(n, d)| d.contains(&format!("\"{}\"", n.as_ref().unwrap())))
    );

    let r = post(
        &m,
        "/v1/responses",
        json!({"model": "gpt-5.5", "stream": true, "tools": tools, "input": [user("list files")]}),
    );
    let item = &datas(&r.body)[2]["item"];
    assert_eq!(item["type"], "function_call");
    let args: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"cmd": "ls /repo"}));

    let r = post(
        &m,
        "/v1/responses",
        json!({"model": "gpt-5.5", "stream": true, "tools": tools, "input": [user("create hello"),
               {"type": "custom_tool_call_output", "call_id": "c", "output": "Done"}]}),
    );
    let text: String = datas(&r.body)
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "Created hello.txt.");
    let done = datas(&r.body).pop().unwrap();
    assert_eq!(
        done["response"]["output"][0]["content"][0]["text"],
        "Created hello.txt."
    );
}

#[test]
fn responses_refuses_a_websocket_upgrade() {
    let m = ModelServer::start(Script::new(Path::new("/")));
    let addr = m.url.trim_start_matches("http://").to_string();
    let r = raw_request(
        &addr,
        "GET",
        "/v1/responses",
        None,
        &[
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ],
    );
    assert_eq!(r.status, 426, "{}", r.body);
}

#[test]
fn chat_completions_stream_tool_call_deltas_then_done() {
    let script = hello_script(Path::new("/a"), "write", json!({"path": "{cwd}/hello.txt"}));
    let m = ModelServer::start(script);
    let r = post(
        &m,
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true,
               "tools": [{"type": "function", "function": {"name": "write"}}],
               "messages": [{"role": "system", "content": "be brief"},
                            {"role": "user", "content": "make hello.txt"}]}),
    );
    assert!(r.body.trim_end().ends_with("data: [DONE]"), "{}", r.body);
    let d = datas(&r.body);
    let calls: Vec<&Value> = d
        .iter()
        .filter_map(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]
                .as_object()
                .map(|_| c)
        })
        .collect();
    assert_eq!(
        calls[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
        "write"
    );
    let args: String = calls
        .iter()
        .map(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"path": "/a/hello.txt"})
    );
    assert!(
        d.iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );

    // Aider's way: edit blocks in plain text, on a tool result or not.
    let script = Script::new(Path::new("/a")).turn(Turn::on_prompt(
        "hello.txt",
        Reply::text("hello.txt\n```\n<<<<<<< SEARCH\n=======\nhi\n>>>>>>> REPLACE\n```"),
    ));
    let m = ModelServer::start(script);
    let r = post(
        &m,
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true,
               "messages": [{"role": "user", "content": [{"type": "text", "text": "make hello.txt"}]}]}),
    );
    let text: String = datas(&r.body)
        .iter()
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert!(text.contains(">>>>>>> REPLACE"), "{text}");
    assert!(
        datas(&r.body)
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop")
    );
}

#[test]
fn gemini_stream_router_and_count_tokens() {
    let script = hello_script(
        Path::new("/g"),
        "write_file",
        json!({"file_path": "{cwd}/hello.txt", "content": "hi"}),
    );
    let m = ModelServer::start(script);
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "create hello.txt"}]}],
                      "tools": [{"functionDeclarations": [{"name": "write_file"}]}]});
    let r = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        body,
    );
    let d = datas(&r.body);
    let last = d.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(
        last["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "write_file", "args": {"file_path": "/g/hello.txt", "content": "hi"}})
    );
    assert_eq!(m.requests()[0].query, "alt=sse");

    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "create hello.txt"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {}}}]}],
        "tools": [{"functionDeclarations": [{"name": "write_file"}]}]});
    let r = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        body,
    );
    let text: String = datas(&r.body)
        .iter()
        .filter_map(|c| {
            c["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(text, "Created hello.txt.");

    // The router wants JSON with a complexity score of at least 1.
    let router = json!({"contents": [{"role": "user", "parts": [{"text": "create hello.txt"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "object", "properties": {
                "complexity_reasoning": {"type": "string"},
                "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100}},
            "required": ["complexity_reasoning", "complexity_score"]}}});
    let r = post(
        &m,
        "/v1beta/models/gemini-2.5-flash-lite:generateContent",
        router,
    );
    let text = r.json()["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["complexity_score"].as_i64().unwrap() >= 1, "{v}");
    assert!(v["complexity_reasoning"].is_string(), "{v}");

    let r = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:countTokens",
        json!({"contents": []}),
    );
    assert_eq!(r.json()["totalTokens"], 10);
}

#[test]
fn a_usage_limit_is_each_apis_own_refusal_until_it_resets() {
    let script = Script::new(Path::new("/l"))
        .turn(Turn::on_prompt("", Reply::limit(2)))
        .fallback("After the reset.");
    let m = ModelServer::start(script);
    let user = |text: &str| json!([{"role": "user", "content": text}]);
    let anthropic = post(&m, "/v1/messages", anthropic_body(user("hi"), true));
    assert_eq!(anthropic.status, 429, "{}", anthropic.body);
    let a: Value = serde_json::from_str(&anthropic.body).unwrap();
    assert_eq!(a["error"]["type"], "rate_limit_error");
    assert_eq!(
        anthropic.header("anthropic-ratelimit-unified-status"),
        Some("rejected")
    );
    assert_eq!(anthropic.header("x-should-retry"), Some("false"));
    let reset: u64 = anthropic
        .header("anthropic-ratelimit-unified-reset")
        .and_then(|r| r.parse().ok())
        .expect("a reset time");

    let responses = post(
        &m,
        "/v1/responses",
        json!({"model": "gpt-5.5", "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}),
    );
    assert_eq!(responses.status, 429);
    let r: Value = serde_json::from_str(&responses.body).unwrap();
    assert_eq!(r["error"]["type"], "usage_limit_reached");
    // One limit: every refusal names the same reset.
    assert_eq!(r["error"]["resets_at"], json!(reset));

    let chat = post(
        &m,
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "messages": user("hi")}),
    );
    assert_eq!(chat.status, 429);
    let c: Value = serde_json::from_str(&chat.body).unwrap();
    assert_eq!(c["error"]["code"], "insufficient_quota");

    let gemini = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
    );
    assert_eq!(gemini.status, 429);
    let g: Value = serde_json::from_str(&gemini.body).unwrap();
    assert_eq!(g["error"]["status"], "RESOURCE_EXHAUSTED");
    let types: Vec<&str> = g["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["@type"].as_str())
        .collect();
    assert!(
        types.iter().any(|t| t.ends_with("QuotaFailure")),
        "{types:?}"
    );
    assert!(types.iter().any(|t| t.ends_with("RetryInfo")), "{types:?}");

    // Once it has reset, the turns after it answer.
    let answered = support::wait_until(std::time::Duration::from_secs(10), || {
        post(&m, "/v1/messages", anthropic_body(user("hi"), false)).status == 200
    });
    assert!(answered, "{}", m.log());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now >= reset, "answered before the reset");
}
