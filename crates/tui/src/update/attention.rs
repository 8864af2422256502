//! The attention queue in the app: arrivals queued unless looked at, the jump to the next
//! one, and the alerts the loop turns into notifications.

use crate::app::*;
use crate::attention::{self, Waiting};
use crate::backend::Snapshot;

impl App {
    /// Queues what came to need the user since `old`, except what the user is looking at:
    /// the selected task or session (in the grid, the selected tile; the other tiles are in
    /// view but not attended, so they queue). Drops what no longer needs them.
    pub(crate) fn note_arrivals(&mut self, old: &Snapshot) {
        for w in attention::arrivals(old, &self.snap) {
            let looking = self.selected.as_ref() == Some(&w.target)
                || w.session_id.is_some() && w.session_id == self.shown_session_id();
            if looking {
                continue;
            }
            self.waiting.retain(|o| o.target != w.target);
            self.alerts.push(w.clone());
            self.waiting.push(w);
        }
        let snap = &self.snap;
        self.waiting.retain(|w| attention::still_needed(w, snap));
    }

    /// The agents that need the user, oldest first (the top bar's count).
    pub fn waiting(&self) -> &[Waiting] {
        &self.waiting
    }

    /// Arrivals since the last call, for notifications.
    pub fn take_alerts(&mut self) -> Vec<Waiting> {
        std::mem::take(&mut self.alerts)
    }

    /// `w`: selects the oldest agent in the queue (in the grid, its tile) and says what it
    /// asks.
    pub(crate) fn jump_to_waiting(&mut self) {
        if self.waiting.is_empty() {
            self.notify("no agent is waiting for you", Level::Info);
            return;
        }
        let w = self.waiting.remove(0);
        match &w.target {
            Selected::Task(id) => self.select_task(id),
            Selected::Session(id) => {
                if !self.select_session(id) {
                    // Hidden by the filter: shown again, as `select_task` does.
                    self.filter.clear();
                    self.rebuild_rows();
                    self.select_session(id);
                }
            }
        }
        let text = match (w.blocked(), self.shown_prompt()) {
            (true, Some(p)) => {
                let keys = p.keys_hint().map_or_else(
                    || "answer it in its terminal".to_string(),
                    |k| format!("{k} answers"),
                );
                if p.text.is_empty() {
                    format!("{} waits for an answer: {keys}", w.name)
                } else {
                    let first = p.text.lines().next().unwrap_or_default();
                    format!("{} asks: {first} ({keys})", w.name)
                }
            }
            _ if w.status == "conflicts" => format!("{}: {}", w.name, w.prompt),
            _ => format!("{}: {}", w.name, w.status),
        };
        self.notify(text, Level::Info);
    }
}
