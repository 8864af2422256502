//! The real binary's TUI inside a detached tmux session: create a task from the form, start
//! it, type into its shell, see the output, pause, resume, cancel, detach, come back, stop,
//! and leave nothing. The TUI is a client of the orchestra daemon it starts; every test stops
//! that daemon (or its drop does).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A session of a private tmux server. The first one owns the server: dropping it kills the
/// server, then stops the orchestra daemon of `state` (even when the test fails).
struct Tmux {
    socket: String,
    session: String,
    state: Option<PathBuf>,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// Another session on the same server running `script` (a second terminal).
    fn open(&self, session: &str, script: &str) -> Tmux {
        let t = Tmux {
            socket: self.socket.clone(),
            session: session.to_string(),
            state: None,
        };
        t.new_session(script);
        t
    }

    fn new_session(&self, script: &str) {
        let ok = self
            .cmd()
            .args([
                "new-session",
                "-d",
                "-s",
                &self.session,
                "-x",
                "160",
                "-y",
                "45",
                script,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux new-session");
        // Keep the pane when the program exits, to tell a detach from a crash.
        let _ = self
            .cmd()
            .args(["set-option", "-t", &self.session, "remain-on-exit", "on"])
            .status();
    }

    fn send(&self, keys: &[&str]) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", &self.session])
            .args(keys)
            .status()
            .expect("tmux send-keys")
            .success();
        assert!(ok, "send-keys {keys:?}");
    }

    fn send_literal(&self, text: &str) {
        let ok = self
            .cmd()
            .args(["send-keys", "-t", &self.session, "-l", text])
            .status()
            .expect("tmux send-keys")
            .success();
        assert!(ok, "send-keys -l {text:?}");
    }

    /// The screen, and the lines scrolled above it (the TUI's parting line may be there).
    fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-S", "-100", "-t", &self.session])
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
            .args(["has-session", "-t", &self.session])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let Some(state) = self.state.take() else {
            return;
        };
        let _ = self.cmd().arg("kill-server").output();
        stop_daemon(&state);
        // tmux leaves its socket file behind.
        let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
        // SAFETY: getuid(2) has no preconditions and cannot fail.
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
                &self.session,
                &format!("#{{{name}}}"),
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    /// The TUI's pid: the child of the pane's shell.
    fn tui_pid(&self) -> u32 {
        let shell = self.pane_var("pane_pid");
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap_or_default();
        children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no TUI under the pane's shell {shell}"))
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

/// The command line of a terminal that runs `orchestra` (attaching to the daemon of the test's
/// state directory, started by the first one).
fn tui_script(root: &Path) -> String {
    let bin = env!("CARGO_BIN_EXE_orchestra");
    // HOME is private so no rc file of the machine runs in the shell; the marker for leftover
    // processes is the temp dir, which is in HOME (passed to the daemon and its sessions).
    // Not `exec`: as from a shell, what the TUI prints as it leaves is read before the pane
    // closes (tmux may lose a dying pane's last output).
    format!(
        "cd {work} && env -u ORCHESTRA_URL -u ORCHESTRA_TOKEN HOME={home} XDG_CONFIG_HOME={config} ORCHESTRA_DEFAULT_PROVIDER=shell SHELL=/bin/bash TERM=xterm-256color {bin} --state-dir {state} --grace 1; exit $?",
        work = shell_quote(&root.join("work")),
        home = shell_quote(&root.join("home")),
        config = shell_quote(&root.join("config")),
        bin = shell_quote(Path::new(bin)),
        state = shell_quote(&root.join("state")),
    )
}

/// Starts orchestra in a tmux session on a private socket; returns the session, the temp root.
fn start(tmp: &Path) -> (Tmux, PathBuf) {
    let root: PathBuf = tmp.canonicalize().unwrap();
    for d in ["home", "work", "state", "config"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let socket = format!(
        "orch-e2e-{}-{}",
        std::process::id(),
        root.file_name().unwrap().to_string_lossy()
    );
    let tmux = Tmux {
        socket,
        session: "tui".into(),
        state: Some(root.join("state")),
    };
    tmux.new_session(&tui_script(&root));
    tmux.wait("the first frame", |s| {
        s.contains("Tasks (0)") && s.contains("API http://127.0.0.1:")
    });
    (tmux, root)
}

/// The daemon's pid from its server.json.
fn daemon_pid(state: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(state.join("server.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["pid"].as_i64().map(|p| p as i32)
}

/// Ends the daemon of `state` if one runs (SIGTERM: it ends its agents and exits), waiting
/// for it to be gone.
fn stop_daemon(state: &Path) {
    let Some(pid) = daemon_pid(state) else { return };
    // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline && proc_state(pid as u32).is_some_and(|s| s != 'Z') {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `orchestra ARGS… --state-dir STATE`, as a user would type it; its stdout.
fn cli(root: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_orchestra"))
        .args(args)
        .arg("--state-dir")
        .arg(root.join("state"))
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .env("HOME", root.join("home"))
        .output()
        .expect("run the CLI");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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

    // The CLI finds the daemon through server.json, and what it does shows
    // on screen at once; so do steps and progress reported by a subagent over the API.
    let cli = |args: &[&str]| cli(&root, args);
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

    // q detaches at once, saying what still runs and how to come back.
    tmux.send(&["q"]);
    let status = tmux.wait_exit(|_, _| {});
    assert!(status.is_empty() || status == "0", "exit status {status}");
    tmux.wait("the detach line", |s| {
        s.contains("0 agents still running; run `orchestra` to come back")
    });
    // `orchestra stop` ends the daemon: nothing of ours is left.
    cli(&["stop"]);
    no_process_left(&marker);
    assert!(
        !state.join("server.json").exists(),
        "server.json removed when orchestra stops"
    );
}

fn no_process_left(marker: &str) {
    wait_until("no process left", 15, || {
        processes_with(marker)
            .iter()
            .all(|(_, d)| d.contains("tmux"))
    });
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

/// The TUI exits with status 0.
fn exits(tmux: &Tmux) {
    let status = tmux.wait_exit(|_, _| {});
    assert!(status.is_empty() || status == "0", "exit status {status}");
}

/// `Q`, then `y` to the question naming `live` agents: orchestra stops, the TUI exits, and
/// nothing of ours is left.
fn stop_with_q(tmux: &Tmux, live: usize, marker: &str) {
    tmux.send(&["Q"]);
    let question = if live == 0 {
        "No agent is running".to_string()
    } else {
        format!(
            "end {live} running agent{}",
            if live == 1 { "" } else { "s" }
        )
    };
    tmux.wait("the stop question", |s| {
        s.contains("Stop orchestra") && s.contains(&question)
    });
    tmux.send(&["y"]);
    exits(tmux);
    // The TUI leaves once orchestra has ended its agents and exited.
    let left = session_processes(marker);
    assert!(left.is_empty(), "agents still running: {left:?}");
    no_process_left(marker);
}

/// The sleep of `start_a_long_task` runs.
fn sleep_runs(marker: &str) -> bool {
    session_processes(marker)
        .iter()
        .any(|(_, d)| d.contains("sleep 300"))
}

/// SIGTERM or SIGHUP (the terminal lost) to the TUI is a detach: the terminal is put back,
/// the agents keep running.
#[test]
fn sigterm_detaches_and_restores_the_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    start_a_long_task(&tmux);
    wait_until("the sleep", 10, || sleep_runs(&marker));
    assert_eq!(tmux.pane_var("alternate_on"), "1");
    let tui = tmux.tui_pid() as i32;
    // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
    unsafe { libc::kill(tui, libc::SIGTERM) };
    exits(&tmux);
    // The terminal is back: main screen, no mouse reporting.
    assert_eq!(tmux.pane_var("alternate_on"), "0");
    assert_eq!(tmux.pane_var("mouse_any_flag"), "0");
    tmux.wait("the detach line", |s| s.contains("1 agent still running"));
    assert!(sleep_runs(&marker), "the agent outlives the TUI");
    cli(&root, &["stop"]);
    no_process_left(&marker);
}

#[test]
fn stopping_with_agents_running_cancels_their_tasks_saying_so() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    start_a_long_task(&tmux);
    // An agent started from the CLI just before Q is counted: the question names what
    // orchestra runs when Q is pressed, not what was last drawn. y ends them and orchestra.
    cli(&root, &["session", "spawn", "--provider", "shell"]);
    stop_with_q(&tmux, 2, &marker);
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
    let marker = root.to_string_lossy().into_owned();
    let cli = |args: &[&str]| cli(&root, args);
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
    stop_with_q(&tmux, 1, &marker);
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
            .args(["paste-buffer", "-p", "-b", "p", "-t", &tmux.session])
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
    stop_with_q(&tmux, 0, &marker);
}

/// Issue 10: agents outlive the TUI. A task started from the TUI keeps running after `q`; the
/// CLI sees it; `orchestra` in another terminal comes back to the same screen, and typing
/// into it reaches the agent.
#[test]
fn detach_and_come_back_to_the_same_screen() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    tmux.send(&["n"]);
    tmux.wait("the form", |s| s.contains("New task"));
    tmux.send_literal("kept");
    tmux.send(&["Tab"]);
    tmux.send_literal("echo before-$((20+3))");
    tmux.send(&["Enter"]);
    tmux.wait("the shell's first output", |s| {
        s.contains("▶ kept") && s.contains("before-23")
    });
    let shells = session_processes(&marker);
    assert!(!shells.is_empty(), "the shell runs");

    tmux.send(&["q"]);
    exits(&tmux);
    tmux.wait("the detach line", |s| {
        s.contains("1 agent still running; run `orchestra` to come back")
    });
    // The very same processes still run, and the CLI sees the task running.
    for (pid, _) in &shells {
        assert!(
            proc_state(*pid).is_some_and(|s| s != 'Z'),
            "session process {pid} ended with the TUI"
        );
    }
    let listed = cli(&root, &["task", "list"]);
    assert!(
        listed
            .lines()
            .any(|l| l.contains("kept") && l.contains("running")),
        "{listed}"
    );

    // Back, from another terminal: the task is selected and its screen shown as it was.
    let again = tmux.open("again", &tui_script(&root));
    again.wait("the same screen", |s| {
        s.contains("▶ kept") && s.contains("before-23")
    });
    again.send(&["Enter"]);
    again.wait("typing mode", |s| s.contains("TYPING"));
    again.send_literal("echo after-$((6*7))");
    again.send(&["Enter"]);
    again.wait("what was typed, run by the same shell", |s| {
        s.contains("after-42")
    });
    again.send(&["C-q"]);
    again.wait("typing mode to end", |s| !s.contains("TYPING"));
    stop_with_q(&again, 1, &marker);
}

/// Two TUIs attached to one agent both show what one of them types.
#[test]
fn two_terminals_show_what_one_types() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    tmux.send(&["n"]);
    tmux.wait("the form", |s| s.contains("New task"));
    tmux.send_literal("shared");
    tmux.send(&["Enter"]);
    tmux.wait("the task to run", |s| s.contains("▶ shared"));
    let other = tmux.open("other", &tui_script(&root));
    other.wait("the task in the second TUI", |s| s.contains("▶ shared"));

    tmux.send(&["Enter"]);
    tmux.wait("typing mode", |s| s.contains("TYPING"));
    tmux.send_literal("echo both-$((50+5))");
    tmux.send(&["Enter"]);
    tmux.wait("the output in the TUI that typed", |s| {
        s.contains("both-55")
    });
    other.wait("the output in the other TUI", |s| s.contains("both-55"));
    tmux.send(&["C-q"]);
    tmux.wait("typing mode to end", |s| !s.contains("TYPING"));

    // The other TUI detaches; the first stops everything.
    other.send(&["q"]);
    exits(&other);
    stop_with_q(&tmux, 1, &marker);
}

/// Killing the terminal (tmux kill-session) leaves the agents running.
#[test]
fn killing_the_terminal_leaves_the_agents_running() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    start_a_long_task(&tmux);
    wait_until("the sleep", 10, || sleep_runs(&marker));
    let tui = tmux.tui_pid();
    let ok = tmux
        .cmd()
        .args(["kill-session", "-t", &tmux.session])
        .status()
        .unwrap()
        .success();
    assert!(ok, "tmux kill-session");
    wait_until("the TUI to end", 10, || {
        proc_state(tui).is_none_or(|s| s == 'Z')
    });
    assert!(sleep_runs(&marker), "the agent outlives its terminal");
    let listed = cli(&root, &["task", "list"]);
    assert!(
        listed
            .lines()
            .any(|l| l.contains("long") && l.contains("running")),
        "{listed}"
    );
    cli(&root, &["stop"]);
    no_process_left(&marker);
}

/// Orchestra gone: the TUI says so in its top bar, and when orchestra is back (restarted, on
/// another port) it reconnects by itself, keeping the selection, the filter and the focus.
#[test]
fn orchestra_gone_and_back_keeps_the_place() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    let state = root.join("state");
    cli(&root, &["task", "add", "beta", "--description", "echo b"]);
    cli(&root, &["task", "add", "alpha", "--description", "echo a"]);
    tmux.wait("both tasks", |s| {
        s.contains("○ alpha") && s.contains("○ beta")
    });
    // Filter to alpha, then focus the Details pane.
    tmux.send(&["/"]);
    tmux.send_literal("alp");
    tmux.send(&["Enter"]);
    tmux.send(&["Tab"]);
    let before = tmux.wait("the filter and the focus", |s| {
        s.contains("/alp") && !s.contains("beta") && s.contains("┏ Details")
    });
    let url = |s: &str| {
        s.lines()
            .next()
            .and_then(|l| l.split("API ").nth(1))
            .map(|u| u.trim().to_string())
    };
    let old_url = url(&before).expect("the API URL in the top bar");

    let pid = daemon_pid(&state).expect("the daemon's pid");
    // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    tmux.wait("the notice that orchestra is gone", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains("orchestra is not answering; reconnecting"))
    });

    // Started again (as `orchestra serve` would be by anyone), on a new port.
    let mut serve = Command::new(env!("CARGO_BIN_EXE_orchestra"))
        .args(["serve", "--state-dir"])
        .arg(&state)
        .env("HOME", root.join("home"))
        .env_remove("ORCHESTRA_URL")
        .env_remove("ORCHESTRA_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("orchestra serve");
    let after = tmux.wait("the TUI back on the new orchestra", |s| {
        url(s).is_some_and(|u| u != old_url) && !s.contains("not answering")
    });
    assert!(
        after.contains("/alp") && after.contains("○ alpha") && !after.contains("beta"),
        "the filter is kept:\n{after}"
    );
    assert!(after.contains("┏ Details"), "the focus is kept:\n{after}");
    assert!(
        after.contains("echo a"),
        "alpha is still selected:\n{after}"
    );
    tmux.send(&["q"]);
    exits(&tmux);
    cli(&root, &["stop"]);
    let _ = serve.wait();
    no_process_left(&marker);
}

/// Review and merge from the TUI: a shell task in its own worktree writes a file and exits;
/// `d` shows the file in the diff view, `M` then `y` merges it, and it is on the base branch.
#[test]
fn a_shell_writes_a_file_in_its_worktree_and_the_tui_merges_it() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let repo = support::git_repo();
    let created = cli(
        &root,
        &[
            "task",
            "add",
            "--json",
            "--provider",
            "shell",
            "--isolation",
            "worktree",
            "--dir",
            &repo.path().display().to_string(),
            "--description",
            "echo from-shell > shell.txt && exit",
            "--start",
            "Shell writes",
        ],
    );
    let task: serde_json::Value = serde_json::from_str(&created).expect("JSON");
    let id = task["task"]["id"].as_str().expect("an id").to_string();
    tmux.wait("the task to complete", |s| s.contains("✓ Shell writes"));
    tmux.send(&["d"]);
    tmux.wait("the diff view", |s| {
        s.contains("Diff · Shell writes") && s.contains("shell.txt") && s.contains("+from-shell")
    });
    tmux.send(&["M"]);
    tmux.wait("the question", |s| {
        s.contains("Merge \"Shell writes\" into main?")
    });
    tmux.send(&["y"]);
    tmux.wait("the merge", |s| {
        s.contains("merged \"Shell writes\" into main") && !s.contains("Diff · Shell writes")
    });
    assert_eq!(
        support::git(repo.path(), &["show", "main:shell.txt"]),
        "from-shell"
    );
    assert_eq!(
        support::git(repo.path(), &["branch", "--list", "orchestra/*"]),
        ""
    );
    let shown: serde_json::Value =
        serde_json::from_str(&cli(&root, &["task", "show", "--json", &id])).expect("JSON");
    assert_eq!(
        shown["task"]["metadata"]["worktree"]["outcome"], "merged",
        "{shown}"
    );
    tmux.send(&["q"]);
    exits(&tmux);
}

/// A handle on the daemon the TUI started, from its server.json.
fn api_of(state: &Path) -> support::Server {
    let text = std::fs::read_to_string(state.join("server.json")).expect("server.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("server.json is JSON");
    support::Server::attach(v["url"].as_str().expect("url"), state, v["token"].as_str())
}

/// A task's agent session, once it has one.
fn session_of(api: &support::Server, task_id: &str) -> String {
    let mut sid = None;
    wait_until("the task's session", 20, || {
        let v = api
            .get(&format!("/api/coding-agents/tasks/{task_id}"))
            .json();
        let task = v.get("task").unwrap_or(&v);
        sid = task["metadata"]["sessionId"].as_str().map(str::to_string);
        sid.is_some()
    });
    sid.unwrap_or_default()
}

/// Four shells in the grid, each showing its own output; typing into the third; pausing the
/// second; a shell asking a question (`read -p`) while another is selected raises the waiting
/// count and the bell, `w` goes to it and its answer key answers it.
#[test]
fn the_grid_shows_four_agents_and_w_goes_to_the_one_asking() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tmux, root) = start(tmp.path());
    let marker = root.to_string_lossy().into_owned();
    let api = api_of(&root.join("state"));
    let mut ids = Vec::new();
    for i in 1..=4 {
        let out = cli(
            &root,
            &[
                "task",
                "add",
                &format!("tile-{i}"),
                "--provider",
                "shell",
                "--description",
                &format!("echo out-$((10+{i}))"),
                "--start",
                "--json",
            ],
        );
        let v: serde_json::Value = serde_json::from_str(&out).expect("task JSON");
        let task = v.get("task").unwrap_or(&v);
        ids.push(task["id"].as_str().expect("task id").to_string());
    }
    let sids: Vec<String> = ids.iter().map(|id| session_of(&api, id)).collect();
    tmux.wait("four running tasks", |s| s.contains("▶ 4 running"));
    // The size of each agent's terminal (cols, rows), as orchestra has it.
    let size = |sid: &str| {
        let v = api
            .get(&format!("/api/coding-agents/sessions/{sid}"))
            .json();
        let s = v.get("session").unwrap_or(&v);
        (s["cols"].as_u64(), s["rows"].as_u64())
    };
    // Those never shown yet: their size when created.
    let before: Vec<_> = sids[1..].iter().map(|sid| size(sid)).collect();
    assert!(
        before.iter().all(|(c, r)| c.is_some() && r.is_some()),
        "{before:?}"
    );

    tmux.send(&["v"]);
    tmux.wait("each tile with its own output", |s| {
        (11..=14).all(|n| s.contains(&format!("out-{n}")))
            && (1..=4).all(|i| s.contains(&format!("tile-{i} · shell")))
    });

    // Type into the third tile.
    tmux.send(&["Right"]);
    tmux.send(&["Right"]);
    tmux.send(&["Enter"]);
    tmux.send_literal("echo third-$((6*7))");
    tmux.send(&["Enter"]);
    tmux.wait("the third agent's output", |s| s.contains("third-42"));
    tmux.send(&["C-q"]);
    assert!(support::screen(&api, &sids[2]).contains("third-42"));
    for i in [0, 1, 3] {
        assert!(
            !support::screen(&api, &sids[i]).contains("third-42"),
            "tile {i}"
        );
    }

    // Pause the second: its processes stop.
    tmux.send(&["Left"]);
    tmux.send(&["p"]);
    wait_until("the second agent's processes to stop", 20, || {
        let pids = support::session_pids(&sids[1]);
        !pids.is_empty() && pids.iter().all(|p| proc_state(*p) == Some('T'))
    });
    tmux.wait("the second tile paused", |s| s.contains("‖ paused"));

    // With the first selected, an agent asks a question: the count, the bell; `w` goes there.
    tmux.send(&["Left"]);
    let bell = |t: &Tmux| {
        let out = t
            .cmd()
            .args([
                "display-message",
                "-p",
                "-t",
                &t.session,
                "#{window_bell_flag}",
            ])
            .output()
            .expect("tmux display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(bell(&tmux), "0");
    // The fourth asks in its shell, as a script would: no pattern knows this question.
    let r = api.post(
        &format!("/api/coding-agents/sessions/{}/messages", sids[3]),
        serde_json::json!({"text": "read -p 'Delete the cache? [y/N] ' ans; echo answered-$ans"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    tmux.wait("the waiting count", |s| s.contains("⚑ 1 waiting · w"));
    wait_until("the bell", 10, || bell(&tmux) == "1");
    tmux.send(&["w"]);
    tmux.wait("the question, selected", |s| {
        s.contains("tile-4 asks: Delete the cache? [y/N]") && !s.contains("⚑ 1 waiting")
    });
    // Its answer key answers it.
    tmux.send(&["y"]);
    tmux.wait("the answer typed", |s| s.contains("answered-y"));
    // Each agent drew for its tile; leaving the grid gives the others their size back.
    for (sid, b) in sids[1..].iter().zip(&before) {
        assert_ne!(size(sid), *b, "{sid} kept its size in the grid");
    }
    // (The fourth, selected, is shown in the terminal pane and drawn for it.)
    tmux.send(&["v"]);
    wait_until("the agents' sizes from before the grid", 20, || {
        sids[1..3]
            .iter()
            .zip(&before)
            .all(|(sid, b)| size(sid) == *b)
    });
    stop_with_q(&tmux, 4, &marker);
}
