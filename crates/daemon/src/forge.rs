//! Pull requests through the user's own forge CLI: `gh` for GitHub, `glab` for GitLab
//! (a merge request there). Which one serves a remote, the exact command lines (pure, so
//! they are tested without either CLI), and running them as orchestra runs git: blocking
//! (callers run it off the async workers), with a timeout, in a process group that is killed
//! and reaped, with stdin closed and no prompt, pager, colour or update check.

use crate::git::run::{Bounded, Output, run_bounded};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How long `gh auth status` may take (it may ask the forge whether the token still works).
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(20);
/// How long opening the pull request may take.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(40);

/// A forge and its CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    GitHub,
    GitLab,
}

impl Forge {
    /// The CLI's program name.
    pub fn program(self) -> &'static str {
        match self {
            Forge::GitHub => "gh",
            Forge::GitLab => "glab",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Forge::GitHub => "GitHub",
            Forge::GitLab => "GitLab",
        }
    }

    /// What the forge calls the thing.
    pub fn request_name(self) -> &'static str {
        match self {
            Forge::GitHub => "pull request",
            Forge::GitLab => "merge request",
        }
    }
}

/// Where a remote's URL points: the forge's host and the repository's path on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAddress {
    pub host: String,
    /// `owner/name` (GitLab: `group/subgroup/name`), without `.git`.
    pub path: String,
}

/// The host and path of a remote URL (`https://host/owner/name.git`,
/// `ssh://git@host:22/owner/name`, `git@host:owner/name.git`); `None` for a local path or a
/// `file://` URL, which no forge serves.
pub fn remote_address(url: &str) -> Option<RemoteAddress> {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        let (authority, path) = rest.split_once('/')?;
        let host = authority.rsplit('@').next()?;
        let host = host.split(':').next()?;
        (host, path)
    } else {
        // scp-like `[user@]host:path`; a colon after a slash is part of a local path.
        let (before, path) = url.split_once(':')?;
        if before.contains('/') || before.is_empty() {
            return None;
        }
        (before.rsplit('@').next()?, path)
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_matches('/');
    if host.is_empty() || !path.contains('/') {
        return None;
    }
    Some(RemoteAddress {
        host: host.to_ascii_lowercase(),
        path: path.to_string(),
    })
}

/// Why no forge CLI can open the pull request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoForge {
    #[error(
        "neither gh nor glab is on PATH: install GitHub's gh (or GitLab's glab) and log in with it to open pull requests"
    )]
    NoCli,
    #[error(
        "the remote is on {host}, a {} host, but {} is not on PATH: install it and log in with it",
        .forge.label(),
        .forge.program()
    )]
    Missing { host: String, forge: Forge },
}

/// The forge that serves the remote at `address`: told by its host's name (`github…`,
/// `gitlab…`), else the CLI that is installed (`gh` first).
pub fn forge_for(
    address: Option<&RemoteAddress>,
    installed: impl Fn(Forge) -> bool,
) -> Result<Forge, NoForge> {
    let named = address.and_then(|a| {
        if a.host.contains("gitlab") {
            Some(Forge::GitLab)
        } else if a.host.contains("github") {
            Some(Forge::GitHub)
        } else {
            None
        }
    });
    match (named, address) {
        (Some(forge), _) if installed(forge) => Ok(forge),
        (Some(forge), Some(a)) => Err(NoForge::Missing {
            host: a.host.clone(),
            forge,
        }),
        _ => [Forge::GitHub, Forge::GitLab]
            .into_iter()
            .find(|f| installed(*f))
            .ok_or(NoForge::NoCli),
    }
}

/// What a pull request is opened with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestSpec<'a> {
    pub title: &'a str,
    pub body: &'a str,
    /// The pushed branch (the same name on the remote).
    pub branch: &'a str,
    /// The branch it asks to be merged into.
    pub base: &'a str,
    /// The repository on the forge, when the remote's URL names one; else the CLI finds it
    /// from the work tree's remotes.
    pub repo: Option<&'a RemoteAddress>,
}

/// The arguments (after the program) that open the pull request. Every value is its own
/// argument: nothing is read from a prompt, an editor or the work tree's current branch.
pub fn create_args(forge: Forge, spec: &PullRequestSpec) -> Vec<String> {
    let mut args: Vec<String> = match forge {
        Forge::GitHub => [
            "pr",
            "create",
            "--head",
            spec.branch,
            "--base",
            spec.base,
            "--title",
            spec.title,
            "--body",
            spec.body,
        ]
        .map(str::to_string)
        .to_vec(),
        Forge::GitLab => [
            "mr",
            "create",
            "--source-branch",
            spec.branch,
            "--target-branch",
            spec.base,
            "--title",
            spec.title,
            "--description",
            spec.body,
            "--yes",
        ]
        .map(str::to_string)
        .to_vec(),
    };
    if let Some(repo) = spec.repo {
        args.push("--repo".into());
        args.push(match forge {
            Forge::GitHub => format!("{}/{}", repo.host, repo.path),
            Forge::GitLab => format!("https://{}/{}", repo.host, repo.path),
        });
    }
    args
}

/// The arguments that ask whether the CLI is logged in (to `host` when known); `gh` and
/// `glab` spell them the same way.
pub fn auth_args(host: Option<&str>) -> Vec<String> {
    let mut args = vec!["auth".to_string(), "status".to_string()];
    if let Some(h) = host {
        args.push("--hostname".into());
        args.push(h.to_string());
    }
    args
}

/// The last `http(s)://` address in what a CLI printed (`gh pr create` prints the new pull
/// request's; when one exists already, it says so with that one's).
pub fn url_in(text: &str) -> Option<String> {
    text.split_whitespace()
        .rev()
        .map(|w| w.trim_matches(|c: char| matches!(c, '"' | '\'' | '<' | '>' | '(' | ')' | ',')))
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .map(str::to_string)
}

/// Whether the CLI refused because a pull request for the branch is open already (then the
/// push updated it, and its address is in the message).
pub fn already_exists(stderr: &str) -> bool {
    stderr.contains("already exists")
}

/// Runs `program args…` in `dir` as said at the top; how it ended, or why it could not run.
pub fn run(
    program: &Path,
    args: &[String],
    dir: &Path,
    timeout: Duration,
) -> Result<Output, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .env("GH_PROMPT_DISABLED", "1")
        .env("GLAB_NO_PROMPT", "1")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("GLAB_CHECK_UPDATE", "false")
        .env("GH_PAGER", "cat")
        .env("PAGER", "cat")
        .env("NO_COLOR", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true");
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match run_bounded(cmd, timeout) {
        Ok(Bounded::Done(out)) => Ok(out),
        Ok(Bounded::TimedOut) => Err(format!(
            "{name} did not finish within {} s and was stopped",
            timeout.as_secs()
        )),
        Err(e) => Err(format!("{name} could not be run: {e}")),
    }
}

/// What a CLI said when it failed, as one line (stderr, else stdout).
pub fn failure(out: &Output) -> String {
    let said = if out.stderr.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        out.stderr.clone()
    };
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    if lines.is_empty() {
        match out.code {
            Some(c) => format!("it exited with code {c} without saying why"),
            None => "it was killed by a signal".into(),
        }
    } else {
        lines.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(host: &str, path: &str) -> RemoteAddress {
        RemoteAddress {
            host: host.into(),
            path: path.into(),
        }
    }

    #[test]
    fn remote_urls_are_read_in_each_form_git_takes() {
        let want = Some(addr("github.com", "octo/hello"));
        assert_eq!(remote_address("https://github.com/octo/hello.git"), want);
        assert_eq!(
            remote_address("https://user:tok@github.com/octo/hello/"),
            want
        );
        assert_eq!(remote_address("git@github.com:octo/hello.git"), want);
        assert_eq!(remote_address("ssh://git@GitHub.com:22/octo/hello"), want);
        assert_eq!(
            remote_address("git@gitlab.example.org:group/sub/proj.git"),
            Some(addr("gitlab.example.org", "group/sub/proj"))
        );
        assert_eq!(remote_address("/srv/git/origin.git"), None);
        assert_eq!(remote_address("file:///srv/git/origin.git"), None);
        assert_eq!(remote_address("../origin"), None);
        assert_eq!(remote_address("./a:b/c"), None);
    }

    #[test]
    fn the_forge_is_told_by_the_host_else_by_the_cli_installed() {
        let gh_only = |f: Forge| f == Forge::GitHub;
        let both = |_: Forge| true;
        let none = |_: Forge| false;
        let lab = addr("gitlab.com", "g/p");
        let hub = addr("github.com", "o/r");
        let own = addr("git.example.org", "o/r");
        assert_eq!(forge_for(Some(&lab), both), Ok(Forge::GitLab));
        assert_eq!(forge_for(Some(&hub), both), Ok(Forge::GitHub));
        assert_eq!(forge_for(Some(&own), both), Ok(Forge::GitHub));
        assert_eq!(
            forge_for(None, |f: Forge| f == Forge::GitLab),
            Ok(Forge::GitLab)
        );
        assert_eq!(
            forge_for(Some(&lab), gh_only),
            Err(NoForge::Missing {
                host: "gitlab.com".into(),
                forge: Forge::GitLab
            })
        );
        let missing = forge_for(Some(&lab), gh_only).unwrap_err().to_string();
        assert!(missing.contains("glab is not on PATH"), "{missing}");
        assert_eq!(forge_for(None, none), Err(NoForge::NoCli));
        assert!(NoForge::NoCli.to_string().contains("neither gh nor glab"));
    }

    #[test]
    fn the_command_lines_carry_each_value_as_one_argument() {
        let repo = addr("github.com", "octo/hello");
        let spec = PullRequestSpec {
            title: "fix2",
            body: "exited with code 0\n\nOrchestra-Task: t1",
            branch: "orchestra/fix2-abcd1234",
            base: "main",
            repo: Some(&repo),
        };
        assert_eq!(
            create_args(Forge::GitHub, &spec),
            [
                "pr",
                "create",
                "--head",
                "orchestra/fix2-abcd1234",
                "--base",
                "main",
                "--title",
                "fix2",
                "--body",
                "exited with code 0\n\nOrchestra-Task: t1",
                "--repo",
                "github.com/octo/hello",
            ]
        );
        let lab = addr("gitlab.com", "g/sub/p");
        assert_eq!(
            create_args(
                Forge::GitLab,
                &PullRequestSpec {
                    repo: Some(&lab),
                    ..spec.clone()
                }
            ),
            [
                "mr",
                "create",
                "--source-branch",
                "orchestra/fix2-abcd1234",
                "--target-branch",
                "main",
                "--title",
                "fix2",
                "--description",
                "exited with code 0\n\nOrchestra-Task: t1",
                "--yes",
                "--repo",
                "https://gitlab.com/g/sub/p",
            ]
        );
        let local = create_args(Forge::GitHub, &PullRequestSpec { repo: None, ..spec });
        assert!(!local.contains(&"--repo".to_string()), "{local:?}");
        assert_eq!(
            auth_args(Some("github.com")),
            ["auth", "status", "--hostname", "github.com"]
        );
        assert_eq!(auth_args(None), ["auth", "status"]);
    }

    #[test]
    fn the_address_is_found_in_what_the_cli_printed() {
        assert_eq!(
            url_in("https://github.com/o/r/pull/7\n").as_deref(),
            Some("https://github.com/o/r/pull/7")
        );
        let exists = "a pull request for branch \"x\" into branch \"main\" already exists:\nhttps://github.com/o/r/pull/3";
        assert!(already_exists(exists));
        assert_eq!(
            url_in(exists).as_deref(),
            Some("https://github.com/o/r/pull/3")
        );
        assert_eq!(url_in("nothing here"), None);
    }

    #[test]
    fn a_cli_that_runs_too_long_is_stopped_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("slow");
        std::fs::write(&script, "#!/bin/sh\nsleep 30 &\nwait\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = run(&script, &[], dir.path(), Duration::from_millis(200)).unwrap_err();
        assert!(e.contains("slow did not finish"), "{e}");
        let e = run(
            &dir.path().join("absent"),
            &[],
            dir.path(),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(e.contains("could not be run"), "{e}");
    }
}
