//! The help overlay (`?`), drawn from the key map.

use super::*;

/// Every line of the help overlay in `width` columns with the default keys.
pub fn help_lines(width: usize) -> Vec<Line<'static>> {
    help_lines_for(width, &KeyMap::default())
}

/// Every line of the help overlay in `width` columns, drawn from the key map: a section per
/// context; a description too long for its column goes on under itself.
pub fn help_lines_for(width: usize, keys: &KeyMap) -> Vec<Line<'static>> {
    let head = Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    let key = Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(Color::DarkGray);
    let sections: Vec<(Context, Vec<(String, &str)>)> = Context::HELP_ORDER
        .iter()
        .map(|c| (*c, keys.help(*c)))
        .collect();
    // The keys column: as wide as the widest keys, but never more than a third of the width.
    let widest = sections
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(k, _)| k.width()))
        .max()
        .unwrap_or(0);
    let keys_w = (widest + 3).min(width / 3).max(6);
    let text_w = width.saturating_sub(keys_w).max(10);
    let mut lines = Vec::new();
    let note = |lines: &mut Vec<Line<'static>>, text: &str| {
        for l in word_wrap(text, width.saturating_sub(1)) {
            lines.push(Line::from(Span::styled(format!(" {l}"), dim)));
        }
    };
    for (ctx, rows) in sections {
        if !lines.is_empty() {
            lines.push(Line::from(""));
        }
        lines.push(Line::from(Span::styled(format!(" {}", ctx.title()), head)));
        for (keys, what) in rows {
            let mut keys = format!(" {keys}");
            if keys.width() + 1 > keys_w {
                // Keys wider than their column get a line of their own.
                lines.push(Line::from(Span::styled(keys, key)));
                keys = String::new();
            }
            for (i, part) in word_wrap(what, text_w).into_iter().enumerate() {
                let k = if i == 0 { keys.as_str() } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("{k:<keys_w$}"), key),
                    Span::raw(part),
                ]));
            }
        }
        if let Some(n) = ctx.note() {
            note(&mut lines, n);
        }
    }
    lines.push(Line::from(""));
    note(
        &mut lines,
        "Mouse: a click selects or focuses; the wheel scrolls",
    );
    note(
        &mut lines,
        "Marks: ! the agent waits for an answer · • finished while not selected",
    );
    let bound: String = keys.command_chars().into_iter().collect();
    note(
        &mut lines,
        &format!("Options on command keys: answer in the terminal ({bound})"),
    );
    lines
}

impl App {
    /// The help overlay: as many lines as fit, scrolled with ↑/↓; the frame says where.
    pub(super) fn draw_help(&mut self, frame: &mut Frame, area: Rect) {
        let w = area.width.min(80);
        let lines = help_lines_for(w.saturating_sub(2) as usize, &self.keymap);
        self.help_len = lines.len();
        let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2).max(3));
        let r = centered(area, w, h);
        clear_overlay(frame, r);
        let rows = r.height.saturating_sub(2) as usize;
        self.help_rows = rows;
        let max = lines.len().saturating_sub(rows);
        self.help_scroll = self.help_scroll.min(max);
        let close = self
            .keymap
            .key_for(Context::Help, Action::CloseHelp)
            .unwrap_or_default();
        let bottom = if max == 0 {
            format!(" {close} closes ")
        } else {
            format!(
                " {}–{} of {} · ↑/↓ scroll · {close} closes ",
                self.help_scroll + 1,
                (self.help_scroll + rows).min(lines.len()),
                lines.len()
            )
        };
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(Style::default().fg(Color::Cyan))
            .title(Line::from(Span::styled(
                " Keys ",
                Style::default().add_modifier(Modifier::BOLD),
            )))
            .title_bottom(Line::from(bottom).right_aligned());
        let inner = block.inner(r);
        frame.render_widget(block, r);
        frame.render_widget(
            Paragraph::new(lines).scroll((self.help_scroll as u16, 0)),
            inner,
        );
    }
}
