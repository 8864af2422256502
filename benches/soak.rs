//! The soak (issue 14): a release `orchestra serve` driven through its HTTP API for
//! `SOAK_SECS` (1200) by `SOAK_WORKERS` (4) threads that keep creating, starting, pausing,
//! resuming, cancelling and deleting tasks and sessions (quick commands, floods, agents deaf
//! to SIGTERM, agents that fork daemons, retries, interactive shells), with `SOAK_READERS` (3)
//! threads reading the API and one following its event stream. Every `SOAK_SAMPLE_SECS` (60)
//! the workers pause at a quiet point and the daemon's RSS, fds, threads, zombie children and
//! the store's database/WAL sizes are sampled (the workload: benches/support/soak/).
//! At the end the daemon is stopped with agents still running, and no process of the run may
//! be left. The verdict compares the last sample with the one after `SOAK_WARMUP_SECS` (300:
//! glibc's arenas take minutes of churn to reach their working size).
//!
//! `cargo bench --bench soak` or `scripts/soak` (`ORCHESTRA_BIN` picks another binary; other
//! knobs: `SOAK_FLOOD_KIB`, 256). Without `--bench` (as `cargo test --all-targets` runs it)
//! it is a 10 s smoke run; the short soak that judges is `tests/soak.rs`. Figures are
//! recorded in BENCHMARKS.md.

mod support;

use std::time::Instant;
use support::figures::load;
use support::soak::{self, Bounds, Knobs};

fn main() {
    let bench = support::bench_mode("soak");
    let defaults = if bench {
        Knobs {
            secs: 1200,
            warmup_secs: 300,
            sample_secs: 60,
            workers: 4,
            readers: 3,
            flood_kib: 256,
        }
    } else {
        Knobs {
            secs: 10,
            warmup_secs: 4,
            sample_secs: 60,
            workers: 2,
            readers: 1,
            flood_kib: 64,
        }
    };
    let knobs = Knobs::from_env(defaults);
    let root = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            println!("soak: no temporary directory: {e}");
            std::process::exit(1);
        }
    };
    let bin = support::orchestra_bin();
    println!(
        "soak: {} for {} s (warm-up {} s), {} workers, {} readers, floods of {} KiB; load {}",
        bin.display(),
        knobs.secs,
        knobs.warmup_secs,
        knobs.workers,
        knobs.readers,
        knobs.flood_kib,
        load()
    );
    println!("{}", soak::table_header());
    let t = Instant::now();
    let report = match soak::run(&bin, root.path(), &knobs, |s| {
        println!("{}", soak::table_row(s))
    }) {
        Ok(r) => r,
        Err(e) => {
            println!("soak: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "soak: {} sessions in {} cycles over {:.0} s ({} failed); {} events followed; load {}",
        report.sessions_started,
        report.cycles,
        t.elapsed().as_secs_f64(),
        report.error_count,
        report.events_seen,
        load()
    );
    println!(
        "soak: API reads n={} p99 {:.2} ms max {:.2} ms",
        report.reads, report.read_p99_ms, report.read_max_ms
    );
    println!(
        "soak: daemon stopped cleanly: {}; processes left: {}",
        report.stopped_cleanly,
        report.left_over.len()
    );
    for e in &report.errors {
        println!("  error: {e}");
    }
    for p in &report.left_over {
        println!("  left: {p}");
    }
    let bad = report.judge(&long_bounds());
    if bad.is_empty() {
        println!(
            "soak: flat (last sample vs the one after warm-up, {:?})",
            long_bounds()
        );
    } else {
        for b in &bad {
            println!("soak: NOT FLAT: {b}");
        }
        if bench {
            std::process::exit(1);
        }
    }
}

/// What "flat" means for the long run: a leak of one fd, thread or 10 KiB per session shows
/// over thousands of sessions far past these.
fn long_bounds() -> Bounds {
    Bounds {
        fds_slack: 4,
        threads_slack: 4,
        rss_slack_kib: 8 * 1024,
        rss_slack_frac: 0.10,
        wal_max_bytes: 16 * 1024 * 1024,
        db_slack_bytes: 1024 * 1024,
    }
}
