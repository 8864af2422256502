//! Checks decide completion: with a real `orchestra serve`, real git repositories and
//! worktrees, the `exec` and `shell` providers and the fake coding agent
//! (tests/fixtures/agents/fake), a task that carries checks is `completed` only once they
//! pass in its worktree, with the evidence in its result; a failure goes back to its agent
//! (an `auto` message) while attempts remain, then fails the task with its worktree kept. A
//! check past its time fails; a cancel while one runs ends its process group; two
//! completion triggers at once run the checks once; a repository's `[checks]` waits for the
//! user's trust; the CLI's `task add --check` carries them.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;

const API: &str = "/api/coding-agents";
const TASKS: &str = "/api/coding-agents/tasks";

fn id(t: &Value) -> String {
    t["id"].as_str().unwrap().to_string()
}

fn task(s: &Server, id: &str) -> Value {
    s.get(&format!("{TASKS}/{id}")).json()["task"].clone()
}

/// Creates a task from `body` and starts it; its id.
fn start_task(s: &Server, body: Value) -> String {
    let r = s.post(TASKS, body);
    assert_eq!(r.status, 201, "{}", r.body);
    let id = id(&r.json()["task"]);
    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    id
}

/// An `exec` task in its own worktree of `repo`, running `command`, with `extra` fields.
fn exec_task(s: &Server, repo: &Path, command: &str, extra: Value) -> String {
    let body = crate::git_worktrees::exec_body("checked", command, repo, extra);
    start_task(s, body)
}

/// The task's steps named `check: …`, as (description, status, output).
fn check_steps(t: &Value) -> Vec<(String, String, String)> {
    t["metadata"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["description"].as_str().unwrap().starts_with("check: "))
        .map(|s| {
            (
                s["description"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
                s["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Waits until the task has a step `check: COMMAND` running.
fn wait_check_running(s: &Server, id: &str, command: &str) -> Value {
    let mut last = Value::Null;
    let want = format!("check: {command}");
    let ok = wait_until(Duration::from_secs(20), || {
        last = task(s, id);
        check_steps(&last)
            .iter()
            .any(|(d, st, _)| *d == want && st == "running")
    });
    assert!(ok, "the check never ran: {last}");
    last
}

fn worktree_path(t: &Value) -> PathBuf {
    PathBuf::from(
        t["metadata"]["worktree"]["path"]
            .as_str()
            .expect("a worktree"),
    )
}

fn lines_in(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn passing_checks_complete_the_task_with_their_evidence() {
    let repo = git_repo();
    let s = Server::start();
    let id = exec_task(
        &s,
        repo.path(),
        "echo hello > hello.txt",
        json!({"checks": ["grep -qx hello hello.txt", "echo checked; echo to-stderr >&2"]}),
    );
    let t = wait_task_status(&s, &id, "completed");
    let m = &t["metadata"];
    assert_eq!(
        m["checks"],
        json!([
            "grep -qx hello hello.txt",
            "echo checked; echo to-stderr >&2"
        ])
    );
    let evidence = m["result"]["checks"].as_array().expect("evidence").clone();
    assert_eq!(evidence.len(), 2, "{t}");
    for e in &evidence {
        assert_eq!(e["exitCode"], 0, "{e}");
        assert!(e["durationMs"].as_u64().is_some(), "{e}");
        assert!(e.get("error").is_none(), "{e}");
    }
    assert_eq!(evidence[0]["command"], "grep -qx hello hello.txt");
    assert_eq!(evidence[1]["outputTail"], "checked\nto-stderr\n");
    assert!(m["result"]["success"].as_bool().unwrap());
    let steps = check_steps(&t);
    assert_eq!(steps.len(), 2, "{t}");
    for (_, status, output) in &steps {
        assert_eq!(status, "completed");
        assert!(output.starts_with("exited with code 0 after "), "{output}");
    }
    // They ran in the worktree, where the agent wrote its file.
    assert!(worktree_path(&t).join("hello.txt").exists());
}

#[test]
fn a_failing_check_of_an_agent_that_cannot_be_asked_again_fails_it_keeping_the_worktree() {
    let repo = git_repo();
    let s = Server::start();
    let check = "grep -qx hello hello.txt || { echo \"hello.txt says $(cat hello.txt)\"; exit 1; }";
    let id = exec_task(
        &s,
        repo.path(),
        "echo hi > hello.txt",
        json!({"checks": [check, "echo never"]}),
    );
    let t = wait_task_status(&s, &id, "failed");
    let m = &t["metadata"];
    let error = m["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("the check `{check}` failed (attempt 1 of 3)")),
        "{error}"
    );
    assert!(error.contains("cannot be asked to fix it"), "{error}");
    let evidence = m["result"]["checks"].as_array().unwrap();
    assert_eq!(evidence.len(), 1, "the rest is skipped: {t}");
    assert_eq!(evidence[0]["exitCode"], 1);
    assert_eq!(evidence[0]["outputTail"], "hello.txt says hi\n");
    assert!(!m["result"]["success"].as_bool().unwrap());
    let steps = check_steps(&t);
    assert_eq!(
        steps
            .iter()
            .map(|(_, st, _)| st.as_str())
            .collect::<Vec<_>>(),
        ["failed", "skipped"]
    );
    assert!(
        steps[0].2.starts_with("exited with code 1 after "),
        "{steps:?}"
    );
    // Its work is kept: the worktree is there, with the file.
    assert!(m["worktree"]["outcome"].is_null(), "{t}");
    let wt = worktree_path(&t);
    assert_eq!(
        std::fs::read_to_string(wt.join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
fn a_check_past_its_time_fails_saying_so() {
    let repo = git_repo();
    let s = Server::start();
    let id = exec_task(
        &s,
        repo.path(),
        "true",
        json!({"checks": ["sleep 30"], "checkTimeoutSeconds": 1, "maxAttempts": 1}),
    );
    let t = wait_task_status(&s, &id, "failed");
    let m = &t["metadata"];
    assert_eq!(
        m["error"], "the check `sleep 30` failed (attempt 1 of 1)",
        "{t}"
    );
    let e = &m["result"]["checks"][0];
    assert_eq!(e["error"], "ran longer than 1 s", "{e}");
    assert!(e.get("exitCode").is_none(), "{e}");
    assert!(e["durationMs"].as_u64().unwrap() >= 1000, "{e}");
}

#[test]
fn a_cancel_while_a_check_runs_ends_it_and_the_task_is_cancelled() {
    let repo = git_repo();
    let s = Server::start();
    let mark = format!("CHECK_MARK={}", uuid::Uuid::new_v4());
    let check = format!("{mark} sleep 30");
    let id = exec_task(&s, repo.path(), "true", json!({"checks": [check.clone()]}));
    wait_check_running(&s, &id, &check);
    assert!(
        wait_until(Duration::from_secs(10), || !pids_with_env(&mark).is_empty()),
        "the check's process never showed"
    );
    // A pause is refused while checks run.
    let r = s.post_empty(&format!("{TASKS}/{id}/pause"));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("its checks are running"), "{}", r.body);
    let r = s.post_empty(&format!("{TASKS}/{id}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    let t = wait_task_status(&s, &id, "cancelled");
    assert!(
        wait_until(Duration::from_secs(10), || pids_with_env(&mark).is_empty()),
        "the check's process outlived the cancel: {:?}",
        pids_with_env(&mark)
    );
    assert_eq!(check_steps(&t)[0].1, "cancelled", "{t}");
    // Nothing completes it afterwards.
    std::thread::sleep(Duration::from_millis(300));
    let t = task(&s, &id);
    assert_eq!(t["metadata"]["status"], "cancelled", "{t}");
    assert!(t["metadata"]["result"].is_null(), "{t}");
}

#[test]
fn cancelling_the_check_step_fails_the_task_saying_so() {
    let repo = git_repo();
    let s = Server::start();
    let id = exec_task(&s, repo.path(), "true", json!({"checks": ["sleep 30"]}));
    let t = wait_check_running(&s, &id, "sleep 30");
    let step = t["metadata"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["description"] == "check: sleep 30")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s.patch(
        &format!("{TASKS}/{id}/steps/{step}"),
        json!({"status": "cancelled"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let t = wait_task_status(&s, &id, "failed");
    assert_eq!(
        t["metadata"]["error"], "the check `sleep 30` was cancelled",
        "{t}"
    );
    assert_eq!(t["metadata"]["result"]["checks"][0]["error"], "cancelled");
}

#[test]
fn two_completion_triggers_at_once_run_the_checks_once() {
    let dir = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let count = marks.path().join("runs");
    let s = Server::start();
    let check = format!("echo ran >> {}; sleep 1", count.display());
    let id = start_task(
        &s,
        json!({"name": "two", "description": "", "providerId": "shell",
            "workingDirectory": dir.path(), "checks": [check]}),
    );
    let report = || {
        s.post(
            &format!("{TASKS}/{id}/result"),
            json!({"success": true, "summary": "done"}),
        )
    };
    let (a, b) = std::thread::scope(|sc| {
        let a = sc.spawn(report);
        let b = sc.spawn(report);
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut codes = [a.status, b.status];
    codes.sort();
    assert_eq!(codes, [200, 409], "{} / {}", a.body, b.body);
    let refused = if a.status == 409 { &a } else { &b };
    assert!(
        refused.body.contains("checks are running"),
        "{}",
        refused.body
    );
    let t = wait_task_status(&s, &id, "completed");
    assert_eq!(lines_in(&count), 1, "the checks ran more than once");
    assert_eq!(t["metadata"]["result"]["summary"], "done");
    assert_eq!(t["metadata"]["result"]["checks"][0]["exitCode"], 0);
    // A task with checks is not completed by hand.
    let id2 = start_task(
        &s,
        json!({"name": "by hand", "description": "", "providerId": "shell",
            "workingDirectory": dir.path(), "checks": ["true"]}),
    );
    let r = s.patch(&format!("{TASKS}/{id2}"), json!({"status": "completed"}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("only when they pass"), "{}", r.body);
    s.post_empty(&format!("{TASKS}/{id2}/cancel"));
}

/// A config with the fake coding agent (see tests/fixtures/agents/fake).
fn fake_config(dir: &Path) -> String {
    fake_agent_config(dir, &[]).to_string_lossy().into_owned()
}

/// The messages of the task's (current) session.
fn messages(s: &Server, t: &Value) -> Vec<Value> {
    let sid = t["metadata"]["sessionId"].as_str().unwrap();
    s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_failure_goes_back_to_the_agent_and_its_next_turn_runs_the_checks_again() {
    let d = tempfile::tempdir().unwrap();
    let repo = git_repo();
    let s = Server::start_with(&["--config", &fake_config(d.path())]);
    // Fails the first time (and makes it pass the next).
    let check = "test -e .ok || { touch .ok; echo not yet; false; }";
    let id = start_task(
        &s,
        json!({"name": "fix", "description": "hello", "providerId": "fake",
            "approval": "safe", "workingDirectory": repo.path(), "checks": [check]}),
    );
    let t = wait_task_status(&s, &id, "completed");
    let m = &t["metadata"];
    assert_eq!(m["checkAttempts"], 1, "{t}");
    assert_eq!(m["result"]["checks"][0]["exitCode"], 0, "{t}");
    let steps = check_steps(&t);
    assert_eq!(
        steps
            .iter()
            .map(|(_, st, _)| st.as_str())
            .collect::<Vec<_>>(),
        ["failed", "completed"]
    );
    let sent: Vec<Value> = messages(&s, &t)
        .into_iter()
        .filter(|m| m["role"] == "user" && m["auto"].is_string())
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0]["text"],
        format!("The check `{check}` failed: not yet. Fix it, then say you are done.")
    );
    assert!(
        sent[0]["auto"]
            .as_str()
            .unwrap()
            .contains("failed (attempt 1 of 3): sent back to the agent"),
        "{sent:?}"
    );
    // The agent got it as its next request, and its session stays open.
    assert!(
        messages(&s, &t)
            .iter()
            .any(|m| m["role"] == "agent" && m["text"].as_str().unwrap().contains("The check")),
        "{:?}",
        messages(&s, &t)
    );
    let sid = t["metadata"]["sessionId"].as_str().unwrap();
    assert_eq!(
        s.get(&format!("{API}/sessions/{sid}")).json()["session"]["ended"],
        false
    );
    s.post_empty(&format!("{TASKS}/{id}/cancel"));
}

#[test]
fn checks_that_keep_failing_fail_the_task_after_max_attempts() {
    let d = tempfile::tempdir().unwrap();
    let repo = git_repo();
    let marks = tempfile::tempdir().unwrap();
    let count = marks.path().join("runs");
    let s = Server::start_with(&["--config", &fake_config(d.path())]);
    let check = format!("echo run >> {}; echo still broken; false", count.display());
    let id = start_task(
        &s,
        json!({"name": "stuck", "description": "hello", "providerId": "fake",
            "approval": "safe", "workingDirectory": repo.path(), "checks": [check],
            "maxAttempts": 2}),
    );
    let t = wait_task_status(&s, &id, "failed");
    let m = &t["metadata"];
    assert_eq!(
        m["error"],
        format!("the check `{check}` failed (attempt 2 of 2)"),
        "{t}"
    );
    assert_eq!(lines_in(&count), 2, "exactly maxAttempts runs");
    assert_eq!(m["result"]["checks"][0]["exitCode"], 1);
    assert_eq!(m["result"]["checks"][0]["outputTail"], "still broken\n");
    assert!(m["worktree"]["outcome"].is_null(), "worktree kept: {t}");
    assert!(worktree_path(&t).exists());
    // Nothing runs them again.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(lines_in(&count), 2);
    s.post_empty(&format!("{TASKS}/{id}/cancel"));
}

#[test]
fn a_repositorys_checks_wait_for_trust_then_run() {
    let repo = git_repo();
    let root = repo.path().canonicalize().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let ran = marks.path().join("repo-check");
    let repo_check = format!("echo ran >> {}", ran.display());
    std::fs::write(
        root.join(".orchestra.toml"),
        format!("[checks]\ncommands = [{repo_check:?}, \"true\"]\nmax_attempts = 2\n"),
    )
    .unwrap();
    let s = Server::start();
    let id = exec_task(&s, &root, "true", json!({"checks": ["true"]}));
    let mut t = Value::Null;
    assert!(wait_until(Duration::from_secs(20), || {
        t = task(&s, &id);
        t["metadata"]["prompt"]["kind"] == "trust"
    }));
    let text = t["metadata"]["prompt"]["text"].as_str().unwrap();
    assert!(text.contains("check (sh -c"), "{text}");
    assert!(text.contains(&repo_check), "{text}");
    assert_eq!(
        t["metadata"]["trust"]["asks"],
        json!([{"kind": "check", "value": repo_check}, {"kind": "check", "value": "true"}])
    );
    assert_eq!(lines_in(&ran), 0, "nothing runs before trust");
    let r = s.post(&format!("{TASKS}/{id}/answer"), json!({"option": "1"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let t = wait_task_status(&s, &id, "completed");
    // The task's own first, then the repository's it does not have.
    assert_eq!(t["metadata"]["checks"], json!(["true", repo_check]));
    assert_eq!(t["metadata"]["maxAttempts"], 2);
    assert_eq!(
        t["metadata"]["result"]["checks"].as_array().unwrap().len(),
        2
    );
    assert_eq!(lines_in(&ran), 1);
}

#[test]
fn the_cli_adds_a_task_with_checks() {
    let repo = git_repo();
    let s = Server::start();
    let dir = repo.path().display().to_string();
    let (ok, out, err) = cli(
        &s,
        &[
            "task",
            "add",
            "cli-checked",
            "--provider",
            "exec",
            "--description",
            "echo hello > hello.txt",
            "--isolation",
            "worktree",
            "--dir",
            &dir,
            "--check",
            "grep -qx hello hello.txt",
            "--check",
            "echo two",
            "--max-attempts",
            "2",
            "--check-timeout",
            "60",
            "--start",
        ],
    );
    assert!(ok, "{out}{err}");
    let list = s.get(TASKS).json()["tasks"].clone();
    let t = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "cli-checked")
        .expect("the task")
        .clone();
    let m = &t["metadata"];
    assert_eq!(m["checks"], json!(["grep -qx hello hello.txt", "echo two"]));
    assert_eq!(m["maxAttempts"], 2);
    assert_eq!(m["checkTimeoutSeconds"], 60);
    let id = id(&t);
    wait_task_status(&s, &id, "completed");
    let (ok, out, err) = cli(&s, &["task", "show", &id]);
    assert!(ok, "{err}");
    assert!(out.contains("checks       2 (attempt 1 of 2)"), "{out}");
    assert!(
        out.contains("check      passed grep -qx hello hello.txt (exit 0,"),
        "{out}"
    );
    // Out of range: refused before anything is sent.
    let (ok, _, err) = cli(
        &s,
        &["task", "add", "x", "--max-attempts", "0", "--check", "true"],
    );
    assert!(!ok && err.contains("max-attempts"), "{err}");
}

// With a real coding-agent CLI through the scripted model (tests/it/support/model): the
// model's first file is wrong, the check's failure reaches it as its next prompt, it fixes
// the file, the checks pass. Skipped, saying so, when the CLI is not installed.

use crate::agents_e2e::{Places, WAIT, claude_env, claude_home, codex_home, run_with_config};
use crate::model::{Reply, Script, Turn};

/// What the task asks, and the check that proves it was done.
const HELLO_TASK: &str = "create hello.txt containing hello";
const HELLO_CHECK: &str = "grep -qx hello hello.txt";
/// What the message sent back to the agent starts with.
const SENT_BACK: &str = "The check `";

/// The CLI's own file-writing tool, and its inputs that write `hi` (wrong) and then fix it
/// to `hello`. Claude Code knows the file's state from its own write (no read first).
fn fix_tool(cli: &str) -> (&'static str, Value, Value) {
    match cli {
        "codex" => (
            "apply_patch",
            json!("*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"),
            json!("*** Begin Patch\n*** Update File: hello.txt\n@@\n-hi\n+hello\n*** End Patch\n"),
        ),
        _ => (
            "Write",
            json!({"file_path": "{cwd}/hello.txt", "content": "hi\n"}),
            json!({"file_path": "{cwd}/hello.txt", "content": "hello\n"}),
        ),
    }
}

/// The model's turns: on the task, write `hi` (wrong); on the check's failure, write
/// `hello`; after each write, say so.
fn fix_script(cli: &'static str) -> impl FnOnce(&Path) -> Script {
    let (tool, wrong, right) = fix_tool(cli);
    move |cwd| {
        Script::new(cwd)
            .turn(
                Turn::on_tool_result(SENT_BACK, Reply::text("Fixed hello.txt."))
                    .after(tool)
                    .offering(tool),
            )
            .turn(Turn::on_prompt(SENT_BACK, Reply::tool(tool, right)).offering(tool))
            .turn(
                Turn::on_tool_result(HELLO_TASK, Reply::text("Created hello.txt.")).offering(tool),
            )
            .turn(Turn::on_prompt(HELLO_TASK, Reply::tool(tool, wrong)).offering(tool))
            .fallback("Done.")
    }
}

#[test]
fn claude_2_1_332_fixes_what_its_check_found_and_completes_with_the_evidence() {
    fixes_what_its_check_found("claude", claude_home, claude_env, "/v1/messages");
}

#[test]
fn codex_0_171_0_fixes_what_its_check_found_and_completes_with_the_evidence() {
    fixes_what_its_check_found("codex", codex_home, |_| vec![], "/v1/responses");
}

/// The task writes the wrong file, its check fails, the failure reaches the model as its
/// next prompt, it fixes the file, the checks pass: completed, with the evidence.
fn fixes_what_its_check_found(
    cli: &'static str,
    home: fn(&Path, &Path, &str),
    env: fn(&str) -> Vec<(&'static str, String)>,
    model_path: &str,
) {
    let Some(r) = run_with_config(Places::new(), cli, fix_script(cli), home, env, "") else {
        return;
    };
    let id = start_task(
        &r.s,
        json!({"name": "hello", "description": HELLO_TASK, "providerId": cli,
            "approval": "auto", "workingDirectory": r.work.path(), "isolation": "none",
            "checks": [HELLO_CHECK]}),
    );
    let t = r.wait_final(&id);
    let ctx = r.context(&t);
    let m = &t["metadata"];
    assert_eq!(m["status"], "completed", "{cli}: {t}\n{ctx}");
    assert_eq!(m["checkAttempts"], 1, "{t}");
    let hello = std::fs::read_to_string(r.work.path().join("hello.txt")).unwrap_or_default();
    assert_eq!(hello, "hello\n", "{ctx}");
    let e = &m["result"]["checks"][0];
    assert_eq!(
        (e["command"].as_str(), e["exitCode"].as_i64()),
        (Some(HELLO_CHECK), Some(0))
    );
    assert_eq!(
        check_steps(&t)
            .iter()
            .map(|(_, st, _)| st.as_str())
            .collect::<Vec<_>>(),
        ["failed", "completed"]
    );
    // The failure reached the model as the agent's next prompt.
    let told = r.model.requests_to(model_path).iter().any(|q| {
        q.body
            .to_string()
            .contains("The check `grep -qx hello hello.txt` failed")
    });
    assert!(told, "{}", r.model.log());
    assert!(
        m["result"]["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("Fixed hello.txt."),
        "{t}"
    );
    r.s.post_empty(&format!("{TASKS}/{id}/cancel"));
}

#[test]
fn claude_2_1_332_whose_checks_keep_failing_fails_after_max_attempts_keeping_its_worktree() {
    let script = |cwd: &Path| Script::new(cwd).fallback("Done, all good.");
    let Some(r) = run_with_config(Places::new(), "claude", script, claude_home, claude_env, "")
    else {
        return;
    };
    let marks = tempfile::tempdir().unwrap();
    let count = marks.path().join("runs");
    let check = format!("echo run >> {}; test -e hello.txt", count.display());
    let id = start_task(
        &r.s,
        json!({"name": "stuck", "description": HELLO_TASK, "providerId": "claude",
            "approval": "auto", "workingDirectory": r.work.path(),
            "checks": [check], "maxAttempts": 2}),
    );
    let ok = wait_until(WAIT * 2, || {
        task(&r.s, &id)["metadata"]["status"] == "failed"
    });
    let t = task(&r.s, &id);
    assert!(ok, "{t}\n{}", r.context(&t));
    let m = &t["metadata"];
    assert_eq!(
        m["error"],
        format!("the check `{check}` failed (attempt 2 of 2)"),
        "{t}"
    );
    assert_eq!(lines_in(&count), 2);
    assert!(m["worktree"]["outcome"].is_null(), "{t}");
    assert!(worktree_path(&t).exists());
    let told = r
        .model
        .requests_to("/v1/messages")
        .iter()
        .any(|q| q.body.to_string().contains(SENT_BACK));
    assert!(told, "{}", r.model.log());
}
