//! crossterm's key events as the engine's neutral [`Key`]; the bytes come from the one encoder
//! in `session::keys`.

use crossterm::event::{self, KeyEvent, KeyEventKind, KeyModifiers};
use orchestra_proto::keys::{Key, KeyCode};

/// What typing into a terminal needs to know of its screen: how keys, pastes and the wheel
/// are encoded. Copied out of the screen so that a key need not take the screen's lock, which
/// the thread parsing the session's output holds while it parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputModes {
    pub application_cursor: bool,
    pub bracketed_paste: bool,
    pub alternate_screen: bool,
    pub mouse_mode: vt100::MouseProtocolMode,
    pub mouse_encoding: vt100::MouseProtocolEncoding,
}

impl InputModes {
    pub fn of(screen: &vt100::Screen) -> InputModes {
        InputModes {
            application_cursor: screen.application_cursor(),
            bracketed_paste: screen.bracketed_paste(),
            alternate_screen: screen.alternate_screen(),
            mouse_mode: screen.mouse_protocol_mode(),
            mouse_encoding: screen.mouse_protocol_encoding(),
        }
    }
}

/// The key a crossterm event presses; `None`: nothing to send (key releases, bare modifiers,
/// keys xterm has no sequence for).
pub fn to_key(ev: &KeyEvent) -> Option<Key> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    let mut shift = ev.modifiers.contains(KeyModifiers::SHIFT);
    let code = match ev.code {
        event::KeyCode::Char(c) => KeyCode::Char(c),
        event::KeyCode::Enter => KeyCode::Enter,
        event::KeyCode::Tab => KeyCode::Tab,
        event::KeyCode::BackTab => {
            shift = true;
            KeyCode::Tab
        }
        event::KeyCode::Backspace => KeyCode::Backspace,
        event::KeyCode::Esc => KeyCode::Esc,
        event::KeyCode::Up => KeyCode::Up,
        event::KeyCode::Down => KeyCode::Down,
        event::KeyCode::Left => KeyCode::Left,
        event::KeyCode::Right => KeyCode::Right,
        event::KeyCode::Home => KeyCode::Home,
        event::KeyCode::End => KeyCode::End,
        event::KeyCode::PageUp => KeyCode::PageUp,
        event::KeyCode::PageDown => KeyCode::PageDown,
        event::KeyCode::Insert => KeyCode::Insert,
        event::KeyCode::Delete => KeyCode::Delete,
        event::KeyCode::F(n) => KeyCode::F(n),
        _ => return None,
    };
    Some(Key {
        code,
        ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
        alt: ev.modifiers.contains(KeyModifiers::ALT),
        shift,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyCode as Ct;
    use orchestra_proto::keys::encode_key;

    fn typed(code: Ct, m: KeyModifiers, app_cursor: bool) -> Option<Vec<u8>> {
        to_key(&KeyEvent::new(code, m)).and_then(|k| k.encode(app_cursor))
    }

    #[test]
    fn plain_and_control_characters() {
        let none = KeyModifiers::NONE;
        assert_eq!(typed(Ct::Char('a'), none, false).unwrap(), b"a");
        assert_eq!(typed(Ct::Char('é'), none, false).unwrap(), "é".as_bytes());
        assert_eq!(
            typed(Ct::Char('A'), KeyModifiers::SHIFT, false).unwrap(),
            b"A"
        );
        assert_eq!(
            typed(Ct::Char('c'), KeyModifiers::CONTROL, false).unwrap(),
            [3]
        );
        assert_eq!(
            typed(Ct::Char('x'), KeyModifiers::ALT, false).unwrap(),
            b"\x1bx"
        );
        assert_eq!(typed(Ct::Enter, none, false).unwrap(), b"\r");
        assert_eq!(typed(Ct::Backspace, none, false).unwrap(), [0x7f]);
        assert_eq!(
            typed(Ct::BackTab, KeyModifiers::SHIFT, false).unwrap(),
            b"\x1b[Z"
        );
        assert_eq!(typed(Ct::BackTab, none, false).unwrap(), b"\x1b[Z");
    }

    #[test]
    fn arrows_honour_application_cursor_mode() {
        let none = KeyModifiers::NONE;
        assert_eq!(typed(Ct::Up, none, false).unwrap(), b"\x1b[A");
        assert_eq!(typed(Ct::Up, none, true).unwrap(), b"\x1bOA");
        assert_eq!(
            typed(Ct::Left, KeyModifiers::CONTROL, true).unwrap(),
            b"\x1b[1;5D"
        );
        assert_eq!(typed(Ct::End, none, true).unwrap(), b"\x1bOF");
        assert_eq!(
            typed(Ct::F(12), KeyModifiers::SHIFT, false).unwrap(),
            b"\x1b[24;2~"
        );
    }

    #[test]
    fn releases_and_keys_without_a_sequence_send_nothing() {
        let mut release = KeyEvent::new(Ct::Char('a'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(to_key(&release), None);
        for code in [Ct::CapsLock, Ct::Null, Ct::Menu, Ct::F(13)] {
            assert_eq!(typed(code, KeyModifiers::NONE, false), None, "{code:?}");
        }
        assert_eq!(typed(Ct::Char('1'), KeyModifiers::CONTROL, false), None);
    }

    /// Every key name the API accepts, with every modifier combination, in both cursor modes,
    /// sends the same bytes as the crossterm event for the same key typed in the TUI; and a
    /// name is refused exactly when the typed key would send nothing.
    #[test]
    fn every_named_key_sends_what_the_typed_key_sends() {
        let mut keys: Vec<(String, Ct)> = [
            ("enter", Ct::Enter),
            ("return", Ct::Enter),
            ("tab", Ct::Tab),
            ("backtab", Ct::BackTab),
            ("esc", Ct::Esc),
            ("backspace", Ct::Backspace),
            ("space", Ct::Char(' ')),
            ("up", Ct::Up),
            ("down", Ct::Down),
            ("left", Ct::Left),
            ("right", Ct::Right),
            ("home", Ct::Home),
            ("end", Ct::End),
            ("pageup", Ct::PageUp),
            ("pgdn", Ct::PageDown),
            ("insert", Ct::Insert),
            ("delete", Ct::Delete),
        ]
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
        keys.extend((1..=12).map(|n| (format!("f{n}"), Ct::F(n))));
        // Printable ASCII and a few others, as the terminal reports them typed.
        keys.extend(
            (' '..='~')
                .chain(['é', 'ß', 'ж', '€'])
                .map(|c| (c.to_string(), Ct::Char(c))),
        );
        let modifier_sets = [
            ("", KeyModifiers::NONE),
            ("ctrl-", KeyModifiers::CONTROL),
            ("alt-", KeyModifiers::ALT),
            ("shift-", KeyModifiers::SHIFT),
            ("ctrl-alt-", KeyModifiers::CONTROL | KeyModifiers::ALT),
            ("ctrl-shift-", KeyModifiers::CONTROL | KeyModifiers::SHIFT),
            ("alt-shift-", KeyModifiers::ALT | KeyModifiers::SHIFT),
            (
                "ctrl-alt-shift-",
                KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT,
            ),
        ];
        let mut checked = 0;
        for (base, code) in &keys {
            for (prefix, mods) in modifier_sets {
                let name = format!("{prefix}{base}");
                // With shift, a terminal reports the shifted character: a letter's capital.
                // Other characters depend on the layout and have no shift- name.
                let code = match *code {
                    Ct::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
                        let upper: Vec<char> = c.to_uppercase().collect();
                        if !c.is_alphabetic() || upper.len() != 1 {
                            assert!(encode_key(&name, false).is_err(), "{name:?}");
                            continue;
                        }
                        Ct::Char(upper[0])
                    }
                    other => other,
                };
                for app_cursor in [false, true] {
                    let named = encode_key(&name, app_cursor).ok();
                    let typed = typed(code, mods, app_cursor);
                    assert_eq!(named, typed, "{name:?} (app_cursor {app_cursor})");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
