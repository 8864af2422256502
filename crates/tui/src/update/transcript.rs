//! The app's transcript view: loading a session's transcript into the terminal pane,
//! scrolling it, and searching it.

use crate::app::{App, Level, Modal, Origin};
use crate::backend::Command;
use crate::form::LineEdit;
use crate::keymap::Action;
use crate::transcript_view::{TRANSCRIPT_BYTES, Transcript};
use crossterm::event::KeyEvent;

impl App {
    /// The transcript the terminal pane shows, if any: it belongs to the shown session.
    pub fn shown_transcript(&self) -> Option<&Transcript> {
        let sid = self.shown_session_id()?;
        self.transcript.as_ref().filter(|t| t.session_id == sid)
    }

    pub(crate) fn shown_transcript_mut(&mut self) -> Option<&mut Transcript> {
        let sid = self.shown_session_id()?;
        self.transcript.as_mut().filter(|t| t.session_id == sid)
    }

    /// A transcript is being read for the shown session.
    pub fn transcript_loading(&self) -> bool {
        self.transcript_pending
            && self
                .shown_session_id()
                .is_some_and(|sid| self.transcript_requested.as_deref() == Some(sid.as_str()))
    }

    /// `t`: shows the shown session's whole transcript (or closes it when shown).
    pub(crate) fn toggle_transcript(&mut self) {
        if self.shown_transcript().is_some() {
            self.close_transcript();
            return;
        }
        match self.shown_session_id() {
            Some(sid) => {
                self.focus = crate::app::Focus::Terminal;
                self.request_transcript(sid);
            }
            None => self.notify(
                "no session here: nothing has run for this task",
                Level::Error,
            ),
        }
    }

    pub(crate) fn close_transcript(&mut self) {
        self.transcript = None;
        self.dirty = true;
    }

    fn request_transcript(&mut self, sid: String) {
        self.transcript_requested = Some(sid.clone());
        self.transcript_pending = true;
        self.run(Command::Transcript(sid), Origin::Transcript);
    }

    /// Before drawing: the shown transcript is replayed at the pane's size, and a session
    /// whose terminal is gone (it ran in an earlier orchestra) shows its transcript without
    /// being asked (it is read once per selection).
    pub(crate) fn prepare_transcript(&mut self) {
        if let Some(inner) = self.areas.map(|a| a.term_inner)
            && let Some(t) = self.shown_transcript_mut()
        {
            t.fit(inner.height, inner.width);
        }
        let Some(sid) = self.shown_session_id() else {
            return;
        };
        if !self.selected_session_info().is_some_and(|s| s.ended)
            || self.transcript_requested.as_deref() == Some(sid.as_str())
            || self.shown_transcript().is_some()
            || self.cockpit.with_screen(&sid, &mut |_| {})
        {
            return;
        }
        self.request_transcript(sid);
    }

    /// A transcript arrived: shown if its session still is.
    pub(crate) fn on_transcript(&mut self, session_id: String, bytes: Vec<u8>) {
        if self.transcript_requested.as_deref() == Some(session_id.as_str()) {
            self.transcript_pending = false;
        }
        if self.shown_session_id().as_deref() != Some(session_id.as_str()) {
            return;
        }
        let (cols, rows) = self
            .areas
            .map(|a| (a.term_inner.width, a.term_inner.height))
            .unwrap_or((120, 40));
        let truncated = bytes.len() >= TRANSCRIPT_BYTES;
        let mut t = Transcript::new(&session_id, bytes, truncated, rows, cols);
        if t.is_empty() {
            self.notify("the session printed nothing", Level::Info);
        }
        // A search typed while it was read applies now.
        if let Modal::Search(edit) = &self.modal {
            t.search(edit.text());
        }
        self.transcript = Some(t);
        self.scroll = None;
        self.dirty = true;
    }

    /// `/` over a transcript: opens the search line with the last query.
    pub(crate) fn open_search(&mut self) {
        let query = self
            .shown_transcript()
            .map(|t| t.query().to_string())
            .unwrap_or_default();
        self.open(Modal::Search(LineEdit::new(&query)));
    }

    /// A key while typing a search: the query is searched as it is typed.
    pub(crate) fn on_search_key(
        &mut self,
        action: Option<Action>,
        key: &KeyEvent,
        mut edit: LineEdit,
    ) -> Modal {
        match action {
            Some(Action::SearchDone) => return Modal::None,
            Some(Action::SearchNext) | Some(Action::SearchPrev) => {
                let forward = action == Some(Action::SearchNext);
                if let Some(t) = self.shown_transcript_mut() {
                    if t.query() != edit.text() {
                        t.search(edit.text());
                    } else {
                        t.step(forward);
                    }
                }
            }
            _ => {
                edit.handle(key);
                self.search_for(edit.text());
            }
        }
        Modal::Search(edit)
    }

    pub(crate) fn search_for(&mut self, query: &str) {
        if let Some(t) = self.shown_transcript_mut() {
            t.search(query);
        }
    }
}
