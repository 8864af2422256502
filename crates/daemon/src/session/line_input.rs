//! Whether a program waits for the user to type a line: a `read -p "Continue? [y/N] "` in a
//! shell, a script's `input("Name: ")`, apt's "Do you want to continue? [Y/n]", sudo's
//! password. No screen pattern knows every such question, but the kernel does: the terminal
//! is in canonical mode (the kernel edits the line, as for a line read; a shell's line
//! editor and full-screen programs switch that off) and a process of the terminal's
//! foreground group sleeps in read(2) on it.
//!
//! Linux only (`/proc/PID/syscall`). Where the kernel does not let us look (another user's
//! process, a stricter ptrace policy) the answer is "no": the status stays what the screen
//! says, as before.

use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

/// A process of the terminal's foreground group, blocked reading a line from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineReader {
    pub pid: i32,
    /// Its command name (`/proc/PID/comm`).
    pub comm: String,
    /// Whether the terminal echoes what is typed (off: a password).
    pub echo: bool,
}

/// At most this many processes of the foreground group are looked at (a pipeline, a script
/// and the program it runs).
const MAX_PROCESSES: usize = 64;

/// Whether the terminal whose master is `master` is in canonical mode (a line read would
/// wait for Enter), and whether it echoes.
fn line_mode(master: RawFd) -> Option<(bool, bool)> {
    // SAFETY: a zeroed termios is a valid out-parameter; `master` is an open descriptor of
    // the caller's (a failure is an error return, not undefined behaviour).
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `termios` is a live local; a bad descriptor is an error return.
    if unsafe { libc::tcgetattr(master, &mut termios) } != 0 {
        return None;
    }
    Some((
        termios.c_lflag & libc::ICANON != 0,
        termios.c_lflag & libc::ECHO != 0,
    ))
}

/// Who has the terminal's keyboard, as far as lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Foreground {
    /// Canonical mode is off: a line editor (a shell at its prompt) or a full-screen
    /// program reads keys as they come; the screen says more.
    Keys,
    /// A process of the foreground group waits for a typed line.
    Reading(LineReader),
    /// Canonical mode, nothing reads, and a job of the session's leader (a command a shell
    /// runs: `sleep`, a quiet build) has the terminal: it works, not waiting for input.
    Running,
    /// Canonical mode, nothing reads, and the leader's own group has the terminal.
    Leader,
}

/// Who has the keyboard of the terminal whose master is `master`, in the session whose
/// leader is `leader`; `None` when the terminal cannot be asked (it is gone).
pub fn foreground(master: RawFd, leader: i32) -> Option<Foreground> {
    let (canonical, echo) = line_mode(master)?;
    if !canonical {
        return Some(Foreground::Keys);
    }
    // SAFETY: `master` is an open descriptor; this asks for its terminal's foreground group.
    let group = unsafe { libc::tcgetpgrp(master) };
    if group <= 0 {
        return None;
    }
    let terminal = terminal_device(master)?;
    let reader = group_members(group)
        .into_iter()
        .find(|&pid| reads_from(pid, terminal));
    Some(match reader {
        Some(pid) => Foreground::Reading(LineReader {
            pid,
            comm: std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim_end().to_string())
                .unwrap_or_default(),
            echo,
        }),
        None if group == leader => Foreground::Leader,
        None => Foreground::Running,
    })
}

/// The device number of the terminal (the slave side of `master`).
fn terminal_device(master: RawFd) -> Option<u64> {
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the buffer and its length are ours; ptsname_r writes a NUL-terminated name.
    if unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) } != 0 {
        return None;
    }
    // SAFETY: ptsname_r succeeded, so `name` holds a NUL-terminated string.
    let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let path = std::ffi::OsStr::from_bytes(path.to_bytes());
    std::fs::metadata(path).ok().map(|m| m.rdev())
}

/// The processes of group `group`: its leader and, below it, its descendants still in the
/// group (a script's own children), by `/proc/PID/task/PID/children`.
fn group_members(group: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut next = vec![group];
    while let Some(pid) = next.pop() {
        if found.len() >= MAX_PROCESSES {
            break;
        }
        if super::tree::stat(pid).is_none_or(|s| s.pgrp != group) {
            continue;
        }
        found.push(pid);
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            next.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// Whether `pid` sleeps in read(2) on the terminal `terminal`.
fn reads_from(pid: i32, terminal: u64) -> bool {
    let Ok(call) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let Some(fd) = blocked_read_fd(&call) else {
        return false;
    };
    // `/dev/tty` (what getpass and sudo open) is the process's controlling terminal: ours,
    // for a process of our terminal's foreground group.
    let controlling_terminal = libc::makedev(5, 0);
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}"))
        .is_ok_and(|m| m.rdev() == terminal || m.rdev() == controlling_terminal)
}

/// The descriptor a process reads from, given its `/proc/PID/syscall` (`"0 0x0 0x55… …"`:
/// the call's number, then its arguments in hex; `"running"` when it is not in a call).
fn blocked_read_fd(syscall: &str) -> Option<u64> {
    let mut fields = syscall.split_whitespace();
    let number: i64 = fields.next()?.parse().ok()?;
    if number != libc::SYS_read {
        return None;
    }
    let fd = fields.next()?;
    u64::from_str_radix(fd.strip_prefix("0x").unwrap_or(fd), 16).ok()
}

/// The text of the cursor's line up to the cursor, and the whole line above it: logical
/// lines, so a question longer than the terminal is wide (wrapped onto the next row) reads
/// whole.
pub fn cursor_lines(screen: &vt100::Screen) -> (String, String) {
    let (row, col) = screen.cursor_position();
    let (_, cols) = screen.size();
    let start_of = |mut r: u16| {
        while r > 0 && screen.row_wrapped(r - 1) {
            r -= 1;
        }
        r
    };
    let start = start_of(row);
    let before = screen.contents_between(start, 0, row, col);
    let above = match start.checked_sub(1) {
        Some(end) => screen.contents_between(start_of(end), 0, end, cols),
        None => String::new(),
    };
    (before, above)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_at_the_cursor_are_read_whole_across_wraps() {
        let mut p = vt100::Parser::new(4, 20, 0);
        p.process(b"Done.\r\nDo you want to continue with it? [Y/n] ");
        let (before, above) = cursor_lines(p.screen());
        assert_eq!(before, "Do you want to continue with it? [Y/n] ");
        assert_eq!(above, "Done.");
        let mut p = vt100::Parser::new(4, 20, 0);
        p.process(b"Overwrite the whole build tree?\r\n");
        let (before, above) = cursor_lines(p.screen());
        assert_eq!(before, "");
        assert_eq!(above, "Overwrite the whole build tree?");
        let (before, above) = cursor_lines(vt100::Parser::new(4, 20, 0).screen());
        assert_eq!((before.as_str(), above.as_str()), ("", ""));
    }

    #[test]
    fn a_blocked_read_names_its_descriptor() {
        let read = libc::SYS_read;
        assert_eq!(
            blocked_read_fd(&format!("{read} 0x0 0x5564d3c84f40 0x1000 0x0")),
            Some(0)
        );
        assert_eq!(blocked_read_fd(&format!("{read} 0x1f 0x1 0x1")), Some(31));
        assert_eq!(blocked_read_fd("running"), None);
        assert_eq!(blocked_read_fd(""), None);
        let other = libc::SYS_read + 1;
        assert_eq!(blocked_read_fd(&format!("{other} 0x0 0x1")), None);
        assert_eq!(blocked_read_fd(&format!("{read} zz")), None);
    }
}
