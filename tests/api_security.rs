//! Browser pages of other sites cannot drive the API (cross-site requests), while the CLI,
//! curl and scripts, which send no `Origin`, keep working. Raw HTTP so every header is exactly
//! what a browser would send.

mod support;

use serde_json::json;
use std::path::Path;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const EVIL: (&str, &str) = ("Origin", "http://evil.example");
const TEXT_PLAIN: (&str, &str) = ("Content-Type", "text/plain");

fn exec_task_body(marker: &Path) -> String {
    json!({
        "name": "pwn",
        "description": format!("touch {}", marker.display()),
        "providerId": "exec",
    })
    .to_string()
}

fn task_count(s: &Server) -> usize {
    let r = s.get(TASKS);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["tasks"].as_array().map_or(0, Vec::len)
}

fn assert_refused(r: &Response) {
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.json()["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{}",
        r.body
    );
}

#[test]
fn a_page_of_another_site_creates_and_starts_nothing() {
    let s = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("pwned");
    let body = exec_task_body(&marker);

    // The "simple" request a page can send without a preflight.
    for origin in [EVIL, ("Origin", "null")] {
        let r = raw_request(
            &s.addr,
            "POST",
            TASKS,
            Some(body.as_bytes()),
            &[TEXT_PLAIN, origin],
        );
        assert_refused(&r);
    }
    let r = raw_request(
        &s.addr,
        "POST",
        TASKS,
        Some(body.as_bytes()),
        &[TEXT_PLAIN, ("Sec-Fetch-Site", "cross-site")],
    );
    assert_refused(&r);
    assert_eq!(task_count(&s), 0, "a refused request created a task");

    // A task made legitimately cannot be started by the page either.
    let task = create_task(
        &s,
        "legit",
        json!({"providerId": "exec", "description": format!("touch {}", marker.display())}),
    );
    let id = task["id"].as_str().expect("id");
    let start = format!("{TASKS}/{id}/start");
    for extra in [
        vec![EVIL],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![("Sec-Fetch-Site", "same-site")],
    ] {
        let r = raw_request(&s.addr, "POST", &start, Some(b""), &extra);
        assert_refused(&r);
    }
    let now = s.get(&format!("{TASKS}/{id}")).json()["task"].clone();
    assert_eq!(now["metadata"]["status"], "pending", "{now}");
    let sessions = s.get("/api/coding-agents/sessions").json();
    assert_eq!(sessions["sessions"].as_array().map_or(0, Vec::len), 0);
    assert!(!marker.exists(), "the refused start ran the command");
}

#[test]
fn every_route_is_guarded_including_the_event_stream_and_errors() {
    let s = Server::start();
    for (method, path) in [
        ("GET", "/api/coding-agents/events"),
        ("GET", TASKS),
        ("GET", "/api/coding-agents/status"),
        ("POST", "/api/agent/resume"),
        ("GET", "/api/coding-agents/no-such-route"),
        ("DELETE", TASKS),
    ] {
        let r = raw_request(&s.addr, method, path, None, &[EVIL]);
        assert_refused(&r);
    }
    // Nothing the refused requests asked for happened: autopilot stays off.
    let status = s.get("/api/coding-agents/status").json();
    assert_eq!(status["autopilot"], false, "{status}");
}

#[test]
fn the_cli_curl_and_same_origin_pages_keep_working() {
    let s = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let body = exec_task_body(&marker);
    let own = format!("http://{}", s.addr);

    // `curl -d` sends a form content type and no Origin; the body is still JSON.
    let r = raw_request(
        &s.addr,
        "POST",
        TASKS,
        Some(body.as_bytes()),
        &[("Content-Type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["task"]["id"].as_str().expect("id").to_string();

    // The API's own page (same origin, as a browser marks it) may start it.
    let r = raw_request(
        &s.addr,
        "POST",
        &format!("{TASKS}/{id}/start"),
        Some(b""),
        &[("Origin", own.as_str()), ("Sec-Fetch-Site", "same-origin")],
    );
    assert!(r.status == 200 || r.status == 201, "{}", r.body);
    assert!(
        wait_until(std::time::Duration::from_secs(20), || marker.exists()),
        "the started task never ran"
    );

    let r = raw_request(
        &s.addr,
        "GET",
        TASKS,
        None,
        &[("Origin", own.as_str()), ("Sec-Fetch-Site", "none")],
    );
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn origins_the_user_allows_work() {
    let s = Server::start_with(&["--allow-origin", "http://localhost:3000"]);
    let r = raw_request(
        &s.addr,
        "POST",
        TASKS,
        Some(
            json!({"name": "from the dev page", "description": "true", "providerId": "exec"})
                .to_string()
                .as_bytes(),
        ),
        &[
            ("Origin", "http://localhost:3000"),
            ("Sec-Fetch-Site", "same-site"),
        ],
    );
    assert_eq!(r.status, 201, "{}", r.body);
    // Its browser may let it read the answer, and send JSON after asking (a preflight).
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    let preflight = [
        ("Origin", "http://localhost:3000"),
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "content-type"),
    ];
    let r = raw_request(&s.addr, "OPTIONS", TASKS, None, &preflight);
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    assert!(
        r.header("access-control-allow-headers")
            .is_some_and(|h| h.contains("content-type")),
        "{:?}",
        r.headers
    );
    // Others are still refused, their preflights too, and are told nothing about CORS.
    let r = raw_request(&s.addr, "GET", TASKS, None, &[EVIL]);
    assert_refused(&r);
    assert_eq!(r.header("access-control-allow-origin"), None);
    let r = raw_request(
        &s.addr,
        "OPTIONS",
        TASKS,
        None,
        &[EVIL, ("Access-Control-Request-Method", "POST")],
    );
    assert_refused(&r);

    // The environment variable takes a comma-separated list.
    let env = Server::start_with_env(
        &[],
        &[(
            "ORCHESTRA_ALLOW_ORIGINS",
            "http://a.example:8080,http://b.example",
        )],
    );
    for origin in ["http://a.example:8080", "http://b.example"] {
        let r = raw_request(&env.addr, "GET", TASKS, None, &[("Origin", origin)]);
        assert_eq!(r.status, 200, "{origin}: {}", r.body);
    }
    let r = raw_request(&env.addr, "GET", TASKS, None, &[EVIL]);
    assert_refused(&r);
}
