//! Waiting on a non-blocking descriptor as a blocking call would, on the thread that asks:
//! for the threads that own a descriptor each (a session's terminal, a stream's input), so
//! the kernel wakes them when it is ready, with no async runtime between.

use std::io::Read;
use std::os::fd::RawFd;
use std::time::Instant;

/// A read from a non-blocking descriptor that waits like a blocking one: `wait` is called
/// whenever there is nothing to read yet (it waits for the descriptor, and may do the
/// caller's other timed work meanwhile).
pub fn read_waiting(
    reader: &mut (impl Read + ?Sized),
    buf: &mut [u8],
    mut wait: impl FnMut(),
) -> std::io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait(),
            other => return other,
        }
    }
}

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
