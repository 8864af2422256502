//! Answering the prompt a blocked session shows: which prompt it waits on (its hook's words,
//! or the dialog on its screen), and the keys of the option chosen.

use super::{SendMessage, SessionEntry};
use crate::engine::status::{HOOK_PROMPT, SessionStatus};
use crate::engine::{Engine, EngineError, EngineResult};
use crate::providers::patterns::{SeenPrompt, Verdict};
use orchestra_proto::wire::SessionInfo;

impl Engine {
    /// Answers the prompt a blocked session shows with one of its options.
    pub async fn answer_prompt(&self, id: &str, option: &str) -> EngineResult<SessionInfo> {
        let entry = self.session_entry(id)?;
        entry.live_pty()?;
        let seen = self.prompt_to_answer(&entry)?;
        let prompt = seen.prompt;
        if seen.name == HOOK_PROMPT {
            return Err(EngineError::Conflict(format!(
                "the session asks \"{}\" but its dialog is not on its screen yet, so its options are not known: answer once the session's prompt lists them (a session:prompt event says when)",
                prompt.text
            )));
        }
        let chosen = prompt
            .options
            .iter()
            .find(|o| o.key == option)
            .ok_or_else(|| {
                let keys: Vec<&str> = prompt.options.iter().map(|o| o.key.as_str()).collect();
                EngineError::Invalid(format!(
                    "option {option:?} is not one of the prompt's options ({})",
                    keys.join(", ")
                ))
            })?;
        let keys = chosen
            .keys
            .clone()
            .unwrap_or_else(|| vec![option.to_string()]);
        // Answered once the keys are durable and in the session's turn; they are typed right
        // after (see `send_accepted`), so the session told here may still show the prompt.
        self.send_accepted(&entry, SendMessage::Keys(keys)).await?;
        self.get_session(id)
    }

    /// The prompt a session waits on: the one its status says (read from the screen again
    /// while it is only its hook's words: the dialog may be drawn by now), or one still on
    /// its screen while a redraw (a blinking cursor, a spinner elsewhere) has it counted as
    /// busy. Never a prompt orchestra answers by itself: that one waits for nobody else.
    fn prompt_to_answer(&self, entry: &SessionEntry) -> EngineResult<SeenPrompt> {
        let (status, approval) = {
            let info = entry.info.lock();
            (info.status, info.approval)
        };
        let nothing = || {
            EngineError::Conflict(format!(
                "session is {status}, not blocked on a prompt: there is nothing to answer"
            ))
        };
        let on_screen = || match entry.classify_now() {
            Some(Verdict::Prompt(p)) => Some(p),
            _ => None,
        };
        match status {
            SessionStatus::Blocked => {
                let blocked_on = entry.agent.lock().prompt.clone().ok_or_else(nothing)?;
                if blocked_on.name == HOOK_PROMPT
                    && let Some(shown) = on_screen()
                {
                    return Ok(shown);
                }
                Ok(blocked_on)
            }
            SessionStatus::Busy => {
                let shown = on_screen().ok_or_else(nothing)?;
                if entry
                    .agent
                    .lock()
                    .answers_itself(&shown, approval)
                    .is_some()
                {
                    return Err(EngineError::Conflict(format!(
                        "orchestra answers this {} prompt by itself (approval: {approval}): there is nothing to answer",
                        shown.prompt.kind
                    )));
                }
                Ok(shown)
            }
            _ => Err(nothing()),
        }
    }
}
