//! One JSON encoding per task version, shared by every reader of it.
//!
//! With 50 busy agents each task changes about four times a second, yet the task list (read
//! every 50 ms) and every `task:output` event (once per subscriber) encoded each task again,
//! with its up to 2,000 output lines: `serde_json`'s string escaping was the daemon's largest
//! cost. A task version is an `Arc<Task>` nobody changes any more (the engine changes a clone
//! and publishes it as a new `Arc`), so its encoding can be made once, kept in the task, and
//! spliced into every answer and event as raw JSON.

use crate::task::Task;
use bytes::Bytes;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The encoding a task carries: empty until the version is first encoded through
/// [`encoded`]. A clone starts empty (tasks are cloned to be changed into the next version),
/// and it never takes part in comparisons.
#[derive(Default)]
pub struct EncodedOnce(OnceLock<Box<RawValue>>);

impl Clone for EncodedOnce {
    fn clone(&self) -> Self {
        EncodedOnce::default()
    }
}

impl PartialEq for EncodedOnce {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for EncodedOnce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = if self.0.get().is_some() {
            "encoded"
        } else {
            "not encoded"
        };
        f.write_str(state)
    }
}

/// The JSON of this task version (what `serde_json::to_string(&**task)` gives), encoded on
/// first use. Only a shared version (`&Arc<Task>`) is cached, so whatever changes a task
/// changes a copy, whose cache is empty. (`Arc::make_mut` on an `Arc` nobody else holds
/// would change the version in place: the engine never does; a client's copy is never
/// encoded.)
pub fn encoded(task: &Arc<Task>) -> Result<&RawValue, serde_json::Error> {
    if let Some(json) = task.encoded.0.get() {
        return Ok(json);
    }
    let fresh = serde_json::value::to_raw_value(&**task)?;
    // Two readers may encode at once; both made the same text, one is kept.
    Ok(task.encoded.0.get_or_init(|| fresh))
}

/// A task version serialised through its cached encoding.
pub struct Encoded<'a>(pub &'a Arc<Task>);

impl Serialize for Encoded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        encoded(self.0).map_err(S::Error::custom)?.serialize(s)
    }
}

/// A task version's encoding as bytes, shared with the task (the `Arc` keeps it alive).
struct SharedEncoding(Arc<Task>);

impl AsRef<[u8]> for SharedEncoding {
    fn as_ref(&self) -> &[u8] {
        // Made by `task_list_pieces` before this is built.
        self.0
            .encoded
            .0
            .get()
            .map_or(b"null".as_slice(), |json| json.get().as_bytes())
    }
}

/// `{"tasks":[…]}` (what [`super::TaskList`] encodes to) in pieces: each task's cached
/// encoding shared, not copied. With 50 busy agents the list is megabytes read every 100 ms,
/// and encoding it into one buffer copied every task again (and again as the buffer grew).
pub fn task_list_pieces(tasks: &[Arc<Task>]) -> Result<Vec<Bytes>, serde_json::Error> {
    let mut pieces = Vec::with_capacity(tasks.len() * 2 + 1);
    pieces.push(Bytes::from_static(b"{\"tasks\":["));
    for (i, task) in tasks.iter().enumerate() {
        encoded(task)?;
        if i > 0 {
            pieces.push(Bytes::from_static(b","));
        }
        pieces.push(Bytes::from_owner(SharedEncoding(task.clone())));
    }
    pieces.push(Bytes::from_static(b"]}"));
    Ok(pieces)
}

/// `serialize_with` for a field holding one task version.
pub fn task<S: Serializer>(task: &Arc<Task>, s: S) -> Result<S::Ok, S::Error> {
    Encoded(task).serialize(s)
}

/// `serialize_with` for a field holding a list of task versions.
pub fn tasks<S: Serializer>(tasks: &[Arc<Task>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(tasks.iter().map(Encoded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::task::tests::task as a_task;

    #[test]
    fn the_cached_encoding_is_the_fresh_one_and_a_clone_starts_without_it() {
        let first = Arc::new(a_task());
        let json = encoded(&first).unwrap().get().to_string();
        assert_eq!(json, serde_json::to_string(&*first).unwrap());
        assert_eq!(format!("{:?}", first.encoded), "encoded");
        // The next version is a changed clone: it must not answer with the old text.
        let mut next = (*first).clone();
        assert_eq!(format!("{:?}", next.encoded), "not encoded");
        next.append_output_lines(["new line".to_string()]);
        let next = Arc::new(next);
        let next_json = encoded(&next).unwrap().get().to_string();
        assert_eq!(next_json, serde_json::to_string(&*next).unwrap());
        assert_ne!(next_json, json);
        // The cache does not count when comparing tasks.
        assert_eq!(*first, a_task());
    }

    #[test]
    fn spliced_encodings_read_back_as_the_tasks() {
        let list = vec![Arc::new(a_task()), Arc::new(a_task())];
        encoded(&list[0]).unwrap();
        let mut out = serde_json::Serializer::new(Vec::new());
        tasks(&list, &mut out).unwrap();
        let back: Vec<Task> = serde_json::from_slice(&out.into_inner()).unwrap();
        assert_eq!(back, vec![a_task(), a_task()]);
        // And through `serde_json::to_value`, which takes raw JSON apart again.
        let v = serde_json::to_value(Encoded(&list[1])).unwrap();
        assert_eq!(v, serde_json::to_value(a_task()).unwrap());
    }

    #[test]
    fn the_list_in_pieces_is_the_list_encoded() {
        for n in [0, 1, 3] {
            let tasks: Vec<Arc<Task>> = (0..n).map(|_| Arc::new(a_task())).collect();
            let pieces = task_list_pieces(&tasks).unwrap();
            let joined: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
            let whole = serde_json::to_vec(&crate::wire::TaskList { tasks }).unwrap();
            assert_eq!(
                String::from_utf8(joined).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
    }
}
