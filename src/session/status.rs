//! The session status machine: pure, no I/O, no clock (the caller owns the settle timer).
//!
//! `Starting` → `Busy` on output → `Ready` once nothing arrived for the settle time (or
//! `Blocked` when a provider flagged a prompt) → `Busy` again when output changes the screen.
//! `Paused` while stopped (output drained meanwhile does not change it); `Exited` is final.
//!
//! `Ready` means waiting for input, which only an interactive program (a shell, a coding
//! agent) does. A program that is not (a command run by `exec`, `sleep 300`) is `Busy` from
//! its start for as long as it lives, quiet or not; only a flagged prompt makes it `Blocked`.

use serde::{Deserialize, Serialize};

/// What a session is doing, as far as its terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    Starting,
    Ready,
    Busy,
    Blocked,
    Paused,
    Exited,
}

impl SessionStatus {
    /// The lowercase name used in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Busy => "busy",
            Self::Blocked => "blocked",
            Self::Paused => "paused",
            Self::Exited => "exited",
        }
    }
}

impl std::fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status transitions. Every method returns the new status when it changed.
#[derive(Debug, Clone)]
pub struct StatusMachine {
    status: SessionStatus,
    blocked: bool,
    before_pause: SessionStatus,
    /// Whether the program waits for input when quiet (see the module's note).
    interactive: bool,
}

impl Default for StatusMachine {
    fn default() -> Self {
        Self::new(true)
    }
}

impl StatusMachine {
    /// The machine of a program that is `interactive` (waits for input) or not.
    pub fn new(interactive: bool) -> Self {
        let first = if interactive {
            SessionStatus::Starting
        } else {
            SessionStatus::Busy
        };
        Self {
            status: first,
            blocked: false,
            before_pause: first,
            interactive,
        }
    }

    pub fn status(&self) -> SessionStatus {
        self.status
    }

    /// Whether the caller should run the settle timer (a quiet period would change the status).
    pub fn needs_settle_timer(&self) -> bool {
        matches!(self.status, SessionStatus::Starting | SessionStatus::Busy)
            && self.idle_status() != self.status
    }

    fn set(&mut self, to: SessionStatus) -> Option<SessionStatus> {
        if self.status == to {
            None
        } else {
            self.status = to;
            Some(to)
        }
    }

    /// What a quiet period shows: a prompt, else waiting for input, else still working.
    fn idle_status(&self) -> SessionStatus {
        if self.blocked {
            SessionStatus::Blocked
        } else if self.interactive {
            SessionStatus::Ready
        } else {
            SessionStatus::Busy
        }
    }

    /// Output arrived. `screen_changed`: whether it changed what the screen shows (only
    /// consulted when idle, so a cursor blink or title update does not make it busy).
    pub fn on_output(&mut self, screen_changed: bool) -> Option<SessionStatus> {
        match self.status {
            SessionStatus::Starting => self.set(SessionStatus::Busy),
            SessionStatus::Ready | SessionStatus::Blocked if screen_changed => {
                self.set(SessionStatus::Busy)
            }
            _ => None,
        }
    }

    /// Nothing arrived for the settle time.
    pub fn on_settled(&mut self) -> Option<SessionStatus> {
        match self.status {
            SessionStatus::Starting | SessionStatus::Busy => self.set(self.idle_status()),
            _ => None,
        }
    }

    /// A provider recognised (or no longer sees) a prompt waiting for the user.
    pub fn set_blocked(&mut self, blocked: bool) -> Option<SessionStatus> {
        self.blocked = blocked;
        match self.status {
            SessionStatus::Ready | SessionStatus::Blocked => self.set(self.idle_status()),
            SessionStatus::Paused
                if matches!(
                    self.before_pause,
                    SessionStatus::Ready | SessionStatus::Blocked
                ) =>
            {
                self.before_pause = self.idle_status();
                None
            }
            _ => None,
        }
    }

    pub fn pause(&mut self) -> Option<SessionStatus> {
        match self.status {
            SessionStatus::Paused | SessionStatus::Exited => None,
            other => {
                self.before_pause = other;
                self.set(SessionStatus::Paused)
            }
        }
    }

    /// Back to what it was before the pause; output then moves it on as usual.
    pub fn resume(&mut self) -> Option<SessionStatus> {
        match self.status {
            SessionStatus::Paused => self.set(self.before_pause),
            _ => None,
        }
    }

    pub fn exit(&mut self) -> Option<SessionStatus> {
        self.set(SessionStatus::Exited)
    }
}

#[cfg(test)]
mod tests {
    use super::SessionStatus::*;
    use super::*;

    #[test]
    fn lifecycle() {
        let mut m = StatusMachine::default();
        assert_eq!(m.status(), Starting);
        assert!(m.needs_settle_timer());
        assert_eq!(m.on_output(true), Some(Busy));
        assert_eq!(m.on_output(true), None);
        assert_eq!(m.on_settled(), Some(Ready));
        assert!(!m.needs_settle_timer());
        assert_eq!(m.on_output(false), None, "unchanged screen stays ready");
        assert_eq!(m.on_output(true), Some(Busy));
        assert_eq!(m.on_settled(), Some(Ready));
        assert_eq!(m.exit(), Some(Exited));
        assert_eq!(m.on_output(true), None);
        assert_eq!(m.pause(), None);
    }

    #[test]
    fn silent_program_becomes_ready() {
        let mut m = StatusMachine::default();
        assert_eq!(m.on_settled(), Some(Ready));
    }

    #[test]
    fn blocked_overrides_ready() {
        let mut m = StatusMachine::default();
        m.on_output(true);
        assert_eq!(m.set_blocked(true), None, "busy stays busy");
        assert_eq!(m.on_settled(), Some(Blocked));
        assert_eq!(m.on_output(true), Some(Busy));
        assert_eq!(m.on_settled(), Some(Blocked));
        assert_eq!(m.set_blocked(false), Some(Ready));
        assert_eq!(m.set_blocked(true), Some(Blocked));
    }

    #[test]
    fn pause_and_resume() {
        let mut m = StatusMachine::default();
        m.on_output(true);
        m.on_settled();
        assert_eq!(m.pause(), Some(Paused));
        assert_eq!(m.on_output(true), None);
        assert_eq!(m.on_settled(), None);
        assert_eq!(m.pause(), None);
        assert_eq!(m.resume(), Some(Ready));
        assert_eq!(m.resume(), None);
    }

    #[test]
    fn a_program_that_is_not_interactive_is_busy_while_it_lives() {
        let mut m = StatusMachine::new(false);
        assert_eq!(m.status(), Busy, "busy from the start, even silent");
        assert!(!m.needs_settle_timer(), "no quiet period can make it ready");
        assert_eq!(m.on_settled(), None);
        assert_eq!(m.on_output(true), None);
        assert_eq!(m.on_settled(), None);
        assert_eq!(m.status(), Busy);
        // Paused and resumed, it is working again.
        assert_eq!(m.pause(), Some(Paused));
        assert_eq!(m.resume(), Some(Busy));
        // A prompt it shows still blocks it, once the screen is quiet.
        assert_eq!(m.set_blocked(true), None);
        assert!(m.needs_settle_timer());
        assert_eq!(m.on_settled(), Some(Blocked));
        assert_eq!(m.set_blocked(false), Some(Busy));
        assert!(!m.needs_settle_timer());
        assert_eq!(m.exit(), Some(Exited));
    }

    #[test]
    fn an_interactive_program_still_becomes_ready() {
        let mut m = StatusMachine::new(true);
        assert_eq!(m.status(), Starting);
        assert!(m.needs_settle_timer());
        assert_eq!(m.on_output(true), Some(Busy));
        assert!(m.needs_settle_timer());
        assert_eq!(m.on_settled(), Some(Ready));
    }

    #[test]
    fn serde_lowercase() {
        assert_eq!(serde_json::to_string(&Blocked).unwrap(), "\"blocked\"");
        assert_eq!(Paused.to_string(), "paused");
    }
}
