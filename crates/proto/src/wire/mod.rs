//! The types that cross the API, one module per area: the API encodes them, the CLI and the
//! TUI (and any client in Rust) decode them. The JSON they make is the contract of API.md
//! and docs/stream.md; each module's tests pin it.
//!
//! The engine carries these types too (a session's prompt, its events), so nothing inside
//! orchestra passes `serde_json::Value` around. This module depends on the task model
//! (`crate::task`) and git's records (a diff, a merge) and nothing above them: never on the
//! engine, the API or a front end.
//!
//! Where each answer is (all under `/api/coding-agents` but the first two):
//! - `GET /api/status`, `…/status`: [`Status`]; `POST /api/agent/*`: [`Switched`];
//!   `POST /api/daemon/stop`: [`DaemonStopped`] (`status.rs`)
//! - tasks: [`TaskBody`], [`TaskList`], [`StepAdded`], [`StepBody`], [`Discarded`] (`task.rs`);
//!   `…/diff`: [`DiffBody`], `…/merge`: [`MergedTask`], `…/pr`: [`PullRequestTask`],
//!   `/worktrees`: [`WorktreeList`], `/worktrees/gc`: [`CollectedList`] (`worktree.rs`)
//! - sessions: [`SessionBody`], [`SessionCreated`], [`SessionList`], [`MessageBody`],
//!   [`MessageList`], [`Peek`] (`session.rs`); a blocked session's [`Prompt`] (`prompt.rs`)
//! - `/providers`: [`ProviderList`] (`provider.rs`)
//! - `/trust`: [`TrustList`], [`Trusted`], [`Revoked`]; a task's [`TrustRequest`] (`trust.rs`)
//! - `…/conflicts`: [`ConflictReport`], `/conflicts`: [`ConflictList`] (`conflicts.rs`)
//! - `/events`: one [`EventFrame`] per Server-Sent Event (`event.rs`)
//! - `/sessions/:id/stream`: [`StreamEvent`] and [`StreamRequest`] (`stream.rs`)
//! - any error: [`ErrorBody`] (`error.rs`); request bodies clients send: [`request`]

mod conflicts;
mod error;
mod event;
mod provider;
pub mod request;
mod session;
mod status;
mod stream;
pub(crate) mod task;
mod worktree;

pub use crate::prompt::{Prompt, PromptKind, PromptOption};
pub use crate::trust::{
    DECLINE_OPTION, RepoAsk, RepoAskKind, Revoked, TRUST_OPTION, TrustList, TrustRequest, Trusted,
    TrustedFile,
};
pub use conflicts::{BaseConflict, ConflictList, ConflictReport, TaskConflict};
pub use error::{DecodeError, ErrorBody, TOKEN_HINT, decode, error_sentence};
pub use event::{
    Event, EventFrame, Framer, Lagged, OutputForm, OutputLines, SessionEventKind, TaskEventKind,
};
pub use provider::{ProviderInfo, ProviderList};
pub use session::{
    Approval, Cursor, Message, MessageBody, MessageList, Peek, Role, SessionBody, SessionCreated,
    SessionInfo, SessionList, SessionStatus, StatusSource,
};
pub use status::{DaemonStopped, Limits, RunState, SessionCounts, Status, Switched, TaskCounts};
pub use stream::{MouseEncoding, MouseMode, StreamEvent, StreamRequest, TerminalModes};
pub use task::{
    Discarded, DiscardedVariant, Picked, STARTED_ELSEWHERE, StepAdded, StepBody, TaskBody,
    TaskList, started_anyway,
};
pub use worktree::{
    Collected, CollectedList, Diff, DiffBody, FileDiff, FileStatus, Merged, MergedTask,
    PullRequest, PullRequestTask, WorktreeInfo, WorktreeList,
};

/// Percent-encodes one path segment of an API URL (ids are opaque strings).
pub fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod testing {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use std::fmt::Debug;

    /// Encodes `value`, checks the JSON is `expected`, decodes it back and checks it is
    /// `value` again.
    pub fn round_trip<T>(value: &T, expected: serde_json::Value)
    where
        T: Serialize + DeserializeOwned + PartialEq + Debug,
    {
        let json = serde_json::to_value(value).expect("encodes");
        assert_eq!(json, expected, "encoded JSON");
        let back: T = serde_json::from_value(json).expect("decodes");
        assert_eq!(&back, value, "decoded back");
    }
}
