//! The config file's `[keys]`: the user's own keys, applied to the default [`BINDINGS`].
//!
//! ```toml
//! [keys]
//! stop = "ctrl-x"          # replaces Q wherever stop is bound
//! new_task = ["n", "+"]    # several keys
//! [keys.terminal]
//! live = "L"               # only in the terminal pane
//! ```
//!
//! An entry replaces every key of the action (in its context, or in every context where it is
//! bound when given at the top). A wrong entry is refused before the TUI starts: an unknown
//! action or context, a key that cannot be read, or a key that would do two things in one
//! place (also with a default left as it is).

use super::keymap::{Action, BINDINGS, Binding, Context, Key, KeyMap, layers};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeysError {
    #[error("[keys] {entry}: no such action; the actions are: {valid}")]
    UnknownAction { entry: String, valid: String },
    #[error("[keys.{name}]: no such place; the places are: {valid}")]
    UnknownContext { name: String, valid: String },
    #[error("[keys] {entry}: {action} is not bound in {context}; the actions there are: {valid}")]
    NotInContext {
        entry: String,
        action: String,
        context: String,
        valid: String,
    },
    #[error(
        "[keys] {entry}: cannot read the key {key:?} (write e.g. \"x\", \"X\", \"ctrl-x\", \"alt-enter\", \"shift-pgup\", \"f5\")"
    )]
    BadKey { entry: String, key: String },
    #[error("[keys] {entry}: expected a key (\"ctrl-x\") or a list of keys ([\"n\", \"+\"])")]
    NotAKey { entry: String },
    #[error("[keys] {entry}: {key} is also {other} in {context}; one key does one thing")]
    Clash {
        entry: String,
        key: String,
        other: String,
        context: String,
    },
}

/// An action's name in the config file: its name in snake case (`new_task`).
pub fn action_name(action: Action) -> String {
    let mut out = String::new();
    for (i, c) in format!("{action:?}").chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A context's name in the config file (`[keys.terminal]`).
pub fn context_name(context: Context) -> &'static str {
    match context {
        Context::Tasks => "tasks",
        Context::Steps => "details",
        Context::Terminal => "terminal",
        Context::Transcript => "transcript",
        Context::Search => "search",
        Context::Panes => "panes",
        Context::Typing => "typing",
        Context::Form => "form",
        Context::Confirm => "confirm",
        Context::Filter => "filter",
        Context::Message => "message",
        Context::Help => "help",
        Context::Diff => "diff",
        Context::Grid => "grid",
    }
}

/// Reads a key as written in the config file: `x`, `X`, `+`, `ctrl-x`, `alt-enter`,
/// `shift-pgup`, `f5`, `space`, `-`. Case matters for a character alone (`R` is Shift-r).
pub fn parse_key(text: &str) -> Option<Key> {
    let text = text.trim();
    let mut mods = KeyModifiers::NONE;
    let mut rest = text;
    // A modifier is a word and a dash before more text: `ctrl--` is Ctrl and `-`.
    while let Some((word, after)) = rest.split_once('-') {
        if after.is_empty() {
            break;
        }
        let m = match word.to_ascii_lowercase().as_str() {
            "ctrl" | "c" | "control" => KeyModifiers::CONTROL,
            "alt" | "a" | "meta" | "m" => KeyModifiers::ALT,
            "shift" | "s" => KeyModifiers::SHIFT,
            _ => break,
        };
        mods |= m;
        rest = after;
    }
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) if !c.is_control() => {
            // Ctrl and Alt letters are reported in lower case.
            if mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                && !mods.contains(KeyModifiers::SHIFT)
            {
                KeyCode::Char(c.to_lowercase().next().unwrap_or(c))
            } else {
                KeyCode::Char(c)
            }
        }
        _ => match rest.to_ascii_lowercase().as_str() {
            "space" => KeyCode::Char(' '),
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pgdown" | "pagedown" => KeyCode::PageDown,
            "del" | "delete" => KeyCode::Delete,
            "ins" | "insert" => KeyCode::Insert,
            f if f.starts_with('f') => match f[1..].parse::<u8>() {
                Ok(n @ 1..=24) => KeyCode::F(n),
                _ => return None,
            },
            _ => return None,
        },
    };
    // As the terminal reports it, then as the table writes it.
    Some(super::keymap::normalize(&KeyEvent::new(code, mods)))
}

/// Every action named in the table, in table order.
fn all_actions() -> Vec<Action> {
    let mut out = Vec::new();
    for b in BINDINGS {
        if !out.contains(&b.action) {
            out.push(b.action);
        }
    }
    out
}

fn names(actions: impl Iterator<Item = Action>) -> String {
    actions.map(action_name).collect::<Vec<_>>().join(", ")
}

/// One `name = keys` entry, as written (for errors).
fn entry_text(context: Option<Context>, name: &str, value: &toml::Value) -> String {
    match context {
        Some(c) => format!("{}.{name} = {value}", context_name(c)),
        None => format!("{name} = {value}"),
    }
}

/// The keys of one entry: a string or a list of strings.
fn keys_of(entry: &str, value: &toml::Value) -> Result<Vec<Key>, KeysError> {
    let texts: Vec<&str> = match value {
        toml::Value::String(s) => vec![s.as_str()],
        toml::Value::Array(items) => items
            .iter()
            .map(|v| v.as_str())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| KeysError::NotAKey {
                entry: entry.to_string(),
            })?,
        _ => {
            return Err(KeysError::NotAKey {
                entry: entry.to_string(),
            });
        }
    };
    if texts.is_empty() {
        return Err(KeysError::NotAKey {
            entry: entry.to_string(),
        });
    }
    texts
        .into_iter()
        .map(|t| {
            parse_key(t).ok_or_else(|| KeysError::BadKey {
                entry: entry.to_string(),
                key: t.to_string(),
            })
        })
        .collect()
}

impl KeyMap {
    /// The default bindings with `[keys]` applied. `Err` says what is wrong, naming the entry.
    pub fn from_config(keys: &toml::Table) -> Result<KeyMap, KeysError> {
        let actions = all_actions();
        let action_of = |entry: &str, name: &str| {
            actions
                .iter()
                .copied()
                .find(|a| action_name(*a) == name)
                .ok_or_else(|| KeysError::UnknownAction {
                    entry: entry.to_string(),
                    valid: names(actions.iter().copied()),
                })
        };
        let mut bindings: Vec<Binding> = BINDINGS.to_vec();
        // Which bindings the user wrote, with their entry (for a clash's message).
        let mut written: Vec<(Binding, String)> = Vec::new();
        // The top level first, so that a context's own entry wins over it.
        for (name, value) in keys.iter().filter(|(_, v)| !v.is_table()) {
            let entry = entry_text(None, name, value);
            let action = action_of(&entry, name)?;
            let keys = keys_of(&entry, value)?;
            let contexts: Vec<Context> = BINDINGS
                .iter()
                .filter(|b| b.action == action)
                .map(|b| b.context)
                .fold(Vec::new(), |mut v, c| {
                    if !v.contains(&c) {
                        v.push(c);
                    }
                    v
                });
            for ctx in contexts {
                replace(&mut bindings, &mut written, ctx, action, &keys, &entry);
            }
        }
        for (ctx_name, table) in keys.iter().filter_map(|(k, v)| Some((k, v.as_table()?))) {
            let ctx = Context::HELP_ORDER
                .into_iter()
                .find(|c| context_name(*c) == ctx_name)
                .ok_or_else(|| KeysError::UnknownContext {
                    name: ctx_name.clone(),
                    valid: Context::HELP_ORDER
                        .into_iter()
                        .map(context_name)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            let here: Vec<_> = actions
                .iter()
                .copied()
                .filter(|a| BINDINGS.iter().any(|b| b.context == ctx && b.action == *a))
                .collect();
            for (name, value) in table {
                let entry = entry_text(Some(ctx), name, value);
                let action = action_of(&entry, name)?;
                if !here.contains(&action) {
                    return Err(KeysError::NotInContext {
                        entry,
                        action: name.clone(),
                        context: format!("[keys.{ctx_name}]"),
                        valid: names(here.iter().copied()),
                    });
                }
                let keys = keys_of(&entry, value)?;
                replace(&mut bindings, &mut written, ctx, action, &keys, &entry);
            }
        }
        check_clashes(&bindings, &written)?;
        Ok(KeyMap::from_bindings(bindings))
    }
}

/// Puts `keys` in place of the action's keys in one context, where its first key was (the
/// help and the bar keep their order).
fn replace(
    bindings: &mut Vec<Binding>,
    written: &mut Vec<(Binding, String)>,
    context: Context,
    action: Action,
    keys: &[Key],
    entry: &str,
) {
    let at = bindings
        .iter()
        .position(|b| b.context == context && b.action == action)
        .unwrap_or(bindings.len());
    bindings.retain(|b| !(b.context == context && b.action == action));
    let mut new: Vec<Binding> = Vec::new();
    for key in keys {
        if !new.iter().any(|b| b.key == *key) {
            new.push(Binding {
                context,
                key: *key,
                action,
            });
        }
    }
    for (i, b) in new.into_iter().enumerate() {
        written.push((b, entry.to_string()));
        bindings.insert((at + i).min(bindings.len()), b);
    }
}

/// A key written by the user that does something else where it works: in its own context, or
/// in one it is looked up with (a pane's keys, then any pane's).
fn check_clashes(bindings: &[Binding], written: &[(Binding, String)]) -> Result<(), KeysError> {
    for (mine, entry) in written {
        for other in bindings {
            if other.key != mine.key || other.action == mine.action {
                continue;
            }
            // Keys of a pane shadow those of any pane on purpose only in the transcript
            // (its `/` searches, its Esc closes); elsewhere one key does one thing.
            let together = other.context == mine.context
                || (layers(mine.context).contains(&other.context)
                    && mine.context != Context::Transcript)
                || (layers(other.context).contains(&mine.context)
                    && other.context != Context::Transcript);
            if together {
                return Err(KeysError::Clash {
                    entry: entry.clone(),
                    key: mine.key.name(),
                    other: action_name(other.action),
                    context: context_name(other.context).to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> Result<KeyMap, KeysError> {
        let file: toml::Table = toml::from_str(text).expect("valid toml");
        let keys = file
            .get("keys")
            .and_then(|k| k.as_table())
            .expect("a [keys] table");
        KeyMap::from_config(keys)
    }

    fn ev(c: char, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), mods)
    }

    #[test]
    fn keys_are_read_as_written() {
        assert_eq!(parse_key("x"), Some(Key::ch('x')));
        assert_eq!(parse_key("X"), Some(Key::ch('X')));
        assert_eq!(parse_key("shift-x"), Some(Key::ch('X')));
        assert_eq!(parse_key("ctrl-x"), Some(Key::ctrl('x')));
        assert_eq!(parse_key("Ctrl-X"), Some(Key::ctrl('x')));
        assert_eq!(parse_key("+"), Some(Key::ch('+')));
        assert_eq!(parse_key("-"), Some(Key::ch('-')));
        assert_eq!(parse_key("ctrl--"), Some(Key::ctrl('-')));
        assert_eq!(parse_key("space"), Some(Key::ch(' ')));
        assert_eq!(parse_key("shift-pgup"), Some(Key::shift(KeyCode::PageUp)));
        assert_eq!(parse_key("shift-tab"), Some(Key::plain(KeyCode::BackTab)));
        assert_eq!(parse_key("F5"), Some(Key::plain(KeyCode::F(5))));
        for bad in ["", "ctrl-", "hyper-x", "f0", "f99", "enterr", "xy"] {
            assert_eq!(parse_key(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn names_are_snake_case() {
        assert_eq!(action_name(Action::NewTask), "new_task");
        assert_eq!(action_name(Action::Stop), "stop");
        assert_eq!(action_name(Action::HelpPageDown), "help_page_down");
    }

    #[test]
    fn a_rebound_key_replaces_the_default_everywhere_and_shows() {
        let keys = map("[keys]\nstop = \"ctrl-x\"\nnew_task = [\"n\", \"+\"]\n").unwrap();
        let stop = keys.lookup(Context::Tasks, &ev('x', KeyModifiers::CONTROL));
        assert_eq!(stop, Some(Action::Stop));
        // Q no longer stops; it does nothing.
        assert_eq!(
            keys.lookup(Context::Tasks, &ev('Q', KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            keys.lookup(Context::Terminal, &ev('+', KeyModifiers::NONE)),
            Some(Action::NewTask)
        );
        assert_eq!(
            keys.key_for(Context::Tasks, Action::Stop).as_deref(),
            Some("Ctrl-x")
        );
        assert!(keys.help(Context::Panes).contains(&(
            "Ctrl-x".to_string(),
            "stop orchestra and end every agent (asks first)"
        )));
        assert!(keys.bar(Context::Tasks).contains(&("n".to_string(), "new")));
        assert!(keys.command_chars().contains(&'+'));
        assert!(!keys.command_chars().contains(&'Q'));
        // An action bound in several places is rebound in each.
        let keys = map("[keys]\nselect_next = \"ctrl-n\"\n").unwrap();
        for ctx in [Context::Tasks, Context::Filter] {
            let got = keys.lookup(ctx, &ev('n', KeyModifiers::CONTROL));
            assert_eq!(got, Some(Action::SelectNext), "{ctx:?}");
        }
    }

    #[test]
    fn a_context_table_rebinds_only_there() {
        let keys = map("[keys.terminal]\nlive = \"L\"\n[keys.help]\nclose_help = \"x\"\n").unwrap();
        assert_eq!(
            keys.lookup(Context::Terminal, &ev('L', KeyModifiers::NONE)),
            Some(Action::Live)
        );
        assert_eq!(
            keys.lookup(Context::Terminal, &ev('G', KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            keys.lookup(Context::Help, &ev('x', KeyModifiers::NONE)),
            Some(Action::CloseHelp)
        );
        // The top level and a context: the context's entry wins there.
        let keys =
            map("[keys]\nselect_next = \"J\"\n[keys.filter]\nselect_next = \"ctrl-n\"\n").unwrap();
        assert_eq!(
            keys.lookup(Context::Tasks, &ev('J', KeyModifiers::NONE)),
            Some(Action::SelectNext)
        );
        assert_eq!(
            keys.lookup(Context::Filter, &ev('J', KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            keys.lookup(Context::Filter, &ev('n', KeyModifiers::CONTROL)),
            Some(Action::SelectNext)
        );
    }

    #[test]
    fn wrong_entries_are_refused_with_what_is_valid() {
        let e = map("[keys]\nstopp = \"x\"\n").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("stopp = \"x\""), "{text}");
        assert!(text.contains("no such action"), "{text}");
        assert!(
            text.contains("new_task") && text.contains("detach"),
            "{text}"
        );

        let e = map("[keys]\nstop = \"ctrl-xx\"\n").unwrap_err();
        assert_eq!(
            e,
            KeysError::BadKey {
                entry: "stop = \"ctrl-xx\"".into(),
                key: "ctrl-xx".into()
            }
        );
        assert!(matches!(
            map("[keys]\nstop = 3\n").unwrap_err(),
            KeysError::NotAKey { .. }
        ));
        assert!(matches!(
            map("[keys.termnal]\nlive = \"L\"\n").unwrap_err(),
            KeysError::UnknownContext { .. }
        ));
        let e = map("[keys.help]\nstop = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("close_help"), "{e}");
    }

    #[test]
    fn a_key_doing_two_things_is_refused() {
        // With a default left as it is: k selects in the task list.
        let e = map("[keys]\nstop = \"k\"\n").unwrap_err();
        assert_eq!(
            e,
            KeysError::Clash {
                entry: "stop = \"k\"".into(),
                key: "k".into(),
                other: "select_prev".into(),
                context: "tasks".into(),
            }
        );
        // Two of the user's own.
        let e = map("[keys]\nstop = \"x\"\nnew_task = \"x\"\n").unwrap_err();
        assert!(matches!(e, KeysError::Clash { .. }), "{e}");
        // In one context.
        let e = map("[keys.help]\nhelp_up = \"q\"\n").unwrap_err();
        assert!(e.to_string().contains("close_help"), "{e}");
        // Moving a key off first frees it: Q stops no more, so it may start.
        let keys = map("[keys]\nstop = \"ctrl-x\"\nstart = \"Q\"\n").unwrap();
        assert_eq!(
            keys.lookup(Context::Tasks, &ev('Q', KeyModifiers::NONE)),
            Some(Action::Start)
        );
        // The same key twice for one action is one key.
        let keys = map("[keys]\nstop = [\"x\", \"x\"]\n").unwrap();
        assert_eq!(
            keys.help(Context::Panes)
                .iter()
                .filter(|(k, _)| k == "x")
                .count(),
            1
        );
    }
}
