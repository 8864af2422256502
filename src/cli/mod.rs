//! Command-line definitions. With no subcommand `orchestra` opens the TUI.

pub mod client;
pub mod guard;
pub mod serve;

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "orchestra",
    version,
    about = "A terminal cockpit for coding agents: run Claude Code, Codex, Gemini CLI, Aider, OpenCode or a shell as subagents in real terminals, each task with a lifecycle, steps, progress and a result.",
    long_about = None
)]
pub struct Cli {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags of a running orchestra (the TUI and `serve` alike).
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address the HTTP API listens on; port 0 picks a free one.
    #[arg(
        long,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:0",
        global = true
    )]
    pub addr: SocketAddr,
    /// Where the database, transcripts, logs and server.json live
    /// [default: $XDG_DATA_HOME/orchestra, else ~/.local/share/orchestra].
    #[arg(long, value_name = "DIR", env = "ORCHESTRA_STATE_DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// Require `Authorization: Bearer TOKEN` on every request (required off loopback).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "ORCHESTRA_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<String>,
    /// Config file with providers and defaults [default: $XDG_CONFIG_HOME/orchestra/config.toml].
    #[arg(long, value_name = "FILE", env = "ORCHESTRA_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Provider for sessions and tasks that name none (e.g. shell, claude).
    #[arg(
        long,
        value_name = "ID",
        env = "ORCHESTRA_DEFAULT_PROVIDER",
        global = true
    )]
    pub default_provider: Option<String>,
    /// At most this many tasks run at once under autopilot.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024), global = true)]
    pub max_concurrent: u32,
    /// At most this many live sessions; more are refused with 429.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096), global = true)]
    pub max_sessions: u32,
    /// Seconds a session gets between SIGTERM and SIGKILL when it is ended.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, global = true)]
    pub grace: f64,
    /// Cap on each session's raw transcript file, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64, global = true)]
    pub transcript_cap_mib: u64,
    /// Also answer requests whose Host is NAME (repeatable; `*` allows any). Loopback names always work.
    #[arg(long, value_name = "NAME", global = true)]
    pub allow_host: Vec<String>,
    /// Also answer browser pages of ORIGIN, e.g. http://localhost:3000 (repeatable). Pages of any
    /// other site are refused: they must not be able to run commands.
    #[arg(
        long,
        value_name = "ORIGIN",
        env = "ORCHESTRA_ALLOW_ORIGINS",
        value_delimiter = ',',
        global = true
    )]
    pub allow_origin: Vec<String>,
    /// Log to stderr too (the log file in the state directory is always written).
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the engine and HTTP API without the TUI, until SIGTERM or SIGINT.
    Serve,
    /// Add, list, show, start, pause, resume, cancel and retry tasks of a running orchestra.
    Task(client::TaskArgs),
    /// List, spawn, type into, peek at and kill sessions (subagents) of a running orchestra.
    Session(client::SessionArgs),
    /// Report on a task from inside it: steps, progress, output and the result.
    Report(client::ReportArgs),
    /// Show a running orchestra's state: autopilot, task counts, sessions, uptime.
    Status(client::StatusArgs),
    /// Internal: the guard process that ends sessions if orchestra is killed.
    #[command(name = "__guard", hide = true)]
    Guard { instance: String },
}
