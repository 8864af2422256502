//! `orchestra task …`

use super::error::{CliError, CliResult};
use super::http::{PrintJson, Reply, segment};
use super::output::{Table, ago, clean, clean_lines, out, percent, short_id, truncate};
use super::{Ctx, TaskCmd, absolute_dir, resolve_id, trash_place};
use orchestra_proto::task::{Isolation, StepStatus, Task};
use orchestra_proto::wire::request::{ContinueTask, NewTask, TaskChange};
use orchestra_proto::wire::{TaskBody, TaskList, started_anyway};

use orchestra_proto::routes::{self, TASKS};

/// What the answers of the task routes are called in errors.
pub const A_TASK: &str = "a task (`{task}`)";

pub fn run(ctx: &Ctx, cmd: &TaskCmd) -> CliResult<()> {
    match cmd {
        TaskCmd::Add {
            name,
            description,
            provider,
            dir,
            start,
            isolation,
            base,
            approval,
            delegate,
            no_delegate,
            parent,
            answers,
            variants,
            checks,
            max_attempts,
            check_timeout,
        } => {
            let body = NewTask {
                name: name.clone(),
                description: description.clone().unwrap_or_else(|| name.clone()),
                provider_id: provider.clone(),
                working_directory: dir.as_deref().map(absolute_dir).transpose()?,
                isolation: isolation
                    .as_deref()
                    .map(|i| i.parse::<Isolation>().map_err(CliError::usage))
                    .transpose()?,
                base_ref: base.clone(),
                approval: *approval,
                // Neither flag: the provider's setting decides.
                delegate: (*delegate || *no_delegate).then_some(*delegate),
                required_capabilities: Vec::new(),
                parent_task_id: parent.as_deref().map(|p| task_id(ctx, p)).transpose()?,
                answers: answers
                    .as_deref()
                    .map(|a| a.parse().map_err(CliError::usage))
                    .transpose()?,
                variants: variants.clone(),
                checks: checks.clone(),
                max_attempts: *max_attempts,
                check_timeout_seconds: *check_timeout,
            };
            add(ctx, &body, *start)
        }
        TaskCmd::List {
            status,
            limit,
            parent,
        } => list(ctx, status.as_deref(), *limit, parent.as_deref()),
        TaskCmd::Show { id, output_lines } => show(ctx, id, *output_lines),
        TaskCmd::Start { id } => lifecycle(ctx, id, "start", false),
        TaskCmd::Pause { id, children } => lifecycle(ctx, id, "pause", *children),
        TaskCmd::Resume { id, children } => lifecycle(ctx, id, "resume", *children),
        TaskCmd::Cancel { id, children } => lifecycle(ctx, id, "cancel", *children),
        TaskCmd::Retry { id } => lifecycle(ctx, id, "retry", false),
        TaskCmd::Rerun { id } => lifecycle(ctx, id, "rerun", false),
        TaskCmd::Continue { id, message } => continue_task(ctx, id, message.clone()),
        TaskCmd::Edit {
            id,
            name,
            description,
            provider,
            approval,
            isolation,
            base,
        } => {
            if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
                return Err(CliError::usage("--name must not be empty"));
            }
            let change = TaskChange {
                name: name.clone(),
                description: description.clone(),
                provider_id: provider.clone(),
                approval: *approval,
                isolation: isolation
                    .as_deref()
                    .map(|i| i.parse::<Isolation>().map_err(CliError::usage))
                    .transpose()?,
                base_ref: base.clone(),
                ..Default::default()
            };
            edit(ctx, id, &change)
        }
        TaskCmd::Pick { id, variant } => super::worktree::pick(ctx, id, variant),
        TaskCmd::Delete { id } => delete(ctx, id),
        TaskCmd::Diff { id } => super::worktree::diff(ctx, id),
        TaskCmd::Merge { id } => super::worktree::merge(ctx, id),
        TaskCmd::Pr { id } => super::worktree::pull_request(ctx, id),
        TaskCmd::Discard { id } => super::worktree::discard(ctx, id),
        TaskCmd::Conflicts { id } => super::worktree::conflicts(ctx, id),
    }
}

/// The task's id, resolved from a prefix if need be.
pub fn task_id(ctx: &Ctx, id: &str) -> CliResult<String> {
    resolve_id(ctx, "task", id, |ctx| {
        let list: Reply<TaskList> = ctx.client.get(TASKS, "the task list (`{tasks}`)")?;
        Ok(list.value.tasks.iter().map(|t| t.id.clone()).collect())
    })
}

/// Prints a task route's answer: as the server sent it with --json, else `line` of its task.
fn print(ctx: &Ctx, answer: &Reply<TaskBody>, line: impl FnOnce(&Task) -> String) {
    if ctx.json {
        answer.print_json();
    } else {
        out(&line(&answer.value.task));
    }
}

fn add(ctx: &Ctx, body: &NewTask, start: bool) -> CliResult<()> {
    let created: Reply<TaskBody> = ctx.client.post(TASKS, body, A_TASK)?;
    let (answer, verb) = if start {
        let id = created.value.task.id.clone();
        start_created(ctx, &id)?
    } else {
        (created, "added")
    };
    print(ctx, &answer, |t| one_line(t, verb));
    Ok(())
}

/// Starts the task just created. Autopilot (or anyone else) may have started it first: the
/// server then refuses with 409 and the task is running; that is what was asked for, so it is
/// reported as started, not as a failure.
fn start_created(ctx: &Ctx, id: &str) -> CliResult<(Reply<TaskBody>, &'static str)> {
    let path = routes::at(routes::TASK, &[id]);
    let refused = match ctx
        .client
        .post(&routes::at(routes::TASK_START, &[id]), &(), A_TASK)
    {
        Ok(answer) => return Ok((answer, "started")),
        Err(e) => e,
    };
    if refused.http_status == Some(409) {
        let now: Reply<TaskBody> = ctx.client.get(&path, A_TASK)?;
        let status = now.value.task.status();
        if started_anyway(&refused.message, Some(status)) {
            return Ok((now, "started elsewhere first (by autopilot, most likely):"));
        }
    }
    Err(CliError {
        message: format!(
            "task {id} was created, but starting it failed: {}",
            refused.message
        ),
        ..refused
    })
}

/// `added 1234abcd  pending  0%  shell  name`; a task waiting on a question says what
/// answers it.
fn one_line(t: &Task, verb: &str) -> String {
    let mut line = format!(
        "{verb} task {}  {}  {}%  {}  {}",
        short_id(&t.id),
        status_shown(t),
        percent(t.metadata.progress),
        clean(&t.metadata.provider_id),
        clean(&t.name),
    );
    if let Some(w) = waits_on(t) {
        line.push('\n');
        line.push_str(&w);
    }
    line
}

/// A task's status for people: `blocked` while it waits on a question (its status is
/// `running`: it holds its place, its agent not started).
fn status_shown(t: &Task) -> String {
    if t.metadata.prompt.is_some() && !t.status().is_final() {
        "blocked".to_string()
    } else {
        t.status().to_string()
    }
}

/// What a waiting task asks and how to answer, when it waits.
fn waits_on(t: &Task) -> Option<String> {
    let p = t.metadata.prompt.as_ref()?;
    let mut text = String::from("it waits for an answer before anything runs:\n");
    for l in p.text.lines() {
        text.push_str(&format!("  {}\n", clean(l)));
    }
    let options: Vec<String> = p
        .options
        .iter()
        .map(|o| format!("{} = {}", clean(&o.key), clean(&o.label)))
        .collect();
    if let Some(r) = &t.metadata.trust {
        text.push_str(&format!(
            "trust it with `orchestra trust {}`; or ",
            clean(&r.file)
        ));
    }
    text.push_str(&format!(
        "answer in the TUI, or with POST /api/coding-agents/tasks/{}/answer {{\"option\": …}} ({})",
        clean(&t.id),
        options.join(", ")
    ));
    Some(text)
}

fn list(
    ctx: &Ctx,
    status: Option<&str>,
    limit: Option<u32>,
    parent: Option<&str>,
) -> CliResult<()> {
    let mut query = Vec::new();
    if let Some(s) = status {
        query.push(format!("status={}", segment(s)));
    }
    if let Some(p) = parent {
        query.push(format!("parent={}", segment(&task_id(ctx, p)?)));
    }
    if let Some(n) = limit {
        query.push(format!("limit={n}"));
    }
    let path = if query.is_empty() {
        TASKS.to_string()
    } else {
        format!("{TASKS}?{}", query.join("&"))
    };
    let answer: Reply<TaskList> = ctx.client.get(&path, "the task list (`{tasks}`)")?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let tasks = &answer.value.tasks;
    if tasks.is_empty() {
        out(match (status, parent) {
            (_, Some(_)) => "no such children",
            (Some(_), None) => "no tasks with that status",
            (None, None) => "no tasks; add one with `orchestra task add NAME`",
        });
        return Ok(());
    }
    let mut table = Table::new(&["ID", "STATUS", "PROGRESS", "PROVIDER", "NAME"]);
    for t in tasks {
        table.row(vec![
            short_id(&t.id),
            status_shown(t),
            format!("{}%", percent(t.metadata.progress)),
            clean(&t.metadata.provider_id),
            truncate(&clean(&t.name), 60),
        ]);
    }
    out(&table.render());
    Ok(())
}

fn show(ctx: &Ctx, id: &str, output_lines: usize) -> CliResult<()> {
    let answer: Reply<TaskBody> = ctx
        .client
        .get(&routes::at(routes::TASK, &[&task_id(ctx, id)?]), A_TASK)?;
    print(ctx, &answer, |t| render_task(t, output_lines));
    if !ctx.json && answer.value.task.metadata.is_variant_parent() {
        out(&super::worktree::render_variants(
            ctx,
            &answer.value.task.id,
        )?);
    }
    Ok(())
}

/// A task for people: fields, steps, result and the newest output lines.
pub fn render_task(t: &Task, output_lines: usize) -> String {
    let m = &t.metadata;
    let mut text = String::new();
    let mut field = |label: &str, value: String| {
        text.push_str(&format!("{label:<12} {value}\n"));
    };
    field("task", t.id.clone());
    field("name", clean(&t.name));
    field("description", truncate(&clean(&t.description), 200));
    field(
        "status",
        format!("{}  {}%", status_shown(t), percent(m.progress)),
    );
    if let Some(w) = waits_on(t) {
        field("waits", w.replace('\n', "\n             "));
    }
    if let Some(e) = &m.error {
        field("error", clean(e));
    }
    field("provider", clean(&m.provider_id));
    field("directory", clean(&m.working_directory));
    if let Some(s) = &m.session_id {
        field("session", clean(s));
    }
    if let Some(c) = &m.conversation_id {
        field("conversation", clean(c));
    }
    if let Some(r) = &m.retry_of {
        field("retry of", clean(r));
    }
    if let Some(p) = &m.parent_task_id {
        field("parent", clean(p));
    }
    if let Some(pr) = &m.pull_request {
        field("pull request", clean(&pr.url));
    }
    if m.answers == orchestra_proto::task::Answers::Parent {
        field("answers", "its parent's agent, and you".into());
    }
    if let Some((attempt, max)) = t.check_attempt() {
        field(
            "checks",
            format!("{} (attempt {attempt} of {max})", m.checks.len()),
        );
    }
    for (label, at) in [
        ("created", Some(m.created_at)),
        ("started", m.started_at),
        ("finished", m.completed_at),
    ] {
        if let Some(at) = at {
            field(label, ago(at));
        }
    }
    if !m.steps.is_empty() {
        text.push_str("steps\n");
        for s in &m.steps {
            let mark = match s.status {
                StepStatus::Completed => "done",
                StepStatus::Failed => "FAIL",
                StepStatus::Running => "  ->",
                StepStatus::Skipped => "skip",
                _ => "   .",
            };
            text.push_str(&format!(
                "  {mark}  {}  ({})\n",
                clean(&s.description),
                step_status(s.status)
            ));
            if let Some(o) = s.output.as_deref().filter(|o| !o.is_empty()) {
                text.push_str(&format!("        {}\n", truncate(&clean(o), 200)));
            }
        }
    }
    if let Some(r) = &m.result {
        text.push_str(&format!(
            "result       {}: {}\n",
            if r.success { "success" } else { "failure" },
            clean(&r.summary)
        ));
        for (label, files) in [
            ("modified", &r.files_modified),
            ("created", &r.files_created),
        ] {
            if !files.is_empty() {
                let files: Vec<String> = files.iter().map(|f| clean(f)).collect();
                text.push_str(&format!("  {label:<10} {}\n", files.join(", ")));
            }
        }
        if let Some(e) = &r.error {
            text.push_str(&format!("  {:<10} {}\n", "error", clean(e)));
        }
        for c in &r.checks {
            let how = match (&c.error, c.exit_code) {
                (Some(e), _) => clean(e),
                (None, Some(code)) => format!("exit {code}"),
                (None, None) => "no exit code".into(),
            };
            text.push_str(&format!(
                "  {:<10} {} {} ({how}, {:.1} s)\n",
                "check",
                if c.passed() { "passed" } else { "FAILED" },
                truncate(&clean(&c.command), 80),
                c.duration_ms as f64 / 1000.0
            ));
        }
        for c in &r.children {
            text.push_str(&format!(
                "  {:<10} {} {} ({}){}\n",
                "child",
                short_id(&c.id),
                truncate(&clean(&c.name), 60),
                c.status,
                c.summary
                    .as_deref()
                    .map(|s| format!(": {}", truncate(&clean(s), 120)))
                    .unwrap_or_default()
            ));
        }
    }
    let lines = &m.output;
    if output_lines > 0 && !lines.is_empty() {
        let skip = lines.len().saturating_sub(output_lines);
        if skip > 0 {
            text.push_str(&format!(
                "output (last {output_lines} of {} lines; --json for all)\n",
                lines.len()
            ));
        } else {
            text.push_str("output\n");
        }
        for l in lines.iter().skip(skip) {
            text.push_str("  | ");
            text.push_str(&clean_lines(l));
            text.push('\n');
        }
    }
    text
}

/// A step's status as the API names it.
fn step_status(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Pending => "pending",
        StepStatus::Running => "running",
        StepStatus::Paused => "paused",
        StepStatus::Completed => "completed",
        StepStatus::Failed => "failed",
        StepStatus::Cancelled => "cancelled",
        StepStatus::Skipped => "skipped",
    }
}

fn lifecycle(ctx: &Ctx, id: &str, op: &str, children: bool) -> CliResult<()> {
    // A rerun is a retry (the same route, from any finished state).
    let route = match op {
        "start" => routes::TASK_START,
        "pause" => routes::TASK_PAUSE,
        "resume" => routes::TASK_RESUME,
        "cancel" => routes::TASK_CANCEL,
        _ => routes::TASK_RETRY,
    };
    let mut path = routes::at(route, &[&task_id(ctx, id)?]);
    if children {
        path.push_str("?children=true");
    }
    let answer: Reply<TaskBody> = ctx.client.post(&path, &(), A_TASK)?;
    let verb = match op {
        "start" => "started",
        "pause" => "paused",
        "resume" => "resumed",
        "cancel" => "cancelled",
        "rerun" => "rerun as",
        _ => "retried as",
    };
    print(ctx, &answer, |t| one_line(t, verb));
    Ok(())
}

/// `task continue ID [--message M]`: the agent again, on the task's conversation.
fn continue_task(ctx: &Ctx, id: &str, message: Option<String>) -> CliResult<()> {
    let path = routes::at(routes::TASK_CONTINUE, &[&task_id(ctx, id)?]);
    let answer: Reply<TaskBody> = ctx.client.post(&path, &ContinueTask { message }, A_TASK)?;
    print(ctx, &answer, |t| one_line(t, "continued"));
    Ok(())
}

/// `task edit ID --name N --description D`: only a pending task can be changed.
fn edit(ctx: &Ctx, id: &str, body: &TaskChange) -> CliResult<()> {
    let answer: Reply<TaskBody> = ctx.client.patch(
        &routes::at(routes::TASK, &[&task_id(ctx, id)?]),
        body,
        A_TASK,
    )?;
    print(ctx, &answer, |t| one_line(t, "edited"));
    Ok(())
}

/// `task delete ID`: a finished task goes, a copy is kept in the state directory's trash.
fn delete(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<TaskBody> = ctx
        .client
        .delete(&routes::at(routes::TASK, &[&task_id(ctx, id)?]), A_TASK)?;
    print(ctx, &answer, |t| {
        format!(
            "deleted task {}  {}; a copy (task, sessions, transcripts) is kept in {}",
            short_id(&t.id),
            clean(&t.name),
            trash_place(ctx, &format!("trash/{}", clean(&t.id)))
        )
    });
    Ok(())
}
