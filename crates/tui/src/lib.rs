//! The terminal UI: what `orchestra` with no subcommand opens.
//!
//! The TUI is a client of a running orchestra (the daemon of a state directory, or any
//! orchestra by URL): it reaches it only through [`backend::Cockpit`], implemented over the
//! API by [`RemoteCockpit`] (the tests also drive the app over an in-process engine).
//!
//! The loop: input (a thread blocked in `crossterm::event::read`), engine events and command
//! results arrive on channels; each wake-up drains every pending message, then draws at most
//! once: at once after a quiet spell, at most every 16 ms while changes keep coming
//! ([`frame`]). Nothing runs while nothing changes: the only timer is the tick of a running
//! task's elapsed time (when its shown text changes) or a notice's expiry.

pub mod app;
pub mod attention;
pub mod backend;
mod config_file;
pub mod diff_view;
pub mod form;
pub mod form_choices;
pub mod frame;
pub mod grid;
pub mod keymap;
pub mod keymap_config;
pub mod keys;
pub mod list_prefs;
pub mod notify;
pub mod remote;
pub mod term_view;
pub mod text_edit;
pub mod transcript_view;
mod update;
pub mod variant_compare;
pub mod views;

pub use app::App;
pub use backend::Cockpit;
pub use remote::RemoteCockpit;

use anyhow::{Context, Result};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use keymap::KeyMap;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{IsTerminal, Stdout, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

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
            orchestra_sys::niceness::mark_current_thread_as_key_path();
            while let Ok(ev) = crossterm::event::read() {
                if tx.blocking_send(ev).is_err() {
                    break;
                }
            }
        });
    rx
}

/// The orchestra the TUI attaches to.
pub struct Target {
    pub url: String,
    pub token: Option<String>,
    /// Its state directory when it was found there: after it went away the TUI looks for it
    /// there again (a restarted orchestra may listen on another port), and keeps its own
    /// small choices (the list's order) there.
    pub state_dir: Option<PathBuf>,
    /// What to tell the user to type to come back.
    pub come_back: String,
}

pub use config_file::{load_keys, load_notify};

/// `orchestra` with no subcommand: the TUI attached to a running orchestra, until the user
/// detaches (`q`, a lost terminal) or stops orchestra (`Q`). Agents run in orchestra, so
/// detaching ends none of them.
pub async fn run(target: Target, keys: KeyMap, alerts: notify::NotifyConfig) -> Result<()> {
    needs_terminal()?;
    let api = orchestra_client::http::Api::new(
        &target.url,
        target.token.clone(),
        orchestra_client::http::Caller::Tui,
    );
    let locate: remote::link::Locate = match target.state_dir.clone() {
        Some(dir) => Box::new(move || {
            orchestra_client::daemon::find(&dir).map(|e| {
                orchestra_client::http::Api::new(
                    &e.url,
                    e.token,
                    orchestra_client::http::Caller::Tui,
                )
            })
        }),
        None => Box::new(|| None),
    };
    let cockpit = {
        let api = api.clone();
        let dir = target.state_dir.clone();
        // The first reads are blocking HTTP calls.
        tokio::task::spawn_blocking(move || RemoteCockpit::attach(api, locate, dir))
            .await
            .context("attaching failed")?
            .map_err(|e| anyhow::anyhow!("cannot attach to orchestra at {}: {e}", target.url))?
    };
    let cockpit = Arc::new(cockpit);
    install_panic_hook();
    let mut guard = TerminalGuard::enter()?;
    let farewell = event_loop(&mut guard.terminal, cockpit.clone(), keys, alerts).await;
    drop(guard);
    let line = match farewell? {
        Some(line) => line,
        None => {
            // Counted now, by orchestra: what is still running as the user leaves.
            let api = cockpit.api();
            match tokio::task::spawn_blocking(move || remote::live_agents(&api)).await {
                Ok(Ok(n)) => format!(
                    "{n} agent{} still running; run `{}` to come back",
                    if n == 1 { "" } else { "s" },
                    target.come_back
                ),
                _ => format!(
                    "orchestra at {} is not answering; run `{}` to come back",
                    target.url, target.come_back
                ),
            }
        }
    };
    // The terminal may be gone (SIGHUP): nothing to say then, and no reason to fail.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    Ok(())
}

/// The TUI runs only in a terminal (checked before anything is started for it).
pub fn needs_terminal() -> Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("the TUI needs a terminal; run `orchestra serve` for the API without it");
    }
    Ok(())
}

/// Resolves on SIGTERM or SIGHUP (the terminal was lost): the TUI detaches.
fn termination() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let handlers = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    );
    async move {
        let (Ok(mut term), Ok(mut hup)) = handlers else {
            return std::future::pending::<()>().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
    }
}

/// Runs the app on a terminal until it quits (or SIGTERM/SIGHUP arrives); returns what to
/// print after (`None`: the user detached).
pub async fn event_loop<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    cockpit: Arc<dyn Cockpit>,
    keys: KeyMap,
    alerts: notify::NotifyConfig,
) -> Result<Option<String>>
where
    B::Error: Send + Sync + 'static,
{
    let mut events = cockpit.subscribe();
    let mut app = App::new(cockpit);
    app.keymap = keys;
    let mut results = app.take_results().context("results taken")?;
    let mut input = spawn_input_thread();
    // The UI thread hands every key to its stream's socket.
    orchestra_sys::niceness::mark_current_thread_as_key_path();
    let term_signal = termination();
    tokio::pin!(term_signal);
    let mut pacer = frame::FramePacer::default();
    loop {
        let frame_due = draw_when_due(terminal, &mut app, &mut pacer, &alerts)?;
        if app.should_quit() {
            break;
        }
        let wake = match (frame_due, app.next_wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = sleep_until(wake);
        let mut had_input = false;
        tokio::select! {
            biased;
            ev = input.recv() => match ev {
                Some(ev) => {
                    had_input = true;
                    app.on_terminal_event(ev);
                }
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
            had_input = true;
            app.on_terminal_event(ev);
        }
        if had_input {
            // What the keys typed into an agent goes up its socket before the next frame
            // is drawn (the sockets' tasks run on this thread).
            tokio::task::yield_now().await;
        }
        drain_results_and_events(&mut app, &mut results, &mut events);
        if let Some(t) = app.next_wake()
            && t <= Instant::now()
        {
            app.on_tick();
        }
    }
    Ok(app.farewell.take())
}

/// Draws a frame when something changed and the frame period allows (see `frame`), then
/// delivers the alerts it shows. When a frame is wanted but not yet allowed: when it is due.
fn draw_when_due<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    pacer: &mut frame::FramePacer,
    alerts: &notify::NotifyConfig,
) -> Result<Option<Instant>>
where
    B::Error: Send + Sync + 'static,
{
    let mut frame_due: Option<Instant> = None;
    if let Some(by) = app.frame_wanted_by() {
        let now = Instant::now();
        if by > now {
            frame_due = Some(pacer.earliest().map_or(by, |earliest| earliest.max(by)));
        } else if pacer.may_draw(now) {
            terminal.draw(|f| app.draw(f))?;
            // The period runs from the frame's start: counted from its end, every frame
            // took its own drawing and writing on top of the period.
            pacer.drawn(now);
            // After the frame, so the bell and the top bar's count come together.
            notify::deliver(alerts, &app.take_alerts(), &mut std::io::stdout());
        } else {
            frame_due = pacer.earliest();
        }
    }
    Ok(frame_due)
}

/// Sleeps until `wake`, or for ever without one.
async fn sleep_until(wake: Option<Instant>) {
    match wake {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

/// Hands the app every command result and engine event already waiting, without waiting.
fn drain_results_and_events(
    app: &mut App,
    results: &mut mpsc::UnboundedReceiver<app::AppMsg>,
    events: &mut tokio::sync::broadcast::Receiver<orchestra_proto::wire::Event>,
) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `tests/it/props_providers.rs`: a wrong `[notify]` entry was refused without the
    /// file's name, unlike a wrong `[keys]` entry.
    #[test]
    fn a_wrong_entry_of_either_tui_section_names_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        for text in [
            "[notify]\ndefault_provider = \"\"\n",
            "[keys]\nno_such_action = \"x\"\n",
        ] {
            std::fs::write(&path, text).expect("write");
            let errors = [load_notify(Some(&path)).err(), load_keys(Some(&path)).err()];
            let refused: Vec<_> = errors.into_iter().flatten().collect();
            assert_eq!(refused.len(), 1, "{text}: {refused:?}");
            let message = refused[0].to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
    }
}
