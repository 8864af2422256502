//! Notifications for agents that need the user (see `attention`): the terminal bell, a desktop
//! notification by OSC 9 or OSC 777 (wrapped to pass through tmux), and a command of the
//! user's from the config file, run with the agent's name, status and prompt in its
//! environment, under a timeout and never waited on by the UI.
//!
//! ```toml
//! [notify]
//! bell = true              # BEL: the terminal (and tmux's bell flag) marks the window
//! desktop = "osc9"         # "osc9", "osc777", "both" or "off"
//! command = "notify-send \"$ORCHESTRA_NAME\" \"$ORCHESTRA_STATUS\""
//! command_timeout_secs = 10
//! ```

use super::attention::Waiting;
use std::io::Write;
use std::time::Duration;

/// Which escape sequence carries a desktop notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    Off,
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, kitty, Windows Terminal…).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL` (foot, WezTerm, rxvt…).
    Osc777,
    Both,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    pub bell: bool,
    pub desktop: Desktop,
    /// Run by `sh -c` for each agent that needs the user.
    pub command: Option<String>,
    /// How long the command may run before it is killed.
    pub timeout: Duration,
}

impl Default for NotifyConfig {
    fn default() -> NotifyConfig {
        NotifyConfig {
            bell: true,
            desktop: Desktop::Osc9,
            command: None,
            timeout: Duration::from_secs(10),
        }
    }
}

impl NotifyConfig {
    /// The config file's `[notify]` (the defaults for what it leaves out); an unknown entry or
    /// a value of the wrong kind is an error that names it.
    pub fn from_table(t: &toml::Table) -> Result<NotifyConfig, String> {
        let mut cfg = NotifyConfig::default();
        for (k, v) in t {
            let wrong = || format!("[notify] {k} = {v}: not a valid value");
            match k.as_str() {
                "bell" => cfg.bell = v.as_bool().ok_or_else(wrong)?,
                "desktop" => {
                    cfg.desktop = match v.as_str() {
                        Some("off") => Desktop::Off,
                        Some("osc9") => Desktop::Osc9,
                        Some("osc777") => Desktop::Osc777,
                        Some("both") => Desktop::Both,
                        _ => return Err(format!("{}: osc9, osc777, both or off", wrong())),
                    }
                }
                "command" => {
                    let c = v.as_str().ok_or_else(wrong)?.trim();
                    cfg.command = (!c.is_empty()).then(|| c.to_string());
                }
                "command_timeout_secs" => {
                    let secs = v.as_integer().filter(|s| *s > 0).ok_or_else(wrong)?;
                    cfg.timeout = Duration::from_secs(secs as u64);
                }
                _ => {
                    return Err(format!(
                        "[notify] has no entry {k:?} (bell, desktop, command, command_timeout_secs)"
                    ));
                }
            }
        }
        Ok(cfg)
    }
}

/// Text safe inside an OSC: no control characters (which would end it early) and, for OSC
/// 777's fields, no `;`.
fn osc_text(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
        .collect::<String>()
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// An escape sequence as tmux passes it through to the outer terminal: in a DCS, each ESC
/// doubled.
fn tmux_wrap(seq: &[u8]) -> Vec<u8> {
    let mut out = b"\x1bPtmux;".to_vec();
    for &b in seq {
        if b == 0x1b {
            out.push(0x1b);
        }
        out.push(b);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// What to write to the terminal for `w`: the bell and the desktop notification, as
/// configured.
pub fn terminal_bytes(cfg: &NotifyConfig, w: &Waiting, in_tmux: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if cfg.bell {
        // Plain: tmux sees the bell itself (its window bell flag) and passes it on.
        out.push(0x07);
    }
    let body = if w.prompt.is_empty() {
        osc_text(&w.status)
    } else {
        osc_text(&format!("{}: {}", w.status, w.prompt))
    };
    let title = osc_text(&format!("orchestra: {}", w.name));
    let mut seqs = Vec::new();
    if matches!(cfg.desktop, Desktop::Osc9 | Desktop::Both) {
        seqs.push(format!("\x1b]9;{title}: {body}\x07"));
    }
    if matches!(cfg.desktop, Desktop::Osc777 | Desktop::Both) {
        seqs.push(format!("\x1b]777;notify;{title};{body}\x07"));
    }
    for s in seqs {
        if in_tmux {
            out.extend(tmux_wrap(s.as_bytes()));
        } else {
            out.extend_from_slice(s.as_bytes());
        }
    }
    out
}

/// Starts the user's command for `w` without waiting for it: killed when the timeout passes.
/// Needs a tokio runtime (none: nothing runs).
pub fn spawn_command(cfg: &NotifyConfig, w: &Waiting) {
    let Some(cmd) = cfg.command.clone() else {
        return;
    };
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let mut c = tokio::process::Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .env("ORCHESTRA_NAME", &w.name)
        .env("ORCHESTRA_STATUS", &w.status)
        .env("ORCHESTRA_PROMPT", &w.prompt)
        .env(
            "ORCHESTRA_SESSION_ID",
            w.session_id.as_deref().unwrap_or(""),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let timeout = cfg.timeout;
    rt.spawn(async move {
        let mut child = match c.spawn() {
            Ok(child) => child,
            Err(e) => return tracing::warn!("notify command did not start: {e}"),
        };
        if tokio::time::timeout(timeout, child.wait()).await.is_err() {
            tracing::warn!("notify command ran past {timeout:?}: killed");
            let _ = child.kill().await;
        }
    });
}

/// Tells the user of each agent in `alerts`: writes to `out` (the terminal) and starts the
/// command. Write errors are ignored: a lost terminal is noticed by the loop.
pub fn deliver(cfg: &NotifyConfig, alerts: &[Waiting], out: &mut impl Write) {
    if alerts.is_empty() {
        return;
    }
    let in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    for w in alerts {
        let _ = out.write_all(&terminal_bytes(cfg, w, in_tmux));
        spawn_command(cfg, w);
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Selected;

    fn waiting(prompt: &str) -> Waiting {
        Waiting {
            target: Selected::Task("t1".into()),
            session_id: Some("s1".into()),
            name: "fix;\x1b[2Jthe parser".into(),
            status: "blocked".into(),
            prompt: prompt.into(),
        }
    }

    #[test]
    fn the_bell_and_osc_9_by_default_wrapped_inside_tmux() {
        let cfg = NotifyConfig::default();
        let plain = terminal_bytes(&cfg, &waiting("Proceed? (y/n)"), false);
        let text = String::from_utf8(plain).unwrap();
        assert_eq!(
            text,
            "\x07\x1b]9;orchestra: fix  [2Jthe parser: blocked: Proceed? (y/n)\x07"
        );
        let wrapped = terminal_bytes(&cfg, &waiting(""), true);
        let text = String::from_utf8(wrapped).unwrap();
        assert!(
            text.starts_with("\x07\x1bPtmux;\x1b\x1b]9;orchestra: "),
            "{text:?}"
        );
        assert!(text.ends_with(": blocked\x07\x1b\\"), "{text:?}");
    }

    /// Polls `ok` for up to 10 s.
    async fn eventually(mut ok: impl FnMut() -> bool) -> bool {
        for _ in 0..500 {
            if ok() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    #[tokio::test]
    async fn the_command_gets_the_agent_in_its_environment_and_is_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cfg = NotifyConfig {
            command: Some(format!(
                "printf '%s|%s|%s|%s' \"$ORCHESTRA_NAME\" \"$ORCHESTRA_STATUS\" \"$ORCHESTRA_PROMPT\" \"$ORCHESTRA_SESSION_ID\" > {}.tmp && mv {0}.tmp {0}",
                out.display()
            )),
            ..NotifyConfig::default()
        };
        let started = std::time::Instant::now();
        spawn_command(&cfg, &waiting("go on?"));
        // Not waited for: the call returns at once.
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(eventually(|| out.exists()).await);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "fix;\x1b[2Jthe parser|blocked|go on?|s1"
        );

        // A command that hangs is killed (and reaped) when its time is up.
        let pid_file = dir.path().join("pid");
        let slow = NotifyConfig {
            command: Some(format!("echo $$ > {}; exec sleep 30", pid_file.display())),
            timeout: Duration::from_millis(300),
            ..NotifyConfig::default()
        };
        spawn_command(&slow, &waiting(""));
        assert!(
            eventually(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| !p.trim().is_empty()))
                .await
        );
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_string();
        assert!(
            eventually(|| !std::path::Path::new(&format!("/proc/{pid}")).exists()).await,
            "the slow command {pid} still runs"
        );
    }

    #[test]
    fn the_config_chooses_and_wrong_entries_are_named() {
        let t: toml::Table =
            toml::from_str("bell = false\ndesktop = \"osc777\"\ncommand = \"true\"").unwrap();
        let cfg = NotifyConfig::from_table(&t).unwrap();
        let text = String::from_utf8(terminal_bytes(&cfg, &waiting("go?"), false)).unwrap();
        assert_eq!(
            text,
            "\x1b]777;notify;orchestra: fix  [2Jthe parser;blocked: go?\x07"
        );
        assert_eq!(cfg.command.as_deref(), Some("true"));
        let off: toml::Table = toml::from_str("desktop = \"off\"\nbell = false").unwrap();
        let off = NotifyConfig::from_table(&off).unwrap();
        assert!(terminal_bytes(&off, &waiting(""), false).is_empty());
        let bad: toml::Table = toml::from_str("desktop = \"loud\"").unwrap();
        assert!(
            NotifyConfig::from_table(&bad)
                .unwrap_err()
                .contains("desktop")
        );
        let unknown: toml::Table = toml::from_str("sound = true").unwrap();
        assert!(
            NotifyConfig::from_table(&unknown)
                .unwrap_err()
                .contains("sound")
        );
    }
}
