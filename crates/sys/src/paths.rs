//! Where orchestra's files are on this machine, by the conventions of the platform.

use std::path::PathBuf;

/// The config file when none is named: `$XDG_CONFIG_HOME/orchestra/config.toml`, else
/// `~/.config/orchestra/config.toml`; `None` without either variable.
pub fn config_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("orchestra").join("config.toml"))
}
