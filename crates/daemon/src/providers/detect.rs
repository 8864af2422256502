//! Detection for `GET /providers`: is the CLI installed, where, and which version (from its
//! own `--version`, with a short timeout, cached by path and modification time).

use super::Provider;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

/// How long a `--version` may take (node CLIs start slowly on a loaded machine).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub installed: bool,
    pub path: Option<PathBuf>,
    pub version: Option<String>,
}

type Key = (PathBuf, Option<SystemTime>, Vec<String>);

fn cache() -> &'static Mutex<HashMap<Key, Option<String>>> {
    static C: OnceLock<Mutex<HashMap<Key, Option<String>>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// Installed, path and version of one provider. Blocking (runs `--version` on a cache miss).
pub fn detect(p: &Provider) -> Detection {
    let Some(path) = p.resolved_path() else {
        return Detection {
            installed: false,
            path: None,
            version: None,
        };
    };
    let version = if p.version_args.is_empty() {
        None
    } else {
        cached_version(&path, &p.version_args)
    };
    Detection {
        installed: true,
        path: Some(path),
        version,
    }
}

/// Every provider's detection, the version probes run in parallel.
pub fn detect_all(ps: &[Provider]) -> Vec<Detection> {
    std::thread::scope(|s| {
        let handles: Vec<_> = ps.iter().map(|p| s.spawn(move || detect(p))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or(Detection {
                    installed: false,
                    path: None,
                    version: None,
                })
            })
            .collect()
    })
}

fn cached_version(path: &Path, args: &[String]) -> Option<String> {
    // Symlinks (npm's .bin) are followed for the modification time: an upgrade changes it.
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let key = (path.to_path_buf(), mtime, args.to_vec());
    if let Some(v) = cache().lock().get(&key) {
        return v.clone();
    }
    let v = run_version(path, args, VERSION_TIMEOUT);
    // A probe that failed (often a timeout on a loaded machine) is tried again next time.
    if v.is_some() {
        cache().lock().insert(key, v.clone());
    }
    v
}

/// Runs `path args…` in its own process group with stdin closed; the first version-looking
/// word of its output, or `None` on failure or timeout (the group is killed then).
pub fn run_version(path: &Path, args: &[String], timeout: Duration) -> Option<String> {
    parse_version(&run_capture(path, args, timeout)?)
}

/// The CLI's `--help` (stdout and stderr), cached by path and modification time like the
/// version: what the flags of approval presets are fitted to (see `flags.rs`).
pub fn cached_help(path: &Path) -> Option<String> {
    type HelpCache = HashMap<(PathBuf, Option<SystemTime>), (Option<String>, Instant)>;
    static HELP: OnceLock<Mutex<HelpCache>> = OnceLock::new();
    // A failed probe (a timeout on a loaded machine) is not run again at every spawn, but
    // after a while.
    const RETRY_FAILED: Duration = Duration::from_secs(300);
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let key = (path.to_path_buf(), mtime);
    let cache = HELP.get_or_init(Default::default);
    if let Some((h, at)) = cache.lock().get(&key)
        && (h.is_some() || at.elapsed() < RETRY_FAILED)
    {
        return h.clone();
    }
    let help = run_capture(path, &["--help".to_string()], VERSION_TIMEOUT)
        .filter(|h| !h.trim().is_empty());
    cache.lock().insert(key, (help.clone(), Instant::now()));
    help
}

/// Runs `path args…` in its own process group with stdin closed and returns what it printed
/// (stdout, then stderr), or `None` on failure or timeout (the group is killed then).
fn run_capture(path: &Path, args: &[String], timeout: Duration) -> Option<String> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("NO_COLOR", "1")
        .env("CI", "1")
        .process_group(0)
        .spawn()
        .ok()?;
    let pid = child.id() as i32;
    let mut out = child.stdout.take()?;
    let mut err = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let mut e = String::new();
        let _ = err.read_to_string(&mut e);
        s + "\n" + &e
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    if status.is_none() {
        // SAFETY: kill(2) on the process group we created; no memory is involved.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait();
        return None;
    }
    reader.join().ok()
}

/// The first `N.N[.N…][-suffix]` in a CLI's version output.
pub fn parse_version(text: &str) -> Option<String> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\bv?(\d+\.\d+(?:\.\d+)*(?:[-+][0-9A-Za-z.]+)?)").expect("static regex")
    });
    re.captures(text).map(|c| c[1].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_versions_the_real_clis_print() {
        assert_eq!(
            parse_version("2.1.332 (Claude Code)").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(
            parse_version("codex-cli 0.171.0").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(parse_version("0.61.0\n").as_deref(), Some("0.61.0"));
        assert_eq!(parse_version("aider 0.86.2").as_deref(), Some("0.86.2"));
        assert_eq!(parse_version("nothing here"), None);
    }

    #[test]
    fn runs_a_version_command_and_times_out() {
        let sh = Path::new("/bin/sh");
        let v = run_version(
            sh,
            &["-c".into(), "echo tool v1.2.3".into()],
            VERSION_TIMEOUT,
        );
        assert_eq!(v.as_deref(), Some("1.2.3"));
        let t = Instant::now();
        let v = run_version(
            sh,
            &["-c".into(), "sleep 30; echo 9.9".into()],
            Duration::from_millis(300),
        );
        assert_eq!(v, None);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
