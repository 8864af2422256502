//! An `orchestra serve` of a private state directory for the benches, with shell agents.

use super::tmux::shell_quote;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The daemon of a private state directory; dropping it runs `orchestra stop`.
pub struct Daemon {
    pub bin: PathBuf,
    pub root: PathBuf,
    pub child: Child,
    pub addr: String,
    pub http: ureq::Agent,
}

impl Daemon {
    pub fn env(cmd: &mut Command, root: &Path) {
        cmd.env("HOME", root.join("home"))
            .env("SHELL", "/bin/bash")
            .env("TERM", "xterm-256color")
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("ORCHESTRA_DEFAULT_PROVIDER", "shell")
            .env_remove("ORCHESTRA_URL")
            .env_remove("ORCHESTRA_TOKEN")
            .env_remove("TMUX");
    }

    pub fn start(bin: &Path, root: &Path) -> Option<Daemon> {
        Daemon::start_with_env(bin, root, &[])
    }

    /// As `start`, with extra environment for the daemon (and so for its sessions).
    pub fn start_with_env(bin: &Path, root: &Path, env: &[(&str, &str)]) -> Option<Daemon> {
        let mut cmd = Command::new(bin);
        // A throwaway rig: the benches' clients send no token; the TUIs they drive read
        // server.json as ever.
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--insecure-no-auth"])
            .args(["--max-sessions", "64"])
            .args(["--grace", "1", "--state-dir"])
            .arg(root.join("state"))
            .current_dir(root.join("work"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        Daemon::env(&mut cmd, root);
        cmd.envs(env.iter().copied());
        super::detach_as_orchestra_does(&mut cmd);
        let mut child = cmd.spawn().ok()?;
        let addr = super::listening_addr(&mut child)?;
        let http = super::http_agent();
        Some(Daemon {
            bin: bin.to_path_buf(),
            root: root.to_path_buf(),
            child,
            addr,
            http,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("http://{}/api/coding-agents{path}", self.addr);
        super::json_call(&self.http, method, &url, body)
    }

    /// Types a line into a session's shell.
    pub fn type_line(&self, session: &str, text: &str) {
        self.call(
            "POST",
            &format!("/sessions/{session}/messages"),
            Some(json!({ "text": text })),
        );
    }

    pub fn keys(&self, session: &str, keys: &[&str]) {
        self.call(
            "POST",
            &format!("/sessions/{session}/messages"),
            Some(json!({ "keys": keys })),
        );
    }

    /// A started shell task named `name`; its session id once the shell is ready.
    pub fn start_agent(&self, name: &str) -> Option<String> {
        let task = self.call(
            "POST",
            "/tasks",
            Some(
                json!({"name": name, "description": format!("echo {name} up"),
                "providerId": "shell", "workingDirectory": self.root.join("work")}),
            ),
        );
        let Some(id) = task["task"]["id"].as_str().map(str::to_string) else {
            println!("  creating {name}: {task}");
            return None;
        };
        let started = self.call("POST", &format!("/tasks/{id}/start"), None);
        let session = started["task"]["metadata"]["sessionId"]
            .as_str()
            .map(str::to_string);
        if session.is_none() {
            println!("  starting {name}: {started}");
        }
        session
    }

    pub fn all_ready(&self, sessions: &[String], within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while sessions.iter().any(|s| {
            self.call("GET", &format!("/sessions/{s}"), None)["session"]["status"] != "ready"
        }) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }

    /// The command line of a pane that runs the TUI once a line arrives on `go` (so the clock
    /// starts exactly when it is launched), or at once.
    pub fn tui_script(&self, go: Option<&Path>) -> String {
        let wait = go
            .map(|g| format!("read _ < {}; ", shell_quote(g)))
            .unwrap_or_default();
        let r = &self.root;
        format!(
            "{wait}cd {work} && exec env -u ORCHESTRA_URL -u ORCHESTRA_TOKEN -u TMUX HOME={home} XDG_CONFIG_HOME={config} SHELL=/bin/bash TERM=xterm-256color {bin} --state-dir {state}",
            work = shell_quote(r.join("work")),
            home = shell_quote(r.join("home")),
            config = shell_quote(r.join("config")),
            bin = shell_quote(&self.bin),
            state = shell_quote(r.join("state")),
        )
    }

    /// Stops the daemon (`orchestra stop`, SIGTERM if that fails, SIGKILL after `within`) and
    /// reaps it; its exit status, `None` if it had to be killed.
    pub fn stop(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        if let Ok(Some(st)) = self.child.try_wait() {
            return Some(st);
        }
        let mut stop = Command::new(&self.bin);
        stop.arg("stop")
            .arg("--state-dir")
            .arg(self.root.join("state"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Daemon::env(&mut stop, &self.root);
        let stopped = stop.status().is_ok_and(|s| s.success());
        if !stopped {
            // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
            unsafe { libc::kill(self.pid(), libc::SIGTERM) };
        }
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // A daemon already reaped has a pid that may belong to someone else by now.
        self.stop(Duration::from_secs(30));
    }
}
