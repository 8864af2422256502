//! The diff view (`d`): over the three panes, a worktree task's changed files with their
//! counts beside its coloured unified diff; a sentence when there is nothing to show; and a
//! merge or discard orchestra refused, in its words.

use super::*;
use crate::diff_view::{Body, DiffFile, DiffLine, DiffView, LineKind};

/// Narrower than this, the file list gives way to a line naming the current file.
const LIST_FROM_WIDTH: u16 = 72;

fn line_style(kind: LineKind) -> Style {
    match kind {
        LineKind::File => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        LineKind::Meta => Style::default().fg(Color::DarkGray),
        LineKind::Hunk => Style::default().fg(Color::Cyan),
        LineKind::Added => Style::default().fg(Color::Green),
        LineKind::Removed => Style::default().fg(Color::Red),
        LineKind::Context => Style::default(),
    }
}

/// `+12 −3`, or `binary`.
fn counts(f: &DiffFile) -> Vec<Span<'static>> {
    match (f.added, f.removed) {
        (Some(a), Some(r)) => vec![
            Span::styled(format!("+{a}"), Style::default().fg(Color::Green)),
            Span::raw(" "),
            Span::styled(format!("−{r}"), Style::default().fg(Color::Red)),
        ],
        _ => vec![Span::styled("binary", Style::default().fg(Color::DarkGray))],
    }
}

fn status_letter(status: &str) -> Span<'static> {
    let (c, color) = match status {
        "added" => ("A", Color::Green),
        "deleted" => ("D", Color::Red),
        // A comparison of two variants: who changed the file.
        "both" => ("◆", Color::Cyan),
        "left" => ("◀", Color::Blue),
        "right" => ("▶", Color::Magenta),
        _ => ("M", Color::Yellow),
    };
    Span::styled(c, Style::default().fg(color).add_modifier(Modifier::BOLD))
}

/// A path cut from the left to `w` columns (its file name matters most): `…/deep/name.rs`.
fn fit_path(path: &str, w: usize) -> String {
    if path.width() <= w {
        return fit(path, w);
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in path.chars().rev() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw > w {
            break;
        }
        kept.push(c);
        used += cw;
    }
    let cut: String = std::iter::once('…').chain(kept.into_iter().rev()).collect();
    fit(&cut, w)
}

/// One row of the file list, `w` columns: mark, status, path, counts.
fn file_row(f: &DiffFile, current: bool, w: usize) -> Line<'static> {
    let count_spans = counts(f);
    let count_w: usize = count_spans.iter().map(Span::width).sum();
    let path_w = w.saturating_sub(count_w + 5);
    let mut path_style = Style::default();
    if current {
        path_style = path_style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
    }
    let mut spans = vec![
        Span::raw(if current { "▸" } else { " " }),
        status_letter(&f.status),
        Span::raw(" "),
        Span::styled(fit_path(&f.path, path_w), path_style),
        Span::raw(" "),
    ];
    spans.extend(count_spans);
    Line::from(spans)
}

/// `s` without its first `cols` columns.
fn skip_cols(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        if used >= cols {
            return &s[i..];
        }
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
    }
    ""
}

/// The rows of the diff from line `top`, scrolled `left` columns, cut to `w`.
fn diff_lines(
    lines: &[DiffLine],
    top: usize,
    left: usize,
    rows: usize,
    w: usize,
) -> Vec<Line<'static>> {
    lines
        .get(top..)
        .unwrap_or_default()
        .iter()
        .take(rows)
        .map(|l| {
            let shown = skip_cols(&l.text, left);
            let text = if shown.width() > w {
                fit(shown, w)
            } else {
                shown.to_string()
            };
            Line::from(Span::styled(text, line_style(l.kind)))
        })
        .collect()
}

/// The area the diff view covers: the three panes.
pub(super) fn diff_area(a: &Areas) -> Rect {
    Rect::new(
        a.tasks.x,
        a.tasks.y,
        a.term.right().saturating_sub(a.tasks.x),
        a.steps.bottom().saturating_sub(a.tasks.y),
    )
}

impl App {
    pub(super) fn draw_diff(&mut self, frame: &mut Frame, area: Rect) {
        let Some(v) = self.review.diff.as_mut() else {
            return;
        };
        clear_overlay(frame, area);
        let dim = Style::default().fg(Color::DarkGray);
        let total = v.lines().len();
        let mut title = vec![Span::styled(
            if v.compare.is_some() {
                " Compare variants "
            } else {
                " Diff "
            },
            Style::default().add_modifier(Modifier::BOLD),
        )];
        title.push(Span::styled(
            format!(
                "· {} ",
                fit(&v.name, usize::from(area.width).saturating_sub(12) / 2).trim_end()
            ),
            dim,
        ));
        let pane = PaneFrame::new(Line::from(title), true, false);
        let inner = pane.inner(area);
        self.draw_diff_inside(frame, inner);
        // The border last: its bottom says which lines the frame just showed.
        let Some(v) = self.review.diff.as_ref() else {
            return;
        };
        let shown_to = (v.top + v.page).min(total);
        let pane = if total > 0 {
            pane.title_bottom(
                Line::from(Span::styled(
                    format!(" {}–{} of {} ", v.top + 1, shown_to, total),
                    dim,
                ))
                .right_aligned(),
            )
        } else {
            pane
        };
        pane.render(frame, area);
    }

    fn draw_diff_inside(&mut self, frame: &mut Frame, inner: Rect) {
        let Some(v) = self.review.diff.as_mut() else {
            return;
        };
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let w = usize::from(inner.width);
        let head = diff_head(v, w);
        // The diff keeps at least three rows.
        let head_h = (head.len() as u16).min(inner.height.saturating_sub(3));
        frame.render_widget(
            Paragraph::new(head),
            Rect {
                height: head_h,
                ..inner
            },
        );
        let rest = Rect {
            y: inner.y + head_h,
            height: inner.height - head_h,
            ..inner
        };
        if let Some(s) = nothing_to_show(v) {
            let lines: Vec<Line> = word_wrap(&s, w.saturating_sub(2))
                .into_iter()
                .map(|l| Line::from(format!(" {l}")))
                .collect();
            frame.render_widget(Paragraph::new(lines), rest);
            v.page = usize::from(rest.height);
            return;
        }
        let (list, text) = split_for_list(frame, v, rest);
        v.page = usize::from(text.height);
        v.clamp();
        match list {
            Some(list) => draw_file_list(frame, v, list),
            None => v.list = None,
        }
        let lines = diff_lines(
            v.lines(),
            v.top,
            v.left,
            usize::from(text.height),
            usize::from(text.width),
        );
        frame.render_widget(Paragraph::new(lines), text);
    }
}

/// What goes above the diff: branch, base and totals; that the base moved; a refusal,
/// whole.
fn diff_head(v: &DiffView, w: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut head: Vec<Line> = Vec::new();
    if let Some(c) = &v.compare {
        // Each side's status and checks: what the pick rests on.
        let (a, b) = c.pair();
        for (mark, side, colour) in [("◀", a, Color::Blue), ("▶", b, Color::Magenta)] {
            let text = format!(
                " {} · {} · {}",
                side.label,
                side.status,
                crate::variant_compare::checks_text(&side.checks)
            );
            head.push(Line::from(vec![
                Span::styled(
                    mark,
                    Style::default().fg(colour).add_modifier(Modifier::BOLD),
                ),
                Span::raw(fit(&text, w.saturating_sub(1)).trim_end().to_string()),
            ]));
        }
    }
    if let Body::Loaded(d) = &v.body {
        let diff = &d.diff;
        let added: u64 = diff.files.iter().filter_map(|f| f.added).sum();
        let removed: u64 = diff.files.iter().filter_map(|f| f.removed).sum();
        let n = diff.files.len();
        // The totals first: the branch's name is what gets cut.
        let mut spans = vec![
            Span::raw(format!("{n} file{} ", if n == 1 { "" } else { "s" })),
            Span::styled(format!("+{added}"), Style::default().fg(Color::Green)),
            Span::raw(" "),
            Span::styled(format!("−{removed}"), Style::default().fg(Color::Red)),
            Span::styled(" · ", dim),
        ];
        let used: usize = spans.iter().map(Span::width).sum();
        spans.push(Span::styled(
            fit(
                &format!("{} → {}", diff.branch, diff.base_branch),
                w.saturating_sub(used),
            )
            .trim_end()
            .to_string(),
            dim,
        ));
        head.push(Line::from(spans));
        if diff.base_moved {
            for l in word_wrap(
                &format!(
                    "{} has moved since the task started: a merge may need a merge commit.",
                    diff.base_branch
                ),
                w,
            ) {
                head.push(Line::from(Span::styled(
                    l,
                    Style::default().fg(Color::Yellow),
                )));
            }
        }
    }
    if let Some(r) = &v.refusal {
        let red = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        for l in word_wrap(&format!("✗ {r}"), w) {
            head.push(Line::from(Span::styled(l, red)));
        }
    }
    head
}

/// The sentence shown instead of a diff: it is being read, there is none, or it is empty.
fn nothing_to_show(v: &DiffView) -> Option<String> {
    match &v.body {
        Body::Loading => Some(format!("Reading the diff of {:?}…", v.name)),
        Body::Nothing(why) => Some(sentence_case(why)),
        Body::Loaded(d) if d.diff.files.is_empty() => Some(format!(
            "No changes: the worktree of {:?} holds exactly what {} held when the task started.",
            v.name, d.diff.base_branch
        )),
        Body::Loaded(_) => None,
    }
}

/// Splits `rest` into the file list (when wide enough; with a bar beside it) and the diff's
/// text; narrower, one line above the text names the current file instead.
fn split_for_list(frame: &mut Frame, v: &DiffView, rest: Rect) -> (Option<Rect>, Rect) {
    let dim = Style::default().fg(Color::DarkGray);
    if rest.width >= LIST_FROM_WIDTH {
        let list_w = (rest.width / 3).clamp(24, 44);
        let [list, sep, text] = Layout::horizontal([
            Constraint::Length(list_w),
            Constraint::Length(1),
            Constraint::Min(10),
        ])
        .areas(rest);
        let bar: Vec<Line> = (0..sep.height).map(|_| Line::from("│")).collect();
        frame.render_widget(Paragraph::new(bar).style(dim), sep);
        (Some(list), text)
    } else {
        // One line names the file at the top instead of a list.
        let [name, text] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(rest);
        if let Some(f) = v.files().get(v.file) {
            let mut spans = vec![Span::styled(
                format!("{}/{} ", v.file + 1, v.files().len()),
                dim,
            )];
            spans.extend(file_row(f, false, usize::from(name.width).saturating_sub(4)).spans);
            frame.render_widget(Paragraph::new(Line::from(spans)), name);
        }
        (None, text)
    }
}

/// The changed files in `list`, the current one kept in sight; where they are drawn is
/// kept for the mouse.
fn draw_file_list(frame: &mut Frame, v: &mut DiffView, list: Rect) {
    let rows = usize::from(list.height);
    // The current file stays in sight.
    let first = v.file.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = v
        .files()
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, f)| file_row(f, i == v.file, usize::from(list.width)))
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    v.list = Some((list, first));
}
