//! The terminal UI: what `orchestra` with no subcommand opens.
//!
//! The engine runs in-process and the HTTP API is served beside it; the UI reaches the engine
//! only through [`backend::Cockpit`].
//!
//! The loop: input (a thread blocked in `crossterm::event::read`), engine events and command
//! results arrive on channels; each wake-up drains every pending message, then draws at most
//! once, and never more often than every 16 ms. Nothing runs while nothing changes: the only
//! timer is the one-second tick while a task runs (its elapsed time) or a notice is shown.

pub mod app;
mod app_manage;
mod app_transcript;
pub mod backend;
pub mod form;
pub mod form_view;
pub mod keymap;
pub mod keys;
pub mod list_prefs;
pub mod term_view;
pub mod text_edit;
pub mod transcript_view;
pub mod view;

pub use app::App;
pub use backend::{Cockpit, EngineCockpit};

use crate::cli::ServerArgs;
use crate::cli::serve;
use anyhow::{Context, Result};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{IsTerminal, Stdout};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Shortest time between two frames.
const FRAME: Duration = Duration::from_millis(16);

/// Puts the terminal back as it was. Safe to call more than once.
pub fn restore_terminal() {
    let mut out = std::io::stdout();
    let _ = crossterm::execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Owns the terminal's raw/alternate mode; restores it when dropped.
struct TerminalGuard {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl TerminalGuard {
    fn enter() -> Result<TerminalGuard> {
        enable_raw_mode().context("cannot put the terminal in raw mode")?;
        let mut out = std::io::stdout();
        if let Err(e) = crossterm::execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste
        ) {
            restore_terminal();
            return Err(e).context("cannot set up the terminal");
        }
        let terminal = match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
            Ok(t) => t,
            Err(e) => {
                restore_terminal();
                return Err(e).context("cannot set up the terminal");
            }
        };
        Ok(TerminalGuard { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// A panic on the UI thread restores the terminal before the message is printed. A panic
/// elsewhere (a background task, which tokio contains) is logged instead of printed over
/// the screen, and the UI goes on.
fn install_panic_hook() {
    let ui = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui {
            restore_terminal();
            previous(info);
        } else {
            tracing::error!(panic = %info, "background panic");
        }
    }));
}

/// Reads terminal input on its own thread (blocking: no polling) into a channel.
fn spawn_input_thread() -> mpsc::Receiver<crossterm::event::Event> {
    let (tx, rx) = mpsc::channel(1024);
    let _ = std::thread::Builder::new()
        .name("tui-input".into())
        .spawn(move || {
            while let Ok(ev) = crossterm::event::read() {
                if tx.blocking_send(ev).is_err() {
                    break;
                }
            }
        });
    rx
}

/// `orchestra` with no subcommand: engine + API + TUI until the user quits.
pub async fn run(args: &ServerArgs) -> Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("the TUI needs a terminal; run `orchestra serve` for the API without it");
    }
    // The TUI owns the screen: logs go to the file only, even with -v.
    let args = ServerArgs {
        verbose: false,
        ..args.clone()
    };
    let mut running = serve::start(&args).await?;
    let listener = running.listener.take().context("listener already taken")?;
    let router = crate::api::router(running.engine.clone(), running.access.clone());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let closing = running.engine.clone();
    let server = tokio::spawn(crate::api::serve(listener, router, async move {
        let _ = stop_rx.await;
        closing.begin_shutdown();
    }));

    install_panic_hook();
    let cockpit: Arc<dyn Cockpit> = Arc::new(EngineCockpit::new(running.engine.clone()));
    let outcome = match TerminalGuard::enter() {
        Ok(mut guard) => {
            let r = event_loop(&mut guard.terminal, cockpit).await;
            // Say what is happening while agents are ended (up to the grace period).
            let live = running.engine.session_counts().0;
            if live > 0 {
                let _ = guard.terminal.draw(|f| {
                    let area = f.area();
                    let msg = format!("Ending {live} agent{}…", if live == 1 { "" } else { "s" });
                    f.render_widget(
                        ratatui::widgets::Paragraph::new(msg)
                            .alignment(ratatui::layout::Alignment::Center),
                        ratatui::layout::Rect::new(
                            area.x,
                            area.y + area.height / 2,
                            area.width,
                            1.min(area.height),
                        ),
                    );
                });
            }
            running.engine.begin_shutdown();
            let _ = stop_tx.send(());
            running.shutdown().await;
            drop(guard);
            r
        }
        Err(e) => {
            let _ = stop_tx.send(());
            running.shutdown().await;
            Err(e)
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    outcome
}

/// Runs the app on a terminal until it quits (or SIGTERM/SIGHUP arrives).
pub async fn event_loop<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    cockpit: Arc<dyn Cockpit>,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    let mut results = app.take_results().context("results taken")?;
    let mut input = spawn_input_thread();
    let term_signal = crate::cli::serve::termination();
    tokio::pin!(term_signal);
    let mut last_frame: Option<Instant> = None;
    loop {
        // Draw when something changed, at most once per FRAME.
        let mut frame_due: Option<Instant> = None;
        if app.dirty {
            let due = last_frame.map_or(Instant::now(), |t| t + FRAME);
            if due <= Instant::now() {
                terminal.draw(|f| app.draw(f))?;
                last_frame = Some(Instant::now());
            } else {
                frame_due = Some(due);
            }
        }
        if app.should_quit() {
            break;
        }
        let wake = match (frame_due, app.next_wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            ev = input.recv() => match ev {
                Some(ev) => app.on_terminal_event(ev),
                None => break,
            },
            _ = &mut term_signal => {
                app.request_quit_now();
            }
            m = results.recv() => {
                if let Some(m) = m {
                    app.on_result(m);
                }
            }
            ev = events.recv() => app.on_engine(ev),
            _ = sleep => {
                if frame_due.is_none_or(|d| d > Instant::now()) {
                    app.on_tick();
                }
            }
        }
        // Drain everything pending before the next frame; keys first.
        while let Ok(ev) = input.try_recv() {
            app.on_terminal_event(ev);
        }
        while let Ok(m) = results.try_recv() {
            app.on_result(m);
        }
        loop {
            match events.try_recv() {
                Ok(ev) => app.on_engine(Ok(ev)),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(n)) => {
                    app.on_engine(Err(tokio::sync::broadcast::error::RecvError::Lagged(n)))
                }
                Err(_) => break,
            }
        }
        if let Some(t) = app.next_wake()
            && t <= Instant::now()
        {
            app.on_tick();
        }
    }
    Ok(())
}
