//! Providers are data: how to launch each kind of subagent. A built-in table
//! (`assets/providers.toml`) that the user's config file can override and extend.

mod config;
mod conversation;
pub mod detect;
pub mod flags;
pub mod line_question;
pub mod patterns;

pub use config::{Config, ConfigError, RepoConfig};
pub use patterns::{Classifier, NoticeRule, PromptOption, PromptRule, ScreenPatterns, Verdict};

use orchestra_proto::wire::Approval;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const BUILT_IN: &str = include_str!("../../assets/providers.toml");

/// How the first instruction reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// Typed as the first line, then submitted.
    #[default]
    Type,
    /// Substituted for `{task}` in the arguments.
    Arg,
    /// Not delivered.
    None,
}

/// The key that submits a typed message (`submit`); an unknown name fails the table's parse,
/// naming the keys there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SubmitKey {
    /// Carriage return, as the Enter key sends it.
    #[default]
    Enter,
    /// Line feed (Ctrl-J), for programs that take a newline.
    #[serde(alias = "newline")]
    CtrlJ,
    /// Nothing: the text is typed and left for the user to submit.
    None,
}

/// What a CLI asks of the directories above a file orchestra hands it before it reads the
/// file (`instructions_dir_rule`); orchestra puts the files where the rule is met (see
/// `engine/placement.rs`). An unknown name fails the table's parse, naming the rules there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DirRule {
    /// Nothing: the files go in orchestra's private state directory.
    #[default]
    Any,
    /// The file and every directory above it, up to `/`, owned by root and writable by no
    /// one else: Gemini CLI's rule for its system settings files (a user other than root
    /// cannot meet it).
    RootOwned,
}

impl DirRule {
    /// The rule in words, for a note that says a CLI's rule could not be met.
    pub fn describe(self) -> &'static str {
        match self {
            DirRule::Any => "anywhere",
            DirRule::RootOwned => {
                "owned by root and writable by no one else, every directory up to /"
            }
        }
    }
}

impl SubmitKey {
    /// What is written to the terminal after the text.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            SubmitKey::Enter => b"\r",
            SubmitKey::CtrlJ => b"\n",
            SubmitKey::None => b"",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub id: String,
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub deliver: Delivery,
    #[serde(default)]
    pub submit: SubmitKey,
    #[serde(default)]
    pub coding_agent: bool,
    /// Whether it waits for input when quiet; unset: coding agents and programs that take
    /// typed input (`deliver = "type"`) do. See `is_interactive`.
    #[serde(default)]
    pub interactive: Option<bool>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Extra arguments per approval preset (`manual`, `safe`, `auto`): the CLI's own flags.
    #[serde(default)]
    pub approval_args: BTreeMap<Approval, Vec<String>>,
    /// Arguments that give the agent orchestra's instructions (how to report steps and
    /// progress) through its own system-prompt flag: `{instructions}` is the text,
    /// `{instructions_file}` a file holding it. Fitted to the installed version like presets.
    #[serde(default)]
    pub instructions_args: Vec<String>,
    /// Environment that gives the agent orchestra's instructions, for CLIs that take them
    /// through their environment (OpenCode's `OPENCODE_CONFIG_CONTENT` with `instructions`):
    /// `{instructions_file}` is the file holding them, `{instructions}` the text.
    #[serde(default)]
    pub instructions_env: BTreeMap<String, String>,
    /// Files (name → content) written into a per-session directory in the state directory,
    /// `{instructions_dir}` in `instructions_env`, for CLIs that read instructions only from
    /// a context file they find through their settings (Gemini CLI's `GEMINI.md` in an
    /// included directory): `{instructions}` and `{instructions_dir}` are filled in.
    #[serde(default)]
    pub instructions_files: BTreeMap<String, String>,
    /// What the CLI asks of the directories above the files of `instructions_files` before
    /// it reads them (Gemini CLI: `root-owned`).
    #[serde(default)]
    pub instructions_dir_rule: DirRule,
    /// What the CLI says when it skipped something orchestra handed it or could not set
    /// itself up: each becomes a note on the task, once per session.
    #[serde(default)]
    pub notices: Vec<NoticeRule>,
    /// Arguments that make the agent's own hooks report its status to orchestra through
    /// `orchestra hook EVENT`: `{hooks_file}` is a per-session Claude Code settings file
    /// holding the hooks, `{orchestra}` orchestra's executable. Fitted like presets.
    #[serde(default)]
    pub hooks_args: Vec<String>,
    /// Extra environment per approval preset: for CLIs whose permissions are set through
    /// their environment rather than flags (OpenCode's `OPENCODE_PERMISSION`).
    #[serde(default)]
    pub approval_env: BTreeMap<Approval, BTreeMap<String, String>>,
    /// How to ask the CLI its version (`GET /providers`).
    #[serde(default = "default_version_args")]
    pub version_args: Vec<String>,
    /// What its screen looks like when ready or busy, and which lines are chrome.
    #[serde(default)]
    pub screen: ScreenPatterns,
    /// The prompts it can stop at (permission, trust, login, choice, question).
    #[serde(default)]
    pub prompts: Vec<PromptRule>,
    /// How a user installs it (a command line, or a sentence for what comes with the system).
    #[serde(default)]
    pub install: Option<String>,
    /// Arguments that pin a task's conversation to an id orchestra chooses at its first start
    /// (`{conversation}`: a UUID), so it can be resumed by that id. See `conversation.rs`.
    #[serde(default)]
    pub conversation_args: Vec<String>,
    /// Arguments that start the agent again on a task's earlier conversation (`continue`):
    /// `{conversation}` is the id recorded on the task; without it, the CLI's own "most
    /// recent conversation in this directory". Empty: the provider cannot continue.
    #[serde(default)]
    pub resume_args: Vec<String>,
    /// Whether its tasks get orchestra's MCP server by default, so that the agent can hand
    /// work to other agents (a task's own `delegate` overrides it).
    #[serde(default)]
    pub delegate: bool,
    /// Arguments that give a delegating task's agent orchestra's MCP server (`orchestra mcp
    /// --session-file FILE`): `{mcp_config}` is a per-session file holding `mcp_config`,
    /// `{orchestra}` orchestra's executable, `{session_file}` the session's private file with
    /// its URL and credential. Fitted to the installed version like presets.
    #[serde(default)]
    pub mcp_args: Vec<String>,
    /// What the per-session `{mcp_config}` file holds (the CLI's own MCP config format);
    /// `{mcp_servers}` in it is our server's entry, keyed by its name.
    #[serde(default)]
    pub mcp_config: Option<String>,
    /// Our server's entry in the CLI's own shape (JSON; `{orchestra}` and `{session_file}`
    /// filled in as JSON string content). `{mcp_servers}` in `mcp_config`,
    /// `instructions_files` and `instructions_env` becomes `{"orchestra": <entry>}` for a
    /// delegating task, `{}` otherwise.
    #[serde(default)]
    pub mcp_server: Option<String>,
    /// Extra arguments per approval preset for a delegating task: what lets the CLI call our
    /// server's tools without asking under `auto` (Claude Code's `--allowedTools`). Fitted.
    #[serde(default)]
    pub mcp_approval_args: BTreeMap<Approval, Vec<String>>,
}

fn default_version_args() -> Vec<String> {
    vec!["--version".into()]
}

/// A partial entry from a config file: present fields override the built-in entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderOverride {
    pub id: String,
    pub name: Option<String>,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub deliver: Option<Delivery>,
    pub submit: Option<SubmitKey>,
    pub coding_agent: Option<bool>,
    pub interactive: Option<bool>,
    pub env: Option<BTreeMap<String, String>>,
    pub pass_env: Option<Vec<String>>,
    pub approval_args: Option<BTreeMap<Approval, Vec<String>>>,
    pub approval_env: Option<BTreeMap<Approval, BTreeMap<String, String>>>,
    pub instructions_args: Option<Vec<String>>,
    pub instructions_env: Option<BTreeMap<String, String>>,
    pub instructions_files: Option<BTreeMap<String, String>>,
    pub instructions_dir_rule: Option<DirRule>,
    pub notices: Option<Vec<NoticeRule>>,
    pub hooks_args: Option<Vec<String>>,
    pub version_args: Option<Vec<String>>,
    pub screen: Option<ScreenPatterns>,
    pub prompts: Option<Vec<PromptRule>>,
    pub install: Option<String>,
    pub conversation_args: Option<Vec<String>>,
    pub resume_args: Option<Vec<String>>,
    pub delegate: Option<bool>,
    pub mcp_args: Option<Vec<String>>,
    pub mcp_config: Option<String>,
    pub mcp_server: Option<String>,
    pub mcp_approval_args: Option<BTreeMap<Approval, Vec<String>>>,
}

#[derive(Deserialize)]
struct Table {
    provider: Vec<Provider>,
}

/// The program a provider runs, resolved for this machine.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
}

impl Provider {
    /// The command with `$SHELL` resolved.
    pub fn program(&self) -> String {
        if self.command == "$SHELL" {
            std::env::var("SHELL")
                .ok()
                .filter(|s| !s.is_empty() && Path::new(s).is_file())
                .unwrap_or_else(|| "/bin/bash".into())
        } else {
            self.command.clone()
        }
    }

    /// Whether a task must give an instruction: coding agents and commands run it; a
    /// plain shell that would only have it typed can start without one.
    pub fn needs_instruction(&self) -> bool {
        self.coding_agent || self.deliver == Delivery::Arg
    }

    pub fn launch(&self, first_instruction: &str) -> Launch {
        let args = self
            .args
            .iter()
            .filter_map(|a| {
                if a == "{task}" && self.deliver == Delivery::Arg && first_instruction.is_empty() {
                    return None;
                }
                Some(a.replace("{task}", first_instruction))
            })
            .collect();
        Launch {
            program: self.program(),
            args,
        }
    }

    /// As `launch`, with the arguments of an approval preset (`manual|safe|auto`) first,
    /// fitted to what the installed version accepts (see `flags.rs`; its `--help` is run
    /// once per binary: call [`Provider::help`] off the async workers first).
    pub fn launch_with_approval(&self, first_instruction: &str, approval: Approval) -> Launch {
        let mut l = self.launch(first_instruction);
        if let Some(preset) = self.approval_args.get(&approval) {
            let fitted = flags::fit(preset, self.help().as_deref());
            for change in &fitted.changes {
                tracing::info!(provider = %self.id, %approval, "{change}");
            }
            let mut args = fitted.args;
            args.append(&mut l.args);
            l.args = args;
        }
        l
    }

    /// The arguments that give the agent `text` as instructions (`instructions_args`, fitted
    /// to the installed version), with `file()` called for a file holding it when they need one.
    pub fn instructions(&self, text: &str, file: impl FnOnce() -> Option<PathBuf>) -> Vec<String> {
        self.fit_with_file(
            &self.instructions_args,
            "instructions",
            "{instructions_file}",
            file,
        )
        .into_iter()
        .map(|a| a.replace("{instructions}", text))
        .collect()
    }

    /// The environment that gives the agent `text` as instructions (`instructions_env`),
    /// with `file()` called for a file holding it and `dir(files)` for a directory holding
    /// `instructions_files` (filled in) when a value names one; nothing when one cannot be
    /// written.
    pub fn instructions_env(
        &self,
        text: &str,
        file: impl FnOnce() -> Option<PathBuf>,
        dir: impl FnOnce(&dyn Fn(&Path) -> Vec<(String, String)>) -> Option<PathBuf>,
    ) -> Vec<(String, String)> {
        let names = |p: &str| self.instructions_env.values().any(|v| v.contains(p));
        let file = if names("{instructions_file}") {
            match file() {
                Some(f) => f.to_string_lossy().into_owned(),
                None => return Vec::new(),
            }
        } else {
            String::new()
        };
        let fill = |v: &str, dir: &str| {
            v.replace("{instructions_file}", &file)
                .replace("{instructions_dir}", dir)
                .replace("{instructions}", text)
        };
        let dir = if names("{instructions_dir}") {
            let files = |d: &Path| {
                let d = d.to_string_lossy();
                self.instructions_files
                    .iter()
                    .map(|(name, content)| (name.clone(), fill(content, &d)))
                    .collect()
            };
            match dir(&files) {
                Some(d) => d.to_string_lossy().into_owned(),
                None => return Vec::new(),
            }
        } else {
            String::new()
        };
        self.instructions_env
            .iter()
            .map(|(k, v)| (k.clone(), fill(v, &dir)))
            .collect()
    }

    /// The arguments that set up the agent's hooks (`hooks_args`, fitted to the installed
    /// version), with `file()` called for the settings file when they need one.
    pub fn hooks(&self, orchestra: &Path, file: impl FnOnce() -> Option<PathBuf>) -> Vec<String> {
        let exe = orchestra.to_string_lossy();
        self.fit_with_file(&self.hooks_args, "hooks", "{hooks_file}", file)
            .into_iter()
            .map(|a| a.replace("{orchestra}", &exe))
            .collect()
    }

    /// Our MCP server's entry in this CLI's own shape (`mcp_server`, filled in), keyed by
    /// its name: what `{mcp_servers}` stands for in a delegating task's files. `None` when
    /// the provider has no entry, or the entry is not JSON once filled in (logged).
    pub fn mcp_servers(&self, orchestra: &Path, session_file: &Path) -> Option<String> {
        let template = self.mcp_server.as_deref()?;
        let filled = template
            .replace("{orchestra}", &json_content(&orchestra.to_string_lossy()))
            .replace(
                "{session_file}",
                &json_content(&session_file.to_string_lossy()),
            );
        match serde_json::from_str::<serde_json::Value>(&filled) {
            Ok(entry) => Some(serde_json::json!({ MCP_SERVER_NAME: entry }).to_string()),
            Err(e) => {
                tracing::warn!(provider = %self.id, error = %e, "mcp_server is not JSON: left out");
                None
            }
        }
    }

    /// The arguments that give a delegating task's agent our MCP server (`mcp_args`, then the
    /// preset's `mcp_approval_args`, fitted to the installed version), with `config(text)`
    /// called to write `mcp_config` (filled with `servers`) when they name `{mcp_config}`.
    pub fn mcp(
        &self,
        approval: Approval,
        orchestra: &Path,
        session_file: &Path,
        servers: &str,
        config: impl FnOnce(&str) -> Option<PathBuf>,
    ) -> Vec<String> {
        let exe = orchestra.to_string_lossy();
        let session = session_file.to_string_lossy();
        let text = self
            .mcp_config
            .as_deref()
            .unwrap_or_default()
            .replace(MCP_SERVERS, servers);
        let mut args = self.fit_with_file(&self.mcp_args, "mcp", "{mcp_config}", || config(&text));
        if let Some(extra) = self.mcp_approval_args.get(&approval) {
            args.extend(self.fit_with_file(extra, "mcp", "{mcp_config}", || None));
        }
        args.into_iter()
            .map(|a| {
                a.replace("{orchestra}", &exe)
                    .replace("{session_file}", &session)
            })
            .collect()
    }

    /// `args` fitted to the installed version, with `placeholder` replaced by the file `file()`
    /// writes when an argument names it; nothing when that file cannot be written.
    fn fit_with_file(
        &self,
        args: &[String],
        what: &str,
        placeholder: &str,
        file: impl FnOnce() -> Option<PathBuf>,
    ) -> Vec<String> {
        if args.is_empty() {
            return Vec::new();
        }
        let fitted = flags::fit(args, self.help().as_deref());
        for change in &fitted.changes {
            tracing::info!(provider = %self.id, "{what}: {change}");
        }
        let file = if fitted.args.iter().any(|a| a.contains(placeholder)) {
            match file() {
                Some(f) => f.to_string_lossy().into_owned(),
                None => return Vec::new(),
            }
        } else {
            String::new()
        };
        fitted
            .args
            .iter()
            .map(|a| a.replace(placeholder, &file))
            .collect()
    }

    /// The installed CLI's `--help`, when it has preset, instructions, hooks or conversation
    /// flags to fit to it. Blocking on the first call per binary; cached after.
    pub fn help(&self) -> Option<String> {
        if self.approval_args.values().all(|a| a.is_empty())
            && self.instructions_args.is_empty()
            && self.hooks_args.is_empty()
            && self.conversation_args.is_empty()
            && self.resume_args.is_empty()
            && self.mcp_args.is_empty()
            && self.mcp_approval_args.values().all(|a| a.is_empty())
        {
            return None;
        }
        detect::cached_help(&self.resolved_path()?)
    }

    /// Whether its sessions wait for input when quiet: then a quiet screen is `ready`;
    /// otherwise (a command that just runs) the session is `busy` while it lives.
    pub fn is_interactive(&self) -> bool {
        self.interactive
            .unwrap_or(self.coding_agent || self.deliver == Delivery::Type)
    }

    /// The screen classifier built from this entry's patterns (invalid patterns are skipped
    /// and logged; `Classifier::new` reports them).
    pub fn classifier(&self) -> Classifier {
        let (c, mut errors) = Classifier::new(&self.screen, &self.prompts);
        let c = c.with_notices(&self.notices, &mut errors);
        for e in errors {
            tracing::warn!(provider = %self.id, error = %e, "skipping an invalid screen pattern");
        }
        c
    }

    /// Where the executable is, when it can be found.
    pub fn resolved_path(&self) -> Option<PathBuf> {
        which(&self.program())
    }

    pub fn installed(&self) -> bool {
        self.resolved_path().is_some()
    }

    /// How to install it: the table's `install`, else where its command must be.
    pub fn install_hint(&self) -> String {
        self.install.clone().unwrap_or_else(|| {
            format!(
                "install `{}` and make sure it is on PATH (or set this provider's `command` in the config file)",
                self.command
            )
        })
    }

    /// The one sentence every front end shows when this provider's program is missing.
    pub fn not_installed_message(&self) -> String {
        let program = self.program();
        let looked = if program.contains('/') {
            format!("'{program}' does not exist or is not executable")
        } else {
            format!("'{program}' was not found on PATH")
        };
        let how = match &self.install {
            Some(cmd) => format!("install it with: {cmd}"),
            None => self.install_hint(),
        };
        format!(
            "provider '{}' ({}) is not installed: {looked}; {how}",
            self.id, self.name
        )
    }

    /// The variables this provider takes from orchestra's own environment.
    pub fn passed_env(&self) -> Vec<(String, String)> {
        std::env::vars()
            .filter(|(k, _)| self.pass_env.iter().any(|p| env_pattern_matches(p, k)))
            .collect()
    }

    fn apply(&mut self, o: ProviderOverride) {
        if let Some(v) = o.name {
            self.name = v;
        }
        if let Some(v) = o.command {
            self.command = v;
        }
        if let Some(v) = o.args {
            self.args = v;
        }
        if let Some(v) = o.deliver {
            self.deliver = v;
        }
        if let Some(v) = o.submit {
            self.submit = v;
        }
        if let Some(v) = o.coding_agent {
            self.coding_agent = v;
        }
        if o.interactive.is_some() {
            self.interactive = o.interactive;
        }
        if let Some(v) = o.env {
            self.env = v;
        }
        if let Some(v) = o.pass_env {
            self.pass_env = v;
        }
        if let Some(v) = o.approval_args {
            self.approval_args = v;
        }
        if let Some(v) = o.approval_env {
            self.approval_env = v;
        }
        if let Some(v) = o.hooks_args {
            self.hooks_args = v;
        }
        if let Some(v) = o.instructions_args {
            self.instructions_args = v;
        }
        if let Some(v) = o.instructions_env {
            self.instructions_env = v;
        }
        if let Some(v) = o.instructions_files {
            self.instructions_files = v;
        }
        if let Some(v) = o.instructions_dir_rule {
            self.instructions_dir_rule = v;
        }
        if let Some(v) = o.notices {
            self.notices = v;
        }
        if let Some(v) = o.version_args {
            self.version_args = v;
        }
        if let Some(v) = o.screen {
            self.screen = v;
        }
        if let Some(v) = o.prompts {
            self.prompts = v;
        }
        if let Some(v) = o.install {
            self.install = Some(v);
        }
        if let Some(v) = o.conversation_args {
            self.conversation_args = v;
        }
        if let Some(v) = o.resume_args {
            self.resume_args = v;
        }
        if let Some(v) = o.delegate {
            self.delegate = v;
        }
        if let Some(v) = o.mcp_args {
            self.mcp_args = v;
        }
        if let Some(v) = o.mcp_config {
            self.mcp_config = Some(v);
        }
        if let Some(v) = o.mcp_server {
            self.mcp_server = Some(v);
        }
        if let Some(v) = o.mcp_approval_args {
            self.mcp_approval_args = v;
        }
    }
}

/// The name our MCP server goes by in every CLI's configuration: its tools are
/// `mcp__orchestra__…` to Claude Code and Codex CLI.
pub const MCP_SERVER_NAME: &str = "orchestra";

/// Where a provider's files and variables take our MCP server's entry (see `mcp_server`).
pub const MCP_SERVERS: &str = "{mcp_servers}";

/// `s` as the content of a JSON string, without its quotes.
fn json_content(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

fn env_pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// Finds an executable like [`which_uncached`], remembering the answer for a few seconds:
/// choosing a default provider asks on every task created, and walking `PATH` for five
/// CLIs each time cost more than the rest of a create. A CLI installed meanwhile is seen
/// once the answer expires.
pub fn which(program: &str) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    use std::time::{Duration, Instant};
    const FRESH: Duration = Duration::from_secs(5);
    type Cache = Mutex<HashMap<String, (Instant, Option<PathBuf>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    if let Ok(c) = cache.lock()
        && let Some((at, found)) = c.get(program)
        && at.elapsed() < FRESH
    {
        return found.clone();
    }
    let found = which_uncached(program);
    if let Ok(mut c) = cache.lock() {
        c.insert(program.to_string(), (Instant::now(), found.clone()));
    }
    found
}

/// Finds an executable: a path with a slash as given, else on `PATH`.
pub fn which_uncached(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_exec(p))
}

/// The provider table in use: built-ins, then the user's overrides and additions.
#[derive(Debug, Clone)]
pub struct Providers {
    list: Vec<Provider>,
    configured_default: Option<String>,
}

impl Providers {
    pub fn built_in() -> Providers {
        // The built-in table is part of the binary and covered by a test; a parse
        // failure here is a build defect, so fall back to an empty table rather than panic.
        let list = toml::from_str::<Table>(BUILT_IN)
            .map(|t| t.provider)
            .unwrap_or_default();
        Providers {
            list,
            configured_default: None,
        }
    }

    /// Built-ins extended by a config; `default_provider` (flag or env) wins over the file.
    pub fn from_config(
        config: &Config,
        default_provider: Option<String>,
    ) -> Result<Providers, ConfigError> {
        let mut p = Providers::built_in();
        for o in config.provider.iter().cloned() {
            match p.list.iter_mut().find(|e| e.id == o.id) {
                Some(existing) => existing.apply(o),
                None => {
                    let id = o.id.clone();
                    let missing =
                        |f: &str| ConfigError::Invalid(format!("new provider {id:?} needs `{f}`"));
                    let name = o.name.clone().unwrap_or_else(|| id.clone());
                    let command = o.command.clone().ok_or_else(|| missing("command"))?;
                    let mut entry = Provider {
                        id: id.clone(),
                        name,
                        command,
                        args: vec![],
                        deliver: Delivery::Type,
                        submit: SubmitKey::default(),
                        coding_agent: false,
                        interactive: None,
                        env: BTreeMap::new(),
                        pass_env: vec![],
                        approval_args: BTreeMap::new(),
                        approval_env: BTreeMap::new(),
                        instructions_args: Vec::new(),
                        instructions_env: BTreeMap::new(),
                        instructions_files: BTreeMap::new(),
                        instructions_dir_rule: DirRule::Any,
                        notices: Vec::new(),
                        hooks_args: Vec::new(),
                        version_args: default_version_args(),
                        screen: ScreenPatterns::default(),
                        prompts: vec![],
                        install: None,
                        conversation_args: Vec::new(),
                        resume_args: Vec::new(),
                        delegate: false,
                        mcp_args: Vec::new(),
                        mcp_config: None,
                        mcp_server: None,
                        mcp_approval_args: BTreeMap::new(),
                    };
                    entry.apply(o);
                    p.list.push(entry);
                }
            }
        }
        // An empty value means "no default": the first installed coding-agent CLI.
        let default = default_provider
            .or_else(|| config.default_provider.clone())
            .filter(|d| !d.trim().is_empty());
        if let Some(d) = &default
            && p.get(d).is_none()
        {
            return Err(ConfigError::Invalid(format!(
                "default provider {d:?} is not a known provider (known: {})",
                p.ids().join(", ")
            )));
        }
        p.configured_default = default;
        Ok(p)
    }

    pub fn get(&self, id: &str) -> Option<&Provider> {
        self.list.iter().find(|p| p.id == id)
    }

    pub fn all(&self) -> &[Provider] {
        &self.list
    }

    pub fn ids(&self) -> Vec<String> {
        self.list.iter().map(|p| p.id.clone()).collect()
    }

    /// For a session without a provider: the configured default, else the first installed
    /// coding-agent CLI. `Err` names what was looked for.
    pub fn default_for_session(&self) -> Result<&Provider, String> {
        if let Some(p) = self.configured_default.as_deref().and_then(|d| self.get(d)) {
            return Ok(p);
        }
        let agents: Vec<&Provider> = self.list.iter().filter(|p| p.coding_agent).collect();
        agents.iter().find(|p| p.installed()).copied().ok_or_else(|| {
            format!(
                "no coding-agent CLI is installed (looked for {}); install one, pass providerId (e.g. \"shell\"), or set --default-provider",
                agents.iter().map(|p| p.command.as_str()).collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// For a task without a provider: as for sessions, but `shell` when no CLI is installed.
    pub fn default_for_task(&self) -> String {
        self.default_for_session()
            .map(|p| p.id.clone())
            .unwrap_or_else(|_| "shell".into())
    }

    /// The id `default_for_session` would pick, if any.
    pub fn default_id(&self) -> Option<String> {
        self.default_for_session().ok().map(|p| p.id.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_table_parses_with_the_required_entries() {
        let t: Table = toml::from_str(BUILT_IN).expect("assets/providers.toml parses");
        let ids: Vec<_> = t.provider.iter().map(|p| p.id.as_str()).collect();
        for id in [
            "shell", "exec", "claude", "codex", "gemini", "aider", "opencode",
        ] {
            assert!(ids.contains(&id), "{id} missing");
        }
    }

    #[test]
    fn built_in_patterns_all_compile() {
        for p in Providers::built_in().all() {
            let (c, mut errors) = Classifier::new(&p.screen, &p.prompts);
            let _ = c.with_notices(&p.notices, &mut errors);
            assert!(errors.is_empty(), "{}: {errors:?}", p.id);
        }
        // What Codex CLI 0.171 and Gemini CLI 0.61 print when they refuse what they are handed.
        for (id, said) in [
            (
                "codex",
                "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir \"/tmp\"",
            ),
            (
                "gemini",
                "⚠  Security Warning: Skipping system defaults file\n   '/tmp/s/system-defaults.json':",
            ),
        ] {
            let p = Providers::built_in().get(id).cloned().unwrap();
            assert_eq!(p.classifier().notices_in(said).count(), 1, "{id}");
        }
        let codex = Providers::built_in()
            .get("codex")
            .cloned()
            .unwrap()
            .classifier();
        let screen = [
            "• Added hello.txt (+1 -0)",
            "✘ Failed to apply patch",
            "  └ (error details unavailable)",
        ];
        let screen: Vec<String> = screen.iter().map(|l| l.to_string()).collect();
        assert_eq!(codex.tool_failures(&screen), ["✘ Failed to apply patch"]);
        assert_eq!(
            Providers::built_in()
                .get("gemini")
                .map(|p| p.instructions_dir_rule),
            Some(DirRule::RootOwned)
        );
        let claude = Providers::built_in().get("claude").cloned().unwrap();
        let l = claude.launch_with_approval("fix it", Approval::Auto);
        assert_eq!(l.args, ["--permission-mode", "auto", "fix it"]);
        assert_eq!(
            claude.launch_with_approval("", Approval::Safe).args,
            ["--permission-mode", "manual"]
        );
    }

    #[test]
    fn every_built_in_says_how_to_install_it() {
        for p in Providers::built_in().all() {
            assert!(
                p.install.as_deref().is_some_and(|i| !i.is_empty()),
                "{}",
                p.id
            );
        }
        let claude = Providers::built_in().get("claude").cloned().unwrap();
        assert_eq!(
            claude.install.as_deref(),
            Some("npm install -g @anthropic-ai/claude-code")
        );
        let mut ghost = claude.clone();
        ghost.command = "no-such-agent-cli".into();
        assert_eq!(
            ghost.not_installed_message(),
            "provider 'claude' (Claude Code) is not installed: 'no-such-agent-cli' was not found on PATH; install it with: npm install -g @anthropic-ai/claude-code"
        );
        ghost.command = "/opt/none/agent".into();
        ghost.install = None;
        let m = ghost.not_installed_message();
        assert!(m.contains("'/opt/none/agent' does not exist"), "{m}");
        assert!(m.contains("make sure it is on PATH"), "{m}");
    }

    #[test]
    fn config_overrides_and_extends() {
        let cfg: Config = toml::from_str(
            "default_provider = \"mine\"\n[[provider]]\nid = \"exec\"\nargs = [\"-ec\", \"{task}\"]\n[[provider]]\nid = \"mine\"\ncommand = \"/bin/cat\"\n",
        )
        .unwrap();
        let p = Providers::from_config(&cfg, None).unwrap();
        assert_eq!(p.get("exec").unwrap().args, ["-ec", "{task}"]);
        assert_eq!(p.default_for_session().unwrap().id, "mine");
        let bad: Config = toml::from_str("[[provider]]\nid = \"x\"\n").unwrap();
        assert!(Providers::from_config(&bad, None).is_err());
    }

    #[test]
    fn only_programs_that_wait_for_input_are_interactive() {
        let p = Providers::built_in();
        for id in ["shell", "claude", "codex", "gemini", "aider", "opencode"] {
            assert!(p.get(id).unwrap().is_interactive(), "{id}");
        }
        assert!(!p.get("exec").unwrap().is_interactive());
        // Unset in a config: an added command that takes its task as an argument is not,
        // one that is typed into is; `interactive` says otherwise.
        let cfg: Config = toml::from_str(
            "[[provider]]\nid = \"run\"\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"{task}\"]\ndeliver = \"arg\"\n[[provider]]\nid = \"repl\"\ncommand = \"/usr/bin/python3\"\n[[provider]]\nid = \"exec\"\ninteractive = true\n",
        )
        .unwrap();
        let p = Providers::from_config(&cfg, None).unwrap();
        assert!(!p.get("run").unwrap().is_interactive());
        assert!(p.get("repl").unwrap().is_interactive());
        assert!(p.get("exec").unwrap().is_interactive());
    }

    #[test]
    fn submit_keys_and_approval_presets_are_checked_when_the_config_is_read() {
        let cfg: Config = toml::from_str(
            "[[provider]]\nid = \"repl\"\ncommand = \"/usr/bin/python3\"\nsubmit = \"newline\"\napproval_args = { auto = [\"-B\", \"-y\"] }\n",
        )
        .unwrap();
        let p = Providers::from_config(&cfg, None).unwrap();
        let repl = p.get("repl").unwrap();
        assert_eq!(repl.submit, SubmitKey::CtrlJ);
        assert_eq!(repl.submit.bytes(), b"\n");
        // Fitted to `python3 --help`: it has -B, not -y.
        assert_eq!(repl.launch_with_approval("", Approval::Auto).args, ["-B"]);
        assert_eq!(p.get("shell").unwrap().submit, SubmitKey::Enter);
        let e = toml::from_str::<Config>("[[provider]]\nid = \"x\"\nsubmit = \"return\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `return`"), "{e}");
        assert!(e.contains("`enter`, `ctrl-j`"), "{e}");
        let e = toml::from_str::<Config>(
            "[[provider]]\nid = \"x\"\napproval_args = { yolo = [\"-y\"] }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown variant `yolo`"), "{e}");
        assert!(e.contains("`manual`, `safe`, `auto`"), "{e}");
    }

    #[test]
    fn claude_limit_messages_are_read_with_their_reset() {
        let c = Providers::built_in().get("claude").unwrap().classifier();
        assert_eq!(
            c.limit_in("Claude usage limit reached. Your limit will reset at 3pm (Europe/Paris)."),
            Some(Some("3pm".into()))
        );
        assert_eq!(
            c.limit_in("5-hour usage limit reached ∙ resets 10:30"),
            Some(Some("10:30".into()))
        );
        assert_eq!(
            c.limit_in("API Error: Request rejected (429) · This request would exceed your account's rate limit."),
            Some(None)
        );
        assert_eq!(c.limit_in("I wrote hi into hello.txt."), None);
    }

    #[test]
    fn instructions_through_the_environment_name_their_file_or_directory() {
        let p = Providers::built_in();
        let opencode = p.get("opencode").unwrap();
        let env = opencode.instructions_env(
            "use orchestra report",
            || Some(PathBuf::from("/state/instructions/s1.md")),
            |_| panic!("no directory wanted"),
        );
        assert_eq!(
            env,
            [(
                "OPENCODE_CONFIG_CONTENT".to_string(),
                r#"{"instructions":["/state/instructions/s1.md"],"mcp":{mcp_servers}}"#.to_string()
            )]
        );
        let gemini = p.get("gemini").unwrap();
        let mut written = Vec::new();
        let env = gemini.instructions_env(
            "use orchestra report",
            || panic!("no file wanted"),
            |files| {
                let d = Path::new("/state/instructions/s2");
                written = files(d);
                Some(d.to_path_buf())
            },
        );
        assert_eq!(
            env,
            [(
                "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_string(),
                "/state/instructions/s2/system-defaults.json".to_string()
            )]
        );
        let file = |n: &str| written.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(file("GEMINI.md").as_deref(), Some("use orchestra report"));
        // Its hooks go in where the session fills `{gemini_hooks}` (`engine::hooks`).
        let defaults = file("system-defaults.json")
            .unwrap()
            .replace("{gemini_hooks}", "{}")
            .replace(MCP_SERVERS, "{}");
        let defaults: serde_json::Value = serde_json::from_str(&defaults).unwrap();
        assert_eq!(
            defaults["context"]["includeDirectories"],
            serde_json::json!(["/state/instructions/s2"])
        );
        assert_eq!(defaults["hooks"], serde_json::json!({}));
        // A directory that cannot be written: nothing, rather than a path to nowhere.
        assert!(gemini.instructions_env("x", || None, |_| None).is_empty());
        assert!(
            p.get("claude")
                .unwrap()
                .instructions_env("x", || None, |_| None)
                .is_empty()
        );
    }

    /// What each pinned CLI drew for the scripted model's usage-limit refusal
    /// (tests/agents_e2e.rs `*_waits_out_its_usage_limit_*`), verbatim.
    #[test]
    fn each_clis_own_limit_text_is_read() {
        let p = Providers::built_in();
        let c = |id: &str| p.get(id).unwrap().classifier();
        let codex = "■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), \
                     visit https://chatgpt.com/settings/\nusage to purchase more credits or try again at 12:28 PM.";
        assert_eq!(c("codex").limit_in(codex), Some(Some("12:28 PM".into())));
        let gemini = "Usage limit reached for gemini-3.8-flash.\n/stats model for usage details\n\
                      /model to switch models.\n● 1. Keep trying\n  2. Stop";
        assert_eq!(c("gemini").limit_in(gemini), Some(None));
        let later = "Usage limit reached for all Pro models.\nAccess resets at 4:05 PM UTC.";
        assert_eq!(c("gemini").limit_in(later), Some(Some("4:05 PM".into())));
        let aider_gave_up = "litellm.RateLimitError: RateLimitError: OpenAIException - You exceeded \
                             your current quota, please check your plan and\nbilling details.\n\
                             The API provider has rate limited you. Try again later or check your quotas.";
        assert_eq!(c("aider").limit_in(aider_gave_up), Some(None));
        // A retry that went through: the warning is not the end of its reply.
        let retried =
            format!("{aider_gave_up}\nRetrying in 32.0 seconds...\nCreated hello.txt for you.");
        assert_eq!(c("aider").limit_in(&retried), None);
        for id in ["codex", "gemini", "aider", "opencode"] {
            assert_eq!(c(id).limit_in("Created hello.txt for you."), None, "{id}");
        }
    }

    /// What the CLIs that wait out a limit by themselves show meanwhile, verbatim.
    #[test]
    fn a_limit_waited_out_by_the_cli_is_read_on_its_screen() {
        let p = Providers::built_in();
        let c = |id: &str| p.get(id).unwrap().classifier();
        let opencode = "  ┃  Build auto · Claude Sonnet 4.5 (latest) Anthropic\n  ╹▀▀▀▀\n   ⬝⬝⬝■■■■■ \
                        This request would exceed your account's rate limit. Please try again later. \
                        [retrying in 37s attempt #1]";
        assert_eq!(
            c("opencode").limit_wait_in(opencode),
            Some(Some("37s".into()))
        );
        let claude = "● Usage limit reached · set to continue automatically at 12:19pm\n─────────\n❯\n\
                      ─────────\n  ⚠ Usage limit reached · limit resets 12:22pm\n  ⏵⏵ auto mode on";
        assert_eq!(
            c("claude").limit_wait_in(claude),
            Some(Some("12:22pm".into()))
        );
        let aider = "The API provider has rate limited you. Try again later or check your quotas.\n\
                     Retrying in 16.0 seconds...\n  █░       Waiting for openai/gpt-4o\n\n";
        assert_eq!(c("aider").limit_wait_in(aider), Some(None));
        // Once it went on, the old lines are history, not a wait.
        let went_on = format!("{aider}Created hello.txt for you.\nApplied edit to hello.txt\n>");
        assert_eq!(c("aider").limit_wait_in(&went_on), None);
        assert_eq!(
            c("opencode").limit_wait_in("⬝⬝⬝■■■ [retrying in 3s attempt #2]"),
            None
        );
    }

    /// Each coding agent that can delegate gets our server the way it takes one; the paths
    /// are filled in as JSON where they go into JSON.
    #[test]
    fn each_cli_is_handed_our_mcp_server_its_own_way() {
        let p = Providers::built_in();
        let exe = Path::new("/opt/or\"ch/orchestra");
        let session = Path::new("/state/mcp/s1.json");
        let claude = p.get("claude").unwrap();
        let servers = claude.mcp_servers(exe, session).expect("claude's entry");
        let v: serde_json::Value = serde_json::from_str(&servers).expect("JSON");
        assert_eq!(v["orchestra"]["command"], "/opt/or\"ch/orchestra");
        assert_eq!(
            v["orchestra"]["args"],
            serde_json::json!(["mcp", "--session-file", "/state/mcp/s1.json"])
        );
        let mut written = String::new();
        // Without a help text (not installed here, maybe) every flag passes as written.
        let mut no_help = claude.clone();
        no_help.command = "/nonexistent/claude".into();
        let args = no_help.mcp(Approval::Auto, exe, session, &servers, |text| {
            written = text.to_string();
            Some(PathBuf::from("/state/mcp/s1.config.json"))
        });
        assert_eq!(
            args,
            [
                "--mcp-config=/state/mcp/s1.config.json",
                "--allowedTools=mcp__orchestra"
            ]
        );
        let config: serde_json::Value = serde_json::from_str(&written).expect("JSON config");
        assert_eq!(config["mcpServers"], v);
        // Under the presets that ask, the CLI asks before each call of ours.
        let args = no_help.mcp(Approval::Safe, exe, session, &servers, |_| {
            Some(PathBuf::from("/c.json"))
        });
        assert_eq!(args, ["--mcp-config=/c.json"]);

        let mut codex = p.get("codex").unwrap().clone();
        codex.command = "/nonexistent/codex".into();
        let args = codex.mcp(
            Approval::Auto,
            Path::new("/bin/orchestra"),
            session,
            "{}",
            |_| panic!("no file wanted"),
        );
        assert_eq!(
            args,
            [
                "-c",
                r#"mcp_servers.orchestra.command="/bin/orchestra""#,
                "-c",
                r#"mcp_servers.orchestra.args=["mcp", "--session-file", "/state/mcp/s1.json"]"#
            ]
        );
        for id in ["gemini", "opencode"] {
            let cli = p.get(id).unwrap();
            assert!(cli.mcp_args.is_empty(), "{id}");
            let entry = cli.mcp_servers(exe, session).expect("an entry");
            assert!(entry.contains("/state/mcp/s1.json"), "{id}: {entry}");
        }
        assert!(p.get("aider").unwrap().mcp_servers(exe, session).is_none());
    }

    /// What each pinned CLI drew for a call of an MCP server's tool (issue 33), verbatim: not
    /// reply.
    #[test]
    fn reports_of_mcp_tool_calls_are_not_reply() {
        let p = Providers::built_in();
        let lines = |t: &[&str]| t.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let gemini = lines(&[
            "╭──────────────────────────────────────────────╮",
            "│ ✓  list_tasks (orchestra MCP Server) {}      │",
            "│                                              │",
            "│ no tasks                                     │",
            "╰──────────────────────────────────────────────╯",
            "✦ Created hello.txt for you.",
        ]);
        let kept = p.get("gemini").unwrap().classifier().strip_chrome(&gemini);
        assert_eq!(kept, ["Created hello.txt for you."]);
        let opencode = lines(&[
            "     ⚙ orchestra_list_tasks",
            "",
            "     Created hello.txt for you.",
        ]);
        let kept = p
            .get("opencode")
            .unwrap()
            .classifier()
            .strip_chrome(&opencode);
        let kept: Vec<&str> = kept
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(kept, ["Created hello.txt for you."]);
    }

    #[test]
    fn exec_puts_the_task_in_its_argument() {
        let p = Providers::built_in();
        let l = p.get("exec").unwrap().launch("echo hi; exit 3");
        assert_eq!(l.program, "/bin/sh");
        assert_eq!(l.args, ["-c", "echo hi; exit 3"]);
    }
}
