//! What can go wrong when asking the engine for something. Each variant maps to one HTTP status.

use crate::store::StoreError;
use orchestra_proto::task::TransitionError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad input: 400.
    #[error("{0}")]
    Invalid(String),
    /// Unknown id: 404.
    #[error("{0}")]
    NotFound(String),
    /// Not legal in the current state: 409.
    #[error("{0}")]
    Conflict(String),
    /// Too many live sessions: 429.
    #[error("{0}")]
    TooMany(String),
    /// Something the request needs is absent: 503.
    #[error("{0}")]
    Unavailable(String),
    /// Understood, but the user's set-up cannot carry it out (no remote, no forge CLI, not
    /// logged in to it): 422. Nothing was done.
    #[error("{0}")]
    Unprocessable(String),
    /// A program beyond orchestra (a push to the remote, the forge's CLI) failed: 502, with
    /// its reason.
    #[error("{0}")]
    Upstream(String),
    /// Our own failure: 500.
    #[error("storage failed: {0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl From<TransitionError> for EngineError {
    fn from(e: TransitionError) -> Self {
        EngineError::Conflict(e.to_string())
    }
}

pub type EngineResult<T> = Result<T, EngineError>;
