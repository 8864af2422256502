//! What a coding agent is told about orchestra: that `orchestra report` exists and what it is
//! for. Given through the CLI's own system-prompt or instructions flag (the provider table's
//! `instructions_args`), never by writing into the user's repository.

use std::path::{Path, PathBuf};

/// The instructions for an agent that runs task `task_id`. One line without `"` or `|`, so
/// that it passes through any CLI's flag parsing (Codex reads `-c key=value` values as TOML
/// and falls back to the raw text).
pub(crate) fn text(task_id: &str) -> String {
    format!(
        "You are running inside orchestra, a cockpit where the user watches coding agents, \
         as task {task_id}. Its command line tool `orchestra` is on your PATH and already knows \
         the task (ORCHESTRA_TASK_ID). Report what you do so the user can follow it: \
         `orchestra report step 'what you start now'` when you begin a step of the work, \
         `orchestra report step-done` when that step is done (add --failed if it failed), \
         `orchestra report progress N` with N from 0 to 100. The task completes when you \
         finish your turn; `orchestra report result --success --summary 'what was done'` \
         (or --failure) ends it explicitly. Do not report anything else through it."
    )
}

/// Writes the instructions to `<state>/instructions/<session>.md` (0600, in the private
/// state directory) for CLIs that take a file.
pub(crate) fn write_file(state_dir: &Path, session_id: &str, text: &str) -> Option<PathBuf> {
    orchestra_sys::private::write_private_file(
        &state_dir.join("instructions"),
        &format!("{session_id}.md"),
        text.as_bytes(),
    )
    .ok()
}

/// Writes `files(dir)` (name, content) into `<place>/<session>/` (0700, each file 0600) for
/// CLIs that read instructions from a directory; returns the directory. `place` is one the
/// CLI accepts (`placement.rs`), `<state>/instructions` unless it has a rule.
pub(crate) fn write_dir(
    place: &Path,
    session_id: &str,
    files: &dyn Fn(&Path) -> Vec<(String, String)>,
) -> Option<PathBuf> {
    let dir = place.join(session_id);
    for (name, content) in files(&dir) {
        orchestra_sys::private::write_private_file(&dir, &name, content.as_bytes()).ok()?;
    }
    Some(dir)
}

/// Removes a session's instructions file and directory, wherever they were placed, once its
/// CLI has ended (a continued task's new session gets its own).
pub(crate) fn remove_file(state_dir: &Path, session_id: &str) {
    let dir = state_dir.join("instructions");
    let _ = std::fs::remove_file(dir.join(format!("{session_id}.md")));
    for place in super::placement::places(state_dir) {
        let _ = std::fs::remove_dir_all(place.join(session_id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_survives_flag_parsing() {
        let t = text("abc");
        assert!(t.contains("orchestra report step"));
        assert!(t.contains("abc"));
        assert!(!t.contains('"') && !t.contains('|') && !t.contains('\n'));
    }
}
