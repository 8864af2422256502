//! The TUI's diff view, merge and discard against a real `orchestra serve` and real git
//! repositories: the app over [`RemoteCockpit`], keys in, the repository's state out.

use crate::support;

use crossterm::event::{Event as E, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use orchestra_client::http::{Api, Caller};
use orchestra_proto::task::WorktreeOutcome;
use orchestra_tui::app::{Confirm, Modal};
use orchestra_tui::diff_view::Body;
use orchestra_tui::remote::RemoteCockpit;
use orchestra_tui::{App, Cockpit};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use support::*;

const TASKS: &str = "/api/coding-agents/tasks";

fn key(c: KeyCode) -> E {
    E::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.on_terminal_event(key(KeyCode::Char(c)));
    }
}

fn attach(s: &Server) -> Arc<RemoteCockpit> {
    let dir: PathBuf = s.state_dir.clone();
    Arc::new(
        RemoteCockpit::attach(
            Api::new(&s.url, s.token.clone(), Caller::Tui),
            Box::new(move || {
                orchestra_client::daemon::find(&dir).map(|e| Api::new(&e.url, e.token, Caller::Tui))
            }),
            Some(s.state_dir.clone()),
        )
        .expect("attach"),
    )
}

/// A worktree task on `repo` that ran `command` (with `exec`) and completed; its id.
fn finished_task(s: &Server, name: &str, command: &str, repo: &Path, isolation: &str) -> String {
    let r = s.post(
        TASKS,
        json!({
            "name": name,
            "description": command,
            "providerId": "exec",
            "workingDirectory": repo,
            "isolation": isolation,
        }),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["task"]["id"].as_str().unwrap().to_string();
    let r = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(r.status, 200, "{}", r.body);
    wait_task_status(s, &id, "completed");
    id
}

use support::app_wait_for as wait_for;

/// The frame's text at `w`×`h`, a line per row.
fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn loaded(app: &App) -> bool {
    app.diff_view()
        .is_some_and(|v| matches!(v.body, Body::Loaded(_)))
}

fn outcome(app: &App, id: &str) -> Option<WorktreeOutcome> {
    app.snapshot()
        .tasks
        .iter()
        .find(|t| t.id == id)
        .and_then(|t| t.metadata.worktree.as_ref())
        .and_then(|w| w.outcome)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diff_view_opens_scrolls_jumps_and_closes() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let id = finished_task(
        &s,
        "Edit and add",
        "echo agent > a.txt && seq 1 60 > long.txt && echo n > new.txt",
        repo,
        "worktree",
    );
    let plain = finished_task(&s, "In place", "echo hi", repo, "none");
    let cockpit = attach(&s);
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let (w, h) = (100, 30);
    screen(&mut app, w, h);

    // The details pane shows where the task's worktree is and what it branches from; the top
    // bar the disk the worktrees use.
    app.select_task(&id);
    wait_for(&mut app, &mut events, "the worktrees' size", |a| {
        a.worktree_usage()
            .is_some_and(|u| u.per_task.get(&id).is_some_and(|b| *b > 0))
    })
    .await;
    let shown = screen(&mut app, w, h);
    assert!(shown.contains("1 worktree "), "{shown}");
    // The path wraps in the narrow pane: its start and its last part are shown.
    let path = app
        .selected_task()
        .unwrap()
        .metadata
        .worktree
        .clone()
        .unwrap()
        .at
        .path;
    let last = path.rsplit('/').next().unwrap_or_default();
    assert!(
        shown.contains(&path[..12]) && shown.contains(&format!("/{last}  ")),
        "{path}\n{shown}"
    );
    assert!(shown.contains("base    main"), "{shown}");

    press(&mut app, "d");
    assert!(app.diff_view().is_some(), "d opens the view at once");
    wait_for(&mut app, &mut events, "the diff", |a| loaded(a)).await;
    let v = app.diff_view().unwrap();
    let files: Vec<(&str, Option<u64>, Option<u64>)> = v
        .files()
        .iter()
        .map(|f| (f.path.as_str(), f.added, f.removed))
        .collect();
    assert_eq!(
        files,
        vec![
            ("a.txt", Some(1), Some(1)),
            ("long.txt", Some(60), Some(0)),
            ("new.txt", Some(1), Some(0)),
        ]
    );
    let shown = screen(&mut app, w, h);
    assert!(shown.contains("3 files +62 −1"), "{shown}");
    assert!(shown.contains("+60 −0"), "{shown}");
    assert!(shown.contains("+agent"), "{shown}");

    // A line, a page, the end, the start.
    let view = |a: &App| {
        let v = a.diff_view().unwrap();
        (v.top, v.file)
    };
    app.on_terminal_event(key(KeyCode::Down));
    assert_eq!(view(&app), (1, 0));
    let page = app.diff_view().unwrap().page;
    assert!(page > 5, "the last frame showed {page} rows");
    app.on_terminal_event(key(KeyCode::PageDown));
    assert_eq!(view(&app).0, page);
    app.on_terminal_event(key(KeyCode::End));
    let v = app.diff_view().unwrap();
    assert_eq!((v.top, v.file), (v.lines().len() - page, 2));
    let shown = screen(&mut app, w, h);
    assert!(
        shown.contains("+n"),
        "the end shows new.txt's line:\n{shown}"
    );
    app.on_terminal_event(key(KeyCode::Home));
    assert_eq!(view(&app), (0, 0));
    // Jump between files: long.txt's header comes to the top.
    press(&mut app, "n");
    assert_eq!(view(&app).1, 1);
    let shown = screen(&mut app, w, h);
    let first_diff_row = shown.lines().nth(3).unwrap_or_default();
    assert!(
        first_diff_row.contains("diff --git a/long.txt"),
        "{first_diff_row:?}\n{shown}"
    );
    press(&mut app, "N");
    assert_eq!(view(&app), (0, 0));
    // The wheel scrolls it.
    app.on_terminal_event(E::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 50,
        row: 10,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(view(&app).0, 3);
    // A click on a file in the list jumps to it; → scrolls long lines sideways.
    let (list, _) = app
        .diff_view()
        .unwrap()
        .list
        .expect("a file list at 100 columns");
    app.on_terminal_event(E::Mouse(MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: list.x + 2,
        row: list.y + 2,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(view(&app).1, 2, "new.txt");
    app.on_terminal_event(key(KeyCode::Right));
    assert_eq!(app.diff_view().unwrap().left, 8);
    let shown = screen(&mut app, w, h);
    assert!(shown.contains("│it a/new.txt b/new.txt"), "{shown}");
    app.on_terminal_event(key(KeyCode::Left));
    assert_eq!(app.diff_view().unwrap().left, 0);
    // Keys of the panes do nothing under it (n is the next file, not a new task).
    assert!(matches!(app.modal, Modal::None));
    app.on_terminal_event(key(KeyCode::Esc));
    assert!(app.diff_view().is_none());

    // A task without a worktree says so; q closes that too.
    app.select_task(&plain);
    press(&mut app, "d");
    let shown = screen(&mut app, w, h);
    assert!(shown.contains("without a worktree"), "{shown}");
    press(&mut app, "q");
    assert!(app.diff_view().is_none());
    assert!(!app.should_quit(), "q closed the view, not the TUI");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_and_discard_after_y_and_a_refusal_shown_whole() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let merged = finished_task(
        &s,
        "Edit a",
        "echo agent > a.txt && echo n > new.txt",
        repo,
        "worktree",
    );
    let dropped = finished_task(
        &s,
        "Scratch",
        "echo scratch > scratch.txt",
        repo,
        "worktree",
    );
    let cockpit = attach(&s);
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let (w, h) = (100, 30);
    screen(&mut app, w, h);

    // The user's own uncommitted edit of a file the merge touches.
    std::fs::write(repo.join("a.txt"), "user's edit\n").unwrap();
    let before = (
        git(repo, &["status", "--porcelain"]),
        git(repo, &["rev-parse", "HEAD"]),
    );
    app.select_task(&merged);
    press(&mut app, "M");
    assert!(
        matches!(&app.modal, Modal::Confirm(Confirm::Merge { base_branch, .. }) if base_branch == "main"),
        "{:?}",
        app.modal
    );
    let shown = screen(&mut app, w, h);
    assert!(shown.contains("Merge \"Edit a\" into main?"), "{shown}");
    // n asks nothing of orchestra.
    press(&mut app, "n");
    assert!(matches!(app.modal, Modal::None));
    press(&mut app, "My");
    wait_for(&mut app, &mut events, "the refusal", |a| {
        a.diff_view().is_some_and(|v| v.refusal.is_some())
    })
    .await;
    let refusal = app.diff_view().unwrap().refusal.clone().unwrap();
    assert!(
        refusal.contains("a.txt") && refusal.contains("uncommitted"),
        "{refusal}"
    );
    wait_for(&mut app, &mut events, "the diff under it", |a| loaded(a)).await;
    let shown = screen(&mut app, w, h);
    assert!(
        shown.contains("your uncommitted changes in a.txt"),
        "{shown}"
    );
    assert_eq!(
        (
            git(repo, &["status", "--porcelain"]),
            git(repo, &["rev-parse", "HEAD"])
        ),
        before,
        "a refused merge changes nothing"
    );

    // The user's edit put away, M from the diff view merges it.
    git(repo, &["checkout", "--", "a.txt"]);
    press(&mut app, "M");
    assert!(matches!(app.modal, Modal::Confirm(Confirm::Merge { .. })));
    press(&mut app, "y");
    wait_for(&mut app, &mut events, "the merge", |a| {
        outcome(a, &merged) == Some(WorktreeOutcome::Merged) && a.diff_view().is_none()
    })
    .await;
    assert_eq!(git(repo, &["show", "main:a.txt"]), "agent");
    assert_eq!(git(repo, &["show", "main:new.txt"]), "n");
    assert_eq!(git(repo, &["status", "--porcelain"]), "");

    // X discards the other: the question names the snapshot ref that keeps its work.
    app.select_task(&dropped);
    press(&mut app, "X");
    let shown = screen(&mut app, w, h);
    let snapshot = format!("refs/orchestra/snapshots/{dropped}");
    assert!(shown.contains(&snapshot), "{shown}");
    press(&mut app, "y");
    wait_for(&mut app, &mut events, "the discard", |a| {
        outcome(a, &dropped) == Some(WorktreeOutcome::Discarded)
    })
    .await;
    assert_eq!(
        git(repo, &["show", &format!("{snapshot}:scratch.txt")]),
        "scratch"
    );
    assert_eq!(git(repo, &["branch", "--list", "orchestra/*"]), "");
    assert!(repo.join("scratch.txt").metadata().is_err(), "not merged");
    // No worktree is left to count.
    wait_for(&mut app, &mut events, "the worktrees' size", |a| {
        a.worktree_usage().is_some_and(|u| u.per_task.is_empty())
    })
    .await;
}

/// `P` in the diff view asks y/n, then pushes the task's branch and opens a pull request (a
/// stand-in `gh`, see `git_pull_requests`); a refusal is shown whole in the view, and the
/// pull request's address in the details pane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_opens_a_pull_request_and_a_refusal_is_shown_whole() {
    let bin = bin_dir();
    fake_gh(bin.path(), &bin.path().join("argv"), true);
    let s = crate::git_pull_requests::server_with_path(bin.path());
    let lone = git_repo();
    let (r, bare) = crate::git_pull_requests::repo_with_origin();
    let refused = finished_task(&s, "Lone", "echo l > l.txt", lone.path(), "worktree");
    let published = finished_task(&s, "fix2", "echo fixed > a.txt", r.path(), "worktree");
    let cockpit = attach(&s);
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let (w, h) = (120, 40);
    screen(&mut app, w, h);

    app.select_task(&refused);
    press(&mut app, "dP");
    assert!(
        matches!(&app.modal, Modal::Confirm(Confirm::PullRequest { base_branch, .. }) if base_branch == "main"),
        "{:?}",
        app.modal
    );
    let shown = screen(&mut app, w, h);
    assert!(
        shown.contains("Open a pull request for \"Lone\"?"),
        "{shown}"
    );
    press(&mut app, "y");
    wait_for(&mut app, &mut events, "the refusal", |a| {
        a.diff_view().is_some_and(|v| v.refusal.is_some())
    })
    .await;
    let refusal = app.diff_view().unwrap().refusal.clone().unwrap();
    assert!(refusal.contains("no remote"), "{refusal}");

    press(&mut app, "d");
    app.select_task(&published);
    press(&mut app, "dPy");
    wait_for(&mut app, &mut events, "the pull request", |a| {
        a.snapshot()
            .tasks
            .iter()
            .any(|t| t.id == published && t.metadata.pull_request.is_some())
    })
    .await;
    let branch = git(bare.path(), &["for-each-ref", "--format=%(refname:short)"]);
    assert!(branch.starts_with("orchestra/fix2-"), "{branch}");
    // The worktree stays, and so does its view; closed, the details pane shows the address.
    assert!(app.diff_view().is_some_and(|v| v.refusal.is_none()));
    press(&mut app, "d");
    let shown = screen(&mut app, w, h);
    assert!(shown.contains(FAKE_PR_URL), "{shown}");
}

/// The view of a task that still runs: `M` says to wait; when the agent finishes, the view
/// reads the diff again by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_tasks_view_follows_it_to_the_end() {
    let s = Server::start();
    let r = git_repo();
    let repo = r.path();
    let created = s.post(
        TASKS,
        json!({
            "name": "Slow",
            "description": "echo early > early.txt && while [ ! -e go ]; do sleep 0.05; done && echo late > late.txt",
            "providerId": "exec",
            "workingDirectory": repo,
            "isolation": "worktree",
        }),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.json()["task"]["id"].as_str().unwrap().to_string();
    let started = s.post_empty(&format!("{TASKS}/{id}/start"));
    assert_eq!(started.status, 200, "{}", started.body);
    let path = started.json()["task"]["metadata"]["worktree"]["path"]
        .as_str()
        .map(PathBuf::from)
        .expect("a worktree");
    assert!(
        wait_until(Duration::from_secs(20), || path.join("early.txt").exists()),
        "the agent never wrote"
    );
    let cockpit = attach(&s);
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    screen(&mut app, 100, 30);
    app.select_task(&id);
    press(&mut app, "d");
    let paths = |a: &App| -> Vec<String> {
        a.diff_view()
            .map(|v| v.files().iter().map(|f| f.path.clone()).collect())
            .unwrap_or_default()
    };
    wait_for(&mut app, &mut events, "the diff so far", |a| {
        paths(a) == ["early.txt"]
    })
    .await;
    press(&mut app, "M");
    assert!(
        matches!(app.modal, Modal::None),
        "no question while it runs"
    );
    let shown = screen(&mut app, 100, 30);
    assert!(shown.contains("once it has finished"), "{shown}");
    std::fs::write(path.join("go"), "").unwrap();
    wait_for(&mut app, &mut events, "the diff at the end", |a| {
        paths(a) == ["early.txt", "go", "late.txt"]
    })
    .await;
}
