//! The details pane: a task's steps, or a session's facts, and the prompt an agent waits on.

use super::*;

/// A session's status, marked when its agent's own hooks decided it (otherwise orchestra
/// read it from the screen).
fn status_with_source(s: &orchestra_proto::wire::SessionInfo) -> String {
    match (s.ended, s.status_source) {
        (true, _) => "exited".into(),
        (false, orchestra_proto::wire::StatusSource::Hook) => format!("{} (by hook)", s.status),
        (false, orchestra_proto::wire::StatusSource::Screen) => s.status.to_string(),
    }
}

pub(super) fn step_symbol(s: StepStatus) -> (&'static str, Color) {
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

/// What a blocked agent asks, for the details pane: the kind and question, each option as
/// `[key] label` (the keys that answer from here highlighted), and how to answer.
pub(super) fn prompt_lines(p: &ShownPrompt) -> Vec<Line<'static>> {
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
                match p.kind {
                    Some(kind) => kind.as_str(),
                    None => "waiting for an answer",
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
    // A task's question is orchestra's own, every line of it needed (the commands it would
    // run); an agent's is its screen, of which the first line says enough.
    if matches!(p.owner, PromptOwner::Task(_)) {
        lines.extend(
            p.text
                .lines()
                .skip(1)
                .map(|l| Line::from(Span::raw(format!("  {l}")))),
        );
    }
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

/// A field's name in the details pane, dim and padded so the values line up.
fn label(s: &'static str) -> Span<'static> {
    Span::styled(format!("{s:<8}"), Style::default().fg(Color::DarkGray))
}

impl App {
    /// The details pane: the selected task's progress, steps and facts, or, with no task
    /// selected, the selected session's facts.
    pub(super) fn draw_steps(&self, frame: &mut Frame, area: Rect) {
        let focused = self.focus == Focus::Steps && !self.typing;
        let dim = Style::default().fg(Color::DarkGray);
        let Some(t) = self.selected_task() else {
            self.draw_session_details(frame, area, focused);
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
        let pane = PaneFrame::new(title, focused, false);
        let inner = pane.inner(area);
        pane.render(frame, area);
        if inner.height == 0 {
            return;
        }
        frame.render_widget(progress_gauge(t), Rect { height: 1, ..inner });
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
        lines.extend(step_lines(t));
        if let Some((attempt, max)) = t.check_attempt() {
            lines.push(Line::from(vec![
                label("checks"),
                Span::raw(format!(
                    "{} (attempt {attempt} of {max})",
                    t.metadata.checks.len()
                )),
            ]));
        }
        lines.push(Line::from(vec![
            label("dir"),
            Span::raw(t.metadata.working_directory.clone()),
        ]));
        lines.extend(self.worktree_lines(t, label, dim));
        lines.extend(self.conflict_lines(t));
        lines.extend(self.family_lines(t));
        lines.extend(self.agent_lines(t));
        lines.extend(outcome_lines(t));
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.steps_scroll, 0)),
            rest,
        );
    }

    /// Where the task sits in its family: its parent, who answers its questions, and how
    /// its children are doing.
    fn family_lines(&self, t: &Task) -> Vec<Line<'static>> {
        let dim = Style::default().fg(Color::DarkGray);
        let mut lines = Vec::new();
        if let Some(parent) = &t.metadata.parent_task_id {
            let name = self
                .snapshot()
                .tasks
                .iter()
                .find(|p| &p.id == parent)
                .map_or_else(|| format!("{parent} (gone)"), |p| p.name.clone());
            let mut spans = vec![label("parent"), Span::raw(name)];
            if t.metadata.answers == orchestra_proto::task::Answers::Parent {
                spans.push(Span::styled(" · its agent answers the questions too", dim));
            }
            lines.push(Line::from(spans));
        }
        let children: Vec<&std::sync::Arc<Task>> = self
            .snapshot()
            .tasks
            .iter()
            .filter(|c| c.metadata.parent_task_id.as_deref() == Some(t.id.as_str()))
            .collect();
        if !children.is_empty() {
            let mut counts: Vec<(TaskStatus, usize)> = Vec::new();
            for c in &children {
                match counts.iter_mut().find(|(s, _)| *s == c.status()) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((c.status(), 1)),
                }
            }
            counts.sort();
            let mut spans = vec![label("children"), Span::raw(" ")];
            for (i, (status, n)) in counts.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(", ", dim));
                }
                spans.push(Span::styled(
                    format!("{n} {status}"),
                    Style::default().fg(status_color(status)),
                ));
            }
            lines.push(Line::from(spans));
        }
        if t.metadata.delegate {
            lines.push(Line::from(vec![
                label("delegate"),
                Span::styled("its agent can hand work to other agents (MCP)", dim),
            ]));
        }
        lines
    }

    /// The details pane with no task selected: the selected session's facts, and the
    /// prompt it waits on.
    fn draw_session_details(&self, frame: &mut Frame, area: Rect, focused: bool) {
        let dim = Style::default().fg(Color::DarkGray);
        let pane = PaneFrame::new(
            Line::from(Span::styled(
                " Details ",
                Style::default().add_modifier(Modifier::BOLD),
            )),
            focused,
            false,
        );
        let inner = pane.inner(area);
        pane.render(frame, area);
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
            let status = status_with_source(s);
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
    }

    /// The task's agent: its provider and the status of its session (with a usage limit's
    /// reset), or that it has not started; how it ended, once it did.
    fn agent_lines(&self, t: &Task) -> Vec<Line<'static>> {
        let dim = Style::default().fg(Color::DarkGray);
        let session = t
            .metadata
            .session_id
            .as_ref()
            .and_then(|sid| self.snapshot().sessions.iter().find(|s| &s.id == sid));
        let Some(s) = session else {
            return vec![Line::from(vec![
                label("agent"),
                Span::styled(format!("{} · not started", t.metadata.provider_id), dim),
            ])];
        };
        let status = status_with_source(s);
        let style = match (s.ended, s.status) {
            (true, _) => dim,
            (_, orchestra_proto::wire::SessionStatus::Blocked) => Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            (_, orchestra_proto::wire::SessionStatus::Limited) => {
                Style::default().fg(Color::Magenta)
            }
            _ => Style::default(),
        };
        let status = match (s.status, s.resets_at) {
            (orchestra_proto::wire::SessionStatus::Limited, Some(at)) if !s.ended => {
                let mins = (at - orchestra_proto::clock::now_ms()).max(0) / 60_000;
                format!("{status} (usage limit; resets in {mins} min)")
            }
            (orchestra_proto::wire::SessionStatus::Limited, None) if !s.ended => {
                format!("{status} (usage limit)")
            }
            _ => status.to_string(),
        };
        let mut lines = vec![Line::from(vec![
            label("agent"),
            Span::styled(format!("{} · {status}", t.metadata.provider_id), style),
            Span::styled(format!(" · pid {}", s.pid), dim),
        ])];
        if s.ended {
            let how = match (&s.exit_code, &s.signal) {
                (Some(c), _) => format!("exit code {c}"),
                (None, Some(sig)) => format!("killed by {sig}"),
                _ => "ended".into(),
            };
            lines.push(Line::from(vec![label("exit"), Span::raw(how)]));
        }
        lines
    }
}

/// The task's progress as a gauge, labelled with its percentage and status.
fn progress_gauge(t: &Task) -> LineGauge<'static> {
    let dim = Style::default().fg(Color::DarkGray);
    let st = t.status();
    let ratio = (t.metadata.progress.value() / 100.0).clamp(0.0, 1.0);
    LineGauge::default()
        .ratio(ratio)
        .label(Span::styled(
            format!("{:>3.0}% {} ", t.metadata.progress.value(), st.as_str()),
            Style::default()
                .fg(status_color(st))
                .add_modifier(Modifier::BOLD),
        ))
        .filled_style(Style::default().fg(status_color(st)))
        .unfilled_style(dim)
}

/// The task's steps, each with its symbol and the first line of its output.
fn step_lines(t: &Task) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut lines = Vec::new();
    if t.metadata.steps.is_empty() {
        lines.push(Line::from(Span::styled("no steps reported yet", dim)));
    }
    for s in &t.metadata.steps {
        let (sym, color) = step_symbol(s.status);
        let mut rows = s.description.lines();
        lines.push(Line::from(vec![
            Span::styled(
                format!("{sym} "),
                Style::default().fg(color).add_modifier(Modifier::BOLD),
            ),
            Span::raw(rows.next().unwrap_or_default().to_string()),
        ]));
        lines.extend(rows.map(|r| Line::from(format!("  {r}"))));
        if let Some(out) = &s.output
            && !out.is_empty()
        {
            lines.push(Line::from(Span::styled(
                format!("  {}", first_line(out)),
                dim,
            )));
        }
    }
    lines
}

/// How the task ended: its error, its result and the files it changed, and its last output
/// line.
fn outcome_lines(t: &Task) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut lines = Vec::new();
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
            Span::styled(last.to_string(), dim),
        ]));
    }
    lines
}

use orchestra_proto::task::WorktreeOutcome;

impl App {
    /// A worktree task's worktree: where it is, its branch and base, the disk it uses; or
    /// what became of it; and its pull request, once opened.
    fn worktree_lines(
        &self,
        t: &Task,
        label: impl Fn(&'static str) -> Span<'static>,
        dim: Style,
    ) -> Vec<Line<'static>> {
        let Some(wt) = &t.metadata.worktree else {
            return Vec::new();
        };
        let at = &wt.at;
        let mut lines = Vec::new();
        match wt.outcome {
            None => {
                let bytes = self
                    .review
                    .usage
                    .as_ref()
                    .and_then(|u| u.per_task.get(&t.id))
                    .map(|b| orchestra_proto::units::human_bytes(*b))
                    .unwrap_or_default();
                lines.push(Line::from(vec![
                    label("worktree"),
                    Span::styled(format!(" {bytes}"), dim),
                ]));
                // The path alone on its line: it is long, and wraps.
                lines.push(Line::from(at.path.clone()));
            }
            Some(outcome) => {
                let what = match outcome {
                    WorktreeOutcome::Merged => format!("merged into {}", at.base_branch),
                    WorktreeOutcome::Discarded => format!(
                        "discarded; kept in {}",
                        orchestra_proto::worktree::snapshot_ref(&t.id)
                    ),
                    WorktreeOutcome::Collected => "removed by gc".to_string(),
                };
                lines.push(Line::from(vec![
                    label("worktree"),
                    Span::styled(format!(" {what}"), dim),
                ]));
            }
        }
        lines.push(Line::from(vec![
            label("branch"),
            Span::raw(at.branch.clone()),
        ]));
        lines.push(Line::from(vec![
            label("base"),
            Span::raw(at.base_branch.clone()),
        ]));
        if let Some(pr) = &t.metadata.pull_request {
            lines.push(Line::from(vec![label("PR"), Span::raw(pr.url.clone())]));
        }
        lines
    }

    /// What the conflict radar found: each task (or the base) merging would conflict with,
    /// and the files.
    fn conflict_lines(&self, t: &Task) -> Vec<Line<'static>> {
        let Some(r) = self.snapshot().conflicts_of(&t.id) else {
            return Vec::new();
        };
        let red = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        let with_base = r
            .with_base
            .iter()
            .map(|b| (format!("base {}", b.base_branch), &b.files));
        let with_tasks = r
            .with_tasks
            .iter()
            .map(|c| (format!("task {}", c.name), &c.files));
        with_base
            .chain(with_tasks)
            .map(|(what, files)| {
                Line::from(vec![
                    Span::styled("conflict", red),
                    Span::raw(format!(" {what}: {}", files.join(", "))),
                ])
            })
            .collect()
    }
}
