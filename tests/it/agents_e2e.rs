//! Real coding-agent CLIs doing real work through orchestra, against the scripted model on
//! loopback (tests/it/support/model): a task started through the API, the model making the CLI
//! call its own file-writing tool, the file appearing and the task completing with the
//! model's reply. Each test names the CLI and the version it was written against; a CLI that
//! is not installed (`scripts/install-agent-clis`) is skipped, saying so.

use crate::model;
use crate::support;

use model::{ModelServer, Reply, Script, Turn};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;

pub(crate) const API: &str = "/api/coding-agents";
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// A temp git repository with one commit, so orchestra can tell which files a task created.
pub(crate) fn git_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("README.md"), "a test repository\n").expect("write");
    commit_all(dir.path());
    dir
}

/// Commits everything in `dir` (making it a repository first if it is not one).
fn commit_all(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "start"]);
}

/// One CLI's run: the model server, the orchestra server whose sessions reach it, the repo.
pub(crate) struct Run {
    pub(crate) model: ModelServer,
    pub(crate) s: Server,
    /// The CLI's HOME, its TMPDIR and the state directory, removed after the server stopped.
    places: Places,
    pub(crate) work: tempfile::TempDir,
    pub(crate) cli: &'static str,
    /// The provider the tasks name: `cli` without a version suffix (`claude-2.1.197` is an
    /// older claude, run through a config that points the `claude` provider at it).
    pub(crate) provider: &'static str,
    _config: tempfile::TempDir,
    /// The server's environment, for [`Run::restart`].
    env: Vec<(&'static str, String)>,
    /// Servers stopped by a restart: their handles keep the state directory.
    stopped: Vec<Server>,
    /// Every session event the server published, in order (see [`watch_sessions`]).
    session_events: SessionEvents,
    _guard: std::sync::MutexGuard<'static, ()>,
}

/// `None` (with the reason printed) when the CLI is not installed. `setup` writes the CLI's
/// files into the fresh HOME (and the repository), given the model server's URL; `env` is for the server and so
/// for its sessions (the provider's `pass_env` decides what reaches the CLI).
fn run(
    cli: &'static str,
    script: impl FnOnce(&Path) -> Script,
    setup: impl FnOnce(&Path, &Path, &str),
    env: impl FnOnce(&str) -> Vec<(&'static str, String)>,
) -> Option<Run> {
    run_in(Places::new(), cli, script, setup, env)
}

/// [`run`] in `places`.
fn run_in(
    places: Places,
    cli: &'static str,
    script: impl FnOnce(&Path) -> Script,
    setup: impl FnOnce(&Path, &Path, &str),
    env: impl FnOnce(&str) -> Vec<(&'static str, String)>,
) -> Option<Run> {
    run_with_config(places, cli, script, setup, env, "")
}

/// [`run_in`] with `config` (TOML) added to orchestra's config file.
pub(crate) fn run_with_config(
    places: Places,
    cli: &'static str,
    script: impl FnOnce(&Path) -> Script,
    setup: impl FnOnce(&Path, &Path, &str),
    env: impl FnOnce(&str) -> Vec<(&'static str, String)>,
    config: &str,
) -> Option<Run> {
    let bin = tools_bin();
    if !bin.join(cli).exists() {
        eprintln!(
            "SKIP: {cli} is not installed in {} (run scripts/install-agent-clis)",
            bin.display()
        );
        return None;
    }
    let guard = support::REAL_CLIS.lock().unwrap_or_else(|p| p.into_inner());
    let work = git_repo();
    let model = ModelServer::start(script(work.path()));
    setup(&places.home(), work.path(), &model.url);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut all = vec![
        ("HOME", places.home().to_string_lossy().into_owned()),
        ("TMPDIR", places.tmp().to_string_lossy().into_owned()),
        ("PATH", path),
    ];
    all.extend(env(&model.url));
    let kept = all.clone();
    let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let provider = cli.split('-').next().unwrap_or(cli);
    let config_dir = tempfile::tempdir().expect("tempdir");
    let config_file = config_dir.path().join("config.toml");
    let override_command = if provider == cli {
        String::new()
    } else {
        format!("[[provider]]\nid = \"{provider}\"\ncommand = \"{cli}\"\n")
    };
    // A limit that names no reset time is tried again after a minute, the least there is.
    let config_text = format!("{override_command}{config}\n[limits]\nretry_minutes = 1\n");
    std::fs::write(&config_file, config_text).expect("write config");
    // One slot: a task waiting out a usage limit must not hold it (see `limit_waited_out`).
    let s = Server::try_start_env(
        &places.state(),
        &[
            "--config",
            &config_file.to_string_lossy(),
            "--max-concurrent",
            "1",
        ],
        &all,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let session_events = watch_sessions(&s);
    Some(Run {
        model,
        session_events,
        s,
        places,
        work,
        cli,
        provider,
        _config: config_dir,
        env: kept,
        stopped: Vec::new(),
        _guard: guard,
    })
}

/// An approval preset a run that asks nothing before its permission prompt uses.
#[derive(Clone, Copy)]
enum Preset {
    Auto,
    /// `safe`: orchestra answers the housekeeping prompts; the permission prompt is answered
    /// from the API with the option whose label starts with `allow`.
    Safe {
        allow: &'static str,
    },
}

/// The session events (`session:*`) a server published, as its event stream sent them.
type SessionEvents = Arc<Mutex<Vec<(String, Value)>>>;

/// Collects `s`'s session events on a thread of their own until its event stream ends (the
/// server stopped).
fn watch_sessions(s: &Server) -> SessionEvents {
    let mut events = Events::open(s);
    let seen = SessionEvents::default();
    let out = seen.clone();
    std::thread::spawn(move || {
        loop {
            let asked = std::time::Instant::now();
            match events.next() {
                Some((name, data)) if name.starts_with("session:") => out
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((name, data)),
                Some(_) => {}
                // Nothing for a while: still open. At once: the server is gone.
                None if asked.elapsed() > Duration::from_secs(5) => {}
                None => return,
            }
        }
    });
    seen
}

/// Where a run keeps the CLI's HOME, its TMPDIR and orchestra's state directory: all in one
/// fresh temporary directory, wherever the system's is and wherever the repository is cloned.
/// HOME is not under TMPDIR (Codex CLI makes its helper commands, `apply_patch` and its
/// sandbox's, only for a home outside it), and the state directory is in a directory anyone
/// may write to (sticky, like `/tmp`): the place Gemini CLI refuses settings files from, so
/// every run checks that orchestra hands them over from a place it accepts.
pub(crate) struct Places {
    root: tempfile::TempDir,
    home: &'static str,
}

impl Places {
    pub(crate) fn new() -> Places {
        Places::with_home("home")
    }

    /// HOME under TMPDIR, as on a CI runner whose home is a temporary directory.
    fn home_under_tmp() -> Places {
        Places::with_home("tmp/home")
    }

    fn with_home(home: &'static str) -> Places {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("tempdir");
        for dir in [home, "tmp", "shared"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("mkdir");
        }
        let shared = root.path().join("shared");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777))
            .expect("chmod 1777");
        Places { root, home }
    }

    pub(crate) fn home(&self) -> std::path::PathBuf {
        self.root.path().join(self.home)
    }

    fn tmp(&self) -> std::path::PathBuf {
        self.root.path().join("tmp")
    }

    fn state(&self) -> std::path::PathBuf {
        self.root.path().join("shared/state")
    }
}

impl Run {
    /// What a script watching the sessions saw was consistent: a blocked session always
    /// carried the prompt it waited on, and none was ever blocked on a prompt orchestra
    /// answered by itself (that one is `busy`, the answer in its messages).
    fn assert_consistent_statuses(&self, task: &Value) {
        let events = self
            .session_events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let sid = task["metadata"]["sessionId"].as_str().unwrap_or_default();
        let messages = &self.s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"];
        let answered_by_itself: Vec<&str> = messages
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["auto"].as_str())
            .collect();
        for (name, data) in &events {
            let session = &data["session"];
            if session["status"] != "blocked" {
                continue;
            }
            let text = session["prompt"]["text"].as_str().unwrap_or_default();
            assert!(
                !text.trim().is_empty(),
                "{}: {name} blocked without the prompt it waits on: {session}\n{}",
                self.cli,
                self.context(task)
            );
            if session["id"] == sid {
                assert!(
                    !answered_by_itself.iter().any(|a| a.contains(text)),
                    "{}: {name} blocked on a prompt orchestra answered by itself: {session}\n{}",
                    self.cli,
                    self.context(task)
                );
            }
        }
    }

    /// The file-writing task under `auto`, asking nothing: started, finished and checked.
    fn hello_under_auto(&self) -> (String, Value) {
        self.hello_under(Preset::Auto)
    }

    /// The file-writing task under `preset`: started, its permission prompt answered where
    /// the preset asks one, finished and checked.
    fn hello_under(&self, preset: Preset) -> (String, Value) {
        let id = match preset {
            Preset::Auto => self.start_task(TASK, "auto"),
            Preset::Safe { allow } => {
                let id = self.start_task(TASK, "safe");
                let (sid, permission) = self.wait_prompt(&id, "permission");
                self.answer(&sid, &permission, allow);
                id
            }
        };
        let t = self.wait_final(&id);
        self.assert_hello_done(&t, DONE);
        (id, t)
    }

    /// The model got the task's text in a request to `path`.
    fn assert_model_got_the_task(&self, path: &str) {
        let sent = self.model.requests_to(path);
        assert!(
            sent.iter().any(|q| q.body.to_string().contains(TASK)),
            "{}",
            self.model.log()
        );
    }

    /// Creates the task for this CLI under `approval` and starts it; returns its id. The
    /// agent works in the repository itself (no worktree): the scripted model's tool calls
    /// name paths under it. Worktrees are tested in `git_worktrees.rs`.
    fn start_task(&self, description: &str, approval: &str) -> String {
        let t = create_task(
            &self.s,
            "hello",
            json!({"description": description, "providerId": self.provider, "approval": approval,
                   "workingDirectory": self.work.path(), "isolation": "none"}),
        );
        let id = t["id"].as_str().expect("task id").to_string();
        let r = self.s.post_empty(&format!("{API}/tasks/{id}/start"));
        assert_eq!(r.status, 200, "{}", r.body);
        id
    }

    pub(crate) fn task(&self, id: &str) -> Value {
        self.s.get(&format!("{API}/tasks/{id}")).json()["task"].clone()
    }

    /// Waits for the task to be final; panics with the screen and the model's log if not.
    pub(crate) fn wait_final(&self, id: &str) -> Value {
        let mut last = Value::Null;
        let ok = wait_until(WAIT, || {
            last = self.task(id);
            matches!(
                last["metadata"]["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            )
        });
        assert!(
            ok,
            "{}: task never ended: {last}\n{}",
            self.cli,
            self.context(&last)
        );
        self.assert_consistent_statuses(&last);
        last
    }

    /// The session's screen and the model server's requests, for failure messages.
    pub(crate) fn context(&self, task: &Value) -> String {
        let sid = task["metadata"]["sessionId"].as_str().unwrap_or_default();
        let session = &self.s.get(&format!("{API}/sessions/{sid}")).json()["session"];
        let messages = &self.s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"];
        format!(
            "session: {session}\nmessages: {messages}\nscreen:\n{}\nmodel requests:\n{}",
            screen(&self.s, sid),
            self.model.log()
        )
    }

    /// Where the agent works: the task's own git worktree (coding agents in a repository get
    /// one by default), else the repository itself.
    pub(crate) fn agent_dir(&self, t: &Value) -> std::path::PathBuf {
        let task = if t["task"].is_object() { &t["task"] } else { t };
        match task["metadata"]["worktree"]["path"].as_str() {
            Some(path) => std::path::PathBuf::from(path),
            None => self.work.path().to_path_buf(),
        }
    }

    /// The file-writing task completed with the scripted reply and `filesCreated`.
    pub(crate) fn assert_hello_done(&self, t: &Value, reply: &str) {
        let ctx = self.context(t);
        let m = &t["metadata"];
        assert_eq!(m["status"], "completed", "{}: {t}\n{ctx}", self.cli);
        let hello =
            std::fs::read_to_string(self.agent_dir(t).join("hello.txt")).unwrap_or_default();
        assert_eq!(hello.trim_end(), "hi", "{}: {t}\n{ctx}", self.cli);
        let said = if self.provider == "aider" {
            aider_edit(reply)
        } else {
            reply.to_string()
        };
        self.assert_summary_is_the_reply(t, &said);
        assert_eq!(
            m["result"]["filesCreated"],
            json!(["hello.txt"]),
            "{}: {t}",
            self.cli
        );
    }
}

impl Run {
    /// The task's summary is the agent's reply and nothing else: each of its lines is a line
    /// the model said (`reply`), never the CLI's own questions, answers, hints or status
    /// lines, and the reply's first line is there.
    pub(crate) fn assert_summary_is_the_reply(&self, t: &Value, reply: &str) {
        let summary = t["metadata"]["result"]["summary"]
            .as_str()
            .unwrap_or_default();
        let said: Vec<&str> = reply.lines().map(str::trim).collect();
        let foreign: Vec<&str> = summary
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !said.contains(l))
            .collect();
        let first = reply.lines().next().unwrap_or_default();
        assert!(
            foreign.is_empty() && summary.contains(first),
            "{}: the summary {summary:?} is not the reply {reply:?} (not said: {foreign:?})\n{}",
            self.cli,
            self.context(t)
        );
    }
}

/// Aider's script, its first turn the one-line commit message it asks its weak model for
/// (with the diff of its edit), as a real model would write it.
fn aider_script(cwd: &Path) -> Script {
    Script::new(cwd).turn(Turn::on_prompt("diff --git", Reply::text("Add hello.txt")))
}

/// Aider's reply that creates `hello.txt` holding "hi": `text`, then its edit block.
fn aider_edit(text: &str) -> String {
    format!("{text}\n\nhello.txt\n```\n<<<<<<< SEARCH\n=======\nhi\n>>>>>>> REPLACE\n```\n")
}

pub(crate) const TASK: &str = "create hello.txt containing hi";
const FOLLOW_UP: &str = "what did you just do";
const FOLLOW_UP_REPLY: &str = "I wrote hi into hello.txt.";
pub(crate) const DONE: &str = "Created hello.txt for you.";

/// On the task's prompt, call `tool` with `input`; on its result, say [`DONE`].
/// The CLI's own file-writing tool call that creates `hello.txt` containing "hi".
pub(crate) fn hello_write(cli: &str) -> (&'static str, Value) {
    match cli {
        "codex" => (
            "apply_patch",
            json!("*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"),
        ),
        "gemini" => (
            "write_file",
            json!({"file_path": "{cwd}/hello.txt", "content": "hi\n"}),
        ),
        "opencode" => (
            "write",
            json!({"filePath": "{cwd}/hello.txt", "content": "hi\n"}),
        ),
        _ => (
            "Write",
            json!({"file_path": "{cwd}/hello.txt", "content": "hi\n"}),
        ),
    }
}

fn hello_script(cli: &str) -> impl FnOnce(&Path) -> Script {
    let (tool, input) = hello_write(cli);
    move |cwd| {
        Script::new(cwd)
            .turn(Turn::on_tool_result("hello.txt", Reply::text(DONE)).offering(tool))
            .turn(Turn::on_prompt("hello.txt", Reply::tool(tool, input)).offering(tool))
            .turn(Turn::on_prompt(FOLLOW_UP, Reply::text(FOLLOW_UP_REPLY)))
            .fallback("Nothing scripted for that.")
    }
}

pub(crate) fn claude_home(home: &Path, _work: &Path, _url: &str) {
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding": true}"#,
    )
    .expect("write .claude.json");
}

pub(crate) fn claude_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", url.to_string()),
        ("ANTHROPIC_AUTH_TOKEN", "scripted".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
    ]
}

#[test]
fn claude_2_1_332_auto_writes_a_file_and_answers_a_follow_up() {
    let write = hello_script("claude");
    let Some(r) = run("claude", write, claude_home, claude_env) else {
        return;
    };
    let (_, t) = r.hello_under_auto();
    // The model saw the task as the prompt and offered Write; the Write result came back.
    let sent = r.model.requests_to("/v1/messages");
    let main: Vec<_> = sent
        .iter()
        .filter(|q| {
            q.body["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "Write"))
        })
        .collect();
    assert!(
        main.iter().any(|q| q.body.to_string().contains(TASK)),
        "{}",
        r.model.log()
    );
    assert!(
        main.iter()
            .any(|q| q.body.to_string().contains("tool_result")),
        "{}",
        r.model.log()
    );
    r.follow_up(&t);
    // The follow-up carried the earlier turns of the conversation.
    let last = r
        .model
        .requests_to("/v1/messages")
        .pop()
        .expect("a request");
    let body = last.body.to_string();
    assert!(
        body.contains(FOLLOW_UP) && body.contains(TASK) && body.contains(DONE),
        "{body}"
    );
}

impl Run {
    /// A message to the agent after its task completed gets the scripted reply as the
    /// `agent` message.
    fn follow_up(&self, task: &Value) {
        let sid = task["metadata"]["sessionId"].as_str().unwrap_or_default();
        let r = self.s.post(
            &format!("{API}/sessions/{sid}/messages"),
            json!({"text": FOLLOW_UP}),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let reply = || {
            let ms = self.s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let sent = ms.iter().position(|m| m["text"] == FOLLOW_UP)?;
            ms[sent..].iter().find(|m| m["role"] == "agent").cloned()
        };
        let ok = wait_until(WAIT, || reply().is_some());
        assert!(
            ok,
            "{}: no reply to the follow-up\n{}",
            self.cli,
            self.context(task)
        );
        let text = reply()
            .and_then(|m| m["text"].as_str().map(str::to_string))
            .unwrap_or_default();
        // Exactly the reply: no input box, status line or reply marker (opencode's left margin
        // stays: trimmed). A streaming CLI can leave a partial line of it behind on the
        // screen (aider redraws as tokens arrive): a start of the reply is not chrome.
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            lines.last(),
            Some(&FOLLOW_UP_REPLY),
            "{}: {text:?}",
            self.cli
        );
        assert!(
            lines.iter().all(|l| FOLLOW_UP_REPLY.starts_with(l)),
            "{}: {text:?}",
            self.cli
        );
    }

    pub(crate) fn session(&self, task_id: &str) -> (String, Value) {
        let sid = self.task(task_id)["metadata"]["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let s = self.s.get(&format!("{API}/sessions/{sid}")).json()["session"].clone();
        (sid, s)
    }

    /// Waits until the task's session is blocked on a prompt of `kind` whose options are
    /// read (before its dialog is drawn, a hook's prompt has only its words); returns its id
    /// and the prompt.
    pub(crate) fn wait_prompt(&self, task_id: &str, kind: &str) -> (String, Value) {
        let mut last = (String::new(), Value::Null);
        let ok = wait_until(WAIT, || {
            last = self.session(task_id);
            last.1["status"] == "blocked"
                && last.1["prompt"]["kind"] == kind
                && last.1["prompt"]["options"]
                    .as_array()
                    .is_some_and(|o| !o.is_empty())
        });
        let t = self.task(task_id);
        assert!(
            ok,
            "{}: never blocked on {kind}: {}\n{}",
            self.cli,
            last.1,
            self.context(&t)
        );
        (last.0, last.1["prompt"].clone())
    }

    /// Answers the prompt with the option whose label starts with `label`.
    pub(crate) fn answer(&self, sid: &str, prompt: &Value, label: &str) {
        let key = prompt["options"]
            .as_array()
            .and_then(|o| {
                o.iter()
                    .find(|o| o["label"].as_str().is_some_and(|l| l.starts_with(label)))
            })
            .and_then(|o| o["key"].as_str())
            .unwrap_or_else(|| {
                panic!(
                    "{}: no option {label:?} in {prompt}\nscreen:\n{}",
                    self.cli,
                    screen(&self.s, sid)
                )
            })
            .to_string();
        let r = self.s.post(
            &format!("{API}/sessions/{sid}/answer"),
            json!({"option": key}),
        );
        assert_eq!(r.status, 200, "{}: answer {key}: {}", self.cli, r.body);
    }
}

#[test]
fn claude_2_1_332_manual_asks_before_writing_and_the_api_answers() {
    let Some(r) = run("claude", hello_script("claude"), claude_home, claude_env) else {
        return;
    };
    r.manual_flow(&[("trust", "Yes")], "Yes");
}

impl Run {
    /// Waits until the task's session is `status` as its agent's hooks said; returns it.
    fn by_hook(&self, task_id: &str, status: &str) -> Value {
        let mut last = Value::Null;
        let ok = wait_until(WAIT, || {
            last = self.session(task_id).1;
            last["status"] == status && last["statusSource"] == "hook"
        });
        assert!(
            ok,
            "{}: never {status} by its hook: {last}\n{}",
            self.cli,
            self.context(&self.task(task_id))
        );
        last
    }

    /// Under `manual`, where orchestra answers nothing: the CLI's start-up prompts answered
    /// from the API in order (`(kind, option label start)`), then the CLI asks before it
    /// writes, the task waits, and `allow` (a label start) from the API lets it write.
    fn manual_flow(&self, first: &[(&str, &str)], allow: &str) {
        let id = self.start_task(TASK, "manual");
        for (kind, label) in first {
            let (sid, prompt) = self.wait_prompt(&id, kind);
            self.answer(&sid, &prompt, label);
        }
        let (sid, permission) = self.wait_prompt(&id, "permission");
        // Asked before the file exists, and the task waits for the answer.
        assert!(
            !self.agent_dir(&self.task(&id)).join("hello.txt").exists(),
            "{permission}"
        );
        assert_eq!(self.task(&id)["metadata"]["status"], "running");
        self.answer(&sid, &permission, allow);
        let t = self.wait_final(&id);
        self.assert_hello_done(&t, DONE);
    }
}

#[test]
fn claude_2_1_332_is_told_how_to_report_and_its_step_shows_in_the_task() {
    // The scripted model runs `orchestra report step` through Claude's shell tool, as an
    // agent that read orchestra's instructions would.
    let report = |cwd: &Path| {
        Script::new(cwd)
            .turn(Turn::on_tool_result("", Reply::text(DONE)).offering("Bash"))
            .turn(
                Turn::on_prompt(
                    "report a step",
                    Reply::tool(
                        "Bash",
                        json!({"command": "orchestra report step 'Writing the greeting'",
                               "description": "Report a step to orchestra"}),
                    ),
                )
                .offering("Bash"),
            )
            .fallback("Nothing scripted for that.")
    };
    let Some(r) = run("claude", report, claude_home, claude_env) else {
        return;
    };
    // Under `manual` its shell tool asks first (under `auto` Claude asks the model whether
    // the command is safe, which this script does not answer).
    let id = r.start_task("report a step to orchestra", "manual");
    let (sid, trust) = r.wait_prompt(&id, "trust");
    r.answer(&sid, &trust, "Yes");
    let (sid, permission) = r.wait_prompt(&id, "permission");
    r.answer(&sid, &permission, "Yes");
    let ok = wait_until(WAIT, || {
        r.task(&id)["metadata"]["steps"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["description"] == "Writing the greeting"))
    });
    let t = r.task(&id);
    assert!(ok, "no step reported: {t}\n{}", r.context(&t));
    // It learnt of `orchestra report` from its system prompt, not from a file in the repo.
    let told = r.model.requests_to("/v1/messages").iter().any(|q| {
        q.body["system"]
            .to_string()
            .contains("orchestra report step")
    });
    assert!(told, "{}", r.model.log());
    let status = git(r.work.path(), &["status", "--porcelain"]);
    assert!(status.is_empty(), "{status}");
}

/// Claude Code from about six months before the pinned one: its `--permission-mode` has
/// `default` where the pinned one has `manual`.
const CLAUDE_OLDER: &str = "claude-2.1.197";

#[test]
fn claude_2_1_197_manual_asks_before_writing_and_the_api_answers() {
    let Some(r) = run(
        CLAUDE_OLDER,
        hello_script("claude"),
        claude_home,
        claude_env,
    ) else {
        return;
    };
    r.manual_flow(&[("trust", "Yes")], "Yes");
}

#[test]
fn claude_2_1_197_safe_answers_trust_and_asks_before_writing() {
    let Some(r) = run(
        CLAUDE_OLDER,
        hello_script("claude"),
        claude_home,
        claude_env,
    ) else {
        return;
    };
    let id = r.start_task(TASK, "safe");
    let (sid, permission) = r.wait_prompt(&id, "permission");
    let ms = r.s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"].clone();
    assert!(
        ms.as_array().is_some_and(|m| m
            .iter()
            .any(|m| m["auto"].as_str().is_some_and(|a| a.contains("trust")))),
        "the trust prompt was answered under safe: {ms}"
    );
    r.answer(&sid, &permission, "Yes");
    let t = r.wait_final(&id);
    r.assert_hello_done(&t, DONE);
}

#[test]
fn claude_2_1_197_auto_writes_without_asking() {
    let write = hello_script("claude");
    let Some(r) = run(CLAUDE_OLDER, write, claude_home, claude_env) else {
        return;
    };
    r.hello_under_auto();
}

pub(crate) fn gemini_home(home: &Path, _work: &Path, _url: &str) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir .gemini");
    let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"},
                                       "folderTrust": {"enabled": false}}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
}

pub(crate) fn gemini_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GEMINI_API_KEY", "scripted".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", url.to_string()),
    ]
}

#[test]
fn gemini_0_61_0_auto_writes_a_file_and_answers_a_follow_up() {
    let Some(r) = run("gemini", hello_script("gemini"), gemini_home, gemini_env) else {
        return;
    };
    let (_, t) = r.hello_under_auto();
    r.follow_up(&t);
    r.assert_model_got_the_task(":streamGenerateContent");
}

pub(crate) fn codex_home(home: &Path, _work: &Path, url: &str) {
    let dir = home.join(".codex");
    std::fs::create_dir_all(&dir).expect("mkdir .codex");
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\
         check_for_update_on_startup = false\n\n\
         [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{url}/v1\"\n\
         wire_api = \"responses\"\nsupports_websockets = false\n\
         request_max_retries = 0\nstream_max_retries = 0\n"
    );
    std::fs::write(dir.join("config.toml"), config).expect("write config.toml");
}

#[test]
fn gemini_0_61_0_manual_asks_before_writing_and_the_api_answers() {
    let Some(r) = run("gemini", hello_script("gemini"), gemini_home, gemini_env) else {
        return;
    };
    r.manual_flow(&[], "");
}

#[test]
fn codex_0_171_0_manual_asks_before_writing_and_the_api_answers() {
    let Some(r) = run("codex", hello_script("codex"), codex_home, |_| vec![]) else {
        return;
    };
    r.manual_flow(&[("trust", "Trust"), ("choice", "Use existing model")], "");
}

#[test]
fn codex_0_171_0_auto_writes_a_file_and_answers_a_follow_up() {
    let Some(r) = run("codex", hello_script("codex"), codex_home, |_| vec![]) else {
        return;
    };
    let (id, t) = r.hello_under_auto();
    // Its turn-complete notification (`notify`) ended the turn, with the reply it carried.
    r.by_hook(&id, "ready");
    assert_eq!(t["metadata"]["result"]["summary"], DONE, "{t}");
    r.follow_up(&t);
    r.assert_model_got_the_task("/v1/responses");
}

/// Codex CLI whose home is under its temporary directory does not make its helper commands,
/// and where bubblewrap is installed its patch then fails while its reply says it is done:
/// the task says both, and does not read as a plain success.
#[test]
fn codex_0_171_0_with_its_home_under_tmpdir_the_task_says_what_that_cost() {
    let Some(r) = run_in(
        Places::home_under_tmp(),
        "codex",
        hello_script("codex"),
        codex_home,
        |_| vec![],
    ) else {
        return;
    };
    let id = r.start_task(TASK, "auto");
    let t = r.wait_final(&id);
    let ctx = r.context(&t);
    let m = &t["metadata"];
    let output = m["output"].to_string();
    assert!(
        output.contains("note: Codex CLI did not make its helper commands"),
        "{t}\n{ctx}"
    );
    assert_eq!(m["result"]["summary"], DONE, "the agent's words stay: {t}");
    let written = r.work.path().join("hello.txt").exists();
    if written {
        // No bubblewrap here: it applied the patch without its helpers.
        assert_eq!(m["status"], "completed", "{t}\n{ctx}");
        assert_eq!(m["result"]["filesCreated"], json!(["hello.txt"]), "{t}");
    } else {
        assert_eq!(m["status"], "failed", "{t}\n{ctx}");
        assert_eq!(m["result"]["success"], false, "{t}");
        let error = m["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("Failed to apply patch") && error.contains("no file changed"),
            "{error}\n{t}"
        );
        assert!(
            output.contains("note: Codex CLI printed \u{201c}✘ Failed to apply patch"),
            "{t}"
        );
    }
}

pub(crate) fn opencode_home(home: &Path, _work: &Path, url: &str) {
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("mkdir opencode config");
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "anthropic/claude-sonnet-4-5",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {"baseURL": format!("{url}/v1"), "apiKey": "scripted"}}},
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).expect("write opencode.json");
}

#[test]
fn opencode_1_18_33_auto_writes_a_file_and_answers_a_follow_up() {
    let Some(r) = run(
        "opencode",
        hello_script("opencode"),
        opencode_home,
        |_| vec![],
    ) else {
        return;
    };
    let (_, t) = r.hello_under_auto();
    r.follow_up(&t);
    r.assert_model_got_the_task("/v1/messages");
}

#[test]
fn opencode_1_18_33_manual_asks_before_writing_and_the_api_answers() {
    // Its own default lets it edit without asking; the preset makes it ask.
    let Some(r) = run(
        "opencode",
        hello_script("opencode"),
        opencode_home,
        |_| vec![],
    ) else {
        return;
    };
    r.manual_flow(&[], "Allow once");
}

fn aider_home(home: &Path, work: &Path, url: &str) {
    // Aider adds `.aider*` to a .gitignore that lacks it (its own housekeeping, not the
    // task's work): a repository that already ignores it.
    std::fs::write(work.join(".gitignore"), ".aider*\n").expect("write .gitignore");
    aider_caches(home, work, url);
}

/// A model price table, or aider tries to download one.
fn aider_caches(home: &Path, _work: &Path, _url: &str) {
    let dir = home.join(".aider/caches");
    std::fs::create_dir_all(&dir).expect("mkdir aider caches");
    let prices = json!({"gpt-4o": {"max_input_tokens": 128000, "max_output_tokens": 16384,
        "input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
        "litellm_provider": "openai", "mode": "chat", "supports_function_calling": true}});
    std::fs::write(
        dir.join("model_prices_and_context_window.json"),
        prices.to_string(),
    )
    .expect("write model prices");
}

fn aider_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_API_BASE", format!("{url}/v1")),
        ("OPENAI_API_KEY", "scripted".to_string()),
        ("AIDER_MODEL", "openai/gpt-4o".to_string()),
        ("AIDER_ANALYTICS_DISABLE", "true".to_string()),
        ("AIDER_CHECK_UPDATE", "false".to_string()),
        ("AIDER_SHOW_RELEASE_NOTES", "false".to_string()),
    ]
}

#[test]
fn aider_0_86_2_auto_writes_a_file_and_answers_a_follow_up() {
    // Aider edits through edit blocks in its reply text, not a tool.
    let edit = aider_edit(DONE);
    let Some(r) = run(
        "aider",
        |cwd| {
            aider_script(cwd)
                .turn(Turn::on_prompt(TASK, Reply::text(&edit)))
                .turn(Turn::on_prompt(FOLLOW_UP, Reply::text(FOLLOW_UP_REPLY)))
                .fallback("Add hello.txt")
        },
        aider_home,
        aider_env,
    ) else {
        return;
    };
    let (_, t) = r.hello_under_auto();
    r.follow_up(&t);
    r.assert_model_got_the_task("/v1/chat/completions");
}

#[test]
fn aider_0_86_2_manual_asks_first_then_before_writing() {
    // A repository whose .gitignore lacks `.aider*`: aider asks to add it first (a question
    // answered from the API; the change to .gitignore is the task's too, as modified), then
    // takes the task up and asks before it creates the file.
    let edit = aider_edit(DONE);
    let Some(r) = run(
        "aider",
        |cwd| {
            aider_script(cwd)
                .turn(Turn::on_prompt(TASK, Reply::text(&edit)))
                .fallback("Add hello.txt")
        },
        |home, work, url| {
            std::fs::write(work.join(".gitignore"), "target/\n").expect("write .gitignore");
            commit_all(work);
            aider_caches(home, work, url);
        },
        aider_env,
    ) else {
        return;
    };
    r.manual_flow(&[("question", "Yes")], "Yes");
}

#[test]
fn claude_2_1_332_reports_its_status_through_its_hooks() {
    claude_hooks_flow("claude", "safe");
}

#[test]
fn claude_2_1_197_reports_its_status_through_its_hooks() {
    claude_hooks_flow(CLAUDE_OLDER, "manual");
}

/// Claude Code's own hooks (a per-session settings file) post to orchestra: its permission
/// prompt and its finished turn are decided by them, and the task's summary is the reply its
/// Stop hook carried, exactly, with no screen chrome. Under `manual` its trust screen is
/// answered from the API; under `safe` orchestra answers it.
fn claude_hooks_flow(cli: &'static str, approval: &str) {
    let Some(r) = run(cli, hello_script("claude"), claude_home, claude_env) else {
        return;
    };
    let id = r.start_task(TASK, approval);
    if approval == "manual" {
        let (sid, trust) = r.wait_prompt(&id, "trust");
        r.answer(&sid, &trust, "Yes");
    }
    let (sid, permission) = r.wait_prompt(&id, "permission");
    let blocked = r.by_hook(&id, "blocked");
    assert_eq!(blocked["prompt"]["kind"], "permission", "{blocked}");
    r.answer(&sid, &permission, "Yes");
    let t = r.wait_final(&id);
    r.assert_hello_done(&t, DONE);
    assert_eq!(t["metadata"]["result"]["summary"], DONE, "{t}");
    r.by_hook(&id, "ready");
    r.follow_up(&t);
    r.by_hook(&id, "ready");
    // The settings file is the session's own, private, in the state directory.
    let settings = r.s.state_dir.join("hooks").join(format!("{sid}.json"));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&settings)
            .expect("hooks settings")
            .permissions(),
    );
    assert_eq!(mode & 0o077, 0, "{}", settings.display());
}

/// Gemini CLI's own hooks (in the session's system-defaults file, beside its instructions)
/// post to orchestra: its tool-permission notification and its finished turn (AfterAgent)
/// decide the status, and the task completes on that turn's end with the reply. The
/// test's HOME turns folder trust off, as a user who trusts the folder would have it: Gemini
/// CLI runs settings hooks only in a trusted folder.
#[test]
fn gemini_0_61_0_reports_its_status_through_its_hooks() {
    let Some(r) = run("gemini", hello_script("gemini"), gemini_home, gemini_env) else {
        return;
    };
    let id = r.start_task(TASK, "manual");
    let (sid, permission) = r.wait_prompt(&id, "permission");
    let blocked = r.by_hook(&id, "blocked");
    assert_eq!(blocked["prompt"]["kind"], "permission", "{blocked}");
    r.answer(&sid, &permission, "");
    let t = r.wait_final(&id);
    r.assert_hello_done(&t, DONE);
    r.by_hook(&id, "ready");
    r.follow_up(&t);
    r.by_hook(&id, "ready");
    // The hooks live in the session's own private system-defaults file, with its token, in
    // a place Gemini CLI takes it from: not under the state directory, which is in a
    // directory anyone may write to (see `Places`).
    let pid = r.session(&id).1["pid"].as_u64().expect("the session's pid");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("its environment");
    let defaults = environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"GEMINI_CLI_SYSTEM_DEFAULTS_PATH="))
        .map(|v| std::path::PathBuf::from(String::from_utf8_lossy(v).into_owned()))
        .expect("GEMINI_CLI_SYSTEM_DEFAULTS_PATH in its environment");
    assert!(
        defaults.ends_with(format!("{sid}/system-defaults.json")),
        "{}",
        defaults.display()
    );
    assert!(
        !defaults.starts_with(r.places.root.path()),
        "{}",
        defaults.display()
    );
    let meta = std::fs::metadata(&defaults).expect("system defaults");
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    assert_eq!(mode & 0o077, 0, "{}", defaults.display());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&defaults).unwrap_or_default())
        .expect("system defaults JSON");
    let env = &v["hooks"]["AfterAgent"][0]["hooks"][0]["env"];
    assert_eq!(env["ORCHESTRA_SESSION_ID"], sid.as_str(), "{v}");
    assert!(env["ORCHESTRA_HOOK_TOKEN"].is_string(), "{v}");
    // Nothing said it skipped them; and they are gone with the session.
    let t = r.task(&id);
    assert!(
        !t["metadata"]["output"].to_string().contains("note:"),
        "{t}"
    );
    let r = r.s.delete(&format!("{API}/sessions/{sid}"));
    assert!(r.status < 300, "{}", r.body);
    assert!(
        wait_until(WAIT, || !defaults.exists()),
        "{} outlived its session",
        defaults.display()
    );
}

/// With folder trust on (Gemini CLI's default), in a folder the user trusted before (its own
/// trustedFolders.json in its HOME): the hooks report.
#[test]
fn gemini_0_61_0_reports_through_its_hooks_in_a_trusted_folder() {
    let Some(r) = run(
        "gemini",
        hello_script("gemini"),
        gemini_home_trusting_the_repo,
        gemini_env,
    ) else {
        return;
    };
    let id = r.start_task(TASK, "safe");
    let (sid, permission) = r.wait_prompt(&id, "permission");
    r.by_hook(&id, "blocked");
    r.answer(&sid, &permission, "");
    let t = r.wait_final(&id);
    r.assert_hello_done(&t, DONE);
    r.by_hook(&id, "ready");
}

/// With folder trust on (its default) in a folder it has never been told to trust: `safe`
/// starts it trusted for this run (it used to ask, be answered, relaunch itself with the same
/// `--session-id` and exit with "already exists"), asks before writing, and its hooks report.
#[test]
fn gemini_0_61_0_safe_works_in_a_folder_not_trusted_yet() {
    let Some(r) = run(
        "gemini",
        hello_script("gemini"),
        gemini_home_with_folder_trust,
        gemini_env,
    ) else {
        return;
    };
    let id = r.start_task(TASK, "safe");
    let (sid, permission) = r.wait_prompt(&id, "permission");
    r.answer(&sid, &permission, "");
    let t = r.wait_final(&id);
    r.assert_hello_done(&t, DONE);
    r.by_hook(&id, "ready");
    let trusted = r.places.home().join(".gemini/trustedFolders.json");
    assert!(
        !trusted.exists(),
        "nothing was written to the user's trusted folders"
    );
}

/// Folder trust on (its default), nothing trusted yet.
fn gemini_home_with_folder_trust(home: &Path, _work: &Path, _url: &str) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir .gemini");
    let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
}

/// Folder trust on, the repository trusted by the user.
fn gemini_home_trusting_the_repo(home: &Path, work: &Path, _url: &str) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir .gemini");
    let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("write settings");
    let trusted = json!({ work.to_string_lossy(): "TRUST_FOLDER" });
    std::fs::write(dir.join("trustedFolders.json"), trusted.to_string()).expect("write trust");
}

impl Run {
    /// Stops orchestra and starts another on the same state directory, as a user restarting
    /// it would (the agents' own files, in HOME, stay).
    fn restart(&mut self) {
        self.s.stop();
        let config = self._config.path().join("config.toml");
        let env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let s = Server::try_start_env(
            &self.s.state_dir,
            &[
                "--config",
                &config.to_string_lossy(),
                "--max-concurrent",
                "1",
            ],
            &env,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // The stopped server's handle keeps the state directory alive; the new one runs.
        let stopped = std::mem::replace(&mut self.s, s);
        self.stopped.push(stopped);
        self.session_events = watch_sessions(&self.s);
    }
}

const CONTINUE: &str = "now say what the new file holds";
const CONTINUE_REPLY: &str = "The file holds hi.";

/// [`hello_script`] with a reply to [`CONTINUE`].
fn continue_script(cli: &str) -> impl FnOnce(&Path) -> Script {
    let hello = hello_script(cli);
    move |cwd| hello(cwd).turn(Turn::on_prompt(CONTINUE, Reply::text(CONTINUE_REPLY)))
}

impl Run {
    /// The file-writing task done under `first`, orchestra restarted, the task continued with
    /// [`CONTINUE`] on the same conversation: the CLI's last request to `endpoint` (a suffix)
    /// carries the earlier turns, and the task completes again with the new reply. `pinned`:
    /// orchestra gives the conversation its id (else the CLI resumes the directory's latest).
    fn continue_after_restart(&mut self, endpoint: &str, pinned: bool, first: Preset) {
        let (id, t) = self.hello_under(first);
        let conversation = t["metadata"]["conversationId"].clone();
        assert_eq!(conversation.is_string(), pinned, "{}: {t}", self.cli);

        self.restart();
        assert_eq!(self.task(&id)["metadata"]["conversationId"], conversation);
        let c = self.s.post(
            &format!("{API}/tasks/{id}/continue"),
            json!({"message": CONTINUE}),
        );
        assert_eq!(c.status, 200, "{}: {}", self.cli, c.body);
        assert_eq!(c.json()["task"]["metadata"]["status"], "running");
        let t = self.wait_final(&id);
        let ctx = self.context(&t);
        assert_eq!(
            t["metadata"]["status"], "completed",
            "{}: {t}\n{ctx}",
            self.cli
        );
        self.assert_summary_is_the_reply(&t, CONTINUE_REPLY);
        assert_eq!(t["metadata"]["conversationId"], conversation);
        // The resumed CLI sent the earlier turns with the new request.
        let last = self
            .model
            .requests_to(endpoint)
            .into_iter()
            .rfind(|q| q.body.to_string().contains(CONTINUE))
            .unwrap_or_else(|| panic!("{}: no request with the new message\n{ctx}", self.cli));
        let body = last.body.to_string();
        assert!(
            body.contains(TASK) && body.contains(DONE),
            "{}: {body}",
            self.cli
        );
    }
}

#[test]
fn claude_2_1_332_continues_its_conversation_after_orchestra_restarts() {
    let script = continue_script("claude");
    let Some(mut r) = run("claude", script, claude_home, claude_env) else {
        return;
    };
    r.continue_after_restart("/v1/messages", true, Preset::Auto);
}

#[test]
fn gemini_0_61_0_continues_its_conversation_after_orchestra_restarts() {
    let script = continue_script("gemini");
    let Some(mut r) = run("gemini", script, gemini_home, gemini_env) else {
        return;
    };
    r.continue_after_restart(":streamGenerateContent", true, Preset::Auto);
}

#[test]
fn opencode_1_18_33_continues_its_conversation_after_orchestra_restarts() {
    let script = continue_script("opencode");
    let Some(mut r) = run("opencode", script, opencode_home, |_| vec![]) else {
        return;
    };
    r.continue_after_restart(
        "/v1/messages",
        false,
        Preset::Safe {
            allow: "Allow once",
        },
    );
}

#[test]
fn aider_0_86_2_continues_its_chat_after_orchestra_restarts() {
    // Aider edits through edit blocks in its reply text; it keeps the chat in the directory.
    let edit = aider_edit(DONE);
    let Some(mut r) = run(
        "aider",
        |cwd| {
            aider_script(cwd)
                .turn(Turn::on_prompt(TASK, Reply::text(&edit)))
                .turn(Turn::on_prompt(CONTINUE, Reply::text(CONTINUE_REPLY)))
                .fallback("Add hello.txt")
        },
        aider_home,
        aider_env,
    ) else {
        return;
    };
    r.continue_after_restart("/v1/chat/completions", false, Preset::Safe { allow: "Yes" });
}

#[test]
fn codex_0_171_0_continues_its_session_after_orchestra_restarts() {
    let script = continue_script("codex");
    let Some(mut r) = run("codex", script, codex_home, |_| vec![]) else {
        return;
    };
    r.continue_after_restart("/v1/responses", false, Preset::Safe { allow: "" });
}

#[test]
fn claude_2_1_197_continues_its_conversation_after_orchestra_restarts() {
    let script = continue_script("claude");
    let Some(mut r) = run("claude-2.1.197", script, claude_home, claude_env) else {
        return;
    };
    r.continue_after_restart("/v1/messages", true, Preset::Auto);
}

/// How long after the refusal the scripted usage limit resets.
const LIMIT_RESETS_IN: u64 = 60;
/// What orchestra types once the limit has reset (`limits.rs`).
const CONTINUE_WORD: &str = "continue";

/// Every request gets the provider's usage-limit error until the limit resets, as a
/// provider's would; then (on the CLI's own retry, or on the "continue" orchestra types) the
/// model calls `tool`, and on its result says [`DONE`].
fn limit_script(cli: &str) -> impl FnOnce(&Path) -> Script {
    let (tool, input) = hello_write(cli);
    move |cwd| {
        Script::new(cwd)
            .turn(Turn::on_prompt("", Reply::limit(LIMIT_RESETS_IN)))
            .turn(Turn::on_tool_result("", Reply::text(DONE)).offering(tool))
            .turn(Turn::on_prompt("", Reply::tool(tool, input)).offering(tool))
            .fallback("Nothing scripted for that.")
    }
}

impl Run {
    /// The task started under `auto`, the model refusing it with the provider's usage-limit
    /// error: the CLI says so, the session becomes `limited` (with `resetsAt` when
    /// `names_reset`: the CLI said when), the task keeps running without holding autopilot's
    /// only slot, and the session stays `limited`, never `busy` for longer than a retry,
    /// until the wait is over: orchestra carries it on at the reset, saying why (or the CLI
    /// does by itself, and orchestra types nothing); then the model answers and the task
    /// completes with the file written.
    fn limit_waited_out(&self, names_reset: bool, carry: Carry) {
        let refused_at = now_ms();
        let id = self.start_task(TASK, "auto");
        let mut last = (String::new(), Value::Null);
        let ok = wait_until(Duration::from_secs(180), || {
            last = self.session(&id);
            last.1["status"] == "limited"
        });
        let (sid, session) = last;
        assert!(
            ok,
            "{}: never limited: {session}\n{}",
            self.cli,
            self.context(&self.task(&id))
        );
        let limited_at = now_ms();
        let resets_at = session["resetsAt"].as_i64();
        if names_reset {
            let at = resets_at.unwrap_or_else(|| {
                panic!(
                    "{}: no resetsAt: {session}\n{}",
                    self.cli,
                    self.context(&self.task(&id))
                )
            });
            // The CLI may name the reset to the minute only.
            let due = refused_at + LIMIT_RESETS_IN as i64 * 1000;
            assert!(
                at >= due - 61_000 && at <= limited_at + LIMIT_RESETS_IN as i64 * 1000 + 61_000,
                "{}: resetsAt {at} for a reset due at {due}: {session}",
                self.cli
            );
        } else {
            assert!(resets_at.is_none(), "{}: {session}", self.cli);
        }
        assert_eq!(self.task(&id)["metadata"]["status"], "running");

        // Autopilot's one slot is free while the agent waits: another task starts and ends.
        let other = create_task(
            &self.s,
            "meanwhile",
            json!({"description": "echo meanwhile", "providerId": "exec"}),
        );
        let other = other["id"].as_str().expect("task id").to_string();
        let r = self.s.post_empty("/api/agent/resume");
        assert_eq!(r.status, 200, "{}", r.body);
        let mut o = Value::Null;
        let started = wait_until(WAIT, || {
            o = self.task(&other);
            o["metadata"]["status"] == "completed"
        });
        assert!(started, "{}: the other task did not run: {o}", self.cli);
        let r = self.s.post_empty("/api/agent/pause");
        assert_eq!(r.status, 200, "{}", r.body);

        // Limited until the wait is over: orchestra continues it after the reset, saying why
        // (or the CLI carries on by itself, and orchestra types nothing).
        let auto_continue = || {
            let ms = self.s.get(&format!("{API}/sessions/{sid}/messages")).json()["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            // "continue" typed, or the answer to the CLI's own limit dialog (Gemini's "Keep
            // trying"), said to be for the limit.
            ms.into_iter().find(|m| {
                m["role"] == "user"
                    && m["auto"]
                        .as_str()
                        .is_some_and(|a| a.contains("usage limit"))
            })
        };
        // (When it saw each status: orchestra ends the limit just before it types.)
        let mut statuses: Vec<(i64, String)> = Vec::new();
        let over = wait_until(Duration::from_secs(200), || {
            let st = self.s.get(&format!("{API}/sessions/{sid}")).json()["session"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if statuses.last().is_none_or(|(_, s)| *s != st) {
                statuses.push((now_ms(), st.clone()));
            }
            match carry {
                Carry::Orchestra => auto_continue().is_some(),
                Carry::Itself => st != "limited",
            }
        });
        let t = self.task(&id);
        assert!(
            over,
            "{}: the limit never ended: {statuses:?}\n{}",
            self.cli,
            self.context(&t)
        );
        let ended = match carry {
            Carry::Orchestra => {
                let m = auto_continue().unwrap_or_default();
                assert!(
                    m["text"] == CONTINUE_WORD || m["keys"].is_array(),
                    "{}: {m}",
                    self.cli
                );
                m["at"].as_i64().unwrap_or_default()
            }
            Carry::Itself => statuses.last().map_or(0, |(at, _)| *at),
        };
        // Limited all along; a CLI that retries by itself (aider) is busy for a moment at
        // each retry, never longer.
        let lasting = statuses.windows(2).any(|w| {
            let ((at, s), (next, _)) = (&w[0], &w[1]);
            s != "limited" && *at <= ended - 5_000 && next - at > 3_000
        });
        let last_early = statuses
            .last()
            .is_some_and(|(at, s)| s != "limited" && *at <= ended - 5_000);
        assert!(
            !lasting && !last_early,
            "{}: while the limit lasted: {statuses:?}, over at {ended}",
            self.cli
        );
        if let Some(at) = resets_at {
            // (A CLI's own countdown may end a second early.)
            assert!(
                ended >= at - 2_000,
                "{}: over at {ended}, before {at}",
                self.cli
            );
        }
        let t = self.wait_final(&id);
        self.assert_hello_done(&t, DONE);
        if carry == Carry::Itself {
            assert!(
                auto_continue().is_none(),
                "{}: {:?}",
                self.cli,
                auto_continue()
            );
        }
    }
}

/// Who carries on once a usage limit resets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Carry {
    /// Orchestra: it types "continue" (or answers the CLI's limit dialog).
    Orchestra,
    /// The CLI, which waits out the limit by itself (showing it meanwhile).
    Itself,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

#[test]
fn claude_2_1_332_waits_out_its_usage_limit_and_continues() {
    let script = limit_script("claude");
    let Some(r) = run("claude", script, claude_home, claude_env) else {
        return;
    };
    r.limit_waited_out(false, Carry::Orchestra);
}

/// With a subscription's token (`CLAUDE_CODE_OAUTH_TOKEN`) Claude Code reads the unified
/// rate-limit headers: it names the reset and waits for it by itself, continuing then.
#[test]
fn claude_2_1_332_on_a_subscription_waits_out_its_usage_limit_by_itself() {
    let script = limit_script("claude");
    let env = |url: &str| {
        vec![
            ("ANTHROPIC_BASE_URL", url.to_string()),
            (
                "CLAUDE_CODE_OAUTH_TOKEN",
                "sk-ant-oat01-scripted".to_string(),
            ),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
            ("DISABLE_AUTOUPDATER", "1".to_string()),
        ]
    };
    let Some(r) = run("claude", script, claude_home, env) else {
        return;
    };
    r.limit_waited_out(true, Carry::Itself);
}

#[test]
fn codex_0_171_0_waits_out_its_usage_limit_and_continues() {
    let Some(r) = run("codex", limit_script("codex"), codex_home, |_| vec![]) else {
        return;
    };
    r.limit_waited_out(true, Carry::Orchestra);
}

#[test]
fn gemini_0_61_0_waits_out_its_usage_limit_and_continues() {
    let script = limit_script("gemini");
    let Some(r) = run("gemini", script, gemini_home, gemini_env) else {
        return;
    };
    r.limit_waited_out(false, Carry::Orchestra);
}

#[test]
fn opencode_1_18_33_waits_out_its_usage_limit_by_itself() {
    let script = limit_script("opencode");
    let Some(r) = run("opencode", script, opencode_home, |_| vec![]) else {
        return;
    };
    r.limit_waited_out(true, Carry::Itself);
}

#[test]
fn aider_0_86_2_waits_out_its_usage_limit_and_continues() {
    // Aider edits through edit blocks in its reply text, not a tool.
    let edit = aider_edit(DONE);
    let Some(r) = run(
        "aider",
        |cwd| {
            aider_script(cwd)
                // Longer than its own retries (about a minute): it gives up and says so.
                .turn(Turn::on_prompt("", Reply::limit(100)))
                .turn(Turn::on_prompt("", Reply::text(&edit)))
        },
        aider_home,
        aider_env,
    ) else {
        return;
    };
    r.limit_waited_out(false, Carry::Orchestra);
}

#[test]
fn opencode_1_18_33_is_told_how_to_report_and_its_step_shows_in_the_task() {
    // The scripted model runs `orchestra report step` through OpenCode's shell tool, as an
    // agent that read orchestra's instructions would.
    let report = |cwd: &Path| {
        Script::new(cwd)
            .turn(Turn::on_tool_result("", Reply::text(DONE)).offering("bash"))
            .turn(
                Turn::on_prompt(
                    "report a step",
                    Reply::tool(
                        "bash",
                        json!({"command": "orchestra report step 'Writing the greeting'",
                               "description": "Report a step to orchestra"}),
                    ),
                )
                .offering("bash"),
            )
            .fallback("Nothing scripted for that.")
    };
    let Some(r) = run("opencode", report, opencode_home, |_| vec![]) else {
        return;
    };
    let id = r.start_task("report a step to orchestra", "auto");
    let ok = wait_until(WAIT, || {
        r.task(&id)["metadata"]["steps"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["description"] == "Writing the greeting"))
    });
    let t = r.task(&id);
    assert!(ok, "no step reported: {t}\n{}", r.context(&t));
    // It learnt of `orchestra report` from its instructions, not from a file in the repo.
    let told = r.model.requests_to("/v1/messages").iter().any(|q| {
        q.body["system"]
            .to_string()
            .contains("orchestra report step")
    });
    assert!(told, "{}", r.model.log());
    let status = git(r.work.path(), &["status", "--porcelain"]);
    assert!(status.is_empty(), "{status}");
}

#[test]
fn gemini_0_61_0_is_told_how_to_report_and_its_step_shows_in_the_task() {
    // The scripted model runs `orchestra report step` through Gemini CLI's shell tool, as an
    // agent that read orchestra's instructions would.
    let report = |cwd: &Path| {
        Script::new(cwd)
            .turn(Turn::on_tool_result("", Reply::text(DONE)).offering("run_shell_command"))
            .turn(
                Turn::on_prompt(
                    "report a step",
                    Reply::tool(
                        "run_shell_command",
                        json!({"command": "orchestra report step 'Writing the greeting'",
                               "description": "Report a step to orchestra"}),
                    ),
                )
                .offering("run_shell_command"),
            )
            .fallback("Nothing scripted for that.")
    };
    let Some(r) = run("gemini", report, gemini_home, gemini_env) else {
        return;
    };
    let id = r.start_task("report a step to orchestra", "auto");
    let ok = wait_until(WAIT, || {
        r.task(&id)["metadata"]["steps"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["description"] == "Writing the greeting"))
    });
    let t = r.task(&id);
    assert!(ok, "no step reported: {t}\n{}", r.context(&t));
    // It learnt of `orchestra report` from its context file (which it sends as session
    // context, beside the system instruction), not from a file in the repo.
    let told = r
        .model
        .requests_to(":streamGenerateContent")
        .iter()
        .any(|q| q.body.to_string().contains("orchestra report step"));
    assert!(told, "{}\n{}", r.model.log(), r.context(&t));
    let status = git(r.work.path(), &["status", "--porcelain"]);
    assert!(status.is_empty(), "{status}");
}
