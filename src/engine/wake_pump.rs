//! Wakes the followers of sessions whose screen changed in rounds, at most one round per
//! [`ROUND`], instead of one wake-up per write of each program.
//!
//! A follower is a task on the async runtime, and a session's threads are not: each wake-up
//! they sent it pulled a runtime worker out of its sleep. Fifty agents redrawing a spinner ten
//! times a second made five hundred of those a second, about a third of the daemon's context
//! switches (`benches/busy_agents.rs` counts them). In rounds, one worker wakes up for all the
//! sessions that changed meanwhile. What cannot wait (a status fact, the exit) does not go
//! through the pump.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// Shortest time between two rounds while sessions keep changing; the first change after a
/// quiet spell goes at once.
const ROUND: Duration = Duration::from_millis(16);

/// One follower's place in the pump.
#[derive(Default)]
pub(super) struct Waiting {
    /// The follower's wake-up.
    pub(super) wake: Notify,
    /// It is in the next round already.
    queued: AtomicBool,
}

#[derive(Default)]
pub(crate) struct WakePump {
    next_round: Mutex<Vec<Arc<Waiting>>>,
    kick: Notify,
    /// The pump waits for a kick: nothing changed since its last round. While sessions keep
    /// changing it goes round by itself, one round per [`ROUND`], and the sessions' threads
    /// do not wake it (a wake-up from outside the runtime pulls a worker out of its sleep).
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
        // The pump sets `idle` before it looks at the list for the last time (under the same
        // lock), so either it sees this follower there or this sees it idle.
        if first && self.idle.load(Ordering::SeqCst) {
            self.kick.notify_one();
        }
    }

    /// Runs the rounds until `closing` resolves.
    pub(super) async fn run(self: Arc<Self>, closing: impl std::future::Future<Output = ()>) {
        tokio::pin!(closing);
        loop {
            self.idle.store(true, Ordering::SeqCst);
            if self.next_round.lock().is_empty() {
                tokio::select! {
                    _ = self.kick.notified() => {}
                    _ = &mut closing => return,
                }
            }
            self.idle.store(false, Ordering::SeqCst);
            // The first change after a quiet spell goes at once; then a round per `ROUND`
            // while there are changes.
            loop {
                let round = std::mem::take(&mut *self.next_round.lock());
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

    #[tokio::test]
    async fn a_follower_asked_for_many_times_is_woken_once_a_round() {
        let pump = Arc::new(WakePump::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(pump.clone().run(async {
            let _ = stopped.await;
        }));
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
}
