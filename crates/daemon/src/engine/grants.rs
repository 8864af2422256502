//! The credentials of agent sessions: each session gets its own (its `ORCHESTRA_TOKEN`), good
//! while the session lives, standing for that session and the task it runs. The API decides
//! from the grant what a request carrying it may do (`api::rights`).
//!
//! A credential is issued before the session's program starts, so that the program's very
//! first request (an `exec` task's `orchestra report …`) finds it, and withdrawn before the
//! session reads as ended, so that nobody who sees it ended can still use it.

use super::Engine;
use orchestra_proto::wire::Approval;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

/// What an agent session's credential stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionGrant {
    pub session_id: String,
    /// The task the session runs, if it runs one.
    pub task_id: Option<String>,
    /// The session's approval preset: nothing it asks for may go wider.
    pub approval: Approval,
}

/// Live credentials, by secret.
pub(crate) type CredentialTable = Arc<RwLock<HashMap<String, SessionGrant>>>;

/// A credential issued for a session being started: withdrawn when dropped unless
/// [`Issued::keep`] was called (the session did start).
pub(crate) struct Issued {
    table: CredentialTable,
    pub(crate) secret: String,
    kept: bool,
}

impl Issued {
    pub(crate) fn keep(mut self) -> String {
        self.kept = true;
        std::mem::take(&mut self.secret)
    }
}

impl Drop for Issued {
    fn drop(&mut self) {
        if !self.kept {
            self.table.write().remove(&self.secret);
        }
    }
}

impl Engine {
    /// A new credential for `grant`'s session.
    pub(crate) fn issue_credential(
        &self,
        grant: SessionGrant,
    ) -> Result<Issued, orchestra_sys::credentials::TokenError> {
        let secret = orchestra_sys::credentials::random_secret()?;
        self.inner.credentials.write().insert(secret.clone(), grant);
        Ok(Issued {
            table: self.inner.credentials.clone(),
            secret,
            kept: false,
        })
    }

    /// Withdraws the credential of a session that has ended.
    pub(crate) fn withdraw_credential(&self, secret: &str) {
        self.inner.credentials.write().remove(secret);
    }

    /// The live session whose credential is `credential`, if any.
    pub fn session_grant(&self, credential: &str) -> Option<SessionGrant> {
        self.inner.credentials.read().get(credential).cloned()
    }
}
