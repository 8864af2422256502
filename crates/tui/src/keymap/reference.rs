//! The key reference (docs/keys.md), generated from the bindings in force, so the document
//! cannot drift from what the keys do; its test keeps the file current.

use super::{Context, KeyMap};

/// The key reference (docs/keys.md): every section of the help overlay, in its order, as
/// markdown. Generated so that it cannot drift from the table; a test keeps the file current.
pub fn key_reference(keys: &KeyMap) -> String {
    let mut out = String::from(
        "# Keys\n\n\
         <!-- Generated from the binding table in crates/tui/src/keymap/bindings.rs; do not edit. \
         Regenerate with `ORCHESTRA_WRITE_DOCS=1 cargo test -p orchestra-tui key_reference`. -->\n\n\
         The keys of the TUI with the defaults, pane by pane, as `?` shows them. The focused \
         pane's own keys come first, then those of any pane. Every binding can be changed in \
         the config file's `[keys]` section (see [configuration.md](configuration.md)).\n",
    );
    for ctx in Context::HELP_ORDER {
        let rows = keys.help(ctx);
        if rows.is_empty() && ctx.note().is_none() {
            continue;
        }
        out.push_str(&format!("\n## {}\n\n", ctx.title()));
        if !rows.is_empty() {
            out.push_str("| Keys | What it does |\n|---|---|\n");
            for (k, what) in rows {
                let k = k.replace('|', "\\|");
                out.push_str(&format!(
                    "| `{}` | {} |\n",
                    k.trim(),
                    what.replace('|', "\\|")
                ));
            }
        }
        if let Some(note) = ctx.note() {
            if !rows_empty_line(&out) {
                out.push('\n');
            }
            out.push_str(&format!("{note}.\n"));
        }
    }
    out
}

/// Whether `out` ends with a blank line already.
fn rows_empty_line(out: &str) -> bool {
    out.ends_with("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/keys.md is generated from the table; it must be the table as it is now.
    #[test]
    fn the_key_reference_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/keys.md");
        let want = key_reference(&KeyMap::default());
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("ORCHESTRA_WRITE_DOCS").is_some() {
                std::fs::write(path, &want).expect("write docs/keys.md");
            } else {
                panic!(
                    "docs/keys.md is not the binding table's; regenerate it with \
                     ORCHESTRA_WRITE_DOCS=1 cargo test -p orchestra-tui key_reference"
                );
            }
        }
    }
}
