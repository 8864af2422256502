//! `orchestra mcp install claude|codex|gemini|opencode`: adds orchestra's MCP server
//! (`orchestra mcp`) to the user's own configuration of a coding-agent CLI, for use outside
//! orchestra (inside it, a task with `delegate` gets the server per session, with nothing
//! written to the user's files).
//!
//! It shows exactly what it will write and where, and writes only with `--yes` or a `y` at
//! its prompt. A file it changes is copied first to `<file>.orchestra-backup-<seconds>`; a file
//! it cannot parse is refused with a sentence, never overwritten. JSON files keep their keys in
//! their order and every value it does not touch as written; Codex CLI's TOML file is only
//! appended to, so that its comments and layout stay.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The name our server goes by in every CLI's configuration.
const NAME: &str = "orchestra";

/// `orchestra mcp`'s commands (besides serving).
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Add orchestra's MCP server to a coding agent's own configuration (for use outside
    /// orchestra), after showing what it will write; a changed file is backed up first.
    #[command(after_long_help = INSTALL_HELP)]
    Install(InstallArgs),
}

const INSTALL_HELP: &str = "\
Where it writes (HOME, CODEX_HOME and XDG_CONFIG_HOME are followed):
  claude    ~/.claude.json, mcpServers.orchestra (Claude Code's user scope)
  codex     ~/.codex/config.toml, [mcp_servers.orchestra] (appended)
  gemini    ~/.gemini/settings.json, mcpServers.orchestra
  opencode  ~/.config/opencode/opencode.json, mcp.orchestra
Inside orchestra, a task with delegate gets the server without any of this.";

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The coding agent whose configuration gets the server.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Write without asking.
    #[arg(long, short)]
    pub yes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    Opencode,
}

/// Why nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot find the home directory: HOME is not set")]
    NoHome,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not {format} orchestra can read ({why}); it was left as it is: add the server by hand"
    )]
    Unparseable {
        path: PathBuf,
        format: &'static str,
        why: String,
    },
    #[error(
        "{path} already has a different [mcp_servers.orchestra]; it was left as it is: remove that table (or edit it) and run this again"
    )]
    OtherCodexEntry { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the answer: {0}")]
    Prompt(std::io::Error),
}

/// What the server is started with: this executable, `mcp`, and the state directory when one
/// was named (else the server finds the default one).
pub fn server_command(state_dir: Option<&Path>) -> (String, Vec<String>) {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "orchestra".into());
    let mut args = Vec::new();
    if let Some(dir) = state_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        args.push("--state-dir".to_string());
        args.push(dir.to_string_lossy().into_owned());
    }
    args.push("mcp".to_string());
    (exe, args)
}

/// A change to one file: where, what it shows, and the file's new text.
#[derive(Debug)]
pub struct Plan {
    pub path: PathBuf,
    /// What is added or replaced, as it will stand in the file.
    pub shown: String,
    /// The whole new text; `None` when the file already says it.
    pub text: Option<String>,
    /// Whether the file exists (and so is backed up).
    pub exists: bool,
}

/// `orchestra mcp COMMAND` (`orchestra mcp` itself serves: `mcp.rs`).
pub fn run(command: &McpCommand, state_dir: Option<&Path>) -> ExitCode {
    match command {
        McpCommand::Install(install) => run_install(install, state_dir),
    }
}

/// `orchestra mcp install AGENT [--yes]`.
fn run_install(args: &InstallArgs, state_dir: Option<&Path>) -> ExitCode {
    let stdin = std::io::stdin();
    match install(args, state_dir, &mut stdin.lock(), &mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("orchestra: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Plans the change, shows it, asks (unless `--yes`), backs the file up and writes it.
pub fn install(
    args: &InstallArgs,
    state_dir: Option<&Path>,
    answers: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), InstallError> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(InstallError::NoHome)?;
    let (command, server_args) = server_command(state_dir);
    let plan = plan(args.agent, &home, &command, &server_args)?;
    let say = |out: &mut dyn Write, text: &str| {
        let _ = writeln!(out, "{text}");
    };
    let Some(text) = &plan.text else {
        say(
            out,
            &format!(
                "{} already has orchestra's MCP server; nothing to do.",
                plan.path.display()
            ),
        );
        return Ok(());
    };
    say(
        out,
        &format!("This adds to {}:\n\n{}\n", plan.path.display(), plan.shown),
    );
    let backup = plan.exists.then(|| backup_path(&plan.path));
    if let Some(b) = &backup {
        say(
            out,
            &format!("The file as it is now is copied to {} first.", b.display()),
        );
    }
    if !args.yes && !confirmed(answers, out)? {
        say(out, "Nothing written.");
        return Ok(());
    }
    if let Some(b) = &backup {
        std::fs::copy(&plan.path, b).map_err(|source| InstallError::Write {
            path: b.clone(),
            source,
        })?;
    }
    write_keeping_mode(&plan.path, text).map_err(|source| InstallError::Write {
        path: plan.path.clone(),
        source,
    })?;
    say(out, &format!("Written: {}", plan.path.display()));
    Ok(())
}

/// Asks "Write it? [y/N]"; only a `y` (or `yes`) says yes.
fn confirmed(answers: &mut dyn BufRead, out: &mut dyn Write) -> Result<bool, InstallError> {
    let _ = write!(out, "Write it? [y/N] ");
    let _ = out.flush();
    let mut line = String::new();
    answers.read_line(&mut line).map_err(InstallError::Prompt)?;
    Ok(matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// `<file>.orchestra-backup-<seconds since the epoch>`, with a number after it when that is
/// taken.
fn backup_path(file: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let base = format!("{}.orchestra-backup-{secs}", file.display());
    let mut path = PathBuf::from(&base);
    let mut n = 1;
    while path.exists() {
        path = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    path
}

/// Replaces `path` with `text` at once (a temporary file renamed over it), keeping its
/// permissions (0600 for a new one: these files can hold keys).
fn write_keeping_mode(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & 0o7777);
    let name = path
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.orchestra-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&tmp, path)
}

/// Where `agent` keeps its user configuration, under `home`.
fn config_path(agent: Agent, home: &Path) -> PathBuf {
    let env_dir = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    match agent {
        Agent::Claude => home.join(".claude.json"),
        Agent::Codex => env_dir("CODEX_HOME")
            .unwrap_or_else(|| home.join(".codex"))
            .join("config.toml"),
        Agent::Gemini => home.join(".gemini/settings.json"),
        Agent::Opencode => {
            let dir = env_dir("XDG_CONFIG_HOME")
                .unwrap_or_else(|| home.join(".config"))
                .join("opencode");
            // Its own order: opencode.jsonc is read too; the one that exists is changed.
            ["opencode.json", "opencode.jsonc"]
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.exists())
                .unwrap_or_else(|| dir.join("opencode.json"))
        }
    }
}

/// The change `agent`'s configuration needs to start `command args…` as our server.
pub fn plan(
    agent: Agent,
    home: &Path,
    command: &str,
    args: &[String],
) -> Result<Plan, InstallError> {
    let path = config_path(agent, home);
    let current = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(InstallError::Read { path, source }),
    };
    let (section, entry) = match agent {
        Agent::Codex => return codex_plan(path, current, command, args),
        Agent::Claude => (
            "mcpServers",
            serde_json::json!({"type": "stdio", "command": command, "args": args, "env": {}}),
        ),
        Agent::Gemini => (
            "mcpServers",
            serde_json::json!({"command": command, "args": args}),
        ),
        Agent::Opencode => {
            let mut line = vec![command.to_string()];
            line.extend(args.iter().cloned());
            (
                "mcp",
                serde_json::json!({"type": "local", "command": line, "enabled": true}),
            )
        }
    };
    json_plan(path, current, section, entry)
}

/// A JSON object's members in their order, each value as written.
struct Ordered(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Ordered(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }

    fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// The object, two-space indented at its own level (its values as they were written).
    fn render(&self) -> String {
        let members: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                let key = serde_json::Value::String(k.clone());
                format!("  {key}: {}", v.get())
            })
            .collect();
        if members.is_empty() {
            "{}".into()
        } else {
            format!("{{\n{}\n}}", members.join(",\n"))
        }
    }
}

fn raw(v: &serde_json::Value) -> Box<RawValue> {
    // Serializing a `Value` cannot fail; the fallback is never taken.
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// `<section>.orchestra = entry` in the JSON object of `current` (a new file when `None`).
fn json_plan(
    path: PathBuf,
    current: Option<String>,
    section: &str,
    entry: serde_json::Value,
) -> Result<Plan, InstallError> {
    let unparseable = |why: String| InstallError::Unparseable {
        path: path.clone(),
        format: "a JSON object",
        why,
    };
    let exists = current.is_some();
    let text = current.unwrap_or_else(|| "{}".into());
    let mut top: Ordered = serde_json::from_str(&text).map_err(|e| unparseable(e.to_string()))?;
    let mut servers: Ordered = match top.get(section) {
        Some(v) => serde_json::from_str(v.get())
            .map_err(|e| unparseable(format!("its {section} is not an object: {e}")))?,
        None => Ordered(Vec::new()),
    };
    let shown = serde_json::to_string_pretty(&serde_json::json!({ section: { NAME: entry } }))
        .unwrap_or_default();
    let same = servers
        .get(NAME)
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v.get()).ok())
        .is_some_and(|v| v == entry);
    if same {
        return Ok(Plan {
            path,
            shown,
            text: None,
            exists,
        });
    }
    servers.set(NAME, raw(&entry));
    let servers =
        RawValue::from_string(servers.render()).map_err(|e| unparseable(e.to_string()))?;
    top.set(section, servers);
    Ok(Plan {
        path,
        shown,
        text: Some(top.render() + "\n"),
        exists,
    })
}

/// `[mcp_servers.orchestra]` appended to Codex CLI's config.toml.
fn codex_plan(
    path: PathBuf,
    current: Option<String>,
    command: &str,
    args: &[String],
) -> Result<Plan, InstallError> {
    let unparseable = |why: String| InstallError::Unparseable {
        path: path.clone(),
        format: "TOML",
        why,
    };
    let exists = current.is_some();
    let text = current.unwrap_or_default();
    let doc: toml::Table = toml::from_str(&text).map_err(|e| unparseable(e.to_string()))?;
    let mut table = toml::Table::new();
    table.insert("command".into(), toml::Value::String(command.into()));
    table.insert(
        "args".into(),
        toml::Value::Array(args.iter().cloned().map(toml::Value::String).collect()),
    );
    let mut wrapped = toml::Table::new();
    wrapped.insert(NAME.into(), toml::Value::Table(table.clone()));
    let mut outer = toml::Table::new();
    outer.insert("mcp_servers".into(), toml::Value::Table(wrapped));
    let shown = toml::to_string(&outer).map_err(|e| unparseable(e.to_string()))?;
    let existing = doc
        .get("mcp_servers")
        .and_then(|s| s.get(NAME))
        .and_then(toml::Value::as_table);
    match existing {
        Some(t)
            if t.get("command") == table.get("command") && t.get("args") == table.get("args") =>
        {
            return Ok(Plan {
                path,
                shown,
                text: None,
                exists,
            });
        }
        Some(_) => return Err(InstallError::OtherCodexEntry { path }),
        None => {}
    }
    let mut new = text.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    if !new.is_empty() {
        new.push('\n');
    }
    new.push_str(&shown);
    // Appending cannot make a valid file invalid unless `mcp_servers` is an inline table or
    // an array of tables there: then it is refused rather than broken.
    toml::from_str::<toml::Table>(&new).map_err(|e| {
        unparseable(format!(
            "[mcp_servers.orchestra] cannot be appended to it: {e}"
        ))
    })?;
    Ok(Plan {
        path,
        shown,
        text: Some(new),
        exists,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Vec<String> {
        vec!["mcp".into()]
    }

    #[test]
    fn json_keeps_the_users_keys_in_order_and_as_written() {
        let home = tempfile::tempdir().expect("tempdir");
        let file = home.path().join(".claude.json");
        let before =
            "{\"zeta\": 1, \"mcpServers\": {\"mine\": {\"command\": \"x\"}}, \"alpha\": [1,2]}";
        std::fs::write(&file, before).expect("write");
        let planned = plan(Agent::Claude, home.path(), "/bin/orchestra", &args()).expect("plan");
        let text = planned.text.expect("a change");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["mcpServers"]["mine"]["command"], "x");
        assert_eq!(v["mcpServers"]["orchestra"]["command"], "/bin/orchestra");
        assert_eq!(
            v["mcpServers"]["orchestra"]["args"],
            serde_json::json!(["mcp"])
        );
        assert!(text.find("zeta") < text.find("alpha"), "{text}");
        assert!(text.contains("[1,2]"), "{text}");
        // Once written, the same again is nothing to do.
        std::fs::write(&file, &text).expect("write");
        let again = plan(Agent::Claude, home.path(), "/bin/orchestra", &args()).expect("plan");
        assert!(again.text.is_none());
    }

    #[test]
    fn a_file_that_is_not_json_is_refused() {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(home.path().join(".gemini")).expect("mkdir");
        let file = home.path().join(".gemini/settings.json");
        std::fs::write(&file, "{ // a comment\n \"theme\": \"x\" }").expect("write");
        let e = plan(Agent::Gemini, home.path(), "/bin/orchestra", &args()).unwrap_err();
        assert!(e.to_string().contains("is not a JSON object"), "{e}");
        std::fs::write(&file, "{\"mcpServers\": [1]}").expect("write");
        let e = plan(Agent::Gemini, home.path(), "/bin/orchestra", &args()).unwrap_err();
        assert!(
            e.to_string().contains("its mcpServers is not an object"),
            "{e}"
        );
    }

    #[test]
    fn codex_gets_a_table_appended_and_keeps_its_comments() {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(home.path().join(".codex")).expect("mkdir");
        let file = home.path().join(".codex/config.toml");
        std::fs::write(&file, "# mine\nmodel = \"gpt\"").expect("write");
        let planned = plan_codex(home.path(), "/bin/orchestra").expect("plan");
        let text = planned.text.expect("a change");
        assert!(
            text.starts_with("# mine\nmodel = \"gpt\"\n\n[mcp_servers.orchestra]"),
            "{text}"
        );
        let t: toml::Table = toml::from_str(&text).expect("TOML");
        assert_eq!(
            t["mcp_servers"]["orchestra"]["command"].as_str(),
            Some("/bin/orchestra")
        );
        std::fs::write(&file, &text).expect("write");
        let again = plan_codex(home.path(), "/bin/orchestra");
        assert!(again.expect("plan").text.is_none());
        let other = plan_codex(home.path(), "/elsewhere/orchestra").unwrap_err();
        assert!(
            other.to_string().contains("already has a different"),
            "{other}"
        );
        // An inline `mcp_servers` cannot take a table after it: refused, not broken.
        std::fs::write(&file, "mcp_servers = { x = { command = \"y\" } }\n").expect("write");
        let e = plan_codex(home.path(), "/bin/orchestra").unwrap_err();
        assert!(e.to_string().contains("cannot be appended"), "{e}");
    }

    fn plan_codex(home: &Path, command: &str) -> Result<Plan, InstallError> {
        plan(Agent::Codex, home, command, &args())
    }
}
