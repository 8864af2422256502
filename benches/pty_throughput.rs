//! Session runtime benchmarks, each measured side by side in one run (issue 3's budgets):
//! - PTY→screen throughput of `cat`-ing mixed terminal output (colours, cursor moves, `\r`
//!   progress bars, CJK): raw PTY (`script`), tmux (detached, 200×50), a naive portable-pty +
//!   vt100 reader that parses on its reading thread, and orchestra's `PtySession`.
//! - 50 idle sessions: our CPU ticks over the idle window (and tmux's, with 50 panes).
//! - our memory per idle session (RSS growth / 50; the children are separate processes).
//! - spawning 50 `bash --norc -i` sessions until every prompt shows (and tmux doing the same).
//!
//! `cargo bench --bench pty_throughput`; `BENCH_MB` (default 100) sizes the file,
//! `BENCH_IDLE_SECS` (default 10) the idle window, `BENCH_SESSIONS` (default 50) the count,
//! `BENCH_ROUNDS` (default 3) the throughput rounds (best of); `BENCH_THROUGHPUT_ONLY=1` stops
//! after the throughput figures.

mod support;

use orchestra_daemon::session::{LineSplitter, PtySession, SpawnSpec, Terminal};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{cpu_ticks, env_num};

/// One way of running `cat FILE` through a terminal; how long it took.
type Measure = fn(&Path) -> Option<Duration>;

fn make_file(path: &Path, mb: u64) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let target = mb * 1024 * 1024;
    let mut written = 0u64;
    let mut i = 0u64;
    while written < target {
        let chunk = format!(
            "\x1b[1;3{c}m[{i:08}]\x1b[0m compiling crate-{i} with some plain text to wrap around the screen width\r\n\
             \x1b[2K\rprogress {p:3}% [{bar:<20}]\r\x1b[2K\rprogress {q:3}% [{bar2:<20}]\r\n\
             漢字テスト 日本語の出力 中文输出 한국어 출력 ✓ done\r\n\
             \x1b[s\x1b[1;1H\x1b[7m status line {i} \x1b[0m\x1b[u\x1b[38;5;{c2}mcolour 256\x1b[39m \x1b[48;2;10;20;30mtruecolour\x1b[49m\r\n",
            c = i % 7 + 1,
            p = i % 100,
            q = (i + 50) % 100,
            bar = "#".repeat((i % 20) as usize),
            bar2 = "#".repeat(((i + 10) % 20) as usize),
            c2 = i % 256,
        );
        f.write_all(chunk.as_bytes())?;
        written += chunk.len() as u64;
        i += 1;
    }
    f.flush()?;
    Ok(written)
}

fn base_env() -> Vec<(String, String)> {
    vec![
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        ),
        ("TERM".into(), "xterm-256color".into()),
        ("LANG".into(), "C.UTF-8".into()),
        (
            "HOME".into(),
            std::env::var("HOME").unwrap_or_else(|_| "/tmp".into()),
        ),
        ("PS1".into(), "$ ".into()),
    ]
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1_048_576.0 / d.as_secs_f64()
}

fn raw_pty(file: &Path) -> Option<Duration> {
    let start = Instant::now();
    let status = Command::new("script")
        .args(["-q", "-c", &format!("cat {}", file.display()), "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| start.elapsed())
}

fn tmux(args: &[&str], socket: &str) -> Option<std::process::Output> {
    Command::new("tmux")
        .args(["-L", socket, "-f", "/dev/null"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()
}

fn tmux_throughput(file: &Path) -> Option<Duration> {
    let socket = format!("orchestra-bench-{}", std::process::id());
    let cmd = format!("cat {}; tmux -L {socket} wait-for -S done", file.display());
    let start = Instant::now();
    tmux(
        &["new-session", "-d", "-x", "200", "-y", "50", &cmd],
        &socket,
    )?;
    let out = tmux(&["wait-for", "done"], &socket)?;
    let elapsed = start.elapsed();
    tmux(&["kill-server"], &socket);
    out.status.success().then_some(elapsed)
}

fn naive(file: &Path) -> Option<Duration> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let start = Instant::now();
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 50,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .ok()?;
    let mut cmd = CommandBuilder::new("cat");
    cmd.arg(file);
    let mut child = pair.slave.spawn_command(cmd).ok()?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().ok()?;
    let mut parser = vt100::Parser::new(50, 200, 10_000);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => parser.process(&buf[..n]),
        }
    }
    let _ = child.wait();
    Some(start.elapsed())
}

fn orchestra(file: &Path) -> Option<Duration> {
    let mut spec = SpawnSpec::new("cat", std::env::temp_dir());
    spec.args = vec![file.display().to_string()];
    spec.env = base_env();
    spec.cols = 200;
    spec.rows = 50;
    let start = Instant::now();
    let s = PtySession::spawn(spec, Box::new(|_| {})).ok()?;
    let info = s.wait_exit(Duration::from_secs(600));
    let elapsed = start.elapsed();
    info.filter(|i| i.code == Some(0)).map(|_| elapsed)
}

/// The two stages of a session's per-byte path alone, in memory, on this thread: the line
/// splitter (the reader thread's work) fed 4 KiB reads, and the terminal (the processing
/// thread's) fed 8 KiB slices at 200×50 with 10,000 lines of scrollback; MB/s of each.
fn stages(file: &Path) -> Option<(f64, f64)> {
    let data = std::fs::read(file).ok()?;
    let bytes = data.len() as u64;
    let start = Instant::now();
    let mut splitter = LineSplitter::default();
    let mut lines = Vec::new();
    for chunk in data.chunks(4096) {
        splitter.feed(chunk, &mut lines);
        lines.clear();
    }
    let split = mbps(bytes, start.elapsed());
    let start = Instant::now();
    let mut term = Terminal::new(50, 200, 10_000);
    for chunk in data.chunks(8192) {
        term.process(chunk);
    }
    let parse = mbps(bytes, start.elapsed());
    Some((split, parse))
}

fn cpu_ticks_self() -> u64 {
    cpu_ticks(std::process::id() as i32)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn idle_and_spawn(n: usize, idle: Duration) {
    let rss_before = rss_kib();
    let start = Instant::now();
    let mut sessions: Vec<Arc<PtySession>> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut spec = SpawnSpec::new("bash", std::env::temp_dir());
        spec.args = vec!["--norc".into(), "--noprofile".into(), "-i".into()];
        spec.env = base_env();
        spec.scrollback = 1000;
        match PtySession::spawn(spec, Box::new(|_| {})) {
            Ok(s) => sessions.push(s),
            Err(e) => {
                eprintln!("spawn failed: {e}");
                return;
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sessions
        .iter()
        .all(|s| s.snapshot(0, false).screen.contains('$'))
    {
        if Instant::now() > deadline {
            eprintln!("prompts did not all show");
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let spawned = start.elapsed();
    // Let every session's output settle to quiet before measuring idle cost.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sessions.iter().all(|s| s.activity().is_quiet()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let rss_after = rss_kib();
    let before = cpu_ticks_self();
    std::thread::sleep(idle);
    let ticks = cpu_ticks_self() - before;
    println!(
        "orchestra: spawn {n} bash until prompts: {:.0} ms; idle {n} sessions over {:.0} s: {ticks} ticks; memory per idle session: {} kB",
        spawned.as_secs_f64() * 1000.0,
        idle.as_secs_f64(),
        rss_after.saturating_sub(rss_before) / n as u64
    );
    for s in &sessions {
        s.terminate(Duration::from_millis(500));
    }
}

fn tmux_idle_and_spawn(n: usize, idle: Duration) {
    let socket = format!("orchestra-bench-idle-{}", std::process::id());
    let start = Instant::now();
    let env = "env -i PATH=/usr/bin:/bin TERM=xterm-256color PS1='$ ' bash --norc --noprofile -i";
    if tmux(&["new-session", "-d", "-x", "80", "-y", "24", env], &socket).is_none() {
        println!("tmux: not available");
        return;
    }
    for _ in 1..n {
        tmux(&["new-window", "-d", env], &socket);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = (0..n)
            .filter(|w| {
                tmux(&["capture-pane", "-p", "-t", &format!(":{w}")], &socket)
                    .is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains('$'))
            })
            .count();
        if ready == n || Instant::now() > deadline {
            break;
        }
    }
    let spawned = start.elapsed();
    let server_pid = tmux(&["display-message", "-p", "#{pid}"], &socket)
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<i32>()
                .ok()
        })
        .unwrap_or(0);
    let before = cpu_ticks(server_pid);
    std::thread::sleep(idle);
    let ticks = cpu_ticks(server_pid) - before;
    println!(
        "tmux:      spawn {n} bash until prompts: {:.0} ms (includes capture-pane polling); idle {n} panes over {:.0} s: {ticks} ticks",
        spawned.as_secs_f64() * 1000.0,
        idle.as_secs_f64()
    );
    tmux(&["kill-server"], &socket);
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // unoptimised: then a small smoke run keeps the bench from rotting without taking minutes.
    let bench = support::bench_mode("pty_throughput");
    let (mb_default, idle_default, sessions_default, rounds_default) = if bench {
        (100, 10, 50, 3)
    } else {
        (2, 1, 4, 1)
    };
    let mb = env_num("BENCH_MB", mb_default);
    let idle = Duration::from_secs(env_num("BENCH_IDLE_SECS", idle_default));
    let n = env_num("BENCH_SESSIONS", sessions_default) as usize;
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("tempdir: {e}");
            return;
        }
    };
    let file = dir.path().join("mixed.txt");
    let bytes = match make_file(&file, mb) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("writing the file: {e}");
            return;
        }
    };
    println!(
        "throughput, {:.0} MB of mixed terminal output:",
        bytes as f64 / 1_048_576.0
    );
    // Best of three rounds, interleaved, so a busy moment does not favour one side.
    let rounds = env_num("BENCH_ROUNDS", rounds_default);
    let methods: [(&str, Measure); 4] = [
        ("raw pty (script)", raw_pty),
        ("tmux 200x50", tmux_throughput),
        ("naive reader+vt100", naive),
        ("orchestra session", orchestra),
    ];
    let mut best: Vec<Option<Duration>> = vec![None; methods.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in methods.iter().enumerate() {
            if let Some(d) = f(&file) {
                best[i] = Some(best[i].map_or(d, |b| b.min(d)));
            }
        }
    }
    let mut results = Vec::new();
    for ((name, _), d) in methods.iter().zip(&best) {
        match d {
            Some(d) => {
                let r = mbps(bytes, *d);
                println!("  {name:<20} {r:8.1} MB/s  ({:.2} s)", d.as_secs_f64());
                results.push((*name, r));
            }
            None => println!("  {name:<20} unavailable"),
        }
    }
    let get = |n: &str| results.iter().find(|(k, _)| *k == n).map(|(_, r)| *r);
    if let (Some(o), Some(t)) = (get("orchestra session"), get("tmux 200x50")) {
        println!("  orchestra / tmux: {:.2}x (budget >= 2x)", o / t);
    }
    if let (Some(o), Some(r)) = (get("orchestra session"), get("raw pty (script)")) {
        println!("  orchestra / raw:  {:.2}x (budget >= 0.75x)", o / r);
    }
    if let Some((split, parse)) = stages(&file) {
        println!(
            "  stages alone, in memory: line splitter {split:.1} MB/s, terminal (vt100) {parse:.1} MB/s"
        );
    }
    if env_num("BENCH_THROUGHPUT_ONLY", 0) == 1 {
        return;
    }
    idle_and_spawn(n, idle);
    tmux_idle_and_spawn(n, idle);
}
