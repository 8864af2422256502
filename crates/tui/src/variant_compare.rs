//! Comparing two variants of a best-of-N task in the diff view: file by file, which files
//! each changed, and for a file both changed the two versions' diffs one after the other;
//! each variant's status and checks above. The comparison is a [`PreparedDiff`] of its own,
//! so the diff view scrolls and jumps through it as through any diff.

use super::diff_view::{DiffFile, DiffLine, LineKind, PreparedDiff, TaskDiff};
use orchestra_proto::task::{CheckRun, Task, TaskStatus};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// One variant as the comparison shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub label: String,
    pub task_id: String,
    pub status: TaskStatus,
    pub checks: Vec<CheckRun>,
}

/// Which two variants of a parent are compared, and their diffs as read.
#[derive(Debug, Clone)]
pub struct Compare {
    pub parent_id: String,
    pub variants: Vec<Variant>,
    pub left: usize,
    pub right: usize,
    /// Each variant's diff, or why it has none, by task id.
    pub diffs: HashMap<String, Result<Box<PreparedDiff>, String>>,
}

/// The variants of `parent` among `tasks`, oldest first; a label run again is its newest run.
pub fn variants_of(parent: &str, tasks: &[Arc<Task>]) -> Vec<Variant> {
    let mut by_label: Vec<Variant> = Vec::new();
    let mut children: Vec<&Arc<Task>> = tasks
        .iter()
        .filter(|t| t.metadata.parent_task_id.as_deref() == Some(parent))
        .collect();
    children.sort_by_key(|t| t.metadata.created_at);
    for t in children {
        let Some(label) = t.metadata.variant.clone() else {
            continue;
        };
        let v = Variant {
            label,
            task_id: t.id.clone(),
            status: t.status(),
            checks: t
                .metadata
                .result
                .as_ref()
                .map(|r| r.checks.clone())
                .unwrap_or_default(),
        };
        match by_label.iter_mut().find(|o| o.label == v.label) {
            Some(old) => *old = v,
            None => by_label.push(v),
        }
    }
    by_label
}

/// `✓ cargo test  ✗ make lint (exit 1)`, or that none ran.
pub fn checks_text(checks: &[CheckRun]) -> String {
    if checks.is_empty() {
        return "no checks ran".into();
    }
    checks
        .iter()
        .map(|c| {
            if c.passed() {
                format!("✓ {}", c.command)
            } else {
                let why = match (c.exit_code, &c.error) {
                    (_, Some(e)) => e.clone(),
                    (Some(code), None) => format!("exit {code}"),
                    (None, None) => "failed".into(),
                };
                format!("✗ {} ({why})", c.command)
            }
        })
        .collect::<Vec<_>>()
        .join("  ")
}

impl Compare {
    /// The first two variants of `parent` compared; `None` when it has fewer than two.
    pub fn of(parent: &Task, tasks: &[Arc<Task>]) -> Option<Compare> {
        let variants = variants_of(&parent.id, tasks);
        (variants.len() >= 2).then(|| Compare {
            parent_id: parent.id.clone(),
            variants,
            left: 0,
            right: 1,
            diffs: HashMap::new(),
        })
    }

    /// The variants' statuses and checks as they are now (the two compared stay).
    pub fn refresh(&mut self, tasks: &[Arc<Task>]) {
        let now = variants_of(&self.parent_id, tasks);
        let keep = |i: usize, this: &Compare| {
            let label = &this.variants.get(i)?.label;
            now.iter().position(|v| &v.label == label)
        };
        let (left, right) = (keep(self.left, self), keep(self.right, self));
        if now.len() >= 2 {
            self.left = left.unwrap_or(0);
            self.right = right
                .filter(|r| *r != self.left)
                .unwrap_or((0..now.len()).find(|i| *i != self.left).unwrap_or_default());
            self.variants = now;
        }
    }

    pub fn pair(&self) -> (&Variant, &Variant) {
        (&self.variants[self.left], &self.variants[self.right])
    }

    /// Compares another variant on the left (`left`) or the right, never the other side's.
    pub fn cycle(&mut self, left: bool) {
        let n = self.variants.len();
        let (side, other) = if left {
            (self.left, self.right)
        } else {
            (self.right, self.left)
        };
        let next = (1..n).map(|d| (side + d) % n).find(|i| *i != other);
        if let Some(next) = next {
            if left {
                self.left = next;
            } else {
                self.right = next;
            }
        }
    }

    /// The task ids whose diffs the comparison still needs.
    pub fn missing(&self) -> Vec<String> {
        let (a, b) = self.pair();
        [a, b]
            .into_iter()
            .filter(|v| !self.diffs.contains_key(&v.task_id))
            .map(|v| v.task_id.clone())
            .collect()
    }

    /// The comparison as one diff to show, once both diffs are in; an error says which
    /// variant has none.
    pub fn combined(&self) -> Option<Result<PreparedDiff, String>> {
        let (a, b) = self.pair();
        let da = self.diffs.get(&a.task_id)?;
        let db = self.diffs.get(&b.task_id)?;
        let (da, db) = match (da, db) {
            (Ok(da), Ok(db)) => (da, db),
            (Err(e), _) => return Some(Err(format!("variant {}: {e}", a.label))),
            (_, Err(e)) => return Some(Err(format!("variant {}: {e}", b.label))),
        };
        Some(Ok(combine((&a.label, da), (&b.label, db))))
    }
}

/// Each file's lines of a prepared diff, by path.
fn per_file(d: &PreparedDiff) -> BTreeMap<&str, (&DiffFile, &[DiffLine])> {
    let mut out = BTreeMap::new();
    for (i, f) in d.diff.files.iter().enumerate() {
        let Some(&start) = d.starts.get(i) else {
            continue;
        };
        let end = d.starts.get(i + 1).copied().unwrap_or(d.lines.len());
        out.insert(f.path.as_str(), (f, &d.lines[start..end]));
    }
    out
}

fn line(kind: LineKind, text: String) -> DiffLine {
    DiffLine { kind, text }
}

/// Two variants' diffs file by file: every path either changed, with each side's lines
/// (the left's first) under a line naming the side, or that the side left it alone. A file
/// entry's status says who changed it: `both`, `left` or `right`; its counts are both sides'.
pub fn combine((la, a): (&str, &PreparedDiff), (lb, b): (&str, &PreparedDiff)) -> PreparedDiff {
    let (fa, fb) = (per_file(a), per_file(b));
    let mut paths: Vec<&str> = fa.keys().chain(fb.keys()).copied().collect();
    paths.sort_unstable();
    paths.dedup();
    let mut files = Vec::new();
    let mut lines = Vec::new();
    let mut starts = Vec::new();
    for path in paths {
        let (left, right) = (fa.get(path), fb.get(path));
        let status = match (left, right) {
            (Some(_), Some(_)) => "both",
            (Some(_), None) => "left",
            _ => "right",
        };
        let sum = |pick: fn(&DiffFile) -> Option<u64>| -> Option<u64> {
            let l = left.map(|(f, _)| pick(f)).unwrap_or(Some(0));
            let r = right.map(|(f, _)| pick(f)).unwrap_or(Some(0));
            Some(l? + r?)
        };
        files.push(DiffFile {
            path: path.to_string(),
            status: status.into(),
            added: sum(|f| f.added),
            removed: sum(|f| f.removed),
        });
        starts.push(lines.len());
        let who = match status {
            "both" => format!("changed by {la} and {lb}"),
            "left" => format!("changed by {la} only"),
            _ => format!("changed by {lb} only"),
        };
        lines.push(line(LineKind::File, format!("━━ {path} · {who}")));
        for (label, side) in [(la, left), (lb, right)] {
            match side {
                Some((f, body)) => {
                    lines.push(line(LineKind::Hunk, format!("── {label}: {} ──", f.status)));
                    // Its own `diff --git` header is a detail here, not a file of the list.
                    lines.extend(body.iter().map(|l| DiffLine {
                        kind: if l.kind == LineKind::File {
                            LineKind::Meta
                        } else {
                            l.kind
                        },
                        text: l.text.clone(),
                    }));
                }
                None => lines.push(line(LineKind::Meta, format!("── {label}: unchanged"))),
            }
        }
    }
    PreparedDiff {
        diff: TaskDiff {
            branch: format!("{la} vs {lb}"),
            base_branch: a.diff.base_branch.clone(),
            base_moved: a.diff.base_moved || b.diff.base_moved,
            files,
            patch: String::new(),
        },
        lines,
        starts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(files: &[(&str, &str)]) -> PreparedDiff {
        let patch: String = files
            .iter()
            .map(|(p, body)| {
                format!(
                    "diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old\n+{body}\n"
                )
            })
            .collect();
        let diff = TaskDiff {
            branch: "b".into(),
            base_branch: "main".into(),
            base_moved: false,
            files: files
                .iter()
                .map(|(p, _)| DiffFile {
                    path: p.to_string(),
                    status: "modified".into(),
                    added: Some(1),
                    removed: Some(1),
                })
                .collect(),
            patch,
        };
        PreparedDiff::new("t", diff)
    }

    #[test]
    fn two_variants_side_by_side_file_by_file() {
        let a = prepared(&[("shared.txt", "left"), ("left.txt", "L")]);
        let b = prepared(&[("shared.txt", "right"), ("right.txt", "R")]);
        let c = combine(("claude", &a), ("codex", &b));
        let files: Vec<(&str, &str, Option<u64>)> = c
            .diff
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.status.as_str(), f.added))
            .collect();
        assert_eq!(
            files,
            [
                ("left.txt", "left", Some(1)),
                ("right.txt", "right", Some(1)),
                ("shared.txt", "both", Some(2))
            ]
        );
        assert_eq!(c.starts.len(), 3);
        let shared: Vec<&str> = c.lines[c.starts[2]..]
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(shared[0], "━━ shared.txt · changed by claude and codex");
        let left_at = shared.iter().position(|l| *l == "+left").unwrap();
        let right_at = shared.iter().position(|l| *l == "+right").unwrap();
        assert!(left_at < right_at, "{shared:?}");
        let first: Vec<&str> = c.lines[..c.starts[1]]
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert!(first.contains(&"── codex: unchanged"), "{first:?}");
        // Only the comparison's own file lines start files.
        let file_lines = c.lines.iter().filter(|l| l.kind == LineKind::File).count();
        assert_eq!(file_lines, 3);
    }

    #[test]
    fn cycling_never_compares_a_variant_with_itself() {
        let v = |l: &str| Variant {
            label: l.into(),
            task_id: l.into(),
            status: TaskStatus::Completed,
            checks: vec![],
        };
        let mut c = Compare {
            parent_id: "p".into(),
            variants: vec![v("a"), v("b"), v("c")],
            left: 0,
            right: 1,
            diffs: HashMap::new(),
        };
        c.cycle(true);
        assert_eq!((c.left, c.right), (2, 1));
        c.cycle(false);
        assert_eq!((c.left, c.right), (2, 0));
        assert_eq!(c.missing(), ["c", "a"]);
    }

    #[test]
    fn checks_say_what_passed_and_what_failed() {
        let run = |cmd: &str, code: i32| CheckRun {
            command: cmd.into(),
            exit_code: Some(code),
            duration_ms: 1,
            output_tail: String::new(),
            error: None,
        };
        assert_eq!(checks_text(&[]), "no checks ran");
        assert_eq!(
            checks_text(&[run("cargo test", 0), run("make lint", 2)]),
            "✓ cargo test  ✗ make lint (exit 2)"
        );
    }
}
