//! Threads that do bulk work (reading and parsing a flood) run at a lower priority than the
//! threads that carry a user's keys, and those ask to be run soon after they wake.
//!
//! On a machine with fewer cores than busy programs, every hop of a keystroke (the TUI's
//! reader, the socket, the daemon's reader of the stream, the PTY write) waits for a turn on
//! a CPU, and the waits add up: with 16 agents flooding on 2 cores, orchestra's own parser
//! and reader threads were half of what the key queued behind. tmux has one thread and fewer
//! hops. A niceness above 0 is allowed without privileges and is per thread on Linux; the
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
    // SAFETY: no pointers; it acts on this thread only.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, BULK_NICENESS) };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "thread priority not lowered");
    }
}

/// The time slice a thread on a key's way asks for: the shortest the kernel grants.
const KEY_PATH_SLICE_NS: u64 = 100_000;

/// `SCHED_FLAG_RESET_ON_FORK`: threads and processes started from a marked thread get the
/// default slice, not the mark.
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// The kernel's `struct sched_attr` (its first version, which every kernel since 3.14 takes).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Asks the kernel to run the calling thread soon after it wakes, for a short while: the
/// threads that carry a key (the TUI's reader of the terminal and its UI thread, the
/// daemon's reader of a stream's input) sleep almost always and work for microseconds.
///
/// The daemon and the TUI are each one scheduling group (an autogroup per session) that
/// a flood's parsing keeps busy, and a woken thread waited for its group's next turn among
/// the flooding agents' groups (`perf sched latency`: a mean of 5 ms, up to 33 ms). Since
/// Linux 6.12 a normal thread may ask for a shorter slice (`sched_runtime` of
/// `sched_setattr`): its deadline comes sooner, so on waking it preempts a thread with a
/// longer one, and the shorter slice is carried up to its group. Its share of the CPU is
/// unchanged. No privilege is needed. Older kernels take the call and ignore the slice;
/// a kernel or sandbox that refuses it leaves the thread as it was.
pub fn mark_current_thread_as_key_path() {
    // SAFETY: gettid and getpriority have no preconditions.
    let tid = unsafe { libc::gettid() };
    // SAFETY: no pointers; it acts on this thread only.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) };
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: libc::SCHED_OTHER as u32,
        sched_flags: SCHED_FLAG_RESET_ON_FORK,
        sched_nice: nice,
        sched_runtime: KEY_PATH_SLICE_NS,
        ..SchedAttr::default()
    };
    // SAFETY: `attr` is a valid, fully initialised sched_attr of the size it declares, and
    // pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "key path's slice not set");
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

    /// The calling thread's `sched_runtime` and flags as the kernel reports them.
    fn own_slice_and_flags() -> (u64, u64) {
        let mut attr = SchedAttr::default();
        let size = std::mem::size_of::<SchedAttr>() as u32;
        // SAFETY: `attr` is writable and `size` is its size; pid 0 is the calling thread.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_getattr,
                0,
                &mut attr as *mut SchedAttr,
                size,
                0,
            )
        };
        assert_eq!(rc, 0, "sched_getattr: {}", std::io::Error::last_os_error());
        (attr.sched_runtime, attr.sched_flags)
    }

    /// Whether this kernel keeps a normal thread's own slice (Linux 6.12 and later).
    fn kernel_keeps_slices() -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release.trim().split(['.', '-']);
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor) >= (6, 12)
    }

    #[test]
    fn the_key_path_asks_for_a_short_slice_keeps_its_niceness_and_passes_on_neither() {
        let (marked, niceness, child) = std::thread::spawn(|| {
            mark_current_thread_as_bulk_work();
            mark_current_thread_as_key_path();
            let child = std::thread::spawn(own_slice_and_flags)
                .join()
                .unwrap_or((u64::MAX, u64::MAX));
            (own_slice_and_flags(), own_niceness(), child)
        })
        .join()
        .unwrap_or(((0, 0), 0, (0, 0)));
        assert_eq!(niceness, own_niceness() + i64::from(BULK_NICENESS));
        assert_eq!(
            marked.1 & SCHED_FLAG_RESET_ON_FORK,
            SCHED_FLAG_RESET_ON_FORK
        );
        assert_eq!(
            child.1 & SCHED_FLAG_RESET_ON_FORK,
            0,
            "a thread it starts is unmarked"
        );
        if kernel_keeps_slices() {
            assert_eq!(marked.0, KEY_PATH_SLICE_NS);
            assert_ne!(
                child.0, KEY_PATH_SLICE_NS,
                "a thread it starts has the default slice"
            );
        }
    }
}
