//! Scrolling the shown terminal back and forward.

use crate::app::*;

impl App {
    pub(crate) fn scroll_page(&mut self, up: bool) {
        let n = self.page_rows() as isize;
        self.scroll_by(if up { n } else { -n });
    }

    /// Scrolls the terminal pane back (`delta` > 0) or forward; 0 back is the live view.
    pub fn scroll_by(&mut self, delta: isize) {
        self.dirty = true;
        if let Some(t) = self.shown_transcript_mut() {
            t.scroll_by(delta);
            return;
        }
        let Some(sid) = self.shown_session_id() else {
            return;
        };
        if self.scroll.as_ref().is_some_and(|s| s.session_id != sid) {
            self.scroll = None;
        }
        if self.scroll.is_none() {
            if delta <= 0 {
                return;
            }
            let mut copy: Option<vt100::Screen> = None;
            self.cockpit
                .with_screen(&sid, &mut |s| copy = Some(s.clone()));
            let Some(mut screen) = copy else { return };
            screen.set_scrollback(usize::MAX);
            let max = screen.scrollback();
            if max == 0 {
                if screen.alternate_screen() {
                    self.notify(
                        "no scrollback: the agent is a full-screen program",
                        Level::Info,
                    );
                } else {
                    // Nothing above the screen here (an attached terminal gets the screen
                    // only): what scrolled away is in the transcript, which scrolls.
                    self.toggle_transcript();
                }
                return;
            }
            self.scroll = Some(ScrollView {
                session_id: sid,
                screen,
                offset: 0,
                max,
                new_output: false,
            });
        }
        let view = self.scroll.as_mut().expect("set above");
        let offset = (view.offset as isize)
            .saturating_add(delta)
            .clamp(0, view.max as isize) as usize;
        if offset == 0 {
            self.scroll = None;
            return;
        }
        view.offset = offset;
        view.screen.set_scrollback(offset);
    }
}
