//! A key as the table writes it ([`Key`]: a code with its exact modifiers), how it is named
//! in the help and the bar, and how a terminal's key event becomes one ([`normalize`]).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key code with its exact modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    pub const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }

    pub const fn shift(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::SHIFT,
        }
    }

    /// How the key is written in the help and the bar: `Ctrl-q`, `Shift-PgUp`, `↑`, `R`.
    pub fn name(self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("Alt-");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            out.push_str("Shift-");
        }
        out + &base
    }
}

/// The key as the table writes it: a printable character carries no SHIFT (it is in the
/// character: `r` with SHIFT is `R`), Shift-Tab is `BackTab` without SHIFT.
pub fn normalize(key: &KeyEvent) -> Key {
    let mut mods = key.modifiers;
    let code = match key.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::Char(if c.is_lowercase() {
                c.to_uppercase().next().unwrap_or(c)
            } else {
                c
            })
        }
        KeyCode::BackTab => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        other => other,
    };
    Key { code, mods }
}
