//! The short soak (issue 14): the workload of the long one (benches/support/soak/) against
//! the debug `orchestra serve` for about 75 s: after a 20 s warm-up, open fds, threads and
//! zombies stay flat, RSS grows within a bound, the WAL stays bounded, every cycle succeeds,
//! and once the daemon is stopped no process of the run is left.

#[path = "../benches/support/mod.rs"]
mod bench_support;

use bench_support::soak::{self, Bounds, Knobs};

#[test]
fn a_short_soak_ends_flat_with_no_process_left() {
    let knobs = Knobs::from_env(Knobs {
        secs: 75,
        warmup_secs: 20,
        sample_secs: 15,
        workers: 3,
        readers: 2,
        flood_kib: 128,
    });
    let root = tempfile::tempdir().expect("tempdir");
    let report = soak::run(
        std::path::Path::new(env!("CARGO_BIN_EXE_orchestra")),
        root.path(),
        &knobs,
        |s| eprintln!("{}", soak::table_row(s)),
    )
    .expect("the soak runs");
    eprintln!(
        "{} sessions, {} cycles, reads p99 {:.1} ms",
        report.sessions_started, report.cycles, report.read_p99_ms
    );
    // Each cycle starts at least one session; dozens of them make a per-session leak of one
    // fd or thread stand out past the slack below (which covers the daemon's pools and the
    // connections of the test's own clients).
    assert!(
        report.sessions_started >= 40,
        "too few sessions to judge: {}",
        report.sessions_started
    );
    let bad = report.judge(&Bounds {
        fds_slack: 6,
        threads_slack: 6,
        rss_slack_kib: 24 * 1024,
        rss_slack_frac: 0.25,
        wal_max_bytes: 16 * 1024 * 1024,
        db_slack_bytes: 1024 * 1024,
    });
    assert!(bad.is_empty(), "the soak did not end flat: {bad:#?}");
}
