//! Update: how keys, mouse, engine events and command results change the state and which
//! commands go to the cockpit. The PTY size is decided here (after a frame is laid out), never
//! while drawing.

use crate::app::*;
use crate::backend::{Command, Outcome};
use orchestra_proto::task::TaskStatus;
use orchestra_proto::wire::{Event, TaskEventKind};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc};

/// How long the selected task's newest output line may wait to be drawn with another change
/// (its terminal's, usually a few milliseconds later).
const LAST_LINE_WAIT: Duration = Duration::from_millis(200);

mod attention;
mod diff;
mod elapsed;
mod grid;
mod input;
mod manage;
mod mouse;
mod scroll;
mod transcript;

impl App {
    /// The receiver of command results, for the event loop (once).
    pub fn take_results(&mut self) -> Option<mpsc::UnboundedReceiver<AppMsg>> {
        self.rx.take()
    }

    /// Applies every command result that has arrived (when the loop did not take them).
    pub fn pump(&mut self) {
        let mut got = Vec::new();
        if let Some(rx) = self.rx.as_mut() {
            while let Ok(m) = rx.try_recv() {
                got.push(m);
            }
        }
        for m in got {
            self.on_result(m);
        }
    }

    pub fn request_quit_now(&mut self) {
        self.quit = true;
    }

    /// Re-reads the snapshot if something changed.
    pub fn refresh_if_stale(&mut self) {
        if self.stale {
            self.refresh();
        }
    }

    pub fn refresh(&mut self) {
        let old = std::mem::replace(&mut self.snap, self.cockpit.snapshot());
        self.stale = false;
        self.rebuild_rows();
        if self.loaded {
            self.note_arrivals(&old);
        }
        self.loaded = true;
        self.dirty = true;
    }

    pub(crate) fn rebuild_rows(&mut self) {
        let mut rows = Vec::new();
        let mut depths = Vec::new();
        let mut group = None;
        let shown: Vec<usize> = self
            .order
            .arrange(&self.snap.tasks)
            .into_iter()
            .filter(|&i| self.matches_filter(&self.snap.tasks[i].name))
            .collect();
        for (i, depth) in family_tree(&self.snap.tasks, &shown, self.order.grouped()) {
            let t = &self.snap.tasks[i];
            if self.order.grouped() && depth == 0 && group != Some(t.status()) {
                group = Some(t.status());
                rows.push(Row::Group(t.status()));
                depths.push(0);
            }
            rows.push(Row::Task(i));
            depths.push(depth);
        }
        let mut header = false;
        for (i, s) in self.snap.sessions.iter().enumerate() {
            if s.task_id.is_none() && self.matches_filter(&session_name(s)) {
                if !header {
                    rows.push(Row::Header);
                    header = true;
                }
                rows.push(Row::Session(i));
            }
        }
        depths.resize(rows.len(), 0);
        self.rows = rows;
        self.row_depth = depths;
        if self.selected_index().is_none() {
            let first = self.rows.iter().position(|r| !r.is_heading());
            self.select_index(first);
        }
    }

    pub(crate) fn row_selected(&self, row: Row) -> Option<Selected> {
        match row {
            Row::Task(i) => self.snap.tasks.get(i).map(|t| Selected::Task(t.id.clone())),
            Row::Session(i) => self
                .snap
                .sessions
                .get(i)
                .map(|s| Selected::Session(s.id.clone())),
            Row::Header | Row::Group(_) => None,
        }
    }

    pub(crate) fn select_index(&mut self, i: Option<usize>) {
        let new = i
            .and_then(|i| self.rows.get(i).copied())
            .and_then(|r| self.row_selected(r));
        if new != self.selected {
            self.selected = new;
            self.scroll = None;
            self.transcript = None;
            self.transcript_requested = None;
            self.transcript_pending = false;
            self.steps_scroll = 0;
            self.dirty = true;
        }
        if let Some(Selected::Task(id)) = &self.selected {
            self.unseen.remove(id);
        }
        if let Some(sel) = &self.selected {
            self.waiting.retain(|w| &w.target != sel);
        }
    }

    /// Selects a task by id (it is shown even if the filter hid it: the filter is cleared).
    pub fn select_task(&mut self, id: &str) {
        self.refresh();
        let want = Selected::Task(id.to_string());
        if !self
            .rows
            .iter()
            .any(|r| self.row_selected(*r).as_ref() == Some(&want))
        {
            self.filter.clear();
            self.rebuild_rows();
        }
        let i = self
            .rows
            .iter()
            .position(|r| self.row_selected(*r).as_ref() == Some(&want));
        self.select_index(i);
    }

    pub(crate) fn move_selection(&mut self, delta: isize) {
        let selectable: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_heading())
            .map(|(i, _)| i)
            .collect();
        if selectable.is_empty() {
            return;
        }
        let cur = self
            .selected_index()
            .and_then(|i| selectable.iter().position(|&s| s == i));
        let next = match cur {
            None => 0,
            Some(c) => (c as isize + delta).clamp(0, selectable.len() as isize - 1) as usize,
        };
        self.select_index(Some(selectable[next]));
    }

    pub fn notify(&mut self, text: impl Into<String>, level: Level) {
        let text = text.into();
        let secs = if level == Level::Error { 8 } else { 4 };
        self.notice = Some(Notice {
            text,
            level,
            until: Instant::now() + Duration::from_secs(secs),
        });
        self.dirty = true;
    }

    /// Runs a command off the UI loop; its result comes back as an [`AppMsg`].
    pub(crate) fn run(&mut self, cmd: Command, origin: Origin) {
        let fut = self.cockpit.execute(cmd);
        let tx = self.tx.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn(async move {
                    let result = fut.await;
                    let _ = tx.send(AppMsg { origin, result });
                });
            }
            Err(_) => tracing::warn!("no runtime: command dropped"),
        }
    }

    pub fn on_result(&mut self, m: AppMsg) {
        self.stale = true;
        self.dirty = true;
        match (m.origin, m.result) {
            (Origin::Quiet, _) => {}
            (Origin::Usage, r) => self.on_usage(r),
            (Origin::Form, Ok(Outcome::Created { task_id, note })) => {
                if matches!(self.modal, Modal::Form(_)) {
                    self.modal = Modal::None;
                }
                self.select_task(&task_id);
                match note {
                    Some(n) => self.notify(n, Level::Error),
                    None => {
                        let text = self.created_notice("task created");
                        self.notify(text, Level::Info)
                    }
                }
            }
            (Origin::Form, Ok(Outcome::Done(text))) => {
                // An edit was saved.
                if matches!(self.modal, Modal::Form(_)) {
                    self.modal = Modal::None;
                }
                self.notify(text, Level::Info);
            }
            (Origin::Form, Err(e)) => match &mut self.modal {
                Modal::Form(f) => f.engine_error(e),
                _ => self.notify(e, Level::Error),
            },
            (_, Ok(Outcome::Created { task_id, note })) => {
                self.select_task(&task_id);
                let text = self.created_notice(note.as_deref().unwrap_or("task created"));
                self.notify(text, Level::Info);
            }
            (_, Ok(Outcome::Diff { task_id, diff })) => self.on_diff(task_id, diff),
            (_, Ok(Outcome::Finished { task_id, result })) => self.on_finished(task_id, result),
            (_, Ok(Outcome::Published { task_id, result })) => self.on_published(task_id, result),
            // Asked for with its own origin (above).
            (_, Ok(Outcome::Usage(_))) => {}
            (_, Ok(Outcome::Transcript { session_id, bytes })) => {
                self.on_transcript(session_id, bytes)
            }
            (_, Ok(Outcome::Live(live))) => {
                if matches!(self.modal, Modal::None) {
                    self.open(Modal::Confirm(Confirm::Stop { live }));
                }
            }
            (_, Ok(Outcome::Stopped(text))) => {
                self.farewell = Some(text);
                self.quit = true;
            }
            (_, Ok(Outcome::Done(text))) => {
                if !text.is_empty() {
                    self.notify(text, Level::Info);
                }
            }
            (Origin::Transcript, Err(e)) => {
                self.transcript_pending = false;
                self.notify(format!("cannot read the transcript: {e}"), Level::Error);
            }
            (_, Err(e)) => self.notify(e, Level::Error),
        }
    }

    pub fn on_engine(&mut self, ev: Result<Event, broadcast::error::RecvError>) {
        match ev {
            Ok(Event::Screen { session_id }) => {
                if self.on_show(&session_id) {
                    match &mut self.scroll {
                        Some(s) => {
                            if !s.new_output {
                                s.new_output = true;
                                self.dirty = true;
                            }
                        }
                        None => self.dirty = true,
                    }
                }
            }
            Ok(Event::Task {
                kind: TaskEventKind::Output,
                task,
                ..
            }) => {
                // New output lines show only in the selected task's details (the grid shows
                // terminals, drawn on screen events): 50 busy agents' output made the TUI
                // redraw at its frame cap for one agent that changed ten times a second. Its
                // last line can wait for the frame its terminal's next change draws: a
                // working agent's output and screen change together, and each made a frame.
                self.stale = true;
                if self.grid.is_none()
                    && matches!(&self.selected, Some(Selected::Task(id)) if *id == task.id)
                {
                    self.redraw_within(LAST_LINE_WAIT);
                }
            }
            Ok(Event::Task { kind, task, .. }) => {
                if matches!(
                    kind,
                    TaskEventKind::Completed | TaskEventKind::Failed | TaskEventKind::Cancelled
                ) && self.selected != Some(Selected::Task(task.id.clone()))
                {
                    self.unseen.insert(task.id.clone());
                }
                self.stale = true;
                self.dirty = true;
                self.on_task_event_for_review(kind, &task);
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                self.stale = true;
                self.dirty = true;
            }
            Err(broadcast::error::RecvError::Closed) => {}
        }
    }

    /// Asks for a frame that may wait up to `wait` to come with another one.
    pub(crate) fn redraw_within(&mut self, wait: Duration) {
        let by = Instant::now() + wait;
        self.dirty_by = Some(self.dirty_by.map_or(by, |earlier| earlier.min(by)));
    }

    /// When a frame is wanted for what changed: at once (a time not after now) or by a later
    /// time; `None` when nothing changed since the last frame.
    pub fn frame_wanted_by(&self) -> Option<Instant> {
        if self.dirty {
            return Some(Instant::now());
        }
        self.dirty_by
    }

    /// When the loop must wake up by itself: elapsed times tick while a task runs, and
    /// notices expire. `None`: nothing animates, sleep until input.
    pub fn next_wake(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut wake: Option<Instant> = None;
        let now_ms = self.now_ms();
        // The next time a running task's elapsed time changes on screen (the grid shows
        // none: idle agents in it cost no frames).
        let next_change = self
            .snap
            .tasks
            .iter()
            .filter(|_| self.grid.is_none())
            .filter(|t| t.status() == TaskStatus::Running)
            .filter_map(|t| t.metadata.started_at)
            .map(|start| elapsed::next_change_in_ms(start, now_ms))
            .min();
        if let Some(ms) = next_change {
            wake = Some(now + Duration::from_millis(ms.clamp(1, 60_000) as u64));
        }
        if let Some(n) = &self.notice {
            wake = Some(wake.map_or(n.until, |w| w.min(n.until)));
        }
        wake
    }

    /// Called when the wake-up time passed.
    pub fn on_tick(&mut self) {
        if let Some(n) = &self.notice
            && n.until <= Instant::now()
        {
            self.notice = None;
        }
        self.dirty = true;
    }

    /// A frame: the state brought up to date and laid out for the frame's size, drawn, then
    /// the shown PTY sized to the pane it is drawn in (decided here, never while drawing).
    pub fn draw(&mut self, frame: &mut ratatui::Frame) {
        self.refresh_if_stale();
        let whole = self.zoom || self.grid.is_some();
        self.areas = crate::views::layout(frame.area())
            .map(|a| if whole { crate::views::zoomed(a) } else { a });
        if let Some(a) = self.areas {
            self.layout_grid(a.term);
            self.prepare_transcript();
        }
        self.render(frame);
        if self.grid.is_some() {
            self.sync_grid_sizes();
        } else {
            self.sync_pty_size();
        }
    }

    /// Resizes the shown session's PTY to the terminal pane's inner size when they differ.
    pub(crate) fn sync_pty_size(&mut self) {
        let Some(a) = self.areas else { return };
        if !self.shown_session_live() {
            return;
        }
        if let Some(sid) = self.shown_session_id() {
            self.resize_to(&sid, a.term_inner.width, a.term_inner.height);
        }
    }
}

/// The shown tasks (indices into `tasks`, in the list's order) as a tree: each task right
/// after its parent, children in the list's order, with how deep each sits. A task whose
/// parent is not shown (filtered out, deleted, or in another status group when `grouped`)
/// is a root where it stands.
fn family_tree(
    tasks: &[std::sync::Arc<orchestra_proto::task::Task>],
    shown: &[usize],
    grouped: bool,
) -> Vec<(usize, u8)> {
    let at: std::collections::HashMap<&str, usize> =
        shown.iter().map(|&i| (tasks[i].id.as_str(), i)).collect();
    let parent_of = |i: usize| {
        let t = &tasks[i];
        let p = *at.get(t.metadata.parent_task_id.as_deref()?)?;
        (p != i && (!grouped || tasks[p].status() == t.status())).then_some(p)
    };
    let mut children: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    let mut roots = Vec::new();
    for &i in shown {
        match parent_of(i) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut out = Vec::with_capacity(shown.len());
    let mut stack: Vec<(usize, u8)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        if out.len() >= shown.len() {
            break; // a damaged chain of parents cannot make the list longer than the tasks
        }
        out.push((i, depth));
        if let Some(kids) = children.get(&i) {
            stack.extend(kids.iter().rev().map(|&k| (k, depth.saturating_add(1))));
        }
    }
    out
}
