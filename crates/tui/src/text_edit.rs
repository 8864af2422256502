//! The text editor behind every input of the TUI: one-line (names, directories, the filter,
//! messages) or multi-line (a task's description).
//!
//! Line breaks are never lost silently: a multi-line editor keeps them (typed with Alt-Enter
//! or Ctrl-j, or pasted as `\r\n`, `\r` or `\n`); a one-line editor turns each run of them
//! into one space and says how many it joined, so the caller can tell the user.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthChar;

/// Spaces a pasted or typed tab becomes (a tab has no width on our screen).
const TAB: &str = "    ";

/// What an editor did with an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edited {
    /// Handled.
    Done,
    /// Not an editing key (Up on the first line, Enter, Tab…): the caller decides.
    NotMine,
    /// A one-line editor got line breaks; this many were turned into spaces (or, typed,
    /// ignored).
    JoinedLines(usize),
}

/// An editor: insert, delete, move; Ctrl-u / Ctrl-w / Ctrl-a / Ctrl-e act on the cursor's line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    text: String,
    /// Cursor position in characters.
    cursor: usize,
    multi_line: bool,
}

/// Whether a key asks for a new line: Alt-Enter (most terminals), Shift-Enter or Ctrl-Enter
/// (terminals that report them), Ctrl-j (a raw line feed).
pub fn is_new_line_key(key: &KeyEvent) -> bool {
    let m = key.modifiers;
    match key.code {
        KeyCode::Enter => {
            m.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT | KeyModifiers::CONTROL)
        }
        KeyCode::Char('j') => m == KeyModifiers::CONTROL,
        _ => false,
    }
}

/// Normalises line breaks (`\r\n`, `\r` → `\n`), turns tabs into spaces and drops other
/// control characters.
fn clean(s: &str) -> String {
    let s = s.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str(TAB),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

impl LineEdit {
    /// A one-line editor holding `text` (line breaks become spaces), cursor at the end.
    pub fn new(text: &str) -> Self {
        let mut e = LineEdit::default();
        e.insert_str(text);
        e
    }

    /// An empty editor that keeps line breaks.
    pub fn multi_line() -> Self {
        LineEdit {
            multi_line: true,
            ..Default::default()
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Cursor position in characters from the start of the text.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_multi_line(&self) -> bool {
        self.multi_line
    }

    fn chars(&self) -> Vec<char> {
        self.text.chars().collect()
    }

    fn byte_at(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map(|(i, _)| i)
            .unwrap_or(self.text.len())
    }

    /// Start and end (in characters) of the line the cursor is on.
    fn line_bounds(&self) -> (usize, usize) {
        let chars = self.chars();
        let start = chars[..self.cursor]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |i| i + 1);
        let end = chars[self.cursor..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(chars.len(), |i| self.cursor + i);
        (start, end)
    }

    fn remove(&mut self, from: usize, to: usize) {
        let (a, b) = (self.byte_at(from), self.byte_at(to));
        self.text.replace_range(a..b, "");
        self.cursor = from;
    }

    /// Inserts text at the cursor (a paste). A one-line editor joins lines with a space.
    pub fn insert_str(&mut self, s: &str) -> Edited {
        let mut s = clean(s);
        let mut joined = 0;
        if !self.multi_line && s.contains('\n') {
            let parts: Vec<&str> = s.split('\n').filter(|l| !l.trim().is_empty()).collect();
            joined = s.matches('\n').count();
            s = parts.join(" ");
        }
        let at = self.byte_at(self.cursor);
        self.text.insert_str(at, &s);
        self.cursor += s.chars().count();
        if joined > 0 {
            Edited::JoinedLines(joined)
        } else {
            Edited::Done
        }
    }

    /// Moves the cursor one line up (`-1`) or down (`1`), keeping its column where the line
    /// is long enough. `false` at the first / last line.
    fn move_line(&mut self, delta: isize) -> bool {
        let chars = self.chars();
        let (start, end) = self.line_bounds();
        let col = self.cursor - start;
        let (new_start, new_end) = if delta < 0 {
            if start == 0 {
                return false;
            }
            let prev_end = start - 1;
            let prev_start = chars[..prev_end]
                .iter()
                .rposition(|&c| c == '\n')
                .map_or(0, |i| i + 1);
            (prev_start, prev_end)
        } else {
            if end == chars.len() {
                return false;
            }
            let next_start = end + 1;
            let next_end = chars[next_start..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |i| next_start + i);
            (next_start, next_end)
        };
        self.cursor = (new_start + col).min(new_end);
        true
    }

    /// Handles an editing key.
    pub fn handle(&mut self, key: &KeyEvent) -> Edited {
        if is_new_line_key(key) {
            if !self.multi_line {
                return Edited::JoinedLines(1);
            }
            return self.insert_str("\n");
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let len = self.text.chars().count();
        let (line_start, line_end) = self.line_bounds();
        match key.code {
            KeyCode::Char('u') if ctrl => self.remove(line_start, self.cursor),
            KeyCode::Char('w') if ctrl => {
                let chars = self.chars();
                let mut start = self.cursor;
                while start > line_start && chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > line_start && chars[start - 1] != ' ' {
                    start -= 1;
                }
                self.remove(start, self.cursor);
            }
            KeyCode::Char('a') if ctrl => self.cursor = line_start,
            KeyCode::Char('e') if ctrl => self.cursor = line_end,
            KeyCode::Char(c) if !ctrl && !alt => {
                let at = self.byte_at(self.cursor);
                self.text.insert(at, c);
                self.cursor += 1;
            }
            KeyCode::Backspace if self.cursor > 0 => self.remove(self.cursor - 1, self.cursor),
            KeyCode::Delete if self.cursor < len => {
                let at = self.cursor;
                self.remove(at, at + 1);
            }
            KeyCode::Backspace | KeyCode::Delete => {}
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(len),
            KeyCode::Home => self.cursor = line_start,
            KeyCode::End => self.cursor = line_end,
            KeyCode::Up if self.multi_line => {
                if !self.move_line(-1) {
                    return Edited::NotMine;
                }
            }
            KeyCode::Down if self.multi_line => {
                if !self.move_line(1) {
                    return Edited::NotMine;
                }
            }
            _ => return Edited::NotMine,
        }
        Edited::Done
    }

    /// The text as screen rows `width` columns wide (long lines wrap), and where the cursor
    /// is among them (row, column).
    pub fn rows(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(1);
        let mut rows = vec![String::new()];
        let mut w = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.text.chars().enumerate() {
            if i == self.cursor {
                cursor = (rows.len() - 1, w);
            }
            if c == '\n' {
                rows.push(String::new());
                w = 0;
                continue;
            }
            let cw = c.width().unwrap_or(0);
            if w + cw > width {
                rows.push(String::new());
                w = 0;
            }
            if let Some(last) = rows.last_mut() {
                last.push(c);
            }
            w += cw;
        }
        if self.cursor >= self.text.chars().count() {
            cursor = (rows.len() - 1, w);
        }
        // A cursor past the last column goes to the start of the next row.
        if cursor.1 >= width {
            if cursor.0 + 1 == rows.len() {
                rows.push(String::new());
            }
            cursor = (cursor.0 + 1, 0);
        }
        (rows, cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn one_line_basics() {
        let mut e = LineEdit::new("héllo wörld");
        e.handle(&key(KeyCode::Backspace));
        assert_eq!(e.text(), "héllo wörl");
        e.handle(&KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(e.text(), "héllo ");
        e.handle(&key(KeyCode::Home));
        e.handle(&key(KeyCode::Char('>')));
        assert_eq!(e.text(), ">héllo ");
        e.handle(&key(KeyCode::Delete));
        assert_eq!(e.text(), ">éllo ");
    }

    #[test]
    fn one_line_joins_pasted_lines_and_says_so() {
        let mut e = LineEdit::default();
        assert_eq!(e.insert_str("a\r\nb\rc\n\nd"), Edited::JoinedLines(4));
        assert_eq!(e.text(), "a b c d");
        let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(e.handle(&alt_enter), Edited::JoinedLines(1));
        assert_eq!(e.text(), "a b c d");
    }

    #[test]
    fn multi_line_keeps_every_kind_of_line_break() {
        let mut e = LineEdit::multi_line();
        assert_eq!(e.insert_str("one\r\ntwo\rthree\nfour\tx"), Edited::Done);
        assert_eq!(e.text(), "one\ntwo\nthree\nfour    x");
        e.handle(&KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
        e.handle(&key(KeyCode::Char('5')));
        e.handle(&KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
        assert_eq!(e.text(), "one\ntwo\nthree\nfour    x\n5\n");
        // Plain Enter is not an editing key: the form submits.
        assert_eq!(e.handle(&key(KeyCode::Enter)), Edited::NotMine);
    }

    #[test]
    fn cursor_moves_across_lines() {
        let mut e = LineEdit::multi_line();
        e.insert_str("abcdef\nxy\nlast line");
        // On the last line: Down is not ours, Up keeps the column where it can.
        assert_eq!(e.handle(&key(KeyCode::Down)), Edited::NotMine);
        assert_eq!(e.handle(&key(KeyCode::Up)), Edited::Done);
        assert_eq!(e.cursor(), "abcdef\nxy".chars().count());
        e.handle(&key(KeyCode::Up));
        assert_eq!(e.cursor(), 2);
        assert_eq!(e.handle(&key(KeyCode::Up)), Edited::NotMine);
        // Ctrl-e / Ctrl-u act on the line only; Left from a line's start goes to the one above.
        e.handle(&KeyEvent::new(KeyCode::Char('e'), KeyModifiers::CONTROL));
        assert_eq!(e.cursor(), 6);
        e.handle(&key(KeyCode::Down));
        e.handle(&KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(e.text(), "abcdef\n\nlast line");
        e.handle(&key(KeyCode::Left));
        e.handle(&key(KeyCode::Char('!')));
        assert_eq!(e.text(), "abcdef!\n\nlast line");
    }

    #[test]
    fn rows_wrap_and_place_the_cursor() {
        let mut e = LineEdit::multi_line();
        e.insert_str("abcdefg\n修修x\n");
        let (rows, cursor) = e.rows(4);
        assert_eq!(rows, ["abcd", "efg", "修修", "x", ""]);
        assert_eq!(cursor, (4, 0));
        e.handle(&key(KeyCode::Up));
        let (_, cursor) = e.rows(4);
        assert_eq!(cursor, (2, 0));
        let mut full = LineEdit::multi_line();
        full.insert_str("abcd");
        assert_eq!(full.rows(4), (vec!["abcd".into(), String::new()], (1, 0)));
    }
}
