//! What a session's program is started with: its command line (the provider's launch, with
//! the flags that hand it its instructions, its hooks and its conversation in front) and its
//! environment (a clean, explicit set, plus the session's own credential and orchestra's
//! variables). Kept apart from [`spawn`](super::spawn), which starts what this prepares.

use super::SpawnSession;
use crate::engine::grants::Issued;
use crate::engine::{
    Engine, EngineError, EngineResult, INSTANCE_VAR, SessionGrant, delegation, hooks, instructions,
    notices, placement,
};
use crate::providers::{Launch, Provider};
use orchestra_proto::wire::Approval;
use std::collections::BTreeMap;
use std::path::Path;

/// What a session's program is started with, and what comes with it.
pub(super) struct Prepared {
    /// The program and its arguments, flags first.
    pub(super) launch: Launch,
    /// Its whole environment.
    pub(super) env: Vec<(String, String)>,
    /// Notes for the task from the start (a place the CLI will not take its files from).
    pub(super) notes: Vec<String>,
    /// The session's own credential (in `env`): withdrawn unless the session is kept.
    pub(super) credential: Issued,
}

/// What goes into the files and variables a session's instructions are handed in, besides
/// the instructions: Gemini CLI's hooks and, for a delegating task, our MCP server's entry.
struct Fill<'a> {
    exe: Option<&'a Path>,
    session_env: &'a [(String, String)],
    servers: Option<&'a str>,
}

impl Fill<'_> {
    fn file(&self, content: &str) -> String {
        let content = hooks::fill_gemini_hooks(content, self.exe, self.session_env);
        delegation::fill_servers(&content, self.servers)
    }
}

/// This orchestra's own executable: agents run it (`orchestra report`, `orchestra hook`).
fn orchestra_exe() -> Option<std::path::PathBuf> {
    std::env::current_exe().ok()
}

impl Engine {
    /// The environment a session starts from: a clean, explicit set.
    pub(super) fn session_env(
        &self,
        provider: &Provider,
        session_id: &str,
        task_id: Option<&str>,
        approval: Approval,
        credential: &str,
    ) -> Vec<(String, String)> {
        let mut env = BTreeMap::new();
        for (k, v) in std::env::vars() {
            let keep = matches!(
                k.as_str(),
                "HOME"
                    | "USER"
                    | "LOGNAME"
                    | "LANG"
                    | "LANGUAGE"
                    | "TZ"
                    | "TMPDIR"
                    | "XDG_RUNTIME_DIR"
            ) || k.starts_with("LC_");
            if keep {
                env.insert(k, v);
            }
        }
        // Subagents can call `orchestra report …`: put our own binary first on PATH.
        let base_path =
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        let path = match orchestra_exe().and_then(|e| e.parent().map(|d| d.to_path_buf())) {
            Some(dir) => format!("{}:{base_path}", dir.display()),
            None => base_path,
        };
        env.insert("PATH".into(), path);
        let shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/bash".into());
        env.insert("SHELL".into(), shell);
        env.insert("TERM".into(), "xterm-256color".into());
        env.insert("COLORTERM".into(), "truecolor".into());
        for (k, v) in provider.passed_env() {
            env.insert(k, v);
        }
        for (k, v) in &provider.env {
            env.insert(k.clone(), v.clone());
        }
        for (k, v) in provider.approval_env.get(&approval).into_iter().flatten() {
            env.insert(k.clone(), v.clone());
        }
        if let Some(url) = self.url() {
            env.insert("ORCHESTRA_URL".into(), url);
        }
        env.insert("ORCHESTRA_SESSION_ID".into(), session_id.into());
        // The session's own credential, never the owner's token: an agent (and whatever it
        // runs) reaches its own task and session, nothing else.
        env.insert("ORCHESTRA_TOKEN".into(), credential.into());
        env.insert("ORCHESTRA_HOOK_TOKEN".into(), credential.into());
        env.insert(INSTANCE_VAR.into(), self.config().instance.clone());
        if let Some(t) = task_id {
            env.insert("ORCHESTRA_TASK_ID".into(), t.into());
        }
        env.insert(
            "ORCHESTRA_STATE_DIR".into(),
            self.state_dir().to_string_lossy().into_owned(),
        );
        env.into_iter().collect()
    }

    /// The command line and environment of session `id`'s program: the provider's launch
    /// for `instruction_arg`, the flags and files that hand it its instructions and hooks,
    /// the conversation's arguments, and a credential of its own.
    pub(super) async fn prepare_launch(
        &self,
        provider: &Provider,
        req: &SpawnSession,
        id: &str,
        instruction_arg: &str,
    ) -> EngineResult<Prepared> {
        // Fitting the preset's flags runs the CLI's `--help` once per binary.
        let for_help = provider.clone();
        let _ = tokio::task::spawn_blocking(move || for_help.help()).await;
        let approval = req.approval.unwrap_or_default();
        let mut launch = provider.launch_with_approval(instruction_arg, approval);
        let credential = self
            .issue_credential(SessionGrant {
                session_id: id.to_string(),
                task_id: req.task_id.clone(),
                approval,
            })
            .map_err(|e| EngineError::Unavailable(e.to_string()))?;
        let mut env = self.session_env(
            provider,
            id,
            req.task_id.as_deref(),
            approval,
            &credential.secret,
        );
        let exe = orchestra_exe();
        let mut notes = Vec::new();
        // Our MCP server, for a task that delegates: its entry goes into the files and
        // variables the instructions are handed in, its flags in front.
        let servers = if req.delegate {
            match self.hand_over_mcp(provider, id, approval, exe.as_deref(), &credential.secret) {
                Ok((servers, args)) => {
                    launch.args.splice(0..0, args);
                    servers
                }
                Err(why) => {
                    notes.push(why);
                    None
                }
            }
        } else {
            None
        };
        let fill = Fill {
            exe: exe.as_deref(),
            session_env: &env,
            servers: servers.as_deref(),
        };
        let (told_env, told_notes) =
            self.hand_over_instructions(provider, req.task_id.as_deref(), id, &fill, &mut launch);
        notes.extend(told_notes);
        // The agent's own hooks report its status (`hooks.rs`), through a settings file of
        // this session's; flags first, like the instructions.
        if let Some(exe) = exe {
            let hooks = provider.hooks(&exe, || hooks::write_settings(self.state_dir(), id, &exe));
            launch.args.splice(0..0, hooks);
        }
        launch
            .args
            .splice(0..0, req.conversation_args.iter().cloned());
        // Ours, where the user's environment had the same variable.
        env.retain(|(k, _)| !told_env.iter().any(|(t, _)| t == k));
        env.extend(told_env);
        Ok(Prepared {
            launch,
            env,
            notes,
            credential,
        })
    }

    /// Writes session `id`'s server file and the CLI's own MCP configuration; returns our
    /// server's entry (`{mcp_servers}`) and the flags that hand it over, or, when it cannot
    /// be handed over, the note that says so on the task.
    fn hand_over_mcp(
        &self,
        provider: &Provider,
        id: &str,
        approval: Approval,
        exe: Option<&Path>,
        token: &str,
    ) -> Result<(Option<String>, Vec<String>), String> {
        let cannot = |why: &str| {
            format!(
                "{} was not given orchestra's MCP server ({why}): it cannot delegate",
                provider.name
            )
        };
        if provider.mcp_args.is_empty() && provider.mcp_server.is_none() {
            return Err(cannot("orchestra does not know how to hand it one"));
        }
        let exe = exe.ok_or_else(|| cannot("orchestra's own executable cannot be found"))?;
        let url = self
            .url()
            .ok_or_else(|| cannot("orchestra has no address yet"))?;
        let session_file = delegation::write_session_file(self.state_dir(), id, &url, token)
            .ok_or_else(|| cannot("its session file cannot be written"))?;
        let servers = provider.mcp_servers(exe, &session_file);
        let args = provider.mcp(
            approval,
            exe,
            &session_file,
            servers.as_deref().unwrap_or("{}"),
            |text| delegation::write_config(self.state_dir(), id, text),
        );
        if servers.is_none() && args.is_empty() {
            return Err(cannot(
                "its provider entry's mcp_server is not JSON, or its flags were left out",
            ));
        }
        Ok((servers, args))
    }

    /// Hands a task's session its instructions (and Gemini CLI's hooks, which travel in the
    /// same files): flags spliced in front of `launch`'s arguments, files written where the
    /// provider reads them. Returns the variables that tell the program where they are, and
    /// notes for the task.
    fn hand_over_instructions(
        &self,
        provider: &Provider,
        task_id: Option<&str>,
        id: &str,
        fill: &Fill,
        launch: &mut Launch,
    ) -> (Vec<(String, String)>, Vec<String>) {
        // The per-session files also carry Gemini CLI's hooks (`hooks.rs`), so a session
        // without a task gets them too (with no instructions).
        let files_hold_hooks = provider
            .instructions_files
            .values()
            .any(|c| c.contains(hooks::GEMINI_HOOKS));
        let mut notes = Vec::new();
        if task_id.is_none() && !files_hold_hooks {
            return (Vec::new(), notes);
        }
        let text = task_id.map(instructions::text).unwrap_or_default();
        if task_id.is_some() {
            let told = provider.instructions(&text, || {
                instructions::write_file(self.state_dir(), id, &text)
            });
            // Before the task argument: flags first, as the CLIs' usage lines put them.
            launch.args.splice(0..0, told);
        }
        let told_env = provider.instructions_env(
            &text,
            || instructions::write_file(self.state_dir(), id, &text),
            |files| {
                let with_hooks = |dir: &Path| -> Vec<(String, String)> {
                    files(dir)
                        .into_iter()
                        .map(|(name, content)| (name, fill.file(&content)))
                        .collect()
                };
                let placement = placement::choose(self.state_dir(), provider.instructions_dir_rule);
                if let placement::Placement::Refused { reasons, .. } = &placement {
                    notes.push(notices::unplaced(provider, reasons));
                }
                instructions::write_dir(placement.dir(), id, &with_hooks)
            },
        );
        let told_env = told_env
            .into_iter()
            .map(|(k, v)| (k, delegation::fill_servers(&v, fill.servers)))
            .collect();
        (told_env, notes)
    }
}
