//! A terminal whose state changes without output: a question printed before its program
//! reads the answer (`echo "Proceed?"; sleep 2; read x`), or a quiet command that ends
//! without a word. The look at the quiet screen (see `agents.rs` `classify_now`) found the
//! terminal in canonical mode with nothing reading (a command runs); nothing printed since
//! asks for another look.
//! So while that lasts the terminal is looked at again, more and more seldom, and the
//! screen read once it changed. A terminal out of canonical mode (a shell at its prompt, a
//! full-screen program) or a program reading already costs nothing.

use super::Engine;
use super::sessions::SessionEntry;
use super::status::{Fact, SessionStatus};
use crate::session::Foreground;
use orchestra_proto::wire::SessionInfo;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The waits between looks: quick at first (most reads follow their question within a
/// second), then seldom, for as long as the terminal stays as it is.
const LOOKS: [Duration; 6] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];
const LOOK_EVERY: Duration = Duration::from_secs(10);

impl Engine {
    /// After the session's output went quiet and its screen was read: while the terminal is
    /// in canonical mode with nothing reading (a command runs), looks again, and reads the
    /// screen again once that changes: a read began, or the command ended without a word.
    pub(super) fn keep_looking_while_a_command_runs(&self, entry: &Arc<SessionEntry>) {
        // This quiet spell's looks; those of an earlier one stop at their next wake-up.
        let spell = entry.quiet_spells.fetch_add(1, Ordering::AcqRel) + 1;
        let Some(pty) = entry.pty.clone() else {
            return;
        };
        if !still_open(&entry.info.lock()) || !runs_without_reading(pty.foreground()) {
            return;
        }
        let engine = self.clone();
        let entry = entry.clone();
        tokio::spawn(async move {
            let waits = LOOKS.into_iter().chain(std::iter::repeat(LOOK_EVERY));
            for wait in waits {
                tokio::time::sleep(wait).await;
                if entry.quiet_spells.load(Ordering::Acquire) != spell
                    || !entry.facts.lock().activity.is_quiet()
                    || !still_open(&entry.info.lock())
                {
                    return;
                }
                if !runs_without_reading(pty.foreground()) {
                    engine.on_session_fact(&entry, Fact::LookAgain).await;
                    return;
                }
            }
        });
    }
}

/// Whether the terminal is in canonical mode and nothing reads it: a command a shell runs
/// in the foreground, or the leader itself busy (`sh -c 'echo Proceed?; sleep 2; read x'`).
fn runs_without_reading(foreground: Option<Foreground>) -> bool {
    matches!(foreground, Some(Foreground::Running | Foreground::Leader))
}

/// Whether what the terminal shows may still change without output: the session runs and
/// is not paused.
fn still_open(info: &SessionInfo) -> bool {
    !info.ended && info.status != SessionStatus::Paused
}
