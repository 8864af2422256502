//! Keys and pastes typed into an agent, encoded as xterm would send them.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
fn modifier_param(m: KeyModifiers) -> u8 {
    1 + u8::from(m.contains(KeyModifiers::SHIFT))
        + 2 * u8::from(m.contains(KeyModifiers::ALT))
        + 4 * u8::from(m.contains(KeyModifiers::CONTROL))
}

/// The byte Ctrl+`c` sends, if it has one.
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

/// Bytes for one key press; `app_cursor`: the program enabled application-cursor mode
/// (DECCKM), so unmodified arrows, Home and End are sent as `ESC O x`. `None`: nothing to send
/// (key releases, bare modifiers).
pub fn encode(key: &KeyEvent, app_cursor: bool) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let m = key.modifiers;
    let alt = m.contains(KeyModifiers::ALT);
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let shift = m.contains(KeyModifiers::SHIFT);
    let modified = alt || ctrl || shift;
    let with_alt = |mut b: Vec<u8>| {
        if alt {
            b.insert(0, 0x1b);
        }
        b
    };
    // CSI/SS3 letter keys (arrows, Home, End, F1–F4).
    let letter = |c: u8, ss3_default: bool| -> Vec<u8> {
        if modified {
            format!("\x1b[1;{}{}", modifier_param(m), c as char).into_bytes()
        } else if ss3_default {
            vec![0x1b, b'O', c]
        } else {
            vec![0x1b, b'[', c]
        }
    };
    // `CSI n ~` keys (PgUp, Insert, F5–F12, …).
    let tilde = |n: u8| -> Vec<u8> {
        if modified {
            format!("\x1b[{};{}~", n, modifier_param(m)).into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let bytes = match key.code {
        KeyCode::Char(c) => {
            if ctrl {
                let b = ctrl_byte(c)?;
                with_alt(vec![b])
            } else {
                let mut buf = [0u8; 4];
                with_alt(c.encode_utf8(&mut buf).as_bytes().to_vec())
            }
        }
        KeyCode::Enter => with_alt(b"\r".to_vec()),
        KeyCode::Tab if shift => b"\x1b[Z".to_vec(),
        KeyCode::Tab => with_alt(b"\t".to_vec()),
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Backspace if ctrl => with_alt(vec![0x08]),
        KeyCode::Backspace => with_alt(vec![0x7f]),
        KeyCode::Esc => with_alt(vec![0x1b]),
        KeyCode::Up => letter(b'A', app_cursor),
        KeyCode::Down => letter(b'B', app_cursor),
        KeyCode::Right => letter(b'C', app_cursor),
        KeyCode::Left => letter(b'D', app_cursor),
        KeyCode::Home => letter(b'H', app_cursor),
        KeyCode::End => letter(b'F', app_cursor),
        KeyCode::PageUp => tilde(5),
        KeyCode::PageDown => tilde(6),
        KeyCode::Insert => tilde(2),
        KeyCode::Delete => tilde(3),
        KeyCode::F(n @ 1..=4) => letter(b"PQRS"[usize::from(n - 1)], true),
        KeyCode::F(n) => {
            let code = match n {
                5 => 15,
                6 => 17,
                7 => 18,
                8 => 19,
                9 => 20,
                10 => 21,
                11 => 23,
                12 => 24,
                _ => return None,
            };
            tilde(code)
        }
        _ => return None,
    };
    Some(bytes)
}

/// A paste: line breaks become `\r` as a terminal sends them; wrapped in bracketed-paste
/// markers when the program enabled mode 2004 (a paste cannot end the paste early).
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    let normalized = text.replace("\r\n", "\r").replace('\n', "\r");
    if bracketed {
        let mut out = b"\x1b[200~".to_vec();
        out.extend_from_slice(normalized.replace("\x1b[201~", "").as_bytes());
        out.extend_from_slice(b"\x1b[201~");
        out
    } else {
        normalized.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn plain_and_control_characters() {
        let none = KeyModifiers::NONE;
        assert_eq!(encode(&k(KeyCode::Char('a'), none), false).unwrap(), b"a");
        assert_eq!(
            encode(&k(KeyCode::Char('é'), none), false).unwrap(),
            "é".as_bytes()
        );
        assert_eq!(
            encode(&k(KeyCode::Char('A'), KeyModifiers::SHIFT), false).unwrap(),
            b"A"
        );
        assert_eq!(
            encode(&k(KeyCode::Char('c'), KeyModifiers::CONTROL), false).unwrap(),
            [3]
        );
        assert_eq!(
            encode(&k(KeyCode::Char('d'), KeyModifiers::CONTROL), false).unwrap(),
            [4]
        );
        assert_eq!(
            encode(&k(KeyCode::Char('x'), KeyModifiers::ALT), false).unwrap(),
            b"\x1bx"
        );
        assert_eq!(encode(&k(KeyCode::Enter, none), false).unwrap(), b"\r");
        assert_eq!(encode(&k(KeyCode::Backspace, none), false).unwrap(), [0x7f]);
        assert_eq!(
            encode(&k(KeyCode::BackTab, KeyModifiers::SHIFT), false).unwrap(),
            b"\x1b[Z"
        );
    }

    #[test]
    fn arrows_honour_application_cursor_mode() {
        let none = KeyModifiers::NONE;
        assert_eq!(encode(&k(KeyCode::Up, none), false).unwrap(), b"\x1b[A");
        assert_eq!(encode(&k(KeyCode::Up, none), true).unwrap(), b"\x1bOA");
        assert_eq!(
            encode(&k(KeyCode::Left, KeyModifiers::CONTROL), true).unwrap(),
            b"\x1b[1;5D"
        );
        assert_eq!(encode(&k(KeyCode::End, none), true).unwrap(), b"\x1bOF");
    }

    #[test]
    fn function_and_editing_keys() {
        let none = KeyModifiers::NONE;
        assert_eq!(encode(&k(KeyCode::F(1), none), false).unwrap(), b"\x1bOP");
        assert_eq!(encode(&k(KeyCode::F(5), none), false).unwrap(), b"\x1b[15~");
        assert_eq!(
            encode(&k(KeyCode::F(12), KeyModifiers::SHIFT), false).unwrap(),
            b"\x1b[24;2~"
        );
        assert_eq!(
            encode(&k(KeyCode::PageUp, none), false).unwrap(),
            b"\x1b[5~"
        );
        assert_eq!(
            encode(&k(KeyCode::Delete, none), false).unwrap(),
            b"\x1b[3~"
        );
    }

    #[test]
    fn paste_is_bracketed_when_enabled() {
        assert_eq!(encode_paste("a\nb", false), b"a\rb");
        assert_eq!(encode_paste("a\nb", true), b"\x1b[200~a\rb\x1b[201~");
        assert_eq!(encode_paste("x\x1b[201~y", true), b"\x1b[200~xy\x1b[201~");
    }
}
