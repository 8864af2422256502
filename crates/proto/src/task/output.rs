//! A task's newest output lines, kept in blocks that its versions share.
//!
//! Every change to a task is a changed copy of it (a new version), and a busy agent's task
//! changes a few times a second while holding up to [`crate::task::OUTPUT_LINES_KEPT`] lines.
//! Copying every line's handle into each version, and every line's text into each version's
//! encoding for the task list, grew with the lines kept: with 50 busy agents it was the
//! largest cost of the daemon's answers after writing them. Lines are kept in blocks of
//! [`BLOCK_LINES`]; every block but the last is full and never changes again, so a copy
//! shares it, and its encoding is made once for all the versions that hold it.

use crate::task::output_line::OutputLine;
use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Lines per block: a new version copies at most this many handles (the last block, when it
/// grows) and encodes afresh at most twice as many lines (the first and the last blocks).
pub const BLOCK_LINES: usize = 128;

/// The lines, oldest first. Every block but the last holds [`BLOCK_LINES`] lines; the first
/// may begin with lines no longer kept (`dropped`), which stay until the whole block goes.
#[derive(Clone, Default)]
pub struct TaskOutput {
    blocks: VecDeque<Arc<Block>>,
    dropped: usize,
    len: usize,
}

struct Block {
    lines: Vec<OutputLine>,
    /// The lines' JSON, each after a comma, made the first time a full block is encoded (a
    /// full block never changes).
    json: OnceLock<Bytes>,
}

impl Clone for Block {
    /// A copy is made to be changed: it starts without an encoding.
    fn clone(&self) -> Block {
        Block {
            lines: self.lines.clone(),
            json: OnceLock::new(),
        }
    }
}

impl Block {
    /// Grows as lines come: most tasks hold a few lines, and 10,000 of them are listed.
    fn empty() -> Block {
        Block {
            lines: Vec::new(),
            json: OnceLock::new(),
        }
    }

    fn is_full(&self) -> bool {
        self.lines.len() >= BLOCK_LINES
    }

    fn full_json(&self) -> Bytes {
        self.json.get_or_init(|| joined(&self.lines)).clone()
    }
}

/// The lines' JSON string literals, each after a comma.
fn joined(lines: &[OutputLine]) -> Bytes {
    let size = lines.iter().map(|l| l.json().len() + 1).sum();
    let mut out = Vec::with_capacity(size);
    for line in lines {
        out.push(b',');
        out.extend_from_slice(line.json().as_bytes());
    }
    Bytes::from(out)
}

impl TaskOutput {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The kept lines of each block, oldest first.
    fn kept_slices(&self) -> impl DoubleEndedIterator<Item = &[OutputLine]> + '_ {
        self.blocks.iter().enumerate().map(|(i, b)| {
            let from = if i == 0 { self.dropped } else { 0 };
            &b.lines[from..]
        })
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &OutputLine> + '_ {
        self.kept_slices().flat_map(|s| s.iter())
    }

    pub fn last(&self) -> Option<&OutputLine> {
        self.blocks.back().and_then(|b| b.lines.last())
    }

    pub fn get(&self, index: usize) -> Option<&OutputLine> {
        if index >= self.len {
            return None;
        }
        // Every block but the last is full, so a line's place is arithmetic.
        let at = index + self.dropped;
        self.blocks
            .get(at / BLOCK_LINES)
            .and_then(|b| b.lines.get(at % BLOCK_LINES))
    }

    pub fn push(&mut self, line: OutputLine) {
        let needs_block = self.blocks.back().is_none_or(|b| b.is_full());
        if needs_block {
            self.blocks.push_back(Arc::new(Block::empty()));
        }
        if let Some(last) = self.blocks.back_mut() {
            // Copies the block only when an earlier version shares it, and it is not full.
            Arc::make_mut(last).lines.push(line);
            self.len += 1;
        }
    }

    /// Drops the oldest lines until at most `n` are left.
    pub fn keep_newest(&mut self, n: usize) {
        while self.len > n {
            let Some(first) = self.blocks.front() else {
                break;
            };
            let in_first = first.lines.len() - self.dropped;
            let drop = in_first.min(self.len - n);
            self.dropped += drop;
            self.len -= drop;
            if self.dropped == first.lines.len() {
                self.blocks.pop_front();
                self.dropped = 0;
            }
        }
    }

    /// Appends the lines' JSON, comma-separated and without the list's brackets, to `out` as
    /// shared pieces: the full blocks' encodings are made once and shared by every version
    /// holding them; only the first block (when lines of it were dropped) and the last (when
    /// not full) are encoded here. Few pieces, none tiny: each is a buffer to write.
    pub fn json_pieces(&self, out: &mut Vec<Bytes>) {
        let mut first = true;
        for (i, block) in self.blocks.iter().enumerate() {
            let whole = i > 0 || self.dropped == 0;
            let piece = if whole && block.is_full() {
                block.full_json()
            } else {
                let from = if i == 0 { self.dropped } else { 0 };
                joined(&block.lines[from..])
            };
            if piece.is_empty() {
                continue;
            }
            // Each line comes after a comma: the first one's is cut off (a shared slice).
            out.push(if first { piece.slice(1..) } else { piece });
            first = false;
        }
    }
}

impl std::ops::Index<usize> for TaskOutput {
    type Output = OutputLine;
    fn index(&self, index: usize) -> &OutputLine {
        match self.get(index) {
            Some(line) => line,
            None => panic!("output line {index} of {}", self.len),
        }
    }
}

impl Extend<OutputLine> for TaskOutput {
    fn extend<I: IntoIterator<Item = OutputLine>>(&mut self, lines: I) {
        for line in lines {
            self.push(line);
        }
    }
}

impl FromIterator<OutputLine> for TaskOutput {
    fn from_iter<I: IntoIterator<Item = OutputLine>>(lines: I) -> TaskOutput {
        let mut out = TaskOutput::default();
        out.extend(lines);
        out
    }
}

impl<'a> FromIterator<&'a str> for TaskOutput {
    fn from_iter<I: IntoIterator<Item = &'a str>>(lines: I) -> TaskOutput {
        lines.into_iter().map(OutputLine::from).collect()
    }
}

impl PartialEq for TaskOutput {
    fn eq(&self, other: &TaskOutput) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<const N: usize> PartialEq<[&str; N]> for TaskOutput {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.len == N && self.iter().zip(other).all(|(l, o)| l == o)
    }
}

impl fmt::Debug for TaskOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for TaskOutput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for TaskOutput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TaskOutput, D::Error> {
        Ok(Vec::<OutputLine>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(range: std::ops::Range<usize>) -> TaskOutput {
        range.map(|i| OutputLine::from(i.to_string())).collect()
    }

    fn texts(out: &TaskOutput) -> Vec<String> {
        out.iter().map(|l| l.to_string()).collect()
    }

    fn pieces_joined(out: &TaskOutput) -> String {
        let mut pieces = Vec::new();
        out.json_pieces(&mut pieces);
        let bytes: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        format!("[{}]", String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn lines_read_back_in_order_across_blocks_and_after_dropping() {
        for total in [
            0,
            1,
            BLOCK_LINES - 1,
            BLOCK_LINES,
            BLOCK_LINES + 1,
            5 * BLOCK_LINES + 7,
        ] {
            for keep in [
                0,
                1,
                BLOCK_LINES - 1,
                BLOCK_LINES,
                3 * BLOCK_LINES + 2,
                total,
            ] {
                let mut out = numbered(0..total);
                out.keep_newest(keep);
                let want: Vec<String> = (total.saturating_sub(keep)..total)
                    .map(|i| i.to_string())
                    .collect();
                assert_eq!(texts(&out), want, "{total} lines, {keep} kept");
                assert_eq!(out.len(), want.len());
                assert_eq!(out.last().map(|l| l.to_string()), want.last().cloned());
                for (i, w) in want.iter().enumerate() {
                    assert_eq!(out[i].as_str(), w.as_str());
                }
                assert!(out.get(want.len()).is_none());
                let rev: Vec<String> = out.iter().rev().map(|l| l.to_string()).collect();
                assert_eq!(rev, want.iter().rev().cloned().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn the_pieces_are_the_lines_encoded_at_every_stage_of_growth() {
        let mut out = TaskOutput::default();
        let mut earlier = Vec::new();
        for i in 0..(4 * BLOCK_LINES + 3) {
            // A version is a copy changed: the old one must keep reading as it was.
            earlier.push((out.clone(), texts(&out)));
            out.push(OutputLine::from(format!("line \"{i}\"")));
            out.keep_newest(2 * BLOCK_LINES + 5);
            let want = serde_json::to_string(&texts(&out)).unwrap();
            assert_eq!(pieces_joined(&out), want, "after {i}");
            assert_eq!(serde_json::to_string(&out).unwrap(), want);
        }
        for (old, was) in earlier {
            assert_eq!(texts(&old), was);
            assert_eq!(pieces_joined(&old), serde_json::to_string(&was).unwrap());
        }
    }

    #[test]
    fn a_copy_shares_the_full_blocks_and_their_encoding() {
        let out = numbered(0..3 * BLOCK_LINES + 1);
        let mut first = Vec::new();
        out.json_pieces(&mut first);
        let mut next = out.clone();
        next.push(OutputLine::from("new"));
        let mut second = Vec::new();
        next.json_pieces(&mut second);
        // Three full blocks and the last: the full blocks are the same bytes, not copies.
        assert_eq!((first.len(), second.len()), (4, 4));
        for i in 0..3 {
            assert_eq!(first[i].as_ptr(), second[i].as_ptr(), "piece {i}");
        }
        assert_eq!(texts(&out).len(), 3 * BLOCK_LINES + 1);
    }

    #[test]
    fn a_task_with_a_few_lines_holds_no_room_for_a_whole_block() {
        let out = numbered(0..3);
        assert!(out.blocks[0].lines.capacity() < BLOCK_LINES);
    }

    #[test]
    fn it_reads_and_writes_as_a_list_of_strings() {
        let out: TaskOutput = ["a", "b\"c", ""].into_iter().collect();
        let json = serde_json::to_string(&out).unwrap();
        assert_eq!(json, r#"["a","b\"c",""]"#);
        let back: TaskOutput = serde_json::from_str(&json).unwrap();
        assert_eq!(back, out);
        assert_eq!(back, ["a", "b\"c", ""]);
        assert_ne!(back, ["a", "b\"c"]);
        assert_eq!(format!("{back:?}"), r#"["a", "b\"c", ""]"#);
    }
}
