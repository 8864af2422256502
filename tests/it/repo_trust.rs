//! A repository's own commands run only once the user trusted them: with real git
//! repositories and a real `orchestra serve`, a task whose repository's `.orchestra.toml`
//! asks to run or copy something waits on a question (running nothing, starting no session)
//! until it is answered through the API or `orchestra trust`; a change to the file asks
//! again; declining or cancelling runs nothing; the user's own `[[repo]]` needs no trust;
//! copy paths never leave the repository; of two answers at once exactly one wins; and the
//! autopilot holds the repository's other tasks while one waits.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";
const TRUST: &str = "/api/coding-agents/trust";

/// A repository whose `.orchestra.toml` copies `.env` and runs a set-up that records each
/// run in `marks/setup-ran` (outside the repository) and makes `deps/`.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    marks: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = git_repo();
        let root = dir.path().canonicalize().unwrap();
        let marks = tempfile::tempdir().unwrap();
        std::fs::write(root.join(".gitignore"), ".env\ndeps/\n").unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", "ignore"]);
        std::fs::write(root.join(".env"), "KEY=1\n").unwrap();
        let repo = Repo {
            _dir: dir,
            root,
            marks,
        };
        repo.write_file("");
        repo
    }

    fn setup_command(&self) -> String {
        format!(
            "echo ran >> {}; mkdir -p deps && cat .env > deps/seen",
            self.ran_file().display()
        )
    }

    /// Writes the repository's file, with `extra` appended (to change it).
    fn write_file(&self, extra: &str) {
        std::fs::write(
            self.file(),
            format!(
                "[worktree]\ncopy = [\".env\"]\nsetup = {:?}\n{extra}",
                self.setup_command()
            ),
        )
        .unwrap();
    }

    fn file(&self) -> PathBuf {
        self.root.join(".orchestra.toml")
    }

    fn ran_file(&self) -> PathBuf {
        self.marks.path().join("setup-ran")
    }

    /// How many times the set-up ran.
    fn setup_runs(&self) -> usize {
        std::fs::read_to_string(self.ran_file())
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

fn id(t: &Value) -> String {
    t["id"].as_str().unwrap().to_string()
}

/// A pending worktree task in `dir` that runs `command`.
fn create(s: &Server, name: &str, command: &str, dir: &Path, isolation: &str) -> String {
    let r = s.post(
        TASKS,
        json!({"name": name, "description": command, "providerId": "exec",
            "workingDirectory": dir, "isolation": isolation}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    id(&r.json()["task"])
}

fn task(s: &Server, id: &str) -> Value {
    s.get(&format!("{TASKS}/{id}")).json()["task"].clone()
}

fn start(s: &Server, id: &str) -> Response {
    s.post_empty(&format!("{TASKS}/{id}/start"))
}

fn answer(s: &Server, id: &str, option: Value) -> Response {
    s.post(&format!("{TASKS}/{id}/answer"), json!({ "option": option }))
}

/// Waits until the task waits on its trust question; returns it.
fn wait_asking(s: &Server, id: &str) -> Value {
    let mut last = Value::Null;
    let ok = wait_until(std::time::Duration::from_secs(20), || {
        last = task(s, id);
        last["metadata"]["prompt"]["kind"] == "trust"
    });
    assert!(ok, "the task never asked for trust: {last}");
    last
}

/// The checks every waiting task passes: running, no session, the question quoting the
/// command, the copy and the file, a step saying it waits, and nothing run.
fn assert_waits(t: &Value, repo: &Repo) {
    let m = &t["metadata"];
    assert_eq!(m["status"], "running", "{t}");
    assert!(m["sessionId"].is_null(), "no session before trust: {t}");
    assert!(m["worktree"].is_null(), "no worktree before trust: {t}");
    let text = m["prompt"]["text"].as_str().unwrap();
    let file = repo.file().display().to_string();
    assert!(text.contains(&repo.setup_command()), "{text}");
    assert!(text.contains(".env"), "{text}");
    assert!(text.contains(&file), "{text}");
    let keys: Vec<&str> = m["prompt"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["1", "2"], "{t}");
    assert_eq!(m["trust"]["file"], file.as_str());
    assert_eq!(m["trust"]["repository"], repo.root.display().to_string());
    assert_eq!(m["trust"]["sha256"].as_str().map(str::len), Some(64));
    let step = m["steps"].as_array().unwrap().last().unwrap().clone();
    assert!(
        step["description"]
            .as_str()
            .unwrap()
            .starts_with("trust: waiting for you to trust"),
        "{t}"
    );
    assert_eq!(step["status"], "running");
}

/// Whether a session runs (or ran) for the task.
fn sessions_of(s: &Server, task_id: &str) -> usize {
    s.get("/api/coding-agents/sessions").json()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["taskId"] == task_id)
        .count()
}

fn wait_event(events: &mut Events, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
    while let Some((n, data)) = events.next() {
        if n == name && pred(&data) {
            return data;
        }
    }
    panic!("the stream ended without a {name} event");
}

#[test]
fn a_set_up_waits_for_trust_and_runs_once_answered() {
    let s = Server::start();
    let repo = Repo::new();
    let mut events = Events::open(&s);
    let tid = create(
        &s,
        "uses deps",
        "cat deps/seen > used.txt",
        &repo.root,
        "worktree",
    );
    let r = start(&s, &tid);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_waits(&r.json()["task"], &repo);
    let e = wait_event(&mut events, "task:prompt", |d| d["taskId"] == tid.as_str());
    assert_eq!(e["task"]["metadata"]["prompt"]["kind"], "trust");
    assert_eq!(repo.setup_runs(), 0, "the set-up ran before trust");
    assert_eq!(sessions_of(&s, &tid), 0);
    // The CLI shows it blocked and says what answers it.
    let (ok, shown, _) = cli(&s, &["task", "show", &tid]);
    assert!(ok && shown.contains("blocked"), "{shown}");
    assert!(shown.contains(&format!("orchestra trust {}", repo.file().display())));
    // Another start, a pause: refused while it waits.
    assert_eq!(start(&s, &tid).status, 409);
    let paused = s.post_empty(&format!("{TASKS}/{tid}/pause"));
    assert_eq!(paused.status, 409, "{}", paused.body);
    assert!(paused.json()["error"].as_str().unwrap().contains("trust"));

    // Bad answers change nothing.
    let r = answer(&s, &tid, json!("7"));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("no option \"7\"")
    );
    assert_eq!(
        s.post(&format!("{TASKS}/{tid}/answer"), json!({})).status,
        400
    );
    assert_eq!(answer(&s, "no-such-task", json!("1")).status, 404);
    assert_waits(&task(&s, &tid), &repo);

    // Trusting (option 1, given as a number) runs the set-up, then the agent.
    let r = answer(&s, &tid, json!(1));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.json()["task"]["metadata"]["prompt"].is_null(),
        "{}",
        r.body
    );
    let e = wait_event(&mut events, "task:prompt", |d| d["taskId"] == tid.as_str());
    assert!(e["task"]["metadata"]["prompt"].is_null(), "{e}");
    let t = wait_task_status(&s, &tid, "completed");
    assert_eq!(repo.setup_runs(), 1);
    let wt = t["metadata"]["worktree"]["path"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(Path::new(wt).join("used.txt")).unwrap(),
        "KEY=1\n"
    );
    let steps = t["metadata"]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "completed", "{t}");
    assert_eq!(steps[0]["output"], "trusted");
    assert!(
        steps[1]["description"]
            .as_str()
            .unwrap()
            .starts_with("set-up: echo ran"),
        "{t}"
    );
    assert_eq!(steps[1]["status"], "completed");
    assert!(t["metadata"]["trust"].is_null(), "{t}");
    // Answered already: nothing to answer.
    let again = answer(&s, &tid, json!("1"));
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(
        again.json()["error"]
            .as_str()
            .unwrap()
            .contains("no question")
    );
    let list = s.get(TRUST).json();
    assert_eq!(
        list["trusted"][0]["file"],
        repo.file().display().to_string()
    );

    // Trusted: the next task runs at once, without asking.
    let next = create(&s, "again", "true", &repo.root, "worktree");
    let r = start(&s, &next);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["task"]["metadata"]["prompt"].is_null());
    wait_task_status(&s, &next, "completed");
    assert_eq!(repo.setup_runs(), 2);

    // A changed byte asks again.
    repo.write_file(" ");
    let changed = create(&s, "changed", "true", &repo.root, "worktree");
    let r = start(&s, &changed);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_waits(&r.json()["task"], &repo);
    assert_eq!(repo.setup_runs(), 2);

    // Declining fails it, running nothing.
    let r = answer(&s, &changed, json!("2"));
    assert_eq!(r.status, 200, "{}", r.body);
    let t = r.json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "failed", "{t}");
    let err = t["metadata"]["error"].as_str().unwrap();
    assert!(
        err.contains("declined") && err.contains(".orchestra.toml"),
        "{err}"
    );
    assert!(t["metadata"]["prompt"].is_null() && t["metadata"]["trust"].is_null());
    assert_eq!(repo.setup_runs(), 2);
    assert_eq!(sessions_of(&s, &changed), 0);
    assert!(task(&s, &changed)["metadata"]["worktree"].is_null());

    // Cancelling while it waits cancels it cleanly.
    let cancelled = create(&s, "cancelled", "true", &repo.root, "worktree");
    assert_eq!(start(&s, &cancelled).status, 200);
    let r = s.post_empty(&format!("{TASKS}/{cancelled}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    let t = r.json()["task"].clone();
    assert_eq!(t["metadata"]["status"], "cancelled");
    assert!(t["metadata"]["prompt"].is_null(), "{t}");
    assert_eq!(answer(&s, &cancelled, json!("1")).status, 409);
    assert_eq!(repo.setup_runs(), 2);
    assert!(s.get(TRUST).json()["trusted"][0]["sha256"] != json!(null));
}

#[test]
fn orchestra_trust_runs_every_task_waiting_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(dir.path(), &[]);
    let repo = Repo::new();
    let a = create(&s, "a", "true", &repo.root, "worktree");
    let b = create(&s, "b", "true", &repo.root, "worktree");
    for t in [&a, &b] {
        assert_eq!(start(&s, t).status, 200);
    }
    // A restart keeps the question: nothing ran, it still waits.
    s.stop();
    let s = Server::start_in(dir.path(), &[]);
    for t in [&a, &b] {
        assert_waits(&task(&s, t), &repo);
    }
    let (ok, out, err) = cli(&s, &["trust", &repo.root.display().to_string()]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!("trusted {}", repo.file().display())),
        "{out}"
    );
    assert!(out.contains(&repo.setup_command()), "{out}");
    assert!(out.contains("copy: .env"), "{out}");
    assert!(out.contains("2 waiting tasks proceed"), "{out}");
    for t in [&a, &b] {
        wait_task_status(&s, t, "completed");
    }
    assert_eq!(repo.setup_runs(), 2);
    let (ok, out, _) = cli(&s, &["trust", "--list"]);
    assert!(
        ok && out.contains(&repo.file().display().to_string()),
        "{out}"
    );
    // The list is the state directory's, private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("trusted.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // Revoked: the next task asks again.
    let (ok, out, err) = cli(
        &s,
        &["trust", "--revoke", &repo.file().display().to_string()],
    );
    assert!(ok && out.contains("no longer trusted"), "{out}{err}");
    let c = create(&s, "c", "true", &repo.root, "worktree");
    assert_waits(&start(&s, &c).json()["task"], &repo);
    let (ok, _, err) = cli(
        &s,
        &["trust", "--revoke", &repo.file().display().to_string()],
    );
    assert!(!ok && err.contains("is not trusted"), "{err}");
    // What cannot be trusted is said.
    let (ok, _, err) = cli(&s, &["trust", "/no/such/dir/.orchestra.toml"]);
    assert!(!ok && err.contains("there is no file"), "{err}");
    let r = s.post(TRUST, json!({"path": "relative/.orchestra.toml"}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("absolute"));
    let r = s.post(TRUST, json!({"path": "/etc/hostname"}));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("not a repository's .orchestra.toml")
    );
    std::fs::write(repo.file(), "[worktree]\nsetupp = 1\n").unwrap();
    let (ok, _, err) = cli(&s, &["trust", &repo.root.display().to_string()]);
    assert!(
        !ok && err.contains("is not valid") && err.contains("fix it before trusting it"),
        "{err}"
    );
}

#[test]
fn the_users_own_entry_runs_without_asking_and_copies_stay_inside() {
    let repo = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.root.join("link")).unwrap();
    let cfg = tempfile::tempdir().unwrap();
    let config = cfg.path().join("config.toml");
    let marks = repo.marks.path().display();
    std::fs::write(
        &config,
        format!(
            "[[repo]]\npath = {:?}\nsetup = \"echo mine >> {marks}/mine\"\ncopy = [\".env\"]\n",
            repo.root.display().to_string()
        ),
    )
    .unwrap();
    let s = Server::start_with(&["--config", &config.display().to_string()]);
    // The user's entry replaces all the file asks: nothing of the file runs, nothing asks.
    let t = create(&s, "mine", "cat .env > used.txt", &repo.root, "worktree");
    let r = start(&s, &t);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.json()["task"]["metadata"]["prompt"].is_null(),
        "{}",
        r.body
    );
    wait_task_status(&s, &t, "completed");
    assert_eq!(
        std::fs::read_to_string(repo.marks.path().join("mine")).unwrap(),
        "mine\n"
    );
    assert_eq!(repo.setup_runs(), 0);

    // Copy paths that leave the repository are refused, before anything is asked or run.
    for (path, why) in [
        (
            "link/secret",
            "\"link\" in the repository is a symlink pointing out of it",
        ),
        ("../x", "contains \"..\""),
        ("/etc/hostname", "absolute"),
    ] {
        std::fs::write(
            repo.file(),
            format!("[worktree]\ncopy = [\".env\", {path:?}]\n"),
        )
        .unwrap();
        let other = Repo::new();
        // In a repository of its own, so that the user's entry does not apply.
        std::os::unix::fs::symlink(outside.path(), other.root.join("link")).unwrap();
        std::fs::copy(repo.file(), other.file()).unwrap();
        let t = create(&s, "copies", "true", &other.root, "worktree");
        let r = start(&s, &t);
        assert_eq!(r.status, 409, "{path}: {}", r.body);
        let t = task(&s, &t);
        assert_eq!(t["metadata"]["status"], "failed", "{t}");
        assert!(t["metadata"]["prompt"].is_null(), "{t}");
        let err = t["metadata"]["error"].as_str().unwrap();
        assert!(
            err.contains(&format!("copy path {path:?} is refused")),
            "{err}"
        );
        assert!(err.contains(why), "{err}");
        assert!(err.contains("nothing was copied"), "{err}");
        assert!(t["metadata"]["worktree"].is_null(), "{t}");
    }
}

#[test]
fn of_two_answers_at_once_exactly_one_wins() {
    let s = Server::start();
    let repo = Repo::new();
    for round in 0..3 {
        // A changed file each round, so that each task asks.
        repo.write_file(&"#\n".repeat(round + 1));
        let t = create(&s, "raced", "true", &repo.root, "worktree");
        assert_eq!(start(&s, &t).status, 200);
        wait_asking(&s, &t);
        let barrier = std::sync::Barrier::new(2);
        let (first, second) = std::thread::scope(|sc| {
            let one = sc.spawn(|| {
                barrier.wait();
                answer(&s, &t, json!("1"))
            });
            let two = sc.spawn(|| {
                barrier.wait();
                answer(&s, &t, json!("2"))
            });
            (one.join().unwrap(), two.join().unwrap())
        });
        let mut statuses = [first.status, second.status];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{} / {}", first.body, second.body);
        let loser = if first.status == 409 { &first } else { &second };
        assert!(
            loser.json()["error"]
                .as_str()
                .unwrap()
                .contains("no question"),
            "{}",
            loser.body
        );
        let end = if first.status == 200 {
            "completed"
        } else {
            "failed"
        };
        wait_task_status(&s, &t, end);
    }
}

#[test]
fn autopilot_holds_the_repositorys_other_tasks_while_one_waits() {
    let s = Server::start_with(&["--max-concurrent", "2"]);
    let repo = Repo::new();
    let plain = tempfile::tempdir().unwrap();
    let gate = plain.path().join("go");
    let a1 = create(&s, "a1", "true", &repo.root, "worktree");
    let a2 = create(&s, "a2", "true", &repo.root, "worktree");
    let b = create(
        &s,
        "b",
        &format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display()),
        plain.path(),
        "none",
    );
    let c = create(&s, "c", "true", plain.path(), "none");
    assert_eq!(s.post_empty("/api/agent/resume").status, 200);
    // a1 waits and holds a slot; a2 is held; b takes the other slot; c waits for a slot.
    wait_asking(&s, &a1);
    wait_task_status(&s, &b, "running");
    for held in [&a2, &c] {
        assert_eq!(task(&s, held)["metadata"]["status"], "pending");
    }
    let declined = answer(&s, &a1, json!("2")).json()["task"].clone();
    let declined_at = declined["metadata"]["completedAt"].as_i64().unwrap();
    // a2, no longer held, starts and asks, taking the free slot: c still waits for one.
    let waiting = wait_asking(&s, &a2);
    assert!(
        waiting["metadata"]["startedAt"].as_i64().unwrap() >= declined_at,
        "a2 started while a1 waited on its repository's trust: {waiting}"
    );
    assert_eq!(task(&s, &c)["metadata"]["status"], "pending");
    assert_eq!(repo.setup_runs(), 0);
    let (ok, out, err) = cli(&s, &["trust", &repo.file().display().to_string()]);
    assert!(ok && out.contains("1 waiting task proceed"), "{out}{err}");
    let a2_done = wait_task_status(&s, &a2, "completed");
    let c_done = wait_task_status(&s, &c, "completed");
    assert!(
        c_done["metadata"]["startedAt"].as_i64() >= a2_done["metadata"]["startedAt"].as_i64(),
        "{c_done}"
    );
    std::fs::write(&gate, "").unwrap();
    wait_task_status(&s, &b, "completed");
    assert_eq!(repo.setup_runs(), 1);
}
