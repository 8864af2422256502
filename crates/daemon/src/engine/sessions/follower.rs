//! Following a session: its threads hand what they report (output lines, screen changes,
//! activity, the exit) to a bounded [`Inbox`], and one task per session takes it from there
//! ([`Engine::follow`]), pacing output lines into the task ([`OutputPacer`]) so a flood does
//! not become a flood of events.

use super::SessionEntry;
use crate::engine::Engine;
use crate::engine::status::Fact;
use crate::engine::wake_pump::{Waiting, WakePump};
use crate::session::{Activity, ExitInfo, SessionEvent};
use parking_lot::Mutex;
use std::sync::Arc;

/// Output lines reach the session's task (a store write and a `task:output` event carrying
/// the whole task) at most this often while a program floods; the first lines after a quiet
/// spell go at once. Without it a flood made hundreds of such events a second, each one
/// serialised for every event-stream client and parsed by every attached TUI: that, not the
/// terminal, was most of the cost of a watched flood.
const OUTPUT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// What a session's threads handed over and the follower has not yet processed. Bounded:
/// only the newest output lines are kept (all of them are in the transcript), so a flooding
/// child cannot grow our memory while the follower writes to the store.
#[derive(Default)]
struct InboxState {
    lines: std::collections::VecDeque<String>,
    screen: bool,
    activity: Vec<Activity>,
    exit: Option<ExitInfo>,
}

pub(super) struct Inbox {
    state: Mutex<InboxState>,
    /// Woken at once for a status fact or the exit, in the pump's next round for output and
    /// screen changes (so while a program floods, its follower takes what came at most once
    /// a round), and by the pump when held output falls due.
    follower: Arc<Waiting>,
    pump: Arc<WakePump>,
}

impl Inbox {
    pub(super) fn new(pump: Arc<WakePump>) -> Inbox {
        Inbox {
            state: Mutex::default(),
            follower: Arc::default(),
            pump,
        }
    }

    fn is_empty(&self) -> bool {
        let s = self.state.lock();
        s.lines.is_empty() && !s.screen && s.activity.is_empty() && s.exit.is_none()
    }

    /// Called on the session's threads: never blocks beyond a short lock.
    pub(super) fn push(&self, ev: SessionEvent) {
        {
            let mut s = self.state.lock();
            match ev {
                SessionEvent::Output(l) => {
                    s.lines.extend(l);
                    let excess = s
                        .lines
                        .len()
                        .saturating_sub(orchestra_proto::task::OUTPUT_LINES_KEPT);
                    s.lines.drain(..excess);
                    // The screen event of the same bytes follows at once and wakes the
                    // follower for both: one wake-up per write of the program, not two.
                    return;
                }
                SessionEvent::Screen => {
                    s.screen = true;
                    drop(s);
                    self.pump.wake_soon(&self.follower);
                    return;
                }
                SessionEvent::Activity(a) => s.activity.push(a),
                SessionEvent::Exited(e) => s.exit = Some(e),
            }
        }
        self.follower.wake.notify_one();
    }
}

/// Paces a session's output lines into its task: lines gather while a program floods and go
/// at most once per [`OUTPUT_INTERVAL`]; the first after a quiet spell goes at once. What is
/// held is bounded like the inbox (only the newest lines are kept; all are in the transcript).
#[derive(Default)]
struct OutputPacer {
    held: std::collections::VecDeque<String>,
    /// Before this, lines are held (set when some went).
    next: Option<std::time::Instant>,
}

impl OutputPacer {
    fn hold(&mut self, lines: std::collections::VecDeque<String>) {
        self.held.extend(lines);
        let excess = self
            .held
            .len()
            .saturating_sub(orchestra_proto::task::OUTPUT_LINES_KEPT);
        self.held.drain(..excess);
    }

    /// When held lines are due (`None`: nothing is held).
    fn due(&self) -> Option<std::time::Instant> {
        if self.held.is_empty() {
            return None;
        }
        Some(self.next.unwrap_or_else(std::time::Instant::now))
    }

    /// The lines to deliver now, if any: held lines once their interval has passed, or at
    /// once when `urgent`.
    fn release(&mut self, now: std::time::Instant, urgent: bool) -> Option<Vec<String>> {
        if self.held.is_empty() || (!urgent && self.next.is_some_and(|n| now < n)) {
            return None;
        }
        self.next = Some(now + OUTPUT_INTERVAL);
        Some(std::mem::take(&mut self.held).into())
    }
}

impl Engine {
    /// Follows one session's events until it exits.
    pub(super) async fn follow(self, entry: Arc<SessionEntry>, inbox: Arc<Inbox>) {
        let mut output = OutputPacer::default();
        loop {
            let due = output.due();
            if let Some(at) = due {
                inbox.pump.wake_at(&inbox.follower, at);
            }
            inbox.follower.wake.notified().await;
            let held_due = due.is_some_and(|at| at <= std::time::Instant::now());
            if !held_due && inbox.is_empty() {
                // A wake-up for what an earlier take already took.
                continue;
            }
            let InboxState {
                lines,
                screen,
                activity,
                exit: exited,
            } = std::mem::take(&mut *inbox.state.lock());
            if screen {
                self.publish_screen(|| entry.info.lock().id.clone());
                self.watch_limit_wait(&entry, false);
            }
            output.hold(lines);
            // A status change or the exit comes after the output that preceded it.
            let urgent = !activity.is_empty() || exited.is_some();
            if let Some(lines) = output.release(std::time::Instant::now(), urgent) {
                self.session_output(&entry, lines).await;
            }
            for a in activity {
                self.on_session_fact(&entry, Fact::Activity(a)).await;
            }
            if let Some(exit) = exited {
                self.finish_reply(&entry).await;
                self.mark_exited(&entry, exit).await;
                // Its reply is taken: an ended session keeps its last screen, not the
                // scrollback behind it (the transcript has that).
                if let Some(pty) = entry.pty.clone() {
                    let _ = tokio::task::spawn_blocking(move || pty.release_scrollback()).await;
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::time::Instant;

    fn lines(from: usize, to: usize) -> VecDeque<String> {
        (from..to).map(|i| i.to_string()).collect()
    }

    #[test]
    fn output_goes_at_once_after_a_quiet_spell_then_at_most_once_per_interval() {
        let mut p = OutputPacer::default();
        let t0 = Instant::now();
        assert_eq!(p.due(), None);
        assert_eq!(p.release(t0, false), None, "nothing held, nothing goes");
        p.hold(lines(0, 2));
        assert_eq!(p.release(t0, false), Some(vec!["0".into(), "1".into()]));
        // More within the interval waits, and says until when.
        p.hold(lines(2, 3));
        let soon = t0 + OUTPUT_INTERVAL / 2;
        assert_eq!(p.release(soon, false), None);
        assert_eq!(p.due(), Some(t0 + OUTPUT_INTERVAL));
        p.hold(lines(3, 4));
        let later = t0 + OUTPUT_INTERVAL;
        assert_eq!(p.release(later, false), Some(vec!["2".into(), "3".into()]));
        // A status change or the exit takes what is held at once.
        p.hold(lines(4, 5));
        assert_eq!(p.release(later, true), Some(vec!["4".into()]));
        // After a quiet spell longer than the interval, at once again.
        p.hold(lines(5, 6));
        let quiet = later + OUTPUT_INTERVAL * 3;
        assert_eq!(p.release(quiet, false), Some(vec!["5".into()]));
    }

    #[test]
    fn held_output_keeps_only_the_newest_lines() {
        let mut p = OutputPacer::default();
        let t0 = Instant::now();
        p.hold(lines(0, 1));
        p.release(t0, false);
        let n = orchestra_proto::task::OUTPUT_LINES_KEPT;
        p.hold(lines(0, n));
        p.hold(lines(n, n + 10));
        let out = p.release(t0 + OUTPUT_INTERVAL, false).unwrap_or_default();
        assert_eq!(out.len(), n);
        assert_eq!(out.first().map(String::as_str), Some("10"));
        assert_eq!(
            out.last().map(|l| l.parse::<usize>().ok()),
            Some(Some(n + 9))
        );
    }
}
