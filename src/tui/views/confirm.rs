//! The y/n question overlay.

use super::*;

pub(super) fn draw_confirm(frame: &mut Frame, area: Rect, c: &Confirm) {
    let text = match c {
        Confirm::Cancel { name, .. } => {
            format!("Cancel task {name:?}?\nIts agent is ended (TERM, then KILL).")
        }
        Confirm::EndSession { name, .. } => {
            format!("End the session {name:?}?\nIts processes are ended (TERM, then KILL).")
        }
        Confirm::DeleteTask { name, .. } => {
            format!("Delete the task {name:?}?\nA copy is kept in the state directory's trash.")
        }
        Confirm::RemoveSession { name, .. } => format!(
            "Delete the ended session {name:?}?\nIts transcript is kept in the state directory's trash."
        ),
        Confirm::Stop { live: 0 } => "Stop orchestra?\nNo agent is running.".to_string(),
        Confirm::Stop { live } => format!(
            "Stop orchestra and end {live} running agent{}?\nTo leave them running, detach instead.",
            if *live == 1 { "" } else { "s" }
        ),
        Confirm::Merge {
            name,
            branch,
            base_branch,
            ..
        } => format!(
            "Merge {name:?} into {base_branch}?\nWhat the agent left uncommitted is committed on {branch}, which is merged into {base_branch}; then its worktree and branch are removed."
        ),
        Confirm::Discard {
            task_id,
            name,
            branch,
        } => format!(
            "Discard {name:?}?\nIts worktree and branch {branch} are removed; all its work, uncommitted too, is kept in {}.",
            crate::git::snapshot::snapshot_ref(task_id)
        ),
    };
    // As tall as the text needs (wrapped in the box), the y/n line below it.
    let text_rows = word_wrap(&text, usize::from(area.width.min(50).saturating_sub(2))).len();
    let r = centered(area, 50, (text_rows as u16 + 3).max(6));
    clear_overlay(frame, r);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::Yellow))
        .title(Line::from(Span::styled(
            " Confirm ",
            Style::default().add_modifier(Modifier::BOLD),
        )));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let mut lines: Vec<Line> = word_wrap(&text, usize::from(inner.width))
        .into_iter()
        .map(Line::from)
        .collect();
    lines.push(Line::from(vec![
        Span::styled(
            "y",
            Style::default()
                .fg(Color::Green)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(" yes   "),
        Span::styled(
            "n",
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" no"),
    ]));
    frame.render_widget(Paragraph::new(lines), inner);
}
