//! `orchestra task diff|merge|pr|pick|discard|conflicts` and `orchestra gc`: a worktree task's
//! changes, its conflicts, and finishing, publishing or collecting its worktree.

use super::Ctx;
use super::error::CliResult;
use super::http::{PrintJson, Reply};
use super::output::{clean, out, short_id};
use super::task::task_id;
use orchestra_proto::routes;
use orchestra_proto::units::human_bytes;
use orchestra_proto::wire::request::Gc;
use orchestra_proto::wire::request::PickVariant;
use orchestra_proto::wire::{
    CollectedList, ConflictReport, Diff, DiffBody, Discarded, MergedTask, Picked, PullRequestTask,
    TaskList,
};
use std::io::IsTerminal;

/// Colour a diff only for a person at a terminal (and not when NO_COLOR is set).
fn colour_wanted() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A unified diff's lines with control characters made visible, coloured when `colour`.
pub fn render_patch(patch: &str, colour: bool) -> String {
    let mut text = String::new();
    for line in patch.lines() {
        // Escape sequences in the agent's files must not reach the terminal.
        let line: String = line
            .chars()
            .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
            .collect();
        let code = if !colour {
            None
        } else if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
            Some("1")
        } else if line.starts_with('+') {
            Some("32")
        } else if line.starts_with('-') {
            Some("31")
        } else if line.starts_with("@@") {
            Some("36")
        } else {
            None
        };
        match code {
            Some(c) => text.push_str(&format!("\x1b[{c}m{line}\x1b[0m\n")),
            None => {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    text
}

/// A line count; `-` for a binary file.
fn count(n: Option<u64>) -> String {
    n.map_or_else(|| "-".into(), |n| n.to_string())
}

/// The file list with counts, then the patch.
pub fn render_diff(d: &Diff, colour: bool) -> String {
    let mut text = format!(
        "{} against {} ({})\n",
        clean(&d.branch),
        clean(&d.base_branch),
        short_id(&d.base_commit),
    );
    if d.base_moved {
        text.push_str("note: the base branch has moved since the task started\n");
    }
    if d.files.is_empty() {
        text.push_str("no changes\n");
        return text;
    }
    for f in &d.files {
        text.push_str(&format!(
            "  {:<9} +{:<5} -{:<5} {}\n",
            f.status.as_str(),
            count(f.added),
            count(f.removed),
            clean(&f.path),
        ));
    }
    text.push('\n');
    text.push_str(&render_patch(&d.patch, colour));
    text
}

pub fn diff(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<DiffBody> = ctx.client.get(
        &routes::at(routes::TASK_DIFF, &[&task_id(ctx, id)?]),
        "a diff (`{diff}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    out(&render_diff(&answer.value.diff, colour_wanted()));
    Ok(())
}

pub fn merge(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<MergedTask> = ctx.client.post(
        &routes::at(routes::TASK_MERGE, &[&task_id(ctx, id)?]),
        &(),
        "a merged task (`{task, merge}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let m = &answer.value.merge;
    let how = if m.fast_forward {
        "fast-forward"
    } else {
        "merge commit"
    };
    out(&format!(
        "merged into {} ({how}, {} files): {}",
        clean(&m.base_branch),
        m.files.len(),
        short_id(&m.commit),
    ));
    Ok(())
}

pub fn pull_request(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<PullRequestTask> = ctx.client.post(
        &routes::at(routes::TASK_PR, &[&task_id(ctx, id)?]),
        &(),
        "a task with its pull request (`{task, pullRequest}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let pr = &answer.value.pull_request;
    out(&format!(
        "pushed {} to {}; pull request: {}",
        clean(&pr.branch),
        clean(&pr.remote),
        clean(&pr.url),
    ));
    Ok(())
}

pub fn discard(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<Discarded> = ctx.client.post(
        &routes::at(routes::TASK_DISCARD, &[&task_id(ctx, id)?]),
        &(),
        "a discarded task (`{task, snapshotRef}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let kept = clean(&answer.value.snapshot_ref);
    out(&format!(
        "discarded; its work is kept in {kept} (see it with `git show {kept}`)"
    ));
    Ok(())
}

/// `task pick ID VARIANT`: the variant merged, the others discarded with their snapshots.
pub fn pick(ctx: &Ctx, id: &str, variant: &str) -> CliResult<()> {
    let answer: Reply<Picked> = ctx.client.post(
        &routes::at(routes::TASK_PICK, &[&task_id(ctx, id)?]),
        &PickVariant {
            variant: variant.to_string(),
        },
        "a pick (`{task, variant, merge, discarded}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let p = &answer.value;
    let mut text = format!(
        "picked {}: merged into {} ({} files): {}",
        clean(&p.variant),
        clean(&p.merge.base_branch),
        p.merge.files.len(),
        short_id(&p.merge.commit),
    );
    for d in &p.discarded {
        text.push_str(&format!(
            "\ndiscarded {}; its work is kept in {}",
            clean(&d.variant),
            clean(&d.snapshot_ref)
        ));
    }
    out(&text);
    Ok(())
}

/// A best-of-N task's variants for `task show`: each with its status and diffstat.
pub fn render_variants(ctx: &Ctx, parent: &str) -> CliResult<String> {
    let path = format!("{}?parent={}", routes::TASKS, super::http::segment(parent));
    let list: Reply<TaskList> = ctx.client.get(&path, "the task list (`{tasks}`)")?;
    let mut text = String::from(
        "variants
",
    );
    for t in list.value.tasks.iter().rev() {
        let Some(label) = t.metadata.variant.as_deref() else {
            continue;
        };
        let live = t.metadata.worktree.as_ref().is_some_and(|w| w.is_live());
        let stat = if live {
            match ctx.client.get::<DiffBody>(
                &routes::at(routes::TASK_DIFF, &[&t.id]),
                "a diff (`{diff}`)",
            ) {
                Ok(d) => diffstat(&d.value.diff),
                Err(e) => format!("no diff: {}", e.message),
            }
        } else {
            match t.metadata.worktree.as_ref().and_then(|w| w.outcome) {
                Some(o) => format!("worktree {}", format!("{o:?}").to_lowercase()),
                None => "no worktree yet".into(),
            }
        };
        text.push_str(&format!(
            "  {:<12} {:<10} {}  {}\n",
            clean(label),
            t.status().as_str(),
            short_id(&t.id),
            stat
        ));
    }
    Ok(text.trim_end().to_string())
}

/// `3 files +12 -4`.
fn diffstat(d: &Diff) -> String {
    let added: u64 = d.files.iter().filter_map(|f| f.added).sum();
    let removed: u64 = d.files.iter().filter_map(|f| f.removed).sum();
    format!("{} files +{added} -{removed}", d.files.len())
}

/// The conflict radar's report as lines a person reads.
pub fn render_conflicts(r: &ConflictReport) -> String {
    let files = |f: &[String]| f.iter().map(|f| clean(f)).collect::<Vec<_>>().join(", ");
    if let Some(note) = &r.note {
        return format!("no conflicts to report: {}\n", clean(note));
    }
    let mut text = String::new();
    match &r.with_base {
        Some(b) => text.push_str(&format!(
            "conflicts with {} ({}) in {}\n",
            clean(&b.base_branch),
            short_id(&b.base_commit),
            files(&b.files),
        )),
        None => text.push_str("merges cleanly into its base branch as it is now\n"),
    }
    for t in &r.with_tasks {
        text.push_str(&format!(
            "conflicts with task {} ({}) in {}\n",
            clean(&t.name),
            short_id(&t.task_id),
            files(&t.files),
        ));
    }
    if r.with_tasks.is_empty() {
        text.push_str("conflicts with no other live task\n");
    }
    if r.merge_order.len() > 1 {
        let order: Vec<String> = r.merge_order.iter().map(|id| short_id(id)).collect();
        text.push_str(&format!(
            "merge order that conflicts least: {}\n",
            order.join(", ")
        ));
    }
    text
}

pub fn conflicts(ctx: &Ctx, id: &str) -> CliResult<()> {
    let answer: Reply<ConflictReport> = ctx.client.get(
        &routes::at(routes::TASK_CONFLICTS, &[&task_id(ctx, id)?]),
        "a conflict report (`{taskId, withBase, withTasks, mergeOrder}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    out(render_conflicts(&answer.value).trim_end());
    Ok(())
}

/// `7d`, `12h`, `30m`, `45s` or plain seconds, as seconds.
pub fn parse_age(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not an age: use e.g. 7d, 12h, 30m or 45s"))?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(format!("{s:?} is not an age: use e.g. 7d, 12h, 30m or 45s")),
    };
    Ok(n.saturating_mul(unit))
}

pub fn gc(ctx: &Ctx, older_than_secs: u64) -> CliResult<()> {
    let answer: Reply<CollectedList> = ctx.client.post(
        routes::WORKTREES_GC,
        &Gc {
            older_than_seconds: older_than_secs as f64,
        },
        "what gc removed (`{collected, bytes}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let list = &answer.value;
    for c in &list.collected {
        out(&format!(
            "removed {}  task {}  {}  (branch {} and a snapshot kept)",
            human_bytes(c.bytes),
            short_id(&c.task_id),
            clean(&c.path),
            clean(&c.branch),
        ));
    }
    out(&format!(
        "freed {} from {} worktrees",
        human_bytes(list.bytes),
        list.collected.len()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("7d"), Ok(604_800));
        assert_eq!(parse_age("12h"), Ok(43_200));
        assert_eq!(parse_age("0"), Ok(0));
        assert!(parse_age("soon").is_err());
        assert!(parse_age("3y").is_err());
    }

    #[test]
    fn patches_are_coloured_only_when_asked_and_never_carry_escapes() {
        let p = "+++ b/x\n+new\n-old\n@@ -1 +1 @@\n ctx \x1b[2J";
        let plain = render_patch(p, false);
        assert!(!plain.contains('\x1b'), "{plain:?}");
        assert!(plain.contains(" ctx ?[2J"));
        let coloured = render_patch(p, true);
        assert!(coloured.contains("\x1b[32m+new\x1b[0m"));
        assert!(coloured.contains("\x1b[31m-old\x1b[0m"));
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
