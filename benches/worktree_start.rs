//! Issue 12's budget: creating a worktree task's worktree in a repository of 10,000 files,
//! beside a plain `git worktree add` of the same repository in the same run.
//! - `git worktree add`: the floor, git's own checkout.
//! - orchestra: `git::worktree::plan` + `create` (what starting a worktree task adds before
//!   the agent is spawned: checks, the per-repository lock, branch, worktree, agent directory).
//! - orchestra's diff of a fresh worktree (what `GET /tasks/:id/diff` costs with no change).
//!
//! `cargo bench --bench worktree_start`; `BENCH_FILES` (default 10000) sizes the repository,
//! `BENCH_ROUNDS` (default 5) the rounds (median shown).

mod support;

use orchestra_daemon::git;
use std::path::Path;
use std::time::{Duration, Instant};
use support::env_num;

fn sh(dir: &Path, args: &[&str]) {
    let out = support::git_command(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let files = env_num("BENCH_FILES", 10_000);
    let rounds = env_num("BENCH_ROUNDS", 5).max(1);
    let repo = tempfile::tempdir().expect("tempdir");
    let root = repo.path();
    sh(root, &["init", "-q", "-b", "main"]);
    for i in 0..files {
        let dir = root.join(format!("d{}", i % 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("file {i}\n").repeat(20),
        )
        .expect("write");
    }
    sh(root, &["add", "."]);
    sh(root, &["commit", "-qm", "many files"]);
    let state = tempfile::tempdir().expect("tempdir");

    let mut plain = Vec::new();
    let mut ours = Vec::new();
    let mut diffs = Vec::new();
    for r in 0..rounds {
        let path = state.path().join(format!("p{r}"));
        let t = Instant::now();
        sh(
            root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("p{r}"),
                path.to_str().expect("utf-8"),
            ],
        );
        plain.push(t.elapsed());
    }
    for r in 0..rounds {
        let t = Instant::now();
        let base = git::worktree::plan(root, None).expect("plan");
        let wt = git::worktree::create(
            &base,
            &state.path().join("worktrees"),
            &format!("{r:08}-bench"),
            "bench",
        )
        .expect("create");
        ours.push(t.elapsed());
        let t = Instant::now();
        let d = git::diff::of(&wt).expect("diff");
        diffs.push(t.elapsed());
        assert!(d.files.is_empty());
    }
    println!("worktree creation, {files} files, median of {rounds}:");
    println!(
        "  git worktree add            {:>8.1} ms",
        median(plain).as_secs_f64() * 1e3
    );
    println!(
        "  orchestra plan + create     {:>8.1} ms (budget: the agent starts within 1 s)",
        median(ours).as_secs_f64() * 1e3
    );
    println!(
        "  orchestra diff (no change)  {:>8.1} ms",
        median(diffs).as_secs_f64() * 1e3
    );
}
