//! The `orchestra` CLI client: `task`, `session`, `report` and `status` over the HTTP API of a
//! running orchestra (API.md). Blocking and short-lived: no async runtime is started for these.

pub mod error;
pub mod http;
pub mod output;
pub mod report;
pub mod session;
pub mod status;
pub mod stop;
pub mod task;
pub mod trust;
pub mod worktree;

use super::{Cli, Command, GlobalArgs};
use clap::{ArgGroup, Args, Subcommand};
use error::{CliError, CliResult, EXIT_CODES_HELP};
use http::Client;
use orchestra_proto::task::VariantSpec;
use orchestra_proto::wire::Approval;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags every client subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// URL of the orchestra to talk to [default: the url in server.json in the state directory].
    #[arg(long, value_name = "URL", env = "ORCHESTRA_URL", global = true)]
    pub url: Option<String>,
    /// Print the server's JSON answer (pretty) instead of a human summary.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `orchestra task …`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct TaskArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(subcommand)]
    pub cmd: TaskCmd,
}

const TASK_STATUSES: [&str; 6] = [
    "pending",
    "running",
    "paused",
    "completed",
    "failed",
    "cancelled",
];

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Create a task (pending until started, by --start, `task start` or autopilot).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Add {
        /// Short name of the task.
        name: String,
        /// What to do: the agent's first instruction (for `shell`, the first line typed) [default: NAME].
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Provider that runs it: shell, claude, codex, gemini, aider, opencode, … [default: the server's].
        #[arg(long, value_name = "ID")]
        provider: Option<String>,
        /// Working directory, relative to the current one [default: the server's working directory].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Start it at once on a subagent session.
        #[arg(long)]
        start: bool,
        /// Run it in its own git worktree (`worktree`) or in DIR as it is (`none`)
        /// [default: worktree for coding agents in a git repository, else none].
        #[arg(long, value_name = "MODE", value_parser = ["worktree", "none"])]
        isolation: Option<String>,
        /// The branch a worktree task starts from and merges into [default: the checked-out one].
        #[arg(long, value_name = "BRANCH")]
        base: Option<String>,
        /// How much its agent may do without asking: manual, safe or auto [default: safe; run by
        /// an agent in its session, the agent's own preset].
        #[arg(long, value_name = "PRESET", value_parser = parse_approval)]
        approval: Option<Approval>,
        /// Give its agent orchestra's MCP server, so that it can hand work to other agents as
        /// children of this task [default: the provider's `delegate` setting].
        #[arg(long, overrides_with = "no_delegate")]
        delegate: bool,
        /// Do not give its agent orchestra's MCP server, whatever its provider's setting.
        #[arg(long, overrides_with = "delegate")]
        no_delegate: bool,
        /// Make it a child of this task (its agent sees it, manages it, and may answer its
        /// questions with --answers parent).
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        /// Who answers its questions besides you: `human` (only you) or `parent` (the
        /// parent task's agent too) [default: human].
        #[arg(long, value_name = "WHO", value_parser = ["human", "parent"])]
        answers: Option<String>,
        /// Best of N: race the task on this provider too (PROVIDER or PROVIDER:APPROVAL, e.g.
        /// `codex:auto`); given 2–8 times, the task is a parent with one child per variant,
        /// each in its own worktree from one base commit (`task pick` keeps one).
        #[arg(long = "variant", value_name = "PROVIDER[:APPROVAL]", value_parser = parse_variant)]
        variants: Vec<VariantSpec>,
        /// A command (`sh -c`, in its worktree) that must pass before it is completed; repeat
        /// for more. A failure goes back to its agent to fix [default: none, plus its
        /// repository's `.orchestra.toml` [checks] once trusted].
        #[arg(long = "check", value_name = "CMD")]
        checks: Vec<String>,
        /// How many times its checks may fail and go back to the agent before it fails [default: 3].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
        max_attempts: Option<u32>,
        /// How long one check may run before it fails [default: 1800].
        #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
        check_timeout: Option<u64>,
    },
    /// List tasks, newest first.
    #[command(after_long_help = EXIT_CODES_HELP)]
    List {
        /// Only tasks with this status.
        #[arg(long, value_name = "STATUS", value_parser = TASK_STATUSES)]
        status: Option<String>,
        /// At most this many tasks.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        limit: Option<u32>,
        /// Only the children of this task.
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
    },
    /// Show a task: status, progress, steps, result and its latest output.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Show {
        /// Task id, or a unique prefix of one (as `task list` shows).
        id: String,
        /// Show at most this many of the newest output lines (0: none).
        #[arg(long, value_name = "N", default_value_t = 20)]
        output_lines: usize,
    },
    /// Start a pending task on a subagent session of its provider.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Start {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Pause a running task (its session's processes are stopped).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Pause {
        /// Task id, or a unique prefix of one.
        id: String,
        /// Its descendants (tasks its agent made, and theirs) too, each as far as its
        /// state allows.
        #[arg(long)]
        children: bool,
    },
    /// Resume a paused task.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Resume {
        /// Task id, or a unique prefix of one.
        id: String,
        /// Its descendants (tasks its agent made, and theirs) too, each as far as its
        /// state allows.
        #[arg(long)]
        children: bool,
    },
    /// Cancel a task (its session is ended).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Cancel {
        /// Task id, or a unique prefix of one.
        id: String,
        /// Its descendants (tasks its agent made, and theirs) too, each as far as its
        /// state allows.
        #[arg(long)]
        children: bool,
    },
    /// Create a fresh pending copy of a finished task (completed, failed or cancelled), linked
    /// to it by `retryOf`; the same as `rerun`.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Retry {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Run a finished task again: a fresh pending copy linked to it by `retryOf`.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Rerun {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Start the agent of a finished task (completed, failed, cancelled, or interrupted by a
    /// restart) again on the same conversation, where a retry starts afresh: the task runs
    /// again, its steps, output and earlier result kept.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Continue {
        /// Task id, or a unique prefix of one.
        id: String,
        /// The agent's next request (default: "Continue where you left off.").
        #[arg(long, short, value_name = "TEXT")]
        message: Option<String>,
    },
    /// Change a pending task: its name, description, provider, approval, isolation or base.
    #[command(after_long_help = EXIT_CODES_HELP)]
    #[command(group(ArgGroup::new("change").required(true).multiple(true).args(["name", "description", "provider", "approval", "isolation", "base"])))]
    Edit {
        /// Task id, or a unique prefix of one.
        id: String,
        /// The new name (not empty).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// The new description.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Another provider.
        #[arg(long, value_name = "ID")]
        provider: Option<String>,
        /// Another approval preset: manual, safe or auto.
        #[arg(long, value_name = "PRESET", value_parser = parse_approval)]
        approval: Option<Approval>,
        /// Another isolation: worktree or none.
        #[arg(long, value_name = "MODE", value_parser = ["worktree", "none"])]
        isolation: Option<String>,
        /// Another base branch (`""`: the checked-out one).
        #[arg(long, value_name = "BRANCH")]
        base: Option<String>,
    },
    /// Keep one variant of a best-of-N task: merge it into the base branch, discard the
    /// others (their work kept under `refs/orchestra/snapshots/<task-id>`), complete the task.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Pick {
        /// The best-of-N task's id, or a unique prefix of one.
        id: String,
        /// The variant: its label (`codex`, `codex-2`) or its task id.
        variant: String,
    },
    /// Delete a finished task with its sessions and transcripts; a copy is kept under
    /// `<state-dir>/trash/<task-id>/`.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Delete {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Show what a worktree task changed against its base: files with line counts, then
    /// the diff (coloured on a terminal).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Diff {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Merge a finished worktree task into its base branch (what it left uncommitted is
    /// committed first); refused, changing nothing, on conflicts or when your own uncommitted
    /// changes are in the way.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Merge {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Remove a finished task's worktree and branch; its work is kept under
    /// `refs/orchestra/snapshots/<task-id>`.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Discard {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Push a finished worktree task's branch to the repository's remote (what it left
    /// uncommitted is committed first) and open a pull request with your own `gh` (or `glab`):
    /// its title is the task's name, its body the summary, the checks and the diffstat. Refused,
    /// pushing nothing, when there is no remote, no `gh`/`glab`, or it is not logged in.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Pr {
        /// Task id, or a unique prefix of one.
        id: String,
    },
    /// Which live worktree tasks, and the base branch as it is now, a worktree task's work
    /// would conflict with if merged, in which files; and the order of merging that
    /// conflicts least.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Conflicts {
        /// Task id, or a unique prefix of one.
        id: String,
    },
}

/// `orchestra gc`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct GcArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Only worktrees of tasks finished longer ago than this: 7d, 12h, 30m, 45s.
    #[arg(long, value_name = "AGE", default_value = "7d", value_parser = worktree::parse_age)]
    pub older_than: u64,
}

/// `orchestra session …`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct SessionArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(subcommand)]
    pub cmd: SessionCmd,
}

#[derive(Debug, Subcommand)]
pub enum SessionCmd {
    /// List sessions, ended ones included.
    #[command(after_long_help = EXIT_CODES_HELP)]
    List,
    /// Start a coding agent (or a shell) in its own terminal.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Spawn {
        /// The agent's first instruction (for `shell`, the first line typed).
        #[arg(value_name = "TASK-TEXT")]
        task: Option<String>,
        /// Provider: shell, claude, codex, gemini, aider, opencode, … [default: the server's, else the first installed].
        #[arg(long, value_name = "ID")]
        provider: Option<String>,
        /// Working directory, relative to the current one [default: the server's working directory].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Terminal width in columns.
        #[arg(long, value_name = "C", value_parser = clap::value_parser!(u16).range(1..))]
        cols: Option<u16>,
        /// Terminal height in rows.
        #[arg(long, value_name = "R", value_parser = clap::value_parser!(u16).range(1..))]
        rows: Option<u16>,
        /// How much the agent may do without asking: manual, safe or auto [default: safe].
        #[arg(long, value_name = "PRESET", value_parser = parse_approval)]
        approval: Option<Approval>,
    },
    /// Type a message into a session and submit it the way its agent expects.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Send {
        /// Session id, or a unique prefix of one.
        id: String,
        /// The message; several words are joined with spaces. Every word from the first on is
        /// text, even one starting with `-`: put flags before it.
        #[arg(value_name = "TEXT", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
        text: Vec<String>,
    },
    /// Press keys in a session: enter, tab, esc, up, down, left, right, ctrl-c, ….
    #[command(after_long_help = EXIT_CODES_HELP)]
    Keys {
        /// Session id, or a unique prefix of one.
        id: String,
        /// Keys, pressed in order.
        #[arg(value_name = "KEY", required = true, num_args = 1..)]
        keys: Vec<String>,
    },
    /// Print what a session's terminal shows now (or its last lines, with --lines).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Peek {
        /// Session id, or a unique prefix of one.
        id: String,
        /// Print only the last N lines of the terminal, scrollback included (blank rows below
        /// the last text are not counted).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "scrollback")]
        lines: Option<u32>,
        /// Print the whole screen with this many lines of scrollback above it.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        scrollback: Option<u32>,
        /// Keep colours and attributes (ANSI escape sequences) of the screen; not with --lines
        /// (the screen is drawn whole), except with --json.
        #[arg(long)]
        ansi: bool,
    },
    /// Write the raw bytes a session printed (its transcript, escape sequences included) to
    /// stdout; works for ended sessions too.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Transcript {
        /// Session id, or a unique prefix of one.
        id: String,
        /// Only the last N bytes.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        bytes: Option<u64>,
    },
    /// Remove an ended session from the list; its transcript is kept under
    /// `<state-dir>/trash/sessions/<session-id>/`.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Delete {
        /// Session id, or a unique prefix of one.
        id: String,
    },
    /// End a session: its whole process group (TERM, then KILL after the grace period).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Kill {
        /// Session id, or a unique prefix of one.
        id: String,
    },
}

/// `orchestra report …`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct ReportArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The task to report on [set in every session bound to a task].
    #[arg(long, value_name = "ID", env = "ORCHESTRA_TASK_ID", global = true)]
    pub task: Option<String>,
    #[command(subcommand)]
    pub cmd: ReportCmd,
}

#[derive(Debug, Subcommand)]
pub enum ReportCmd {
    /// Begin a step: add it to the task, marked running.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Step {
        /// What the step does; several words are joined with spaces.
        #[arg(value_name = "DESCRIPTION", required = true, num_args = 1..)]
        description: Vec<String>,
    },
    /// Finish the newest running step: completed, or failed with --failed.
    #[command(after_long_help = EXIT_CODES_HELP)]
    StepDone {
        /// Mark it failed instead of completed.
        #[arg(long)]
        failed: bool,
        /// Text to keep with the step.
        #[arg(long, value_name = "TEXT")]
        output: Option<String>,
    },
    /// Set the task's progress, a number from 0 to 100.
    #[command(after_long_help = EXIT_CODES_HELP)]
    Progress {
        /// Percent done, 0–100.
        #[arg(value_name = "N")]
        percent: f64,
    },
    /// Append lines to the task's output (`-` reads them from stdin).
    #[command(after_long_help = EXIT_CODES_HELP)]
    Output {
        /// The text; several words are joined with spaces; `-` alone reads stdin. Every word
        /// from the first on is text, even one starting with `-`: put flags before it.
        #[arg(value_name = "TEXT", required = true, num_args = 1.., allow_hyphen_values = true)]
        text: Vec<String>,
    },
    /// Finish the task with a result: completed with --success, failed with --failure.
    #[command(after_long_help = EXIT_CODES_HELP)]
    #[command(group(ArgGroup::new("outcome").required(true).args(["success", "failure"])))]
    Result {
        /// The task succeeded: it ends completed.
        #[arg(long)]
        success: bool,
        /// The task failed: it ends failed.
        #[arg(long)]
        failure: bool,
        /// One or two sentences on what was done.
        #[arg(long, value_name = "TEXT", required = true)]
        summary: String,
        /// A file that was modified (repeatable).
        #[arg(long = "modified", value_name = "FILE")]
        modified: Vec<String>,
        /// A file that was created (repeatable).
        #[arg(long = "created", value_name = "FILE")]
        created: Vec<String>,
        /// What went wrong (with --failure).
        #[arg(long, value_name = "TEXT")]
        error: Option<String>,
    },
}

/// `orchestra trust`
#[derive(Debug, Args)]
#[command(after_long_help = format!("{TRUST_HELP}\n\n{EXIT_CODES_HELP}"))]
#[command(group(ArgGroup::new("what").required(true).args(["path", "list", "revoke"])))]
pub struct TrustArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// A repository's .orchestra.toml, or the repository's directory: trusts the file's
    /// current content.
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// List the trusted files, each with the hash of the content trusted.
    #[arg(long)]
    pub list: bool,
    /// Trust this file (or this repository's .orchestra.toml) no more.
    #[arg(long, value_name = "PATH")]
    pub revoke: Option<PathBuf>,
}

const TRUST_HELP: &str = "\
A repository's .orchestra.toml may ask orchestra to run a set-up command and copy files into
each new task worktree, with your rights. Nothing of it runs until you trust the file's exact
content: a task that needs it waits, `running` and blocked on a question, and proceeds once
the file is trusted (here, with the question's answer in the TUI, or POST /tasks/:id/answer).
Any change to the file asks again. Your own config file's [[repo]] entries need no trust.";

/// `orchestra status`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct StatusArgs {
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `orchestra stop`
#[derive(Debug, Args)]
#[command(after_long_help = EXIT_CODES_HELP)]
pub struct StopArgs {
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `--approval`: one of the presets, else the sentence the API would give.
fn parse_approval(s: &str) -> Result<Approval, String> {
    s.parse()
}

fn parse_variant(s: &str) -> Result<VariantSpec, String> {
    s.parse()
}

/// What a client command runs with.
pub struct Ctx {
    pub client: Client,
    pub json: bool,
}

impl Ctx {
    fn connect(args: &ClientArgs, global: &GlobalArgs) -> CliResult<Ctx> {
        let client = Client::discover(
            args.url.as_deref(),
            global.state_dir.as_deref(),
            global.token.as_deref(),
        )?;
        Ok(Ctx {
            client,
            json: args.json,
        })
    }
}

/// Runs a client subcommand; `None` when the command is not one (serve, the TUI).
pub fn run(cli: &Cli) -> Option<ExitCode> {
    let global = &cli.global;
    let result = match cli.command.as_ref()? {
        Command::Task(a) => Ctx::connect(&a.client, global).and_then(|ctx| task::run(&ctx, &a.cmd)),
        Command::Session(a) => {
            Ctx::connect(&a.client, global).and_then(|ctx| session::run(&ctx, &a.cmd))
        }
        Command::Report(a) => report::run(a, global),
        Command::Status(a) => Ctx::connect(&a.client, global).and_then(|ctx| status::run(&ctx)),
        Command::Stop(a) => stop::run(&a.client, global),
        Command::Gc(a) => {
            Ctx::connect(&a.client, global).and_then(|ctx| worktree::gc(&ctx, a.older_than))
        }
        Command::Trust(a) => Ctx::connect(&a.client, global).and_then(|ctx| trust::run(&ctx, a)),
        Command::Hook(a) => return Some(crate::cli::hook::run(a, global.token.as_deref())),
        Command::Token => return Some(crate::cli::token::run(global.state_dir.as_deref())),
        // `mcp install` is a command of its own; `mcp` itself serves, on the runtime.
        Command::Mcp(crate::cli::mcp::McpArgs {
            command: Some(install),
            ..
        }) => {
            return Some(crate::cli::mcp_install::run(
                install,
                global.state_dir.as_deref(),
            ));
        }
        Command::Serve(_)
        | Command::Mcp(_)
        | Command::Completions { .. }
        | Command::Man { .. }
        | Command::Openapi => {
            return None;
        }
    };
    Some(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orchestra: {}", e.message);
            e.exit_code()
        }
    })
}

/// A directory from the command line, absolute against this process's working directory.
pub fn absolute_dir(dir: &Path) -> CliResult<String> {
    let abs = match dir.canonicalize() {
        Ok(p) => p,
        Err(_) => std::path::absolute(dir)
            .map_err(|e| CliError::usage(format!("cannot use directory {}: {e}", dir.display())))?,
    };
    abs.to_str()
        .map(str::to_string)
        .ok_or_else(|| CliError::usage(format!("directory {} is not valid UTF-8", abs.display())))
}

/// Where the server keeps what it deleted under `rel` (`trash/<id>`): the full path when the
/// state directory is known here, else relative to it.
pub fn trash_place(ctx: &Ctx, rel: &str) -> String {
    match ctx.client.state_dir() {
        Some(dir) => format!("{}/", dir.join(rel).display()),
        None => format!("{rel}/ in orchestra's state directory"),
    }
}

/// Turns an id or a unique prefix of one into the id, from the ids `list` reads (the
/// `what`s there are). A full-length id is used as given.
pub fn resolve_id(
    ctx: &Ctx,
    what: &str,
    id: &str,
    list: impl FnOnce(&Ctx) -> CliResult<Vec<String>>,
) -> CliResult<String> {
    if id.is_empty() {
        return Err(CliError::usage(format!("the {what} id is empty")));
    }
    if id.len() >= 36 {
        return Ok(id.to_string());
    }
    let ids = list(ctx)?;
    if ids.iter().any(|i| i == id) {
        return Ok(id.to_string());
    }
    let matches: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|i| i.starts_with(id))
        .collect();
    match matches.as_slice() {
        [] => Ok(id.to_string()), // the server says what is wrong with it
        [one] => Ok(one.to_string()),
        many => Err(CliError::refused(format!(
            "{what} id prefix {id:?} matches {} {what}s ({}); give more of the id",
            many.len(),
            many.join(", ")
        ))),
    }
}
