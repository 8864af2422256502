//! A session's status, decided in one place.
//!
//! The session runtime reports facts — output activity (silent, active, quiet since), paused,
//! exited — and the provider's screen patterns say what a quiet screen shows (a prompt, a
//! busy indicator, an input prompt). [`decide`] combines them; [`SessionEntry::record_fact`]
//! is the only writer of a session's `status` and `prompt` (`sessions/status_updates.rs` publishes
//! `session:status` and `session:prompt` for what it returns), and what the API and the TUI
//! read.
//! Hook events, when agents report through them (`hooks.rs`), come before the screen
//! patterns here: the status they set holds until the next hook event or until orchestra
//! types into the session; the screen still supplies a blocked session's prompt.
//!
//! What a watcher sees is decided whole, before anyone can see it ([`decide_prompted`]):
//! - a blocked session always carries what it waits on: the prompt read from its screen, or,
//!   while a hook said it asks and the dialog is not drawn yet, the hook's own words (options
//!   follow as soon as the screen shows them);
//! - a prompt the session's approval preset answers by itself is not waiting for anyone: the
//!   session is `busy` while orchestra answers it (`agents.rs`), never `blocked`.

use super::sessions::SessionEntry;
use crate::providers::patterns::{SeenPrompt, Verdict};
use crate::session::Activity;
use orchestra_proto::wire::{Prompt, PromptKind, SessionInfo};
pub use orchestra_proto::wire::{SessionStatus, StatusSource};
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookStatus {
    /// It took a request up, or ran a tool.
    Busy,
    /// It asks permission, in these words of its own (the session's prompt until the dialog
    /// is read from the screen).
    Blocked(String),
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
            && (self.activity.is_quiet() || matches!(self.hook, Some(HookStatus::Blocked(_))))
    }
}

/// One new fact from the session runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    match &facts.hook {
        Some(HookStatus::Busy) if prompt_shown => (SessionStatus::Blocked, StatusSource::Screen),
        Some(h) => (
            match h {
                HookStatus::Busy => SessionStatus::Busy,
                HookStatus::Blocked(_) => SessionStatus::Blocked,
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

/// A status decided with what a blocked session waits on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    pub status: SessionStatus,
    pub source: StatusSource,
    /// Set exactly when `status` is blocked: the prompt read from the screen or, its dialog
    /// not read yet, what the agent's hook said it asks (no options yet).
    pub prompt: Option<SeenPrompt>,
    /// A prompt on the screen that the session's preset answers: it is `busy` (orchestra
    /// answers it), not blocked.
    pub answer: Option<SeenPrompt>,
}

/// What the session waits on when its hook said it asks permission and no dialog is read
/// from the screen yet.
pub(crate) fn hook_prompt(asks: &str) -> SeenPrompt {
    let asks = asks.trim();
    SeenPrompt {
        prompt: Prompt {
            kind: PromptKind::Permission,
            text: if asks.is_empty() {
                HOOK_ASKS.to_string()
            } else {
                asks.to_string()
            },
            options: Vec::new(),
        },
        name: HOOK_PROMPT.into(),
        auto_answer: None,
        limit: None,
    }
}

/// The name of the prompt a hook's words make ([`hook_prompt`]).
pub(crate) const HOOK_PROMPT: &str = "permission its hook reported";

/// The words of a hook that said it asks permission without saying what for.
pub(crate) const HOOK_ASKS: &str = "The agent asks for permission (its dialog is not drawn yet)";

/// [`decide_with_source`] on what the screen shows (`verdict`), completed with what a blocked
/// session waits on; `answers_itself` says whether the preset answers a prompt on the screen
/// (then the session is busy: orchestra answers it, nobody else has to).
pub(crate) fn decide_prompted(
    facts: &Facts,
    verdict: Option<&Verdict>,
    recognised: bool,
    answers_itself: impl Fn(&SeenPrompt) -> bool,
) -> Decision {
    let (status, source) = decide_with_source(facts, verdict.map(Screen::of), recognised);
    let shown = match verdict {
        Some(Verdict::Prompt(p)) => Some(p),
        _ => None,
    };
    let decided = |status, source, prompt, answer| Decision {
        status,
        source,
        prompt,
        answer,
    };
    if status != SessionStatus::Blocked {
        return decided(status, source, None, None);
    }
    match shown {
        Some(p) if answers_itself(p) => decided(
            SessionStatus::Busy,
            StatusSource::Screen,
            None,
            Some(p.clone()),
        ),
        Some(p) => decided(status, source, Some(p.clone()), None),
        None => {
            let asks = match &facts.hook {
                Some(HookStatus::Blocked(asks)) => asks.as_str(),
                _ => "",
            };
            decided(status, source, Some(hook_prompt(asks)), None)
        }
    }
}

/// What [`SessionEntry::record_fact`] changed: the session as it is now, and whether its
/// status (with its source and reset time) and its prompt changed.
#[derive(Debug, Clone)]
pub(crate) struct Changed {
    pub info: SessionInfo,
    pub status: bool,
    pub prompt: bool,
    /// The screen showed a prompt that reports a usage limit, now recorded (when it resets,
    /// if it said): `limits.rs` carries the session on once it does.
    pub limit: Option<Option<i64>>,
}

impl SessionEntry {
    /// Records `fact`, decides the status again and writes it, with the prompt it is blocked
    /// on, into the session's info: the only writer of both. All under the facts lock, so
    /// that decisions are written in the order their facts came. A prompt the preset answers
    /// is kept for `agents.rs` to answer, the session busy meanwhile. Returns what changed
    /// (never once the session's end is recorded).
    pub(crate) fn record_fact(&self, fact: Fact) -> Option<Changed> {
        let mut facts = self.facts.lock();
        facts.apply(fact);
        let approval = self.info.lock().approval;
        let verdict = if facts.reads_screen() {
            self.classify_now()
        } else {
            None
        };
        // A prompt that reports a usage limit (Gemini CLI's "Usage limit reached … Keep
        // trying / Stop") is the limit's: limited from the moment it shows, never blocked.
        // Noticed once per time it shows: the answer given at the reset is typed while it is
        // still on the screen.
        let limit_prompt = match &verdict {
            Some(Verdict::Prompt(p)) => p.limit.clone(),
            _ => None,
        };
        let noticed = {
            let mut agent = self.agent.lock();
            let noticed = agent.limit_prompt_shown;
            if verdict.is_some() {
                agent.limit_prompt_shown = limit_prompt.is_some();
            }
            noticed
        };
        let limit = limit_prompt
            .filter(|_| !noticed && facts.limited.is_none())
            .map(|reset| {
                reset
                    .as_deref()
                    .and_then(|r| super::limits::reset_at(r, super::now_ms()))
            });
        if let Some(resets_at) = limit {
            facts.apply(Fact::Limited(resets_at));
        }
        let (decision, prompt) = {
            let mut agent = self.agent.lock();
            let decision = decide_prompted(&facts, verdict.as_ref(), agent.recognised, |p| {
                agent.answers_itself(p, approval).is_some()
            });
            let screen = verdict.as_ref().map(Screen::of);
            agent.recognised |=
                screen.is_some_and(|s| !matches!(s, Screen::Unknown | Screen::Starting));
            if let Some(v) = &verdict {
                self.note_screen(&mut agent, v);
            }
            agent.prompt = decision.prompt.clone();
            agent.answering = decision.answer.clone();
            let prompt = decision.prompt.as_ref().map(|p| p.prompt.clone());
            (decision, prompt)
        };
        let mut info = self.info.lock();
        let resets_at = facts.limited.flatten().or(facts.limit_shown.flatten());
        let status_changed = info.status != decision.status
            || info.resets_at != resets_at
            || info.status_source != decision.source;
        let prompt_changed = info.prompt != prompt;
        if info.ended || !(status_changed || prompt_changed || limit.is_some()) {
            return None;
        }
        info.status = decision.status;
        info.status_source = decision.source;
        info.prompt = prompt;
        info.resets_at = resets_at;
        Some(Changed {
            info: info.clone(),
            status: status_changed,
            prompt: prompt_changed,
            limit,
        })
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
        {
            let mut agent = self.agent.lock();
            agent.prompt = None;
            agent.answering = None;
        }
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
                hooked(H::Blocked("Permission to use Write".into()), active),
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
        let mut f = hooked(H::Blocked("Permission to use Write".into()), active);
        assert!(
            f.reads_screen(),
            "a hook's permission prompt is read for its options"
        );
        f.apply(Fact::Hook(None));
        assert!(!f.reads_screen());
        assert_eq!(decide_with_source(&f, None, true), (Busy, ByScreen));
    }

    fn seen(kind: PromptKind, text: &str, options: usize) -> SeenPrompt {
        SeenPrompt {
            prompt: Prompt {
                kind,
                text: text.into(),
                options: (1..=options)
                    .map(|n| orchestra_proto::wire::PromptOption {
                        key: n.to_string(),
                        label: format!("option {n}"),
                        keys: None,
                    })
                    .collect(),
            },
            name: text.into(),
            auto_answer: None,
            limit: None,
        }
    }

    /// Every combination of facts, screen and preset: a blocked session always carries what
    /// it waits on (the screen's prompt, with its options, over the hook's words), and a
    /// prompt the preset answers is never published as blocked.
    #[test]
    fn a_blocked_session_always_carries_its_prompt_and_never_one_answered_by_itself() {
        let t = Instant::now();
        let trust = seen(PromptKind::Trust, "Do you trust this folder?", 2);
        let permission = seen(
            PromptKind::Permission,
            "Do you want to create hello.txt?",
            3,
        );
        let verdicts = [
            None,
            Some(Verdict::Prompt(trust.clone())),
            Some(Verdict::Prompt(permission.clone())),
            Some(Verdict::Busy),
            Some(Verdict::Ready),
            Some(Verdict::Starting),
            Some(Verdict::Unknown),
        ];
        let hooks = [
            None,
            Some(HookStatus::Busy),
            Some(HookStatus::Blocked(String::new())),
            Some(HookStatus::Blocked(
                "Claude needs your permission to use Write".into(),
            )),
            Some(HookStatus::Ready),
        ];
        let activities = [
            Activity::Silent,
            Activity::Active { since: t },
            Activity::Quiet { since: t },
        ];
        // The preset answers nothing (manual), or the housekeeping prompt (safe, auto).
        let presets: [fn(&SeenPrompt) -> bool; 2] =
            [|_| false, |p| p.prompt.kind == PromptKind::Trust];
        let mut decided = 0;
        for interactive in [true, false] {
            for activity in activities {
                for (paused, exited, limited) in
                    (0..8).map(|b| (b & 1 != 0, b & 2 != 0, b & 4 != 0))
                {
                    for hook in &hooks {
                        let facts = Facts {
                            interactive,
                            activity,
                            paused,
                            exited,
                            limited: limited.then_some(None),
                            limit_shown: None,
                            hook: hook.clone(),
                        };
                        for verdict in &verdicts {
                            for recognised in [true, false] {
                                for answers in presets {
                                    let d = decide_prompted(
                                        &facts,
                                        verdict.as_ref(),
                                        recognised,
                                        answers,
                                    );
                                    let case = format!("{facts:?} {verdict:?} {recognised}: {d:?}");
                                    let blocked = d.status == Blocked;
                                    assert_eq!(blocked, d.prompt.is_some(), "{case}");
                                    if let Some(p) = &d.prompt {
                                        assert!(!p.prompt.text.trim().is_empty(), "{case}");
                                        assert!(!answers(p), "{case}");
                                        if let Some(Verdict::Prompt(shown)) = verdict {
                                            assert_eq!(p, shown, "{case}");
                                        }
                                    }
                                    if let Some(a) = &d.answer {
                                        assert!(answers(a) && d.status == Busy, "{case}");
                                        assert_eq!(verdict, &Some(Verdict::Prompt(a.clone())));
                                    }
                                    // Otherwise the decision is the status authority's own.
                                    let plain = decide_with_source(
                                        &facts,
                                        verdict.as_ref().map(Screen::of),
                                        recognised,
                                    );
                                    if d.answer.is_none() {
                                        assert_eq!((d.status, d.source), plain, "{case}");
                                    } else {
                                        assert_eq!(plain.0, Blocked, "{case}");
                                    }
                                    decided += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(decided, 2 * 3 * 8 * 5 * 7 * 2 * 2);
    }

    #[test]
    fn a_hook_blocks_with_its_words_until_the_dialog_is_read() {
        let t = Instant::now();
        let asked = Facts {
            hook: Some(HookStatus::Blocked(
                "Claude needs your permission to use Write".into(),
            )),
            ..facts(true, Activity::Active { since: t })
        };
        let never = |_: &SeenPrompt| false;
        let d = decide_prompted(&asked, None, true, never);
        assert_eq!((d.status, d.source), (Blocked, StatusSource::Hook));
        let p = d.prompt.expect("a prompt").prompt;
        assert_eq!(p.kind, PromptKind::Permission);
        assert_eq!(p.text, "Claude needs your permission to use Write");
        assert!(p.options.is_empty(), "{p:?}");
        // Drawn: its options, from the screen.
        let dialog = seen(
            PromptKind::Permission,
            "Do you want to create hello.txt?",
            3,
        );
        let shown = Verdict::Prompt(dialog.clone());
        let d = decide_prompted(&asked, Some(&shown), true, never);
        assert_eq!(d.prompt, Some(dialog));
        // A hook that said nothing of what it asks still leaves words to show.
        let silent = Facts {
            hook: Some(HookStatus::Blocked(String::new())),
            ..asked
        };
        let d = decide_prompted(&silent, None, true, never);
        assert_eq!(d.prompt.map(|p| p.prompt.text).as_deref(), Some(HOOK_ASKS));
    }

    #[test]
    fn a_prompt_the_preset_answers_is_busy_not_blocked() {
        let quiet = facts(
            true,
            Activity::Quiet {
                since: Instant::now(),
            },
        );
        let trust = Verdict::Prompt(seen(PromptKind::Trust, "Do you trust this folder?", 2));
        let d = decide_prompted(&quiet, Some(&trust), true, |_| true);
        assert_eq!((d.status, d.prompt.is_none()), (Busy, true));
        assert!(d.answer.is_some());
        // Once the preset no longer answers it (answered twice already): the user's.
        let d = decide_prompted(&quiet, Some(&trust), true, |_| false);
        assert_eq!((d.status, d.answer.is_none()), (Blocked, true));
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
