//! ANSI-stripping line splitter: raw terminal bytes in, complete plain-text lines out.
//!
//! The current line is kept as a row of characters with a cursor, so carriage returns behave
//! as on a terminal: `progress 10%\rprogress 20%\n` yields `progress 20%`, and `abc\rX\n`
//! yields `Xbc`. Backspace moves the cursor left; `CSI K` erases, `CSI C/D/G` move the cursor,
//! `CSI P/X` delete/erase characters. Every other escape sequence (CSI, OSC, DCS, SOS, PM,
//! APC, two- and three-byte escapes) is removed, even when split across chunks. UTF-8
//! sequences split across chunks are reassembled; invalid bytes become U+FFFD.
//! A line longer than the cap is emitted in pieces, so memory stays bounded.
//!
//! Rows redrawn in place are not new lines. A program that moves the cursor up over rows it
//! printed (`CSI A`, `CSI F`: a coding agent's working block, a multi-line progress display)
//! and writes them again is rewriting them, as `\r` rewrites a line: the rewrites are held,
//! each row's newest replacing the one before, and handed out once, in the rows' order, when
//! output goes on below them, when the program goes quiet ([`LineSplitter::take_held`]), when
//! the cursor is placed where the splitter cannot follow (`CSI H`, `CSI d`, a scroll region),
//! or at the end. A spinner redrawn ten times a second gives its lines once, not twenty a
//! second; nothing the program left on its rows is lost.

/// Default cap on one line, in characters.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024;

/// Longest CSI parameter string we keep (longer ones are still consumed, just not parsed).
const MAX_CSI_PARAMS: usize = 64;

/// How far above the lowest row it reached the cursor is followed: more rows than any
/// terminal shows, and a bound on the rewrites held (each at most a line's cap).
const MAX_HELD_ROWS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Esc,
    /// `ESC` + intermediate(s), waiting for the final byte (e.g. `ESC ( B`).
    EscInter,
    Csi,
    Osc,
    OscEsc,
    /// DCS / SOS / PM / APC string, terminated by ST (`ESC \`) or BEL.
    Str,
    StrEsc,
}

/// Splits a byte stream into ANSI-stripped lines. See the module docs.
#[derive(Debug)]
pub struct LineSplitter {
    state: State,
    line: Vec<char>,
    col: usize,
    utf8: [u8; 4],
    utf8_len: usize,
    utf8_need: usize,
    csi: Vec<u8>,
    csi_private: bool,
    max_line: usize,
    /// Whether `line` may hold a character beyond ASCII since it was last emptied; without
    /// one the line is turned into a `String` a byte per character.
    wide_chars: bool,
    /// Rows the cursor is above the lowest row output has reached (the frontier).
    up: usize,
    /// Lines completed at the frontier, up to [`MAX_HELD_ROWS`]: how far up the cursor can
    /// have gone over rows of this output.
    rows_done: usize,
    /// Rewrites of rows above the frontier not handed out yet: `held[d - 1]` is row `d` above.
    held: Vec<Option<String>>,
    /// The frontier's partial line, kept while the cursor is above it.
    frontier_line: Option<(Vec<char>, bool)>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE)
    }
}

impl LineSplitter {
    /// A splitter whose lines are capped at `max_line` characters (at least 1).
    pub fn new(max_line: usize) -> Self {
        Self {
            state: State::Ground,
            line: Vec::new(),
            col: 0,
            utf8: [0; 4],
            utf8_len: 0,
            utf8_need: 0,
            csi: Vec::new(),
            csi_private: false,
            max_line: max_line.max(1),
            wide_chars: false,
            up: 0,
            rows_done: 0,
            held: Vec::new(),
            frontier_line: None,
        }
    }

    /// Feeds bytes; complete lines are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground && self.utf8_need == 0 {
                // Fast paths for the common cases, taken whole instead of byte by byte.
                if let Some(used) = self.text_run(&bytes[i..]) {
                    i += used;
                    continue;
                }
                if let Some(used) = skip_sgr(&bytes[i..]) {
                    i += used;
                    continue;
                }
            }
            self.byte(bytes[i], out);
            i += 1;
        }
    }

    /// Plain text (printable ASCII and complete UTF-8 characters) appended at the end of the
    /// line: returns how many bytes it took, or `None` to go byte by byte.
    fn text_run(&mut self, bytes: &[u8]) -> Option<usize> {
        if self.col != self.line.len() {
            return None;
        }
        let room = self.max_line.saturating_sub(self.col);
        // Printable ASCII, by far the most of what programs print: a byte is a character.
        let ascii = printable_ascii_prefix(bytes);
        if ascii > 0 {
            let take = ascii.min(room);
            self.line
                .extend(bytes[..take].iter().map(|&b| char::from(b)));
            self.col += take;
            return (take > 0).then_some(take);
        }
        let run = bytes
            .iter()
            .take_while(|&&b| b >= 0x20 && b != 0x7f)
            .count();
        let text = match std::str::from_utf8(&bytes[..run]) {
            Ok(t) => t,
            // A character split across reads (or a bad byte): take what is whole.
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?,
        };
        let mut used = 0;
        let mut taken = 0;
        for c in text.chars() {
            if is_c1(c) {
                // A control, as the byte path treats it: dropped.
                used += c.len_utf8();
                continue;
            }
            if taken == room {
                break;
            }
            self.wide_chars |= !c.is_ascii();
            self.line.push(c);
            taken += 1;
            used += c.len_utf8();
        }
        self.col += taken;
        (used > 0).then_some(used)
    }
    /// Convenience: feeds bytes and returns the lines completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        self.feed(bytes, &mut out);
        out
    }

    /// Ends the stream: returns the rewrites still held and the last partial line, if it
    /// has any text.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if self.utf8_need > 0 {
            self.utf8_need = 0;
            self.utf8_len = 0;
            self.put(char::REPLACEMENT_CHARACTER, &mut out);
        }
        self.state = State::Ground;
        self.lose_track(&mut out);
        let line = self.take_line();
        if !line.is_empty() {
            out.push(line);
        }
        out
    }

    /// The rewrites of rows above the frontier held so far, in the rows' order: called when
    /// the program has gone quiet, so what it left on screen is output without waiting for
    /// more. The rows stay where they are; rewritten again, they are held again.
    pub fn take_held(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.release_held(&mut out);
        out
    }

    fn release_held(&mut self, out: &mut Vec<String>) {
        out.extend(self.held.drain(..).rev().flatten());
    }

    /// A line ended at the cursor's row: a new line at the frontier (after the rewrites held
    /// above it), or a rewrite of a row above it, held.
    fn complete_line(&mut self, out: &mut Vec<String>) {
        let line = self.take_line();
        if self.up == 0 {
            self.release_held(out);
            out.push(line);
            self.rows_done = (self.rows_done + 1).min(MAX_HELD_ROWS);
            return;
        }
        self.hold(line);
        self.up -= 1;
        self.enter_row();
    }

    /// Keeps `line` as the newest text of the row the cursor is on, above the frontier.
    fn hold(&mut self, line: String) {
        let d = self.up;
        if self.held.len() < d {
            self.held.resize(d, None);
        }
        self.held[d - 1] = Some(line);
    }

    /// Leaves the cursor's row for another: above the frontier, what was written on it is
    /// kept (a row passed over without a change stays as it was).
    fn leave_row(&mut self) {
        let line = self.take_line();
        if self.up == 0 {
            self.frontier_line = Some((line.chars().collect(), !line.is_ascii()));
        } else if !line.is_empty() || self.held.get(self.up - 1).is_some_and(Option::is_some) {
            self.hold(line);
        }
    }

    /// Takes up the text of the row the cursor has come to, to be edited there.
    fn enter_row(&mut self) {
        let known = if self.up == 0 {
            self.frontier_line.take()
        } else {
            self.held
                .get(self.up - 1)
                .and_then(Option::as_ref)
                .map(|l| (l.chars().collect(), !l.is_ascii()))
        };
        if let Some((chars, wide)) = known {
            self.line = chars;
            self.wide_chars = wide;
        }
    }

    /// The cursor goes up `n` rows (no higher than the first row of this output).
    fn move_up(&mut self, n: usize) {
        let n = n.min(self.rows_done.saturating_sub(self.up));
        if n == 0 {
            return;
        }
        let col = self.col;
        self.leave_row();
        self.up += n;
        self.enter_row();
        self.col = col;
    }

    /// The cursor goes down `n` rows, no lower than the frontier (below it nothing was
    /// written, and a line there is simply the next one).
    fn move_down(&mut self, n: usize) {
        let n = n.min(self.up);
        if n == 0 {
            return;
        }
        let col = self.col;
        self.leave_row();
        self.up -= n;
        self.enter_row();
        self.col = col;
    }

    /// The cursor was placed where rows cannot be followed: what is held is handed out and
    /// the cursor is taken to be at the frontier again.
    fn lose_track(&mut self, out: &mut Vec<String>) {
        if self.up == 0 && self.held.is_empty() {
            return;
        }
        if self.up > 0 {
            self.leave_row();
            self.up = 0;
            self.enter_row();
            // Text goes on after the frontier's, as it does when the cursor never left it.
            self.col = self.line.len();
        }
        self.release_held(out);
    }

    fn take_line(&mut self) -> String {
        let end = self
            .line
            .iter()
            .rposition(|c| !c.is_whitespace())
            .map_or(0, |p| p + 1);
        let text = &self.line[..end];
        let s = if self.wide_chars {
            text.iter().collect()
        } else {
            // Every character is ASCII: one byte each, copied without encoding.
            let bytes: Vec<u8> = text.iter().map(|&c| c as u8).collect();
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        };
        self.line.clear();
        self.wide_chars = false;
        self.col = 0;
        s
    }

    fn emit(&mut self, out: &mut Vec<String>) {
        let line = self.take_line();
        out.push(line);
    }

    /// Writes a character at the cursor, as a terminal would.
    fn put(&mut self, c: char, out: &mut Vec<String>) {
        if is_c1(c) {
            return;
        }
        if self.col >= self.max_line {
            // Flood without a newline: hand out what we have and start over.
            self.release_held(out);
            self.emit(out);
        }
        self.wide_chars |= !c.is_ascii();
        if self.col < self.line.len() {
            self.line[self.col] = c;
        } else {
            while self.line.len() < self.col {
                self.line.push(' ');
            }
            self.line.push(c);
        }
        self.col += 1;
    }

    fn byte(&mut self, b: u8, out: &mut Vec<String>) {
        match self.state {
            State::Ground => self.ground(b, out),
            State::Esc => match b {
                b'[' => {
                    self.csi.clear();
                    self.csi_private = false;
                    self.state = State::Csi;
                }
                b']' => self.state = State::Osc,
                b'P' | b'X' | b'^' | b'_' => self.state = State::Str,
                0x1b => {}
                0x20..=0x2f => self.state = State::EscInter,
                0x18 | 0x1a => self.state = State::Ground,
                _ => self.state = State::Ground,
            },
            State::EscInter => match b {
                0x20..=0x2f => {}
                0x1b => self.state = State::Esc,
                _ => self.state = State::Ground,
            },
            State::Csi => match b {
                0x30..=0x3f => {
                    if matches!(b, b'<' | b'=' | b'>' | b'?') {
                        self.csi_private = true;
                    }
                    if self.csi.len() < MAX_CSI_PARAMS {
                        self.csi.push(b);
                    }
                }
                0x20..=0x2f => self.csi_private = true,
                0x40..=0x7e => {
                    self.state = State::Ground;
                    if !self.csi_private {
                        self.csi_dispatch(b, out);
                    }
                }
                0x1b => self.state = State::Esc,
                0x18 | 0x1a => self.state = State::Ground,
                _ => {}
            },
            State::Osc => match b {
                0x07 | 0x18 | 0x1a => self.state = State::Ground,
                0x1b => self.state = State::OscEsc,
                _ => {}
            },
            State::OscEsc => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    self.state = State::Esc;
                    self.byte(b, out);
                }
            }
            State::Str => match b {
                0x07 | 0x18 | 0x1a => self.state = State::Ground,
                0x1b => self.state = State::StrEsc,
                _ => {}
            },
            State::StrEsc => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    self.state = State::Esc;
                    self.byte(b, out);
                }
            }
        }
    }

    fn ground(&mut self, b: u8, out: &mut Vec<String>) {
        if self.utf8_need > 0 {
            if (0x80..=0xbf).contains(&b) {
                self.utf8[self.utf8_len] = b;
                self.utf8_len += 1;
                self.utf8_need -= 1;
                if self.utf8_need == 0 {
                    let c = std::str::from_utf8(&self.utf8[..self.utf8_len])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .unwrap_or(char::REPLACEMENT_CHARACTER);
                    self.utf8_len = 0;
                    self.put(c, out);
                }
                return;
            }
            // Truncated sequence: replace it and handle this byte afresh.
            self.utf8_need = 0;
            self.utf8_len = 0;
            self.put(char::REPLACEMENT_CHARACTER, out);
        }
        match b {
            b'\n' | 0x0b | 0x0c => self.complete_line(out),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => self.put('\t', out),
            0x1b => self.state = State::Esc,
            0x00..=0x1f | 0x7f => {}
            0x20..=0x7e => self.put(char::from(b), out),
            0xc2..=0xdf => self.start_utf8(b, 1),
            0xe0..=0xef => self.start_utf8(b, 2),
            0xf0..=0xf4 => self.start_utf8(b, 3),
            _ => self.put(char::REPLACEMENT_CHARACTER, out),
        }
    }

    fn start_utf8(&mut self, lead: u8, need: usize) {
        self.utf8[0] = lead;
        self.utf8_len = 1;
        self.utf8_need = need;
    }

    fn csi_param(&self, index: usize, default: usize) -> usize {
        let params = std::str::from_utf8(&self.csi).unwrap_or("");
        params
            .split(';')
            .nth(index)
            .and_then(|p| p.split(':').next())
            .and_then(|p| p.parse::<usize>().ok())
            .filter(|&n| n != 0 || default == 0)
            .unwrap_or(default)
    }

    fn csi_dispatch(&mut self, final_byte: u8, out: &mut Vec<String>) {
        let cap = self.max_line;
        match final_byte {
            b'K' => match self.csi_param(0, 0) {
                0 => self.line.truncate(self.col),
                1 => {
                    let end = (self.col + 1).min(self.line.len());
                    for c in &mut self.line[..end] {
                        *c = ' ';
                    }
                }
                _ => {
                    self.line.clear();
                    self.wide_chars = false;
                }
            },
            b'A' => self.move_up(self.csi_param(0, 1)),
            b'B' => self.move_down(self.csi_param(0, 1)),
            b'E' => {
                self.move_down(self.csi_param(0, 1));
                self.col = 0;
            }
            b'F' => {
                self.move_up(self.csi_param(0, 1));
                self.col = 0;
            }
            // Absolute rows and scroll regions: rows can no longer be followed.
            b'H' | b'f' | b'd' | b'r' => self.lose_track(out),
            b'C' => self.col = (self.col + self.csi_param(0, 1)).min(cap),
            b'D' => self.col = self.col.saturating_sub(self.csi_param(0, 1)),
            b'G' => self.col = (self.csi_param(0, 1) - 1).min(cap),
            b'P' => {
                let n = self.csi_param(0, 1);
                if self.col < self.line.len() {
                    let end = (self.col + n).min(self.line.len());
                    self.line.drain(self.col..end);
                }
            }
            b'X' => {
                let n = self.csi_param(0, 1);
                let end = (self.col + n).min(self.line.len());
                if self.col < end {
                    for c in &mut self.line[self.col..end] {
                        *c = ' ';
                    }
                }
            }
            _ => {}
        }
    }
}

/// How many bytes at the start of `bytes` are printable ASCII (0x20–0x7e). Looks at 16
/// bytes at a time without branching on each (the compiler vectorises that), then byte by
/// byte: this scan runs over nearly every byte a session prints.
fn printable_ascii_prefix(bytes: &[u8]) -> usize {
    let printable = |b: u8| b.wrapping_sub(0x20) < 0x5f;
    let mut n = 0;
    for block in bytes.chunks_exact(16) {
        if !block.iter().fold(true, |all, &b| all & printable(b)) {
            break;
        }
        n += 16;
    }
    n + bytes[n..].iter().take_while(|&&b| printable(b)).count()
}

/// A C1 control character (U+0080–U+009F) sent as UTF-8: a control, never text in a line.
fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// An SGR sequence (`ESC [ params m`: colours and attributes) whole within `bytes`: it never
/// changes the text, so it is skipped at once. Returns its length.
fn skip_sgr(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 3 || bytes[0] != 0x1b || bytes[1] != b'[' {
        return None;
    }
    let params = bytes[2..]
        .iter()
        .take_while(|b| matches!(b, b'0'..=b'9' | b';' | b':'))
        .count();
    (bytes.get(2 + params) == Some(&b'm')).then_some(3 + params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> (Vec<String>, Option<String>) {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        let mut rest = s.finish();
        let last = rest.pop();
        out.extend(rest);
        (out, last)
    }

    /// A coding agent's working block: a spinner line and a detail line redrawn in place
    /// under a title, with a status bar left unfinished on the row below.
    fn working_block(second: u32) -> String {
        format!(
            "\x1b[2A\r\x1b[2K\x1b[38;5;174m*\x1b[0m Working ({second}s)\r\n\
             \x1b[2K  Reading src/lib.rs\r\n\x1b[2K\x1b[7m ? for shortcuts \x1b[0m"
        )
    }

    #[test]
    fn rows_redrawn_in_place_are_output_once_with_their_last_text() {
        let mut s = LineSplitter::default();
        let mut out = s.push(b"Refactoring\r\n\r\n\r\n");
        for second in 0..50 {
            out.extend(s.push(working_block(second).as_bytes()));
        }
        assert_eq!(out, ["Refactoring", "", ""], "redraws are not new lines");
        // Gone quiet: what the rows show now.
        assert_eq!(s.take_held(), ["* Working (49s)", "  Reading src/lib.rs"]);
        assert!(s.take_held().is_empty(), "handed out once");
        // Redrawn again, then output goes on below the block.
        out.clear();
        s.feed(working_block(50).as_bytes(), &mut out);
        s.feed(b"\r\x1b[2KDone.\r\n", &mut out);
        assert_eq!(out, ["* Working (50s)", "  Reading src/lib.rs", "Done."]);
        assert!(s.finish().is_empty());
    }

    #[test]
    fn rows_rewritten_then_followed_by_new_ones_keep_their_order() {
        let (lines, rest) = split(&[b"1\n2\n3\n\x1b[2AX\nY\nZ\n"]);
        assert_eq!(lines, ["1", "2", "3", "X", "Y", "Z"]);
        assert_eq!(rest, None);
        // An edit of part of a row keeps the rest of its newest text.
        let (lines, _) = split(&[b"abc\n\x1b[1AXY\n\x1b[1A\x1b[2Cz\nnext\n"]);
        assert_eq!(lines, ["abc", "XYz", "next"]);
    }

    #[test]
    fn the_cursor_is_followed_no_higher_than_what_was_printed() {
        // Up 5 over one printed row: only that row is rewritten.
        let (lines, rest) = split(&[b"a\n\x1b[5Ab\nc\n"]);
        assert_eq!(lines, ["a", "b", "c"]);
        assert_eq!(rest, None);
        // Up and back down without writing: the rows stay as printed, nothing repeated.
        let (lines, rest) = split(&[b"a\nb\nprompt\x1b[2A\x1b[2Bmore\n"]);
        assert_eq!(lines, ["a", "b", "promptmore"]);
        assert_eq!(rest, None);
    }

    #[test]
    fn placing_the_cursor_where_rows_cannot_be_followed_hands_out_what_is_held() {
        // A full-screen program or a scroll region: nothing held is lost or reordered.
        let (lines, rest) = split(&[b"a\nb\n\x1b[2AA\nB\x1b[5;1Hafter\n"]);
        assert_eq!(lines, ["a", "b", "A", "B", "after"]);
        assert_eq!(rest, None);
        // The end of the output hands out the held rows, then the unfinished line.
        let (lines, rest) = split(&[b"a\nb\nstatus\x1b[2A\rA\n"]);
        assert_eq!(lines, ["a", "b", "A"]);
        assert_eq!(rest.as_deref(), Some("status"));
    }

    #[test]
    fn what_is_held_stays_bounded() {
        let mut s = LineSplitter::new(100);
        let mut out = Vec::new();
        for _ in 0..1_000 {
            s.feed(&[b'x'; 99], &mut out);
            s.feed(b"\n", &mut out);
        }
        s.feed(b"\x1b[100000A", &mut out);
        let ys = |out: &[String]| out.iter().filter(|l| l.starts_with('y')).count();
        for n in 0..1_000 {
            s.feed(&[b'y'; 99], &mut out);
            s.feed(b"\n", &mut out);
            if n < MAX_HELD_ROWS {
                assert_eq!(ys(&out), 0, "a rewrite of a row printed before");
            }
            assert!(s.held.len() <= MAX_HELD_ROWS, "{}", s.held.len());
        }
        assert_eq!(ys(&out), 1_000, "every y line is output once");
        assert!(s.finish().is_empty());
    }

    #[test]
    fn newline_kinds() {
        let (lines, rest) = split(&[b"a\nb\r\nc"]);
        assert_eq!(lines, vec!["a", "b"]);
        assert_eq!(rest.as_deref(), Some("c"));
    }

    #[test]
    fn carriage_return_overwrites_like_a_terminal() {
        let (lines, _) = split(&[b"progress 10%\rprogress 20%\n"]);
        assert_eq!(lines, vec!["progress 20%"]);
        let (lines, _) = split(&[b"abc\rX\n"]);
        assert_eq!(lines, vec!["Xbc"]);
        // Progress bar split across chunks, with erase-line.
        let (lines, _) = split(&[
            b"[#   ] 25%",
            b"\r\x1b[K[##  ] 50",
            b"%\r\x1b[2K",
            b"done\n",
        ]);
        assert_eq!(lines, vec!["done"]);
    }

    #[test]
    fn backspace_moves_left() {
        let (lines, _) = split(&[b"abd\x08c\n", b"x\x08\x08\x08y\n"]);
        assert_eq!(lines, vec!["abc", "y"]);
    }

    #[test]
    fn csi_colours_and_cursor_moves_removed() {
        let (lines, _) = split(&[
            b"\x1b[1;31mred\x1b[0m and \x1b[38;5;208mor",
            b"ange\x1b[m\n",
        ]);
        assert_eq!(lines, vec!["red and orange"]);
        let (lines, _) = split(&[b"\x1b[?25l\x1b[?1049hhidden\x1b[H\n"]);
        assert_eq!(lines, vec!["hidden"]);
    }

    #[test]
    fn csi_split_across_chunks() {
        let (lines, _) = split(&[b"a\x1b", b"[", b"3", b"2m", b"b\n"]);
        assert_eq!(lines, vec!["ab"]);
    }

    #[test]
    fn osc_titles_and_hyperlinks_removed() {
        let (lines, _) = split(&[
            b"\x1b]0;my title\x07x",
            b"\x1b]8;;http://e.com\x1b\\link\x1b]8;;\x1b",
            b"\\y\n",
        ]);
        assert_eq!(lines, vec!["xlinky"]);
        let (lines, _) = split(&[b"\x1bPq#0;2;0;0;0\x1b\\after\x1b(Bok\x1b7\x1b8\n"]);
        assert_eq!(lines, vec!["afterok"]);
    }

    #[test]
    fn utf8_split_across_chunks() {
        let text = "漢字テスト ✓ 😀\n".as_bytes();
        // Split at every position.
        for i in 0..text.len() {
            let (lines, _) = split(&[&text[..i], &text[i..]]);
            assert_eq!(lines, vec!["漢字テスト ✓ 😀"], "split at {i}");
        }
        // Byte by byte.
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        let (lines, _) = split(&chunks);
        assert_eq!(lines, vec!["漢字テスト ✓ 😀"]);
    }

    #[test]
    fn invalid_utf8_replaced() {
        let (lines, _) = split(&[b"a\xffb\xe6\x97c\n"]);
        assert_eq!(lines, vec!["a\u{fffd}b\u{fffd}c"]);
    }

    #[test]
    fn long_lines_are_capped() {
        let mut s = LineSplitter::new(10);
        let out = s.push(&[b'x'; 35]);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|l| l.len() == 10));
        assert_eq!(s.finish(), ["xxxxx"]);
    }

    #[test]
    fn flood_without_newline_stays_bounded() {
        let mut s = LineSplitter::default();
        let chunk = vec![b'y'; 64 * 1024];
        let mut out = Vec::new();
        for _ in 0..16 {
            s.feed(&chunk, &mut out);
            out.clear();
            assert!(s.line.len() <= DEFAULT_MAX_LINE);
        }
    }

    #[test]
    fn printable_ascii_runs_end_where_they_should() {
        assert_eq!(printable_ascii_prefix(b""), 0);
        assert_eq!(printable_ascii_prefix(b" ~"), 2);
        assert_eq!(printable_ascii_prefix(b"abc\x7fdef"), 3);
        let long = [b"0123456789abcdef".as_slice(); 3].concat();
        assert_eq!(printable_ascii_prefix(&long), 48);
        for stop in [0x1fu8, 0x7f, 0x80, 0xe6, 0x1b, b'\n'] {
            for at in [0, 5, 15, 16, 17, 40] {
                let mut b = long.clone();
                b[at] = stop;
                assert_eq!(printable_ascii_prefix(&b), at, "{stop:#x} at {at}");
            }
        }
    }

    #[test]
    fn wide_characters_then_plain_text() {
        // A line that held wide characters, erased or overwritten, and plain text after.
        let (lines, _) = split(&[
            b"\xe6\xbc\xa2\xe5\xad\x97\x1b[2Kabc\n",
            "é\rabc\n".as_bytes(),
        ]);
        // Erasing leaves the cursor where it was, as on a terminal.
        assert_eq!(lines, vec!["  abc", "abc"]);
        let (lines, _) = split(&["ab✓\rxy\n".as_bytes(), b"plain\n"]);
        assert_eq!(lines, vec!["xy✓", "plain"]);
    }

    #[test]
    fn trailing_spaces_trimmed_and_empty_lines_kept() {
        let (lines, rest) = split(&[b"a   \n\nb"]);
        assert_eq!(lines, vec!["a", ""]);
        assert_eq!(rest.as_deref(), Some("b"));
        let (_, rest) = split(&[b"a\n\x1b[0m"]);
        assert_eq!(rest, None);
    }
}
