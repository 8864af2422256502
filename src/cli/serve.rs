//! `orchestra serve`: a running orchestra without the TUI (the daemon the TUI attaches to).

use super::ServerArgs;
use anyhow::Result;
use orchestra_daemon::boot;
use std::io::Write;

/// `orchestra serve`: runs until a signal or a stop request, then stops gracefully.
pub async fn run(args: &ServerArgs) -> Result<()> {
    let mut running = boot::start(&args.options()).await?;
    if args.insecure_no_auth {
        eprintln!("orchestra: {}", boot::insecure_warning(&args.options()));
    }
    if let Some(notice) = running.state.tightened_notice() {
        eprintln!("orchestra: {notice}");
    }
    let serving = running.serve()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "orchestra listening on {}", running.listening)?;
        out.flush()?;
    }
    running.stop_when_served(serving).await;
    Ok(())
}
