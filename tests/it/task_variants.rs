//! Best of N with real git repositories and real processes: one request raced on two
//! providers, each in its own worktree from one base commit; a pick merges one and discards
//! the other with a snapshot; refusals (a variant still running, an unknown variant, bad
//! variants, a directory that is no repository) and two picks at once.

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

/// Three command providers, each writing its own version of `shared.txt` and a file of its
/// own before it runs the task's description; `slow` waits until it is cancelled.
fn variant_config(dir: &Path) -> String {
    let config = r#"
[[provider]]
id = "left"
name = "Left"
command = "/bin/sh"
args = ["-c", "echo left > shared.txt && echo L > left.txt && {task}"]
deliver = "arg"
interactive = false

[[provider]]
id = "right"
name = "Right"
command = "/bin/sh"
args = ["-c", "echo right > shared.txt && echo R > right.txt && {task}"]
deliver = "arg"
interactive = false

[[provider]]
id = "slow"
name = "Slow"
command = "/bin/sh"
args = ["-c", "echo slow > shared.txt && exec sleep 600"]
deliver = "arg"
interactive = false
"#;
    let path = dir.join("variants.toml");
    std::fs::write(&path, config).unwrap();
    path.display().to_string()
}

/// A server with the variant providers (and `extra` flags) and a repository to race on.
struct Bench {
    _config: tempfile::TempDir,
    s: Server,
    repo: tempfile::TempDir,
}

fn bench(extra: &[&str]) -> Bench {
    let config = tempfile::tempdir().unwrap();
    let cfg = variant_config(config.path());
    let mut args = vec!["--config", cfg.as_str()];
    args.extend_from_slice(extra);
    let s = Server::start_with(&args);
    Bench {
        _config: config,
        s,
        repo: git_repo(),
    }
}

fn status_of(s: &Server, id: &str) -> Value {
    s.get(&format!("{TASKS}/{id}")).json()["task"]["metadata"]["status"].clone()
}

fn create(s: &Server, repo: &Path, variants: Value) -> Response {
    s.post(
        TASKS,
        json!({
            "name": "Greet",
            "description": "echo done",
            "workingDirectory": repo,
            "variants": variants,
            "checks": ["true"],
        }),
    )
}

fn children(s: &Server, parent: &str) -> Vec<Value> {
    let r = s.get(&format!("{TASKS}?parent={parent}"));
    assert_eq!(r.status, 200, "{}", r.body);
    let mut list = r.json()["tasks"].as_array().unwrap().clone();
    list.sort_by_key(|t| t["metadata"]["variant"].as_str().unwrap_or("").to_string());
    list
}

fn id(t: &Value) -> String {
    t["id"].as_str().unwrap().to_string()
}

fn step_status(task: &Value, step: &str) -> Value {
    task["metadata"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == step)
        .map(|s| s["status"].clone())
        .unwrap_or(Value::Null)
}

/// Creates a best of `variants`, checks its shape, starts it; returns (parent id, children).
fn start_variants(s: &Server, repo: &Path, variants: Value) -> (String, Vec<Value>) {
    let r = create(s, repo, variants);
    assert_eq!(r.status, 201, "{}", r.body);
    let parent = r.json()["task"].clone();
    let pid = id(&parent);
    let r = s.post_empty(&format!("{TASKS}/{pid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["task"]["metadata"]["status"], "running");
    (pid.clone(), children(s, &pid))
}

#[test]
fn best_of_two_runs_both_from_one_base_and_a_pick_merges_one_and_discards_the_other() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path();
    let base = git(repo, &["rev-parse", "HEAD"]);

    let r = create(
        &s,
        repo,
        json!([{"providerId": "left"}, {"providerId": "right", "approval": "auto"}]),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let parent = r.json()["task"].clone();
    let pid = id(&parent);
    // The parent runs no agent: its provider is its first variant's, and it has no worktree.
    assert_eq!(parent["metadata"]["providerId"], "left");
    assert_eq!(parent["metadata"]["isolation"], "none");
    assert_eq!(parent["metadata"]["variants"].as_array().unwrap().len(), 2);
    assert_eq!(step_status(&parent, "pick"), "pending");
    let kids = children(&s, &pid);
    assert_eq!(kids.len(), 2);
    for (kid, label) in kids.iter().zip(["left", "right"]) {
        assert_eq!(kid["name"], format!("Greet · {label}"));
        assert_eq!(kid["metadata"]["variant"], label);
        assert_eq!(kid["metadata"]["parentTaskId"], pid);
        assert_eq!(kid["metadata"]["isolation"], "worktree");
        assert_eq!(kid["metadata"]["baseCommit"], base);
        assert_eq!(kid["metadata"]["checks"], json!(["true"]));
        assert_eq!(kid["metadata"]["status"], "pending");
    }
    assert_eq!(kids[1]["metadata"]["approval"], "auto");

    // The branch moves after the request: both variants still start from the base it saw.
    std::fs::write(repo.join("c.txt"), "c\n").unwrap();
    git(repo, &["add", "c.txt"]);
    git(repo, &["commit", "-qm", "moved"]);

    let r = s.post_empty(&format!("{TASKS}/{pid}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    let done: Vec<Value> = kids
        .iter()
        .map(|k| wait_task_status(&s, &id(k), "completed"))
        .collect();
    for d in &done {
        assert_eq!(d["metadata"]["worktree"]["baseCommit"], base);
    }
    // Both diffs are there, each its own.
    for (d, own) in done.iter().zip(["left.txt", "right.txt"]) {
        let r = s.get(&format!("{TASKS}/{}/diff", id(d)));
        assert_eq!(r.status, 200, "{}", r.body);
        let files: Vec<String> = r.json()["diff"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        assert!(files.contains(&own.to_string()), "{files:?}");
        assert!(files.contains(&"shared.txt".to_string()), "{files:?}");
    }
    // Every variant finished: the parent waits for a pick.
    let mut waiting = Value::Null;
    assert!(
        wait_until(Duration::from_secs(20), || {
            waiting = s.get(&format!("{TASKS}/{pid}")).json()["task"].clone();
            step_status(&waiting, "pick") == "running"
        }),
        "the parent never asked for a pick: {waiting}"
    );
    assert_eq!(waiting["metadata"]["status"], "running");
    assert_eq!(step_status(&waiting, "variant:left"), "completed");

    // An unknown variant is refused with the labels.
    let r = s.post(&format!("{TASKS}/{pid}/pick"), json!({"variant": "middle"}));
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(r.body.contains("left, right"), "{}", r.body);

    let r = s.post(&format!("{TASKS}/{pid}/pick"), json!({"variant": "right"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let picked = r.json();
    assert_eq!(picked["variant"], "right");
    assert_eq!(picked["variantTaskId"], id(&done[1]));
    assert_eq!(picked["task"]["metadata"]["status"], "completed");
    let summary = picked["task"]["metadata"]["result"]["summary"]
        .as_str()
        .unwrap();
    assert!(summary.starts_with("picked variant right"), "{summary}");
    // The repository's branch has the pick (and kept what moved meanwhile).
    assert_eq!(git(repo, &["show", "main:shared.txt"]), "right");
    assert_eq!(git(repo, &["show", "main:right.txt"]), "R");
    assert_eq!(git(repo, &["show", "main:c.txt"]), "c");
    assert!(!repo.join("left.txt").exists());
    // The other is discarded, its work kept under its snapshot ref.
    let discarded = picked["discarded"].as_array().unwrap();
    assert_eq!(discarded.len(), 1);
    assert_eq!(discarded[0]["variant"], "left");
    let snap_ref = discarded[0]["snapshotRef"].as_str().unwrap();
    assert_eq!(
        snap_ref,
        format!("refs/orchestra/snapshots/{}", id(&done[0]))
    );
    assert_eq!(
        git(repo, &["show", &format!("{snap_ref}:shared.txt")]),
        "left"
    );
    let left = s.get(&format!("{TASKS}/{}", id(&done[0]))).json()["task"].clone();
    assert_eq!(left["metadata"]["worktree"]["outcome"], "discarded");
    let right = s.get(&format!("{TASKS}/{}", id(&done[1]))).json()["task"].clone();
    assert_eq!(right["metadata"]["worktree"]["outcome"], "merged");

    // Settled: a second pick says so.
    let r = s.post(&format!("{TASKS}/{pid}/pick"), json!({"variant": "left"}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("already settled"), "{}", r.body);
}

#[test]
fn a_pick_waits_until_every_variant_has_finished() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path();
    let (pid, kids) = start_variants(
        &s,
        repo,
        json!([{"providerId": "left"}, {"providerId": "slow"}]),
    );
    wait_task_status(&s, &id(&kids[0]), "completed");
    wait_task_status(&s, &id(&kids[1]), "running");

    let r = s.post(
        &format!("{TASKS}/{pid}/pick"),
        json!({"variant": id(&kids[0])}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.body
            .contains("variant slow is still running; wait for it or cancel it"),
        "{}",
        r.body
    );
    // Nothing was merged or discarded.
    assert!(!repo.join("shared.txt").exists());
    assert_eq!(
        s.get(&format!("{TASKS}/{}", id(&kids[0]))).json()["task"]["metadata"]["worktree"]["outcome"],
        Value::Null
    );

    // Cancelled, the slow one may be left behind (or even picked).
    let r = s.post_empty(&format!("{TASKS}/{}/cancel", id(&kids[1])));
    assert_eq!(r.status, 200, "{}", r.body);
    wait_task_status(&s, &id(&kids[1]), "cancelled");
    let r = s.post(&format!("{TASKS}/{pid}/pick"), json!({"variant": "left"}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(git(repo, &["show", "main:shared.txt"]), "left");
    assert_eq!(r.json()["discarded"][0]["variant"], "slow");
}

#[test]
fn two_picks_at_once_one_wins() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path();
    let (pid, kids) = start_variants(
        &s,
        repo,
        json!([{"providerId": "left"}, {"providerId": "right"}]),
    );
    for k in &kids {
        wait_task_status(&s, &id(k), "completed");
    }
    let path = format!("{TASKS}/{pid}/pick");
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| s.post(&path, json!({"variant": "left"})));
        let b = scope.spawn(|| s.post(&path, json!({"variant": "right"})));
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409], "{} / {}", a.body, b.body);
    let winner = if a.status == 200 { &a } else { &b };
    let label = winner.json()["variant"].as_str().unwrap().to_string();
    assert_eq!(git(repo, &["show", "main:shared.txt"]), label);
    let loser = if a.status == 200 { &b } else { &a };
    assert!(loser.body.contains("already settled"), "{}", loser.body);
}

#[test]
fn cancelling_the_parent_cancels_its_variants() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path();
    let (pid, kids) = start_variants(
        &s,
        repo,
        json!([{"providerId": "slow"}, {"providerId": "slow"}]),
    );
    assert_eq!(kids[0]["metadata"]["variant"], "slow");
    assert_eq!(kids[1]["metadata"]["variant"], "slow-2");
    for k in &kids {
        wait_task_status(&s, &id(k), "running");
    }
    let r = s.post_empty(&format!("{TASKS}/{pid}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    for k in &kids {
        wait_task_status(&s, &id(k), "cancelled");
    }
    wait_task_status(&s, &pid, "cancelled");
}

#[test]
fn bad_variants_are_refused_with_a_sentence_and_make_nothing() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path();
    let cases = [
        (
            json!([{"providerId": "left"}, {"providerId": "nosuch"}]),
            "variants[1]: unknown providerId \\\"nosuch\\\"",
        ),
        (json!([{"providerId": "left"}]), "2 to 8"),
        (
            json!([{"providerId": "left"}, {"providerId": "right", "approval": "yolo"}]),
            "variants[1]",
        ),
    ];
    for (variants, said) in cases {
        let r = create(&s, repo, variants);
        assert_eq!(r.status, 400, "{}", r.body);
        assert!(r.body.contains(said), "{said:?} not in {}", r.body);
    }
    let plain = tempfile::tempdir().unwrap();
    let r = create(
        &s,
        plain.path(),
        json!([{"providerId": "left"}, {"providerId": "right"}]),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("git repository"), "{}", r.body);
    // Nothing was made by any of them.
    let r = s.get(TASKS);
    assert_eq!(r.json()["tasks"].as_array().unwrap().len(), 0, "{}", r.body);
    // A task that is no parent has nothing to pick.
    let t = create_task(
        &s,
        "plain",
        json!({"providerId": "left", "description": "true"}),
    );
    let r = s.post(
        &format!("{TASKS}/{}/pick", id(&t)),
        json!({"variant": "left"}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("not a best-of-N parent"), "{}", r.body);
}

#[test]
fn the_cli_adds_shows_and_picks_variants() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&[]);
    let repo = r.path().to_str().unwrap();
    let (ok, stdout, stderr) = cli(
        &s,
        &[
            "task",
            "add",
            "Greet",
            "--description",
            "echo done",
            "--dir",
            repo,
            "--variant",
            "left",
            "--variant",
            "right:auto",
            "--start",
            "--json",
        ],
    );
    assert!(ok, "{stderr}");
    let parent: Value = serde_json::from_str(&stdout).unwrap();
    let pid = id(&parent["task"]);
    let kids = children(&s, &pid);
    assert_eq!(kids.len(), 2);
    assert_eq!(kids[1]["metadata"]["approval"], "auto");
    for k in &kids {
        wait_task_status(&s, &id(k), "completed");
    }
    let (ok, shown, stderr) = cli(&s, &["task", "show", &pid]);
    assert!(ok, "{stderr}");
    assert!(shown.contains("variants"), "{shown}");
    for label in ["left ", "right "] {
        let line = shown
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no line for {label} in {shown}"));
        assert!(
            line.contains("completed") && line.contains("2 files +2 -0"),
            "{line}"
        );
    }
    let (ok, picked, stderr) = cli(&s, &["task", "pick", &pid, "left"]);
    assert!(ok, "{stderr}");
    assert!(picked.contains("picked left"), "{picked}");
    assert!(picked.contains("discarded right"), "{picked}");
    assert_eq!(git(r.path(), &["show", "main:shared.txt"]), "left");
    // A bad variant is a usage error before anything is sent.
    let (ok, _, stderr) = cli(&s, &["task", "add", "X", "--variant", "left:yolo"]);
    assert!(!ok);
    assert!(stderr.contains("yolo"), "{stderr}");
}

#[test]
fn variants_run_within_the_concurrency_limit_with_autopilot_off() {
    let Bench {
        _config,
        s,
        repo: r,
    } = bench(&["--max-concurrent", "1"]);
    let repo = r.path();
    let (pid, kids) = start_variants(
        &s,
        repo,
        json!([{"providerId": "slow"}, {"providerId": "left"}]),
    );
    let by = |label: &str| {
        id(kids
            .iter()
            .find(|k| k["metadata"]["variant"] == label)
            .unwrap())
    };
    let (slow, left) = (by("slow"), by("left"));
    // One slot: the first variant runs, the second waits for it.
    wait_task_status(&s, &slow, "running");
    assert_eq!(status_of(&s, &left), "pending");
    let r = s.post_empty(&format!("{TASKS}/{slow}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    // Its slot freed, the second starts by itself (autopilot is off).
    wait_task_status(&s, &left, "completed");
    let parent = wait_until(Duration::from_secs(20), || {
        let p = s.get(&format!("{TASKS}/{pid}")).json()["task"].clone();
        step_status(&p, "pick") == "running"
    });
    assert!(parent, "the parent never asked for a pick");
    // A task outside the variants is not started by anyone.
    let t = create_task(
        &s,
        "plain",
        json!({"providerId": "left", "description": "true"}),
    );
    assert_eq!(status_of(&s, &id(&t)), "pending");
}
