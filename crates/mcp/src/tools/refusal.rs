//! A failed call as a tool error: orchestra's own sentence (the client's), then what a model
//! can do about it. The sentence is the daemon's, so it names the task and the reason; the
//! hint depends on the tool and the kind of refusal, since "409" alone tells a model nothing.

use crate::remote::Failed;
use orchestra_client::http::Failure;

/// Which tool failed, for its hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Providers,
    Create,
    Start,
    Pause,
    Resume,
    Cancel,
    Continue,
    Get,
    List,
    Wait,
    Output,
    Message,
    Answer,
    Diff,
    Merge,
    Discard,
    Pick,
}

/// The text of a tool error for `failed` in `tool`.
pub fn text(tool: Tool, failed: &Failed) -> String {
    let e = match failed {
        Failed::Lost(why) => return format!("the call did not finish: {why}"),
        Failed::Api(e) => e,
    };
    let sentence = e.to_string();
    let hint = match e.failure() {
        Failure::Transport { .. } => Some(
            "orchestra's daemon is not running or not reachable; a person has to start it (`orchestra`), then call again",
        ),
        Failure::Refused { status, .. } => hint(tool, *status),
        _ => None,
    };
    match hint {
        Some(h) => format!("{sentence} ({h})"),
        None => sentence,
    }
}

fn hint(tool: Tool, status: u16) -> Option<&'static str> {
    use Tool::*;
    Some(match (status, tool) {
        (400, _) => "fix the argument the sentence names and call again",
        (401, _) => {
            "this MCP server's credential is not accepted: it must run with orchestra's token, or inside an orchestra session with that session's own"
        }
        (403, Create) => {
            "an agent's credential makes children of its own task only, with no wider approval than its own: ask for less, or leave approval out"
        }
        (403, _) => {
            "an agent's credential reaches its own task's children (and theirs) only; list_tasks shows the ones you can act on"
        }
        (404, _) => "no such task: list_tasks shows the ids you can see",
        (409, Start) => {
            "only a pending task starts: get_task shows its status; a finished one runs again with continue_task"
        }
        (409, Pause | Resume) => {
            "pause only a running task, resume only a paused one: get_task shows its status"
        }
        (409, Cancel) => "the task has finished already: there is nothing to cancel",
        (409, Continue) => {
            "only a finished task continues, on an agent that can resume its conversation: if it is running, wait for it (wait_for_task) or send_message to it"
        }
        (409, Diff | Merge | Discard) => {
            "the task is running or its worktree is gone: wait for it (wait_for_task) or cancel it (cancel_task), then try again; get_task shows its worktree"
        }
        (409, Pick) => {
            "every variant must have finished, and the pick must merge cleanly: wait for the running ones (wait_for_task) or cancel them, or resolve the conflict the sentence names"
        }
        (409, Message) => {
            "its session has ended: continue_task starts its agent again on the same conversation"
        }
        (409, Answer) => {
            "it waits on no question now, or the question's options are not read yet: wait_for_task with until [\"blocked\"] and answer what it returns"
        }
        (409, _) => "the task is not in a state that allows it: get_task shows its status",
        (429, _) => {
            "orchestra runs as many sessions as it may: wait for one to finish (wait_for_task), then try again"
        }
        (503, _) => {
            "that agent is not installed here or could not start: list_providers shows the installed ones"
        }
        (507, _) => "the disk is full: a person has to free space",
        _ => return None,
    })
}
