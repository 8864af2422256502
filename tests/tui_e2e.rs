//! The real binary's TUI inside a detached tmux session: create a task from the form, start
//! it, type into its shell, see the output, pause, resume, cancel, quit, and leave nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A private tmux server, killed on drop (even when the test fails).
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    fn send(&self, keys: &[&str]) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "tui"])
            .args(keys)
            .status()
            .expect("tmux send-keys")
            .success();
        assert!(ok, "send-keys {keys:?}");
    }

    fn send_literal(&self, text: &str) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", "tui", "-l", text])
            .status()
            .expect("tmux send-keys")
            .success();
        assert!(ok, "send-keys -l {text:?}");
    }

    fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "tui"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen until `ok` holds; panics with the last screen after the deadline.
    fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn alive(&self) -> bool {
        self.cmd()
            .args(["has-session", "-t", "tui"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
        // tmux leaves its socket file behind.
        let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
        let uid = unsafe { libc::getuid() };
        let _ = std::fs::remove_file(format!("{dir}/tmux-{uid}/{}", self.socket));
    }
}

impl Tmux {
    /// A tmux format variable of the pane (`pane_dead`, `alternate_on`, …).
    fn pane_var(&self, name: &str) -> String {
        self.cmd()
            .args([
                "display-message",
                "-p",
                "-t",
                "tui",
                &format!("#{{{name}}}"),
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    /// Waits for the program in the pane to exit; its exit status.
    fn wait_exit(&self, on_screen: impl Fn(&Tmux, &str)) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.capture();
            on_screen(self, &s);
            if self.pane_var("pane_dead") == "1" || !self.alive() {
                return self.pane_var("pane_dead_status");
            }
            assert!(
                Instant::now() < deadline,
                "orchestra did not exit; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts orchestra in a tmux session on a private socket; returns the server, the temp root.
fn start(tmp: &Path) -> (Tmux, PathBuf) {
    let root: PathBuf = tmp.canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    let state = root.join("state");
    for d in [&home, &work, &state, &root.join("config")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_orchestra");
    let socket = format!(
        "orch-e2e-{}-{}",
        std::process::id(),
        root.file_name().unwrap().to_string_lossy()
    );
    let tmux = Tmux { socket };
    // HOME is private so no rc file of the machine runs in the shell; the marker for leftover
    // processes is the temp dir, which is in HOME (passed to sessions) and the cwd.
    let script = format!(
        "cd {work} && exec env HOME={home} XDG_CONFIG_HOME={config} ORCHESTRA_DEFAULT_PROVIDER=shell SHELL=/bin/bash TERM=xterm-256color {bin} --state-dir {state} --grace 1",
        work = shell_quote(&work),
        home = shell_quote(&home),
        config = shell_quote(&root.join("config")),
        bin = shell_quote(Path::new(bin)),
        state = shell_quote(&state),
    );
    let ok = tmux
        .cmd()
        .args([
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            "160",
            "-y",
            "45",
            &script,
        ])
        .status()
        .unwrap()
        .success();
    assert!(ok, "tmux new-session");
    // Keep the pane when the program exits, to tell a quit from a crash.
    let _ = tmux
        .cmd()
        .args(["set-option", "-t", "tui", "remain-on-exit", "on"])
        .status();
    tmux.wait("the first frame", |s| {
        s.contains("Tasks (0)") && s.contains("API http://127.0.0.1:")
    });
    (tmux, root)
}

/// Processes whose environment carries `marker` (our test's temp dir is in HOME and PWD).
fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if env
            .split(|b| *b == 0)
            .any(|kv| String::from_utf8_lossy(kv).contains(marker))
        {
            let state = proc_state(pid).unwrap_or('?');
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            found.push((pid, format!("{state} {cmd}")));
        }
    }
    found
}

fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S …`: the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The session pids orchestra records (from `orchestra session list` would need the API; the
/// environment marker is simpler): children of our shell sessions carry ORCHESTRA_SESSION_ID.
fn session_processes(marker: &str) -> Vec<(u32, String)> {
    processes_with(marker)
        .into_iter()
        .filter(|(pid, _)| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| {
                    env.split(|b| *b == 0)
                        .any(|kv| kv.starts_with(b"ORCHESTRA_SESSION_ID="))
                })
                .unwrap_or(false)
        })
        .collect()
}

fn wait_until(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn tui_end_to_end_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let work = root.join("work");
    let state = root.join("state");
    let marker = root.to_string_lossy().into_owned();

    assert!(Path::new(&state.join("server.json")).exists());

    // The CLI finds the TUI's embedded server through server.json, and what it does shows
    // on screen at once; so do steps and progress reported by a subagent over the API.
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_orchestra"))
            .args(args)
            .arg("--state-dir")
            .arg(&state)
            .env_remove("ORCHESTRA_URL")
            .output()
            .expect("run the CLI");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let added = cli(&[
        "task",
        "add",
        "from the cli",
        "--description",
        "made by the CLI",
        "--json",
    ]);
    let cli_task: serde_json::Value = serde_json::from_str(&added).expect("task JSON");
    let cli_id = cli_task["task"]["id"]
        .as_str()
        .expect("task id")
        .to_string();
    tmux.wait("the CLI's task on screen", |s| s.contains("○ from the cli"));
    let listed = cli(&["task", "list"]);
    assert!(listed.contains("from the cli"), "{listed}");
    cli(&["task", "cancel", &cli_id]);
    tmux.wait("the CLI's cancel on screen", |s| {
        s.contains("⊘ from the cli")
    });

    // New task from the form.
    tmux.send(&["n"]);
    tmux.wait("the form", |s| s.contains("New task"));
    tmux.send_literal("e2e shell");
    tmux.send(&["Tab"]);
    tmux.send_literal("echo ready-$((2+3))");
    tmux.send(&["Tab"]);
    let screen = tmux.wait("the provider field", |s| {
        s.contains("› Provider") || s.contains("›Provider")
    });
    assert!(
        screen.contains("(shell)"),
        "shell is the default provider:\n{screen}"
    );
    tmux.send(&["Tab"]);
    let screen = tmux.capture();
    assert!(
        screen.contains(&*work.to_string_lossy()),
        "the directory defaults to the cwd:\n{screen}"
    );
    tmux.send(&["Tab"]);
    // Start now: no; we start it with `s`.
    tmux.send(&["n"]);
    tmux.send(&["Enter"]);
    tmux.wait("the task in the list", |s| {
        s.contains("○ e2e shell") && !s.contains("New task")
    });

    // s starts it: the shell runs the description as its first command.
    tmux.send(&["s"]);
    tmux.wait("the task to run", |s| {
        s.contains("▶ e2e shell") && s.contains("ready-5")
    });

    // Enter focuses the terminal; what we type runs in the shell.
    tmux.send(&["Enter"]);
    tmux.wait("typing mode", |s| s.contains("TYPING"));
    tmux.send_literal("echo hi-$((6*7))");
    tmux.send(&["Enter"]);
    let screen = tmux.wait("the output in the terminal pane", |s| s.contains("hi-42"));
    // The output is inside the terminal pane (right of the left column), not elsewhere.
    let line = screen.lines().find(|l| l.contains("hi-42")).unwrap();
    let col = line.find("hi-42").unwrap();
    assert!(col > 40, "hi-42 is in the right pane: {line:?}");
    tmux.send(&["C-q"]);
    tmux.wait("typing mode to end", |s| !s.contains("TYPING"));

    let sessions = session_processes(&marker);
    assert!(!sessions.is_empty(), "the shell runs with our HOME");

    // p pauses: every process of the session is stopped (T).
    tmux.send(&["p"]);
    tmux.wait("paused", |s| s.contains("‖ e2e shell"));
    wait_until("processes stopped", 10, || {
        let ps = session_processes(&marker);
        !ps.is_empty() && ps.iter().all(|(_, d)| d.starts_with('T'))
    });

    // r resumes.
    tmux.send(&["r"]);
    tmux.wait("running again", |s| s.contains("▶ e2e shell"));
    wait_until("processes running", 10, || {
        session_processes(&marker)
            .iter()
            .all(|(_, d)| !d.starts_with('T'))
    });

    // c asks; y cancels.
    tmux.send(&["c"]);
    tmux.wait("the confirmation", |s| s.contains("Cancel task"));
    tmux.send(&["y"]);
    tmux.wait("cancelled", |s| s.contains("⊘ e2e shell"));
    wait_until("the session's processes to end", 10, || {
        session_processes(&marker).is_empty()
    });

    // q quits (nothing runs, so it does not ask; answer y if it does).
    tmux.send(&["q"]);
    let status = tmux.wait_exit(|t, s| {
        if s.contains("Quit and end") {
            t.send(&["y"]);
        }
    });
    assert!(status.is_empty() || status == "0", "exit status {status}");
    // Nothing of ours is left: no orchestra, no shell, no child.
    wait_until("no process left", 10, || {
        processes_with(&marker)
            .iter()
            .all(|(_, d)| d.contains("tmux"))
    });
    assert!(
        !state.join("server.json").exists(),
        "server.json removed on quit"
    );
}

/// A task `long` (`sleep 300`) started from the form (start now: yes, the default).
fn start_a_long_task(tmux: &Tmux) {
    tmux.send(&["n"]);
    tmux.wait("the form", |s| s.contains("New task"));
    tmux.send_literal("long");
    tmux.send(&["Tab"]);
    tmux.send_literal("sleep 300");
    tmux.send(&["Enter"]);
    tmux.wait("the task to run", |s| s.contains("▶ long"));
}

/// Waits for orchestra to exit with status 0, leaving no process of ours behind.
fn exits_cleanly(tmux: &Tmux, marker: &str) {
    let status = tmux.wait_exit(|_, _| {});
    assert!(status.is_empty() || status == "0", "exit status {status}");
    wait_until("no process left", 10, || {
        processes_with(marker)
            .iter()
            .all(|(_, d)| d.contains("tmux"))
    });
}

#[test]
fn sigterm_ends_agents_and_restores_the_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    start_a_long_task(&tmux);
    wait_until("the sleep", 10, || {
        session_processes(&marker)
            .iter()
            .any(|(_, d)| d.contains("sleep 300"))
    });
    assert_eq!(tmux.pane_var("alternate_on"), "1");
    let server: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("state/server.json")).unwrap())
            .unwrap();
    let pid = server["pid"].as_i64().unwrap() as i32;
    unsafe { libc::kill(pid, libc::SIGTERM) };
    exits_cleanly(&tmux, &marker);
    // The terminal is back: main screen, no mouse reporting.
    assert_eq!(tmux.pane_var("alternate_on"), "0");
    assert_eq!(tmux.pane_var("mouse_any_flag"), "0");
}

#[test]
fn quitting_with_agents_running_cancels_their_tasks_saying_so() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    start_a_long_task(&tmux);
    // q asks first while agents run; y ends them and quits.
    tmux.send(&["q"]);
    tmux.wait("the confirmation", |s| s.contains("Quit and end"));
    tmux.send(&["y"]);
    exits_cleanly(&tmux, &marker);
    // Ended on purpose: cancelled, saying by whom; not failed, interrupted or killed.
    let s = support::Server::start_in(&root.join("state"), &[]);
    let tasks = s.get("/api/coding-agents/tasks").json()["tasks"].clone();
    let m = &tasks[0]["metadata"];
    assert_eq!(m["status"], "cancelled", "{tasks}");
    assert_eq!(
        m["error"], "cancelled: orchestra was stopped by the user",
        "{tasks}"
    );
}

/// Issue 9 item 3 in the real binary: `Ctrl-a` is not `a` (it would turn autopilot on and
/// start every pending task), `Ctrl-n`/`Alt-n` open no form, `Ctrl-p` pauses nothing.
#[test]
fn ctrl_a_does_not_turn_autopilot_on() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let state = root.join("state");
    let marker = root.to_string_lossy().into_owned();
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_orchestra"))
            .args(args)
            .arg("--state-dir")
            .arg(&state)
            .env_remove("ORCHESTRA_URL")
            .output()
            .expect("run the CLI");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    cli(&["task", "add", "waits", "--description", "sleep 300"]);
    tmux.wait("the pending task", |s| s.contains("○ waits"));

    tmux.send(&["C-a"]);
    tmux.send(&["C-n"]);
    tmux.send(&["M-n"]);
    tmux.send(&["C-p"]);
    tmux.send(&["M-a"]);
    tmux.send(&["C-s"]);
    // `?` after them: the keys are read in order, so once the help shows every one of them
    // was handled; had a form opened, `?` would have been typed into it instead.
    tmux.send(&["?"]);
    tmux.wait("the help", |s| {
        s.contains("Keys") && s.contains("Esc closes")
    });
    tmux.send(&["Escape"]);
    let screen = tmux.wait("the help to close", |s| !s.contains("Esc closes"));
    assert!(screen.contains("autopilot off"), "{screen}");
    assert!(!screen.contains("autopilot ON"), "{screen}");
    assert!(screen.contains("○ waits"), "{screen}");
    assert!(!screen.contains("New task"), "{screen}");
    let status: serde_json::Value =
        serde_json::from_str(&cli(&["status", "--json"])).expect("status JSON");
    assert_eq!(status["status"]["state"], "paused", "{status}");
    assert!(session_processes(&marker).is_empty(), "nothing was started");

    // Plain `a` is the key: it turns autopilot on, which starts the task.
    tmux.send(&["a"]);
    tmux.wait("autopilot on and the task running", |s| {
        s.contains("autopilot ON") && s.contains("▶ waits")
    });
    tmux.send(&["q"]);
    tmux.wait("the quit question", |s| s.contains("Quit and end"));
    tmux.send(&["y"]);
    let status = tmux.wait_exit(|_, _| {});
    assert!(status.is_empty() || status == "0", "exit status {status}");
    wait_until("no process left", 10, || {
        processes_with(&marker)
            .iter()
            .all(|(_, d)| d.contains("tmux"))
    });
}

/// Issue 9 item 2: a real bracketed paste (tmux `paste-buffer -p`, newlines sent as `\r` as a
/// terminal sends them) into the form's description keeps its lines, and an `exec` task runs
/// each line as its own command.
#[test]
fn a_pasted_description_keeps_its_lines() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    tmux.send(&["n"]);
    tmux.wait("the form", |s| s.contains("New task"));
    tmux.send_literal("two lines");
    tmux.send(&["Tab"]);
    let ok = tmux
        .cmd()
        .args([
            "set-buffer",
            "-b",
            "p",
            "echo one-$((1+1))\necho two-$((2+2))",
        ])
        .status()
        .unwrap()
        .success()
        && tmux
            .cmd()
            .args(["paste-buffer", "-p", "-b", "p", "-t", "tui"])
            .status()
            .unwrap()
            .success();
    assert!(ok, "tmux paste");
    tmux.wait("each pasted line on its own row", |s| {
        s.lines()
            .any(|l| l.contains("echo one-$((1+1))") && !l.contains("echo two"))
            && s.lines().any(|l| l.contains("echo two-$((2+2))"))
    });
    // The provider: `e` jumps to exec. The directory is the default; start now is on.
    tmux.send(&["Tab"]);
    tmux.send(&["e"]);
    tmux.wait("exec chosen", |s| s.contains("(exec)"));
    tmux.send(&["Enter"]);
    tmux.wait("both commands' output", |s| {
        s.contains("one-2") && s.contains("two-4") && s.contains("✓ two lines")
    });
    tmux.send(&["q"]);
    let status = tmux.wait_exit(|t, s| {
        if s.contains("Quit and end") {
            t.send(&["y"]);
        }
    });
    assert!(status.is_empty() || status == "0", "exit status {status}");
    wait_until("no process left", 10, || {
        processes_with(&marker)
            .iter()
            .all(|(_, d)| d.contains("tmux"))
    });
}
