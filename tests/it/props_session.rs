//! Property tests of what a session does with bytes: the key encoder (keys and pastes → bytes
//! to the PTY), the line splitter, and the terminal (vt100) a session's output goes through.
//! Arbitrary input never panics, memory stays bounded, and output split anywhere (inside a
//! UTF-8 character or an escape sequence) reads exactly as when it arrives whole.

use orchestra_daemon::session::{Key, KeyCode, LineSplitter, Terminal, encode_key, encode_paste};
use proptest::prelude::*;

/// Pieces a program's output is made of, weighted toward what breaks parsers: escape
/// sequences of every kind (some cut short), multi-byte and invalid UTF-8, control bytes.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => "[ -~]{0,12}".prop_map(String::into_bytes),
        2 => any::<String>().prop_map(String::into_bytes),
        2 => prop::collection::vec(any::<u8>(), 0..8),
        1 => (prop::collection::vec(0u16..400, 0..4), prop::sample::select(b"mHJKCDGPXABfhlrnctsu@`dL".to_vec()), any::<bool>())
            .prop_map(|(params, fin, private)| {
                let p: Vec<String> = params.iter().map(u16::to_string).collect();
                format!("\x1b[{}{}{}", if private { "?" } else { "" }, p.join(";"), fin as char).into_bytes()
            }),
        1 => ("[ -~]{0,10}", any::<bool>()).prop_map(|(t, bel)| {
            format!("\x1b]0;{t}{}", if bel { "\x07" } else { "\x1b\\" }).into_bytes()
        }),
        1 => "[ -~]{0,10}".prop_map(|t| format!("\x1bP{t}\x1b\\").into_bytes()),
        1 => prop::sample::select(vec![
            b"\r".to_vec(), b"\n".to_vec(), b"\r\n".to_vec(), b"\x08".to_vec(), b"\t".to_vec(),
            b"\x1b".to_vec(), b"\x1b[".to_vec(), b"\x1b]".to_vec(), b"\x1b(B".to_vec(),
            b"\x1b[?1049h".to_vec(), b"\x1b[?1049l".to_vec(), b"\x1b[6n".to_vec(),
            b"\x1b[18t".to_vec(), b"\x1b]11;?\x07".to_vec(), b"\x1b[>c".to_vec(),
            "é".as_bytes().to_vec(), "界".as_bytes().to_vec(), "🎉".as_bytes().to_vec(),
            b"\xe2\x82".to_vec(), b"\xf0\x9f".to_vec(), b"\xff".to_vec(), b"\xed\xa0\x80".to_vec(),
            b"\x1b[2K".to_vec(), b"\x1b[10G".to_vec(), b"\x1b[3P".to_vec(), b"\x1b[4X".to_vec(),
            b"\x1b[999C".to_vec(), b"\x1b[r".to_vec(), b"\x1bc".to_vec(), b"\x1b[?25l".to_vec(),
        ]),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..40).prop_map(|p| p.concat())
}

/// The stream cut at arbitrary places (sorted, may repeat: empty chunks too).
fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| {
            if bytes.is_empty() {
                0
            } else {
                c % (bytes.len() + 1)
            }
        })
        .collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for a in at {
        out.push(bytes[from..a].to_vec());
        from = a;
    }
    out.push(bytes[from..].to_vec());
    out
}

/// Every line the splitter gives, the last partial one included.
fn split_lines(max_line: usize, chunks: &[Vec<u8>]) -> Vec<String> {
    let mut s = LineSplitter::new(max_line);
    let mut out = Vec::new();
    for c in chunks {
        s.feed(c, &mut out);
    }
    out.extend(s.finish());
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        // Failures found are kept as plain tests below, not in a regressions file.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_line_splitter_reads_a_stream_cut_anywhere_as_the_whole(
        bytes in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_line in prop_oneof![Just(orchestra_daemon::session::DEFAULT_MAX_LINE), 1usize..40],
    ) {
        let whole = split_lines(max_line, std::slice::from_ref(&bytes));
        let cut = split_lines(max_line, &chunks(&bytes, &cuts));
        prop_assert_eq!(&cut, &whole);
        // Byte by byte, the hardest cut of all.
        let bytewise: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        prop_assert_eq!(&split_lines(max_line, &bytewise), &whole);
        for line in &whole {
            // Bounded: no line is longer than the cap, and no escape sequence survives.
            prop_assert!(line.chars().count() <= max_line, "{} chars > {max_line}", line.chars().count());
            prop_assert!(!line.chars().any(|c| c.is_control() && c != '\t'), "{line:?}");
        }
    }

    #[test]
    fn the_terminal_reads_a_stream_cut_anywhere_as_the_whole(
        bytes in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        rows in 0u16..30,
        cols in 0u16..100,
    ) {
        let run = |chunks: &[Vec<u8>]| {
            let mut t = Terminal::new(rows, cols, 50);
            let mut replies = Vec::new();
            for c in chunks {
                replies.extend(t.process(c));
            }
            let snap = t.snapshot(100, true);
            (snap, replies)
        };
        let (whole, whole_replies) = run(std::slice::from_ref(&bytes));
        let (cut, cut_replies) = run(&chunks(&bytes, &cuts));
        prop_assert_eq!(&cut, &whole);
        prop_assert_eq!(cut_replies, whole_replies);
        // Bounded: the visible screen is its size, the scrollback at most what is kept.
        prop_assert_eq!(whole.screen.split('\n').count(), usize::from(whole.rows));
        prop_assert!(whole.scrollback.len() <= 50);
    }

    #[test]
    fn the_terminal_survives_any_output_and_any_resizes(
        steps in prop::collection::vec((stream(), 0u16..=400, 0u16..=400), 1..6),
    ) {
        let mut t = Terminal::new(24, 80, 100);
        let mut lines = LineSplitter::default();
        let mut out = Vec::new();
        for (bytes, rows, cols) in steps {
            t.process(&bytes);
            lines.feed(&bytes, &mut out);
            t.resize(rows, cols);
            let snap = t.snapshot(10, true);
            prop_assert_eq!((snap.rows, snap.cols), orchestra_daemon::session::parser_size(rows, cols));
            prop_assert!(snap.cursor.0 < snap.rows);
            let _ = t.fingerprint();
        }
    }

    #[test]
    fn key_names_parse_or_are_refused_and_never_panic(name in prop_oneof![
        any::<String>(),
        (prop::sample::select(vec!["", "ctrl-", "alt-", "shift-", "c-", "m-", "^", "ctrl+alt-", "shift-ctrl-", "meta+"]),
         prop::sample::select(vec!["a", "Z", "1", "é", " ", "-", "enter", "tab", "up", "f1", "f12", "f13", "f0", "f05", "pgup", "space", "del", "backtab", "lf", "?", "[", "@", ""]))
            .prop_map(|(m, k)| format!("{m}{k}")),
    ]) {
        match Key::parse(&name) {
            Ok(key) => {
                // A key that parses sends something, in either cursor mode.
                let plain = key.encode(false);
                let app = key.encode(true);
                prop_assert!(plain.as_ref().is_some_and(|b| !b.is_empty()), "{name:?} sends nothing");
                prop_assert!(app.is_some_and(|b| !b.is_empty()));
                prop_assert_eq!(encode_key(&name, false).ok(), plain);
            }
            Err(e) => prop_assert!(e.to_string().contains("unknown key"), "{e}"),
        }
    }

    #[test]
    fn every_key_press_encodes_as_xterm_would(
        code in prop_oneof![
            any::<char>().prop_map(KeyCode::Char),
            any::<u8>().prop_map(KeyCode::F),
            prop::sample::select(vec![KeyCode::Enter, KeyCode::Tab, KeyCode::Backspace, KeyCode::Esc,
                KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right, KeyCode::Home,
                KeyCode::End, KeyCode::PageUp, KeyCode::PageDown, KeyCode::Insert, KeyCode::Delete]),
        ],
        ctrl in any::<bool>(), alt in any::<bool>(), shift in any::<bool>(), app in any::<bool>(),
    ) {
        let key = Key { code, ctrl, alt, shift };
        let Some(bytes) = key.encode(app) else { return Ok(()) };
        prop_assert!(!bytes.is_empty());
        match code {
            KeyCode::Char(c) if !ctrl => {
                let mut want = if alt { vec![0x1b] } else { Vec::new() };
                want.extend(c.to_string().into_bytes());
                prop_assert_eq!(bytes, want);
            }
            KeyCode::Char(_) => prop_assert!(bytes.len() <= 2 && bytes.last().is_some_and(|b| *b < 0x20 || *b == 0x7f)),
            // Escape sequences are whole: a program never sees half of one.
            _ if bytes.len() > 1 && bytes[0] == 0x1b && !alt => {
                let last = *bytes.last().unwrap_or(&0);
                prop_assert!(last.is_ascii_alphabetic() || last == b'~', "{bytes:?}");
            }
            _ => {}
        }
    }

    #[test]
    fn a_paste_is_one_paste(text in prop_oneof![
        any::<String>(),
        prop::collection::vec(prop::sample::select(vec!["\x1b[201~", "\x1b[200~", "\x1b[20", "1~", "\x1b", "[", "\r\n", "\n", "\r", "a", "é"]), 0..12)
            .prop_map(|p| p.concat()),
    ]) {
        let out = encode_paste(&text, true);
        prop_assert!(out.starts_with(b"\x1b[200~") && out.ends_with(b"\x1b[201~"));
        let inner = &out[6..out.len() - 6];
        // Nothing inside can end the paste early, and line breaks go as a terminal sends them.
        prop_assert!(!inner.windows(6).any(|w| w == b"\x1b[201~"), "{:?}", String::from_utf8_lossy(&out));
        prop_assert!(!inner.contains(&b'\n'));
        let plain = encode_paste(&text, false);
        prop_assert!(!plain.contains(&b'\n'));
        prop_assert_eq!(plain.iter().filter(|b| **b != b'\r').count(),
            text.bytes().filter(|b| *b != b'\r' && *b != b'\n').count());
    }
}

#[test]
fn a_paste_cannot_rebuild_its_end_marker_from_pieces() {
    // Removing one end marker joined the bytes around it into another.
    let out = encode_paste("\x1b[20\x1b[201~1~ rm -rf ~", true);
    let inner = &out[6..out.len() - 6];
    assert!(
        !inner.windows(6).any(|w| w == b"\x1b[201~"),
        "{:?}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn a_one_by_one_terminal_takes_text_that_wraps() {
    // vt100 panicked (an overflow in its wrapping) on a 1×1 screen.
    let mut t = Terminal::new(1, 1, 10);
    t.process(b"A0 A");
    t.resize(0, 0);
    t.process(b"aA\xe7\x95\x8c");
    let snap = t.snapshot(5, true);
    assert_eq!((snap.rows, snap.cols), (2, 2));
}

#[test]
fn c1_controls_sent_as_utf8_are_not_text() {
    // U+0080 and U+009B (CSI) reached lines as characters.
    let mut s = LineSplitter::default();
    let mut out = s.push("a\u{80}b\u{9b}c\n".as_bytes());
    out.extend(s.push(b"\xc2"));
    out.extend(s.push(b"\x80d\n"));
    assert_eq!(out, ["abc", "d"]);
}

#[test]
fn a_character_split_across_reads_keeps_the_text_after_it() {
    // vte dropped the space after `Σ` when `Σ` arrived in two reads and a stray byte followed.
    let run = |chunks: &[&[u8]]| {
        let mut t = Terminal::new(2, 10, 0);
        for c in chunks {
            t.process(c);
        }
        t.snapshot(0, false).screen
    };
    let whole = run(&[b"\xce\xa3 \x80x"]);
    assert_eq!(run(&[b"\xce", b"\xa3 \x80x"]), whole);
    assert!(whole.starts_with("Σ "), "{whole:?}");
}

#[test]
fn writing_where_a_resize_cut_a_wide_character_does_not_stop_the_terminal() {
    // vt100 panics here (the wide character's second half is gone); the terminal starts
    // afresh instead, and goes on showing what follows.
    let mut t = Terminal::new(2, 4, 0);
    t.process("ab界".as_bytes());
    t.resize(2, 3);
    t.process(b"\x1b[1;3Hx");
    t.process(b"\x1b[2;1Hafter");
    let snap = t.snapshot(0, false);
    assert_eq!((snap.rows, snap.cols), (2, 3));
    assert!(snap.screen.contains("aft"), "{:?}", snap.screen);
}
