//! Reviewing a worktree task from the TUI: its diff as the diff view shows it (the files with
//! their counts and the unified diff, split into classified lines once, off the UI thread,
//! with where each file starts), scrolled and jumped through by line; why a task has nothing
//! to show; and the disk the task worktrees use.
//!
//! [`TaskDiff`] and [`WorktreeUsage`] are the TUI's own small copies of what
//! `GET /tasks/:id/diff` and `GET /worktrees` answer, until the wire types carry them.

use orchestra_proto::task::{Isolation, Task, WorktreeOutcome};
use serde::Deserialize;
use std::collections::HashMap;

/// One changed file of a task's diff.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffFile {
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub status: String,
    /// Line counts; `None` for a binary file.
    #[serde(default)]
    pub added: Option<u64>,
    #[serde(default)]
    pub removed: Option<u64>,
}

/// A task's changes against its base (`{diff: …}` of `GET /tasks/:id/diff`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDiff {
    pub branch: String,
    pub base_branch: String,
    /// The base branch has moved since the task started.
    #[serde(default)]
    pub base_moved: bool,
    #[serde(default)]
    pub files: Vec<DiffFile>,
    /// The unified diff of all files.
    #[serde(default)]
    pub patch: String,
}

impl From<orchestra_proto::worktree::Diff> for TaskDiff {
    fn from(d: orchestra_proto::worktree::Diff) -> TaskDiff {
        TaskDiff {
            branch: d.branch,
            base_branch: d.base_branch,
            base_moved: d.base_moved,
            files: d
                .files
                .into_iter()
                .map(|f| DiffFile {
                    path: f.path,
                    status: f.status.to_string(),
                    added: f.added,
                    removed: f.removed,
                })
                .collect(),
            patch: d.patch,
        }
    }
}

/// The disk live task worktrees use (`GET /worktrees`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeUsage {
    pub bytes: u64,
    /// Bytes per task id.
    pub per_task: HashMap<String, u64>,
}

/// The notice after a merge.
pub fn merged_note(name: &str, base_branch: &str, fast_forward: bool, files: usize) -> String {
    format!(
        "merged {name:?} into {base_branch} ({}, {files} file{}); its worktree and branch are removed",
        if fast_forward {
            "fast-forward"
        } else {
            "merge commit"
        },
        if files == 1 { "" } else { "s" }
    )
}

/// The notice after a pull request was opened.
pub fn published_note(name: &str, pr: &orchestra_proto::worktree::PullRequest) -> String {
    format!(
        "pushed {name:?} ({}) to {}; pull request: {}",
        pr.branch, pr.remote, pr.url
    )
}

/// The notice after a pick: what was merged, and where the others are kept.
pub fn picked_note(p: &orchestra_proto::wire::Picked) -> String {
    let mut note = format!(
        "picked {} of {:?}: merged into {} ({} file{})",
        p.variant,
        p.task.name,
        p.merge.base_branch,
        p.merge.files.len(),
        if p.merge.files.len() == 1 { "" } else { "s" }
    );
    for d in &p.discarded {
        note.push_str(&format!(
            "; {} discarded, kept in {}",
            d.variant, d.snapshot_ref
        ));
    }
    note
}

/// The notice after a discard.
pub fn discarded_note(name: &str, snapshot_ref: &str) -> String {
    format!("discarded {name:?}; its work is kept in {snapshot_ref}")
}

/// What a line of a unified diff is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// `diff --git a/… b/…`: a file begins.
    File,
    /// `index`, `---`, `+++`, modes, `\ No newline…`, `Binary files…`.
    Meta,
    /// `@@ -a,b +c,d @@`.
    Hunk,
    Added,
    Removed,
    Context,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// Tabs expanded, control characters shown as `?` (escape sequences in the agent's files
    /// must not reach the terminal).
    pub text: String,
}

/// Columns a tab takes in the diff view.
const TAB: usize = 4;

fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => out.extend(std::iter::repeat_n(' ', TAB)),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The most lines of a diff the view holds (each kept as a string for as long as the view is
/// open): a diff longer than this is for `orchestra task diff` and a pager.
pub const MAX_LINES: usize = 50_000;

/// The patch's first `max` lines, classified; the index of each `diff --git` line among
/// them; how many lines were left out.
pub fn classify(patch: &str, max: usize) -> (Vec<DiffLine>, Vec<usize>, usize) {
    let mut lines = Vec::new();
    let mut starts = Vec::new();
    // Between a file's header and its first hunk every line is meta (`--- a/x` is not a
    // removed line).
    let mut in_hunk = false;
    let mut all = patch.lines();
    for raw in all.by_ref().take(max) {
        let kind = if raw.starts_with("diff --git ") {
            in_hunk = false;
            starts.push(lines.len());
            LineKind::File
        } else if raw.starts_with("@@") {
            in_hunk = true;
            LineKind::Hunk
        } else if !in_hunk {
            LineKind::Meta
        } else if raw.starts_with('+') {
            LineKind::Added
        } else if raw.starts_with('-') {
            LineKind::Removed
        } else if raw.starts_with('\\') {
            LineKind::Meta
        } else {
            LineKind::Context
        };
        lines.push(DiffLine {
            kind,
            text: clean(raw),
        });
    }
    (lines, starts, all.count())
}

/// A diff ready to show: its patch split into classified lines, with where each file
/// starts. Made in the command's future, off the UI thread: a long diff costs no frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedDiff {
    /// The diff, its patch moved into `lines`.
    pub diff: TaskDiff,
    pub lines: Vec<DiffLine>,
    /// The first line of each file, in the order of `diff.files`.
    pub starts: Vec<usize>,
}

impl PreparedDiff {
    pub fn new(task_id: &str, mut diff: TaskDiff) -> PreparedDiff {
        let patch = std::mem::take(&mut diff.patch);
        let (mut lines, starts, left_out) = classify(&patch, MAX_LINES);
        if left_out > 0 {
            lines.push(DiffLine {
                kind: LineKind::Hunk,
                text: format!(
                    "… {left_out} more lines: `orchestra task diff {task_id}` prints them all"
                ),
            });
        }
        PreparedDiff {
            diff,
            lines,
            starts,
        }
    }
}

/// What the diff view holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Asked for; not here yet.
    Loading,
    /// Why there is no diff to show (a sentence).
    Nothing(String),
    Loaded(Box<PreparedDiff>),
}

/// The diff view of one task (`d`).
#[derive(Debug, Clone)]
pub struct DiffView {
    pub task_id: String,
    pub name: String,
    pub body: Body,
    /// The first line shown.
    pub top: usize,
    /// The file jumped to, or the one at the top.
    pub file: usize,
    /// Rows of diff shown in the last frame (0 before the first).
    pub page: usize,
    /// Columns scrolled to the right (long lines).
    pub left: usize,
    /// Where the file list was drawn in the last frame, and its first file shown (for a
    /// click on a file).
    pub list: Option<(ratatui::layout::Rect, usize)>,
    /// A merge or discard orchestra refused, in its words (the files it names).
    pub refusal: Option<String>,
    /// Comparing two variants of a best-of-N task (`task_id` is the parent's).
    pub compare: Option<crate::variant_compare::Compare>,
}

impl DiffView {
    pub fn new(task_id: &str, name: &str) -> DiffView {
        DiffView {
            task_id: task_id.to_string(),
            name: name.to_string(),
            body: Body::Loading,
            top: 0,
            file: 0,
            page: 0,
            left: 0,
            list: None,
            refusal: None,
            compare: None,
        }
    }

    /// The diff arrived; a reload keeps the place when the same file is still there.
    pub fn loaded(&mut self, diff: Box<PreparedDiff>) {
        let keep = self.current_path().map(str::to_string);
        self.body = Body::Loaded(diff);
        match keep.and_then(|p| self.files().iter().position(|f| f.path == p)) {
            Some(i) => {
                self.file = i;
                self.top = self.top.min(self.max_top());
            }
            None => {
                self.file = 0;
                self.top = 0;
            }
        }
    }

    pub fn files(&self) -> &[DiffFile] {
        match &self.body {
            Body::Loaded(d) => &d.diff.files,
            _ => &[],
        }
    }

    pub fn lines(&self) -> &[DiffLine] {
        match &self.body {
            Body::Loaded(d) => &d.lines,
            _ => &[],
        }
    }

    fn starts(&self) -> &[usize] {
        match &self.body {
            Body::Loaded(d) => &d.starts,
            _ => &[],
        }
    }

    fn current_path(&self) -> Option<&str> {
        self.files().get(self.file).map(|f| f.path.as_str())
    }

    /// The furthest the top line can go: the last page shows the end.
    pub fn max_top(&self) -> usize {
        self.lines().len().saturating_sub(self.page.max(1))
    }

    /// The file whose lines include `line`.
    fn file_at(&self, line: usize) -> usize {
        self.starts()
            .iter()
            .rposition(|&s| s <= line)
            .unwrap_or(0)
            .min(self.files().len().saturating_sub(1))
    }

    /// Scrolls by `delta` lines (negative: up).
    pub fn scroll_by(&mut self, delta: isize) {
        let top = (self.top as isize)
            .saturating_add(delta)
            .clamp(0, self.max_top() as isize) as usize;
        if top != self.top {
            self.top = top;
            self.file = self.file_at(top);
        }
    }

    /// Scrolls a page (less a line, to keep context) up or down.
    pub fn page_by(&mut self, down: bool) {
        let n = self.page.saturating_sub(1).max(1) as isize;
        self.scroll_by(if down { n } else { -n });
    }

    pub fn to_top(&mut self) {
        self.top = 0;
        self.file = 0;
    }

    pub fn to_end(&mut self) {
        self.top = self.max_top();
        self.file = self.files().len().saturating_sub(1);
    }

    /// Jumps to the next (`forward`) or previous file, its first line at the top as far as
    /// the end allows; from the middle of a file, back goes to that file's start first.
    pub fn jump_file(&mut self, forward: bool) {
        let n = self.files().len().min(self.starts().len());
        if n == 0 {
            return;
        }
        let cur = self.file.min(n - 1);
        let target = if forward {
            (cur + 1).min(n - 1)
        } else if self.top > self.starts()[cur] {
            cur
        } else {
            cur.saturating_sub(1)
        };
        self.file = target;
        self.top = self.starts()[target].min(self.max_top());
    }

    /// Scrolls long lines by `delta` columns (negative: back to the left).
    pub fn scroll_sideways(&mut self, delta: isize) {
        let widest = self
            .lines()
            .iter()
            .map(|l| unicode_width::UnicodeWidthStr::width(l.text.as_str()))
            .max()
            .unwrap_or(0);
        self.left = (self.left as isize)
            .saturating_add(delta)
            .clamp(0, widest as isize) as usize;
    }

    /// Jumps to the file at `row` of the file list as last drawn (a click there).
    pub fn click(&mut self, col: u16, row: u16) -> bool {
        let Some((area, first)) = self.list else {
            return false;
        };
        if !area.contains(ratatui::layout::Position::new(col, row)) {
            return false;
        }
        let i = first + usize::from(row - area.y);
        let Some(&start) = self.starts().get(i) else {
            return false;
        };
        self.file = i;
        self.top = start.min(self.max_top());
        true
    }

    /// Keeps the top line in range after the page changed size (from drawing).
    pub fn clamp(&mut self) {
        self.top = self.top.min(self.max_top());
    }
}

/// Why a task has no diff to show, when that is known without asking orchestra.
pub fn no_diff_reason(task: &Task) -> Option<String> {
    let name = &task.name;
    match &task.metadata.worktree {
        Some(wt) => match wt.outcome {
            None => None,
            Some(WorktreeOutcome::Merged) => Some(format!(
                "{name:?} was merged into {}: its worktree is gone and its changes are on {}.",
                wt.at.base_branch, wt.at.base_branch
            )),
            Some(WorktreeOutcome::Discarded) => Some(format!(
                "{name:?} was discarded: its worktree and branch are gone; its work is kept in {}.",
                orchestra_proto::worktree::snapshot_ref(&task.id)
            )),
            Some(WorktreeOutcome::Collected) => Some(format!(
                "The worktree of {name:?} was collected: its branch {} and {} keep its work.",
                wt.at.branch,
                orchestra_proto::worktree::snapshot_ref(&task.id)
            )),
        },
        None if task.metadata.isolation == Isolation::Worktree => Some(format!(
            "{name:?} has no worktree yet: it gets one when it starts, and its changes show here."
        )),
        None => Some(format!(
            "{name:?} runs in its directory without a worktree (isolation \"none\"), so there is no diff to review here."
        )),
    }
}

/// The review state of the app: the diff view and the worktrees' disk use.
#[derive(Debug, Default)]
pub struct Review {
    pub diff: Option<DiffView>,
    pub usage: Option<WorktreeUsage>,
    /// A usage request is out; `again`: something changed meanwhile, ask once more.
    pub usage_pending: bool,
    pub usage_again: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-a\n+agent\n+--- not meta\n ctx\n\\ No newline at end of file\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+\tb\x1b[2J\n";

    fn view(page: usize) -> DiffView {
        let mut v = DiffView::new("t1", "task");
        let diff = TaskDiff {
            branch: "orchestra/task-t1".into(),
            base_branch: "main".into(),
            base_moved: false,
            files: vec![
                DiffFile {
                    path: "a.txt".into(),
                    status: "modified".into(),
                    added: Some(2),
                    removed: Some(1),
                },
                DiffFile {
                    path: "b.txt".into(),
                    status: "added".into(),
                    added: Some(1),
                    removed: Some(0),
                },
            ],
            patch: PATCH.into(),
        };
        v.loaded(Box::new(PreparedDiff::new("t1", diff)));
        v.page = page;
        v
    }

    #[test]
    fn lines_are_classified_in_their_hunks() {
        let (lines, starts, left_out) = classify(PATCH, MAX_LINES);
        assert_eq!(left_out, 0);
        let kinds: Vec<LineKind> = lines.iter().map(|l| l.kind).collect();
        use LineKind::*;
        assert_eq!(
            kinds,
            vec![
                File, Meta, Meta, Meta, Hunk, Removed, Added, Added, Context, Meta, File, Meta,
                Meta, Meta, Hunk, Added
            ]
        );
        assert_eq!(starts, vec![0, 10]);
        // A tab is spaces, an escape is shown, never sent.
        assert_eq!(lines[15].text, "+    b?[2J");
    }

    #[test]
    fn a_long_diff_is_cut_saying_how_to_read_it_all() {
        let (lines, starts, left_out) = classify(PATCH, 12);
        assert_eq!((lines.len(), starts, left_out), (12, vec![0, 10], 4));
        let mut v = DiffView::new("t1", "task");
        let patch =
            "diff --git a/x b/x\n@@ -0,0 +1 @@\n".to_string() + &"+line\n".repeat(MAX_LINES);
        let diff = TaskDiff {
            patch,
            ..Default::default()
        };
        v.loaded(Box::new(PreparedDiff::new("t1", diff)));
        assert_eq!(v.lines().len(), MAX_LINES + 1);
        assert_eq!(
            v.lines()[MAX_LINES].text,
            "… 2 more lines: `orchestra task diff t1` prints them all"
        );
    }

    #[test]
    fn jumps_between_files_and_scrolls_within_range() {
        let mut v = view(4);
        assert_eq!((v.top, v.file), (0, 0));
        v.jump_file(true);
        // b.txt starts at line 10; 16 lines, 4 a page: the top goes no further than 12.
        assert_eq!((v.top, v.file), (10, 1));
        v.jump_file(true);
        assert_eq!((v.top, v.file), (10, 1));
        v.jump_file(false);
        assert_eq!((v.top, v.file), (0, 0));
        v.scroll_by(11);
        assert_eq!((v.top, v.file), (11, 1));
        // Back from the middle of a file goes to its start first.
        v.jump_file(false);
        assert_eq!((v.top, v.file), (10, 1));
        v.to_end();
        assert_eq!((v.top, v.file), (12, 1));
        v.scroll_by(100);
        assert_eq!(v.top, 12);
        v.page_by(false);
        assert_eq!((v.top, v.file), (9, 0));
        v.to_top();
        v.scroll_by(-3);
        assert_eq!((v.top, v.file), (0, 0));
    }

    #[test]
    fn long_lines_scroll_sideways_and_a_click_picks_a_file() {
        let mut v = view(4);
        v.scroll_sideways(8);
        assert_eq!(v.left, 8);
        v.scroll_sideways(-20);
        assert_eq!(v.left, 0);
        // The widest line is `\ No newline at end of file`: 27 columns.
        v.scroll_sideways(100);
        assert_eq!(v.left, 27);
        // The list drawn at rows 5.. from its first file: a click on its second row.
        v.list = Some((ratatui::layout::Rect::new(0, 5, 20, 4), 0));
        assert!(v.click(3, 6));
        assert_eq!((v.top, v.file), (10, 1));
        assert!(!v.click(3, 8), "no third file");
        assert!(!v.click(30, 5), "beside the list");
    }

    #[test]
    fn a_reload_keeps_the_place_in_the_same_file() {
        let mut v = view(4);
        v.jump_file(true);
        let again = match &v.body {
            Body::Loaded(d) => d.clone(),
            _ => unreachable!(),
        };
        v.loaded(again);
        assert_eq!((v.top, v.file), (10, 1));
    }
}
