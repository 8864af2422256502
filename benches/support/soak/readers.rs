//! The API's read load and the event stream's follower.

use super::api::Api;
use super::{API, Ctx};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Reads the API in a loop, recording each answer's latency (ms) in the window.
pub(super) fn reader(ctx: &Ctx, r: usize) {
    let api = Api::new(&ctx.addr);
    let s = &ctx.shared;
    let mut i = r;
    while !s.stop.load(Ordering::SeqCst) {
        let latest = s.latest_session.lock().clone();
        let path = match (i % 5, latest) {
            (0, _) => "/tasks?limit=50".to_string(),
            (1, _) => "/sessions".to_string(),
            (2, Some(sid)) => format!("/sessions/{sid}"),
            (3, Some(sid)) => format!("/sessions/{sid}/peek"),
            _ => "/status".to_string(),
        };
        let t = Instant::now();
        // A session deleted meanwhile answers 404: an answer all the same.
        if api.call("GET", &path, None).is_ok() {
            s.window.lock().push(super::super::figures::ms(t.elapsed()));
        }
        i += 1;
        // A client polling, not a flood: the machine has other work to do.
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Follows the event stream, reconnecting every few seconds (so subscribers come and go).
pub(super) fn follow_events(ctx: &Ctx) {
    use std::io::{BufRead, Write};
    let s = &ctx.shared;
    while !s.stop.load(Ordering::SeqCst) {
        let Ok(mut conn) = std::net::TcpStream::connect(&ctx.addr) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
        if write!(
            conn,
            "GET {API}/events HTTP/1.1\r\nHost: {}\r\n\r\n",
            ctx.addr
        )
        .is_err()
        {
            continue;
        }
        let mut lines = std::io::BufReader::new(conn);
        let until = Instant::now() + Duration::from_secs(7);
        while Instant::now() < until && !s.stop.load(Ordering::SeqCst) {
            let mut line = String::new();
            match lines.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) if line.starts_with("event:") => {
                    s.events.fetch_add(1, Ordering::Relaxed);
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
    }
}
