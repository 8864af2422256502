//! The trash: whatever a delete takes out of the store is written here first, so a user can
//! get it back. `<state>/trash/<task-id>/` holds a deleted task (`task.json`), its sessions
//! (`session-<id>.json`, with their messages) and their transcripts (`<id>.log`);
//! `<state>/trash/sessions/<session-id>/` holds a removed session the same way.

use orchestra_proto::task::Task;
use orchestra_proto::wire::{Message, SessionInfo};
use std::fs::DirBuilder;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A session as it goes to the trash.
pub(crate) struct KeptSession {
    pub info: SessionInfo,
    pub messages: Vec<Message>,
}

pub(crate) fn task_dir(state_dir: &Path, task_id: &str) -> PathBuf {
    state_dir.join("trash").join(task_id)
}

pub(crate) fn session_dir(state_dir: &Path, session_id: &str) -> PathBuf {
    state_dir.join("trash").join("sessions").join(session_id)
}

/// Writes a deleted task and its sessions into `dir`.
pub(crate) fn keep_task(dir: &Path, task: &Task, sessions: &[KeptSession]) -> std::io::Result<()> {
    private_dir(dir)?;
    write_private(&dir.join("task.json"), &pretty(task))?;
    for s in sessions {
        keep_session(dir, s)?;
    }
    Ok(())
}

/// Writes one session's record, messages and a copy of its transcript into `dir`. The
/// original transcript stays until the store no longer refers to it (`drop_transcripts`).
pub(crate) fn keep_session(dir: &Path, s: &KeptSession) -> std::io::Result<()> {
    private_dir(dir)?;
    let record = KeptRecord {
        session: &s.info,
        messages: &s.messages,
    };
    write_private(
        &dir.join(format!("session-{}.json", s.info.id)),
        &pretty(&record),
    )?;
    if let Some(from) = s.info.transcript.as_deref().map(Path::new)
        && from.exists()
    {
        let to = dir.join(format!("{}.log", s.info.id));
        std::fs::copy(from, &to)?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Removes the original transcripts of sessions now kept in the trash.
pub(crate) fn drop_transcripts(sessions: &[KeptSession]) {
    for s in sessions {
        if let Some(path) = s.info.transcript.as_deref()
            && let Err(e) = std::fs::remove_file(path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path, error = %e, "could not remove a trashed transcript");
        }
    }
}

/// A trashed session's file: its record and its messages.
#[derive(serde::Serialize)]
struct KeptRecord<'a> {
    session: &'a SessionInfo,
    messages: &'a [Message],
}

fn pretty(v: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_else(|_| b"{}".to_vec())
}

/// What is in the trash is as private as the state directory it came from.
fn private_dir(path: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(path)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = orchestra_sys::private::private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
