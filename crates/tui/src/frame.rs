//! When the next frame may be drawn: at most one per [`FRAME`] while the screen keeps
//! changing (a flooding agent), yet without making a change wait after a quiet spell.
//!
//! A plain "one frame per 16 ms" rule made the change that follows a lone frame wait: a key
//! typed into an agent, a task's status or the elapsed-time tick draws a frame, and the echo
//! or screen change arriving a millisecond later waited out the rest of the 16 ms. So a frame
//! drawn after a quiet spell leaves one spare: the next frame may follow it at once. While
//! frames keep coming at the cap, no spare is earned, so a flood still draws at most once per
//! [`FRAME`] on average (two frames within any two frame periods at worst).

use std::time::{Duration, Instant};

/// Shortest time between two frames while the screen keeps changing.
pub const FRAME: Duration = Duration::from_millis(16);

/// A gap at least this long before a frame makes it a frame after a quiet spell.
const QUIET: Duration = Duration::from_millis(32);

#[derive(Debug, Default)]
pub struct FramePacer {
    /// When the last frame started.
    last: Option<Instant>,
    /// The last frame came after a quiet spell: the next may be drawn at once.
    spare: bool,
}

impl FramePacer {
    /// The earliest time a frame may be drawn (in the past or now: at once).
    pub fn earliest(&self) -> Option<Instant> {
        match self.last {
            Some(last) if !self.spare => Some(last + FRAME),
            _ => None,
        }
    }

    /// Whether a frame may be drawn at `now`.
    pub fn may_draw(&self, now: Instant) -> bool {
        self.earliest().is_none_or(|t| t <= now)
    }

    /// Records a frame whose drawing started at `now` (the period counts from the start, so
    /// the time a frame takes to draw and write is not added to it).
    ///
    /// A frame drawn late, within a period of when it was due, counts from when it was due:
    /// the loop's wake-up comes a millisecond or more after its timer (more on a loaded
    /// machine), and counting from the wake-up made every period of a flood that much longer.
    pub fn drawn(&mut self, now: Instant) {
        let due = self.earliest();
        self.spare = self
            .last
            .is_none_or(|last| now.saturating_duration_since(last) >= QUIET);
        self.last = Some(match due {
            Some(due) if now >= due && now < due + FRAME => due,
            _ => now,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_first_frame_and_the_one_right_after_it_go_at_once() {
        let t0 = Instant::now();
        let mut p = FramePacer::default();
        assert!(p.may_draw(t0));
        p.drawn(t0);
        // The echo of the key that woke the first frame, 1 ms later: not held a frame.
        assert!(p.may_draw(t0 + MS));
        p.drawn(t0 + MS);
        // A third change so soon waits for the frame period.
        assert!(!p.may_draw(t0 + 2 * MS));
        assert_eq!(p.earliest(), Some(t0 + MS + FRAME));
    }

    #[test]
    fn after_a_quiet_spell_a_change_is_drawn_at_once_again() {
        let t0 = Instant::now();
        let mut p = FramePacer::default();
        p.drawn(t0);
        p.drawn(t0 + MS);
        let later = t0 + Duration::from_secs(1);
        assert!(p.may_draw(later));
        p.drawn(later);
        assert!(
            p.may_draw(later + MS),
            "a spare again after the quiet spell"
        );
    }

    #[test]
    fn frames_at_the_cap_earn_no_spare() {
        let t0 = Instant::now();
        let mut p = FramePacer::default();
        p.drawn(t0);
        p.drawn(t0 + MS);
        // A flood: each frame as soon as allowed.
        let mut now = t0 + MS;
        for _ in 0..100 {
            let next = p.earliest().expect("no spare while flooding");
            assert_eq!(next, now + FRAME);
            assert!(!p.may_draw(next - MS));
            now = next;
            p.drawn(now);
        }
    }

    #[test]
    fn a_frame_drawn_late_counts_from_when_it_was_due() {
        let t0 = Instant::now();
        let mut p = FramePacer::default();
        p.drawn(t0);
        p.drawn(t0 + MS);
        // Each wake-up comes 3 ms after the timer: the frames still keep the cap's pace.
        let mut due = t0 + MS + FRAME;
        for _ in 0..100 {
            assert_eq!(p.earliest(), Some(due));
            p.drawn(due + 3 * MS);
            due += FRAME;
        }
        // Over 100 periods, 100 frames: never more than one per period on average.
        assert_eq!(p.earliest(), Some(t0 + MS + 101 * FRAME));
    }

    #[test]
    fn a_frame_a_period_or_more_late_starts_the_count_again() {
        let t0 = Instant::now();
        let mut p = FramePacer::default();
        p.drawn(t0);
        p.drawn(t0 + MS);
        // A period or more late is a quiet spell: one spare, as ever, and no burst of
        // frames to catch up with the periods missed.
        let late = t0 + MS + FRAME + FRAME + 5 * MS;
        p.drawn(late);
        assert!(p.may_draw(late + MS));
        p.drawn(late + MS);
        assert_eq!(p.earliest(), Some(late + MS + FRAME));
    }
}
