//! How a session ends: the waiter thread (the leader's exit seen without reaping it, the
//! leftovers of its tree ended, then the reap), [`PtySession::terminate`] on request, and
//! waiting for the end. Until the tree is clean the leader stays a zombie, so its pid (and
//! the group and session ids signalled) cannot be reused.

use super::PtySession;
use super::processing::EXIT_DRAIN;
use super::shared::{Shared, Sweeper};
use crate::session::tree;
use crate::session::{ExitInfo, reaper};
use nix::sys::signal::Signal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Grace for leftovers of a leader that exited by itself (SIGTERM, then SIGKILL).
const LEFTOVER_GRACE: Duration = Duration::from_millis(1000);
/// How long SIGKILL rounds go on before giving up on unkillable processes.
pub(super) const KILL_DEADLINE: Duration = Duration::from_secs(5);

impl PtySession {
    /// How the leader ended, once it did.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.shared.state.lock().exit.clone()
    }

    /// Whether the session is over: leader reaped, output processed, `Exited` delivered.
    pub fn is_finished(&self) -> bool {
        self.shared.state.lock().finished
    }

    /// Waits until the session is over (the `Exited` event was delivered, so every output
    /// event came before), at most `timeout`.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock();
        while !st.finished {
            if self.shared.cond.wait_until(&mut st, deadline).timed_out() {
                break;
            }
        }
        if st.finished { st.exit.clone() } else { None }
    }

    /// Ends the session and everything it started; blocking, idempotent.
    ///
    /// SIGHUP + SIGTERM (+ SIGCONT, in case it is paused) to the group and every other
    /// process of the tree; waits up to `grace` for the leader to exit; then SIGKILLs the
    /// group and whatever remains of the tree (processes that left the group included);
    /// reaps; waits for the remaining output to be processed. Returns how the leader ended.
    pub fn terminate(&self, grace: Duration) -> ExitInfo {
        let _one_at_a_time = self.terminate_lock.lock();
        let sh = &self.shared;
        let mine = {
            let mut st = sh.state.lock();
            if st.finished {
                return st.exit.clone().unwrap_or_default();
            }
            if st.sweeper == Sweeper::None {
                st.sweeper = Sweeper::Terminate;
                true
            } else {
                false
            }
        };
        if mine {
            // Until we set tree_clean, the leader is not reaped: its pid (and so the group
            // and session ids we signal and scan for) cannot be reused.
            let first = tree::session_tree(sh.query());
            for sig in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGCONT] {
                tree::signal_group(sh.pid, sig);
                for &pid in &first {
                    tree::signal_pid(pid, sig);
                }
            }
            let deadline = Instant::now() + grace;
            {
                let mut st = sh.state.lock();
                while st.exit.is_none() {
                    if sh.cond.wait_until(&mut st, deadline).timed_out() {
                        break;
                    }
                }
            }
            tree::kill_tree(sh.query(), &first, Instant::now() + KILL_DEADLINE);
            let mut st = sh.state.lock();
            st.tree_clean = true;
            sh.cond.notify_all();
        }
        // The waiter reaps, the processing thread delivers the rest and the exit.
        let deadline = Instant::now() + KILL_DEADLINE + EXIT_DRAIN + Duration::from_secs(1);
        let mut st = sh.state.lock();
        while !st.finished {
            if sh.cond.wait_until(&mut st, deadline).timed_out() {
                tracing::warn!(pid = sh.pid, "session did not finish after termination");
                break;
            }
        }
        st.exit.clone().unwrap_or_default()
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if !self.shared.state.lock().finished {
            self.terminate(Duration::from_secs(1));
        }
    }
}

/// Waits for the leader without reaping it (WNOWAIT), so its pid stays reserved while the
/// leftovers of its tree are found and ended; then reaps it.
pub(super) fn wait_loop(sh: Arc<Shared>) {
    let info = wait_exit_nowait(sh.pid);
    let sweep = {
        let mut st = sh.state.lock();
        st.exit = Some(info);
        sh.cond.notify_all();
        if st.sweeper == Sweeper::None {
            st.sweeper = Sweeper::Waiter;
            true
        } else {
            false
        }
    };
    if sweep {
        // The leader ended by itself: end what it left behind.
        let left = tree::session_tree(sh.query());
        if !left.is_empty() {
            for &pid in &left {
                tree::signal_pid(pid, Signal::SIGTERM);
                tree::signal_pid(pid, Signal::SIGCONT);
            }
            tree::wait_gone(&left, Instant::now() + LEFTOVER_GRACE);
            tree::kill_tree(sh.query(), &left, Instant::now() + KILL_DEADLINE);
        }
        let mut st = sh.state.lock();
        st.tree_clean = true;
    } else {
        // terminate() is ending the tree; wait for it (bounded, in case it is stuck).
        let deadline = Instant::now() + KILL_DEADLINE + Duration::from_secs(30);
        let mut st = sh.state.lock();
        while !st.tree_clean {
            if sh.cond.wait_until(&mut st, deadline).timed_out() {
                break;
            }
        }
    }
    {
        let mut st = sh.state.lock();
        let mut status = 0;
        // SAFETY: reaping our own child, which is already a zombie.
        unsafe {
            while libc::waitpid(sh.pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
        st.reaped = true;
        sh.cond.notify_all();
    }
    reaper::unregister_leader(sh.pid);
    reaper::reap_orphans();
    sh.inbox.lock().exit = true;
    sh.inbox_ready.notify_one();
}

/// `waitid(P_PID, pid, WEXITED | WNOWAIT)`: how it ended, leaving it a zombie.
fn wait_exit_nowait(pid: i32) -> ExitInfo {
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live siginfo_t for waitid to fill.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            // SAFETY: filled by a successful waitid for a child.
            let status = unsafe { info.si_status() };
            return match info.si_code {
                libc::CLD_EXITED => ExitInfo {
                    code: Some(status),
                    signal: None,
                },
                libc::CLD_KILLED | libc::CLD_DUMPED => ExitInfo {
                    code: None,
                    signal: Some(signal_name(status)),
                },
                _ => continue,
            };
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        tracing::warn!(pid, error = %err, "waitid on a session leader failed");
        return ExitInfo::default();
    }
}

fn signal_name(signo: i32) -> String {
    Signal::try_from(signo)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("SIG{signo}"))
}
