//! The soak workload (issue 14): a real `orchestra serve` driven through its HTTP API for a set
//! time, shared by the long run (`benches/soak.rs`, figures in BENCHMARKS.md) and the short
//! one in CI (`tests/soak.rs`, which includes `benches/support` by path).
//!
//! - Workers run cycles one after another, each a different kind of agent, every one created,
//!   started and driven to its end, then deleted (so the store and the engine's maps should
//!   stay as small as at the start): quick commands (sh, python3), floods (bounded output),
//!   agents that ignore SIGTERM and are cancelled, agents that leave daemons behind (`setsid`,
//!   double fork) and are cancelled, agents paused and resumed then cancelled, failing tasks
//!   retried, and interactive shell sessions typed into, paused, resumed, ended and removed.
//! - Readers keep the API under read load meanwhile (task list, session list, one session, its
//!   screen, the status) and record each answer's latency; one more thread follows the event
//!   stream, reconnecting every few seconds.
//! - Samples are taken at quiet points: the workers finish their cycle and wait, every session
//!   has ended and every process of theirs is gone (or a settle deadline passed), then the
//!   daemon's RSS, open fds, threads, zombie children, the store's database and WAL sizes and
//!   the trash's size are read, so samples taken minutes apart are comparable. Readers keep
//!   going through it.
//! - At the end, agents that ignore SIGTERM, fork daemons and a shell are left running, the
//!   daemon is stopped, and every process the run started must be gone: they all carry
//!   `SOAK_RUN=<tag>` (the daemon's environment, which sessions inherit) and the session
//!   marker variable.

mod api;
mod cycles;
mod probe;
mod readers;

use super::daemon::Daemon;
use api::Api;
use orchestra_sys::process::poll_until;
use probe::Probe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const API: &str = "/api/coding-agents";
/// How long one step of a cycle (a task reaching a status, a screen showing a line) may take
/// on a loaded machine before the cycle counts as an error.
const STEP: Duration = Duration::from_secs(60);

/// How long and how hard to soak; `from_env` reads `SOAK_*` over the given defaults.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// The whole run, warm-up included (`SOAK_SECS`).
    pub secs: u64,
    /// Before the reference sample (`SOAK_WARMUP_SECS`).
    pub warmup_secs: u64,
    /// Between samples (`SOAK_SAMPLE_SECS`).
    pub sample_secs: u64,
    /// Threads running agent cycles (`SOAK_WORKERS`).
    pub workers: usize,
    /// Threads reading the API (`SOAK_READERS`).
    pub readers: usize,
    /// What a flooding agent writes, in KiB (`SOAK_FLOOD_KIB`).
    pub flood_kib: u64,
}

impl Knobs {
    pub fn from_env(defaults: Knobs) -> Knobs {
        let n = |name: &str, d: u64| super::env_num(name, d);
        Knobs {
            secs: n("SOAK_SECS", defaults.secs),
            warmup_secs: n("SOAK_WARMUP_SECS", defaults.warmup_secs),
            sample_secs: n("SOAK_SAMPLE_SECS", defaults.sample_secs).max(1),
            workers: n("SOAK_WORKERS", defaults.workers as u64).max(1) as usize,
            readers: n("SOAK_READERS", defaults.readers as u64) as usize,
            flood_kib: n("SOAK_FLOOD_KIB", defaults.flood_kib),
        }
    }
}

/// The daemon's figures at one quiet point.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub label: String,
    pub at_secs: u64,
    pub rss_kib: u64,
    pub fds: usize,
    pub threads: usize,
    /// Zombie processes whose parent is the daemon.
    pub zombies: usize,
    /// Live processes of the run's sessions (should be none at a quiet point).
    pub session_procs: usize,
    /// Sessions the daemon still holds (live or ended, `status.sessions.total`).
    pub sessions_held: u64,
    pub db_bytes: u64,
    pub wal_bytes: u64,
    pub trash_bytes: u64,
    /// Sessions started since the run began.
    pub sessions_started: u64,
    /// Daemon CPU over the window since the previous sample, in % of one core.
    pub cpu_pct: f64,
    /// API reads in the window since the previous sample, and their p99 in ms.
    pub reads: usize,
    pub read_p99_ms: f64,
    /// Whether the quiet point was reached (else the settle deadline passed).
    pub settled: bool,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Report {
    pub samples: Vec<Sample>,
    /// Index in `samples` of the reference sample taken after the warm-up.
    pub warm: usize,
    pub sessions_started: u64,
    pub cycles: u64,
    pub errors: Vec<String>,
    pub error_count: u64,
    pub events_seen: u64,
    pub read_p99_ms: f64,
    pub read_max_ms: f64,
    pub reads: usize,
    /// `orchestra stop` ended the daemon with success.
    pub stopped_cleanly: bool,
    /// Processes of the run still alive after the daemon stopped: `pid command line`.
    pub left_over: Vec<String>,
}

/// What "flat" allows between the reference sample and the last one.
#[derive(Debug, Clone)]
pub struct Bounds {
    pub fds_slack: usize,
    pub threads_slack: usize,
    /// RSS may grow by this many KiB, or this fraction of the reference, whichever is more.
    pub rss_slack_kib: u64,
    pub rss_slack_frac: f64,
    /// The WAL never exceeds this.
    pub wal_max_bytes: u64,
    /// The database may grow by this many bytes (freed pages are reused, so a run that
    /// deletes what it creates stays near its reference).
    pub db_slack_bytes: u64,
}

impl Report {
    pub fn warm(&self) -> Option<&Sample> {
        self.samples.get(self.warm)
    }
    pub fn end(&self) -> Option<&Sample> {
        self.samples.last()
    }

    /// Everything that is not flat, as sentences; empty when the run ended flat.
    pub fn judge(&self, b: &Bounds) -> Vec<String> {
        let mut bad = Vec::new();
        let (Some(w), Some(e)) = (self.warm(), self.end()) else {
            return vec!["no samples were taken".into()];
        };
        if self.samples.len() < self.warm + 2 {
            bad.push("no sample after the warm-up one".into());
        }
        if e.fds > w.fds + b.fds_slack {
            bad.push(format!(
                "open fds grew from {} to {} (slack {})",
                w.fds, e.fds, b.fds_slack
            ));
        }
        if e.threads > w.threads + b.threads_slack {
            bad.push(format!(
                "threads grew from {} to {} (slack {})",
                w.threads, e.threads, b.threads_slack
            ));
        }
        let rss_slack = b
            .rss_slack_kib
            .max((w.rss_kib as f64 * b.rss_slack_frac) as u64);
        if e.rss_kib > w.rss_kib + rss_slack {
            bad.push(format!(
                "RSS grew from {} KiB to {} KiB (slack {rss_slack} KiB)",
                w.rss_kib, e.rss_kib
            ));
        }
        if e.db_bytes > w.db_bytes + b.db_slack_bytes {
            bad.push(format!(
                "the database grew from {} to {} bytes",
                w.db_bytes, e.db_bytes
            ));
        }
        for s in &self.samples[self.warm..] {
            if s.zombies > 0 {
                bad.push(format!("{} zombie children at {}", s.zombies, s.label));
            }
            if s.session_procs > 0 {
                bad.push(format!(
                    "{} processes of ended sessions alive at {}",
                    s.session_procs, s.label
                ));
            }
            if s.sessions_held > 0 {
                bad.push(format!(
                    "{} sessions still held at {} though all were removed",
                    s.sessions_held, s.label
                ));
            }
            if s.wal_bytes > b.wal_max_bytes {
                bad.push(format!(
                    "the WAL reached {} bytes at {} (bound {})",
                    s.wal_bytes, s.label, b.wal_max_bytes
                ));
            }
        }
        if self.error_count > 0 {
            bad.push(format!(
                "{} cycles failed, first: {:?}",
                self.error_count, self.errors
            ));
        }
        if !self.stopped_cleanly {
            bad.push("the daemon did not stop cleanly".into());
        }
        if !self.left_over.is_empty() {
            bad.push(format!("processes left after stop: {:?}", self.left_over));
        }
        bad
    }
}

/// The table's header and one row per sample.
pub fn table_header() -> String {
    format!(
        "{:<6} {:>5} {:>9} {:>4} {:>4} {:>4} {:>5} {:>5} {:>9} {:>9} {:>10} {:>8} {:>6} {:>7} {:>8}",
        "sample",
        "t(s)",
        "RSS(KiB)",
        "fds",
        "thr",
        "zomb",
        "procs",
        "held",
        "db(B)",
        "wal(B)",
        "trash(B)",
        "sessions",
        "cpu%",
        "reads",
        "p99(ms)"
    )
}

pub fn table_row(s: &Sample) -> String {
    format!(
        "{:<6} {:>5} {:>9} {:>4} {:>4} {:>4} {:>5} {:>5} {:>9} {:>9} {:>10} {:>8} {:>6.1} {:>7} {:>8}{}",
        s.label,
        s.at_secs,
        s.rss_kib,
        s.fds,
        s.threads,
        s.zombies,
        s.session_procs,
        s.sessions_held,
        s.db_bytes,
        s.wal_bytes,
        s.trash_bytes,
        s.sessions_started,
        s.cpu_pct,
        s.reads,
        if s.reads == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", s.read_p99_ms)
        },
        if s.settled { "" } else { "  (not settled)" }
    )
}

/// Runs the soak with `orchestra` at `bin` in a fresh directory under `root`; `on_sample` sees
/// each sample as it is taken. `Err` only when the daemon does not start.
pub fn run(
    bin: &Path,
    root: &Path,
    knobs: &Knobs,
    mut on_sample: impl FnMut(&Sample),
) -> Result<Report, String> {
    for d in ["home", "work", "config", "state"] {
        std::fs::create_dir_all(root.join(d)).map_err(|e| format!("{d}: {e}"))?;
    }
    let tag = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
    let mut daemon = Daemon::start_with_env(bin, root, &[("SOAK_RUN", tag.as_str())])
        .ok_or("orchestra serve did not start")?;
    let shared = Arc::new(Shared::default());
    let ctx = Ctx {
        addr: daemon.addr.clone(),
        work: root.join("work"),
        flood_kib: knobs.flood_kib,
        shared: shared.clone(),
    };
    let started = Instant::now();
    let probe = Probe {
        pid: daemon.pid(),
        state: root.join("state"),
        tag: tag.clone(),
        api: Api::new(&daemon.addr),
    };
    let mut report = Report::default();
    let mut ticks = (super::cpu_ticks(probe.pid), Instant::now());
    let mut take = |label: String, report: &mut Report, quiesce: bool| {
        let settled = if quiesce {
            quiet_point(&shared, knobs.workers, &probe)
        } else {
            probe.is_quiet()
        };
        let mut s = probe.sample(label, started.elapsed().as_secs());
        s.settled = settled;
        s.sessions_started = shared.sessions_started.load(Ordering::Relaxed);
        let now = (super::cpu_ticks(probe.pid), Instant::now());
        let secs = now.1.duration_since(ticks.1).as_secs_f64().max(0.001);
        s.cpu_pct = now.0.saturating_sub(ticks.0) as f64 / clock_ticks() / secs * 100.0;
        ticks = now;
        let mut window = std::mem::take(&mut *shared.window.lock());
        s.reads = window.len();
        window.sort_by(f64::total_cmp);
        s.read_p99_ms = super::figures::percentile(&window, 0.99);
        shared.all_reads.lock().extend(window);
        shared.pause.store(false, Ordering::SeqCst);
        on_sample(&s);
        report.samples.push(s);
    };
    take("start".into(), &mut report, false);
    let mut threads = Vec::new();
    for w in 0..knobs.workers {
        let ctx = ctx.clone();
        threads.push(std::thread::spawn(move || cycles::worker(&ctx, w)));
    }
    for r in 0..knobs.readers {
        let ctx = ctx.clone();
        threads.push(std::thread::spawn(move || readers::reader(&ctx, r)));
    }
    {
        let ctx = ctx.clone();
        threads.push(std::thread::spawn(move || readers::follow_events(&ctx)));
    }
    sleep_until(started + Duration::from_secs(knobs.warmup_secs));
    take("warm".into(), &mut report, true);
    report.warm = report.samples.len() - 1;
    let end = started + Duration::from_secs(knobs.secs.max(knobs.warmup_secs + 1));
    let mut next = Instant::now() + Duration::from_secs(knobs.sample_secs);
    while next < end {
        sleep_until(next);
        let minute = started.elapsed().as_secs();
        take(
            format!("{}m{:02}", minute / 60, minute % 60),
            &mut report,
            true,
        );
        next += Duration::from_secs(knobs.sample_secs);
    }
    sleep_until(end);
    // The workers end after their cycle; the readers go on through the last sample, so it
    // has the same connections open as the others.
    shared.workers_stop.store(true, Ordering::SeqCst);
    take("end".into(), &mut report, true);
    shared.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
    let left_running = cycles::leave_running(&ctx);
    if let Err(e) = left_running {
        shared.error(format!("leaving agents running for the stop: {e}"));
    }
    report.stopped_cleanly = daemon
        .stop(Duration::from_secs(60))
        .is_some_and(|s| s.success());
    poll_until(Duration::from_secs(15), || probe.run_processes().is_empty());
    report.left_over = probe
        .run_processes()
        .into_iter()
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            // Ours (they carry the run's tag): end them so nothing outlives the run.
            // SAFETY: kill(2) takes no pointers; a pid that is gone is an error return.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            format!("{pid} {}", cmd.trim())
        })
        .collect();
    report.sessions_started = shared.sessions_started.load(Ordering::Relaxed);
    report.cycles = shared.cycles.load(Ordering::Relaxed);
    report.error_count = shared.error_count.load(Ordering::Relaxed);
    report.errors = shared.errors.lock().clone();
    report.events_seen = shared.events.load(Ordering::Relaxed);
    let mut all = std::mem::take(&mut *shared.all_reads.lock());
    all.sort_by(f64::total_cmp);
    report.reads = all.len();
    report.read_p99_ms = super::figures::percentile(&all, 0.99);
    report.read_max_ms = all.last().copied().unwrap_or(f64::NAN);
    Ok(report)
}

fn sleep_until(at: Instant) {
    while Instant::now() < at {
        std::thread::sleep((at - Instant::now()).min(Duration::from_millis(200)));
    }
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as f64
}

/// Parks the workers after their current cycle and waits for the daemon to be quiet; whether
/// it became so before the deadlines.
fn quiet_point(shared: &Shared, workers: usize, probe: &Probe) -> bool {
    shared.pause.store(true, Ordering::SeqCst);
    let parked = poll_until(Duration::from_secs(300), || {
        shared.parked.load(Ordering::SeqCst) + shared.done.load(Ordering::SeqCst) >= workers
    });
    parked && poll_until(Duration::from_secs(20), || probe.is_quiet())
}

#[derive(Default)]
struct Shared {
    /// Ends the workers (after their cycle).
    workers_stop: AtomicBool,
    /// Ends every thread.
    stop: AtomicBool,
    pause: AtomicBool,
    parked: AtomicUsize,
    done: AtomicUsize,
    sessions_started: AtomicU64,
    cycles: AtomicU64,
    error_count: AtomicU64,
    errors: parking_lot::Mutex<Vec<String>>,
    events: AtomicU64,
    window: parking_lot::Mutex<Vec<f64>>,
    all_reads: parking_lot::Mutex<Vec<f64>>,
    /// The newest session id, for the readers.
    latest_session: parking_lot::Mutex<Option<String>>,
}

impl Shared {
    fn error(&self, e: String) {
        self.error_count.fetch_add(1, Ordering::Relaxed);
        let mut errors = self.errors.lock();
        if errors.len() < 10 {
            errors.push(e);
        }
    }
    fn started(&self, session: &str) {
        self.sessions_started.fetch_add(1, Ordering::Relaxed);
        *self.latest_session.lock() = Some(session.to_string());
    }
}

#[derive(Clone)]
struct Ctx {
    addr: String,
    work: PathBuf,
    flood_kib: u64,
    shared: Arc<Shared>,
}
