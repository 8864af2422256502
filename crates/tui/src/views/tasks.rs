//! The task list pane.

use super::*;

impl App {
    pub(super) fn draw_tasks(&mut self, frame: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Tasks && !self.typing;
        let pane = PaneFrame::new(self.tasks_title(), focused, false);
        let inner = pane.inner(area);
        pane.render(frame, area);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        if self.rows.is_empty() {
            frame.render_widget(
                Paragraph::new(self.empty_list_text()).style(Style::default().fg(Color::DarkGray)),
                inner,
            );
            return;
        }
        let h = inner.height as usize;
        let sel = self.selected_index();
        self.keep_in_sight(sel, h);
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
                        let depth = self.row_depth.get(i).copied().unwrap_or(0);
                        let t = &self.snapshot().tasks[ti];
                        if depth == 0 {
                            self.task_line(t, w, show_provider, now)
                        } else {
                            // A child: indented under its parent, marked as one.
                            let indent = "  ".repeat(usize::from(depth.min(6)) - 1) + "└ ";
                            let mut line = self.task_line(
                                t,
                                w.saturating_sub(indent.width()),
                                show_provider,
                                now,
                            );
                            line.spans.insert(
                                0,
                                Span::styled(indent, Style::default().fg(Color::DarkGray)),
                            );
                            line
                        }
                    }
                    Row::Header => Line::from(Span::styled(
                        fit("── sessions without a task ──", w),
                        Style::default().fg(Color::DarkGray),
                    )),
                    Row::Group(status) => Line::from(Span::styled(
                        fit(&format!("── {status} ──"), w),
                        Style::default().fg(status_color(status)),
                    )),
                    Row::Session(si) => session_line(&self.snapshot().sessions[si], w),
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

    /// The pane's title: the number of tasks, the order when it is not the default, and the
    /// filter.
    fn tasks_title(&self) -> Line<'static> {
        let mut title = vec![Span::styled(
            format!(" Tasks ({}) ", self.snapshot().tasks.len()),
            Style::default().add_modifier(Modifier::BOLD),
        )];
        if self.order != crate::list_prefs::ListOrder::Created {
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
        Line::from(title)
    }

    /// What an empty list says: how to create a task, or how to clear the filter that hides
    /// them.
    fn empty_list_text(&self) -> String {
        if self.snapshot().tasks.is_empty() {
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
        }
    }

    /// Scrolls the list so that the selected row `sel` is among the `h` rows shown.
    fn keep_in_sight(&mut self, sel: Option<usize>, h: usize) {
        if let Some(s) = sel {
            if s < self.list_offset {
                self.list_offset = s;
            } else if s >= self.list_offset + h {
                self.list_offset = s + 1 - h;
            }
        }
        self.list_offset = self.list_offset.min(self.rows.len().saturating_sub(h));
    }

    pub(super) fn task_line(
        &self,
        t: &Task,
        w: usize,
        show_provider: bool,
        now: i64,
    ) -> Line<'static> {
        let st = t.status();
        let mark = if self.is_blocked(t) {
            Span::styled(
                "!",
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        } else if self.snapshot().conflicts_of(&t.id).is_some() {
            // The conflict radar: merging it would conflict (details say with what).
            Span::styled(
                "×",
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
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
}

/// A session without a task, as a row of the list: its name, provider and status.
fn session_line(s: &orchestra_proto::wire::SessionInfo, w: usize) -> Line<'static> {
    let status = if s.ended { "exited" } else { s.status.as_str() };
    let provider = format!(" {:<8} ", fit(&s.provider_id, 8));
    let status = format!("{status:>7}");
    let name_w = w.saturating_sub(2 + provider.width() + status.width());
    let style = if s.ended {
        Style::default().fg(Color::DarkGray)
    } else {
        Style::default()
    };
    let status_style = match s.status {
        _ if s.ended => Style::default().fg(Color::DarkGray),
        orchestra_proto::wire::SessionStatus::Blocked => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        orchestra_proto::wire::SessionStatus::Limited => Style::default().fg(Color::Magenta),
        _ => Style::default().fg(Color::DarkGray),
    };
    Line::from(vec![
        Span::styled("$ ", Style::default().fg(Color::Blue)),
        Span::styled(fit(&session_name(s), name_w), style),
        Span::styled(provider, Style::default().fg(Color::DarkGray)),
        Span::styled(status, status_style),
    ])
}
