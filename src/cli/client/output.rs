//! Printing: the server's JSON as-is for `--json`, aligned tables and summaries for people.

use orchestra_proto::task::Progress;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes to stdout; a closed pipe (`orchestra task list | head`) is not an error worth a panic.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// JSON, pretty.
pub fn json(v: &impl serde::Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => out(&s),
        Err(e) => out(&format!("{{\"error\": \"cannot print the answer: {e}\"}}")),
    }
}

/// The server's JSON text, pretty (any JSON: `--json` prints what the server sent, fields
/// this client does not know included).
pub fn json_text(text: &str) {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => json(&v),
        Err(_) => out(text),
    }
}

/// One line of text from the server made safe for a terminal: control characters (escape
/// sequences an agent may have printed) and line breaks cannot reach it.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// Like [`clean`] but keeps line breaks (multi-line output, a screen).
pub fn clean_lines(s: &str) -> String {
    s.lines().map(clean).collect::<Vec<_>>().join("\n")
}

/// At most `n` characters, with an ellipsis when cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The first 8 characters of an id: enough to tell ids apart, and accepted back as a prefix.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

/// Progress as a person writes it: `40`, `12.5`.
pub fn percent(p: Progress) -> String {
    let f = p.value();
    if f.fract() == 0.0 {
        format!("{}", f as i64)
    } else {
        format!("{f:.1}")
    }
}

/// `3s`, `5m 2s`, `2h 5m`, `3d 4h`.
pub fn duration_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// `5m 2s ago` for an epoch-milliseconds time.
pub fn ago(at: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    format!("{} ago", duration_ms(now.saturating_sub(at).max(0) as u64))
}

/// Columns padded to their widest cell; the last column is not padded.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; cols];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut text = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    let pad = widths[i] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let mut t = Table::new(&["ID", "NAME"]);
        t.row(vec!["abc".into(), "x".into()]);
        assert_eq!(t.render(), "ID   NAME\nabc  x\n");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(clean("a\x1b[31mb\nc"), "a\u{FFFD}[31mb c");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(percent(Progress::new(40.0).unwrap()), "40");
        assert_eq!(percent(Progress::new(12.5).unwrap()), "12.5");
        assert_eq!(duration_ms(62_000), "1m 2s");
    }
}
