//! Named keys and typed text, encoded as a real terminal (xterm) would send them.
//!
//! Key names are case-insensitive: `enter` (`return`), `tab`, `shift-tab` (`backtab`), `esc`
//! (`escape`), `backspace`, `space`, `up`/`down`/`left`/`right`, `home`/`end`,
//! `pageup`/`pagedown`, `insert`, `delete`, `f1`..`f12`, `ctrl-a`..`ctrl-z` (also `ctrl+x`,
//! `c-x`, `^x`, and `ctrl-[`, `ctrl-\`, `ctrl-]`, `ctrl-^`, `ctrl-_`, `ctrl-space`), `alt-<key>`
//! (ESC prefix), and any single character (`y`, `1`, `é`). Arrows, home and end honour
//! application-cursor mode (DECCKM: `ESC O A` instead of `ESC [ A`).

use super::SessionError;

/// Encodes one named key. `app_cursor`: the terminal is in application-cursor mode.
pub fn encode_key(name: &str, app_cursor: bool) -> Result<Vec<u8>, SessionError> {
    let unknown = || SessionError::UnknownKey(name.to_string());
    // A single character is itself, whatever it is (including "-" and "+").
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.clone().next()) {
        return Ok(c.to_string().into_bytes());
    }
    let lower = name.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(unknown());
    }
    if let Some(rest) = strip_any(&lower, &["alt-", "alt+", "meta-", "meta+", "m-"]) {
        let mut bytes = vec![0x1b];
        bytes.extend(encode_key(rest, app_cursor).map_err(|_| unknown())?);
        return Ok(bytes);
    }
    if let Some(rest) = strip_any(&lower, &["ctrl-", "ctrl+", "control-", "c-", "^"]) {
        return ctrl(rest).map(|b| vec![b]).ok_or_else(unknown);
    }
    let csi_or_ss3 = |c: u8| -> Vec<u8> {
        if app_cursor {
            vec![0x1b, b'O', c]
        } else {
            vec![0x1b, b'[', c]
        }
    };
    let bytes: Vec<u8> = match lower.as_str() {
        "enter" | "return" | "cr" => b"\r".to_vec(),
        "lf" | "newline" => b"\n".to_vec(),
        "tab" => b"\t".to_vec(),
        "shift-tab" | "backtab" | "btab" => b"\x1b[Z".to_vec(),
        "esc" | "escape" => b"\x1b".to_vec(),
        "backspace" | "bs" => b"\x7f".to_vec(),
        "space" => b" ".to_vec(),
        "up" => csi_or_ss3(b'A'),
        "down" => csi_or_ss3(b'B'),
        "right" => csi_or_ss3(b'C'),
        "left" => csi_or_ss3(b'D'),
        "home" => csi_or_ss3(b'H'),
        "end" => csi_or_ss3(b'F'),
        "pageup" | "pgup" | "page-up" => b"\x1b[5~".to_vec(),
        "pagedown" | "pgdn" | "page-down" => b"\x1b[6~".to_vec(),
        "insert" | "ins" => b"\x1b[2~".to_vec(),
        "delete" | "del" => b"\x1b[3~".to_vec(),
        "f1" => b"\x1bOP".to_vec(),
        "f2" => b"\x1bOQ".to_vec(),
        "f3" => b"\x1bOR".to_vec(),
        "f4" => b"\x1bOS".to_vec(),
        "f5" => b"\x1b[15~".to_vec(),
        "f6" => b"\x1b[17~".to_vec(),
        "f7" => b"\x1b[18~".to_vec(),
        "f8" => b"\x1b[19~".to_vec(),
        "f9" => b"\x1b[20~".to_vec(),
        "f10" => b"\x1b[21~".to_vec(),
        "f11" => b"\x1b[23~".to_vec(),
        "f12" => b"\x1b[24~".to_vec(),
        _ => return Err(unknown()),
    };
    Ok(bytes)
}

/// Encodes a sequence of named keys; fails on the first unknown name, sending nothing.
pub fn encode_keys<S: AsRef<str>>(names: &[S], app_cursor: bool) -> Result<Vec<u8>, SessionError> {
    let mut out = Vec::new();
    for name in names {
        out.extend(encode_key(name.as_ref(), app_cursor)?);
    }
    Ok(out)
}

/// Encodes text as typed input. Line breaks (`\n`, `\r\n`) become `\r` as a terminal sends
/// them. Multi-line text is wrapped in bracketed paste (`ESC[200~ … ESC[201~`) when
/// `bracketed` (the program enabled mode 2004), so it arrives as one message rather than one
/// submission per line. The submit sequence is not included (see [`super::PtySession::send_text`]).
pub fn encode_text(text: &str, bracketed: bool) -> Vec<u8> {
    let normalized = text.replace("\r\n", "\r").replace('\n', "\r");
    let multi_line = normalized.contains('\r');
    let mut out = Vec::with_capacity(normalized.len() + 12);
    if multi_line && bracketed {
        out.extend_from_slice(b"\x1b[200~");
        // A paste must not end the paste early.
        out.extend_from_slice(normalized.replace("\x1b[201~", "").as_bytes());
        out.extend_from_slice(b"\x1b[201~");
    } else {
        out.extend_from_slice(normalized.as_bytes());
    }
    out
}

fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .filter(|rest| !rest.is_empty())
}

fn ctrl(rest: &str) -> Option<u8> {
    let mut chars = rest.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return match rest {
            "space" => Some(0),
            _ => None,
        };
    }
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        '@' | ' ' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '-' | '7' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Vec<u8> {
        encode_key(name, false).expect(name)
    }

    #[test]
    fn basic_keys() {
        assert_eq!(key("enter"), b"\r");
        assert_eq!(key("Enter"), b"\r");
        assert_eq!(key("tab"), b"\t");
        assert_eq!(key("esc"), b"\x1b");
        assert_eq!(key("backspace"), b"\x7f");
        assert_eq!(key("space"), b" ");
        assert_eq!(key("pageup"), b"\x1b[5~");
        assert_eq!(key("pagedown"), b"\x1b[6~");
        assert_eq!(key("delete"), b"\x1b[3~");
        assert_eq!(key("insert"), b"\x1b[2~");
        assert_eq!(key("f1"), b"\x1bOP");
        assert_eq!(key("f5"), b"\x1b[15~");
        assert_eq!(key("f12"), b"\x1b[24~");
        assert_eq!(key("shift-tab"), b"\x1b[Z");
    }

    #[test]
    fn ctrl_keys() {
        assert_eq!(key("ctrl-a"), [1]);
        assert_eq!(key("ctrl-c"), [3]);
        assert_eq!(key("ctrl-d"), [4]);
        assert_eq!(key("ctrl-z"), [26]);
        assert_eq!(key("CTRL+C"), [3]);
        assert_eq!(key("^c"), [3]);
        assert_eq!(key("ctrl-["), [0x1b]);
        assert_eq!(key("ctrl-space"), [0]);
        assert_eq!(key("alt-b"), b"\x1bb");
        assert_eq!(key("alt-enter"), b"\x1b\r");
    }

    #[test]
    fn single_characters() {
        assert_eq!(key("y"), b"y");
        assert_eq!(key("Y"), b"Y");
        assert_eq!(key("1"), b"1");
        assert_eq!(key("-"), b"-");
        assert_eq!(key("é"), "é".as_bytes());
    }

    #[test]
    fn arrows_honour_application_cursor_mode() {
        assert_eq!(key("up"), b"\x1b[A");
        assert_eq!(key("down"), b"\x1b[B");
        assert_eq!(key("right"), b"\x1b[C");
        assert_eq!(key("left"), b"\x1b[D");
        assert_eq!(key("home"), b"\x1b[H");
        assert_eq!(encode_key("up", true).unwrap(), b"\x1bOA");
        assert_eq!(encode_key("left", true).unwrap(), b"\x1bOD");
        assert_eq!(encode_key("end", true).unwrap(), b"\x1bOF");
        // Mode as a real parser sees it after the program enabled DECCKM.
        let mut parser = vt100::Parser::new(24, 80, 0);
        parser.process(b"\x1b[?1h");
        let app = parser.screen().application_cursor();
        assert_eq!(encode_key("up", app).unwrap(), b"\x1bOA");
        parser.process(b"\x1b[?1l");
        let app = parser.screen().application_cursor();
        assert_eq!(encode_key("up", app).unwrap(), b"\x1b[A");
    }

    #[test]
    fn unknown_keys_are_errors() {
        for bad in ["", "hello", "ctrl-", "ctrl-ab", "f13", "super-x"] {
            assert!(
                matches!(encode_key(bad, false), Err(SessionError::UnknownKey(_))),
                "{bad:?}"
            );
        }
        let err = encode_keys(&["enter", "nope"], false).unwrap_err();
        assert!(err.to_string().contains("nope"));
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
}
