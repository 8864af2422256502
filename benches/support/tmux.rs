//! A private tmux server for the benches that drive a TUI: sessions of a set size, keys sent
//! with `send-keys`, and what a pane outputs read raw and stamped as it arrives.

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

pub fn shell_quote(s: impl AsRef<std::ffi::OsStr>) -> String {
    format!("'{}'", s.as_ref().to_string_lossy().replace('\'', "'\\''"))
}

pub fn mkfifo(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    unsafe { libc::mkfifo(c.as_ptr(), 0o600) == 0 }
}

/// A private tmux server (its own -L socket); dropping it kills the server.
pub struct Tmux {
    pub socket: String,
    /// The size of every session it makes.
    pub cols: u16,
    pub rows: u16,
}

impl Tmux {
    pub fn new(name: &str, cols: u16, rows: u16) -> Tmux {
        Tmux {
            socket: format!("orch-bench-{name}-{}", std::process::id()),
            cols,
            rows,
        }
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    pub fn run(&self, args: &[&str]) -> Option<String> {
        let out = self.cmd().args(args).output().ok()?;
        if !out.status.success() && std::env::var_os("ATTACH_DEBUG").is_some() {
            println!(
                "  tmux {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub fn new_session(&self, name: &str, script: &str) -> bool {
        let (x, y) = (self.cols.to_string(), self.rows.to_string());
        self.run(&["new-session", "-d", "-s", name, "-x", &x, "-y", &y, script])
            .is_some()
    }

    pub fn pane_pid(&self, target: &str) -> Option<i32> {
        self.run(&["display-message", "-p", "-t", target, "#{pane_pid}"])?
            .parse()
            .ok()
    }

    pub fn server_pid(&self) -> Option<i32> {
        self.run(&["display-message", "-p", "#{pid}"])?.parse().ok()
    }

    pub fn capture(&self, target: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", target])
            .unwrap_or_default()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
        // SAFETY: getuid(2) has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let _ = std::fs::remove_file(format!("{dir}/tmux-{uid}/{}", self.socket));
    }
}

/// Keys sent to panes of a tmux server, one `tmux send-keys` each (a control-mode client would
/// save the process per key; not tried again after a first attempt that failed for another
/// reason). Both sides of every comparison pay this the same.
pub struct Keys<'a> {
    tmux: &'a Tmux,
}

impl<'a> Keys<'a> {
    pub fn open(tmux: &'a Tmux) -> Option<Keys<'a>> {
        // A session that stays, so the server outlives the TUIs that detach.
        tmux.new_session("keep", "exec sleep 100000")
            .then_some(Keys { tmux })
    }

    pub fn send(&mut self, target: &str, keys: &str) -> bool {
        self.tmux.run(&["send-keys", "-t", target, keys]).is_some()
    }

    pub fn literal(&mut self, target: &str, text: &str) -> bool {
        self.tmux
            .run(&["send-keys", "-t", target, "-l", text])
            .is_some()
    }
}

/// What a tmux pane outputs, from `pipe-pane` into a FIFO, each chunk stamped on arrival and
/// fed to a vt100 parser of the pane's size (the pane must be blank when it starts).
pub struct PaneReader {
    pub rx: Receiver<(Instant, Vec<u8>)>,
    pub parser: vt100::Parser,
}

impl PaneReader {
    pub fn open(tmux: &Tmux, target: &str, fifo: &Path) -> Option<PaneReader> {
        let _ = std::fs::remove_file(fifo);
        if !mkfifo(fifo) {
            return None;
        }
        let (tx, rx) = channel();
        let path = fifo.to_path_buf();
        std::thread::spawn(move || {
            // Blocks until `cat` opens the FIFO; ends when pipe-pane closes it.
            let Ok(mut f) = std::fs::File::open(&path) else {
                return;
            };
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        tmux.run(&[
            "pipe-pane",
            "-t",
            target,
            &format!("exec cat > {}", shell_quote(fifo)),
        ])?;
        Some(PaneReader {
            rx,
            parser: vt100::Parser::new(tmux.rows, tmux.cols, 0),
        })
    }

    /// The arrival time of the output after which `ok` first holds of the screen (now, if it
    /// holds already); None after `within`.
    pub fn wait(&mut self, within: Duration, ok: impl Fn(&str) -> bool) -> Option<Instant> {
        if ok(&self.parser.screen().contents()) {
            return Some(Instant::now());
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.rx.recv_timeout(left) {
                Ok((at, bytes)) => {
                    self.parser.process(&bytes);
                    if ok(&self.parser.screen().contents()) {
                        return Some(at);
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }
}

/// Counts the frames a TUI draws into its pane, from what the pane outputs: ratatui ends
/// every frame by hiding the cursor (`CSI ?25l`) when no cursor is shown (not typing).
pub struct FrameCounter {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Instant>>,
}

impl FrameCounter {
    pub fn start(reader: PaneReader) -> FrameCounter {
        const HIDE: &[u8] = b"\x1b[?25l";
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut drawn = Vec::new();
            // The end of the last chunk, for a sequence split between two.
            let mut tail: Vec<u8> = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let (at, bytes) = match reader.rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(chunk) => chunk,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                tail.extend_from_slice(&bytes);
                let found = tail.windows(HIDE.len()).filter(|w| *w == HIDE).count();
                drawn.extend(std::iter::repeat_n(at, found));
                let keep = tail.len().min(HIDE.len() - 1);
                tail.drain(..tail.len() - keep);
            }
            drawn
        });
        FrameCounter { stop, thread }
    }

    /// When each frame arrived.
    pub fn stop(self) -> Vec<Instant> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}
