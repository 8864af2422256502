//! The form's choices beyond text: approval preset, isolation, max attempts and the
//! providers a request is raced on, each with the default the engine would give.

use super::backend::ProviderChoice;
use orchestra_proto::task::{Approval, DEFAULT_MAX_ATTEMPTS, Isolation, VariantSpec};
use std::path::Path;

/// Steps `at` through `n` options forwards or back, wrapping.
pub fn step(at: usize, n: usize, forward: bool) -> usize {
    let n = n.max(1);
    if forward {
        (at + 1) % n
    } else {
        (at + n - 1) % n
    }
}

/// The approval choices in order: the default first.
pub const APPROVALS: [Option<Approval>; 4] = [
    None,
    Some(Approval::Manual),
    Some(Approval::Safe),
    Some(Approval::Auto),
];

/// The isolation choices in order: the default first.
pub const ISOLATIONS: [Option<Isolation>; 3] =
    [None, Some(Isolation::Worktree), Some(Isolation::None)];

pub fn approval_text(a: Option<Approval>) -> String {
    match a {
        Some(a) => a.as_str().to_string(),
        None => format!("default ({})", Approval::default().as_str()),
    }
}

pub fn isolation_word(i: Isolation) -> &'static str {
    match i {
        Isolation::Worktree => "worktree",
        Isolation::None => "none",
    }
}

/// What the engine gives a task that asks for no isolation: a worktree for a coding agent in
/// a git repository (unless the daemon's config says none, which the form cannot see).
pub fn default_isolation(provider: Option<&ProviderChoice>, dir: &str) -> Isolation {
    let coding = provider.is_some_and(|p| p.coding_agent);
    if coding && in_git_repository(Path::new(dir.trim())) {
        Isolation::Worktree
    } else {
        Isolation::None
    }
}

fn in_git_repository(dir: &Path) -> bool {
    dir.is_absolute() && dir.ancestors().any(|d| d.join(".git").exists())
}

pub fn max_attempts_text(n: Option<u32>) -> String {
    match n {
        Some(n) => n.to_string(),
        None => format!("default ({DEFAULT_MAX_ATTEMPTS})"),
    }
}

/// One more or one less attempt: below 1 is the default, at most 20.
pub fn step_attempts(n: Option<u32>, forward: bool) -> Option<u32> {
    match (n, forward) {
        (None, true) => Some(1),
        (None, false) => Some(20),
        (Some(1), false) => None,
        (Some(20), true) => None,
        (Some(n), true) => Some(n + 1),
        (Some(n), false) => Some(n - 1),
    }
}

/// The checks field's lines as commands: blank lines dropped.
pub fn checks_of(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The providers chosen for best of N, in the providers' order, each with `approval`.
pub fn variants_of(
    providers: &[ProviderChoice],
    chosen: &[bool],
    approval: Option<Approval>,
) -> Vec<VariantSpec> {
    providers
        .iter()
        .zip(chosen)
        .filter(|(_, on)| **on)
        .map(|(p, _)| VariantSpec {
            provider_id: p.id.clone(),
            approval,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(id: &str, coding: bool) -> ProviderChoice {
        ProviderChoice {
            id: id.into(),
            name: id.into(),
            installed: true,
            install: None,
            needs_description: true,
            coding_agent: coding,
        }
    }

    #[test]
    fn the_default_isolation_is_the_engines() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        std::fs::create_dir(repo.path().join("sub")).unwrap();
        let sub = repo.path().join("sub");
        let sub = sub.to_str().unwrap();
        assert_eq!(
            default_isolation(Some(&choice("claude", true)), sub),
            Isolation::Worktree
        );
        assert_eq!(
            default_isolation(Some(&choice("exec", false)), sub),
            Isolation::None
        );
        let plain = tempfile::tempdir().unwrap();
        let plain = plain.path().to_str().unwrap();
        assert_eq!(
            default_isolation(Some(&choice("claude", true)), plain),
            Isolation::None
        );
    }

    #[test]
    fn attempts_wrap_through_the_default() {
        assert_eq!(step_attempts(None, true), Some(1));
        assert_eq!(step_attempts(Some(1), false), None);
        assert_eq!(step_attempts(Some(20), true), None);
        assert_eq!(max_attempts_text(None), "default (3)");
    }

    #[test]
    fn checks_are_the_lines_that_are_not_blank() {
        assert_eq!(
            checks_of("cargo test\n\n  make lint  \n"),
            ["cargo test", "make lint"]
        );
    }
}
