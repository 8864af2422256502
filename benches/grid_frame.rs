//! The grid's frame (issue 13's budget: 16 agents at 240×70, all flooding, each frame under
//! 8 ms): the app over an in-memory cockpit whose 16 screens take a burst of coloured output
//! before every frame, drawn into a ratatui `TestBackend` of 240×70. Times the draw alone (the
//! app's update, layout and the 16 tiles' cells), not the terminal's output nor the parsing.
//!
//! `cargo bench --bench grid_frame`; knobs `GRID_AGENTS` (16), `GRID_FRAMES` (300),
//! `GRID_LINES` (lines of output per agent per frame, 40). Without `--bench` (as `cargo test
//! --all-targets` runs it) it is a small smoke run. Figures are recorded in BENCHMARKS.md.

mod support;

use orchestra_daemon::engine::{SessionInfo, SessionStatus};
use orchestra_proto::task::{NewTask, Task, TaskStatus};
use orchestra_tui::App;
use orchestra_tui::backend::Snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{MemoryCockpit, env_num};

fn agents(n: usize) -> MemoryCockpit {
    let now = 1_800_000_000_000;
    let mut snap = Snapshot::default();
    let mut screens = HashMap::new();
    for i in 0..n {
        let (tid, sid) = (format!("t{i:02}"), format!("s{i:02}"));
        let mut t = Task::new(
            tid.clone(),
            NewTask {
                name: format!("agent {i}"),
                description: "flood".into(),
                provider_id: "shell".into(),
                working_directory: "/".into(),
                required_capabilities: vec![],
                retry_of: None,
                approval: None,
                ..Default::default()
            },
            now,
        );
        t.metadata.status = TaskStatus::Running;
        t.metadata.started_at = Some(now);
        t.metadata.session_id = Some(sid.clone());
        snap.tasks.push(Arc::new(t));
        snap.sessions.push(SessionInfo {
            id: sid.clone(),
            provider_id: "shell".into(),
            task: "flood".into(),
            working_directory: "/".into(),
            pid: 1,
            status: SessionStatus::Busy,
            ended: false,
            exit_code: None,
            signal: None,
            cols: 80,
            rows: 24,
            created_at: now,
            ended_at: None,
            task_id: Some(tid),
            approval: Default::default(),
            prompt: None,
            resets_at: None,
            status_source: Default::default(),
            transcript: None,
        });
        screens.insert(sid, vt100::Parser::new(24, 80, 0));
    }
    MemoryCockpit::new(snap, screens)
}

fn main() {
    let bench = support::bench_mode("grid_frame");
    let n = env_num("GRID_AGENTS", 16) as usize;
    let frames = env_num("GRID_FRAMES", if bench { 300 } else { 10 }) as usize;
    let lines = env_num("GRID_LINES", 40);
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("no runtime");
        return;
    };
    let _guard = rt.enter();
    let cockpit = Arc::new(agents(n));
    let mut app = App::new(cockpit.clone());
    app.color = true;
    // A test backend cannot fail.
    let Ok(mut term) = Terminal::new(TestBackend::new(240, 70));
    app.on_terminal_event(crossterm::event::Event::Key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('v'),
            crossterm::event::KeyModifiers::NONE,
        ),
    ));
    let mut times = Vec::with_capacity(frames);
    let mut k = 0u64;
    for _ in 0..frames {
        for p in cockpit.screens.lock().values_mut() {
            for _ in 0..lines {
                k += 1;
                p.process(
                    format!(
                        "\x1b[3{c}m[{k:09}]\x1b[0m building unit {k} of the flood, \x1b[1mbold\x1b[0m {k:x}\r\n",
                        c = k % 7 + 1
                    )
                    .as_bytes(),
                );
            }
        }
        let start = Instant::now();
        if term.draw(|f| app.draw(f)).is_err() {
            eprintln!("draw failed");
            return;
        }
        times.push(start.elapsed());
        rt.block_on(tokio::task::yield_now());
    }
    let tiles = app.grid_page().map_or(0, |p| p.tiles.len());
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "grid of {n} agents ({tiles} tiles) at 240×70, {lines} lines each per frame, {frames} frames: draw median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(0.99)),
        ms(times[times.len() - 1])
    );
}
