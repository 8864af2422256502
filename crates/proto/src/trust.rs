//! Trust in a repository's own commands: what a repository's `.orchestra.toml` asks orchestra
//! to run or copy, the question a task waits on until the user trusted the file's exact
//! content, and the files the user trusted (`/api/coding-agents/trust`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The option that trusts the file and runs what it asks.
pub const TRUST_OPTION: &str = "1";
/// The option that declines: the task fails, nothing runs.
pub const DECLINE_OPTION: &str = "2";

/// What kind of thing a repository's file asks orchestra to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepoAskKind {
    /// A command run with `sh -c` in each new worktree before the agent (`[worktree] setup`).
    Setup,
    /// A path copied from the repository into each new worktree (`[worktree] copy`).
    Copy,
    /// A command run with `sh -c` in the task's worktree when its agent says it is done:
    /// the task completes only if it passes (`[checks] commands`).
    Check,
}

impl RepoAskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RepoAskKind::Setup => "setup",
            RepoAskKind::Copy => "copy",
            RepoAskKind::Check => "check",
        }
    }
}

/// One thing a repository's file asks orchestra to run or copy, exactly as the file says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RepoAsk {
    pub kind: RepoAskKind,
    /// The command, or the path relative to the repository's root.
    pub value: String,
}

/// A task's `metadata.trust`: the repository file its start needs the user's trust in. Set
/// with the question (`metadata.prompt`, kind `trust`) and kept, once the question is
/// answered, until the task's agent has started (or the task ended).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustRequest {
    /// The repository's root: the autopilot starts no other task in it while the question
    /// waits.
    pub repository: String,
    /// The file, its canonical path.
    pub file: String,
    /// The SHA-256 of the file's bytes as they were read: what answering "trust" trusts.
    pub sha256: String,
    /// What the file makes orchestra run or copy for this task.
    pub asks: Vec<RepoAsk>,
}

/// A file the user trusted: its content's hash when they did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustedFile {
    /// The file's canonical path.
    pub file: String,
    /// The SHA-256 of the content trusted; any other content is not trusted.
    pub sha256: String,
    /// When it was trusted (ms since the epoch).
    pub trusted_at: i64,
}

/// `GET /trust`: every file trusted, by path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TrustList {
    pub trusted: Vec<TrustedFile>,
}

/// `POST /trust`: what was trusted, what the file asks, and the tasks that waited on it and
/// now proceed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Trusted {
    pub trusted: TrustedFile,
    /// What the file asks orchestra to run or copy (empty: nothing, and it needed no trust).
    pub asks: Vec<RepoAsk>,
    /// The ids of the tasks that waited on this file and now proceed.
    pub tasks: Vec<String>,
}

/// `POST /trust/revoke`: the trust taken back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Revoked {
    pub revoked: TrustedFile,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn trust_encodes_as_documented() {
        let asks = vec![
            RepoAsk {
                kind: RepoAskKind::Setup,
                value: "npm ci".into(),
            },
            RepoAsk {
                kind: RepoAskKind::Copy,
                value: ".env".into(),
            },
        ];
        round_trip(
            &TrustRequest {
                repository: "/r".into(),
                file: "/r/.orchestra.toml".into(),
                sha256: "ab".into(),
                asks: asks.clone(),
            },
            json!({"repository": "/r", "file": "/r/.orchestra.toml", "sha256": "ab",
                "asks": [{"kind": "setup", "value": "npm ci"}, {"kind": "copy", "value": ".env"}]}),
        );
        let file = TrustedFile {
            file: "/r/.orchestra.toml".into(),
            sha256: "ab".into(),
            trusted_at: 5,
        };
        round_trip(
            &Trusted {
                trusted: file.clone(),
                asks,
                tasks: vec!["t1".into()],
            },
            json!({"trusted": {"file": "/r/.orchestra.toml", "sha256": "ab", "trustedAt": 5},
                "asks": [{"kind": "setup", "value": "npm ci"}, {"kind": "copy", "value": ".env"}],
                "tasks": ["t1"]}),
        );
        round_trip(
            &TrustList {
                trusted: vec![file.clone()],
            },
            json!({"trusted": [{"file": "/r/.orchestra.toml", "sha256": "ab", "trustedAt": 5}]}),
        );
        round_trip(
            &Revoked { revoked: file },
            json!({"revoked": {"file": "/r/.orchestra.toml", "sha256": "ab", "trustedAt": 5}}),
        );
    }
}
