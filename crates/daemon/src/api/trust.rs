//! `/api/coding-agents/trust`: the repository files whose commands the user trusted (see
//! `engine::trust`): list them, trust one's current content, take a trust back.

use super::error::ApiError;
use super::requests::Req;
use crate::engine::Engine;
use axum::Json;
use axum::extract::State;
use orchestra_proto::wire::request::TrustPath;
use orchestra_proto::wire::{Revoked, TrustList, Trusted};

/// Every file trusted, with the hash of the content trusted.
pub async fn list(State(engine): State<Engine>) -> Json<TrustList> {
    Json(TrustList {
        trusted: engine.trusted_files().await,
    })
}

/// `{path}`: trusts the file's current content; the tasks waiting on it proceed.
pub async fn trust(
    State(engine): State<Engine>,
    Req(TrustPath { path }): Req<TrustPath>,
) -> Result<Json<Trusted>, ApiError> {
    Ok(Json(engine.trust_path(&path).await?))
}

/// `{path}`: the file is trusted no longer.
pub async fn revoke(
    State(engine): State<Engine>,
    Req(TrustPath { path }): Req<TrustPath>,
) -> Result<Json<Revoked>, ApiError> {
    Ok(Json(Revoked {
        revoked: engine.revoke_trust(&path).await?,
    }))
}
