//! Managing the list from the app: deleting finished tasks and ended sessions, editing a
//! pending task, and the list's order.

use crate::app::{App, Confirm, Level, Modal, Selected};
use crate::form::Form;
use crate::list_prefs;
use orchestra_proto::task::TaskStatus;

impl App {
    /// `D`: a finished task, or an ended session without a task, is deleted after y/n.
    pub(crate) fn ask_delete(&mut self) {
        match self.selected.clone() {
            Some(Selected::Session(sid)) => {
                let Some(s) = self.snap.sessions.iter().find(|s| s.id == sid) else {
                    return;
                };
                if !s.ended {
                    self.notify(
                        "this session still runs: end it first (c), then delete it",
                        Level::Error,
                    );
                    return;
                }
                let name = self.shown_name();
                self.open(Modal::Confirm(Confirm::RemoveSession {
                    session_id: sid,
                    name,
                }));
            }
            Some(Selected::Task(_)) => {
                let Some(t) = self.selected_task().cloned() else {
                    return;
                };
                if !t.status().is_final() {
                    let how = match t.status() {
                        TaskStatus::Pending => "cancel it first (c)",
                        _ => "it is still running: cancel it first (c)",
                    };
                    self.notify(
                        format!("only a finished task can be deleted: {how}"),
                        Level::Error,
                    );
                    return;
                }
                self.open(Modal::Confirm(Confirm::DeleteTask {
                    task_id: t.id.clone(),
                    name: t.name.clone(),
                }));
            }
            None => self.notify("select a task first", Level::Error),
        }
    }

    /// `e`: the form, filled with the selected pending task, saves its name and description.
    pub(crate) fn open_edit(&mut self) {
        let Some(t) = self.selected_task().cloned() else {
            self.notify("select a pending task to edit", Level::Error);
            return;
        };
        if t.status() != TaskStatus::Pending {
            self.notify(
                format!(
                    "{:?} is {}: only a pending task can be edited (R runs a finished one again)",
                    t.name,
                    t.status()
                ),
                Level::Error,
            );
            return;
        }
        let form = Form::edit(&t, self.cockpit.providers());
        self.open(Modal::Form(Box::new(form)));
    }

    /// `o`: the next order of the list, kept in the state directory.
    pub(crate) fn next_order(&mut self) {
        self.order = self.order.next();
        self.rebuild_rows();
        let kept = match self.cockpit.state_dir() {
            Some(dir) => match list_prefs::save(&dir, self.order) {
                Ok(()) => String::new(),
                Err(e) => format!(" (not kept: {e})"),
            },
            None => String::new(),
        };
        self.notify(
            format!("task list: {}{kept}", self.order.label()),
            Level::Info,
        );
    }
}
