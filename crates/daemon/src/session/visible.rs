//! The visible screen as the live streams see it: a copy without scrollback, published by
//! whichever thread parses, between its parse slices, while anyone watches.
//!
//! A stream used to diff the session's screen itself, under the terminal's lock. The parser
//! holds that lock while it parses a slice and runs as bulk work (`orchestra_sys::niceness`) in a
//! process that many flooding sessions keep busy; preempted while holding it, it kept the
//! streams waiting 25–75 ms, and a grid of sixteen flooding agents drew about 52 frames a
//! second against a cap of 62.5 (BENCHMARKS.md, "Grid of agents"). A watcher now takes the
//! newest copy: a pointer, under a lock held for no longer than it takes to swap one.
//!
//! Nothing is copied while nobody watches: sessions that no stream shows pay one atomic load
//! per parse slice.

use super::screen_sync::ScreenSync;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// While output keeps coming, a new copy at most this often: twice a stream's frame rate,
/// so each frame finds a copy newer than the one before.
const PUBLISH_EVERY: Duration = Duration::from_millis(8);

/// One session's published copy and who watches it.
#[derive(Default)]
pub(super) struct Visible {
    watchers: AtomicUsize,
    latest: Mutex<Option<Arc<vt100::Screen>>>,
    /// The copy being kept up to date. Only taken by a thread holding the terminal's lock,
    /// so it never waits.
    mirror: Mutex<Mirror>,
}

#[derive(Default)]
struct Mirror {
    sync: ScreenSync,
    at: Option<Instant>,
}

impl Visible {
    /// Publishes a copy of `screen` (the terminal's, its lock held by the caller) if someone
    /// watches, and either `now` is asked for or the last copy is `PUBLISH_EVERY` old. `true`
    /// when it did.
    pub(super) fn publish(&self, screen: &vt100::Screen, now: bool) -> bool {
        if self.watchers.load(Ordering::Acquire) == 0 {
            return false;
        }
        let mut mirror = self.mirror.lock();
        let at = Instant::now();
        if !now && mirror.at.is_some_and(|last| at < last + PUBLISH_EVERY) {
            return false;
        }
        let copy = Arc::new(mirror.sync.follow(screen).clone());
        mirror.at = Some(at);
        drop(mirror);
        let old = self.latest.lock().replace(copy);
        // The old copy (if no watcher holds it) is freed outside the lock.
        drop(old);
        true
    }

    /// The newest copy, if one is kept.
    pub(super) fn latest(&self) -> Option<Arc<vt100::Screen>> {
        self.latest.lock().clone()
    }

    pub(super) fn watch(&self) {
        self.watchers.fetch_add(1, Ordering::AcqRel);
    }

    /// One watcher fewer; the last one gone, the copy is let go (a watcher that comes back
    /// has a fresh one made, see `PtySession::watch_visible`).
    pub(super) fn unwatch(&self) {
        if self.watchers.fetch_sub(1, Ordering::AcqRel) == 1 {
            let old = self.latest.lock().take();
            drop(old);
        }
    }

    /// Forgets the mirror, whose copy would be rebuilt whole at the next publication (for a
    /// session that has ended: its screen changes no more).
    pub(super) fn release_mirror(&self) {
        *self.mirror.lock() = Mirror::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_made_only_while_watched_and_at_most_every_interval_unless_asked() {
        let visible = Visible::default();
        let mut parser = vt100::Parser::new(4, 20, 100);
        parser.process(b"one\r\n");
        assert!(!visible.publish(parser.screen(), true));
        assert!(visible.latest().is_none());
        visible.watch();
        assert!(visible.publish(parser.screen(), true));
        let first = visible.latest().expect("published");
        assert_eq!(first.contents(), parser.screen().contents());
        // Just published: not due yet, unless asked for.
        parser.process(b"two");
        assert!(!visible.publish(parser.screen(), false));
        assert!(visible.publish(parser.screen(), true));
        assert_eq!(
            visible.latest().expect("published").contents_formatted(),
            parser.screen().contents_formatted()
        );
        // A watcher's copy is its own: later copies do not change it.
        assert_eq!(first.contents(), "one");
        visible.unwatch();
        assert!(visible.latest().is_none());
        assert!(!visible.publish(parser.screen(), true));
    }

    #[test]
    fn the_copy_has_no_scrollback_and_follows_size_and_screen_switches() {
        let visible = Visible::default();
        visible.watch();
        let mut parser = vt100::Parser::new(3, 10, 100);
        for i in 0..20 {
            parser.process(format!("line{i}\r\n").as_bytes());
        }
        parser.process(b"\x1b[?1h\x1b[1;31mred");
        assert!(visible.publish(parser.screen(), true));
        let mut copy = (*visible.latest().expect("published")).clone();
        copy.set_scrollback(usize::MAX);
        assert_eq!(copy.scrollback(), 0);
        assert!(copy.application_cursor());
        parser.screen_mut().set_size(5, 30);
        parser.process(b"\x1b[?1049h\x1b[Hin vim");
        assert!(visible.publish(parser.screen(), true));
        let copy = visible.latest().expect("published");
        assert_eq!(copy.size(), (5, 30));
        assert!(copy.alternate_screen());
        assert_eq!(
            copy.contents_formatted(),
            parser.screen().contents_formatted()
        );
    }
}
