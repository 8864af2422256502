//! Threads that do bulk work (reading and parsing a flood) run at a lower priority than the
//! threads that carry a user's keys.
//!
//! On a machine with fewer cores than busy programs, every hop of a keystroke (the TUI's
//! reader, the socket, the daemon's workers, the PTY write) waits for a turn on a CPU, and
//! the waits add up: with 16 agents flooding on 2 cores, orchestra's own parser and reader
//! threads were half of what the key queued behind. tmux has one thread and fewer hops.
//! A niceness above 0 is allowed without privileges and is per thread on Linux; the
//! threads still get the CPU whenever nothing at the normal priority wants it, so an idle
//! machine parses as fast as before.

/// The niceness of bulk work: a nice-5 thread weighs about a third of a normal one.
const BULK_NICENESS: libc::c_int = 5;

/// Lowers the calling thread's priority to that of bulk work. Best effort: a failure (a
/// sandbox that forbids it) leaves the thread as it was.
pub fn mark_current_thread_as_bulk_work() {
    // SAFETY: gettid has no preconditions; setpriority on our own thread id only changes
    // this thread's niceness.
    let tid = unsafe { libc::gettid() };
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, BULK_NICENESS) };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "thread priority not lowered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's niceness, as the kernel reports it (`/proc/thread-self/stat`).
    fn own_niceness() -> i64 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
        rest.split_whitespace()
            .nth(16)
            .and_then(|n| n.parse().ok())
            .unwrap_or(i64::MIN)
    }

    #[test]
    fn bulk_work_runs_nicer_and_only_on_its_own_thread() {
        let before = own_niceness();
        let bulk = std::thread::spawn(|| {
            mark_current_thread_as_bulk_work();
            own_niceness()
        })
        .join()
        .unwrap_or(i64::MIN);
        assert_eq!(bulk, before + i64::from(BULK_NICENESS));
        assert_eq!(
            own_niceness(),
            before,
            "the caller's own thread is untouched"
        );
    }
}
