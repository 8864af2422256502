//! Browser pages of other sites cannot drive the API (cross-site requests), while the CLI,
//! curl and scripts, which send no `Origin`, keep working. Raw HTTP so every header is exactly
//! what a browser would send.

use crate::support;

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
        let r = s.raw("POST", TASKS, Some(body.as_bytes()), &[TEXT_PLAIN, origin]);
        assert_refused(&r);
    }
    let r = s.raw(
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
        let r = s.raw("POST", &start, Some(b""), &extra);
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
        let r = s.raw(method, path, None, &[EVIL]);
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
    let r = s.raw(
        "POST",
        TASKS,
        Some(body.as_bytes()),
        &[("Content-Type", "application/x-www-form-urlencoded")],
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["task"]["id"].as_str().expect("id").to_string();

    // The API's own page (same origin, as a browser marks it) may start it.
    let r = s.raw(
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

    let r = s.raw(
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
    let r = s.raw(
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
    let r = s.raw("OPTIONS", TASKS, None, &preflight);
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
    let r = s.raw("GET", TASKS, None, &[EVIL]);
    assert_refused(&r);
    assert_eq!(r.header("access-control-allow-origin"), None);
    let r = s.raw(
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
        let r = env.raw("GET", TASKS, None, &[("Origin", origin)]);
        assert_eq!(r.status, 200, "{origin}: {}", r.body);
    }
    let r = env.raw("GET", TASKS, None, &[EVIL]);
    assert_refused(&r);
}

// ---- Nobody but the owner gets in (issue 31, section 1) ----

/// The sentence every refused credential gets, whatever was asked for.
fn assert_unauthorized(r: &Response) {
    assert_eq!(r.status, 401, "{}", r.body);
    let error = r.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(error.contains("orchestra token"), "{error}");
}

#[test]
fn by_default_only_the_owners_token_opens_anything_and_says_nothing_else() {
    let s = Server::start();
    let token = s.token.clone().expect("a default server has a token");
    assert_eq!(token.len(), 64, "{token}");
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let body = exec_task_body(&marker);
    let task = create_task(&s, "mine", json!({}));
    let id = task["id"].as_str().expect("id");

    let wrong = bearer("0123456789abcdef0123456789abcdef");
    let wrong_headers = [("Authorization", wrong.as_str())];
    for headers in [&[][..], &wrong_headers[..]] {
        let post =
            |path: &str, body: Option<&[u8]>| raw_request(&s.addr, "POST", path, body, headers);
        assert_unauthorized(&post(TASKS, Some(body.as_bytes())));
        assert_unauthorized(&post(&format!("{TASKS}/{id}/start"), Some(b"")));
        assert_unauthorized(&post("/api/daemon/stop", None));
        // An id that exists and one that does not get the same answer, as does a route
        // that does not exist: nothing is said about what is there.
        let known = raw_request(&s.addr, "GET", &format!("{TASKS}/{id}"), None, headers);
        let unknown = raw_request(&s.addr, "GET", &format!("{TASKS}/no-such"), None, headers);
        let no_route = raw_request(&s.addr, "GET", "/api/nothing-here", None, headers);
        assert_unauthorized(&known);
        assert_eq!(known.body, unknown.body);
        assert_eq!(known.body, no_route.body);
        for path in [
            "/api/coding-agents/events",
            "/api/coding-agents/sessions",
            "/api/openapi.json",
        ] {
            assert_unauthorized(&raw_request(&s.addr, "GET", path, None, headers));
        }
        // The terminal stream's WebSocket upgrade too.
        let upgrade = [
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        let mut with = upgrade.to_vec();
        with.extend_from_slice(headers);
        let r = raw_request(
            &s.addr,
            "GET",
            "/api/coding-agents/sessions/x/stream",
            None,
            &with,
        );
        assert_unauthorized(&r);
    }
    // Nothing was created or run; the owner's token still works.
    assert_eq!(task_count(&s), 1);
    assert!(!marker.exists());
    assert_eq!(
        s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"]["status"],
        "pending"
    );
}

fn orchestra(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(BIN)
        .args(args)
        .env_remove("ORCHESTRA_TOKEN")
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_STATE_DIR")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run orchestra")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_token_is_the_state_directorys_own_kept_private_across_restarts_and_printed_by_orchestra_token()
 {
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().expect("tempdir");
    let state_arg = state.path().to_str().expect("utf-8");
    // Asked before any orchestra ran there: made now, and the first orchestra uses it.
    let before = orchestra(&["token", "--state-dir", state_arg], &[]);
    assert!(before.status.success(), "{}", text(&before.stderr));
    let printed = text(&before.stdout).trim().to_string();
    let mode = std::fs::metadata(state.path().join("token"))
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let mut s = Server::start_in(state.path(), &[]);
    assert_eq!(s.token.as_deref(), Some(printed.as_str()));
    assert_eq!(s.get(TASKS).status, 200);
    let running = orchestra(&["token", "--state-dir", state_arg], &[]);
    assert_eq!(text(&running.stdout).trim(), printed);
    assert_eq!(s.stop(), Some(0));
    let again = Server::start_in(state.path(), &[]);
    assert_eq!(again.token.as_deref(), Some(printed.as_str()), "kept");

    // The CLI finds it by itself; given the wrong one it is refused with the sentence.
    let ok = orchestra(&["status", "--state-dir", state_arg], &[]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let wrong = orchestra(
        &["status", "--url", &again.url],
        &[("ORCHESTRA_TOKEN", "wrong-wrong-wrong-wrong")],
    );
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong.stderr));
    assert!(
        text(&wrong.stderr).contains("orchestra token"),
        "{}",
        text(&wrong.stderr)
    );
    // A damaged token file stops orchestra with what to do, and changes nothing.
    drop(again);
    std::fs::write(state.path().join("token"), "two words\n").expect("write");
    let err = Server::try_start_in(state.path(), &[])
        .err()
        .expect("refused");
    assert!(
        err.contains("damaged") && err.contains("delete it"),
        "{err}"
    );
}

#[test]
fn another_account_on_the_machine_gets_nothing() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: needs root and setpriv to act as another account (nobody)");
        return;
    }
    let s = Server::start();
    let owner_token = s.token.clone().expect("token");
    // The binary where `nobody` may run it, wherever the repository was cloned.
    let place = tempfile::tempdir().expect("tempdir");
    let set_mode = |p: &Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    set_mode(place.path(), 0o755);
    let bin = place.path().join("orchestra");
    let copied = std::process::Command::new("cp")
        .arg(BIN)
        .arg(&bin)
        .status()
        .expect("cp");
    assert!(copied.success());
    set_mode(&bin, 0o755);
    let marker = place.path().join("pwned");
    let state = s.state_dir.to_str().expect("utf-8").to_string();
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("/usr/bin/setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&bin)
            .args(args)
            .env_clear()
            .env("HOME", "/nonexistent")
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run as nobody")
    };
    // The token cannot be read, nor server.json.
    let o = as_nobody(&["token", "--state-dir", &state]);
    assert!(!o.status.success());
    assert!(!text(&o.stdout).contains(&owner_token));
    assert!(
        text(&o.stderr).contains("ermission denied"),
        "{}",
        text(&o.stderr)
    );
    let o = as_nobody(&["task", "list", "--state-dir", &state]);
    assert!(!o.status.success(), "{}", text(&o.stdout));
    // Straight to the port: refused, nothing created or run.
    let command = format!("id > {}", marker.display());
    let o = as_nobody(&[
        "task",
        "add",
        "pwn",
        "--provider",
        "exec",
        "--description",
        &command,
        "--start",
        "--url",
        &s.url,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("orchestra token"),
        "{}",
        text(&o.stderr)
    );
    let o = as_nobody(&["stop", "--url", &s.url]);
    assert!(!o.status.success(), "{}", text(&o.stdout));
    assert_eq!(task_count(&s), 0);
    assert!(!marker.exists());
    assert_eq!(
        s.get("/api/coding-agents/status").status,
        200,
        "still running"
    );
}

#[test]
fn the_token_is_never_in_an_argument_list_a_log_or_an_agents_environment() {
    let s = Server::start_with(&["--config", "/dev/null"]);
    let token = s.token.clone().expect("token");
    let sid = spawn_session(
        &s,
        json!({"task": "env; echo listed", "providerId": "shell"}),
    );
    wait_screen(&s, &sid, "listed");
    let pids = session_pids(&sid);
    assert!(!pids.is_empty());
    // The agent has a credential of its own, not the owner's.
    for pid in &pids {
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        assert!(
            !text(&env).contains(&token),
            "pid {pid} has the owner's token"
        );
        assert!(text(&env).contains("ORCHESTRA_TOKEN="), "pid {pid}");
    }
    // No process shows it in its arguments (orchestra, its guard, the agents).
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            assert!(
                !text(&cmdline).contains(&token),
                "{:?} shows the token",
                entry.path()
            );
        }
    }
    let transcript = s.get(&format!("/api/coding-agents/sessions/{sid}/transcript"));
    assert_eq!(transcript.status, 200);
    assert!(!transcript.body.contains(&token), "in the transcript");
    // Refused requests are logged without it.
    raw_request(
        &s.addr,
        "GET",
        TASKS,
        None,
        &[("Authorization", "Bearer nope")],
    );
    drop(s.delete(&format!("/api/coding-agents/sessions/{sid}")));
    let logs = s.state_dir.join("logs");
    for entry in std::fs::read_dir(&logs).expect("logs").flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        assert!(!text.contains(&token), "{:?} holds the token", entry.path());
    }
}

#[test]
fn insecure_no_auth_is_loud_loopback_only_and_alone() {
    let s = Server::start_with(&["--insecure-no-auth"]);
    assert_eq!(s.token, None);
    let r = raw_request(&s.addr, "GET", TASKS, None, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let o = orchestra(
        &["token", "--state-dir", s.state_dir.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--insecure-no-auth"),
        "{}",
        text(&o.stderr)
    );
    // Its document says the token is optional.
    let doc = raw_request(&s.addr, "GET", "/api/openapi.json", None, &[]).json();
    assert_eq!(doc["security"], json!([{"bearer": []}, {}]));

    let state = tempfile::tempdir().expect("tempdir");
    let state_arg = state.path().to_str().expect("utf-8");
    let serve = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["serve", "--state-dir", state_arg];
        args.extend_from_slice(extra);
        orchestra(&args, env)
    };
    let o = serve(&["--addr", "0.0.0.0:0", "--insecure-no-auth"], &[]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("loopback"), "{}", text(&o.stderr));
    let o = serve(
        &["--addr", "127.0.0.1:0", "--insecure-no-auth"],
        &[("ORCHESTRA_TOKEN", "a-token-given-by-the-user")],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("pass one or the other"),
        "{}",
        text(&o.stderr)
    );
    // The warning is said where the user sees it.
    let mut child = std::process::Command::new(BIN)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--insecure-no-auth",
            "--state-dir",
        ])
        .arg(state.path())
        .env_remove("ORCHESTRA_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    std::io::BufRead::read_line(&mut out, &mut line).expect("listening line");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let done = child.wait_with_output().expect("wait");
    assert!(
        text(&done.stderr).contains("WARNING: --insecure-no-auth"),
        "{}",
        text(&done.stderr)
    );
}

// ---- An agent can act only on its own work (issue 31, section 2) ----

#[test]
fn an_agents_credential_reaches_its_own_task_and_session_only() {
    let s = Server::start();
    let (mine, sid, credential) = started_agent_task(&s, "mine", None);
    let other = create_task(&s, "other", json!({}));
    let other = other["id"].as_str().expect("id").to_string();
    let other_sid = spawn_session(&s, json!({"task": "", "providerId": "shell"}));
    assert_ne!(Some(&credential), s.token.as_ref());
    let auth = bearer(&credential);
    let as_agent = |method: &str, path: &str, body: Option<serde_json::Value>| {
        let b = body.map(|v| v.to_string());
        raw_request(
            &s.addr,
            method,
            path,
            b.as_deref().map(str::as_bytes),
            &[("Authorization", auth.as_str())],
        )
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let exec = json!({"name": "x", "description": format!("touch {}", marker.display()), "providerId": "exec"});
    let sessions = "/api/coding-agents/sessions";
    let forbidden: Vec<(&str, String, Option<serde_json::Value>)> = vec![
        ("GET", format!("{TASKS}/{other}"), None),
        (
            "PATCH",
            format!("{TASKS}/{other}"),
            Some(json!({"name": "taken"})),
        ),
        ("POST", format!("{TASKS}/{other}/start"), None),
        ("POST", format!("{TASKS}/{other}/merge"), None),
        ("POST", format!("{TASKS}/{other}/discard"), None),
        ("DELETE", format!("{TASKS}/{other}"), None),
        (
            "POST",
            format!("{TASKS}/{other}/result"),
            Some(json!({"success": true, "summary": "x"})),
        ),
        // An agent under safe hands out no command that runs without asking.
        ("POST", TASKS.to_string(), Some(exec)),
        ("POST", format!("{TASKS}/{mine}/cancel"), None),
        ("POST", "/api/daemon/stop".to_string(), None),
        ("POST", "/api/agent/resume".to_string(), None),
        ("GET", format!("{sessions}/{other_sid}/stream"), None),
        ("GET", format!("{sessions}/{other_sid}/transcript"), None),
        ("GET", format!("{sessions}/{sid}/transcript"), None),
        ("GET", format!("{sessions}/{other_sid}"), None),
        (
            "POST",
            format!("{sessions}/{other_sid}/messages"),
            Some(json!({"text": "rm -rf ~"})),
        ),
        ("DELETE", format!("{sessions}/{other_sid}"), None),
        (
            "POST",
            sessions.to_string(),
            Some(json!({"task": "", "providerId": "shell"})),
        ),
    ];
    for (method, path, body) in forbidden {
        let r = as_agent(method, &path, body);
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
        let error = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(
            error.contains("own task") || error.contains("only an agent under auto"),
            "{error}"
        );
    }
    // Nothing changed.
    let o = s.get(&format!("{TASKS}/{other}")).json()["task"].clone();
    assert_eq!(
        (o["name"].as_str(), o["metadata"]["status"].as_str()),
        (Some("other"), Some("pending"))
    );
    assert_eq!(task_count(&s), 2);
    assert!(!marker.exists());
    let st = s.get(&format!("{sessions}/{other_sid}")).json()["session"].clone();
    assert_eq!(st["ended"], false, "{st}");
    assert_eq!(s.get("/api/status").json()["state"], "paused");

    // What it may do works.
    let r = as_agent("GET", &format!("{TASKS}/{mine}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent("GET", TASKS, None);
    let ids: Vec<String> = r.json()["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids, vec![mine.clone()], "the list shows its own task only");
    let r = as_agent(
        "POST",
        &format!("{TASKS}/{mine}/steps"),
        Some(json!({"description": "a step"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let step = r.json()["stepId"].as_str().expect("step").to_string();
    let r = as_agent(
        "PATCH",
        &format!("{TASKS}/{mine}/steps/{step}"),
        Some(json!({"status": "completed"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent(
        "PATCH",
        &format!("{TASKS}/{mine}"),
        Some(json!({"progress": 40})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent(
        "POST",
        &format!("{TASKS}/{mine}/output"),
        Some(json!({"output": "half way"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent("GET", &format!("{sessions}/{sid}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let r = as_agent(
        "POST",
        &format!("{sessions}/{sid}/messages"),
        Some(json!({"text": "echo from-myself"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_screen(&s, &sid, "from-myself");

    // The CLI inside the agent needs no flag: it reports, and is refused the rest.
    let r = as_agent(
        "POST",
        &format!("{sessions}/{sid}/messages"),
        Some(
            json!({"text": "orchestra report step 'from the cli' && orchestra task list; orchestra stop; echo stop-exit=$?"}),
        ),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    wait_screen(&s, &sid, "stop-exit=1");
    let t = s.get(&format!("{TASKS}/{mine}")).json()["task"].clone();
    let steps: Vec<&str> = t["metadata"]["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|st| st["description"].as_str())
        .collect();
    assert_eq!(steps, vec!["a step", "from the cli"], "{t}");
    let screen = screen(&s, &sid);
    assert!(
        screen.contains("mine") && !screen.contains("other"),
        "{screen}"
    );
    assert_eq!(s.get("/api/status").status, 200, "orchestra still runs");

    // It dies with its session.
    let r = as_agent(
        "POST",
        &format!("{TASKS}/{mine}/result"),
        Some(json!({"success": true, "summary": "done"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(s.delete(&format!("{sessions}/{sid}")).status, 200);
    assert!(wait_until(std::time::Duration::from_secs(10), || {
        s.get(&format!("{sessions}/{sid}")).json()["session"]["ended"] == true
    }));
    assert_unauthorized(&as_agent("GET", &format!("{TASKS}/{mine}"), None));
    assert_unauthorized(&as_agent(
        "POST",
        &format!("{sessions}/{sid}/hook"),
        Some(json!({"event": "Stop"})),
    ));
}
