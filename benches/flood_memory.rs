//! Memory after a flood (issue 14, item 6): the release daemon's resident memory while one
//! of its sessions `cat`s a 50 MB file of mixed terminal output, and after.
//!
//! One shell task; its daemon's RSS (`VmRSS`) is taken idle (the shell at its prompt), at its
//! peak during the flood (sampled every 20 ms), once the flood is over and things settled
//! with the session still alive (`cat FILE; exec sleep …`), and once the session ended. The
//! budget: after the flood, within 20 MiB of the idle figure.
//!
//! `cargo bench --bench flood_memory` (`ORCHESTRA_BIN` picks another binary). Knobs:
//! `FLOOD_MB` (50), `FLOOD_ROUNDS` (floods one after another in fresh sessions, 2),
//! `FLOOD_SETTLE_SECS` (how long after a flood the RSS is followed, 5).
//! Without `--bench` (as `cargo test --all-targets` runs it) it is a small smoke run on the
//! debug build whose figures mean nothing. Figures are recorded in BENCHMARKS.md.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};
use support::daemon::Daemon;
use support::figures::load;
use support::{env_num, rss_kib};

/// What the daemon keeps over the idle figure, after a flood, at most (the budget).
const BUDGET_MIB: f64 = 20.0;

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The screen of a session (its peek), or empty.
fn screen(daemon: &Daemon, session: &str) -> String {
    daemon.call("GET", &format!("/sessions/{session}/peek"), None)["screen"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Figures of one flood: RSS in KiB.
struct Round {
    before: u64,
    peak: u64,
    /// (seconds after the flood's end, RSS), the session still alive.
    settling: Vec<(f64, u64)>,
    ended: u64,
    flood_secs: f64,
}

/// One flood in a fresh shell task: `cat file`, then the RSS is followed while it settles;
/// then the session is ended (ctrl-c to the `sleep` the shell became).
fn flood_round(daemon: &Daemon, name: &str, file: &Path, settle: Duration) -> Option<Round> {
    let pid = daemon.pid();
    let session = daemon.start_agent(name)?;
    if !daemon.all_ready(std::slice::from_ref(&session), Duration::from_secs(60)) {
        println!("  {name}: the shell did not become ready");
        return None;
    }
    std::thread::sleep(Duration::from_secs(1));
    let before = rss_kib(pid);
    // The marker is typed with quotes in it, so only the `echo` prints it whole.
    daemon.type_line(
        &session,
        &format!(
            "cat {}; echo FLOOD'-'OVER; exec sleep 100000",
            file.display()
        ),
    );
    let start = Instant::now();
    let mut peak = before;
    let mut next_look = Instant::now();
    let deadline = start + Duration::from_secs(600);
    loop {
        peak = peak.max(rss_kib(pid));
        if Instant::now() >= next_look {
            if screen(daemon, &session).contains("FLOOD-OVER") {
                break;
            }
            next_look = Instant::now() + Duration::from_millis(250);
        }
        if Instant::now() > deadline {
            println!("  {name}: the flood did not end within 10 minutes");
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let flood_secs = start.elapsed().as_secs_f64();
    let over = Instant::now();
    let mut settling = Vec::new();
    for at in [0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0] {
        let at = Duration::from_secs_f64(at);
        if at > settle {
            break;
        }
        while over.elapsed() < at {
            peak = peak.max(rss_kib(pid));
            std::thread::sleep(Duration::from_millis(20));
        }
        settling.push((at.as_secs_f64(), rss_kib(pid)));
    }
    daemon.keys(&session, &["ctrl-c"]);
    let gone = Instant::now() + Duration::from_secs(30);
    while daemon.call("GET", &format!("/sessions/{session}"), None)["session"]["ended"] != true
        && Instant::now() < gone
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(settle.min(Duration::from_secs(3)));
    Some(Round {
        before,
        peak,
        settling,
        ended: rss_kib(pid),
        flood_secs,
    })
}

fn main() {
    let bench = support::bench_mode("flood_memory");
    let mb = env_num("FLOOD_MB", if bench { 50 } else { 2 });
    let rounds = env_num("FLOOD_ROUNDS", if bench { 2 } else { 1 });
    let settle = Duration::from_secs(env_num("FLOOD_SETTLE_SECS", if bench { 5 } else { 1 }));
    let Ok(tmp) = tempfile::tempdir() else {
        println!("flood_memory: no temp dir");
        return;
    };
    let root = tmp.path().to_path_buf();
    for d in ["home", "work", "state", "config"] {
        if std::fs::create_dir_all(root.join(d)).is_err() {
            println!("flood_memory: cannot make {d}");
            return;
        }
    }
    let file = root.join("flood.txt");
    let bytes = match support::flood_file(&file, mb) {
        Ok(b) => b,
        Err(e) => {
            println!("flood_memory: writing the file: {e}");
            return;
        }
    };
    let bin = support::orchestra_bin();
    let Some(daemon) = Daemon::start(&bin, &root) else {
        println!("flood_memory: the daemon did not start");
        return;
    };
    std::thread::sleep(Duration::from_secs(1));
    let idle = rss_kib(daemon.pid());
    println!(
        "daemon RSS while one session floods {:.0} MB ({rounds} rounds, each in a fresh shell task); load average at start: {}",
        bytes as f64 / 1_048_576.0,
        load()
    );
    println!("  idle daemon (no session):      {:6.1} MiB", mib(idle));
    let mut worst_after = 0u64;
    for r in 1..=rounds {
        let Some(round) = flood_round(&daemon, &format!("flood-{r}"), &file, settle) else {
            break;
        };
        println!(
            "  round {r}: before {:.1} MiB, peak {:.1} MiB, flood took {:.1} s",
            mib(round.before),
            mib(round.peak),
            round.flood_secs
        );
        let after: Vec<String> = round
            .settling
            .iter()
            .map(|(s, k)| format!("{s:.1} s: {:.1}", mib(*k)))
            .collect();
        println!(
            "    after the flood, session alive (MiB): {}",
            after.join(", ")
        );
        println!(
            "    after the session ended:    {:.1} MiB",
            mib(round.ended)
        );
        if let Some((_, last)) = round.settling.last() {
            worst_after = worst_after.max(*last);
        }
        worst_after = worst_after.max(round.ended);
    }
    let over = mib(worst_after.saturating_sub(idle));
    println!(
        "  after the floods, at most {over:.1} MiB over idle (budget: within {BUDGET_MIB:.0} MiB) {}",
        if over <= BUDGET_MIB { "✓" } else { "✗" }
    );
    println!("load average at end: {}", load());
}
