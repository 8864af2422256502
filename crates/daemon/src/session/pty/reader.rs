//! The reader thread: blocking reads from the PTY's master into the transcript, the line
//! splitter and the bounded inbox (a full inbox stops the reading, and so the child); small
//! sporadic reads it parses itself. While it waits for output it keeps the quiet deadline
//! and the transcript's flush.

use super::processing::{settle_if_quiet, take_output};
use super::shared::Shared;
use crate::session::fd_wait::{self, wait_ready_until};
use crate::session::lines::LineSplitter;
use crate::session::transcript::Transcript;
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes read but not yet processed, at most: past this the reader stops reading, the PTY
/// buffer fills, and the child blocks in write(2).
const INBOX_CAP: usize = 1024 * 1024;
/// Largest read.
const CHUNK_SIZE: usize = 64 * 1024;

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

/// Blocking reads from the master; ends on EOF/EIO (every slave holder is gone) or when the
/// processing thread is done. Each read goes to the transcript and the line splitter here
/// (so their cost overlaps with parsing), then into the inbox for the parser; blocks while
/// the inbox is full.
pub(super) fn read_loop(mut reader: Box<dyn Read + Send>, sh: Arc<Shared>) {
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
