//! The TUI's own sections of the config file (`[keys]`, `[notify]`). The daemon reads the
//! rest; the TUI reads the same file itself rather than asking the daemon, so that a wrong
//! entry stops the TUI before anything is started, with the file and the entry named.

use crate::keymap::KeyMap;
use crate::notify::NotifyConfig;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The keys in force: the defaults with the config file's `[keys]` applied.
pub fn load_keys(config: Option<&Path>) -> Result<KeyMap> {
    let (path, table) = read(config)?;
    KeyMap::from_config(&section(&path, &table, "keys")?).map_err(|e| in_file(&path, e))
}

/// The notifications the config file's `[notify]` asks for (the defaults without it).
pub fn load_notify(config: Option<&Path>) -> Result<NotifyConfig> {
    let (path, table) = read(config)?;
    NotifyConfig::from_table(&section(&path, &table, "notify")?).map_err(|e| in_file(&path, e))
}

/// The file in force (`--config`'s, which must exist, else the default, which may not) and
/// its top-level table.
fn read(config: Option<&Path>) -> Result<(PathBuf, toml::Table)> {
    let (path, must_exist) = match config {
        Some(p) => (p.to_path_buf(), true),
        None => match orchestra_sys::paths::config_file() {
            Some(p) => (p, false),
            None => return Ok((PathBuf::new(), toml::Table::new())),
        },
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
            return Ok((path, toml::Table::new()));
        }
        Err(e) => return Err(in_file(&path, e)),
    };
    let table = text.parse::<toml::Table>().map_err(|e| in_file(&path, e))?;
    Ok((path, table))
}

/// `[name]` of the file, empty when it has none.
fn section(path: &Path, table: &toml::Table, name: &str) -> Result<toml::Table> {
    match table.get(name) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t.clone()),
        Some(other) => Err(in_file(
            path,
            format!("[{name}] must be a table, not a {}", other.type_str()),
        )),
    }
}

fn in_file(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("config file {}: {e}", path.display())
}
