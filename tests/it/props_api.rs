//! Property tests of request bodies and queries: arbitrary JSON (and bytes that are not JSON)
//! sent to a real `orchestra serve` on every route that reads a body, and arbitrary JSON
//! decoded as the wire types clients read. The server never fails (no 500) and every refusal
//! is `{"error": "<sentence>"}`; decoding never panics.

use crate::support;

use orchestra_proto::task::TaskStatus;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use support::*;

/// The task statuses there are; bodies use them (and names that are none).
fn statuses() -> [&'static str; 6] {
    TaskStatus::ALL.map(TaskStatus::as_str)
}

/// Any JSON value, small and deep enough to reach every branch of a body reader.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![
            -1.0, 0.0, 0.5, 1.0, 2.0, 100.0, 100.5, 101.0, 65535.0, 65536.0, 1e300
        ])
        .prop_map(|f| json!(f)),
        "\\PC{0,16}".prop_map(Value::String),
        prop::sample::select(
            [
                &statuses()[..],
                &[
                    "", " ", "shell", "exec", "claude", "worktree", "none", "manual", "safe",
                    "auto", "enter", "ctrl-c", "up", "1", "/", "/tmp", "..", "\u{0}", "HEAD",
                ]
            ]
            .concat()
        )
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A body: an object of the fields the routes read (and others) with any values, any JSON,
/// or bytes that are not JSON at all.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let field = prop::sample::select(vec![
        "name",
        "description",
        "providerId",
        "workingDirectory",
        "isolation",
        "baseRef",
        "approval",
        "requiredCapabilities",
        "status",
        "progress",
        "error",
        "output",
        "success",
        "summary",
        "filesModified",
        "filesCreated",
        "message",
        "task",
        "cols",
        "rows",
        "text",
        "keys",
        "option",
        "olderThanSeconds",
        "path",
        "other",
    ]);
    prop_oneof![
        6 => typed_fields(),
        3 => prop::collection::vec((field, any_json()), 0..6).prop_map(|fields| {
            let m: Map<String, Value> = fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            Value::Object(m).to_string().into_bytes()
        }),
        2 => any_json().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => any_json().prop_map(|v| {
            // Cut short: JSON that ends too soon.
            let s = v.to_string();
            s.as_bytes()[..s.len() / 2].to_vec()
        }),
    ]
}

/// An object whose fields have the types the routes want (values at and past their edges),
/// so that requests get past the first check and reach the engine.
fn typed_fields() -> impl Strategy<Value = Vec<u8>> {
    let text =
        || prop_oneof![3 => "\\PC{0,24}", 1 => Just(String::new()), 1 => "[\n\r\t a-z]{0,10}"];
    let maybe = |s: BoxedStrategy<Value>| prop::option::weighted(0.85, s);
    let status = prop::sample::select([&statuses()[..], &["skipped", "Running", ""]].concat())
        .prop_map(|s| json!(s));
    let key_name = prop_oneof![
        prop::sample::select(vec![
            "enter", "ctrl-c", "up", "tab", "f5", "esc", "nope", ""
        ])
        .prop_map(String::from),
        "\\PC{0,4}",
    ];
    (
        (
            maybe(text().prop_map(Value::String).boxed()),
            maybe(text().prop_map(Value::String).boxed()),
            maybe(status.boxed()),
            maybe((-20.0f64..130.0).prop_map(|p| json!(p)).boxed()),
            maybe(text().prop_map(Value::String).boxed()),
            maybe(text().prop_map(Value::String).boxed()),
        ),
        (
            maybe(any::<bool>().prop_map(Value::Bool).boxed()),
            maybe(
                prop::collection::vec(text(), 0..3)
                    .prop_map(|v| json!(v))
                    .boxed(),
            ),
            maybe((0i64..1100).prop_map(|n| json!(n)).boxed()),
            maybe((0i64..1100).prop_map(|n| json!(n)).boxed()),
            maybe(
                prop::collection::vec(key_name, 0..4)
                    .prop_map(|v| json!(v))
                    .boxed(),
            ),
            maybe(any::<f64>().prop_map(|f| json!(f)).boxed()),
        ),
    )
        .prop_map(
            |(
                (name, description, status, progress, output, text),
                (success, files, cols, rows, keys, older),
            )| {
                let mut m = Map::new();
                for (k, v) in [
                    ("name", name.clone()),
                    ("description", description.clone()),
                    ("status", status),
                    ("progress", progress),
                    ("output", output.clone()),
                    ("error", output),
                    ("summary", description),
                    ("text", text.clone()),
                    ("message", text.clone()),
                    ("task", name),
                    ("option", text.clone()),
                    ("path", text),
                    ("success", success),
                    ("filesModified", files),
                    ("cols", cols),
                    ("rows", rows),
                    ("keys", keys),
                    ("olderThanSeconds", older),
                ] {
                    if let Some(v) = v {
                        m.insert(k.to_string(), v);
                    }
                }
                Value::Object(m).to_string().into_bytes()
            },
        )
}

/// A query string of the parameters the routes read, with any values.
fn query() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["status", "limit", "lines", "ansi", "bytes", "x"]);
    let value = prop_oneof![
        "[ -~]{0,8}",
        any::<i64>().prop_map(|n| n.to_string()),
        Just("18446744073709551616".to_string()),
        Just("running".to_string()),
    ];
    prop::collection::vec((name, value), 0..3).prop_map(|pairs| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", orchestra_proto::wire::path_segment(v)))
            .collect::<Vec<_>>()
            .join("&")
    })
}

/// A refusal is `{"error": "<sentence>"}` and nothing else; nothing is a server failure.
fn check(method: &str, path: &str, sent: &[u8], r: &Response) -> Result<(), TestCaseError> {
    let what = format!(
        "{method} {path} {:?} -> {} {}",
        String::from_utf8_lossy(sent),
        r.status,
        r.body
    );
    prop_assert!(r.status != 500 && r.status < 600, "{what}");
    if r.status >= 400 {
        let v: Value = serde_json::from_str(&r.body)
            .map_err(|e| TestCaseError::fail(format!("not JSON ({e}): {what}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| TestCaseError::fail(what.clone()))?;
        prop_assert_eq!(obj.len(), 1, "{}", what);
        prop_assert!(
            obj["error"].as_str().is_some_and(|e| !e.trim().is_empty()),
            "{what}"
        );
    }
    Ok(())
}

#[test]
fn any_body_or_query_is_answered_without_a_server_failure() {
    let s = Server::start();
    let task = create_task(&s, "fuzzed", json!({"providerId": "shell"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let step = s
        .post(
            &format!("/api/coding-agents/tasks/{task}/steps"),
            json!({"description": "a step"}),
        )
        .json()["stepId"]
        .as_str()
        .unwrap()
        .to_string();
    // A session whose program shrugs off whatever it is sent (text, Ctrl-C, Ctrl-Z, EOF).
    let session = spawn_session(
        &s,
        json!({"providerId": "exec", "task": "trap '' INT QUIT TSTP; while :; do cat >/dev/null; done"}),
    );
    let t = format!("/api/coding-agents/tasks/{task}");
    let sid = format!("/api/coding-agents/sessions/{session}");
    let writes: Vec<(&str, String)> = vec![
        ("POST", "/api/coding-agents/tasks".into()),
        ("PATCH", t.clone()),
        ("POST", format!("{t}/output")),
        ("POST", format!("{t}/steps")),
        ("PATCH", format!("{t}/steps/{step}")),
        ("POST", format!("{t}/result")),
        ("POST", format!("{sid}/messages")),
        ("POST", format!("{sid}/resize")),
        ("POST", format!("{sid}/answer")),
        ("POST", format!("{t}/answer")),
        ("POST", "/api/coding-agents/trust".into()),
        ("POST", "/api/coding-agents/trust/revoke".into()),
        ("POST", "/api/coding-agents/worktrees/gc".into()),
    ];
    let reads = [
        "/api/coding-agents/tasks".to_string(),
        format!("{sid}/peek"),
        format!("{sid}/messages"),
        format!("{sid}/transcript"),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &(
            body(),
            prop::sample::select(writes),
            query(),
            prop::sample::select(reads.to_vec()),
        ),
        |(sent, (method, path), q, read)| {
            let r = s.raw(method, &path, Some(&sent), &[]);
            check(method, &path, &sent, &r)?;
            let read = format!("{read}?{q}");
            let r = s.raw("GET", &read, None, &[]);
            check("GET", &read, b"", &r)
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    // The server is still there, and well.
    assert_eq!(s.get("/api/status").status, 200);
    let _ = s.delete(&sid);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_json_decodes_as_a_wire_type_or_says_why(v in any_json()) {
        use orchestra_proto::wire::*;
        let bytes = v.to_string().into_bytes();
        macro_rules! each {
            ($($t:ty),*) => {$(
                if let Err(e) = decode::<$t>(&bytes, stringify!($t)) {
                    prop_assert!(!e.to_string().is_empty());
                }
            )*};
        }
        each!(TaskBody, TaskList, SessionBody, SessionList, SessionCreated, MessageList, Peek,
              Status, EventFrame, StreamEvent, StreamRequest, ProviderList, DiffBody,
              WorktreeList, ErrorBody, request::NewTask, request::TaskChange,
              request::SendMessage, request::Resize, TrustList, Trusted, Revoked,
              request::TrustPath);
        let _ = error_sentence(&bytes);
    }
}
