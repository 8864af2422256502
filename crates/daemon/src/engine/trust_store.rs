//! The repository files the user trusted: `trusted.json` in the state directory (0600, like
//! everything there), each file's canonical path with the SHA-256 of the content trusted. A
//! file whose bytes hash otherwise is not trusted, so any change asks again (as `direnv
//! allow` and `mise trust` do). Written whole to a temporary file, synced, then renamed: a
//! crash leaves the old list or the new one, never half of one.

use orchestra_proto::wire::TrustedFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file's name in the state directory.
pub const TRUST_FILE: &str = "trusted.json";
/// The temporary file it is written through.
pub const TRUST_FILE_TMP: &str = "trusted.json.tmp";

/// The file's JSON.
#[derive(Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    trusted: Vec<TrustedFile>,
}

/// The trusted files, by canonical path, as the file holds them.
pub struct TrustStore {
    dir: PathBuf,
    files: BTreeMap<String, TrustedFile>,
}

impl TrustStore {
    /// Reads the list from the state directory `dir`. A missing file is an empty list; one
    /// that cannot be read is too (logged): then nothing is trusted and orchestra asks again,
    /// which is safe, and the next trust writes a good file.
    pub fn load(dir: &Path) -> TrustStore {
        let path = dir.join(TRUST_FILE);
        let files = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<OnDisk>(&bytes) {
                Ok(d) => d.trusted.into_iter().map(|f| (f.file.clone(), f)).collect(),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "the list of trusted repository files is not valid; nothing is trusted until a file is trusted again");
                    BTreeMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the list of trusted repository files; nothing is trusted");
                BTreeMap::new()
            }
        };
        TrustStore {
            dir: dir.to_path_buf(),
            files,
        }
    }

    /// Whether `file` is trusted with exactly this content.
    pub fn trusts(&self, file: &str, sha256: &str) -> bool {
        self.files.get(file).is_some_and(|f| f.sha256 == sha256)
    }

    pub fn get(&self, file: &str) -> Option<&TrustedFile> {
        self.files.get(file)
    }

    pub fn list(&self) -> Vec<TrustedFile> {
        self.files.values().cloned().collect()
    }

    /// The list with `entry` in place of any earlier trust of its file.
    pub fn with(&self, entry: TrustedFile) -> BTreeMap<String, TrustedFile> {
        let mut files = self.files.clone();
        files.insert(entry.file.clone(), entry);
        files
    }

    /// The list without `file`.
    pub fn without(&self, file: &str) -> BTreeMap<String, TrustedFile> {
        let mut files = self.files.clone();
        files.remove(file);
        files
    }

    /// Makes `files` the list once it is on disk (blocking I/O).
    pub fn write(dir: &Path, files: &BTreeMap<String, TrustedFile>) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(&OnDisk {
            version: 1,
            trusted: files.values().cloned().collect(),
        })
        .map_err(std::io::Error::other)?;
        orchestra_sys::private::replace_private_file(dir, TRUST_FILE, TRUST_FILE_TMP, &json)
    }

    /// The directory the list is kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes `files` as the list (after [`TrustStore::write`] succeeded).
    pub fn replace(&mut self, files: BTreeMap<String, TrustedFile>) {
        self.files = files;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_trust_list_is_one_of_orchestras_own_files() {
        for name in [super::TRUST_FILE, super::TRUST_FILE_TMP] {
            assert!(
                orchestra_sys::state_dir::OWN_ENTRIES.contains(&name),
                "{name}"
            );
        }
    }

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn trust_is_kept_private_and_exact() {
        let d = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(d.path());
        assert!(!store.trusts("/r/.orchestra.toml", "aa"));
        let files = store.with(TrustedFile {
            file: "/r/.orchestra.toml".into(),
            sha256: "aa".into(),
            trusted_at: 1,
        });
        TrustStore::write(d.path(), &files).unwrap();
        store.replace(files);
        assert!(store.trusts("/r/.orchestra.toml", "aa"));
        assert!(!store.trusts("/r/.orchestra.toml", "ab"));
        let mode = std::fs::metadata(d.path().join(TRUST_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // Read back by the next start.
        let again = TrustStore::load(d.path());
        assert!(again.trusts("/r/.orchestra.toml", "aa"));
        assert_eq!(again.list().len(), 1);
        // A damaged file trusts nothing.
        std::fs::write(d.path().join(TRUST_FILE), "{").unwrap();
        assert!(TrustStore::load(d.path()).list().is_empty());
    }
}
