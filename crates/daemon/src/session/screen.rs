//! The session's terminal: a vt100 parser with scrollback, the replies a terminal owes the
//! program (cursor position reports, device attributes, …), and snapshots of the screen.

use serde::Serialize;
use std::hash::{Hash, Hasher};

/// A copy of what the session's terminal shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenSnapshot {
    /// The visible screen: exactly `rows` lines joined by `\n`, each right-trimmed.
    pub screen: String,
    /// The visible screen with its colours and attributes (`contents_formatted`), when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen_ansi: Option<String>,
    /// Cursor position, 0-based (row, col).
    pub cursor: (u16, u16),
    pub cols: u16,
    pub rows: u16,
    /// The last lines that scrolled off the top (oldest first), as many as asked and kept.
    pub scrollback: Vec<String>,
    /// Whether the program is on the alternate screen (vim, less, full-screen TUIs).
    pub alternate_screen: bool,
}

/// Collects the replies a real terminal would send back for queries in the output.
///
/// Answered: DSR status `CSI 5 n` → `CSI 0 n`; cursor position `CSI 6 n` → `CSI row ; col R`
/// (and `CSI ? 6 n` → `CSI ? row ; col R`); primary DA `CSI c` / `CSI 0 c` → `CSI ? 62 ; 22 c`
/// (VT220 with ANSI colour); secondary DA `CSI > c` → `CSI > 0 ; 276 ; 0 c`; text area size
/// `CSI 18 t` → `CSI 8 ; rows ; cols t`; OSC 10/11/12 colour queries → black/white.
/// Sequences split across chunks are handled by the parser's state machine, and the cursor
/// reported is the one after the bytes preceding the query.
#[derive(Debug, Default)]
pub struct Replies {
    out: Vec<u8>,
}

impl vt100::Callbacks for Replies {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        match (i1, c, first) {
            (None, 'n', 5) => self.out.extend_from_slice(b"\x1b[0n"),
            (None, 'n', 6) | (Some(b'?'), 'n', 6) => {
                let (rows, cols) = screen.size();
                let (row, col) = screen.cursor_position();
                let row = row.min(rows.saturating_sub(1)) + 1;
                let col = col.min(cols.saturating_sub(1)) + 1;
                let q = if i1 == Some(b'?') { "?" } else { "" };
                self.out
                    .extend_from_slice(format!("\x1b[{q}{row};{col}R").as_bytes());
            }
            (None, 'c', 0) => self.out.extend_from_slice(b"\x1b[?62;22c"),
            (Some(b'>'), 'c', 0) => self.out.extend_from_slice(b"\x1b[>0;276;0c"),
            (None, 't', 18) => {
                let (rows, cols) = screen.size();
                self.out
                    .extend_from_slice(format!("\x1b[8;{rows};{cols}t").as_bytes());
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _screen: &mut vt100::Screen, params: &[&[u8]]) {
        if let [which, b"?"] = params {
            let colour: &[u8] = match *which {
                b"10" => b"rgb:ffff/ffff/ffff",
                b"11" => b"rgb:0000/0000/0000",
                b"12" => b"rgb:ffff/ffff/ffff",
                _ => return,
            };
            self.out.extend_from_slice(b"\x1b]");
            self.out.extend_from_slice(which);
            self.out.push(b';');
            self.out.extend_from_slice(colour);
            self.out.extend_from_slice(b"\x1b\\");
        }
    }
}

/// The vt100 parser of one session, with its pending replies.
pub struct Terminal {
    parser: vt100::Parser<Replies>,
    /// The end of the last chunk when it stopped inside a UTF-8 character, held for the next:
    /// vte 0.15 misreads a character split across chunks when an invalid byte follows
    /// closely (it drops the text between them), so vt100 only ever gets whole characters.
    held: Vec<u8>,
    /// `(rows, cols)` and scrollback, to start afresh (see [`Terminal::guarded`]).
    size: (u16, u16),
    scrollback: usize,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        f.debug_struct("Terminal")
            .field("rows", &rows)
            .field("cols", &cols)
            .finish()
    }
}

pub use orchestra_proto::terminal::{MIN_SIZE, parser_size};

impl Terminal {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        let (rows, cols) = parser_size(rows, cols);
        Self {
            parser: vt100::Parser::new_with_callbacks(rows, cols, scrollback, Replies::default()),
            held: Vec::new(),
            size: (rows, cols),
            scrollback,
        }
    }

    /// Feeds output; returns the replies owed to the program (empty almost always).
    pub fn process(&mut self, bytes: &[u8]) -> Vec<u8> {
        let joined;
        let bytes = if self.held.is_empty() {
            bytes
        } else {
            self.held.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.held);
            &joined[..]
        };
        let whole = bytes.len() - incomplete_utf8_tail(bytes);
        self.guarded(|p| p.process(&bytes[..whole]));
        self.held.extend_from_slice(&bytes[whole..]);
        std::mem::take(&mut self.parser.callbacks_mut().out)
    }

    /// Runs `f` on the parser; should vt100 panic (0.16 does on some screens, e.g. writing
    /// where a resize cut a wide character in half), the screen starts afresh, blank, at the
    /// same size, rather than the session's output stopping for good.
    fn guarded(&mut self, f: impl FnOnce(&mut vt100::Parser<Replies>)) {
        let parser = &mut self.parser;
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(parser))).is_err() {
            tracing::warn!("the terminal emulator failed on this output; its screen starts afresh");
            let (rows, cols) = self.size;
            self.parser =
                vt100::Parser::new_with_callbacks(rows, cols, self.scrollback, Replies::default());
        }
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = parser_size(rows, cols);
        self.size = (rows, cols);
        self.guarded(|p| p.screen_mut().set_size(rows, cols));
    }

    /// Forgets the scrollback, keeping what the screen shows (text, colours, cursor, input
    /// modes, which screen): for a session that has ended, whose transcript has the rest.
    /// Later output would again keep no scrollback.
    pub fn release_scrollback(&mut self) {
        let screen = self.parser.screen();
        let mut state = Vec::new();
        if screen.alternate_screen() {
            state.extend_from_slice(b"\x1b[?1049h");
        }
        state.extend(screen.state_formatted());
        let (rows, cols) = self.size;
        let mut fresh = Terminal::new(rows, cols, 0);
        // Drawing a screen asks nothing of the program: no replies come of it.
        let _ = fresh.process(&state);
        *self = fresh;
    }

    /// A cheap fingerprint of the visible text, to tell a real change from a redraw.
    pub fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        for row in screen.rows(0, cols) {
            row.hash(&mut h);
        }
        screen.alternate_screen().hash(&mut h);
        h.finish()
    }

    /// Snapshot of the visible screen plus up to `scrollback_lines` lines above it.
    pub fn snapshot(&mut self, scrollback_lines: usize, ansi: bool) -> ScreenSnapshot {
        let screen = self.parser.screen_mut();
        let offset = screen.scrollback();
        screen.set_scrollback(0);
        let (rows, cols) = screen.size();
        let text: Vec<String> = screen
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect();
        let screen_ansi =
            ansi.then(|| String::from_utf8_lossy(&screen.contents_formatted()).into_owned());
        let cursor = screen.cursor_position();
        let alternate_screen = screen.alternate_screen();
        let scrollback = if scrollback_lines > 0 {
            scrollback_tail(screen, scrollback_lines)
        } else {
            Vec::new()
        };
        screen.set_scrollback(offset);
        ScreenSnapshot {
            screen: text.join("\n"),
            screen_ansi,
            cursor,
            cols,
            rows,
            scrollback,
            alternate_screen,
        }
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is not complete yet.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let need = match bytes[bytes.len() - back] {
            0x80..=0xbf => continue,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if back < need { back } else { 0 };
    }
    0
}

/// The last `n` lines of the scrollback, oldest first. Leaves the offset at 0.
fn scrollback_tail(screen: &mut vt100::Screen, n: usize) -> Vec<String> {
    let (rows, cols) = screen.size();
    let rows = usize::from(rows);
    screen.set_scrollback(usize::MAX);
    let len = screen.scrollback();
    let want = n.min(len);
    let mut out = Vec::with_capacity(want);
    // With offset o, the first visible row is scrollback line len - o.
    let mut index = len - want;
    while index < len {
        screen.set_scrollback(len - index);
        let take = rows.min(len - index);
        out.extend(
            screen
                .rows(0, cols)
                .take(take)
                .map(|r| r.trim_end().to_string()),
        );
        index += take;
    }
    screen.set_scrollback(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_position_report_after_preceding_bytes() {
        let mut t = Terminal::new(24, 80, 100);
        assert_eq!(t.process(b"ab\x1b[6n"), b"\x1b[1;3R");
        // Split across chunks, after a move.
        assert!(t.process(b"\x1b[5;10H\x1b[").is_empty());
        assert_eq!(t.process(b"6n"), b"\x1b[5;10R");
        assert_eq!(t.process(b"\x1b[?6n"), b"\x1b[?5;10R");
    }

    #[test]
    fn status_and_device_attributes() {
        let mut t = Terminal::new(24, 80, 0);
        assert_eq!(t.process(b"\x1b[5n"), b"\x1b[0n");
        assert_eq!(t.process(b"\x1b[c"), b"\x1b[?62;22c");
        assert_eq!(t.process(b"\x1b[0c"), b"\x1b[?62;22c");
        assert_eq!(t.process(b"\x1b[>c"), b"\x1b[>0;276;0c");
        assert_eq!(t.process(b"\x1b[18t"), b"\x1b[8;24;80t");
        assert_eq!(
            t.process(b"\x1b]11;?\x07"),
            b"\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        assert!(t.process(b"plain \x1b[1mtext\x1b[0m").is_empty());
    }

    #[test]
    fn snapshot_screen_and_scrollback() {
        let mut t = Terminal::new(3, 10, 100);
        for i in 1..=7 {
            t.process(format!("line{i}\r\n").as_bytes());
        }
        t.process(b"\x1b[31mred\x1b[0m");
        let s = t.snapshot(3, true);
        assert_eq!(s.screen, "line6\nline7\nred");
        assert_eq!(s.cursor, (2, 3));
        assert_eq!((s.rows, s.cols), (3, 10));
        assert_eq!(s.scrollback, vec!["line3", "line4", "line5"]);
        assert!(s.screen_ansi.as_deref().unwrap_or("").contains("\x1b[31m"));
        // More than one screenful, and more than exists.
        let s = t.snapshot(100, false);
        assert_eq!(
            s.scrollback,
            vec!["line1", "line2", "line3", "line4", "line5"]
        );
        assert!(s.screen_ansi.is_none());
        // The viewer's scroll offset is preserved.
        t.parser.screen_mut().set_scrollback(2);
        let _ = t.snapshot(2, false);
        assert_eq!(t.screen().scrollback(), 2);
    }

    #[test]
    fn snapshot_keeps_blank_rows() {
        let mut t = Terminal::new(4, 10, 0);
        t.process(b"$ ");
        let s = t.snapshot(0, false);
        assert_eq!(s.screen, "$\n\n\n");
        assert_eq!(s.screen.split('\n').count(), 4);
    }

    #[test]
    fn releasing_the_scrollback_keeps_the_screen() {
        let mut t = Terminal::new(4, 20, 100);
        for i in 1..=30 {
            t.process(format!("line{i}\r\n").as_bytes());
        }
        t.process(b"\x1b[1;32mgreen\x1b[0m \x1b[?1h\x1b[?2004h");
        let before = t.snapshot(10, true);
        assert_eq!(before.scrollback.len(), 10);
        t.release_scrollback();
        let after = t.snapshot(10, true);
        assert!(after.scrollback.is_empty());
        assert_eq!(after.screen, before.screen);
        assert_eq!(after.screen_ansi, before.screen_ansi);
        assert_eq!(after.cursor, before.cursor);
        assert!(t.screen().application_cursor() && t.screen().bracketed_paste());
        // A full-screen program's screen stays the alternate one.
        let mut t = Terminal::new(4, 20, 100);
        t.process(b"shell\r\n\x1b[?1049h\x1b[Hin vim");
        t.release_scrollback();
        let s = t.snapshot(0, false);
        assert!(s.alternate_screen);
        assert_eq!(s.screen, "in vim\n\n\n");
    }

    #[test]
    fn resize_changes_size() {
        let mut t = Terminal::new(24, 80, 0);
        t.resize(30, 100);
        assert_eq!(t.screen().size(), (30, 100));
        assert_eq!(t.process(b"\x1b[18t"), b"\x1b[8;30;100t");
    }
}
