//! The task part of API.md, probed with real requests against the real server.

use crate::support;

use serde_json::{Value, json};
use support::{Server, create_task, raw_request};

const TASKS: &str = "/api/coding-agents/tasks";

fn status_of(s: &Server, id: &str) -> String {
    s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn create_returns_the_full_shape() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let t = create_task(
        &s,
        "shape",
        json!({"workingDirectory": dir.path(), "providerId": "shell"}),
    );
    assert!(
        t["id"].as_str().is_some_and(|i| i.len() == 36),
        "uuid id: {t}"
    );
    assert_eq!(t["name"], "shape");
    assert_eq!(t["description"], "shape description");
    let m = &t["metadata"];
    assert_eq!(m["status"], "pending");
    assert_eq!(m["progress"], 0);
    assert_eq!(m["output"], json!([]));
    assert_eq!(m["steps"], json!([]));
    assert_eq!(m["providerId"], "shell");
    assert_eq!(
        m["workingDirectory"],
        dir.path()
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .as_ref()
    );
    assert!(m["createdAt"].as_i64().unwrap() > 1_600_000_000_000);
    for absent in ["result", "error", "startedAt", "completedAt", "sessionId"] {
        assert!(
            m.get(absent).is_none(),
            "{absent} must be absent until set: {m}"
        );
    }
}

#[test]
fn create_rejects_bad_input_with_400() {
    let s = Server::start();
    let cases: Vec<(&str, Value)> = vec![
        ("missing name", json!({"description": "d"})),
        // `exec` runs its description, so it needs one (a plain shell does not).
        (
            "missing description",
            json!({"name": "n", "providerId": "exec"}),
        ),
        ("empty name", json!({"name": "", "description": "d"})),
        (
            "blank description",
            json!({"name": "n", "description": "   ", "providerId": "exec"}),
        ),
        ("name a number", json!({"name": 5, "description": "d"})),
        (
            "description an array",
            json!({"name": "n", "description": ["d"]}),
        ),
        (
            "unknown provider",
            json!({"name": "n", "description": "d", "providerId": "nope"}),
        ),
        (
            "provider a number",
            json!({"name": "n", "description": "d", "providerId": 3}),
        ),
        (
            "missing dir",
            json!({"name": "n", "description": "d", "workingDirectory": "/definitely/not/here"}),
        ),
        (
            "dir is a file",
            json!({"name": "n", "description": "d", "workingDirectory": "/etc/hostname"}),
        ),
        (
            "capabilities not strings",
            json!({"name": "n", "description": "d", "requiredCapabilities": [1]}),
        ),
    ];
    for (what, body) in cases {
        let r = s.post(TASKS, body);
        assert_eq!(r.status, 400, "{what}: {}", r.body);
        assert!(
            r.json()["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{what}"
        );
    }
    for raw in ["{", "[1,2]", "\"str\"", "null", "{\"name\":\"n\",}"] {
        let r = s.raw("POST", TASKS, Some(raw.as_bytes()), &[]);
        assert_eq!(r.status, 400, "{raw}: {}", r.body);
        assert!(r.json()["error"].is_string());
    }
    // Nothing was created by any of that.
    assert_eq!(s.get(TASKS).json()["tasks"], json!([]));
}

#[test]
fn unknown_fields_are_ignored() {
    let s = Server::start();
    let t = create_task(&s, "extra", json!({"colour": "blue"}));
    assert!(t["metadata"].get("colour").is_none());
}

#[test]
fn body_over_one_mib_is_413_and_loses_nothing() {
    let s = Server::start();
    let big = format!(
        "{{\"name\":\"n\",\"description\":\"{}\"}}",
        "x".repeat(1024 * 1024 + 10)
    );
    let r = s.raw("POST", TASKS, Some(big.as_bytes()), &[]);
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.json()["error"].is_string());
    assert_eq!(s.get(TASKS).json()["tasks"], json!([]));
    // Just under the limit is fine.
    let ok = format!(
        "{{\"name\":\"n\",\"description\":\"{}\"}}",
        "x".repeat(1024 * 1000)
    );
    assert_eq!(s.raw("POST", TASKS, Some(ok.as_bytes()), &[]).status, 201);
}

#[test]
fn a_405_message_lists_the_allowed_methods() {
    let s = Server::start();
    let t = create_task(&s, "m", json!({}));
    let task = format!("{TASKS}/{}", t["id"].as_str().expect("id"));
    let session = "/api/coding-agents/sessions/any-id";
    for (method, path, want) in [
        ("PUT", TASKS.to_string(), vec!["GET", "POST"]),
        ("PUT", task.clone(), vec!["GET", "PATCH", "DELETE"]),
        ("GET", format!("{task}/start"), vec!["POST"]),
        ("PUT", session.to_string(), vec!["GET", "DELETE"]),
        ("GET", "/api/agent/stop".to_string(), vec!["POST"]),
    ] {
        let r = s.request(method, &path, None);
        assert_eq!(r.status, 405, "{method} {path}: {}", r.body);
        let allow = r.header("allow").expect("Allow header").to_string();
        let error = r.json()["error"].as_str().expect("error").to_string();
        for m in want {
            assert!(allow.contains(m), "{method} {path}: Allow {allow:?}");
        }
        // Every method of the header, and nothing else, is named in the sentence.
        let (_, listed) = error
            .split_once("allowed: ")
            .unwrap_or_else(|| panic!("{method} {path}: {error:?}"));
        let listed: Vec<&str> = listed.split(", ").collect();
        let header: Vec<&str> = allow.split(',').map(str::trim).collect();
        assert_eq!(
            listed, header,
            "{method} {path}: {error:?} vs Allow {allow:?}"
        );
    }
}

#[test]
fn unknown_routes_404_and_wrong_methods_405_with_allow() {
    let s = Server::start();
    let r = s.get("/api/nothing-here");
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());
    let r = s.get(&format!("{TASKS}/no-such-id"));
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].as_str().unwrap().contains("no-such-id"));
    let r = s.request("PUT", TASKS, Some(json!({})));
    assert_eq!(r.status, 405);
    let allow = r
        .header("allow")
        .expect("Allow header")
        .to_ascii_uppercase();
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    assert!(r.json()["error"].is_string());
    let t = create_task(&s, "m", json!({}));
    let r = s.request(
        "PUT",
        &format!("{TASKS}/{}", t["id"].as_str().unwrap()),
        Some(json!({})),
    );
    assert_eq!(r.status, 405);
    let allow = r.header("allow").unwrap().to_ascii_uppercase();
    assert!(
        allow.contains("PATCH") && allow.contains("DELETE"),
        "{allow}"
    );
    for op in ["pause", "resume", "cancel", "start", "retry"] {
        assert_eq!(
            s.post_empty(&format!("{TASKS}/ghost/{op}")).status,
            404,
            "{op}"
        );
    }
    assert_eq!(
        s.post(&format!("{TASKS}/ghost/output"), json!({"output": "x"}))
            .status,
        404
    );
    assert_eq!(
        s.post(&format!("{TASKS}/ghost/steps"), json!({"description": "x"}))
            .status,
        404
    );
    assert_eq!(
        s.patch(&format!("{TASKS}/ghost"), json!({"progress": 1}))
            .status,
        404
    );
}

#[test]
fn list_filters_limits_and_orders_newest_first() {
    let s = Server::start();
    let ids: Vec<String> = (0..5)
        .map(|i| {
            create_task(&s, &format!("t{i}"), json!({}))["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    s.patch(&format!("{TASKS}/{}", ids[1]), json!({"status": "failed"}));
    s.patch(&format!("{TASKS}/{}", ids[3]), json!({"status": "failed"}));
    let all: Vec<String> = s.get(TASKS).json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(all, newest_first);
    let failed = s.get(&format!("{TASKS}?status=failed")).json()["tasks"].clone();
    assert_eq!(failed.as_array().unwrap().len(), 2);
    assert_eq!(failed[0]["id"], ids[3].as_str());
    let one = s.get(&format!("{TASKS}?status=failed&limit=1")).json()["tasks"].clone();
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(
        s.get(&format!("{TASKS}?limit=2")).json()["tasks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    for bad in [
        "status=bogus",
        "limit=0",
        "limit=-3",
        "limit=abc",
        "limit=2.5",
        "limit=",
    ] {
        let r = s.get(&format!("{TASKS}?{bad}"));
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.json()["error"].is_string());
    }
}

#[test]
fn patch_moves_along_the_machine_only() {
    let s = Server::start();
    let t = create_task(&s, "m", json!({}));
    let id = t["id"].as_str().unwrap();
    let path = format!("{TASKS}/{id}");
    // pending -> paused is illegal.
    let r = s.patch(&path, json!({"status": "paused"}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.json()["error"].is_string());
    let r = s.patch(&path, json!({"status": "running"}));
    assert_eq!(r.status, 200);
    let m = &r.json()["task"]["metadata"];
    let started = m["startedAt"].as_i64().expect("startedAt stamped");
    assert!(m.get("completedAt").is_none());
    assert_eq!(s.patch(&path, json!({"status": "paused"})).status, 200);
    let r = s.patch(&path, json!({"status": "running"}));
    assert_eq!(
        r.json()["task"]["metadata"]["startedAt"].as_i64(),
        Some(started),
        "stamped once"
    );
    let r = s.patch(&path, json!({"status": "failed", "error": "boom"}));
    assert_eq!(r.status, 200);
    let m = &r.json()["task"]["metadata"];
    assert_eq!(m["status"], "failed");
    assert_eq!(m["error"], "boom");
    assert!(m["completedAt"].as_i64().unwrap() >= started);
    // Final: every change is 409, and the task is untouched.
    for body in [
        json!({"status": "running"}),
        json!({"status": "completed"}),
        json!({"progress": 50}),
        json!({"error": "again"}),
    ] {
        assert_eq!(s.patch(&path, body.clone()).status, 409, "{body}");
    }
    assert_eq!(
        s.post(&format!("{path}/output"), json!({"output": "late"}))
            .status,
        409
    );
    assert_eq!(
        s.post(&format!("{path}/steps"), json!({"description": "late"}))
            .status,
        409
    );
    assert_eq!(
        s.post(
            &format!("{path}/result"),
            json!({"success": true, "summary": "late"})
        )
        .status,
        409
    );
    for op in ["pause", "resume", "cancel", "start"] {
        assert_eq!(s.post_empty(&format!("{path}/{op}")).status, 409, "{op}");
    }
    let m = s.get(&path).json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "failed");
    assert_eq!(m["error"], "boom");
    assert!(m["output"].as_array().unwrap().is_empty());
}

#[test]
fn patch_validates_fields() {
    let s = Server::start();
    let id = support::create_task_id(&s, "v");
    let path = format!("{TASKS}/{id}");
    for body in [
        json!({"status": "done"}),
        json!({"status": 1}),
        json!({"progress": 101}),
        json!({"progress": -1}),
        json!({"progress": "50"}),
        json!({"error": 5}),
        json!({}),
    ] {
        let r = s.patch(&path, body.clone());
        assert_eq!(r.status, 400, "{body}: {}", r.body);
    }
    let r = s.patch(&path, json!({"progress": 42.5}));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["task"]["metadata"]["progress"], 42.5);
    assert_eq!(
        s.patch(&path, json!({"progress": 100})).json()["task"]["metadata"]["progress"],
        100
    );
    assert_eq!(status_of(&s, &id), "pending");
}

#[test]
fn pause_resume_cancel_without_a_session() {
    let s = Server::start();
    let id = support::create_task_id(&s, "p");
    let p = format!("{TASKS}/{id}");
    assert_eq!(
        s.post_empty(&format!("{p}/pause")).status,
        409,
        "pause of pending"
    );
    assert_eq!(
        s.post_empty(&format!("{p}/resume")).status,
        409,
        "resume of pending"
    );
    s.patch(&p, json!({"status": "running"}));
    assert_eq!(
        s.post_empty(&format!("{p}/resume")).status,
        409,
        "resume of running"
    );
    let r = s.post_empty(&format!("{p}/pause"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["task"]["metadata"]["status"], "paused");
    let r = s.post_empty(&format!("{p}/resume"));
    assert_eq!(r.json()["task"]["metadata"]["status"], "running");
    let r = s.post_empty(&format!("{p}/cancel"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["task"]["metadata"]["status"], "cancelled");
    assert!(r.json()["task"]["metadata"]["completedAt"].is_i64());
    assert_eq!(s.post_empty(&format!("{p}/cancel")).status, 409);
}

#[test]
fn output_steps_and_result() {
    let s = Server::start();
    let id = support::create_task_id(&s, "o");
    let p = format!("{TASKS}/{id}");
    let r = s.post(
        &format!("{p}/output"),
        json!({"output": "one\ntwo\r\nthree\n"}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["task"]["metadata"]["output"],
        json!(["one", "two", "three"])
    );
    s.post(&format!("{p}/output"), json!({"output": "four"}));
    assert_eq!(
        s.get(&p).json()["task"]["metadata"]["output"],
        json!(["one", "two", "three", "four"])
    );
    assert_eq!(
        s.post(&format!("{p}/output"), json!({"output": 3})).status,
        400
    );
    assert_eq!(s.post(&format!("{p}/output"), json!({})).status, 400);

    let r = s.post(&format!("{p}/steps"), json!({"description": "compile"}));
    assert_eq!(r.status, 201);
    let b = r.json();
    let step_id = b["stepId"].as_str().unwrap().to_string();
    assert_eq!(b["step"]["id"], step_id.as_str());
    assert_eq!(b["step"]["description"], "compile");
    assert_eq!(b["step"]["status"], "pending");
    assert_eq!(s.post(&format!("{p}/steps"), json!({})).status, 400);
    let r = s.patch(
        &format!("{p}/steps/{step_id}"),
        json!({"status": "completed", "output": "ok"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["step"]["status"], "completed");
    assert_eq!(r.json()["step"]["output"], "ok");
    assert_eq!(
        s.patch(&format!("{p}/steps/nope"), json!({"status": "completed"}))
            .status,
        404
    );
    assert_eq!(
        s.patch(&format!("{p}/steps/{step_id}"), json!({"status": "weird"}))
            .status,
        400
    );
    assert_eq!(
        s.patch(&format!("{p}/steps/{step_id}"), json!({})).status,
        400
    );
    let steps = s.get(&p).json()["task"]["metadata"]["steps"].clone();
    assert_eq!(steps[0]["status"], "completed");

    for bad in [
        json!({"summary": "s"}),
        json!({"success": "yes", "summary": "s"}),
        json!({"success": true}),
        json!({"success": true, "summary": "s", "filesModified": "a"}),
    ] {
        assert_eq!(
            s.post(&format!("{p}/result"), bad.clone()).status,
            400,
            "{bad}"
        );
    }
    let r = s.post(
        &format!("{p}/result"),
        json!({"success": true, "summary": "done", "filesModified": ["a.rs"], "filesCreated": ["b.rs"]}),
    );
    assert_eq!(r.status, 200);
    let m = r.json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "completed");
    assert_eq!(m["progress"], 100);
    assert_eq!(m["result"]["summary"], "done");
    assert_eq!(m["result"]["filesModified"], json!(["a.rs"]));
    assert_eq!(m["result"]["filesCreated"], json!(["b.rs"]));

    let id2 = support::create_task_id(&s, "f");
    let r = s.post(
        &format!("{TASKS}/{id2}/result"),
        json!({"success": false, "summary": "tests fail", "error": "3 failures"}),
    );
    let m = r.json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "failed");
    assert_eq!(m["error"], "3 failures");
    assert_eq!(m["result"]["success"], false);
}

#[test]
fn retry_only_from_a_finished_task() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let t = create_task(
        &s,
        "r",
        json!({"workingDirectory": dir.path(), "providerId": "exec"}),
    );
    let id = t["id"].as_str().unwrap();
    assert_eq!(s.post_empty(&format!("{TASKS}/{id}/retry")).status, 409);
    s.post_empty(&format!("{TASKS}/{id}/cancel"));
    let r = s.post_empty(&format!("{TASKS}/{id}/retry"));
    assert_eq!(r.status, 201);
    let n = r.json()["task"].clone();
    assert_ne!(n["id"], t["id"]);
    assert_eq!(n["name"], t["name"]);
    assert_eq!(n["description"], t["description"]);
    assert_eq!(n["metadata"]["status"], "pending");
    assert_eq!(n["metadata"]["providerId"], "exec");
    assert_eq!(
        n["metadata"]["workingDirectory"],
        t["metadata"]["workingDirectory"]
    );
    assert_eq!(n["metadata"]["retryOf"], t["id"]);
}

#[test]
fn fifty_concurrent_writers_on_one_task_lose_nothing() {
    let s = Server::start();
    let id = support::create_task_id(&s, "c");
    let p = format!("{TASKS}/{id}");
    std::thread::scope(|sc| {
        for i in 0..50 {
            let (s, p) = (&s, &p);
            sc.spawn(move || {
                let r = s.post(
                    &format!("{p}/output"),
                    json!({"output": format!("line {i}")}),
                );
                assert_eq!(r.status, 200);
                let r = s.patch(p, json!({"progress": i}));
                assert_eq!(r.status, 200);
                let r = s.post(
                    &format!("{p}/steps"),
                    json!({"description": format!("step {i}")}),
                );
                assert_eq!(r.status, 201);
            });
        }
    });
    let m = s.get(&p).json()["task"]["metadata"].clone();
    let out = m["output"].as_array().unwrap();
    assert_eq!(out.len(), 50);
    for i in 0..50 {
        assert!(out.contains(&json!(format!("line {i}"))), "line {i} lost");
    }
    assert_eq!(m["steps"].as_array().unwrap().len(), 50);
    let p = m["progress"].as_f64().unwrap();
    assert!((0.0..50.0).contains(&p));
}

#[test]
fn acknowledged_writes_survive_kill_9_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let a = support::create_task_id(&s, "a");
    let b = support::create_task_id(&s, "b");
    s.patch(
        &format!("{TASKS}/{a}"),
        json!({"status": "running", "progress": 30}),
    );
    s.post(&format!("{TASKS}/{a}/output"), json!({"output": "hello"}));
    let step = s
        .post(&format!("{TASKS}/{a}/steps"), json!({"description": "s1"}))
        .json()["stepId"]
        .clone();
    s.post(
        &format!("{TASKS}/{b}/result"),
        json!({"success": true, "summary": "ok"}),
    );
    s.crash();
    let s = Server::start_in(dir.path(), &[]);
    let m = s.get(&format!("{TASKS}/{a}")).json()["task"]["metadata"].clone();
    // Driven from outside through the API: it keeps its state.
    assert_eq!(m["status"], "running");
    assert_eq!(m["progress"], 30);
    assert_eq!(m["output"], json!(["hello"]));
    assert_eq!(m["steps"][0]["id"], step);
    let m = s.get(&format!("{TASKS}/{b}")).json()["task"]["metadata"].clone();
    assert_eq!(m["status"], "completed");
    assert_eq!(m["result"]["summary"], "ok");
    let ids: Vec<_> = s.get(TASKS).json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(b), json!(a)], "order survives restart");
}

#[test]
fn a_second_orchestra_on_the_same_state_dir_refuses() {
    let first = Server::start();
    let err = match Server::try_start_in(&first.state_dir, &[]) {
        Ok(_) => panic!("second server started"),
        Err(e) => e,
    };
    assert!(
        err.contains(&first.pid().to_string()),
        "names the first pid: {err}"
    );
}

#[test]
fn sigterm_exits_zero_and_removes_server_json() {
    let mut s = Server::start();
    let server_json = s.state_dir.join("server.json");
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(&server_json).unwrap()).unwrap();
    assert_eq!(info["url"], s.url.as_str());
    assert_eq!(info["pid"], s.pid());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&server_json)
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert_eq!(s.stop(), Some(0));
    assert!(!server_json.exists());
}

#[test]
fn host_check_and_token() {
    let s = Server::start();
    let r = s.raw("GET", "/api/status", None, &[("Host", "evil.example:80")]);
    assert_eq!(r.status, 403);
    assert!(r.json()["error"].is_string());
    for ok in ["localhost", "127.0.0.1:9", "[::1]:80"] {
        assert_eq!(
            s.raw("GET", "/api/status", None, &[("Host", ok)]).status,
            200,
            "{ok}"
        );
    }

    let t = Server::start_with(&["--token", "s3cret"]);
    let r = raw_request(&t.addr, "GET", "/api/status", None, &[]);
    assert_eq!(r.status, 401);
    assert!(r.json()["error"].is_string());
    let r = raw_request(
        &t.addr,
        "GET",
        "/api/status",
        None,
        &[("Authorization", "Bearer wrong")],
    );
    assert_eq!(r.status, 401);
    assert_eq!(t.get("/api/status").status, 200);
}

#[test]
fn non_loopback_bind_without_authentication_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(support::BIN)
        .args([
            "serve",
            "--addr",
            "0.0.0.0:0",
            "--insecure-no-auth",
            "--state-dir",
        ])
        .arg(dir.path())
        .env_remove("ORCHESTRA_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without authentication")
            && err.contains("loopback"),
        "{err}"
    );
}

#[test]
fn orchestrator_status_and_switches() {
    let s = Server::start_with(&["--max-concurrent", "3"]);
    let st = s.get("/api/status").json();
    assert_eq!(st["state"], "paused");
    let c = s.get("/api/coding-agents/status").json();
    assert_eq!(c["limits"]["maxConcurrent"], 3);
    assert!(c["tasks"]["byStatus"]["pending"].is_u64());
    assert!(c["version"].is_string());
    assert!(c["uptimeMs"].is_u64());
    let r = s.post_empty("/api/agent/resume").json();
    assert_eq!(r, json!({"ok": true, "status": "running"}));
    assert_eq!(s.get("/api/status").json()["state"], "running");
    assert_eq!(s.post_empty("/api/agent/pause").json()["status"], "paused");
    assert_eq!(s.post_empty("/api/agent/stop").json()["status"], "stopped");
    assert_eq!(s.post_empty("/api/agent/start").json()["status"], "paused");
    assert_eq!(s.get("/api/agent/start").status, 405);
}

#[test]
fn events_stream_one_event_per_change() {
    let s = Server::start();
    let mut events = support::Events::open(&s);
    let id = support::create_task_id(&s, "ev");
    s.patch(&format!("{TASKS}/{id}"), json!({"status": "running"}));
    s.patch(&format!("{TASKS}/{id}"), json!({"progress": 10}));
    s.post(&format!("{TASKS}/{id}/output"), json!({"output": "x"}));
    s.post(&format!("{TASKS}/{id}/steps"), json!({"description": "st"}));
    s.post_empty(&format!("{TASKS}/{id}/pause"));
    s.post_empty(&format!("{TASKS}/{id}/resume"));
    s.post(
        &format!("{TASKS}/{id}/result"),
        json!({"success": true, "summary": "y"}),
    );
    let want = [
        "task:created",
        "task:started",
        "task:progress",
        "task:output",
        "task:step",
        "task:paused",
        "task:resumed",
        "task:completed",
    ];
    let mut seen = Vec::new();
    while seen.len() < want.len() {
        let Some((name, data)) = events.next() else {
            break;
        };
        assert_eq!(data["taskId"], id.as_str(), "{data}");
        seen.push(name);
    }
    assert_eq!(seen, want);
}

/// The raw JSON of the one task in `{"task": …}` or `{"tasks": [ … ]}`, as sent.
fn the_one_task_as_sent<'a>(body: &'a str, field: &str) -> &'a str {
    let (open, close) = match field {
        "task" => ("{\"task\":", "}"),
        _ => ("{\"tasks\":[", "]}"),
    };
    body.strip_prefix(open)
        .and_then(|b| b.strip_suffix(close))
        .unwrap_or_else(|| panic!("not one {field}: {body}"))
}

/// The task as sent must be what encoding that task afresh gives, byte for byte.
fn encoded_afresh(raw: &str) -> orchestra_proto::task::Task {
    let task: orchestra_proto::task::Task = serde_json::from_str(raw).expect("a task");
    assert_eq!(serde_json::to_string(&task).unwrap(), raw);
    task
}

/// Each task version is encoded once and shared by every reader: the one read, the list,
/// the event stream, the answer to the change. A version read before a change must never
/// answer for the one after it.
#[test]
fn every_reader_gets_the_task_version_as_it_is_now() {
    let s = Server::start();
    let mut events = support::Events::open(&s);
    let id = support::create_task_id(&s, "versions");
    for round in 0..3 {
        // Read (and so encode) the version before the change, by each route.
        s.get(&format!("{TASKS}/{id}"));
        s.get(TASKS);
        let line = format!("line-{round}");
        let answer = s.post(&format!("{TASKS}/{id}/output"), json!({"output": line}));
        assert_eq!(answer.status, 200, "{}", answer.body);
        let one = s.get(&format!("{TASKS}/{id}"));
        let list = s.get(TASKS);
        for raw in [
            the_one_task_as_sent(&answer.body, "task"),
            the_one_task_as_sent(&one.body, "task"),
            the_one_task_as_sent(&list.body, "tasks"),
        ] {
            let task = encoded_afresh(raw);
            assert_eq!(task.metadata.output.len(), round + 1, "{raw}");
            assert_eq!(
                task.metadata.output.last().map(|l| &**l),
                Some(line.as_str()),
                "{raw}"
            );
        }
        // The event of this change carries this version.
        let event = loop {
            let (name, data) = events.next_text().expect("an event");
            if name == "task:output" {
                break data;
            }
        };
        let fields: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_str(&event).unwrap();
        let task = encoded_afresh(fields["task"].get());
        assert_eq!(
            task.metadata.output.last().map(|l| &**l),
            Some(line.as_str()),
            "{event}"
        );
        assert_eq!(
            fields["lines"].get(),
            serde_json::to_string(&[&line]).unwrap()
        );
    }
}

/// `?output=lines`: `task:output` events carry the task's id and the new lines only; a
/// reader that appends them to its copy, keeping the newest 2,000, has orchestra's output.
/// `?output=last`: only the newest of them. Every other event, and every event of a stream
/// without either, is as it always was.
#[test]
fn output_events_carry_only_the_new_lines_when_asked() {
    let s = Server::start();
    let mut light = support::Events::open_with(&s, "?output=lines");
    let mut newest = support::Events::open_with(&s, "?output=last");
    let mut whole = support::Events::open(&s);
    let id = support::create_task_id(&s, "light");
    let batch = |tag: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!("{tag}-{i}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Past the cap of kept lines: the oldest go.
    for (tag, n) in [("a", 1500), ("b", 700), ("c", 5)] {
        let r = s.post(
            &format!("{TASKS}/{id}/output"),
            json!({"output": batch(tag, n)}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let r = s.patch(&format!("{TASKS}/{id}"), json!({"progress": 40}));
    assert_eq!(r.status, 200, "{}", r.body);
    let want = s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"]["output"].clone();
    assert_eq!(want.as_array().map(Vec::len), Some(2000));
    assert_eq!(want[1999], "c-4");

    let mut copy: Vec<Value> = Vec::new();
    let mut outputs = 0;
    loop {
        let (name, data) = light.next().expect("an event");
        assert_eq!(data["taskId"], id.as_str(), "{data}");
        match name.as_str() {
            "task:created" => {
                copy = data["task"]["metadata"]["output"]
                    .as_array()
                    .unwrap()
                    .clone()
            }
            "task:output" => {
                let mut fields: Vec<&String> = data.as_object().unwrap().keys().collect();
                fields.sort();
                assert_eq!(fields, ["lines", "taskId", "type"], "{name}");
                copy.extend(data["lines"].as_array().unwrap().iter().cloned());
                let over = copy.len().saturating_sub(2000);
                copy.drain(..over);
                outputs += 1;
            }
            "task:progress" => {
                // Not output: the whole task, output lines and all.
                assert_eq!(data["task"]["metadata"]["output"], want);
                break;
            }
            other => panic!("unexpected {other}: {data}"),
        }
    }
    assert_eq!(outputs, 3);
    assert_eq!(Value::Array(copy), want);
    // The stream opened without asking: the whole task, and the lines, as before.
    let mut last_output = Value::Null;
    loop {
        let (name, data) = whole.next().expect("an event");
        match name.as_str() {
            "task:output" => {
                assert!(data["lines"].is_array(), "{data}");
                last_output = data["task"]["metadata"]["output"].clone();
            }
            "task:progress" => break,
            _ => {}
        }
    }
    assert_eq!(last_output, want);
    // `?output=last`: the newest line of each batch, nothing else.
    let mut sent = Vec::new();
    loop {
        let (name, data) = newest.next().expect("an event");
        match name.as_str() {
            "task:output" => {
                assert!(data.get("task").is_none(), "{data}");
                sent.push(data["lines"].clone());
            }
            "task:progress" => break,
            _ => {}
        }
    }
    assert_eq!(sent, [json!(["a-1499"]), json!(["b-699"]), json!(["c-4"])]);
}

/// A reader subscribes, then reads the tasks: output added between the two is in what it
/// read and in the stream. The first output event of a task it gets is whole (replaying it
/// is harmless); only later ones are lines, which would be repeated otherwise.
#[test]
fn light_output_starts_whole_for_a_task_made_before_subscribing() {
    let s = Server::start();
    let id = support::create_task_id(&s, "before");
    let post = |text: &str| {
        let r = s.post(&format!("{TASKS}/{id}/output"), json!({"output": text}));
        assert_eq!(r.status, 200, "{}", r.body);
    };
    let mut light = support::Events::open_with(&s, "?output=lines");
    post("between");
    let read = s.get(&format!("{TASKS}/{id}")).json()["task"].clone();
    assert_eq!(read["metadata"]["output"], json!(["between"]));
    post("after");

    // What a reader that applies the stream to what it read ends with: the whole task
    // replaces its copy, then the lines are appended.
    let (name, first) = light.next().expect("an event");
    assert_eq!(name, "task:output");
    assert_eq!(
        first["task"]["metadata"]["output"],
        json!(["between"]),
        "{first}"
    );
    let mut copy = first["task"]["metadata"]["output"]
        .as_array()
        .unwrap()
        .clone();
    let (name, second) = light.next().expect("an event");
    assert_eq!(name, "task:output");
    assert!(second.get("task").is_none(), "{second}");
    assert_eq!(second["lines"], json!(["after"]));
    copy.extend(second["lines"].as_array().unwrap().iter().cloned());
    assert_eq!(copy, [json!("between"), json!("after")]);
}

#[test]
fn an_unknown_output_form_is_refused() {
    let s = Server::start();
    for query in ["output=everything", "output=", "output=Lines"] {
        let r = s.get(&format!("/api/coding-agents/events?{query}"));
        assert_eq!(r.status, 400, "{query}: {}", r.body);
        let e = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(
            e.contains("output must be task, lines or last"),
            "{query}: {e}"
        );
    }
}

/// The event stream's head and first bytes come at once, as a comment, not with the first
/// event or keep-alive: a browser's `EventSource` is `open` (and a page reads the state)
/// only once the head has come, and on an idle orchestra the first keep-alive is 15 s away.
#[test]
fn the_event_stream_opens_with_a_comment_before_any_event() {
    let s = Server::start();
    let addr = s.url.trim_start_matches("http://").to_string();
    use std::io::{Read, Write};
    let mut sock = std::net::TcpStream::connect(&addr).expect("connect");
    sock.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .ok();
    let token = s.token.clone().unwrap_or_default();
    let request = format!(
        "GET /api/coding-agents/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    sock.write_all(request.as_bytes()).expect("write");
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    // Until the head and the body's first line (the first line after the head).
    while !String::from_utf8_lossy(&seen).contains("\r\n\r\n")
        || !String::from_utf8_lossy(&seen)
            .split("\r\n\r\n")
            .nth(1)
            .is_some_and(|body| body.contains(": "))
    {
        match sock.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&seen).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert!(body.contains(": orchestra events"), "{text}");
    assert!(
        !body.contains("keep-alive"),
        "the head waited for the keep-alive: {text}"
    );
}
