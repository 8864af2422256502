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

/// Sends answered before they are typed are still typed whole and in the order they were
/// accepted, from one caller in a row and from several at once; each is listed once typed.
#[test]
fn sends_answered_before_typing_are_typed_in_the_order_accepted() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sid = spawn_session(
        &s,
        json!({"providerId": "shell", "workingDirectory": dir.path()}),
    );
    let log = dir.path().join("order.log");
    let line = |n: usize| format!("echo {n} >> {}", log.display());
    for n in 0..20 {
        let r = s.post(
            &format!("{SESSIONS}/{sid}/messages"),
            json!({"text": line(n)}),
        );
        assert_eq!(r.status, 201, "{}", r.body);
    }
    // From several callers at once: each accepted in some order, typed in that order.
    let accepted = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for n in 20..30 {
            let (s, accepted, text, sid) = (&s, &accepted, line(n), &sid);
            scope.spawn(move || {
                let r = s.post(&format!("{SESSIONS}/{sid}/messages"), json!({"text": text}));
                assert_eq!(r.status, 201, "{}", r.body);
                let at = r.json()["message"]["at"].as_i64().unwrap_or_default();
                accepted
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((at, n));
            });
        }
    });
    let mut lines = Vec::new();
    assert!(
        wait_until(std::time::Duration::from_secs(20), || {
            lines = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect();
            lines.len() == 30
        }),
        "typed: {lines:?}"
    );
    let first: Vec<String> = (0..20).map(|n| n.to_string()).collect();
    assert_eq!(lines[..20], first[..], "one caller's sends, in order");
    let mut rest: Vec<usize> = lines[20..].iter().filter_map(|l| l.parse().ok()).collect();
    assert_eq!(rest.len(), 10, "{lines:?}");
    // The order typed is the order listed (accepted) and each is listed once.
    let listed = user_texts(&s, &sid);
    let listed_rest: Vec<usize> = listed[20..]
        .iter()
        .filter_map(|t| t.strip_prefix("echo ")?.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(rest, listed_rest, "typed in the order accepted");
    rest.sort_unstable();
    assert_eq!(rest, (20..30).collect::<Vec<_>>());
}
