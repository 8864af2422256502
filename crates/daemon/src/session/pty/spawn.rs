//! Starting a session: the PTY opened, the leader forked into it (its own session and
//! process group) and registered with the reaper, the state its threads share made, and the
//! three threads started.

use super::ending::{KILL_DEADLINE, wait_loop};
use super::processing::process_loop;
use super::reader::read_loop;
use super::shared::{Inbox, Parsed, Shared, State, Sweeper, TypingModes};
use super::{PtySession, pty_err};
use crate::session::activity::{Activity, ActivityTracker};
use crate::session::reaper;
use crate::session::screen::Terminal;
use crate::session::transcript::Transcript;
use crate::session::tree::{self, MARKER_VAR};
use crate::session::visible::Visible;
use crate::session::{SessionError, SessionEvent, SpawnSpec};
use nix::sys::signal::Signal;
use parking_lot::{Condvar, Mutex};
use portable_pty::{CommandBuilder, PtyPair, PtySize, SlavePty, native_pty_system};
use std::io::Read;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Instant;

/// Thread stacks: these threads do little; their pages are only touched when used.
const STACK_SIZE: usize = 256 * 1024;

impl PtySession {
    /// Starts `spec.program` in a new PTY. `on_event` receives output lines, screen changes,
    /// activity changes and, last, the exit (see [`SessionEvent`]).
    pub fn spawn(
        spec: SpawnSpec,
        on_event: Box<dyn Fn(SessionEvent) + Send + Sync>,
    ) -> Result<Arc<Self>, SessionError> {
        reaper::become_subreaper();
        if !spec.cwd.is_dir() {
            return Err(SessionError::InvalidCwd(spec.cwd.clone()));
        }
        let marker = if spec.marker.is_empty() {
            uuid::Uuid::new_v4().to_string()
        } else {
            spec.marker.clone()
        };
        let (rows, cols) = (spec.rows.max(1), spec.cols.max(1));
        let pair = open_pty(rows, cols)?;
        let cmd = child_command(&spec, &marker);
        let reader = pair.master.try_clone_reader().map_err(pty_err)?;
        let writer = pair.master.take_writer().map_err(pty_err)?;
        let fd = pair
            .master
            .as_raw_fd()
            .ok_or_else(|| pty_err("the terminal has no file descriptor"))?;
        set_nonblocking(fd)?;
        let transcript = match &spec.transcript {
            Some(path) => Some(Transcript::open(path, spec.transcript_cap)?),
            None => None,
        };

        let pid = fork_leader(&*pair.slave, cmd, &spec.program)?;
        drop(pair.slave);

        let shared = Arc::new(Shared {
            pid,
            marker,
            fd,
            term: Mutex::new(Terminal::new(rows, cols, spec.scrollback)),
            typing_modes: TypingModes::default(),
            visible: Visible::default(),
            writer: Mutex::new(writer),
            master: Mutex::new(pair.master),
            state: Mutex::new(State {
                activity: Activity::Silent,
                paused: false,
                exit: None,
                reaped: false,
                finished: false,
                sweeper: Sweeper::None,
                tree_clean: false,
            }),
            cond: Condvar::new(),
            on_event,
            inbox: Mutex::new(Inbox::default()),
            inbox_ready: Condvar::new(),
            inbox_space: Condvar::new(),
            inline_done: Condvar::new(),
            parsed: Mutex::new(Parsed {
                activity: ActivityTracker::new(Instant::now(), spec.settle, spec.startup_quiet),
                since_trim: 0,
            }),
            output_gate: Mutex::new(false),
            transcript: Mutex::new(transcript),
            screen_generation: tokio::sync::watch::Sender::new(0),
        });
        let session = Arc::new(Self {
            shared: shared.clone(),
            terminate_lock: Mutex::new(()),
        });

        if let Err(e) = start_threads(&shared, reader) {
            // Without its threads the session cannot run: end the child now.
            tree::signal_group(pid, Signal::SIGKILL);
            tree::kill_tree(shared.query(), &[pid], Instant::now() + KILL_DEADLINE);
            return Err(SessionError::Io(e));
        }
        Ok(session)
    }
}

/// Makes the terminal's descriptor (and every duplicate of it) non-blocking.
fn set_nonblocking(fd: RawFd) -> Result<(), SessionError> {
    // SAFETY: fcntl on a descriptor we own; F_GETFL/F_SETFL only read and set its flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: fcntl on a descriptor we own, setting only its flags.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(SessionError::Io(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// A new PTY of `rows` × `cols`.
fn open_pty(rows: u16, cols: u16) -> Result<PtyPair, SessionError> {
    native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(pty_err)
}

/// The child's command: `spec`'s program, arguments and directory, in exactly `spec`'s
/// environment plus the session's `marker` (see [`MARKER_VAR`]).
fn child_command(spec: &SpawnSpec, marker: &str) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(&spec.program);
    cmd.args(&spec.args);
    cmd.env_clear();
    for (k, v) in &spec.env {
        if k != MARKER_VAR {
            cmd.env(k, v);
        }
    }
    cmd.env(MARKER_VAR, marker);
    cmd.cwd(&spec.cwd);
    cmd
}

/// Forks the leader on the PTY's slave side and registers it, under the registry lock, so
/// the orphan reaper never sees an unregistered leader. Its pid.
fn fork_leader(
    slave: &dyn SlavePty,
    cmd: CommandBuilder,
    program: &str,
) -> Result<i32, SessionError> {
    let mut leaders = reaper::lock_leaders();
    let child = slave.spawn_command(cmd).map_err(|e| SessionError::Spawn {
        program: program.to_string(),
        reason: format!("{e:#}"),
    })?;
    let Some(pid) = child.process_id().and_then(|p| i32::try_from(p).ok()) else {
        return Err(SessionError::Spawn {
            program: program.to_string(),
            reason: "no process id".into(),
        });
    };
    leaders.register(pid);
    // We wait for it ourselves (waitid), not through portable-pty's handle.
    drop(child);
    Ok(pid)
}

/// Starts the session's three threads: the waiter, the processing thread and the reader
/// (the last two as bulk work, see `orchestra_sys::niceness`).
fn start_threads(shared: &Arc<Shared>, reader: Box<dyn Read + Send>) -> std::io::Result<()> {
    let pid = shared.pid;
    let s = shared.clone();
    std::thread::Builder::new()
        .name(format!("pty-wait-{pid}"))
        .stack_size(STACK_SIZE)
        .spawn(move || wait_loop(s))?;
    let s = shared.clone();
    std::thread::Builder::new()
        .name(format!("pty-proc-{pid}"))
        .stack_size(STACK_SIZE)
        .spawn(move || {
            orchestra_sys::niceness::mark_current_thread_as_bulk_work();
            process_loop(s)
        })?;
    let s = shared.clone();
    std::thread::Builder::new()
        .name(format!("pty-read-{pid}"))
        .stack_size(STACK_SIZE)
        .spawn(move || {
            orchestra_sys::niceness::mark_current_thread_as_bulk_work();
            read_loop(reader, s)
        })?;
    Ok(())
}
