//! `GET /api/coding-agents/events`: Server-Sent Events, one per change, with a keep-alive.

use crate::engine::Engine;
use crate::wire::{EventFrame, Lagged};
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
            let (name, frame) = match item {
                Ok(ev) if ev.is_local() => return None,
                Ok(ev) => (ev.name(), EventFrame::Change(ev)),
                // A slow reader missed events: say so, so it can read the state again.
                Err(BroadcastStreamRecvError::Lagged(missed)) => {
                    ("lagged", EventFrame::Lagged(Lagged { missed }))
                }
            };
            match serde_json::to_string(&frame) {
                Ok(json) => Some(Ok(SseEvent::default().event(name).data(json))),
                Err(e) => {
                    tracing::error!(event = name, error = %e, "an event did not encode");
                    None
                }
            }
        });
    Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(15))
            .text("keep-alive"),
    )
}
