//! A session's process tree, found by walking `/proc`, and signals to all of it.
//!
//! The tree of a session is: its leader; every process in the leader's session (`sid`, which
//! catches background jobs that job control moved into their own process groups); every
//! process whose environment holds `ORCHESTRA_SESSION_MARKER=<marker>` (catches descendants
//! that left with `setsid` or daemonized, as long as they kept their environment); and,
//! recursively, every child of any of those. Our own process is never part of it.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The environment variable set in every session child, carrying the session's marker.
pub const MARKER_VAR: &str = "ORCHESTRA_SESSION_MARKER";

/// One line of `/proc/PID/stat`, the fields we use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub sid: i32,
    pub starttime: u64,
}

/// Parses `/proc/PID/stat` content (the command name may hold spaces and parentheses).
pub fn parse_stat(pid: i32, text: &str) -> Option<ProcStat> {
    let after = &text[text.rfind(')')? + 1..];
    let mut f = after.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let sid = f.next()?.parse().ok()?;
    // The next field is tty_nr (7); starttime is field 22.
    let starttime = f.nth(15)?.parse().ok()?;
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgrp,
        sid,
        starttime,
    })
}

/// `/proc/PID/stat` of one process, if it exists.
pub fn stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Every process visible in `/proc`.
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(stat)
        .collect()
}

/// Whether the process's environment holds `MARKER_VAR=marker`.
pub fn has_marker(pid: i32, marker: &str) -> bool {
    if marker.is_empty() {
        return false;
    }
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{MARKER_VAR}={marker}");
    env.split(|&b| b == 0).any(|entry| entry == want.as_bytes())
}

/// Whether a process is gone for our purposes: no such pid, or a zombie.
pub fn is_gone(pid: i32) -> bool {
    stat(pid).is_none_or(|s| s.state == 'Z' || s.state == 'X')
}

/// How to look for a session's processes.
#[derive(Debug, Clone, Copy)]
pub struct TreeQuery<'a> {
    /// The session leader (its pid is also its pgid and sid).
    pub leader: i32,
    /// The marker in the environment; empty: do not look at environments.
    pub marker: &'a str,
}

/// The live (non-zombie) processes of a session's tree, leader included when alive.
pub fn session_tree(q: TreeQuery<'_>) -> Vec<i32> {
    let me = std::process::id() as i32;
    let procs = all_processes();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in &procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found: HashSet<i32> = HashSet::new();
    let mut stack: Vec<i32> = Vec::new();
    for p in &procs {
        if p.pid <= 1 || p.pid == me {
            continue;
        }
        let member = p.pid == q.leader
            || (q.leader > 1 && p.sid == q.leader)
            || (q.leader > 1 && p.pgrp == q.leader)
            || (!q.marker.is_empty() && p.state != 'Z' && has_marker(p.pid, q.marker));
        if member && found.insert(p.pid) {
            stack.push(p.pid);
        }
    }
    while let Some(pid) = stack.pop() {
        if let Some(kids) = children.get(&pid) {
            for &k in kids {
                if k > 1 && k != me && found.insert(k) {
                    stack.push(k);
                }
            }
        }
    }
    let alive: HashSet<i32> = procs
        .iter()
        .filter(|p| p.state != 'Z' && p.state != 'X')
        .map(|p| p.pid)
        .collect();
    let mut out: Vec<i32> = found.into_iter().filter(|p| alive.contains(p)).collect();
    out.sort_unstable();
    out
}

/// Sends a signal to one process, ignoring "no such process".
pub fn signal_pid(pid: i32, sig: Signal) {
    if pid > 1 && pid != std::process::id() as i32 {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

/// Sends a signal to a whole process group, ignoring "no such process group".
pub fn signal_group(pgid: i32, sig: Signal) {
    if pgid > 1 && pgid != std::process::id() as i32 {
        let _ = kill(Pid::from_raw(-pgid), sig);
    }
}

/// SIGKILLs the tree until nothing of it is left alive (rescanning, so processes forked
/// meanwhile are caught too), or until `deadline`. Returns whether it is all gone.
pub fn kill_tree(q: TreeQuery<'_>, extra: &[i32], deadline: Instant) -> bool {
    let mut known: HashSet<i32> = extra.iter().copied().collect();
    loop {
        signal_group(q.leader, Signal::SIGKILL);
        let tree = session_tree(q);
        known.extend(tree.iter().copied());
        known.retain(|&p| !is_gone(p));
        for &pid in &known {
            signal_pid(pid, Signal::SIGKILL);
        }
        if known.is_empty() && tree.is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            tracing::warn!(leader = q.leader, left = ?known, "processes of a session survived SIGKILL");
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (20 ms steps; only used while ending a session) until every pid is gone or the
/// deadline passes. Returns whether all are gone.
pub fn wait_gone(pids: &[i32], deadline: Instant) -> bool {
    loop {
        if pids.iter().all(|&p| is_gone(p)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = "1234 (a (b) c) S 1 1234 1234 34816 1234 4194560 110 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100";
        let s = parse_stat(1234, line).unwrap();
        assert_eq!(s.state, 'S');
        assert_eq!((s.ppid, s.pgrp, s.sid), (1, 1234, 1234));
        assert_eq!(s.starttime, 98765);
        assert!(parse_stat(1, "garbage").is_none());
    }

    #[test]
    fn own_process_is_visible_and_never_in_a_tree() {
        let me = std::process::id() as i32;
        let s = stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(!is_gone(me));
        let tree = session_tree(TreeQuery {
            leader: s.sid,
            marker: "",
        });
        assert!(!tree.contains(&me));
    }
}
