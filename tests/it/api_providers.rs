//! A known provider whose program is not installed: refused with one message (what was
//! looked for, how to install it) when a task is created or started and when a session is
//! spawned; skipped, not failed, by the autopilot; and every provider says how to install it.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const SESSIONS: &str = "/api/coding-agents/sessions";

const GHOST_MESSAGE: &str = "provider 'ghost' (Ghost Agent) is not installed: 'ghost-agent-not-installed' was not found on PATH; install it with: pipx install ghost-agent";

/// A config with `ghost` (never installed) and `later` (a script in `dir` that a test can
/// remove to uninstall it).
fn config(dir: &Path) -> (PathBuf, PathBuf) {
    let later = dir.join("later-agent");
    std::fs::write(&later, "#!/bin/sh\necho later-ran\n").unwrap();
    std::fs::set_permissions(&later, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[[provider]]
id = "ghost"
name = "Ghost Agent"
command = "ghost-agent-not-installed"
coding_agent = true
install = "pipx install ghost-agent"

[[provider]]
id = "later"
name = "Later Agent"
command = "{}"
deliver = "arg"
args = ["{{task}}"]
"#,
            later.display()
        ),
    )
    .unwrap();
    (path, later)
}

fn error_of(r: &Response) -> String {
    r.json()["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn providers_say_how_to_install_them() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, _) = config(dir.path());
    let s = Server::start_with(&["--config", cfg.to_str().unwrap()]);
    let r = s.get("/api/coding-agents/providers");
    assert_eq!(r.status, 200);
    let providers = r.json()["providers"].as_array().unwrap().clone();
    let by_id = |id: &str| -> Value {
        providers
            .iter()
            .find(|p| p["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id}"))
    };
    for p in &providers {
        assert!(p["install"].as_str().is_some_and(|i| !i.is_empty()), "{p}");
    }
    assert_eq!(
        by_id("claude")["install"],
        "npm install -g @anthropic-ai/claude-code"
    );
    assert_eq!(
        by_id("aider")["install"],
        "python3 -m pip install aider-chat"
    );
    assert_eq!(by_id("ghost")["installed"], false);
    assert_eq!(by_id("ghost")["install"], "pipx install ghost-agent");
}

#[test]
fn creating_or_spawning_with_a_missing_provider_is_503_with_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, _) = config(dir.path());
    let s = Server::start_with(&["--config", cfg.to_str().unwrap()]);
    let r = s.post(
        TASKS,
        json!({"name": "g", "description": "fix it", "providerId": "ghost"}),
    );
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(error_of(&r), GHOST_MESSAGE);
    assert_eq!(s.get(TASKS).json()["tasks"], json!([]));

    let r = s.post(SESSIONS, json!({"task": "fix it", "providerId": "ghost"}));
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(error_of(&r), GHOST_MESSAGE);
    assert_eq!(s.get(SESSIONS).json()["sessions"], json!([]));

    // Bad input is still a 400 first.
    let r = s.post(TASKS, json!({"name": "", "providerId": "ghost"}));
    assert_eq!(r.status, 400, "{}", r.body);
}

#[test]
fn starting_a_task_whose_provider_went_missing_is_503_and_leaves_it_pending() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, later) = config(dir.path());
    let s = Server::start_with(&["--config", cfg.to_str().unwrap()]);
    let id = create_task(&s, "later", json!({"providerId": "later"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(&later).unwrap();
    // Where a program is may be remembered for a few seconds; until then the spawn itself
    // fails (also 503). Either way nothing starts and the task stays pending.
    let mut last = String::new();
    let refused = wait_until(Duration::from_secs(15), || {
        let r = s.post_empty(&format!("{TASKS}/{id}/start"));
        assert_eq!(r.status, 503, "{}", r.body);
        last = error_of(&r);
        last.contains("is not installed")
    });
    assert!(refused, "{last}");
    assert_eq!(
        last,
        format!(
            "provider 'later' (Later Agent) is not installed: '{}' does not exist or is not executable; install `{}` and make sure it is on PATH (or set this provider's `command` in the config file)",
            later.display(),
            later.display()
        )
    );
    let t = s.get(&format!("{TASKS}/{id}")).json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "pending");
    assert!(t["metadata"].get("error").is_none(), "{t}");
    assert!(t["metadata"].get("sessionId").is_none(), "{t}");
}

#[test]
fn autopilot_skips_a_task_whose_provider_is_missing_without_failing_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, later) = config(dir.path());
    let s = Server::start_with(&["--config", cfg.to_str().unwrap()]);
    let stuck = create_task(&s, "stuck", json!({"providerId": "later"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(&later).unwrap();
    let log = s.state_dir.join("logs/orchestra.log");
    let skips = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("autopilot leaves a task pending") && l.contains(&stuck))
            .count()
    };
    // Until the forgotten location expires the spawn fails instead; both are skips.
    assert_eq!(s.post_empty("/api/agent/resume").status, 200);
    assert!(wait_until(Duration::from_secs(10), || skips() == 1));

    // Newer tasks still run past it, and each pass skips it again without a word.
    for i in 0..3 {
        let r = s.post(
            TASKS,
            json!({"name": format!("after-{i}"), "description": format!("echo after-{i}"), "providerId": "exec"}),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let id = r.json()["task"]["id"].as_str().unwrap().to_string();
        wait_task_status(&s, &id, "completed");
    }
    let t = s.get(&format!("{TASKS}/{stuck}")).json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "pending", "{t}");
    assert!(t["metadata"].get("error").is_none(), "{t}");
    assert_eq!(skips(), 1, "logged more than once");

    // Installed again: the autopilot, looking again now and then, runs it.
    let tmp = later.with_extension("tmp");
    std::fs::write(&tmp, "#!/bin/sh\necho later-ran\n").unwrap();
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&tmp, &later).unwrap();
    let mut last = Value::Null;
    let ran = wait_until(Duration::from_secs(40), || {
        last = s.get(&format!("{TASKS}/{stuck}")).json()["task"].clone();
        last["metadata"]["status"] == "completed"
    });
    assert!(ran, "never ran once installed: {last}");
}
