//! The binding table ([`BINDINGS`]): every default key of every context, in the order the
//! help and the bar list them. Kept apart from the lookup so the table reads as a table.

use super::{Action, Context, Key};
use crossterm::event::{KeyCode, KeyModifiers};

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub key: Key,
    pub action: Action,
}

const fn bind(context: Context, key: Key, action: Action) -> Binding {
    Binding {
        context,
        key,
        action,
    }
}

use Action as A;
use Context as C;
use KeyCode as K;

/// Every binding. Order matters for display: the help and the bar list actions in this order,
/// and an action's first key is the one the bar shows.
pub const BINDINGS: &[Binding] = &[
    // The task list.
    bind(C::Tasks, Key::plain(K::Up), A::SelectPrev),
    bind(C::Tasks, Key::plain(K::Down), A::SelectNext),
    bind(C::Tasks, Key::ch('k'), A::SelectPrev),
    bind(C::Tasks, Key::ch('j'), A::SelectNext),
    bind(C::Tasks, Key::plain(K::Home), A::SelectFirst),
    bind(C::Tasks, Key::plain(K::End), A::SelectLast),
    bind(C::Tasks, Key::ch('g'), A::SelectFirst),
    bind(C::Tasks, Key::ch('G'), A::SelectLast),
    // The details pane.
    bind(C::Steps, Key::plain(K::Up), A::StepsUp),
    bind(C::Steps, Key::plain(K::Down), A::StepsDown),
    bind(C::Steps, Key::ch('k'), A::StepsUp),
    bind(C::Steps, Key::ch('j'), A::StepsDown),
    bind(C::Steps, Key::plain(K::Home), A::StepsTop),
    bind(C::Steps, Key::plain(K::End), A::StepsBottom),
    bind(C::Steps, Key::ch('g'), A::StepsTop),
    bind(C::Steps, Key::ch('G'), A::StepsBottom),
    // The terminal pane (not typing).
    bind(C::Terminal, Key::plain(K::Up), A::LineBack),
    bind(C::Terminal, Key::plain(K::Down), A::LineForward),
    bind(C::Terminal, Key::ch('k'), A::LineBack),
    bind(C::Terminal, Key::ch('j'), A::LineForward),
    bind(C::Terminal, Key::plain(K::End), A::Live),
    bind(C::Terminal, Key::ch('G'), A::Live),
    bind(C::Terminal, Key::plain(K::Home), A::Oldest),
    bind(C::Terminal, Key::ch('g'), A::Oldest),
    // The terminal pane showing a transcript (the rest as in the terminal pane).
    bind(C::Transcript, Key::ch('/'), A::Search),
    bind(C::Transcript, Key::plain(K::Esc), A::CloseTranscript),
    // Typing a search.
    bind(C::Search, Key::plain(K::Enter), A::SearchNext),
    bind(C::Search, Key::plain(K::Down), A::SearchNext),
    bind(C::Search, Key::plain(K::Up), A::SearchPrev),
    bind(C::Search, Key::plain(K::Esc), A::SearchDone),
    // Any pane.
    bind(C::Panes, Key::plain(K::Enter), A::Type),
    bind(C::Panes, Key::ch('i'), A::Type),
    bind(C::Panes, Key::ch('n'), A::NewTask),
    bind(C::Panes, Key::ch('s'), A::Start),
    bind(C::Panes, Key::ch('p'), A::Pause),
    bind(C::Panes, Key::ch('r'), A::Resume),
    bind(C::Panes, Key::ch('c'), A::Cancel),
    bind(C::Panes, Key::ch('R'), A::Retry),
    bind(C::Panes, Key::ch('m'), A::Message),
    bind(C::Panes, Key::ch('a'), A::Autopilot),
    bind(C::Panes, Key::ch('t'), A::Transcript),
    bind(C::Panes, Key::ch('D'), A::Delete),
    bind(C::Panes, Key::ch('e'), A::Edit),
    bind(C::Panes, Key::ch('o'), A::Order),
    bind(C::Panes, Key::ch('d'), A::Diff),
    bind(C::Panes, Key::ch('M'), A::Merge),
    bind(C::Panes, Key::ch('X'), A::Discard),
    bind(C::Panes, Key::ch('C'), A::Continue),
    bind(C::Panes, Key::ch('q'), A::Detach),
    bind(C::Panes, Key::ctrl('c'), A::Detach),
    bind(C::Panes, Key::ch('Q'), A::Stop),
    bind(C::Panes, Key::ch('/'), A::Filter),
    bind(C::Panes, Key::plain(K::Tab), A::NextPane),
    bind(C::Panes, Key::plain(K::BackTab), A::PrevPane),
    bind(C::Panes, Key::plain(K::PageUp), A::PageBack),
    bind(C::Panes, Key::plain(K::PageDown), A::PageForward),
    bind(C::Panes, Key::plain(K::Esc), A::Back),
    bind(C::Panes, Key::ctrl('l'), A::Refresh),
    bind(C::Panes, Key::ch('?'), A::Help),
    bind(C::Panes, Key::ch('v'), A::Grid),
    bind(C::Panes, Key::ch('z'), A::Zoom),
    bind(C::Panes, Key::ch('w'), A::NextWaiting),
    // The grid of agents (the rest as in any pane: Enter types into the selected tile).
    bind(C::Grid, Key::plain(K::Left), A::TileLeft),
    bind(C::Grid, Key::plain(K::Right), A::TileRight),
    bind(C::Grid, Key::plain(K::Up), A::TileUp),
    bind(C::Grid, Key::plain(K::Down), A::TileDown),
    bind(C::Grid, Key::ch('h'), A::TileLeft),
    bind(C::Grid, Key::ch('l'), A::TileRight),
    bind(C::Grid, Key::ch('k'), A::TileUp),
    bind(C::Grid, Key::ch('j'), A::TileDown),
    // Typing into the agent: every other key goes to it.
    bind(C::Typing, Key::ctrl('q'), A::LeaveTyping),
    bind(C::Typing, Key::shift(K::PageUp), A::PageBack),
    bind(C::Typing, Key::shift(K::PageDown), A::PageForward),
    // The new-task form; other keys edit the field.
    bind(C::Form, Key::plain(K::Tab), A::FormNextField),
    bind(C::Form, Key::plain(K::BackTab), A::FormPrevField),
    bind(C::Form, Key::plain(K::Down), A::FormNextField),
    bind(C::Form, Key::plain(K::Up), A::FormPrevField),
    bind(C::Form, Key::plain(K::Left), A::FormPrevChoice),
    bind(C::Form, Key::plain(K::Right), A::FormNextChoice),
    bind(C::Form, Key::plain(K::Enter), A::FormSubmit),
    bind(C::Form, Key::plain(K::Esc), A::FormCancel),
    bind(
        C::Form,
        Key {
            code: K::Enter,
            mods: KeyModifiers::ALT,
        },
        A::FormNewLine,
    ),
    bind(C::Form, Key::ctrl('j'), A::FormNewLine),
    // A confirmation: nothing else answers it.
    bind(C::Confirm, Key::ch('y'), A::Yes),
    bind(C::Confirm, Key::ch('n'), A::No),
    bind(C::Confirm, Key::ch('Y'), A::Yes),
    bind(C::Confirm, Key::ch('N'), A::No),
    bind(C::Confirm, Key::plain(K::Esc), A::No),
    bind(C::Confirm, Key::ch('o'), A::OnlyThis),
    bind(C::Confirm, Key::ch('O'), A::OnlyThis),
    // The filter line; other keys edit it.
    bind(C::Filter, Key::plain(K::Up), A::SelectPrev),
    bind(C::Filter, Key::plain(K::Down), A::SelectNext),
    bind(C::Filter, Key::plain(K::Enter), A::KeepFilter),
    bind(C::Filter, Key::plain(K::Esc), A::ClearFilter),
    // The message line; other keys edit it.
    bind(C::Message, Key::plain(K::Enter), A::SendMessage),
    bind(C::Message, Key::plain(K::Esc), A::CancelMessage),
    // The help overlay.
    bind(C::Help, Key::plain(K::Up), A::HelpUp),
    bind(C::Help, Key::plain(K::Down), A::HelpDown),
    bind(C::Help, Key::ch('k'), A::HelpUp),
    bind(C::Help, Key::ch('j'), A::HelpDown),
    bind(C::Help, Key::plain(K::PageUp), A::HelpPageUp),
    bind(C::Help, Key::plain(K::PageDown), A::HelpPageDown),
    bind(C::Help, Key::plain(K::Esc), A::CloseHelp),
    bind(C::Help, Key::ch('?'), A::CloseHelp),
    bind(C::Help, Key::ch('q'), A::CloseHelp),
    bind(C::Help, Key::plain(K::Enter), A::CloseHelp),
    // The diff view.
    bind(C::Diff, Key::plain(K::Up), A::DiffUp),
    bind(C::Diff, Key::plain(K::Down), A::DiffDown),
    bind(C::Diff, Key::ch('k'), A::DiffUp),
    bind(C::Diff, Key::ch('j'), A::DiffDown),
    bind(C::Diff, Key::plain(K::PageUp), A::DiffPageUp),
    bind(C::Diff, Key::plain(K::PageDown), A::DiffPageDown),
    bind(C::Diff, Key::ch('b'), A::DiffPageUp),
    bind(C::Diff, Key::ch(' '), A::DiffPageDown),
    bind(C::Diff, Key::plain(K::Home), A::DiffTop),
    bind(C::Diff, Key::plain(K::End), A::DiffBottom),
    bind(C::Diff, Key::ch('g'), A::DiffTop),
    bind(C::Diff, Key::ch('G'), A::DiffBottom),
    bind(C::Diff, Key::ch('n'), A::NextFile),
    bind(C::Diff, Key::ch('N'), A::PrevFile),
    bind(C::Diff, Key::plain(K::Tab), A::NextFile),
    bind(C::Diff, Key::plain(K::BackTab), A::PrevFile),
    bind(C::Diff, Key::plain(K::Left), A::DiffLeft),
    bind(C::Diff, Key::plain(K::Right), A::DiffRight),
    bind(C::Diff, Key::ch('M'), A::Merge),
    bind(C::Diff, Key::ch('X'), A::Discard),
    bind(C::Diff, Key::ch('P'), A::PullRequest),
    bind(C::Diff, Key::ch('r'), A::ReloadDiff),
    bind(C::Diff, Key::ch('['), A::CompareLeft),
    bind(C::Diff, Key::ch(']'), A::CompareRight),
    bind(C::Diff, Key::ch('p'), A::PickLeft),
    bind(C::Diff, Key::plain(K::Esc), A::CloseDiff),
    bind(C::Diff, Key::ch('q'), A::CloseDiff),
    bind(C::Diff, Key::ch('d'), A::CloseDiff),
    bind(C::Diff, Key::ch('?'), A::Help),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                let clash = a.key == b.key
                    && (a.context == b.context
                        || (b.context == Context::Panes
                            && matches!(
                                a.context,
                                Context::Tasks | Context::Steps | Context::Terminal | Context::Grid
                            )));
                assert!(!clash, "{:?} is bound twice: {a:?} and {b:?}", a.key);
            }
        }
    }
}
