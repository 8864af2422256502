use orchestra::cli::{Command, print_completions, write_man};
use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(instance) = orchestra::cli::guard::invoked() {
        return orchestra::cli::guard::run(&instance);
    }
    let cli = orchestra::cli::parse();
    match &cli.command {
        Some(Command::Completions { shell }) => {
            print_completions(*shell);
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
            Some(Command::Serve(args)) => orchestra::cli::serve::run(args).await,
            None => orchestra::tui::run(&cli.server).await,
            // Client subcommands, completions and man returned above.
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
