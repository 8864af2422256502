//! The top bar: orchestra's address, the counts, autopilot.

use super::*;
use crate::backend::Snapshot;

impl App {
    pub(super) fn draw_top(&self, frame: &mut Frame, area: Rect) {
        let snap = self.snapshot();
        let mut spans = vec![
            Span::styled(
                " orchestra ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            autopilot_badge(snap),
        ];
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
        spans.extend(status_counts(snap, area.width));
        push_address(&mut spans, snap, area.width);
        self.push_worktree_usage(&mut spans, area.width);
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
    }

    /// The disk task worktrees use, where it fits (`orchestra gc` frees it).
    fn push_worktree_usage(&self, spans: &mut Vec<Span<'static>>, width: u16) {
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
            if used + text.width() <= usize::from(width) {
                spans.push(Span::styled(text, Style::default().fg(Color::Magenta)));
            }
        }
    }
}

/// Whether autopilot is on. It only decides whether pending tasks start by themselves: with
/// it off, running tasks run on, and the badge says so.
fn autopilot_badge(snap: &Snapshot) -> Span<'static> {
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
    Span::styled(ap, ap_style)
}

/// The tasks of each status: with their names when everything fits in `width`, else
/// symbols and numbers only.
fn status_counts(snap: &Snapshot, width: u16) -> Vec<Span<'static>> {
    let url_w = snap.url.as_ref().map_or(0, |u| u.width() + 7);
    let wide_w: usize = TaskStatus::ALL
        .iter()
        .map(|st| st.as_str().len() + 6)
        .sum::<usize>()
        + 32
        + url_w;
    let wide = usize::from(width) >= wide_w;
    TaskStatus::ALL
        .into_iter()
        .map(|st| {
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
            Span::styled(text, style)
        })
        .collect()
}

/// Where orchestra is: gone, said in place of its URL, as much as fits (the rest of the
/// screen is its last known state); else the API's URL where it fits whole (a cut URL is no
/// use), its label if room.
fn push_address(spans: &mut Vec<Span<'static>>, snap: &Snapshot, width: u16) {
    if let Some(why) = &snap.offline {
        let used: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(width).saturating_sub(used + 2);
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
        let used: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(width).saturating_sub(used);
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
}
