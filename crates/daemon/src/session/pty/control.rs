//! Steering a running session: its size (the parser's and the PTY's together), stopping and
//! continuing its whole process tree, and what it is doing (activity, the foreground reader).

use super::{PtySession, pty_err};
use crate::session::activity::Activity;
use crate::session::tree;
use crate::session::{Foreground, SessionError, line_input};
use nix::sys::signal::Signal;
use portable_pty::PtySize;

impl PtySession {
    /// Resizes the parser and the PTY together (the child gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), SessionError> {
        let (rows, cols) = (rows.max(1), cols.max(1));
        let mut term = self.shared.term.lock();
        term.resize(rows, cols);
        self.shared.visible.publish(term.screen(), true);
        let result = self.shared.master.lock().resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        });
        drop(term);
        self.shared.screen_changed();
        match result {
            Ok(()) => Ok(()),
            Err(_) if self.ensure_running().is_err() => Ok(()),
            Err(e) => Err(pty_err(e)),
        }
    }

    /// Stops the whole tree (SIGSTOP to the group and every other process of the session).
    pub fn pause(&self) -> Result<(), SessionError> {
        let mut st = self.shared.state.lock();
        if st.exit.is_some() {
            return Err(SessionError::Ended);
        }
        tree::signal_group(self.shared.pid, Signal::SIGSTOP);
        for pid in tree::session_tree(self.shared.query()) {
            tree::signal_pid(pid, Signal::SIGSTOP);
        }
        st.paused = true;
        Ok(())
    }

    /// Continues the whole tree (SIGCONT).
    pub fn resume(&self) -> Result<(), SessionError> {
        let mut st = self.shared.state.lock();
        if st.exit.is_some() {
            return Err(SessionError::Ended);
        }
        for pid in tree::session_tree(self.shared.query()) {
            tree::signal_pid(pid, Signal::SIGCONT);
        }
        tree::signal_group(self.shared.pid, Signal::SIGCONT);
        st.paused = false;
        Ok(())
    }

    /// Whether `pause` stopped the tree and no `resume` continued it since.
    pub fn is_paused(&self) -> bool {
        self.shared.state.lock().paused
    }

    /// What the output is doing (the last [`SessionEvent::Activity`] reported).
    pub fn activity(&self) -> Activity {
        self.shared.state.lock().activity
    }

    /// Writes what the transcript buffered to its file now, so a read of the file has every
    /// byte read so far (buffered bytes otherwise wait up to `transcript::FLUSH_EVERY`).
    pub fn flush_transcript(&self) {
        if let Some(t) = self.shared.transcript.lock().as_mut() {
            t.flush();
        }
    }

    /// Who has the terminal's keyboard: a process waiting for a typed line, a command the
    /// leader runs in the foreground, … (see [`line_input`](crate::session::line_input)); `None` once
    /// the session ended.
    pub fn foreground(&self) -> Option<Foreground> {
        self.ensure_running().ok()?;
        line_input::foreground(self.shared.fd, self.shared.pid)
    }
}
