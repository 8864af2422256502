//! `GET /api/coding-agents/events`: Server-Sent Events, one per change, with a keep-alive.
//! `?output=lines` asks for `task:output` events without the task (only its new lines);
//! `?output=last`, with only the newest of them.

use super::error::ApiError;
use super::tasks::url_pairs;
use crate::engine::Engine;
use crate::wire::{Framer, OutputForm};
use axum::extract::{RawQuery, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::{Stream, StreamExt};
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

/// Reads `output` (`task`, the default, `lines` or `last`); other query keys are ignored.
fn output_form(raw: Option<&str>) -> Result<OutputForm, ApiError> {
    let mut form = OutputForm::default();
    for (k, v) in url_pairs(raw.unwrap_or("")) {
        if k == "output" {
            form = v.parse().map_err(ApiError::bad_request)?;
        }
    }
    Ok(form)
}

pub async fn stream(
    State(engine): State<Engine>,
    RawQuery(q): RawQuery,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let mut framer = Framer::new(output_form(q.as_deref())?);
    let closing = engine.closing();
    let events = BroadcastStream::new(engine.subscribe())
        .take_until(closing)
        .map(move |item| {
            let (name, frame) = match item {
                Ok(ev) if ev.is_local() => return None,
                Ok(ev) => (ev.name(), framer.frame(ev)),
                // A slow reader missed events: say so, so it can read the state again.
                Err(BroadcastStreamRecvError::Lagged(missed)) => ("lagged", framer.lagged(missed)),
            };
            match serde_json::to_string(&frame) {
                Ok(json) => Some(Ok(SseEvent::default().event(name).data(json))),
                Err(e) => {
                    tracing::error!(event = name, error = %e, "an event did not encode");
                    None
                }
            }
        })
        .filter_map(std::future::ready);
    Ok(Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(15))
            .text("keep-alive"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_form_is_read_from_the_query() {
        assert_eq!(output_form(None).unwrap(), OutputForm::Task);
        assert_eq!(
            output_form(Some("output=lines")).unwrap(),
            OutputForm::Lines
        );
        assert_eq!(
            output_form(Some("x=1&output=task")).unwrap(),
            OutputForm::Task
        );
        assert_eq!(output_form(Some("output=last")).unwrap(), OutputForm::Last);
        assert!(output_form(Some("output=")).is_err());
        assert!(output_form(Some("output=LINES")).is_err());
    }
}
