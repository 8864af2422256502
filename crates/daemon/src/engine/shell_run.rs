//! One shell command run to its end, as set-ups and checks run theirs: `sh -c` in a
//! directory, in a process group of its own, stdin `/dev/null`, stdout and stderr into one
//! pipe of which the last [`OUTPUT_KEPT`] bytes are kept (a chatty test suite must not fill
//! memory). It ends by itself, or runs past its time, or is stopped by its caller: then its
//! whole group is sent TERM, and KILL after the grace, and it is reaped either way. Blocking:
//! call it off the async workers.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How much of a command's output is kept (its end).
pub const OUTPUT_KEPT: usize = 8 * 1024;

/// How often a running command is looked at (its exit, its time, its caller's stop).
const LOOK_EVERY: Duration = Duration::from_millis(25);

/// How long the output is waited for once the command is reaped: a process that left the
/// group (`setsid`) may hold the pipe open, and is not waited for.
const OUTPUT_WAIT: Duration = Duration::from_secs(2);

/// How a command run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself with this code.
    Exited(i32),
    /// A signal it did not get from us ended it.
    Signalled(i32),
    /// It ran longer than its time and was stopped.
    TimedOut,
    /// Its caller stopped it.
    Stopped,
    /// It could not be started (why).
    NotRun(String),
}

/// A command as it ran.
#[derive(Debug, Clone)]
pub struct Ran {
    pub ending: Ending,
    pub duration: Duration,
    /// The last [`OUTPUT_KEPT`] bytes of its output, `…` in front when cut.
    pub output: String,
}

impl Ran {
    pub fn succeeded(&self) -> bool {
        self.ending == Ending::Exited(0)
    }
}

/// What to run and how long it may take.
pub struct ShellCommand<'a> {
    pub command: &'a str,
    pub dir: &'a Path,
    pub timeout: Duration,
    /// Between TERM and KILL when it must be stopped.
    pub grace: Duration,
    /// Environment added to orchestra's own (e.g. the instance marker).
    pub env: &'a [(String, String)],
}

/// The end of `bytes` as text, at most [`OUTPUT_KEPT`] bytes, cut at a character boundary.
pub fn tail(bytes: &[u8], cut: bool) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut at = text.len().saturating_sub(OUTPUT_KEPT);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    if at > 0 || cut {
        format!("…{}", &text[at..])
    } else {
        text.into_owned()
    }
}

/// Reads `from` to its end, keeping only the last `2 × OUTPUT_KEPT` bytes (the text is cut
/// to [`OUTPUT_KEPT`] at a character boundary later); whether anything was dropped.
fn read_tail(mut from: impl Read) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * OUTPUT_KEPT {
                    let drop = kept.len() - 2 * OUTPUT_KEPT;
                    kept.drain(..drop);
                    cut = true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    (kept, cut)
}

fn signal_group(pgid: i32, signal: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
}

/// Runs `cmd` to its end; `stop` is asked now and then whether its caller wants it stopped.
pub fn run(cmd: &ShellCommand<'_>, stop: &dyn Fn() -> bool) -> Ran {
    let started = Instant::now();
    let spawned = Command::new("/bin/sh")
        .arg("-c")
        // Both streams into one pipe, in the order they were written.
        .arg(format!("exec 2>&1\n{}", cmd.command))
        .current_dir(cmd.dir)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                ending: Ending::NotRun(format!("could not be run: {e}")),
                duration: started.elapsed(),
                output: String::new(),
            };
        }
    };
    let pgid = child.id() as i32;
    let (sent, output) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            let _ = sent.send(read_tail(out));
        });
    }
    let deadline = started + cmd.timeout;
    // Set once TERM was sent: KILL follows at this time.
    let mut kill_at: Option<Instant> = None;
    let mut why: Option<Ending> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let now = Instant::now();
        if why.is_none() {
            if stop() {
                why = Some(Ending::Stopped);
            } else if now >= deadline {
                why = Some(Ending::TimedOut);
            }
            if why.is_some() {
                signal_group(pgid, nix::sys::signal::Signal::SIGTERM);
                kill_at = Some(now + cmd.grace);
            }
        }
        if kill_at.is_some_and(|at| now >= at) {
            signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
            kill_at = None;
        }
        std::thread::sleep(LOOK_EVERY);
    };
    // The leader is gone; what it started in its group goes with it (a check's test runner
    // must not outlive the check).
    signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
    if status.is_none() {
        let _ = child.wait();
    }
    let duration = started.elapsed();
    let output = output
        .recv_timeout(OUTPUT_WAIT)
        .map(|(bytes, cut)| tail(&bytes, cut))
        .unwrap_or_default();
    let ending = match (why, status) {
        (Some(why), _) => why,
        (None, Some(s)) => {
            use std::os::unix::process::ExitStatusExt;
            match (s.code(), s.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(sig)) => Ending::Signalled(sig),
                (None, None) => Ending::NotRun("ended without an exit status".into()),
            }
        }
        (None, None) => Ending::NotRun("could not be waited for".into()),
    };
    Ran {
        ending,
        duration,
        output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(command: &str, timeout: Duration, stop: &dyn Fn() -> bool) -> Ran {
        let dir = tempfile::tempdir().unwrap();
        run(
            &ShellCommand {
                command,
                dir: dir.path(),
                timeout,
                grace: Duration::from_millis(200),
                env: &[("CHECK_MARK".into(), "x".into())],
            },
            stop,
        )
    }

    #[test]
    fn output_of_both_streams_and_the_exit_code() {
        let ran = run_in(
            "echo out; echo err >&2; echo $CHECK_MARK; exit 3",
            Duration::from_secs(10),
            &|| false,
        );
        assert_eq!(ran.ending, Ending::Exited(3));
        assert_eq!(ran.output, "out\nerr\nx\n");
        assert!(!ran.succeeded());
        assert!(run_in("true", Duration::from_secs(10), &|| false).succeeded());
    }

    #[test]
    fn only_the_tail_is_kept() {
        let ran = run_in(
            "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done",
            Duration::from_secs(30),
            &|| false,
        );
        assert!(ran.succeeded());
        assert!(ran.output.starts_with('…'), "{}", &ran.output[..40]);
        assert!(ran.output.len() <= OUTPUT_KEPT + '…'.len_utf8());
        assert!(ran.output.ends_with("line-2999\n"));
    }

    #[test]
    fn a_command_past_its_time_is_stopped_with_its_group() {
        let ran = run_in("sleep 30 & sleep 30", Duration::from_millis(300), &|| false);
        assert_eq!(ran.ending, Ending::TimedOut);
        assert!(ran.duration < Duration::from_secs(20));
        // One that ignores TERM is killed after the grace.
        let ran = run_in(
            "trap '' TERM; sleep 30",
            Duration::from_millis(200),
            &|| false,
        );
        assert_eq!(ran.ending, Ending::TimedOut);
    }

    #[test]
    fn the_caller_can_stop_it() {
        let ran = run_in("sleep 30", Duration::from_secs(60), &|| true);
        assert_eq!(ran.ending, Ending::Stopped);
    }

    #[test]
    fn a_missing_directory_is_said() {
        let ran = run(
            &ShellCommand {
                command: "true",
                dir: Path::new("/nonexistent/dir"),
                timeout: Duration::from_secs(1),
                grace: Duration::from_millis(100),
                env: &[],
            },
            &|| false,
        );
        assert!(matches!(ran.ending, Ending::NotRun(ref e) if e.contains("could not be run")));
    }
}
