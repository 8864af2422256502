//! Command-line definitions. With no subcommand `orchestra` opens the TUI.
//!
//! Three kinds of flags: global ones (`--state-dir`, `--token`) that every command takes, before
//! or after its name; the server's flags, taken by the TUI (no subcommand) and by `serve`; and
//! the client's (`--url`, `--json`), taken by `task`, `session`, `report` and `status`, also
//! before the subcommand's name (`orchestra --url URL status`). [`parse`] checks that a flag given
//! before a subcommand is one that subcommand takes.

pub mod client;
pub mod hook;
pub mod mcp;
pub mod mcp_install;
pub mod serve;
pub mod token;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "orchestra",
    version,
    about = "A terminal cockpit for coding agents: run Claude Code, Codex, Gemini CLI, Aider, OpenCode or a shell as subagents in real terminals, each task with a lifecycle, steps, progress and a result.",
    long_about = None,
    // Before a subcommand these name the orchestra to talk to (`orchestra --url URL status`);
    // without one (the TUI) they are refused by `parse`.
    mut_arg("url", |a| a.global(false).help_heading(CLIENT_HEADING)),
    mut_arg("json", |a| a.global(false).help_heading(CLIENT_HEADING)),
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    // The TUI's flags (without a subcommand); `serve` has its own copy.
    #[command(flatten)]
    pub server: ServerArgs,
    // `--url`/`--json` given before a client subcommand; `parse` hands them to it.
    #[command(flatten)]
    pub client: client::ClientArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

const CLIENT_HEADING: &str = "Options of task, session, report, status and stop (also after them)";

/// Flags every command takes, before or after its name.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Where the database, transcripts, logs and server.json live
    /// [default: $XDG_DATA_HOME/orchestra, else ~/.local/share/orchestra].
    #[arg(long, value_name = "DIR", env = "ORCHESTRA_STATE_DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// The API token: what the TUI and `serve` require of every request (default: the state
    /// directory's own, which `orchestra token` prints), and what the client commands send
    /// (default: the one in server.json). Prefer the environment: a flag shows in `ps`.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "ORCHESTRA_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<String>,
}

/// Flags of a running orchestra (the TUI and `serve` alike).
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address the HTTP API listens on; port 0 picks a free one.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
    /// From the global `--state-dir` (filled in by [`parse`]).
    #[arg(skip)]
    pub state_dir: Option<PathBuf>,
    /// From the global `--token` (filled in by [`parse`]).
    #[arg(skip)]
    pub token: Option<String>,
    /// Config file with providers and defaults [default: $XDG_CONFIG_HOME/orchestra/config.toml].
    #[arg(long, value_name = "FILE", env = "ORCHESTRA_CONFIG")]
    pub config: Option<PathBuf>,
    /// Provider for sessions and tasks that name none (e.g. shell, claude).
    #[arg(long, value_name = "ID", env = "ORCHESTRA_DEFAULT_PROVIDER")]
    pub default_provider: Option<String>,
    /// At most this many tasks run at once under autopilot.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_concurrent: u32,
    /// At most this many live sessions; more are refused with 429.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_sessions: u32,
    /// Seconds a session gets between SIGTERM and SIGKILL when it is ended.
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    pub grace: f64,
    /// Cap on each session's raw transcript file, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub transcript_cap_mib: u64,
    /// Also answer requests whose Host is NAME (repeatable; `*` allows any). Loopback names always work.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Also answer browser pages of ORIGIN, e.g. http://localhost:3000 (repeatable). Pages of any
    /// other site are refused: they must not be able to run commands.
    #[arg(
        long,
        value_name = "ORIGIN",
        env = "ORCHESTRA_ALLOW_ORIGINS",
        value_delimiter = ','
    )]
    pub allow_origin: Vec<String>,
    /// Log to stderr too (the log file in the state directory is always written).
    #[arg(short, long)]
    pub verbose: bool,
    /// Require no token: every account on this machine can then run commands as you. For
    /// throwaway rigs only; refused with a non-loopback --addr.
    #[arg(long)]
    pub insecure_no_auth: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run orchestra in the foreground (the daemon `orchestra` attaches to) until SIGTERM,
    /// SIGINT, SIGHUP or `orchestra stop`.
    Serve(ServerArgs),
    /// Add, list, show, start, pause, resume, cancel, rerun, edit and delete tasks of a running orchestra.
    Task(client::TaskArgs),
    /// List, spawn, type into, peek at, kill and delete sessions (subagents) of a running orchestra.
    Session(client::SessionArgs),
    /// Report on a task from inside it: steps, progress, output and the result.
    Report(client::ReportArgs),
    /// Show a running orchestra's state: autopilot, task counts, sessions, uptime.
    Status(client::StatusArgs),
    /// Report a coding agent's hook event to the session it runs in (run by the agent's own
    /// hooks, which orchestra configures for each session; always exits 0).
    Hook(hook::HookArgs),
    /// Stop the running orchestra: every agent ended (its whole process group), their tasks
    /// cancelled, the state saved; returns once it has exited.
    Stop(client::StopArgs),
    /// Print the token that lets a client in (the TUI, the CLI and agents' hooks on this
    /// machine read it by themselves; give it to a client elsewhere as ORCHESTRA_TOKEN).
    #[command(after_long_help = TOKEN_HELP)]
    Token,
    /// Remove the worktrees of tasks finished longer ago than --older-than (a snapshot of
    /// each is kept first, and its branch) and print what that freed.
    Gc(client::GcArgs),
    /// Trust a repository's .orchestra.toml (its current content) so that its set-up may run;
    /// the tasks waiting on it proceed. --list shows what is trusted, --revoke takes it back.
    Trust(client::TrustArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    #[command(after_long_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell to complete for.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), or write one page per command into a directory.
    #[command(after_long_help = "Read it with: orchestra man | man -l -")]
    Man {
        /// Write orchestra.1, orchestra-task.1, … into this directory instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Serve orchestra's tools over MCP on stdin/stdout, for a coding agent to hand work to
    /// other agents: create tasks, wait for them, read their output and diffs, merge them.
    Mcp(mcp::McpArgs),
    /// Print the OpenAPI 3.1 document of the HTTP API (what `GET /api/openapi.json` serves).
    #[command(
        after_long_help = "Regenerate the committed copy: orchestra openapi > docs/openapi.json"
    )]
    Openapi,
}

const TOKEN_HELP: &str = "\
Only the account that runs orchestra (and root) can read it: it is kept 0600 in the 0700 state
directory. E.g. attach a TUI to an orchestra on another machine through an ssh tunnel:
  ssh -N -L 4000:127.0.0.1:4000 host &
  ORCHESTRA_TOKEN=$(ssh host orchestra token) orchestra --url 127.0.0.1:4000";

const COMPLETIONS_HELP: &str = "\
Install:
  bash  orchestra completions bash > ~/.local/share/bash-completion/completions/orchestra
  zsh   orchestra completions zsh > ~/.zfunc/_orchestra   (with fpath+=~/.zfunc before compinit)
  fish  orchestra completions fish > ~/.config/fish/completions/orchestra.fish";

/// Parses the command line (exiting with clap's usage error, code 2, when it is wrong).
pub fn parse() -> Cli {
    let matches = Cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Err(message) = check_placement(&cli, &matches) {
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, message)
            .exit();
    }
    cli.distribute(&matches);
    cli
}

/// The long flags of an `Args` struct that were given on the command line of `matches`.
fn given<A: Args>(matches: &ArgMatches) -> Vec<String> {
    A::augment_args(clap::Command::new("flags"))
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// A flag given before a subcommand must be one that subcommand takes.
fn check_placement(cli: &Cli, matches: &ArgMatches) -> Result<(), String> {
    let server_flags = given::<ServerArgs>(matches);
    let client_flags = given::<client::ClientArgs>(matches);
    let name = matches.subcommand_name().unwrap_or_default();
    match &cli.command {
        // `orchestra --url URL`: the TUI attached to that orchestra.
        None => match client_flags.iter().find(|f| *f != "--url") {
            Some(flag) => Err(format!(
                "{flag} is a flag of the task, session, report, status and stop commands (e.g. `orchestra {flag} … status`); without a command orchestra opens the TUI"
            )),
            None if client_flags.is_empty() || server_flags.is_empty() => Ok(()),
            None => Err(format!(
                "{} starts an orchestra; with --url the TUI attaches to one that runs already",
                server_flags.join(", ")
            )),
        },
        Some(Command::Serve(_)) => match (server_flags.first(), client_flags.first()) {
            (Some(flag), _) => Err(format!(
                "`serve` takes its flags after its name: `orchestra serve {flag} …`"
            )),
            (None, Some(flag)) => Err(format!(
                "`serve` does not take {flag} (a flag of the task, session, report, status and stop commands)"
            )),
            (None, None) => Ok(()),
        },
        Some(
            Command::Task(_)
            | Command::Session(_)
            | Command::Report(_)
            | Command::Status(_)
            | Command::Stop(_)
            | Command::Gc(_)
            | Command::Trust(_),
        ) => match server_flags.first() {
            Some(flag) => Err(format!(
                "`{name}` does not take {flag} (a flag of the TUI and of `orchestra serve`)"
            )),
            None => Ok(()),
        },
        Some(
            Command::Completions { .. }
            | Command::Man { .. }
            | Command::Hook(_)
            | Command::Mcp(_)
            | Command::Openapi
            | Command::Token,
        ) => match server_flags.first().or(client_flags.first()) {
            Some(flag) => Err(format!("`{name}` does not take {flag}")),
            None => Ok(()),
        },
    }
}

impl ServerArgs {
    /// The daemon's options, as these flags say.
    pub fn options(&self) -> orchestra_daemon::boot::ServeOptions {
        orchestra_daemon::boot::ServeOptions {
            addr: self.addr,
            state_dir: self.state_dir.clone(),
            token: self.token.clone(),
            config: self.config.clone(),
            default_provider: self.default_provider.clone(),
            max_concurrent: self.max_concurrent,
            max_sessions: self.max_sessions,
            grace: self.grace,
            transcript_cap_mib: self.transcript_cap_mib,
            allow_host: self.allow_host.clone(),
            allow_origin: self.allow_origin.clone(),
            verbose: self.verbose,
            insecure_no_auth: self.insecure_no_auth,
        }
    }

    /// The flags that make `orchestra serve` run as these say (the TUI starts its daemon
    /// with them). Never the token: it goes through the environment, where `ps` does not
    /// show it (see `daemon::find_or_start`).
    pub fn serve_args(&self) -> Vec<String> {
        let mut out = vec![
            "--addr".to_string(),
            self.addr.to_string(),
            "--max-concurrent".into(),
            self.max_concurrent.to_string(),
            "--max-sessions".into(),
            self.max_sessions.to_string(),
            "--grace".into(),
            self.grace.to_string(),
            "--transcript-cap-mib".into(),
            self.transcript_cap_mib.to_string(),
        ];
        let mut flag = |name: &str, value: &str| {
            out.push(name.to_string());
            out.push(value.to_string());
        };
        if let Some(c) = &self.config {
            flag("--config", &c.to_string_lossy());
        }
        if let Some(p) = &self.default_provider {
            flag("--default-provider", p);
        }
        for h in &self.allow_host {
            flag("--allow-host", h);
        }
        for o in &self.allow_origin {
            flag("--allow-origin", o);
        }
        if self.insecure_no_auth {
            out.push("--insecure-no-auth".into());
        }
        out
    }
}

impl Cli {
    /// Hands the global flags to the server flags, and client flags given before a client
    /// subcommand to it. The command line wins over the environment, and after the
    /// subcommand over before it.
    fn distribute(&mut self, matches: &ArgMatches) {
        self.server.state_dir = self.global.state_dir.clone();
        self.server.token = self.global.token.clone();
        let top = &self.client;
        let client = match &mut self.command {
            Some(Command::Serve(s)) => {
                s.state_dir = self.global.state_dir.clone();
                s.token = self.global.token.clone();
                return;
            }
            Some(Command::Task(a)) => &mut a.client,
            Some(Command::Session(a)) => &mut a.client,
            Some(Command::Report(a)) => &mut a.client,
            Some(Command::Status(a)) => &mut a.client,
            Some(Command::Stop(a)) => &mut a.client,
            Some(Command::Gc(a)) => &mut a.client,
            Some(Command::Trust(a)) => &mut a.client,
            _ => return,
        };
        let from_command_line =
            |m: &ArgMatches| m.value_source("url") == Some(ValueSource::CommandLine);
        let after = matches
            .subcommand()
            .is_some_and(|(_, sub)| from_command_line(sub));
        if client.url.is_none() || (from_command_line(matches) && !after) {
            client.url = top.url.clone();
        }
        client.json |= top.json;
    }
}

/// `orchestra completions SHELL`: the script on stdout.
pub fn print_completions(shell: clap_complete::Shell) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "orchestra", &mut std::io::stdout());
}

/// `orchestra man [--dir DIR]`: the top page on stdout, or one page per command into `dir`.
pub fn write_man(dir: Option<&std::path::Path>) -> std::io::Result<()> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Built, subcommands know their full names (`orchestra-task-add`) and global flags.
    cmd.build();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            write_man_pages(&cmd, dir)
        }
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&man_page(&cmd)?)?;
            stdout.flush()
        }
    }
}

fn write_man_pages(cmd: &clap::Command, dir: &std::path::Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_man_pages(sub, dir)?;
    }
    let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name());
    std::fs::write(dir.join(format!("{name}.1")), man_page(cmd)?)
}

/// One command's page. The `.TH` title line comes first (as in hand-written pages and as
/// `file`/`whatis` expect); the string definitions clap_mangen puts before it follow it.
fn man_page(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .source(concat!("orchestra ", env!("CARGO_PKG_VERSION")))
        .render(&mut page)?;
    let text = String::from_utf8_lossy(&page);
    let (title, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with(".TH "));
    let mut out = title.join("\n");
    for line in rest {
        out.push('\n');
        out.push_str(line);
    }
    out.push('\n');
    Ok(out.into_bytes())
}
