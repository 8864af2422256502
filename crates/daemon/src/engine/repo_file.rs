//! A repository's own `.orchestra.toml` and what it makes orchestra do.
//!
//! The file comes with the repository, so whoever wrote it chooses what runs with the user's
//! rights; it runs only once the user trusted its exact content (see `trust.rs`). So the file
//! is read once per use: its bytes are hashed and parsed from the same read, and what runs is
//! what was hashed. [`RepoFile::asks`] is the one list of what the file makes orchestra run
//! or copy: a new section that runs or copies anything adds its entries there, and so needs
//! trust with no other change. The user's own config file (`[[repo]]`) is theirs and needs
//! no trust; what it sets replaces what the repository's file says.

use crate::providers::RepoConfig;
use orchestra_proto::wire::{RepoAsk, RepoAskKind, TrustRequest};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The repository file's name.
pub const REPO_FILE: &str = ".orchestra.toml";

/// What a new worktree of a repository gets.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSetup {
    /// Paths relative to the repository's root, copied into each new worktree.
    #[serde(default)]
    pub copy: Vec<String>,
    /// A shell command run in the new worktree before the agent starts.
    #[serde(default)]
    pub setup: Option<String>,
}

impl RepoSetup {
    /// The set-up command, unless it is blank.
    pub fn command(&self) -> Option<&str> {
        self.setup.as_deref().filter(|c| !c.trim().is_empty())
    }
}

/// What must pass before a task of the repository is `completed` (`[checks]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoChecks {
    /// Commands run with `sh -c` in the task's worktree when its agent says it is done.
    #[serde(default)]
    pub commands: Vec<String>,
    /// How many times the checks may fail and go back to the agent (a task's own
    /// `maxAttempts` wins).
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// How long one check may run, in seconds (a task's own `checkTimeoutSeconds` wins).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

impl RepoChecks {
    /// The commands that are not blank.
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        self.commands
            .iter()
            .map(String::as_str)
            .filter(|c| !c.trim().is_empty())
    }

    /// Limits outside what a task's request may say are refused, as the API refuses them.
    fn validate(&self) -> Result<(), String> {
        if self.max_attempts.is_some_and(|n| !(1..=20).contains(&n)) {
            return Err("[checks] max_attempts must be a whole number from 1 to 20".into());
        }
        if self
            .timeout_seconds
            .is_some_and(|n| !(1..=86_400).contains(&n))
        {
            return Err("[checks] timeout_seconds must be a whole number from 1 to 86400".into());
        }
        Ok(())
    }
}

/// `.orchestra.toml`: `[worktree]` with `copy` and `setup`, `[checks]` with `commands`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoFile {
    #[serde(default)]
    worktree: RepoSetup,
    #[serde(default)]
    checks: RepoChecks,
}

impl RepoFile {
    /// Everything the file asks orchestra to run or copy, as it says it.
    pub fn asks(&self) -> Vec<RepoAsk> {
        let w = &self.worktree;
        let setup = w.command().map(|c| RepoAsk {
            kind: RepoAskKind::Setup,
            value: c.to_string(),
        });
        let copies = w.copy.iter().map(|p| RepoAsk {
            kind: RepoAskKind::Copy,
            value: p.clone(),
        });
        let checks = self.checks.commands().map(check_ask);
        setup.into_iter().chain(copies).chain(checks).collect()
    }
}

fn check_ask(command: &str) -> RepoAsk {
    RepoAsk {
        kind: RepoAskKind::Check,
        value: command.to_string(),
    }
}

/// A repository file as read once: where it is, its content's hash, what it says.
pub struct ReadFile {
    /// Its canonical path: the key its trust is kept under.
    pub path: PathBuf,
    pub sha256: String,
    pub file: RepoFile,
}

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads and parses the file at `path`: `Ok(None)` when there is none.
pub fn read_at(path: &Path) -> Result<Option<ReadFile>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let canonical = path
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| format!("{} is not valid: it is not UTF-8 text", path.display()))?;
    let file = toml::from_str::<RepoFile>(text)
        .map_err(|e| format!("{} is not valid: {}", path.display(), e.message()))?;
    file.checks
        .validate()
        .map_err(|e| format!("{} is not valid: {e}", path.display()))?;
    Ok(Some(ReadFile {
        path: canonical,
        sha256: sha256_hex(&bytes),
        file,
    }))
}

/// What a new worktree of a repository gets, and the trust that needs.
#[derive(Debug, Default)]
pub struct RepoPlan {
    pub setup: RepoSetup,
    /// The checks its tasks must pass: the user's entry's commands, else the file's.
    pub checks: RepoChecks,
    /// Set when part of `setup` comes from the repository's own file: that file's content
    /// must be trusted first.
    pub trust: Option<TrustRequest>,
}

/// The set-up for the repository at `root`: its file, then the user's entry for it on top.
pub fn plan_for(root: &Path, user: &[RepoConfig]) -> Result<RepoPlan, String> {
    let read = read_at(&root.join(REPO_FILE))?;
    let from_file = read
        .as_ref()
        .map(|r| r.file.worktree.clone())
        .unwrap_or_default();
    let same = |p: &Path| p == root || p.canonicalize().is_ok_and(|c| c == root);
    let entry = user.iter().find(|r| same(&r.path));
    let users_copy = entry.filter(|e| !e.copy.is_empty()).map(|e| e.copy.clone());
    let users_setup = entry.and_then(|e| e.setup.clone());
    let users_checks = entry
        .filter(|e| !e.checks.is_empty())
        .map(|e| e.checks.clone());
    // What of the file is used: the parts the user's entry does not replace.
    let mut asks = Vec::new();
    if users_setup.is_none()
        && let Some(c) = from_file.command()
    {
        asks.push(RepoAsk {
            kind: RepoAskKind::Setup,
            value: c.to_string(),
        });
    }
    if users_copy.is_none() {
        asks.extend(from_file.copy.iter().map(|p| RepoAsk {
            kind: RepoAskKind::Copy,
            value: p.clone(),
        }));
    }
    let file_checks = read
        .as_ref()
        .map(|r| r.file.checks.clone())
        .unwrap_or_default();
    let checks = match users_checks {
        Some(commands) => RepoChecks {
            commands,
            ..file_checks
        },
        None => {
            asks.extend(file_checks.commands().map(check_ask));
            file_checks
        }
    };
    let setup = RepoSetup {
        copy: users_copy.unwrap_or(from_file.copy),
        setup: users_setup.or(from_file.setup),
    };
    let trust = read.filter(|_| !asks.is_empty()).map(|r| TrustRequest {
        repository: root.to_string_lossy().into_owned(),
        file: r.path.to_string_lossy().into_owned(),
        sha256: r.sha256,
        asks,
    });
    Ok(RepoPlan {
        setup,
        checks,
        trust,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_repo_file_then_the_users_entry() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let plan = plan_for(&root, &[]).unwrap();
        assert_eq!(plan.setup, RepoSetup::default());
        assert!(plan.trust.is_none());
        let text = "[worktree]\ncopy = [\".env\"]\nsetup = \"make deps\"\n";
        std::fs::write(root.join(REPO_FILE), text).unwrap();
        let plan = plan_for(&root, &[]).unwrap();
        assert_eq!(plan.setup.copy, vec![".env"]);
        assert_eq!(plan.setup.setup.as_deref(), Some("make deps"));
        let trust = plan.trust.expect("the file's set-up needs trust");
        assert_eq!(trust.file, root.join(REPO_FILE).to_string_lossy());
        assert_eq!(trust.sha256, sha256_hex(text.as_bytes()));
        assert_eq!(trust.asks.len(), 2);
        assert_eq!(
            (trust.asks[0].kind, trust.asks[0].value.as_str()),
            (RepoAskKind::Setup, "make deps")
        );
        // The user's entry replaces the set-up; the file's copy still needs trust.
        let user = RepoConfig {
            path: root.clone(),
            copy: vec![],
            setup: Some("true".into()),
            checks: vec![],
        };
        let plan = plan_for(&root, std::slice::from_ref(&user)).unwrap();
        assert_eq!(
            (plan.setup.copy.clone(), plan.setup.setup.as_deref()),
            (vec![".env".to_string()], Some("true"))
        );
        let asks = plan.trust.expect("the copy is the file's").asks;
        assert_eq!(asks.len(), 1);
        assert_eq!(asks[0].kind, RepoAskKind::Copy);
        // Replacing both: nothing of the file is used, nothing needs trust.
        let all = RepoConfig {
            copy: vec!["x".into()],
            ..user
        };
        assert!(plan_for(&root, &[all]).unwrap().trust.is_none());
        // A file that asks for nothing needs no trust.
        std::fs::write(root.join(REPO_FILE), "[worktree]\nsetup = \"  \"\n").unwrap();
        assert!(plan_for(&root, &[]).unwrap().trust.is_none());
        std::fs::write(root.join(REPO_FILE), "[worktree]\nsetupp = 1\n").unwrap();
        assert!(plan_for(&root, &[]).unwrap_err().contains("not valid"));
        std::fs::write(root.join(REPO_FILE), b"\xff\xfe").unwrap();
        assert!(plan_for(&root, &[]).unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn the_files_checks_need_trust_unless_the_user_sets_them() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let text = "[checks]\ncommands = [\"cargo test -q\", \" \"]\nmax_attempts = 2\ntimeout_seconds = 60\n";
        std::fs::write(root.join(REPO_FILE), text).unwrap();
        let plan = plan_for(&root, &[]).unwrap();
        assert_eq!(
            plan.checks.commands().collect::<Vec<_>>(),
            ["cargo test -q"]
        );
        assert_eq!(
            (plan.checks.max_attempts, plan.checks.timeout_seconds),
            (Some(2), Some(60))
        );
        let asks = plan.trust.expect("the file's checks need trust").asks;
        assert_eq!(
            asks,
            [RepoAsk {
                kind: RepoAskKind::Check,
                value: "cargo test -q".into()
            }]
        );
        let read = read_at(&root.join(REPO_FILE)).unwrap().unwrap();
        assert_eq!(read.file.asks(), asks);
        // The user's own entry replaces the commands, and needs no trust.
        let user = RepoConfig {
            path: root.clone(),
            copy: vec![],
            setup: None,
            checks: vec!["make check".into()],
        };
        let plan = plan_for(&root, &[user]).unwrap();
        assert!(plan.trust.is_none());
        assert_eq!(plan.checks.commands, ["make check"]);
        assert_eq!(plan.checks.max_attempts, Some(2));
        // Limits out of range are refused with the file named.
        std::fs::write(root.join(REPO_FILE), "[checks]\nmax_attempts = 0\n").unwrap();
        let e = plan_for(&root, &[]).unwrap_err();
        assert!(
            e.contains("max_attempts must be a whole number from 1 to 20"),
            "{e}"
        );
        std::fs::write(root.join(REPO_FILE), "[checks]\ncommand = \"x\"\n").unwrap();
        assert!(plan_for(&root, &[]).unwrap_err().contains("not valid"));
    }

    #[test]
    fn the_hash_is_of_the_exact_bytes() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(sha256_hex(b"abc"), sha256_hex(b"abc\n"));
    }
}
