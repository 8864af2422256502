//! Other processes, as Linux shows them: whether one runs, waiting for one to end.

use std::time::{Duration, Instant};

/// The environment variable that marks every process of one orchestra's sessions.
pub const INSTANCE_VAR: &str = "ORCHESTRA_INSTANCE";

/// Whether a process with this pid exists and is not a zombie (a killed orchestra its parent
/// has not reaped yet is not running either). Signal 0 checks without sending anything.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    exists && !zombie
}

/// Waits until process `pid` has exited (it is gone or a zombie), up to `timeout`; whether
/// it did. For a stop: the agents are gone and the state is saved once orchestra has exited.
pub fn wait_exit(pid: u32, timeout: Duration) -> bool {
    poll_until(timeout, || !pid_alive(pid))
}

/// Checks `done` every 20 ms until it holds or `timeout` passes; whether it held.
pub fn poll_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
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
    use std::process::Command;

    #[test]
    fn wait_exit_sees_a_reaped_child_go() {
        let mut child = Command::new("sleep").arg("0.2").spawn().unwrap();
        let pid = child.id();
        assert!(!wait_exit(pid, Duration::from_millis(1)));
        // Reaped by a thread of its own, as `find_or_start` does for the daemon.
        let reaper = std::thread::spawn(move || child.wait());
        assert!(wait_exit(pid, Duration::from_secs(10)));
        reaper.join().unwrap().unwrap();
    }
}
