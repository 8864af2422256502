//! State synchronisation of one client's terminal with a session's screen (as mosh does):
//! remember the screen the client was left with, and send it only what turns that screen
//! into the current one. A client that was busy misses the states in between and gets the
//! current one; nothing is queued for it. The session's published copy of its visible screen
//! (`visible.rs`) is kept the same way.

use orchestra_proto::wire::{MouseEncoding, MouseMode, TerminalModes};

/// Enters or leaves the alternate screen (xterm's `?1049`: saves or restores the cursor).
const ENTER_ALT_SCREEN: &[u8] = b"\x1b[?1049h";
const LEAVE_ALT_SCREEN: &[u8] = b"\x1b[?1049l";

/// What one client must be sent to show the current screen. Empty when nothing changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Update {
    /// The client's terminal must take this size (`rows`, `cols`) before `bytes`.
    pub size: Option<(u16, u16)>,
    /// The modes changed to these.
    pub modes: Option<TerminalModes>,
    /// Terminal output for the client.
    pub bytes: Vec<u8>,
}

impl Update {
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.size.is_none() && self.modes.is_none() && self.bytes.is_empty()
    }
}

/// The client's terminal as the server last left it: a parser without scrollback fed the
/// same bytes as the client. Its visible screen is all a diff needs, so it stays small
/// however much scrollback the session keeps.
pub struct ScreenSync {
    /// `None` until the first update: the client has no terminal yet.
    client: Option<vt100::Parser>,
}

impl Default for ScreenSync {
    fn default() -> Self {
        Self::new()
    }
}

impl ScreenSync {
    pub fn new() -> Self {
        Self { client: None }
    }

    /// What turns the client's screen into `current`. Cheap (one pass over the visible
    /// cells), so it may run under the session's terminal lock; call [`sent`](Self::sent)
    /// with the result once it is on its way.
    ///
    /// The first update, a resize or a switch between the normal and the alternate screen
    /// redraws everything; otherwise only changed cells, the cursor, the drawing attributes
    /// and the input modes are sent.
    pub fn diff(&self, current: &vt100::Screen) -> Update {
        let now_modes = modes(current);
        let Some(client) = &self.client else {
            let blank = vt100::Parser::new(1, 1, 0);
            let mut bytes = Vec::new();
            if current.alternate_screen() {
                bytes.extend_from_slice(ENTER_ALT_SCREEN);
            }
            bytes.extend(current.contents_formatted());
            bytes.extend(current.input_mode_diff(blank.screen()));
            return Update {
                size: Some(current.size()),
                modes: Some(now_modes),
                bytes,
            };
        };
        let before = client.screen();
        let resized = current.size() != before.size();
        let switched = current.alternate_screen() != before.alternate_screen();
        let mut bytes = Vec::new();
        if switched {
            bytes.extend_from_slice(if current.alternate_screen() {
                ENTER_ALT_SCREEN
            } else {
                LEAVE_ALT_SCREEN
            });
        }
        if resized || switched {
            bytes.extend(current.contents_formatted());
            bytes.extend(current.input_mode_diff(before));
        } else {
            bytes.extend(current.state_diff(before));
        }
        Update {
            size: resized.then(|| current.size()),
            modes: (now_modes != modes(before)).then_some(now_modes),
            bytes,
        }
    }

    /// Brings the client's screen up to `current` at once, and returns it: a copy of the
    /// visible screen without scrollback, made by applying only what changed.
    pub fn follow(&mut self, current: &vt100::Screen) -> &vt100::Screen {
        let update = self.diff(current);
        self.sent(&update);
        self.client
            .get_or_insert_with(|| vt100::Parser::new(1, 1, 0))
            .screen()
    }

    /// Records that `update` went to the client: its terminal now shows what `diff` saw.
    pub fn sent(&mut self, update: &Update) {
        let client = self.client.get_or_insert_with(|| {
            let (rows, cols) = update.size.unwrap_or((24, 80));
            vt100::Parser::new(rows, cols, 0)
        });
        if let Some((rows, cols)) = update.size {
            client.screen_mut().set_size(rows, cols);
        }
        client.process(&update.bytes);
    }
}

/// The modes of a screen, as the wire names them.
pub fn modes(screen: &vt100::Screen) -> TerminalModes {
    TerminalModes {
        alt_screen: screen.alternate_screen(),
        app_cursor: screen.application_cursor(),
        app_keypad: screen.application_keypad(),
        bracketed_paste: screen.bracketed_paste(),
        mouse: match screen.mouse_protocol_mode() {
            vt100::MouseProtocolMode::None => MouseMode::None,
            vt100::MouseProtocolMode::Press => MouseMode::Press,
            vt100::MouseProtocolMode::PressRelease => MouseMode::PressRelease,
            vt100::MouseProtocolMode::ButtonMotion => MouseMode::ButtonMotion,
            vt100::MouseProtocolMode::AnyMotion => MouseMode::AnyMotion,
        },
        mouse_encoding: match screen.mouse_protocol_encoding() {
            vt100::MouseProtocolEncoding::Default => MouseEncoding::Default,
            vt100::MouseProtocolEncoding::Utf8 => MouseEncoding::Utf8,
            vt100::MouseProtocolEncoding::Sgr => MouseEncoding::Sgr,
        },
        hide_cursor: screen.hide_cursor(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client as docs/stream.md describes one: a terminal created at the hello's size,
    /// resized on each size change, fed every output message.
    struct Client {
        term: Option<vt100::Parser>,
        modes: Option<TerminalModes>,
    }

    impl Client {
        fn new() -> Self {
            Self {
                term: None,
                modes: None,
            }
        }
        fn receive(&mut self, u: &Update) {
            if let Some((rows, cols)) = u.size {
                match &mut self.term {
                    Some(t) => t.screen_mut().set_size(rows, cols),
                    None => self.term = Some(vt100::Parser::new(rows, cols, 0)),
                }
            }
            if let Some(m) = u.modes {
                self.modes = Some(m);
            }
            self.term.as_mut().expect("size first").process(&u.bytes);
        }
        fn screen(&self) -> &vt100::Screen {
            self.term.as_ref().expect("created").screen()
        }
    }

    /// Everything a client shows or needs: cells with attributes, cursor, modes.
    fn assert_same(client: &Client, server: &vt100::Screen) {
        let c = client.screen();
        assert_eq!(c.size(), server.size());
        assert_eq!(c.contents(), server.contents());
        assert_eq!(c.contents_formatted(), server.contents_formatted());
        assert_eq!(c.cursor_position(), server.cursor_position());
        assert_eq!(modes(c), modes(server));
        assert_eq!(client.modes, Some(modes(server)));
    }

    /// Sends the server's current state to the client the way the stream does.
    fn sync(sync: &mut ScreenSync, client: &mut Client, server: &vt100::Parser) -> Update {
        let u = sync.diff(server.screen());
        sync.sent(&u);
        client.receive(&u);
        u
    }

    #[test]
    fn first_update_draws_the_whole_screen_with_colours_cursor_and_modes() {
        let mut server = vt100::Parser::new(5, 20, 100);
        server.process(b"\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h");
        server.process(b"$ \x1b[1;31mred\x1b[0m \x1b[44mblue bg\x1b[0m\r\nnext\x1b[3;7H");
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        let u = sync(&mut s, &mut c, &server);
        assert_eq!(u.size, Some((5, 20)));
        assert_same(&c, server.screen());
        let m = modes(c.screen());
        assert!(m.app_cursor && m.bracketed_paste && !m.alt_screen);
        assert_eq!(
            (m.mouse, m.mouse_encoding),
            (MouseMode::ButtonMotion, MouseEncoding::Sgr)
        );
        assert_eq!(
            c.screen().cell(0, 2).unwrap().fgcolor(),
            vt100::Color::Idx(1)
        );
        assert!(c.screen().cell(0, 2).unwrap().bold());
    }

    #[test]
    fn unchanged_screen_sends_nothing() {
        let mut server = vt100::Parser::new(5, 20, 0);
        server.process(b"hello");
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        sync(&mut s, &mut c, &server);
        assert!(s.diff(server.screen()).is_empty());
    }

    #[test]
    fn later_updates_send_only_the_change() {
        let mut server = vt100::Parser::new(24, 80, 0);
        for i in 0..23 {
            server.process(format!("line {i} with some text on it\r\n").as_bytes());
        }
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        let first = sync(&mut s, &mut c, &server);
        server.process(b"x");
        let u = sync(&mut s, &mut c, &server);
        assert_eq!((u.size, u.modes), (None, None));
        assert!(
            u.bytes.len() < 16 && u.bytes.len() * 20 < first.bytes.len(),
            "{:?}",
            String::from_utf8_lossy(&u.bytes)
        );
        assert_same(&c, server.screen());
    }

    #[test]
    fn a_client_that_missed_states_catches_up_to_the_current_one() {
        let mut server = vt100::Parser::new(10, 30, 1000);
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        server.process(b"start\r\n");
        sync(&mut s, &mut c, &server);
        // A flood the client never saw: scrolling, colours, cursor moves, erasures.
        for i in 0..500 {
            server.process(format!("\x1b[3{}m{i:>5} flood \x1b[0m\x1b[K\r\n", i % 8).as_bytes());
            if i % 37 == 0 {
                server.process(b"\x1b[2;5H\x1b[1mover\x1b[0m\x1b[10;1H");
            }
        }
        server.process("wide: 日本語 done".as_bytes());
        sync(&mut s, &mut c, &server);
        assert_same(&c, server.screen());
    }

    #[test]
    fn alternate_screen_enter_and_leave() {
        let mut server = vt100::Parser::new(6, 20, 100);
        server.process(b"$ vim\r\n");
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        sync(&mut s, &mut c, &server);
        server.process(b"\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n\x1b[6;1H-- INSERT --\x1b[1;1H");
        let u = sync(&mut s, &mut c, &server);
        assert!(u.bytes.starts_with(ENTER_ALT_SCREEN));
        assert!(u.modes.is_some_and(|m| m.alt_screen));
        assert!(c.screen().alternate_screen());
        assert_same(&c, server.screen());
        server.process(b"\x1b[?1049l$ ");
        let u = sync(&mut s, &mut c, &server);
        assert!(u.bytes.starts_with(LEAVE_ALT_SCREEN));
        assert!(!c.screen().alternate_screen());
        assert_same(&c, server.screen());
        // A client joining while a full-screen program runs starts on the alternate screen.
        server.process(b"\x1b[?1049hfull");
        let (s2, mut c2) = (ScreenSync::new(), Client::new());
        c2.receive(&s2.diff(server.screen()));
        assert!(c2.screen().alternate_screen());
        assert_same(&c2, server.screen());
    }

    #[test]
    fn resize_sends_the_size_then_the_whole_screen() {
        let mut server = vt100::Parser::new(10, 40, 100);
        server.process(b"some text\r\n$ ");
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        sync(&mut s, &mut c, &server);
        server.screen_mut().set_size(5, 20);
        server.process(b"after");
        let u = sync(&mut s, &mut c, &server);
        assert_eq!(u.size, Some((5, 20)));
        assert_same(&c, server.screen());
        server.screen_mut().set_size(30, 100);
        sync(&mut s, &mut c, &server);
        assert_same(&c, server.screen());
    }

    #[test]
    fn mode_changes_alone_are_sent() {
        let mut server = vt100::Parser::new(5, 20, 0);
        let (mut s, mut c) = (ScreenSync::new(), Client::new());
        sync(&mut s, &mut c, &server);
        server.process(b"\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[?25l");
        let u = sync(&mut s, &mut c, &server);
        let m = u.modes.expect("modes changed");
        assert!(m.app_cursor && m.bracketed_paste && m.hide_cursor);
        assert_eq!(m.mouse, MouseMode::PressRelease);
        assert_same(&c, server.screen());
        server.process(b"\x1b[?1l\x1b[?2004l\x1b[?1000l\x1b[?25h");
        sync(&mut s, &mut c, &server);
        assert_same(&c, server.screen());
        assert_eq!(modes(c.screen()), TerminalModes::default());
    }
}
