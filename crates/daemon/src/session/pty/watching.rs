//! Reading the screen: a snapshot, the screen under the parser's lock for drawing, a counter
//! that wakes watchers on each change, and the copy of the visible screen live streams read
//! without waiting for the parser ([`VisibleScreen`]).

use super::PtySession;
use super::shared::Shared;
use crate::session::ScreenSnapshot;
use crate::session::memory::give_back_freed_memory;
use std::sync::Arc;

impl PtySession {
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

    /// The terminal's generation now: it grows with every change (see [`watch_screen`](Self::watch_screen)).
    pub fn screen_generation(&self) -> u64 {
        *self.shared.screen_generation.borrow()
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
