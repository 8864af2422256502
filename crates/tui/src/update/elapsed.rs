//! When a running task's elapsed time next changes on screen, so the loop wakes only then.

use crate::views::elapsed_resolution_ms;

/// How late an elapsed time counted in minutes (or hours) may change on screen: changes due
/// within the same stretch of this length share one frame.
const MINUTES_LAG_MS: i64 = 10_000;

/// Milliseconds from `now_ms` until the elapsed time of a task started at `started_ms` should
/// be drawn again (at least 1).
pub(crate) fn next_change_in_ms(started_ms: i64, now_ms: i64) -> i64 {
    let el = (now_ms - started_ms).max(0);
    let wait = match elapsed_resolution_ms(el) {
        // Seconds: every task ticks on the same wall-clock second, so twenty running tasks
        // cost one frame a second, not twenty.
        1000 => 1000 - now_ms.rem_euclid(1000),
        // Minutes and hours: on the next shared wall-clock boundary after the change, so tasks
        // started at different seconds change together in one frame, not one frame each.
        res => {
            let due = now_ms + res - el.rem_euclid(res);
            let shared = due + (MINUTES_LAG_MS - due.rem_euclid(MINUTES_LAG_MS)) % MINUTES_LAG_MS;
            shared - now_ms
        }
    };
    wait.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::format_elapsed;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn the_first_minute_ticks_on_the_wall_clock_second() {
        assert_eq!(next_change_in_ms(NOW - 5_000, NOW + 250), 750);
        assert_eq!(next_change_in_ms(NOW - 59_300, NOW + 250), 750);
    }

    #[test]
    fn minutes_change_at_most_ten_seconds_late_and_never_early() {
        for started_ago in [61_000, 119_999, 125_400, 3_599_000, 7_300_123] {
            let start = NOW - started_ago;
            let shown = format_elapsed(NOW - start);
            let wait = next_change_in_ms(start, NOW);
            // The wake-up comes after the text changed (never for nothing), no more than
            // MINUTES_LAG_MS after.
            let changed_at = (1..=wait)
                .find(|w| format_elapsed(NOW + w - start) != shown)
                .unwrap_or(wait);
            assert!(
                wait - changed_at < MINUTES_LAG_MS,
                "{started_ago}: {changed_at} {wait}"
            );
            assert_ne!(format_elapsed(NOW + wait - start), shown, "{started_ago}");
        }
    }

    #[test]
    fn tasks_started_seconds_apart_share_their_frames() {
        // Twenty tasks started half a second apart over ten seconds, all a few minutes old:
        // their wake-ups fall on one or two shared boundaries, not twenty.
        let mut wakes: Vec<i64> = (0..20)
            .map(|i| {
                let start = NOW - 180_000 - i * 500;
                NOW + next_change_in_ms(start, NOW)
            })
            .collect();
        wakes.sort();
        wakes.dedup();
        assert!(wakes.len() <= 2, "{wakes:?}");
    }

    #[test]
    fn a_wall_clock_that_jumps_never_stalls_or_spins_the_loop() {
        // Back an hour: the task seems to start in the future; it shows 0s and wakes within
        // a second, not in an hour and not at once in a loop.
        let start = NOW;
        let wait = next_change_in_ms(start, NOW - 3_600_000);
        assert!((1..=1000).contains(&wait), "{wait}");
        assert_eq!(format_elapsed(NOW - 3_600_000 - start), "0s");
        // Forward a year: hours are shown, the next change within an hour (and a lag).
        let wait = next_change_in_ms(start, NOW + 365 * 86_400_000);
        assert!((1..=3_600_000 + MINUTES_LAG_MS).contains(&wait), "{wait}");
    }
}
