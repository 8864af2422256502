//! Drawing: the three panes, the bars, and the overlays.

use super::app::{App, Areas, Confirm, Focus, Level, Modal, Row, ShownPrompt, session_name};
use super::form::LineEdit;
use super::keymap::{Action, Context, KeyMap};
use super::term_view::TermView;
use crate::task::{StepStatus, Task, TaskStatus};
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

fn step_symbol(s: StepStatus) -> (&'static str, Color) {
    match s {
        StepStatus::Pending => ("○", Color::Gray),
        StepStatus::Running => ("▶", Color::Cyan),
        StepStatus::Paused => ("‖", Color::Yellow),
        StepStatus::Completed => ("✓", Color::Green),
        StepStatus::Failed => ("✗", Color::Red),
        StepStatus::Cancelled => ("⊘", Color::Magenta),
        StepStatus::Skipped => ("-", Color::DarkGray),
    }
}

/// `12s`, `5m03s`, then minutes only from 10 minutes on (`42m`), `2h05m`, `3d04h`; so a
/// long run redraws once a minute, not every second (see `elapsed_resolution_ms`).
pub fn format_elapsed(ms: i64) -> String {
    let s = (ms.max(0) / 1000) as u64;
    match s {
        0..60 => format!("{s}s"),
        60..600 => format!("{}m{:02}s", s / 60, s % 60),
        600..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

/// How often the text of [`format_elapsed`] changes at this elapsed time.
pub fn elapsed_resolution_ms(ms: i64) -> i64 {
    if ms < 600_000 { 1000 } else { 60_000 }
}

fn elapsed(task: &Task, now: i64) -> Option<String> {
    let start = task.metadata.started_at?;
    let end = task.metadata.completed_at.unwrap_or(now);
    Some(format_elapsed(end - start))
}

/// Cuts `s` to `w` columns (with `…`) and pads it to exactly `w`.
pub fn fit(s: &str, w: usize) -> String {
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

/// What a blocked agent asks, for the details pane: the kind and question, each option as
/// `[key] label` (the keys that answer from here highlighted), and how to answer.
fn prompt_lines(p: &ShownPrompt) -> Vec<Line<'static>> {
    let warn = Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    let badge = Style::default()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    let mut head = vec![
        Span::styled(" ! ", badge),
        Span::styled(
            format!(
                " {}",
                if p.kind.is_empty() {
                    "waiting for an answer"
                } else {
                    p.kind.as_str()
                }
            ),
            warn,
        ),
    ];
    if !p.text.is_empty() {
        head.push(Span::styled(": ", warn));
        head.push(Span::styled(
            first_line(&p.text).to_string(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
    }
    let mut lines = vec![Line::from(head)];
    for o in &p.options {
        let key_style = if o.answerable() { badge } else { warn };
        lines.push(Line::from(vec![
            Span::raw("  "),
            Span::styled(format!("[{}]", o.key), key_style),
            Span::raw(" "),
            Span::styled(o.label.clone(), warn),
        ]));
    }
    let hint = match (p.keys_hint(), p.terminal_keys_hint()) {
        (Some(keys), None) => format!("press {keys} to answer"),
        (Some(keys), Some(other)) => {
            format!("press {keys} to answer; {other} in its terminal (Enter)")
        }
        (None, _) => "press Enter to answer in its terminal".to_string(),
    };
    lines.push(Line::from(Span::styled(
        format!("  {hint}"),
        Style::default().fg(Color::Yellow),
    )));
    lines
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

fn pane_block<'a>(title: Line<'a>, focused: bool, typing: bool) -> Block<'a> {
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
    Block::default()
        .borders(Borders::ALL)
        .border_type(border)
        .border_style(style)
        .title(title)
}

fn strip_colors(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}

impl App {
    /// Draws a frame; also remembers the layout and resizes the shown PTY to fit.
    pub fn draw(&mut self, frame: &mut Frame) {
        self.refresh_if_stale();
        let area = frame.area();
        let Some(areas) = layout(area) else {
            self.areas = None;
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
            self.dirty = false;
            return;
        };
        self.areas = Some(areas);
        self.prepare_transcript();
        self.draw_top(frame, areas.top);
        self.draw_tasks(frame, areas.tasks);
        self.draw_steps(frame, areas.steps);
        self.draw_terminal(frame, areas.term, areas.term_inner);
        self.draw_bottom(frame, areas.bottom);
        match &self.modal {
            Modal::Help => self.draw_help(frame, area),
            Modal::Form(f) => super::form_view::draw_form(frame, area, f, &self.keymap),
            Modal::Confirm(c) => draw_confirm(frame, area, c),
            _ => {}
        }
        if !self.color {
            strip_colors(frame.buffer_mut());
        }
        self.dirty = false;
        self.sync_pty_size();
    }

    fn draw_top(&self, frame: &mut Frame, area: Rect) {
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
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
    }

    fn draw_tasks(&mut self, frame: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Tasks && !self.typing;
        let mut title = vec![Span::styled(
            format!(" Tasks ({}) ", self.snapshot().tasks.len()),
            Style::default().add_modifier(Modifier::BOLD),
        )];
        if self.order != super::list_prefs::ListOrder::Created {
            title.push(Span::styled(
                format!("{} ", self.order.label()),
                Style::default().fg(Color::DarkGray),
            ));
        }
        if !self.filter.is_empty() || matches!(self.modal, Modal::Filter(_)) {
            title.push(Span::styled(
                format!("/{} ", self.filter),
                Style::default().fg(Color::Yellow),
            ));
        }
        let block = pane_block(Line::from(title), focused, false);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        if self.rows.is_empty() {
            let text = if self.snapshot().tasks.is_empty() {
                format!(
                    "No tasks yet.\nPress {} to create one.",
                    self.key(Action::NewTask)
                )
            } else if matches!(self.modal, Modal::Filter(_)) {
                format!(
                    "No task matches the filter.\n{} clears it.",
                    self.key(Action::ClearFilter)
                )
            } else {
                format!(
                    "No task matches the filter.\n{} clears it.",
                    self.key(Action::Back)
                )
            };
            frame.render_widget(
                Paragraph::new(text).style(Style::default().fg(Color::DarkGray)),
                inner,
            );
            return;
        }
        let h = inner.height as usize;
        let sel = self.selected_index();
        if let Some(s) = sel {
            if s < self.list_offset {
                self.list_offset = s;
            } else if s >= self.list_offset + h {
                self.list_offset = s + 1 - h;
            }
        }
        self.list_offset = self.list_offset.min(self.rows.len().saturating_sub(h));
        let now = self.now_ms();
        let w = inner.width as usize;
        let show_provider = w >= 40;
        let lines: Vec<Line> = self
            .rows
            .iter()
            .enumerate()
            .skip(self.list_offset)
            .take(h)
            .map(|(i, row)| {
                let selected = sel == Some(i);
                let mut line = match *row {
                    Row::Task(ti) => {
                        self.task_line(&self.snapshot().tasks[ti], w, show_provider, now)
                    }
                    Row::Header => Line::from(Span::styled(
                        fit("── sessions without a task ──", w),
                        Style::default().fg(Color::DarkGray),
                    )),
                    Row::Group(status) => Line::from(Span::styled(
                        fit(&format!("── {status} ──"), w),
                        Style::default().fg(status_color(status)),
                    )),
                    Row::Session(si) => {
                        let s = &self.snapshot().sessions[si];
                        let status = if s.ended { "exited" } else { s.status.as_str() };
                        let provider = format!(" {:<8} ", fit(&s.provider_id, 8));
                        let status = format!("{status:>7}");
                        let name_w = w.saturating_sub(2 + provider.width() + status.width());
                        let style = if s.ended {
                            Style::default().fg(Color::DarkGray)
                        } else {
                            Style::default()
                        };
                        let status_style =
                            if !s.ended && s.status == crate::engine::SessionStatus::Blocked {
                                Style::default()
                                    .fg(Color::Yellow)
                                    .add_modifier(Modifier::BOLD)
                            } else {
                                Style::default().fg(Color::DarkGray)
                            };
                        Line::from(vec![
                            Span::styled("$ ", Style::default().fg(Color::Blue)),
                            Span::styled(fit(&session_name(s), name_w), style),
                            Span::styled(provider, Style::default().fg(Color::DarkGray)),
                            Span::styled(status, status_style),
                        ])
                    }
                };
                if selected {
                    line = line.patch_style(Style::default().add_modifier(if focused {
                        Modifier::REVERSED | Modifier::BOLD
                    } else {
                        Modifier::REVERSED
                    }));
                }
                line
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn task_line(&self, t: &Task, w: usize, show_provider: bool, now: i64) -> Line<'static> {
        let st = t.status();
        let mark = if self.is_blocked(t) {
            Span::styled(
                "!",
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        } else if self.is_unseen(&t.id) {
            Span::styled(
                "•",
                Style::default()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            Span::raw(" ")
        };
        let progress = format!("{:>3.0}%", t.metadata.progress.value());
        let el = elapsed(t, now).unwrap_or_default();
        let provider = if show_provider {
            format!(" {}", fit(&t.metadata.provider_id, 8))
        } else {
            String::new()
        };
        let right = format!("{provider} {progress} {el:>6}");
        let name_w = w.saturating_sub(2 + right.width() + 1);
        let mut spans = vec![
            Span::styled(
                format!("{} ", status_symbol(st)),
                Style::default()
                    .fg(status_color(st))
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(fit(&t.name, name_w), Style::default()),
            Span::styled(provider, Style::default().fg(Color::DarkGray)),
            Span::styled(
                format!(" {progress}"),
                Style::default().fg(status_color(st)),
            ),
            Span::styled(format!(" {el:>6}"), Style::default().fg(Color::DarkGray)),
        ];
        spans.push(mark);
        Line::from(spans)
    }

    fn draw_steps(&self, frame: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Steps && !self.typing;
        let dim = Style::default().fg(Color::DarkGray);
        let label = |s: &'static str| Span::styled(format!("{s:<8}"), dim);
        let Some(t) = self.selected_task() else {
            let block = pane_block(
                Line::from(Span::styled(
                    " Details ",
                    Style::default().add_modifier(Modifier::BOLD),
                )),
                focused,
                false,
            );
            let inner = block.inner(area);
            frame.render_widget(block, area);
            let mut lines = Vec::new();
            if let Some(p) = self.shown_prompt() {
                lines.extend(prompt_lines(&p));
            }
            if let Some(s) = self.selected_session_info() {
                lines.push(Line::from(vec![label("session"), Span::raw(s.id.clone())]));
                lines.push(Line::from(vec![
                    label("agent"),
                    Span::raw(s.provider_id.clone()),
                ]));
                lines.push(Line::from(vec![
                    label("dir"),
                    Span::raw(s.working_directory.clone()),
                ]));
                let status = if s.ended { "exited" } else { s.status.as_str() };
                lines.push(Line::from(vec![
                    label("status"),
                    Span::raw(format!("{status} · pid {}", s.pid)),
                ]));
                if let Some(code) = s.exit_code {
                    lines.push(Line::from(vec![label("exit"), Span::raw(code.to_string())]));
                }
                if let Some(sig) = &s.signal {
                    lines.push(Line::from(vec![label("signal"), Span::raw(sig.clone())]));
                }
            } else {
                lines.push(Line::from(Span::styled("Nothing selected.", dim)));
            }
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((self.steps_scroll, 0)),
                inner,
            );
            return;
        };
        let done = t
            .metadata
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
            .count();
        let title = Line::from(vec![
            Span::styled(" Details ", Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(format!("· steps {done}/{} ", t.metadata.steps.len()), dim),
        ]);
        let block = pane_block(title, focused, false);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 {
            return;
        }
        let st = t.status();
        let ratio = (t.metadata.progress.value() / 100.0).clamp(0.0, 1.0);
        let gauge = LineGauge::default()
            .ratio(ratio)
            .label(Span::styled(
                format!("{:>3.0}% {} ", t.metadata.progress.value(), st.as_str()),
                Style::default()
                    .fg(status_color(st))
                    .add_modifier(Modifier::BOLD),
            ))
            .filled_style(Style::default().fg(status_color(st)))
            .unfilled_style(dim);
        frame.render_widget(gauge, Rect { height: 1, ..inner });
        let rest = Rect {
            y: inner.y + 1,
            height: inner.height - 1,
            ..inner
        };
        let mut lines: Vec<Line> = Vec::new();
        // A waiting agent comes first: it is what needs you.
        if let Some(p) = self.shown_prompt() {
            lines.extend(prompt_lines(&p));
        }
        lines.extend(multiline(
            &t.description,
            Style::default().add_modifier(Modifier::ITALIC),
        ));
        if t.metadata.steps.is_empty() {
            lines.push(Line::from(Span::styled("no steps reported yet", dim)));
        }
        for s in &t.metadata.steps {
            let (sym, color) = step_symbol(s.status);
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{sym} "),
                    Style::default().fg(color).add_modifier(Modifier::BOLD),
                ),
                Span::raw(s.description.clone()),
            ]));
            if let Some(out) = &s.output
                && !out.is_empty()
            {
                lines.push(Line::from(Span::styled(
                    format!("  {}", first_line(out)),
                    dim,
                )));
            }
        }
        lines.push(Line::from(vec![
            label("dir"),
            Span::raw(t.metadata.working_directory.clone()),
        ]));
        let session = t
            .metadata
            .session_id
            .as_ref()
            .and_then(|sid| self.snapshot().sessions.iter().find(|s| &s.id == sid));
        match session {
            Some(s) => {
                let status = if s.ended { "exited" } else { s.status.as_str() };
                let style = match (s.ended, s.status) {
                    (true, _) => dim,
                    (_, crate::engine::SessionStatus::Blocked) => Style::default()
                        .fg(Color::Yellow)
                        .add_modifier(Modifier::BOLD),
                    _ => Style::default(),
                };
                lines.push(Line::from(vec![
                    label("agent"),
                    Span::styled(format!("{} · {status}", t.metadata.provider_id), style),
                    Span::styled(format!(" · pid {}", s.pid), dim),
                ]));
                if s.ended {
                    let how = match (&s.exit_code, &s.signal) {
                        (Some(c), _) => format!("exit code {c}"),
                        (None, Some(sig)) => format!("killed by {sig}"),
                        _ => "ended".into(),
                    };
                    lines.push(Line::from(vec![label("exit"), Span::raw(how)]));
                }
            }
            None => lines.push(Line::from(vec![
                label("agent"),
                Span::styled(format!("{} · not started", t.metadata.provider_id), dim),
            ])),
        }
        if let Some(e) = &t.metadata.error {
            let red = Style::default().fg(Color::Red);
            let mut rows = e.lines();
            lines.push(Line::from(vec![
                label("error"),
                Span::styled(rows.next().unwrap_or_default().to_string(), red),
            ]));
            lines.extend(rows.map(|r| Line::from(Span::styled(r.to_string(), red))));
        }
        if let Some(r) = &t.metadata.result {
            let (sym, color) = if r.success {
                ("✓", Color::Green)
            } else {
                ("✗", Color::Red)
            };
            let mut rows = r.summary.lines();
            lines.push(Line::from(vec![
                label("result"),
                Span::styled(format!("{sym} "), Style::default().fg(color)),
                Span::raw(rows.next().unwrap_or_default().to_string()),
            ]));
            lines.extend(rows.map(|r| Line::from(r.to_string())));
            let files = r.files_modified.len() + r.files_created.len();
            if files > 0 {
                lines.push(Line::from(vec![
                    label("files"),
                    Span::raw(format!(
                        "{} modified, {} created",
                        r.files_modified.len(),
                        r.files_created.len()
                    )),
                ]));
            }
        }
        if let Some(last) = t.metadata.output.last() {
            lines.push(Line::from(vec![
                label("output"),
                Span::styled(last.clone(), dim),
            ]));
        }
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.steps_scroll, 0)),
            rest,
        );
    }

    fn draw_terminal(&self, frame: &mut Frame, area: Rect, inner: Rect) {
        let focused = self.focus == Focus::Terminal;
        let sid = self.shown_session_id();
        let (left, mark) = self.terminal_titles(area.width.saturating_sub(2) as usize);
        let mut block = pane_block(Line::from(left), focused, self.typing);
        if let Some(t) = self.shown_transcript() {
            block = block.title_top(
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
            block = block.title_top(Line::from(mark).right_aligned());
        }
        frame.render_widget(block, area);
        let dim = Style::default().fg(Color::DarkGray);
        let Some(sid) = sid else {
            let text = match self.selected_task() {
                Some(t) if t.status() == TaskStatus::Pending => {
                    format!("No agent yet.\n\n{}.", sentence_case(&self.pending_hint()))
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
        let color = self.color;
        let typing = self.typing;
        let drawn = self.cockpit.with_screen(&sid, &mut |screen| {
            frame.render_widget(TermView::new(screen).color(color), inner);
            if typing && !screen.hide_cursor() {
                let (r, c) = screen.cursor_position();
                if r < inner.height && c < inner.width {
                    cursor = Some(Position::new(inner.x + c, inner.y + r));
                }
            }
        });
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
    fn key(&self, action: Action) -> String {
        self.keymap
            .key_for(self.key_context(), action)
            .or_else(|| self.keymap.key_for(self.pane_context(), action))
            .unwrap_or_default()
    }

    /// The terminal pane's title in `width` columns: the typing badge (with the key that
    /// leaves, never cut), the scrolled-back mark (with the key that returns from where the
    /// keyboard is), then as much of `Terminal name · provider · status` as fits.
    fn terminal_titles(&self, width: usize) -> (Vec<Span<'static>>, Option<Span<'static>>) {
        // The mark's texts, longest first; the last is the least that is still useful.
        let marks: Vec<String> = self
            .scroll
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
            .unwrap_or_default();
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
        let mark = (!marks.is_empty()).then(|| {
            // A mark naming its key, with room for the pane's name if possible; the bare
            // mark only when no mark with the key fits.
            let keyed = &marks[..marks.len() - 1];
            let text = keyed
                .iter()
                .find(|m| m.width() + 11 <= budget)
                .or_else(|| keyed.iter().find(|m| m.width() < budget))
                .cloned()
                .unwrap_or_else(|| {
                    first_fitting(&marks[marks.len() - 1..], budget.saturating_sub(1))
                });
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
        left.extend(badge);
        (left, mark)
    }

    fn draw_bottom(&self, frame: &mut Frame, area: Rect) {
        let key = Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD);
        let dim = Style::default().fg(Color::DarkGray);
        match &self.modal {
            Modal::Filter(edit) => {
                let mut spans = vec![
                    Span::styled("filter: ", key),
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
                return;
            }
            Modal::Search(edit) => {
                let found = match self.shown_transcript() {
                    Some(_) if edit.text().is_empty() => String::new(),
                    Some(t) => match t.current() {
                        Some(c) => format!("  {}/{}", c + 1, t.matches().len()),
                        None => "  no match".to_string(),
                    },
                    None => "  reading…".to_string(),
                };
                let line = Line::from(vec![
                    Span::styled("search: ", key),
                    Span::raw(edit.text().to_string()),
                    Span::styled(found, Style::default().fg(Color::Yellow)),
                    Span::styled(
                        format!("   {}", keys_inline(&self.keymap, Context::Search)),
                        dim,
                    ),
                ]);
                frame.render_widget(Paragraph::new(line), area);
                place_edit_cursor(frame, area, 8, edit);
                return;
            }
            Modal::Message { name, edit, .. } => {
                let prefix = format!("message to {}: ", fit(name, 20).trim_end());
                let pw = prefix.width() as u16;
                let mut spans = vec![
                    Span::styled(prefix, key),
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
                return;
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
        let ctx = self.key_context();
        // A shown prompt's answer keys come first: they are what is needed now.
        let mut hints: Vec<(String, &str)> = Vec::new();
        if matches!(ctx, Context::Tasks | Context::Steps | Context::Terminal)
            && let Some(p) = self.shown_prompt()
        {
            match p.keys_hint() {
                Some(keys) => hints.push((keys, "answer")),
                None => hints.push(("Enter".into(), "answer in the terminal")),
            }
        }
        hints.extend(self.keymap.bar(ctx));
        if ctx == Context::Typing
            && let Some(note) = ctx.note()
        {
            hints.push((String::new(), note));
        }
        let help = self.keymap.key_for(ctx, Action::Help);
        // As many hints as fit, most important first; where `?` works it always shows.
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
fn sentence_case(s: &str) -> String {
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
        &format!("Option keys {bound} are commands: answer those in the terminal"),
    );
    lines
}

impl App {
    /// The help overlay: as many lines as fit, scrolled with ↑/↓; the frame says where.
    fn draw_help(&mut self, frame: &mut Frame, area: Rect) {
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

fn draw_confirm(frame: &mut Frame, area: Rect, c: &Confirm) {
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
    };
    let r = centered(area, 50, 6);
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
    let mut lines: Vec<Line> = text.lines().map(|l| Line::from(l.to_string())).collect();
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
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}

/// The transcript's mark in the terminal pane's title: how long it is and where the view is,
/// shorter where the pane is narrow (at most `w` columns).
fn transcript_title(t: &super::transcript_view::Transcript, w: usize) -> String {
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

/// Text that may hold line breaks (a pasted description, a multi-line error), one `Line` per
/// line: a `Span` drops its line breaks, gluing the lines together.
fn multiline(text: &str, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| Line::from(Span::styled(l.to_string(), style)))
        .collect()
}
