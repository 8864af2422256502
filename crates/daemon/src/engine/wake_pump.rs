//! Wakes the followers of sessions whose screen changed in rounds, at most one round per
//! [`ROUND`], instead of one wake-up per write of each program.
//!
//! A follower is a task on the async runtime, and a session's threads are not: each wake-up
//! they sent it pulled a runtime worker out of its sleep. Fifty agents redrawing a spinner ten
//! times a second made five hundred of those a second, about a third of the daemon's context
//! switches (`benches/busy_agents.rs` counts them). In rounds, one worker wakes up for all the
//! sessions that changed meanwhile. Held output that falls due goes in the rounds too
//! ([`WakePump::wake_at`]). What cannot wait (a status fact, the exit) does not go through the
//! pump.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Shortest time between two rounds while sessions keep changing; the first change after a
/// quiet spell goes at once. What the rounds carry is the engine's bookkeeping (output lines
/// to the store, the `screen` notices of the event stream, held output), not what a watcher
/// sees: the session streams follow each screen by themselves at their own frame rate. At
/// 16 ms, fifty agents redrawing spinners woke a worker sixty times a second for it; at
/// 50 ms, twenty (`benches/busy_agents.rs`, BENCHMARKS.md "Many busy agents").
const ROUND: Duration = Duration::from_millis(50);

/// One follower's place in the pump.
#[derive(Default)]
pub(super) struct Waiting {
    /// The follower's wake-up.
    pub(super) wake: Notify,
    /// It is in the next round already.
    queued: AtomicBool,
    /// The time it asked to be woken at ([`WakePump::wake_at`]), until a round wakes it.
    at: Mutex<Option<Instant>>,
}

#[derive(Default)]
pub(crate) struct WakePump {
    next_round: Mutex<Vec<Arc<Waiting>>>,
    /// Followers that asked to be woken at a time.
    timed: Mutex<Vec<Arc<Waiting>>>,
    kick: Notify,
    /// The pump waits for a kick (or the earliest timed wake-up): nothing changed since its
    /// last round. While sessions keep changing it goes round by itself, one round per
    /// [`ROUND`], and the sessions' threads do not wake it (a wake-up from outside the
    /// runtime pulls a worker out of its sleep).
    idle: AtomicBool,
}

impl WakePump {
    /// Puts a follower in the next round (once, however often it is asked). Called on the
    /// sessions' threads: never blocks beyond a short lock.
    pub(super) fn wake_soon(&self, who: &Arc<Waiting>) {
        if who.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let first = {
            let mut next = self.next_round.lock();
            next.push(who.clone());
            next.len() == 1
        };
        // The pump sets `idle` before it looks at the lists for the last time (under their
        // locks), so either it sees this follower there or this sees it idle.
        if first && self.idle.load(Ordering::SeqCst) {
            self.kick.notify_one();
        }
    }

    /// Wakes a follower in the first round at or after `at` (held output that falls due).
    /// Followers' own timers woke a worker each, at moments of their own: 50 busy agents
    /// releasing output four times a second made 200 wake-ups a second beside the rounds.
    /// An earlier time asked before stands; the follower asks again after it is woken.
    pub(super) fn wake_at(&self, who: &Arc<Waiting>, at: Instant) {
        // Not under `who.at`: the pump locks `timed` first, then each `at`.
        let listed = {
            let mut asked = who.at.lock();
            match *asked {
                Some(earlier) if earlier <= at => return,
                earlier => {
                    *asked = Some(at);
                    earlier.is_some()
                }
            }
        };
        if !listed {
            self.timed.lock().push(who.clone());
        }
        // An idle pump sleeps until the earliest time it knew of: it looks again.
        if self.idle.load(Ordering::SeqCst) {
            self.kick.notify_one();
        }
    }

    /// The earliest time a follower asked to be woken at.
    fn earliest_timed(&self) -> Option<Instant> {
        self.timed.lock().iter().filter_map(|w| *w.at.lock()).min()
    }

    /// Moves the followers whose time has come into `round`.
    fn take_due(&self, now: Instant, round: &mut Vec<Arc<Waiting>>) {
        self.timed.lock().retain(|who| {
            let mut at = who.at.lock();
            if at.is_some_and(|t| t > now) {
                return true;
            }
            *at = None;
            round.push(who.clone());
            false
        });
    }

    /// Runs the rounds until `closing` resolves.
    pub(super) async fn run(self: Arc<Self>, closing: impl std::future::Future<Output = ()>) {
        tokio::pin!(closing);
        loop {
            self.idle.store(true, Ordering::SeqCst);
            let timed = self.earliest_timed();
            if self.next_round.lock().is_empty() && timed.is_none_or(|t| t > Instant::now()) {
                let until_timed = async {
                    match timed {
                        Some(t) => tokio::time::sleep_until(t.into()).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = self.kick.notified() => {}
                    _ = until_timed => {}
                    _ = &mut closing => return,
                }
            }
            self.idle.store(false, Ordering::SeqCst);
            // The first change after a quiet spell goes at once; then a round per `ROUND`
            // while there are changes.
            loop {
                let mut round = std::mem::take(&mut *self.next_round.lock());
                self.take_due(Instant::now(), &mut round);
                if round.is_empty() {
                    break;
                }
                for who in round {
                    who.queued.store(false, Ordering::Release);
                    who.wake.notify_one();
                }
                tokio::select! {
                    _ = tokio::time::sleep(ROUND) => {}
                    _ = &mut closing => return,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pump running on the test's runtime, its stop, and its task.
    fn running_pump() -> (
        Arc<WakePump>,
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    ) {
        let pump = Arc::new(WakePump::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(pump.clone().run(async {
            let _ = stopped.await;
        }));
        (pump, stop, running)
    }

    #[tokio::test]
    async fn a_follower_asked_for_many_times_is_woken_once_a_round() {
        let (pump, stop, running) = running_pump();
        let a = Arc::new(Waiting::default());
        let b = Arc::new(Waiting::default());
        for _ in 0..100 {
            pump.wake_soon(&a);
        }
        pump.wake_soon(&b);
        a.wake.notified().await;
        b.wake.notified().await;
        // Woken once: no second permit is left for `a`.
        let again = tokio::time::timeout(Duration::from_millis(50), a.wake.notified()).await;
        assert!(again.is_err(), "woken twice for one round");
        // A later change puts it in a later round.
        pump.wake_soon(&a);
        a.wake.notified().await;
        let _ = stop.send(());
        running.await.expect("the pump ends when closing");
    }

    #[tokio::test]
    async fn a_follower_is_woken_at_the_time_it_asked_for_not_before() {
        let (pump, stop, running) = running_pump();
        let a = Arc::new(Waiting::default());
        // A far time, then a nearer one: the nearer one stands, though the pump was already
        // sleeping towards the far one.
        let asked = Instant::now();
        pump.wake_at(&a, asked + Duration::from_secs(3600));
        tokio::task::yield_now().await;
        pump.wake_at(&a, asked + Duration::from_millis(100));
        // A later time asked meanwhile does not put it off.
        pump.wake_at(&a, asked + Duration::from_secs(7200));
        tokio::time::timeout(Duration::from_secs(30), a.wake.notified())
            .await
            .expect("woken at the nearer time");
        assert!(asked.elapsed() >= Duration::from_millis(100), "woken early");
        // Changes still go round while a time is pending for another follower.
        let b = Arc::new(Waiting::default());
        pump.wake_at(&b, Instant::now() + Duration::from_secs(3600));
        pump.wake_soon(&a);
        tokio::time::timeout(Duration::from_secs(30), a.wake.notified())
            .await
            .expect("a change woke its follower");
        let _ = stop.send(());
        running.await.expect("the pump ends when closing");
    }
}
