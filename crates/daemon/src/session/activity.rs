//! What a session's output is doing: facts with timestamps, not a status. Whether that means
//! `ready`, `busy` or `blocked` is the engine's call (`engine/status.rs`), made together with
//! what the screen shows; this module knows nothing of agents.
//!
//! Pure, no I/O, no clock: the processing thread passes the time in and owns the timer. The
//! timer only runs while output arrives (see [`ActivityTracker::deadline`]), so a quiet
//! session costs no CPU.

use std::time::{Duration, Instant};

/// What the output has been doing lately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing printed yet, and the start-up quiet period is not over.
    Silent,
    /// Output is changing the screen; `since`: the first output of this burst.
    Active { since: Instant },
    /// Nothing changed the screen for the quiet period; `since`: the last output (the start,
    /// for a program that printed nothing).
    Quiet { since: Instant },
}

impl Activity {
    pub fn is_quiet(self) -> bool {
        matches!(self, Self::Quiet { .. })
    }
}

/// Turns output times into [`Activity`]. Every method returns the new activity when it
/// changed.
#[derive(Debug, Clone)]
pub(crate) struct ActivityTracker {
    activity: Activity,
    last_output: Instant,
    /// Quiet period once something was printed.
    settle: Duration,
    /// Quiet period before the first output: a program still starting (a slow shell rc, a
    /// CLI loading) is given longer than one between two bursts.
    startup_quiet: Duration,
    /// The screen when it became quiet: output that leaves it as it was (a cursor blink, a
    /// title update) does not count as activity.
    quiet_screen: u64,
}

impl ActivityTracker {
    pub(crate) fn new(start: Instant, settle: Duration, startup_quiet: Duration) -> Self {
        Self {
            activity: Activity::Silent,
            last_output: start,
            settle,
            startup_quiet,
            quiet_screen: 0,
        }
    }

    /// When the output counts as quiet if nothing else arrives; `None` once quiet (no timer).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.activity {
            Activity::Silent => Some(self.last_output + self.startup_quiet),
            Activity::Active { .. } => Some(self.last_output + self.settle),
            Activity::Quiet { .. } => None,
        }
    }

    fn set(&mut self, to: Activity) -> Option<Activity> {
        (self.activity != to).then(|| {
            self.activity = to;
            to
        })
    }

    /// Output arrived at `now`; `screen` gives the screen's fingerprint after it (asked only
    /// when quiet, so a flood does not hash every batch).
    pub(crate) fn on_output(
        &mut self,
        now: Instant,
        screen: impl FnOnce() -> u64,
    ) -> Option<Activity> {
        match self.activity {
            Activity::Quiet { .. } if screen() == self.quiet_screen => None,
            Activity::Active { .. } => {
                self.last_output = now;
                None
            }
            Activity::Silent | Activity::Quiet { .. } => {
                self.last_output = now;
                self.set(Activity::Active { since: now })
            }
        }
    }

    /// The deadline passed with no output; `screen`: the screen's fingerprint now.
    pub(crate) fn on_deadline(&mut self, screen: u64) -> Option<Activity> {
        if self.activity.is_quiet() {
            return None;
        }
        self.quiet_screen = screen;
        self.set(Activity::Quiet {
            since: self.last_output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTLE: Duration = Duration::from_millis(500);
    const STARTUP: Duration = Duration::from_secs(10);

    #[test]
    fn bursts_and_quiet_spells() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut a = ActivityTracker::new(t0, SETTLE, STARTUP);
        assert_eq!(a.deadline(), Some(t0 + STARTUP), "start-up gets longer");
        assert_eq!(
            a.on_output(ms(10), || 1),
            Some(Activity::Active { since: ms(10) })
        );
        assert_eq!(a.on_output(ms(20), || 2), None, "still the same burst");
        assert_eq!(a.deadline(), Some(ms(20) + SETTLE));
        assert_eq!(a.on_deadline(2), Some(Activity::Quiet { since: ms(20) }));
        assert_eq!(a.deadline(), None, "no timer while quiet");
        assert_eq!(a.on_deadline(2), None);
        assert_eq!(a.on_output(ms(900), || 2), None, "same screen: still quiet");
        assert_eq!(a.deadline(), None);
        assert_eq!(
            a.on_output(ms(950), || 3),
            Some(Activity::Active { since: ms(950) })
        );
        assert_eq!(a.deadline(), Some(ms(950) + SETTLE));
    }

    #[test]
    fn a_program_that_prints_nothing_is_quiet_since_its_start() {
        let t0 = Instant::now();
        let mut a = ActivityTracker::new(t0, SETTLE, STARTUP);
        assert_eq!(a.on_deadline(7), Some(Activity::Quiet { since: t0 }));
        assert_eq!(a.deadline(), None);
        let later = t0 + STARTUP * 2;
        assert_eq!(
            a.on_output(later, || 8),
            Some(Activity::Active { since: later })
        );
    }
}
