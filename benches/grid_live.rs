//! The grid live, beside tmux, in one run (issue 13's budgets): 16 agents at 240×70 all
//! flooding, the release `orchestra` TUI showing them in its grid inside an outer tmux pane (as
//! a user's terminal would host it), against a tmux client attached to one window of 16 tiled
//! panes running the same floods.
//!
//! 1. frames: how many frames a second the TUI draws while all 16 flood (its cap is 62.5),
//!    and the CPU of the TUI and the daemon against the tmux server's over the same window;
//! 2. key to the PTY: a letter typed (`tmux send-keys` into the outer pane) while the selected
//!    tile is in typing mode, until the agent's program reads it from its terminal. The agent
//!    in that tile floods too: a Python program whose main thread writes the flood while a
//!    second thread reads its raw terminal and passes each byte to a FIFO the bench stamps on
//!    arrival. The same program runs in the tmux window's first pane, typed into through the
//!    tmux client. Both sides pay the same `send-keys`.
//! 3. the API under the same flood (orchestra only, the grid still drawn; issue 33's
//!    budget, p99 < 20 ms): `POST /sessions/:id/messages {keys}` into the probe's tile, timed
//!    until the reply came and until the agent read the key; and `POST /sessions/:id/answer`
//!    to a 17th shell, not flooding, that asks `read -p '… [y/N]'` in a loop, timed until the
//!    reply came (each answer once the session is blocked on the question again).
//!
//! `cargo bench --bench grid_live` (`ORCHESTRA_BIN` picks another binary). Knobs:
//! `GRID_AGENTS` (16), `GRID_SAMPLES` (keys per side, 200), `GRID_ANSWERS` (answers, 100),
//! `GRID_SECS` (frame and CPU window, 5), `GRID_FLOOD_MB` (size of the file each agent `cat`s
//! in a loop, 2). Without `--bench` (as
//! `cargo test --all-targets` runs it) it is a small smoke run on the debug build whose figures
//! mean nothing. Figures are recorded in BENCHMARKS.md.

mod support;

use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};
use support::daemon::Daemon;
use support::figures::{load, ms, report, ticks_over};
use support::tmux::{FrameCounter, Keys, PaneReader, Tmux, mkfifo, shell_quote};
use support::{env_num, flood_file};

const COLS: u16 = 240;
const ROWS: u16 = 70;

/// The agent of the typed-into tile: floods its terminal from the main thread while another
/// thread reads the raw terminal and copies each byte to the FIFO `argv[1]`; a Ctrl-C byte
/// (raw mode: no signal) ends it.
const PROBE: &str = r#"
import os, sys, threading, tty
fifo, flood = sys.argv[1], sys.argv[2]
tty.setraw(0)
out = os.open(fifo, os.O_WRONLY)
def keys():
    while True:
        b = os.read(0, 64)
        if not b or b"\x03" in b:
            os._exit(0)
        os.write(out, b)
threading.Thread(target=keys, daemon=True).start()
data = open(flood, "rb").read()
while True:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
"#;

/// The bytes a probe agent read from its terminal, stamped when they reached the bench.
struct Probe {
    rx: Receiver<(Instant, Vec<u8>)>,
}

impl Probe {
    /// Listens on a fresh FIFO at `path` (the probe opens it once it starts).
    fn listen(path: &Path) -> Option<Probe> {
        let _ = std::fs::remove_file(path);
        if !mkfifo(path) {
            return None;
        }
        let (tx, rx) = channel();
        let path = path.to_path_buf();
        std::thread::spawn(move || {
            let Ok(mut f) = std::fs::File::open(&path) else {
                return;
            };
            let mut buf = [0u8; 256];
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        Some(Probe { rx })
    }

    /// When `c` arrived; None after `within`. Earlier bytes are skipped.
    fn wait_for(&self, c: u8, within: Duration) -> Option<Instant> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.rx.recv_timeout(left) {
                Ok((at, bytes)) if bytes.contains(&c) => return Some(at),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }

    fn drain(&self) {
        while self.rx.try_recv().is_ok() {}
    }
}

/// Types `samples` letters with `send` and times each until the probe read it.
fn key_samples(mut send: impl FnMut(char), probe: &Probe, samples: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..samples {
        // A pause that does not beat in step with a frame timer.
        std::thread::sleep(Duration::from_millis(25 + (i as u64 * 7919) % 23));
        probe.drain();
        let c = b'a' + (i % 26) as u8;
        let sent = Instant::now();
        send(c as char);
        match probe.wait_for(c, Duration::from_secs(10)) {
            Some(at) => out.push(ms(at.saturating_duration_since(sent))),
            None => {
                println!("  {:?} did not reach the agent within 10 s", c as char);
                return out;
            }
        }
    }
    out
}

fn probe_line(script: &Path, fifo: &Path, flood: &Path) -> String {
    format!(
        "exec python3 {} {} {}",
        shell_quote(script),
        shell_quote(fifo),
        shell_quote(flood)
    )
}

fn cat_loop(flood: &Path) -> String {
    format!("while :; do cat {}; done", shell_quote(flood))
}

fn agent_name(i: usize) -> String {
    format!("agent-{i:02}")
}

struct Config {
    agents: usize,
    samples: usize,
    answers: usize,
    window: Duration,
}

struct Files {
    root: PathBuf,
    script: PathBuf,
    flood: PathBuf,
}

fn main() {
    let bench = support::bench_mode("grid_live");
    for tool in ["tmux", "python3"] {
        if Command::new(tool).arg("-V").output().is_err() {
            println!("grid_live: {tool} is not installed; skipped");
            return;
        }
    }
    let big = |n, small| if bench { n } else { small };
    let cfg = Config {
        agents: env_num("GRID_AGENTS", big(16, 4)) as usize,
        samples: env_num("GRID_SAMPLES", big(200, 5)) as usize,
        answers: env_num("GRID_ANSWERS", big(100, 3)) as usize,
        window: Duration::from_secs(env_num("GRID_SECS", big(5, 1))),
    };
    let bin = support::orchestra_bin();
    let Ok(tmp) = tempfile::tempdir() else {
        println!("grid_live: no temp dir");
        return;
    };
    let root = tmp.path().to_path_buf();
    for d in ["home", "work", "state", "config", "fifos"] {
        if std::fs::create_dir_all(root.join(d)).is_err() {
            println!("grid_live: cannot make {d}");
            return;
        }
    }
    let files = Files {
        script: root.join("probe.py"),
        flood: root.join("flood.txt"),
        root,
    };
    if std::fs::write(&files.script, PROBE).is_err()
        || flood_file(&files.flood, env_num("GRID_FLOOD_MB", 2)).is_err()
    {
        println!("grid_live: cannot write the probe or the flood file");
        return;
    }
    println!("load average at start: {}", load());
    let outer = Tmux::new("gouter", COLS, ROWS);
    let inner = Tmux::new("ginner", COLS, ROWS);
    {
        let Some(daemon) = Daemon::start(&bin, &files.root) else {
            println!("grid_live: the daemon did not start");
            return;
        };
        let Some(mut keys) = Keys::open(&outer) else {
            println!("grid_live: no tmux server");
            return;
        };
        let orch = orchestra_side(&cfg, &daemon, &outer, &mut keys, &files);
        let tmux = tmux_side(&cfg, &outer, &inner, &mut keys, &files);
        summary(orch, tmux);
        drop(inner);
        drop(outer);
    }
    println!("load average at end: {}", load());
}

/// What one side measured: frames a second (orchestra only), CPU ticks of its processes over
/// the window (labelled), key latencies.
struct Side {
    fps: Option<f64>,
    ticks: Vec<(&'static str, u64)>,
    keys: Vec<f64>,
    /// Key latencies through the API instead of the TUI (orchestra only): until the agent
    /// read the key, and until the reply came.
    api_keys: Vec<f64>,
    api_replies: Vec<f64>,
    /// `POST /sessions/:id/answer` until the reply came (orchestra only).
    answers: Vec<f64>,
}

fn orchestra_side(
    cfg: &Config,
    daemon: &Daemon,
    outer: &Tmux,
    keys: &mut Keys<'_>,
    files: &Files,
) -> Option<Side> {
    let n = cfg.agents;
    let mut sessions = Vec::new();
    for i in 1..=n {
        sessions.push(daemon.start_agent(&agent_name(i))?);
    }
    let asker = daemon.start_agent("asker")?;
    if !daemon.all_ready(&sessions, Duration::from_secs(60))
        || !daemon.all_ready(std::slice::from_ref(&asker), Duration::from_secs(60))
    {
        println!("grid_live: the agents did not all become ready");
        return None;
    }
    let fifo = files.root.join("fifos/orch.keys");
    let probe = Probe::listen(&fifo)?;
    daemon.type_line(
        &sessions[0],
        &probe_line(&files.script, &fifo, &files.flood),
    );
    for s in &sessions[1..] {
        daemon.type_line(s, &cat_loop(&files.flood));
    }
    daemon.type_line(&asker, QUESTION_LOOP);
    if !outer.new_session("orch", &daemon.tui_script(None)) {
        println!("grid_live: no pane for the TUI");
        return None;
    }
    let mut reader = PaneReader::open(outer, "orch", &files.root.join("fifos/orch.out"))?;
    // The first task selected, then the grid: every agent's tile titled, all flooding.
    keys.send("orch", "C-l");
    keys.send("orch", "g");
    keys.send("orch", "v");
    let all_shown = |s: &str| {
        (1..=n).all(|i| s.contains(&agent_name(i))) && s.matches("building unit").count() >= n
    };
    if reader.wait(Duration::from_secs(20), all_shown).is_none() {
        println!(
            "  the grid did not show all {n} agents; screen:\n{}",
            outer.capture("orch")
        );
        return None;
    }
    let tui = outer.pane_pid("orch").unwrap_or(0);
    let counter = FrameCounter::start(reader);
    let since = Instant::now();
    let outer_server = outer.server_pid().unwrap_or(0);
    let ticks = ticks_over(&[tui, daemon.pid(), outer_server], cfg.window);
    let frames = counter.stop();
    let elapsed = since.elapsed().as_secs_f64();
    let fps = frames.iter().filter(|at| **at >= since).count() as f64 / elapsed;

    // Typing mode in the selected (first) tile: Enter, then a key the probe must read.
    let mut typing = false;
    for _ in 0..5 {
        keys.send("orch", "Enter");
        probe.drain();
        keys.literal("orch", "#");
        if probe.wait_for(b'#', Duration::from_secs(2)).is_some() {
            typing = true;
            break;
        }
    }
    if !typing {
        println!(
            "  no typing mode in the first tile; screen:\n{}",
            outer.capture("orch")
        );
        return None;
    }
    let samples = key_samples(
        |c| _ = keys.literal("orch", &c.to_string()),
        &probe,
        cfg.samples,
    );
    keys.send("orch", "C-q");
    // The same keys straight to the daemon (`POST /sessions/:id/messages`), the grid still
    // drawn: what the daemon adds, apart from the TUI.
    let path = format!("/sessions/{}/messages", sessions[0]);
    let mut api_replies = Vec::new();
    let api = key_samples(
        |c| {
            let sent = Instant::now();
            daemon.call("POST", &path, Some(json!({ "keys": [c.to_string()] })));
            api_replies.push(ms(sent.elapsed()));
        },
        &probe,
        cfg.samples,
    );
    let answers = answer_samples(daemon, &asker, cfg.answers);
    for s in &sessions {
        daemon.keys(s, &["ctrl-c"]);
    }
    keys.send("orch", "q");
    let _ = outer.run(&["kill-session", "-t", "orch"]);
    Some(Side {
        fps: Some(fps),
        ticks: vec![
            ("TUI", ticks[0]),
            ("daemon", ticks[1]),
            ("outer tmux server", ticks[2]),
        ],
        keys: samples,
        api_keys: api,
        api_replies,
        answers,
    })
}

/// What the asker's shell runs: a question, read as a typed line, again and again.
const QUESTION_LOOP: &str = "while :; do read -p 'Go on? [y/N] ' a; done";

/// Answers the asker's question `samples` times, each once its session is blocked on it
/// again; the time of each `POST …/answer` until its reply.
fn answer_samples(daemon: &Daemon, asker: &str, samples: usize) -> Vec<f64> {
    let status = format!("/sessions/{asker}");
    let url = format!(
        "http://{}/api/coding-agents/sessions/{asker}/answer",
        daemon.addr
    );
    let is_blocked = || daemon.call("GET", &status, None)["session"]["status"] == "blocked";
    let until = |want: bool, within: Duration| {
        let deadline = Instant::now() + within;
        while is_blocked() != want {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    };
    let mut out = Vec::new();
    let mut refused = 0;
    while out.len() < samples {
        // The status still says blocked for a moment after an answer was typed: the next
        // question is the one asked after the session was busy with the answer.
        until(false, Duration::from_secs(2));
        if !until(true, Duration::from_secs(10)) {
            println!("  the asker was not blocked on its question within 10 s");
            break;
        }
        let option = if out.len() % 2 == 0 { "y" } else { "n" };
        let sent = Instant::now();
        let replied = support::http_request(
            &daemon.http,
            "POST",
            &url,
            Some(json!({ "option": option })),
        );
        let took = ms(sent.elapsed());
        match replied {
            Ok((200, _)) => out.push(took),
            // Its status moved between the look and the answer: not a sample.
            Ok((409, _)) if refused < 20 => refused += 1,
            Ok((code, body)) => {
                println!("  an answer was refused ({code}): {body}");
                break;
            }
            Err(e) => {
                println!("  an answer failed: {e}");
                break;
            }
        }
    }
    if refused > 0 {
        println!("  {refused} answers found the asker no longer blocked (not counted)");
    }
    out
}

fn tmux_side(
    cfg: &Config,
    outer: &Tmux,
    inner: &Tmux,
    keys: &mut Keys<'_>,
    files: &Files,
) -> Option<Side> {
    let fifo = files.root.join("fifos/tmux.keys");
    let probe = Probe::listen(&fifo)?;
    if !inner.new_session("grid", &probe_line(&files.script, &fifo, &files.flood)) {
        println!("grid_live: no tmux session");
        return None;
    }
    for _ in 1..cfg.agents {
        let flood = format!("exec sh -c {}", shell_quote(cat_loop(&files.flood)));
        inner.run(&["split-window", "-t", "grid", &flood])?;
        inner.run(&["select-layout", "-t", "grid", "tiled"])?;
    }
    inner.run(&["select-pane", "-t", "grid:0.0"])?;
    let client = format!(
        "exec env -u TMUX TERM=xterm-256color tmux -L {} -f /dev/null attach -t grid",
        inner.socket
    );
    if !outer.new_session("tmuxc", &client) {
        println!("grid_live: no pane for the tmux client");
        return None;
    }
    let mut reader = PaneReader::open(outer, "tmuxc", &files.root.join("fifos/tmuxc.out"))?;
    keys.send("tmuxc", "C-l");
    let n = cfg.agents;
    if reader
        .wait(Duration::from_secs(20), |s| {
            s.matches("building unit").count() >= n
        })
        .is_none()
    {
        println!(
            "  tmux: not all panes flood; screen:\n{}",
            outer.capture("tmuxc")
        );
    }
    // The client's output is read (as the TUI's is) so it never waits on the pipe.
    let counter = FrameCounter::start(reader);
    let pids = [
        outer.pane_pid("tmuxc").unwrap_or(0),
        inner.server_pid().unwrap_or(0),
        outer.server_pid().unwrap_or(0),
    ];
    let ticks = ticks_over(&pids, cfg.window);
    let samples = key_samples(
        |c| _ = keys.literal("tmuxc", &c.to_string()),
        &probe,
        cfg.samples,
    );
    drop(counter.stop());
    let _ = outer.run(&["kill-session", "-t", "tmuxc"]);
    let _ = inner.run(&["kill-server"]);
    Some(Side {
        fps: None,
        ticks: vec![
            ("tmux client", ticks[0]),
            ("tmux server", ticks[1]),
            ("outer tmux server", ticks[2]),
        ],
        keys: samples,
        api_keys: Vec::new(),
        api_replies: Vec::new(),
        answers: Vec::new(),
    })
}

fn summary(orch: Option<Side>, tmux: Option<Side>) {
    println!("1. frames while every agent floods (cap 62.5 a second) and CPU ticks (100 Hz):");
    for (name, side) in [("orchestra", &orch), ("tmux", &tmux)] {
        match side {
            Some(s) => {
                let fps = s
                    .fps
                    .map(|f| format!("{f:.1} frames/s, "))
                    .unwrap_or_default();
                let ticks: Vec<String> = s.ticks.iter().map(|(k, t)| format!("{k} {t}")).collect();
                println!("  {name:<10} {fps}{}", ticks.join(", "));
            }
            None => println!("  {name:<10} not measured"),
        }
    }
    println!("2. a key into the selected tile until its agent reads it (budget < 16 ms):");
    let (mut api, mut replies, mut answers, mut orch) = orch
        .map(|s| (s.api_keys, s.api_replies, s.answers, s.keys))
        .unwrap_or_default();
    report("orchestra grid (TUI)", &mut orch);
    report(
        "tmux tiled (client)",
        &mut tmux.map(|s| s.keys).unwrap_or_default(),
    );
    report("orchestra, POST …/messages (no TUI)", &mut api);
    println!("3. the API while every agent floods, until the reply (budget p99 < 20 ms):");
    report("POST …/messages {keys}", &mut replies);
    report("POST …/answer", &mut answers);
}
