//! The state directory: where the database, transcripts, logs, the lock and `server.json` live.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

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

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StateDirError + '_ {
    move |source| StateDirError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An exclusive hold on a state directory, released when dropped (or when the process dies).
pub struct StateDir {
    pub path: PathBuf,
    _lock: nix::fcntl::Flock<File>,
}

impl StateDir {
    pub fn lock(path: &Path) -> Result<StateDir, StateDirError> {
        std::fs::create_dir_all(path).map_err(io_err(path))?;
        let path = path.canonicalize().map_err(io_err(path))?;
        let lock_path = path.join("orchestra.lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
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
        file = lock.try_clone().map_err(io_err(&lock_path))?;
        file.set_len(0).map_err(io_err(&lock_path))?;
        file.rewind().map_err(io_err(&lock_path))?;
        writeln!(file, "{}", std::process::id()).map_err(io_err(&lock_path))?;
        let _ = lock.flush();
        Ok(StateDir { path, _lock: lock })
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
        self.path.join("server.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_names_the_first_pid() {
        let dir = tempfile::tempdir().unwrap();
        let _first = StateDir::lock(dir.path()).unwrap();
        let err = StateDir::lock(dir.path()).err().unwrap().to_string();
        assert!(err.contains(&std::process::id().to_string()), "{err}");
    }
}
