//! The screen classifier: what a coding agent's terminal says it is doing. Pure data in, a
//! verdict out; the patterns come from the provider table, so a CLI update is a fixture and
//! a pattern change, not code.
//!
//! Order of the checks: a prompt (the first rule whose pattern matches the screen) wins over
//! a busy indicator, which wins over the input prompt. An unrecognised screen is `Unknown`:
//! the caller goes by screen stability alone.

pub use orchestra_proto::wire::{Prompt, PromptKind, PromptOption};
use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

/// Patterns of a provider's screen (regular expressions, multi-line mode: `^`/`$` are lines).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenPatterns {
    /// Its input prompt is showing: waiting for the next instruction.
    #[serde(default)]
    pub ready: Vec<String>,
    /// What only a CLI done starting shows (a banner drawn once it has loaded): until one
    /// matched once, its input prompt is not `ready` (Gemini CLI draws its input box seconds
    /// before it takes input, and queues what is typed meanwhile). Empty: no such wait.
    #[serde(default)]
    pub started: Vec<String>,
    /// It is working: spinners, "esc to interrupt".
    #[serde(default)]
    pub busy: Vec<String>,
    /// Its usage-limit messages ("usage limit reached", a 429 it gives up on): the session
    /// is `limited` until it is given input again. A named group `reset` captures when the
    /// limit resets ("3pm", "15:30", "in 20 minutes"), where the CLI says it.
    #[serde(default)]
    pub limited: Vec<String>,
    /// What its screen shows while it waits out a usage limit by itself (a retry countdown
    /// that names the rate limit, a status line with the reset), matched on the whole screen
    /// even while it redraws: the session is `limited` while it shows (with `resetsAt` from a
    /// `reset` group) and orchestra types nothing, the CLI carrying on by itself.
    #[serde(default)]
    pub limit_wait: Vec<String>,
    /// Lines that are chrome, not reply (input box, status lines, hints): dropped from
    /// agent messages. Matched against each trimmed line.
    #[serde(default)]
    pub chrome: Vec<String>,
    /// Text removed from reply lines (reply markers such as `⏺ `).
    #[serde(default)]
    pub strip: Vec<String>,
    /// Lines that begin the CLI's own report of a tool call (Gemini CLI's `✓  WriteFile  …`):
    /// such a line and the lines indented deeper under it (the tool's output, a diff
    /// preview) are not reply. Matched against the whole line, indentation included.
    #[serde(default)]
    pub tool: Vec<String>,
    /// A line it prints when one of its own tools failed (Codex CLI's `✘ Failed to apply
    /// patch`): evidence that a turn's claimed success may not hold. Matched against each
    /// trimmed line.
    #[serde(default)]
    pub tool_failed: Vec<String>,
}

/// Something a CLI says about what orchestra handed it (a settings file it skipped, helper
/// commands it did not make): the task gets `means` as a note, once per session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoticeRule {
    /// Regular expression that recognises what the CLI says, in its output or on its screen.
    pub pattern: String,
    /// What it means for the task, in a sentence a user can act on.
    pub means: String,
}

/// How a rule's options read from the screen are picked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Select {
    /// Arrow keys from the highlighted option then Enter when one is highlighted, else the digit.
    #[default]
    Auto,
    /// Arrow keys from the highlighted (else the first) option, then Enter.
    Arrows,
    /// The option's digit alone.
    Digit,
    /// The option's digit, then Enter.
    DigitEnter,
}

/// One prompt a CLI can stop at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptRule {
    /// permission | trust | login | choice | question (an unknown kind fails the table's
    /// parse, naming the kinds there are).
    pub kind: PromptKind,
    /// What it is, said in the message of an automatic answer ("trust this folder").
    pub name: String,
    /// Regular expression that recognises it on the screen.
    pub pattern: String,
    /// Trust, update notice, telemetry, theme: `safe` may answer it (never a permission or
    /// login prompt, whatever this says).
    #[serde(default)]
    pub housekeeping: bool,
    /// The option `safe` and `auto` pick for a housekeeping prompt.
    #[serde(default)]
    pub answer: Option<String>,
    /// Fixed options; when empty, numbered choices (`1. Yes`) are read from the screen.
    #[serde(default)]
    pub options: Vec<PromptOption>,
    #[serde(default)]
    pub select: Select,
}

/// A prompt seen on the screen: what the session shows as its `prompt`, and what the engine
/// keeps beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenPrompt {
    pub prompt: Prompt,
    /// The rule's name.
    pub name: String,
    /// The option an automatic answer may pick: set only for housekeeping prompts that are
    /// not about running tools, editing files or logging in.
    pub auto_answer: Option<String>,
    /// The prompt reports a usage limit (its `limited` patterns match from the prompt on):
    /// `Some(reset)`, with when it resets where it says. Such a prompt is the limit's
    /// (`limits.rs`), answered once the limit resets.
    pub limit: Option<Option<String>>,
}

/// What the screen says.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Prompt(SeenPrompt),
    Busy,
    Ready,
    /// Its input prompt, drawn before the CLI is done starting (see `started`).
    Starting,
    Unknown,
}

#[derive(Debug)]
struct CompiledRule {
    rule: PromptRule,
    re: Regex,
}

/// A provider's patterns, compiled.
#[derive(Debug, Default)]
pub struct Classifier {
    limited: Vec<Regex>,
    limit_wait: Vec<Regex>,
    ready: Vec<Regex>,
    started: Vec<Regex>,
    busy: Vec<Regex>,
    chrome: Vec<Regex>,
    strip: Vec<Regex>,
    tool: Vec<Regex>,
    tool_failed: Vec<Regex>,
    rules: Vec<CompiledRule>,
    notices: Vec<(Regex, String)>,
}

fn compile(p: &str) -> Result<Regex, String> {
    RegexBuilder::new(p)
        .multi_line(true)
        .build()
        .map_err(|e| format!("pattern {p:?}: {e}"))
}

fn compile_all(ps: &[String], errors: &mut Vec<String>) -> Vec<Regex> {
    ps.iter()
        .filter_map(|p| compile(p).map_err(|e| errors.push(e)).ok())
        .collect()
}

/// Words of a prompt that asks to run a tool, run a command or change files: such a prompt is
/// never answered automatically, even when a (mis)configured rule calls it housekeeping.
/// ("Allow" alone is not among them: telemetry questions ask to allow analytics; the
/// permission prompts that say "allow" also say what, e.g. "Allow execution of …".)
fn permission_guard() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(permission|permissions|run|running|execute|execution|executing|edit|edits|editing|write|writing|overwrite|delete|deleting|remove|modify|modifying|apply|patch|command|commands|bash|shell|tool|tools|proceed|approve|sudo|install|installing)\b",
        )
        .expect("static regex")
    })
}

/// A numbered choice: `❯ 1. Yes`, `│ 2) No │`, `› 3. Other`.
fn option_line() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^[\s│┃|]*(?P<cur>[❯›>▶➤→●]\s*)?(?P<n>\d{1,2})[.)]\s+(?P<label>\S.*?)[\s│┃|]*$")
            .expect("static regex")
    })
}

impl Classifier {
    /// Compiles the patterns; invalid ones are left out and returned as errors.
    pub fn new(screen: &ScreenPatterns, rules: &[PromptRule]) -> (Classifier, Vec<String>) {
        let mut errors = Vec::new();
        let mut c = Classifier {
            limited: compile_all(&screen.limited, &mut errors),
            limit_wait: compile_all(&screen.limit_wait, &mut errors),
            ready: compile_all(&screen.ready, &mut errors),
            started: compile_all(&screen.started, &mut errors),
            busy: compile_all(&screen.busy, &mut errors),
            chrome: compile_all(&screen.chrome, &mut errors),
            strip: compile_all(&screen.strip, &mut errors),
            tool: compile_all(&screen.tool, &mut errors),
            tool_failed: compile_all(&screen.tool_failed, &mut errors),
            rules: Vec::new(),
            notices: Vec::new(),
        };
        for r in rules {
            match compile(&r.pattern) {
                Ok(re) => c.rules.push(CompiledRule {
                    rule: r.clone(),
                    re,
                }),
                Err(e) => errors.push(e),
            }
        }
        (c, errors)
    }

    /// With the provider's notices; invalid patterns are left out and pushed onto `errors`.
    pub fn with_notices(mut self, notices: &[NoticeRule], errors: &mut Vec<String>) -> Self {
        for n in notices {
            match compile(&n.pattern) {
                Ok(re) => self.notices.push((re, n.means.clone())),
                Err(e) => errors.push(e),
            }
        }
        self
    }

    /// The notices `text` (output lines, or a screen) holds: each one's index and meaning.
    pub fn notices_in<'a>(&'a self, text: &str) -> impl Iterator<Item = (usize, &'a str)> {
        self.notices
            .iter()
            .enumerate()
            .filter(move |(_, (re, _))| re.is_match(text))
            .map(|(i, (_, means))| (i, means.as_str()))
    }

    /// How many notices it looks for.
    pub fn notice_count(&self) -> usize {
        self.notices.len()
    }

    /// The lines (trimmed) of `lines` that say one of its tools failed.
    pub fn tool_failures<'a>(&self, lines: &'a [String]) -> Vec<&'a str> {
        if self.tool_failed.is_empty() {
            return Vec::new();
        }
        lines
            .iter()
            .map(|l| l.trim())
            .filter(|t| self.tool_failed.iter().any(|re| re.is_match(t)))
            .collect()
    }

    /// Whether it has any patterns at all (a provider without any is judged by stability).
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.busy.is_empty() && self.rules.is_empty()
    }

    /// The first prompt rule that matches the screen, and where its match begins (past the
    /// blank lines a match may begin with).
    fn prompt_in<'a>(&'a self, screen: &str) -> Option<(&'a PromptRule, usize)> {
        self.rules.iter().find_map(|r| {
            let m = r.re.find(screen)?;
            let lead = m.as_str().len() - m.as_str().trim_start().len();
            Some((&r.rule, m.start() + lead))
        })
    }

    /// Classifies a screen (its visible text, rows joined with `\n`).
    pub fn classify(&self, screen: &str) -> Verdict {
        let screen = screen.trim_end();
        if let Some((rule, at)) = self.prompt_in(screen) {
            let mut seen = read_prompt(rule, screen, at);
            seen.limit = self.limit_in(&screen[line_start(screen, at)..]);
            return Verdict::Prompt(seen);
        }
        if self.busy.iter().any(|re| re.is_match(screen)) {
            return Verdict::Busy;
        }
        if self.ready.iter().any(|re| re.is_match(screen)) {
            return Verdict::Ready;
        }
        Verdict::Unknown
    }

    /// Whether `reply` says the usage limit is reached: `Some(reset)` with the text of its
    /// `reset` group when it names one.
    pub fn limit_in(&self, reply: &str) -> Option<Option<String>> {
        first_capture(&self.limited, reply)
    }

    /// Whether it has `limit_wait` patterns.
    pub fn has_limit_wait(&self) -> bool {
        !self.limit_wait.is_empty()
    }

    /// Whether the screen shows the CLI waiting out a usage limit by itself: `Some(reset)`
    /// as [`Classifier::limit_in`].
    pub fn limit_wait_in(&self, screen: &str) -> Option<Option<String>> {
        first_capture(&self.limit_wait, screen.trim_end())
    }

    /// Whether the screen shows the CLI done starting (always, without `started` patterns).
    pub fn shows_started(&self, screen: &str) -> bool {
        self.started.is_empty() || self.started.iter().any(|re| re.is_match(screen))
    }

    /// The line of `lines` (a screen's, scrollback and all) where a prompt the CLI asks
    /// begins, if one shows: what comes from there on is its question, not a reply.
    pub fn prompt_line(&self, lines: &[String]) -> Option<usize> {
        let text = lines.join("\n");
        let (_, at) = self.prompt_in(text.trim_end())?;
        Some(text[..at].matches('\n').count())
    }

    /// A reply's lines without the CLI's chrome and its reports of tool calls.
    pub fn strip_chrome(&self, lines: &[String]) -> Vec<String> {
        let indent = |l: &str| l.chars().take_while(|c| c.is_whitespace()).count();
        // A report drawn in a box (Gemini CLI's of an MCP tool: `│ ✓  list_tasks (…) │`, its
        // output in the same box) goes on while the lines are the box's.
        let boxed = |l: &str| l.trim_start().starts_with('│');
        // The indentation of the tool call whose report the lines are in, if they are, and
        // whether it is drawn in a box.
        let mut tool_at: Option<(usize, bool)> = None;
        lines
            .iter()
            .filter(|l| {
                if self.tool.iter().any(|re| re.is_match(l)) {
                    tool_at = Some((indent(l), boxed(l)));
                    return false;
                }
                if let Some((at, in_box)) = tool_at {
                    if l.trim().is_empty() || indent(l) > at || (in_box && boxed(l)) {
                        return false;
                    }
                    tool_at = None;
                }
                true
            })
            .filter(|l| {
                let t = l.trim();
                !self.chrome.iter().any(|re| re.is_match(t))
            })
            .map(|l| {
                let mut s = l.clone();
                for re in &self.strip {
                    s = re.replace_all(&s, "").into_owned();
                }
                s
            })
            .collect()
    }
}

fn line_start(screen: &str, at: usize) -> usize {
    screen[..at].rfind('\n').map(|i| i + 1).unwrap_or(0)
}

fn read_prompt(rule: &PromptRule, screen: &str, at: usize) -> SeenPrompt {
    let start = line_start(screen, at);
    let lines: Vec<&str> = screen[start..].lines().collect();
    let text = lines
        .first()
        .map(|l| {
            l.trim()
                .trim_matches(|c| "│┃|".contains(c))
                .trim()
                .to_string()
        })
        .unwrap_or_default();
    let options = if rule.options.is_empty() {
        let numbered = read_options(&lines, rule.select);
        if numbered.is_empty() {
            read_cursor_options(&lines)
        } else {
            numbered
        }
    } else {
        rule.options.clone()
    };
    let auto_answer = if rule.housekeeping
        && rule.kind.may_be_answered_automatically()
        && !permission_guard().is_match(&text)
    {
        rule.answer
            .as_deref()
            .and_then(|a| find_option(&options, a))
            .filter(|o| !permission_guard().is_match(&o.label))
            .map(|o| o.key.clone())
    } else {
        None
    };
    SeenPrompt {
        prompt: Prompt {
            kind: rule.kind,
            text,
            options,
        },
        name: rule.name.clone(),
        auto_answer,
        limit: None,
    }
}

/// The first pattern that matches `text`, and the text of its `reset` group if it has one.
fn first_capture(patterns: &[Regex], text: &str) -> Option<Option<String>> {
    patterns.iter().find_map(|re| {
        re.captures(text)
            .map(|c| c.name("reset").map(|m| m.as_str().trim().to_string()))
    })
}

/// The option with this key, else the first whose label starts with it (case-insensitive).
pub fn find_option<'a>(options: &'a [PromptOption], answer: &str) -> Option<&'a PromptOption> {
    let lower = answer.to_lowercase();
    options.iter().find(|o| o.key == answer).or_else(|| {
        options
            .iter()
            .find(|o| o.label.to_lowercase().starts_with(&lower))
    })
}

/// A highlighted, unnumbered choice: `❯ Yes, I trust this folder`.
fn cursor_line() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?P<pre>[\s│┃|]*[❯›>▶➤→●]\s+)(?P<label>\S.*?)[\s│┃|]*$")
            .expect("static regex")
    })
}

/// Unnumbered choices: the highlighted line and the lines around it aligned with its label.
fn read_cursor_options(lines: &[&str]) -> Vec<PromptOption> {
    let window: Vec<&str> = lines.iter().take(20).copied().collect();
    let Some((at, col)) = window.iter().enumerate().skip(1).find_map(|(i, l)| {
        cursor_line()
            .captures(l)
            .map(|c| (i, c["pre"].chars().count()))
    }) else {
        return vec![];
    };
    let label_at = |l: &str| -> Option<String> {
        let chars: Vec<char> = l.chars().collect();
        if chars.len() <= col || chars[col].is_whitespace() {
            return None;
        }
        let lead: String = chars[..col].iter().collect();
        if !lead.chars().all(|c| c.is_whitespace() || "│┃|".contains(c)) {
            return None;
        }
        let label: String = chars[col..].iter().collect();
        Some(
            label
                .trim_end_matches(|c: char| c.is_whitespace() || "│┃|".contains(c))
                .to_string(),
        )
    };
    let mut first = at;
    while first > 1 && label_at(window[first - 1]).is_some() {
        first -= 1;
    }
    let mut labels = Vec::new();
    let mut cursor = 0;
    for (i, l) in window.iter().enumerate().skip(first) {
        let label = if i == at {
            cursor_line().captures(l).map(|c| c["label"].to_string())
        } else {
            label_at(l)
        };
        match label {
            Some(label) => {
                if i == at {
                    cursor = labels.len();
                }
                labels.push(label);
            }
            None => break,
        }
    }
    labels
        .into_iter()
        .enumerate()
        .map(|(i, label)| {
            let mut keys: Vec<String> = if i >= cursor {
                vec!["down".into(); i - cursor]
            } else {
                vec!["up".into(); cursor - i]
            };
            keys.push("enter".into());
            PromptOption {
                key: (i + 1).to_string(),
                label,
                keys: Some(keys),
            }
        })
        .collect()
}

/// Numbered choices from the prompt's line on: the first run `1, 2, 3…` (at most 20 lines on).
fn read_options(lines: &[&str], select: Select) -> Vec<PromptOption> {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut cursor = None;
    for line in lines.iter().take(20) {
        let Some(c) = option_line().captures(line) else {
            continue;
        };
        let n: usize = c["n"].parse().unwrap_or(0);
        if n != found.len() + 1 {
            if found.is_empty() {
                continue;
            }
            break;
        }
        if c.name("cur").is_some() {
            cursor = Some(found.len());
        }
        found.push((n, c["label"].trim().to_string()));
    }
    found
        .into_iter()
        .enumerate()
        .map(|(i, (n, label))| {
            let digit = n.to_string();
            let arrows = |from: usize| {
                let mut k: Vec<String> = if i >= from {
                    vec!["down".into(); i - from]
                } else {
                    vec!["up".into(); from - i]
                };
                k.push("enter".into());
                k
            };
            let keys = match (select, cursor) {
                (Select::Auto, Some(c)) | (Select::Arrows, Some(c)) => arrows(c),
                (Select::Arrows, None) => arrows(0),
                (Select::Auto, None) | (Select::Digit, _) => vec![digit.clone()],
                (Select::DigitEnter, _) => vec![digit.clone(), "enter".into()],
            };
            PromptOption {
                key: digit,
                label,
                keys: Some(keys),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(
        kind: PromptKind,
        pattern: &str,
        housekeeping: bool,
        answer: Option<&str>,
    ) -> PromptRule {
        PromptRule {
            kind,
            name: format!("{kind} prompt"),
            pattern: pattern.into(),
            housekeeping,
            answer: answer.map(String::from),
            options: vec![],
            select: Select::Auto,
        }
    }

    #[test]
    fn numbered_options_with_a_cursor_use_arrows() {
        let (c, e) = Classifier::new(
            &ScreenPatterns::default(),
            &[rule(
                PromptKind::Trust,
                "trust this folder",
                true,
                Some("1"),
            )],
        );
        assert!(e.is_empty());
        let screen = "Header\n Do you trust this folder?\n\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n\n Enter to confirm";
        let Verdict::Prompt(p) = c.classify(screen) else {
            panic!("no prompt")
        };
        assert_eq!(p.prompt.kind, PromptKind::Trust);
        assert_eq!(p.prompt.text, "Do you trust this folder?");
        assert_eq!(p.prompt.options.len(), 2);
        assert_eq!(p.prompt.options[0].label, "Yes, I trust this folder");
        assert_eq!(
            p.prompt.options[0].keys.as_deref(),
            Some(&["enter".to_string()][..])
        );
        assert_eq!(
            p.prompt.options[1].keys.as_deref(),
            Some(&["down".to_string(), "enter".to_string()][..])
        );
        assert_eq!(p.auto_answer.as_deref(), Some("1"));
    }

    #[test]
    fn permission_is_never_auto_answered_even_if_misconfigured() {
        let (c, _) = Classifier::new(
            &ScreenPatterns::default(),
            &[rule(PromptKind::Permission, "Do you want", true, Some("1"))],
        );
        let screen =
            " Bash command\n   rm -rf build\n Do you want to proceed?\n ❯ 1. Yes\n   2. No";
        let Verdict::Prompt(p) = c.classify(screen) else {
            panic!()
        };
        assert_eq!(p.auto_answer, None);
        // A "choice" rule that matches a tool permission is caught by the guard.
        let (c, _) = Classifier::new(
            &ScreenPatterns::default(),
            &[rule(PromptKind::Choice, "Do you want", true, Some("1"))],
        );
        let Verdict::Prompt(p) = c.classify(screen) else {
            panic!()
        };
        assert_eq!(p.auto_answer, None);
    }

    #[test]
    fn busy_and_ready() {
        let (c, _) = Classifier::new(
            &ScreenPatterns {
                ready: vec![r"^\s*>".into()],
                busy: vec!["esc to interrupt".into()],
                ..Default::default()
            },
            &[],
        );
        assert_eq!(
            c.classify("✻ Thinking… (esc to interrupt)\n> "),
            Verdict::Busy
        );
        assert_eq!(c.classify("hello\n> "), Verdict::Ready);
        assert_eq!(c.classify("hello"), Verdict::Unknown);
    }

    #[test]
    fn bad_patterns_are_reported() {
        let (_, e) = Classifier::new(
            &ScreenPatterns {
                ready: vec!["(".into()],
                ..Default::default()
            },
            &[rule(PromptKind::Question, "(x", false, None)],
        );
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn an_unknown_prompt_kind_fails_the_table_naming_the_kinds() {
        let e = toml::from_str::<PromptRule>("kind = \"nag\"\nname = \"n\"\npattern = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `nag`"), "{e}");
        assert!(
            e.contains("`permission`, `trust`, `login`, `choice`, `question`"),
            "{e}"
        );
    }
}
