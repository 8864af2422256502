//! `orchestra task …`

use super::error::{CliError, CliResult};
use super::http::segment;
use super::output::{
    self, Table, ago, clean, clean_lines, number, out, short_id, str_at, truncate,
};
use super::{Ctx, TaskCmd, absolute_dir, resolve_id, trash_place};
use serde_json::{Value, json};

pub const TASKS: &str = "/api/coding-agents/tasks";

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
        } => add(
            ctx,
            name,
            description.as_deref(),
            provider.as_deref(),
            dir.as_deref(),
            *start,
            (isolation.as_deref(), base.as_deref()),
        ),
        TaskCmd::List { status, limit } => list(ctx, status.as_deref(), *limit),
        TaskCmd::Show { id, output_lines } => show(ctx, id, *output_lines),
        TaskCmd::Start { id } => lifecycle(ctx, id, "start"),
        TaskCmd::Pause { id } => lifecycle(ctx, id, "pause"),
        TaskCmd::Resume { id } => lifecycle(ctx, id, "resume"),
        TaskCmd::Cancel { id } => lifecycle(ctx, id, "cancel"),
        TaskCmd::Retry { id } => lifecycle(ctx, id, "retry"),
        TaskCmd::Rerun { id } => lifecycle(ctx, id, "rerun"),
        TaskCmd::Edit {
            id,
            name,
            description,
        } => edit(ctx, id, name.as_deref(), description.as_deref()),
        TaskCmd::Delete { id } => delete(ctx, id),
        TaskCmd::Diff { id } => super::worktree::diff(ctx, id),
        TaskCmd::Merge { id } => super::worktree::merge(ctx, id),
        TaskCmd::Discard { id } => super::worktree::discard(ctx, id),
    }
}

/// The task's path, its id resolved from a prefix if need be.
pub fn task_path(ctx: &Ctx, id: &str) -> CliResult<String> {
    let id = resolve_id(ctx, TASKS, "tasks", "task", id)?;
    Ok(format!("{TASKS}/{}", segment(&id)))
}

fn task_of(answer: &Value) -> CliResult<&Value> {
    answer
        .get("task")
        .filter(|t| t.is_object())
        .ok_or_else(|| CliError::server("the server's answer holds no task"))
}

fn add(
    ctx: &Ctx,
    name: &str,
    description: Option<&str>,
    provider: Option<&str>,
    dir: Option<&std::path::Path>,
    start: bool,
    (isolation, base): (Option<&str>, Option<&str>),
) -> CliResult<()> {
    let mut body = json!({
        "name": name,
        "description": description.unwrap_or(name),
    });
    if let Some(p) = provider {
        body["providerId"] = json!(p);
    }
    if let Some(d) = dir {
        body["workingDirectory"] = json!(absolute_dir(d)?);
    }
    if let Some(i) = isolation {
        body["isolation"] = json!(i);
    }
    if let Some(b) = base {
        body["baseRef"] = json!(b);
    }
    let created = ctx.client.post(TASKS, Some(&body))?;
    let (answer, verb) = if start {
        let id = str_at(task_of(&created)?, "/id")
            .unwrap_or_default()
            .to_string();
        start_created(ctx, &id)?
    } else {
        (created, "added")
    };
    if ctx.json {
        output::json(&answer);
    } else {
        out(&one_line(task_of(&answer)?, verb));
    }
    Ok(())
}

/// Starts the task just created. Autopilot (or anyone else) may have started it first: the
/// server then refuses with 409 and the task is running; that is what was asked for, so it is
/// reported as started, not as a failure.
fn start_created(ctx: &Ctx, id: &str) -> CliResult<(Value, &'static str)> {
    let path = format!("{TASKS}/{}", segment(id));
    let refused = match ctx.client.post(&format!("{path}/start"), None) {
        Ok(answer) => return Ok((answer, "started")),
        Err(e) => e,
    };
    if refused.http_status == Some(409) {
        let now = ctx.client.get(&path)?;
        let status = str_at(task_of(&now)?, "/metadata/status").unwrap_or_default();
        // Completed or failed too: it was started and has already finished. A start still in
        // progress elsewhere leaves it pending for a moment; the server says so.
        let elsewhere = refused.message.contains("started elsewhere");
        if elsewhere || matches!(status, "running" | "paused" | "completed" | "failed") {
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

/// `added 1234abcd  pending  0%  shell  name`
fn one_line(t: &Value, verb: &str) -> String {
    let id = str_at(t, "/id").unwrap_or("?");
    format!(
        "{verb} task {}  {}  {}%  {}  {}",
        short_id(id),
        str_at(t, "/metadata/status").unwrap_or("?"),
        t.pointer("/metadata/progress")
            .map(number)
            .unwrap_or_else(|| "-".into()),
        clean(str_at(t, "/metadata/providerId").unwrap_or("-")),
        clean(str_at(t, "/name").unwrap_or("")),
    )
}

fn list(ctx: &Ctx, status: Option<&str>, limit: Option<u32>) -> CliResult<()> {
    let mut query = Vec::new();
    if let Some(s) = status {
        query.push(format!("status={}", segment(s)));
    }
    if let Some(n) = limit {
        query.push(format!("limit={n}"));
    }
    let path = if query.is_empty() {
        TASKS.to_string()
    } else {
        format!("{TASKS}?{}", query.join("&"))
    };
    let answer = ctx.client.get(&path)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let tasks = answer
        .get("tasks")
        .and_then(Value::as_array)
        .ok_or_else(|| CliError::server("the server's answer holds no task list"))?;
    if tasks.is_empty() {
        out(match status {
            Some(_) => "no tasks with that status",
            None => "no tasks; add one with `orchestra task add NAME`",
        });
        return Ok(());
    }
    let mut table = Table::new(&["ID", "STATUS", "PROGRESS", "PROVIDER", "NAME"]);
    for t in tasks {
        table.row(vec![
            short_id(str_at(t, "/id").unwrap_or("?")),
            clean(str_at(t, "/metadata/status").unwrap_or("?")),
            format!(
                "{}%",
                t.pointer("/metadata/progress")
                    .map(number)
                    .unwrap_or_else(|| "-".into())
            ),
            clean(str_at(t, "/metadata/providerId").unwrap_or("-")),
            truncate(&clean(str_at(t, "/name").unwrap_or("")), 60),
        ]);
    }
    out(&table.render());
    Ok(())
}

fn show(ctx: &Ctx, id: &str, output_lines: usize) -> CliResult<()> {
    let answer = ctx.client.get(&task_path(ctx, id)?)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    out(&render_task(task_of(&answer)?, output_lines));
    Ok(())
}

/// A task for people: fields, steps, result and the newest output lines.
pub fn render_task(t: &Value, output_lines: usize) -> String {
    let m = t.get("metadata").cloned().unwrap_or(Value::Null);
    let mut text = String::new();
    let mut field = |label: &str, value: String| {
        text.push_str(&format!("{label:<12} {value}\n"));
    };
    field("task", str_at(t, "/id").unwrap_or("?").to_string());
    field("name", clean(str_at(t, "/name").unwrap_or("")));
    field(
        "description",
        truncate(&clean(str_at(t, "/description").unwrap_or("")), 200),
    );
    field(
        "status",
        format!(
            "{}  {}%",
            clean(str_at(&m, "/status").unwrap_or("?")),
            m.get("progress").map(number).unwrap_or_else(|| "-".into())
        ),
    );
    if let Some(e) = str_at(&m, "/error") {
        field("error", clean(e));
    }
    field("provider", clean(str_at(&m, "/providerId").unwrap_or("-")));
    field(
        "directory",
        clean(str_at(&m, "/workingDirectory").unwrap_or("-")),
    );
    if let Some(s) = str_at(&m, "/sessionId") {
        field("session", clean(s));
    }
    if let Some(r) = str_at(&m, "/retryOf") {
        field("retry of", clean(r));
    }
    for (label, key) in [
        ("created", "createdAt"),
        ("started", "startedAt"),
        ("finished", "completedAt"),
    ] {
        if let Some(a) = m.get(key).and_then(ago) {
            field(label, a);
        }
    }
    let steps = m
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !steps.is_empty() {
        text.push_str("steps\n");
        for s in &steps {
            let status = str_at(s, "/status").unwrap_or("?");
            let mark = match status {
                "completed" => "done",
                "failed" => "FAIL",
                "running" => "  ->",
                "skipped" => "skip",
                _ => "   .",
            };
            text.push_str(&format!(
                "  {mark}  {}  ({})\n",
                clean(str_at(s, "/description").unwrap_or("")),
                clean(status)
            ));
            if let Some(o) = str_at(s, "/output").filter(|o| !o.is_empty()) {
                text.push_str(&format!("        {}\n", truncate(&clean(o), 200)));
            }
        }
    }
    if let Some(r) = m.get("result").filter(|r| r.is_object()) {
        let ok = r.get("success").and_then(Value::as_bool).unwrap_or(false);
        text.push_str(&format!(
            "result       {}: {}\n",
            if ok { "success" } else { "failure" },
            clean(str_at(r, "/summary").unwrap_or(""))
        ));
        for (label, key) in [("modified", "filesModified"), ("created", "filesCreated")] {
            let files: Vec<String> = r
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(clean).collect())
                .unwrap_or_default();
            if !files.is_empty() {
                text.push_str(&format!("  {label:<10} {}\n", files.join(", ")));
            }
        }
        if let Some(e) = str_at(r, "/error") {
            text.push_str(&format!("  {:<10} {}\n", "error", clean(e)));
        }
    }
    let lines = m
        .get("output")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
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
            text.push_str(&clean_lines(l.as_str().unwrap_or("")));
            text.push('\n');
        }
    }
    text
}

fn lifecycle(ctx: &Ctx, id: &str, op: &str) -> CliResult<()> {
    // A rerun is a retry (the same route, from any finished state).
    let route = if op == "rerun" { "retry" } else { op };
    let path = format!("{}/{route}", task_path(ctx, id)?);
    let answer = ctx.client.post(&path, None)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let t = task_of(&answer)?;
    let verb = match op {
        "start" => "started",
        "pause" => "paused",
        "resume" => "resumed",
        "cancel" => "cancelled",
        "rerun" => "rerun as",
        _ => "retried as",
    };
    out(&one_line(t, verb));
    Ok(())
}

/// `task edit ID --name N --description D`: only a pending task can be changed.
fn edit(ctx: &Ctx, id: &str, name: Option<&str>, description: Option<&str>) -> CliResult<()> {
    let mut body = json!({});
    if let Some(n) = name {
        if n.trim().is_empty() {
            return Err(CliError::usage("--name must not be empty"));
        }
        body["name"] = json!(n);
    }
    if let Some(d) = description {
        body["description"] = json!(d);
    }
    let answer = ctx.client.patch(&task_path(ctx, id)?, &body)?;
    if ctx.json {
        output::json(&answer);
    } else {
        out(&one_line(task_of(&answer)?, "edited"));
    }
    Ok(())
}

/// `task delete ID`: a finished task goes, a copy is kept in the state directory's trash.
fn delete(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer = ctx.client.delete(&task_path(ctx, id)?)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let t = task_of(&answer)?;
    let full = str_at(t, "/id").unwrap_or("?");
    out(&format!(
        "deleted task {}  {}; a copy (task, sessions, transcripts) is kept in {}",
        short_id(full),
        clean(str_at(t, "/name").unwrap_or("")),
        trash_place(ctx, &format!("trash/{}", clean(full)))
    ));
    Ok(())
}
