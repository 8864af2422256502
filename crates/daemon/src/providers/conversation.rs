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
        self.pin_conversation_for(id, self.help().as_deref())
    }

    /// The arguments that resume the conversation `id` (recorded at the first start).
    pub fn resume_conversation(&self, id: Option<&str>) -> Result<Vec<String>, CannotContinue> {
        self.resume_conversation_for(id, self.help().as_deref())
    }

    /// [`Provider::pin_conversation`] for the installed CLI's `help`.
    fn pin_conversation_for(&self, id: &str, help: Option<&str>) -> Option<Vec<String>> {
        let args = self.fitted("conversation", &self.conversation_args, help)?;
        args.iter()
            .any(|a| a.contains(CONVERSATION))
            .then(|| fill(&args, id))
    }

    /// [`Provider::resume_conversation`] for the installed CLI's `help`.
    fn resume_conversation_for(
        &self,
        id: Option<&str>,
        help: Option<&str>,
    ) -> Result<Vec<String>, CannotContinue> {
        if !self.can_continue() {
            return Err(CannotContinue::NotSupported(self.id.clone()));
        }
        let wants_id = self.resume_args.iter().any(|a| a.contains(CONVERSATION));
        let id = match (wants_id, id) {
            (true, None) => return Err(CannotContinue::NoConversation),
            (_, id) => id.unwrap_or_default(),
        };
        let args = self
            .fitted("resume", &self.resume_args, help)
            .unwrap_or_default();
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

    fn fitted(&self, what: &str, args: &[String], help: Option<&str>) -> Option<Vec<String>> {
        if args.is_empty() {
            return None;
        }
        let fitted = flags::fit(args, help);
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

    // As Claude Code 2.1.332 prints them (commander).
    const CLAUDE_HELP: &str = "Options:
  -r, --resume [value]                  Resume a conversation by session ID or
                                        name, or pick from a list
  --session-id <uuid>                   Use a specific session ID for the
                                        conversation (must be a valid UUID)
";

    #[test]
    fn claude_pins_and_resumes_by_id() {
        let claude = provider("claude");
        for help in [Some(CLAUDE_HELP), None] {
            assert_eq!(
                claude.pin_conversation_for("abc", help).unwrap(),
                ["--session-id", "abc"]
            );
            assert_eq!(
                claude.resume_conversation_for(Some("abc"), help).unwrap(),
                ["--resume", "abc"]
            );
        }
        assert_eq!(
            claude.resume_conversation_for(None, Some(CLAUDE_HELP)),
            Err(CannotContinue::NoConversation)
        );
    }

    #[test]
    fn a_version_without_the_flags_is_not_pinned_and_cannot_resume() {
        let claude = provider("claude");
        let old = "Options:\n  -p, --print   Print and exit\n";
        assert_eq!(claude.pin_conversation_for("abc", Some(old)), None);
        let e = claude
            .resume_conversation_for(Some("abc"), Some(old))
            .unwrap_err();
        assert_eq!(
            e,
            CannotContinue::NotInstalledVersion("claude".into(), "--resume".into())
        );
        // One that resumes the directory's latest conversation needs no id.
        let opencode = provider("opencode");
        let help = "Options:\n  -c, --continue      continue the last session\n";
        assert_eq!(
            opencode.resume_conversation_for(None, Some(help)).unwrap(),
            ["--continue"]
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
