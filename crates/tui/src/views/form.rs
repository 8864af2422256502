//! Drawing the task form (new task, or editing a pending one).

use super::{centered, clear_overlay, first_fitting, fit, keys_inline};
use crate::form::{Field, Form};
use crate::form_choices as choices;
use crate::keymap::{Action, Context, KeyMap};
use crate::text_edit::LineEdit;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

/// The form's height with a one-row description, before the compact settings.
const BASE_HEIGHT: u16 = 17;
/// The most rows the checks take before they scroll.
const MAX_CHECK_ROWS: usize = 3;
/// The most rows the description grows to before it scrolls.
const MAX_DESCRIPTION_ROWS: usize = 10;
/// Width of the label column.
const LABEL_W: usize = 13;

/// How many rows the description may take in an `area` this tall: it grows while the form
/// still fits, leaving a line of the screen around it.
fn description_rows_max(area: Rect) -> usize {
    (area.height.saturating_sub(BASE_HEIGHT + 1) as usize + 1).clamp(1, MAX_DESCRIPTION_ROWS)
}

/// The rows of an editor to show (at most `max`, keeping the cursor in view), the cursor's
/// place among them, and how many rows are hidden above and below.
fn window(
    edit: &LineEdit,
    width: usize,
    max: usize,
) -> (Vec<String>, (usize, usize), usize, usize) {
    let (rows, (cr, cc)) = edit.rows(width);
    let top = (cr + 1).saturating_sub(max);
    let shown: Vec<String> = rows.iter().skip(top).take(max).cloned().collect();
    let below = rows.len() - top - shown.len();
    (shown, (cr - top, cc), top, below)
}

/// Draws the task form over `area`: its fields, each with its error or hint (a compact
/// choice on one row), and a footer. Taller than `area`, it scrolls to the focused field.
pub fn draw_form(frame: &mut Frame, area: Rect, f: &Form, keys: &KeyMap) {
    let max_rows = description_rows_max(area);
    let width = centered(area, 72, 1).width;
    let field_w = ((width.saturating_sub(2) as usize).saturating_sub(LABEL_W + 1)).max(1);
    let mut lines: Vec<Line> = Vec::new();
    let mut cursor: Option<(usize, usize)> = None;
    let mut focus = (0, 0);
    for field in f.fields() {
        let max = match field {
            Field::Description => max_rows,
            Field::Checks => MAX_CHECK_ROWS,
            _ => 1,
        };
        let top = lines.len();
        let (rows, at) = field_lines(f, field, field_w, max);
        if let Some((cr, cc)) = at {
            cursor = Some((top + cr, LABEL_W + cc));
        }
        lines.extend(rows);
        if !field.is_compact() {
            lines.push(field_note(f, field, field_w));
        }
        if field == f.field {
            focus = (top, lines.len());
        }
    }
    if f.fields().last().is_some_and(|l| l.is_compact()) {
        lines.push(Line::from(""));
    }
    lines.push(Line::from(footer(f, field_w + LABEL_W)));
    // A row for a message that wraps, two for the border.
    let r = centered(area, 72, lines.len() as u16 + 3);
    clear_overlay(frame, r);
    let block = form_block(f, keys, r.width);
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let shown = inner.height as usize;
    let scroll = focus.1.saturating_sub(shown).min(focus.0);
    // Long messages wrap onto the lines left below.
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .scroll((scroll as u16, 0)),
        inner,
    );
    if let Some((row, col)) = cursor
        && row >= scroll
    {
        let p = Position::new(inner.x + col as u16, inner.y + (row - scroll) as u16);
        if inner.contains(p) {
            frame.set_cursor_position(p);
        }
    }
}

/// The form's frame: "New task" or "Edit task", and its keys at the bottom (as many as fit
/// in `width`).
fn form_block(f: &Form, keys: &KeyMap, width: u16) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::Cyan))
        .title(Line::from(Span::styled(
            if f.editing.is_some() {
                " Edit task "
            } else {
                " New task "
            },
            Style::default().add_modifier(Modifier::BOLD),
        )))
        .title_bottom(
            Line::from(if f.editing.is_some() {
                format!(
                    " {} save · {} cancel ",
                    keys.key_for(Context::Form, Action::FormSubmit)
                        .unwrap_or_default(),
                    keys.key_for(Context::Form, Action::FormCancel)
                        .unwrap_or_default()
                )
            } else {
                first_fitting(
                    &[
                        format!(" {} ", keys_inline(keys, Context::Form)),
                        format!(
                            " {} create · {} cancel ",
                            keys.key_for(Context::Form, Action::FormSubmit)
                                .unwrap_or_default(),
                            keys.key_for(Context::Form, Action::FormCancel)
                                .unwrap_or_default()
                        ),
                    ],
                    width.saturating_sub(4) as usize,
                )
            })
            .right_aligned(),
        )
}

/// A field's rows, its label before the first: a text field's (at most `max`, scrolled to
/// its cursor), or a choice's one. For the active text field, also the cursor's row and
/// column among them.
fn field_lines(
    f: &Form,
    field: Field,
    field_w: usize,
    max: usize,
) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
    let dim = Style::default().fg(Color::DarkGray);
    let active = f.field == field;
    let lstyle = if active {
        Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().fg(Color::Gray)
    };
    let marker = if active { "›" } else { " " };
    let label = Span::styled(
        format!("{marker}{:<w$}", field.label(), w = LABEL_W - 1),
        lstyle,
    );
    let input_style = if active {
        Style::default().add_modifier(Modifier::UNDERLINED)
    } else {
        Style::default()
    };
    let choice = |text: String, hint: &str| {
        let mut spans = vec![label.clone(), Span::styled(text, input_style)];
        if active {
            spans.push(Span::styled(format!("  {hint}"), dim));
        }
        (vec![Line::from(spans)], None)
    };
    match field {
        Field::Approval => {
            return choice(
                format!("‹ {} ›", choices::approval_text(f.approval())),
                "←/→ manual · safe · auto",
            );
        }
        Field::Isolation => {
            let text = match f.isolation() {
                Some(i) => choices::isolation_word(i).to_string(),
                None => format!(
                    "default ({})",
                    choices::isolation_word(f.isolation_resolved())
                ),
            };
            return choice(format!("‹ {text} ›"), "←/→ worktree · none");
        }
        Field::MaxAttempts => {
            return choice(
                format!("‹ {} ›", choices::max_attempts_text(f.max_attempts)),
                "←/→ how often failed checks go back",
            );
        }
        Field::Variants => {
            let at = f.providers.get(f.variant_at);
            let mark = if f.chosen.get(f.variant_at).copied().unwrap_or(false) {
                "[x]"
            } else {
                "[ ]"
            };
            let chosen: Vec<&str> = f
                .providers
                .iter()
                .zip(&f.chosen)
                .filter(|(_, on)| **on)
                .map(|(p, _)| p.id.as_str())
                .collect();
            let list = if chosen.is_empty() {
                "none: one agent".to_string()
            } else {
                format!("race {}", chosen.join(", "))
            };
            let text = format!(
                "‹ {mark} {} › {list}",
                at.map(|p| p.id.as_str()).unwrap_or_default()
            );
            return choice(
                fit(&text, field_w.saturating_sub(if active { 14 } else { 0 })),
                "←/→ space",
            );
        }
        _ => {}
    }
    match field {
        Field::Name | Field::Description | Field::Directory | Field::BaseRef | Field::Checks => {
            let edit = match field {
                Field::Name => &f.name,
                Field::Description => &f.description,
                Field::BaseRef => &f.base_ref,
                Field::Checks => &f.checks,
                _ => &f.dir,
            };
            // An empty setting says what it gets by default.
            if !active && edit.text().is_empty() && field.is_compact() {
                let default = match field {
                    Field::BaseRef => "default (the checked-out branch)",
                    _ => "none (the agent's word decides)",
                };
                return (
                    vec![Line::from(vec![label, Span::styled(default, dim)])],
                    None,
                );
            }
            let (rows, (cr, cc), above, below) = window(edit, field_w, max);
            let lines = rows
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    // Under the label: how much of a scrolled description is out of view.
                    let side = match i {
                        0 => label.clone(),
                        1 if above + below > 0 => Span::styled(
                            format!("{:<w$}", format!(" ↑{above} ↓{below}"), w = LABEL_W),
                            dim,
                        ),
                        _ => Span::raw(" ".repeat(LABEL_W)),
                    };
                    Line::from(vec![side, Span::styled(fit(row, field_w), input_style)])
                })
                .collect();
            (lines, active.then_some((cr, cc)))
        }
        Field::Provider => {
            let (text, style) = match f.provider() {
                Some(p) if p.installed => (format!("‹ {} ({}) ›", p.name, p.id), input_style),
                Some(p) => (
                    format!("‹ {} ({}) — not installed ›", p.name, p.id),
                    input_style.fg(Color::Red),
                ),
                None => ("no provider is known".to_string(), input_style),
            };
            let mut spans = vec![label, Span::styled(text, style)];
            if active {
                spans.push(Span::styled("  ←/→ choose", dim));
            }
            (vec![Line::from(spans)], None)
        }
        Field::StartNow
        | Field::Delegate
        | Field::Approval
        | Field::Isolation
        | Field::MaxAttempts
        | Field::Variants => {
            let on = if field == Field::StartNow {
                f.start_now
            } else {
                f.delegate
            };
            let (y, n) = if on { ("[y]", " n ") } else { (" y ", "[n]") };
            let mut spans = vec![label, Span::styled(format!("{y} yes  {n} no"), input_style)];
            if active {
                spans.push(Span::styled("  y/n or space", dim));
            }
            (vec![Line::from(spans)], None)
        }
    }
}

/// The line under a field: its error, else its hint, else blank.
fn field_note(f: &Form, field: Field, field_w: usize) -> Line<'static> {
    match (f.error_for(field), field_hint(f, field)) {
        (Some(e), _) => Line::from(Span::styled(
            format!("{:w$}⚠ {e}", "", w = LABEL_W),
            Style::default().fg(Color::Red),
        )),
        (None, Some(hint)) => Line::from(Span::styled(
            format!("{:w$}{}", "", fit(&hint, field_w), w = LABEL_W),
            Style::default().fg(Color::DarkGray),
        )),
        (None, None) => Line::from(""),
    }
}

/// The form's last line: the form's error, a note, what it is doing, or what the
/// description is for.
fn footer(f: &Form, width: usize) -> Span<'static> {
    // A compact field's error shows here (the focused one's first).
    let compact_error = f
        .errors
        .iter()
        .filter(|(field, _)| field.is_compact())
        .min_by_key(|(field, _)| *field != f.field)
        .map(|(field, e)| format!("⚠ {}: {e}", field.label()));
    if let Some(e) = &f.error {
        Span::styled(format!("⚠ {e}"), Style::default().fg(Color::Red))
    } else if let Some(e) = compact_error {
        Span::styled(e, Style::default().fg(Color::Red))
    } else if let Some(n) = &f.note {
        Span::styled(n.clone(), Style::default().fg(Color::Yellow))
    } else if f.busy {
        let doing = if f.editing.is_some() {
            "saving…"
        } else {
            "creating…"
        };
        Span::styled(doing, Style::default().fg(Color::Yellow))
    } else {
        let text = match f.field {
            Field::Checks => {
                "One command a line (Alt-Enter: a new line); all must pass in its worktree before it is completed."
            }
            Field::Variants => {
                "Best of N: two or more providers race the request, each in its own worktree; you pick one."
            }
            Field::BaseRef => "The branch its worktree starts from and merges into.",
            Field::Isolation => {
                "worktree: its own branch and checkout; none: the directory as it is."
            }
            Field::Approval => "How much its agent may do without asking you.",
            _ => "The description is the agent's first instruction (a shell runs it).",
        };
        Span::styled(fit(text, width), Style::default().fg(Color::DarkGray))
    }
}

/// A dim line under a field when it has no error: how to install a missing provider, or
/// that a shell needs no description.
fn field_hint(f: &Form, field: Field) -> Option<String> {
    let p = f.provider()?;
    match field {
        Field::Provider if !p.installed => Some(match &p.install {
            Some(how) => format!("install it with: {how}"),
            None => format!("{} is not on PATH", p.id),
        }),
        Field::Description if !f.description_required() && f.description.text().is_empty() => {
            Some(format!("optional: {} just starts without one", p.name))
        }
        Field::Delegate if f.delegate => {
            Some("its agent gets orchestra's MCP server: it can hand work to other agents".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_grows_then_scrolls_with_the_cursor() {
        let mut e = LineEdit::multi_line();
        e.insert_str("1\n2\n3\n4\n5");
        let (rows, cursor, above, below) = window(&e, 10, 3);
        assert_eq!(rows, ["3", "4", "5"]);
        assert_eq!((cursor, above, below), ((2, 1), 2, 0));
        for _ in 0..4 {
            e.handle(&crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Up,
            ));
        }
        let (rows, cursor, above, below) = window(&e, 10, 3);
        assert_eq!(rows, ["1", "2", "3"]);
        assert_eq!((cursor, above, below), ((0, 1), 0, 2));
        assert_eq!(description_rows_max(Rect::new(0, 0, 80, 24)), 7);
        assert_eq!(description_rows_max(Rect::new(0, 0, 50, 12)), 1);
        assert_eq!(description_rows_max(Rect::new(0, 0, 80, 18)), 1);
    }
}
