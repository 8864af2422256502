//! Files and directories only their owner can read: the state directory's, and the
//! per-session files orchestra hands to agents. Set per file, not with the process umask,
//! which the agents' children inherit.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Mode of the state directory and every directory orchestra makes in it.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of every file orchestra writes in the state directory.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Creates `path` as a directory only its owner can use (`0700`); missing parents are created
/// with the usual modes, since they are not orchestra's. An existing directory is left as is.
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    match DirBuilder::new().mode(PRIVATE_DIR_MODE).create(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        other => other,
    }
}

/// Open options whose `create` makes a file only its owner can read or write (`0600`).
pub fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(PRIVATE_FILE_MODE);
    options
}

/// Writes `bytes` to `<dir>/<name>` (the directory 0700, the file 0600, replacing an older
/// one): the per-session files orchestra hands to agents (instructions, hook settings).
pub fn write_private_file(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    create_private_dir(dir)?;
    let path = dir.join(name);
    let mut f = private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    std::io::Write::write_all(&mut f, bytes)?;
    Ok(path)
}

/// Replaces `<dir>/<name>` with `bytes` (0600) at once: written to `<dir>/<tmp>`, synced, then
/// renamed over it, so a crash leaves the old content or the new, never part of either.
pub fn replace_private_file(
    dir: &Path,
    name: &str,
    tmp: &str,
    bytes: &[u8],
) -> std::io::Result<()> {
    let tmp = dir.join(tmp);
    let mut f = private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join(name))?;
    // The rename itself is durable once the directory is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
