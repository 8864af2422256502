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
