//! Waiting on a non-blocking descriptor as a blocking call would, on the thread that asks:
//! for the threads that own a descriptor each (a session's terminal, a stream's input), so
//! the kernel wakes them when it is ready, with no async runtime between.

use std::os::fd::RawFd;
use std::time::Instant;

/// Waits until `fd` is ready for `events` (or hung up, or in error: the next read or write
/// says which).
pub fn wait_ready(fd: RawFd, events: libc::c_short) {
    wait_ready_until(fd, events, None);
}

/// [`wait_ready`], giving up at `deadline`: `false` when it passed first.
pub fn wait_ready_until(fd: RawFd, events: libc::c_short, deadline: Option<Instant>) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        let timeout = deadline.map_or(-1, |d| {
            // Rounded up: waking a little before the deadline would only wait again.
            let left = d.saturating_duration_since(Instant::now());
            i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
        });
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut pfd, 1, timeout) } {
            0 => return false,
            n if n > 0 => return true,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return true,
        }
    }
}
