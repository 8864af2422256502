//! Memory after a flood (issue 14, item 6): a session that floods its terminal leaves the
//! daemon holding little more than it did before, both while the session lives on and once
//! it has ended. Real daemon, real bash, real output.

use crate::support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::*;

const SESSIONS: &str = "/api/coding-agents/sessions";

/// What the daemon may keep over its idle figure once a flood is over (issue 14's budget).
const BOUND_KIB: u64 = 20 * 1024;

/// Waits (to a deadline) for the daemon's RSS to come within the bound of `idle`; the last
/// figure seen.
fn settles_near(pid: u32, idle: u64, within: Duration) -> (bool, u64) {
    let mut last = 0;
    let ok = wait_until(within, || {
        last = rss_kib(pid);
        last.saturating_sub(idle) <= BOUND_KIB
    });
    (ok, last)
}

#[test]
fn after_a_flood_the_daemon_keeps_little_more_than_when_idle() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    // The default size (120×40): each scrollback line the terminal keeps costs its width.
    let id = spawn_session(
        &s,
        json!({"task": "", "providerId": "shell", "workingDirectory": dir.path()}),
    );
    assert!(wait_until(Duration::from_secs(20), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["status"] == "ready"
    }));
    let pid = s.pid();
    let idle = rss_kib(pid);
    assert!(idle > 0, "no RSS for the daemon");

    // 100,000 distinct lines (about 8 MB): ten times the most scrollback a terminal ever
    // kept, so whatever is kept per line is kept in full. The marker is typed with quotes in
    // it, so only the `echo` shows it whole.
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"text": "seq -f 'flood line %06g: text a little wider than most, as a compiler would print it' 1 100000; echo FLOOD'-'OVER; exec sleep 1000"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let start = Instant::now();
    let mut shown = String::new();
    let over = wait_until(Duration::from_secs(180), || {
        shown = screen(&s, &id);
        shown.contains("FLOOD-OVER")
    });
    assert!(over, "the flood did not end; the screen:\n{shown}");
    let flood = start.elapsed();

    let (near, after) = settles_near(pid, idle, Duration::from_secs(30));
    assert!(
        near,
        "after the flood ({flood:?}) with the session alive the daemon keeps {after} KiB, idle it had {idle} KiB (bound: {BOUND_KIB} KiB more)"
    );

    // Ended (the shell became `sleep`): it stays listed, and the memory stays down.
    let r = s.post(
        &format!("{SESSIONS}/{id}/messages"),
        json!({"keys": ["ctrl-c"]}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(wait_until(Duration::from_secs(20), || {
        s.get(&format!("{SESSIONS}/{id}")).json()["session"]["ended"] == true
    }));
    let (near, ended) = settles_near(pid, idle, Duration::from_secs(30));
    assert!(
        near,
        "once the flooded session ended the daemon keeps {ended} KiB, idle it had {idle} KiB (bound: {BOUND_KIB} KiB more)"
    );
    assert!(session_pids(&id).is_empty(), "the session left processes");
}
