//! `orchestra session …`

use super::error::{CliError, CliResult};
use super::http::segment;
use super::output::{self, Table, ago, clean, clean_lines, out, short_id, str_at, truncate};
use super::{Ctx, SessionCmd, absolute_dir, resolve_id, trash_place};
use serde_json::{Value, json};

pub const SESSIONS: &str = "/api/coding-agents/sessions";

pub fn run(ctx: &Ctx, cmd: &SessionCmd) -> CliResult<()> {
    match cmd {
        SessionCmd::List => list(ctx),
        SessionCmd::Spawn {
            task,
            provider,
            dir,
            cols,
            rows,
        } => {
            let mut body = json!({});
            if let Some(t) = task {
                body["task"] = json!(t);
            }
            if let Some(p) = provider {
                body["providerId"] = json!(p);
            }
            if let Some(d) = dir {
                body["workingDirectory"] = json!(absolute_dir(d)?);
            }
            if let Some(c) = cols {
                body["cols"] = json!(c);
            }
            if let Some(r) = rows {
                body["rows"] = json!(r);
            }
            let answer = ctx.client.post(SESSIONS, Some(&body))?;
            if ctx.json {
                output::json(&answer);
            } else {
                let s = session_of(&answer)?;
                out(&format!(
                    "started session {}  {}  pid {}  in {}",
                    str_at(s, "/id").unwrap_or("?"),
                    clean(str_at(s, "/providerId").unwrap_or("?")),
                    s.get("pid")
                        .and_then(Value::as_u64)
                        .map(|p| p.to_string())
                        .unwrap_or_else(|| "-".into()),
                    clean(str_at(s, "/workingDirectory").unwrap_or("?")),
                ));
            }
            Ok(())
        }
        SessionCmd::Send { id, text } => {
            let body = json!({ "text": text.join(" ") });
            message(ctx, id, &body, "sent")
        }
        SessionCmd::Keys { id, keys } => {
            let body = json!({ "keys": keys });
            message(ctx, id, &body, "pressed")
        }
        SessionCmd::Peek {
            id,
            lines,
            scrollback,
            ansi,
        } => match lines {
            Some(n) => peek_lines(ctx, id, *n, *ansi),
            None => peek(ctx, id, *scrollback, *ansi),
        },
        SessionCmd::Transcript { id, bytes } => transcript(ctx, id, *bytes),
        SessionCmd::Delete { id } => {
            let answer = ctx
                .client
                .delete(&format!("{}?remove=true", session_path(ctx, id)?))?;
            if ctx.json {
                output::json(&answer);
            } else {
                let s = session_of(&answer)?;
                let full = str_at(s, "/id").unwrap_or("?");
                out(&format!(
                    "removed session {}; its transcript is kept in {}",
                    short_id(full),
                    trash_place(ctx, &format!("trash/sessions/{}", clean(full)))
                ));
            }
            Ok(())
        }
        SessionCmd::Kill { id } => {
            let answer = ctx.client.delete(&session_path(ctx, id)?)?;
            if ctx.json {
                output::json(&answer);
            } else {
                let s = session_of(&answer)?;
                out(&format!(
                    "ended session {}{}",
                    short_id(str_at(s, "/id").unwrap_or("?")),
                    ending(s).map(|e| format!(" ({e})")).unwrap_or_default()
                ));
            }
            Ok(())
        }
    }
}

fn session_path(ctx: &Ctx, id: &str) -> CliResult<String> {
    let id = resolve_id(ctx, SESSIONS, "sessions", "session", id)?;
    Ok(format!("{SESSIONS}/{}", segment(&id)))
}

fn session_of(answer: &Value) -> CliResult<&Value> {
    answer
        .get("session")
        .filter(|s| s.is_object())
        .ok_or_else(|| CliError::server("the server's answer holds no session"))
}

/// `exit 0`, `signal SIGKILL`.
fn ending(s: &Value) -> Option<String> {
    if let Some(sig) = str_at(s, "/signal") {
        return Some(format!("signal {}", clean(sig)));
    }
    s.get("exitCode")
        .and_then(Value::as_i64)
        .map(|c| format!("exit {c}"))
}

fn list(ctx: &Ctx) -> CliResult<()> {
    let answer = ctx.client.get(SESSIONS)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let sessions = answer
        .get("sessions")
        .and_then(Value::as_array)
        .ok_or_else(|| CliError::server("the server's answer holds no session list"))?;
    if sessions.is_empty() {
        out("no sessions; start one with `orchestra session spawn`");
        return Ok(());
    }
    let mut table = Table::new(&[
        "ID",
        "STATUS",
        "PROVIDER",
        "PID",
        "TASK",
        "STARTED",
        "INSTRUCTION",
    ]);
    for s in sessions {
        let ended = s.get("ended").and_then(Value::as_bool).unwrap_or(false);
        let mut status = clean(str_at(s, "/status").unwrap_or("?"));
        if ended && let Some(e) = ending(s) {
            status = format!("{status} ({e})");
        }
        table.row(vec![
            short_id(str_at(s, "/id").unwrap_or("?")),
            status,
            clean(str_at(s, "/providerId").unwrap_or("-")),
            s.get("pid")
                .and_then(Value::as_u64)
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into()),
            str_at(s, "/taskId")
                .map(short_id)
                .unwrap_or_else(|| "-".into()),
            s.get("createdAt")
                .and_then(ago)
                .unwrap_or_else(|| "-".into()),
            truncate(&clean(str_at(s, "/task").unwrap_or("")), 50),
        ]);
    }
    out(&table.render());
    Ok(())
}

fn message(ctx: &Ctx, id: &str, body: &Value, verb: &str) -> CliResult<()> {
    let path = format!("{}/messages", session_path(ctx, id)?);
    let answer = ctx.client.post(&path, Some(body))?;
    if ctx.json {
        output::json(&answer);
    } else {
        out(&format!("{verb} to session {}", short_id(id)));
    }
    Ok(())
}

/// The value as text: a string as is, an array of strings one per line.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => Some(
            a.iter()
                .map(|l| l.as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// GET …/peek with these query parameters.
fn get_peek(ctx: &Ctx, id: &str, scrollback: Option<u32>, ansi: bool) -> CliResult<Value> {
    let mut path = format!("{}/peek", session_path(ctx, id)?);
    let mut query = Vec::new();
    if let Some(n) = scrollback {
        query.push(format!("lines={n}"));
    }
    if ansi {
        query.push("ansi=1".to_string());
    }
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    ctx.client.get(&path)
}

fn screen_of(answer: &Value) -> CliResult<String> {
    answer
        .get("screen")
        .and_then(text_of)
        .ok_or_else(|| CliError::server("the server's answer holds no screen"))
}

/// `peek --scrollback N` (or neither flag): the whole screen, with N scrollback lines above it.
fn peek(ctx: &Ctx, id: &str, scrollback: Option<u32>, ansi: bool) -> CliResult<()> {
    let answer = get_peek(ctx, id, scrollback, ansi)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let mut text = String::new();
    if let Some(sb) = answer
        .get("scrollback")
        .and_then(text_of)
        .filter(|s| !s.is_empty())
    {
        // Scrollback is plain text; keep it terminal-safe.
        text.push_str(&clean_lines(&sb));
        text.push('\n');
    }
    let screen = match answer.get("screenAnsi").and_then(text_of) {
        // Asked for the escape sequences: pass them through as the terminal drew them.
        Some(drawn) if ansi => drawn,
        _ => clean_lines(&screen_of(&answer)?),
    };
    text.push_str(screen.trim_end());
    out(&text);
    Ok(())
}

/// `peek --lines N`: exactly the last N lines of scrollback and screen (fewer only when the
/// terminal holds fewer), blank screen rows below the last text left out.
fn peek_lines(ctx: &Ctx, id: &str, n: u32, ansi: bool) -> CliResult<()> {
    if ansi && !ctx.json {
        return Err(CliError::usage(
            "--ansi draws the whole screen, which cannot be cut to --lines; use --ansi alone or with --scrollback N",
        ));
    }
    let answer = get_peek(ctx, id, Some(n), ansi)?;
    if ctx.json {
        output::json(&answer);
        return Ok(());
    }
    let scrollback = answer.get("scrollback").and_then(text_of);
    let screen = screen_of(&answer)?;
    let lines = last_lines(scrollback.as_deref(), &screen, n as usize);
    out(&clean_lines(&lines.join("\n")));
    Ok(())
}

/// The last `n` lines of the scrollback followed by the screen, trailing blank rows dropped.
fn last_lines<'a>(scrollback: Option<&'a str>, screen: &'a str, n: usize) -> Vec<&'a str> {
    let mut all: Vec<&str> = scrollback
        .filter(|s| !s.is_empty())
        .map(|s| s.split('\n').collect())
        .unwrap_or_default();
    all.extend(screen.split('\n'));
    while all.last().is_some_and(|l| l.trim().is_empty()) {
        all.pop();
    }
    let skip = all.len().saturating_sub(n);
    all.split_off(skip)
}

/// `session transcript ID [--bytes N]`: the raw bytes to stdout, as the session printed them.
fn transcript(ctx: &Ctx, id: &str, bytes: Option<u64>) -> CliResult<()> {
    let mut path = format!("{}/transcript", session_path(ctx, id)?);
    if let Some(n) = bytes {
        path = format!("{path}?bytes={n}");
    }
    ctx.client.download(&path, &mut std::io::stdout().lock())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_span_scrollback_and_screen() {
        let screen = "l3\nl4\n$\n\n\n";
        assert_eq!(last_lines(Some("l1\nl2"), screen, 2), ["l4", "$"]);
        assert_eq!(
            last_lines(Some("l1\nl2"), screen, 4),
            ["l2", "l3", "l4", "$"]
        );
        assert_eq!(
            last_lines(Some("l1\nl2"), screen, 50),
            ["l1", "l2", "l3", "l4", "$"]
        );
        assert_eq!(last_lines(None, "a\n\nb\n", 3), ["a", "", "b"]);
        assert!(last_lines(Some(""), "\n\n", 3).is_empty());
    }
}
