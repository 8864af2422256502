//! Reading orchestra's event stream (`GET /api/coding-agents/events`, Server-Sent Events):
//! each event's `data:` lines, joined, read as the wire's [`EventFrame`]. Every front end that
//! follows the daemon (the TUI, the MCP server) reads it through this one parser.

use orchestra_proto::wire::EventFrame;
use std::io::{BufRead, BufReader, Read};

/// One event read from the stream.
#[derive(Debug)]
pub enum Read1 {
    /// A frame: a change, light output lines, or the notice that events were missed.
    Frame(EventFrame),
    /// An event whose JSON this build cannot read (a newer daemon): the reader should read
    /// the state whole again, as after a `lagged` notice. The decoder's words.
    Unreadable(String),
}

/// The events of one open stream, in order.
pub struct EventReader<R> {
    reader: BufReader<R>,
    line: String,
    data: String,
}

impl<R: Read> EventReader<R> {
    pub fn new(body: R) -> EventReader<R> {
        EventReader {
            reader: BufReader::new(body),
            line: String::new(),
            data: String::new(),
        }
    }

    /// Blocks until the next event; `Err` says why the stream ended.
    pub fn next_event(&mut self) -> Result<Read1, String> {
        loop {
            self.line.clear();
            match self.reader.read_line(&mut self.line) {
                Ok(0) => return Err("the connection closed".into()),
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
            let l = self.line.trim_end_matches(['\r', '\n']);
            if let Some(d) = l.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(d.strip_prefix(' ').unwrap_or(d));
                continue;
            }
            if !l.is_empty() || self.data.is_empty() {
                // `event:` names, comments and keep-alives: the type is in the data too.
                continue;
            }
            let read = match serde_json::from_str::<EventFrame>(&self.data) {
                Ok(frame) => Read1::Frame(frame),
                Err(e) => Read1::Unreadable(e.to_string()),
            };
            self.data.clear();
            return Ok(read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_make_one_frame_and_keep_alives_are_skipped() {
        let text = ":keep-alive\n\nevent: lagged\ndata: {\"type\":\"lagged\",\ndata: \"missed\":3}\n\ndata: {\"type\":\"nonsense\"}\n\n";
        let mut r = EventReader::new(text.as_bytes());
        match r.next_event() {
            Ok(Read1::Frame(EventFrame::Lagged(l))) => assert_eq!(l.missed, 3),
            other => panic!("{other:?}"),
        }
        assert!(matches!(r.next_event(), Ok(Read1::Unreadable(_))));
        assert_eq!(r.next_event().unwrap_err(), "the connection closed");
    }
}
