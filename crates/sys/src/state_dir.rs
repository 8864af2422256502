//! The state directory: where the database, transcripts, logs, the lock and `server.json` live.
//!
//! It holds task descriptions and every byte the agents printed (often keys and code), so only
//! its owner may read it: the directory is `0700` and its files `0600`, as tmux does for its
//! socket directory. This is done per file, not with the process umask, which the agents'
//! children inherit: files they create in the user's repository keep their normal modes.

use crate::private::{PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, create_private_dir, private_file};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The file whose `flock` makes one orchestra per state directory; it holds the holder's pid.
pub const LOCK_FILE: &str = "orchestra.lock";

/// What orchestra keeps in its state directory; these (and, for directories, everything in
/// them) are tightened at start-up. Anything new written there belongs in this list.
pub const OWN_ENTRIES: &[&str] = &[
    "orchestra.db",
    "orchestra.db-wal",
    "orchestra.db-shm",
    "orchestra.db-journal",
    "orchestra.lock",
    "server.json",
    "server.json.tmp",
    "token",
    "logs",
    "transcripts",
    "trash",
    "worktrees",
    "tui-list-order",
    "tui-list-order.tmp",
    // The repository files the user trusted (`engine::TRUST_FILE`).
    "trusted.json",
    "trusted.json.tmp",
];

/// Entries tightened at their top only: the task worktrees hold the user's checked-out
/// files (their modes belong to the repository) and may be large to walk.
const SHALLOW_ENTRIES: &[&str] = &["worktrees"];

/// The directory under the state directory that holds task worktrees.
pub const WORKTREES_DIR: &str = "worktrees";

/// Takes group and other permissions away from `path` (not following symlinks) and, for a
/// directory, from everything in it; pushes each path it changed onto `changed`.
fn tighten_tree(path: &Path, changed: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.file_type().is_symlink() {
        return;
    }
    let mode = meta.permissions().mode() & 0o7777;
    let want = if meta.is_dir() {
        PRIVATE_DIR_MODE
    } else {
        mode & PRIVATE_FILE_MODE
    };
    if mode & 0o077 != 0 {
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(want)) {
            Ok(()) => changed.push(path.to_path_buf()),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot tighten permissions")
            }
        }
    }
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        for entry in entries.flatten() {
            tighten_tree(&entry.path(), changed);
        }
    }
}

fn tighten_dir_only(path: &Path, changed: &mut Vec<PathBuf>) {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_dir()
        && meta.permissions().mode() & 0o077 != 0
    {
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE)) {
            Ok(()) => changed.push(path.to_path_buf()),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot tighten permissions")
            }
        }
    }
}

/// Tightens the state directory and what orchestra keeps in it; returns what was wider.
pub fn tighten(root: &Path) -> Vec<PathBuf> {
    let mut changed = Vec::new();
    if let Ok(meta) = std::fs::symlink_metadata(root)
        && meta.is_dir()
        && meta.permissions().mode() & 0o077 != 0
    {
        match std::fs::set_permissions(root, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE)) {
            Ok(()) => changed.push(root.to_path_buf()),
            Err(e) => {
                tracing::warn!(path = %root.display(), error = %e, "cannot tighten permissions")
            }
        }
    }
    for name in OWN_ENTRIES {
        if SHALLOW_ENTRIES.contains(name) {
            tighten_dir_only(&root.join(name), &mut changed);
        } else {
            tighten_tree(&root.join(name), &mut changed);
        }
    }
    changed
}

#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("cannot use state directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "another orchestra (pid {pid}) is already using the state directory {path}; stop it or pass a different --state-dir"
    )]
    Locked { pid: String, path: PathBuf },
    #[error(
        "the state directory {path} is on a read-only file system: orchestra keeps its database, lock and logs there; make it writable or pass another --state-dir"
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "the disk holding the state directory {path} is full: orchestra keeps its database, lock and logs there; free some space"
    )]
    Full { path: PathBuf },
    #[error("no state directory: set --state-dir, ORCHESTRA_STATE_DIR, XDG_DATA_HOME or HOME")]
    NoDefault,
}

/// `--state-dir`, else `ORCHESTRA_STATE_DIR` (both arrive through clap), else the XDG data dir.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, StateDirError> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("orchestra"));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(h).join(".local/share/orchestra"));
    }
    Err(StateDirError::NoDefault)
}

/// The error for `path` (the state directory `dir` or a file in it).
fn io_err<'a>(dir: &'a Path, path: &'a Path) -> impl FnOnce(std::io::Error) -> StateDirError + 'a {
    move |source| {
        let dir = dir.to_path_buf();
        match source.raw_os_error() {
            Some(libc::EROFS) => StateDirError::ReadOnly { path: dir },
            Some(libc::ENOSPC) => StateDirError::Full { path: dir },
            _ => StateDirError::Io {
                path: path.to_path_buf(),
                source,
            },
        }
    }
}

/// An exclusive hold on a state directory, released when dropped (or when the process dies).
pub struct StateDir {
    pub path: PathBuf,
    /// Paths that were readable by others and were made private when the directory was taken.
    pub tightened: Vec<PathBuf>,
    _lock: nix::fcntl::Flock<File>,
}

impl StateDir {
    pub fn lock(path: &Path) -> Result<StateDir, StateDirError> {
        create_private_dir(path).map_err(io_err(path, path))?;
        let path = path.canonicalize().map_err(io_err(path, path))?;
        let lock_path = path.join(LOCK_FILE);
        let mut file = private_file()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io_err(&path, &lock_path))?;
        let mut lock =
            match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
                Ok(l) => l,
                Err((mut f, _)) => {
                    let mut pid = String::new();
                    let _ = f.read_to_string(&mut pid);
                    let pid = pid.trim().to_string();
                    return Err(StateDirError::Locked {
                        pid: if pid.is_empty() {
                            "unknown".into()
                        } else {
                            pid
                        },
                        path,
                    });
                }
            };
        file = lock.try_clone().map_err(io_err(&path, &lock_path))?;
        file.set_len(0).map_err(io_err(&path, &lock_path))?;
        file.rewind().map_err(io_err(&path, &lock_path))?;
        writeln!(file, "{}", std::process::id()).map_err(io_err(&path, &lock_path))?;
        let _ = lock.flush();
        let tightened = tighten(&path);
        Ok(StateDir {
            path,
            tightened,
            _lock: lock,
        })
    }

    /// The notice for `tightened`, if anything was.
    pub fn tightened_notice(&self) -> Option<String> {
        (!self.tightened.is_empty()).then(|| {
            format!(
                "made {} path(s) in the state directory {} private (they were readable by other users): directory 0700, files 0600",
                self.tightened.len(),
                self.path.display()
            )
        })
    }

    pub fn database(&self) -> PathBuf {
        self.path.join("orchestra.db")
    }
    pub fn transcripts(&self) -> PathBuf {
        self.path.join("transcripts")
    }
    pub fn log_dir(&self) -> PathBuf {
        self.path.join("logs")
    }
    pub fn server_file(&self) -> PathBuf {
        self.path.join(crate::server_file::SERVER_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_state_directory_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("a/b/state");
        let state = StateDir::lock(&root).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&root.join("orchestra.lock")), 0o600);
        assert!(state.tightened.is_empty(), "{:?}", state.tightened);
        assert!(state.tightened_notice().is_none());
        // Parents are not orchestra's: they keep the usual modes.
        assert_ne!(mode(&dir.path().join("a")), 0o700);
    }

    #[test]
    fn a_wide_open_state_directory_is_tightened_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        std::fs::create_dir_all(root.join("transcripts")).unwrap();
        std::fs::write(root.join("orchestra.db"), b"").unwrap();
        std::fs::write(root.join("transcripts/x.log"), b"secret").unwrap();
        std::fs::write(root.join("notes.txt"), b"the user's").unwrap();
        set(root, 0o755);
        set(&root.join("transcripts"), 0o775);
        set(&root.join("orchestra.db"), 0o644);
        set(&root.join("transcripts/x.log"), 0o666);
        set(&root.join("notes.txt"), 0o644);
        let state = StateDir::lock(root).unwrap();
        assert_eq!(mode(root), 0o700);
        assert_eq!(mode(&root.join("transcripts")), 0o700);
        assert_eq!(mode(&root.join("orchestra.db")), 0o600);
        assert_eq!(mode(&root.join("transcripts/x.log")), 0o600);
        assert_eq!(mode(&root.join("notes.txt")), 0o644, "not orchestra's file");
        assert_eq!(state.tightened.len(), 4, "{:?}", state.tightened);
        assert!(
            state
                .tightened_notice()
                .is_some_and(|n| n.contains("4 path"))
        );
    }

    #[test]
    fn second_lock_names_the_first_pid() {
        let dir = tempfile::tempdir().unwrap();
        let _first = StateDir::lock(dir.path()).unwrap();
        let err = StateDir::lock(dir.path()).err().unwrap().to_string();
        assert!(err.contains(&std::process::id().to_string()), "{err}");
    }
}
