//! `GET /api/coding-agents/events`: Server-Sent Events, one per change, with a keep-alive.
//! `?output=lines` asks for `task:output` events without the task (only its new lines);
//! `?output=last`, with only the newest of them.

use super::error::ApiError;
use super::rights::{Principal, may_see_event};
use super::tasks::url_pairs;
use crate::engine::Engine;
use axum::extract::{RawQuery, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::{Stream, StreamExt};
use orchestra_proto::wire::{Event, Framer, OutputForm};
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

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
    principal: Option<axum::Extension<Principal>>,
    RawQuery(q): RawQuery,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let viewer = match principal.map(|p| p.0) {
        // An agent sees its own task's family only.
        Some(agent @ Principal::Session(_)) => Some((engine.clone(), agent)),
        _ => None,
    };
    let reader = Reader {
        rx: engine.subscribe(),
        framer: Framer::new(output_form(q.as_deref())?),
        viewer,
    };
    // A comment first: the response's head goes out with the first bytes of its body, and a
    // browser's EventSource is `open` (and reads the state) only once the head has come; on
    // an idle orchestra that would wait for the first keep-alive, 15 s later.
    let opened = futures_util::stream::once(async {
        Ok::<_, Infallible>(SseEvent::default().comment("orchestra events"))
    });
    let events = opened.chain(
        futures_util::stream::unfold(reader, Reader::next_batch)
            .take_until(engine.closing())
            .flat_map(futures_util::stream::iter),
    );
    Ok(Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(15))
            .text("keep-alive"),
    ))
}

/// How long a reader gathers output before sending it: a frame at the TUI's frame cap.
const OUTPUT_GATHER: Duration = Duration::from_millis(16);

/// One subscriber's events, read in batches.
struct Reader {
    rx: broadcast::Receiver<Event>,
    framer: Framer,
    /// For an agent's session: who reads, and the engine that tells its family.
    viewer: Option<(Engine, Principal)>,
}

impl Reader {
    /// The next event and every other one published by then, framed; `None` once the engine
    /// is gone. Output goes out in batches: after a `task:output`, the reader gathers what
    /// comes within [`OUTPUT_GATHER`] and sends it in one write. Woken for each event
    /// instead, a reader of 50 busy agents made (and woke its client for) a write per
    /// output line, 500 a second. Any other event is sent at once, with what the other
    /// publishers of the moment (the sessions of one wake-up round) add while the reader
    /// yields once.
    async fn next_batch(mut self) -> Option<(Vec<Result<SseEvent, Infallible>>, Reader)> {
        let mut batch = Vec::new();
        let first = match self.rx.recv().await {
            Err(RecvError::Closed) => return None,
            Err(RecvError::Lagged(missed)) => Err(missed),
            Ok(ev) => Ok(ev),
        };
        let output = matches!(&first, Ok(ev) if ev.is_output());
        self.push(&mut batch, first);
        if output {
            tokio::time::sleep(OUTPUT_GATHER).await;
        } else {
            tokio::task::yield_now().await;
        }
        loop {
            match self.rx.try_recv() {
                Ok(ev) => self.push(&mut batch, Ok(ev)),
                Err(TryRecvError::Lagged(missed)) => self.push(&mut batch, Err(missed)),
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        Some((batch, self))
    }

    /// Frames one event (or a `lagged` notice: `Err` with how many were missed) into `batch`.
    fn push(&mut self, batch: &mut Vec<Result<SseEvent, Infallible>>, item: Result<Event, u64>) {
        let (name, frame) = match item {
            Ok(ev) if ev.is_local() => return,
            Ok(ev)
                if self
                    .viewer
                    .as_ref()
                    .is_some_and(|(engine, who)| !may_see_event(engine, Some(who), &ev)) =>
            {
                return;
            }
            Ok(ev) => (ev.name(), self.framer.frame(ev)),
            // A slow reader missed events: say so, so it can read the state again.
            Err(missed) => ("lagged", self.framer.lagged(missed)),
        };
        match serde_json::to_string(&frame) {
            Ok(json) => batch.push(Ok(SseEvent::default().event(name).data(json))),
            Err(e) => tracing::error!(event = name, error = %e, "an event did not encode"),
        }
    }
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
