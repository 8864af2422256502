mod cli;

use cli::{Command, print_completions, write_man};
use std::process::ExitCode;

fn main() -> ExitCode {
    orchestra_daemon::session::use_an_arena_per_thread();
    if let Some(instance) = orchestra_daemon::guard::invoked() {
        return orchestra_daemon::guard::run(&instance);
    }
    let cli = cli::parse();
    match &cli.command {
        Some(Command::Completions { shell }) => {
            print_completions(*shell);
            return ExitCode::SUCCESS;
        }
        Some(Command::Openapi) => {
            print!("{}", orchestra_daemon::api::openapi::document_text());
            return ExitCode::SUCCESS;
        }
        Some(Command::Man { dir }) => {
            return match write_man(dir.as_deref()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("orchestra: cannot write the manual page: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        _ => {}
    }
    // Client subcommands are blocking HTTP calls: no runtime.
    if let Some(code) = cli::client::run(&cli) {
        return code;
    }
    // The server: more workers than cores, so a stray blocking call does not stall the API.
    // The TUI: everything async on the UI thread itself (its sockets carry little; parsing
    // and drawing have threads of their own, blocking calls the blocking pool), so a key
    // goes from the UI's handling to the daemon's socket without waking another thread.
    let built = match cli.command {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build(),
    };
    let runtime = match built {
        Ok(r) => r,
        Err(e) => {
            eprintln!("orchestra: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match &cli.command {
            Some(Command::Serve(args)) => cli::serve::run(args).await,
            Some(Command::Mcp(args)) => cli::mcp::run(&cli.global, args).await,
            // Nothing is started for a TUI that cannot run.
            None => {
                async {
                    orchestra_tui::needs_terminal()?;
                    let keys = orchestra_tui::load_keys(cli.server.config.as_deref())?;
                    let alerts = orchestra_tui::load_notify(cli.server.config.as_deref())?;
                    orchestra_tui::run(attach_target(&cli).await?, keys, alerts).await
                }
                .await
            }
            // Client subcommands, completions and man returned above.
            Some(_) => Ok(()),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orchestra: {}", error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes in one line, each cause said once: most of our errors already
/// quote their cause, which `{:#}` would repeat.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// The orchestra `orchestra` (no subcommand) attaches to: `--url`'s, else the state
/// directory's, started now (detached) when none runs.
async fn attach_target(cli: &cli::Cli) -> anyhow::Result<orchestra_tui::Target> {
    use anyhow::Context;
    if let Some(url) = cli.client.url.as_deref().filter(|u| !u.trim().is_empty()) {
        let url = if url.contains("://") {
            url.trim_end_matches('/').to_string()
        } else {
            format!("http://{}", url.trim_end_matches('/'))
        };
        // The token given, else this machine's orchestra's when `url` is its own.
        let token = cli.server.token.clone().or_else(|| {
            orchestra_sys::state_dir::resolve(cli.server.state_dir.as_deref())
                .ok()
                .and_then(|dir| orchestra_client::daemon::token_for_url(&dir, &url))
        });
        return Ok(orchestra_tui::Target {
            come_back: format!("orchestra --url {url}"),
            url,
            token,
            state_dir: None,
        });
    }
    let dir = orchestra_sys::state_dir::resolve(cli.server.state_dir.as_deref())
        .context("cannot find the state directory")?;
    let serve_args = cli.server.serve_args();
    let token = cli.server.token.clone();
    let found = dir.clone();
    let (endpoint, _started) = tokio::task::spawn_blocking(move || {
        orchestra_client::daemon::find_or_start(&found, &serve_args, token.as_deref())
    })
    .await
    .context("starting orchestra failed")??;
    Ok(orchestra_tui::Target {
        url: endpoint.url,
        token: endpoint.token,
        state_dir: Some(dir),
        come_back: "orchestra".into(),
    })
}
