//! The secrets that let a client in: the owner's token, kept in the state directory, and the
//! fresh random credentials each agent session gets.
//!
//! Why a token and not a Unix socket checked by peer credentials: the agents orchestra runs
//! are the user's own processes, with the user's uid. A socket that lets in every process of
//! that uid lets every agent in with the owner's rights; a token kept in a file can be
//! withheld from them (each agent gets only its session's credential, see `api::rights`), and
//! a sandboxed agent cannot even see the file. The file has the protection the socket would
//! have had (a `0600` file in the `0700` state directory: the user and root read it), and one
//! transport (loopback TCP) serves the CLI, the TUI, hooks, the event stream, the terminal
//! WebSocket and `--url` attach through an ssh tunnel alike.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The owner's token, in the state directory.
pub const TOKEN_FILE: &str = "token";
/// Random bytes in a token (hex-encoded: twice as many characters).
const TOKEN_BYTES: usize = 32;

/// Why the owner's token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot make a token: reading /dev/urandom failed: {0}")]
    Random(std::io::Error),
    #[error("cannot keep the token in {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the token in {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the token file {path} is damaged (it must hold one line of printable characters without spaces); delete it and start orchestra again for a new one"
    )]
    Damaged { path: PathBuf },
}

/// A new random secret: 256 bits from the kernel, as 64 hex digits.
pub fn random_secret() -> Result<String, TokenError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(TokenError::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `token` may be used as a token: printable ASCII without spaces, what an
/// `Authorization` header carries as it is.
pub fn well_formed(token: &str) -> bool {
    (1..=4096).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_graphic())
}

/// Below this many characters a token the user chose is easy to guess (ours have 64).
pub const SHORT_TOKEN: usize = 16;

/// Compares every byte, so the time taken does not say how much of a guess matched.
pub fn same_secret(given: &[u8], want: &[u8]) -> bool {
    given.len() == want.len()
        && given
            .iter()
            .zip(want)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

pub fn token_path(state_dir: &Path) -> PathBuf {
    state_dir.join(TOKEN_FILE)
}

/// The owner's token of `state_dir`, if one was made.
pub fn read_token(state_dir: &Path) -> Result<Option<String>, TokenError> {
    let path = token_path(state_dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(TokenError::Read { path, source }),
    };
    let token = text.trim();
    if !well_formed(token) {
        return Err(TokenError::Damaged { path });
    }
    Ok(Some(token.to_string()))
}

/// The owner's token of `state_dir` (an existing directory), made now if there is none. Two
/// processes that both make one end up with the same: the file appears whole (written
/// aside, then linked into place, which fails if another got there first).
pub fn token_for(state_dir: &Path) -> Result<String, TokenError> {
    if let Some(token) = read_token(state_dir)? {
        return Ok(token);
    }
    let token = random_secret()?;
    let path = token_path(state_dir);
    // Aside under a name of its own: another maker (a thread, a process) writes its own.
    let aside = state_dir.join(format!(".{TOKEN_FILE}.{}", &token[..16]));
    let write = || -> std::io::Result<()> {
        let mut f = crate::private::private_file()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&aside)?;
        writeln!(f, "{token}")?;
        f.sync_all()?;
        match std::fs::hard_link(&aside, &path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        }
    };
    let written = write();
    let _ = std::fs::remove_file(&aside);
    written.map_err(|source| TokenError::Write {
        path: path.clone(),
        source,
    })?;
    // Whoever linked first made the token everyone uses.
    read_token(state_dir)?.ok_or(TokenError::Damaged { path })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_token_is_made_once_privately_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_token(dir.path()).unwrap(), None);
        let first = token_for(dir.path()).unwrap();
        assert_eq!(first.len(), 64);
        assert!(well_formed(&first));
        assert_eq!(token_for(dir.path()).unwrap(), first);
        assert_eq!(read_token(dir.path()).unwrap(), Some(first));
        let mode = std::fs::metadata(token_path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // Nothing left aside.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn racing_makers_agree() {
        let dir = tempfile::tempdir().unwrap();
        let tokens: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| token_for(dir.path()).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(tokens.windows(2).all(|w| w[0] == w[1]), "{tokens:?}");
    }

    #[test]
    fn a_damaged_token_file_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(token_path(dir.path()), "no good\n").unwrap();
        let err = token_for(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("damaged") && err.contains("delete it"),
            "{err}"
        );
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert_ne!(random_secret().unwrap(), random_secret().unwrap());
    }
}
