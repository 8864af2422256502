//! Many busy agents, beside tmux, in one run (issue 14's budget): 50 agents, each redrawing a
//! spinner block the way a coding agent does while it works (about 10 updates a second, with
//! colour and cursor moves), for 60 s.
//!
//! - orchestra: the release daemon runs the 50 as shell tasks, one TUI attached in an outer
//!   tmux pane shows the first; over the window, the CPU ticks of the daemon and of the TUI,
//!   the daemon's RSS, and the latency of API reads made meanwhile (the task list and one
//!   session, one after another, every 50 ms);
//! - tmux: one session of 50 windows running the same spinner, a client attached showing the
//!   first; the CPU ticks and RSS of the tmux server (and client) over the same window.
//!
//! `cargo bench --bench busy_agents` (`ORCHESTRA_BIN` picks another binary). Knobs:
//! `BUSY_AGENTS` (50), `BUSY_SECS` (60), `BUSY_HZ` (spinner updates a second per agent, 10).
//! Without `--bench` (as `cargo test --all-targets` runs it) it is a small smoke run on the
//! debug build whose figures mean nothing. Figures are recorded in BENCHMARKS.md.

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::daemon::Daemon;
use support::figures::{context_switches, load, ms, report, ticks_over};
use support::tmux::{FrameCounter, Keys, PaneReader, Tmux, shell_quote};
use support::{env_num, rss_kib};

const COLS: u16 = 200;
const ROWS: u16 = 50;

/// A working coding agent's bottom lines, redrawn `argv[1]` times a second: the cursor goes
/// back up over the block, each line is cleared and drawn again in colour, a spinner turns,
/// the seconds and a token count tick.
const SPINNER: &str = r#"
import sys, time
hz = float(sys.argv[1])
frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
out = sys.stdout
out.write("\x1b[1mRefactoring the parser\x1b[0m\r\n\r\n\r\n")
start = time.monotonic()
i = 0
while True:
    t = time.monotonic() - start
    out.write(
        "\x1b[2A\r\x1b[2K\x1b[38;5;174m%s\x1b[0m \x1b[1mWorking…\x1b[0m "
        "\x1b[2m(%ds · ↑ %.1fk tokens · esc to interrupt)\x1b[0m\r\n"
        "\x1b[2K\x1b[2m  ⎿  Reading src/parser/mod.rs (%d lines)\x1b[0m\r\n"
        "\x1b[2K\x1b[7m ? for shortcuts \x1b[0m"
        % (frames[i % len(frames)], t, t * 0.37, 200 + i)
    )
    out.flush()
    i += 1
    time.sleep(max(0.0, start + i / hz - time.monotonic()))
"#;

fn spinner_line(script: &Path, hz: u64) -> String {
    format!("exec python3 {} {hz}", shell_quote(script))
}

fn agent_name(i: usize) -> String {
    format!("busy-{i:02}")
}

/// What one process used over the window.
struct Usage {
    what: &'static str,
    ticks: u64,
    /// Context switches of its threads over the window.
    switches: u64,
    rss_kib: u64,
}

/// Each named process's CPU ticks and context switches over `window` (slept here) and its
/// RSS at the end.
fn usage_over(named: &[(&'static str, i32)], window: Duration) -> Vec<Usage> {
    let pids: Vec<i32> = named.iter().map(|(_, p)| *p).collect();
    let before: Vec<u64> = pids.iter().map(|p| context_switches(*p)).collect();
    let ticks = ticks_over(&pids, window);
    named
        .iter()
        .zip(ticks)
        .zip(before)
        .map(|(((what, pid), ticks), before)| Usage {
            what,
            ticks,
            switches: context_switches(*pid).saturating_sub(before),
            rss_kib: rss_kib(*pid),
        })
        .collect()
}

struct Config {
    agents: usize,
    window: Duration,
    hz: u64,
}

/// One side's figures over the window.
struct Side {
    procs: Vec<Usage>,
    /// API read latencies in ms (orchestra only).
    api: Vec<f64>,
    /// Frames the attached client drew a second (orchestra only).
    fps: Option<f64>,
}

fn main() {
    let bench = support::bench_mode("busy_agents");
    for tool in ["tmux", "python3"] {
        if Command::new(tool).arg("-V").output().is_err() {
            println!("busy_agents: {tool} is not installed; skipped");
            return;
        }
    }
    let big = |n, small| if bench { n } else { small };
    let cfg = Config {
        agents: env_num("BUSY_AGENTS", big(50, 3)) as usize,
        window: Duration::from_secs(env_num("BUSY_SECS", big(60, 2))),
        hz: env_num("BUSY_HZ", 10).max(1),
    };
    let bin = support::orchestra_bin();
    let Ok(tmp) = tempfile::tempdir() else {
        println!("busy_agents: no temp dir");
        return;
    };
    let root = tmp.path().to_path_buf();
    for d in ["home", "work", "state", "config", "fifos"] {
        if std::fs::create_dir_all(root.join(d)).is_err() {
            println!("busy_agents: cannot make {d}");
            return;
        }
    }
    let script = root.join("spinner.py");
    if std::fs::write(&script, SPINNER).is_err() {
        println!("busy_agents: cannot write the spinner");
        return;
    }
    println!(
        "{} agents at {} updates a second for {:.0} s; load average at start: {}",
        cfg.agents,
        cfg.hz,
        cfg.window.as_secs_f64(),
        load()
    );
    let outer = Tmux::new("bouter", COLS, ROWS);
    let inner = Tmux::new("binner", COLS, ROWS);
    {
        let Some(daemon) = Daemon::start(&bin, &root) else {
            println!("busy_agents: the daemon did not start");
            return;
        };
        let Some(mut keys) = Keys::open(&outer) else {
            println!("busy_agents: no tmux server");
            return;
        };
        let orch = orchestra_side(&cfg, &daemon, &outer, &mut keys, &script);
        // The orchestra side's agents end before tmux's start, so neither pays for the other.
        drop(daemon);
        let tmux = tmux_side(&cfg, &outer, &inner, &root, &script);
        summary(&cfg, orch, tmux);
        drop(inner);
        drop(outer);
    }
    println!("load average at end: {}", load());
}

fn orchestra_side(
    cfg: &Config,
    daemon: &Daemon,
    outer: &Tmux,
    keys: &mut Keys<'_>,
    script: &Path,
) -> Option<Side> {
    let mut sessions = Vec::new();
    for i in 1..=cfg.agents {
        sessions.push(daemon.start_agent(&agent_name(i))?);
    }
    if !daemon.all_ready(&sessions, Duration::from_secs(120)) {
        println!("busy_agents: the agents did not all become ready");
        return None;
    }
    for s in &sessions {
        daemon.type_line(s, &spinner_line(script, cfg.hz));
    }
    if !outer.new_session("orch", &daemon.tui_script(None)) {
        println!("busy_agents: no pane for the TUI");
        return None;
    }
    let mut reader = PaneReader::open(outer, "orch", &daemon.root.join("fifos/orch.out"))?;
    keys.send("orch", "C-l");
    keys.send("orch", "g");
    let shown = reader.wait(Duration::from_secs(30), |s| {
        s.contains(&agent_name(1)) && s.contains("esc to interrupt")
    });
    if shown.is_none() {
        println!(
            "  the TUI did not show the first agent working; screen:\n{}",
            outer.capture("orch")
        );
        return None;
    }
    // A few seconds for every spinner to be going before the window opens.
    std::thread::sleep(Duration::from_secs(3));
    let counter = FrameCounter::start(reader);
    let tui = outer.pane_pid("orch").unwrap_or(0);

    let stop = Arc::new(AtomicBool::new(false));
    let reads = {
        let (stop, addr, id) = (stop.clone(), daemon.addr.clone(), sessions[0].clone());
        std::thread::spawn(move || api_reads(&addr, &id, &stop))
    };
    let since = Instant::now();
    let procs = usage_over(&[("daemon", daemon.pid()), ("TUI", tui)], cfg.window);
    stop.store(true, Ordering::Relaxed);
    let api = reads.join().unwrap_or_default();
    let frames = counter.stop();
    let fps =
        frames.iter().filter(|at| **at >= since).count() as f64 / since.elapsed().as_secs_f64();
    if !outer.capture("orch").contains("esc to interrupt") {
        println!("  at the end the TUI did not show the agent working");
    }
    for s in &sessions {
        daemon.keys(s, &["ctrl-c"]);
    }
    keys.send("orch", "q");
    let _ = outer.run(&["kill-session", "-t", "orch"]);
    Some(Side {
        procs,
        api,
        fps: Some(fps),
    })
}

/// GET the task list and one session, one after the other every 50 ms, until `stop`; each
/// request's latency in ms.
fn api_reads(addr: &str, session: &str, stop: &AtomicBool) -> Vec<f64> {
    let http = support::http_agent();
    let base = format!("http://{addr}/api/coding-agents");
    let urls = [
        format!("{base}/tasks"),
        format!("{base}/sessions/{session}"),
    ];
    let mut out = Vec::new();
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let url = &urls[i % urls.len()];
        let sent = Instant::now();
        let ok = http
            .get(url)
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .is_some();
        if ok {
            out.push(ms(sent.elapsed()));
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    out
}

fn tmux_side(cfg: &Config, outer: &Tmux, inner: &Tmux, root: &Path, script: &Path) -> Option<Side> {
    let line = spinner_line(script, cfg.hz);
    if !inner.new_session("busy", &line) {
        println!("busy_agents: no tmux session");
        return None;
    }
    for _ in 1..cfg.agents {
        inner.run(&["new-window", "-d", "-t", "busy", &line])?;
    }
    inner.run(&["select-window", "-t", "busy:0"])?;
    let client = format!(
        "exec env -u TMUX TERM=xterm-256color tmux -L {} -f /dev/null attach -t busy",
        inner.socket
    );
    if !outer.new_session("tmuxc", &client) {
        println!("busy_agents: no pane for the tmux client");
        return None;
    }
    let mut reader = PaneReader::open(outer, "tmuxc", &root.join("fifos/tmuxc.out"))?;
    outer.run(&["send-keys", "-t", "tmuxc", "C-l"]);
    if reader
        .wait(Duration::from_secs(30), |s| s.contains("esc to interrupt"))
        .is_none()
    {
        println!(
            "  tmux: the client did not show the spinner; screen:\n{}",
            outer.capture("tmuxc")
        );
    }
    std::thread::sleep(Duration::from_secs(3));
    let counter = FrameCounter::start(reader);
    let procs = usage_over(
        &[
            ("tmux server", inner.server_pid().unwrap_or(0)),
            ("tmux client", outer.pane_pid("tmuxc").unwrap_or(0)),
        ],
        cfg.window,
    );
    drop(counter.stop());
    let _ = outer.run(&["kill-session", "-t", "tmuxc"]);
    let _ = inner.run(&["kill-server"]);
    Some(Side {
        procs,
        api: Vec::new(),
        fps: None,
    })
}

fn summary(cfg: &Config, orch: Option<Side>, tmux: Option<Side>) {
    let secs = cfg.window.as_secs_f64();
    println!(
        "CPU over {secs:.0} s (ticks of 100 Hz; % of one core), context switches, RSS at the end:"
    );
    for (name, side) in [("orchestra", &orch), ("tmux", &tmux)] {
        let Some(s) = side else {
            println!("  {name:<10} not measured");
            continue;
        };
        for u in &s.procs {
            println!(
                "  {:<12} {:>6} ticks  {:>5.1} %  {:>6.0} switches/s  RSS {:>7.1} MiB",
                u.what,
                u.ticks,
                u.ticks as f64 / secs,
                u.switches as f64 / secs,
                u.rss_kib as f64 / 1024.0
            );
        }
        if let Some(fps) = s.fps {
            println!("  the attached TUI drew {fps:.1} frames a second");
        }
    }
    if let Some(mut api) = orch.map(|s| s.api) {
        println!("API reads meanwhile (the task list and one session, every 50 ms):");
        report("orchestra API", &mut api);
    }
}
