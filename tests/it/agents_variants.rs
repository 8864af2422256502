//! Best of N with two real coding-agent CLIs through the scripted model (issue 34): one
//! request raced on Claude Code and Codex, each in its own worktree from the same base, each
//! writing its own greeting; both diffs are there to compare, the pick merges one into the
//! repository and discards the other with a snapshot. Skipped, saying so, when either CLI is
//! not installed.

use crate::agents_e2e::{
    API, DONE, Places, Run, claude_env, claude_home, codex_home, run_with_config,
};
use crate::model::{Reply, Script, Turn};
use crate::support::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The request both agents get.
const GREET: &str = "write a greeting into greeting.txt";
/// Two agents' turns one after the other (one slot), each with its CLI's start-up.
const RACE_WAIT: Duration = Duration::from_secs(240);

/// Each CLI writes its own greeting, with a path relative to where it works (its worktree):
/// Codex by `apply_patch`, Claude Code by its shell tool. Which CLI asks is told by the tool
/// it offers; then each says [`DONE`].
fn race_script(cwd: &Path) -> Script {
    let patch = "*** Begin Patch\n*** Add File: greeting.txt\n+hello from codex\n*** End Patch\n";
    let shell = json!({"command": "printf 'hello from claude\\n' > greeting.txt",
                       "description": "Write the greeting"});
    Script::new(cwd)
        .turn(Turn::on_tool_result(GREET, Reply::text(DONE)).offering("apply_patch"))
        .turn(Turn::on_tool_result(GREET, Reply::text(DONE)).offering("Bash"))
        .turn(
            Turn::on_prompt(GREET, Reply::tool("apply_patch", json!(patch)))
                .offering("apply_patch"),
        )
        .turn(Turn::on_prompt(GREET, Reply::tool("Bash", shell)).offering("Bash"))
        .fallback("Nothing scripted for that.")
}

/// A run with both CLIs set up against one model server; `None`, saying why, when either is
/// not installed.
fn race_run() -> Option<Run> {
    if !tools_bin().join("codex").exists() {
        eprintln!("SKIP: codex is not installed (run scripts/install-agent-clis)");
        return None;
    }
    let setup = |home: &Path, work: &Path, url: &str| {
        claude_home(home, work, url);
        codex_home(home, work, url);
    };
    run_with_config(Places::new(), "claude", race_script, setup, claude_env, "")
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Run {
    fn variants_of(&self, parent: &str) -> Vec<Value> {
        let r = self.s.get(&format!("{API}/tasks?parent={parent}"));
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["tasks"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until every variant of `parent` is final; returns them by label.
    fn wait_variants(&self, parent: &str) -> Vec<(String, Value)> {
        let mut last = Vec::new();
        let done = wait_until(RACE_WAIT, || {
            last = self.variants_of(parent);
            last.len() == 2
                && last.iter().all(|t| {
                    matches!(
                        t["metadata"]["status"].as_str(),
                        Some("completed" | "failed" | "cancelled")
                    )
                })
        });
        let context: Vec<String> = last.iter().map(|t| self.context(t)).collect();
        assert!(
            done,
            "the variants never finished: {last:?}\n{}",
            context.join("\n")
        );
        let mut by_label: Vec<(String, Value)> = last
            .into_iter()
            .map(|t| {
                (
                    t["metadata"]["variant"].as_str().unwrap_or("").to_string(),
                    t,
                )
            })
            .collect();
        by_label.sort_by(|a, b| a.0.cmp(&b.0));
        by_label
    }
}

#[test]
fn claude_2_1_332_and_codex_0_171_0_race_one_request_and_the_pick_keeps_codexs() {
    let Some(r) = race_run() else { return };
    let repo = r.work.path();
    let base = git_out(repo, &["rev-parse", "HEAD"]);
    let created = r.s.post(
        &format!("{API}/tasks"),
        json!({"name": "greet", "description": GREET, "workingDirectory": repo,
               "approval": "auto",
               "variants": [{"providerId": "claude"}, {"providerId": "codex"}]}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let parent = created.json()["task"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let started = r.s.post_empty(&format!("{API}/tasks/{parent}/start"));
    assert_eq!(started.status, 200, "{}", started.body);

    let variants = r.wait_variants(&parent);
    let labels: Vec<&str> = variants.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["claude", "codex"]);
    for (label, t) in &variants {
        assert_eq!(
            t["metadata"]["status"],
            "completed",
            "{label}: {}",
            r.context(t)
        );
        assert_eq!(
            t["metadata"]["worktree"]["baseCommit"],
            base.as_str(),
            "{label}: {t}"
        );
        // Each worked in its own worktree: the greeting is there, the repository has none.
        let dir = r.agent_dir(t);
        let written = std::fs::read_to_string(dir.join("greeting.txt")).unwrap_or_default();
        assert_eq!(
            written.trim(),
            format!("hello from {label}"),
            "{label}: {}",
            r.context(t)
        );
        // Both diffs are there to compare.
        let diff = r.s.get(&format!(
            "{API}/tasks/{}/diff",
            t["id"].as_str().unwrap_or("")
        ));
        assert_eq!(diff.status, 200, "{}", diff.body);
        let patch = diff.json()["diff"]["patch"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            patch.contains(&format!("+hello from {label}")),
            "{label}: {patch}"
        );
    }
    assert!(
        !repo.join("greeting.txt").exists(),
        "a variant wrote into the repository"
    );

    let picked = r.s.post(
        &format!("{API}/tasks/{parent}/pick"),
        json!({"variant": "codex"}),
    );
    assert_eq!(picked.status, 200, "{}", picked.body);
    let p = picked.json();
    assert_eq!(p["task"]["metadata"]["status"], "completed", "{p}");
    // The repository's branch has Codex's greeting (the user's checkout follows it).
    let shown = git_out(repo, &["show", "HEAD:greeting.txt"]);
    assert_eq!(shown, "hello from codex");
    // Claude Code's is discarded, and kept under its snapshot ref.
    let discarded = &p["discarded"][0];
    assert_eq!(discarded["variant"], "claude", "{p}");
    let kept = discarded["snapshotRef"].as_str().expect("snapshot ref");
    assert_eq!(
        git_out(repo, &["show", &format!("{kept}:greeting.txt")]),
        "hello from claude"
    );
}
