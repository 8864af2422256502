//! Starting a session: the provider checked, the program started in its own PTY with what
//! [`launch`](super::launch) prepared, its record made durable, and its follower started.

use super::follower::Inbox;
use super::replies::PendingReply;
use super::{SCROLLBACK_LINES, SessionEntry, SpawnSession, session_error, session_record};
use crate::engine::status::{Facts, decide, startup_quiet};
use crate::engine::{Engine, EngineError, EngineResult, SessionEventKind, now_ms};
use crate::providers::{Delivery, Provider};
use crate::session::{PtySession, SessionError, SpawnSpec};
use orchestra_proto::wire::SessionInfo;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A provider whose program is missing is refused (503) with the one message that says what
/// was looked for and how to install it: for sessions, tasks created, started and dispatched.
pub(crate) fn ensure_installed(provider: &Provider) -> EngineResult<()> {
    if provider.installed() {
        Ok(())
    } else {
        Err(EngineError::Unavailable(provider.not_installed_message()))
    }
}

/// Starts `spec`'s program in a new PTY, its events going to `inbox`.
fn start_pty(spec: SpawnSpec, inbox: &Arc<Inbox>) -> EngineResult<Arc<PtySession>> {
    let sink = inbox.clone();
    PtySession::spawn(spec, Box::new(move |ev| sink.push(ev))).map_err(|e| match e {
        SessionError::Spawn { program, reason } => {
            EngineError::Unavailable(format!("cannot start {program}: {reason}"))
        }
        other => session_error(other),
    })
}

impl Engine {
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

    /// Refuses a session past the limit of live ones (`--max-sessions`).
    fn ensure_room_for_a_session(&self) -> EngineResult<()> {
        if self.live_session_count() >= self.config().max_sessions {
            return Err(EngineError::TooMany(format!(
                "{} sessions are already running (the limit, --max-sessions); end one first",
                self.config().max_sessions
            )));
        }
        Ok(())
    }

    /// Where session `id`'s transcript goes: `None` when its directory cannot be made.
    fn transcript_file(&self, id: &str) -> Option<PathBuf> {
        let transcripts = self.state_dir().join("transcripts");
        orchestra_sys::private::create_private_dir(&transcripts)
            .ok()
            .map(|_| transcripts.join(format!("{id}.log")))
    }

    /// Starts a session: the provider's program in a new PTY and process group.
    pub async fn spawn_session(&self, req: SpawnSession) -> EngineResult<SessionInfo> {
        let provider = self.spawn_provider(req.provider_id.as_deref())?;
        let cwd = self.resolve_dir(req.working_directory.as_deref())?;
        self.ensure_room_for_a_session()?;
        let id = uuid::Uuid::new_v4().to_string();
        let (cols, rows) = (req.cols.unwrap_or(120), req.rows.unwrap_or(40));
        let transcript = self.transcript_file(&id);
        let instruction_arg = if provider.deliver == Delivery::Arg {
            req.task.as_str()
        } else {
            ""
        };
        let prepared = self
            .prepare_launch(&provider, &req, &id, instruction_arg)
            .await?;
        let mut spec = SpawnSpec::new(prepared.launch.program.clone(), &cwd);
        spec.args = prepared.launch.args;
        spec.env = prepared.env;
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
        let pty = start_pty(spec, &inbox)?;

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
        let seq = self.record_new_session(&info, &pty).await?;
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
            accepting: tokio::sync::Mutex::new(()),
            ending_on_purpose: AtomicBool::new(false),
            quiet_spells: std::sync::atomic::AtomicU64::new(0),
            typed_line: Default::default(),
            agent: Default::default(),
            facts: Mutex::new(facts),
            credential: Some(prepared.credential.keep()),
        });
        entry.agent.lock().said.add_notes(prepared.notes);
        self.add_and_follow(entry, inbox, &info);
        tracing::info!(session = %id, provider = %provider.id, pid = info.pid, "session started");
        Ok(info)
    }

    /// Makes a new session's record durable, and returns its sequence number. Acknowledged
    /// only once its record is durable: a session the store cannot keep (a full disk) is
    /// ended at once and refused like any other write, not left running unrecorded.
    async fn record_new_session(
        &self,
        info: &SessionInfo,
        pty: &Arc<PtySession>,
    ) -> EngineResult<i64> {
        let seq = self.next_seq();
        if let Err(e) = self.store().put(vec![session_record(info, seq)]).await {
            let grace = self.config().grace;
            let ended = pty.clone();
            let _ = tokio::task::spawn_blocking(move || ended.terminate(grace)).await;
            return Err(e.into());
        }
        Ok(seq)
    }

    /// Puts a new session in the table, tells the event stream, and starts following it.
    fn add_and_follow(&self, entry: Arc<SessionEntry>, inbox: Arc<Inbox>, info: &SessionInfo) {
        {
            let mut table = self.inner.sessions.write();
            table.by_id.insert(info.id.clone(), entry.clone());
            table.order.push(entry.clone());
        }
        self.publish_session(SessionEventKind::Started, info);
        tokio::spawn(self.clone().follow(entry, inbox));
    }
}
