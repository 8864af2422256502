//! A task's family, read from a list of tasks: the engine walks it to act on a parent with
//! its children, the TUI to ask whether they go too.

use super::Task;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Every task below `id` in `tasks` (children, their children, …), each parent before its
/// children and siblings in the list's order. Links that loop are followed once.
pub fn descendants<'a>(tasks: &'a [Arc<Task>], id: &str) -> Vec<&'a Arc<Task>> {
    let mut children: HashMap<&str, Vec<&'a Arc<Task>>> = HashMap::new();
    for t in tasks {
        if let Some(parent) = t.metadata.parent_task_id.as_deref() {
            children.entry(parent).or_default().push(t);
        }
    }
    let mut found = Vec::new();
    let mut seen: HashSet<&str> = HashSet::from([id]);
    let mut stack: Vec<&'a Arc<Task>> = children
        .get(id)
        .into_iter()
        .flatten()
        .rev()
        .copied()
        .collect();
    while let Some(t) = stack.pop() {
        if !seen.insert(t.id.as_str()) {
            continue;
        }
        found.push(t);
        stack.extend(
            children
                .get(t.id.as_str())
                .into_iter()
                .flatten()
                .rev()
                .copied(),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::NewTask;

    fn task(id: &str, parent: Option<&str>) -> Arc<Task> {
        Arc::new(Task::new(
            id.into(),
            NewTask {
                name: id.into(),
                parent_task_id: parent.map(str::to_string),
                ..NewTask::default()
            },
            0,
        ))
    }

    #[test]
    fn parents_come_before_their_children_and_loops_end() {
        let tasks = [
            task("g2", Some("c2")),
            task("c1", Some("p")),
            task("other", None),
            task("c2", Some("p")),
            task("g1", Some("c1")),
            task("p", Some("g1")), // a damaged store: p under its own grandchild
        ];
        let ids: Vec<&str> = descendants(&tasks, "p")
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        assert_eq!(ids, ["c1", "g1", "c2", "g2"]);
        assert!(descendants(&tasks, "other").is_empty());
    }
}
