//! The bottom bar: the keys that work here, a notice, or the filter, message or search being typed.

use super::*;
use crate::app::MessageTo;
use crate::text_edit::LineEdit;

/// How the bar writes a key.
fn key_style() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

impl App {
    pub(super) fn draw_bottom(&self, frame: &mut Frame, area: Rect) {
        match &self.modal {
            Modal::Filter(edit) => return self.draw_filter_line(frame, area, edit),
            Modal::Search(edit) => return self.draw_search_line(frame, area, edit),
            Modal::Message { to, name, edit } => {
                return self.draw_message_line(frame, area, to, name, edit);
            }
            _ => {}
        }
        if let Some(n) = self.notice() {
            let style = match n.level {
                Level::Error => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                Level::Info => Style::default().fg(Color::Green),
            };
            frame.render_widget(
                Paragraph::new(Line::from(Span::styled(format!(" {}", n.text), style))),
                area,
            );
            return;
        }
        self.draw_key_hints(frame, area);
    }

    /// The filter being typed, and its keys if they fit.
    fn draw_filter_line(&self, frame: &mut Frame, area: Rect, edit: &LineEdit) {
        let mut spans = vec![
            Span::styled("filter: ", key_style()),
            Span::raw(edit.text().to_string()),
        ];
        push_if_fits(
            &mut spans,
            area,
            format!("   {}", keys_inline(&self.keymap, Context::Filter)),
        );
        let line = Line::from(spans);
        frame.render_widget(Paragraph::new(line), area);
        place_edit_cursor(frame, area, 8, edit);
    }

    /// The search being typed in a transcript, which match is shown of how many, and its keys.
    fn draw_search_line(&self, frame: &mut Frame, area: Rect, edit: &LineEdit) {
        let found = match self.shown_transcript() {
            Some(_) if edit.text().is_empty() => String::new(),
            Some(t) => match t.current() {
                Some(c) => format!("  {}/{}", c + 1, t.matches().len()),
                None => "  no match".to_string(),
            },
            None => "  reading…".to_string(),
        };
        let line = Line::from(vec![
            Span::styled("search: ", key_style()),
            Span::raw(edit.text().to_string()),
            Span::styled(found, Style::default().fg(Color::Yellow)),
            Span::styled(
                format!("   {}", keys_inline(&self.keymap, Context::Search)),
                Style::default().fg(Color::DarkGray),
            ),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        place_edit_cursor(frame, area, 8, edit);
    }

    /// The one-line message being typed (to an agent, or to continue a task with), and its
    /// keys if they fit.
    fn draw_message_line(
        &self,
        frame: &mut Frame,
        area: Rect,
        to: &MessageTo,
        name: &str,
        edit: &LineEdit,
    ) {
        let name = fit(name, 20);
        let prefix = match to {
            MessageTo::Session(_) => format!("message to {}: ", name.trim_end()),
            MessageTo::Continue(_) => {
                format!("continue {} with (empty: carry on): ", name.trim_end())
            }
        };
        let pw = prefix.width() as u16;
        let mut spans = vec![
            Span::styled(prefix, key_style()),
            Span::raw(edit.text().to_string()),
        ];
        push_if_fits(
            &mut spans,
            area,
            format!("   {}", keys_inline(&self.keymap, Context::Message)),
        );
        let line = Line::from(spans);
        frame.render_widget(Paragraph::new(line), area);
        place_edit_cursor(frame, area, pw, edit);
    }

    /// The keys that work here, as many as fit, most important first; where `?` works it
    /// always shows.
    fn draw_key_hints(&self, frame: &mut Frame, area: Rect) {
        let key = key_style();
        let dim = Style::default().fg(Color::DarkGray);
        let ctx = self.key_context();
        let hints = self.key_hints(ctx);
        let help = self.keymap.key_for(ctx, Action::Help);
        let mut spans = vec![Span::raw(" ")];
        let reserve = help.as_ref().map_or(0, |k| k.width() + 7);
        let budget = (area.width as usize).saturating_sub(reserve);
        let mut used = 1;
        let mut all = true;
        for (k, what) in &hints {
            let w = k.width() + what.width() + 3;
            if used + w > budget {
                all = false;
                break;
            }
            used += w;
            if !k.is_empty() {
                spans.push(Span::styled(k.clone(), key));
                spans.push(Span::raw(" "));
            }
            spans.push(Span::styled(*what, dim));
            spans.push(Span::raw("  "));
        }
        if let Some(h) = help {
            spans.push(Span::styled(h, key));
            spans.push(Span::styled(if all { " help" } else { " more" }, dim));
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
    }

    /// The hints for `ctx`, most important first: a shown prompt's answer keys (they are
    /// what is needed now), then the bar's keys from the key map.
    fn key_hints(&self, ctx: Context) -> Vec<(String, &'static str)> {
        let mut hints: Vec<(String, &'static str)> = Vec::new();
        if matches!(ctx, Context::Tasks | Context::Steps | Context::Terminal)
            && let Some(p) = self.shown_prompt()
        {
            match p.keys_hint() {
                Some(keys) => hints.push((keys, "answer")),
                None => hints.push(("Enter".into(), "answer in the terminal")),
            }
        }
        match &self.modal {
            Modal::Form(f) if f.editing.is_some() => hints.extend(self.keymap.edit_form_bar()),
            Modal::Confirm(c) if !c.asks_about_children() => {
                // `o` answers only a question about a task's children.
                let only_this = self.keymap.key_for(ctx, Action::OnlyThis);
                hints.extend(
                    self.keymap
                        .bar(ctx)
                        .into_iter()
                        .filter(|(k, _)| Some(k) != only_this.as_ref()),
                );
            }
            _ if ctx == Context::Diff => {
                // A comparison of variants picks; a diff merges or discards.
                let comparing = self.diff_view().is_some_and(|v| v.compare.is_some());
                hints.extend(self.keymap.bar(ctx).into_iter().filter(|(_, what)| {
                    let compare_only = matches!(*what, "variants" | "pick");
                    let diff_only = matches!(*what, "merge" | "discard");
                    if comparing { !diff_only } else { !compare_only }
                }))
            }
            _ => hints.extend(self.keymap.bar(ctx)),
        }
        if ctx == Context::Typing
            && let Some(note) = ctx.note()
        {
            hints.push((String::new(), note));
        }
        hints
    }
}
