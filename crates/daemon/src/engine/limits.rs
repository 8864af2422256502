//! Usage limits: a CLI that says its limit is reached makes its session `limited` (the
//! status authority decides, see `status.rs`), with `resetsAt` when it names a time. Its
//! task stays running but does not hold one of autopilot's slots, and once the limit resets
//! orchestra continues it by itself (unless configured not to), saying so in the session's
//! messages. A CLI that names no time is tried again after `EngineConfig::limit_retry`.

use super::Engine;
use super::sessions::{SendMessage, SessionEntry};
use super::status::Fact;
use crate::providers::patterns::{Verdict, find_option};
use orchestra_proto::wire::SessionStatus;
use regex::Regex;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// What orchestra types to carry on after a limit reset.
const CONTINUE: &str = "continue";

/// How often a redrawing screen is read for a limit wait.
pub(crate) const LIMIT_WAIT_EVERY: Duration = Duration::from_millis(500);

/// When a limit named as `text` resets, in ms since the epoch: "in 20 minutes", "in 2h",
/// "3pm", "3:30 pm", "15:30" (the next such time of day, local time). A time of day is
/// read as the end of its minute: CLIs name the reset to the minute, dropping the seconds
/// (Codex says "12:28 PM" for 12:28:50), and a continue typed before the real reset only
/// meets the limit again. `None` when it does not read as one.
pub(crate) fn reset_at(text: &str, now_ms: i64) -> Option<i64> {
    static IN: OnceLock<Regex> = OnceLock::new();
    static CLOCK: OnceLock<Regex> = OnceLock::new();
    let t = text.trim().to_lowercase();
    let within = IN.get_or_init(|| {
        Regex::new(
            r"^(?:in\s+)?(\d+)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?)\.?$",
        )
        .expect("static regex")
    });
    if let Some(c) = within.captures(&t) {
        let n: i64 = c[1].parse().ok()?;
        let unit = match &c[2] {
            u if u.starts_with('s') => 1_000,
            u if u.starts_with('m') => 60_000,
            _ => 3_600_000,
        };
        return Some(now_ms + n.checked_mul(unit)?);
    }
    let clock = CLOCK.get_or_init(|| {
        Regex::new(r"^(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b").expect("static regex")
    });
    let c = clock.captures(&t)?;
    let mut hour: i64 = c[1].parse().ok()?;
    let minute: i64 = c.get(2).map_or(Ok(0), |m| m.as_str().parse()).ok()?;
    match c.get(3).map(|m| m.as_str()) {
        Some("am") if hour == 12 => hour = 0,
        Some("pm") if hour < 12 => hour += 12,
        None if c.get(2).is_none() => return None, // a bare number is no time of day
        _ => {}
    }
    if hour > 23 || minute > 59 {
        return None;
    }
    let since_midnight = local_seconds_of_day(now_ms)?;
    let midnight = now_ms - since_midnight * 1000 - now_ms.rem_euclid(1000);
    let mut at = midnight + (hour * 3600 + (minute + 1) * 60) * 1000;
    if at <= now_ms {
        at += 24 * 3600 * 1000;
    }
    Some(at)
}

/// Seconds since local midnight at `now_ms`.
fn local_seconds_of_day(now_ms: i64) -> Option<i64> {
    let secs = (now_ms / 1000) as libc::time_t;
    // SAFETY: localtime_r writes only into the `tm` we pass; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals.
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    ok.then(|| i64::from(tm.tm_hour) * 3600 + i64::from(tm.tm_min) * 60 + i64::from(tm.tm_sec))
}

impl Engine {
    /// After an agent's reply was recorded: if it says the usage limit is reached, the
    /// session is `limited` and a continue is scheduled.
    pub(crate) fn note_limit(&self, entry: &Arc<SessionEntry>, reply: &str) {
        let Some(reset) = entry.limit_in(reply) else {
            return;
        };
        let resets_at = reset.as_deref().and_then(|r| reset_at(r, super::now_ms()));
        tracing::info!(session = %entry.info.lock().id, ?reset, ?resets_at, "usage limit reached");
        self.apply_fact(entry, Fact::Limited(resets_at));
        self.limit_reached(entry, resets_at);
    }

    /// The session is now `limited` (by a reply, or a prompt on its screen that says so):
    /// its slot is free, and a continue is scheduled.
    pub(crate) fn limit_reached(&self, entry: &Arc<SessionEntry>, resets_at: Option<i64>) {
        // A slot is free: autopilot may start another task.
        self.inner.dispatch.notify_one();
        if self.config().continue_after_limit {
            self.continue_after_limit(entry, resets_at);
        }
    }

    /// Reads the screen for the CLI waiting out a limit by itself (its `limit_wait`
    /// patterns): the session is `limited` while it shows, and stops being so once it no
    /// longer does. Orchestra types nothing: the CLI carries on by itself. Called as the
    /// screen changes (at most every [`LIMIT_WAIT_EVERY`] unless `now`) and as its status
    /// facts come.
    pub(crate) fn watch_limit_wait(&self, entry: &Arc<SessionEntry>, now: bool) {
        let Some(shown) = entry.limit_wait_shown(now) else {
            return;
        };
        let resets_at =
            shown.map(|reset| reset.as_deref().and_then(|r| reset_at(r, super::now_ms())));
        let before = entry.facts.lock().limit_shown;
        let same = match (before, resets_at) {
            (None, None) => true,
            // A countdown ("retrying in 37s") names the same moment a second later.
            (Some(a), Some(b)) => match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() < 5_000,
                (a, b) => a == b,
            },
            _ => false,
        };
        if same {
            return;
        }
        tracing::info!(session = %entry.info.lock().id, ?resets_at, "usage limit wait on screen");
        self.apply_fact(entry, Fact::LimitShown(resets_at));
        if resets_at.is_some() {
            // A slot is free: autopilot may start another task.
            self.inner.dispatch.notify_one();
        }
    }

    /// SendMessage given to a limited session: the limit is the CLI's business again.
    pub(crate) fn limit_over(&self, entry: &Arc<SessionEntry>) {
        if entry.facts.lock().limited.is_some() {
            self.apply_fact(entry, Fact::LimitOver);
        }
    }

    /// At `resets_at` (else after the retry time), if the session is still limited, types
    /// [`CONTINUE`] as an automatic message saying why.
    fn continue_after_limit(&self, entry: &Arc<SessionEntry>, resets_at: Option<i64>) {
        let wait = match resets_at {
            // A little after: the provider's clock and ours differ.
            Some(at) => {
                Duration::from_millis((at - super::now_ms()).max(0) as u64) + Duration::from_secs(5)
            }
            None => self.config().limit_retry,
        };
        let engine = self.clone();
        let entry = entry.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let still = {
                let info = entry.info.lock();
                !info.ended && info.status == SessionStatus::Limited && info.resets_at == resets_at
            };
            if !still {
                return;
            }
            let why = match resets_at {
                Some(_) => "the usage limit has reset: continuing".to_string(),
                None => format!(
                    "the usage limit named no reset time: trying again after {} s",
                    wait.as_secs()
                ),
            };
            let (input, why) = match limit_dialog_answer(&entry) {
                Some((keys, label)) => (SendMessage::Keys(keys), format!("{why} (\"{label}\")")),
                None => (SendMessage::Text(CONTINUE.into()), why),
            };
            if let Err(e) = engine.send_to(&entry, input, Some(why)).await {
                tracing::warn!(error = %e, "could not continue after a usage limit");
            }
        });
    }
}

/// A CLI that asks what to do about its limit (Gemini CLI: "Usage limit reached … 1. Keep
/// trying 2. Stop") is answered with the option its prompt rule names (its `answer`), not
/// typed into: the keys and the option's label.
fn limit_dialog_answer(entry: &SessionEntry) -> Option<(Vec<String>, String)> {
    let Some(Verdict::Prompt(p)) = entry.classify_now() else {
        return None;
    };
    let option = p
        .auto_answer
        .as_deref()
        .and_then(|a| find_option(&p.prompt.options, a))?;
    let keys = option
        .keys
        .clone()
        .unwrap_or_else(|| vec![option.key.clone()]);
    Some((keys, option.label.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn relative_resets() {
        assert_eq!(reset_at("in 20 minutes", NOW), Some(NOW + 20 * 60_000));
        assert_eq!(reset_at("in 2h", NOW), Some(NOW + 2 * 3_600_000));
        assert_eq!(reset_at("in 45 seconds", NOW), Some(NOW + 45_000));
        assert_eq!(reset_at("soon", NOW), None);
    }

    #[test]
    fn times_of_day_are_the_next_such_time() {
        let since = local_seconds_of_day(NOW).unwrap();
        let midnight = NOW - since * 1000;
        for (text, h, m) in [
            ("3pm", 15, 0),
            ("3:30 pm", 15, 30),
            ("15:30", 15, 30),
            ("12am", 0, 0),
            ("at 9:05am", 9, 5),
        ] {
            let at = reset_at(text, NOW).unwrap_or_else(|| panic!("{text}"));
            let mut want = midnight + (h * 3600 + (m + 1) * 60) * 1000;
            if want <= NOW {
                want += 86_400_000;
            }
            assert_eq!(at, want, "{text}");
            assert!(at > NOW && at <= NOW + 86_400_000, "{text}");
        }
        // The minute it is in is still to come: its end.
        let (h, m) = (since / 3600, since / 60 % 60);
        let this_minute = reset_at(&format!("{h}:{m:02}"), NOW).unwrap();
        assert_eq!(this_minute, midnight + (since / 60 + 1) * 60_000);
        assert_eq!(reset_at("25:00", NOW), None);
        assert_eq!(reset_at("7", NOW), None);
    }
}
