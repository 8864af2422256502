//! The raw transcript: every byte the child wrote, appended to a file, up to a cap.
//!
//! Past the cap nothing more is written; a one-line note is appended once, so a reader of
//! the file knows it was cut. Write errors disable the transcript (logged once) instead of
//! disturbing the session.
//!
//! Bytes are buffered and reach the file at most [`FLUSH_EVERY`] after they came (or when
//! the buffer fills, or before anyone reads the file through the API): a write to the file
//! for every read of a program that redraws a spinner ten times a second was a system call
//! and a disk update each, for fifty agents a thousand a second.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest a byte waits in the buffer. A reader through the API never sees the wait
/// (it flushes first); a crash of the daemon loses at most this much of the file.
pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// Appends raw output to a file, at most `cap` bytes (counting what the file already held).
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: Option<BufWriter<File>>,
    written: u64,
    cap: u64,
    capped: bool,
    /// When the oldest byte not yet in the file was buffered.
    unflushed_since: Option<Instant>,
}

impl Transcript {
    /// Opens (creating if needed, appending) the transcript file.
    pub fn open(path: &Path, cap: u64) -> std::io::Result<Self> {
        // What a session prints often holds keys and code: only the owner may read it.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            orchestra_sys::private::create_private_dir(dir)?;
        }
        let file = orchestra_sys::private::private_file()
            .create(true)
            .append(true)
            .open(path)?;
        let written = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Self {
            path: path.to_path_buf(),
            file: Some(BufWriter::with_capacity(64 * 1024, file)),
            written,
            cap,
            capped: written >= cap,
            unflushed_since: None,
        })
    }

    /// Whether the cap was reached (nothing more is written).
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// Bytes in the file (excluding the cap note).
    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// When the buffered bytes are due in the file, if any are buffered.
    pub fn flush_due(&self) -> Option<Instant> {
        self.unflushed_since.map(|at| at + FLUSH_EVERY)
    }

    /// Appends bytes, cutting at the cap; they reach the file by [`Self::flush_due`].
    pub fn write(&mut self, bytes: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        if self.capped {
            return;
        }
        let room = self.cap.saturating_sub(self.written);
        let take = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        let mut result = file.write_all(&bytes[..take]);
        self.written += take as u64;
        self.unflushed_since.get_or_insert_with(Instant::now);
        if take < bytes.len() || self.written >= self.cap {
            self.capped = true;
            tracing::warn!(path = %self.path.display(), cap = self.cap, "transcript reached its cap; no more output is recorded");
            if result.is_ok() {
                let note = format!(
                    "\r\n[orchestra: transcript capped at {} bytes; later output not recorded]\r\n",
                    self.cap
                );
                result = file.write_all(note.as_bytes());
            }
        }
        match result {
            Err(e) => self.fail(e),
            // Nothing more will come: the file is complete now.
            Ok(()) if self.capped => self.flush(),
            Ok(()) => {}
        }
    }

    /// Flushes buffered bytes to the file once they are due.
    pub fn flush_if_due(&mut self, now: Instant) {
        if self.flush_due().is_some_and(|due| due <= now) {
            self.flush();
        }
    }

    /// Flushes buffered bytes to the file.
    pub fn flush(&mut self) {
        self.unflushed_since = None;
        if let Some(file) = self.file.as_mut()
            && let Err(e) = file.flush()
        {
            self.fail(e);
        }
    }

    fn fail(&mut self, e: std::io::Error) {
        tracing::warn!(path = %self.path.display(), error = %e, "transcript write failed; transcript disabled");
        self.file = None;
    }
}

impl Drop for Transcript {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_notes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/t.log");
        let mut t = Transcript::open(&path, 10).unwrap();
        t.write(b"hello ");
        assert!(!t.capped());
        t.write(b"world and more");
        assert!(t.capped());
        t.write(b"ignored");
        t.flush();
        let data = std::fs::read(&path).unwrap();
        assert!(data.starts_with(b"hello worl"));
        assert!(String::from_utf8_lossy(&data).contains("capped at 10 bytes"));
        assert!(!String::from_utf8_lossy(&data).contains("ignored"));
        drop(t);
        // Reopening a full file writes nothing more.
        let mut t = Transcript::open(&path, 10).unwrap();
        assert!(t.capped());
        t.write(b"again");
        drop(t);
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }

    #[test]
    fn bytes_wait_in_the_buffer_until_they_are_due() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let mut t = Transcript::open(&path, 1 << 20).unwrap();
        assert_eq!(t.flush_due(), None);
        let before = Instant::now();
        t.write(b"spinner");
        let due = t.flush_due().expect("bytes are buffered");
        assert!(due >= before + FLUSH_EVERY);
        t.write(b" again");
        assert_eq!(t.flush_due(), Some(due), "the oldest byte sets the time");
        t.flush_if_due(due - Duration::from_millis(1));
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        t.flush_if_due(due);
        assert_eq!(std::fs::read(&path).unwrap(), b"spinner again");
        assert_eq!(t.flush_due(), None);
    }

    #[test]
    fn exact_cap_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let mut t = Transcript::open(&path, 4).unwrap();
        t.write(b"abcd");
        assert!(t.capped());
        assert_eq!(t.written(), 4);
    }
}
