//! Task isolation with real git repositories: a worktree per task, its diff, merge,
//! discard, snapshots, refusals that leave the repository exactly as it was, and many tasks
//! on one repository at once.

use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

/// What the user sees of their repository: status and HEAD.
pub(crate) fn state_of(repo: &Path) -> (String, String) {
    (
        git(repo, &["status", "--porcelain", "--untracked-files=all"]),
        git(repo, &["rev-parse", "HEAD"]),
    )
}

pub fn create(s: &Server, name: &str, command: &str, repo: &Path, extra: Value) -> Response {
    s.post(TASKS, exec_body(name, command, repo, extra))
}

/// The body of an `exec` task named `name` running `command` in its own worktree of `repo`,
/// with `extra` fields.
pub fn exec_body(name: &str, command: &str, repo: &Path, extra: Value) -> Value {
    let mut body = json!({
        "name": name,
        "description": command,
        "providerId": "exec",
        "workingDirectory": repo,
        "isolation": "worktree",
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

/// Creates and starts a worktree task running `command`, and waits for it to complete.
pub fn run(s: &Server, name: &str, command: &str, repo: &Path) -> Value {
    let r = create(s, name, command, repo, json!({}));
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    wait_task_status(s, &id, "completed")
}

pub(crate) fn id(t: &Value) -> String {
    t["id"].as_str().unwrap().to_string()
}

pub(crate) fn worktree(t: &Value) -> (String, String) {
    let w = &t["metadata"]["worktree"];
    (
        w["path"].as_str().expect("a worktree path").to_string(),
        w["branch"].as_str().expect("a branch").to_string(),
    )
}

/// (path, status, added, removed) of each file of a task's diff.
fn diff_files(s: &Server, id: &str) -> Vec<(String, String, i64, i64)> {
    let r = s.get(&format!("{TASKS}/{id}/diff"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["diff"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
                f["added"].as_i64().unwrap_or(-1),
                f["removed"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn file(p: &str, status: &str, added: i64, removed: i64) -> (String, String, i64, i64) {
    (p.to_string(), status.to_string(), added, removed)
}

#[test]
fn three_tasks_merge_one_discard_one_keep_one() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let one = run(&s, "One", "echo one > one.txt && echo more >> a.txt", repo);
    let two = run(
        &s,
        "Two",
        "echo two > two.txt && mkdir -p d && echo u > d/u.txt && git add two.txt",
        repo,
    );
    let three = run(&s, "Three", "echo three > three.txt", repo);

    // Each ran in its own worktree on its own branch; the repository saw none of it.
    let (p1, b1) = worktree(&one);
    let (p2, b2) = worktree(&two);
    let (p3, b3) = worktree(&three);
    assert!(p1 != p2 && p2 != p3 && p1 != p3);
    assert!(b1.starts_with("orchestra/one-"), "{b1}");
    assert!(
        p1.starts_with(s.state_dir.join("worktrees").to_str().unwrap()),
        "{p1}"
    );
    assert!(Path::new(&p1).join("one.txt").is_file());
    assert!(!Path::new(&p1).join("two.txt").exists());
    assert_eq!(state_of(repo).0, "");
    assert_eq!(one["metadata"]["isolation"], "worktree");
    assert_eq!(one["metadata"]["worktree"]["baseBranch"], "main");
    assert_eq!(
        one["metadata"]["result"]["filesCreated"],
        json!(["one.txt"])
    );
    assert_eq!(one["metadata"]["result"]["filesModified"], json!(["a.txt"]));

    assert_eq!(
        diff_files(&s, &id(&one)),
        vec![
            file("a.txt", "modified", 1, 0),
            file("one.txt", "added", 1, 0)
        ]
    );
    assert_eq!(
        diff_files(&s, &id(&two)),
        vec![
            file("d/u.txt", "added", 1, 0),
            file("two.txt", "added", 1, 0)
        ]
    );
    let d3 = s.get(&format!("{TASKS}/{}/diff", id(&three))).json()["diff"].clone();
    assert!(d3["patch"].as_str().unwrap().contains("+three"), "{d3}");
    assert_eq!(d3["baseMoved"], false);

    // Merge one: a fast-forward; its leftovers were committed with the result summary.
    let head_before = git(repo, &["rev-parse", "HEAD"]);
    let m = s.post_empty(&format!("{TASKS}/{}/merge", id(&one)));
    assert_eq!(m.status, 200, "{}", m.body);
    let m = m.json();
    assert_eq!(m["merge"]["fastForward"], true);
    assert_eq!(m["task"]["metadata"]["worktree"]["outcome"], "merged");
    assert_eq!(git(repo, &["rev-parse", "HEAD~1"]), head_before);
    assert_eq!(
        std::fs::read_to_string(repo.join("one.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "a\nmore\n"
    );
    assert_eq!(
        state_of(repo).0,
        "",
        "the user's repository is clean after a merge"
    );
    assert!(!Path::new(&p1).exists());
    // Merging twice is refused.
    assert_eq!(
        s.post_empty(&format!("{TASKS}/{}/merge", id(&one))).status,
        409
    );

    // Discard two: worktree and branch go, its staged, untracked files stay in the snapshot.
    let d = s.post_empty(&format!("{TASKS}/{}/discard", id(&two)));
    assert_eq!(d.status, 200, "{}", d.body);
    let snap = d.json()["snapshotRef"].as_str().unwrap().to_string();
    assert_eq!(snap, format!("refs/orchestra/snapshots/{}", id(&two)));
    assert_eq!(git(repo, &["show", &format!("{snap}:two.txt")]), "two");
    assert_eq!(git(repo, &["show", &format!("{snap}:d/u.txt")]), "u");
    assert!(!Path::new(&p2).exists());
    assert_eq!(s.get(&format!("{TASKS}/{}/diff", id(&two))).status, 409);

    // Keep three: untouched.
    assert!(Path::new(&p3).join("three.txt").is_file());
    assert_eq!(
        git(
            repo,
            &[
                "branch",
                "--list",
                "orchestra/*",
                "--format=%(refname:short)"
            ]
        ),
        b3
    );
    assert!(!b2.is_empty());
    assert_eq!(
        git(repo, &["log", "--format=%s", "main"]).lines().count(),
        2
    );
    assert_eq!(state_of(repo).0, "");
}

#[test]
fn a_merge_says_what_it_merges() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    // An exec task's summary is how its command ended ("exited with code 0").
    let t = run(&s, "fix2", "echo fixed > a.txt", repo);
    let summary = t["metadata"]["result"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!summary.is_empty() && summary != "fix2", "{summary}");
    // The base moves meanwhile, so the merge makes a merge commit of its own.
    std::fs::write(repo.join("b.txt"), "user\n").unwrap();
    git(repo, &["commit", "-qam", "user"]);
    let r = s.post_empty(&format!("{TASKS}/{}/merge", id(&t)));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["merge"]["fastForward"], false);
    // The merge commit, and the commit of what the agent left uncommitted (its second parent).
    for rev in ["main", "main^2"] {
        assert_eq!(
            git(repo, &["log", "-1", "--format=%s", rev]),
            "fix2",
            "{rev}"
        );
        let body = git(repo, &["log", "-1", "--format=%b", rev]);
        assert!(body.contains(&summary), "{rev}: {body}");
        assert!(
            body.contains(&format!("Orchestra-Task: {}", id(&t))),
            "{rev}: {body}"
        );
        let trailers = git(
            repo,
            &[
                "log",
                "-1",
                "--format=%(trailers:key=Orchestra-Provider,valueonly)",
                rev,
            ],
        );
        assert_eq!(trailers.trim(), "exec", "{rev}");
    }
}

#[test]
fn the_users_changes_and_conflicts_are_refused_without_a_change() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let t = run(&s, "Edit a", "echo agent > a.txt && echo n > new.txt", repo);
    let merge = format!("{TASKS}/{}/merge", id(&t));

    // The user's own uncommitted edit of a file the merge touches.
    std::fs::write(repo.join("a.txt"), "user's edit\n").unwrap();
    std::fs::write(repo.join("mine.txt"), "untracked of mine\n").unwrap();
    let before = state_of(repo);
    let m = s.post_empty(&merge);
    assert_eq!(m.status, 409, "{}", m.body);
    let msg = m.json()["error"].as_str().unwrap().to_string();
    assert!(
        msg.contains("a.txt") && msg.contains("uncommitted"),
        "{msg}"
    );
    assert!(!msg.contains("mine.txt"), "{msg}");
    assert_eq!(state_of(repo), before);
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "user's edit\n"
    );

    // Committed, the user's edit conflicts with the agent's.
    git(repo, &["commit", "-qam", "user edits a"]);
    let before = state_of(repo);
    let m = s.post_empty(&merge);
    assert_eq!(m.status, 409, "{}", m.body);
    let msg = m.json()["error"].as_str().unwrap().to_string();
    assert!(msg.contains("conflicts in a.txt"), "{msg}");
    assert_eq!(state_of(repo), before);
    let diff = s.get(&format!("{TASKS}/{}/diff", id(&t))).json()["diff"].clone();
    assert_eq!(diff["baseMoved"], true, "{diff}");

    // A task that does not conflict merges with a merge commit; the user's untracked file
    // and their moved branch stay.
    let u = run(&s, "New file", "echo x > x.txt", repo);
    git(
        repo,
        &["commit", "-q", "--allow-empty", "-m", "user moves main"],
    );
    let m = s.post_empty(&format!("{TASKS}/{}/merge", id(&u)));
    assert_eq!(m.status, 200, "{}", m.body);
    assert_eq!(m.json()["merge"]["fastForward"], false);
    assert_eq!(
        git(repo, &["rev-list", "--parents", "-1", "HEAD"])
            .split(' ')
            .count(),
        3,
        "a merge commit"
    );
    assert_eq!(state_of(repo).0, "?? mine.txt");
    assert!(repo.join("x.txt").is_file());
}

#[test]
fn bad_starting_points_get_clear_answers() {
    let s = Server::start();
    let plain = tempfile::tempdir().unwrap();
    let r = create(&s, "x", "true", plain.path(), json!({}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("not inside a git repository"), "{}", r.body);

    git(plain.path(), &["init", "-q"]);
    let r = create(&s, "x", "true", plain.path(), json!({}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("no commit"), "{}", r.body);

    let rp = git_repo();
    let repo = rp.path();
    git(repo, &["checkout", "-q", "--detach"]);
    let r = create(&s, "x", "true", repo, json!({}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("detached"), "{}", r.body);
    let r = create(&s, "x", "true", repo, json!({"baseRef": "nope"}));
    assert_eq!(r.status, 400, "{}", r.body);
    let r = create(&s, "x", "true", repo, json!({"isolation": "sideways"}));
    assert_eq!(r.status, 400, "{}", r.body);
    let r = create(
        &s,
        "x",
        "true",
        repo,
        json!({"isolation": "none", "baseRef": "main"}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    git(repo, &["checkout", "-q", "main"]);

    // Shell and exec tasks are not isolated unless asked.
    let r = s.post(
        TASKS,
        json!({"name": "plain", "description": "true", "providerId": "exec", "workingDirectory": repo}),
    );
    assert_eq!(r.json()["task"]["metadata"]["isolation"], "none");

    // The task's branch exists already: its start fails and says why; nothing changes.
    let r = create(&s, "Clash", "true", repo, json!({"baseRef": "main"}));
    let t = r.json()["task"].clone();
    let branch = format!("orchestra/clash-{}", &id(&t)[..8]);
    git(repo, &["branch", &branch]);
    let before = (state_of(repo), git(repo, &["worktree", "list"]));
    let r = s.post_empty(&format!("{TASKS}/{}/start", id(&t)));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.body.contains(&branch) && r.body.contains("already exists"),
        "{}",
        r.body
    );
    assert_eq!((state_of(repo), git(repo, &["worktree", "list"])), before);
    let t = wait_task_status(&s, &id(&t), "failed");
    assert!(
        t["metadata"]["error"]
            .as_str()
            .unwrap()
            .contains("already exists"),
        "{t}"
    );
}

#[test]
fn deleting_and_collecting_keep_every_line() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let t = run(&s, "Keep me", "echo kept > kept.txt", repo);
    let (path, branch) = worktree(&t);
    let r = s.delete(&format!("{TASKS}/{}", id(&t)));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!Path::new(&path).exists());
    assert_eq!(
        git(
            repo,
            &["branch", "--list", &branch, "--format=%(refname:short)"]
        ),
        branch
    );
    let snap = format!("refs/orchestra/snapshots/{}", id(&t));
    assert_eq!(git(repo, &["show", &format!("{snap}:kept.txt")]), "kept");

    let u = run(&s, "Old", "echo old > old.txt", repo);
    let (path, branch) = worktree(&u);
    let listed = s.get("/api/coding-agents/worktrees").json();
    assert!(listed["bytes"].as_u64().unwrap() > 0, "{listed}");
    // Not old enough yet.
    let g = s.post(
        "/api/coding-agents/worktrees/gc",
        json!({"olderThanSeconds": 3600}),
    );
    assert_eq!(g.json()["collected"], json!([]));
    let g = s.post(
        "/api/coding-agents/worktrees/gc",
        json!({"olderThanSeconds": 0}),
    );
    assert_eq!(g.status, 200, "{}", g.body);
    let g = g.json();
    assert_eq!(g["collected"][0]["taskId"], json!(id(&u)));
    assert!(g["bytes"].as_u64().unwrap() > 0, "{g}");
    assert!(!Path::new(&path).exists());
    assert_eq!(
        git(
            repo,
            &["branch", "--list", &branch, "--format=%(refname:short)"]
        ),
        branch
    );
    let snap = format!("refs/orchestra/snapshots/{}", id(&u));
    assert_eq!(git(repo, &["show", &format!("{snap}:old.txt")]), "old");
    assert_eq!(state_of(repo).0, "");
}

#[test]
fn eight_tasks_on_one_repository_start_at_once() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path().to_path_buf();
    let ids: Vec<String> = (0..8)
        .map(|i| {
            let cmd = format!("echo {i} > f{i}.txt");
            let r = create(&s, &format!("Par {i}"), &cmd, &repo, json!({}));
            assert_eq!(r.status, 201, "{}", r.body);
            id(&r.json()["task"])
        })
        .collect();
    let statuses: Vec<(u16, String)> = std::thread::scope(|sc| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| {
                let s = &s;
                sc.spawn(move || {
                    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
                    (r.status, r.body)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (status, body) in &statuses {
        assert_eq!(*status, 200, "{body}");
    }
    for (i, id) in ids.iter().enumerate() {
        let t = wait_task_status(&s, id, "completed");
        assert_eq!(
            diff_files(&s, id),
            vec![file(&format!("f{i}.txt"), "added", 1, 0)],
            "{t}"
        );
    }
    assert_eq!(
        git(&repo, &["worktree", "list"]).lines().count(),
        9,
        "the repository and eight task worktrees"
    );
}

#[test]
fn the_cli_diffs_merges_discards_and_collects() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let dir = repo.to_str().unwrap();
    let add = |name: &str, cmd: &str| {
        let (ok, out, err) = cli(
            &s,
            &[
                "--json",
                "task",
                "add",
                name,
                "--description",
                cmd,
                "--provider",
                "exec",
                "--dir",
                dir,
                "--isolation",
                "worktree",
                "--start",
            ],
        );
        assert!(ok, "{err}");
        let t: Value = serde_json::from_str(&out).unwrap();
        let id = id(&t["task"]);
        wait_task_status(&s, &id, "completed");
        id
    };
    let a = add("CLI one", "printf 'x\\ny\\n' > x.txt");
    let (ok, out, err) = cli(&s, &["task", "diff", &a]);
    assert!(ok, "{err}");
    assert!(
        out.contains("added") && out.contains("+2") && out.contains("x.txt"),
        "{out}"
    );
    assert!(out.contains("+y"), "{out}");
    assert!(!out.contains('\x1b'), "piped output is plain: {out:?}");
    let (ok, out, err) = cli(&s, &["task", "merge", &a]);
    assert!(ok, "{err}");
    assert!(out.contains("merged into main (fast-forward"), "{out}");
    assert!(repo.join("x.txt").is_file());

    let b = add("CLI two", "echo z > z.txt");
    let (ok, out, err) = cli(&s, &["task", "discard", &b]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("refs/orchestra/snapshots/{b}")),
        "{out}"
    );
    let (ok, _, err) = cli(&s, &["task", "merge", &b]);
    assert!(!ok);
    assert!(err.contains("already discarded"), "{err}");

    let c = add("CLI three", "echo w > w.txt");
    let (ok, out, err) = cli(&s, &["gc", "--older-than", "0"]);
    assert!(ok, "{err}");
    assert!(out.contains(&c[..8]) && out.contains("freed"), "{out}");
    let (ok, _, err) = cli(&s, &["gc", "--older-than", "soon"]);
    assert!(!ok && err.contains("not an age"), "{err}");
}

/// A user config with a coding agent that runs its instruction with `sh -c`, and `extra`.
fn coder_config(dir: &Path, extra: &str) -> String {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "{extra}\n[[provider]]\nid = \"coder\"\nname = \"Coder\"\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"{{task}}\"]\ndeliver = \"arg\"\ninteractive = false\ncoding_agent = true\n"
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

fn isolation_of(s: &Server, dir: &Path) -> Value {
    let r = s.post(
        TASKS,
        json!({"name": "n", "description": "echo hi > hi.txt", "providerId": "coder", "workingDirectory": dir}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()["task"].clone()
}

#[test]
fn coding_agents_are_isolated_by_default_where_git_allows() {
    let cfg_dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(&["--config", &coder_config(cfg_dir.path(), "")]);
    let r = git_repo();
    std::fs::create_dir(r.path().join("sub")).unwrap();
    let t = isolation_of(&s, &r.path().join("sub"));
    assert_eq!(t["metadata"]["isolation"], "worktree");
    // It runs in the same subdirectory of its worktree.
    let started = s.post_empty(&format!("{TASKS}/{}/start", id(&t)));
    assert_eq!(started.status, 200, "{}", started.body);
    let t = wait_task_status(&s, &id(&t), "completed");
    let (path, _) = worktree(&t);
    assert!(Path::new(&path).join("sub/hi.txt").is_file(), "{t}");
    assert_eq!(
        t["metadata"]["result"]["filesCreated"],
        json!(["sub/hi.txt"])
    );
    assert!(!r.path().join("sub/hi.txt").exists());

    let plain = tempfile::tempdir().unwrap();
    assert_eq!(
        isolation_of(&s, plain.path())["metadata"]["isolation"],
        "none"
    );
    let detached = git_repo();
    git(detached.path(), &["checkout", "-q", "--detach"]);
    assert_eq!(
        isolation_of(&s, detached.path())["metadata"]["isolation"],
        "none"
    );

    // The user's config can turn the default off.
    let off_dir = tempfile::tempdir().unwrap();
    let off = Server::start_with(&[
        "--config",
        &coder_config(off_dir.path(), "isolation = \"none\""),
    ]);
    assert_eq!(
        isolation_of(&off, r.path())["metadata"]["isolation"],
        "none"
    );
}

#[test]
fn a_repository_sets_up_its_worktrees_first() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    std::fs::write(repo.join(".gitignore"), ".env\ndeps/\n").unwrap();
    std::fs::write(
        repo.join(".orchestra.toml"),
        "[worktree]\ncopy = [\".env\"]\nsetup = \"echo installing; mkdir deps && cat .env > deps/seen\"\n",
    )
    .unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "orchestra set-up"]);
    std::fs::write(repo.join(".env"), "KEY=1\n").unwrap();
    // A repository's own set-up runs once its file is trusted (see tests/it/repo_trust.rs).
    let trust = |s: &Server| {
        let r = s.post("/api/coding-agents/trust", json!({ "path": repo }));
        assert_eq!(r.status, 200, "{}", r.body);
    };
    trust(&s);
    let t = run(&s, "Uses deps", "cat deps/seen > used.txt", repo);
    let (path, _) = worktree(&t);
    assert_eq!(
        std::fs::read_to_string(Path::new(&path).join("used.txt")).unwrap(),
        "KEY=1\n"
    );
    let step = &t["metadata"]["steps"][0];
    assert!(
        step["description"]
            .as_str()
            .unwrap()
            .starts_with("set-up: echo installing"),
        "{t}"
    );
    assert_eq!(step["status"], "completed");
    assert_eq!(step["output"], "installing\n");
    assert_eq!(
        diff_files(&s, &id(&t)),
        vec![file("used.txt", "added", 1, 0)],
        "the copied and set-up files are ignored ones"
    );

    // A failing set-up fails the task with its output; no agent starts.
    std::fs::write(
        repo.join(".orchestra.toml"),
        "[worktree]\nsetup = \"echo broken >&2; exit 4\"\n",
    )
    .unwrap();
    git(repo, &["commit", "-qam", "broken set-up"]);
    trust(&s);
    let c = create(&s, "Broken", "echo never > never.txt", repo, json!({}));
    let tid = id(&c.json()["task"]);
    let r = s.post_empty(&format!("{TASKS}/{tid}/start"));
    assert_eq!(r.status, 409, "{}", r.body);
    let t = s.get(&format!("{TASKS}/{tid}")).json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "failed");
    let err = t["metadata"]["error"].as_str().unwrap();
    assert!(
        err.contains("exited with code 4") && err.contains("broken"),
        "{err}"
    );
    assert_eq!(t["metadata"]["steps"][0]["status"], "failed");
    assert!(t["metadata"]["sessionId"].is_null(), "{t}");
    let (path, _) = worktree(&t);
    assert!(!Path::new(&path).join("never.txt").exists());

    // Submodules are not checked out in a worktree: the task says so.
    std::fs::write(repo.join(".orchestra.toml"), "").unwrap();
    std::fs::write(
        repo.join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n",
    )
    .unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "a submodule entry"]);
    let t = run(&s, "Sub", "true", repo);
    let said = t["metadata"]["output"].to_string();
    assert!(said.contains("submodules"), "{t}");
}
