//! The key map: every key the TUI answers to, in one table.
//!
//! A binding is a key code with its EXACT modifiers, in one context (a pane, typing mode, an
//! overlay). Dispatch (`App::on_key`), the `?` help and the bottom bar are all drawn from
//! [`BINDINGS`], so a key shown is a key that works, and a key not listed does nothing: `a`
//! toggles autopilot, `Ctrl-a` and `Alt-a` do not.
//!
//! Shift on a printable character is the character itself: terminals report `R` as `R`, often
//! with SHIFT set, sometimes as `r` with SHIFT; both are `R` here (see [`normalize`]).
//!
//! The parts, each in its own file: the contexts ([`Context`]) and the actions ([`Action`]),
//! the key type and how a terminal's key event becomes one ([`Key`], [`normalize`]), the
//! table itself ([`BINDINGS`]), the map in force and what is read from it ([`KeyMap`]), and
//! the generated key reference ([`key_reference`]).

mod action;
mod bindings;
mod context;
mod key;
mod map;
mod reference;

pub use action::Action;
pub use bindings::{BINDINGS, Binding};
pub use context::Context;
pub(crate) use context::layers;
pub use key::{Key, normalize};
pub use map::KeyMap;
pub use reference::key_reference;
