//! A JSON answer sent as shared pieces, without copying them into one buffer first.

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A body of pieces whose whole length is known (so it goes with a `Content-Length`).
pub struct JsonPieces {
    pieces: VecDeque<Bytes>,
    remaining: u64,
}

impl JsonPieces {
    /// `pieces` joined must be one JSON document.
    pub fn new(pieces: Vec<Bytes>) -> JsonPieces {
        let remaining = pieces.iter().map(|p| p.len() as u64).sum();
        JsonPieces {
            pieces: pieces.into(),
            remaining,
        }
    }
}

impl Body for JsonPieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.pieces.pop_front().map(|piece| {
            this.remaining -= piece.len() as u64;
            Ok(Frame::data(piece))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

impl IntoResponse for JsonPieces {
    fn into_response(self) -> Response {
        (
            [(CONTENT_TYPE, "application/json")],
            axum::body::Body::new(self),
        )
            .into_response()
    }
}
