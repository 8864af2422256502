//! Reading a session's transcript: the raw bytes it printed, ANSI included, from its file.
//! Works alike for live sessions (what the session buffered is flushed before the read)
//! and for sessions of an earlier run.

use super::{Engine, EngineError, EngineResult};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The last `max` bytes of a file (all of it when `max` is `None`); a missing file is empty.
fn read_tail(path: &Path, max: Option<usize>) -> std::io::Result<Vec<u8>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let start = match max {
        Some(n) => len.saturating_sub(n as u64),
        None => 0,
    };
    file.seek(SeekFrom::Start(start))?;
    let mut out = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    file.take(len - start).read_to_end(&mut out)?;
    Ok(out)
}

impl Engine {
    /// What a session printed, or its last `max_bytes` bytes. A session without a
    /// transcript file (it could not be created) has printed nothing on record.
    pub async fn session_transcript(
        &self,
        id: &str,
        max_bytes: Option<usize>,
    ) -> EngineResult<Vec<u8>> {
        let entry = self.session_entry(id)?;
        let path = entry.info.lock().transcript.clone();
        let Some(path) = path else {
            return Ok(Vec::new());
        };
        let pty = entry.pty.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(pty) = pty {
                pty.flush_transcript();
            }
            read_tail(Path::new(&path), max_bytes).map_err(|e| {
                EngineError::Internal(format!("could not read the transcript {path}: {e}"))
            })
        })
        .await
        .map_err(|e| EngineError::Internal(format!("reading the transcript failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::read_tail;

    #[test]
    fn tail_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.log");
        let printed = b"\x1b[1mhello\x1b[0m world";
        std::fs::write(&p, printed).unwrap();
        assert_eq!(read_tail(&p, None).unwrap(), printed);
        assert_eq!(read_tail(&p, Some(5)).unwrap(), b"world");
        assert_eq!(read_tail(&p, Some(0)).unwrap(), b"");
        assert_eq!(read_tail(&p, Some(1000)).unwrap(), printed);
        assert!(
            read_tail(&dir.path().join("none"), Some(3))
                .unwrap()
                .is_empty()
        );
    }
}
