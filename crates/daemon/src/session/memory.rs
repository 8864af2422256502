//! Giving memory a flood freed back to the system.
//!
//! A flood allocates and frees a lot on the session's threads: rows of scrollback rotated
//! out, read buffers, output lines. glibc keeps freed memory in its arenas' free lists
//! (one arena per thread that allocates, up to 8 per core), and gives back only what lies at
//! the top of an arena: a daemon that peaked at N MB during a flood stays at about N MB.
//! `malloc_trim` returns the free pages of every arena (`madvise(MADV_DONTNEED)`), so memory
//! comes back down once the flood is over. Measured in `benches/flood_memory.rs`.

use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// Output processed by a session before its going quiet is worth a trim.
pub(crate) const TRIM_AFTER_BYTES: usize = 1024 * 1024;

/// Trims closer together than this are skipped: many sessions going quiet at once need one.
const MIN_INTERVAL: Duration = Duration::from_millis(200);

static LAST_TRIM: Mutex<Option<Instant>> = Mutex::new(None);

/// Arenas glibc may make: enough for every thread of a daemon at its session limit.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENA_MAX: libc::c_int = 1024;

/// Lets every thread allocate from an arena of its own. Call first thing in `main`, before
/// any other thread starts.
///
/// glibc makes at most 8 arenas per core and shares them out among the threads beyond that:
/// on 2 cores, 16 arenas for a daemon's 50 and more threads. An async worker then shared its
/// arena with sessions' readers and parsers, which run at a low priority (see
/// `orchestra_sys::niceness`) in a process that floods keep busy; preempted inside `malloc` holding
/// the arena's lock, a parser kept the worker waiting for it, and with it every socket that
/// worker would have read next: a typed key waited up to 90 ms (`benches/grid_live.rs`; with
/// an arena per thread, 22 ms at most in the same runs). Arenas are made as threads first
/// allocate and cost only the memory they hold; `give_back_freed_memory` trims them all.
pub fn use_an_arena_per_thread() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's allocator.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX);
    }
}

/// Returns freed memory to the system (glibc's `malloc_trim`); a no-op elsewhere, and when
/// another trim ran a moment ago. Takes a few milliseconds at most; call it from a session's
/// own threads, never under a lock readers wait on.
pub(crate) fn give_back_freed_memory() {
    {
        let mut last = LAST_TRIM.lock();
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < MIN_INTERVAL) {
            return;
        }
        *last = Some(now);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only works on glibc's own allocator state, under its own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
