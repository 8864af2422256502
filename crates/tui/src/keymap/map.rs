//! The bindings in force ([`KeyMap`]) and what is read from them: a key's action, the bottom
//! bar's hints, the help overlay's lines, the characters commands take. Dispatch, the help
//! and the bar all ask this one map, so they cannot disagree.

use super::{Action, BINDINGS, Binding, Context, Key, layers, normalize};
use crossterm::event::{KeyCode, KeyEvent};

/// The bindings in force: [`BINDINGS`], with the user's `[keys]` from the config file
/// applied (see [`KeyMap::from_config`]). Dispatch, the help and the bar all read this one.
#[derive(Debug, Clone)]
pub struct KeyMap {
    bindings: Vec<Binding>,
}

impl Default for KeyMap {
    fn default() -> KeyMap {
        KeyMap {
            bindings: BINDINGS.to_vec(),
        }
    }
}

impl KeyMap {
    pub(crate) fn from_bindings(bindings: Vec<Binding>) -> KeyMap {
        KeyMap { bindings }
    }

    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// The action of a key in a context (a pane's own keys, then those of any pane). `None`:
    /// the key is not bound there and does nothing.
    pub fn lookup(&self, context: Context, key: &KeyEvent) -> Option<Action> {
        let key = normalize(key);
        layers(context).iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == *ctx && b.key == key)
                .map(|b| b.action)
        })
    }

    /// Each action bound in exactly this context, with its keys, in table order.
    fn actions_in(&self, context: Context) -> Vec<(Action, Vec<Key>)> {
        let mut out: Vec<(Action, Vec<Key>)> = Vec::new();
        for b in self.bindings.iter().filter(|b| b.context == context) {
            match out.iter_mut().find(|(a, _)| *a == b.action) {
                Some((_, keys)) => keys.push(b.key),
                None => out.push((b.action, vec![b.key])),
            }
        }
        out
    }

    /// The first key bound to `action` where `context` has the keyboard, as written.
    pub fn key_for(&self, context: Context, action: Action) -> Option<String> {
        layers(context).iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == *ctx && b.action == action)
                .map(|b| b.key.name())
        })
    }

    /// The bottom bar's hints where `context` has the keyboard: `(keys, label)`, most specific
    /// first.
    pub fn bar(&self, context: Context) -> Vec<(String, &'static str)> {
        layers(context)
            .iter()
            .flat_map(|ctx| {
                let shown = self
                    .actions_in(*ctx)
                    .into_iter()
                    .filter(|(a, _)| a.in_bar(*ctx))
                    .collect();
                merged(shown, Action::label, false)
            })
            .collect()
    }

    /// The bottom bar's hints over the form editing a pending task: Enter saves rather than
    /// creates.
    pub fn edit_form_bar(&self) -> Vec<(String, &'static str)> {
        let shown = self
            .actions_in(Context::Form)
            .into_iter()
            .filter(|(a, _)| a.in_bar(Context::Form))
            .collect();
        merged(
            shown,
            |a| match a {
                Action::FormSubmit => "save",
                other => other.label(),
            },
            false,
        )
    }

    /// The help overlay's lines for one context: `(keys, what)`, every key listed.
    pub fn help(&self, context: Context) -> Vec<(String, &'static str)> {
        merged(self.actions_in(context), Action::help, true)
    }

    /// Characters bound, without modifiers, to a command in some pane. A prompt option whose
    /// key is one of these is answered in the agent's terminal, not by its key from the list.
    pub fn command_chars(&self) -> Vec<char> {
        let mut out = Vec::new();
        for b in self.bindings.iter().filter(|b| {
            matches!(
                b.context,
                Context::Tasks
                    | Context::Steps
                    | Context::Terminal
                    | Context::Panes
                    | Context::Grid
            ) && b.key.mods.is_empty()
        }) {
            if let KeyCode::Char(c) = b.key.code
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
        out
    }
}

/// Adjacent actions that share a text, with their keys: the first keys of each joined by `/`,
/// then the second keys, and so on (`↑/↓  k/j`).
fn merged(
    actions: Vec<(Action, Vec<Key>)>,
    text: impl Fn(Action) -> &'static str,
    all_keys: bool,
) -> Vec<(String, &'static str)> {
    let mut groups: Vec<(Vec<Vec<Key>>, &'static str)> = Vec::new();
    for (a, keys) in actions {
        match groups.last_mut() {
            Some((ks, t)) if *t == text(a) => ks.push(keys),
            _ => groups.push((vec![keys], text(a))),
        }
    }
    groups
        .into_iter()
        .map(|(ks, t)| {
            let ranks = if all_keys {
                ks.iter().map(Vec::len).max().unwrap_or(0)
            } else {
                1
            };
            let keys = (0..ranks)
                .map(|r| {
                    let row: Vec<Key> = ks.iter().filter_map(|k| k.get(r)).copied().collect();
                    join_keys(&row)
                })
                .collect::<Vec<_>>()
                .join("  ");
            (keys, t)
        })
        .collect()
}

/// Keys joined by `/`, a modifier shared with the first written once: `Shift-PgUp/PgDn`.
fn join_keys(keys: &[Key]) -> String {
    let Some(first) = keys.first() else {
        return String::new();
    };
    let mut out = first.name();
    for k in &keys[1..] {
        out.push('/');
        if k.mods == first.mods {
            out.push_str(&Key::plain(k.code).name());
        } else {
            out.push_str(&k.name());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn a_key_is_not_the_same_key_with_ctrl_or_alt() {
        let a = |m| KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::Char('a'), m));
        assert_eq!(a(KeyModifiers::NONE), Some(Action::Autopilot));
        assert_eq!(a(KeyModifiers::CONTROL), None);
        assert_eq!(a(KeyModifiers::ALT), None);
        assert_eq!(a(KeyModifiers::CONTROL | KeyModifiers::ALT), None);
        let n = |m| KeyMap::default().lookup(Context::Steps, &ev(KeyCode::Char('n'), m));
        assert_eq!(n(KeyModifiers::NONE), Some(Action::NewTask));
        assert_eq!(n(KeyModifiers::ALT), None);
        assert_eq!(n(KeyModifiers::CONTROL), None);
        // Ctrl-c detaches, c alone cancels.
        assert_eq!(
            KeyMap::default().lookup(
                Context::Tasks,
                &ev(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Action::Detach)
        );
        assert_eq!(
            KeyMap::default().lookup(
                Context::Confirm,
                &ev(KeyCode::Char('y'), KeyModifiers::CONTROL)
            ),
            None
        );
    }

    #[test]
    fn shift_on_a_character_is_the_character() {
        for key in [
            ev(KeyCode::Char('R'), KeyModifiers::SHIFT),
            ev(KeyCode::Char('R'), KeyModifiers::NONE),
            ev(KeyCode::Char('r'), KeyModifiers::SHIFT),
        ] {
            assert_eq!(
                KeyMap::default().lookup(Context::Tasks, &key),
                Some(Action::Retry),
                "{key:?}"
            );
        }
        assert_eq!(
            KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
        assert_eq!(
            KeyMap::default().lookup(Context::Tasks, &ev(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::PrevPane)
        );
        // Shift on other keys counts: PgUp scrolls while typing only with Shift.
        assert_eq!(
            KeyMap::default().lookup(Context::Typing, &ev(KeyCode::PageUp, KeyModifiers::SHIFT)),
            Some(Action::PageBack)
        );
        assert_eq!(
            KeyMap::default().lookup(Context::Typing, &ev(KeyCode::PageUp, KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            KeyMap::default().lookup(
                Context::Typing,
                &ev(KeyCode::Char('Q'), KeyModifiers::CONTROL)
            ),
            None
        );
    }

    #[test]
    fn the_bar_and_the_help_come_from_the_table() {
        let bar = KeyMap::default().bar(Context::Tasks);
        assert_eq!(bar[0], ("↑/↓".to_string(), "select"));
        assert!(bar.contains(&("a".to_string(), "autopilot")));
        let help = KeyMap::default().help(Context::Tasks);
        assert_eq!(
            help[0],
            ("↑/↓  k/j".to_string(), "select the previous / next task")
        );
        assert_eq!(
            KeyMap::default()
                .key_for(Context::Terminal, Action::Live)
                .as_deref(),
            Some("End")
        );
        assert_eq!(
            KeyMap::default().key_for(Context::Tasks, Action::Live),
            None
        );
        assert_eq!(
            KeyMap::default()
                .key_for(Context::Tasks, Action::Back)
                .as_deref(),
            Some("Esc")
        );
        let chars = KeyMap::default().command_chars();
        for c in ['q', 'n', 's', 'R', 'a', 'g', 'G', '?', '/'] {
            assert!(chars.contains(&c), "{c}");
        }
        assert!(!chars.iter().any(|c| c.is_ascii_digit()));
    }
}
