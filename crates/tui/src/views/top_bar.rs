//! The top bar: orchestra's address, the counts, autopilot.

use super::*;

impl App {
    pub(super) fn draw_top(&self, frame: &mut Frame, area: Rect) {
        let snap = self.snapshot();
        let mut spans = vec![Span::styled(
            " orchestra ",
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        )];
        // Autopilot only decides whether pending tasks start by themselves: with it off,
        // running tasks run on, and the badge says so.
        let running = snap
            .tasks
            .iter()
            .filter(|t| t.status() == TaskStatus::Running)
            .count();
        let off = if running > 0 {
            format!(" autopilot off · {running} running ")
        } else {
            " autopilot off ".to_string()
        };
        let (ap, ap_style) = if snap.autopilot {
            (
                " autopilot ON ".to_string(),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Green)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            (off, Style::default().fg(Color::Gray))
        };
        spans.push(Span::styled(ap, ap_style));
        // Agents that need the user, and the key that goes to the next one.
        if !self.waiting().is_empty() {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                format!(
                    " ⚑ {} waiting · {} ",
                    self.waiting().len(),
                    self.key(Action::NextWaiting)
                ),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        // Counts with their names when everything fits, else symbols and numbers only.
        let url_w = snap.url.as_ref().map_or(0, |u| u.width() + 7);
        let wide_w: usize = TaskStatus::ALL
            .iter()
            .map(|st| st.as_str().len() + 6)
            .sum::<usize>()
            + 32
            + url_w;
        let wide = usize::from(area.width) >= wide_w;
        for st in TaskStatus::ALL {
            let n = snap.tasks.iter().filter(|t| t.status() == st).count();
            let text = if wide {
                format!(" {} {} {}", status_symbol(st), n, st.as_str())
            } else {
                format!(" {}{}", status_symbol(st), n)
            };
            let mut style = Style::default().fg(status_color(st));
            if n == 0 {
                style = style.add_modifier(Modifier::DIM);
            }
            spans.push(Span::styled(text, style));
        }
        // Orchestra gone: say so in place of its URL, as much as fits (the rest of the
        // screen is its last known state).
        if let Some(why) = &snap.offline {
            let used: usize = spans.iter().map(Span::width).sum();
            let room = usize::from(area.width).saturating_sub(used + 2);
            let text: String = why.chars().take(room).collect();
            spans.push(Span::raw("  "));
            spans.push(Span::styled(
                text,
                Style::default()
                    .fg(Color::White)
                    .bg(Color::Red)
                    .add_modifier(Modifier::BOLD),
            ));
        } else if let Some(url) = &snap.url {
            // The API's URL where it fits whole (a cut URL is no use), its label if room.
            let used: usize = spans.iter().map(Span::width).sum();
            let room = usize::from(area.width).saturating_sub(used);
            if room >= url.width() + 7 {
                spans.push(Span::raw("   "));
                spans.push(Span::styled("API ", Style::default().fg(Color::DarkGray)));
            } else if room >= url.width() + 2 {
                spans.push(Span::raw("  "));
            }
            if room >= url.width() + 2 {
                spans.push(Span::styled(url.clone(), Style::default().fg(Color::Blue)));
            }
        }
        // The disk task worktrees use, where it fits (`orchestra gc` frees it).
        if let Some(u) = self
            .review
            .usage
            .as_ref()
            .filter(|u| !u.per_task.is_empty())
        {
            let n = u.per_task.len();
            let text = format!(
                "  {n} worktree{} {}",
                if n == 1 { "" } else { "s" },
                orchestra_proto::units::human_bytes(u.bytes)
            );
            let used: usize = spans.iter().map(Span::width).sum();
            if used + text.width() <= usize::from(area.width) {
                spans.push(Span::styled(text, Style::default().fg(Color::Magenta)));
            }
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
    }
}
