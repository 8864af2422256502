//! Child subreaper and the zombie reaper for orphans adopted from sessions.
//!
//! [`become_subreaper`] makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a
//! session's descendants that are orphaned (double-forked daemons, `setsid cmd &`, jobs of a
//! shell that exited) are re-parented to us instead of init, and stay findable. When they die
//! they are our zombies: a thread woken by SIGCHLD (through a self-pipe; idle, it costs
//! nothing) reaps them with `waitpid(pid, WNOHANG)` on those pids only — never
//! `waitpid(-1)`. It reaps a zombie child only when
//! - it is not a registered session leader (those are reaped by their session's waiter), and
//! - its session id differs from ours, i.e. it came from a PTY session (every session child
//!   runs in a new session). Children that other code spawned with `std::process::Command`
//!   keep our session id and are left to their owner. (Code that spawns children into a new
//!   session itself, with `setsid`, should not rely on waiting for them.)
//!
//! Spawning a session leader holds the registry lock from fork until the leader is registered,
//! so the reaper cannot mistake a leader that exits at once for an orphan.

use super::tree;
use parking_lot::{Mutex, MutexGuard};
use std::collections::HashSet;
use std::sync::{Once, OnceLock};

static INIT: Once = Once::new();
static SUBREAPER: OnceLock<bool> = OnceLock::new();

fn leaders() -> &'static Mutex<HashSet<i32>> {
    static LEADERS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    LEADERS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Makes this process a child subreaper and starts the orphan reaper. Idempotent; called by
/// `PtySession::spawn`. Returns whether the process is a subreaper.
pub fn become_subreaper() -> bool {
    INIT.call_once(|| {
        // SAFETY: plain prctl with integer arguments.
        let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
        if !ok {
            tracing::warn!(error = %std::io::Error::last_os_error(), "PR_SET_CHILD_SUBREAPER failed; orphans of sessions go to init");
        }
        let _ = SUBREAPER.set(ok);
        if let Err(e) = start_reaper_thread() {
            tracing::warn!(error = %e, "could not start the orphan reaper; adopted zombies are reaped when sessions end");
        }
    });
    SUBREAPER.get().copied().unwrap_or(false)
}

/// Holds the leader registry. While held, the reaper does not run.
pub(crate) struct LeaderGuard(MutexGuard<'static, HashSet<i32>>);

impl LeaderGuard {
    pub(crate) fn register(&mut self, pid: i32) {
        self.0.insert(pid);
    }
}

pub(crate) fn lock_leaders() -> LeaderGuard {
    LeaderGuard(leaders().lock())
}

pub(crate) fn unregister_leader(pid: i32) {
    leaders().lock().remove(&pid);
}

/// Reaps zombie children adopted from sessions (see the module docs). Returns how many.
pub fn reap_orphans() -> usize {
    let leaders = leaders().lock();
    let me = std::process::id() as i32;
    // SAFETY: getsid(0) has no preconditions.
    let my_sid = unsafe { libc::getsid(0) };
    let mut reaped = 0;
    for p in tree::all_processes() {
        if p.ppid == me && p.state == 'Z' && p.sid != my_sid && !leaders.contains(&p.pid) {
            let mut status = 0;
            // SAFETY: waiting on one specific pid, non-blocking.
            let r = unsafe { libc::waitpid(p.pid, &mut status, libc::WNOHANG) };
            if r == p.pid {
                reaped += 1;
            }
        }
    }
    reaped
}

fn start_reaper_thread() -> std::io::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let (rfd, wfd) = (fds[0], fds[1]);
    // The handler must never block: make the write end non-blocking.
    // SAFETY: fcntl on a fd we own.
    unsafe {
        let flags = libc::fcntl(wfd, libc::F_GETFL);
        libc::fcntl(wfd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    // SAFETY: the action only calls write(2) on a pipe and restores errno: async-signal-safe.
    // signal-hook-registry chains with other SIGCHLD handlers (tokio's included).
    let registered = unsafe {
        signal_hook_registry::register(libc::SIGCHLD, move || {
            let errno = *libc::__errno_location();
            let byte = 1u8;
            libc::write(wfd, (&byte as *const u8).cast(), 1);
            *libc::__errno_location() = errno;
        })
    };
    if let Err(e) = registered {
        // SAFETY: closing fds we own and nobody else uses.
        unsafe {
            libc::close(rfd);
            libc::close(wfd);
        }
        return Err(e);
    }
    std::thread::Builder::new()
        .name("orchestra-reaper".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            let mut buf = [0u8; 64];
            loop {
                // SAFETY: reading into a local buffer of the given size.
                let n = unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    break;
                }
                if n == 0 {
                    break;
                }
                reap_orphans();
            }
        })?;
    Ok(())
}
