//! Parents and children: a task made by an agent (through its MCP server or its own
//! credential) is a child of the agent's task. An agent's rights reach its task's
//! descendants, so these walks answer every request such an agent sends.

use super::Engine;
pub use orchestra_proto::task::FamilyOp;
use orchestra_proto::task::{Approval, ChildOutcome, Task};
use std::sync::Arc;

/// How far up a chain of parents is followed. Parents exist before their children, so a
/// chain cannot loop; the bound keeps a damaged store from making a walk endless.
const MAX_DEPTH: usize = 256;

/// Where a task stands to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinship {
    Itself,
    Descendant,
    Unrelated,
}

impl Engine {
    /// Where task `id` stands to task `ancestor`.
    pub fn kinship(&self, id: &str, ancestor: &str) -> Kinship {
        if id == ancestor {
            return Kinship::Itself;
        }
        let mut at = self.get_task(id).ok();
        for _ in 0..MAX_DEPTH {
            let Some(parent) = at.as_ref().and_then(|t| t.metadata.parent_task_id.clone()) else {
                return Kinship::Unrelated;
            };
            if parent == ancestor {
                return Kinship::Descendant;
            }
            at = self.get_task(&parent).ok();
        }
        Kinship::Unrelated
    }

    /// How much an agent on `provider_id` under `approval` may do without asking anyone: its
    /// preset, except that a provider that is not a coding agent (`exec`, `shell`) runs what
    /// it is given without asking, which is `auto`.
    pub fn reach(&self, provider_id: Option<&str>, approval: Option<Approval>) -> Approval {
        let runs_commands = provider_id
            .and_then(|id| self.providers().get(id))
            .is_some_and(|p| !p.coding_agent);
        if runs_commands {
            Approval::Auto
        } else {
            approval.unwrap_or_default()
        }
    }

    /// [`Engine::reach`] of task `id`.
    pub fn task_reach(&self, id: &str) -> Option<Approval> {
        let t = self.get_task(id).ok()?;
        Some(self.reach(Some(&t.metadata.provider_id), t.metadata.approval))
    }

    /// The task a live session runs.
    pub fn session_task(&self, session_id: &str) -> Option<String> {
        self.get_session(session_id).ok().and_then(|s| s.task_id)
    }

    /// The children of `id`, oldest first.
    pub fn children_of(&self, id: &str) -> Vec<Arc<Task>> {
        let mut children: Vec<_> = self
            .list_tasks(None, None)
            .into_iter()
            .filter(|t| t.metadata.parent_task_id.as_deref() == Some(id))
            .collect();
        children.reverse();
        children
    }

    /// Every task below `id`: its children, their children, and so on, parents first.
    pub fn descendants_of(&self, id: &str) -> Vec<Arc<Task>> {
        let mut all = self.list_tasks(None, None);
        all.reverse(); // oldest first: children in the order they were made
        orchestra_proto::task::family::descendants(&all, id)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Applies `op` (pause, resume, cancel) to each of `id`'s descendants it fits: those
    /// in another state are left as they are, and a failure is logged, not returned, since
    /// the user asked for the parent and its family as far as it goes.
    pub async fn apply_to_descendants(&self, id: &str, op: FamilyOp) {
        for child in self.descendants_of(id) {
            if !op.applies_to(child.status()) {
                continue;
            }
            let done = match op {
                FamilyOp::Pause => self.pause_task(&child.id).await,
                FamilyOp::Resume => self.resume_task(&child.id).await,
                FamilyOp::Cancel => self.cancel_task(&child.id).await,
            };
            if let Err(e) = done {
                tracing::info!(parent = id, child = %child.id, error = %e, ?op, "a child was left as it is");
            }
        }
    }

    /// What became of `id`'s children so far, for its result.
    pub fn child_outcomes(&self, id: &str) -> Vec<ChildOutcome> {
        self.children_of(id)
            .iter()
            .map(|c| ChildOutcome {
                id: c.id.clone(),
                name: c.name.clone(),
                status: c.status(),
                summary: c
                    .metadata
                    .result
                    .as_ref()
                    .map(|r| r.summary.clone())
                    .or_else(|| c.metadata.error.clone())
                    .filter(|s| !s.trim().is_empty()),
            })
            .collect()
    }
}
