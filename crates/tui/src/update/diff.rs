//! Reviewing and finishing worktree tasks: `d` opens the selected task's diff (read through
//! the cockpit, off the UI loop: the view says it is reading meanwhile), its keys scroll and
//! jump between files; `M`/`X`/`P` ask y/n before a merge, discard or pull request, and a refusal is shown whole
//! in the task's diff view. The worktrees' disk use is asked for when tasks start, finish or
//! go, one request at a time.

use crate::app::*;
use crate::backend::{Command, Outcome};
use crate::diff_view::{Body, DiffView, PreparedDiff, no_diff_reason};
use crate::keymap::{Action, Context};
use crate::variant_compare::Compare;
use crossterm::event::KeyEvent;
use orchestra_proto::task::Task;
use orchestra_proto::wire::TaskEventKind;
use std::sync::Arc;

impl App {
    /// The open diff view.
    pub fn diff_view(&self) -> Option<&DiffView> {
        self.review.diff.as_ref()
    }

    /// The worktrees' disk use, as last read.
    pub fn worktree_usage(&self) -> Option<&crate::diff_view::WorktreeUsage> {
        self.review.usage.as_ref()
    }

    /// `d`: the diff view of the selected task.
    pub(crate) fn open_diff(&mut self) {
        if let Some(t) = self.selected_task_or_notice() {
            self.show_diff(&t, None);
        }
    }

    /// Opens the diff view of `task`, reading its diff when it has a worktree.
    fn show_diff(&mut self, task: &Task, refusal: Option<String>) {
        let mut view = DiffView::new(&task.id, &task.name);
        view.refusal = refusal;
        if task.metadata.is_variant_parent() {
            // A best-of-N task has no worktree of its own: its variants are compared.
            match Compare::of(task, &self.snap.tasks) {
                Some(c) => view.compare = Some(c),
                None => {
                    view.body = Body::Nothing(format!(
                        "{:?} has fewer than two variants to compare.",
                        task.name
                    ))
                }
            }
            self.notice = None;
            self.typing = false;
            self.review.diff = Some(view);
            self.read_compared();
            return;
        }
        match no_diff_reason(task) {
            Some(why) => view.body = Body::Nothing(why),
            None => self.run(Command::Diff(task.id.clone()), Origin::Action),
        }
        self.notice = None;
        self.typing = false;
        self.review.diff = Some(view);
    }

    /// A key while the diff view is open (and no overlay is over it).
    pub(crate) fn on_diff_key(&mut self, key: &KeyEvent) {
        let Some(action) = self.keymap.lookup(Context::Diff, key) else {
            return;
        };
        let Some(v) = self.review.diff.as_mut() else {
            return;
        };
        match action {
            Action::DiffUp => v.scroll_by(-1),
            Action::DiffDown => v.scroll_by(1),
            Action::DiffPageUp => v.page_by(false),
            Action::DiffPageDown => v.page_by(true),
            Action::DiffTop => v.to_top(),
            Action::DiffBottom => v.to_end(),
            Action::NextFile => v.jump_file(true),
            Action::PrevFile => v.jump_file(false),
            Action::DiffLeft => v.scroll_sideways(-8),
            Action::DiffRight => v.scroll_sideways(8),
            Action::ReloadDiff if v.compare.is_some() => {
                v.refusal = None;
                if let Some(c) = v.compare.as_mut() {
                    c.diffs.clear();
                }
                self.read_compared();
            }
            Action::ReloadDiff => {
                v.refusal = None;
                let id = v.task_id.clone();
                self.run(Command::Diff(id), Origin::Action);
            }
            Action::CloseDiff => self.review.diff = None,
            Action::CompareLeft | Action::CompareRight => {
                if let Some(c) = v.compare.as_mut() {
                    c.cycle(action == Action::CompareLeft);
                    self.read_compared();
                }
            }
            Action::PickLeft => self.ask_pick(),
            Action::Merge | Action::Discard | Action::PullRequest => {
                let id = v.task_id.clone();
                match self.snap.tasks.iter().find(|t| t.id == id).cloned() {
                    Some(t) if action == Action::PullRequest => self.ask_pull_request(&t),
                    Some(t) => self.ask_finish(action == Action::Merge, &t),
                    None => self.notify("the task is gone", Level::Error),
                }
            }
            Action::Help => self.open(Modal::Help),
            _ => {}
        }
    }

    /// The mouse over the diff view: the wheel scrolls it, a click on a file jumps to it.
    pub(crate) fn mouse_diff(&mut self, m: &crossterm::event::MouseEvent) {
        use crossterm::event::{MouseButton, MouseEventKind};
        let Some(v) = self.review.diff.as_mut() else {
            return;
        };
        let changed = match m.kind {
            MouseEventKind::ScrollUp => {
                v.scroll_by(-3);
                true
            }
            MouseEventKind::ScrollDown => {
                v.scroll_by(3);
                true
            }
            MouseEventKind::Down(MouseButton::Left) => v.click(m.column, m.row),
            _ => false,
        };
        self.dirty |= changed;
    }

    /// `M`/`X` in the panes: about the selected task.
    pub(crate) fn ask_finish_selected(&mut self, merge: bool) {
        if let Some(t) = self.selected_task_or_notice() {
            self.ask_finish(merge, &t);
        }
    }

    /// Asks y/n before a merge (`merge`) or a discard, naming the task and what happens; a
    /// task that cannot be finished now is told why instead.
    fn ask_finish(&mut self, merge: bool, task: &Arc<Task>) {
        let verb = if merge { "merge" } else { "discard" };
        let Some(wt) = self.finishable(task, verb) else {
            return;
        };
        let (task_id, name, branch) = (task.id.clone(), task.name.clone(), wt.branch.clone());
        let confirm = if merge {
            Confirm::Merge {
                task_id,
                name,
                branch,
                base_branch: wt.base_branch.clone(),
            }
        } else {
            Confirm::Discard {
                task_id,
                name,
                branch,
            }
        };
        self.open(Modal::Confirm(confirm));
    }

    /// The task's live worktree when it can be finished now (`verb`: what was asked); else
    /// the user is told why.
    fn finishable(
        &mut self,
        task: &Task,
        verb: &str,
    ) -> Option<orchestra_proto::worktree::Worktree> {
        if let Some(why) = no_diff_reason(task) {
            self.notify(format!("nothing to {verb}: {why}"), Level::Error);
            return None;
        }
        let wt = task.metadata.worktree.as_ref()?;
        if !task.status().is_final() {
            let key = self
                .keymap
                .key_for(Context::Panes, Action::Cancel)
                .unwrap_or_default();
            self.notify(
                format!(
                    "{:?} is {}: {verb} it once it has finished (or cancel it first, {key})",
                    task.name,
                    task.status()
                ),
                Level::Error,
            );
            return None;
        }
        Some(wt.at.clone())
    }

    /// `P` in the diff view: asks y/n before pushing the task's branch and opening a pull
    /// request for it.
    fn ask_pull_request(&mut self, task: &Arc<Task>) {
        let Some(wt) = self.finishable(task, "push") else {
            return;
        };
        self.open(Modal::Confirm(Confirm::PullRequest {
            task_id: task.id.clone(),
            name: task.name.clone(),
            branch: wt.branch,
            base_branch: wt.base_branch,
        }));
    }

    /// `y` to a merge, discard or pull-request question.
    pub(crate) fn finish(&mut self, c: Confirm) {
        let (cmd, text) = match c {
            Confirm::Merge {
                task_id,
                name,
                base_branch,
                ..
            } => (
                Command::Merge(task_id),
                format!("merging {name:?} into {base_branch}…"),
            ),
            Confirm::Discard { task_id, name, .. } => {
                (Command::Discard(task_id), format!("discarding {name:?}…"))
            }
            Confirm::PullRequest { task_id, name, .. } => (
                Command::PullRequest(task_id),
                format!("pushing {name:?} and opening a pull request…"),
            ),
            Confirm::Pick {
                task_id,
                name,
                variant,
                ..
            } => (
                Command::Pick {
                    task_id,
                    variant: variant.clone(),
                },
                format!("picking {variant} for {name:?}…"),
            ),
            _ => return,
        };
        self.notify(text, Level::Info);
        self.run(cmd, Origin::Action);
    }

    /// The comparison's two diffs: those not read yet are asked for (a variant without a
    /// worktree says why at once); with both in, the comparison is shown.
    fn read_compared(&mut self) {
        let Some(v) = self.review.diff.as_mut() else {
            return;
        };
        let Some(c) = v.compare.as_mut() else {
            return;
        };
        let mut ask = Vec::new();
        for id in c.missing() {
            match self.snap.tasks.iter().find(|t| t.id == id) {
                Some(t) => match no_diff_reason(t) {
                    Some(why) => {
                        c.diffs.insert(id, Err(why));
                    }
                    None => ask.push(id),
                },
                None => {
                    c.diffs.insert(id, Err("the task is gone".into()));
                }
            }
        }
        match c.combined() {
            Some(Ok(d)) => v.loaded(Box::new(d)),
            Some(Err(e)) => v.body = Body::Nothing(e),
            None => v.body = Body::Loading,
        }
        for id in ask {
            self.run(Command::Diff(id), Origin::Action);
        }
    }

    /// `p` in a comparison: asks y/n before keeping the variant on the left (`[` brings
    /// another there), or says why it cannot be picked yet. (`P` is the pull request.)
    fn ask_pick(&mut self) {
        let Some(c) = self.review.diff.as_ref().and_then(|v| v.compare.as_ref()) else {
            self.notify(
                "p picks a variant of a best-of-N task: open its diff view (d on the task)",
                Level::Error,
            );
            return;
        };
        let (chosen, _) = c.pair();
        if let Some(open) = c.variants.iter().find(|v| !v.status.is_final()) {
            self.notify(
                format!(
                    "variant {} is still {}; wait for it or cancel it",
                    open.label, open.status
                ),
                Level::Error,
            );
            return;
        }
        let parent = c.parent_id.clone();
        let others = c
            .variants
            .iter()
            .filter(|v| v.label != chosen.label)
            .map(|v| v.label.clone())
            .collect();
        let name = self
            .snap
            .tasks
            .iter()
            .find(|t| t.id == parent)
            .map(|t| t.name.clone())
            .unwrap_or_default();
        self.open(Modal::Confirm(Confirm::Pick {
            task_id: parent,
            name,
            variant: chosen.label.clone(),
            others,
        }));
    }

    /// A diff read: shown when that task's view is still open; why there is none, said
    /// there (a failed reload keeps what was shown). A comparison takes its variants'.
    pub(crate) fn on_diff(&mut self, task_id: String, diff: Result<Box<PreparedDiff>, String>) {
        if let Some(c) = self
            .review
            .diff
            .as_mut()
            .and_then(|v| v.compare.as_mut())
            .filter(|c| c.variants.iter().any(|v| v.task_id == task_id))
        {
            c.diffs.insert(task_id, diff);
            self.read_compared();
            return;
        }
        let Some(v) = self.review.diff.as_mut().filter(|v| v.task_id == task_id) else {
            return;
        };
        match diff {
            Ok(d) => v.loaded(d),
            Err(e) if matches!(v.body, Body::Loaded(_)) => {
                self.notify(format!("cannot read the diff again: {e}"), Level::Error)
            }
            Err(e) => v.body = Body::Nothing(e),
        }
    }

    /// A merge or discard done (that task's view closes: its worktree is gone) or refused
    /// (the task's diff view shows orchestra's sentence, opened if it was not).
    pub(crate) fn on_finished(&mut self, task_id: String, result: Result<String, String>) {
        match result {
            Ok(text) => {
                if self
                    .review
                    .diff
                    .as_ref()
                    .is_some_and(|v| v.task_id == task_id)
                {
                    self.review.diff = None;
                }
                self.notify(text, Level::Info);
                self.ask_usage();
            }
            Err(e) => self.show_refusal(&task_id, e),
        }
    }

    /// A pull request opened (said in the status bar; the diff view stays, as the worktree
    /// does) or refused (said in the task's diff view).
    pub(crate) fn on_published(&mut self, task_id: String, result: Result<String, String>) {
        match result {
            Ok(text) => {
                if let Some(v) = self.review.diff.as_mut().filter(|v| v.task_id == task_id) {
                    v.refusal = None;
                }
                self.notify(text, Level::Info);
            }
            Err(e) => self.show_refusal(&task_id, e),
        }
    }

    /// Orchestra's refusal, whole, in the task's diff view (opened if it was not).
    fn show_refusal(&mut self, task_id: &str, e: String) {
        let task = self.snap.tasks.iter().find(|t| t.id == task_id).cloned();
        match (task, self.review.diff.as_mut()) {
            (_, Some(v)) if v.task_id == task_id => v.refusal = Some(e),
            (Some(t), _) => self.show_diff(&t, Some(e)),
            (None, _) => self.notify(e, Level::Error),
        }
    }

    /// Asks for the worktrees' disk use (one request at a time; asked again once it is back
    /// when something changed meanwhile). Not while no task has a worktree.
    pub(crate) fn ask_usage(&mut self) {
        let any = self
            .snap
            .tasks
            .iter()
            .any(|t| t.metadata.worktree.as_ref().is_some_and(|w| w.is_live()));
        if any || self.review.usage.is_some() {
            self.request_usage();
        }
    }

    fn request_usage(&mut self) {
        // Without a runtime the request could not run, and would never come back.
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if self.review.usage_pending {
            self.review.usage_again = true;
            return;
        }
        self.review.usage_pending = true;
        self.run(Command::WorktreeUsage, Origin::Usage);
    }

    pub(crate) fn on_usage(&mut self, result: Result<Outcome, String>) {
        self.review.usage_pending = false;
        match result {
            Ok(Outcome::Usage(u)) => self.review.usage = Some(u),
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "worktree usage not read"),
        }
        if std::mem::take(&mut self.review.usage_again) {
            self.request_usage();
        }
    }

    /// A task event that may change what a worktree holds or whether it exists: its
    /// creation (`Updated`), the agent's end, a merge or discard (`Updated`), a deletion. The
    /// disk use is asked for again, and the task's open diff view is read again.
    pub(crate) fn on_task_event_for_review(&mut self, kind: TaskEventKind, task: &Task) {
        let may_change = matches!(
            kind,
            TaskEventKind::Updated
                | TaskEventKind::Completed
                | TaskEventKind::Failed
                | TaskEventKind::Cancelled
                | TaskEventKind::Deleted
        );
        if !may_change {
            return;
        }
        if task.metadata.worktree.is_some() {
            self.request_usage();
        }
        // A comparison follows its variants: their statuses and checks, their diffs.
        let compared = self
            .review
            .diff
            .as_mut()
            .and_then(|v| v.compare.as_mut())
            .filter(|c| task.metadata.parent_task_id.as_deref() == Some(c.parent_id.as_str()));
        if let Some(c) = compared {
            c.refresh(&self.snap.tasks);
            let (a, b) = c.pair();
            if a.task_id == task.id || b.task_id == task.id {
                c.diffs.remove(&task.id);
            }
            self.read_compared();
            return;
        }
        if let Some(v) = self
            .review
            .diff
            .as_mut()
            .filter(|v| v.task_id == task.id && v.compare.is_none())
        {
            match no_diff_reason(task) {
                Some(why) => v.body = Body::Nothing(why),
                None => self.run(Command::Diff(task.id.clone()), Origin::Action),
            }
        }
    }
}
