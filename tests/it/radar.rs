//! The conflict radar with real git repositories and real worktree tasks (`exec`): pairs of
//! tasks that would conflict are flagged before either merges, with the files; disjoint
//! tasks are not; a base branch that moved is seen; looking changes nothing in the user's
//! repository or the tasks' worktrees.

use crate::git_worktrees::{id, run, state_of, worktree};
use crate::support;

use serde_json::{Value, json};
use std::path::Path;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

fn conflicts(s: &Server, id: &str) -> Value {
    let r = s.get(&format!("{TASKS}/{id}/conflicts"));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

/// The ids and files of the tasks a report names.
fn rivals(report: &Value) -> Vec<(String, Vec<String>)> {
    report["withTasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["taskId"].as_str().unwrap().to_string(),
                serde_json::from_value(t["files"].clone()).unwrap(),
            )
        })
        .collect()
}

/// Everything looking could change in a work tree: status, HEAD and the index's bytes.
fn untouched_state(dir: &Path) -> (String, String, Vec<u8>) {
    let (status, head) = state_of(dir);
    let index = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    (status, head, std::fs::read(index).expect("an index"))
}

#[test]
fn two_tasks_on_the_same_lines_are_flagged_and_the_second_merge_names_the_first() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let mut events = Events::open(&s);
    let left = run(&s, "Left", "echo left > a.txt", repo);
    let right = run(&s, "Right", "echo right > a.txt && echo r > r.txt", repo);
    let (l, rt) = (id(&left), id(&right));
    let dirs = [
        repo.to_path_buf(),
        worktree(&left).0.into(),
        worktree(&right).0.into(),
    ];
    let before: Vec<_> = dirs.iter().map(|d| untouched_state(d)).collect();

    // The radar looks by itself when the tasks finish: its event names the pair.
    let mut flagged = false;
    while let Some((name, data)) = events.next() {
        if name == "task:conflicts"
            && data["taskId"] == rt.as_str()
            && !data["conflicts"]["withTasks"]
                .as_array()
                .unwrap()
                .is_empty()
        {
            assert_eq!(data["conflicts"]["withTasks"][0]["taskId"], l.as_str());
            flagged = true;
            break;
        }
    }
    assert!(flagged, "no task:conflicts event flagged the pair");

    let lr = conflicts(&s, &l);
    assert_eq!(rivals(&lr), vec![(rt.clone(), vec!["a.txt".to_string()])]);
    assert_eq!(lr["withTasks"][0]["name"], "Right");
    assert_eq!(lr["withBase"], Value::Null);
    assert!(lr["checkedAt"].is_i64(), "{lr}");
    let rr = conflicts(&s, &rt);
    assert_eq!(rivals(&rr), vec![(l.clone(), vec!["a.txt".to_string()])]);
    assert_eq!(rr["mergeOrder"], json!([l, rt]));

    // Looking changed nothing: not the user's checkout, not the agents' worktrees.
    let after: Vec<_> = dirs.iter().map(|d| untouched_state(d)).collect();
    assert_eq!(before, after);

    // The CLI says the same.
    let (ok, out, err) = cli(&s, &["task", "conflicts", &l]);
    assert!(ok, "{err}");
    assert!(out.contains("merges cleanly into its base branch"), "{out}");
    assert!(out.contains("conflicts with task Right"), "{out}");
    assert!(out.contains("in a.txt"), "{out}");
    let (ok, out, err) = cli(&s, &["task", "conflicts", &rt, "--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["taskId"], rt.as_str());
    assert_eq!(v["withTasks"][0]["files"], json!(["a.txt"]));

    // Merge one: the other's merge is refused with the files, naming the one merged first.
    let m = s.post_empty(&format!("{TASKS}/{l}/merge"));
    assert_eq!(m.status, 200, "{}", m.body);
    let repo_before = state_of(repo);
    let refused = s.post_empty(&format!("{TASKS}/{rt}/merge"));
    assert_eq!(refused.status, 409, "{}", refused.body);
    let msg = refused.json()["error"].as_str().unwrap().to_string();
    assert!(msg.contains("a.txt") && msg.contains("Left"), "{msg}");
    assert!(msg.contains("nothing was changed"), "{msg}");
    assert_eq!(state_of(repo), repo_before);

    // Now it is the base it conflicts with; the merged task has an empty report saying why.
    let rr = conflicts(&s, &rt);
    assert_eq!(rr["withBase"]["files"], json!(["a.txt"]), "{rr}");
    assert_eq!(rr["withBase"]["baseBranch"], "main");
    assert_eq!(rivals(&rr), vec![]);
    let lr = conflicts(&s, &l);
    assert!(lr["note"].as_str().unwrap().contains("merged"), "{lr}");
    assert_eq!(lr["withTasks"], json!([]));
}

#[test]
fn three_tasks_with_disjoint_files_are_not_flagged() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let ids: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|n| id(&run(&s, n, &format!("echo {n} > {n}.txt"), repo)))
        .collect();
    let list = s.get("/api/coding-agents/conflicts");
    assert_eq!(list.status, 200, "{}", list.body);
    let reports = list.json()["reports"].as_array().unwrap().clone();
    assert_eq!(reports.len(), 3, "{reports:?}");
    for (report, id) in reports.iter().zip(&ids) {
        assert_eq!(report["taskId"], id.as_str());
        assert_eq!(report["withBase"], Value::Null, "{report}");
        assert_eq!(report["withTasks"], json!([]), "{report}");
        assert_eq!(report["mergeOrder"], json!(ids));
    }
    let (ok, out, err) = cli(&s, &["task", "conflicts", &ids[1]]);
    assert!(ok, "{err}");
    assert!(out.contains("conflicts with no other live task"), "{out}");
}

#[test]
fn a_base_that_moved_under_a_task_is_flagged_and_tasks_without_worktrees_say_why() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let t = id(&run(&s, "Edit b", "echo agent > b.txt", repo));
    assert_eq!(conflicts(&s, &t)["withBase"], Value::Null);

    // The user commits a rival change in their own checkout.
    std::fs::write(repo.join("b.txt"), "user\n").unwrap();
    git(repo, &["commit", "-qam", "the user's b"]);
    let head = git(repo, &["rev-parse", "HEAD"]);
    let before = untouched_state(repo);
    let report = conflicts(&s, &t);
    assert_eq!(
        report["withBase"],
        json!({"baseBranch": "main", "baseCommit": head, "files": ["b.txt"]})
    );
    assert_eq!(untouched_state(repo), before);
    let (ok, out, err) = cli(&s, &["task", "conflicts", &t]);
    assert!(ok, "{err}");
    assert!(out.contains("conflicts with main"), "{out}");
    assert!(out.contains("b.txt"), "{out}");

    // A task without isolation: an empty report with the reason, not an error.
    let plain = s.post(
        TASKS,
        json!({"name": "plain", "description": "true", "providerId": "exec",
            "workingDirectory": repo, "isolation": "none"}),
    );
    assert_eq!(plain.status, 201, "{}", plain.body);
    let plain = plain.json()["task"]["id"].as_str().unwrap().to_string();
    let report = conflicts(&s, &plain);
    assert!(
        report["note"]
            .as_str()
            .unwrap()
            .contains("without isolation"),
        "{report}"
    );
    assert_eq!(report["withTasks"], json!([]));
    assert_eq!(s.get(&format!("{TASKS}/nope/conflicts")).status, 404);

    // An edit the user undoes: the conflict goes, as the radar sees when asked.
    git(repo, &["revert", "--no-edit", "HEAD"]);
    assert_eq!(conflicts(&s, &t)["withBase"], Value::Null);
}
