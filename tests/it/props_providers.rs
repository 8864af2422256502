//! Property tests of what orchestra reads from agents' screens and from the user's files: the
//! screen classifier and the prompt reader (every built-in provider's patterns, on recorded
//! screens cut and mixed with arbitrary text), the question of a line read, and the config file (arbitrary TOML: it loads
//! or is refused with an error naming the file, never a panic).

use orchestra_daemon::providers::patterns::find_option;
use orchestra_daemon::providers::{Classifier, Config, Providers, Verdict};
use proptest::prelude::*;
use std::path::Path;

/// Every line of the recorded agent screens (tests/fixtures/agents/*/*.txt).
fn recorded_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    let mut lines = Vec::new();
    for agent in std::fs::read_dir(root).expect("fixtures").flatten() {
        let Ok(files) = std::fs::read_dir(agent.path()) else {
            continue;
        };
        for f in files.flatten() {
            if f.path().extension().is_some_and(|e| e == "txt")
                && let Ok(text) = std::fs::read_to_string(f.path())
            {
                lines.extend(text.lines().map(str::to_string));
            }
        }
    }
    assert!(!lines.is_empty(), "no recorded screens found");
    lines
}

/// A screen line: a recorded one (maybe cut at any character), a choice as CLIs draw them,
/// or arbitrary text.
fn line(recorded: Vec<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (prop::sample::select(recorded), any::<prop::sample::Index>())
            .prop_map(|(l, cut)| {
                let n = l.chars().count();
                if n == 0 { l } else { l.chars().take(cut.index(n + 1)).collect() }
            }),
        2 => (prop::sample::select(vec!["", "❯ ", "› ", "> ", "● ", "  ", "│ ", "│ ❯ "]),
              0u32..25,
              prop::sample::select(vec![". ", ") ", ".", " "]),
              "[a-zA-Z ,']{0,20}",
              prop::sample::select(vec!["", " │", "  ", "|"]))
            .prop_map(|(pre, n, sep, label, post)| format!("{pre}{n}{sep}{label}{post}")),
        1 => (prop::sample::select(vec!["❯ ", "  ", "    "]), "\\PC{0,15}")
            .prop_map(|(pre, label)| format!("{pre}{label}")),
        1 => any::<String>(),
    ]
}

/// The built-in providers' classifiers, compiled once.
fn classifiers() -> &'static [Classifier] {
    static ALL: std::sync::OnceLock<Vec<Classifier>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        Providers::built_in()
            .all()
            .iter()
            .map(|p| p.classifier())
            .collect()
    })
}

fn screen() -> impl Strategy<Value = String> {
    prop::collection::vec(line(recorded_lines()), 0..30).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_provider_reads_any_screen_and_its_prompts_can_be_answered(
        screen in screen(),
        answer in prop_oneof!["[0-9]{1,2}", "\\PC{0,6}", Just(String::new())],
    ) {
        for c in classifiers() {
            if let Verdict::Prompt(seen) = c.classify(&screen) {
                let prompt = &seen.prompt;
                prop_assert!(!prompt.text.contains('\n'), "{:?}", prompt.text);
                let mut keys: Vec<&str> = prompt.options.iter().map(|o| o.key.as_str()).collect();
                keys.sort_unstable();
                keys.dedup();
                prop_assert_eq!(keys.len(), prompt.options.len(), "option keys repeat: {:?}", prompt.options);
                for o in &prompt.options {
                    // What answering sends is made of keys the encoder knows.
                    if let Some(k) = &o.keys {
                        prop_assert!(orchestra_daemon::session::encode_keys(k, false).is_ok(), "{k:?}");
                    }
                }
                // An automatic answer is one of the options.
                if let Some(auto) = &seen.auto_answer {
                    prop_assert!(prompt.option(auto).is_some(), "{auto:?} of {:?}", prompt.options);
                }
                let _ = find_option(&prompt.options, &answer);
            }
            let lines: Vec<String> = screen.lines().map(str::to_string).collect();
            let _ = c.strip_chrome(&lines);
            let _ = c.limit_in(&screen);
            let _ = c.shows_started(&screen);
        }
    }

    #[test]
    fn the_question_of_any_line_read_is_one_line_with_answers_that_can_be_typed(
        [before, above] in [0, 1].map(|_| prop_oneof![
            2 => line(recorded_lines()),
            2 => ("\\PC{0,30}", prop::sample::select(vec![
                    "", "?", ":", " [y/N] ", " (yes/no) ", " [Y/n/a/q]", " (a/ab/abc) ",
                    " [fingerprint/yes] ", " (/) ", " [y//n]", "$ ", "> ",
                ]))
                .prop_map(|(q, tail)| format!("{q}{tail}")),
            1 => any::<String>(),
        ]),
        echo in any::<bool>(),
    ) {
        use orchestra_daemon::providers::line_question::line_question;
        use orchestra_proto::wire::PromptKind;
        if let Some(seen) = line_question(&before, &above, echo) {
            let p = &seen.prompt;
            prop_assert!(!p.text.is_empty() && !p.text.contains('\n'), "{:?}", p.text);
            prop_assert_eq!(p.kind, if echo { PromptKind::Question } else { PromptKind::Login });
            prop_assert!(seen.auto_answer.is_none(), "a question is never answered for the user");
            let mut keys: Vec<&str> = p.options.iter().map(|o| o.key.as_str()).collect();
            keys.sort_unstable();
            keys.dedup();
            prop_assert_eq!(keys.len(), p.options.len(), "option keys repeat: {:?}", p.options);
            for o in &p.options {
                let typed = o.keys.clone().unwrap_or_default();
                prop_assert!(orchestra_daemon::session::encode_keys(&typed, false).is_ok(), "{typed:?}");
                prop_assert_eq!(typed.last().map(String::as_str), Some("enter"));
            }
        }
    }

    #[test]
    fn any_patterns_compile_or_are_reported(
        patterns in prop::collection::vec(prop_oneof!["\\PC{0,12}", "[(){}\\[\\]*+?|^$.\\\\a-z0-9]{0,12}"], 0..6),
        screen in screen(),
    ) {
        let screen_patterns = orchestra_daemon::providers::ScreenPatterns {
            ready: patterns.clone(),
            busy: patterns.clone(),
            chrome: patterns.clone(),
            strip: patterns.clone(),
            limited: patterns.clone(),
            limit_wait: patterns.clone(),
            started: patterns.clone(),
            tool: patterns.clone(),
            tool_failed: patterns.clone(),
        };
        let rules: Vec<orchestra_daemon::providers::PromptRule> = patterns
            .iter()
            .map(|p| orchestra_daemon::providers::PromptRule {
                kind: orchestra_proto::wire::PromptKind::Choice,
                name: "any".into(),
                pattern: p.clone(),
                housekeeping: true,
                answer: Some("1".into()),
                options: vec![],
                select: Default::default(),
            })
            .collect();
        let (c, errors) = orchestra_daemon::providers::Classifier::new(&screen_patterns, &rules);
        for e in &errors {
            prop_assert!(e.starts_with("pattern "), "{e}");
        }
        let _ = c.classify(&screen);
        let lines: Vec<String> = screen.lines().map(str::to_string).collect();
        let _ = c.strip_chrome(&lines);
        let _ = c.prompt_line(&lines);
    }

    #[test]
    fn any_config_file_loads_or_is_refused_naming_the_file(text in config_text()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, &text).expect("write");
        match Config::load(Some(&path)) {
            Ok(config) => {
                match Providers::from_config(&config, None) {
                    Ok(providers) => {
                        // The entries the file changed or added.
                        for o in &config.provider {
                            if let Some(p) = providers.get(&o.id) {
                                let _ = p.classifier().classify("Do you want to proceed?\n❯ 1. Yes\n  2. No");
                            }
                        }
                    }
                    Err(e) => prop_assert!(!e.to_string().trim().is_empty()),
                }
                // The TUI's parts of the file: read or refused naming the file.
                if let Err(e) = orchestra_tui::load_keys(Some(&path)) {
                    prop_assert!(e.to_string().contains(path.to_str().unwrap()), "{e}");
                }
                if let Err(e) = orchestra_tui::load_notify(Some(&path)) {
                    prop_assert!(e.to_string().contains(path.to_str().unwrap()), "{e}");
                }
            }
            Err(e) => prop_assert!(e.to_string().contains(path.to_str().unwrap()), "{e}"),
        }
    }
}

/// Config files: the sections and keys orchestra reads, with values of every TOML type
/// (right and wrong), and lines of anything.
fn config_text() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        "\\PC{0,10}".prop_map(|s| format!("{s:?}")),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        prop::collection::vec("[a-z0-9-]{0,8}", 0..4).prop_map(|v| format!("{v:?}")),
        Just("{ a = 1 }".to_string()),
        Just("\"ctrl-x\"".to_string()),
        Just("[\"n\", \"+\"]".to_string()),
        Just("\"osc9\"".to_string()),
        Just("'(unclosed'".to_string()),
    ];
    let key = prop::sample::select(vec![
        "default_provider",
        "isolation",
        "continue_after_reset",
        "retry_minutes",
        "id",
        "name",
        "command",
        "args",
        "deliver",
        "submit",
        "coding_agent",
        "interactive",
        "env",
        "pass_env",
        "screen",
        "prompts",
        "install",
        "bell",
        "desktop",
        "command_timeout_secs",
        "stop",
        "new_task",
        "live",
        "detach",
        "quit",
        "path",
        "copy",
        "setup",
        "unknown_thing",
    ]);
    let section = prop::sample::select(vec![
        "",
        "[limits]",
        "[[provider]]",
        "[provider.screen]",
        "[[provider.prompts]]",
        "[keys]",
        "[keys.terminal]",
        "[keys.nowhere]",
        "[notify]",
        "[[repo]]",
        "[limits",
        "[[]]",
    ]);
    let entry = prop_oneof![
        4 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => section.prop_map(str::to_string),
        1 => "\\PC{0,20}",
    ];
    prop::collection::vec(entry, 0..16).prop_map(|l| l.join("\n"))
}
