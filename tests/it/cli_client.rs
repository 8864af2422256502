//! The `orchestra` CLI client (`task`, `session`, `report`, `status`) run as a real process
//! against a real `orchestra serve`.

use crate::support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use support::{BIN, Server, create_task, wait_until};

/// The token of this file's servers: the CLI is given it in its environment, as a user
/// attaching with `--url` gives it (`tests/it/api_security.rs` covers finding it by itself).
const TOKEN: &str = "cli-test-token-0123456789";

fn server() -> Server {
    Server::start_with(&["--token", TOKEN])
}

/// The CLI with none of the caller's orchestra environment but the servers' token, and a
/// home whose default state directory holds nothing (so discovery never finds a real
/// orchestra of the user).
fn cli(home: &Path, args: &[&str]) -> Command {
    let mut cmd = cli_without_token(home, args);
    cmd.env("ORCHESTRA_TOKEN", TOKEN);
    cmd
}

fn cli_without_token(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .env_remove("ORCHESTRA_TASK_ID")
        .env_remove("ORCHESTRA_STATE_DIR")
        .env_remove("ORCHESTRA_SESSION_ID")
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::null());
    cmd
}

fn run(mut cmd: Command) -> Output {
    cmd.output().expect("run the orchestra CLI")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

#[track_caller]
fn ok_json(o: &Output) -> Value {
    let text = ok(o);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `--url URL ARGS…`
fn with_url(s: &Server, home: &Path, args: &[&str]) -> Output {
    let mut cmd = cli(home, args);
    cmd.arg("--url").arg(&s.url);
    run(cmd)
}

fn task(s: &Server, id: &str) -> Value {
    let r = s.get(&format!("/api/coding-agents/tasks/{id}"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["task"].clone()
}

#[test]
fn task_add_list_show_over_url() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("sub")).unwrap();

    // --dir is made absolute against the client's working directory.
    let mut add = cli(
        home.path(),
        &[
            "task",
            "add",
            "Build it",
            "--dir",
            "sub",
            "--provider",
            "shell",
            "--json",
        ],
    );
    add.arg("--url").arg(&s.url).current_dir(work.path());
    let created = ok_json(&run(add));
    let t = &created["task"];
    let id = t["id"].as_str().unwrap().to_string();
    assert_eq!(t["name"], "Build it");
    assert_eq!(
        t["description"], "Build it",
        "description defaults to the name"
    );
    assert_eq!(t["metadata"]["status"], "pending");
    assert_eq!(t["metadata"]["providerId"], "shell");
    let want_dir = work.path().join("sub").canonicalize().unwrap();
    assert_eq!(
        t["metadata"]["workingDirectory"],
        json!(want_dir.to_str().unwrap())
    );

    // Human output of add: the short id and the name.
    let human = ok(&with_url(
        &s,
        home.path(),
        &["task", "add", "Second one", "--description", "echo hi"],
    ));
    assert!(
        human.contains("pending") && human.contains("Second one"),
        "{human}"
    );

    // The list, as JSON and as aligned columns.
    let list = ok_json(&with_url(&s, home.path(), &["task", "list", "--json"]));
    let tasks = list["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0]["name"], "Second one", "newest first");
    assert_eq!(tasks[1]["id"], json!(id));
    let table = ok(&with_url(&s, home.path(), &["task", "list"]));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[0].starts_with("ID ") && lines[0].contains("STATUS") && lines[0].contains("NAME"),
        "{table}"
    );
    let row = lines
        .iter()
        .find(|l| l.contains("Build it"))
        .expect("row for the task");
    assert!(row.starts_with(&id[..8]), "{table}");
    assert!(
        row.contains("pending") && row.contains("0%") && row.contains("shell"),
        "{table}"
    );
    let status_col = lines[0].find("STATUS").unwrap();
    assert!(
        lines[1..]
            .iter()
            .all(|l| l[status_col..].starts_with("pending")),
        "aligned:\n{table}"
    );

    // Filters.
    let none = ok_json(&with_url(
        &s,
        home.path(),
        &["task", "list", "--status", "running", "--json"],
    ));
    assert_eq!(none["tasks"].as_array().unwrap().len(), 0);
    let one = ok_json(&with_url(
        &s,
        home.path(),
        &["task", "list", "--limit", "1", "--json"],
    ));
    assert_eq!(one["tasks"].as_array().unwrap().len(), 1);

    // show: full id, and the 8-character prefix the list shows.
    let shown = ok_json(&with_url(&s, home.path(), &["task", "show", &id, "--json"]));
    assert_eq!(shown["task"]["id"], json!(id));
    let human = ok(&with_url(&s, home.path(), &["task", "show", &id[..8]]));
    assert!(
        human.contains(&id) && human.contains("Build it") && human.contains("pending"),
        "{human}"
    );
}

#[test]
fn discovery_through_server_json() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    create_task(&s, "found", json!({}));
    let state = s.state_dir.to_str().unwrap();

    let list = ok_json(&run(cli(
        home.path(),
        &["task", "list", "--state-dir", state, "--json"],
    )));
    assert_eq!(list["tasks"][0]["name"], "found");

    let mut env = cli(home.path(), &["task", "list", "--json"]);
    env.env("ORCHESTRA_STATE_DIR", &s.state_dir);
    assert_eq!(ok_json(&run(env))["tasks"][0]["name"], "found");

    // The default state directory ($XDG_DATA_HOME/orchestra) when nothing names one.
    let data = home.path().join("data").join("orchestra");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(s.state_dir.join("server.json"), data.join("server.json")).unwrap();
    assert_eq!(
        ok_json(&run(cli(home.path(), &["task", "list", "--json"])))["tasks"][0]["name"],
        "found"
    );

    // ORCHESTRA_URL wins over server.json; --url wins over ORCHESTRA_URL.
    let mut env = cli(
        home.path(),
        &["task", "list", "--state-dir", "/nonexistent", "--json"],
    );
    env.env("ORCHESTRA_URL", &s.url);
    assert_eq!(ok_json(&run(env))["tasks"][0]["name"], "found");
    let mut both = cli(home.path(), &["task", "list", "--json", "--url", &s.url]);
    both.env("ORCHESTRA_URL", "http://127.0.0.1:1");
    assert_eq!(ok_json(&run(both))["tasks"][0]["name"], "found");

    // status: a human summary and both answers as JSON.
    let human = ok(&run(cli(home.path(), &["status", "--state-dir", state])));
    assert!(human.contains(&s.url), "{human}");
    assert!(
        human.contains("autopilot off · 1 pending") && !human.contains("paused"),
        "{human}"
    );
    let st = ok_json(&run(cli(
        home.path(),
        &["status", "--state-dir", state, "--json"],
    )));
    assert_eq!(st["status"]["state"], "paused");
    assert!(st["codingAgents"].is_object(), "{st}");
}

#[test]
fn no_orchestra_running_is_exit_3() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let o = run(cli(
        home.path(),
        &[
            "task",
            "list",
            "--state-dir",
            empty.path().to_str().unwrap(),
        ],
    ));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let file = empty.path().join("server.json");
    assert!(
        err.starts_with("orchestra: no orchestra is running"),
        "{err}"
    );
    assert!(
        err.contains(file.to_str().unwrap()) && err.contains("--url"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // The same for every client command, report included.
    let mut report = cli(
        home.path(),
        &[
            "report",
            "progress",
            "5",
            "--state-dir",
            empty.path().to_str().unwrap(),
        ],
    );
    report.env("ORCHESTRA_TASK_ID", "some-task");
    assert_eq!(run(report).status.code(), Some(3));
    let status = run(cli(
        home.path(),
        &["status", "--state-dir", empty.path().to_str().unwrap()],
    ));
    assert_eq!(status.status.code(), Some(3));

    // A URL where nothing listens.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let o = run(cli(
        home.path(),
        &["status", "--url", &format!("http://127.0.0.1:{port}")],
    ));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot reach orchestra"),
        "{}",
        stderr(&o)
    );

    // A server.json left behind by an orchestra that was killed.
    let mut s = server();
    s.crash();
    let o = run(cli(
        home.path(),
        &["task", "list", "--state-dir", s.state_dir.to_str().unwrap()],
    ));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no orchestra is running"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn server_refusals_are_exit_1_with_the_servers_sentence() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(&s, "waiting", json!({}));
    let id = t["id"].as_str().unwrap();

    // What the server itself says about pausing a pending task.
    let other = create_task(&s, "other", json!({}));
    let direct = s.post_empty(&format!(
        "/api/coding-agents/tasks/{}/pause",
        other["id"].as_str().unwrap()
    ));
    assert_eq!(direct.status, 409);
    let sentence = direct.json()["error"]
        .as_str()
        .unwrap()
        .replace(other["id"].as_str().unwrap(), id);

    let o = with_url(&s, home.path(), &["task", "pause", id]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end(), format!("orchestra: {sentence}"));
    assert!(o.stdout.is_empty());
    assert_eq!(task(&s, id)["metadata"]["status"], "pending");

    let o = with_url(&s, home.path(), &["task", "show", "no-such-task"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("orchestra: "), "{}", stderr(&o));

    let o = with_url(
        &s,
        home.path(),
        &["task", "add", "x", "--dir", "/definitely/not/here"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let o = with_url(
        &s,
        home.path(),
        &["report", "--task", id, "progress", "150"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn usage_errors_are_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let o = run(cli(
        home.path(),
        &[
            "task",
            "list",
            "--status",
            "bogus",
            "--url",
            "http://127.0.0.1:1",
        ],
    ));
    assert_eq!(o.status.code(), Some(2));
    let o = run(cli(
        home.path(),
        &["report", "step", "x", "--url", "http://127.0.0.1:1"],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ORCHESTRA_TASK_ID"), "{}", stderr(&o));
    let o = run(cli(
        home.path(),
        &[
            "report",
            "result",
            "--summary",
            "s",
            "--task",
            "t",
            "--url",
            "http://127.0.0.1:1",
        ],
    ));
    assert_eq!(
        o.status.code(),
        Some(2),
        "--success or --failure is required"
    );
    let o = run(cli(
        home.path(),
        &[
            "report",
            "result",
            "--success",
            "--failure",
            "--summary",
            "s",
            "--task",
            "t",
        ],
    ));
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn exit_codes_are_documented_in_help() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["task", "--help"][..],
        &["report", "step", "--help"],
        &["session", "--help"],
        &["status", "--help"],
    ] {
        let help = ok(&run(cli(home.path(), args)));
        for needle in [
            "Exit codes",
            "3  cannot reach orchestra",
            "4  the server failed",
            "--url",
            "--json",
        ] {
            assert!(
                help.contains(needle),
                "{args:?} help lacks {needle:?}:\n{help}"
            );
        }
    }
}

#[test]
fn report_through_the_environment() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(&s, "reported", json!({}));
    let id = t["id"].as_str().unwrap().to_string();
    let report = |args: &[&str]| {
        let mut cmd = cli(home.path(), &[&["report"][..], args].concat());
        cmd.env("ORCHESTRA_URL", &s.url)
            .env("ORCHESTRA_TASK_ID", &id);
        cmd
    };

    let o = ok(&run(report(&["step", "Running tests"])));
    assert!(o.contains("running") && o.contains("Running tests"), "{o}");
    let steps = task(&s, &id)["metadata"]["steps"].clone();
    assert_eq!(steps.as_array().unwrap().len(), 1);
    assert_eq!(steps[0]["description"], "Running tests");
    assert_eq!(steps[0]["status"], "running");

    ok(&run(report(&["progress", "40"])));
    assert_eq!(task(&s, &id)["metadata"]["progress"], 40);
    let j = ok_json(&run(report(&["progress", "42.5", "--json"])));
    assert_eq!(j["task"]["metadata"]["progress"], 42.5);

    ok(&run(report(&["output", "first", "line"])));
    let mut piped = report(&["output", "-"]);
    piped
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = piped.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"second\nthird\n")
        .unwrap();
    ok(&child.wait_with_output().unwrap());
    assert_eq!(
        task(&s, &id)["metadata"]["output"],
        json!(["first line", "second", "third"])
    );

    // step-done finishes the newest running step, remembering nothing locally.
    ok(&run(report(&["step", "Lint"])));
    ok(&run(report(&["step-done", "--output", "no warnings"])));
    ok(&run(report(&["step-done", "--failed"])));
    let steps = task(&s, &id)["metadata"]["steps"].clone();
    assert_eq!(steps[0]["status"], "failed", "{steps}");
    assert_eq!(steps[1]["status"], "completed", "{steps}");
    assert_eq!(steps[1]["output"], "no warnings", "{steps}");
    let o = run(report(&["step-done"]));
    assert_eq!(o.status.code(), Some(1), "no running step left");
    assert!(stderr(&o).contains("no running step"), "{}", stderr(&o));

    let o = ok(&run(report(&[
        "result",
        "--success",
        "--summary",
        "All green",
        "--modified",
        "src/a.rs",
        "--modified",
        "src/b.rs",
        "--created",
        "src/c.rs",
    ])));
    assert!(o.contains("completed"), "{o}");
    let m = task(&s, &id)["metadata"].clone();
    assert_eq!(m["status"], "completed");
    assert_eq!(m["progress"], 100);
    assert_eq!(m["result"]["success"], true);
    assert_eq!(m["result"]["summary"], "All green");
    assert_eq!(
        m["result"]["filesModified"],
        json!(["src/a.rs", "src/b.rs"])
    );
    assert_eq!(m["result"]["filesCreated"], json!(["src/c.rs"]));

    // task show renders the steps and the result.
    let shown = ok(&with_url(&s, home.path(), &["task", "show", &id]));
    for needle in [
        "Running tests",
        "Lint",
        "no warnings",
        "success: All green",
        "src/b.rs",
        "second",
    ] {
        assert!(shown.contains(needle), "lacks {needle:?}:\n{shown}");
    }

    // A finished task refuses more: exit 1.
    assert_eq!(run(report(&["progress", "10"])).status.code(), Some(1));

    // --failure with an error, and --task instead of the environment.
    let t2 = create_task(&s, "broken", json!({}));
    let id2 = t2["id"].as_str().unwrap();
    ok(&with_url(
        &s,
        home.path(),
        &[
            "report",
            "--task",
            id2,
            "result",
            "--failure",
            "--summary",
            "Nope",
            "--error",
            "tests fail",
        ],
    ));
    let m = task(&s, id2)["metadata"].clone();
    assert_eq!(m["status"], "failed");
    assert_eq!(m["result"]["success"], false);
    assert_eq!(m["result"]["error"], "tests fail");
}

#[test]
fn lifecycle_commands() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(&s, "to cancel", json!({}));
    let id = t["id"].as_str().unwrap();

    let o = ok(&with_url(&s, home.path(), &["task", "cancel", &id[..8]]));
    assert!(o.contains("cancelled"), "{o}");
    assert_eq!(task(&s, id)["metadata"]["status"], "cancelled");

    let retried = ok_json(&with_url(&s, home.path(), &["task", "retry", id, "--json"]));
    let new = &retried["task"];
    assert_ne!(new["id"], json!(id));
    assert_eq!(new["metadata"]["status"], "pending");
    assert_eq!(new["metadata"]["retryOf"], json!(id));
    assert_eq!(new["name"], "to cancel");

    // Retry of a pending task is not allowed.
    let o = with_url(
        &s,
        home.path(),
        &["task", "retry", new["id"].as_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn token_servers() {
    let s = Server::start_with(&["--token", "s3cret"]);
    let home = tempfile::tempdir().unwrap();
    create_task(&s, "secret task", json!({}));

    // Without a token the server refuses: exit 1 with its sentence and a hint.
    let o = run({
        let mut c = cli_without_token(home.path(), &["task", "list"]);
        c.arg("--url").arg(&s.url);
        c
    });
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("token"), "{}", stderr(&o));

    let list = ok_json(&run(cli_without_token(
        home.path(),
        &[
            "task", "list", "--json", "--token", "s3cret", "--url", &s.url,
        ],
    )));
    assert_eq!(list["tasks"][0]["name"], "secret task");

    let mut env = cli_without_token(home.path(), &["task", "list", "--json", "--url", &s.url]);
    env.env("ORCHESTRA_TOKEN", "s3cret");
    assert_eq!(ok_json(&run(env))["tasks"][0]["name"], "secret task");

    // server.json carries the token.
    let state = s.state_dir.to_str().unwrap();
    let list = ok_json(&run(cli_without_token(
        home.path(),
        &["task", "list", "--json", "--state-dir", state],
    )));
    assert_eq!(list["tasks"][0]["name"], "secret task");
    // …also with --url naming that same server.
    let list = ok_json(&run(cli_without_token(
        home.path(),
        &[
            "task",
            "list",
            "--json",
            "--state-dir",
            state,
            "--url",
            &s.url,
        ],
    )));
    assert_eq!(list["tasks"][0]["name"], "secret task");

    // A wrong explicit token wins over server.json's and is refused.
    let o = run(cli_without_token(
        home.path(),
        &["task", "list", "--state-dir", state, "--token", "wrong"],
    ));
    assert_eq!(o.status.code(), Some(1));

    // report with the token from the environment, as a session gets it.
    let id = list["tasks"][0]["id"].as_str().unwrap();
    let mut report = cli_without_token(home.path(), &["report", "progress", "30"]);
    report
        .env("ORCHESTRA_URL", &s.url)
        .env("ORCHESTRA_TASK_ID", id)
        .env("ORCHESTRA_TOKEN", "s3cret");
    ok(&run(report));
    assert_eq!(task(&s, id)["metadata"]["progress"], 30);
}

/// A stand-in HTTP server (the real one never answers 5xx on purpose): one canned answer per
/// connection, to check how the client maps a server failure.
fn canned_server(status_line: &str, body: &str) -> String {
    let answer = format!(
        "HTTP/1.1 {status_line}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(answer.as_bytes());
        }
    });
    format!("http://{addr}")
}

#[test]
fn server_failures_are_exit_4() {
    let home = tempfile::tempdir().unwrap();
    let url = canned_server(
        "500 Internal Server Error",
        r#"{"error":"the store is broken"}"#,
    );
    let o = run(cli(home.path(), &["task", "list", "--url", &url]));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end(), "orchestra: the store is broken");

    let url = canned_server("200 OK", "hello");
    let o = run(cli(home.path(), &["task", "list", "--url", &url]));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("not JSON"), "{}", stderr(&o));
}

fn session_routes_exist(s: &Server) -> bool {
    s.get("/api/coding-agents/sessions").status == 200
}

#[test]
fn session_commands() {
    let s = server();
    assert!(
        session_routes_exist(&s),
        "GET /api/coding-agents/sessions is not served yet"
    );
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();

    let mut spawn = cli(
        home.path(),
        &[
            "session",
            "spawn",
            "echo cli-marker-$((6*7))",
            "--provider",
            "shell",
            "--dir",
            ".",
            "--cols",
            "100",
            "--rows",
            "30",
            "--json",
        ],
    );
    spawn.arg("--url").arg(&s.url).current_dir(work.path());
    let spawned = ok_json(&run(spawn));
    let sess = &spawned["session"];
    let id = sess["id"].as_str().expect("session id").to_string();
    assert_eq!(sess["providerId"], "shell");
    assert_eq!(sess["cols"], 100);
    assert_eq!(sess["rows"], 30);
    let want_dir = work.path().canonicalize().unwrap();
    assert_eq!(sess["workingDirectory"], json!(want_dir.to_str().unwrap()));

    let table = ok(&with_url(&s, home.path(), &["session", "list"]));
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&id[..8]) && l.contains("shell")),
        "{table}"
    );
    let list = ok_json(&with_url(&s, home.path(), &["session", "list", "--json"]));
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == json!(id))
    );

    let screen_has = |needle: &str| {
        wait_until(Duration::from_secs(10), || {
            let o = with_url(&s, home.path(), &["session", "peek", &id[..8]]);
            o.status.success() && stdout(&o).contains(needle)
        })
    };
    assert!(screen_has("cli-marker-42"), "the first line ran");

    // Flags go before the text: every word after the id is text.
    ok(&run(cli(
        home.path(),
        &[
            "session",
            "send",
            "--url",
            &s.url,
            &id,
            "echo",
            "sent-$((2+3))",
            "--json",
        ],
    )));
    assert!(screen_has("sent-5"), "send typed and submitted the text");

    // keys: type a command letter by letter, then enter.
    let mut keys = vec!["session", "keys", id.as_str()];
    // `echo z$?` prints `z0`, which the typed line itself does not contain.
    keys.extend(["e", "c", "h", "o", "space", "z", "$", "?", "enter"]);
    ok(&with_url(&s, home.path(), &keys));
    assert!(screen_has("z0"), "keys were pressed");
    ok(&with_url(
        &s,
        home.path(),
        &["session", "keys", &id, "ctrl-c"],
    ));

    let peek = ok_json(&with_url(
        &s,
        home.path(),
        &["session", "peek", &id, "--lines", "5", "--ansi", "--json"],
    ));
    assert!(peek["screen"].is_string(), "{peek}");
    assert!(peek["screenAnsi"].is_string(), "{peek}");

    let killed = ok_json(&with_url(
        &s,
        home.path(),
        &["session", "kill", &id, "--json"],
    ));
    assert_eq!(killed["session"]["ended"], true);
    let o = run(cli(
        home.path(),
        &["session", "send", "--url", &s.url, &id, "too late"],
    ));
    assert_eq!(o.status.code(), Some(1), "ended session: 409");
    ok(&with_url(&s, home.path(), &["session", "kill", &id]));

    let o = with_url(&s, home.path(), &["session", "peek", "no-such-session"]);
    assert_eq!(o.status.code(), Some(1));
}

/// Polls `task show --json` until the task's status is `want`; returns the task.
fn wait_status(s: &Server, id: &str, want: &str) -> Value {
    let mut last = Value::Null;
    let reached = wait_until(Duration::from_secs(15), || {
        last = task(s, id);
        last["metadata"]["status"] == want
    });
    assert!(reached, "task never became {want}: {last}");
    last
}

#[test]
fn tasks_started_from_the_cli_drive_their_session() {
    let s = server();
    let home = tempfile::tempdir().unwrap();

    // add --start: runs at once; the shell types the description and exits with it.
    let started = ok_json(&with_url(
        &s,
        home.path(),
        &[
            "task",
            "add",
            "quick",
            "--description",
            "exit 0",
            "--provider",
            "shell",
            "--start",
            "--json",
        ],
    ));
    let quick = started["task"]["id"].as_str().unwrap().to_string();
    assert!(
        started["task"]["metadata"]["sessionId"].is_string(),
        "{started}"
    );
    wait_status(&s, &quick, "completed");

    // start, pause, resume and cancel a long one, by its short id.
    let t = create_task(
        &s,
        "sleeper",
        json!({"description": "sleep 600", "providerId": "shell"}),
    );
    let id = t["id"].as_str().unwrap().to_string();
    let short = &id[..8];
    for (op, want) in [
        ("start", "running"),
        ("pause", "paused"),
        ("resume", "running"),
        ("cancel", "cancelled"),
    ] {
        let o = ok(&with_url(&s, home.path(), &["task", op, short]));
        assert!(o.contains(want), "{op}: {o}");
        if want != "cancelled" {
            assert_eq!(task(&s, &id)["metadata"]["status"], want, "after {op}");
        }
    }
    wait_status(&s, &id, "cancelled");

    // Starting a task that is not pending is refused.
    let o = with_url(&s, home.path(), &["task", "start", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn a_task_session_reports_through_the_cli() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    // The session gets ORCHESTRA_URL, ORCHESTRA_TASK_ID and the binary's directory on PATH.
    let script = "orchestra report step 'from inside' && orchestra report progress 50 \
        && orchestra report step-done --output fine \
        && orchestra report result --success --summary 'done inside' --created new.txt";
    let started = ok_json(&with_url(
        &s,
        home.path(),
        &[
            "task",
            "add",
            "inside",
            "--description",
            script,
            "--provider",
            "shell",
            "--start",
            "--json",
        ],
    ));
    let id = started["task"]["id"].as_str().unwrap().to_string();
    let t = wait_status(&s, &id, "completed");
    let m = &t["metadata"];
    assert_eq!(m["steps"][0]["description"], "from inside", "{t}");
    assert_eq!(m["steps"][0]["status"], "completed", "{t}");
    assert_eq!(m["steps"][0]["output"], "fine", "{t}");
    assert_eq!(m["result"]["success"], true, "{t}");
    assert_eq!(m["result"]["summary"], "done inside", "{t}");
    assert_eq!(m["result"]["filesCreated"], json!(["new.txt"]), "{t}");
}

#[test]
fn global_flags_go_before_or_after_the_subcommand() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(&s, "global", json!({}));
    let id = t["id"].as_str().unwrap();
    let state = s.state_dir.to_str().unwrap();

    let before = ok(&run(cli(home.path(), &["--url", &s.url, "status"])));
    assert!(before.contains(&s.url), "{before}");
    let list = ok_json(&run(cli(
        home.path(),
        &["--json", "--url", &s.url, "task", "list"],
    )));
    assert_eq!(list["tasks"][0]["id"], json!(id));
    let list = ok_json(&run(cli(
        home.path(),
        &["--state-dir", state, "task", "--json", "list"],
    )));
    assert_eq!(list["tasks"][0]["id"], json!(id));
    // A flag after the subcommand wins over the same flag before it.
    let o = ok(&run(cli(
        home.path(),
        &["--url", "http://127.0.0.1:1", "status", "--url", &s.url],
    )));
    assert!(o.contains(&s.url), "{o}");
    // Before or after the subcommand, the command line wins over the environment.
    for args in [
        &["--url", &s.url, "status"][..],
        &["status", "--url", &s.url],
    ] {
        let mut cmd = cli(home.path(), args);
        cmd.env("ORCHESTRA_URL", "http://127.0.0.1:1");
        assert!(ok(&run(cmd)).contains(&s.url), "{args:?}");
    }

    // Server flags are not the client's: refused where they would be ignored.
    for args in [
        &["--grace", "1", "status"][..],
        &["status", "--grace", "1"],
        &["--transcript-cap-mib", "1", "task", "list"],
        &["--grace", "1", "serve"],
        &["serve", "--url", "http://127.0.0.1:1"],
    ] {
        let mut cmd = cli(home.path(), args);
        cmd.arg("--state-dir").arg(home.path().join("unused"));
        let o = run(cmd);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    assert!(
        !home.path().join("unused").exists(),
        "no orchestra was started by a refused command line"
    );
}

#[test]
fn short_ids_work_for_report_too() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(&s, "short", json!({}));
    let id = t["id"].as_str().unwrap();
    let o = ok(&with_url(
        &s,
        home.path(),
        &["report", "--task", &id[..8], "progress", "40"],
    ));
    assert!(o.contains("40%"), "{o}");
    assert_eq!(task(&s, id)["metadata"]["progress"], 40);
    let mut env = cli(home.path(), &["report", "step", "from a prefix"]);
    env.env("ORCHESTRA_URL", &s.url)
        .env("ORCHESTRA_TASK_ID", &id[..8]);
    ok(&run(env));
    assert_eq!(
        task(&s, id)["metadata"]["steps"][0]["description"],
        "from a prefix"
    );
}

#[test]
fn each_help_lists_only_what_the_command_takes() {
    let home = tempfile::tempdir().unwrap();
    const SERVER_FLAGS: [&str; 6] = [
        "--grace",
        "--transcript-cap-mib",
        "--max-concurrent",
        "--max-sessions",
        "--addr",
        "--allow-host",
    ];
    for args in [
        &["task", "--help"][..],
        &["task", "add", "--help"],
        &["task", "delete", "--help"],
        &["session", "peek", "--help"],
        &["report", "step", "--help"],
        &["status", "--help"],
        &["completions", "--help"],
    ] {
        let help = ok(&run(cli(home.path(), args)));
        for flag in SERVER_FLAGS {
            assert!(!help.contains(flag), "{args:?} help lists {flag}:\n{help}");
        }
        assert!(help.contains("--state-dir"), "{args:?}:\n{help}");
    }
    let serve = ok(&run(cli(home.path(), &["serve", "--help"])));
    for flag in SERVER_FLAGS.iter().chain(&["--state-dir", "--token"]) {
        assert!(serve.contains(flag), "serve help lacks {flag}:\n{serve}");
    }
    for flag in ["--url", "--json"] {
        assert!(!serve.contains(flag), "serve help lists {flag}:\n{serve}");
    }
    // Without a subcommand orchestra is the TUI: its help lists the server's flags.
    let top = ok(&run(cli(home.path(), &["--help"])));
    assert!(top.contains("--grace") && top.contains("--url"), "{top}");
    assert!(!top.contains("__guard"), "{top}");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&run(cli(home.path(), &["completions", shell])));
        for name in ["task", "session", "report", "status", "serve", "transcript"] {
            assert!(script.contains(name), "{shell} completion lacks {name}");
        }
        assert!(
            !script.contains("__guard"),
            "{shell}: internal command offered"
        );
    }
    let script = ok(&run(cli(home.path(), &["completions", "bash"])));
    let file = home.path().join("orchestra.bash");
    std::fs::write(&file, script).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
    let o = run(cli(home.path(), &["completions", "tcsh"]));
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn man_pages_from_the_same_definitions() {
    let home = tempfile::tempdir().unwrap();
    let page = ok(&run(cli(home.path(), &["man"])));
    assert!(page.starts_with(".TH orchestra 1"), "{page}");
    assert!(
        page.contains("\\-\\-state\\-dir") && page.contains("task"),
        "{page}"
    );
    let dir = home.path().join("man1");
    ok(&run(cli(
        home.path(),
        &["man", "--dir", dir.to_str().unwrap()],
    )));
    for name in [
        "orchestra.1",
        "orchestra-task-add.1",
        "orchestra-session-peek.1",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.starts_with(".TH "), "{name}: {text}");
    }
}

/// The numbered lines `line-N` in a peek, in order.
fn numbered(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("line-")?.parse().ok())
        .collect()
}

#[test]
fn peek_lines_prints_exactly_the_last_lines() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let id = support::spawn_session(
        &s,
        json!({"providerId": "shell", "rows": 24, "cols": 80,
            "task": "for i in $(seq 1 60); do echo line-$i; done"}),
    );
    support::wait_screen(&s, &id, "line-60");
    // The prompt comes back after the loop: the terminal is settled.
    assert!(wait_until(Duration::from_secs(10), || {
        let p = ok(&with_url(
            &s,
            home.path(),
            &["session", "peek", &id, "--lines", "1"],
        ));
        !p.contains("line-60") && !p.trim().is_empty()
    }));
    for n in [1usize, 5, 30, 50] {
        let p = ok(&with_url(
            &s,
            home.path(),
            &["session", "peek", &id[..8], "--lines", &n.to_string()],
        ));
        assert_eq!(p.lines().count(), n, "--lines {n}:\n{p}");
        let nums = numbered(&p);
        if n > 1 {
            assert_eq!(nums.last(), Some(&60), "--lines {n}:\n{p}");
            // Consecutive, scrollback and screen joined without a gap or a repeat.
            assert!(
                nums.windows(2).all(|w| w[1] == w[0] + 1),
                "--lines {n}:\n{p}"
            );
            assert!(nums.len() >= n - 2, "--lines {n}:\n{p}");
        }
    }
    // --scrollback is the whole screen plus N lines above it.
    let p = ok(&with_url(
        &s,
        home.path(),
        &["session", "peek", &id, "--scrollback", "5"],
    ));
    let nums = numbered(&p);
    assert!(nums.len() > 5 && nums.last() == Some(&60), "{p}");
    let o = with_url(
        &s,
        home.path(),
        &["session", "peek", &id, "--lines", "3", "--ansi"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    ok(&with_url(&s, home.path(), &["session", "kill", &id]));

    // A full-screen program (alternate screen): its screen only, not the shell's lines under it.
    // (`alt-%s` keeps the typed command line from showing the marker itself.)
    let full = support::spawn_session(
        &s,
        json!({"providerId": "shell", "rows": 24, "cols": 80,
            "task": "for i in $(seq 1 60); do echo line-$i; done; printf '\\033[?1049h\\033[Halt-%s' screen; sleep 600"}),
    );
    support::wait_screen(&s, &full, "alt-screen");
    let p = ok(&with_url(
        &s,
        home.path(),
        &["session", "peek", &full, "--lines", "30"],
    ));
    assert_eq!(p.trim_end(), "alt-screen", "{p}");
    ok(&with_url(&s, home.path(), &["session", "kill", &full]));
}

#[test]
fn status_never_calls_running_work_paused() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(
        &s,
        "long",
        json!({"description": "sleep 600", "providerId": "shell"}),
    );
    create_task(&s, "waiting", json!({"providerId": "shell"}));
    let id = t["id"].as_str().unwrap();
    ok(&with_url(&s, home.path(), &["task", "start", id]));
    let text = ok(&with_url(&s, home.path(), &["status"]));
    assert!(
        text.contains("autopilot off · 1 running · 1 pending"),
        "{text}"
    );
    assert!(!text.contains("paused"), "{text}");
    let st = ok_json(&with_url(&s, home.path(), &["status", "--json"]));
    assert_eq!(st["status"]["state"], "paused", "the API's field is kept");
    ok(&with_url(&s, home.path(), &["task", "cancel", id]));
}

#[test]
fn a_503_with_a_reason_is_a_refusal() {
    let home = tempfile::tempdir().unwrap();
    let why = "provider 'claude' (Claude Code) is not installed: 'claude' was not found on PATH";
    let url = canned_server(
        "503 Service Unavailable",
        &json!({ "error": why }).to_string(),
    );
    let o = run(cli(home.path(), &["task", "list", "--url", &url]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end(), format!("orchestra: {why}"));
    // Not orchestra's answer (a proxy's page): the server failed.
    let url = canned_server("503 Service Unavailable", "<html>busy</html>");
    let o = run(cli(home.path(), &["task", "list", "--url", &url]));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
}

#[test]
fn add_start_succeeds_whoever_starts_the_task() {
    let s = Server::start_with(&["--token", TOKEN, "--max-concurrent", "16"]);
    let home = tempfile::tempdir().unwrap();
    assert_eq!(s.post_empty("/api/agent/resume").status, 200);
    let mut ids = Vec::new();
    let mut elsewhere = 0;
    for i in 0..8 {
        let o = with_url(
            &s,
            home.path(),
            &[
                "task",
                "add",
                &format!("race {i}"),
                "--description",
                "sleep 30",
                "--provider",
                "shell",
                "--start",
            ],
        );
        let text = ok(&o);
        if text.contains("started elsewhere") {
            elsewhere += 1;
        }
        let list = s.get("/api/coding-agents/tasks").json();
        ids.push(list["tasks"][0]["id"].as_str().unwrap().to_string());
    }
    // Autopilot wins some of these races; either way the CLI says the task started and exits
    // 0 (that only one session runs is the engine's claim, tested with the API).
    eprintln!("autopilot won {elsewhere} of 8 races");
    for id in &ids {
        let t = wait_status(&s, id, "running");
        assert!(t["metadata"]["sessionId"].is_string(), "{t}");
        ok(&with_url(&s, home.path(), &["task", "cancel", id]));
    }
}

#[test]
fn add_start_that_fails_otherwise_still_fails() {
    let s = Server::start_with(&["--token", TOKEN, "--max-sessions", "1"]);
    let home = tempfile::tempdir().unwrap();
    let busy = support::spawn_session(&s, json!({"providerId": "shell"}));
    let o = with_url(
        &s,
        home.path(),
        &["task", "add", "no room", "--provider", "shell", "--start"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("was created, but starting it failed"),
        "{}",
        stderr(&o)
    );
    ok(&with_url(&s, home.path(), &["session", "kill", &busy]));
}

#[test]
fn edit_rerun_and_delete_tasks() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let t = create_task(
        &s,
        "draft",
        json!({"description": "exit 3", "providerId": "exec"}),
    );
    let id = t["id"].as_str().unwrap().to_string();
    let short = &id[..8];

    // edit: pending only; at least one of --name/--description; a name is not empty.
    let o = ok(&with_url(
        &s,
        home.path(),
        &[
            "task",
            "edit",
            short,
            "--name",
            "final",
            "--description",
            "exit 0",
        ],
    ));
    assert!(o.contains("final"), "{o}");
    let now = task(&s, &id);
    assert_eq!(now["name"], "final");
    assert_eq!(now["description"], "exit 0");
    // Its settings too, each one that has a two-word name in the API included.
    ok(&with_url(
        &s,
        home.path(),
        &[
            "task",
            "edit",
            short,
            "--provider",
            "shell",
            "--approval",
            "manual",
        ],
    ));
    let now = task(&s, &id);
    assert_eq!(now["metadata"]["providerId"], "shell", "{now}");
    assert_eq!(now["metadata"]["approval"], "manual", "{now}");
    ok(&with_url(
        &s,
        home.path(),
        &["task", "edit", short, "--provider", "exec"],
    ));
    assert_eq!(task(&s, &id)["metadata"]["providerId"], "exec");
    let o = with_url(&s, home.path(), &["task", "edit", short]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = with_url(&s, home.path(), &["task", "edit", short, "--name", " "]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // delete: a pending task is refused and stays.
    let o = with_url(&s, home.path(), &["task", "delete", short]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(task(&s, &id)["name"], "final");

    ok(&with_url(&s, home.path(), &["task", "start", short]));
    wait_status(&s, &id, "completed");
    let o = with_url(&s, home.path(), &["task", "edit", short, "--name", "late"]);
    assert_eq!(o.status.code(), Some(1), "only a pending task is edited");

    // rerun (and retry, the same route) of a completed task: a new pending copy.
    for verb in ["rerun", "retry"] {
        let again = ok_json(&with_url(&s, home.path(), &["task", verb, short, "--json"]));
        let copy = &again["task"];
        assert_ne!(copy["id"], json!(id), "{again}");
        assert_eq!(copy["metadata"]["status"], "pending", "{again}");
        assert_eq!(copy["metadata"]["retryOf"], json!(id), "{again}");
        assert_eq!(copy["description"], "exit 0", "{again}");
    }

    // delete a finished task: gone from the API, kept in the trash, and the CLI says where.
    // Found through server.json, the CLI knows the state directory and names the full path.
    let o = ok(&run(cli(
        home.path(),
        &[
            "task",
            "delete",
            short,
            "--state-dir",
            s.state_dir.to_str().unwrap(),
        ],
    )));
    let kept = s.state_dir.join("trash").join(&id);
    assert!(o.contains(&kept.display().to_string()), "{o}");
    assert_eq!(s.get(&format!("/api/coding-agents/tasks/{id}")).status, 404);
    assert!(
        s.state_dir
            .join("trash")
            .join(&id)
            .join("task.json")
            .exists()
    );
    let o = with_url(&s, home.path(), &["task", "delete", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn session_transcript_and_delete() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let id = support::spawn_session(
        &s,
        json!({"providerId": "shell", "task": "printf 'raw-%s\\n' $((6*7))"}),
    );
    support::wait_screen(&s, &id, "raw-42");
    let short = &id[..8];

    let o = run(cli(
        home.path(),
        &["session", "transcript", short, "--url", &s.url],
    ));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(all.contains("raw-42"), "{all:?}");
    assert!(
        all.contains('\u{1b}') || all.contains('\r'),
        "raw bytes, as printed: {all:?}"
    );
    let o = run(cli(
        home.path(),
        &[
            "session",
            "transcript",
            short,
            "--bytes",
            "4",
            "--url",
            &s.url,
        ],
    ));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout.len(), 4, "{:?}", o.stdout);
    assert!(all.as_bytes().ends_with(&o.stdout), "the last bytes");

    // A live session is ended first; then its record goes and the transcript is kept.
    let o = with_url(&s, home.path(), &["session", "delete", short]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    ok(&with_url(&s, home.path(), &["session", "kill", short]));
    let o = ok(&with_url(&s, home.path(), &["session", "delete", short]));
    assert!(o.contains(&format!("trash/sessions/{id}")), "{o}");
    let list = ok_json(&with_url(&s, home.path(), &["session", "list", "--json"]));
    assert!(
        !list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == json!(id)),
        "{list}"
    );
    assert!(
        s.state_dir
            .join("trash")
            .join("sessions")
            .join(&id)
            .exists()
    );
    let o = with_url(&s, home.path(), &["session", "transcript", &id]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn a_provider_that_is_not_installed_is_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[[provider]]\nid = \"ghost\"\nname = \"Ghost\"\ncommand = \"orchestra-ghost-not-installed\"\nargs = [\"{task}\"]\n",
    )
    .unwrap();
    let s = Server::start_with(&["--token", TOKEN, "--config", config.to_str().unwrap()]);
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["session", "spawn", "boo", "--provider", "ghost"][..],
        &["task", "add", "boo", "--provider", "ghost", "--start"],
    ] {
        let o = with_url(&s, home.path(), args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("not installed"), "{args:?}: {err}");
        assert!(
            !err.contains("HTTP 503"),
            "the server's sentence, plainly: {err}"
        );
    }
}

#[test]
fn approval_presets_from_the_command_line() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let j = ok_json(&with_url(
        &s,
        home.path(),
        &[
            "task",
            "add",
            "t",
            "--provider",
            "shell",
            "--dir",
            dir,
            "--approval",
            "auto",
            "--json",
        ],
    ));
    assert_eq!(j["task"]["metadata"]["approval"], "auto", "{j}");
    // An unknown preset is a usage error naming the presets; nothing reaches orchestra.
    let o = with_url(
        &s,
        home.path(),
        &[
            "task",
            "add",
            "u",
            "--provider",
            "shell",
            "--approval",
            "yolo",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown approval \"yolo\": use manual, safe or auto"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        s.get("/api/coding-agents/tasks").json()["tasks"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let j = ok_json(&with_url(
        &s,
        home.path(),
        &[
            "session",
            "spawn",
            "--provider",
            "shell",
            "--dir",
            dir,
            "--approval",
            "manual",
            "--json",
        ],
    ));
    assert_eq!(j["session"]["approval"], "manual", "{j}");
    let id = j["sessionId"].as_str().unwrap().to_string();
    ok(&with_url(&s, home.path(), &["session", "kill", &id]));
}

#[test]
fn an_answer_of_the_wrong_shape_names_what_was_expected() {
    let home = tempfile::tempdir().unwrap();
    let url = canned_server("200 OK", r#"{"tasks": 3}"#);
    let o = run(cli(home.path(), &["task", "list", "--url", &url]));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "answered 200 with something that is not the task list (`{tasks}`): invalid type: integer `3`"
        ),
        "{e}"
    );
    let url = canned_server("200 OK", r#"{"state": "paused"}"#);
    let o = run(cli(home.path(), &["status", "--url", &url]));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("orchestra's status") && e.contains("missing field `autopilot`"),
        "{e}"
    );
}

#[test]
fn task_add_says_whether_the_agent_delegates() {
    let s = server();
    let home = tempfile::tempdir().unwrap();
    let delegate = |flags: &[&str]| {
        let mut args = vec!["task", "add", "d", "--provider", "shell", "--json"];
        args.extend_from_slice(flags);
        let t = ok_json(&with_url(&s, home.path(), &args))["task"].clone();
        // (`false` is left out of the task's JSON.)
        t["metadata"]["delegate"].as_bool().unwrap_or(false)
    };
    assert!(delegate(&["--delegate"]));
    // Neither flag: the provider's setting (shell's: no).
    assert!(!delegate(&[]));
    // The last of the two wins.
    assert!(!delegate(&["--delegate", "--no-delegate"]));
    assert!(delegate(&["--no-delegate", "--delegate"]));
}
