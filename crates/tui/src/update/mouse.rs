//! The mouse: clicks select and focus, the wheel scrolls (or goes to a full-screen program).

use crate::app::*;
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use orchestra_proto::keys::Key;
use ratatui::layout::{Position, Rect};

impl App {
    /// In the grid a click selects the tile under it and types into it, as a click in the
    /// terminal pane does; the wheel does nothing (tiles show live screens only).
    fn mouse_grid(&mut self, m: &MouseEvent, pos: Position) {
        if m.kind != MouseEventKind::Down(MouseButton::Left) {
            return;
        }
        let hit = self.grid.as_ref().and_then(|g| {
            g.page
                .tiles
                .iter()
                .find(|t| t.area.contains(pos))
                .map(|t| t.session_id.clone())
        });
        if let Some(sid) = hit {
            self.select_session(&sid);
            self.enter_terminal();
            self.dirty = true;
        }
    }

    pub fn on_mouse(&mut self, m: MouseEvent) {
        let Some(a) = self.areas else { return };
        if !matches!(self.modal, Modal::None) {
            return;
        }
        if self.review.diff.is_some() {
            self.mouse_diff(&m);
            return;
        }
        let pos = Position::new(m.column, m.row);
        if self.grid.is_some() {
            self.mouse_grid(&m, pos);
            return;
        }
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.dirty = true;
                if a.tasks.contains(pos) {
                    self.typing = false;
                    self.focus = Focus::Tasks;
                    let inner_y = a.tasks.y + 1;
                    if m.row >= inner_y && m.row < a.tasks.bottom().saturating_sub(1) {
                        let i = self.list_offset + usize::from(m.row - inner_y);
                        if self.rows.get(i).is_some_and(|r| !r.is_heading()) {
                            self.select_index(Some(i));
                        }
                    }
                } else if a.steps.contains(pos) {
                    self.typing = false;
                    self.focus = Focus::Steps;
                } else if a.term.contains(pos) {
                    if self.shown_session_live() {
                        self.enter_terminal();
                    } else {
                        self.typing = false;
                        self.focus = Focus::Terminal;
                    }
                }
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = m.kind == MouseEventKind::ScrollUp;
                if a.term.contains(pos) {
                    // A shown transcript scrolls itself; the agent gets the wheel otherwise.
                    if self.scroll.is_none()
                        && self.shown_transcript().is_none()
                        && self.wheel_to_agent(up, pos, a.term_inner)
                    {
                        return;
                    }
                    self.scroll_by(if up { 3 } else { -3 });
                } else if a.tasks.contains(pos) {
                    self.move_selection(if up { -1 } else { 1 });
                } else if a.steps.contains(pos) {
                    self.steps_scroll = if up {
                        self.steps_scroll.saturating_sub(1)
                    } else {
                        self.steps_scroll.saturating_add(1)
                    };
                    self.dirty = true;
                }
            }
            _ => {}
        }
    }

    /// A full-screen agent gets the wheel as a real terminal gives it: as mouse reports when
    /// it asked for the mouse, else as arrow keys on the alternate screen (xterm's
    /// alternateScroll). `false`: the wheel scrolls our scrollback instead.
    pub(crate) fn wheel_to_agent(&mut self, up: bool, pos: Position, inner: Rect) -> bool {
        if !self.shown_session_live() {
            return false;
        }
        let Some(sid) = self.shown_session_id() else {
            return false;
        };
        let Some(modes) = self.cockpit.input_modes(&sid) else {
            return false;
        };
        let (mode, encoding, alternate, app_cursor) = (
            modes.mouse_mode,
            modes.mouse_encoding,
            modes.alternate_screen,
            modes.application_cursor,
        );
        let bytes = if mode != vt100::MouseProtocolMode::None {
            let col = pos.x.saturating_sub(inner.x) + 1;
            let row = pos.y.saturating_sub(inner.y) + 1;
            let button = if up { 64 } else { 65 };
            if encoding == vt100::MouseProtocolEncoding::Sgr {
                format!("\x1b[<{button};{col};{row}M").into_bytes()
            } else {
                let c = |v: u16| (32 + v.min(223)) as u8;
                vec![0x1b, b'[', b'M', 32 + button as u8, c(col), c(row)]
            }
        } else if alternate {
            // The wheel scrolls a full-screen program as three arrow presses.
            use orchestra_proto::keys::KeyCode as Arrow;
            let arrow = Key::from(if up { Arrow::Up } else { Arrow::Down });
            arrow.encode(app_cursor).unwrap_or_default().repeat(3)
        } else {
            return false;
        };
        let _ = self.cockpit.write_input(&sid, bytes);
        true
    }
}
