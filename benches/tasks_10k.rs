//! 10,000 tasks (issue 14's budgets: the API's list p99 under 10 ms, a TUI frame under 4 ms).
//!
//! API: the real `orchestra serve` (the release binary cargo builds for benches;
//! `ORCHESTRA_BIN` picks another) on a fresh state directory, filled with `TASKS_10K` tasks
//! (10,000) through the API by 8 clients at once, every tenth completed; then, one client on
//! a keep-alive connection, sequential requests: `?limit=50` (the page a client shows),
//! `?status=completed&limit=50` (a filter that walks the whole list) and the whole list.
//! TUI: the app over an in-memory cockpit holding as many tasks, drawn into a ratatui
//! `TestBackend` of 200×50, the selection moving one row per frame (the draw alone: not the
//! terminal's output, nor fetching the list).
//!
//! `cargo bench --bench tasks_10k`. Without `--bench` (as `cargo test --all-targets` runs it)
//! it is a smoke run with 300 tasks that judges nothing. Figures are in BENCHMARKS.md.

mod support;

use orchestra_proto::task::{NewTask, Task, TaskStatus};
use orchestra_tui::App;
use orchestra_tui::backend::Snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{MemoryCockpit, env_num, json_call};

/// The server under test; SIGTERMed and reaped when dropped.
struct Server {
    child: Child,
    url: String,
    _state: tempfile::TempDir,
}

impl Server {
    fn start() -> Option<Server> {
        let state = tempfile::tempdir().ok()?;
        let (child, addr) = support::spawn_serve(state.path(), &[])?;
        Some(Server {
            child,
            url: format!("http://{addr}"),
            _state: state,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: our own child, not reaped yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `n` tasks through the API, 8 clients at once; every tenth is completed.
fn fill(url: &str, n: usize) {
    let clients = 8;
    std::thread::scope(|s| {
        for c in 0..clients {
            s.spawn(move || {
                let http = support::http_agent();
                for i in (c..n).step_by(clients) {
                    let t = json_call(
                        &http,
                        "POST",
                        &format!("{url}/api/coding-agents/tasks"),
                        Some(json!({"name": format!("task {i}"), "description": "seeded"})),
                    );
                    if i % 10 == 0
                        && let Some(id) = t["task"]["id"].as_str()
                    {
                        let _ = http
                            .patch(format!("{url}/api/coding-agents/tasks/{id}"))
                            .header("Content-Type", "application/json")
                            .send(r#"{"status":"completed"}"#);
                    }
                }
            });
        }
    });
}

struct Figures {
    what: String,
    p50: f64,
    p99: f64,
    max: f64,
    bytes: usize,
}

/// `count` sequential GETs of `path` on one keep-alive connection.
fn time_gets(url: &str, path: &str, count: usize) -> Figures {
    let http = support::http_agent();
    let mut times = Vec::with_capacity(count);
    let mut bytes = 0;
    for _ in 0..count {
        let start = Instant::now();
        let body = http
            .get(format!("{url}{path}"))
            .call()
            .ok()
            .and_then(|mut r| {
                r.body_mut()
                    .with_config()
                    .limit(1 << 30)
                    .read_to_string()
                    .ok()
            })
            .unwrap_or_default();
        times.push(start.elapsed());
        bytes = body.len();
    }
    summary(format!("GET {path}"), times, bytes)
}

fn summary(what: String, mut times: Vec<Duration>, bytes: usize) -> Figures {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| ms(times[((times.len() - 1) as f64 * q) as usize]);
    Figures {
        what,
        p50: at(0.5),
        p99: at(0.99),
        max: ms(times[times.len() - 1]),
        bytes,
    }
}

fn tui_frames(n: usize, frames: usize) -> Option<Figures> {
    let now = 1_800_000_000_000;
    let mut snap = Snapshot::default();
    for i in 0..n {
        let mut t = Task::new(
            format!("t{i:05}"),
            NewTask {
                name: format!("task {i} with a name of a usual length"),
                description: "seeded".into(),
                provider_id: "shell".into(),
                working_directory: "/".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                ..Default::default()
            },
            now + i as i64,
        );
        if i % 10 == 0 {
            t.metadata.status = TaskStatus::Completed;
            t.metadata.started_at = Some(now);
            t.metadata.completed_at = Some(now + 60_000);
        }
        snap.tasks.push(Arc::new(t));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let _guard = rt.enter();
    let cockpit = Arc::new(MemoryCockpit::new(snap, Default::default()));
    let mut app = App::new(cockpit);
    app.color = true;
    let Ok(mut term) = Terminal::new(TestBackend::new(200, 50));
    let down = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Down,
        crossterm::event::KeyModifiers::NONE,
    ));
    let mut times = Vec::with_capacity(frames);
    for _ in 0..frames {
        app.on_terminal_event(down.clone());
        let start = Instant::now();
        term.draw(|f| app.draw(f)).ok()?;
        times.push(start.elapsed());
        rt.block_on(tokio::task::yield_now());
    }
    Some(summary(format!("TUI frame, {n} tasks, 200×50"), times, 0))
}

fn main() {
    let bench = support::bench_mode("tasks_10k");
    let n = env_num("TASKS_10K", if bench { 10_000 } else { 300 }) as usize;
    let reps = if bench { 1 } else { 0 };
    let Some(server) = Server::start() else {
        eprintln!("tasks_10k: cannot start orchestra serve");
        std::process::exit(1);
    };
    let started = Instant::now();
    fill(&server.url, n);
    let filled = started.elapsed();
    let listed = json_call(
        &support::http_agent(),
        "GET",
        &format!("{}/api/coding-agents/tasks?limit=1", server.url),
        None,
    );
    let total = json_call(
        &support::http_agent(),
        "GET",
        &format!("{}/api/coding-agents/status", server.url),
        None,
    )["tasks"]["total"]
        .as_u64()
        .unwrap_or(0);
    if listed.is_null() || total != n as u64 {
        eprintln!("tasks_10k: the server holds {total} tasks, not {n}");
        std::process::exit(1);
    }
    let scale = |full: usize| if reps == 1 { full } else { 5 };
    let mut rows = vec![
        time_gets(
            &server.url,
            "/api/coding-agents/tasks?limit=50",
            scale(2000),
        ),
        time_gets(
            &server.url,
            "/api/coding-agents/tasks?status=completed&limit=50",
            scale(1000),
        ),
        time_gets(&server.url, "/api/coding-agents/tasks", scale(100)),
    ];
    drop(server);
    match tui_frames(n, if bench { 500 } else { 20 }) {
        Some(f) => rows.push(f),
        None => {
            eprintln!("tasks_10k: the TUI frames could not be drawn");
            std::process::exit(1);
        }
    }
    println!(
        "{n} tasks created through the API in {:.1} s\n\n| what | p50 ms | p99 ms | max ms | body |\n|---|---|---|---|---|",
        filled.as_secs_f64()
    );
    for r in rows {
        let body = if r.bytes > 0 {
            format!("{:.1} KiB", r.bytes as f64 / 1024.0)
        } else {
            "–".into()
        };
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {body} |",
            r.what, r.p50, r.p99, r.max
        );
    }
}
