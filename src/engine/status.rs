//! A session's status, decided in one place.
//!
//! The session runtime reports facts — output activity (silent, active, quiet since), paused,
//! exited — and the provider's screen patterns say what a quiet screen shows (a prompt, a
//! busy indicator, an input prompt). [`decide`] combines them; [`SessionEntry::record_fact`]
//! is the only writer of a session's `status` and `prompt` (`sessions.rs` publishes
//! `session:status` for what it returns), and what the API and the TUI read.
//! Hook events, when agents report through them (`hooks.rs`), come before the screen
//! patterns here: the status they set holds until the next hook event or until orchestra
//! types into the session; the screen still supplies a blocked session's prompt.

use super::sessions::SessionEntry;
use crate::providers::patterns::Verdict;
use crate::session::Activity;
use crate::wire::SessionInfo;
pub use crate::wire::{SessionStatus, StatusSource};
use std::time::Duration;

/// How long a program that has printed nothing may stay quiet before it counts as ready:
/// quiet before the first output is a program still starting (a slow shell rc, a CLI
/// loading), not one waiting for input.
const STARTUP_QUIET: Duration = Duration::from_secs(10);

/// The session runtime's quiet period before the first output, for a `settle` time.
pub(crate) fn startup_quiet(settle: Duration) -> Duration {
    (settle * 20).max(STARTUP_QUIET)
}

/// What the session runtime reported about one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Facts {
    /// Whether the program waits for input when quiet (a shell, an agent) or just runs (a
    /// command): only the first kind is ever `ready`.
    pub interactive: bool,
    pub activity: Activity,
    pub paused: bool,
    pub exited: bool,
    /// The CLI said its usage limit is reached (`Some(resets_at)`, ms since the epoch when
    /// it named a time), until it is given input again.
    pub limited: Option<Option<i64>>,
    /// Its screen shows it waiting out a usage limit by itself (`Some(resets_at)`), for as
    /// long as it shows that.
    pub limit_shown: Option<Option<i64>>,
    /// What the agent's own hooks last said, until something is typed into it.
    pub hook: Option<HookStatus>,
}

/// The status an agent's hook event stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookStatus {
    /// It took a request up, or ran a tool.
    Busy,
    /// It asks permission.
    Blocked,
    /// It finished its turn.
    Ready,
}

impl Facts {
    /// A session just started.
    pub(crate) fn started(interactive: bool) -> Self {
        Self {
            interactive,
            activity: Activity::Silent,
            paused: false,
            exited: false,
            limited: None,
            limit_shown: None,
            hook: None,
        }
    }

    /// A session whose process is gone (restored from a previous run).
    pub(crate) fn ended() -> Self {
        Self {
            exited: true,
            ..Self::started(false)
        }
    }

    /// Whether the screen matters: only a quiet screen of a running process is read, and
    /// the screen of one whose hook says it asks permission (for the prompt's options).
    fn reads_screen(&self) -> bool {
        !self.paused
            && !self.exited
            && (self.activity.is_quiet() || self.hook == Some(HookStatus::Blocked))
    }
}

/// One new fact from the session runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fact {
    Activity(Activity),
    Paused(bool),
    Exited,
    /// A usage limit was reached (when it resets, if named).
    Limited(Option<i64>),
    /// Input was given after a limit: it is the CLI's again to say what it does.
    LimitOver,
    /// The screen shows the CLI waiting out a limit by itself (`Some`, when it resets if
    /// named), or no longer does (`None`).
    LimitShown(Option<Option<i64>>),
    /// The agent's hook reported (`Some`), or input was typed into it (`None`: the screen
    /// decides until its next hook event).
    Hook(Option<HookStatus>),
    /// Nothing new came out, but the terminal changed: the screen is read again as it is
    /// now (a program began reading the answer to a question it printed earlier, or a quiet
    /// command ended without a word; see `terminal_looks.rs`).
    LookAgain,
}

impl Facts {
    fn apply(&mut self, fact: Fact) {
        match fact {
            Fact::Activity(a) => self.activity = a,
            Fact::Paused(p) => self.paused = p,
            Fact::Exited => self.exited = true,
            Fact::Limited(resets_at) => self.limited = Some(resets_at),
            Fact::LimitOver => self.limited = None,
            Fact::LimitShown(shown) => self.limit_shown = shown,
            Fact::Hook(h) => self.hook = h,
            Fact::LookAgain => {}
        }
    }
}

/// What the provider's patterns make of a quiet screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Screen {
    /// A question waits for the user.
    Prompt,
    /// A busy indicator (spinner, "esc to interrupt"): still working though quiet.
    Busy,
    /// The agent's input prompt.
    Ready,
    /// Its input prompt, but the CLI is not done starting: it does not take input yet.
    Starting,
    /// Nothing the patterns know.
    Unknown,
}

impl Screen {
    fn of(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Prompt(_) => Self::Prompt,
            Verdict::Busy => Self::Busy,
            Verdict::Ready => Self::Ready,
            Verdict::Starting => Self::Starting,
            Verdict::Unknown => Self::Unknown,
        }
    }
}

/// The status for the facts and, when the output is quiet, what the screen shows (`None`: the
/// provider has no patterns). `recognised`: the patterns recognised this session's screen
/// before; until then an unknown quiet screen is a CLI still starting.
pub(crate) fn decide(facts: &Facts, screen: Option<Screen>, recognised: bool) -> SessionStatus {
    decide_with_source(facts, screen, recognised).0
}

/// [`decide`], and what decided it: a hook event is authoritative, except that a prompt on
/// the quiet screen of an agent its hook calls busy blocks it (a question no hook reports).
pub(crate) fn decide_with_source(
    facts: &Facts,
    screen: Option<Screen>,
    recognised: bool,
) -> (SessionStatus, StatusSource) {
    if facts.exited {
        return (SessionStatus::Exited, StatusSource::Screen);
    }
    if facts.paused {
        return (SessionStatus::Paused, StatusSource::Screen);
    }
    // A CLI waiting out a limit may retry, spin or redraw: it is not working for hours.
    if facts.limited.is_some() || facts.limit_shown.is_some() {
        return (SessionStatus::Limited, StatusSource::Screen);
    }
    let prompt_shown = screen == Some(Screen::Prompt) && facts.activity.is_quiet();
    match facts.hook {
        Some(HookStatus::Busy) if prompt_shown => (SessionStatus::Blocked, StatusSource::Screen),
        Some(h) => (
            match h {
                HookStatus::Busy => SessionStatus::Busy,
                HookStatus::Blocked => SessionStatus::Blocked,
                HookStatus::Ready => SessionStatus::Ready,
            },
            StatusSource::Hook,
        ),
        None => (
            decide_by_screen(facts, screen, recognised),
            StatusSource::Screen,
        ),
    }
}

/// The status from output activity and the screen alone.
fn decide_by_screen(facts: &Facts, screen: Option<Screen>, recognised: bool) -> SessionStatus {
    use SessionStatus::*;
    match facts.activity {
        Activity::Silent if facts.interactive => Starting,
        Activity::Silent | Activity::Active { .. } => Busy,
        Activity::Quiet { .. } => match screen {
            Some(Screen::Prompt) => Blocked,
            _ if !facts.interactive => Busy,
            None | Some(Screen::Ready) => Ready,
            Some(Screen::Busy) => Busy,
            Some(Screen::Starting) => Starting,
            Some(Screen::Unknown) if recognised => Ready,
            Some(Screen::Unknown) => Starting,
        },
    }
}

impl SessionEntry {
    /// Records `fact`, decides the status again and writes it, with the prompt it is blocked
    /// on, into the session's info: the only writer of both. All under the facts lock, so
    /// that decisions are written in the order their facts came. Returns the info when the
    /// status or prompt changed (never once the session's end is recorded).
    pub(crate) fn record_fact(&self, fact: Fact) -> Option<SessionInfo> {
        let mut facts = self.facts.lock();
        facts.apply(fact);
        let verdict = if facts.reads_screen() {
            self.classify_now()
        } else {
            None
        };
        let screen = verdict.as_ref().map(Screen::of);
        let (status, source, prompt) = {
            let mut agent = self.agent.lock();
            let (status, source) = decide_with_source(&facts, screen, agent.recognised);
            agent.recognised |=
                screen.is_some_and(|s| !matches!(s, Screen::Unknown | Screen::Starting));
            if let Some(v) = &verdict {
                self.note_screen(&mut agent, v);
            }
            agent.prompt = match verdict {
                Some(Verdict::Prompt(p)) if status == SessionStatus::Blocked => Some(p),
                _ => None,
            };
            (
                status,
                source,
                agent.prompt.as_ref().map(|p| p.prompt.clone()),
            )
        };
        let mut info = self.info.lock();
        let resets_at = facts.limited.flatten().or(facts.limit_shown.flatten());
        if info.ended
            || (info.status == status
                && info.prompt == prompt
                && info.resets_at == resets_at
                && info.status_source == source)
        {
            return None;
        }
        info.status = status;
        info.status_source = source;
        info.prompt = prompt;
        info.resets_at = resets_at;
        Some(info.clone())
    }
}

impl SessionEntry {
    /// Records the end of the session's process: its status (`exited`, decided like any
    /// other) and how it ended are written together, so that no reader sees a session
    /// `exited` but not `ended`. Returns the info the first time only.
    pub(crate) fn record_exit(&self, exit: &crate::session::ExitInfo) -> Option<SessionInfo> {
        let mut facts = self.facts.lock();
        facts.apply(Fact::Exited);
        let status = decide(&facts, None, self.agent.lock().recognised);
        self.agent.lock().prompt = None;
        let mut info = self.info.lock();
        if info.ended {
            return None;
        }
        info.status = status;
        info.prompt = None;
        info.ended = true;
        info.exit_code = exit.code;
        info.signal = exit.signal.clone();
        info.ended_at = Some(super::now_ms());
        Some(info.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::SessionStatus::*;
    use super::*;
    use std::time::Instant;

    fn facts(interactive: bool, activity: Activity) -> Facts {
        Facts {
            activity,
            ..Facts::started(interactive)
        }
    }

    #[test]
    fn decides_from_facts_and_screen() {
        let t = Instant::now();
        let silent = Activity::Silent;
        let active = Activity::Active { since: t };
        let quiet = Activity::Quiet { since: t };
        let paused = |activity| Facts {
            paused: true,
            ..facts(true, activity)
        };
        let exited = Facts {
            exited: true,
            paused: true,
            ..facts(true, quiet)
        };
        use Screen as S;
        #[rustfmt::skip]
        let table: &[(&str, Facts, Option<Screen>, bool, SessionStatus)] = &[
            // A program that printed nothing yet is starting; a command is busy at once.
            ("interactive, silent", facts(true, silent), None, false, Starting),
            ("command, silent", facts(false, silent), None, false, Busy),
            // Output arriving is busy, whatever the last screen showed.
            ("interactive, active", facts(true, active), None, true, Busy),
            ("active over a prompt", facts(true, active), Some(S::Prompt), true, Busy),
            ("command, active", facts(false, active), None, false, Busy),
            // Quiet: the screen decides; without patterns an interactive program is ready.
            ("quiet, no patterns", facts(true, quiet), None, false, Ready),
            ("quiet, input prompt", facts(true, quiet), Some(S::Ready), false, Ready),
            ("quiet, prompt", facts(true, quiet), Some(S::Prompt), false, Blocked),
            ("quiet, busy indicator", facts(true, quiet), Some(S::Busy), true, Busy),
            ("quiet, unknown, never recognised", facts(true, quiet), Some(S::Unknown), false, Starting),
            ("quiet, input prompt before the CLI is done starting", facts(true, quiet), Some(S::Starting), true, Starting),
            ("quiet, unknown, recognised before", facts(true, quiet), Some(S::Unknown), true, Ready),
            // A command is never ready, quiet or not; only a prompt it shows blocks it.
            ("command, quiet", facts(false, quiet), None, false, Busy),
            ("command, quiet, input prompt", facts(false, quiet), Some(S::Ready), true, Busy),
            ("command, quiet, prompt", facts(false, quiet), Some(S::Prompt), true, Blocked),
            // Stopped: paused whatever the output did; ended: exited.
            ("paused while quiet", paused(quiet), Some(S::Prompt), true, Paused),
            ("paused while active", paused(active), None, true, Paused),
            ("paused before output", paused(silent), None, false, Paused),
            ("exited", exited, Some(S::Ready), true, Exited),
            ("restored", Facts::ended(), None, false, Exited),
            // Limited: whatever its screen does, until input is given again; paused first.
            ("limited, retrying", Facts { limited: Some(None), ..facts(true, active) }, None, true, Limited),
            ("limited, at its prompt", Facts { limited: Some(Some(1)), ..facts(true, quiet) }, Some(S::Ready), true, Limited),
            ("waiting out a limit on screen, redrawing", Facts { limit_shown: Some(Some(1)), ..facts(true, active) }, None, true, Limited),
            ("waiting out a limit on screen, its hook says busy", Facts { limit_shown: Some(None), hook: Some(HookStatus::Busy), ..facts(true, quiet) }, Some(S::Busy), true, Limited),
            ("limited and paused", Facts { limited: Some(None), ..paused(quiet) }, None, true, Paused),
        ];
        for (name, facts, screen, recognised, want) in table {
            assert_eq!(decide(facts, *screen, *recognised), *want, "{name}");
        }
    }

    #[test]
    fn hook_events_come_before_the_screen() {
        let t = Instant::now();
        let quiet = Activity::Quiet { since: t };
        let active = Activity::Active { since: t };
        let hooked = |h, activity| Facts {
            hook: Some(h),
            ..facts(true, activity)
        };
        use HookStatus as H;
        use Screen as S;
        use StatusSource::{Hook, Screen as ByScreen};
        #[rustfmt::skip]
        type Decided = (SessionStatus, StatusSource);
        let table: &[(&str, Facts, Option<Screen>, Decided)] = &[
            (
                "busy by hook over a quiet input prompt",
                hooked(H::Busy, quiet),
                Some(S::Ready),
                (Busy, Hook),
            ),
            (
                "ready by hook while output still comes",
                hooked(H::Ready, active),
                None,
                (Ready, Hook),
            ),
            (
                "blocked by hook before the prompt is drawn",
                hooked(H::Blocked, active),
                Some(S::Unknown),
                (Blocked, Hook),
            ),
            (
                "a prompt no hook reported blocks a busy agent",
                hooked(H::Busy, quiet),
                Some(S::Prompt),
                (Blocked, ByScreen),
            ),
            (
                "no hook event: the screen",
                facts(true, quiet),
                Some(S::Busy),
                (Busy, ByScreen),
            ),
            (
                "paused over a hook",
                Facts {
                    paused: true,
                    ..hooked(H::Busy, quiet)
                },
                None,
                (Paused, ByScreen),
            ),
            (
                "exited over a hook",
                Facts {
                    exited: true,
                    ..hooked(H::Ready, quiet)
                },
                None,
                (Exited, ByScreen),
            ),
        ];
        for (name, facts, screen, want) in table {
            assert_eq!(decide_with_source(facts, *screen, true), *want, "{name}");
        }
        let mut f = hooked(H::Blocked, active);
        assert!(
            f.reads_screen(),
            "a hook's permission prompt is read for its options"
        );
        f.apply(Fact::Hook(None));
        assert!(!f.reads_screen());
        assert_eq!(decide_with_source(&f, None, true), (Busy, ByScreen));
    }

    #[test]
    fn facts_follow_the_runtime_reports() {
        let t = Instant::now();
        let mut f = Facts::started(true);
        assert!(!f.reads_screen());
        f.apply(Fact::Activity(Activity::Quiet { since: t }));
        assert!(f.reads_screen(), "a quiet screen is read");
        f.apply(Fact::Paused(true));
        assert!(!f.reads_screen());
        assert_eq!(decide(&f, None, false), Paused);
        f.apply(Fact::Paused(false));
        assert_eq!(
            decide(&f, None, false),
            Ready,
            "continued: back to what it shows"
        );
        f.apply(Fact::Exited);
        assert_eq!(decide(&f, None, false), Exited);
    }

    #[test]
    fn startup_quiet_is_long() {
        assert_eq!(startup_quiet(Duration::from_millis(200)), STARTUP_QUIET);
        assert_eq!(
            startup_quiet(Duration::from_secs(1)),
            Duration::from_secs(20)
        );
    }

    #[test]
    fn serde_lowercase() {
        assert_eq!(serde_json::to_string(&Blocked).unwrap(), "\"blocked\"");
        assert_eq!(Paused.to_string(), "paused");
    }
}
