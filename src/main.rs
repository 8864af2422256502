use clap::Parser;
use orchestra::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Guard { instance }) = &cli.command {
        return orchestra::cli::guard::run(instance);
    }
    // Client subcommands are blocking HTTP calls: no runtime.
    if let Some(code) = orchestra::cli::client::run(&cli) {
        return code;
    }
    // More workers than cores: a stray blocking call must not stall the API or the TUI.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("orchestra: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match &cli.command {
            Some(Command::Serve) => orchestra::cli::serve::run(&cli.server).await,
            None => orchestra::tui::run(&cli.server).await,
            // Client subcommands and the guard returned above, before the runtime started.
            Some(_) => Ok(()),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orchestra: {e:#}");
            ExitCode::FAILURE
        }
    }
}
