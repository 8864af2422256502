//! Sessions in the engine: spawning a provider in a PTY, following what it does, sending it
//! messages, and ending it. A task run by a session follows it from here (see `runs.rs`).

use super::status::{Fact, Facts, SessionStatus, decide, decide_with_source, startup_quiet};
use super::{Engine, EngineError, EngineResult, Event, SessionEventKind, now_ms};
use crate::providers::patterns::{SeenPrompt, Verdict};
use crate::providers::{Delivery, Provider};
use crate::session::{Activity, ExitInfo, PtySession, SessionError, SessionEvent, SpawnSpec};
use crate::store::{Record, Removal, Table};
use orchestra_proto::wire::{Approval, Cursor, Message, Peek, Role, SessionInfo};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How much scrollback each session's terminal keeps: as much as a reply is read from
/// ([`REPLY_SCROLLBACK`]), and no more. Every line costs its full width in vt100 cells
/// (32 bytes each: 7.5 MiB at 120 columns); at 10,000 lines one flood left 40 MB behind
/// per session. The transcript on disk has everything.
const SCROLLBACK_LINES: usize = REPLY_SCROLLBACK;
/// How much scrollback a reply is read from: a longer reply keeps its last lines.
const REPLY_SCROLLBACK: usize = 2_000;

/// Output lines reach the session's task (a store write and a `task:output` event carrying
/// the whole task) at most this often while a program floods; the first lines after a quiet
/// spell go at once. Without it a flood made hundreds of such events a second, each one
/// serialised for every event-stream client and parsed by every attached TUI: that, not the
/// terminal, was most of the cost of a watched flood.
const OUTPUT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// A request to start a session.
#[derive(Debug, Clone, Default)]
pub struct SpawnSession {
    pub task: String,
    pub provider_id: Option<String>,
    pub working_directory: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    pub task_id: Option<String>,
    pub approval: Option<Approval>,
    /// Arguments before all others: a task's conversation pinned or resumed
    /// (`conversation_args`, `resume_args`), already fitted to the installed CLI.
    pub conversation_args: Vec<String>,
}

/// What a send is: text to type and submit, or named keys.
#[derive(Debug, Clone)]
pub enum Input {
    Text(String),
    Keys(Vec<String>),
}

/// What a session's threads handed over and the follower has not yet processed. Bounded:
/// only the newest output lines are kept (all of them are in the transcript), so a flooding
/// child cannot grow our memory while the follower writes to the store.
#[derive(Default)]
struct InboxState {
    lines: std::collections::VecDeque<String>,
    screen: bool,
    activity: Vec<Activity>,
    exit: Option<ExitInfo>,
}

struct Inbox {
    state: Mutex<InboxState>,
    /// Woken at once for a status fact or the exit, in the pump's next round for output and
    /// screen changes (so while a program floods, its follower takes what came at most once
    /// a round), and by the pump when held output falls due.
    follower: Arc<super::wake_pump::Waiting>,
    pump: Arc<super::wake_pump::WakePump>,
}

impl Inbox {
    fn new(pump: Arc<super::wake_pump::WakePump>) -> Inbox {
        Inbox {
            state: Mutex::default(),
            follower: Arc::default(),
            pump,
        }
    }

    fn is_empty(&self) -> bool {
        let s = self.state.lock();
        s.lines.is_empty() && !s.screen && s.activity.is_empty() && s.exit.is_none()
    }

    /// Called on the session's threads: never blocks beyond a short lock.
    fn push(&self, ev: SessionEvent) {
        {
            let mut s = self.state.lock();
            match ev {
                SessionEvent::Output(l) => {
                    s.lines.extend(l);
                    let excess = s
                        .lines
                        .len()
                        .saturating_sub(orchestra_proto::task::OUTPUT_LINES_KEPT);
                    s.lines.drain(..excess);
                    // The screen event of the same bytes follows at once and wakes the
                    // follower for both: one wake-up per write of the program, not two.
                    return;
                }
                SessionEvent::Screen => {
                    s.screen = true;
                    drop(s);
                    self.pump.wake_soon(&self.follower);
                    return;
                }
                SessionEvent::Activity(a) => s.activity.push(a),
                SessionEvent::Exited(e) => s.exit = Some(e),
            }
        }
        self.follower.wake.notify_one();
    }
}

/// The screen-diff state between a send and the reply it produces.
struct PendingReply {
    before: Vec<String>,
    sent: String,
    /// A request to the agent (the task's instruction, or text a user sent): a reply to it
    /// is the agent working on its task. Keys and automatic answers are not requests.
    request: bool,
    /// The reply is what follows the echo of `sent` on the screen, wherever that is (the
    /// instruction given as an argument: the CLI shows it once it takes it up, after any
    /// start-up screens), rather than what changed since `before`.
    after_echo: bool,
}

impl PendingReply {
    /// The reply to an instruction given on the command line.
    fn to_argument(instruction: &str) -> Self {
        Self {
            before: Vec::new(),
            sent: instruction.to_string(),
            request: true,
            after_echo: true,
        }
    }
}

pub(crate) struct SessionEntry {
    pub(crate) seq: i64,
    pub(crate) info: Mutex<SessionInfo>,
    /// `None` for sessions restored from a previous run: their process is gone.
    pub(crate) pty: Option<Arc<PtySession>>,
    pub(crate) provider: Option<Provider>,
    pub(crate) messages: Mutex<Vec<Message>>,
    reply: Mutex<Option<PendingReply>>,
    /// The first instruction, still to be typed once the agent is ready (or before the first
    /// input someone else types, see [`Engine::write_input`]).
    first_instruction: Mutex<Option<String>>,
    /// Held while anything is typed into the terminal: what is typed (the first instruction,
    /// sends, raw input) reaches it whole and in the order it was taken.
    pub(super) typing: tokio::sync::Mutex<()>,
    /// Ended on purpose (delete, cancel): the task it runs is cancelled, not failed.
    pub(crate) ending_on_purpose: AtomicBool,
    /// Counts the output's quiet spells: looks at the terminal scheduled in an earlier one
    /// stop (see `terminal_looks.rs`).
    pub(crate) quiet_spells: std::sync::atomic::AtomicU64,
    /// What was typed last did not end its line (no Enter yet): the text before the cursor
    /// of a program reading a line is the user's own, not a question (see `agents.rs`).
    pub(crate) line_half_typed: AtomicBool,
    /// Screen classification and turn state of coding agents (see `agents.rs`).
    pub(crate) agent: Mutex<super::agents::AgentState>,
    /// What the session runtime reported, the status is decided from (see `status.rs`).
    pub(crate) facts: Mutex<Facts>,
    /// The status last published, for watchers of this one session (terminal streams).
    status_watch: tokio::sync::watch::Sender<SessionStatus>,
    /// The session's own credential: its agent's `ORCHESTRA_TOKEN` (and the secret its hooks
    /// send, `hooks.rs`), good for its own task and session only (`api::rights`) and only
    /// while it lives. `None` for sessions restored from a previous run.
    pub(crate) credential: Option<String>,
}

impl SessionEntry {
    pub(crate) fn snapshot_info(&self) -> SessionInfo {
        self.info.lock().clone()
    }

    /// Forgets the reply being waited for: the agent's hook reported it.
    pub(super) fn drop_pending_reply(&self) {
        self.reply.lock().take();
    }

    fn live_pty(&self) -> EngineResult<&Arc<PtySession>> {
        match &self.pty {
            Some(p) if !self.info.lock().ended => Ok(p),
            _ => Err(EngineError::Conflict(format!(
                "session {} has ended",
                self.info.lock().id
            ))),
        }
    }
}

/// Paces a session's output lines into its task: lines gather while a program floods and go
/// at most once per [`OUTPUT_INTERVAL`]; the first after a quiet spell goes at once. What is
/// held is bounded like the inbox (only the newest lines are kept; all are in the transcript).
#[derive(Default)]
struct OutputPacer {
    held: std::collections::VecDeque<String>,
    /// Before this, lines are held (set when some went).
    next: Option<std::time::Instant>,
}

impl OutputPacer {
    fn hold(&mut self, lines: std::collections::VecDeque<String>) {
        self.held.extend(lines);
        let excess = self
            .held
            .len()
            .saturating_sub(orchestra_proto::task::OUTPUT_LINES_KEPT);
        self.held.drain(..excess);
    }

    /// When held lines are due (`None`: nothing is held).
    fn due(&self) -> Option<std::time::Instant> {
        if self.held.is_empty() {
            return None;
        }
        Some(self.next.unwrap_or_else(std::time::Instant::now))
    }

    /// The lines to deliver now, if any: held lines once their interval has passed, or at
    /// once when `urgent`.
    fn release(&mut self, now: std::time::Instant, urgent: bool) -> Option<Vec<String>> {
        if self.held.is_empty() || (!urgent && self.next.is_some_and(|n| now < n)) {
            return None;
        }
        self.next = Some(now + OUTPUT_INTERVAL);
        Some(std::mem::take(&mut self.held).into())
    }
}

fn session_record(info: &SessionInfo, seq: i64) -> Record {
    Record {
        table: Table::Sessions,
        id: info.id.clone(),
        seq,
        owner: info.task_id.clone(),
        json: serde_json::to_string(info).unwrap_or_else(|_| "{}".into()),
    }
}

/// A message stamped now.
fn new_message(
    role: Role,
    text: String,
    keys: Option<Vec<String>>,
    auto: Option<String>,
) -> Message {
    Message {
        id: uuid::Uuid::new_v4().to_string(),
        role,
        text,
        at: now_ms(),
        keys,
        auto,
    }
}

fn message_record(session_id: &str, m: &Message, seq: i64) -> Record {
    Record {
        table: Table::Messages,
        id: m.id.clone(),
        seq,
        owner: Some(session_id.to_string()),
        json: serde_json::to_string(m).unwrap_or_else(|_| "{}".into()),
    }
}

fn session_error(e: SessionError) -> EngineError {
    match e {
        SessionError::Ended => EngineError::Conflict("the session has ended".into()),
        SessionError::UnknownKey(k) => EngineError::Invalid(format!(
            "unknown key {k:?}: use names like enter, tab, shift-tab, esc, backspace, up, pageup, home, delete, f5, ctrl-c, alt-x, ctrl-up, or a single character"
        )),
        SessionError::InvalidCwd(p) => EngineError::Invalid(format!(
            "workingDirectory {} is not a directory",
            p.display()
        )),
        other => EngineError::Internal(other.to_string()),
    }
}

/// The screen and the last [`REPLY_SCROLLBACK`] lines of scrollback as lines, trailing blank
/// lines dropped: what replies are diffed on. Copying them out costs milliseconds a call (a
/// flooding session's more, starved of CPU), so it runs off the async workers: on them, a few
/// flooding sessions' replies kept every worker busy and keystrokes waited seconds.
pub(super) async fn screen_lines(pty: &Arc<PtySession>) -> Vec<String> {
    let pty = pty.clone();
    let snap = tokio::task::spawn_blocking(move || pty.snapshot(REPLY_SCROLLBACK, false))
        .await
        .unwrap_or_default();
    let mut lines = snap.scrollback;
    lines.extend(snap.screen.split('\n').map(|l| l.trim_end().to_string()));
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// Where the echo of `sent` ends in `lines` (the index after its last line), when its first
/// line shows: the CLI took the instruction up. Matched on the start of that line, which
/// fits a screen line even where the rest wraps.
fn echo_end(lines: &[String], sent: &str) -> Option<usize> {
    let first = sent.lines().map(str::trim).find(|l| !l.is_empty())?;
    let head: String = first.chars().take(30).collect();
    let start = lines.iter().position(|l| l.contains(head.as_str()))?;
    let rest: Vec<&str> = sent
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let wrapped = lines[start + 1..]
        .iter()
        .take_while(|l| {
            let t = l.trim();
            !t.is_empty() && rest.iter().any(|r| r.contains(t))
        })
        .count();
    Some(start + 1 + wrapped)
}

/// This orchestra's own executable: agents run it (`orchestra report`, `orchestra hook`).
fn orchestra_exe() -> Option<std::path::PathBuf> {
    std::env::current_exe().ok()
}

/// A provider whose program is missing is refused (503) with the one message that says what
/// was looked for and how to install it: for sessions, tasks created, started and dispatched.
pub(crate) fn ensure_installed(provider: &Provider) -> EngineResult<()> {
    if provider.installed() {
        Ok(())
    } else {
        Err(EngineError::Unavailable(provider.not_installed_message()))
    }
}

fn submit_bytes(provider: Option<&Provider>) -> &'static [u8] {
    provider.map(|p| p.submit).unwrap_or_default().bytes()
}

impl Engine {
    pub(crate) fn session_entry(&self, id: &str) -> EngineResult<Arc<SessionEntry>> {
        self.inner
            .sessions
            .read()
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NotFound(format!("no session with id {id:?}")))
    }

    fn live_session_count(&self) -> usize {
        self.inner
            .sessions
            .read()
            .order
            .iter()
            .filter(|s| !s.info.lock().ended)
            .count()
    }

    /// Live and total sessions.
    pub fn session_counts(&self) -> (usize, usize) {
        let total = self.inner.sessions.read().order.len();
        (self.live_session_count(), total)
    }

    /// The environment a session starts from: a clean, explicit set.
    fn session_env(
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
        env.insert(super::INSTANCE_VAR.into(), self.config().instance.clone());
        if let Some(t) = task_id {
            env.insert("ORCHESTRA_TASK_ID".into(), t.into());
        }
        env.insert(
            "ORCHESTRA_STATE_DIR".into(),
            self.state_dir().to_string_lossy().into_owned(),
        );
        env.into_iter().collect()
    }

    /// Which provider a spawn uses, checked to be installed.
    fn spawn_provider(&self, id: Option<&str>) -> EngineResult<Provider> {
        let provider = match id {
            Some(id) => self.providers().get(id).cloned().ok_or_else(|| {
                EngineError::Invalid(format!(
                    "unknown providerId {id:?}; known providers: {}",
                    self.providers().ids().join(", ")
                ))
            })?,
            None => self
                .providers()
                .default_for_session()
                .cloned()
                .map_err(EngineError::Unavailable)?,
        };
        ensure_installed(&provider)?;
        Ok(provider)
    }

    /// Starts a session: the provider's program in a new PTY and process group.
    pub async fn spawn_session(&self, req: SpawnSession) -> EngineResult<SessionInfo> {
        let provider = self.spawn_provider(req.provider_id.as_deref())?;
        let cwd = self.resolve_dir(req.working_directory.as_deref())?;
        if self.live_session_count() >= self.config().max_sessions {
            return Err(EngineError::TooMany(format!(
                "{} sessions are already running (the limit, --max-sessions); end one first",
                self.config().max_sessions
            )));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (cols, rows) = (req.cols.unwrap_or(120), req.rows.unwrap_or(40));
        let transcripts = self.state_dir().join("transcripts");
        let transcript = orchestra_sys::private::create_private_dir(&transcripts)
            .ok()
            .map(|_| transcripts.join(format!("{id}.log")));
        let instruction_arg = if provider.deliver == Delivery::Arg {
            req.task.as_str()
        } else {
            ""
        };
        // Fitting the preset's flags runs the CLI's `--help` once per binary.
        let for_help = provider.clone();
        let _ = tokio::task::spawn_blocking(move || for_help.help()).await;
        let approval = req.approval.unwrap_or_default();
        let mut launch = provider.launch_with_approval(instruction_arg, approval);
        let credential = self
            .issue_credential(super::SessionGrant {
                session_id: id.clone(),
                task_id: req.task_id.clone(),
                approval,
            })
            .map_err(|e| EngineError::Unavailable(e.to_string()))?;
        let session_env = self.session_env(
            &provider,
            &id,
            req.task_id.as_deref(),
            approval,
            &credential.secret,
        );
        let exe = orchestra_exe();
        // The per-session files also carry Gemini CLI's hooks (`hooks.rs`), so a session
        // without a task gets them too (with no instructions).
        let files_hold_hooks = provider
            .instructions_files
            .values()
            .any(|c| c.contains(super::hooks::GEMINI_HOOKS));
        let mut told_env = Vec::new();
        // Notes for the task from the start (a place the CLI will not take its files from).
        let mut notes = Vec::new();
        if req.task_id.is_some() || files_hold_hooks {
            let text = req
                .task_id
                .as_deref()
                .map(super::instructions::text)
                .unwrap_or_default();
            if req.task_id.is_some() {
                let told = provider.instructions(&text, || {
                    super::instructions::write_file(self.state_dir(), &id, &text)
                });
                // Before the task argument: flags first, as the CLIs' usage lines put them.
                launch.args.splice(0..0, told);
            }
            told_env = provider.instructions_env(
                &text,
                || super::instructions::write_file(self.state_dir(), &id, &text),
                |files| {
                    let with_hooks = |dir: &std::path::Path| -> Vec<(String, String)> {
                        files(dir)
                            .into_iter()
                            .map(|(name, content)| {
                                let content = super::hooks::fill_gemini_hooks(
                                    &content,
                                    exe.as_deref(),
                                    &session_env,
                                );
                                (name, content)
                            })
                            .collect()
                    };
                    let placement =
                        super::placement::choose(self.state_dir(), provider.instructions_dir_rule);
                    if let super::placement::Placement::Refused { reasons, .. } = &placement {
                        notes.push(super::notices::unplaced(&provider, reasons));
                    }
                    super::instructions::write_dir(placement.dir(), &id, &with_hooks)
                },
            );
        }
        // The agent's own hooks report its status (`hooks.rs`), through a settings file of
        // this session's; flags first, like the instructions.
        if let Some(exe) = exe {
            let hooks = provider.hooks(&exe, || {
                super::hooks::write_settings(self.state_dir(), &id, &exe)
            });
            launch.args.splice(0..0, hooks);
        }
        launch
            .args
            .splice(0..0, req.conversation_args.iter().cloned());
        let mut spec = SpawnSpec::new(launch.program.clone(), &cwd);
        spec.args = launch.args;
        spec.env = session_env;
        // Ours, where the user's environment had the same variable.
        spec.env
            .retain(|(k, _)| !told_env.iter().any(|(t, _)| t == k));
        spec.env.extend(told_env);
        spec.cols = cols;
        spec.rows = rows;
        spec.scrollback = SCROLLBACK_LINES;
        spec.transcript = transcript.clone();
        spec.transcript_cap = self.config().transcript_cap;
        spec.settle = self.config().settle;
        spec.startup_quiet = startup_quiet(spec.settle);
        let facts = Facts::started(provider.is_interactive());
        spec.marker = id.clone();

        let inbox = Arc::new(Inbox::new(self.inner.followers.clone()));
        let sink = inbox.clone();
        let pty =
            PtySession::spawn(spec, Box::new(move |ev| sink.push(ev))).map_err(|e| match e {
                SessionError::Spawn { program, reason } => {
                    EngineError::Unavailable(format!("cannot start {program}: {reason}"))
                }
                other => session_error(other),
            })?;

        let info = SessionInfo {
            id: id.clone(),
            provider_id: provider.id.clone(),
            task: req.task.clone(),
            working_directory: cwd,
            pid: pty.pid(),
            status: decide(&facts, None, false),
            status_source: Default::default(),
            ended: false,
            exit_code: None,
            signal: None,
            cols,
            rows,
            created_at: now_ms(),
            ended_at: None,
            task_id: req.task_id.clone(),
            approval: req.approval.unwrap_or_default(),
            prompt: None,
            resets_at: None,
            transcript: transcript.map(|p| p.to_string_lossy().into_owned()),
        };
        // Acknowledged only once its record is durable: a session the store cannot keep (a
        // full disk) is ended at once and refused like any other write, not left running
        // unrecorded.
        let seq = self.next_seq();
        if let Err(e) = self.store().put(vec![session_record(&info, seq)]).await {
            let grace = self.config().grace;
            let ended = pty.clone();
            let _ = tokio::task::spawn_blocking(move || ended.terminate(grace)).await;
            return Err(e.into());
        }
        let typed_first = provider.deliver == Delivery::Type && !req.task.trim().is_empty();
        let entry = Arc::new(SessionEntry {
            seq,
            status_watch: tokio::sync::watch::Sender::new(info.status),
            info: Mutex::new(info.clone()),
            pty: Some(pty.clone()),
            provider: Some(provider.clone()),
            messages: Mutex::new(Vec::new()),
            reply: Mutex::new(
                (!typed_first && !instruction_arg.trim().is_empty())
                    .then(|| PendingReply::to_argument(instruction_arg)),
            ),
            // Typed once the program is ready for input, so it lands at its prompt rather
            // than being echoed by the terminal before the prompt is drawn. Set before the
            // follower starts, so no `ready` can come before it is there.
            first_instruction: Mutex::new(typed_first.then(|| req.task.clone())),
            typing: tokio::sync::Mutex::new(()),
            ending_on_purpose: AtomicBool::new(false),
            quiet_spells: std::sync::atomic::AtomicU64::new(0),
            line_half_typed: AtomicBool::new(false),
            agent: Default::default(),
            facts: Mutex::new(facts),
            credential: Some(credential.keep()),
        });
        entry.agent.lock().said.add_notes(notes);
        {
            let mut table = self.inner.sessions.write();
            table.by_id.insert(id.clone(), entry.clone());
            table.order.push(entry.clone());
        }
        self.publish_session(SessionEventKind::Started, &info);
        tokio::spawn(self.clone().follow(entry.clone(), inbox));
        tracing::info!(session = %id, provider = %provider.id, pid = info.pid, "session started");
        Ok(info)
    }

    pub(super) fn publish_session(&self, kind: SessionEventKind, info: &SessionInfo) {
        self.publish(Event::Session {
            kind,
            session: Arc::new(info.clone()),
        });
        if let Ok(entry) = self.session_entry(&info.id) {
            entry.status_watch.send_replace(info.status);
        }
    }

    /// The session's status now, and a receiver that wakes when it changes.
    pub fn watch_session_status(
        &self,
        id: &str,
    ) -> EngineResult<tokio::sync::watch::Receiver<SessionStatus>> {
        Ok(self.session_entry(id)?.status_watch.subscribe())
    }

    /// Follows one session's events until it exits.
    async fn follow(self, entry: Arc<SessionEntry>, inbox: Arc<Inbox>) {
        let mut output = OutputPacer::default();
        loop {
            let due = output.due();
            if let Some(at) = due {
                inbox.pump.wake_at(&inbox.follower, at);
            }
            inbox.follower.wake.notified().await;
            let held_due = due.is_some_and(|at| at <= std::time::Instant::now());
            if !held_due && inbox.is_empty() {
                // A wake-up for what an earlier take already took.
                continue;
            }
            let InboxState {
                lines,
                screen,
                activity,
                exit: exited,
            } = std::mem::take(&mut *inbox.state.lock());
            if screen {
                self.publish_screen(|| entry.info.lock().id.clone());
                self.watch_limit_wait(&entry, false);
            }
            output.hold(lines);
            // A status change or the exit comes after the output that preceded it.
            let urgent = !activity.is_empty() || exited.is_some();
            if let Some(lines) = output.release(std::time::Instant::now(), urgent) {
                self.session_output(&entry, lines).await;
            }
            for a in activity {
                self.on_session_fact(&entry, Fact::Activity(a)).await;
            }
            if let Some(exit) = exited {
                self.finish_reply(&entry).await;
                self.mark_exited(&entry, exit).await;
                // Its reply is taken: an ended session keeps its last screen, not the
                // scrollback behind it (the transcript has that).
                if let Some(pty) = entry.pty.clone() {
                    let _ = tokio::task::spawn_blocking(move || pty.release_scrollback()).await;
                }
                return;
            }
        }
    }

    /// Records a fact that is not the runtime's (a usage limit) and, when the status changed,
    /// persists and publishes it.
    pub(super) fn apply_fact(&self, entry: &Arc<SessionEntry>, fact: Fact) {
        if let Some(changed) = entry.record_fact(fact) {
            self.save_status(entry, &changed);
        }
        if entry.agent.lock().answering.is_some() {
            let (engine, entry) = (self.clone(), entry.clone());
            tokio::spawn(async move { engine.answer_by_itself(&entry).await });
        }
    }

    /// Records a fact the session runtime reported; when the status it decides (see
    /// `status.rs`) changed, persists and publishes it and acts on it.
    pub(super) async fn on_session_fact(&self, entry: &Arc<SessionEntry>, fact: Fact) {
        self.watch_limit_wait(entry, true);
        let look_again = fact == Fact::LookAgain;
        let changed = entry.record_fact(fact);
        // A fresh look at a quiet terminal (gone quiet, continued after a pause, …) starts a
        // fresh watch on it; a look taken by that watch does not.
        if !look_again && entry.facts.lock().activity.is_quiet() {
            self.keep_looking_while_a_command_runs(entry);
        }
        if let Some(changed) = changed {
            let status = changed.info.status;
            self.save_status(entry, &changed);
            if matches!(status, SessionStatus::Ready | SessionStatus::Blocked) {
                self.finish_reply(entry).await;
            }
            if status == SessionStatus::Ready {
                self.type_first_instruction(entry).await;
            }
            self.session_status_changed(entry, status).await;
        }
        // A prompt the preset answers, decided busy above: answered now.
        self.answer_by_itself(entry).await;
    }

    /// Persists and publishes what `record_fact` decided: `session:status` for a new status,
    /// `session:prompt` for a new prompt (both when a session becomes blocked or stops being
    /// so), each carrying the whole session.
    fn save_status(&self, entry: &Arc<SessionEntry>, changed: &super::status::Changed) {
        let info = &changed.info;
        if let Some(resets_at) = changed.limit {
            tracing::info!(session = %info.id, ?resets_at, "usage limit reached (its prompt says)");
            self.limit_reached(entry, resets_at);
        }
        self.store()
            .put_later(vec![session_record(info, entry.seq)]);
        if changed.status {
            self.publish_session(SessionEventKind::Status, info);
        }
        if changed.prompt {
            self.publish_session(SessionEventKind::Prompt, info);
        }
    }

    /// Types the first instruction if it is still pending; exactly once, whoever calls.
    async fn type_first_instruction(&self, entry: &Arc<SessionEntry>) {
        // Once typed, a `ready` does not wait for a write in progress (a stopped child).
        if entry.first_instruction.lock().is_none() {
            return;
        }
        let _turn = entry.typing.lock().await;
        let first = entry.first_instruction.lock().take();
        if let Some(text) = first
            && let Err(e) = self.type_now(entry, Input::Text(text), None).await
        {
            tracing::warn!(error = %e, "could not type the first instruction");
        }
    }

    /// Before input someone types into a session that is not ready yet (still starting, or
    /// its output not settled): the first instruction goes first, so the typed input comes
    /// after it instead of ahead of it (and the instruction is not typed into a line the
    /// user left half-done). Not while a question waits for an answer: what is typed then
    /// answers it, and the instruction waits for the input prompt.
    async fn first_instruction_before_input(&self, entry: &Arc<SessionEntry>) {
        let asked = entry.info.lock().status == SessionStatus::Blocked
            || entry.agent.lock().answering.is_some();
        if !asked {
            self.type_first_instruction(entry).await;
        }
    }

    /// Writes raw bytes (keystrokes) to a session's terminal, after its first instruction
    /// (see `first_instruction_before_input`) and after whatever was typed before them.
    pub async fn write_input(&self, id: &str, bytes: Vec<u8>) -> EngineResult<()> {
        let entry = self.session_entry(id)?;
        self.first_instruction_before_input(&entry).await;
        self.limit_over(&entry);
        let _turn = entry.typing.lock().await;
        let pty = entry.live_pty()?.clone();
        if let Some(last) = bytes.last() {
            entry
                .line_half_typed
                .store(!ends_a_line(*last), Ordering::Relaxed);
        }
        // Here when the terminal has room (nearly always): a hop to another thread would
        // have to wait for a turn on a CPU that busy agents keep taken.
        let done = pty.try_write(&bytes).map_err(session_error)?;
        if done == bytes.len() {
            return Ok(());
        }
        // A child that does not read its input: waiting for room is for a blocking thread.
        let rest = bytes[done..].to_vec();
        tokio::task::spawn_blocking(move || pty.write(&rest))
            .await
            .map_err(|e| EngineError::Internal(format!("write failed: {e}")))?
            .map_err(session_error)
    }

    /// Records the agent's reply to the last send, if there is one pending.
    async fn finish_reply(&self, entry: &Arc<SessionEntry>) {
        if entry.reply.lock().is_none() {
            return;
        }
        let Some(pty) = &entry.pty else { return };
        let after = screen_lines(pty).await;
        if let Some((request, text)) = self.take_reply(entry, &after) {
            let m = self
                .record_message(entry, Role::Agent, text, None, None)
                .await;
            self.reply_taken(entry, request, &m.text);
        }
    }

    /// The reply to the last send, when one is pending and `after` (the screen now) shows it:
    /// whether the send was the task's request, and the reply's text. Else the wait goes on.
    fn take_reply(&self, entry: &Arc<SessionEntry>, after: &[String]) -> Option<(bool, String)> {
        let pending = entry.reply.lock().take()?;
        // After the echo, the echo is behind: a reply that quotes the request is reply. No
        // echo yet: the CLI has not taken the instruction up (a trust screen first).
        let text = if pending.after_echo {
            echo_end(after, &pending.sent)
                .map(|end| self.agent_reply_text(entry, &after[..end], after, ""))
                .unwrap_or_default()
        } else {
            self.agent_reply_text(entry, &pending.before, after, &pending.sent)
        };
        if text.is_empty() {
            // No reply yet (the agent only echoed the send, or looked idle before it began
            // working): keep waiting for it, or the reply that follows is never recorded.
            entry.reply.lock().get_or_insert(pending);
            return None;
        }
        Some((pending.request, text))
    }

    /// What a reply tells: work done on the request, a usage limit reached.
    fn reply_taken(&self, entry: &Arc<SessionEntry>, request: bool, text: &str) {
        if request {
            entry.note_work();
        }
        self.note_limit(entry, text);
    }

    pub(super) async fn record_message(
        &self,
        entry: &Arc<SessionEntry>,
        role: Role,
        text: String,
        keys: Option<Vec<String>>,
        auto: Option<String>,
    ) -> Message {
        let m = new_message(role, text, keys, auto);
        if let Err(e) = self.store_message(entry, &m).await {
            tracing::error!(error = %e, "could not persist a message");
        }
        self.add_message(entry, m)
    }

    /// Writes a message of the session to the store; returns once it is durable.
    async fn store_message(&self, entry: &Arc<SessionEntry>, m: &Message) -> EngineResult<()> {
        let session_id = entry.info.lock().id.clone();
        let record = message_record(&session_id, m, self.next_seq());
        Ok(self.store().put(vec![record]).await?)
    }

    /// Adds a message to the session's list and publishes it.
    fn add_message(&self, entry: &Arc<SessionEntry>, m: Message) -> Message {
        entry.messages.lock().push(m.clone());
        let session_id = entry.info.lock().id.clone();
        self.publish(Event::Message {
            session_id,
            message: Arc::new(m.clone()),
        });
        m
    }

    /// Types text (and submits it) or sends keys; records it as a `user` message.
    pub(crate) async fn send_to(
        &self,
        entry: &Arc<SessionEntry>,
        send: Input,
        auto: Option<String>,
    ) -> EngineResult<Message> {
        let _turn = entry.typing.lock().await;
        self.type_now(entry, send, auto).await
    }

    /// `send_to`, the caller holding the session's `typing` turn.
    pub(super) async fn type_now(
        &self,
        entry: &Arc<SessionEntry>,
        send: Input,
        auto: Option<String>,
    ) -> EngineResult<Message> {
        let pty = entry.live_pty()?.clone();
        // One look at the screen: the previous reply ends where this send begins.
        let before = screen_lines(&pty).await;
        let previous = self.take_reply(entry, &before);
        if let Some((request, text)) = &previous {
            self.reply_taken(entry, *request, text);
        }
        self.limit_over(entry);
        let submit = submit_bytes(entry.provider.as_ref());
        let (text, keys) = match &send {
            Input::Text(t) => (t.clone(), None),
            Input::Keys(k) => (format!("[{}]", k.join(" ")), Some(k.clone())),
        };
        // Text is submitted; keys end a line when the last is Enter (or Ctrl-C, Ctrl-U).
        let half_typed = keys.as_ref().is_some_and(|k| {
            k.last()
                .and_then(|name| crate::session::encode_key(name, false).ok())
                .and_then(|bytes| bytes.last().copied())
                .is_none_or(|b| !ends_a_line(b))
        });
        entry.line_half_typed.store(half_typed, Ordering::Relaxed);
        // What the agent's hook said last is over once something is typed: the screen
        // decides until its next hook event (cleared first: that event may follow at once).
        if let Some(changed) = entry.record_fact(Fact::Hook(None)) {
            self.save_status(entry, &changed);
        }
        // The previous reply, then this send, each kept before it is typed: a message the
        // store cannot keep (a full disk) is refused with nothing typed, and one that is
        // typed is never lost.
        if let Some((_, text)) = previous {
            self.record_message(entry, Role::Agent, text, None, None)
                .await;
        }
        let message = new_message(Role::User, text.clone(), keys.clone(), auto.clone());
        self.store_message(entry, &message).await?;
        // A child that does not read its input can make a PTY write block: keep that off the
        // async workers.
        let writer = pty.clone();
        let typed = tokio::task::spawn_blocking(move || match send {
            Input::Text(t) => writer.send_text(&t, submit),
            Input::Keys(k) => writer.send_keys(&k),
        })
        .await
        .map_err(|e| EngineError::Internal(format!("send failed: {e}")))
        .and_then(|r| r.map_err(session_error));
        if let Err(e) = typed {
            let gone = Removal::Record(Table::Messages, message.id.clone());
            if let Err(e) = self.store().remove(vec![gone]).await {
                tracing::error!(error = %e, "could not remove a message that was not sent");
            }
            return Err(e);
        }
        {
            let mut pending = entry.reply.lock();
            // Keys (a housekeeping or permission answer) do not end the wait for the reply
            // to a request not answered yet: that reply is the agent's work.
            if keys.is_none() || !pending.as_ref().is_some_and(|p| p.request) {
                *pending = Some(PendingReply {
                    before,
                    sent: if keys.is_some() {
                        String::new()
                    } else {
                        text.clone()
                    },
                    request: keys.is_none() && auto.is_none(),
                    after_echo: false,
                });
            }
        }
        Ok(self.add_message(entry, message))
    }

    pub async fn send_message(&self, id: &str, send: Input) -> EngineResult<Message> {
        let entry = self.session_entry(id)?;
        if let Input::Keys(k) = &send {
            // Validate every key before sending any.
            crate::session::parse_keys(k).map_err(|e| session_error(e.into()))?;
        }
        self.first_instruction_before_input(&entry).await;
        self.send_to(&entry, send, None).await
    }

    pub fn session_messages(&self, id: &str) -> EngineResult<Vec<Message>> {
        Ok(self.session_entry(id)?.messages.lock().clone())
    }

    pub fn get_session(&self, id: &str) -> EngineResult<SessionInfo> {
        Ok(self.session_entry(id)?.snapshot_info())
    }

    pub fn list_sessions(&self) -> Vec<SessionInfo> {
        self.inner
            .sessions
            .read()
            .order
            .iter()
            .map(|e| e.snapshot_info())
            .collect()
    }

    /// The live PTY of a session, for drawing its screen.
    pub fn session_pty(&self, id: &str) -> Option<Arc<PtySession>> {
        self.session_entry(id).ok().and_then(|e| e.pty.clone())
    }

    pub fn peek(&self, id: &str, scrollback: usize, ansi: bool) -> EngineResult<Peek> {
        let entry = self.session_entry(id)?;
        let info = entry.snapshot_info();
        let asked = |lines: Vec<String>| (scrollback > 0).then_some(lines);
        Ok(match &entry.pty {
            Some(pty) => {
                let snap = pty.snapshot(scrollback.min(SCROLLBACK_LINES), ansi);
                Peek {
                    screen: snap.screen,
                    screen_ansi: snap.screen_ansi.filter(|_| ansi),
                    cursor: Cursor {
                        row: snap.cursor.0,
                        col: snap.cursor.1,
                    },
                    cols: snap.cols,
                    rows: snap.rows,
                    alternate_screen: Some(snap.alternate_screen),
                    scrollback: asked(snap.scrollback),
                    status: info.status,
                }
            }
            // Restored from a previous run: the terminal is gone, the transcript is on disk.
            None => Peek {
                screen: String::new(),
                screen_ansi: None,
                cursor: Cursor { row: 0, col: 0 },
                cols: info.cols,
                rows: info.rows,
                alternate_screen: None,
                scrollback: asked(Vec::new()),
                status: info.status,
            },
        })
    }

    pub async fn resize_session(
        &self,
        id: &str,
        cols: u16,
        rows: u16,
    ) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let pty = entry.live_pty()?.clone();
        pty.resize(cols, rows).map_err(session_error)?;
        let info = {
            let mut info = entry.info.lock();
            info.cols = cols;
            info.rows = rows;
            info.clone()
        };
        self.store()
            .put_later(vec![session_record(&info, entry.seq)]);
        Ok(info)
    }

    pub async fn pause_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let task_id = entry.info.lock().task_id.clone();
        if let Some(task_id) = task_id
            && self
                .get_task(&task_id)
                .is_ok_and(|t| t.status() == orchestra_proto::task::TaskStatus::Running)
        {
            self.pause_task(&task_id).await?;
            return self.get_session(id);
        }
        self.stop_group(&entry).await?;
        self.get_session(id)
    }

    pub async fn resume_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        let task_id = entry.info.lock().task_id.clone();
        if let Some(task_id) = task_id
            && self
                .get_task(&task_id)
                .is_ok_and(|t| t.status() == orchestra_proto::task::TaskStatus::Paused)
        {
            self.resume_task(&task_id).await?;
            return self.get_session(id);
        }
        self.continue_group(&entry).await?;
        self.get_session(id)
    }

    /// SIGSTOP to the session's whole process group; the status is recorded at once (not
    /// when the follower gets to it), so the response already shows it.
    pub(crate) async fn stop_group(&self, entry: &Arc<SessionEntry>) -> EngineResult<()> {
        entry.live_pty()?.pause().map_err(session_error)?;
        self.on_session_fact(entry, Fact::Paused(true)).await;
        Ok(())
    }

    /// SIGCONT to the session's whole process group, recording the status it returns to.
    pub(crate) async fn continue_group(&self, entry: &Arc<SessionEntry>) -> EngineResult<()> {
        entry.live_pty()?.resume().map_err(session_error)?;
        self.on_session_fact(entry, Fact::Paused(false)).await;
        Ok(())
    }

    /// Ends a session (SIGTERM, then SIGKILL after the grace period) and reaps it.
    pub async fn delete_session(&self, id: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        self.end_session(&entry).await;
        self.get_session(id)
    }

    /// Terminates a live session on purpose and records its end; idempotent.
    pub(crate) async fn end_session(&self, entry: &Arc<SessionEntry>) {
        let Some(pty) = entry.pty.clone() else { return };
        if entry.info.lock().ended {
            return;
        }
        entry.ending_on_purpose.store(true, Ordering::SeqCst);
        let grace = self.config().grace;
        let exit = match tokio::task::spawn_blocking(move || pty.terminate(grace)).await {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(error = %e, "terminate failed");
                ExitInfo::default()
            }
        };
        self.finish_reply(entry).await;
        self.mark_exited(entry, exit).await;
    }

    /// Records a session's end once (the follower and `end_session` may both get here).
    async fn mark_exited(&self, entry: &Arc<SessionEntry>, exit: ExitInfo) {
        // The files handed to its CLI at start are of no use to anyone now; gone before the
        // session reads as ended, so that nobody who sees it ended finds them.
        let id = entry.info.lock().id.clone();
        if let Some(credential) = &entry.credential {
            self.withdraw_credential(credential);
        }
        super::instructions::remove_file(self.state_dir(), &id);
        super::hooks::remove_settings(self.state_dir(), &id);
        let Some(info) = entry.record_exit(&exit) else {
            return;
        };
        if let Err(e) = self
            .store()
            .put(vec![session_record(&info, entry.seq)])
            .await
        {
            tracing::error!(error = %e, "could not persist a session's end");
        }
        self.publish_session(SessionEventKind::Exited, &info);
        self.session_status_changed(entry, info.status).await;
        tracing::info!(session = %info.id, %exit, "session ended");
        self.session_exited(entry, &info, &exit).await;
    }

    /// Ends every live session (at shutdown, and for `/api/agent/stop`).
    pub async fn end_all_sessions(&self) {
        let live: Vec<Arc<SessionEntry>> = self
            .inner
            .sessions
            .read()
            .order
            .iter()
            .filter(|e| !e.info.lock().ended && e.pty.is_some())
            .cloned()
            .collect();
        let ends = live.into_iter().map(|e| {
            let engine = self.clone();
            tokio::spawn(async move { engine.end_session(&e).await })
        });
        for h in ends.collect::<Vec<_>>() {
            let _ = h.await;
        }
    }

    /// Restores sessions and messages from the store: all of them ended with the last run.
    pub(crate) fn restore_sessions(
        &self,
        sessions: Vec<Record>,
        messages: Vec<Record>,
    ) -> Vec<Record> {
        let mut by_session: BTreeMap<String, Vec<Message>> = BTreeMap::new();
        for m in messages {
            if let (Some(owner), Ok(msg)) =
                (m.owner.clone(), serde_json::from_str::<Message>(&m.json))
            {
                by_session.entry(owner).or_default().push(msg);
            }
        }
        let mut repairs = Vec::new();
        let now = now_ms();
        let mut table = self.inner.sessions.write();
        for rec in sessions {
            let Ok(mut info) = serde_json::from_str::<SessionInfo>(&rec.json) else {
                tracing::warn!(id = %rec.id, "skipping an unreadable stored session");
                continue;
            };
            if !info.ended {
                info.ended = true;
                (info.status, info.status_source) =
                    decide_with_source(&Facts::ended(), None, false);
                info.ended_at = Some(now);
                info.prompt = None;
                repairs.push(session_record(&info, rec.seq));
            }
            let entry = Arc::new(SessionEntry {
                seq: rec.seq,
                status_watch: tokio::sync::watch::Sender::new(info.status),
                messages: Mutex::new(by_session.remove(&info.id).unwrap_or_default()),
                info: Mutex::new(info),
                pty: None,
                provider: None,
                reply: Mutex::new(None),
                first_instruction: Mutex::new(None),
                typing: tokio::sync::Mutex::new(()),
                ending_on_purpose: AtomicBool::new(false),
                quiet_spells: std::sync::atomic::AtomicU64::new(0),
                line_half_typed: AtomicBool::new(false),
                agent: Default::default(),
                facts: Mutex::new(Facts::ended()),
                credential: None,
            });
            table.by_id.insert(rec.id, entry.clone());
            table.order.push(entry);
        }
        repairs
    }
}

#[derive(Default)]
pub(crate) struct SessionTable {
    pub(crate) by_id: std::collections::HashMap<String, Arc<SessionEntry>>,
    pub(crate) order: Vec<Arc<SessionEntry>>,
}

impl Engine {
    /// Answers the prompt a blocked session shows with one of its options.
    pub async fn answer_prompt(&self, id: &str, option: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        entry.live_pty()?;
        let seen = self.prompt_to_answer(&entry)?;
        let prompt = seen.prompt;
        if seen.name == super::status::HOOK_PROMPT {
            return Err(EngineError::Conflict(format!(
                "the session asks \"{}\" but its dialog is not on its screen yet, so its options are not known: answer once the session's prompt lists them (a session:prompt event says when)",
                prompt.text
            )));
        }
        let chosen = prompt
            .options
            .iter()
            .find(|o| o.key == option)
            .ok_or_else(|| {
                let keys: Vec<&str> = prompt.options.iter().map(|o| o.key.as_str()).collect();
                EngineError::Invalid(format!(
                    "option {option:?} is not one of the prompt's options ({})",
                    keys.join(", ")
                ))
            })?;
        let keys = chosen
            .keys
            .clone()
            .unwrap_or_else(|| vec![option.to_string()]);
        self.send_to(&entry, Input::Keys(keys), None).await?;
        self.get_session(id)
    }

    /// The prompt a session waits on: the one its status says (read from the screen again
    /// while it is only its hook's words: the dialog may be drawn by now), or one still on
    /// its screen while a redraw (a blinking cursor, a spinner elsewhere) has it counted as
    /// busy. Never a prompt orchestra answers by itself: that one waits for nobody else.
    fn prompt_to_answer(&self, entry: &SessionEntry) -> EngineResult<SeenPrompt> {
        let (status, approval) = {
            let info = entry.info.lock();
            (info.status, info.approval)
        };
        let nothing = || {
            EngineError::Conflict(format!(
                "session is {status}, not blocked on a prompt: there is nothing to answer"
            ))
        };
        let on_screen = || match entry.classify_now() {
            Some(Verdict::Prompt(p)) => Some(p),
            _ => None,
        };
        match status {
            SessionStatus::Blocked => {
                let blocked_on = entry.agent.lock().prompt.clone().ok_or_else(nothing)?;
                if blocked_on.name == super::status::HOOK_PROMPT
                    && let Some(shown) = on_screen()
                {
                    return Ok(shown);
                }
                Ok(blocked_on)
            }
            SessionStatus::Busy => {
                let shown = on_screen().ok_or_else(nothing)?;
                if entry
                    .agent
                    .lock()
                    .answers_itself(&shown, approval)
                    .is_some()
                {
                    return Err(EngineError::Conflict(format!(
                        "orchestra answers this {} prompt by itself (approval: {approval}): there is nothing to answer",
                        shown.prompt.kind
                    )));
                }
                Ok(shown)
            }
            _ => Err(nothing()),
        }
    }
}

/// Whether a typed byte ends the line being typed: Enter submits it, Ctrl-C and Ctrl-U
/// throw it away.
fn ends_a_line(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n' | 0x03 | 0x15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::time::Instant;

    fn lines(from: usize, to: usize) -> VecDeque<String> {
        (from..to).map(|i| i.to_string()).collect()
    }

    #[test]
    fn output_goes_at_once_after_a_quiet_spell_then_at_most_once_per_interval() {
        let mut p = OutputPacer::default();
        let t0 = Instant::now();
        assert_eq!(p.due(), None);
        assert_eq!(p.release(t0, false), None, "nothing held, nothing goes");
        p.hold(lines(0, 2));
        assert_eq!(p.release(t0, false), Some(vec!["0".into(), "1".into()]));
        // More within the interval waits, and says until when.
        p.hold(lines(2, 3));
        let soon = t0 + OUTPUT_INTERVAL / 2;
        assert_eq!(p.release(soon, false), None);
        assert_eq!(p.due(), Some(t0 + OUTPUT_INTERVAL));
        p.hold(lines(3, 4));
        let later = t0 + OUTPUT_INTERVAL;
        assert_eq!(p.release(later, false), Some(vec!["2".into(), "3".into()]));
        // A status change or the exit takes what is held at once.
        p.hold(lines(4, 5));
        assert_eq!(p.release(later, true), Some(vec!["4".into()]));
        // After a quiet spell longer than the interval, at once again.
        p.hold(lines(5, 6));
        let quiet = later + OUTPUT_INTERVAL * 3;
        assert_eq!(p.release(quiet, false), Some(vec!["5".into()]));
    }

    #[test]
    fn held_output_keeps_only_the_newest_lines() {
        let mut p = OutputPacer::default();
        let t0 = Instant::now();
        p.hold(lines(0, 1));
        p.release(t0, false);
        let n = orchestra_proto::task::OUTPUT_LINES_KEPT;
        p.hold(lines(0, n));
        p.hold(lines(n, n + 10));
        let out = p.release(t0 + OUTPUT_INTERVAL, false).unwrap_or_default();
        assert_eq!(out.len(), n);
        assert_eq!(out.first().map(String::as_str), Some("10"));
        assert_eq!(
            out.last().map(|l| l.parse::<usize>().ok()),
            Some(Some(n + 9))
        );
    }
}
