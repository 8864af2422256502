//! The new-task form, and the same form over a pending task (`e`): every choice a task has,
//! each showing the default it gets.

use super::backend::{Command, ProviderChoice};
use super::form_choices::{self as choices, APPROVALS, ISOLATIONS};
pub use super::text_edit::LineEdit;
use super::text_edit::{Edited, is_new_line_key};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use orchestra_proto::task::{Approval, Isolation, Task};
use orchestra_proto::wire::request::{NewTask, TaskChange};

/// The fields of the new-task form, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    Description,
    Provider,
    Directory,
    StartNow,
    /// Give the agent orchestra's MCP server, so it can hand work to other agents.
    Delegate,
    /// The approval preset (manual, safe, auto, or the default).
    Approval,
    /// Its own worktree, the directory as it is, or the default.
    Isolation,
    /// The branch a worktree starts from (shown for a worktree).
    BaseRef,
    /// Commands that must pass before it is completed, one a line.
    Checks,
    MaxAttempts,
    /// Best of N: the providers the request is raced on.
    Variants,
}

impl Field {
    pub const ALL: [Field; 12] = [
        Field::Name,
        Field::Description,
        Field::Provider,
        Field::Directory,
        Field::StartNow,
        Field::Delegate,
        Field::Approval,
        Field::Isolation,
        Field::BaseRef,
        Field::Checks,
        Field::MaxAttempts,
        Field::Variants,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "Name",
            Field::Description => "Description",
            Field::Provider => "Provider",
            Field::Directory => "Directory",
            Field::StartNow => "Start now",
            Field::Delegate => "Delegate",
            Field::Approval => "Approval",
            Field::Isolation => "Isolation",
            Field::BaseRef => "Base branch",
            Field::Checks => "Checks",
            Field::MaxAttempts => "Attempts",
            Field::Variants => "Variants",
        }
    }

    /// A choice shown on one row, its error in the form's footer: the form stays within a
    /// terminal of 24 rows.
    pub fn is_compact(self) -> bool {
        matches!(
            self,
            Field::Approval
                | Field::Isolation
                | Field::BaseRef
                | Field::Checks
                | Field::MaxAttempts
                | Field::Variants
        )
    }
}

/// What an edit started from, so that only what changed is sent.
#[derive(Debug, Clone)]
pub struct EditBase {
    pub provider: String,
    pub approval: Option<Approval>,
    pub isolation: Isolation,
    pub base_ref: Option<String>,
    pub checks: Vec<String>,
    pub max_attempts: Option<u32>,
    /// A best-of-N parent or variant: its provider and worktree stay.
    pub variant_family: bool,
}

/// The new-task form's state.
#[derive(Debug, Clone)]
pub struct Form {
    pub name: LineEdit,
    pub description: LineEdit,
    /// Every known provider, installed or not (those not installed say how to install them).
    pub providers: Vec<ProviderChoice>,
    pub provider: usize,
    pub dir: LineEdit,
    pub start_now: bool,
    /// Give its agent orchestra's MCP server (no: the provider's own `delegate` setting).
    pub delegate: bool,
    pub field: Field,
    /// Inline validation messages, by field.
    pub errors: Vec<(Field, String)>,
    /// An error that belongs to no single field (from the engine).
    pub error: Option<String>,
    /// Submitted; waiting for the engine.
    pub busy: bool,
    /// What the last edit did that the user may not expect (line breaks joined); cleared
    /// by the next key.
    pub note: Option<String>,
    /// Editing this pending task; `None`: a new task.
    pub editing: Option<String>,
    /// The edited task's settings as they were.
    pub edit_base: Option<EditBase>,
    /// Index into [`APPROVALS`].
    pub approval: usize,
    /// Index into [`ISOLATIONS`].
    pub isolation: usize,
    pub base_ref: LineEdit,
    /// One command a line.
    pub checks: LineEdit,
    pub max_attempts: Option<u32>,
    /// Which providers the request is raced on (by index into `providers`).
    pub chosen: Vec<bool>,
    /// The provider under the variants field's cursor.
    pub variant_at: usize,
}

/// What a key did to the form.
#[derive(Debug, PartialEq, Eq)]
pub enum FormAction {
    None,
    Cancel,
    Submit,
}

impl Form {
    pub fn new(all: Vec<ProviderChoice>, default_provider: Option<&str>, dir: &str) -> Form {
        let providers = all;
        let provider = default_provider
            .and_then(|d| providers.iter().position(|p| p.id == d && p.installed))
            .or_else(|| providers.iter().position(|p| p.id == "shell"))
            .unwrap_or(0);
        Form {
            name: LineEdit::default(),
            description: LineEdit::multi_line(),
            chosen: vec![false; providers.len()],
            providers,
            provider,
            dir: LineEdit::new(dir),
            start_now: true,
            delegate: false,
            field: Field::Name,
            errors: Vec::new(),
            error: None,
            busy: false,
            note: None,
            editing: None,
            edit_base: None,
            approval: 0,
            isolation: 0,
            base_ref: LineEdit::default(),
            checks: LineEdit::multi_line(),
            max_attempts: None,
            variant_at: 0,
        }
    }

    /// The form over a pending task: its name and description can be changed.
    pub fn edit(task: &Task, all: Vec<ProviderChoice>) -> Form {
        let mut form = Form::new(
            all,
            Some(&task.metadata.provider_id),
            &task.metadata.working_directory,
        );
        form.name = LineEdit::new(&task.name);
        form.description = LineEdit::multi_line();
        form.description.insert_str(&task.description);
        form.start_now = false;
        form.editing = Some(task.id.clone());
        if let Some(i) = form
            .providers
            .iter()
            .position(|p| p.id == task.metadata.provider_id)
        {
            form.provider = i;
        }
        let m = &task.metadata;
        form.approval = APPROVALS.iter().position(|a| *a == m.approval).unwrap_or(0);
        // Its isolation was settled when it was made: shown as what it is.
        form.isolation = ISOLATIONS
            .iter()
            .position(|i| *i == Some(m.isolation))
            .unwrap_or(0);
        form.base_ref = LineEdit::new(m.base_ref.as_deref().unwrap_or_default());
        form.checks.insert_str(&m.checks.join("\n"));
        form.max_attempts = m.max_attempts;
        form.edit_base = Some(EditBase {
            provider: m.provider_id.clone(),
            approval: m.approval,
            isolation: m.isolation,
            base_ref: m.base_ref.clone(),
            checks: m.checks.clone(),
            max_attempts: m.max_attempts,
            variant_family: m.is_variant_parent() || m.variant.is_some(),
        });
        form
    }

    /// The fields shown, in Tab order. An edit leaves out what a made task keeps (its
    /// directory, and a variant's provider and worktree); the base branch shows only for a
    /// worktree.
    pub fn fields(&self) -> Vec<Field> {
        let fixed = self.edit_base.as_ref().is_some_and(|b| b.variant_family);
        Field::ALL
            .into_iter()
            .filter(|f| match f {
                Field::Directory | Field::StartNow | Field::Delegate | Field::Variants => {
                    self.editing.is_none()
                }
                Field::Provider | Field::Isolation => !fixed,
                Field::BaseRef => !fixed && self.isolation_resolved() == Isolation::Worktree,
                _ => true,
            })
            .collect()
    }

    pub fn approval(&self) -> Option<Approval> {
        APPROVALS.get(self.approval).copied().flatten()
    }

    /// The isolation asked for (`None`: the default).
    pub fn isolation(&self) -> Option<Isolation> {
        ISOLATIONS.get(self.isolation).copied().flatten()
    }

    /// The isolation the task will get: asked for, or the engine's default.
    pub fn isolation_resolved(&self) -> Isolation {
        self.isolation()
            .unwrap_or_else(|| choices::default_isolation(self.provider(), self.dir.text()))
    }

    /// The providers chosen for best of N.
    pub fn variants(&self) -> Vec<orchestra_proto::task::VariantSpec> {
        choices::variants_of(&self.providers, &self.chosen, self.approval())
    }

    /// The chosen provider.
    pub fn provider(&self) -> Option<&ProviderChoice> {
        self.providers.get(self.provider)
    }

    /// What submitting asks of the engine.
    pub fn command(&self) -> Command {
        let name = self.name.text().trim().to_string();
        // Trailing blanks and blank lines before the text go; indentation stays.
        let text = self.description.text().trim_end();
        let first_line = text
            .find(|c: char| !c.is_whitespace())
            .map_or(text.len(), |i| text[..i].rfind('\n').map_or(0, |n| n + 1));
        let description = text[first_line..].to_string();
        let checks = choices::checks_of(self.checks.text());
        let base_ref = Some(self.base_ref.text().trim().to_string()).filter(|b| !b.is_empty());
        match (&self.editing, &self.edit_base) {
            (Some(task_id), Some(was)) => {
                let provider = self.provider_id().map(str::to_string);
                let isolation = self.isolation().unwrap_or(was.isolation);
                let base_ref = base_ref.filter(|_| isolation == Isolation::Worktree);
                Command::EditTask {
                    task_id: task_id.clone(),
                    change: TaskChange {
                        name: Some(name),
                        description: Some(description),
                        provider_id: provider.filter(|p| *p != was.provider),
                        approval: self.approval().filter(|a| Some(*a) != was.approval),
                        isolation: Some(isolation).filter(|i| *i != was.isolation),
                        // `""` asks for the checked-out branch again.
                        base_ref: (base_ref != was.base_ref).then(|| base_ref.unwrap_or_default()),
                        checks: Some(checks).filter(|c| *c != was.checks),
                        max_attempts: self.max_attempts.filter(|n| Some(*n) != was.max_attempts),
                        ..TaskChange::default()
                    },
                }
            }
            _ => {
                let variants = self.variants();
                let racing = variants.len() > 1;
                Command::CreateTask {
                    task: NewTask {
                        name,
                        description,
                        provider_id: self.provider_id().filter(|_| !racing).map(str::to_string),
                        working_directory: Some(self.dir.text().trim().to_string()),
                        delegate: self.delegate.then_some(true),
                        approval: self.approval(),
                        isolation: self.isolation(),
                        base_ref: base_ref
                            .filter(|_| self.isolation_resolved() == Isolation::Worktree),
                        checks,
                        max_attempts: self.max_attempts,
                        variants: if racing { variants } else { Vec::new() },
                        ..NewTask::default()
                    },
                    start: self.start_now,
                }
            }
        }
    }

    pub fn provider_id(&self) -> Option<&str> {
        self.providers.get(self.provider).map(|p| p.id.as_str())
    }

    pub fn error_for(&self, f: Field) -> Option<&str> {
        self.errors
            .iter()
            .find(|(ff, _)| *ff == f)
            .map(|(_, m)| m.as_str())
    }

    fn move_field(&mut self, forward: bool) {
        let fields = self.fields();
        let i = fields.iter().position(|f| *f == self.field).unwrap_or(0);
        let n = fields.len();
        let next = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.field = fields[next];
    }

    /// Checks every field; fills `errors`. `true` when the form can be submitted.
    pub fn validate(&mut self) -> bool {
        self.errors.clear();
        self.error = None;
        if self.name.text().trim().is_empty() {
            self.errors.push((Field::Name, "a name is required".into()));
        }
        if self.description.text().trim().is_empty() && self.description_required() {
            let p = self.provider().map(|p| p.name.as_str()).unwrap_or_default();
            self.errors.push((
                Field::Description,
                format!("required for {p}: what it should do"),
            ));
        }
        if self.providers.is_empty() {
            self.errors
                .push((Field::Provider, "no provider is known".into()));
        }
        let dir = self.dir.text().trim();
        if self.editing.is_some() {
            // Only the name and description change.
        } else if dir.is_empty() {
            self.errors
                .push((Field::Directory, "a working directory is required".into()));
        } else {
            let p = std::path::Path::new(dir);
            if p.is_absolute() && !p.is_dir() {
                self.errors
                    .push((Field::Directory, "no such directory".into()));
            }
        }
        if self.editing.is_none() && self.chosen.iter().filter(|c| **c).count() == 1 {
            self.errors.push((
                Field::Variants,
                "choose two or more providers to race, or none (the provider above runs it)".into(),
            ));
        }
        if self.editing.is_none()
            && self.variants().len() > 1
            && self.isolation() == Some(Isolation::None)
        {
            self.errors.push((
                Field::Isolation,
                "variants each run in their own worktree: choose worktree or the default".into(),
            ));
        }
        if let Some((f, _)) = self.errors.first() {
            self.field = *f;
        }
        self.errors.is_empty()
    }

    /// Whether the chosen provider needs a description (a plain shell does not: it just
    /// starts).
    pub fn description_required(&self) -> bool {
        self.provider().is_none_or(|p| p.needs_description)
    }

    /// Places an engine error next to the field it is about.
    pub fn engine_error(&mut self, message: String) {
        self.busy = false;
        let field = if message.contains("not installed") || message.contains("providerId") {
            Some(Field::Provider)
        } else if message.contains("workingDirectory") {
            Some(Field::Directory)
        } else if message.contains("variants") {
            Some(Field::Variants)
        } else if message.contains("isolation") || message.contains("worktree") {
            Some(Field::Isolation)
        } else if message.contains("baseRef") || message.contains("branch") {
            Some(Field::BaseRef)
        } else if message.contains("checks") {
            Some(Field::Checks)
        } else if message.contains("name ") {
            Some(Field::Name)
        } else if message.contains("description") {
            Some(Field::Description)
        } else {
            None
        };
        match field {
            Some(f) => {
                self.errors = vec![(f, message)];
                self.field = f;
            }
            None => self.error = Some(message),
        }
    }

    pub fn handle(&mut self, key: &KeyEvent) -> FormAction {
        if self.busy {
            return match key.code {
                KeyCode::Esc => FormAction::Cancel,
                _ => FormAction::None,
            };
        }
        self.note = None;
        // The description's editor takes new-line keys and Up/Down within its lines first.
        if let Some(edit) = self.text_field_mut() {
            let multi_line = edit.is_multi_line();
            if is_new_line_key(key) && !multi_line {
                let what = self.field.label().to_lowercase();
                self.note = Some(format!(
                    "the {what} is one line: new lines go in the description"
                ));
                return FormAction::None;
            }
            let mine = is_new_line_key(key)
                || (multi_line && matches!(key.code, KeyCode::Up | KeyCode::Down));
            if mine && edit.handle(key) != Edited::NotMine {
                self.errors.retain(|(f, _)| *f != self.field);
                return FormAction::None;
            }
        }
        if is_new_line_key(key) {
            // Not a text field: a new line means nothing here (and must not create).
            return FormAction::None;
        }
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Esc => return FormAction::Cancel,
            KeyCode::Enter => {
                return if self.validate() {
                    FormAction::Submit
                } else {
                    FormAction::None
                };
            }
            KeyCode::Tab if shift => self.move_field(false),
            KeyCode::Tab => self.move_field(true),
            KeyCode::BackTab => self.move_field(false),
            KeyCode::Down => self.move_field(true),
            KeyCode::Up => self.move_field(false),
            _ => {
                let forward = matches!(
                    key.code,
                    KeyCode::Right | KeyCode::Char('l') | KeyCode::Char(' ')
                );
                let back = matches!(key.code, KeyCode::Left | KeyCode::Char('h'));
                match self.field {
                    Field::Approval if forward || back => {
                        self.approval = choices::step(self.approval, APPROVALS.len(), forward)
                    }
                    Field::Isolation if forward || back => {
                        self.isolation = choices::step(self.isolation, ISOLATIONS.len(), forward)
                    }
                    Field::MaxAttempts if forward || back => {
                        self.max_attempts = choices::step_attempts(self.max_attempts, forward)
                    }
                    Field::Variants => match key.code {
                        KeyCode::Left | KeyCode::Char('h') => {
                            self.variant_at =
                                choices::step(self.variant_at, self.providers.len(), false)
                        }
                        KeyCode::Right | KeyCode::Char('l') => {
                            self.variant_at =
                                choices::step(self.variant_at, self.providers.len(), true)
                        }
                        KeyCode::Char(' ') | KeyCode::Char('x') => {
                            if let Some(on) = self.chosen.get_mut(self.variant_at) {
                                *on = !*on;
                            }
                        }
                        _ => {}
                    },
                    Field::Approval | Field::Isolation | Field::MaxAttempts => {}
                    Field::Name
                    | Field::Description
                    | Field::Directory
                    | Field::BaseRef
                    | Field::Checks => {
                        if let Some(edit) = self.text_field_mut() {
                            let edited = edit.handle(key);
                            self.after_edit(edited);
                        }
                    }
                    Field::Provider => {
                        let n = self.providers.len().max(1);
                        match key.code {
                            KeyCode::Left | KeyCode::Char('h') => {
                                self.provider = (self.provider + n - 1) % n
                            }
                            KeyCode::Right | KeyCode::Char('l') | KeyCode::Char(' ') => {
                                self.provider = (self.provider + 1) % n
                            }
                            KeyCode::Char(c) => {
                                // Jump to the next provider starting with the letter.
                                let c = c.to_ascii_lowercase();
                                if let Some(i) =
                                    (1..=n).map(|d| (self.provider + d) % n).find(|&i| {
                                        self.providers.get(i).is_some_and(|p| p.id.starts_with(c))
                                    })
                                {
                                    self.provider = i;
                                }
                            }
                            _ => {}
                        }
                        // A description no longer needed is no longer missing.
                        if !self.description_required() {
                            self.errors.retain(|(f, _)| *f != Field::Description);
                        }
                    }
                    Field::StartNow => yes_no(&mut self.start_now, key.code),
                    Field::Delegate => yes_no(&mut self.delegate, key.code),
                }
                self.errors.retain(|(f, _)| *f != self.field);
            }
        }
        FormAction::None
    }

    /// The editor of the focused field, when it is a text field.
    fn text_field_mut(&mut self) -> Option<&mut LineEdit> {
        match self.field {
            Field::Name => Some(&mut self.name),
            Field::Description => Some(&mut self.description),
            Field::Directory => Some(&mut self.dir),
            Field::BaseRef => Some(&mut self.base_ref),
            Field::Checks => Some(&mut self.checks),
            Field::Provider
            | Field::StartNow
            | Field::Delegate
            | Field::Approval
            | Field::Isolation
            | Field::MaxAttempts
            | Field::Variants => None,
        }
    }

    /// Says so when a one-line field turned pasted line breaks into spaces.
    fn after_edit(&mut self, edited: Edited) {
        if let Edited::JoinedLines(n) = edited {
            let what = self.field.label().to_lowercase();
            self.note = Some(format!(
                "the {what} is one line: {n} line break{} became spaces (the description keeps them)",
                if n == 1 { "" } else { "s" }
            ));
        }
        self.errors.retain(|(f, _)| *f != self.field);
    }

    /// A paste goes into the focused text field; only the description keeps line breaks.
    pub fn paste(&mut self, text: &str) {
        self.note = None;
        if let Some(edit) = self.text_field_mut() {
            let edited = edit.insert_str(text);
            self.after_edit(edited);
        }
    }
}

/// A yes/no field: `y`, `n`, or space and the arrows to flip it.
fn yes_no(value: &mut bool, code: KeyCode) {
    match code {
        KeyCode::Char('y') => *value = true,
        KeyCode::Char('n') => *value = false,
        KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right => *value = !*value,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn choice(id: &str, installed: bool, needs_description: bool) -> ProviderChoice {
        ProviderChoice {
            id: id.into(),
            name: id.to_uppercase(),
            installed,
            install: (!installed).then(|| format!("npm install -g {id}")),
            needs_description,
            coding_agent: false,
        }
    }

    #[test]
    fn delegate_is_asked_for_only_when_chosen() {
        let mut f = Form::new(vec![choice("shell", true, false)], Some("shell"), "/");
        f.name.insert_str("t");
        let delegate = |f: &Form| match f.command() {
            Command::CreateTask { task, .. } => task.delegate,
            other => panic!("{other:?}"),
        };
        assert_eq!(delegate(&f), None, "the provider's own setting decides");
        f.field = Field::Delegate;
        f.handle(&key(KeyCode::Char('y')));
        assert_eq!(delegate(&f), Some(true));
        f.handle(&key(KeyCode::Char(' ')));
        assert_eq!(delegate(&f), None);
    }

    #[test]
    fn form_validates_inline() {
        let providers = vec![choice("exec", true, true)];
        let mut f = Form::new(providers, Some("exec"), "/");
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::None);
        assert!(f.error_for(Field::Name).is_some());
        assert!(f.error_for(Field::Description).is_some());
        assert_eq!(f.field, Field::Name);
        f.handle(&key(KeyCode::Char('x')));
        assert!(f.error_for(Field::Name).is_none());
        f.handle(&key(KeyCode::Tab));
        f.handle(&key(KeyCode::Char('y')));
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::Submit);
    }

    #[test]
    fn a_shell_needs_no_description_and_every_provider_is_offered() {
        let providers = vec![
            choice("claude", false, true),
            choice("shell", true, false),
            choice("exec", true, true),
        ];
        // The default is installed; the missing one is still offered.
        let mut f = Form::new(providers, Some("claude"), "/");
        assert_eq!(f.provider_id(), Some("shell"));
        assert_eq!(f.providers.len(), 3);
        f.name.insert_str("plain shell");
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::Submit);
        assert!(matches!(
            f.command(),
            Command::CreateTask { ref task, .. } if task.description.is_empty()
        ));
        // exec runs its description: required, and the message says why.
        f.provider = 2;
        // Alt-Enter on a field that is not text neither submits nor edits.
        f.field = Field::Provider;
        let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(f.handle(&alt_enter), FormAction::None);
        assert!(f.errors.is_empty());
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::None);
        let e = f.error_for(Field::Description).unwrap();
        assert_eq!(e, "required for EXEC: what it should do");
    }

    #[test]
    fn an_edit_sends_what_changed() {
        let task = orchestra_proto::task::Task::new(
            "t1".into(),
            orchestra_proto::task::NewTask {
                name: "old".into(),
                description: "line one\nline two".into(),
                provider_id: "exec".into(),
                working_directory: "/nonexistent".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                checks: vec!["make test".into()],
                ..Default::default()
            },
            0,
        );
        let mut f = Form::edit(
            &task,
            vec![choice("exec", true, true), choice("shell", true, false)],
        );
        // The directory, start-now, delegate and variants belong to a new task; the base
        // branch to a worktree.
        assert_eq!(
            f.fields(),
            [
                Field::Name,
                Field::Description,
                Field::Provider,
                Field::Approval,
                Field::Isolation,
                Field::Checks,
                Field::MaxAttempts
            ]
        );
        assert_eq!(f.description.text(), "line one\nline two");
        assert_eq!(f.checks.text(), "make test");
        f.handle(&KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        f.name.insert_str("new");
        f.field = Field::Approval;
        f.handle(&key(KeyCode::Right));
        assert_eq!(f.approval(), Some(Approval::Manual));
        // The directory is not checked: it is not edited.
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::Submit);
        assert_eq!(
            f.command(),
            Command::EditTask {
                task_id: "t1".into(),
                change: TaskChange {
                    name: Some("new".into()),
                    description: Some("line one\nline two".into()),
                    approval: Some(Approval::Manual),
                    ..Default::default()
                },
            }
        );
    }

    #[test]
    fn every_choice_reaches_the_request_with_its_default_left_out() {
        let mut f = Form::new(
            vec![choice("exec", true, true), choice("shell", true, false)],
            Some("exec"),
            "/",
        );
        f.name.insert_str("t");
        f.description.insert_str("true");
        let task = |f: &Form| match f.command() {
            Command::CreateTask { task, .. } => task,
            other => panic!("{other:?}"),
        };
        let plain = task(&f);
        assert_eq!(
            (plain.approval, plain.isolation, plain.max_attempts),
            (None, None, None)
        );
        assert!(plain.checks.is_empty() && plain.variants.is_empty());
        // Not a worktree by default here: no base branch field.
        assert!(!f.fields().contains(&Field::BaseRef));
        f.field = Field::Approval;
        for _ in 0..3 {
            f.handle(&key(KeyCode::Right));
        }
        f.field = Field::Isolation;
        f.handle(&key(KeyCode::Right));
        assert!(f.fields().contains(&Field::BaseRef));
        f.field = Field::BaseRef;
        f.handle(&key(KeyCode::Char('d')));
        f.field = Field::Checks;
        f.paste("cargo test\n\nmake lint");
        f.field = Field::MaxAttempts;
        f.handle(&key(KeyCode::Right));
        f.handle(&key(KeyCode::Right));
        let t = task(&f);
        assert_eq!(t.approval, Some(Approval::Auto));
        assert_eq!(t.isolation, Some(Isolation::Worktree));
        assert_eq!(t.base_ref.as_deref(), Some("d"));
        assert_eq!(t.checks, ["cargo test", "make lint"]);
        assert_eq!(t.max_attempts, Some(2));
        // One variant alone is refused; two race, the provider above aside.
        f.field = Field::Variants;
        f.handle(&key(KeyCode::Char(' ')));
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::None);
        assert!(f.error_for(Field::Variants).is_some());
        f.handle(&key(KeyCode::Right));
        f.handle(&key(KeyCode::Char(' ')));
        assert_eq!(f.handle(&key(KeyCode::Enter)), FormAction::Submit);
        let t = task(&f);
        assert_eq!(t.provider_id, None);
        let ids: Vec<_> = t.variants.iter().map(|v| v.provider_id.as_str()).collect();
        assert_eq!(ids, ["exec", "shell"]);
        assert!(
            t.variants
                .iter()
                .all(|v| v.approval == Some(Approval::Auto))
        );
    }
}
