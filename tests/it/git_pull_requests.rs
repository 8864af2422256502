//! A pull request instead of a local merge (`POST /tasks/:id/pr`, `orchestra task pr`): the
//! task's branch is really pushed to a bare repository the test makes as `origin`; every
//! refusal (no remote, no `gh`/`glab`, not logged in) is said and pushes nothing.
//!
//! The daemon runs with a `PATH` the test makes: git and sh, and, where the test wants one, a
//! tiny script named `gh`. That script stands in for GitHub's CLI, a third-party program we do
//! not own (and that would need a GitHub account): it records its arguments and prints an
//! address, so the test sees exactly what orchestra asked of it.

use crate::support;

use orchestra_daemon::forge::{Forge, PullRequestSpec, create_args};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

/// A bare repository to push to, and the user's repository with it as `origin`.
pub fn repo_with_origin() -> (tempfile::TempDir, tempfile::TempDir) {
    let bare = tempfile::tempdir().expect("tempdir");
    git(bare.path(), &["init", "-q", "--bare"]);
    let repo = git_repo();
    git(
        repo.path(),
        &["remote", "add", "origin", bare.path().to_str().unwrap()],
    );
    (repo, bare)
}

pub fn server_with_path(bin: &Path) -> Server {
    Server::start_with_env(&[], &[("PATH", bin.to_str().unwrap())])
}

/// An exec task named `fix2` run in a worktree of `repo`, its change left uncommitted.
fn finished_task(s: &Server, repo: &Path) -> Value {
    crate::git_worktrees::run(s, "fix2", "echo fixed > a.txt", repo)
}

/// Asks for a pull request for task `t`: the refusal's status and sentence.
fn refused(s: &Server, t: &Value) -> (u16, String) {
    let res = s.post_empty(&format!("{TASKS}/{}/pr", id(t)));
    let said = res.json()["error"].as_str().unwrap_or_default().to_string();
    (res.status, said)
}

fn id(t: &Value) -> String {
    t["id"].as_str().unwrap().to_string()
}

fn worktree_path(t: &Value) -> PathBuf {
    PathBuf::from(t["metadata"]["worktree"]["path"].as_str().unwrap())
}

/// Every ref the bare repository holds.
fn refs(bare: &Path) -> String {
    git(bare, &["for-each-ref", "--format=%(refname)"])
}

#[test]
fn without_gh_or_glab_nothing_is_pushed_and_the_sentence_says_so() {
    let bin = bin_dir();
    let s = server_with_path(bin.path());
    let (r, bare) = repo_with_origin();
    let t = finished_task(&s, r.path());
    let (status, said) = refused(&s, &t);
    assert_eq!(status, 422, "{said}");
    assert!(
        said.contains("neither gh nor glab") && said.contains("nothing was pushed"),
        "{said}"
    );
    // Checked before anything: no push, and the agent's change is still uncommitted.
    assert_eq!(refs(bare.path()), "");
    assert_eq!(
        git(&worktree_path(&t), &["status", "--porcelain"]),
        " M a.txt"
    );
    // The CLI says the same, and fails.
    let (ok, _, err) = cli(&s, &["task", "pr", &id(&t)]);
    assert!(!ok && err.contains("neither gh nor glab"), "{err}");
    let t = s.get(&format!("{TASKS}/{}", id(&t))).json()["task"].clone();
    assert!(t["metadata"]["pullRequest"].is_null(), "{t}");
}

#[test]
fn no_remote_or_no_login_is_refused_before_the_push() {
    let bin = bin_dir();
    let argv = bin.path().join("argv");
    fake_gh(bin.path(), &argv, false);
    let s = server_with_path(bin.path());

    // No remote at all.
    let lone = git_repo();
    let t = finished_task(&s, lone.path());
    let (status, said) = refused(&s, &t);
    assert_eq!(status, 422, "{said}");
    assert!(said.contains("no remote"), "{said}");

    // A remote, but gh is not logged in.
    let (r, bare) = repo_with_origin();
    let t = finished_task(&s, r.path());
    let (status, said) = refused(&s, &t);
    assert_eq!(status, 422, "{said}");
    assert!(
        said.contains("gh is not logged in") && said.contains("gh auth login"),
        "{said}"
    );
    assert_eq!(refs(bare.path()), "");
    assert!(!argv.exists(), "gh was asked to open a pull request");

    // A running task is not published (409, as a merge).
    let res = crate::git_worktrees::create(&s, "slow", "read line", r.path(), json!({}));
    let slow = id(&res.json()["task"]);
    assert_eq!(s.post_empty(&format!("{TASKS}/{slow}/start")).status, 200);
    wait_task_status(&s, &slow, "running");
    let res = s.post_empty(&format!("{TASKS}/{slow}/pr"));
    assert_eq!(res.status, 409, "{}", res.body);
    assert_eq!(s.post_empty(&format!("{TASKS}/{slow}/cancel")).status, 200);
}

#[test]
fn the_branch_lands_in_origin_and_the_task_records_the_pull_request() {
    let bin = bin_dir();
    let argv = bin.path().join("argv");
    fake_gh(bin.path(), &argv, true);
    let s = server_with_path(bin.path());
    let (r, bare) = repo_with_origin();
    let user_before = (
        git(r.path(), &["status", "--porcelain"]),
        git(r.path(), &["rev-parse", "HEAD"]),
    );
    let t = finished_task(&s, r.path());
    let summary = t["metadata"]["result"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    let branch = t["metadata"]["worktree"]["branch"]
        .as_str()
        .unwrap()
        .to_string();

    let (ok, out, err) = cli(&s, &["task", "pr", &id(&t)]);
    assert!(ok, "{err}");
    assert!(out.contains(FAKE_PR_URL) && out.contains(&branch), "{out}");

    // The push really landed: the branch in origin is the task's, its leftovers committed
    // with the task's message.
    let wt = worktree_path(&t);
    let tip = git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        git(bare.path(), &["rev-parse", &format!("refs/heads/{branch}")]),
        tip
    );
    assert_eq!(git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(
        git(bare.path(), &["log", "-1", "--format=%s", &tip]),
        "fix2"
    );
    assert!(
        git(bare.path(), &["log", "-1", "--format=%b", &tip])
            .contains(&format!("Orchestra-Task: {}", id(&t)))
    );
    // The user's checkout is as it was.
    assert_eq!(
        (
            git(r.path(), &["status", "--porcelain"]),
            git(r.path(), &["rev-parse", "HEAD"]),
        ),
        user_before
    );

    // gh was asked exactly what the command line function makes (the remote is a local path:
    // no `--repo`, gh reads the work tree's remotes), the body saying what the task did.
    let recorded = std::fs::read(&argv).expect("gh recorded its arguments");
    let args: Vec<String> = String::from_utf8_lossy(&recorded)
        .split('\0')
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    let body = args
        .iter()
        .position(|a| a == "--body")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_default();
    let want = create_args(
        Forge::GitHub,
        &PullRequestSpec {
            title: "fix2",
            body: &body,
            branch: &branch,
            base: "main",
            repo: None,
        },
    );
    assert_eq!(args, want);
    assert!(body.contains(&summary), "{body}");
    assert!(
        body.contains("a.txt") && body.contains("1 file changed"),
        "{body}"
    );
    assert!(body.contains(&id(&t)), "{body}");

    // The task records it, and shows it.
    let task = s.get(&format!("{TASKS}/{}", id(&t))).json()["task"].clone();
    let pr = &task["metadata"]["pullRequest"];
    assert_eq!(pr["url"], FAKE_PR_URL);
    assert_eq!(pr["branch"], branch.as_str());
    assert_eq!(pr["remote"], "origin");
    assert!(pr["at"].as_i64().unwrap() > 0);
    // Its worktree stays: the task can still be continued, merged or discarded.
    assert!(task["metadata"]["worktree"]["outcome"].is_null());
    let (ok, shown, err) = cli(&s, &["task", "show", &id(&t)]);
    assert!(ok, "{err}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("pull request") && l.contains(FAKE_PR_URL)),
        "{shown}"
    );
}
