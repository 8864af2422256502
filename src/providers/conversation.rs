//! Continuing a task's conversation: a CLI that can pin its conversation to an id orchestra
//! chooses (`conversation_args`, Claude Code's `--session-id`) is started with one, recorded
//! on the task; `resume_args` start it again on that conversation (`--resume {conversation}`),
//! or on the most recent one in the task's directory for CLIs that choose their own id.
//! Both are fitted to the installed version's `--help` like presets: a flag it lacks is left
//! out, and then the conversation is not pinned, or cannot be resumed, and orchestra says so.

use super::{Provider, flags};

/// Where the conversation id goes in `conversation_args` and `resume_args`.
const CONVERSATION: &str = "{conversation}";

/// Why a task's conversation cannot be continued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CannotContinue {
    #[error(
        "provider '{0}' cannot continue a conversation (it has no resume_args: a retry starts it afresh)"
    )]
    NotSupported(String),
    #[error(
        "the installed version of provider '{0}' cannot resume a conversation (its --help lacks {1})"
    )]
    NotInstalledVersion(String, String),
    #[error(
        "orchestra recorded no conversation id for this task (it was started before orchestra pinned its conversations, or by a version that cannot); retry it instead"
    )]
    NoConversation,
}

impl Provider {
    /// Whether this provider's tasks can be continued at all (its table says how).
    pub fn can_continue(&self) -> bool {
        !self.resume_args.is_empty()
    }

    /// The arguments pinning a new conversation to `id`, fitted to the installed version:
    /// `None` when the provider has none or the installed version lacks the flag (then no
    /// id is recorded: it would name nothing).
    pub fn pin_conversation(&self, id: &str) -> Option<Vec<String>> {
        let args = self.fitted("conversation", &self.conversation_args)?;
        args.iter()
            .any(|a| a.contains(CONVERSATION))
            .then(|| fill(&args, id))
    }

    /// The arguments that resume the conversation `id` (recorded at the first start).
    pub fn resume_conversation(&self, id: Option<&str>) -> Result<Vec<String>, CannotContinue> {
        if !self.can_continue() {
            return Err(CannotContinue::NotSupported(self.id.clone()));
        }
        let wants_id = self.resume_args.iter().any(|a| a.contains(CONVERSATION));
        let id = match (wants_id, id) {
            (true, None) => return Err(CannotContinue::NoConversation),
            (_, id) => id.unwrap_or_default(),
        };
        let args = self.fitted("resume", &self.resume_args).unwrap_or_default();
        // The flag that names the conversation (or the first one) must have survived.
        let lost = self
            .resume_args
            .iter()
            .find(|a| a.starts_with('-'))
            .filter(|flag| !args.contains(flag));
        if let Some(flag) = lost.or_else(|| args.is_empty().then(|| &self.resume_args[0])) {
            return Err(CannotContinue::NotInstalledVersion(
                self.id.clone(),
                flag.clone(),
            ));
        }
        Ok(fill(&args, id))
    }

    fn fitted(&self, what: &str, args: &[String]) -> Option<Vec<String>> {
        if args.is_empty() {
            return None;
        }
        let fitted = flags::fit(args, self.help().as_deref());
        for change in &fitted.changes {
            tracing::info!(provider = %self.id, "{what}: {change}");
        }
        Some(fitted.args)
    }
}

fn fill(args: &[String], id: &str) -> Vec<String> {
    args.iter().map(|a| a.replace(CONVERSATION, id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Providers;

    fn provider(id: &str) -> Provider {
        Providers::built_in().get(id).cloned().expect("built-in")
    }

    #[test]
    fn claude_pins_and_resumes_by_id() {
        // Not on PATH here: no help to fit to, the table's flags pass as written.
        let mut claude = provider("claude");
        claude.command = "/nonexistent/claude".into();
        assert_eq!(
            claude.pin_conversation("abc").unwrap(),
            ["--session-id", "abc"]
        );
        assert_eq!(
            claude.resume_conversation(Some("abc")).unwrap(),
            ["--resume", "abc"]
        );
        assert_eq!(
            claude.resume_conversation(None),
            Err(CannotContinue::NoConversation)
        );
    }

    #[test]
    fn shell_and_exec_cannot_continue() {
        for id in ["shell", "exec"] {
            let p = provider(id);
            assert!(!p.can_continue());
            assert!(p.pin_conversation("x").is_none());
            let e = p.resume_conversation(Some("x")).unwrap_err();
            assert!(e.to_string().contains("cannot continue"), "{e}");
        }
    }
}
