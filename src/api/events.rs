//! `GET /api/coding-agents/events`: Server-Sent Events, one per change, with a keep-alive.

use crate::engine::Engine;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::{Stream, StreamExt};
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

pub async fn stream(
    State(engine): State<Engine>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let closing = engine.closing();
    let events = BroadcastStream::new(engine.subscribe())
        .take_until(closing)
        .filter_map(|item| async move {
            match item {
                Ok(ev) => ev
                    .to_json()
                    .map(|json| Ok(SseEvent::default().event(ev.name()).data(json.to_string()))),
                // A slow reader missed events: say so, so it can read the state again.
                Err(BroadcastStreamRecvError::Lagged(n)) => Some(Ok(SseEvent::default()
                    .event("lagged")
                    .data(format!("{{\"type\":\"lagged\",\"missed\":{n}}}")))),
            }
        });
    Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(15))
            .text("keep-alive"),
    )
}
