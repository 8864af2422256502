//! The built-in providers' screen patterns against every recorded screen of the real CLIs
//! (tests/fixtures/agents/<cli>/<state>.txt, recorded by `ORCHESTRA_RECORD_FIXTURES=1 cargo
//! test --test agents_live`), and against synthetic permission prompts: a permission is
//! never answered automatically.

use orchestra_daemon::providers::patterns::{SeenPrompt, Verdict};
use orchestra_daemon::providers::{Classifier, Providers};
use std::path::Path;

fn classifier(cli: &str) -> Classifier {
    let p = Providers::built_in().get(cli).cloned().expect(cli);
    let (c, errors) = Classifier::new(&p.screen, &p.prompts);
    assert!(errors.is_empty(), "{cli}: {errors:?}");
    c
}

fn fixture(cli: &str, state: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(cli)
        .join(format!("{state}.txt"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What each fixture must classify as: `ready`, `busy`, `unknown`, or a prompt kind with
/// whether `safe` may answer it.
const EXPECTED: &[(&str, &str, &str, bool)] = &[
    ("claude", "offline-exit", "unknown", false),
    ("claude", "onboarding-0-choice", "choice", true),
    ("claude", "onboarding-1-choice", "choice", true),
    ("claude", "onboarding-2-trust", "trust", true),
    ("claude", "trust", "trust", true),
    ("claude", "ready", "ready", false),
    ("claude", "onboarded-ready", "ready", false),
    ("claude", "not-logged-in", "ready", false),
    ("codex", "login", "login", false),
    ("codex", "login-other-way", "login", false),
    ("codex", "ready", "ready", false),
    ("gemini", "trust", "trust", true),
    ("gemini", "login", "login", false),
    ("gemini", "login-key-preselected", "login", false),
    ("gemini", "login-enter-key", "login", false),
    ("opencode", "ready", "ready", false),
    ("opencode", "busy-retrying", "busy", false),
    ("aider", "git-repo", "question", false),
    ("aider", "login", "login", false),
    ("aider", "question-0", "question", false),
    ("aider", "question-1", "question", true),
    ("aider", "ready", "ready", false),
];

fn name(v: &Verdict) -> String {
    match v {
        Verdict::Prompt(p) => p.prompt.kind.to_string(),
        Verdict::Busy => "busy".into(),
        Verdict::Ready => "ready".into(),
        Verdict::Starting => "starting".into(),
        Verdict::Unknown => "unknown".into(),
    }
}

#[test]
fn every_fixture_is_expected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    for cli in ["claude", "codex", "gemini", "opencode", "aider"] {
        let Ok(dir) = std::fs::read_dir(root.join(cli)) else {
            continue;
        };
        for f in dir.flatten() {
            let file = f.file_name().to_string_lossy().into_owned();
            let Some(state) = file.strip_suffix(".txt") else {
                continue;
            };
            assert!(
                EXPECTED.iter().any(|(c, s, _, _)| *c == cli && *s == state),
                "fixture {cli}/{file} has no expectation in EXPECTED"
            );
        }
    }
}

#[test]
fn fixtures_classify_as_recorded() {
    for (cli, state, want, auto) in EXPECTED {
        let c = classifier(cli);
        let v = c.classify(&fixture(cli, state));
        assert_eq!(&name(&v), want, "{cli}/{state}: {v:?}");
        if let Verdict::Prompt(p) = &v {
            assert_eq!(p.auto_answer.is_some(), *auto, "{cli}/{state}: {p:?}");
            assert!(!p.prompt.text.is_empty(), "{cli}/{state}: {p:?}");
            // A prompt that asks for typed input (an API key) has no options to pick.
            if !p.prompt.text.contains("Enter Gemini API Key") {
                assert!(
                    !p.prompt.options.is_empty(),
                    "{cli}/{state}: no options: {p:?}"
                );
            }
        }
    }
}

fn prompt(cli: &str, state: &str) -> SeenPrompt {
    match classifier(cli).classify(&fixture(cli, state)) {
        Verdict::Prompt(p) => p,
        v => panic!("{cli}/{state}: {v:?}"),
    }
}

fn labels(p: &SeenPrompt) -> Vec<(&str, &str, Vec<&str>)> {
    p.prompt
        .options
        .iter()
        .map(|o| {
            (
                o.key.as_str(),
                o.label.as_str(),
                o.keys
                    .as_ref()
                    .map(|k| k.iter().map(|s| s.as_str()).collect())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn options_and_keys_read_from_the_real_screens() {
    let p = prompt("claude", "trust");
    assert_eq!(
        labels(&p),
        [
            ("1", "No, exit", vec!["enter"]),
            ("2", "Yes, I trust this folder", vec!["down", "enter"]),
        ]
    );
    assert_eq!(p.auto_answer.as_deref(), Some("2"));

    let p = prompt("codex", "login");
    assert_eq!(
        labels(&p),
        [
            ("1", "Sign in with ChatGPT", vec!["enter"]),
            ("2", "Sign in with Device Code", vec!["down", "enter"]),
            ("3", "Sign in another way", vec!["down", "down", "enter"]),
        ]
    );

    let p = prompt("gemini", "trust");
    assert_eq!(p.prompt.text, "Do you trust the files in this folder?");
    assert_eq!(p.prompt.options.len(), 3);
    assert!(p.prompt.options[0].label.starts_with("Trust folder"));
    assert_eq!(p.prompt.options[2].label, "Don't trust");
    assert_eq!(p.auto_answer.as_deref(), Some("1"));

    let p = prompt("gemini", "login-key-preselected");
    assert_eq!(p.prompt.options[1].label, "Use Gemini API Key");
    assert_eq!(
        p.prompt.options[1].keys.as_deref(),
        Some(&["enter".to_string()][..])
    );

    let p = prompt("aider", "git-repo");
    assert_eq!(
        labels(&p),
        [
            ("y", "Yes", vec!["y", "enter"]),
            ("n", "No", vec!["n", "enter"])
        ]
    );
    assert_eq!(p.auto_answer, None);
    let p = prompt("aider", "question-1");
    assert_eq!(p.name, "release notes");
    assert_eq!(p.auto_answer.as_deref(), Some("n"));
}

/// Permission prompts as each CLI draws them (their layout; none can be reached offline).
const PERMISSIONS: &[(&str, &str)] = &[
    (
        "claude",
        " Bash command\n\n   rm -rf build\n   Remove the build directory\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again for rm commands in /tmp/work\n   3. No, and tell Claude what to do differently (esc)\n",
    ),
    (
        "claude",
        " Edit file\n hello.py\n\n Do you want to make this edit to hello.py?\n ❯ 1. Yes\n   2. Yes, allow all edits during this session (shift+tab)\n   3. No, and tell Claude what to do differently (esc)\n",
    ),
    (
        "codex",
        "  Would you like to run the following command?\n\n  $ rm -rf build\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for this command (a)\n  3. No, and tell Codex what to do differently (esc)\n",
    ),
    (
        "gemini",
        "╭──────────────╮\n│ ?  Shell rm -rf build                                            │\n│ Allow execution of: 'rm'?                                         │\n│ ● 1. Allow once                                                   │\n│   2. Allow for this session                                      │\n│   3. No, suggest changes (esc)                                    │\n╰──────────────╯\n",
    ),
    (
        "aider",
        "Aider v0.86.2\nls -la\nRun shell command? (Y)es/(N)o/(D)on't ask again [Yes]: ",
    ),
    (
        "aider",
        "hello.py\nAllow edits to file that has not been added to the chat? (Y)es/(N)o [Yes]:",
    ),
    (
        "opencode",
        "  △ Permission required\n  $ rm -rf build\n  Allow once   Allow always   Reject\n",
    ),
];

#[test]
fn permission_prompts_are_recognised_and_never_auto_answered() {
    for (cli, screen) in PERMISSIONS {
        let v = classifier(cli).classify(screen);
        let Verdict::Prompt(p) = v else {
            panic!("{cli}: not a prompt: {v:?}\n{screen}")
        };
        assert_eq!(p.prompt.kind.as_str(), "permission", "{cli}: {p:?}");
        assert_eq!(p.auto_answer, None, "{cli}: {p:?}");
    }
    let p = match classifier("claude").classify(PERMISSIONS[0].1) {
        Verdict::Prompt(p) => p,
        _ => unreachable!(),
    };
    assert_eq!(p.prompt.text, "Do you want to proceed?");
    assert_eq!(
        p.prompt.options[2].keys.as_deref().map(|k| k.len()),
        Some(3)
    );
}

#[test]
fn login_and_permission_never_carry_an_automatic_answer() {
    for (cli, state, _, _) in EXPECTED {
        if let Verdict::Prompt(p) = classifier(cli).classify(&fixture(cli, state))
            && matches!(p.prompt.kind.as_str(), "permission" | "login")
        {
            assert_eq!(p.auto_answer, None, "{cli}/{state}");
        }
    }
}
