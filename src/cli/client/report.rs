//! `orchestra report …`: a subagent (or a script it runs) reports on its own task. Nothing is
//! remembered locally: every call reads what it needs from the server.

use super::error::{CliError, CliResult};
use super::http::segment;
use super::output::{self, clean, number, out, short_id, str_at};
use super::task::task_path;
use super::{Ctx, ReportArgs, ReportCmd};
use crate::cli::GlobalArgs;
use serde_json::{Value, json};
use std::io::Read;

pub fn run(args: &ReportArgs, global: &GlobalArgs) -> CliResult<()> {
    let task = args.task.as_deref().map(str::trim).filter(|t| !t.is_empty()).ok_or_else(|| {
        CliError::usage(
            "which task? pass --task ID or set ORCHESTRA_TASK_ID (every session orchestra starts for a task has it set)",
        )
    })?;
    // Read stdin before anything else can fail half-way.
    let stdin_text = match &args.cmd {
        ReportCmd::Output { text } if text.len() == 1 && text[0] == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
            Some(s)
        }
        _ => None,
    };
    let ctx = Ctx::connect(&args.client, global)?;
    let base = task_path(&ctx, task)?;
    match &args.cmd {
        ReportCmd::Step { description } => step(&ctx, &base, &description.join(" ")),
        ReportCmd::StepDone { failed, output } => {
            step_done(&ctx, &base, *failed, output.as_deref())
        }
        ReportCmd::Progress { percent } => {
            if !percent.is_finite() {
                return Err(CliError::usage("progress must be a number from 0 to 100"));
            }
            let value = if percent.fract() == 0.0 {
                json!(*percent as i64)
            } else {
                json!(percent)
            };
            let answer = ctx.client.patch(&base, &json!({ "progress": value }))?;
            finish(&ctx, &answer, |t| {
                format!(
                    "progress {}%",
                    t.pointer("/metadata/progress")
                        .map(number)
                        .unwrap_or_else(|| "-".into())
                )
            })
        }
        ReportCmd::Output { text } => {
            let text = stdin_text.unwrap_or_else(|| text.join(" "));
            let answer = ctx
                .client
                .post(&format!("{base}/output"), Some(&json!({ "output": text })))?;
            if ctx.json {
                output::json(&answer);
            }
            Ok(())
        }
        ReportCmd::Result {
            success,
            failure: _,
            summary,
            modified,
            created,
            error,
        } => {
            let mut body = json!({
                "success": success,
                "summary": summary,
                "filesModified": modified,
                "filesCreated": created,
            });
            if let Some(e) = error {
                body["error"] = json!(e);
            }
            let answer = ctx.client.post(&format!("{base}/result"), Some(&body))?;
            finish(&ctx, &answer, |t| {
                format!(
                    "task {} {}",
                    short_id(str_at(t, "/id").unwrap_or("?")),
                    clean(str_at(t, "/metadata/status").unwrap_or("?"))
                )
            })
        }
    }
}

/// Prints the answer: as is with --json, else one line made from its task.
fn finish(ctx: &Ctx, answer: &Value, line: impl FnOnce(&Value) -> String) -> CliResult<()> {
    if ctx.json {
        output::json(answer);
    } else {
        let t = answer
            .get("task")
            .ok_or_else(|| CliError::server("the server's answer holds no task"))?;
        out(&line(t));
    }
    Ok(())
}

/// Adds a step and marks it running.
fn step(ctx: &Ctx, base: &str, description: &str) -> CliResult<()> {
    let added = ctx.client.post(
        &format!("{base}/steps"),
        Some(&json!({ "description": description })),
    )?;
    let step_id = added
        .get("stepId")
        .and_then(Value::as_str)
        .or_else(|| str_at(&added, "/step/id"))
        .ok_or_else(|| CliError::server("the server's answer holds no step id"))?
        .to_string();
    let mut answer = ctx.client.patch(
        &format!("{base}/steps/{}", segment(&step_id)),
        &json!({ "status": "running" }),
    )?;
    answer["stepId"] = json!(step_id);
    if ctx.json {
        output::json(&answer);
    } else {
        out(&format!(
            "step {} running: {}",
            short_id(&step_id),
            clean(description)
        ));
    }
    Ok(())
}

/// Marks the newest running step completed (or failed).
fn step_done(ctx: &Ctx, base: &str, failed: bool, output: Option<&str>) -> CliResult<()> {
    let answer = ctx.client.get(base)?;
    let steps = answer
        .pointer("/task/metadata/steps")
        .and_then(Value::as_array)
        .ok_or_else(|| CliError::server("the server's answer holds no steps"))?;
    let running = steps
        .iter()
        .rev()
        .find(|s| str_at(s, "/status") == Some("running"))
        .ok_or_else(|| {
            CliError::refused(
                "this task has no running step; begin one with `orchestra report step DESCRIPTION`",
            )
        })?;
    let step_id = str_at(running, "/id")
        .ok_or_else(|| CliError::server("a step in the server's answer has no id"))?;
    let status = if failed { "failed" } else { "completed" };
    let mut body = json!({ "status": status });
    if let Some(o) = output {
        body["output"] = json!(o);
    }
    let answer = ctx
        .client
        .patch(&format!("{base}/steps/{}", segment(step_id)), &body)?;
    if ctx.json {
        output::json(&answer);
    } else {
        out(&format!(
            "step {} {status}: {}",
            short_id(step_id),
            clean(str_at(running, "/description").unwrap_or(""))
        ));
    }
    Ok(())
}
