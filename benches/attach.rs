//! The attached TUI beside tmux, in one run (issue 10's budgets): the release `orchestra`
//! TUI is driven inside an outer tmux session, as a user's terminal would host it, and what it
//! draws is read raw from that pane (`pipe-pane` into a FIFO, stamped as it arrives, fed to a
//! vt100 parser of the pane's size). Keys go in with `tmux send-keys`, so both sides pay the
//! same path.
//!
//! 1. attach: time from starting `orchestra` in a fresh pane to the first complete frame (the
//!    list shows all agents, the terminal pane the selected agent's prompt);
//! 2. key echo while another agent floods: a character typed into the attached terminal until
//!    it shows; the same through a tmux client attached to a tmux session whose other pane
//!    floods (median, p90);
//! 3. CPU of the TUI drawing a flooding agent against the tmux client (and server) drawing it;
//! 4. a 100 MB `cat` in an agent with one TUI watching it and with none: the flood's time, and
//!    the echo latency of another agent typed into over its stream meanwhile;
//! 5. 20 idle agents and 2 attached idle TUIs: CPU ticks of the daemon and both TUIs.
//!
//! `cargo bench --bench attach` (`ORCHESTRA_BIN` picks another binary). Knobs: `ATTACH_AGENTS`
//! (20), `ATTACH_SAMPLES` (echo samples per side, 200), `ATTACH_MB` (100), `ATTACH_ROUNDS`
//! (flood rounds per case, 3), `ATTACH_CPU_SECS` (5), `ATTACH_IDLE_SECS` (10); `ATTACH_DEBUG=1`
//! prints failed tmux commands.
//! Without `--bench` (as `cargo test --all-targets` runs it) it is a small smoke run on the
//! debug build whose figures mean nothing. Figures are recorded in BENCHMARKS.md.

mod support;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::daemon::Daemon;
use support::figures::{load, ms, report, ticks_over};
use support::tmux::{FrameCounter, Keys, PaneReader, Tmux, mkfifo, shell_quote};
use support::{cpu_ticks, env_num};
use tokio_tungstenite::tungstenite::Message;

/// The end of the prompt of every shell here: bash in an empty HOME, in the `work` directory,
/// with the system's default prompt (`user@host:dir$ `).
fn prompt() -> &'static str {
    // SAFETY: getuid(2) has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        "work# "
    } else {
        "work$ "
    }
}
const COLS: u16 = 200;
const ROWS: u16 = 50;

/// A pause between samples that does not beat in step with a frame timer.
fn jitter(i: usize) -> Duration {
    Duration::from_millis(25 + (i as u64 * 7919) % 23)
}

/// The letter typed as sample `i`; every 30 samples the line is cleared.
fn letter(i: usize) -> char {
    (b'a' + (i % 26) as u8) as char
}

/// Types `samples` letters into `target` (whose screen `reader` follows) and times each echo;
/// `clear` sends the line-kill key.
fn echo_samples(
    keys: &mut Keys<'_>,
    target: &str,
    reader: &mut PaneReader,
    samples: usize,
) -> Vec<f64> {
    let prompt = prompt();
    let mut out = Vec::new();
    // A line starting with `#` matches no earlier line on screen (`bench$ echo …`).
    let mut typed = String::new();
    for i in 0..samples {
        if typed.is_empty() || typed.len() == 30 {
            keys.send(target, "C-u");
            keys.literal(target, "#");
            let fresh = format!("{prompt}#");
            // The previous line (`#` and its first letter) gone.
            let old = format!("{prompt}{}", typed.get(..2).unwrap_or("#\u{1}"));
            if reader
                .wait(Duration::from_secs(10), |s| {
                    s.contains(&fresh) && !s.contains(&old)
                })
                .is_none()
            {
                println!("  the line was not cleared");
                return out;
            }
            typed = "#".into();
        }
        std::thread::sleep(jitter(i));
        let c = letter(i);
        typed.push(c);
        let want = format!("{prompt}{typed}");
        let sent = Instant::now();
        keys.literal(target, &c.to_string());
        match reader.wait(Duration::from_secs(10), |s| s.contains(&want)) {
            Some(at) => out.push(ms(at.saturating_duration_since(sent))),
            None => {
                println!("  no echo of {c:?} within 10 s");
                return out;
            }
        }
    }
    out
}

/// The screen of a TUI showing all `n` agents and the selected one's prompt.
fn complete_frame(s: &str, n: usize) -> bool {
    s.contains(&format!("Tasks ({n})"))
        && (1..=n).all(|i| s.contains(&agent_name(i)))
        && s.contains(prompt().trim_end())
}

fn agent_name(i: usize) -> String {
    format!("agent-{i:02}")
}

/// Launches the TUI in a fresh outer session `name`; the time to its first complete frame.
fn attach_once(
    outer: &Tmux,
    daemon: &Daemon,
    name: &str,
    n: usize,
) -> Option<(Duration, PaneReader)> {
    let dir = daemon.root.join("fifos");
    let go = dir.join(format!("{name}.go"));
    let _ = std::fs::remove_file(&go);
    if !mkfifo(&go) || !outer.new_session(name, &daemon.tui_script(Some(&go))) {
        println!("  {name}: no pane");
        return None;
    }
    let Some(mut reader) = PaneReader::open(outer, name, &dir.join(format!("{name}.out"))) else {
        println!("  {name}: no pipe from the pane");
        return None;
    };
    // Opening blocks until the pane's shell waits on the FIFO.
    let mut f = std::fs::OpenOptions::new().write(true).open(&go).ok()?;
    let start = Instant::now();
    f.write_all(b"\n").ok()?;
    drop(f);
    let at = reader.wait(Duration::from_secs(20), |s| complete_frame(s, n));
    match at {
        Some(at) => Some((at.saturating_duration_since(start), reader)),
        None => {
            println!("  no complete frame; screen:\n{}", outer.capture(name));
            None
        }
    }
}

/// Detaches the TUI of outer session `name` with `q` and closes the session.
fn detach(outer: &Tmux, keys: &mut Keys<'_>, name: &str) {
    keys.send(name, "q");
    let deadline = Instant::now() + Duration::from_secs(10);
    while outer.run(&["has-session", "-t", name]).is_some() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = outer.run(&["kill-session", "-t", name]);
}

struct Config {
    agents: usize,
    samples: usize,
    mb: u64,
    rounds: u64,
    cpu: Duration,
    idle: Duration,
}

fn main() {
    let bench = support::bench_mode("attach");
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("attach: tmux is not installed; skipped");
        return;
    }
    let big = |n, small| if bench { n } else { small };
    let cfg = Config {
        agents: env_num("ATTACH_AGENTS", big(20, 3)) as usize,
        samples: env_num("ATTACH_SAMPLES", big(200, 5)) as usize,
        mb: env_num("ATTACH_MB", big(100, 2)),
        rounds: env_num("ATTACH_ROUNDS", big(3, 1)),
        cpu: Duration::from_secs(env_num("ATTACH_CPU_SECS", big(5, 1))),
        idle: Duration::from_secs(env_num("ATTACH_IDLE_SECS", big(10, 1))),
    };
    let bin = support::orchestra_bin();
    let Ok(tmp) = tempfile::tempdir() else {
        println!("attach: no temp dir");
        return;
    };
    let root = tmp.path().to_path_buf();
    for d in ["home", "work", "state", "config", "fifos"] {
        if std::fs::create_dir_all(root.join(d)).is_err() {
            println!("attach: cannot make {d}");
            return;
        }
    }
    let file = root.join("flood.txt");
    let Ok(bytes) = support::flood_file(&file, cfg.mb) else {
        println!("attach: cannot write the flood file");
        return;
    };
    println!("load average at start: {}", load());
    let outer = Tmux::new("outer", COLS, ROWS);
    let inner = Tmux::new("inner", COLS, ROWS);
    {
        let Some(daemon) = Daemon::start(&bin, &root) else {
            println!("attach: the daemon did not start");
            return;
        };
        run(&cfg, &daemon, &outer, &inner, &file, bytes);
        // The TUIs leave before the daemon is stopped.
        drop(inner);
        drop(outer);
    }
    println!("load average at end: {}", load());
}

fn run(cfg: &Config, daemon: &Daemon, outer: &Tmux, inner: &Tmux, file: &Path, bytes: u64) {
    let n = cfg.agents;
    let mut sessions = Vec::new();
    for i in 1..=n {
        match daemon.start_agent(&agent_name(i)) {
            Some(s) => sessions.push(s),
            None => {
                println!("attach: starting {} failed", agent_name(i));
                return;
            }
        }
    }
    if !daemon.all_ready(&sessions, Duration::from_secs(60)) {
        println!("attach: the agents did not all become ready");
        return;
    }
    let Some(mut keys) = Keys::open(outer) else {
        println!("attach: no tmux control client");
        return;
    };

    // 1. Attach.
    println!("1. attach to {n} live agents, first complete frame (budget < 150 ms):");
    let mut attach = Vec::new();
    for i in 0..cfg.rounds.max(3) + 2 {
        let name = format!("attach{i}");
        if let Some((t, _)) = attach_once(outer, daemon, &name, n) {
            attach.push(ms(t));
        }
        detach(outer, &mut keys, &name);
    }
    println!("  each: {attach:.1?}");
    report("attach", &mut attach);

    // 2. Echo while another agent floods: orchestra.
    let flooder = &sessions[n - 1];
    println!("2. key echo while another agent floods (budget: tmux + 5 ms):");
    let Some((_, mut reader)) = attach_once(outer, daemon, "orch", n) else {
        return;
    };
    daemon.type_line(
        flooder,
        &format!("while :; do cat {}; done", shell_quote(file)),
    );
    // The first agent, its terminal focused for typing (Enter is sent again if the TUI took
    // the first one before it could type; reported, since a user would notice).
    let first = agent_name(1);
    let mut tries = 0;
    while tries < 5 {
        tries += 1;
        keys.send("orch", "g");
        keys.send("orch", "Enter");
        if reader
            .wait(Duration::from_secs(2), |s| {
                s.contains("TYPING") && s.contains(&format!("{first} up"))
            })
            .is_some()
        {
            break;
        }
    }
    if tries > 1 {
        println!("  typing mode took {tries} Enter presses");
    }
    if !reader.parser.screen().contents().contains("TYPING") {
        println!("  no typing mode; screen:\n{}", outer.capture("orch"));
        return;
    }
    let mut orch_echo = echo_samples(&mut keys, "orch", &mut reader, cfg.samples);

    // 3. The TUI drawing the flood.
    keys.send("orch", "C-q");
    keys.send("orch", "G");
    let tui = outer.pane_pid("orch").unwrap_or(0);
    let shown = reader.wait(Duration::from_secs(10), |s| {
        s.contains(&agent_name(n)) && s.contains("building unit")
    });
    let orch_cpu = shown.map(|_| ticks_over(&[tui, daemon.pid()], cfg.cpu));
    daemon.keys(flooder, &["ctrl-c"]);
    drop(reader);
    detach(outer, &mut keys, "orch");

    // 2 and 3 in tmux: a tmux client in the outer pane, attached to a session whose left pane
    // is a shell and whose right pane floods.
    let home = daemon.root.join("home");
    let shell = format!(
        "cd {} && exec env -u TMUX HOME={} SHELL=/bin/bash TERM=xterm-256color bash -i",
        shell_quote(daemon.root.join("work")),
        shell_quote(&home)
    );
    let mut tmux_echo = Vec::new();
    let mut tmux_cpu = None;
    let mut tmux_file_cpu = None;
    if inner.new_session("plain", &shell)
        && inner
            .run(&[
                "split-window",
                "-h",
                "-t",
                "plain",
                &format!("exec sh -c 'while :; do cat {}; done'", file.display()),
            ])
            .is_some()
        && inner.run(&["select-pane", "-t", "plain:0.0"]).is_some()
    {
        let client = format!(
            "exec env -u TMUX TERM=xterm-256color tmux -L {} -f /dev/null attach -t plain",
            inner.socket
        );
        if outer.new_session("tmuxc", &client)
            && let Some(mut r) =
                PaneReader::open(outer, "tmuxc", &daemon.root.join("fifos/tmuxc.out"))
        {
            // The client draws from scratch once the reader is on: wait for both panes.
            keys.send("tmuxc", "C-l");
            if r.wait(Duration::from_secs(10), |s| {
                s.contains(prompt().trim_end()) && s.contains("building unit")
            })
            .is_some()
            {
                tmux_echo = echo_samples(&mut keys, "tmuxc", &mut r, cfg.samples);
                let pids = [
                    outer.pane_pid("tmuxc").unwrap_or(0),
                    inner.server_pid().unwrap_or(0),
                ];
                tmux_cpu = Some(ticks_over(&pids, cfg.cpu));
                tmux_file_cpu = tmux_one_file(inner, &mut keys, daemon, file, pids[1]);
            } else {
                println!("  tmux: no screen; {}", outer.capture("tmuxc"));
            }
        }
    }
    let _ = outer.run(&["kill-session", "-t", "tmuxc"]);
    let _ = inner.run(&["kill-server"]);
    let o = report("orchestra (TUI attached)", &mut orch_echo);
    let t = report("tmux (client attached)", &mut tmux_echo);
    println!(
        "  median difference {:+.2} ms (budget ≤ +5 ms: {})",
        o - t,
        if o - t <= 5.0 { "met" } else { "MISSED" }
    );

    println!(
        "3. CPU drawing a flood over {:.0} s, ticks of {} Hz (budget: TUI < tmux):",
        cfg.cpu.as_secs_f64(),
        100
    );
    match (orch_cpu, tmux_cpu) {
        // A tmux client hands its terminal to the server, which draws into it: the server's
        // ticks are tmux's drawing (and parsing) cost.
        (Some(o), Some(t)) => println!(
            "  orchestra TUI {} ticks, daemon {} ticks; tmux client {} ticks, tmux server {} ticks: \
             TUI {} tmux server",
            o[0],
            o[1],
            t[0],
            t[1],
            if o[0] < t[1] { "<" } else { "NOT <" }
        ),
        (o, t) => println!("  not measured (orchestra {o:?}, tmux {t:?})"),
    }

    // 4. The 100 MB flood.
    flood_rounds(
        cfg,
        daemon,
        outer,
        &mut keys,
        file,
        bytes,
        &sessions,
        tmux_file_cpu,
    );

    // 5. Idle.
    println!(
        "5. {n} idle agents, 2 idle TUIs attached, {:.0} s (budget: no measurable CPU):",
        cfg.idle.as_secs_f64()
    );
    let a = attach_once(outer, daemon, "idle1", n);
    let b = attach_once(outer, daemon, "idle2", n);
    if a.is_some() && b.is_some() {
        std::thread::sleep(Duration::from_secs(2));
        let pids = [
            daemon.pid(),
            outer.pane_pid("idle1").unwrap_or(0),
            outer.pane_pid("idle2").unwrap_or(0),
        ];
        let t = ticks_over(&pids, cfg.idle);
        println!(
            "  daemon {} ticks, TUI 1 {} ticks, TUI 2 {} ticks",
            t[0], t[1], t[2]
        );
    }
    detach(outer, &mut keys, "idle1");
    detach(outer, &mut keys, "idle2");
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A stream client's view of a session: its screen, fed from the stream.
struct Watch {
    socket: Socket,
    term: vt100::Parser,
}

impl Watch {
    async fn open(addr: &str, id: &str) -> Option<Watch> {
        let url = format!("ws://{addr}/api/coding-agents/sessions/{id}/stream");
        let (socket, _) = tokio_tungstenite::connect_async(url).await.ok()?;
        let mut w = Watch {
            socket,
            term: vt100::Parser::new(ROWS, COLS, 0),
        };
        w.until(Duration::from_secs(10), |s| s.contains(prompt().trim_end()))
            .await?;
        Some(w)
    }

    /// Reads the stream until `ok` holds of the screen; when it came.
    async fn until(&mut self, within: Duration, ok: impl Fn(&str) -> bool) -> Option<Instant> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if ok(&self.term.screen().contents()) {
                return Some(Instant::now());
            }
            let message = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .ok()??
                .ok()?;
            match message {
                Message::Binary(b) => self.term.process(&b),
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                    let size = |k: &str| v[k].as_u64().unwrap_or(1) as u16;
                    if matches!(v["type"].as_str(), Some("hello") | Some("size")) {
                        self.term.screen_mut().set_size(size("rows"), size("cols"));
                    }
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    async fn input(&mut self, text: &str) -> bool {
        self.socket
            .send(Message::Binary(text.as_bytes().to_vec().into()))
            .await
            .is_ok()
    }

    /// Echo latencies of letters typed over the stream until `done` is set.
    async fn echo_until(&mut self, done: &std::sync::atomic::AtomicBool) -> Vec<f64> {
        let prompt = prompt();
        let mut out = Vec::new();
        let mut typed = String::new();
        let mut i = 0;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            if typed.is_empty() || typed.len() == 30 {
                let old = format!("{prompt}{}", typed.get(..2).unwrap_or("#\u{1}"));
                let fresh = format!("{prompt}#");
                if !self.input("\x15#").await
                    || self
                        .until(Duration::from_secs(10), |s| {
                            s.contains(&fresh) && !s.contains(&old)
                        })
                        .await
                        .is_none()
                {
                    break;
                }
                typed = "#".into();
            }
            tokio::time::sleep(jitter(i)).await;
            let c = letter(i);
            typed.push(c);
            let want = format!("{prompt}{typed}");
            let sent = Instant::now();
            if !self.input(&c.to_string()).await {
                break;
            }
            match self
                .until(Duration::from_secs(10), |s| s.contains(&want))
                .await
            {
                Some(at) => out.push(ms(at.saturating_duration_since(sent))),
                None => break,
            }
            i += 1;
        }
        let _ = self.input("\x15").await;
        out
    }
}

/// One flood of `file` in `flooder`; its time (measured by the shell), and the echo latencies
/// of `typist` typed into over its stream meanwhile.
fn one_flood(
    daemon: &Daemon,
    file: &Path,
    flooder: &str,
    typist: &str,
    tag: &str,
) -> Option<(Duration, Vec<f64>)> {
    let out = daemon.root.join(format!("fifos/{tag}.ns"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .ok()?;
    let mut watch = rt.block_on(Watch::open(&daemon.addr, typist))?;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let typing = rt.spawn(async move { watch.echo_until(&flag).await });
    daemon.type_line(flooder, &timed_cat(file, &out));
    let ns = wait_number(&out, Duration::from_secs(600))?;
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let samples = rt.block_on(typing).ok()?;
    Some((Duration::from_nanos(ns), samples))
}

/// Ends the flooding pane of the tmux session, then `cat`s the file once in its shell pane
/// (shown by the tmux client): the tmux server's CPU ticks and the time it took.
fn tmux_one_file(
    inner: &Tmux,
    keys: &mut Keys<'_>,
    daemon: &Daemon,
    file: &Path,
    server: i32,
) -> Option<(u64, Duration)> {
    inner.run(&["kill-pane", "-t", "plain:0.1"])?;
    let out = daemon.root.join("fifos/tmux-file.ns");
    let before = cpu_ticks(server);
    keys.send("tmuxc", "C-u");
    keys.literal("tmuxc", &timed_cat(file, &out));
    keys.send("tmuxc", "Enter");
    let ns = wait_number(&out, Duration::from_secs(600))?;
    Some((
        cpu_ticks(server).saturating_sub(before),
        Duration::from_nanos(ns),
    ))
}

/// A shell line that `cat`s `file` and writes how long it took (ns) to `out`.
fn timed_cat(file: &Path, out: &Path) -> String {
    format!(
        "s=$(date +%s%N); cat {f}; e=$(date +%s%N); echo $((e-s)) > {o}.tmp && mv {o}.tmp {o}",
        f = shell_quote(file),
        o = shell_quote(out)
    )
}

/// The number in `path` once it is there.
fn wait_number(path: &Path, within: Duration) -> Option<u64> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(n) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
        {
            return Some(n);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[allow(clippy::too_many_arguments)]
fn flood_rounds(
    cfg: &Config,
    daemon: &Daemon,
    outer: &Tmux,
    keys: &mut Keys<'_>,
    file: &Path,
    bytes: u64,
    sessions: &[String],
    tmux_file_cpu: Option<(u64, Duration)>,
) {
    let n = sessions.len();
    let (flooder, typist) = (&sessions[n - 1], &sessions[1.min(n - 1)]);
    let mb = bytes as f64 / 1_048_576.0;
    println!(
        "4. {mb:.0} MB flood in one agent, no TUI vs one TUI watching it, {} rounds \
         (budget: ≥ 0.9× the speed without; echo in another agent < 20 ms):",
        cfg.rounds
    );
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut echoes: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    // CPU ticks over each whole flood: the daemon's, and the watching TUI's.
    let mut ticks: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
    // Frames a second the watching TUI drew over each flood.
    let mut rates: Vec<f64> = Vec::new();
    for round in 0..cfg.rounds {
        for (case, watched) in [false, true].into_iter().enumerate() {
            let name = format!("watch{round}");
            let mut frames = None;
            if watched {
                let Some((_, reader)) = attach_once(outer, daemon, &name, n) else {
                    continue;
                };
                keys.send(&name, "G");
                std::thread::sleep(Duration::from_millis(500));
                frames = Some(FrameCounter::start(reader));
            }
            let tag = format!("flood{round}-{case}");
            let tui = if watched {
                outer.pane_pid(&name).unwrap_or(0)
            } else {
                0
            };
            let before = (cpu_ticks(daemon.pid()), cpu_ticks(tui));
            let flood = one_flood(daemon, file, flooder, typist, &tag);
            if let (Some(counter), Some((t, _))) = (frames.take(), &flood) {
                // The frames of the flood's last `t` (the shell's own timing of its `cat`).
                let drawn = counter.stop();
                let since = Instant::now() - *t;
                let n = drawn.iter().filter(|at| **at >= since).count();
                rates.push(n as f64 / t.as_secs_f64());
            }
            if let Some((t, mut e)) = flood {
                ticks[case].push((
                    cpu_ticks(daemon.pid()).saturating_sub(before.0),
                    cpu_ticks(tui).saturating_sub(before.1),
                ));
                if watched && !outer.capture(&name).contains("building unit") {
                    println!("  round {round}: the TUI did not show the flood");
                }
                times[case].push(t.as_secs_f64());
                echoes[case].append(&mut e);
            }
            if watched {
                detach(outer, keys, &name);
            }
        }
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    for (case, label) in ["no TUI", "one TUI watching"].iter().enumerate() {
        println!(
            "  {label:<18} times {:.2?} s, best {:.2} s ({:.1} MB/s)",
            times[case],
            best(&times[case]),
            mb / best(&times[case])
        );
    }
    let ratio = best(&times[0]) / best(&times[1]);
    println!(
        "  speed with a TUI / without (best of each): {ratio:.2}× ({})",
        if ratio >= 0.9 { "met" } else { "MISSED" }
    );
    report("echo in another agent, no TUI", &mut echoes[0]);
    report("echo in another agent, TUI", &mut echoes[1]);
    println!("  frames a second the watching TUI drew during each flood (cap 62.5): {rates:.1?}");
    println!(
        "  CPU ticks over each whole flood ({mb:.0} MB), against tmux drawing one `cat` of the file:"
    );
    let daemon_only: Vec<u64> = ticks[0].iter().map(|t| t.0).collect();
    println!("    no TUI: daemon {daemon_only:?}");
    let watched: Vec<String> = ticks[1]
        .iter()
        .map(|(d, t)| format!("{d}+{t}={}", d + t))
        .collect();
    println!("    one TUI watching: daemon+TUI {watched:?}");
    match tmux_file_cpu {
        Some((t, took)) => println!(
            "    tmux server (client attached, pane shown): {t} ticks in {:.2} s",
            took.as_secs_f64()
        ),
        None => println!("    tmux: not measured"),
    }
}
