//! Reviewing and finishing a worktree task: its diff, merging it, discarding it.

use super::args::{PickVariant, TaskId};
use super::refusal::Tool;
use super::{Ctx, Outcome, parse, refused, view};
use orchestra_client::http::Method;
use orchestra_proto::routes;
use orchestra_proto::wire::{DiffBody, Discarded, MergedTask, Picked};
use rmcp::model::JsonObject;
use serde_json::json;

/// The most of a patch a model is given at once; the files list is always whole.
const PATCH_CAP: usize = 200 * 1024;

pub async fn diff(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: TaskId = parse("task_diff", args)?;
    let body: DiffBody = ctx
        .remote
        .get(routes::at(routes::TASK_DIFF, &[&a.id]), "a diff")
        .await
        .map_err(|e| refused(Tool::Diff, e))?;
    let mut d = serde_json::to_value(&body.diff).map_err(|e| e.to_string())?;
    if let Some(patch) = d.get_mut("patch")
        && let Some(text) = patch.as_str()
        && text.len() > PATCH_CAP
    {
        let mut cut = PATCH_CAP;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let total = text.len();
        *patch = json!(format!(
            "{}\n[… cut: the patch is {total} bytes; the first {cut} are shown]",
            &text[..cut]
        ));
    }
    Ok(json!({"id": a.id, "diff": d}))
}

pub async fn merge(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: TaskId = parse("merge_task", args)?;
    let body: MergedTask = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::TASK_MERGE, &[&a.id]),
            (),
            "a merge",
        )
        .await
        .map_err(|e| refused(Tool::Merge, e))?;
    Ok(json!({"task": view::task(&body.task, None, 0), "merge": body.merge}))
}

pub async fn discard(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: TaskId = parse("discard_task", args)?;
    let body: Discarded = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::TASK_DISCARD, &[&a.id]),
            (),
            "a discarded task",
        )
        .await
        .map_err(|e| refused(Tool::Discard, e))?;
    Ok(json!({"task": view::task(&body.task, None, 0), "snapshotRef": body.snapshot_ref}))
}

pub async fn pick(ctx: &Ctx, args: Option<JsonObject>) -> Outcome {
    let a: PickVariant = parse("pick_variant", args)?;
    let body: Picked = ctx
        .remote
        .send(
            Method::Post,
            routes::at(routes::TASK_PICK, &[&a.id]),
            orchestra_proto::wire::request::PickVariant { variant: a.variant },
            "a pick",
        )
        .await
        .map_err(|e| refused(Tool::Pick, e))?;
    Ok(json!({
        "task": view::task(&body.task, None, 0),
        "variant": body.variant,
        "variantTaskId": body.variant_task_id,
        "merge": body.merge,
        "discarded": body.discarded,
    }))
}
