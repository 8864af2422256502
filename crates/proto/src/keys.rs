//! The one key encoder: keys and typed text, encoded as a real terminal (xterm) sends them.
//!
//! Front ends describe a key press as a [`Key`] (the TUI converts crossterm's events, the API
//! parses names with [`Key::parse`]), and [`Key::encode`] turns it into bytes from the single
//! xterm table below. Typed text and pastes go through [`encode_paste`].
//!
//! Key names are case-insensitive: `enter` (`return`, `cr`), `lf` (`newline`), `tab`,
//! `shift-tab` (`backtab`, `btab`), `esc` (`escape`), `backspace` (`bs`), `space`,
//! `up`/`down`/`left`/`right`, `home`/`end`, `pageup`/`pagedown` (`pgup`, `page-up`, …),
//! `insert` (`ins`), `delete` (`del`), `f1`..`f12`, and any single character (`y`, `1`, `é`,
//! taken as it is). Modifiers are prefixes in any order: `ctrl-` (`ctrl+`, `control-`, `c-`,
//! `^`), `alt-` (`alt+`, `meta-`, `meta+`, `m-`) and `shift-` (`shift+`): `ctrl-c`, `alt-x`,
//! `ctrl-alt-d`, `shift-tab`, `ctrl-up`, `shift-f5`. Ctrl with a character is the control byte
//! (`ctrl-a`..`ctrl-z`, `ctrl-space`/`ctrl-@`, `ctrl-[`, `ctrl-\`, `ctrl-]`, `ctrl-^`, `ctrl-_`,
//! `ctrl-/`, `ctrl-?` and xterm's digits `ctrl-2`..`ctrl-8`); shift with a letter is the capital.

/// A key name that names no key (or a combination that sends nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key {0:?}")]
pub struct UnknownKey(pub String);

/// A key on the keyboard, without modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A character, as typed (already shifted: `A`, `!`).
    Char(char),
    Enter,
    /// Tab; with shift it is back-tab.
    Tab,
    Backspace,
    Esc,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// F1..F12 (others have no xterm sequence).
    F(u8),
}

/// A key press: a key and the modifiers held with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl From<KeyCode> for Key {
    fn from(code: KeyCode) -> Self {
        Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }
}

/// How a key without its own byte is sent: the final byte of `CSI 1;m x` / `SS3 x`, or the
/// number of `CSI n ~`.
enum Sequence {
    /// Arrows, Home, End: `SS3 x` in application-cursor mode, `CSI x` otherwise.
    Cursor(u8),
    /// F1–F4: `SS3 x` whatever the mode.
    Ss3(u8),
    /// PgUp, PgDn, Insert, Delete, F5–F12.
    Tilde(u8),
}

/// The xterm table for keys that send an escape sequence.
fn sequence(code: KeyCode) -> Option<Sequence> {
    use Sequence::*;
    Some(match code {
        KeyCode::Up => Cursor(b'A'),
        KeyCode::Down => Cursor(b'B'),
        KeyCode::Right => Cursor(b'C'),
        KeyCode::Left => Cursor(b'D'),
        KeyCode::Home => Cursor(b'H'),
        KeyCode::End => Cursor(b'F'),
        KeyCode::Insert => Tilde(2),
        KeyCode::Delete => Tilde(3),
        KeyCode::PageUp => Tilde(5),
        KeyCode::PageDown => Tilde(6),
        KeyCode::F(n @ 1..=4) => Ss3(b"PQRS"[usize::from(n - 1)]),
        KeyCode::F(5) => Tilde(15),
        KeyCode::F(6) => Tilde(17),
        KeyCode::F(7) => Tilde(18),
        KeyCode::F(8) => Tilde(19),
        KeyCode::F(9) => Tilde(20),
        KeyCode::F(10) => Tilde(21),
        KeyCode::F(11) => Tilde(23),
        KeyCode::F(12) => Tilde(24),
        _ => return None,
    })
}

/// The byte Ctrl+`c` sends, if it has one (xterm's table, digits included).
fn ctrl_byte(c: char) -> Option<u8> {
    match c.to_ascii_lowercase() {
        c @ 'a'..='z' => Some(c as u8 - b'a' + 1),
        '@' | ' ' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '/' | '7' | '-' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

impl Key {
    /// The bytes xterm sends for this key; `app_cursor`: the program enabled
    /// application-cursor mode (DECCKM), so unmodified arrows, Home and End go as `SS3 x`.
    /// `None`: the key sends nothing (Ctrl with a character that has no control byte, F13…).
    pub fn encode(&self, app_cursor: bool) -> Option<Vec<u8>> {
        if let Some(seq) = sequence(self.code) {
            return Some(self.encode_sequence(seq, app_cursor));
        }
        let bytes = match self.code {
            KeyCode::Char(c) if self.ctrl => vec![ctrl_byte(c)?],
            KeyCode::Char(c) => c.to_string().into_bytes(),
            KeyCode::Enter => b"\r".to_vec(),
            KeyCode::Tab if self.shift => b"\x1b[Z".to_vec(),
            KeyCode::Tab => b"\t".to_vec(),
            KeyCode::Backspace if self.ctrl => vec![0x08],
            KeyCode::Backspace => vec![0x7f],
            KeyCode::Esc => vec![0x1b],
            _ => return None,
        };
        // Alt is an ESC prefix for keys without a modifier parameter (xterm's metaSendsEscape).
        Some(if self.alt {
            [&[0x1b][..], &bytes].concat()
        } else {
            bytes
        })
    }

    /// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl; `None` without modifiers.
    fn modifier_param(&self) -> Option<u8> {
        let m = u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl);
        (m > 0).then_some(1 + m)
    }

    fn encode_sequence(&self, seq: Sequence, app_cursor: bool) -> Vec<u8> {
        let modifier = self.modifier_param();
        match (seq, modifier) {
            (Sequence::Cursor(c) | Sequence::Ss3(c), Some(m)) => {
                format!("\x1b[1;{m}{}", c as char).into_bytes()
            }
            (Sequence::Cursor(c), None) if !app_cursor => vec![0x1b, b'[', c],
            (Sequence::Cursor(c) | Sequence::Ss3(c), None) => vec![0x1b, b'O', c],
            (Sequence::Tilde(n), Some(m)) => format!("\x1b[{n};{m}~").into_bytes(),
            (Sequence::Tilde(n), None) => format!("\x1b[{n}~").into_bytes(),
        }
    }

    /// Parses a key name (see the module docs). A name that is no key, or a combination that
    /// sends nothing (`ctrl-1`, `shift-1`), is [`UnknownKey`] naming it.
    pub fn parse(name: &str) -> Result<Key, UnknownKey> {
        parse_name(name).ok_or_else(|| UnknownKey(name.to_string()))
    }
}

const CTRL: &[&str] = &["ctrl-", "ctrl+", "control-", "c-", "^"];
const ALT: &[&str] = &["alt-", "alt+", "meta-", "meta+", "m-"];
const SHIFT: &[&str] = &["shift-", "shift+"];

fn parse_name(name: &str) -> Option<Key> {
    // A single character is itself, whatever it is (including "-", "+", "^" and " ").
    if let Some(c) = single_char(name) {
        return Some(KeyCode::Char(c).into());
    }
    // Surrounding spaces are forgiven, but a space after a modifier is the key (`ctrl- `).
    let mut rest = name.trim_start();
    let mut key = Key::from(KeyCode::Enter);
    loop {
        let (flag, tail) = if let Some(tail) = strip_any(rest, CTRL) {
            (&mut key.ctrl, tail)
        } else if let Some(tail) = strip_any(rest, ALT) {
            (&mut key.alt, tail)
        } else if let Some(tail) = strip_any(rest, SHIFT) {
            (&mut key.shift, tail)
        } else {
            break;
        };
        *flag = true;
        rest = tail;
    }
    key.code = match single_char(rest) {
        Some(c) if key.shift => KeyCode::Char(shifted(c)?),
        Some(c) => KeyCode::Char(c),
        None => named_code(&rest.trim_end().to_ascii_lowercase(), &mut key)?,
    };
    key.encode(false).map(|_| key)
}

/// The code of a key name without modifiers; a few aliases stand for a modified key.
fn named_code(name: &str, key: &mut Key) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" | "cr" => KeyCode::Enter,
        "lf" | "newline" => {
            key.ctrl = true;
            KeyCode::Char('j')
        }
        "tab" => KeyCode::Tab,
        "backtab" | "btab" => {
            key.shift = true;
            KeyCode::Tab
        }
        "esc" | "escape" => KeyCode::Esc,
        "backspace" | "bs" => KeyCode::Backspace,
        "space" if key.shift => return None,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "right" => KeyCode::Right,
        "left" => KeyCode::Left,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" | "page-up" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "page-down" => KeyCode::PageDown,
        "insert" | "ins" => KeyCode::Insert,
        "delete" | "del" => KeyCode::Delete,
        _ => {
            let n: u8 = name.strip_prefix('f')?.parse().ok()?;
            // "f05" is not a key name.
            (n.to_string() == name[1..]).then_some(KeyCode::F(n))?
        }
    })
}

/// Shift with a character: the capital of a letter. Other characters depend on the keyboard
/// layout (shift-1 is `!` only on some), so they are named as typed instead.
fn shifted(c: char) -> Option<char> {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if c.is_alphabetic() => Some(u),
        _ => None,
    }
}

fn single_char(s: &str) -> Option<char> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// `s` without the first of `prefixes` it starts with (ASCII case-insensitive), unless
/// nothing would be left.
fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| {
        let head = s.get(..p.len())?;
        let rest = &s[p.len()..];
        (head.eq_ignore_ascii_case(p) && !rest.is_empty()).then_some(rest)
    })
}

/// Parses a sequence of key names; fails on the first unknown one.
pub fn parse_keys<S: AsRef<str>>(names: &[S]) -> Result<Vec<Key>, UnknownKey> {
    names.iter().map(|n| Key::parse(n.as_ref())).collect()
}

/// Encodes one named key. `app_cursor`: the terminal is in application-cursor mode.
pub fn encode_key(name: &str, app_cursor: bool) -> Result<Vec<u8>, UnknownKey> {
    let key = Key::parse(name)?;
    key.encode(app_cursor)
        .ok_or_else(|| UnknownKey(name.to_string()))
}

/// Encodes a sequence of named keys; fails on the first unknown name, sending nothing.
pub fn encode_keys<S: AsRef<str>>(names: &[S], app_cursor: bool) -> Result<Vec<u8>, UnknownKey> {
    let mut out = Vec::new();
    for name in names {
        out.extend(encode_key(name.as_ref(), app_cursor)?);
    }
    Ok(out)
}

/// The end of a bracketed paste.
const PASTE_END: &str = "\x1b[201~";

/// A paste: line breaks (`\n`, `\r\n`) become `\r` as a terminal sends them; wrapped in
/// bracketed-paste markers (`ESC[200~ … ESC[201~`) when `bracketed` (the program enabled mode
/// 2004). A paste cannot end the paste early: an end marker inside it is dropped.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    let normalized = text.replace("\r\n", "\r").replace('\n', "\r");
    if bracketed {
        let mut out = b"\x1b[200~".to_vec();
        // Removed until none is left: taking one out can join the bytes around it into
        // another (`ESC[20` + `ESC[201~` + `1~`).
        let mut inner = normalized;
        while inner.contains(PASTE_END) {
            inner = inner.replace(PASTE_END, "");
        }
        out.extend_from_slice(inner.as_bytes());
        out.extend_from_slice(PASTE_END.as_bytes());
        out
    } else {
        normalized.into_bytes()
    }
}

/// Encodes text as typed input: as [`encode_paste`], but only multi-line text is bracketed,
/// so it arrives as one message rather than one submission per line, while a single line is
/// typed plainly. The submit sequence is not included (see [`super::PtySession::send_text`]).
pub fn encode_text(text: &str, bracketed: bool) -> Vec<u8> {
    let multi_line = text.contains(['\n', '\r']);
    encode_paste(text, bracketed && multi_line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Vec<u8> {
        encode_key(name, false).expect(name)
    }

    fn app(name: &str) -> Vec<u8> {
        encode_key(name, true).expect(name)
    }

    #[test]
    fn basic_keys() {
        assert_eq!(key("enter"), b"\r");
        assert_eq!(key("Enter"), b"\r");
        assert_eq!(key("return"), b"\r");
        assert_eq!(key("lf"), b"\n");
        assert_eq!(key("tab"), b"\t");
        assert_eq!(key("esc"), b"\x1b");
        assert_eq!(key("backspace"), b"\x7f");
        assert_eq!(key("space"), b" ");
        assert_eq!(key("pageup"), b"\x1b[5~");
        assert_eq!(key("PgDn"), b"\x1b[6~");
        assert_eq!(key("pagedown"), b"\x1b[6~");
        assert_eq!(key("delete"), b"\x1b[3~");
        assert_eq!(key("insert"), b"\x1b[2~");
        assert_eq!(key("shift-tab"), b"\x1b[Z");
        assert_eq!(key("backtab"), b"\x1b[Z");
        assert_eq!(key(" enter "), b"\r");
        assert_eq!(key("ctrl- "), [0]);
    }

    #[test]
    fn function_keys_as_xterm() {
        let expected: [&[u8]; 12] = [
            b"\x1bOP",
            b"\x1bOQ",
            b"\x1bOR",
            b"\x1bOS",
            b"\x1b[15~",
            b"\x1b[17~",
            b"\x1b[18~",
            b"\x1b[19~",
            b"\x1b[20~",
            b"\x1b[21~",
            b"\x1b[23~",
            b"\x1b[24~",
        ];
        for (i, want) in expected.iter().enumerate() {
            let name = format!("f{}", i + 1);
            assert_eq!(key(&name), *want, "{name}");
            // Function keys do not follow application-cursor mode.
            assert_eq!(app(&name), *want, "{name}");
        }
    }

    #[test]
    fn ctrl_keys() {
        assert_eq!(key("ctrl-a"), [1]);
        assert_eq!(key("ctrl-c"), [3]);
        assert_eq!(key("ctrl-d"), [4]);
        assert_eq!(key("ctrl-z"), [26]);
        assert_eq!(key("CTRL+C"), [3]);
        assert_eq!(key("ctrl-C"), [3]);
        assert_eq!(key("^c"), [3]);
        assert_eq!(key("c-c"), [3]);
        assert_eq!(key("ctrl-["), [0x1b]);
        assert_eq!(key("ctrl-\\"), [0x1c]);
        assert_eq!(key("ctrl-]"), [0x1d]);
        assert_eq!(key("ctrl-^"), [0x1e]);
        assert_eq!(key("^^"), [0x1e]);
        assert_eq!(key("ctrl-_"), [0x1f]);
        assert_eq!(key("ctrl--"), [0x1f]);
        assert_eq!(key("ctrl-/"), [0x1f]);
        assert_eq!(key("ctrl-?"), [0x7f]);
        assert_eq!(key("ctrl-space"), [0]);
        assert_eq!(key("ctrl-@"), [0]);
        assert_eq!(key("ctrl-2"), [0]);
        assert_eq!(key("ctrl-8"), [0x7f]);
        assert_eq!(key("ctrl-backspace"), [0x08]);
        assert_eq!(key("ctrl-enter"), b"\r");
    }

    #[test]
    fn alt_is_an_escape_prefix() {
        assert_eq!(key("alt-b"), b"\x1bb");
        assert_eq!(key("alt-B"), b"\x1bB");
        assert_eq!(key("alt-shift-b"), b"\x1bB");
        assert_eq!(key("M-x"), b"\x1bx");
        assert_eq!(key("alt-enter"), b"\x1b\r");
        assert_eq!(key("alt-esc"), b"\x1b\x1b");
        assert_eq!(key("alt-backspace"), b"\x1b\x7f");
        assert_eq!(key("alt-space"), b"\x1b ");
        assert_eq!(key("alt-ctrl-x"), b"\x1b\x18");
        assert_eq!(key("ctrl-alt-x"), b"\x1b\x18");
        assert_eq!(key("alt-shift-tab"), b"\x1b\x1b[Z");
    }

    #[test]
    fn modifiers_on_sequences_are_xterm_parameters() {
        assert_eq!(key("shift-up"), b"\x1b[1;2A");
        assert_eq!(key("alt-up"), b"\x1b[1;3A");
        assert_eq!(key("ctrl-up"), b"\x1b[1;5A");
        assert_eq!(key("ctrl-shift-left"), b"\x1b[1;6D");
        assert_eq!(key("ctrl-alt-shift-right"), b"\x1b[1;8C");
        assert_eq!(key("shift-home"), b"\x1b[1;2H");
        assert_eq!(key("ctrl-end"), b"\x1b[1;5F");
        assert_eq!(key("shift-f1"), b"\x1b[1;2P");
        assert_eq!(key("ctrl-f4"), b"\x1b[1;5S");
        assert_eq!(key("shift-f5"), b"\x1b[15;2~");
        assert_eq!(key("ctrl-f12"), b"\x1b[24;5~");
        assert_eq!(key("alt-pageup"), b"\x1b[5;3~");
        assert_eq!(key("ctrl-delete"), b"\x1b[3;5~");
        assert_eq!(key("shift-insert"), b"\x1b[2;2~");
        // A modified cursor key is a CSI sequence in application-cursor mode too.
        assert_eq!(app("ctrl-up"), b"\x1b[1;5A");
        assert_eq!(app("shift-end"), b"\x1b[1;2F");
    }

    #[test]
    fn single_characters() {
        assert_eq!(key("y"), b"y");
        assert_eq!(key("Y"), b"Y");
        assert_eq!(key("1"), b"1");
        assert_eq!(key("-"), b"-");
        assert_eq!(key("^"), b"^");
        assert_eq!(key(" "), b" ");
        assert_eq!(key("é"), "é".as_bytes());
        assert_eq!(key("shift-a"), b"A");
        assert_eq!(key("shift-é"), "É".as_bytes());
    }

    #[test]
    fn arrows_honour_application_cursor_mode() {
        for (name, c) in [
            ("up", b'A'),
            ("down", b'B'),
            ("right", b'C'),
            ("left", b'D'),
            ("home", b'H'),
            ("end", b'F'),
        ] {
            assert_eq!(key(name), [0x1b, b'[', c], "{name}");
            assert_eq!(app(name), [0x1b, b'O', c], "{name}");
        }
        // Other keys are the same in both modes.
        for name in ["pageup", "delete", "enter", "tab", "ctrl-c", "alt-x", "f5"] {
            assert_eq!(key(name), app(name), "{name}");
        }
        // Mode as a real parser sees it after the program enabled DECCKM.
        let mut parser = vt100::Parser::new(24, 80, 0);
        parser.process(b"\x1b[?1h");
        let app_mode = parser.screen().application_cursor();
        assert_eq!(encode_key("up", app_mode).unwrap(), b"\x1bOA");
        parser.process(b"\x1b[?1l");
        let app_mode = parser.screen().application_cursor();
        assert_eq!(encode_key("up", app_mode).unwrap(), b"\x1b[A");
    }

    #[test]
    fn parsed_keys_are_the_neutral_type() {
        let k = Key::parse("Ctrl-Alt-Up").unwrap();
        assert_eq!(
            k,
            Key {
                code: KeyCode::Up,
                ctrl: true,
                alt: true,
                shift: false
            }
        );
        assert_eq!(
            Key::parse("backtab").unwrap(),
            Key::parse("shift-tab").unwrap()
        );
        assert_eq!(Key::parse("f10").unwrap().code, KeyCode::F(10));
        assert_eq!(parse_keys(&["a", "enter"]).unwrap().len(), 2);
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key() {
        for bad in [
            "",
            "  ",
            "hello",
            "ctrl-",
            "ctrl-ab",
            "ctrl-1",
            "ctrl-é",
            "f0",
            "f13",
            "f05",
            "super-x",
            "shift-1",
            "shift-space",
            "alt-",
            "alt-nope",
            "ctrl-shift-",
        ] {
            match encode_key(bad, false) {
                Err(UnknownKey(k)) => assert_eq!(k, bad),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let err = encode_keys(&["enter", "nope"], false).unwrap_err();
        assert!(err.to_string().contains("nope"));
        assert!(parse_keys(&["enter", "alt-nope"]).is_err());
    }

    #[test]
    fn text_encoding() {
        assert_eq!(encode_text("hello", true), b"hello");
        assert_eq!(encode_text("a\nb", true), b"\x1b[200~a\rb\x1b[201~");
        assert_eq!(encode_text("a\r\nb", true), b"\x1b[200~a\rb\x1b[201~");
        assert_eq!(encode_text("a\nb", false), b"a\rb");
        assert_eq!(
            encode_text("x\x1b[201~y\nz", true),
            b"\x1b[200~xy\rz\x1b[201~"
        );
    }

    #[test]
    fn paste_is_bracketed_when_enabled() {
        assert_eq!(encode_paste("a\nb", false), b"a\rb");
        assert_eq!(encode_paste("a\nb", true), b"\x1b[200~a\rb\x1b[201~");
        // A paste is bracketed even on one line (unlike typed text).
        assert_eq!(encode_paste("one", true), b"\x1b[200~one\x1b[201~");
        assert_eq!(encode_paste("x\x1b[201~y", true), b"\x1b[200~xy\x1b[201~");
    }
}
