//! `orchestra report …`: a subagent (or a script it runs) reports on its own task. Nothing is
//! remembered locally: every call reads what it needs from the server.

use super::error::{CliError, CliResult};
use super::http::{PrintJson, Reply};
use super::output::{self, clean, out, percent, short_id};
use super::task::{A_TASK, task_id};
use super::{Ctx, ReportArgs, ReportCmd};
use crate::cli::GlobalArgs;
use orchestra_proto::routes;
use orchestra_proto::task::{StepStatus, Task};
use orchestra_proto::wire::request::{NewStep, OutputLines, ResultReport, StepChange, TaskChange};
use orchestra_proto::wire::{StepAdded, StepBody, TaskBody};
use std::io::Read;

const A_STEP: &str = "a step (`{step}`)";

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
    let id = task_id(&ctx, task)?;
    let base = routes::at(routes::TASK, &[&id]);
    match &args.cmd {
        ReportCmd::Step { description } => step(&ctx, &id, &description.join(" ")),
        ReportCmd::StepDone { failed, output } => step_done(&ctx, &id, *failed, output.as_deref()),
        ReportCmd::Progress { percent: value } => {
            if !value.is_finite() {
                return Err(CliError::usage("progress must be a number from 0 to 100"));
            }
            let change = TaskChange {
                progress: Some(*value),
                ..Default::default()
            };
            let answer = ctx.client.patch(&base, &change, A_TASK)?;
            finish(&ctx, &answer, |t| {
                format!("progress {}%", percent(t.metadata.progress))
            })
        }
        ReportCmd::Output { text } => {
            let text = stdin_text.unwrap_or_else(|| text.join(" "));
            let answer: Reply<TaskBody> = ctx.client.post(
                &routes::at(routes::TASK_OUTPUT, &[&id]),
                &OutputLines { output: text },
                A_TASK,
            )?;
            if ctx.json {
                answer.print_json();
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
            let body = ResultReport {
                success: *success,
                summary: summary.clone(),
                files_modified: modified.clone(),
                files_created: created.clone(),
                error: error.clone(),
            };
            let answer =
                ctx.client
                    .post(&routes::at(routes::TASK_RESULT, &[&id]), &body, A_TASK)?;
            finish(&ctx, &answer, |t| {
                format!("task {} {}", short_id(&t.id), t.status())
            })
        }
    }
}

/// Prints the answer: as is with --json, else one line made from its task.
fn finish(
    ctx: &Ctx,
    answer: &Reply<TaskBody>,
    line: impl FnOnce(&Task) -> String,
) -> CliResult<()> {
    if ctx.json {
        answer.print_json();
    } else {
        out(&line(&answer.value.task));
    }
    Ok(())
}

/// Adds a step and marks it running.
fn step(ctx: &Ctx, id: &str, description: &str) -> CliResult<()> {
    let added: Reply<StepAdded> = ctx.client.post(
        &routes::at(routes::TASK_STEPS, &[id]),
        &NewStep {
            description: description.to_string(),
        },
        "a new step (`{step, stepId}`)",
    )?;
    let step_id = added.value.step_id;
    let running: Reply<StepBody> = ctx.client.patch(
        &routes::at(routes::TASK_STEP, &[id, &step_id]),
        &StepChange {
            status: StepStatus::Running,
            output: None,
        },
        A_STEP,
    )?;
    if ctx.json {
        // The step as it is now, with its id as `step add` gives it.
        output::json(&StepAdded {
            step: running.value.step,
            step_id,
        });
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
fn step_done(ctx: &Ctx, id: &str, failed: bool, output: Option<&str>) -> CliResult<()> {
    let answer: Reply<TaskBody> = ctx.client.get(&routes::at(routes::TASK, &[id]), A_TASK)?;
    let running = answer
        .value
        .task
        .metadata
        .steps
        .iter()
        .rev()
        .find(|s| s.status == StepStatus::Running)
        .ok_or_else(|| {
            CliError::refused(
                "this task has no running step; begin one with `orchestra report step DESCRIPTION`",
            )
        })?;
    let (status, word) = if failed {
        (StepStatus::Failed, "failed")
    } else {
        (StepStatus::Completed, "completed")
    };
    let body = StepChange {
        status,
        output: output.map(str::to_string),
    };
    let answer: Reply<StepBody> = ctx.client.patch(
        &routes::at(routes::TASK_STEP, &[id, &running.id]),
        &body,
        A_STEP,
    )?;
    if ctx.json {
        answer.print_json();
    } else {
        out(&format!(
            "step {} {word}: {}",
            short_id(&running.id),
            clean(&running.description)
        ));
    }
    Ok(())
}
