//! Typing into the terminal: raw bytes (waiting for room, or only as much as it takes now),
//! named keys and text encoded by the screen's modes, and a submit that waits for the echo.
//! The descriptor is non-blocking, so a key is written from an async worker when there is
//! room, which there nearly always is.

use super::PtySession;
use crate::session::SessionError;
use crate::session::fd_wait::wait_ready;
use orchestra_proto::keys::{encode_keys, encode_text};
use std::io::Write;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The pause between typed text and its submit key (callers run sends off the async workers).
const SUBMIT_PAUSE: Duration = Duration::from_millis(80);
/// How long a submit waits for the program to show the typed text (not every program echoes).
const ECHO_WAIT: Duration = Duration::from_millis(500);

impl PtySession {
    /// Writes raw bytes to the terminal, waiting for room when the program does not read
    /// its input (a blocking call). `Err(Ended)` once the leader exited.
    pub fn write(&self, bytes: &[u8]) -> Result<(), SessionError> {
        self.ensure_running()?;
        let mut w = self.shared.writer.lock();
        write_all_waiting(&mut **w, self.shared.fd, bytes)?;
        Ok(())
    }

    /// Writes as much of `bytes` as the terminal takes without waiting, and says how much
    /// that was: all of a key or a line but when the program has stopped reading its input,
    /// or when another write is waiting for room (0, so that one goes first). Never blocks;
    /// the caller writes the rest with [`write`](Self::write) off the async workers.
    pub fn try_write(&self, bytes: &[u8]) -> Result<usize, SessionError> {
        self.ensure_running()?;
        let Some(mut w) = self.shared.writer.try_lock() else {
            return Ok(0);
        };
        Ok(write_without_waiting(&mut **w, bytes)?)
    }

    /// Sends named keys (see [`encode_key`](crate::session::encode_key)), honouring application-cursor mode.
    /// Nothing is sent if any name is unknown.
    pub fn send_keys<S: AsRef<str>>(&self, keys: &[S]) -> Result<(), SessionError> {
        let app_cursor = self
            .shared
            .typing_modes
            .application_cursor
            .load(Ordering::Relaxed);
        let bytes = encode_keys(keys, app_cursor)?;
        self.write(&bytes)
    }

    /// Types `text` and then sends `submit` (usually `b"\r"`; empty: do not submit).
    /// Multi-line text goes as a bracketed paste when the program enabled it.
    pub fn send_text(&self, text: &str, submit: &[u8]) -> Result<(), SessionError> {
        let bracketed = self
            .shared
            .typing_modes
            .bracketed_paste
            .load(Ordering::Relaxed);
        let bytes = encode_text(text, bracketed);
        if !bytes.is_empty() {
            let before = (!submit.is_empty()).then(|| self.with_screen(|s| s.contents()));
            self.write(&bytes)?;
            if let Some(before) = before {
                // An Enter right behind typed text reads as part of a paste to some CLIs
                // (Gemini CLI makes one within 30 ms of the previous key a newline): the
                // text would sit in its input box, never submitted. So the submit waits
                // until the program has read the text (its screen shows the change), then
                // a pause more; a busy program reads both at once otherwise.
                let deadline = Instant::now() + ECHO_WAIT;
                while Instant::now() < deadline && self.with_screen(|s| s.contents()) == before {
                    std::thread::sleep(Duration::from_millis(10));
                }
                std::thread::sleep(SUBMIT_PAUSE);
            }
        }
        if !submit.is_empty() {
            self.write(submit)?;
        }
        Ok(())
    }
}

/// Writes as much of `bytes` to the non-blocking terminal as it takes now; how much.
fn write_without_waiting(writer: &mut dyn Write, bytes: &[u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        match writer.write(&bytes[done..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// `write_all` to the non-blocking terminal, waiting for room like a blocking write.
pub(super) fn write_all_waiting(
    writer: &mut dyn Write,
    fd: RawFd,
    bytes: &[u8],
) -> std::io::Result<()> {
    let mut done = write_without_waiting(writer, bytes)?;
    while done < bytes.len() {
        wait_ready(fd, libc::POLLOUT);
        done += write_without_waiting(writer, &bytes[done..])?;
    }
    Ok(())
}
