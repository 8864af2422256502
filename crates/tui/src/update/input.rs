//! Input: keys and pasted text — typing into an agent, the overlays, and the commands of the panes.

use crate::app::*;
use crate::backend::Command;
use crate::form::{Form, FormAction, LineEdit};
use crate::keymap::{self, Action, Context};
use crate::keys;
use crate::text_edit::Edited;
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind};
use orchestra_proto::task::{FamilyOp, Task, TaskStatus};
use std::sync::Arc;

/// A key for a one-line editor (filter, message). Alt combinations are not text and are
/// bound to nothing here: they do nothing (the editor would type the letter).
pub(crate) fn edit_line(edit: &mut LineEdit, key: &KeyEvent) {
    if !key.modifiers.contains(crossterm::event::KeyModifiers::ALT) {
        edit.handle(key);
    }
}

impl App {
    /// A character pressed outside typing mode that may answer the shown prompt: a digit
    /// always does (or says why not); another character only when it is an option's key and
    /// not a command. `false`: not consumed, the key is a command.
    pub(crate) fn try_answer(&mut self, c: char) -> bool {
        let digit = c.is_ascii_digit();
        let Some(p) = self.shown_prompt() else {
            if digit {
                self.notify(
                    format!("nothing to answer with {c}: no agent shown here waits on a prompt"),
                    Level::Error,
                );
            }
            return digit;
        };
        match p.option_for(c) {
            Some(o) => {
                self.notify(format!("answering {} ({})…", o.key, o.label), Level::Info);
                let cmd = match &p.owner {
                    PromptOwner::Session(id) => Command::Answer {
                        session_id: id.clone(),
                        option: o.key.clone(),
                    },
                    PromptOwner::Task(id) => Command::AnswerTask {
                        task_id: id.clone(),
                        option: o.key.clone(),
                    },
                };
                self.run(cmd, Origin::Action);
                true
            }
            None if digit => {
                let how = match p.keys_hint() {
                    Some(keys) => format!("press {keys} to answer"),
                    None => "answer it in the agent's terminal (Enter)".to_string(),
                };
                self.notify(format!("the prompt has no option {c}: {how}"), Level::Error);
                true
            }
            None => false,
        }
    }

    pub fn on_terminal_event(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k),
            TermEvent::Mouse(m) => self.on_mouse(m),
            TermEvent::Paste(text) => self.on_paste(&text),
            TermEvent::Resize(..) => {
                self.resize_sent.clear();
                self.dirty = true;
            }
            _ => {}
        }
    }

    pub(crate) fn on_paste(&mut self, text: &str) {
        match &mut self.modal {
            Modal::Form(f) => f.paste(text),
            Modal::Search(edit) => {
                edit.insert_str(text);
                let query = edit.text().to_string();
                self.search_for(&query);
            }
            Modal::Message { edit, .. } | Modal::Filter(edit) => {
                if let Edited::JoinedLines(n) = edit.insert_str(text) {
                    self.notify(
                        format!("one line only: {n} pasted line breaks became spaces"),
                        Level::Info,
                    );
                }
            }
            _ if self.typing => {
                if let Some(sid) = self.shown_session_id() {
                    let bracketed = self
                        .cockpit
                        .input_modes(&sid)
                        .is_some_and(|m| m.bracketed_paste);
                    let bytes = orchestra_proto::keys::encode_paste(text, bracketed);
                    self.send_to_agent(&sid, bytes);
                }
            }
            _ => {}
        }
        if let Modal::Filter(edit) = &self.modal {
            self.filter = edit.text().to_string();
            self.rebuild_rows();
        }
        self.dirty = true;
    }

    pub(crate) fn send_to_agent(&mut self, sid: &str, bytes: Vec<u8>) {
        // Typing returns to the live view.
        if self.scroll.take().is_some() {
            self.dirty = true;
        }
        if let Err(e) = self.cockpit.write_input(sid, bytes) {
            self.notify(e, Level::Error);
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        if self.typing && matches!(self.modal, Modal::None) && self.review.diff.is_none() {
            // Marks the screen changed only where it does: a key that goes to the agent shows
            // when its echo comes back, and a frame drawn for it now would be wasted.
            self.on_typing_key(key);
            return;
        }
        self.dirty = true;
        if !matches!(self.modal, Modal::None) {
            self.on_modal_key(key);
            return;
        }
        if self.review.diff.is_some() {
            self.on_diff_key(&key);
            return;
        }
        if self.typing {
            self.on_typing_key(key);
            return;
        }
        self.on_command_key(key);
    }

    pub(crate) fn on_typing_key(&mut self, key: KeyEvent) {
        match self.keymap.lookup(Context::Typing, &key) {
            Some(Action::LeaveTyping) => {
                self.typing = false;
                self.focus = Focus::Tasks;
                self.dirty = true;
                return;
            }
            Some(Action::PageBack) => return self.scroll_page(true),
            Some(Action::PageForward) => return self.scroll_page(false),
            _ => {}
        }
        let Some(sid) = self.shown_session_id() else {
            self.typing = false;
            self.dirty = true;
            return;
        };
        if !self.shown_session_live() {
            self.typing = false;
            self.notify("the agent has exited; Ctrl-q is not needed", Level::Error);
            return;
        }
        let app_cursor = self
            .cockpit
            .input_modes(&sid)
            .is_some_and(|m| m.application_cursor);
        if let Some(bytes) = keys::to_key(&key).and_then(|k| k.encode(app_cursor)) {
            self.send_to_agent(&sid, bytes);
        }
    }

    pub(crate) fn on_modal_key(&mut self, key: KeyEvent) {
        let action = self.keymap.lookup(self.key_context(), &key);
        let modal = std::mem::replace(&mut self.modal, Modal::None);
        self.modal = match modal {
            Modal::None => Modal::None,
            Modal::Help => match action {
                Some(Action::CloseHelp) => Modal::None,
                Some(Action::HelpUp) => self.scroll_help(-1),
                Some(Action::HelpDown) => self.scroll_help(1),
                Some(Action::HelpPageUp) => self.scroll_help(-(self.help_page() as isize)),
                Some(Action::HelpPageDown) => self.scroll_help(self.help_page() as isize),
                _ => Modal::Help,
            },
            Modal::Form(mut form) => match form.handle(&key) {
                FormAction::Cancel => Modal::None,
                FormAction::None => Modal::Form(form),
                FormAction::Submit => {
                    form.busy = true;
                    self.run(form.command(), Origin::Form);
                    Modal::Form(form)
                }
            },
            Modal::Confirm(c) => match action {
                Some(Action::OnlyThis) => match c {
                    Confirm::Cancel { task_id, name, .. } => {
                        self.notify(format!("cancelling {name:?} alone…"), Level::Info);
                        self.run(Command::Cancel(task_id), Origin::Action);
                        Modal::None
                    }
                    Confirm::Family { op, task_id, .. } => {
                        self.run(single_op(op)(task_id), Origin::Action);
                        Modal::None
                    }
                    c => Modal::Confirm(c),
                },
                Some(Action::Yes) => {
                    match c {
                        Confirm::Cancel {
                            task_id,
                            name,
                            children,
                        } => {
                            self.notify(format!("cancelling {name:?}…"), Level::Info);
                            let command = if children > 0 {
                                Command::Family {
                                    op: FamilyOp::Cancel,
                                    id: task_id,
                                }
                            } else {
                                Command::Cancel(task_id)
                            };
                            self.run(command, Origin::Action);
                        }
                        Confirm::Family { op, task_id, .. } => {
                            self.run(Command::Family { op, id: task_id }, Origin::Action)
                        }
                        Confirm::EndSession { session_id, name } => {
                            self.notify(format!("ending {name:?}…"), Level::Info);
                            self.run(Command::EndSession(session_id), Origin::Action)
                        }
                        Confirm::DeleteTask { task_id, name } => {
                            self.notify(format!("deleting {name:?}…"), Level::Info);
                            self.run(Command::DeleteTask(task_id), Origin::Action);
                        }
                        Confirm::RemoveSession { session_id, .. } => {
                            self.run(Command::RemoveSession(session_id), Origin::Action)
                        }
                        Confirm::Stop { .. } => {
                            self.notify("stopping orchestra…", Level::Info);
                            self.run(Command::StopOrchestra, Origin::Action)
                        }
                        c @ (Confirm::Merge { .. }
                        | Confirm::Discard { .. }
                        | Confirm::PullRequest { .. }
                        | Confirm::Pick { .. }) => self.finish(c),
                    }
                    Modal::None
                }
                Some(Action::No) => Modal::None,
                _ => Modal::Confirm(c),
            },
            Modal::Message { to, name, mut edit } => match action {
                Some(Action::CancelMessage) => Modal::None,
                Some(Action::SendMessage) => {
                    let text = edit.text().trim().to_string();
                    match to {
                        MessageTo::Session(session_id) if !text.is_empty() => {
                            self.run(Command::Message { session_id, text }, Origin::Action)
                        }
                        MessageTo::Session(_) => {}
                        MessageTo::Continue(id) => {
                            let message = (!text.is_empty()).then_some(text);
                            self.run(Command::Continue { id, message }, Origin::Action)
                        }
                    }
                    Modal::None
                }
                _ => {
                    edit_line(&mut edit, &key);
                    Modal::Message { to, name, edit }
                }
            },
            Modal::Search(edit) => self.on_search_key(action, &key, edit),
            Modal::Filter(mut edit) => match action {
                Some(Action::ClearFilter) => {
                    self.filter.clear();
                    self.rebuild_rows();
                    Modal::None
                }
                Some(Action::KeepFilter) => Modal::None,
                Some(Action::SelectPrev) => {
                    self.move_selection(-1);
                    Modal::Filter(edit)
                }
                Some(Action::SelectNext) => {
                    self.move_selection(1);
                    Modal::Filter(edit)
                }
                _ => {
                    edit_line(&mut edit, &key);
                    self.filter = edit.text().to_string();
                    self.rebuild_rows();
                    Modal::Filter(edit)
                }
            },
        };
    }

    pub(crate) fn scroll_help(&mut self, delta: isize) -> Modal {
        // Before the overlay is first drawn its length is unknown: drawing clamps it.
        let max = match self.help_len {
            0 => isize::MAX as usize,
            n => n.saturating_sub(self.help_rows),
        };
        self.help_scroll = (self.help_scroll as isize + delta).clamp(0, max as isize) as usize;
        Modal::Help
    }

    pub(crate) fn selected_task_or_notice(&mut self) -> Option<Arc<Task>> {
        match self.selected_task() {
            Some(t) => Some(t.clone()),
            None => {
                self.notify("select a task first", Level::Error);
                None
            }
        }
    }

    /// Opens an overlay; an older notice is dropped so it does not come back when it closes.
    pub(crate) fn open(&mut self, modal: Modal) {
        self.notice = None;
        self.help_scroll = 0;
        self.modal = modal;
    }

    pub(crate) fn on_command_key(&mut self, key: KeyEvent) {
        // Digits, and option keys that are not commands, answer a shown prompt.
        let k = keymap::normalize(&key);
        if let KeyCode::Char(c) = k.code
            && k.mods.is_empty()
            && self.try_answer(c)
        {
            return;
        }
        if let Some(action) = self.keymap.lookup(self.pane_context(), &key) {
            self.perform(action);
        }
    }

    /// Does what a key bound outside typing mode and overlays asks.
    pub(crate) fn perform(&mut self, action: Action) {
        match action {
            // Agents belong to orchestra: leaving the TUI ends none of them.
            Action::Detach => self.quit = true,
            // The question names the agents running now, as orchestra counts them (one started
            // from the CLI a moment ago included), not the ones last drawn.
            Action::Stop => self.run(Command::CountLive, Origin::Action),
            Action::Refresh => {
                self.refresh();
                self.ask_usage();
            }
            Action::Help => self.open(Modal::Help),
            Action::Filter => {
                self.focus = Focus::Tasks;
                self.open(Modal::Filter(LineEdit::new(&self.filter)));
            }
            Action::Back => self.go_back(),
            Action::NewTask => self.open_new_task(),
            Action::Start => self.run_on_selected_task(Command::Start),
            Action::Pause => self.ask_family(FamilyOp::Pause),
            Action::Resume => self.ask_family(FamilyOp::Resume),
            Action::Retry => self.run_on_selected_task(Command::Retry),
            Action::Continue => self.ask_continue(),
            Action::Cancel => self.ask_cancel(),
            Action::Autopilot => {
                let on = !self.snap.autopilot;
                self.run(Command::SetAutopilot(on), Origin::Action);
            }
            Action::Message => self.ask_message(),
            Action::Transcript => self.toggle_transcript(),
            Action::Search => self.open_search(),
            Action::CloseTranscript => self.close_transcript(),
            Action::Delete => self.ask_delete(),
            Action::Edit => self.open_edit(),
            Action::Order => self.next_order(),
            Action::Diff => self.open_diff(),
            Action::Merge => self.ask_finish_selected(true),
            Action::Discard => self.ask_finish_selected(false),
            Action::Type => self.enter_terminal(),
            // In the grid the panes are the tiles, and a page is the grid's page.
            Action::NextPane if self.grid.is_some() => self.move_tile(Action::TileRight),
            Action::PrevPane if self.grid.is_some() => self.move_tile(Action::TileLeft),
            Action::PageBack if self.grid.is_some() => self.turn_grid_page(false),
            Action::PageForward if self.grid.is_some() => self.turn_grid_page(true),
            Action::NextPane => self.cycle_focus(true),
            Action::PrevPane => self.cycle_focus(false),
            Action::PageBack => self.scroll_page(true),
            Action::PageForward => self.scroll_page(false),
            Action::Grid => self.toggle_grid(),
            Action::Zoom => self.toggle_zoom(),
            Action::NextWaiting => self.jump_to_waiting(),
            Action::TileLeft | Action::TileRight | Action::TileUp | Action::TileDown => {
                self.move_tile(action)
            }
            Action::SelectPrev => self.move_selection(-1),
            Action::SelectNext => self.move_selection(1),
            Action::SelectFirst => {
                self.select_index(self.rows.iter().position(|r| !r.is_heading()))
            }
            Action::SelectLast => {
                let last = self.rows.iter().rposition(|r| !r.is_heading());
                self.select_index(last)
            }
            Action::StepsUp => self.steps_scroll = self.steps_scroll.saturating_sub(1),
            Action::StepsDown => self.steps_scroll = self.steps_scroll.saturating_add(1),
            Action::StepsTop => self.steps_scroll = 0,
            Action::StepsBottom => self.steps_scroll = u16::MAX / 2,
            Action::LineBack => self.scroll_by(1),
            Action::LineForward => self.scroll_by(-1),
            Action::Oldest => self.scroll_by(isize::MAX / 2),
            Action::Live => match self.shown_transcript_mut() {
                Some(t) => t.to_end(),
                None => self.scroll = None,
            },
            // Bound only in typing mode and overlays (handled there).
            Action::LeaveTyping
            | Action::FormNextField
            | Action::FormPrevField
            | Action::FormPrevChoice
            | Action::FormNextChoice
            | Action::FormSubmit
            | Action::FormCancel
            | Action::FormNewLine
            | Action::SearchNext
            | Action::SearchPrev
            | Action::SearchDone
            | Action::Yes
            | Action::No
            | Action::OnlyThis
            | Action::KeepFilter
            | Action::ClearFilter
            | Action::SendMessage
            | Action::CancelMessage
            | Action::CloseHelp
            | Action::HelpUp
            | Action::HelpDown
            | Action::HelpPageUp
            | Action::HelpPageDown
            | Action::DiffUp
            | Action::DiffDown
            | Action::DiffPageUp
            | Action::DiffPageDown
            | Action::DiffTop
            | Action::DiffBottom
            | Action::NextFile
            | Action::PrevFile
            | Action::PullRequest
            | Action::DiffLeft
            | Action::DiffRight
            | Action::ReloadDiff
            | Action::CloseDiff
            | Action::CompareLeft
            | Action::CompareRight
            | Action::PickLeft => {}
        }
    }

    /// `Esc`: leaves the scrolled-back view; else clears the filter.
    fn go_back(&mut self) {
        let was_scrolled = self.scroll.take().is_some();
        if !was_scrolled && !self.filter.is_empty() {
            self.filter.clear();
            self.rebuild_rows();
        }
    }

    /// `n`: the new-task form, with the providers and the defaults of orchestra.
    fn open_new_task(&mut self) {
        let form = Form::new(
            self.cockpit.providers(),
            self.cockpit.default_provider().as_deref(),
            &self.cockpit.default_dir(),
        );
        self.open(Modal::Form(Box::new(form)));
    }

    /// Runs the command `command` makes of the selected task's id (a notice when no task is
    /// selected).
    fn run_on_selected_task(&mut self, command: fn(String) -> Command) {
        if let Some(t) = self.selected_task_or_notice() {
            self.run(command(t.id.clone()), Origin::Action);
        }
    }

    /// `p`/`r`: pauses or resumes the selected task; when some of its descendants could go
    /// the same way, asks whether they do.
    fn ask_family(&mut self, op: FamilyOp) {
        let Some(t) = self.selected_task_or_notice() else {
            return;
        };
        let children = if op.applies_to(t.status()) {
            self.descendants_for(&t.id, op)
        } else {
            0 // the server says why not
        };
        if children == 0 {
            self.run(single_op(op)(t.id.clone()), Origin::Action);
        } else {
            self.open(Modal::Confirm(Confirm::Family {
                op,
                task_id: t.id.clone(),
                name: t.name.clone(),
                children,
            }));
        }
    }

    /// How many of task `id`'s descendants `op` would do something to.
    pub(crate) fn descendants_for(&self, id: &str, op: FamilyOp) -> usize {
        orchestra_proto::task::family::descendants(&self.snap.tasks, id)
            .iter()
            .filter(|t| op.applies_to(t.status()))
            .count()
    }

    /// `C`: asks for the request to continue the selected finished task's conversation with.
    fn ask_continue(&mut self) {
        if let Some(t) = self.selected_task_or_notice() {
            if t.status().is_final() {
                self.open(Modal::Message {
                    to: MessageTo::Continue(t.id.clone()),
                    name: t.name.clone(),
                    edit: LineEdit::default(),
                });
            } else {
                self.notify(
                    format!(
                        "task is {}; only a finished task can be continued",
                        t.status()
                    ),
                    Level::Error,
                );
            }
        }
    }

    /// `m`: asks for a one-line message to the shown agent, if it runs.
    fn ask_message(&mut self) {
        match self.shown_session_id() {
            Some(sid) if self.shown_session_live() => {
                let name = self.shown_name();
                self.open(Modal::Message {
                    to: MessageTo::Session(sid),
                    name,
                    edit: LineEdit::default(),
                });
            }
            _ => self.notify(
                "no running agent to message: start the task first",
                Level::Error,
            ),
        }
    }

    /// `c`: a task is cancelled after y/n, a session without a task is ended after y/n.
    pub(crate) fn ask_cancel(&mut self) {
        match &self.selected {
            Some(Selected::Session(sid)) => {
                if self.shown_session_live() {
                    let confirm = Confirm::EndSession {
                        session_id: sid.clone(),
                        name: self.shown_name(),
                    };
                    self.open(Modal::Confirm(confirm));
                } else {
                    self.notify("this session has already ended", Level::Error);
                }
            }
            _ => {
                if let Some(t) = self.selected_task_or_notice() {
                    if t.status().is_final() {
                        self.notify(
                            format!("{:?} is already {}", t.name, t.status()),
                            Level::Error,
                        );
                    } else {
                        let children = self.descendants_for(&t.id, FamilyOp::Cancel);
                        self.open(Modal::Confirm(Confirm::Cancel {
                            task_id: t.id.clone(),
                            name: t.name.clone(),
                            children,
                        }));
                    }
                }
            }
        }
    }

    pub(crate) fn cycle_focus(&mut self, forward: bool) {
        self.focus = match (self.focus, forward) {
            (Focus::Tasks, true) | (Focus::Terminal, false) => Focus::Steps,
            (Focus::Steps, true) | (Focus::Tasks, false) => Focus::Terminal,
            (Focus::Terminal, true) | (Focus::Steps, false) => Focus::Tasks,
        };
    }

    /// Focuses the terminal pane, sending keys to the agent when it runs.
    pub fn enter_terminal(&mut self) {
        match self.shown_session_id() {
            Some(_) if self.shown_session_live() => {
                self.focus = Focus::Terminal;
                self.typing = true;
                self.scroll = None;
                self.transcript = None;
            }
            Some(_) => {
                self.focus = Focus::Terminal;
                self.notify(
                    "the agent has exited: its last screen is shown",
                    Level::Info,
                );
            }
            None => {
                let hint = match self.selected_task() {
                    Some(t) if t.status() == TaskStatus::Pending => {
                        format!("this task has no agent yet: {}", self.pending_hint())
                    }
                    Some(_) => "this task has no agent terminal".to_string(),
                    None => format!(
                        "nothing selected: press {} to create a task",
                        self.keymap
                            .key_for(self.pane_context(), Action::NewTask)
                            .unwrap_or_default()
                    ),
                };
                self.notify(hint, Level::Error);
            }
        }
    }
}

/// The command that does `op` to one task alone.
fn single_op(op: FamilyOp) -> fn(String) -> Command {
    match op {
        FamilyOp::Pause => Command::Pause,
        FamilyOp::Resume => Command::Resume,
        FamilyOp::Cancel => Command::Cancel,
    }
}
