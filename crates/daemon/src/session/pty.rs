//! One child in its own PTY: spawn, reader/processing/waiter threads, input, resize,
//! signals, termination and reaping.

use super::activity::{Activity, ActivityTracker};
use super::fd_wait::{self, wait_ready, wait_ready_until};
use super::lines::LineSplitter;
use super::memory::{TRIM_AFTER_BYTES, give_back_freed_memory};
use super::reaper;
use super::screen::{ScreenSnapshot, Terminal};
use super::transcript::Transcript;
use super::tree::{self, MARKER_VAR, TreeQuery};
use super::visible::Visible;
use super::{ExitInfo, SessionError, SessionEvent, SpawnSpec};
use nix::sys::signal::Signal;
use orchestra_proto::keys::{encode_keys, encode_text};
use parking_lot::{Condvar, Mutex};
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The pause between typed text and its submit key (callers run sends off the async workers).
const SUBMIT_PAUSE: Duration = Duration::from_millis(80);
/// How long a submit waits for the program to show the typed text (not every program echoes).
const ECHO_WAIT: Duration = Duration::from_millis(500);

/// Bytes read but not yet processed, at most: past this the reader stops reading, the PTY
/// buffer fills, and the child blocks in write(2).
const INBOX_CAP: usize = 1024 * 1024;
/// Largest read.
const CHUNK_SIZE: usize = 64 * 1024;
/// The most output parsed under one hold of the parser lock, which is then handed over
/// fairly: a reader of the screen (a stream, a snapshot, a key's mode) waits for one small
/// slice at most, not for a flood's backlog behind a parser preempted while holding it.
const PARSE_SLICE: usize = 8 * 1024;
/// A read at most this large is parsed by the reader itself when the processing thread is
/// idle: a program that writes a little now and then (a spinner, a prompt, an echo) wakes
/// one thread per write, not two. Larger reads (a flood) go to the processing thread, so
/// reading and parsing go on side by side.
const INLINE_MAX: usize = 4 * 1024;
/// ... and when the read waited at least this long for it (the program writes now and then).
const INLINE_AFTER_WAIT: Duration = Duration::from_millis(1);
/// While output waits to be parsed, how often the reader looks again whether it went quiet
/// (parsing it moves the deadline).
const QUIET_RECHECK: Duration = Duration::from_millis(20);
/// After the leader is reaped, how long to wait for the reader's EOF before finishing anyway.
const EXIT_DRAIN: Duration = Duration::from_millis(1000);
/// Grace for leftovers of a leader that exited by itself (SIGTERM, then SIGKILL).
const LEFTOVER_GRACE: Duration = Duration::from_millis(1000);
/// How long SIGKILL rounds go on before giving up on unkillable processes.
const KILL_DEADLINE: Duration = Duration::from_secs(5);
/// Thread stacks: these threads do little; their pages are only touched when used.
const STACK_SIZE: usize = 256 * 1024;

/// What the reader and the waiter hand to the processing thread: a bounded byte queue
/// (coalescing: whatever arrived while the parser was busy is taken in one go) and flags.
#[derive(Default)]
struct Inbox {
    data: Vec<u8>,
    /// The output lines the reader split from `data` (and from bytes already taken): they
    /// go out with the screen change of the same bytes, so the engine is woken once per
    /// write of the program, not once for its lines and again for its screen.
    lines: Vec<String>,
    /// The reader saw EOF/EIO.
    eof: bool,
    /// The leader was reaped (set by the waiter).
    exit: bool,
    /// The processing thread is done; the reader stops.
    closed: bool,
    /// A batch is being parsed (by the processing thread, or inline by the reader): the
    /// other waits, so output is parsed in the order it was read.
    parsing: bool,
}

/// What parsing output keeps between batches, whichever thread parses.
struct Parsed {
    activity: ActivityTracker,
    /// Output processed since memory was last given back (see `memory.rs`).
    since_trim: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sweeper {
    None,
    Waiter,
    Terminate,
}

struct State {
    /// What the output is doing (kept by the processing thread; read by `activity`).
    activity: Activity,
    /// Stopped by `pause` and not continued since.
    paused: bool,
    /// Set when the leader exited (it may still be an unreaped zombie).
    exit: Option<ExitInfo>,
    reaped: bool,
    /// The Exited event was delivered; all output was processed.
    finished: bool,
    /// Who ends the leftovers of the tree; the leader is reaped only after `tree_clean`.
    sweeper: Sweeper,
    tree_clean: bool,
}

/// The screen's modes that typing is encoded by, copied out under the parser's lock after
/// each slice it parses: a key sent while a flood is parsed reads them without waiting for
/// that lock (held by a bulk-priority thread, which may be preempted holding it).
#[derive(Default)]
struct TypingModes {
    application_cursor: AtomicBool,
    bracketed_paste: AtomicBool,
}

impl TypingModes {
    fn follow(&self, screen: &vt100::Screen) {
        self.application_cursor
            .store(screen.application_cursor(), Ordering::Relaxed);
        self.bracketed_paste
            .store(screen.bracketed_paste(), Ordering::Relaxed);
    }
}

struct Shared {
    pid: i32,
    marker: String,
    /// The master's descriptor, non-blocking (shared by `writer`, the reader and `master`):
    /// a key is written from an async worker when the terminal has room, which it nearly
    /// always has, instead of on another thread that must first get a turn on a CPU.
    fd: RawFd,
    term: Mutex<Terminal>,
    typing_modes: TypingModes,
    /// The visible screen for the streams, copied between parse slices while watched.
    visible: Visible,
    writer: Mutex<Box<dyn Write + Send>>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    state: Mutex<State>,
    cond: Condvar,
    on_event: Box<dyn Fn(SessionEvent) + Send + Sync>,
    inbox: Mutex<Inbox>,
    /// Signalled when the inbox has something for the processing thread.
    inbox_ready: Condvar,
    /// Signalled when the processing thread took the inbox's bytes.
    inbox_space: Condvar,
    /// Signalled when the reader finished parsing a batch inline.
    inline_done: Condvar,
    /// Taken before `term` and `state` (never while holding them), never with `inbox`.
    parsed: Mutex<Parsed>,
    /// Held while output lines are delivered; `true` once `Exited` is being delivered, so no
    /// line can follow it.
    output_gate: Mutex<bool>,
    /// The raw transcript, written by the reader; `None` once the reader has ended (dropping
    /// it flushed it) or when the session keeps none.
    transcript: Mutex<Option<Transcript>>,
    /// Bumped after each change to the terminal (a batch parsed, a resize, the end), so
    /// watchers wake on a change instead of polling; nothing queues however many bumps.
    screen_generation: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    fn emit(&self, event: SessionEvent) {
        (self.on_event)(event);
    }

    fn query(&self) -> TreeQuery<'_> {
        TreeQuery {
            leader: self.pid,
            marker: &self.marker,
        }
    }

    fn screen_changed(&self) {
        self.screen_generation
            .send_modify(|g| *g = g.wrapping_add(1));
    }
}

/// A running (or ended) session. `Send + Sync`; share it behind the `Arc` `spawn` returns.
/// Dropping the last handle of a session that is still running terminates it (1 s grace).
pub struct PtySession {
    shared: Arc<Shared>,
    terminate_lock: Mutex<()>,
}

impl std::fmt::Debug for PtySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtySession")
            .field("pid", &self.shared.pid)
            .field("activity", &self.activity())
            .finish()
    }
}

fn pty_err(e: impl std::fmt::Display) -> SessionError {
    SessionError::Pty(e.to_string())
}

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
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(pty_err)?;
        let mut cmd = CommandBuilder::new(&spec.program);
        cmd.args(&spec.args);
        cmd.env_clear();
        for (k, v) in &spec.env {
            if k != MARKER_VAR {
                cmd.env(k, v);
            }
        }
        cmd.env(MARKER_VAR, &marker);
        cmd.cwd(&spec.cwd);
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

        // Fork and register the leader under the registry lock, so the orphan reaper never
        // sees an unregistered leader.
        let pid = {
            let mut leaders = reaper::lock_leaders();
            let child = pair
                .slave
                .spawn_command(cmd)
                .map_err(|e| SessionError::Spawn {
                    program: spec.program.clone(),
                    reason: format!("{e:#}"),
                })?;
            let Some(pid) = child.process_id().and_then(|p| i32::try_from(p).ok()) else {
                return Err(SessionError::Spawn {
                    program: spec.program.clone(),
                    reason: "no process id".into(),
                });
            };
            leaders.register(pid);
            // We wait for it ourselves (waitid), not through portable-pty's handle.
            drop(child);
            pid
        };
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

        let started = (|| -> std::io::Result<()> {
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
        })();
        if let Err(e) = started {
            // Without its threads the session cannot run: end the child now.
            tree::signal_group(pid, Signal::SIGKILL);
            tree::kill_tree(shared.query(), &[pid], Instant::now() + KILL_DEADLINE);
            return Err(SessionError::Io(e));
        }
        Ok(session)
    }

    /// The leader's pid (also its process group and session id).
    pub fn pid(&self) -> u32 {
        self.shared.pid as u32
    }

    /// The marker in the child's environment (`ORCHESTRA_SESSION_MARKER`).
    pub fn marker(&self) -> &str {
        &self.shared.marker
    }

    fn ensure_running(&self) -> Result<(), SessionError> {
        if self.shared.state.lock().exit.is_some() {
            Err(SessionError::Ended)
        } else {
            Ok(())
        }
    }

    /// Writes raw bytes to the terminal, waiting for room when the program does not read
    /// its input (a blocking call). `Err(Ended)` once the leader exited.
    pub fn write(&self, bytes: &[u8]) -> Result<(), SessionError> {
        self.ensure_running()?;
        let mut w = self.shared.writer.lock();
        write_all_waiting(&mut **w, self.shared.fd, bytes)?;
        Ok(())
    }

    /// Writes as much of `bytes` as the terminal takes without waiting, and says how much
    /// that was: all of a key or a line but when the program has stopped reading its input,
    /// or when another write is waiting for room (0, so that one goes first). Never blocks;
    /// the caller writes the rest with [`write`](Self::write) off the async workers.
    pub fn try_write(&self, bytes: &[u8]) -> Result<usize, SessionError> {
        self.ensure_running()?;
        let Some(mut w) = self.shared.writer.try_lock() else {
            return Ok(0);
        };
        Ok(write_without_waiting(&mut **w, bytes)?)
    }

    /// Sends named keys (see [`super::encode_key`]), honouring application-cursor mode.
    /// Nothing is sent if any name is unknown.
    pub fn send_keys<S: AsRef<str>>(&self, keys: &[S]) -> Result<(), SessionError> {
        let app_cursor = self
            .shared
            .typing_modes
            .application_cursor
            .load(Ordering::Relaxed);
        let bytes = encode_keys(keys, app_cursor)?;
        self.write(&bytes)
    }

    /// Types `text` and then sends `submit` (usually `b"\r"`; empty: do not submit).
    /// Multi-line text goes as a bracketed paste when the program enabled it.
    pub fn send_text(&self, text: &str, submit: &[u8]) -> Result<(), SessionError> {
        let bracketed = self
            .shared
            .typing_modes
            .bracketed_paste
            .load(Ordering::Relaxed);
        let bytes = encode_text(text, bracketed);
        if !bytes.is_empty() {
            let before = (!submit.is_empty()).then(|| self.with_screen(|s| s.contents()));
            self.write(&bytes)?;
            if let Some(before) = before {
                // An Enter right behind typed text reads as part of a paste to some CLIs
                // (Gemini CLI makes one within 30 ms of the previous key a newline): the
                // text would sit in its input box, never submitted. So the submit waits
                // until the program has read the text (its screen shows the change), then
                // a pause more; a busy program reads both at once otherwise.
                let deadline = Instant::now() + ECHO_WAIT;
                while Instant::now() < deadline && self.with_screen(|s| s.contents()) == before {
                    std::thread::sleep(Duration::from_millis(10));
                }
                std::thread::sleep(SUBMIT_PAUSE);
            }
        }
        if !submit.is_empty() {
            self.write(submit)?;
        }
        Ok(())
    }

    /// Resizes the parser and the PTY together (the child gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), SessionError> {
        let (rows, cols) = (rows.max(1), cols.max(1));
        let mut term = self.shared.term.lock();
        term.resize(rows, cols);
        self.shared.visible.publish(term.screen(), true);
        let result = self.shared.master.lock().resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        });
        drop(term);
        self.shared.screen_changed();
        match result {
            Ok(()) => Ok(()),
            Err(_) if self.ensure_running().is_err() => Ok(()),
            Err(e) => Err(pty_err(e)),
        }
    }

    /// Stops the whole tree (SIGSTOP to the group and every other process of the session).
    pub fn pause(&self) -> Result<(), SessionError> {
        let mut st = self.shared.state.lock();
        if st.exit.is_some() {
            return Err(SessionError::Ended);
        }
        tree::signal_group(self.shared.pid, Signal::SIGSTOP);
        for pid in tree::session_tree(self.shared.query()) {
            tree::signal_pid(pid, Signal::SIGSTOP);
        }
        st.paused = true;
        Ok(())
    }

    /// Continues the whole tree (SIGCONT).
    pub fn resume(&self) -> Result<(), SessionError> {
        let mut st = self.shared.state.lock();
        if st.exit.is_some() {
            return Err(SessionError::Ended);
        }
        for pid in tree::session_tree(self.shared.query()) {
            tree::signal_pid(pid, Signal::SIGCONT);
        }
        tree::signal_group(self.shared.pid, Signal::SIGCONT);
        st.paused = false;
        Ok(())
    }

    /// Whether `pause` stopped the tree and no `resume` continued it since.
    pub fn is_paused(&self) -> bool {
        self.shared.state.lock().paused
    }

    /// What the output is doing (the last [`SessionEvent::Activity`] reported).
    pub fn activity(&self) -> Activity {
        self.shared.state.lock().activity
    }

    /// Writes what the transcript buffered to its file now, so a read of the file has every
    /// byte read so far (buffered bytes otherwise wait up to `transcript::FLUSH_EVERY`).
    pub fn flush_transcript(&self) {
        if let Some(t) = self.shared.transcript.lock().as_mut() {
            t.flush();
        }
    }

    /// Who has the terminal's keyboard: a process waiting for a typed line, a command the
    /// leader runs in the foreground, … (see [`line_input`](super::line_input)); `None` once
    /// the session ended.
    pub fn foreground(&self) -> Option<super::Foreground> {
        self.ensure_running().ok()?;
        super::line_input::foreground(self.shared.fd, self.shared.pid)
    }

    /// How the leader ended, once it did.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.shared.state.lock().exit.clone()
    }

    /// Whether the session is over: leader reaped, output processed, `Exited` delivered.
    pub fn is_finished(&self) -> bool {
        self.shared.state.lock().finished
    }

    /// Waits until the session is over (the `Exited` event was delivered, so every output
    /// event came before), at most `timeout`.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock();
        while !st.finished {
            if self.shared.cond.wait_until(&mut st, deadline).timed_out() {
                break;
            }
        }
        if st.finished { st.exit.clone() } else { None }
    }

    /// Copy of the screen, plus up to `scrollback_lines` lines above it; with `ansi`, also
    /// the screen with its formatting.
    pub fn snapshot(&self, scrollback_lines: usize, ansi: bool) -> ScreenSnapshot {
        self.shared.term.lock().snapshot(scrollback_lines, ansi)
    }

    /// A receiver that wakes after every change to the terminal: output parsed, a resize,
    /// and last the session's end (once [`is_finished`](Self::is_finished) holds). It carries
    /// only a counter: a watcher that falls behind sees the newest state, never a queue.
    pub fn watch_screen(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.screen_generation.subscribe()
    }

    /// Forgets the scrollback, keeping the screen as it shows (see
    /// [`Terminal::release_scrollback`]), and gives the memory back: for a session that has
    /// ended once its last reply was read.
    pub fn release_scrollback(&self) {
        self.shared.term.lock().release_scrollback();
        self.shared.visible.release_mirror();
        give_back_freed_memory();
    }

    /// Starts keeping a copy of the visible screen for a watcher (a live stream), which
    /// [`VisibleScreen::current`] returns without waiting for the parser. The first copy is
    /// made now, under the terminal's lock, which may wait for a parse slice: call this off
    /// the async workers. Copies stop when the last watcher's handle is dropped.
    pub fn watch_visible(&self) -> VisibleScreen {
        self.shared.visible.watch();
        publish_now(&self.shared);
        VisibleScreen {
            shared: self.shared.clone(),
        }
    }

    /// Runs `f` on the current screen (for drawing). Output processing waits meanwhile.
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        f(self.shared.term.lock().screen())
    }

    /// Ends the session and everything it started; blocking, idempotent.
    ///
    /// SIGHUP + SIGTERM (+ SIGCONT, in case it is paused) to the group and every other
    /// process of the tree; waits up to `grace` for the leader to exit; then SIGKILLs the
    /// group and whatever remains of the tree (processes that left the group included);
    /// reaps; waits for the remaining output to be processed. Returns how the leader ended.
    pub fn terminate(&self, grace: Duration) -> ExitInfo {
        let _one_at_a_time = self.terminate_lock.lock();
        let sh = &self.shared;
        let mine = {
            let mut st = sh.state.lock();
            if st.finished {
                return st.exit.clone().unwrap_or_default();
            }
            if st.sweeper == Sweeper::None {
                st.sweeper = Sweeper::Terminate;
                true
            } else {
                false
            }
        };
        if mine {
            // Until we set tree_clean, the leader is not reaped: its pid (and so the group
            // and session ids we signal and scan for) cannot be reused.
            let first = tree::session_tree(sh.query());
            for sig in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGCONT] {
                tree::signal_group(sh.pid, sig);
                for &pid in &first {
                    tree::signal_pid(pid, sig);
                }
            }
            let deadline = Instant::now() + grace;
            {
                let mut st = sh.state.lock();
                while st.exit.is_none() {
                    if sh.cond.wait_until(&mut st, deadline).timed_out() {
                        break;
                    }
                }
            }
            tree::kill_tree(sh.query(), &first, Instant::now() + KILL_DEADLINE);
            let mut st = sh.state.lock();
            st.tree_clean = true;
            sh.cond.notify_all();
        }
        // The waiter reaps, the processing thread delivers the rest and the exit.
        let deadline = Instant::now() + KILL_DEADLINE + EXIT_DRAIN + Duration::from_secs(1);
        let mut st = sh.state.lock();
        while !st.finished {
            if sh.cond.wait_until(&mut st, deadline).timed_out() {
                tracing::warn!(pid = sh.pid, "session did not finish after termination");
                break;
            }
        }
        st.exit.clone().unwrap_or_default()
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if !self.shared.state.lock().finished {
            self.terminate(Duration::from_secs(1));
        }
    }
}

/// Blocking reads from the master; ends on EOF/EIO (every slave holder is gone) or when the
/// processing thread is done. Each read goes to the transcript and the line splitter here
/// (so their cost overlaps with parsing), then into the inbox for the parser; blocks while
/// the inbox is full.
fn read_loop(mut reader: Box<dyn Read + Send>, sh: Arc<Shared>) {
    let mut buf = vec![0u8; CHUNK_SIZE];
    let mut splitter = LineSplitter::default();
    let mut lines: Vec<String> = Vec::new();
    let mut drained = false;
    loop {
        let asked = Instant::now();
        let n = match read_waiting(&mut *reader, &sh, &mut buf, drained, &mut splitter) {
            Ok(0) => break,
            Ok(n) => n,
            Err(_) => break, // EIO: the slave side is closed
        };
        // A read that did not fill the buffer most likely took all there was.
        drained = n < buf.len();
        if let Some(t) = sh.transcript.lock().as_mut() {
            t.write(&buf[..n]);
            t.flush_if_due(Instant::now());
        }
        splitter.feed(&buf[..n], &mut lines);
        let mut inbox = sh.inbox.lock();
        while inbox.data.len() >= INBOX_CAP && !inbox.closed {
            sh.inbox_space.wait(&mut inbox);
        }
        if inbox.closed {
            return;
        }
        // Only after waiting for it: back-to-back reads are a flood, even in small pieces.
        let sporadic = n <= INLINE_MAX && asked.elapsed() >= INLINE_AFTER_WAIT;
        if sporadic && inbox.data.is_empty() && inbox.lines.is_empty() && !inbox.parsing {
            inbox.parsing = true;
            drop(inbox);
            take_output(&sh, std::mem::take(&mut lines), &buf[..n]);
            sh.inbox.lock().parsing = false;
            sh.inline_done.notify_all();
            continue;
        }
        inbox.data.extend_from_slice(&buf[..n]);
        inbox.lines.append(&mut lines);
        drop(inbox);
        sh.inbox_ready.notify_one();
    }
    // Dropping it flushes it (outside the lock): everything the program wrote is in the
    // file before it ends.
    let transcript = sh.transcript.lock().take();
    drop(transcript);
    let mut inbox = sh.inbox.lock();
    inbox.lines.extend(splitter.finish());
    inbox.eof = true;
    drop(inbox);
    sh.inbox_ready.notify_one();
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

/// A read from the non-blocking terminal that waits for output like a blocking one; when
/// the last read `drained` the terminal, it waits first rather than try a read that would
/// only say there is nothing yet (a program that writes now and then: one call fewer each).
fn read_waiting(
    reader: &mut dyn Read,
    sh: &Shared,
    buf: &mut [u8],
    drained: bool,
    splitter: &mut LineSplitter,
) -> std::io::Result<usize> {
    if drained {
        wait_for_output(sh, splitter);
    }
    fd_wait::read_waiting(reader, buf, || wait_for_output(sh, splitter))
}

/// Waits for the program's next output, telling meanwhile when its output went quiet and
/// flushing the transcript when it falls due: the reader is the thread that wakes when
/// output comes, so it keeps those deadlines too, and no other thread wakes up for them
/// while a program keeps writing now and then. Rows the program rewrote in place are
/// output when it has gone quiet, before the quiet is told.
fn wait_for_output(sh: &Shared, splitter: &mut LineSplitter) {
    loop {
        let (quiet, parsed_all) = {
            let inbox = sh.inbox.lock();
            if inbox.data.is_empty() && !inbox.parsing {
                drop(inbox);
                (sh.parsed.lock().activity.deadline(), true)
            } else {
                // Output is still being parsed, which moves the deadline: look again soon.
                (Some(Instant::now() + QUIET_RECHECK), false)
            }
        };
        let flush = sh
            .transcript
            .lock()
            .as_ref()
            .and_then(Transcript::flush_due);
        let deadline = [quiet, flush].into_iter().flatten().min();
        if wait_ready_until(sh.fd, libc::POLLIN, deadline) {
            return;
        }
        if let Some(t) = sh.transcript.lock().as_mut() {
            t.flush_if_due(Instant::now());
        }
        // Nothing is being parsed, so every line before these has been handed out.
        if parsed_all && quiet.is_some_and(|q| q <= Instant::now()) {
            let held = splitter.take_held();
            if !held.is_empty() {
                take_output(sh, held, &[]);
            }
        }
        settle_if_quiet(sh);
    }
}

/// Writes as much of `bytes` to the non-blocking terminal as it takes now; how much.
fn write_without_waiting(writer: &mut dyn Write, bytes: &[u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        match writer.write(&bytes[done..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// `write_all` to the non-blocking terminal, waiting for room like a blocking write.
fn write_all_waiting(writer: &mut dyn Write, fd: RawFd, bytes: &[u8]) -> std::io::Result<()> {
    let mut done = write_without_waiting(writer, bytes)?;
    while done < bytes.len() {
        wait_ready(fd, libc::POLLOUT);
        done += write_without_waiting(writer, &bytes[done..])?;
    }
    Ok(())
}

/// Waits for the leader without reaping it (WNOWAIT), so its pid stays reserved while the
/// leftovers of its tree are found and ended; then reaps it.
fn wait_loop(sh: Arc<Shared>) {
    let info = wait_exit_nowait(sh.pid);
    let sweep = {
        let mut st = sh.state.lock();
        st.exit = Some(info);
        sh.cond.notify_all();
        if st.sweeper == Sweeper::None {
            st.sweeper = Sweeper::Waiter;
            true
        } else {
            false
        }
    };
    if sweep {
        // The leader ended by itself: end what it left behind.
        let left = tree::session_tree(sh.query());
        if !left.is_empty() {
            for &pid in &left {
                tree::signal_pid(pid, Signal::SIGTERM);
                tree::signal_pid(pid, Signal::SIGCONT);
            }
            tree::wait_gone(&left, Instant::now() + LEFTOVER_GRACE);
            tree::kill_tree(sh.query(), &left, Instant::now() + KILL_DEADLINE);
        }
        let mut st = sh.state.lock();
        st.tree_clean = true;
    } else {
        // terminate() is ending the tree; wait for it (bounded, in case it is stuck).
        let deadline = Instant::now() + KILL_DEADLINE + Duration::from_secs(30);
        let mut st = sh.state.lock();
        while !st.tree_clean {
            if sh.cond.wait_until(&mut st, deadline).timed_out() {
                break;
            }
        }
    }
    {
        let mut st = sh.state.lock();
        let mut status = 0;
        // SAFETY: reaping our own child, which is already a zombie.
        unsafe {
            while libc::waitpid(sh.pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
        st.reaped = true;
        sh.cond.notify_all();
    }
    reaper::unregister_leader(sh.pid);
    reaper::reap_orphans();
    sh.inbox.lock().exit = true;
    sh.inbox_ready.notify_one();
}

/// `waitid(P_PID, pid, WEXITED | WNOWAIT)`: how it ended, leaving it a zombie.
fn wait_exit_nowait(pid: i32) -> ExitInfo {
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live siginfo_t for waitid to fill.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            // SAFETY: filled by a successful waitid for a child.
            let status = unsafe { info.si_status() };
            return match info.si_code {
                libc::CLD_EXITED => ExitInfo {
                    code: Some(status),
                    signal: None,
                },
                libc::CLD_KILLED | libc::CLD_DUMPED => ExitInfo {
                    code: None,
                    signal: Some(signal_name(status)),
                },
                _ => continue,
            };
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        tracing::warn!(pid, error = %err, "waitid on a session leader failed");
        return ExitInfo::default();
    }
}

fn signal_name(signo: i32) -> String {
    Signal::try_from(signo)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("SIG{signo}"))
}

/// Hands on the output lines split from `bytes` (unless the exit is already being
/// delivered: no line follows it), then parses `bytes` and reports what they changed; the
/// lines are always followed by a screen change (see `SessionEvent::Output`), even the last
/// partial line at EOF, which comes without bytes. Whichever thread parses (see
/// `INLINE_MAX`).
fn take_output(sh: &Shared, lines: Vec<String>, bytes: &[u8]) {
    let had_lines = !lines.is_empty();
    if had_lines {
        let gate = sh.output_gate.lock();
        if !*gate {
            sh.emit(SessionEvent::Output(lines));
        }
    }
    if bytes.is_empty() {
        if had_lines {
            sh.emit(SessionEvent::Screen);
        }
        return;
    }
    let mut slices = bytes.chunks(PARSE_SLICE).peekable();
    while let Some(slice) = slices.next() {
        let last = slices.peek().is_none();
        let mut term = sh.term.lock();
        let replies = term.process(slice);
        sh.typing_modes.follow(term.screen());
        // The last slice's copy is always made: watchers see where the output stopped.
        let published = sh.visible.publish(term.screen(), last);
        parking_lot::MutexGuard::unlock_fair(term);
        if published && !last {
            sh.screen_changed();
        }
        if !replies.is_empty() {
            let mut w = sh.writer.lock();
            let _ = write_all_waiting(&mut **w, sh.fd, &replies);
        }
    }
    sh.screen_changed();
    sh.emit(SessionEvent::Screen);
    // Reported under the lock: another thread may be deciding the output went quiet
    // meanwhile, and the two changes must be reported in the order they were made.
    let mut parsed = sh.parsed.lock();
    parsed.since_trim += bytes.len();
    let changed = parsed
        .activity
        .on_output(Instant::now(), || sh.term.lock().fingerprint());
    report_activity(sh, changed);
}

/// The processing thread: parser (of what the reader does not parse itself), replies,
/// activity, events.
fn process_loop(sh: Arc<Shared>) {
    let mut exit_at: Option<Instant> = None;
    let mut eof = false;
    let mut batch: Vec<u8> = Vec::new();
    loop {
        // The reader keeps the quiet deadline while it waits for output; once it has ended,
        // this thread does. Otherwise it blocks without a timer.
        let deadline = match exit_at {
            Some(at) => Some(at + EXIT_DRAIN),
            None if eof => sh.parsed.lock().activity.deadline(),
            None => None,
        };
        let mut timed_out = false;
        let (new_eof, new_exit, lines) = {
            let mut inbox = sh.inbox.lock();
            while inbox.data.is_empty()
                && inbox.lines.is_empty()
                && inbox.eof == eof
                && inbox.exit == exit_at.is_some()
            {
                match deadline {
                    Some(d) => {
                        if sh.inbox_ready.wait_until(&mut inbox, d).timed_out() {
                            timed_out = true;
                            break;
                        }
                    }
                    None => sh.inbox_ready.wait(&mut inbox),
                }
            }
            batch.clear();
            std::mem::swap(&mut inbox.data, &mut batch);
            // Whatever the reader put here came after what it parsed inline, which is done
            // (it only queues bytes while no batch is being parsed inline).
            if !batch.is_empty() {
                inbox.parsing = true;
            }
            (inbox.eof, inbox.exit, std::mem::take(&mut inbox.lines))
        };
        sh.inbox_space.notify_one();
        take_output(&sh, lines, &batch);
        if !batch.is_empty() {
            sh.inbox.lock().parsing = false;
            // Keep big buffers only while a flood lasts (idle sessions stay small).
            if batch.capacity() > 256 * 1024 {
                batch = Vec::new();
            }
        }
        eof = new_eof;
        if new_exit && exit_at.is_none() {
            exit_at = Some(Instant::now());
        }
        if exit_at.is_some() && (eof || (timed_out && batch.is_empty())) {
            // Not while the reader parses inline: nothing may follow the exit.
            let mut inbox = sh.inbox.lock();
            while inbox.parsing {
                sh.inline_done.wait(&mut inbox);
            }
            inbox.closed = true;
            break;
        }
        if timed_out && batch.is_empty() {
            settle_if_quiet(&sh);
        }
    }
    {
        let mut inbox = sh.inbox.lock();
        inbox.closed = true;
        inbox.data = Vec::new();
    }
    sh.inbox_space.notify_all();
    // Finish: the last partial line before EOF was delivered above; close the gate so no
    // line can come after the exit, then the exit.
    *sh.output_gate.lock() = true;
    let info = sh.state.lock().exit.clone().unwrap_or_default();
    sh.emit(SessionEvent::Exited(info));
    let mut st = sh.state.lock();
    st.finished = true;
    sh.cond.notify_all();
    drop(st);
    sh.screen_changed();
    if sh.parsed.lock().since_trim >= TRIM_AFTER_BYTES {
        give_back_freed_memory();
    }
}

/// Tells that the output went quiet once its deadline has passed with nothing read since
/// and nothing left to parse; after a flood, gives back what it freed.
fn settle_if_quiet(sh: &Shared) {
    {
        let inbox = sh.inbox.lock();
        if !inbox.data.is_empty() || inbox.parsing {
            return;
        }
    }
    let trim = {
        let mut parsed = sh.parsed.lock();
        // Output parsed since this deadline was taken moved it.
        if parsed
            .activity
            .deadline()
            .is_none_or(|d| d > Instant::now())
        {
            return;
        }
        let changed = parsed.activity.on_deadline(sh.term.lock().fingerprint());
        report_activity(sh, changed);
        let trim = changed.is_some_and(Activity::is_quiet) && parsed.since_trim >= TRIM_AFTER_BYTES;
        if trim {
            parsed.since_trim = 0;
        }
        trim
    };
    if trim {
        {
            let mut inbox = sh.inbox.lock();
            if inbox.data.is_empty() {
                inbox.data = Vec::new();
            }
        }
        give_back_freed_memory();
    }
}

/// Publishes the visible screen now, under the terminal's lock (which may wait for a slice).
fn publish_now(sh: &Shared) {
    let term = sh.term.lock();
    sh.visible.publish(term.screen(), true);
}

/// A watcher's handle on the copy of the visible screen (see [`PtySession::watch_visible`]).
pub struct VisibleScreen {
    shared: Arc<Shared>,
}

impl VisibleScreen {
    /// The newest copy: as of the last parse slice, at most a few milliseconds behind the
    /// terminal while output keeps coming, and the same as the terminal once it stops.
    pub fn current(&self) -> Arc<vt100::Screen> {
        let sh = &self.shared;
        if let Some(copy) = sh.visible.latest() {
            return copy;
        }
        // Only when the last other watcher let go between this one's start and now.
        publish_now(sh);
        sh.visible
            .latest()
            .unwrap_or_else(|| Arc::new(vt100::Parser::new(1, 1, 0).screen().clone()))
    }
}

impl Drop for VisibleScreen {
    fn drop(&mut self) {
        self.shared.visible.unwatch();
    }
}

/// Records a change of the output's activity and reports it.
fn report_activity(sh: &Shared, changed: Option<Activity>) {
    if let Some(a) = changed {
        sh.state.lock().activity = a;
        sh.emit(SessionEvent::Activity(a));
    }
}
