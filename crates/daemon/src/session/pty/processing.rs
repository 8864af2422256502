//! The processing thread and the parsing it shares with the reader: output parsed in fair
//! slices, the terminal's replies written back, screen changes and activity reported, and,
//! once the leader is reaped and the output drained, the `Exited` event, last.

use super::input::write_all_waiting;
use super::shared::Shared;
use crate::session::SessionEvent;
use crate::session::activity::Activity;
use crate::session::memory::{TRIM_AFTER_BYTES, give_back_freed_memory};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most output parsed under one hold of the parser lock, which is then handed over
/// fairly: a reader of the screen (a stream, a snapshot, a key's mode) waits for one small
/// slice at most, not for a flood's backlog behind a parser preempted while holding it.
const PARSE_SLICE: usize = 8 * 1024;

/// After the leader is reaped, how long to wait for the reader's EOF before finishing anyway.
pub(super) const EXIT_DRAIN: Duration = Duration::from_millis(1000);

/// Hands on the output lines split from `bytes` (unless the exit is already being
/// delivered: no line follows it), then parses `bytes` and reports what they changed; the
/// lines are always followed by a screen change (see `SessionEvent::Output`), even the last
/// partial line at EOF, which comes without bytes. Whichever thread parses (see
/// `INLINE_MAX`).
pub(super) fn take_output(sh: &Shared, lines: Vec<String>, bytes: &[u8]) {
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
pub(super) fn process_loop(sh: Arc<Shared>) {
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
pub(super) fn settle_if_quiet(sh: &Shared) {
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

/// Records a change of the output's activity and reports it.
fn report_activity(sh: &Shared, changed: Option<Activity>) {
    if let Some(a) = changed {
        sh.state.lock().activity = a;
        sh.emit(SessionEvent::Activity(a));
    }
}
