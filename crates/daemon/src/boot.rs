//! Starting and stopping a running orchestra: the state directory and its lock, logs, the
//! engine, the guard process, the HTTP API and `server.json`. This is the only place that
//! does; `orchestra serve` (the daemon) and the in-process TUI both come through here.
//!
//! A running orchestra stops on SIGTERM, SIGINT or SIGHUP, or when a client asks it to
//! (`POST /api/daemon/stop`, which begins the engine's shutdown): the API stops accepting and
//! finishes the requests in flight (the stop request's answer among them), then every
//! session's process group is ended, the tasks they ran are cancelled with the reason, the
//! store is flushed and `server.json` is removed.

use crate::api::{self, Access};
use crate::engine::{Engine, EngineConfig};
use crate::providers::{Config, Providers};
use anyhow::{Context, Result};
use orchestra_sys::server_file::ServerFile;
use orchestra_sys::state_dir::{self, StateDir};
use std::time::Duration;

/// Everything a running orchestra holds; dropping it releases the state directory.
pub struct Running {
    pub engine: Engine,
    /// Where clients on this machine (the CLI, the TUI, the agents) reach it.
    pub url: String,
    /// The address it listens on, as asked (`http://0.0.0.0:PORT` for every interface).
    pub listening: String,
    pub state: StateDir,
    pub listener: Option<tokio::net::TcpListener>,
    pub access: Access,
    /// The guard process and the pipe end that keeps it waiting (see `guard`).
    _guard: Option<(std::process::Child, std::os::fd::OwnedFd)>,
    _log_guard: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// Logs to `logs/orchestra.log` in the state directory, and to stderr with `-v`.
fn init_logging(
    state: &StateDir,
    verbose: bool,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::prelude::*;
    let dir = state.log_dir();
    orchestra_sys::private::create_private_dir(&dir).ok()?;
    // The appender creates its file with the usual mode; made private first, it stays so.
    orchestra_sys::private::private_file()
        .create(true)
        .append(true)
        .open(dir.join("orchestra.log"))
        .ok()?;
    let appender = tracing_appender::rolling::never(&dir, "orchestra.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("ORCHESTRA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let file_layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(false);
    let stderr_layer =
        verbose.then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(file_layer)
        .with(stderr_layer)
        .try_init();
    Some(guard)
}

/// How a daemon is to run: the `serve` flags, as the binary's command line parsed them.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where the HTTP API listens; port 0 picks a free one.
    pub addr: std::net::SocketAddr,
    pub state_dir: Option<std::path::PathBuf>,
    /// The owner's token, when the user chose one (else the state directory's own).
    pub token: Option<String>,
    pub config: Option<std::path::PathBuf>,
    pub default_provider: Option<String>,
    pub max_concurrent: u32,
    pub max_sessions: u32,
    /// Seconds between SIGTERM and SIGKILL when a session is ended.
    pub grace: f64,
    pub transcript_cap_mib: u64,
    pub allow_host: Vec<String>,
    pub allow_origin: Vec<String>,
    /// Log to stderr too.
    pub verbose: bool,
    pub insecure_no_auth: bool,
}

/// Takes the state directory (one orchestra per directory), starts logging, the guard and the
/// engine, binds the API and writes server.json. Nothing is served until [`Running::serve`].
pub async fn start(args: &ServeOptions) -> Result<Running> {
    let dir = state_dir::resolve(args.state_dir.as_deref())?;
    let state = StateDir::lock(&dir)?;
    let log_guard = init_logging(&state, args.verbose);
    if let Some(notice) = state.tightened_notice() {
        tracing::warn!("{notice}");
    }
    let config = Config::load(args.config.as_deref())?;
    let providers = Providers::from_config(&config, args.default_provider.clone())?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let mut ec = EngineConfig::new(providers, cwd);
    ec.max_concurrent = args.max_concurrent as usize;
    ec.isolation = config.isolation;
    ec.repos = config.repo.clone();
    ec.continue_after_limit = config.limits.continue_after_reset;
    ec.limit_retry = Duration::from_secs(u64::from(config.limits.retry_minutes) * 60);
    ec.max_sessions = args.max_sessions as usize;
    if !(args.grace.is_finite() && args.grace >= 0.0 && args.grace <= 3600.0) {
        anyhow::bail!("--grace must be a number of seconds from 0 to 3600");
    }
    ec.grace = Duration::from_secs_f64(args.grace);
    ec.transcript_cap = args.transcript_cap_mib.saturating_mul(1024 * 1024);
    let token = owner_token(args, &state)?;
    let bound = api::bind(args.addr, token.as_deref()).await?;
    let guard = crate::guard::spawn(&ec.instance);
    if guard.is_none() {
        tracing::warn!("could not start the guard: sessions may outlive a SIGKILLed orchestra");
    }
    let engine = Engine::open(&state, ec).await?;
    let url = local_url(&bound)?;
    engine.set_url(url.clone());
    let mut allowed_hosts = args.allow_host.clone();
    if !args.addr.ip().is_unspecified() {
        allowed_hosts.push(args.addr.ip().to_string());
    }
    let access = Access {
        token,
        allowed_hosts,
        allowed_origins: args.allow_origin.clone(),
    };
    write_server_file(&state, &url, access.token.as_deref())?;
    tracing::info!(url = %bound.url, state_dir = %state.path.display(), "orchestra started");
    Ok(Running {
        engine,
        url,
        listening: bound.url,
        state,
        listener: Some(bound.listener),
        access,
        _guard: guard,
        _log_guard: log_guard,
    })
}

/// The token every request must carry: the one given (`--token`, `ORCHESTRA_TOKEN`), else the
/// state directory's own, made at the first start and kept; none only when the user turned
/// authentication off for a throwaway rig.
fn owner_token(args: &ServeOptions, state: &StateDir) -> Result<Option<String>> {
    let given = args.token.clone().filter(|t| !t.is_empty());
    if args.insecure_no_auth {
        if given.is_some() {
            anyhow::bail!(
                "--insecure-no-auth turns authentication off while --token (or ORCHESTRA_TOKEN) gives a token: pass one or the other"
            );
        }
        tracing::warn!("{}", insecure_warning(args));
        return Ok(None);
    }
    match given {
        Some(token) => {
            if !orchestra_sys::credentials::well_formed(&token) {
                anyhow::bail!(
                    "the token given with --token or ORCHESTRA_TOKEN must be printable characters without spaces"
                );
            }
            if token.len() < orchestra_sys::credentials::SHORT_TOKEN {
                tracing::warn!(
                    "the token given is shorter than {} characters and easy to guess; leave it out and orchestra uses one of its own (`orchestra token` prints it)",
                    orchestra_sys::credentials::SHORT_TOKEN
                );
            }
            Ok(Some(token))
        }
        None => Ok(Some(orchestra_sys::credentials::token_for(&state.path)?)),
    }
}

/// What `--insecure-no-auth` means, said where the user sees it (stderr and the log).
pub fn insecure_warning(args: &ServeOptions) -> String {
    format!(
        "WARNING: --insecure-no-auth: every account on this machine can run commands as you through orchestra on {}; use it on a throwaway machine only",
        args.addr
    )
}

/// The URL local clients use. Bound to every interface (0.0.0.0, ::), orchestra is reached on
/// loopback: a `Host` the API always accepts, where `0.0.0.0` is refused.
fn local_url(bound: &api::Bound) -> Result<String> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let addr = bound
        .listener
        .local_addr()
        .context("cannot read the address the API listens on")?;
    Ok(match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            format!("http://{}:{}", Ipv4Addr::LOCALHOST, addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            format!("http://[{}]:{}", Ipv6Addr::LOCALHOST, addr.port())
        }
        _ => bound.url.clone(),
    })
}

/// `server.json`: how clients find this orchestra (see the client's `daemon` module).
fn write_server_file(state: &StateDir, url: &str, token: Option<&str>) -> Result<()> {
    ServerFile {
        url: url.to_string(),
        token: token.map(str::to_string),
        pid: Some(std::process::id()),
    }
    .write(&state.path)
    .with_context(|| format!("cannot write {}", state.server_file().display()))
}

impl Running {
    /// Serves the API until a signal (SIGTERM, SIGINT, SIGHUP) or a stop request.
    pub fn serve(&mut self) -> Result<Serving> {
        let listener = self
            .listener
            .take()
            .context("the API is already being served")?;
        let app = api::router(self.engine.clone(), self.access.clone());
        let closing = self.engine.clone();
        let asked = self.engine.closing();
        let signalled = termination();
        let (signal_tx, signal) = tokio::sync::oneshot::channel::<&'static str>();
        let server = tokio::spawn(api::serve(listener, app, async move {
            tokio::select! {
                which = signalled => {
                    let _ = signal_tx.send(which);
                }
                () = asked => {}
            }
            // Long-lived readers (event streams) finish, so the server can.
            closing.begin_shutdown();
        }));
        Ok(Serving { server, signal })
    }

    /// Waits until `serving` stops (requests in flight finish first), then stops orchestra;
    /// the tasks still running are cancelled, saying by what.
    pub async fn stop_when_served(self, serving: Serving) {
        let Serving { server, mut signal } = serving;
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "server failed"),
            Err(e) => tracing::error!(error = %e, "server task failed"),
        }
        match signal.try_recv() {
            Ok(which) => {
                let reason = format!("cancelled: orchestra was stopped by {which}");
                self.shutdown_because(&reason).await;
            }
            Err(_) => self.shutdown().await,
        }
    }

    /// Ends every session, flushes the store and removes server.json. The tasks those
    /// sessions ran are cancelled: the user stopped orchestra.
    pub async fn shutdown(&self) {
        self.shutdown_because(crate::engine::STOPPED_BY_USER).await;
    }

    /// `shutdown`, with the reason the cancelled tasks give.
    pub async fn shutdown_because(&self, reason: &str) {
        self.engine.shutdown_because(reason).await;
        let _ = std::fs::remove_file(self.state.server_file());
        tracing::info!(reason, "orchestra stopped");
    }
}

/// Resolves on SIGTERM, SIGINT or SIGHUP (the terminal went away) with the signal's name.
/// In the TUI's raw mode Ctrl-C is a key, not SIGINT. The handlers are installed when this is
/// called, not when the future is first polled, so a signal that arrives right after start-up
/// is not lost (and does not kill the process before it can clean up).
pub fn termination() -> impl std::future::Future<Output = &'static str> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let handlers = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    );
    async move {
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = handlers else {
            // Without signal handlers we can only wait forever; SIGKILL still works.
            return std::future::pending::<&'static str>().await;
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        }
    }
}

/// The API being served; see [`Running::serve`].
pub struct Serving {
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The signal that stopped it, if one did (else a client asked it to stop).
    signal: tokio::sync::oneshot::Receiver<&'static str>,
}
