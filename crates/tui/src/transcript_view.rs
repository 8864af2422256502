//! A session's transcript (every byte it printed, from its file) replayed through a terminal
//! parser with a long scrollback: scrollable, and searchable with the matches highlighted.
//!
//! It works for any session, also one that ended in an earlier run of orchestra, whose
//! terminal is gone: the transcript file is all that is left of it.

use super::term_view::TermView;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthChar;

/// The most of a transcript read (its end, some 25 000 lines of text): enough to read back
/// what a session did, small enough to replay on the UI thread without a visible pause (it
/// is replayed again when the pane changes size).
pub const TRANSCRIPT_BYTES: usize = 2 << 20;
/// Rows kept above the screen: more than that many bytes make.
const SCROLLBACK_ROWS: usize = 50_000;

/// One row of text, with the screen column of each of its characters.
#[derive(Debug, Clone, Default)]
struct RowText {
    chars: Vec<char>,
    cols: Vec<u16>,
}

/// Where a match is: absolute row (0 = the oldest), and its columns `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    pub row: usize,
    pub start: u16,
    pub end: u16,
}

pub struct Transcript {
    pub session_id: String,
    /// What was read, kept to replay it at another size.
    bytes: Vec<u8>,
    screen: vt100::Screen,
    /// Rows scrolled back from the end (0: the end is shown).
    offset: usize,
    /// Rows above the last screen (the most `offset` can be).
    max: usize,
    rows: Vec<RowText>,
    query: String,
    matches: Vec<Match>,
    current: Option<usize>,
    /// The transcript's file was longer than what was read.
    pub truncated: bool,
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// The text of one row as the screen gives it (wide characters once, trailing blanks cut),
/// with each character's column.
fn row_text(text: &str) -> RowText {
    let mut out = RowText::default();
    let mut col: u16 = 0;
    for c in text.chars() {
        out.chars.push(c);
        out.cols.push(col);
        col = col.saturating_add(c.width().unwrap_or(0) as u16);
    }
    while out.chars.last() == Some(&' ') {
        out.chars.pop();
        out.cols.pop();
    }
    out
}

impl Transcript {
    /// Replays `bytes` on a screen `cols` × `rows` (the pane it is shown in).
    pub fn new(session_id: &str, bytes: Vec<u8>, truncated: bool, rows: u16, cols: u16) -> Self {
        let (rows, cols) = orchestra_proto::terminal::parser_size(rows, cols);
        let mut parser = vt100::Parser::new(rows, cols, SCROLLBACK_ROWS);
        parser.process(&bytes);
        let mut screen = parser.screen().clone();
        // Every row, oldest first: page through the scrollback.
        screen.set_scrollback(usize::MAX);
        let max = screen.scrollback();
        let mut texts: Vec<Option<RowText>> = vec![None; max + rows as usize];
        let mut offset = max;
        loop {
            screen.set_scrollback(offset);
            let top = max - offset;
            for (r, text) in screen.rows(0, cols).enumerate() {
                if let Some(slot) = texts.get_mut(top + r)
                    && slot.is_none()
                {
                    *slot = Some(row_text(&text));
                }
            }
            if offset == 0 {
                break;
            }
            offset = offset.saturating_sub(rows as usize);
        }
        screen.set_scrollback(0);
        let mut rows_text: Vec<RowText> =
            texts.into_iter().map(Option::unwrap_or_default).collect();
        // Blank rows under the last output are not part of it.
        while rows_text.len() > 1 && rows_text.last().is_some_and(|r| r.chars.is_empty()) {
            rows_text.pop();
        }
        Transcript {
            session_id: session_id.to_string(),
            bytes,
            screen,
            offset: 0,
            max,
            rows: rows_text,
            query: String::new(),
            matches: Vec::new(),
            current: None,
            truncated,
        }
    }

    /// Replays it for a pane of another size (lines wrap at its width); the search stays.
    pub fn fit(&mut self, rows: u16, cols: u16) {
        if self.screen.size() == (rows.max(1), cols.max(1)) {
            return;
        }
        let bytes = std::mem::take(&mut self.bytes);
        let mut fitted = Transcript::new(&self.session_id, bytes, self.truncated, rows, cols);
        if !self.query.is_empty() {
            fitted.search(&self.query);
        }
        *self = fitted;
    }

    /// Rows scrolled back from the end.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Rows of text in it.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|r| r.chars.is_empty())
    }

    /// Scrolls back (`delta` > 0) or forward, within the transcript.
    pub fn scroll_by(&mut self, delta: isize) {
        let offset = (self.offset as isize)
            .saturating_add(delta)
            .clamp(0, self.max as isize) as usize;
        self.scroll_to(offset);
    }

    pub fn to_end(&mut self) {
        self.scroll_to(0);
    }

    pub fn to_start(&mut self) {
        self.scroll_to(self.max);
    }

    fn scroll_to(&mut self, offset: usize) {
        self.offset = offset.min(self.max);
        self.screen.set_scrollback(self.offset);
    }

    /// The absolute row shown at the top.
    fn top(&self) -> usize {
        self.max - self.offset
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    /// Matches of the query (case-insensitive), oldest first.
    pub fn matches(&self) -> &[Match] {
        &self.matches
    }

    /// The match the view is on: its place among the matches (0-based).
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    /// Searches for `query`; the view goes to the latest match (what was printed last is
    /// what one usually looks for). An empty query clears the search.
    pub fn search(&mut self, query: &str) {
        self.query = query.to_string();
        self.matches.clear();
        self.current = None;
        let needle: Vec<char> = query.chars().map(lower).collect();
        if needle.is_empty() {
            return;
        }
        for (row, text) in self.rows.iter().enumerate() {
            let hay: Vec<char> = text.chars.iter().copied().map(lower).collect();
            let mut i = 0;
            while i + needle.len() <= hay.len() {
                if hay[i..i + needle.len()] == needle[..] {
                    let last = i + needle.len() - 1;
                    self.matches.push(Match {
                        row,
                        start: text.cols[i],
                        end: text.cols[last] + 1,
                    });
                    i += needle.len();
                } else {
                    i += 1;
                }
            }
        }
        if !self.matches.is_empty() {
            self.current = Some(self.matches.len() - 1);
            self.reveal();
        }
    }

    /// Goes to the next match down (`forward`, newer) or up (older), wrapping around.
    pub fn step(&mut self, forward: bool) {
        let n = self.matches.len();
        if n == 0 {
            return;
        }
        self.current = Some(match (self.current, forward) {
            (None, _) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        });
        self.reveal();
    }

    /// Scrolls so the current match is on screen, a third of the way down.
    fn reveal(&mut self) {
        let Some(m) = self.current.and_then(|c| self.matches.get(c)) else {
            return;
        };
        let (rows, _) = self.screen.size();
        let rows = rows as usize;
        let top = self.top();
        if m.row >= top && m.row < top + rows {
            return;
        }
        let want_top = m.row.saturating_sub(rows / 3).min(self.max);
        self.scroll_to(self.max - want_top);
    }

    /// Draws the part scrolled to, matches highlighted (the current one brighter).
    pub fn render(&self, area: Rect, buf: &mut Buffer, color: bool) {
        TermView::new(&self.screen).color(color).render(area, buf);
        let top = self.top();
        let (rows, _) = self.screen.size();
        let shown = top..top + rows.min(area.height) as usize;
        for (i, m) in self.matches.iter().enumerate() {
            if !shown.contains(&m.row) {
                continue;
            }
            let style = if Some(i) == self.current {
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::LightRed)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::UNDERLINED)
            };
            let y = area.y + (m.row - top) as u16;
            for col in m.start..m.end.min(area.width) {
                buf[(area.x + col, y)].set_style(style);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 1..=n {
            out.extend_from_slice(format!("\x1b[32mline {i}\x1b[0m\r\n").as_bytes());
        }
        out
    }

    fn shown(t: &mut Transcript, w: u16, h: u16) -> Vec<String> {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf, true);
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn every_row_is_kept_and_scrolls() {
        let mut t = Transcript::new("s", numbered(500), false, 10, 20);
        assert_eq!(t.len(), 500);
        assert_eq!(shown(&mut t, 20, 10)[8], "line 500");
        t.to_start();
        assert_eq!(shown(&mut t, 20, 10)[0], "line 1");
        t.scroll_by(-100);
        assert_eq!(shown(&mut t, 20, 10)[0], "line 101");
    }

    #[test]
    fn search_goes_to_the_latest_match_and_steps_through_them() {
        let mut bytes = numbered(300);
        bytes.extend_from_slice("修 Needle at the end\r\n".as_bytes());
        let mut t = Transcript::new("s", bytes, false, 10, 30);
        t.search("line 2");
        // line 2, line 20–29, line 200–299.
        assert_eq!(t.matches().len(), 111);
        assert_eq!(t.current(), Some(110));
        t.step(true);
        assert_eq!(t.current(), Some(0));
        let rows = shown(&mut t, 30, 10);
        assert!(rows.contains(&"line 2".to_string()), "{rows:?}");
        t.step(false);
        assert_eq!(t.current(), Some(110));
        assert!(shown(&mut t, 30, 10).contains(&"line 299".to_string()));
        // Case-insensitive; columns count a wide character as two.
        t.search("NEEDLE");
        assert_eq!(
            t.matches(),
            [Match {
                row: 300,
                start: 3,
                end: 9
            }]
        );
        let area = Rect::new(0, 0, 30, 10);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf, true);
        let y = (0..10).find(|&y| buf[(0, y)].symbol() == "修").unwrap();
        assert_eq!(buf[(3, y)].bg, Color::LightRed);
        assert_eq!(buf[(2, y)].bg, Color::Reset);
        t.search("absent");
        assert!(t.matches().is_empty() && t.current().is_none());
        // A narrower pane wraps the lines anew; the search stays.
        t.search("needle");
        t.fit(10, 12);
        assert_eq!(t.query(), "needle");
        assert_eq!(t.matches().len(), 1);
        assert!(t.len() > 301);
    }
}
