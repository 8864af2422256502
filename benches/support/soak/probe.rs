//! The soaked daemon's process and state directory, read from outside.

use super::Sample;
use super::api::Api;
use std::path::{Path, PathBuf};

/// The daemon's process and state directory, read from outside.
pub(super) struct Probe {
    pub(super) pid: i32,
    pub(super) state: PathBuf,
    pub(super) tag: String,
    pub(super) api: Api,
}

impl Probe {
    pub(super) fn sample(&self, label: String, at_secs: u64) -> Sample {
        let count = |dir: String| std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
        let size = |name: &str| {
            std::fs::metadata(self.state.join(name))
                .map(|m| m.len())
                .unwrap_or(0)
        };
        let held = self
            .api
            .call("GET", "/status", None)
            .ok()
            .and_then(|(_, v)| v["sessions"]["total"].as_u64())
            .unwrap_or(u64::MAX);
        Sample {
            label,
            at_secs,
            rss_kib: super::super::rss_kib(self.pid),
            fds: count(format!("/proc/{}/fd", self.pid)),
            threads: count(format!("/proc/{}/task", self.pid)),
            zombies: self.zombies(),
            session_procs: self.run_processes().len(),
            sessions_held: held,
            db_bytes: size("orchestra.db"),
            wal_bytes: size("orchestra.db-wal"),
            trash_bytes: dir_bytes(&self.state.join("trash")),
            ..Sample::default()
        }
    }

    pub(super) fn zombies(&self) -> usize {
        orchestra_daemon::session::tree::all_processes()
            .iter()
            .filter(|p| p.ppid == self.pid && p.state == 'Z')
            .count()
    }

    /// Live processes started for the run's sessions: they carry the run's tag and a session
    /// marker (the daemon has the tag only).
    pub(super) fn run_processes(&self) -> Vec<i32> {
        let tag = format!("SOAK_RUN={}", self.tag);
        let marker = format!("{}=", orchestra_daemon::session::MARKER_VAR);
        orchestra_daemon::session::tree::all_processes()
            .iter()
            .filter(|p| p.state != 'Z' && p.state != 'X')
            .filter(|p| {
                std::fs::read(format!("/proc/{}/environ", p.pid)).is_ok_and(|env| {
                    let mut vars = env.split(|b| *b == 0);
                    let (mut tagged, mut marked) = (false, false);
                    for v in &mut vars {
                        tagged |= v == tag.as_bytes();
                        marked |= v.starts_with(marker.as_bytes());
                    }
                    tagged && marked
                })
            })
            .map(|p| p.pid)
            .collect()
    }

    /// No live session, no process of the run's sessions, no zombie child.
    pub(super) fn is_quiet(&self) -> bool {
        let active = self
            .api
            .call("GET", "/status", None)
            .ok()
            .and_then(|(_, v)| v["sessions"]["active"].as_u64());
        active == Some(0) && self.run_processes().is_empty() && self.zombies() == 0
    }
}

pub(super) fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
