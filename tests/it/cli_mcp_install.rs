//! `orchestra mcp install AGENT`: the user's own configuration of a coding agent gets
//! orchestra's MCP server, shown first, written only when confirmed, the old file kept as a
//! backup; a file it cannot read is refused and left alone. Every run has a HOME of its own.

use crate::support::BIN;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `orchestra mcp install ARGS…` with HOME at `home`, `answer` typed at its prompt.
fn install(home: &Path, args: &[&str], answer: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(["mcp", "install"])
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("ORCHESTRA_STATE_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run orchestra mcp install");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(answer.as_bytes());
    }
    child.wait_with_output().expect("its output")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The backups of `file` beside it.
fn backups(file: &Path) -> Vec<std::path::PathBuf> {
    let name = file
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let dir = file.parent().expect("a directory");
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        n.to_string_lossy()
                            .starts_with(&format!("{name}.orchestra-backup-"))
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn claude_shows_what_it_writes_and_writes_only_on_yes_keeping_a_backup() {
    let home = tempfile::tempdir().expect("tempdir");
    let file = home.path().join(".claude.json");
    let before = r#"{"hasCompletedOnboarding": true, "mcpServers": {"mine": {"command": "x"}}}"#;
    std::fs::write(&file, before).expect("write");

    let no = install(home.path(), &["claude"], "n\n");
    assert!(no.status.success(), "{}", text(&no));
    let said = text(&no);
    assert!(said.contains(&file.display().to_string()), "{said}");
    assert!(
        said.contains("\"orchestra\"") && said.contains("\"mcp\""),
        "{said}"
    );
    assert!(said.contains("Nothing written"), "{said}");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
    assert!(backups(&file).is_empty());

    let yes = install(home.path(), &["claude"], "y\n");
    assert!(yes.status.success(), "{}", text(&yes));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("still JSON");
    assert_eq!(v["hasCompletedOnboarding"], true);
    assert_eq!(v["mcpServers"]["mine"]["command"], "x");
    assert_eq!(v["mcpServers"]["orchestra"]["command"], BIN);
    assert_eq!(
        v["mcpServers"]["orchestra"]["args"],
        serde_json::json!(["mcp"])
    );
    let kept = backups(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read_to_string(&kept[0]).expect("read"), before);

    // Again: nothing to do, nothing asked.
    let again = install(home.path(), &["claude"], "");
    assert!(text(&again).contains("nothing to do"), "{}", text(&again));
    assert_eq!(backups(&file).len(), 1);
}

#[test]
fn codex_gemini_and_opencode_get_it_in_their_own_files() {
    let home = tempfile::tempdir().expect("tempdir");
    for agent in ["codex", "gemini", "opencode"] {
        let o = install(home.path(), &[agent, "--yes"], "");
        assert!(o.status.success(), "{agent}: {}", text(&o));
    }
    let codex = std::fs::read_to_string(home.path().join(".codex/config.toml")).expect("codex");
    let codex: toml::Table = toml::from_str(&codex).expect("TOML");
    assert_eq!(
        codex["mcp_servers"]["orchestra"]["command"].as_str(),
        Some(BIN)
    );
    let gemini: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".gemini/settings.json")).expect("gemini"),
    )
    .expect("JSON");
    assert_eq!(
        gemini["mcpServers"]["orchestra"]["args"],
        serde_json::json!(["mcp"])
    );
    let opencode: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".config/opencode/opencode.json"))
            .expect("opencode"),
    )
    .expect("JSON");
    assert_eq!(
        opencode["mcp"]["orchestra"]["command"],
        serde_json::json!([BIN, "mcp"])
    );
    assert_eq!(opencode["mcp"]["orchestra"]["type"], "local");
    // A new file is the user's alone.
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(home.path().join(".gemini/settings.json"))
            .expect("meta")
            .permissions(),
    );
    assert_eq!(mode & 0o077, 0);
}

#[test]
fn a_file_it_cannot_read_is_refused_and_left_alone() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join("settings.json");
    let before = "{ // the user's comment\n  \"theme\": \"Dracula\" }\n";
    std::fs::write(&file, before).expect("write");
    let o = install(home.path(), &["gemini", "--yes"], "");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("left as it is"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
    assert!(backups(&file).is_empty());
}
