//! The y/n question overlay.

use super::*;

pub(super) fn draw_confirm(frame: &mut Frame, area: Rect, c: &Confirm) {
    let text = match c {
        Confirm::Cancel {
            name, children: 0, ..
        } => {
            format!("Cancel task {name:?}?\nIts agent is ended (TERM, then KILL).")
        }
        Confirm::Cancel { name, children, .. } => format!(
            "Cancel task {name:?} and its {children} unfinished child task{}?\nTheir agents are ended (TERM, then KILL). o cancels {name:?} alone.",
            plural(*children)
        ),
        Confirm::Family {
            op, name, children, ..
        } => format!(
            "{} task {name:?} and its {children} child task{} too?\no: {} {name:?} alone.",
            capitalised(op.verb()),
            plural(*children),
            op.verb()
        ),
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
        Confirm::Pick {
            name,
            variant,
            others,
            ..
        } => format!(
            "Pick {variant} for {name:?}?\n{variant} is merged into its base branch; {} {} discarded (each kept under its snapshot ref).",
            others.join(", "),
            if others.len() == 1 { "is" } else { "are" }
        ),
        Confirm::Discard {
            task_id,
            name,
            branch,
        } => format!(
            "Discard {name:?}?\nIts worktree and branch {branch} are removed; all its work, uncommitted too, is kept in {}.",
            orchestra_proto::worktree::snapshot_ref(task_id)
        ),
        Confirm::PullRequest {
            name,
            branch,
            base_branch,
            ..
        } => format!(
            "Open a pull request for {name:?}?\nWhat the agent left uncommitted is committed on {branch}, which is pushed to the repository's remote; gh (or glab) opens a pull request into {base_branch}. The worktree stays."
        ),
    };
    // Wide enough for a branch or ref where the screen allows, as tall as the text needs,
    // the y/n line below it.
    let width = match c {
        Confirm::Merge { .. }
        | Confirm::Discard { .. }
        | Confirm::PullRequest { .. }
        | Confirm::Pick { .. } => 64,
        _ => 50,
    };
    let text_rows = wrap_breaking(&text, usize::from(area.width.min(width).saturating_sub(2)));
    let r = centered(area, width, (text_rows.len() as u16 + 3).max(6));
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
    let mut lines: Vec<Line> = text_rows.into_iter().map(Line::from).collect();
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
    if c.asks_about_children()
        && let Some(l) = lines.last_mut()
    {
        {
            l.spans.push(Span::styled(
                "   o",
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            ));
            l.spans.push(Span::raw(" only this"));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Lines of at most `w` columns broken at spaces, a word longer than a line broken across
/// lines (a task's ref must be read whole, never cut).
fn wrap_breaking(text: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut broken = String::new();
    for (i, para) in text.split('\n').enumerate() {
        if i > 0 {
            broken.push('\n');
        }
        for (j, word) in para.split(' ').enumerate() {
            if j > 0 {
                broken.push(' ');
            }
            // A long word becomes pieces of `w` columns, each a word of its own.
            let mut used = 0;
            for ch in word.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                if used + cw > w {
                    broken.push(' ');
                    used = 0;
                }
                broken.push(ch);
                used += cw;
            }
        }
    }
    word_wrap(&broken, w)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_ref_is_broken_across_lines_never_cut() {
        let r = "refs/orchestra/snapshots/0123456789abcdef0123456789abcdef";
        let lines = wrap_breaking(&format!("kept in {r}."), 20);
        assert!(lines.iter().all(|l| l.width() <= 20), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), format!("keptin{r}."));
        assert_eq!(wrap_breaking("Stop?\nYes", 20), vec!["Stop?", "Yes"]);
    }
}
