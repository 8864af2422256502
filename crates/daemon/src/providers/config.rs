//! The user's config file: `--config`, else `$XDG_CONFIG_HOME/orchestra/config.toml`.

use super::ProviderOverride;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("config: {0}")]
    Invalid(String),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub default_provider: Option<String>,
    #[serde(default)]
    pub provider: Vec<ProviderOverride>,
    /// The default isolation of new tasks: `"worktree"` (coding agents in a repository
    /// get one, the default) or `"none"`.
    #[serde(default)]
    pub isolation: Option<orchestra_proto::task::Isolation>,
    /// Per-repository worktree set-up (`[[repo]]` with `path`, `copy`, `setup`), on top of
    /// the repository's own `.orchestra.toml`.
    #[serde(default)]
    pub repo: Vec<RepoConfig>,
    /// The TUI's keys (`[keys]`, `[keys.terminal]`…), read by `tui::keymap_config`.
    #[serde(default)]
    pub keys: toml::Table,
    /// What orchestra does when an agent's usage limit is reached (`[limits]`).
    #[serde(default)]
    pub limits: LimitsConfig,
    /// The TUI's notifications (`[notify]`), read by `tui::notify`.
    #[serde(default)]
    pub notify: toml::Table,
}

/// `[limits]`: a `limited` agent is continued once its limit resets, by default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Type "continue" into a limited agent once its limit resets.
    #[serde(default = "yes")]
    pub continue_after_reset: bool,
    /// Minutes to wait before trying again when the CLI names no reset time.
    #[serde(default = "five")]
    pub retry_minutes: u32,
}

fn yes() -> bool {
    true
}

fn five() -> u32 {
    5
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            continue_after_reset: yes(),
            retry_minutes: five(),
        }
    }
}

impl Config {
    pub fn default_path() -> Option<PathBuf> {
        orchestra_sys::paths::config_file()
    }

    /// Loads an explicit file (which must exist) or the default one (which may not).
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let (path, must_exist) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => match Config::default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
                return Ok(Config::default());
            }
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if config.limits.retry_minutes == 0 {
            return Err(ConfigError::Parse {
                path,
                message: "[limits] retry_minutes must be at least 1".into(),
            });
        }
        Ok(config)
    }
}

/// `[[repo]]`: the user's own set-up for one repository (trusted: it is the user's file).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    pub path: PathBuf,
    #[serde(default)]
    pub copy: Vec<String>,
    #[serde(default)]
    pub setup: Option<String>,
    /// Checks its tasks must pass (replacing the repository's `[checks] commands`, and
    /// needing no trust: they are the user's own).
    #[serde(default)]
    pub checks: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).expect("write config");
        Config::load(Some(&path))
    }

    #[test]
    fn limits_are_read_and_checked() {
        let c = load_text("[limits]\ncontinue_after_reset = false\nretry_minutes = 2\n")
            .expect("valid limits");
        assert!(!c.limits.continue_after_reset);
        assert_eq!(c.limits.retry_minutes, 2);
        let d = load_text("").expect("empty config");
        assert!(d.limits.continue_after_reset);
        assert_eq!(d.limits.retry_minutes, 5);
        let zero = load_text("[limits]\nretry_minutes = 0\n")
            .unwrap_err()
            .to_string();
        assert!(zero.contains("retry_minutes must be at least 1"), "{zero}");
        let unknown = load_text("[limits]\nretry = 3\n").unwrap_err().to_string();
        assert!(unknown.contains("unknown field `retry`"), "{unknown}");
    }
}
