//! Issue 34's budget for the conflict radar: 8 live worktree tasks on a repository of
//! 10,000 files, each with some edits (four of them on the same line of one file, so there
//! are conflicts to find).
//!
//! - a full look: every task's files changed since the last look (a new file in each
//!   worktree), so the radar reads all 8 again and merges 28 pairs and 8 with the base:
//!   `GET /conflicts` on the release daemon, p50 and p99 over the rounds;
//! - a look when nothing changed (the tasks are running, so they are read again; the merges
//!   come from the cache);
//! - git's own floor beside it, in the same run: the sum of the 36 raw
//!   `git merge-tree --write-tree` calls for the same pairs (of commits made the same way);
//! - the daemon's CPU ticks over 10 s while nothing changes (budget: 0).
//!
//! `cargo bench --bench radar` (`ORCHESTRA_BIN` picks another binary). Knobs: `BENCH_FILES`
//! (10000), `BENCH_ROUNDS` (9), `BENCH_TASKS` (8), `RADAR_IDLE_SECS` (10). Without `--bench`
//! it is a small smoke run on the debug build whose figures mean nothing.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::daemon::Daemon;
use support::env_num;
use support::figures::{load, ms, percentile, ticks_over};

fn git(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let out = support::git_command(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .ok()?;
    if !out.status.success() && out.status.code() != Some(1) {
        println!(
            "  git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The worktree's work as a commit, made as the radar makes it (a private index).
fn work_commit(dir: &Path, scratch: &Path) -> Option<String> {
    let index = scratch.join("bench-index");
    let _ = std::fs::remove_file(&index);
    let env = [("GIT_INDEX_FILE", index.to_str()?)];
    git(dir, &["read-tree", "HEAD"], &env)?;
    git(dir, &["add", "-A", "--", "."], &env)?;
    let tree = git(dir, &["write-tree"], &env)?;
    git(
        dir,
        &["commit-tree", &tree, "-p", "HEAD", "-m", "bench"],
        &[],
    )
}

fn make_repo(root: &Path, files: u64) -> Option<()> {
    git(root, &["init", "-q", "-b", "main"], &[])?;
    for i in 0..files {
        let dir = root.join(format!("d{}", i % 100));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("file {i}\n").repeat(20),
        )
        .ok()?;
    }
    git(root, &["add", "."], &[])?;
    git(root, &["commit", "-qm", "many files"], &[])?;
    Some(())
}

/// Starts task `i`: its edits, then it stays running (an agent mid-task).
fn start_task(d: &Daemon, repo: &Path, files: u64, i: usize) -> Option<(String, PathBuf)> {
    // Tasks 0-3 change the same line of d0/f0.txt (conflicts); every task its own file.
    let same = if i < 4 {
        format!("sed -i '1s/.*/task {i} was here/' d0/f0.txt && ")
    } else {
        String::new()
    };
    let own = 1 + (i as u64 * 37) % (files - 1);
    let command = format!(
        "{same}sed -i '3s/.*/edited by {i}/' d{}/f{own}.txt && echo {i} > new-{i}.txt && exec sleep 100000",
        own % 100
    );
    let created = d.call(
        "POST",
        "/tasks",
        Some(json!({"name": format!("radar-{i}"), "description": command,
            "providerId": "exec", "workingDirectory": repo, "isolation": "worktree"})),
    );
    let id = created["task"]["id"].as_str()?.to_string();
    let started = d.call("POST", &format!("/tasks/{id}/start"), None);
    let path = started["task"]["metadata"]["worktree"]["path"].as_str()?;
    Some((id, PathBuf::from(path)))
}

fn main() {
    let bench = support::bench_mode("radar");
    let big = |n, small| if bench { n } else { small };
    let files = env_num("BENCH_FILES", big(10_000, 300)).max(2);
    let rounds = env_num("BENCH_ROUNDS", big(9, 2)).max(1) as usize;
    let tasks = env_num("BENCH_TASKS", 8).max(2) as usize;
    let idle = Duration::from_secs(env_num("RADAR_IDLE_SECS", big(10, 1)));
    let Ok(tmp) = tempfile::tempdir() else {
        println!("radar: no temp dir");
        return;
    };
    let root = tmp.path().to_path_buf();
    for d in ["home", "work", "state", "config"] {
        if std::fs::create_dir_all(root.join(d)).is_err() {
            println!("radar: cannot make {d}");
            return;
        }
    }
    let repo = root.join("work");
    if make_repo(&repo, files).is_none() {
        println!("radar: cannot make the repository");
        return;
    }
    let Some(mut d) = Daemon::start(&support::orchestra_bin(), &root) else {
        println!("radar: the daemon did not start");
        return;
    };
    println!(
        "{tasks} live worktree tasks, {files} files, {rounds} rounds; load average at start: {}",
        load()
    );
    let mut live = Vec::new();
    for i in 0..tasks {
        match start_task(&d, &repo, files, i) {
            Some(t) => live.push(t),
            None => {
                println!("radar: task {i} did not start");
                d.stop(Duration::from_secs(10));
                return;
            }
        }
    }
    // Each task's edits are on disk once its new file is.
    let deadline = Instant::now() + Duration::from_secs(60);
    while live
        .iter()
        .enumerate()
        .any(|(i, (_, p))| !p.join(format!("new-{i}.txt")).is_file())
    {
        if Instant::now() > deadline {
            println!("radar: the tasks' edits never appeared");
            d.stop(Duration::from_secs(10));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    let look = |d: &Daemon| -> (Duration, Value) {
        let t = Instant::now();
        let v = d.call("GET", "/conflicts", None);
        (t.elapsed(), v)
    };
    let (_, first) = look(&d);
    let flagged = first["reports"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter(|r| !r["withTasks"].as_array().is_none_or(Vec::is_empty))
                .count()
        })
        .unwrap_or(0);
    println!("  tasks flagged: {flagged} (expected 4)");

    let scratch = root.join("scratch");
    let _ = std::fs::create_dir_all(&scratch);
    let mut full = Vec::new();
    let mut again = Vec::new();
    let mut floor = Vec::new();
    for r in 0..rounds {
        // Every task's files change: each gets a new file.
        for (_, p) in &live {
            let _ = std::fs::write(p.join(format!("round-{r}.txt")), format!("{r}\n"));
        }
        let (t, _) = look(&d);
        full.push(ms(t));
        let (t, _) = look(&d);
        again.push(ms(t));
        // git's own merges of the same pairs and bases, of commits made the same way.
        let commits: Vec<String> = live
            .iter()
            .filter_map(|(_, p)| work_commit(p, &scratch))
            .collect();
        let base = git(&repo, &["rev-parse", "main"], &[]).unwrap_or_default();
        let merge = |a: &str, b: &str| {
            git(
                &repo,
                &[
                    "merge-tree",
                    "--write-tree",
                    "--name-only",
                    "--no-messages",
                    "-z",
                    a,
                    b,
                ],
                &[],
            );
        };
        let t = Instant::now();
        for (i, a) in commits.iter().enumerate() {
            merge(&base, a);
            for b in &commits[i + 1..] {
                merge(a, b);
            }
        }
        floor.push(ms(t.elapsed()));
    }
    // Nothing changes from here on: the radar must not run.
    std::thread::sleep(Duration::from_secs(1));
    let ticks = ticks_over(&[d.pid()], idle)[0];

    let line = |name: &str, mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        println!(
            "  {name:<44} p50 {:7.1} ms  p99 {:7.1} ms",
            percentile(&v, 0.5),
            percentile(&v, 0.99)
        );
    };
    let pairs = tasks * (tasks - 1) / 2 + tasks;
    line("radar, full look (all tasks changed)", full);
    line("radar, look with nothing changed", again);
    line(
        &format!("git merge-tree alone ({pairs} merges, summed)"),
        floor,
    );
    println!(
        "  daemon CPU ticks over {:.0} s with nothing changing: {ticks} (budget 0)",
        idle.as_secs_f64()
    );
    d.stop(Duration::from_secs(10));
}
