//! The real coding-agent CLIs, offline, as sessions through the API: each with a fresh temp
//! HOME, from the tools directory `scripts/install-agent-clis` fills
//! (`${ORCHESTRA_TOOLS_DIR:-$HOME/.cache/orchestra-tools}/bin`). A CLI that is not installed
//! is skipped, saying so.
//!
//! With `ORCHESTRA_RECORD_FIXTURES=1` each screen a test reaches is saved as
//! `tests/fixtures/agents/<cli>/<state>.txt` (what `peek` shows: orchestra's PTY and vt100);
//! `tests/it/agents_fixtures.rs` checks the classifier against every one of them.

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use support::*;

const API: &str = "/api/coding-agents";
const WAIT: Duration = Duration::from_secs(90);

struct Live {
    s: Server,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    cli: &'static str,
    _guard: std::sync::MutexGuard<'static, ()>,
}

/// A server whose sessions find the CLI on PATH and start from a fresh HOME; `None` (with the
/// reason printed) when the CLI is not installed.
fn live(cli: &'static str, setup: impl FnOnce(&Path, &Path), env: &[(&str, &str)]) -> Option<Live> {
    let bin = tools_bin();
    if !bin.join(cli).exists() {
        eprintln!(
            "SKIP: {cli} is not installed in {} (run scripts/install-agent-clis)",
            bin.display()
        );
        return None;
    }
    let guard = support::REAL_CLIS.lock().unwrap_or_else(|p| p.into_inner());
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    setup(home.path(), work.path());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home_s = home.path().to_string_lossy().into_owned();
    let mut all: Vec<(&str, &str)> = vec![("HOME", &home_s), ("PATH", &path)];
    all.extend_from_slice(env);
    let s = Server::start_with_env(&[], &all);
    Some(Live {
        s,
        home,
        work,
        cli,
        _guard: guard,
    })
}

impl Live {
    fn spawn(&self, approval: &str) -> String {
        spawn_session(
            &self.s,
            json!({"providerId": self.cli, "task": "", "approval": approval,
                   "workingDirectory": self.work.path(), "cols": 120, "rows": 40}),
        )
    }

    fn session(&self, id: &str) -> Value {
        self.s.get(&format!("{API}/sessions/{id}")).json()["session"].clone()
    }

    /// Waits for the status (and, if given, text on the screen); panics with the screen.
    fn wait(&self, id: &str, status: &str, text: Option<&str>) -> Value {
        let mut last = Value::Null;
        let mut scr = String::new();
        let ok = wait_until(WAIT, || {
            last = self.session(id);
            scr = screen(&self.s, id);
            last["status"] == status && text.is_none_or(|t| scr.contains(t))
        });
        assert!(
            ok,
            "{}: never {status} {text:?}: {last}\nscreen:\n{scr}",
            self.cli
        );
        last
    }

    /// Waits until it is blocked on a prompt of this kind; returns the session.
    fn wait_prompt(&self, id: &str, kind: &str) -> Value {
        let mut last = Value::Null;
        let ok = wait_until(WAIT, || {
            last = self.session(id);
            last["status"] == "blocked" && last["prompt"]["kind"] == kind
        });
        assert!(
            ok,
            "{}: never blocked on {kind}: {last}\nscreen:\n{}",
            self.cli,
            screen(&self.s, id)
        );
        last
    }

    /// Saves the screen as a fixture when recording.
    fn record(&self, id: &str, state: &str) {
        if std::env::var("ORCHESTRA_RECORD_FIXTURES").as_deref() != Ok("1") {
            return;
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(self.cli);
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = screen(&self.s, id)
            .replace(
                &self.work.path().to_string_lossy().into_owned(),
                "/tmp/work",
            )
            .replace(
                &self.home.path().to_string_lossy().into_owned(),
                "/tmp/home",
            );
        text = text
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(
            dir.join(format!("{state}.txt")),
            text.trim_end().to_string() + "\n",
        )
        .unwrap();
    }

    /// Answers; a CLI that redraws while it waits may be `busy` for a moment: retried.
    fn answer(&self, id: &str, option: &str) {
        let mut last = None;
        wait_until(Duration::from_secs(20), || {
            let r = self.s.post(
                &format!("{API}/sessions/{id}/answer"),
                json!({"option": option}),
            );
            let done = r.status != 409;
            last = Some(r);
            done
        });
        let r = last.unwrap();
        assert_eq!(r.status, 200, "{}: answer {option}: {}", self.cli, r.body);
    }

    fn option_key(&self, prompt: &Value, label_start: &str) -> String {
        prompt["options"]
            .as_array()
            .and_then(|o| {
                o.iter().find(|o| {
                    o["label"]
                        .as_str()
                        .is_some_and(|l| l.starts_with(label_start))
                })
            })
            .and_then(|o| o["key"].as_str())
            .unwrap_or_else(|| panic!("no option {label_start:?} in {prompt}"))
            .to_string()
    }

    fn messages(&self, id: &str) -> Vec<Value> {
        self.s.get(&format!("{API}/sessions/{id}/messages")).json()["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

fn claude_onboarded(home: &Path, _: &Path) {
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding": true}"#,
    )
    .unwrap();
}

#[test]
fn providers_report_installed_version_and_path() {
    let Some(l) = live("claude", |_, _| {}, &[]) else {
        return;
    };
    let r = l.s.get(&format!("{API}/providers")).json();
    let list = r["providers"].as_array().unwrap().clone();
    for cli in ["claude", "codex", "gemini", "opencode", "aider"] {
        let p = list.iter().find(|p| p["id"] == cli).unwrap();
        if tools_bin().join(cli).exists() {
            assert_eq!(p["installed"], true, "{p}");
            assert!(p["path"].as_str().unwrap().contains(cli), "{p}");
            let v = p["version"]
                .as_str()
                .unwrap_or_else(|| panic!("no version: {p}"));
            assert!(v.chars().next().unwrap().is_ascii_digit(), "{p}");
        }
    }
}

#[test]
fn claude_fresh_home_exits_offline() {
    let Some(l) = live("claude", |_, _| {}, &[]) else {
        return;
    };
    let id = l.spawn("safe");
    let s = l.wait(id.as_str(), "exited", None);
    assert_eq!(s["ended"], true);
    l.record(&id, "offline-exit");
    assert!(screen(&l.s, &id).contains("Unable to connect to Anthropic services"));
}

#[test]
fn claude_trust_prompt_then_its_input_prompt() {
    let Some(l) = live("claude", claude_onboarded, &[]) else {
        return;
    };
    let id = l.spawn("manual");
    let s = l.wait(&id, "blocked", Some("trust"));
    l.record(&id, "trust");
    assert_eq!(s["prompt"]["kind"], "trust", "{s}");
    let yes = l.option_key(&s["prompt"], "Yes, I trust this folder");
    l.answer(&id, &yes);
    let s = l.wait(&id, "ready", Some("❯"));
    assert!(s.get("prompt").is_none(), "{s}");
    l.record(&id, "ready");
    // A message gets a reply (offline: not logged in), without the input box and status line.
    let r = l.s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "say hi"}),
    );
    assert_eq!(r.status, 201);
    // The 201 says accepted, not typed: wait for the reply itself (its status line says
    // "/login" from the start), then for the turn's end.
    l.wait(&id, "ready", Some("Please run /login"));
    l.record(&id, "not-logged-in");
    let reply_to_send = || {
        let ms = l.messages(&id);
        let sent = ms.iter().position(|m| m["text"] == "say hi")?;
        ms[sent..].iter().find(|m| m["role"] == "agent").cloned()
    };
    let ok = wait_until(Duration::from_secs(20), || reply_to_send().is_some());
    assert!(ok, "{:?}", l.messages(&id));
    let reply = reply_to_send().unwrap();
    let text = reply["text"].as_str().unwrap();
    assert!(text.contains("Not logged in"), "{text:?}");
    assert!(
        !text.contains("───") && !text.contains("⏵⏵"),
        "chrome in {text:?}"
    );
}

#[test]
fn claude_safe_trusts_the_folder_automatically() {
    let Some(l) = live("claude", claude_onboarded, &[]) else {
        return;
    };
    let id = l.spawn("safe");
    l.wait(&id, "ready", Some("❯"));
    let autos: Vec<Value> = l
        .messages(&id)
        .into_iter()
        .filter(|m| m["auto"].is_string())
        .collect();
    assert_eq!(autos.len(), 1, "{autos:?}");
    assert!(
        autos[0]["auto"].as_str().unwrap().contains("trust"),
        "{autos:?}"
    );
}

#[test]
fn claude_onboarding_with_a_token_walks_to_its_prompt() {
    let Some(l) = live(
        "claude",
        |_, _| {},
        &[("ANTHROPIC_AUTH_TOKEN", "test-token")],
    ) else {
        return;
    };
    let id = l.spawn("manual");
    // Theme, then whatever onboarding asks next, answered with its first (default) option
    // except the trust prompt, until the input prompt shows.
    for step in 0..8 {
        let mut last = Value::Null;
        let settled = wait_until(WAIT, || {
            last = l.session(&id);
            matches!(
                last["status"].as_str(),
                Some("blocked") | Some("ready") | Some("exited")
            )
        });
        assert!(settled, "stuck: {last}\n{}", screen(&l.s, &id));
        if last["status"] != "blocked" {
            assert_eq!(last["status"], "ready", "{last}\n{}", screen(&l.s, &id));
            l.record(&id, "onboarded-ready");
            return;
        }
        let p = &last["prompt"];
        let kind = p["kind"].as_str().unwrap();
        l.record(&id, &format!("onboarding-{step}-{kind}"));
        assert_ne!(kind, "permission", "{last}");
        let key = if kind == "trust" {
            l.option_key(p, "Yes")
        } else {
            p["options"][0]["key"]
                .as_str()
                .expect("options")
                .to_string()
        };
        l.answer(&id, &key);
        // The screen moves on.
        let text = p["text"].as_str().unwrap().to_string();
        let moved = wait_until(WAIT, || {
            let s = l.session(&id);
            s["status"] != "blocked" || s["prompt"]["text"] != text.as_str()
        });
        assert!(
            moved,
            "answer {key} did not move {text:?} on:\n{}",
            screen(&l.s, &id)
        );
    }
    panic!("claude onboarding did not end:\n{}", screen(&l.s, &id));
}

#[test]
fn codex_login_chooser() {
    let Some(l) = live("codex", |_, _| {}, &[]) else {
        return;
    };
    let id = l.spawn("safe");
    let s = l.wait(&id, "blocked", Some("Sign in with ChatGPT"));
    l.record(&id, "login");
    assert_eq!(s["prompt"]["kind"], "login", "{s}");
    assert_eq!(s["prompt"]["options"].as_array().unwrap().len(), 3, "{s}");
    let other = l.option_key(&s["prompt"], "Sign in another way");
    l.answer(&id, &other);
    let s = l.wait(&id, "blocked", Some("Use an OpenAI API key"));
    l.record(&id, "login-other-way");
    assert_eq!(s["prompt"]["kind"], "login");
    assert!(l.messages(&id).iter().all(|m| m["auto"].is_null()));
}

#[test]
fn codex_with_an_api_key_reaches_its_prompt() {
    let bin = tools_bin().join("codex");
    let Some(l) = live(
        "codex",
        |home, _| {
            if !bin.exists() {
                return;
            }
            use std::io::Write;
            let mut c = std::process::Command::new(&bin)
                .args(["login", "--with-api-key"])
                .env("HOME", home)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            c.stdin
                .take()
                .unwrap()
                .write_all(b"sk-test-offline\n")
                .unwrap();
            c.wait().unwrap();
        },
        &[],
    ) else {
        return;
    };
    let id = l.spawn("manual");
    let mut last = Value::Null;
    let ok = wait_until(WAIT, || {
        last = l.session(&id);
        matches!(last["status"].as_str(), Some("blocked") | Some("ready"))
    });
    assert!(ok, "{last}\n{}", screen(&l.s, &id));
    if last["status"] == "blocked" {
        l.record(&id, "trust");
        assert_eq!(
            last["prompt"]["kind"],
            "trust",
            "{last}\n{}",
            screen(&l.s, &id)
        );
        let key = last["prompt"]["options"][0]["key"]
            .as_str()
            .unwrap()
            .to_string();
        l.answer(&id, &key);
    }
    l.wait(&id, "ready", None);
    l.record(&id, "ready");
}

#[test]
fn gemini_trust_then_auth() {
    let Some(l) = live("gemini", |_, _| {}, &[]) else {
        return;
    };
    let id = l.spawn("manual");
    let s = l.wait(&id, "blocked", Some("Do you trust"));
    l.record(&id, "trust");
    assert_eq!(s["prompt"]["kind"], "trust", "{s}");
    assert_eq!(
        s["prompt"]["options"][0]["label"]
            .as_str()
            .unwrap()
            .split(' ')
            .next(),
        Some("Trust")
    );
    l.answer(&id, "1");
    // Then the directory orchestra includes for its instructions and hooks (its settings file
    // taken: see `engine/placement.rs`); under `manual` that too is the user's to answer.
    // It draws the question as it relaunches, before it reads keys: answered again until
    // it is gone.
    let s = l.wait(&id, "blocked", Some("following folders"));
    assert_eq!(s["prompt"]["kind"], "trust", "{s}");
    let yes = l.option_key(&s["prompt"], "Yes");
    let at_login = |l: &Live| {
        let s = l.session(&id);
        s["status"] == "blocked" && s["prompt"]["kind"] == "login"
    };
    let passed = wait_until(WAIT, || {
        if !at_login(&l) {
            l.answer(&id, &yes);
        }
        wait_until(Duration::from_secs(10), || at_login(&l))
    });
    assert!(passed, "never past the question:\n{}", screen(&l.s, &id));
    let s = l.wait_prompt(&id, "login");
    l.record(&id, "login");
    assert!(screen(&l.s, &id).contains("authenticate"));
    assert_eq!(s["prompt"]["options"].as_array().unwrap().len(), 3, "{s}");
}

#[test]
fn gemini_with_a_key_still_needs_a_login() {
    let Some(l) = live("gemini", |_, _| {}, &[("GEMINI_API_KEY", "test-key")]) else {
        return;
    };
    let id = l.spawn("safe");
    // `safe` starts it trusting the folder (no trust question); the auth method is
    // preselected, but a login is never answered automatically. The one answer before it:
    // the housekeeping question about the directory orchestra includes for its instructions.
    let s = l.wait_prompt(&id, "login");
    l.record(&id, "login-key-preselected");
    let auto: Vec<String> = l
        .messages(&id)
        .iter()
        .filter_map(|m| m["auto"].as_str().map(str::to_string))
        .collect();
    assert!(
        auto.len() == 1 && auto[0].contains("trust orchestra's instructions directory"),
        "nothing but that is answered for the user before the login: {auto:?}"
    );
    let key = l.option_key(&s["prompt"], "Use Gemini API Key");
    let i = key.parse::<usize>().unwrap() - 1;
    assert_eq!(s["prompt"]["options"][i]["keys"], json!(["enter"]), "{s}");
    l.answer(&id, &key);
    // Then it asks for the key itself (the variable only preselected the method).
    let mut last = Value::Null;
    let ok = wait_until(WAIT, || {
        last = l.session(&id);
        last["status"] == "blocked" && last["prompt"]["text"] == "Enter Gemini API Key"
    });
    assert!(ok, "{last}\n{}", screen(&l.s, &id));
    assert_eq!(last["prompt"]["kind"], "login");
    l.record(&id, "login-enter-key");
}

#[test]
fn opencode_opens_at_its_prompt() {
    let Some(l) = live("opencode", |_, _| {}, &[]) else {
        return;
    };
    let id = l.spawn("safe");
    l.wait(&id, "ready", Some("Ask anything"));
    l.record(&id, "ready");
    let r = l.s.post(
        &format!("{API}/sessions/{id}/messages"),
        json!({"text": "say hi"}),
    );
    assert_eq!(r.status, 201);
    // Offline it keeps retrying: busy, and honestly so.
    let ok = wait_until(WAIT, || screen(&l.s, &id).contains("etrying"));
    if ok {
        l.wait(&id, "busy", None);
        l.record(&id, "busy-retrying");
    }
}

#[test]
fn aider_git_question_then_login() {
    let Some(l) = live("aider", |_, _| {}, &[]) else {
        return;
    };
    let id = l.spawn("safe");
    let s = l.wait(&id, "blocked", Some("git repo"));
    l.record(&id, "git-repo");
    assert_eq!(s["prompt"]["kind"], "question", "{s}");
    // Not housekeeping: left to the user even under safe. (Aider asks some users about
    // analytics first; that one is housekeeping and answered "no", and says so.)
    for m in l.messages(&id).iter().filter(|m| m["role"] == "user") {
        let auto = m["auto"].as_str().unwrap_or_default();
        assert!(
            auto.contains("telemetry"),
            "only telemetry is answered: {m}"
        );
        assert!(!auto.contains("git"), "{m}");
    }
    l.answer(&id, "y");
    l.wait_prompt(&id, "login");
    l.record(&id, "login");
    assert!(screen(&l.s, &id).contains("OpenRouter"));
}

#[test]
fn aider_with_a_key_reaches_its_prompt() {
    let Some(l) = live(
        "aider",
        |_, work| {
            std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(work)
                .status()
                .unwrap();
        },
        &[("OPENAI_API_KEY", "sk-test-offline")],
    ) else {
        return;
    };
    let id = l.spawn("manual");
    // .gitignore, analytics, release notes…: each a yes/no question, answered "n" here.
    let mut last = Value::Null;
    for step in 0..6 {
        let ok = wait_until(WAIT, || {
            last = l.session(&id);
            let scr = screen(&l.s, &id);
            (last["status"] == "ready" && scr.trim_end().ends_with('>'))
                || last["status"] == "blocked"
        });
        assert!(ok, "{last}\n{}", screen(&l.s, &id));
        if last["status"] == "ready" {
            l.record(&id, "ready");
            return;
        }
        assert_ne!(last["prompt"]["kind"], "permission", "{last}");
        let scr = screen(&l.s, &id);
        let name = if scr.contains("analytics")
            && !scr.contains("analytics to help improve aider? (Y)es/(N)o [Yes]: n")
        {
            "analytics".to_string()
        } else {
            format!("question-{step}")
        };
        l.record(&id, &name);
        let text = last["prompt"]["text"].clone();
        l.answer(&id, "n");
        let moved = wait_until(WAIT, || {
            let s = l.session(&id);
            s["status"] != "blocked" || s["prompt"]["text"] != text
        });
        assert!(moved, "{}", screen(&l.s, &id));
    }
    panic!(
        "aider never reached its prompt: {last}\n{}",
        screen(&l.s, &id)
    );
}
