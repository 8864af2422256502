//! Load benchmark of the task HTTP API on loopback, against the real `orchestra serve`.
//!
//! Run: `cargo bench --bench api_load` (cargo builds the release `orchestra` binary first and
//! this bench starts it on a fresh state directory; `ORCHESTRA_BIN=/path/to/orchestra` picks
//! another binary). Every write is durable before it is answered (SQLite WAL,
//! `synchronous=FULL`, concurrent writers batched into group commits), so the create and
//! PATCH figures include fsync.
//!
//! Each phase opens `API_LOAD_CONC` keep-alive HTTP/1.1 connections (default 32), each driven
//! by one client task that sends its next request as soon as the previous answer is read
//! (closed loop), until the phase's request count or time cap is reached. Latency is measured
//! per request from just before sending to the last byte of the body. The result is a markdown
//! table on stdout; the process exits 1 if any request failed or got a non-2xx answer, and
//! with `API_LOAD_ENFORCE=1` also if a budget is missed.
//!
//! Knobs (environment): `API_LOAD_CONC` (connections, default 32), `API_LOAD_SCALE` (multiplies
//! every phase's request count, default 1), `API_LOAD_SECS` (time cap per phase, default 8),
//! `API_LOAD_CLIENT_THREADS` (client runtime threads, default 1 so the server keeps a core),
//! `API_LOAD_SWEEP` (comma-separated connection counts for an extra create sweep, e.g.
//! `1,8,32,64,128`), `API_LOAD_ONLY` (comma-separated phases to run: create1, sweep, create,
//! get, list, patch, patch-one; default all), `API_LOAD_STATE_DIR` (parent of the temporary
//! state directory; default the system temp directory, which must be on a real disk for the
//! fsync cost to show).
//!
//! Without `--bench` (as `cargo test --all-targets` runs it, unoptimised) it is a smoke run at
//! 1 % of the counts: it checks that every route answers 2xx under concurrency and that the
//! server stops cleanly, and judges no budget. Figures are recorded in BENCHMARKS.md.

mod support;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, header};
use hyper_util::rt::TokioIo;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const TASKS: &str = "/api/coding-agents/tasks";

/// Budgets from the foundation issue, on a 2-core machine with durable writes.
const CREATE_BUDGET: f64 = 5_000.0;
const GET_BUDGET: f64 = 20_000.0;
const P99_BUDGET_MS: f64 = 10.0;

// ---------------------------------------------------------------------------------------------
// The server under test

/// A running `orchestra serve`; SIGTERMed and reaped when dropped, also on panic.
struct Server {
    child: Option<Child>,
    addr: SocketAddr,
    _state: tempfile::TempDir,
}

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("ORCHESTRA_BIN") {
        return PathBuf::from(p);
    }
    // Cargo builds the package's binaries for benches and tells us where.
    let built = PathBuf::from(env!("CARGO_BIN_EXE_orchestra"));
    if built.exists() {
        return built;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/orchestra")
}

impl Server {
    fn start() -> Server {
        let bin = binary();
        assert!(
            bin.exists(),
            "no orchestra binary at {}: run `cargo build --release` or set ORCHESTRA_BIN",
            bin.display()
        );
        let state = match std::env::var_os("API_LOAD_STATE_DIR") {
            Some(parent) => tempfile::Builder::new()
                .prefix("orchestra-bench-")
                .tempdir_in(parent),
            None => tempfile::Builder::new()
                .prefix("orchestra-bench-")
                .tempdir(),
        }
        .expect("cannot make a temporary state directory");
        let mut cmd = Command::new(&bin);
        // A throwaway rig: its clients send no token (the check of one costs a compare).
        cmd.args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--insecure-no-auth",
            "--state-dir",
        ])
        .arg(state.path())
        .env_remove("ORCHESTRA_TOKEN")
        .env_remove("ORCHESTRA_STATE_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        support::detach_as_orchestra_does(&mut cmd);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut server = Server {
            child: Some(child),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            _state: state,
        };
        // Read the first line on a thread (so a silent server cannot hang us), then keep
        // draining stdout so the server never blocks on a full pipe.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut out = BufReader::new(stdout);
            let mut line = String::new();
            let _ = out.read_line(&mut line);
            let _ = tx.send(line);
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("orchestra serve printed no first line within 30 s");
        let url = line
            .trim()
            .strip_prefix("orchestra listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line from orchestra serve: {line:?}"));
        server.addr = url
            .parse()
            .unwrap_or_else(|e| panic!("bad address {url:?} in {line:?}: {e}"));
        server
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// SIGTERM, then up to 15 s for a clean exit, then SIGKILL. Always reaps.
    fn stop(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        // SAFETY: kill(2) on the pid of our own unreaped child: it cannot have been reused.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    eprintln!("orchestra did not stop within 15 s of SIGTERM; killing it");
                    let _ = child.kill();
                    return child.wait().ok();
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc, to show who used the two cores during a phase

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// utime + stime of a process in seconds (all its threads), or 0 if unreadable.
fn cpu_seconds(pid: Option<u32>) -> f64 {
    let path = match pid {
        Some(p) => format!("/proc/{p}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    let Ok(stat) = std::fs::read_to_string(path) else {
        return 0.0;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(14) + ticks(15)) / clock_ticks()
}

// ---------------------------------------------------------------------------------------------
// The client

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Get,
    List,
    /// PATCH progress, request i on task i mod n.
    PatchSpread,
    /// PATCH progress, every request on the same task.
    PatchOne,
}

struct Phase {
    name: String,
    op: Op,
    conc: usize,
    max_requests: usize,
    max_time: Duration,
    /// Whether the budgets apply (not to the single-connection run and the sweep).
    judged: bool,
}

#[derive(Default)]
struct WorkerResult {
    latencies_ns: Vec<u64>,
    non_2xx: u64,
    transport_errors: u64,
    first_problems: Vec<String>,
    created: Vec<String>,
}

struct PhaseResult {
    name: String,
    op: Op,
    judged: bool,
    conc: usize,
    requests: usize,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    failed: u64,
    problems: Vec<String>,
    server_cpu: f64,
    client_cpu: f64,
}

impl PhaseResult {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

#[derive(serde::Deserialize)]
struct Created {
    task: CreatedTask,
}

#[derive(serde::Deserialize)]
struct CreatedTask {
    id: String,
}

type Client = SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Client {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to orchestra");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

fn request(op: Op, i: usize, ids: &[String], host: &str) -> Request<Full<Bytes>> {
    let (method, path, body) = match op {
        Op::Create => (
            Method::POST,
            TASKS.to_string(),
            format!(
                r#"{{"name":"bench task {i}","description":"created by benches/api_load.rs"}}"#
            ),
        ),
        Op::Get => (
            Method::GET,
            format!("{TASKS}/{}", ids[i % ids.len()]),
            String::new(),
        ),
        Op::List => (Method::GET, format!("{TASKS}?limit=20"), String::new()),
        Op::PatchSpread => (
            Method::PATCH,
            format!("{TASKS}/{}", ids[i % ids.len()]),
            format!(r#"{{"progress":{}}}"#, i % 101),
        ),
        Op::PatchOne => (
            Method::PATCH,
            format!("{TASKS}/{}", ids[0]),
            format!(r#"{{"progress":{}}}"#, i % 101),
        ),
    };
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, host);
    if !body.is_empty() {
        b = b.header(header::CONTENT_TYPE, "application/json");
    }
    b.body(Full::new(Bytes::from(body))).expect("valid request")
}

async fn worker(
    mut client: Client,
    op: Op,
    ids: Arc<Vec<String>>,
    host: Arc<str>,
    next: Arc<AtomicUsize>,
    max_requests: usize,
    deadline: Instant,
) -> WorkerResult {
    let mut r = WorkerResult {
        latencies_ns: Vec::with_capacity(max_requests.min(1 << 16)),
        ..WorkerResult::default()
    };
    let problem = |r: &mut WorkerResult, msg: String| {
        if r.first_problems.len() < 3 {
            r.first_problems.push(msg);
        }
    };
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= max_requests || Instant::now() >= deadline {
            break;
        }
        let req = request(op, i, &ids, &host);
        let t0 = Instant::now();
        let sent = async {
            client.ready().await?;
            let resp = client.send_request(req).await?;
            let status = resp.status();
            let body = resp.into_body().collect().await?.to_bytes();
            Ok::<_, hyper::Error>((status, body))
        }
        .await;
        let elapsed = t0.elapsed().as_nanos() as u64;
        match sent {
            Ok((status, body)) => {
                r.latencies_ns.push(elapsed);
                if !status.is_success() {
                    r.non_2xx += 1;
                    let msg = format!("{op:?}: {status} {}", String::from_utf8_lossy(&body));
                    problem(&mut r, msg);
                } else if op == Op::Create {
                    match serde_json::from_slice::<Created>(&body) {
                        Ok(c) => r.created.push(c.task.id),
                        Err(e) => {
                            r.non_2xx += 1;
                            problem(&mut r, format!("create answered without a task id: {e}"));
                        }
                    }
                }
            }
            Err(e) => {
                // The connection is unusable now; this worker stops.
                r.transport_errors += 1;
                problem(&mut r, format!("{op:?}: transport error: {e}"));
                break;
            }
        }
    }
    r
}

/// Nearest-rank percentile of sorted nanoseconds, in milliseconds.
fn percentile_ms(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e6
}

async fn run_phase(
    server: &Server,
    phase: &Phase,
    ids: &Arc<Vec<String>>,
    created: &mut Vec<String>,
) -> PhaseResult {
    let host: Arc<str> = server.addr.to_string().into();
    let mut clients = Vec::with_capacity(phase.conc);
    for _ in 0..phase.conc {
        clients.push(connect(server.addr).await);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let (server_cpu0, client_cpu0) = (cpu_seconds(server.pid()), cpu_seconds(None));
    let start = Instant::now();
    let deadline = start + phase.max_time;
    let handles: Vec<_> = clients
        .into_iter()
        .map(|c| {
            tokio::spawn(worker(
                c,
                phase.op,
                ids.clone(),
                host.clone(),
                next.clone(),
                phase.max_requests,
                deadline,
            ))
        })
        .collect();
    let mut all = WorkerResult::default();
    for h in handles {
        let mut w = h.await.expect("worker panicked");
        all.latencies_ns.append(&mut w.latencies_ns);
        all.non_2xx += w.non_2xx;
        all.transport_errors += w.transport_errors;
        all.created.append(&mut w.created);
        for p in w.first_problems {
            if all.first_problems.len() < 5 {
                all.first_problems.push(p);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let server_cpu = (cpu_seconds(server.pid()) - server_cpu0) / seconds;
    let client_cpu = (cpu_seconds(None) - client_cpu0) / seconds;
    created.append(&mut all.created);
    all.latencies_ns.sort_unstable();
    let lat = &all.latencies_ns;
    PhaseResult {
        name: phase.name.clone(),
        op: phase.op,
        judged: phase.judged,
        conc: phase.conc,
        requests: lat.len(),
        seconds,
        p50_ms: percentile_ms(lat, 0.50),
        p99_ms: percentile_ms(lat, 0.99),
        max_ms: lat.last().map_or(0.0, |&n| n as f64 / 1e6),
        failed: all.non_2xx + all.transport_errors,
        problems: all.first_problems,
        server_cpu,
        client_cpu,
    }
}

// ---------------------------------------------------------------------------------------------
// Reporting

fn mark(ok: bool) -> &'static str {
    if ok { "✓" } else { "✗" }
}

/// The budget verdict for one phase, and whether it holds (None: no budget applies).
fn verdict(r: &PhaseResult) -> (String, Option<bool>) {
    let p99_ok = r.p99_ms < P99_BUDGET_MS;
    let rate_check = |budget: f64| {
        let rate_ok = r.rate() >= budget;
        (
            format!(
                "≥ {budget:.0}/s {} · p99 < {P99_BUDGET_MS:.0} ms {}",
                mark(rate_ok),
                mark(p99_ok)
            ),
            Some(rate_ok && p99_ok),
        )
    };
    match r.op {
        _ if !r.judged => ("— (latency floor / sweep)".into(), None),
        Op::Create => rate_check(CREATE_BUDGET),
        Op::Get => rate_check(GET_BUDGET),
        Op::List | Op::PatchSpread => (
            format!("p99 < {P99_BUDGET_MS:.0} ms {}", mark(p99_ok)),
            Some(p99_ok),
        ),
        Op::PatchOne => ("— (one task: serialised by design)".into(), None),
    }
}

fn table(results: &[PhaseResult]) -> String {
    let mut s = String::new();
    s.push_str("| phase | conns | requests | seconds | req/s | p50 ms | p99 ms | max ms | non-2xx | server CPU | client CPU | budget |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in results {
        s.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {:.0}% | {:.0}% | {} |\n",
            r.name,
            r.conc,
            r.requests,
            r.seconds,
            r.rate(),
            r.p50_ms,
            r.p99_ms,
            r.max_ms,
            r.failed,
            r.server_cpu * 100.0,
            r.client_cpu * 100.0,
            verdict(r).0,
        ));
    }
    s
}

/// Today's UTC date as YYYY-MM-DD (civil-from-days, no date crate needed).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {v:?}")),
        Err(_) => default,
    }
}

fn env_f64(name: &str, default: f64) -> f64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}")),
        Err(_) => default,
    }
}

// ---------------------------------------------------------------------------------------------

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // built without optimisation: then it is a quick smoke run whose figures mean nothing.
    let bench = std::env::args().any(|a| a == "--bench");
    if !bench {
        eprintln!(
            "api_load: smoke run (no --bench); for figures run `cargo bench --bench api_load`"
        );
    }
    let conc = env_usize("API_LOAD_CONC", 32).max(1);
    let scale = env_f64("API_LOAD_SCALE", if bench { 1.0 } else { 0.01 }).max(0.001);
    let secs =
        Duration::from_secs_f64(env_f64("API_LOAD_SECS", if bench { 8.0 } else { 2.0 }).max(0.1));
    let client_threads = env_usize("API_LOAD_CLIENT_THREADS", 1).max(1);
    let sweep: Vec<usize> = std::env::var("API_LOAD_SWEEP")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse()
                .expect("API_LOAD_SWEEP: comma-separated whole numbers")
        })
        .collect();
    // API_LOAD_ONLY=create,get,…: run only these phases (create1, sweep, create, get, list,
    // patch, patch-one); the warm-up always runs and provides the tasks the others use.
    let only: Vec<String> = std::env::var("API_LOAD_ONLY")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let wanted = |key: &str| only.is_empty() || only.iter().any(|o| o == key);
    let n = |count: usize| ((count as f64 * scale).ceil() as usize).max(1);

    let runtime = if client_threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(client_threads)
            .enable_all()
            .build()
    }
    .expect("tokio runtime");

    let mut server = Server::start();
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    eprintln!(
        "api_load: orchestra {} (pid {}) at {}; {conc} connections, {client_threads} client thread(s)",
        binary().display(),
        server.pid().unwrap_or(0),
        server.addr
    );

    let phase = |name: &str, op: Op, conc: usize, count: usize, max_time: Duration| Phase {
        name: name.to_string(),
        op,
        conc,
        max_requests: n(count),
        max_time,
        judged: true,
    };
    let unjudged = |p: Phase| Phase { judged: false, ..p };
    let results = runtime.block_on(async {
        let mut created = Vec::new();
        let none = Arc::new(Vec::new());
        // Warm-up: connections, allocator, SQLite page cache. Not reported; its tasks are
        // kept so later phases read a table that is not tiny.
        let warm = phase("warm-up", Op::Create, conc, 2_000, secs);
        let w = run_phase(&server, &warm, &none, &mut created).await;
        assert_eq!(w.failed, 0, "warm-up failed: {:?}", w.problems);

        let mut results = Vec::new();
        let mut writes = vec![(
            "create1",
            unjudged(phase(
                "create (1 connection)",
                Op::Create,
                1,
                500,
                secs.min(Duration::from_secs(3)),
            )),
        )];
        for &c in &sweep {
            writes.push((
                "sweep",
                unjudged(phase(
                    &format!("create ({c} conns)"),
                    Op::Create,
                    c.max(1),
                    10_000,
                    secs,
                )),
            ));
        }
        writes.push(("create", phase("create", Op::Create, conc, 30_000, secs)));
        for (_, p) in writes.into_iter().filter(|(k, _)| wanted(k)) {
            eprintln!("api_load: {} …", p.name);
            results.push(run_phase(&server, &p, &none, &mut created).await);
        }
        let ids = Arc::new(std::mem::take(&mut created));
        assert!(!ids.is_empty(), "no task was created");
        let reads = [
            ("get", phase("get by id", Op::Get, conc, 150_000, secs)),
            (
                "list",
                phase("list ?limit=20", Op::List, conc, 50_000, secs),
            ),
            (
                "patch",
                phase(
                    "PATCH progress, spread",
                    Op::PatchSpread,
                    conc,
                    30_000,
                    secs,
                ),
            ),
            (
                "patch-one",
                phase(
                    "PATCH progress, one task",
                    Op::PatchOne,
                    conc,
                    2_000,
                    secs.min(Duration::from_secs(5)),
                ),
            ),
        ];
        for (_, p) in reads.into_iter().filter(|(k, _)| wanted(k)) {
            eprintln!("api_load: {} …", p.name);
            results.push(run_phase(&server, &p, &ids, &mut created).await);
        }
        eprintln!("api_load: {} tasks in the store", ids.len());
        results
    });
    drop(runtime);
    let exit = server.stop();

    println!(
        "## API load ({}, {cores} cores, {conc} connections{})\n",
        utc_date(),
        if bench {
            ""
        } else {
            ", smoke run: not a measurement"
        }
    );
    print!("{}", table(&results));
    println!(
        "\nload average before the run: {}server exit after SIGTERM: {}",
        loadavg,
        exit.map_or("unknown".to_string(), |s| s.to_string())
    );
    let mut failed = false;
    for r in &results {
        for p in &r.problems {
            println!("problem in {}: {p}", r.name);
        }
        failed |= r.failed > 0;
    }
    let budgets_ok = results.iter().all(|r| verdict(r).1 != Some(false));
    println!(
        "budgets: {}",
        if !bench {
            "not judged (smoke run)"
        } else if budgets_ok {
            "all met"
        } else {
            "some missed (✗ above)"
        }
    );
    if failed {
        eprintln!("api_load: some requests failed");
        std::process::exit(1);
    }
    if !exit.is_some_and(|s| s.success()) {
        eprintln!("api_load: orchestra did not exit cleanly after SIGTERM");
        std::process::exit(1);
    }
    if bench && !budgets_ok && std::env::var("API_LOAD_ENFORCE").is_ok_and(|v| v == "1") {
        std::process::exit(1);
    }
}
