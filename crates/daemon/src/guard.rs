//! The guard: a tiny helper process that outlives orchestra only to end what orchestra
//! started. If orchestra is killed with SIGKILL it cannot end its sessions itself, and
//! closing the PTY masters only hangs up what listens to the terminal; a daemon that left
//! the session (`setsid`, double fork) and ignores SIGHUP and SIGTERM would live on. Every
//! session carries `ORCHESTRA_INSTANCE=<id>` in its environment; the guard waits, blocked on
//! a pipe that only orchestra holds open (no CPU), and when that pipe closes it ends every
//! process still carrying the id.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::engine::INSTANCE_VAR;

/// Starts the guard for `instance`. The returned pipe end must stay open for as long as
/// orchestra runs: dropping it (or dying) tells the guard to clean up.
pub fn spawn(instance: &str) -> Option<(Child, OwnedFd)> {
    let exe = std::env::current_exe().ok()?;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fds; O_CLOEXEC keeps them out of other children.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both fds were just created and are owned here.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let child = Command::new(exe)
        .args(["__guard", instance])
        .stdin(Stdio::from(read_end))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove(INSTANCE_VAR)
        .spawn()
        .ok()?;
    Some((child, write_end))
}

/// Pids of live processes whose environment carries `ORCHESTRA_INSTANCE=<instance>`.
fn marked(instance: &str) -> Vec<i32> {
    let needle = format!("{INSTANCE_VAR}={instance}");
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

fn signal_all(pids: &[i32], sig: i32) {
    for &pid in pids {
        // SAFETY: kill with a specific pid and signal has no memory effects.
        unsafe { libc::kill(pid, sig) };
    }
}

/// The instance when this process was started as `orchestra __guard INSTANCE`. Checked before
/// the command line is parsed, so the internal command stays out of help, completions and man.
pub fn invoked() -> Option<String> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "__guard" {
        return None;
    }
    let instance = args.next()?.into_string().ok()?;
    args.next().is_none().then_some(instance)
}

/// `orchestra __guard INSTANCE`: waits for orchestra to go, then ends what it left.
pub fn run(instance: &str) -> ExitCode {
    // Our own group, so a signal to orchestra's group does not end us before we act.
    // SAFETY: setsid has no preconditions here; failure is harmless.
    unsafe { libc::setsid() };
    let mut stdin = std::io::stdin().lock();
    let mut buf = [0u8; 64];
    // Blocks until orchestra closes its end (exit, crash or SIGKILL alike).
    while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
    let left = marked(instance);
    if left.is_empty() {
        return ExitCode::SUCCESS;
    }
    signal_all(&left, libc::SIGTERM);
    signal_all(&left, libc::SIGCONT);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && !marked(instance).is_empty() {
        std::thread::sleep(Duration::from_millis(50));
    }
    signal_all(&marked(instance), libc::SIGKILL);
    ExitCode::SUCCESS
}
