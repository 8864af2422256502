//! Session runtime against real processes: bash, sh, python3, vim, less, floods.
//! No sleeps-and-hope: every wait polls a condition with a deadline. Every session is
//! terminated by a guard, even when an assertion fails.

use orchestra_daemon::session::{
    Activity, ExitInfo, MARKER_VAR, PtySession, SessionEvent, SpawnSpec, tree,
};
use parking_lot::Mutex;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support;

use support::{rss_kib, wait_until};

const LONG: Duration = Duration::from_secs(20);

/// Everything a session reported.
#[derive(Default)]
struct Seen {
    /// The most recent output lines (older ones are dropped past 20 000).
    lines: Vec<String>,
    line_count: usize,
    activity: Vec<Activity>,
    screens: usize,
    exited: Option<ExitInfo>,
    after_exit: usize,
    /// The last event was `Output`.
    after_output: bool,
    /// `Output` events whose next event was neither `Screen` nor `Exited`.
    output_alone: usize,
}

/// A session plus what it reported; terminates it on drop.
struct Guard {
    session: Arc<PtySession>,
    seen: Arc<Mutex<Seen>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.session.terminate(Duration::from_millis(500));
    }
}

impl Guard {
    fn screen(&self) -> String {
        self.session.snapshot(0, false).screen
    }

    fn wait_screen(&self, needle: &str) {
        let ok = wait_until(LONG, || self.screen().contains(needle));
        assert!(
            ok,
            "screen never showed {needle:?}; screen:\n{}",
            self.screen()
        );
    }

    fn wait_line(&self, line: &str) {
        let ok = wait_until(LONG, || self.seen.lock().lines.iter().any(|l| l == line));
        assert!(
            ok,
            "no output line {line:?}; lines: {:?}",
            self.seen.lock().lines
        );
    }

    fn wait_quiet(&self) {
        let ok = wait_until(LONG, || self.session.activity().is_quiet());
        assert!(
            ok,
            "output never became quiet, is {:?}",
            self.session.activity()
        );
    }

    fn wait_exited_event(&self) -> ExitInfo {
        let ok = wait_until(LONG, || self.seen.lock().exited.is_some());
        assert!(ok, "no Exited event");
        self.seen.lock().exited.clone().unwrap_or_default()
    }
}

fn base_env() -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
        ("TERM".to_string(), "xterm-256color".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ];
    if let Ok(home) = std::env::var("HOME") {
        env.push(("HOME".to_string(), home));
    }
    env
}

fn spawn_with(mut spec: SpawnSpec) -> Guard {
    if spec.env.is_empty() {
        spec.env = base_env();
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = seen.clone();
    let on_event = Box::new(move |e: SessionEvent| {
        let mut s = sink.lock();
        if s.exited.is_some() {
            s.after_exit += 1;
        }
        if s.after_output && !matches!(e, SessionEvent::Screen | SessionEvent::Exited(_)) {
            s.output_alone += 1;
        }
        s.after_output = matches!(e, SessionEvent::Output(_));
        match e {
            SessionEvent::Output(lines) => {
                s.line_count += lines.len();
                s.lines.extend(lines);
                if s.lines.len() > 20_000 {
                    s.lines.drain(..10_000);
                }
            }
            SessionEvent::Screen => s.screens += 1,
            SessionEvent::Activity(a) => s.activity.push(a),
            SessionEvent::Exited(info) => s.exited = Some(info),
        }
    });
    let session = PtySession::spawn(spec, on_event).expect("spawn");
    Guard { session, seen }
}

fn spec(program: &str, args: &[&str]) -> SpawnSpec {
    let mut s = SpawnSpec::new(program, std::env::temp_dir());
    s.args = args.iter().map(|a| a.to_string()).collect();
    s.settle = Duration::from_millis(200);
    s
}

fn bash() -> Guard {
    let mut s = spec("bash", &["--norc", "--noprofile", "-i"]);
    s.env = base_env();
    s.env.push(("PS1".into(), "$ ".into()));
    let g = spawn_with(s);
    g.wait_screen("$");
    g
}

/// Pids of the processes in `pid`'s process group (from /proc).
fn group_members(pgid: i32) -> Vec<i32> {
    tree::all_processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid && p.state != 'Z')
        .map(|p| p.pid)
        .collect()
}

/// Live processes whose command line is exactly `args`.
fn pids_by_cmdline(args: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = args.iter().flat_map(|a| a.bytes().chain([0])).collect();
    tree::all_processes()
        .into_iter()
        .filter(|p| p.state != 'Z')
        .filter(|p| std::fs::read(format!("/proc/{}/cmdline", p.pid)).is_ok_and(|c| c == want))
        .map(|p| p.pid)
        .collect()
}

fn wait_cmdline(args: &[&str]) -> i32 {
    let mut found = Vec::new();
    let ok = wait_until(LONG, || {
        found = pids_by_cmdline(args);
        !found.is_empty()
    });
    assert!(ok, "no process {args:?}");
    found[0]
}

fn alive(pid: i32) -> bool {
    !tree::is_gone(pid)
}

/// Reads a pid a shell printed as `<tag>=<pid>` on the screen or in the lines.
fn wait_pid(g: &Guard, tag: &str) -> i32 {
    let prefix = format!("{tag}=");
    let mut found = None;
    let ok = wait_until(LONG, || {
        found = g
            .seen
            .lock()
            .lines
            .iter()
            .filter_map(|l| l.split(&prefix).nth(1))
            .filter_map(|p| {
                let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits.parse::<i32>().ok()
            })
            .next();
        found.is_some()
    });
    assert!(ok, "no {tag}=PID line; lines: {:?}", g.seen.lock().lines);
    found.unwrap_or(0)
}

#[test]
fn bash_prompt_echo_and_quiet() {
    let g = bash();
    g.wait_quiet();
    let Activity::Quiet { since: first_quiet } = g.session.activity() else {
        unreachable!("waited for quiet")
    };
    let reports_before = g.seen.lock().activity.len();
    g.session
        .send_text("echo hello-$((6*7))", b"\r")
        .expect("send");
    g.wait_screen("hello-42");
    g.wait_line("hello-42");
    // Active again, then quiet once more, since the last output (after the first quiet).
    let ok = wait_until(
        LONG,
        || matches!(g.session.activity(), Activity::Quiet { since } if since > first_quiet),
    );
    assert!(ok, "not quiet again: {:?}", g.session.activity());
    // (A slow machine may split the output into more than one burst.)
    let reported = g.seen.lock().activity[reports_before..].to_vec();
    assert!(
        matches!(
            (reported.first(), reported.last()),
            (Some(Activity::Active { since: a }), Some(Activity::Quiet { since: q })) if a <= q
        ),
        "{reported:?}"
    );
    assert!(g.seen.lock().screens > 0);
    // Named keys: ctrl-u clears the line, then a command submitted with enter.
    g.session
        .send_keys(&["e", "c", "h", "o", "space", "k", "e", "y", "s", "enter"])
        .expect("keys");
    g.wait_line("keys");
    assert!(g.session.send_keys(&["no-such-key"]).is_err());
    // Snapshot shape.
    let snap = g.session.snapshot(0, true);
    assert_eq!(snap.screen.split('\n').count(), usize::from(snap.rows));
    assert_eq!((snap.cols, snap.rows), (80, 24));
    assert!(snap.screen_ansi.is_some());
    let info = g.session.terminate(Duration::from_secs(2));
    assert!(info.code.is_some() || info.signal.is_some(), "{info:?}");
    assert_eq!(g.session.exit_info(), Some(info));
    assert!(matches!(
        g.session.write(b"x"),
        Err(orchestra_daemon::session::SessionError::Ended)
    ));
    assert!(!alive(g.session.pid() as i32));
}

#[test]
fn multi_line_text_is_pasted_as_one() {
    let g = bash();
    // bash's readline enables bracketed paste: both lines arrive, then run on submit.
    g.session
        .send_text("echo one-$((1+1))\necho two-$((1+2))", b"\r")
        .expect("send");
    g.wait_line("one-2");
    g.wait_line("two-3");
}

#[test]
fn pause_stops_the_whole_group_and_resume_continues() {
    let g = bash();
    g.session
        .send_text("sleep 1000 | cat", b"\r")
        .expect("send");
    let pgid = g.session.pid() as i32;
    // Wait for the pipeline (its own group under job control) to run.
    let ok = wait_until(LONG, || {
        tree::all_processes()
            .iter()
            .any(|p| p.sid == pgid && p.pid != pgid && p.state != 'Z')
    });
    assert!(ok, "pipeline never started");
    g.session.pause().expect("pause");
    assert!(g.session.is_paused());
    let session_members = || -> Vec<tree::ProcStat> {
        tree::all_processes()
            .into_iter()
            .filter(|p| p.sid == pgid && p.state != 'Z')
            .collect()
    };
    let ok = wait_until(LONG, || {
        let m = session_members();
        !m.is_empty() && m.iter().all(|p| p.state == 'T')
    });
    assert!(ok, "not all stopped: {:?}", session_members());
    assert!(group_members(pgid).contains(&pgid));
    g.session.resume().expect("resume");
    let ok = wait_until(LONG, || {
        let m = session_members();
        !m.is_empty() && m.iter().all(|p| p.state == 'S' || p.state == 'R')
    });
    assert!(ok, "not all continued: {:?}", session_members());
    assert!(!g.session.is_paused());
}

#[test]
fn terminate_kills_jobs_setsid_descendants_and_term_ignorers() {
    let g = bash();
    g.session
        .send_text("sleep 1000 & echo bg=$!", b"\r")
        .expect("send");
    let bg = wait_pid(&g, "bg");
    g.session
        .send_text("setsid sleep 100101 &", b"\r")
        .expect("send");
    // setsid(1) forks when it leads a group, so find the sleep itself.
    let sid_child = wait_cmdline(&["sleep", "100101"]);
    g.session
        .send_text(
            "bash -c 'trap \"\" TERM HUP; echo stubborn=$$; while :; do sleep 1; done' &",
            b"\r",
        )
        .expect("send");
    let stubborn = wait_pid(&g, "stubborn");
    // A double-forked daemon that leaves the group and the session.
    g.session
        .send_text(
            "( setsid sh -c 'trap \"\" TERM HUP; exec sleep 100102' & )",
            b"\r",
        )
        .expect("send");
    let daemon = wait_cmdline(&["sleep", "100102"]);
    for pid in [bg, sid_child, stubborn, daemon] {
        assert!(alive(pid), "{pid} not running before terminate");
    }
    let leader = g.session.pid() as i32;
    let started = Instant::now();
    let info = g.session.terminate(Duration::from_millis(500));
    let _ = started.elapsed();
    assert!(info.code.is_some() || info.signal.is_some(), "{info:?}");
    for pid in [leader, bg, sid_child, stubborn, daemon] {
        assert!(
            wait_until(Duration::from_secs(5), || !alive(pid)),
            "{pid} outlived the session"
        );
    }
    // The exit was recorded and delivered once, last.
    let exited = g.wait_exited_event();
    assert_eq!(Some(exited), g.session.exit_info());
    assert_eq!(g.seen.lock().after_exit, 0);
    // Idempotent.
    assert_eq!(
        Some(g.session.terminate(Duration::from_millis(10))),
        g.session.exit_info()
    );
}

#[test]
fn term_ignoring_leader_is_killed_after_grace() {
    let g = spawn_with(spec(
        "sh",
        &["-c", "trap '' TERM HUP; echo ready; sleep 1000"],
    ));
    g.wait_line("ready");
    let info = g.session.terminate(Duration::from_millis(300));
    assert_eq!(info.signal.as_deref(), Some("SIGKILL"), "{info:?}");
    assert!(!alive(g.session.pid() as i32));
}

/// Output lines always come with the screen change of the same bytes (or the exit), so the
/// engine wakes once for both; that holds for the last partial line at EOF too, here while
/// the program still runs (it closed its terminal and sleeps).
#[test]
fn output_lines_are_followed_by_their_screen_change() {
    let g = spawn_with(spec(
        "sh",
        &[
            "-c",
            "for i in $(seq 300); do echo line $i; done; printf tail; exec 0<&- 1>&- 2>&-; sleep 30",
        ],
    ));
    assert!(
        wait_until(LONG, || g
            .seen
            .lock()
            .lines
            .last()
            .is_some_and(|l| l == "tail")),
        "the last partial line did not come while the program ran"
    );
    let seen = g.seen.lock();
    assert!(
        seen.exited.is_none(),
        "the program exited: {:?}",
        seen.exited
    );
    assert_eq!(seen.line_count, 301);
    assert_eq!(
        seen.output_alone, 0,
        "output lines without their screen change"
    );
    assert!(
        !seen.after_output,
        "the last output lines without their screen change"
    );
}

#[test]
fn exec_style_exit_code_and_lines() {
    let g = spawn_with(spec(
        "sh",
        &["-c", "printf 'a\\nb\\n'; printf partial; exit 3"],
    ));
    let info = g.session.wait_exit(LONG).expect("exit");
    assert_eq!(
        info,
        ExitInfo {
            code: Some(3),
            signal: None
        }
    );
    let seen = g.seen.lock();
    assert_eq!(seen.lines, vec!["a", "b", "partial"]);
    assert_eq!(seen.exited, Some(info.clone()));
    assert_eq!(seen.after_exit, 0, "the exit is the last event");
    drop(seen);
    assert_eq!(g.session.exit_info(), Some(info));
}

#[test]
fn exit_by_signal_is_named() {
    let g = spawn_with(spec("sh", &["-c", "kill -9 $$"]));
    let info = g.session.wait_exit(LONG).expect("exit");
    assert_eq!(info.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(info.code, None);
}

#[test]
fn leftovers_of_an_exited_leader_are_ended() {
    let g = spawn_with(spec(
        "sh",
        &[
            "-c",
            "setsid sh -c 'trap \"\" TERM HUP; echo left=$$; exec sleep 100103' & \
             until pgrep -xf 'sleep 100103' >/dev/null; do sleep 0.05; done; exit 0",
        ],
    ));
    let left = wait_pid(&g, "left");
    let info = g.session.wait_exit(LONG).expect("exit");
    assert_eq!(info.code, Some(0));
    assert!(
        wait_until(Duration::from_secs(5), || !alive(left)),
        "{left} outlived its session"
    );
}

#[test]
fn environment_is_exactly_the_spec_plus_marker() {
    let mut s = spec("sh", &["-c", "env | sort"]);
    s.env = vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("FOO".into(), "bar".into()),
    ];
    s.marker = "test-marker-123".into();
    let g = spawn_with(s);
    g.session.wait_exit(LONG).expect("exit");
    let lines = g.seen.lock().lines.clone();
    assert!(lines.contains(&"FOO=bar".to_string()), "{lines:?}");
    assert!(
        lines.contains(&format!("{MARKER_VAR}=test-marker-123")),
        "{lines:?}"
    );
    let names: Vec<&str> = lines.iter().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            [
                "PATH", "FOO", MARKER_VAR, "SHELL", "PWD", "SHLVL", "_", "OLDPWD"
            ]
            .contains(name),
            "unexpected variable {name} in {lines:?}"
        );
    }
    assert!(!names.contains(&"HOME"), "{lines:?}");
}

#[test]
fn bad_cwd_and_missing_program_are_errors() {
    let mut s = spec("sh", &[]);
    s.cwd = "/definitely/not/here".into();
    assert!(matches!(
        PtySession::spawn(s, Box::new(|_| {})),
        Err(orchestra_daemon::session::SessionError::InvalidCwd(_))
    ));
    let mut s = spec("no-such-program-xyz", &[]);
    s.env = base_env();
    assert!(matches!(
        PtySession::spawn(s, Box::new(|_| {})),
        Err(orchestra_daemon::session::SessionError::Spawn { .. })
    ));
}

#[test]
fn cursor_position_request_is_answered() {
    let script = r#"
import os, sys, tty, termios
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
try:
    os.write(1, b"abc\x1b[6n")
    buf = b""
    while not buf.endswith(b"R"):
        buf += os.read(fd, 1)
finally:
    termios.tcsetattr(fd, termios.TCSADRAIN, old)
print()
print("reply=" + buf.decode().replace("\x1b", "ESC"))
"#;
    let g = spawn_with(spec("python3", &["-c", script]));
    g.wait_line("reply=ESC[1;4R");
    let info = g.session.wait_exit(LONG).expect("exit");
    assert_eq!(info.code, Some(0));
}

#[test]
fn device_attributes_are_answered() {
    let script = r#"
import os, sys, tty, termios
fd = sys.stdin.fileno()
tty.setraw(fd)
def ask(q, end):
    os.write(1, q)
    buf = b""
    while not buf.endswith(end):
        buf += os.read(fd, 1)
    return buf.decode().replace("\x1b", "ESC")
a = ask(b"\x1b[c", b"c")
b = ask(b"\x1b[>c", b"c")
c = ask(b"\x1b[5n", b"n")
os.write(1, ("\r\nda=%s sda=%s dsr=%s\r\n" % (a, b, c)).encode())
"#;
    let g = spawn_with(spec("python3", &["-c", script]));
    g.wait_line("da=ESC[?62;22c sda=ESC[>0;276;0c dsr=ESC[0n");
}

fn fixture_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("fixture.txt");
    let text: String = (1..=100)
        .map(|i| format!("fixture line {i:03}\n"))
        .collect();
    std::fs::write(&path, text).expect("write fixture");
    path
}

#[test]
fn less_renders_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = fixture_file(dir.path());
    let mut s = spec("less", &[file.to_str().unwrap_or_default()]);
    s.cwd = dir.path().to_path_buf();
    let g = spawn_with(s);
    g.wait_screen("fixture line 001");
    g.wait_screen("fixture line 023");
    assert!(g.session.snapshot(0, false).alternate_screen || g.screen().contains("fixture"));
    // Page down with a named key.
    g.session.send_keys(&["space"]).expect("space");
    g.wait_screen("fixture line 030");
    g.session.send_keys(&["q"]).expect("q");
    let info = g.session.wait_exit(LONG).expect("less quits");
    assert_eq!(info.code, Some(0));
}

#[test]
fn vim_renders_the_file_and_arrows_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = fixture_file(dir.path());
    let mut s = spec(
        "vim",
        &["-u", "NONE", "-N", file.to_str().unwrap_or_default()],
    );
    s.cwd = dir.path().to_path_buf();
    let g = spawn_with(s);
    g.wait_screen("fixture line 001");
    g.wait_screen("fixture line 020");
    // Move down with arrow keys (vim turns on application-cursor mode) and delete a line.
    g.session
        .send_keys(&["down", "down", "d", "d"])
        .expect("keys");
    let ok = wait_until(LONG, || {
        let s = g.screen();
        s.contains("fixture line 002") && !s.contains("fixture line 003\n")
    });
    assert!(ok, "dd on line 3 did not happen:\n{}", g.screen());
    g.session.send_keys(&["esc"]).expect("esc");
    g.session.send_text(":q!", b"\r").expect("quit");
    let info = g.session.wait_exit(LONG).expect("vim quits");
    assert_eq!(info.code, Some(0));
}

#[test]
fn python_repl_renders_and_evaluates() {
    let g = spawn_with(spec("python3", &["-i", "-q"]));
    g.wait_screen(">>>");
    g.session.send_text("print(6*7)", b"\r").expect("send");
    g.wait_screen("42");
    g.session.send_keys(&["ctrl-d"]).expect("ctrl-d");
    let info = g.session.wait_exit(LONG).expect("exit");
    assert_eq!(info.code, Some(0));
}

#[test]
fn resize_reaches_parser_and_child() {
    let g = bash();
    g.session.resize(100, 30).expect("resize");
    let snap = g.session.snapshot(0, false);
    assert_eq!((snap.cols, snap.rows), (100, 30));
    assert_eq!(snap.screen.split('\n').count(), 30);
    g.session.send_text("stty size", b"\r").expect("send");
    g.wait_line("30 100");
}

#[test]
fn scrollback_keeps_lines_that_scrolled_off() {
    let mut s = spec(
        "sh",
        &[
            "-c",
            "for i in $(seq 1 60); do echo row$i; done; exec sleep 1000",
        ],
    );
    s.rows = 10;
    let g = spawn_with(s);
    g.wait_screen("row60");
    let snap = g.session.snapshot(5, false);
    assert_eq!(
        snap.scrollback,
        vec!["row47", "row48", "row49", "row50", "row51"]
    );
    assert!(snap.screen.starts_with("row52"));
}

#[test]
fn flood_is_drained_with_bounded_memory_and_terminates_mid_flood() {
    let dir = tempfile::tempdir().expect("tempdir");
    let transcript = dir.path().join("flood.log");
    let mut s = spec(
        "sh",
        &[
            "-c",
            "yes 'flood line with some text' | head -c 5000000; echo; echo flood-done",
        ],
    );
    s.transcript = Some(transcript.clone());
    s.transcript_cap = 1_000_000;
    let g = spawn_with(s);
    g.wait_line("flood-done");
    let info = g.session.wait_exit(LONG * 3).expect("exit");
    assert_eq!(info.code, Some(0));
    let len = std::fs::metadata(&transcript).map(|m| m.len()).unwrap_or(0);
    assert!(
        (1_000_000..1_001_000).contains(&len),
        "transcript {len} bytes"
    );

    // An endless flood, ended mid-way.
    let g = spawn_with(spec("sh", &["-c", "yes endless-flood"]));
    g.wait_line("endless-flood");
    let rss_before = rss_kib(std::process::id());
    assert!(wait_until(LONG * 3, || g.seen.lock().line_count > 300_000));
    let rss_after = rss_kib(std::process::id());
    // Bounded: a runaway would grow by the flood's size (hundreds of MB).
    assert!(
        rss_after < rss_before + 200_000,
        "rss {rss_before} -> {rss_after} KiB"
    );
    let info = g.session.terminate(Duration::from_millis(500));
    assert!(info.signal.is_some() || info.code.is_some(), "{info:?}");
    assert!(!alive(g.session.pid() as i32));
}

#[test]
fn idle_session_uses_no_cpu() {
    let g = bash();
    g.wait_quiet();
    let ticks = |pid: i32| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| {
                let after = t.rsplit_once(')')?.1.to_string();
                let f: Vec<&str> = after.split_whitespace().collect();
                Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
            })
            .unwrap_or(0)
    };
    // Our session threads: their CPU time must not move while idle.
    let suffix = format!("-{}", g.session.pid());
    let thread_ticks = || -> u64 {
        sum_over_own_threads(
            |comm| comm.ends_with(&suffix),
            |tid| {
                let t = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
                let after = t.rsplit_once(')')?.1.to_string();
                let f: Vec<&str> = after.split_whitespace().collect();
                Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
            },
        )
    };
    let before = (thread_ticks(), ticks(g.session.pid() as i32));
    // Not a timing assertion: an idle window in which nothing may happen.
    std::thread::sleep(Duration::from_millis(1500));
    let after = (thread_ticks(), ticks(g.session.pid() as i32));
    assert_eq!(before, after, "idle session consumed CPU");
    assert!(g.session.activity().is_quiet());
}

#[test]
fn a_silent_program_is_quiet_after_the_startup_period_since_its_start() {
    let mut s = spec("sh", &["-c", "read line; echo got-$line; sleep 1000"]);
    s.startup_quiet = Duration::from_millis(300);
    let before_spawn = Instant::now();
    let g = spawn_with(s);
    g.wait_quiet();
    let Activity::Quiet { since } = g.session.activity() else {
        unreachable!("waited for quiet")
    };
    assert!(since >= before_spawn, "quiet since its start");
    assert!(g.seen.lock().lines.is_empty());
    // Its first output makes it active, then quiet again after the settle time.
    g.session.send_text("x", b"\r").expect("send");
    g.wait_line("got-x");
    let ok = wait_until(
        LONG,
        || matches!(g.session.activity(), Activity::Quiet { since: s } if s > since),
    );
    assert!(ok, "{:?}", g.session.activity());
    let reported = g.seen.lock().activity.clone();
    assert!(
        matches!(
            (reported.first(), reported.get(1), reported.last()),
            (
                Some(Activity::Quiet { .. }),
                Some(Activity::Active { .. }),
                Some(Activity::Quiet { .. })
            )
        ),
        "{reported:?}"
    );
}

/// The sum of `read(tid)` over this process's threads whose name `matches` (0 when none).
fn sum_over_own_threads(matches: impl Fn(&str) -> bool, read: impl Fn(&str) -> Option<u64>) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| {
            let tid = e.file_name().to_string_lossy().to_string();
            let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).ok()?;
            if !matches(comm.trim()) {
                return None;
            }
            read(&tid)
        })
        .sum()
}

/// Voluntary context switches of this process's thread named `name` (0 when none).
fn thread_switches(name: &str) -> u64 {
    sum_over_own_threads(
        |comm| comm == name,
        |tid| {
            let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
            status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        },
    )
}

#[test]
fn a_program_that_writes_now_and_then_wakes_no_second_thread_and_still_goes_quiet() {
    // A spinner: a small redraw every 20 ms, four times the settle time of 100 ms over,
    // then it stops. The reader parses each redraw itself and keeps the quiet deadline
    // while it waits for the next: the processing thread sleeps all along.
    const SPINNER: &str = r"
import sys, time
sys.stdin.readline()
for i in range(100):
    sys.stdout.write('\r\x1b[32m%s\x1b[0m working' % '|/-+'[i % 4])
    sys.stdout.flush()
    time.sleep(0.02)
print()
print('spun')
time.sleep(1000)
";
    let mut s = spec("python3", &["-c", SPINNER]);
    s.settle = Duration::from_millis(100);
    s.startup_quiet = Duration::from_millis(300);
    let g = spawn_with(s);
    g.wait_quiet();
    let processing = format!("pty-proc-{}", g.session.pid());
    let before = thread_switches(&processing);
    let started = Instant::now();
    g.session.send_text("go", b"\r").expect("send");
    g.wait_line("spun");
    let ok = wait_until(
        LONG,
        || matches!(g.session.activity(), Activity::Quiet { since } if since > started),
    );
    assert!(
        ok,
        "not quiet after the spinner: {:?}",
        g.session.activity()
    );
    let woken = thread_switches(&processing) - before;
    // (A write the program makes in two pieces may go to it now and then.)
    assert!(
        woken < 10,
        "the processing thread woke {woken} times for 100 small redraws"
    );
}

#[test]
fn a_flood_goes_quiet_once_it_has_been_parsed() {
    // Large reads go to the processing thread; the reader, waiting for output meanwhile,
    // still sees the output go quiet once the last of them is parsed.
    let mut s = spec(
        "sh",
        &[
            "-c",
            r"read line; head -c 2000000 /dev/zero | tr '\0' x | fold -w 100; echo; echo flooded; sleep 1000",
        ],
    );
    s.settle = Duration::from_millis(100);
    s.startup_quiet = Duration::from_millis(300);
    let g = spawn_with(s);
    g.wait_quiet();
    let started = Instant::now();
    g.session.send_text("go", b"\r").expect("send");
    g.wait_line("flooded");
    let ok = wait_until(
        LONG,
        || matches!(g.session.activity(), Activity::Quiet { since } if since > started),
    );
    assert!(ok, "not quiet after the flood: {:?}", g.session.activity());
    assert!(g.screen().contains("flooded"), "{}", g.screen());
}

#[test]
fn dropping_the_last_handle_ends_the_session() {
    let mut s = spec("sh", &["-c", "trap '' TERM HUP; echo up; sleep 1000"]);
    s.env = base_env();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let session = PtySession::spawn(
        s,
        Box::new(move |e| {
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(e);
            }
        }),
    )
    .expect("spawn");
    let pid = session.pid() as i32;
    let up = wait_until(LONG, || {
        rx.try_iter()
            .any(|e| matches!(e, SessionEvent::Output(ref l) if l.iter().any(|l| l == "up")))
    });
    drop(session); // terminates, even though it ignores SIGTERM
    assert!(up, "never printed");
    assert!(
        wait_until(Duration::from_secs(5), || !alive(pid)),
        "{pid} outlived its dropped session"
    );
}

#[test]
fn a_watchers_copy_follows_the_screen_and_never_waits_for_the_parser() {
    let g = bash();
    let visible = g.session.watch_visible();
    assert!(visible.current().contents().contains('$'));
    g.session
        .send_text("printf '\\033[1;31mred\\033[0m %s\\n' marker-one", b"\r")
        .expect("send");
    g.wait_screen("red marker-one");
    // The last parse slice of a batch is always copied: the copy catches up once output stops.
    let caught_up = wait_until(LONG, || {
        let copy = visible.current();
        g.session
            .with_screen(|s| s.contents_formatted() == copy.contents_formatted())
    });
    assert!(caught_up, "the copy never showed what the terminal shows");
    let (rows, cols) = visible.current().size();
    g.session.resize(cols + 7, rows + 3).expect("resize");
    assert_eq!(visible.current().size(), (rows + 3, cols + 7));

    // While another thread holds the terminal (as a parser preempted mid-slice would), a
    // watcher still gets its copy at once.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let session = g.session.clone();
    let holder = std::thread::spawn(move || {
        session.with_screen(|_| {
            let _ = held_tx.send(());
            let _ = release_rx.recv_timeout(LONG);
        })
    });
    held_rx.recv_timeout(LONG).expect("the terminal is held");
    let (got_tx, got_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let _ = got_tx.send(visible.current().size());
    });
    let got = got_rx.recv_timeout(Duration::from_secs(5));
    let _ = release_tx.send(());
    let _ = holder.join();
    let _ = reader.join();
    assert_eq!(
        got.ok(),
        Some((rows + 3, cols + 7)),
        "the copy waited for the terminal's lock"
    );
}

#[test]
fn a_write_the_program_does_not_read_goes_as_far_as_it_can_without_waiting() {
    // The program never reads its terminal: its input fills up and a blocking write would
    // wait. It writes once, later.
    let g = spawn_with(spec(
        "sh",
        &[
            "-c",
            "stty -echo; sleep 1; echo still-read; exec sleep 1000",
        ],
    ));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let session = g.session.clone();
    let writer = std::thread::spawn(move || {
        let mut written = 0usize;
        let chunk = vec![b'x'; 64 * 1024];
        // Far more than a terminal buffers: it stops taking bytes somewhere on the way.
        for _ in 0..64 {
            match session.try_write(&chunk) {
                Ok(n) => {
                    written += n;
                    if n < chunk.len() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = done_tx.send(Err(e.to_string()));
                    return;
                }
            }
        }
        let _ = done_tx.send(Ok(written));
    });
    let outcome = done_rx.recv_timeout(LONG);
    let _ = writer.join();
    let written = outcome
        .expect("try_write blocked")
        .expect("try_write failed");
    assert!(
        written < 64 * 64 * 1024,
        "a program that never reads took {written} bytes"
    );
    // Its output is still read: the reader shares the non-blocking descriptor.
    g.wait_screen("still-read");
    let info = g.session.terminate(Duration::from_millis(500));
    assert!(info.signal.is_some(), "ended by a signal: {info:?}");
}

#[test]
fn a_transcript_reaches_its_file_soon_without_more_output_and_at_once_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let read = |path: &std::path::Path| {
        String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
    };

    // Buffered, then written by the reader's own deadline though the program says no more.
    let timed = dir.path().join("timed.log");
    let mut s = spec("sh", &["-c", "echo timed-marker; exec sleep 60"]);
    s.transcript = Some(timed.clone());
    let g = spawn_with(s);
    g.wait_line("timed-marker");
    assert!(
        wait_until(LONG, || read(&timed).contains("timed-marker")),
        "the transcript never reached its file: {:?}",
        read(&timed)
    );
    assert!(!g.session.is_finished(), "the session is still running");

    // Asked for: in the file as soon as the line was seen.
    let asked = dir.path().join("asked.log");
    let mut s = spec("sh", &["-c", "echo asked-marker; exec sleep 60"]);
    s.transcript = Some(asked.clone());
    let g = spawn_with(s);
    g.wait_line("asked-marker");
    g.session.flush_transcript();
    assert!(read(&asked).contains("asked-marker"), "{:?}", read(&asked));
}

/// A program that waits for a typed line is seen to wait: the shell's own `read`, a program
/// the shell runs, and one reading without echo; a shell at its line editor's prompt, a
/// command that sleeps and a full-screen program are not waiting for a line.
#[test]
fn a_line_read_is_seen_and_nothing_else_is() {
    use orchestra_daemon::session::Foreground;
    let g = bash();
    g.wait_quiet();
    assert_eq!(
        g.session.foreground(),
        Some(Foreground::Keys),
        "bash at its prompt (readline has canonical mode off)"
    );

    g.session
        .send_text(
            "read -p 'Delete the cache? [y/N] ' ans; echo got-$ans",
            b"\r",
        )
        .expect("send");
    let leader = g.session.pid() as i32;
    let ok = wait_until(LONG, || {
        matches!(g.session.foreground(),
            Some(Foreground::Reading(r)) if r.pid == leader && r.echo && r.comm == "bash")
    });
    assert!(ok, "the shell's read: {:?}", g.session.foreground());
    g.session.send_text("y", b"\r").expect("answer");
    g.wait_line("got-y");

    g.session
        .send_text(
            "python3 -c 'import getpass; print(\"x\" + getpass.getpass(\"Password: \"))'",
            b"\r",
        )
        .expect("send");
    g.wait_screen("Password:");
    let ok = wait_until(LONG, || {
        matches!(g.session.foreground(),
            Some(Foreground::Reading(r)) if r.pid != leader && !r.echo && r.comm.starts_with("python"))
    });
    assert!(
        ok,
        "a child's read without echo: {:?}",
        g.session.foreground()
    );
    g.session.send_text("secret", b"\r").expect("answer");
    g.wait_line("xsecret");

    g.session.send_text("sleep 30", b"\r").expect("send");
    let ok = wait_until(LONG, || g.session.foreground() == Some(Foreground::Running));
    assert!(
        ok,
        "sleep runs, reading nothing: {:?}",
        g.session.foreground()
    );
    g.session.send_keys(&["ctrl-c"]).expect("interrupt");

    g.session.send_text("vim -u NONE -N", b"\r").expect("send");
    let ok = wait_until(LONG, || g.session.snapshot(0, false).alternate_screen);
    assert!(ok, "vim on the alternate screen");
    g.wait_quiet();
    assert_eq!(
        g.session.foreground(),
        Some(Foreground::Keys),
        "vim reads keys, not lines"
    );
    g.session.send_keys(&["escape"]).expect("esc");
    g.session.send_text(":q!", b"\r").expect("quit vim");
}
