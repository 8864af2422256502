//! How the task list is ordered, and keeping that choice across restarts in a small file of
//! the state directory (`tui-list-order`, mode 0600 like the rest of it).

use orchestra_proto::task::{Task, TaskStatus};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The order of the task list; `o` cycles through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    /// Oldest first, as created.
    #[default]
    Created,
    /// By name (case-insensitive), then created.
    Name,
    /// Live work first (running, paused, pending), then finished; created within each.
    Status,
    /// As `Status`, under a heading per status.
    Grouped,
}

impl ListOrder {
    const ALL: [ListOrder; 4] = [
        ListOrder::Created,
        ListOrder::Name,
        ListOrder::Status,
        ListOrder::Grouped,
    ];

    pub fn next(self) -> ListOrder {
        let i = Self::ALL.iter().position(|o| *o == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// As written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ListOrder::Created => "created",
            ListOrder::Name => "name",
            ListOrder::Status => "status",
            ListOrder::Grouped => "grouped",
        }
    }

    /// As said on screen.
    pub fn label(self) -> &'static str {
        match self {
            ListOrder::Created => "by created",
            ListOrder::Name => "by name",
            ListOrder::Status => "by status",
            ListOrder::Grouped => "grouped by status",
        }
    }

    fn parse(s: &str) -> Option<ListOrder> {
        Self::ALL.into_iter().find(|o| o.as_str() == s.trim())
    }

    /// Whether the list shows a heading per status.
    pub fn grouped(self) -> bool {
        self == ListOrder::Grouped
    }

    /// The tasks' indices in this order (`tasks` are oldest first).
    pub fn arrange(self, tasks: &[Arc<Task>]) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..tasks.len()).collect();
        match self {
            ListOrder::Created => {}
            ListOrder::Name => idx.sort_by_cached_key(|&i| tasks[i].name.to_lowercase()),
            ListOrder::Status | ListOrder::Grouped => {
                idx.sort_by_key(|&i| status_rank(tasks[i].status()))
            }
        }
        idx
    }
}

/// Where a status goes in the list: what needs attention first.
pub fn status_rank(s: TaskStatus) -> usize {
    match s {
        TaskStatus::Running => 0,
        TaskStatus::Paused => 1,
        TaskStatus::Pending => 2,
        TaskStatus::Failed => 3,
        TaskStatus::Cancelled => 4,
        TaskStatus::Completed => 5,
    }
}

/// The file's name in the state directory, and the temporary file it is written through.
const FILE: &str = "tui-list-order";
const FILE_TMP: &str = "tui-list-order.tmp";

fn file(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

/// The order kept in the state directory; the default when there is none (or it is unreadable).
pub fn load(state_dir: &Path) -> ListOrder {
    std::fs::read_to_string(file(state_dir))
        .ok()
        .and_then(|s| ListOrder::parse(&s))
        .unwrap_or_default()
}

/// Keeps the order in the state directory, readable by the user only.
pub fn save(state_dir: &Path, order: ListOrder) -> std::io::Result<()> {
    orchestra_sys::private::replace_private_file(
        state_dir,
        FILE,
        FILE_TMP,
        format!("{}\n", order.as_str()).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_survives_a_restart_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), ListOrder::Created);
        save(dir.path(), ListOrder::Grouped).unwrap();
        assert_eq!(load(dir.path()), ListOrder::Grouped);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(file(dir.path()), "nonsense").unwrap();
        assert_eq!(load(dir.path()), ListOrder::Created);
        let mut o = ListOrder::Created;
        let mut seen = vec![];
        for _ in 0..4 {
            seen.push(o.as_str());
            o = o.next();
        }
        assert_eq!(seen, ["created", "name", "status", "grouped"]);
        assert_eq!(o, ListOrder::Created);
    }
}
