//! A message is on disk when the daemon says it was accepted, in the order it was sent, even
//! while other sessions flood and the daemon is killed right after the answer (issue 33: a
//! send answers once the message is durable and in its turn, and is typed after).

use crate::support;

use serde_json::{Value, json};
use support::*;

const SESSIONS: &str = "/api/coding-agents/sessions";

fn user_texts(s: &Server, id: &str) -> Vec<String> {
    s.get(&format!("{SESSIONS}/{id}/messages")).json()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m: &Value| m["text"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn messages_accepted_under_a_flood_survive_kill_9_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    // Others flood their terminals (and so the transcripts and the store's later writes)
    // while the messages are sent.
    let floods: Vec<String> = (0..4)
        .map(|_| {
            spawn_session(
                &s,
                json!({"task": "yes flood-line-of-output", "providerId": "exec"}),
            )
        })
        .collect();
    for f in &floods {
        wait_screen(&s, f, "flood-line-of-output");
    }
    let target = spawn_session(&s, json!({"task": "cat > /dev/null", "providerId": "exec"}));
    // Sent back to back: each answered (201) before the next is sent, the last answer
    // followed at once by the kill.
    let sent: Vec<String> = (0..30).map(|i| format!("message-{i:02}")).collect();
    for (i, text) in sent.iter().enumerate() {
        let r = if i % 3 == 2 {
            // Keys go the same way as text.
            s.post(
                &format!("{SESSIONS}/{target}/messages"),
                json!({"keys": ["x", "enter"]}),
            )
        } else {
            s.post(
                &format!("{SESSIONS}/{target}/messages"),
                json!({ "text": text }),
            )
        };
        assert_eq!(r.status, 201, "{}", r.body);
    }
    s.crash();

    let s = Server::start_in(dir.path(), &[]);
    let want: Vec<String> = sent
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if i % 3 == 2 {
                "[x enter]".to_string()
            } else {
                t.clone()
            }
        })
        .collect();
    assert_eq!(user_texts(&s, &target), want);
}
