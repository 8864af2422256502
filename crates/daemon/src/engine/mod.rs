//! The one owner of all state: tasks, sessions, the autopilot. Front ends ask it; it applies
//! each change under the owning task's lock, makes it durable, then publishes an event.

mod agents;
mod autopilot;
mod checks;
mod delegation;
mod error;
mod gitfiles;
mod grants;
mod hooks;
mod instructions;
mod limits;
mod lineage;
mod notices;
mod placement;
mod pull_request;
mod radar;
mod removal;
mod repo_file;
mod runs;
mod session_info;
mod sessions;
mod setup;
mod shell_run;
mod status;
mod task_message;
mod task_settings;
mod tasks;
mod terminal_looks;
mod transcript;
mod trash;
mod trust;
mod trust_store;
mod variants;
mod wake_pump;
mod worktrees;

pub use error::{EngineError, EngineResult};
pub use grants::SessionGrant;
pub use hooks::HookRefusal;
pub use lineage::{FamilyOp, Kinship};
pub use orchestra_proto::wire::Collected;
pub use orchestra_proto::wire::SessionStatus;
pub use orchestra_proto::wire::{
    Approval, Event, Message, Role, RunState, SessionEventKind, SessionInfo, TaskEventKind,
};
pub use repo_file::{REPO_FILE, RepoSetup};
pub use sessions::{SendMessage, SpawnSession};
pub use trust::{DECLINE_OPTION, TRUST_OPTION};
pub use trust_store::{TRUST_FILE, TRUST_FILE_TMP};
pub use worktrees::disk_usage;

use crate::providers::Providers;
use crate::store::{Record, Store, Table};
use orchestra_proto::task::{Task, TaskStatus};
use orchestra_sys::state_dir::StateDir;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// What the engine is told at start.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub providers: Providers,
    /// Default working directory for tasks and sessions.
    pub working_dir: PathBuf,
    pub max_concurrent: usize,
    pub max_sessions: usize,
    /// How long a terminated session gets between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// How long a screen must stay unchanged to count as settled.
    pub settle: Duration,
    pub transcript_cap: u64,
    /// Marks every process of this orchestra's sessions (`ORCHESTRA_INSTANCE`), so that
    /// the guard can find them if orchestra dies without ending them.
    pub instance: String,
    /// The configured default isolation; `None` applies the default rule.
    pub isolation: Option<orchestra_proto::task::Isolation>,
    /// Per-repository worktree set-up from the user config (`[[repo]]`).
    pub repos: Vec<crate::providers::RepoConfig>,
    /// Continue a `limited` agent by itself once its limit resets.
    pub continue_after_limit: bool,
    /// When a CLI names no reset time: how long before trying again.
    pub limit_retry: Duration,
}

impl EngineConfig {
    pub fn new(providers: Providers, working_dir: PathBuf) -> EngineConfig {
        EngineConfig {
            providers,
            working_dir,
            max_concurrent: 4,
            max_sessions: 16,
            grace: Duration::from_secs(3),
            settle: Duration::from_millis(500),
            transcript_cap: 64 * 1024 * 1024,
            instance: uuid::Uuid::new_v4().to_string(),
            isolation: None,
            repos: Vec::new(),
            continue_after_limit: true,
            limit_retry: Duration::from_secs(300),
        }
    }
}

/// The orchestrator's run state as `/api/status` reports it.
/// A task's current state plus the lock that serialises changes to it.
pub(crate) struct TaskSlot {
    seq: i64,
    change: tokio::sync::Mutex<()>,
    current: RwLock<Arc<Task>>,
    /// Set (under `change`) when the task is deleted: writers that waited for the lock
    /// must not write it back.
    gone: std::sync::atomic::AtomicBool,
    /// The task in memory has output lines the database does not have yet; a deferred
    /// write is scheduled (see `Engine::persist_output_later`).
    output_unsaved: std::sync::atomic::AtomicBool,
}

impl TaskSlot {
    fn new(seq: i64, task: Arc<Task>) -> TaskSlot {
        TaskSlot {
            seq,
            change: tokio::sync::Mutex::new(()),
            current: RwLock::new(task),
            gone: std::sync::atomic::AtomicBool::new(false),
            output_unsaved: std::sync::atomic::AtomicBool::new(false),
        }
    }
    fn is_gone(&self) -> bool {
        self.gone.load(Ordering::SeqCst)
    }
    fn get(&self) -> Arc<Task> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
    fn set(&self, t: Arc<Task>) {
        match self.current.write() {
            Ok(mut g) => *g = t,
            Err(p) => *p.into_inner() = t,
        }
    }
}

#[derive(Default)]
pub(crate) struct TaskTable {
    by_id: HashMap<String, Arc<TaskSlot>>,
    /// Creation order, oldest first.
    order: Vec<Arc<TaskSlot>>,
}

pub(crate) struct Inner {
    config: EngineConfig,
    state_dir: PathBuf,
    store: Store,
    events: broadcast::Sender<Event>,
    /// See [`Engine::subscribe_screens`].
    screens: broadcast::Sender<String>,
    /// Wakes session followers in rounds (see `wake_pump`).
    followers: Arc<wake_pump::WakePump>,
    tasks: RwLock<TaskTable>,
    seq: AtomicI64,
    started: Instant,
    run_state: std::sync::Mutex<RunState>,
    url: RwLock<Option<String>>,
    closing: tokio::sync::watch::Sender<bool>,
    sessions: parking_lot::RwLock<sessions::SessionTable>,
    /// The live sessions' credentials (see `grants`).
    credentials: grants::CredentialTable,
    dispatch: Arc<tokio::sync::Notify>,
    shutting_down: std::sync::atomic::AtomicBool,
    git: parking_lot::Mutex<HashMap<String, gitfiles::GitSnapshot>>,
    /// Tasks a starter has claimed and is starting (see `runs::StartClaim`).
    starting: parking_lot::Mutex<std::collections::HashSet<String>>,
    /// Why orchestra is stopping, once it is: the error of tasks it ends.
    stop_reason: parking_lot::Mutex<Option<String>>,
    /// Serialises removals of tasks and sessions, so each is trashed and announced once.
    removing: tokio::sync::Mutex<()>,
    /// Pending tasks the autopilot skips (provider not installed), each logged once.
    skipped: parking_lot::Mutex<std::collections::HashSet<String>>,
    /// Serialises merges, discards, collections and deletions of worktrees.
    finishing: tokio::sync::Mutex<()>,
    /// The repository files the user trusted (see `trust.rs`).
    trust: tokio::sync::Mutex<trust_store::TrustStore>,
    /// What the conflict radar read, worked out and reported (see `radar.rs`).
    radar: radar::Radar,
    /// The tasks whose checks are running (see `checks.rs`).
    checks: checks::ChecksTable,
}

impl Inner {
    fn dispatch_handle(&self) -> Arc<tokio::sync::Notify> {
        self.dispatch.clone()
    }
}

/// A cheap handle to the engine; clone it freely.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

pub use orchestra_sys::process::INSTANCE_VAR;

/// Why a task failed: orchestra died (a crash, SIGKILL) while running it; found at start-up.
pub const INTERRUPTED: &str = "interrupted: orchestra stopped while this task was running";

/// Why a task was cancelled: the user quit orchestra (or stopped `serve`) while it ran.
pub const STOPPED_BY_USER: &str = "cancelled: orchestra was stopped by the user";

/// Why a task was cancelled: `/api/agent/stop` ended every agent.
pub const STOPPED_BY_API: &str = "cancelled: every agent was stopped (/api/agent/stop)";

pub use orchestra_proto::clock::now_ms;

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}
fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    /// Opens the store in a locked state directory and restores everything it holds.
    pub async fn open(dir: &StateDir, config: EngineConfig) -> EngineResult<Engine> {
        let (store, loaded) = Store::open(&dir.database())?;
        let (events, _) = broadcast::channel(4096);
        let mut table = TaskTable::default();
        let mut max_seq = 0;
        let mut repairs = Vec::new();
        let now = now_ms();
        for rec in loaded.tasks {
            let mut task: Task = serde_json::from_str(&rec.json)
                .map_err(|e| crate::store::StoreError::Corrupt(rec.id.clone(), e))?;
            // A task orchestra was running in a session cannot still be running: its
            // session died with the previous process.
            // Nor can one whose agent orchestra was starting after the user trusted its
            // repository (a task still waiting for that answer keeps waiting: it is asked).
            let was_starting = task.awaits_trust() && task.metadata.prompt.is_none();
            if (task.metadata.session_id.is_some() || was_starting)
                && matches!(task.status(), TaskStatus::Running | TaskStatus::Paused)
                && task.move_to(TaskStatus::Failed, now).is_ok()
            {
                task.metadata.error = Some(INTERRUPTED.into());
                repairs.push(task_record(&task, rec.seq));
            }
            max_seq = max_seq.max(rec.seq);
            let slot = Arc::new(TaskSlot::new(rec.seq, Arc::new(task)));
            table.by_id.insert(rec.id, slot.clone());
            table.order.push(slot);
        }
        for rec in loaded.sessions.iter().chain(loaded.messages.iter()) {
            max_seq = max_seq.max(rec.seq);
        }
        if !repairs.is_empty() {
            tracing::info!(count = repairs.len(), "marked interrupted tasks failed");
            store.put(repairs).await?;
        }
        let inner = Arc::new(Inner {
            config,
            state_dir: dir.path.clone(),
            store,
            events,
            screens: broadcast::channel(1024).0,
            followers: Arc::default(),
            tasks: RwLock::new(table),
            seq: AtomicI64::new(max_seq + 1),
            started: Instant::now(),
            run_state: std::sync::Mutex::new(RunState::Paused),
            url: RwLock::new(None),
            closing: tokio::sync::watch::channel(false).0,
            sessions: parking_lot::RwLock::new(sessions::SessionTable::default()),
            credentials: Arc::default(),
            dispatch: Arc::new(tokio::sync::Notify::new()),
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            git: parking_lot::Mutex::new(HashMap::new()),
            starting: parking_lot::Mutex::new(Default::default()),
            stop_reason: parking_lot::Mutex::new(None),
            removing: tokio::sync::Mutex::new(()),
            skipped: parking_lot::Mutex::new(Default::default()),
            finishing: tokio::sync::Mutex::new(()),
            trust: tokio::sync::Mutex::new(trust_store::TrustStore::load(&dir.path)),
            radar: radar::Radar::default(),
            checks: Default::default(),
        });
        let engine = Engine { inner };
        let session_repairs = engine.restore_sessions(loaded.sessions, loaded.messages);
        if !session_repairs.is_empty() {
            engine.store().put(session_repairs).await?;
        }
        engine.spawn_dispatcher();
        engine.spawn_radar();
        tokio::spawn(engine.inner.followers.clone().run(engine.closing()));
        engine.restore_autopilot(&loaded.settings);
        Ok(engine)
    }

    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    pub fn providers(&self) -> &Providers {
        &self.inner.config.providers
    }

    pub fn state_dir(&self) -> &std::path::Path {
        &self.inner.state_dir
    }

    /// Every change from now on. Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    /// The ids of sessions whose screen changed, at most about once a frame per session while
    /// a program floods: for watchers in this process. The event stream does not carry them,
    /// so its tasks are not woken for every agent's every redraw.
    pub fn subscribe_screens(&self) -> broadcast::Receiver<String> {
        self.inner.screens.subscribe()
    }

    /// Nobody watches in the daemon: then not even the id is read.
    pub(crate) fn publish_screen(&self, session_id: impl FnOnce() -> String) {
        if self.inner.screens.receiver_count() > 0 {
            let _ = self.inner.screens.send(session_id());
        }
    }

    pub(crate) fn publish(&self, event: Event) {
        // No subscribers is fine: nobody is watching.
        let _ = self.inner.events.send(event);
    }

    /// The URL the API is served at, once a server is up; given to subagents.
    pub fn set_url(&self, url: String) {
        *write(&self.inner.url) = Some(url);
    }

    pub fn url(&self) -> Option<String> {
        read(&self.inner.url).clone()
    }

    pub fn uptime(&self) -> Duration {
        self.inner.started.elapsed()
    }

    pub(crate) fn next_seq(&self) -> i64 {
        self.inner.seq.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn run_state(&self) -> RunState {
        *self
            .inner
            .run_state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn set_run_state(&self, s: RunState) {
        let changed = {
            let mut g = self
                .inner
                .run_state
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let changed = *g != s;
            *g = s;
            changed
        };
        if changed {
            self.publish(Event::Orchestrator { state: s });
        }
    }

    /// Tells long-lived readers (event streams) to finish, so a server can stop.
    pub fn begin_shutdown(&self) {
        self.inner.closing.send_replace(true);
    }

    /// Resolves once shutdown has begun.
    pub fn closing(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        let mut rx = self.inner.closing.subscribe();
        async move {
            let _ = rx.wait_for(|c| *c).await;
        }
    }

    /// Ends every session and makes every write durable; the tasks they ran are cancelled
    /// because the user stopped orchestra.
    pub async fn shutdown(&self) {
        self.shutdown_because(STOPPED_BY_USER).await;
    }

    /// `shutdown`, with the reason the cancelled tasks give (e.g. which signal stopped it).
    pub async fn shutdown_because(&self, reason: &str) {
        *self.inner.stop_reason.lock() = Some(reason.to_string());
        self.inner
            .shutting_down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.set_run_state(RunState::Stopped);
        self.begin_shutdown();
        self.cancel_runs(reason).await;
        self.end_all_checks().await;
        self.end_all_sessions().await;
        self.save_all_unsaved_output().await;
        if let Err(e) = self.flush().await {
            tracing::error!(error = %e, "final flush failed");
        }
    }

    /// Persists outstanding writes; call before exit.
    pub async fn flush(&self) -> EngineResult<()> {
        Ok(self.inner.store.flush().await?)
    }
}

pub(crate) fn task_record(task: &Task, seq: i64) -> Record {
    let json = serde_json::to_string(task).unwrap_or_else(|_| "{}".into());
    record_of(task, seq, json)
}

/// [`task_record`] of a task version, through the version's one encoding: the same text,
/// made once for the store and every reader (the API, the event stream).
pub(crate) fn version_record(task: &Arc<Task>, seq: i64) -> Record {
    let json = orchestra_proto::task::encoded::joined_text(task).unwrap_or_else(|_| "{}".into());
    record_of(task, seq, json)
}

fn record_of(task: &Task, seq: i64, json: String) -> Record {
    Record {
        table: Table::Tasks,
        id: task.id.clone(),
        seq,
        owner: None,
        json,
    }
}
