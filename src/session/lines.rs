//! ANSI-stripping line splitter: raw terminal bytes in, complete plain-text lines out.
//!
//! The current line is kept as a row of characters with a cursor, so carriage returns behave
//! as on a terminal: `progress 10%\rprogress 20%\n` yields `progress 20%`, and `abc\rX\n`
//! yields `Xbc`. Backspace moves the cursor left; `CSI K` erases, `CSI C/D/G` move the cursor,
//! `CSI P/X` delete/erase characters. Every other escape sequence (CSI, OSC, DCS, SOS, PM,
//! APC, two- and three-byte escapes) is removed, even when split across chunks. UTF-8
//! sequences split across chunks are reassembled; invalid bytes become U+FFFD.
//! A line longer than the cap is emitted in pieces, so memory stays bounded.

/// Default cap on one line, in characters.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024;

/// Longest CSI parameter string we keep (longer ones are still consumed, just not parsed).
const MAX_CSI_PARAMS: usize = 64;

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

    /// Ends the stream: returns the last partial line, if it has any text.
    pub fn finish(&mut self) -> Option<String> {
        if self.utf8_need > 0 {
            self.utf8_need = 0;
            self.utf8_len = 0;
            self.put(char::REPLACEMENT_CHARACTER, &mut Vec::new());
        }
        self.state = State::Ground;
        let line = self.take_line();
        if line.is_empty() { None } else { Some(line) }
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
                        self.csi_dispatch(b);
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
            b'\n' | 0x0b | 0x0c => self.emit(out),
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

    fn csi_dispatch(&mut self, final_byte: u8) {
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
        let rest = s.finish();
        (out, rest)
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
        assert_eq!(s.finish().as_deref(), Some("xxxxx"));
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
