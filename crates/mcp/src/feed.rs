//! One subscription to the daemon's event stream, shared by every `wait_for_task` of this
//! server: a thread reads it (the client is blocking) and hands each frame to the waiters
//! over a broadcast channel. Opened at the first wait; the thread ends, closing the
//! connection, at the first event that finds no waiter listening, so an idle server holds no
//! stream and does no work.

use crate::remote::{Failed, Remote};
use orchestra_client::events::{EventReader, Read1};
use orchestra_proto::routes;
use orchestra_proto::wire::EventFrame;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

/// What a waiter receives.
#[derive(Debug)]
pub enum Item {
    Frame(EventFrame),
    /// An event this build cannot read: the waiter reads the state whole again.
    Unreadable,
    /// The stream ended (the daemon stopped): why.
    Ended(String),
}

/// Events kept for a waiter that is slow to take them; past this it is told it lagged and
/// reads the state again.
const BACKLOG: usize = 1024;

/// The reader thread's channel, while the thread reads. Subscribing and the thread's
/// decision to stop both happen under this lock, so a waiter never subscribes to a thread
/// that is leaving.
type Live = Arc<Mutex<Option<broadcast::Sender<Arc<Item>>>>>;

pub struct Feed {
    remote: Remote,
    live: Live,
    /// One opening at a time (two first waits open one stream).
    opening: tokio::sync::Mutex<()>,
}

fn lock(live: &Live) -> MutexGuard<'_, Option<broadcast::Sender<Arc<Item>>>> {
    live.lock().unwrap_or_else(|p| p.into_inner())
}

impl Feed {
    pub fn new(remote: Remote) -> Feed {
        Feed {
            remote,
            live: Arc::new(Mutex::new(None)),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// A receiver of every event from now on. When this returns, the daemon has subscribed
    /// the stream, so a state read after it misses nothing: a change is either in the read
    /// or in the events that follow.
    pub async fn subscribe(&self) -> Result<broadcast::Receiver<Arc<Item>>, Failed> {
        let _opening = self.opening.lock().await;
        if let Some(tx) = lock(&self.live).as_ref() {
            return Ok(tx.subscribe());
        }
        // Light output frames, newest line only: a waiter never looks at output events.
        let path = format!("{}?output=last", routes::EVENTS);
        let body = self.remote.run(move |api| api.open(&path, true)).await?;
        let (tx, rx) = broadcast::channel(BACKLOG);
        *lock(&self.live) = Some(tx.clone());
        let live = self.live.clone();
        if let Err(e) = std::thread::Builder::new()
            .name("mcp-events".into())
            .spawn(move || read(body, &tx, &live))
        {
            *lock(&self.live) = None;
            return Err(Failed::Lost(format!("cannot start the event reader: {e}")));
        }
        Ok(rx)
    }
}

/// Reads frames until the stream ends or nobody listens.
fn read(body: ureq::Body, tx: &broadcast::Sender<Arc<Item>>, live: &Live) {
    let mut reader = EventReader::new(body.into_reader());
    loop {
        let item = match reader.next_event() {
            Ok(Read1::Frame(frame)) => Item::Frame(frame),
            Ok(Read1::Unreadable(e)) => {
                tracing::warn!(error = %e, "an event did not read");
                Item::Unreadable
            }
            Err(why) => {
                *lock(live) = None;
                let _ = tx.send(Arc::new(Item::Ended(why)));
                return;
            }
        };
        if tx.send(Arc::new(item)).is_err() {
            // Nobody waits: close the stream rather than read the whole daemon's events
            // for no one; the next wait opens a new one. Decided under the lock, where no
            // waiter can subscribe meanwhile (one that did before it is not left alone).
            let mut guard = lock(live);
            if tx.receiver_count() == 0 {
                *guard = None;
                return;
            }
        }
    }
}
