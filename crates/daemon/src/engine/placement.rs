//! Where the per-session files orchestra hands a CLI go, so that the CLI takes them.
//!
//! They belong in the private state directory, but a CLI may refuse a file by where it is:
//! Gemini CLI skips a system-defaults file (the one that carries orchestra's instructions and
//! hooks) unless the file and every directory above it are owned by root and writable by no
//! one else, so a state directory anywhere under `/tmp` (a clone's `target/`, a CI runner's
//! scratch space) loses them without a word from orchestra. The rule is checked here the way
//! the CLI checks it (its `isFileAndDirectorySecureSync`, read from the installed bundle), and
//! the files go to the first of a few private places that meets it: the state directory,
//! then `$XDG_RUNTIME_DIR/orchestra`, then the account's own `~/.cache/orchestra` (from the
//! password database: `HOME` may point anywhere). When none does, they stay in the state
//! directory and the caller says on the task why the CLI will likely skip them.

use crate::providers::DirRule;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The directory, under each candidate place, that holds the per-session directories.
const INSTRUCTIONS: &str = "instructions";

/// Where a session's files go under `rule`: the place chosen, or the state directory's with
/// why no place met the rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Placement {
    Accepted(PathBuf),
    Refused {
        fallback: PathBuf,
        reasons: Vec<String>,
    },
}

impl Placement {
    /// The directory under which `<session>/` is written.
    pub(crate) fn dir(&self) -> &Path {
        match self {
            Placement::Accepted(d) => d,
            Placement::Refused { fallback, .. } => fallback,
        }
    }
}

/// Every place, in order of preference, where per-session files may go: the state
/// directory's own first. Removal looks in all of them.
pub(crate) fn places(state_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![state_dir.join(INSTRUCTIONS)];
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && run.is_absolute()
    {
        out.push(run.join("orchestra").join(INSTRUCTIONS));
    }
    if let Some(home) = account_home() {
        out.push(home.join(".cache/orchestra").join(INSTRUCTIONS));
    }
    out.dedup();
    out
}

/// The home directory of the account orchestra runs as, from the password database.
fn account_home() -> Option<PathBuf> {
    let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).ok()??;
    user.dir.is_absolute().then_some(user.dir)
}

/// The first of [`places`] where a file orchestra writes meets `rule`.
pub(crate) fn choose(state_dir: &Path, rule: DirRule) -> Placement {
    let all = places(state_dir);
    let mut reasons = Vec::new();
    // A rule no file of orchestra's can meet (root's, run as another user) is refused once.
    if let Some(why) = refusal(Path::new("/"), rule) {
        return Placement::Refused {
            fallback: all[0].clone(),
            reasons: vec![why],
        };
    }
    for place in &all {
        // The session's own directory below it is made by orchestra (0700): the rule is
        // checked for a file there.
        match refusal(&place.join("session").join("file"), rule) {
            None => return Placement::Accepted(place.clone()),
            Some(why) => reasons.push(format!("{}: {why}", place.display())),
        }
    }
    Placement::Refused {
        fallback: all[0].clone(),
        reasons,
    }
}

/// Why the CLI would refuse `file` (to be written by orchestra, 0600, in directories it makes
/// 0700 where they are missing) under `rule`; `None` when it would take it.
pub(crate) fn refusal(file: &Path, rule: DirRule) -> Option<String> {
    match rule {
        DirRule::Any => None,
        DirRule::RootOwned => root_owned_refusal(file, nix::unistd::geteuid().as_raw()),
    }
}

/// Gemini CLI's check on POSIX: each directory above the file, as written and as resolved,
/// is owned by root and not writable by group or others, a symlink among them is owned by
/// root, and so is the file. What does not exist yet is orchestra's to make, as `uid`.
fn root_owned_refusal(file: &Path, uid: u32) -> Option<String> {
    if !file.is_absolute() {
        return Some(format!("{} is not an absolute path", file.display()));
    }
    // The file (and any directory missing above it) is orchestra's to write.
    if uid != 0 {
        return Some(format!(
            "orchestra runs as uid {uid}, so what it writes is not owned by root"
        ));
    }
    let parent = file.parent().unwrap_or(Path::new("/"));
    if let Some(why) = ancestors_refusal(parent) {
        return Some(why);
    }
    // As resolved: the deepest directory that exists, with symlinks followed.
    let existing = parent.ancestors().find(|d| d.exists())?;
    let resolved = existing.canonicalize().ok()?;
    if resolved != existing {
        return ancestors_refusal(&resolved);
    }
    None
}

/// The first of `dir` and the directories above it that is not root's alone.
fn ancestors_refusal(dir: &Path) -> Option<String> {
    let normal: PathBuf = dir
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    for d in normal.ancestors() {
        let Ok(link) = std::fs::symlink_metadata(d) else {
            // Missing: orchestra makes it (its uid was checked already).
            continue;
        };
        if link.file_type().is_symlink() && link.uid() != 0 {
            return Some(format!(
                "the symlink {} is owned by uid {}, not root",
                d.display(),
                link.uid()
            ));
        }
        let Ok(meta) = std::fs::metadata(d) else {
            return Some(format!("{} cannot be read", d.display()));
        };
        if meta.uid() != 0 {
            return Some(format!(
                "{} is owned by uid {}, not root",
                d.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Some(format!(
                "{} is writable by group or others (mode {:o})",
                d.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn root() -> bool {
        nix::unistd::geteuid().is_root()
    }

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A private directory whose ancestors all meet the rule (as root): the tests' own.
    fn private_base() -> Option<tempfile::TempDir> {
        places(Path::new("/nonexistent-state"))
            .into_iter()
            .skip(1)
            .find_map(|p| {
                std::fs::create_dir_all(&p).ok()?;
                let d = tempfile::tempdir_in(&p).ok()?;
                chmod(d.path(), 0o700);
                root_owned_refusal(&d.path().join("f"), 0)
                    .is_none()
                    .then_some(d)
            })
    }

    /// A private base (see [`private_base`]) with a directory anyone may write to in it
    /// (sticky, like `/tmp`); `None`, saying so, where no base can be had.
    fn shared_in_private() -> Option<(tempfile::TempDir, PathBuf)> {
        let Some(base) = private_base() else {
            eprintln!("SKIP: no directory here is root's alone (not running as root)");
            return None;
        };
        let shared = base.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        chmod(&shared, 0o1777);
        Some((base, shared))
    }

    #[test]
    fn any_place_does_for_a_cli_without_a_rule() {
        assert_eq!(refusal(Path::new("/tmp/x/y"), DirRule::Any), None);
    }

    #[test]
    fn a_directory_anyone_may_write_to_is_refused_wherever_it_is_above() {
        let Some((_base, shared)) = shared_in_private() else {
            return;
        };
        let file = shared.join("state/instructions/s/system-defaults.json");
        let why = root_owned_refusal(&file, 0).expect("refused");
        assert!(why.contains("writable by group or others"), "{why}");
        assert!(why.contains("1777"), "{why}");
        // Group-writable is refused too; owner-only is taken.
        chmod(&shared, 0o770);
        assert!(root_owned_refusal(&file, 0).is_some());
        chmod(&shared, 0o755);
        assert_eq!(root_owned_refusal(&file, 0), None);
    }

    #[test]
    fn a_symlink_to_a_shared_directory_is_judged_where_it_leads() {
        let Some((base, shared)) = shared_in_private() else {
            return;
        };
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&shared, &link).unwrap();
        let why = root_owned_refusal(&link.join("s/f.json"), 0).expect("refused");
        assert!(why.contains("writable by group or others"), "{why}");
    }

    #[test]
    fn a_file_owned_by_another_user_is_refused() {
        assert!(
            root_owned_refusal(Path::new("/x/f"), 1000).is_some_and(|w| w.contains("uid 1000"))
        );
        assert!(root_owned_refusal(Path::new("relative/f"), 0).is_some());
    }

    #[test]
    fn a_state_directory_under_a_shared_one_hands_its_files_over_from_elsewhere() {
        let Some((base, shared)) = shared_in_private() else {
            return;
        };
        let state = shared.join("state");
        match choose(&state, DirRule::RootOwned) {
            Placement::Accepted(dir) => {
                assert!(!dir.starts_with(&shared), "{}", dir.display());
                assert!(places(&state).contains(&dir));
            }
            refused => panic!("no place accepted: {refused:?}"),
        }
        // Without a rule the state directory's own place is used.
        assert_eq!(
            choose(&state, DirRule::Any),
            Placement::Accepted(state.join(INSTRUCTIONS))
        );
        if root() {
            let private = base.path().join("private-state");
            assert_eq!(
                choose(&private, DirRule::RootOwned),
                Placement::Accepted(private.join(INSTRUCTIONS))
            );
        }
    }
}
