//! Fitting a preset's flags to the installed CLI: users run older and newer releases, and a
//! flag value the installed one rejects makes it exit at once (Claude Code before 2.1.2xx has
//! no `--permission-mode manual`). The preset may list alternatives (`"manual|default"`); the
//! first one the CLI's `--help` accepts is passed, and a flag its help does not know is left
//! out, so the CLI falls back to its own default instead of failing.

use regex::Regex;

/// What a CLI's help says about one flag.
#[derive(Debug, Clone, PartialEq, Eq)]
enum InHelp {
    /// The help does not mention it.
    Absent,
    /// It takes any value, or the help lists none.
    Free,
    /// The values it accepts.
    Choices(Vec<String>),
}

/// The preset's arguments as passed to the installed CLI, with a sentence for each change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fitted {
    pub args: Vec<String>,
    pub changes: Vec<String>,
}

/// Fits `args` (flags, each followed by its value when it takes one; values may list
/// alternatives separated by `|`) to `help`, the CLI's `--help` output. Without a help text
/// (it could not be run) every value is its first alternative. A bare word names a
/// subcommand (`codex resume --last`): it and what follows pass as written, the top-level
/// help does not describe them.
pub fn fit(args: &[String], help: Option<&str>) -> Fitted {
    let mut out = Fitted::default();
    let mut i = 0;
    while i < args.len() {
        let flag = &args[i];
        if !flag.starts_with('-') {
            out.args.extend(args[i..].iter().cloned());
            break;
        }
        // `--flag=value` in one word: for a flag that takes several values (Claude Code's
        // `--mcp-config <configs...>`), so that it does not swallow the task argument after it.
        if let Some((name, value)) = flag.split_once('=').filter(|(n, _)| n.starts_with("--")) {
            i += 1;
            fit_joined(name, value, help, &mut out);
            continue;
        }
        let value = args
            .get(i + 1)
            .filter(|v| flag.starts_with('-') && !v.starts_with('-'));
        i += 1 + usize::from(value.is_some());
        let in_help = match help {
            Some(h) => describe(h, flag),
            None => InHelp::Free,
        };
        if in_help == InHelp::Absent {
            out.changes.push(format!(
                "left out {flag}: the installed version does not have it"
            ));
            continue;
        }
        out.args.push(flag.clone());
        let Some(value) = value else { continue };
        let alternatives: Vec<&str> = value.split('|').collect();
        let chosen = match &in_help {
            InHelp::Choices(choices) => alternatives
                .iter()
                .find(|a| choices.iter().any(|c| c == *a))
                .copied(),
            _ => alternatives.first().copied(),
        };
        match chosen {
            Some(v) => {
                if v != alternatives[0] {
                    out.changes.push(format!(
                        "passed {flag} {v}: the installed version does not accept {}",
                        alternatives[0]
                    ));
                }
                out.args.push(v.to_string());
            }
            None => {
                out.args.pop();
                out.changes.push(format!(
                    "left out {flag}: the installed version accepts none of {}",
                    alternatives.join(", ")
                ));
            }
        }
    }
    out
}

/// Fits one `--flag=value` word: left out when the help lacks the flag; the value's
/// alternatives chosen as for a separate value.
fn fit_joined(flag: &str, value: &str, help: Option<&str>, out: &mut Fitted) {
    let in_help = help.map_or(InHelp::Free, |h| describe(h, flag));
    let alternatives: Vec<&str> = value.split('|').collect();
    let chosen = match &in_help {
        InHelp::Absent => {
            out.changes.push(format!(
                "left out {flag}: the installed version does not have it"
            ));
            return;
        }
        InHelp::Choices(choices) => alternatives
            .iter()
            .find(|a| choices.iter().any(|c| c == *a))
            .copied(),
        InHelp::Free => alternatives.first().copied(),
    };
    match chosen {
        Some(v) => out.args.push(format!("{flag}={v}")),
        None => out.changes.push(format!(
            "left out {flag}: the installed version accepts none of {}",
            alternatives.join(", ")
        )),
    }
}

/// Finds `flag` among the options of `help` and the values its description lists:
/// commander's `(choices: "a", "b")` and clap's `[possible values: a, b]`.
fn describe(help: &str, flag: &str) -> InHelp {
    let lines: Vec<&str> = help.lines().collect();
    let Some(start) = lines.iter().position(|l| names_flag(l, flag)) else {
        return InHelp::Absent;
    };
    // The option's description runs to the next option or section (clap's long help has
    // blank lines inside it, and its value lists are `- value: text` bullets).
    let rest = lines[start + 1..].iter().take_while(|l| {
        let t = l.trim_start();
        let next_option = t.starts_with('-') && !t.starts_with("- ");
        let section = !l.is_empty() && !l.starts_with(char::is_whitespace);
        !next_option && !section
    });
    let block: Vec<&str> = std::iter::once(lines[start])
        .chain(rest.clone().copied())
        .map(str::trim)
        .collect();
    let block = block.join(" ");
    if block.contains("Possible values:") {
        let bullets: Vec<String> = rest
            .filter_map(|l| l.trim_start().strip_prefix("- "))
            .filter_map(|b| b.split(':').next())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && !v.contains(' '))
            .collect();
        if !bullets.is_empty() {
            return InHelp::Choices(bullets);
        }
    }
    static LISTS: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = LISTS.get_or_init(|| {
        Regex::new(r"\(choices: ([^)]*)\)|\[possible values: ([^\]]*)\]").expect("static regex")
    });
    match re.captures(&block) {
        Some(c) => {
            let list = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            InHelp::Choices(
                list.split(',')
                    .map(|v| v.trim().trim_matches('"').to_string())
                    .filter(|v| !v.is_empty())
                    .collect(),
            )
        }
        None => InHelp::Free,
    }
}

/// Whether a help line declares `flag` (as an option name, not in passing in a sentence).
fn names_flag(line: &str, flag: &str) -> bool {
    let t = line.trim_start();
    if !t.starts_with('-') {
        return false;
    }
    // The names come before the description: `-a, --ask-for-approval <POLICY>  Text…`.
    let names = t.split("  ").next().unwrap_or(t);
    names
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '=' | '<' | '[' | '|'))
        .any(|w| w == flag)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    // As Claude Code 2.1.197 and 2.1.332 print them (commander, wrapped at 80 columns).
    const CLAUDE_OLD: &str = "Options:
  --permission-mode <mode>              Permission mode to use for the session
                                        (choices: \"acceptEdits\", \"auto\",
                                        \"bypassPermissions\", \"default\",
                                        \"dontAsk\", \"plan\")
  --session-id <uuid>                   Use a specific session ID for the
";
    const CLAUDE_NEW: &str = "Options:
  --permission-mode <mode>              Permission mode to use for the session
                                        (choices: \"acceptEdits\", \"auto\",
                                        \"bypassPermissions\", \"manual\",
                                        \"dontAsk\", \"plan\")
";
    // As clap prints short help.
    const CLAP: &str = "Options:
  -a, --ask-for-approval <POLICY>  When to ask [possible values: untrusted, on-request, never]
  -s, --sandbox <MODE>             Sandbox policy
      --no-daemon                  Run without the daemon
";

    #[test]
    fn picks_the_first_alternative_the_installed_version_accepts() {
        let preset = s(&["--permission-mode", "manual|default"]);
        let new = fit(&preset, Some(CLAUDE_NEW));
        assert_eq!(new.args, s(&["--permission-mode", "manual"]));
        assert!(new.changes.is_empty());
        let old = fit(&preset, Some(CLAUDE_OLD));
        assert_eq!(old.args, s(&["--permission-mode", "default"]));
        assert_eq!(old.changes.len(), 1, "{:?}", old.changes);
    }

    #[test]
    fn a_value_or_flag_the_cli_does_not_know_is_left_out() {
        let none = fit(&s(&["--permission-mode", "manual"]), Some(CLAUDE_OLD));
        assert_eq!(none.args, Vec::<String>::new());
        assert!(none.changes[0].contains("accepts none of manual"));
        let absent = fit(&s(&["--yes-always", "--model", "x"]), Some(CLAP));
        assert_eq!(absent.args, Vec::<String>::new());
        assert_eq!(absent.changes.len(), 2);
    }

    #[test]
    fn clap_short_flags_and_free_values() {
        let f = fit(
            &s(&["-a", "on-request", "-s", "workspace-write"]),
            Some(CLAP),
        );
        assert_eq!(f.args, s(&["-a", "on-request", "-s", "workspace-write"]));
        let f = fit(&s(&["-a", "ask|never", "--no-daemon"]), Some(CLAP));
        assert_eq!(f.args, s(&["-a", "never", "--no-daemon"]));
    }

    // As clap prints long help (Codex 0.171): blank lines inside an option, bullets.
    const CLAP_LONG: &str = "Options:
  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy

          [possible values: read-only, workspace-write, danger-full-access]

      --approve-for-me
          Route approval requests

  -a, --ask-for-approval <APPROVAL_POLICY>
          Configure when the model requires human approval

          Possible values:
          - on-request: The model decides when to ask the user for approval
          - never:      Never ask for user approval Execution failures are immediately
            returned to the model

      --search
          Enable live web search
";

    #[test]
    fn clap_long_help_lists_values_after_blank_lines_and_as_bullets() {
        assert_eq!(
            describe(CLAP_LONG, "-s"),
            InHelp::Choices(s(&["read-only", "workspace-write", "danger-full-access"]))
        );
        assert_eq!(
            describe(CLAP_LONG, "--ask-for-approval"),
            InHelp::Choices(s(&["on-request", "never"]))
        );
        let f = fit(&s(&["-a", "untrusted|on-request"]), Some(CLAP_LONG));
        assert_eq!(f.args, s(&["-a", "on-request"]));
        assert_eq!(describe(CLAP_LONG, "--search"), InHelp::Free);
    }

    #[test]
    fn a_subcommand_and_what_follows_it_pass_as_written() {
        let f = fit(&s(&["resume", "--last", "--x|y"]), Some(CLAP));
        assert_eq!(f.args, s(&["resume", "--last", "--x|y"]));
        assert!(f.changes.is_empty());
    }

    #[test]
    fn without_help_the_first_alternatives_pass() {
        let f = fit(&s(&["--permission-mode", "manual|default", "--x"]), None);
        assert_eq!(f.args, s(&["--permission-mode", "manual", "--x"]));
    }

    #[test]
    fn a_flag_and_its_value_in_one_word_are_fitted_as_one() {
        let help = "  --mcp-config <configs...>   Load MCP servers\n  --permission-mode <mode>  (choices: \"auto\", \"default\")\n";
        let f = fit(
            &s(&[
                "--mcp-config=/s/x.json",
                "--permission-mode=manual|default",
                "--nope=1",
                "task",
            ]),
            Some(help),
        );
        assert_eq!(
            f.args,
            s(&[
                "--mcp-config=/s/x.json",
                "--permission-mode=default",
                "task"
            ])
        );
        assert_eq!(f.changes.len(), 1, "{:?}", f.changes);
        // A free value is its first alternative, as for a separate value.
        let f = fit(&s(&["--mcp-config=a|b"]), Some(help));
        assert_eq!(f.args, s(&["--mcp-config=a"]));
    }

    #[test]
    fn a_flag_named_in_a_sentence_is_not_declared() {
        let help = "  --settings <file>   load settings; see also --permission-mode\n";
        assert!(names_flag(help, "--settings"));
        assert!(!names_flag(help, "--permission-mode"));
        assert_eq!(describe(help, "--permission-mode"), InHelp::Absent);
    }
}
