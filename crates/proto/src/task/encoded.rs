//! One JSON encoding per task version, shared by every reader of it.
//!
//! With 50 busy agents each task changes about four times a second, yet the task list (read
//! every 50 ms) and every `task:output` event (once per subscriber) encoded each task again,
//! with its up to 2,000 output lines: `serde_json`'s string escaping was the daemon's largest
//! cost. A task version is an `Arc<Task>` nobody changes any more (the engine changes a clone
//! and publishes it as a new `Arc`), so its encoding can be made once, kept in the task, and
//! spliced into every answer and event as raw JSON.

use crate::task::{Task, TaskOutput};
use bytes::Bytes;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The encodings a task carries, each made on first use: whole (for events, single tasks
/// and the store) and in pieces (for the task list, see [`task_list_pieces`]). A clone
/// starts empty (tasks are cloned to be changed into the next version), and they never take
/// part in comparisons.
#[derive(Default)]
pub struct EncodedOnce {
    whole: OnceLock<Box<RawValue>>,
    pieces: OnceLock<Vec<Bytes>>,
}

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
        let state = if self.whole.get().is_some() || self.pieces.get().is_some() {
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
    if let Some(json) = task.encoded.whole.get() {
        return Ok(json);
    }
    let fresh = serde_json::value::to_raw_value(&**task)?;
    // Two readers may encode at once; both made the same text, one is kept.
    Ok(task.encoded.whole.get_or_init(|| fresh))
}

/// The same JSON in pieces that joined make it, after a comma (for a list; the first task of
/// one leaves it out): the task's other fields around its output, and the output's blocks,
/// most of them shared with the task's earlier and later versions (see
/// [`crate::task::TaskOutput::json_pieces`]). A busy agent's task is a new version a few
/// times a second, and encoding each version whole copied all its lines again.
pub fn pieces(task: &Arc<Task>) -> Result<&[Bytes], serde_json::Error> {
    if let Some(pieces) = task.encoded.pieces.get() {
        return Ok(pieces);
    }
    let fresh = split_around_output(task)?;
    Ok(task.encoded.pieces.get_or_init(|| fresh))
}

fn split_around_output(task: &Task) -> Result<Vec<Bytes>, serde_json::Error> {
    // The task without its lines (a cheap copy: the blocks are shared), then the lines'
    // pieces put inside its empty list.
    let mut bare = task.clone();
    bare.metadata.output = TaskOutput::default();
    let mut text = b",".to_vec();
    serde_json::to_writer(&mut text, &bare)?;
    let text = Bytes::from(text);
    let Some(inside) = only_empty_output_list(&text) else {
        let mut whole = b",".to_vec();
        serde_json::to_writer(&mut whole, task)?;
        return Ok(vec![Bytes::from(whole)]);
    };
    let mut pieces = vec![text.slice(..inside)];
    task.metadata.output.json_pieces(&mut pieces);
    pieces.push(text.slice(inside..));
    Ok(pieces)
}

const EMPTY_OUTPUT: &[u8] = br#""output":[]"#;

/// Where the inside of `"output":[]` is (between its brackets), if it is there exactly once.
/// Outside strings only: inside one a quote is escaped (`\"`), so the text can only be the
/// field itself (a step's `output` is a string, never a list).
fn only_empty_output_list(text: &[u8]) -> Option<usize> {
    let find = |from: usize| {
        text.get(from..)?
            .windows(EMPTY_OUTPUT.len())
            .position(|w| w == EMPTY_OUTPUT)
            .map(|at| at + from)
    };
    let at = find(0)?;
    if find(at + 1).is_some() {
        return None;
    }
    Some(at + EMPTY_OUTPUT.len() - 1)
}

/// A task's pieces with the comma before it (`comma`) or without.
fn task_pieces(
    task: &Arc<Task>,
    comma: bool,
) -> Result<impl Iterator<Item = Bytes> + '_, serde_json::Error> {
    Ok(pieces(task)?.iter().enumerate().map(move |(i, piece)| {
        if i == 0 && !comma {
            piece.slice(1..)
        } else {
            piece.clone()
        }
    }))
}

/// A task version serialised through its cached encoding.
pub struct Encoded<'a>(pub &'a Arc<Task>);

impl Serialize for Encoded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        encoded(self.0).map_err(S::Error::custom)?.serialize(s)
    }
}

/// `{"tasks":[…]}` (what [`super::TaskList`] encodes to) in pieces: each task's cached
/// pieces shared, not copied. With 50 busy agents the list is megabytes read every 100 ms,
/// and encoding it into one buffer copied every task again (and again as the buffer grew).
pub fn task_list_pieces(tasks: &[Arc<Task>]) -> Result<Vec<Bytes>, serde_json::Error> {
    let mut out = Vec::with_capacity(tasks.len() * 8 + 2);
    out.push(Bytes::from_static(b"{\"tasks\":["));
    for (i, task) in tasks.iter().enumerate() {
        out.extend(task_pieces(task, i > 0)?);
    }
    out.push(Bytes::from_static(b"]}"));
    Ok(out)
}

/// A task version's JSON as one text, joined from its pieces (for the store: no second
/// encoding of the version).
pub fn joined_text(task: &Arc<Task>) -> Result<String, serde_json::Error> {
    let mut text = Vec::new();
    for piece in task_pieces(task, false)? {
        text.extend_from_slice(&piece);
    }
    String::from_utf8(text).map_err(serde_json::Error::custom)
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

    /// Tasks with no lines, a few, and several blocks' worth with the oldest dropped; one
    /// whose text looks like the empty list the pieces are split at, and steps with output.
    fn varied_tasks() -> Vec<Arc<Task>> {
        let mut tasks = Vec::new();
        for lines in [0, 3, 2 * crate::task::output::BLOCK_LINES + 5, 2_100] {
            let mut t = a_task();
            t.append_output_lines((0..lines).map(|i| format!("line {i} \"quoted\"")));
            tasks.push(Arc::new(t));
        }
        let mut tricky = a_task();
        tricky.description = r#"it says "output":[] and \"output\":[]"#.into();
        tricky.metadata.steps.push(crate::task::Step {
            id: "s".into(),
            description: "a step".into(),
            status: crate::task::StepStatus::Completed,
            output: Some("[]".into()),
        });
        tricky.append_output_lines(["x".to_string()]);
        tasks.push(Arc::new(tricky));
        tasks
    }

    #[test]
    fn the_output_list_is_split_at_only_where_it_is_alone() {
        let one = br#"{"a":"\"output\":[]","output":[],"b":1}"#;
        let at = only_empty_output_list(one).unwrap();
        assert_eq!(&one[at - 1..at + 1], b"[]");
        assert_eq!(&one[..at], br#"{"a":"\"output\":[]","output":["#);
        assert_eq!(only_empty_output_list(br#"{"output":[1]}"#), None);
        assert_eq!(
            only_empty_output_list(br#"{"output":[],"x":{"output":[]}}"#),
            None
        );
    }

    #[test]
    fn a_tasks_pieces_joined_are_its_encoding() {
        for task in varied_tasks() {
            let joined = joined_text(&task).unwrap();
            assert_eq!(joined, serde_json::to_string(&*task).unwrap());
            assert_eq!(joined, encoded(&task).unwrap().get());
        }
    }

    #[test]
    fn the_list_in_pieces_is_the_list_encoded() {
        let all = varied_tasks();
        for n in 0..=all.len() {
            let tasks: Vec<Arc<Task>> = all[..n].to_vec();
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
