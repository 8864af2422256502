//! Drawing: the frame's layout and what the panes share; each pane and overlay in its own
//! file. Views read the state and draw it; they send no commands.

mod bottom_bar;
mod confirm;
mod details;
mod diff;
pub mod form;
mod grid;
mod help;
mod tasks;
mod terminal;
mod top_bar;

pub use help::{help_lines, help_lines_for};

use crate::app::{
    App, Areas, Confirm, Focus, Level, Modal, PromptOwner, Row, ShownPrompt, session_name,
};
use crate::form::LineEdit;
use crate::keymap::{Action, Context, KeyMap};
use crate::term_view::TermView;
use orchestra_proto::task::{StepStatus, Task, TaskStatus};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, LineGauge, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

/// Smallest terminal the layout works in.
pub const MIN_WIDTH: u16 = 50;
pub const MIN_HEIGHT: u16 = 12;

pub fn status_symbol(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Pending => "○",
        TaskStatus::Running => "▶",
        TaskStatus::Paused => "‖",
        TaskStatus::Completed => "✓",
        TaskStatus::Failed => "✗",
        TaskStatus::Cancelled => "⊘",
    }
}

pub fn status_color(s: TaskStatus) -> Color {
    match s {
        TaskStatus::Pending => Color::Gray,
        TaskStatus::Running => Color::Cyan,
        TaskStatus::Paused => Color::Yellow,
        TaskStatus::Completed => Color::Green,
        TaskStatus::Failed => Color::Red,
        TaskStatus::Cancelled => Color::Magenta,
    }
}

/// `12s` in the first minute (a task just started visibly counts), then whole minutes
/// (`5m`), `2h05m`, `3d04h`. Seconds past the first minute tell a user nothing, and showing
/// them redrew every attached TUI once a second for as long as any task ran.
pub fn format_elapsed(ms: i64) -> String {
    let s = (ms.max(0) / 1000) as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

/// How often the text of [`format_elapsed`] changes at this elapsed time.
pub fn elapsed_resolution_ms(ms: i64) -> i64 {
    if ms < 60_000 {
        1000
    } else if ms < 86_400_000 {
        60_000
    } else {
        3_600_000
    }
}

fn elapsed(task: &Task, now: i64) -> Option<String> {
    let start = task.metadata.started_at?;
    let end = task.metadata.completed_at.unwrap_or(now);
    Some(format_elapsed(end - start))
}

/// Cuts `s` to `w` columns (with `…`) and pads it to exactly `w`. One row: a line break or
/// another control character in it (a name set through the API) shows as a space, never glues
/// words together or moves the cursor.
pub fn fit(s: &str, w: usize) -> String {
    let flat: String;
    let s = if s.chars().any(char::is_control) {
        flat = s
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        flat.as_str()
    } else {
        s
    };
    let mut out = String::new();
    let mut used = 0;
    if s.width() <= w {
        out.push_str(s);
        used = s.width();
    } else if w > 0 {
        for c in s.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + cw > w - 1 {
                break;
            }
            out.push(c);
            used += cw;
        }
        out.push('…');
        used += 1;
    }
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(used)));
    out
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The panes for a frame of this size; `None` when it is too small.
pub fn layout(area: Rect) -> Option<Areas> {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return None;
    }
    let [top, main, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let left_w = (area.width * 34 / 100).clamp(28, 60);
    let [left, term] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(10)]).areas(main);
    let tasks_h = (left.height * 55 / 100).max(5);
    let [tasks, steps] =
        Layout::vertical([Constraint::Length(tasks_h), Constraint::Min(3)]).areas(left);
    let term_inner = Block::bordered().inner(term);
    Some(Areas {
        top,
        bottom,
        tasks,
        steps,
        term,
        term_inner,
    })
}

/// The same frame with the terminal pane over the whole middle (zoom, and the grid's area):
/// the task list and the details get no room.
pub fn zoomed(a: Areas) -> Areas {
    let term = Rect::new(
        a.tasks.x,
        a.term.y,
        a.term.right() - a.tasks.x,
        a.term.height,
    );
    Areas {
        tasks: Rect::default(),
        steps: Rect::default(),
        term,
        term_inner: Block::bordered().inner(term),
        ..a
    }
}

/// A pane's border and titles. Drawn edge by edge, touching only the border's cells: a
/// bordered `Block` first styles every cell of its area, once more per frame for the whole
/// window, and the panes' content is drawn over them anyway.
pub(super) struct PaneFrame<'a> {
    border: BorderType,
    style: Style,
    top: Vec<Line<'a>>,
    bottom: Vec<Line<'a>>,
}

impl<'a> PaneFrame<'a> {
    /// A pane titled `title`: thick when focused, double while typing into it.
    pub(super) fn new(title: Line<'a>, focused: bool, typing: bool) -> PaneFrame<'a> {
        let (border, style) = if typing {
            (
                BorderType::Double,
                Style::default()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            )
        } else if focused {
            (
                BorderType::Thick,
                Style::default()
                    .fg(Color::LightCyan)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            (BorderType::Rounded, Style::default().fg(Color::DarkGray))
        };
        PaneFrame::styled(border, style, title)
    }

    pub(super) fn styled(border: BorderType, style: Style, title: Line<'a>) -> PaneFrame<'a> {
        PaneFrame {
            border,
            style,
            top: vec![title],
            bottom: Vec::new(),
        }
    }

    pub(super) fn title_top(mut self, line: Line<'a>) -> PaneFrame<'a> {
        self.top.push(line);
        self
    }

    pub(super) fn title_bottom(mut self, line: Line<'a>) -> PaneFrame<'a> {
        self.bottom.push(line);
        self
    }

    /// The area inside the border.
    pub(super) fn inner(&self, area: Rect) -> Rect {
        Block::bordered().inner(area)
    }

    /// Draws the border and titles exactly as a bordered `Block` would.
    pub(super) fn render(self, frame: &mut Frame, area: Rect) {
        let PaneFrame {
            border,
            style,
            top,
            bottom,
        } = self;
        let edge = |borders| -> Block<'a> {
            Block::default()
                .borders(borders)
                .border_type(border)
                .border_style(style)
        };
        let titled = |mut block: Block<'a>, top: Vec<Line<'a>>, bottom: Vec<Line<'a>>| {
            for line in top {
                block = block.title_top(line);
            }
            for line in bottom {
                block = block.title_bottom(line);
            }
            block
        };
        if area.height < 3 {
            frame.render_widget(titled(edge(Borders::ALL), top, bottom), area);
            return;
        }
        let row = |y| Rect {
            y,
            height: 1,
            ..area
        };
        frame.render_widget(
            titled(
                edge(Borders::TOP | Borders::LEFT | Borders::RIGHT),
                top,
                Vec::new(),
            ),
            row(area.y),
        );
        frame.render_widget(
            titled(
                edge(Borders::BOTTOM | Borders::LEFT | Borders::RIGHT),
                Vec::new(),
                bottom,
            ),
            row(area.bottom() - 1),
        );
        let middle = Rect {
            y: area.y + 1,
            height: area.height - 2,
            width: 1,
            ..area
        };
        frame.render_widget(edge(Borders::LEFT), middle);
        frame.render_widget(
            edge(Borders::RIGHT),
            Rect {
                x: area.right().saturating_sub(1),
                ..middle
            },
        );
    }
}

fn strip_colors(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

impl App {
    /// Draws the state in the layout `App::draw` chose (`self.areas`, `None`: too small).
    /// Only the view's own bookkeeping changes (what the list and the help showed).
    pub(crate) fn render(&mut self, frame: &mut Frame) {
        let area = frame.area();
        let Some(areas) = self.areas else {
            let leave = self
                .keymap
                .key_for(Context::Panes, Action::Detach)
                .unwrap_or_default();
            let msg = format!(
                "Terminal too small: {}×{}. orchestra needs at least {}×{}.\nEnlarge the window, or press {leave} to detach.",
                area.width, area.height, MIN_WIDTH, MIN_HEIGHT
            );
            // Wrapped here (not by the paragraph) so the height is known and the last line,
            // the one that says what to do, is kept when rows run out.
            let mut lines = word_wrap(&msg, area.width as usize);
            while lines.len() > area.height as usize && lines.len() > 1 {
                lines.remove(0);
            }
            let h = lines.len() as u16;
            let y = area.y + area.height.saturating_sub(h) / 2;
            frame.render_widget(
                Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>())
                    .alignment(ratatui::layout::Alignment::Center)
                    .style(Style::default().fg(Color::Yellow)),
                Rect::new(area.x, y, area.width, h.min(area.height)),
            );
            if !self.color {
                strip_colors(frame.buffer_mut());
            }
            self.drawn();
            return;
        };
        self.draw_top(frame, areas.top);
        if self.grid.is_some() {
            self.draw_grid(frame, areas.term);
        } else {
            if !self.zoom {
                self.draw_tasks(frame, areas.tasks);
                self.draw_steps(frame, areas.steps);
            }
            self.draw_terminal(frame, areas.term, areas.term_inner);
        }
        self.draw_bottom(frame, areas.bottom);
        if self.review.diff.is_some() {
            self.draw_diff(frame, diff::diff_area(&areas));
        }
        match &self.modal {
            Modal::Help => self.draw_help(frame, area),
            Modal::Form(f) => form::draw_form(frame, area, f, &self.keymap),
            Modal::Confirm(c) => confirm::draw_confirm(frame, area, c),
            _ => {}
        }
        if !self.color {
            strip_colors(frame.buffer_mut());
        }
        self.drawn();
    }

    fn drawn(&mut self) {
        self.dirty = false;
        self.dirty_by = None;
    }
}

/// Lines of at most `w` columns, broken at spaces (a word longer than a line is cut); `\n`
/// starts a new line.
fn word_wrap(text: &str, w: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.width() + 1 + word.width() > w {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push(line);
    }
    out.into_iter()
        .map(|l| if l.width() > w { fit(&l, w) } else { l })
        .collect()
}

/// The first text that fits in `w` columns; the last one cut when none does.
pub(crate) fn first_fitting(candidates: &[String], w: usize) -> String {
    match candidates.iter().find(|c| c.width() <= w) {
        Some(c) => c.clone(),
        None => fit(candidates.last().map_or("", String::as_str), w)
            .trim_end()
            .to_string(),
    }
}

/// `press s…` → `Press s…`.
pub(crate) fn sentence_case(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Adds a dim hint to a line when all of it fits in the area's width.
fn push_if_fits(spans: &mut Vec<Span<'static>>, area: Rect, hint: String) {
    let used: usize = spans.iter().map(Span::width).sum();
    if used + hint.width() <= area.width as usize {
        spans.push(Span::styled(hint, Style::default().fg(Color::DarkGray)));
    }
}

/// An editor line's keys as one dim hint: `Enter keep · Esc clear`.
pub(crate) fn keys_inline(keys: &KeyMap, ctx: Context) -> String {
    keys.bar(ctx)
        .iter()
        .map(|(k, what)| format!("{k} {what}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Puts the terminal cursor where a one-line editor drawn after a `prefix`-wide label has it.
fn place_edit_cursor(frame: &mut Frame, area: Rect, prefix: u16, edit: &LineEdit) {
    let before: String = edit.text().chars().take(edit.cursor()).collect();
    let x = area.x + prefix + before.width() as u16;
    frame.set_cursor_position(Position::new(x.min(area.right().saturating_sub(1)), area.y));
}

pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Clears the rectangle an overlay is drawn in. A wide character just left of it whose second
/// column falls inside is blanked too: a terminal would draw it over the overlay's border.
pub(crate) fn clear_overlay(frame: &mut Frame, r: Rect) {
    frame.render_widget(Clear, r);
    if r.x == 0 {
        return;
    }
    let buf = frame.buffer_mut();
    for y in r.y..r.bottom() {
        if let Some(cell) = buf.cell_mut(Position::new(r.x - 1, y))
            && cell.symbol().width() > 1
        {
            cell.set_symbol(" ");
        }
    }
}

/// Text that may hold line breaks (a pasted description, a multi-line error), one `Line` per
/// line: a `Span` drops its line breaks, gluing the lines together.
fn multiline(text: &str, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| Line::from(Span::styled(l.to_string(), style)))
        .collect()
}
