//! The terminal pane: the shown agent's screen, scrolled back or live, or its transcript.

use super::*;

/// The transcript's mark in the terminal pane's title: how long it is and where the view is,
/// shorter where the pane is narrow (at most `w` columns).
pub(super) fn transcript_title(t: &crate::transcript_view::Transcript, w: usize) -> String {
    let (place, short) = match t.offset() {
        0 => ("end".to_string(), "end".to_string()),
        n => (format!("{n} rows back"), format!("↑{n}")),
    };
    let cut = if t.truncated { " (its end)" } else { "" };
    first_fitting(
        &[
            format!(" transcript{cut} · {} rows · {place} ", t.len()),
            format!(" transcript · {short} "),
            format!(" {short} "),
        ],
        w,
    )
}

impl App {
    pub(super) fn draw_terminal(&self, frame: &mut Frame, area: Rect, inner: Rect) {
        let focused = self.focus == Focus::Terminal;
        let sid = self.shown_session_id();
        let (left, mark) = self.terminal_titles(area.width.saturating_sub(2) as usize);
        let mut pane = PaneFrame::new(Line::from(left), focused, self.typing);
        if let Some(t) = self.shown_transcript() {
            pane = pane.title_top(
                Line::from(Span::styled(
                    transcript_title(t, area.width.saturating_sub(2) as usize / 2),
                    Style::default()
                        .fg(Color::Black)
                        .bg(Color::LightCyan)
                        .add_modifier(Modifier::BOLD),
                ))
                .right_aligned(),
            );
        } else if let Some(mark) = mark {
            pane = pane.title_top(Line::from(mark).right_aligned());
        }
        pane.render(frame, area);
        let dim = Style::default().fg(Color::DarkGray);
        let Some(sid) = sid else {
            let text = match self.selected_task() {
                Some(t) if t.status() == TaskStatus::Pending => {
                    format!("No agent yet.\n\n{}.", sentence_case(&self.pending_hint()))
                }
                // Its agent starts once the question is answered: the question is all there is.
                Some(t) if t.metadata.prompt.is_some() && !t.status().is_final() => {
                    let p = self.shown_prompt();
                    let question = p.as_ref().map(|p| p.text.clone()).unwrap_or_default();
                    let options: Vec<String> = p
                        .iter()
                        .flat_map(|p| &p.options)
                        .map(|o| format!("  [{}] {}", o.key, o.label))
                        .collect();
                    let keys = p
                        .as_ref()
                        .and_then(|p| p.keys_hint())
                        .map(|k| format!("\n\nPress {k} to answer."))
                        .unwrap_or_default();
                    format!(
                        "No agent yet: the task waits for your answer.\n\n{question}\n\n{}{keys}",
                        options.join("\n")
                    )
                }
                Some(t) if t.awaits_trust() && !t.status().is_final() => {
                    "No agent yet: its repository's set-up runs first.".to_string()
                }
                Some(_) => "This task has no agent terminal.".to_string(),
                None => format!(
                    "Select a task, or press {} to create one.",
                    self.key(Action::NewTask)
                ),
            };
            frame.render_widget(
                Paragraph::new(text).style(dim).wrap(Wrap { trim: false }),
                inner,
            );
            return;
        };
        if let Some(t) = self.shown_transcript() {
            t.render(inner, frame.buffer_mut(), self.color);
            return;
        }
        if let Some(v) = &self.scroll {
            frame.render_widget(TermView::new(&v.screen).color(self.color), inner);
            return;
        }
        let mut cursor = None;
        let drawn = self.draw_live_screen(frame, &sid, inner, self.typing, &mut cursor);
        if !drawn {
            frame.render_widget(
                Paragraph::new(if self.transcript_loading() {
                    "The agent's terminal is gone (it ran in an earlier orchestra).\nReading its transcript…".to_string()
                } else {
                    format!(
                        "The agent's terminal is gone (it ran in an earlier orchestra).\nPress {} to read its transcript.",
                        self.keymap.key_for(self.pane_context(), Action::Transcript).unwrap_or_default()
                    )
                })
                    .style(dim)
                    .wrap(Wrap { trim: false }),
                inner,
            );
        }
        if let Some(p) = cursor {
            frame.set_cursor_position(p);
        }
    }

    /// The first key bound to `action` where the keyboard is now; under an overlay, the key
    /// of the pane behind it (pane hints stay true once the overlay closes).
    /// Draws session `sid`'s live screen into `inner` (the terminal pane, a grid tile), with
    /// where its cursor goes when the user types into it. `false`: no screen to draw yet.
    pub(super) fn draw_live_screen(
        &self,
        frame: &mut Frame,
        sid: &str,
        inner: Rect,
        typing: bool,
        cursor: &mut Option<Position>,
    ) -> bool {
        let color = self.color;
        self.cockpit.with_screen(sid, &mut |screen| {
            frame.render_widget(TermView::new(screen).color(color), inner);
            if typing && !screen.hide_cursor() {
                let (r, c) = screen.cursor_position();
                if r < inner.height && c < inner.width {
                    *cursor = Some(Position::new(inner.x + c, inner.y + r));
                }
            }
        })
    }

    pub(super) fn key(&self, action: Action) -> String {
        self.keymap
            .key_for(self.key_context(), action)
            .or_else(|| self.keymap.key_for(self.pane_context(), action))
            .unwrap_or_default()
    }

    /// The terminal pane's title in `width` columns: the typing badge (with the key that
    /// leaves, never cut), the scrolled-back mark (with the key that returns from where the
    /// keyboard is), then as much of `Terminal name · provider · status` as fits.
    pub(super) fn terminal_titles(
        &self,
        width: usize,
    ) -> (Vec<Span<'static>>, Option<Span<'static>>) {
        let marks = self.scroll_marks();
        let least_mark = marks.last().map_or(0, |m| m.width() + 1);
        // The typing badge first: the key that leaves is never cut.
        let badge = self.typing.then(|| {
            let leave = self.key(Action::LeaveTyping);
            first_fitting(
                &[
                    format!(" TYPING · {leave} leaves "),
                    format!(" TYPING · {leave} "),
                    format!(" {leave} leaves "),
                    format!(" {leave} "),
                ],
                width.saturating_sub(least_mark),
            )
        });
        let mut budget = width.saturating_sub(badge.as_ref().map_or(0, |b| b.width()));
        let mark = fit_scroll_mark(&marks, budget).map(|text| {
            budget = budget.saturating_sub(text.width() + 1);
            Span::styled(
                text,
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        });
        let badge = badge.map(|text| {
            Span::styled(
                text,
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            )
        });
        let mut left = self.terminal_name_title(budget);
        left.extend(badge);
        (left, mark)
    }

    /// The scrolled-back mark's texts, longest first; the last is the least that is still
    /// useful. None while the terminal shows its live end.
    fn scroll_marks(&self) -> Vec<String> {
        self.scroll
            .as_ref()
            .map(|v| {
                // Only a key that returns from where the keyboard is now (an overlay has none).
                let ctx = self.key_context();
                let back = match ctx {
                    Context::Typing => " · typing returns".to_string(),
                    _ => self
                        .keymap
                        .key_for(ctx, Action::Live)
                        .or_else(|| self.keymap.key_for(ctx, Action::Back))
                        .map(|k| format!(" · {k} returns"))
                        .unwrap_or_default(),
                };
                let n = v.offset;
                let (more, new) = if v.new_output {
                    (" · new output below", " · new")
                } else {
                    ("", "")
                };
                vec![
                    format!(" ↑ scrolled back {n} lines{more}{back} "),
                    format!(" ↑ {n} lines back{new}{back} "),
                    format!(" ↑{n}{back} "),
                    format!(" ↑{n} back "),
                ]
            })
            .unwrap_or_default()
    }

    /// `Terminal name · provider · status` in `budget` columns, as much of it as fits.
    fn terminal_name_title(&self, mut budget: usize) -> Vec<Span<'static>> {
        let mut left = Vec::new();
        if budget >= 10 {
            left.push(Span::styled(
                " Terminal ",
                Style::default().add_modifier(Modifier::BOLD),
            ));
            budget -= 10;
        }
        if let Some(s) = self.selected_session_info() {
            let status = if s.ended { "exited" } else { s.status.as_str() };
            let tail = format!(" · {} · {status} ", s.provider_id);
            let name = self.shown_name();
            let text = if name.width() + tail.width() <= budget {
                format!("{name}{tail}")
            } else if budget > tail.width() + 6 {
                format!("{}{tail}", fit(&name, budget - tail.width()))
            } else if budget > 6 {
                format!("{} ", fit(&name, budget - 1))
            } else {
                String::new()
            };
            if !text.is_empty() {
                left.push(Span::styled(text, Style::default().fg(Color::Gray)));
            }
        }
        left
    }
}

/// Which scrolled-back mark fits in `budget`: one naming its key, with room for the pane's
/// name if possible; the bare mark only when no mark with the key fits. `None` without
/// marks.
fn fit_scroll_mark(marks: &[String], budget: usize) -> Option<String> {
    if marks.is_empty() {
        return None;
    }
    let keyed = &marks[..marks.len() - 1];
    Some(
        keyed
            .iter()
            .find(|m| m.width() + 11 <= budget)
            .or_else(|| keyed.iter().find(|m| m.width() < budget))
            .cloned()
            .unwrap_or_else(|| first_fitting(&marks[marks.len() - 1..], budget.saturating_sub(1))),
    )
}
