//! `orchestra session …`

use super::error::{CliError, CliResult};
use super::http::{PrintJson, Reply};
use super::output::{Table, ago, clean, clean_lines, out, short_id, truncate};
use super::{Ctx, SessionCmd, absolute_dir, resolve_id, trash_place};
use orchestra_proto::wire::request::{NewSession, SendMessage};
use orchestra_proto::wire::{
    MessageBody, Peek, SessionBody, SessionCreated, SessionInfo, SessionList,
};

use orchestra_proto::routes::{self, SESSIONS};

const A_SESSION: &str = "a session (`{session}`)";

/// Prints a session route's answer: as the server sent it with --json, else `line` of it.
fn print(ctx: &Ctx, answer: &Reply<SessionBody>, line: impl FnOnce(&SessionInfo) -> String) {
    if ctx.json {
        answer.print_json();
    } else {
        out(&line(&answer.value.session));
    }
}

pub fn run(ctx: &Ctx, cmd: &SessionCmd) -> CliResult<()> {
    match cmd {
        SessionCmd::List => list(ctx),
        SessionCmd::Spawn {
            task,
            provider,
            dir,
            cols,
            rows,
            approval,
        } => {
            let body = NewSession {
                task: task.clone(),
                provider_id: provider.clone(),
                working_directory: dir.as_deref().map(absolute_dir).transpose()?,
                cols: *cols,
                rows: *rows,
                approval: *approval,
            };
            let answer: Reply<SessionCreated> =
                ctx.client
                    .post(SESSIONS, &body, "a new session (`{session, sessionId}`)")?;
            if ctx.json {
                answer.print_json();
            } else {
                let s = &answer.value.session;
                out(&format!(
                    "started session {}  {}  pid {}  in {}",
                    s.id,
                    clean(&s.provider_id),
                    s.pid,
                    clean(&s.working_directory),
                ));
            }
            Ok(())
        }
        SessionCmd::Send { id, text } => {
            message(ctx, id, &SendMessage::Text(text.join(" ")), "sent")
        }
        SessionCmd::Keys { id, keys } => {
            message(ctx, id, &SendMessage::Keys(keys.clone()), "pressed")
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
            let answer: Reply<SessionBody> = ctx.client.delete(
                &format!(
                    "{}?remove=true",
                    routes::at(routes::SESSION, &[&session_id(ctx, id)?])
                ),
                A_SESSION,
            )?;
            print(ctx, &answer, |s| {
                format!(
                    "removed session {}; its transcript is kept in {}",
                    short_id(&s.id),
                    trash_place(ctx, &format!("trash/sessions/{}", clean(&s.id)))
                )
            });
            Ok(())
        }
        SessionCmd::Kill { id } => {
            let answer: Reply<SessionBody> = ctx.client.delete(
                &routes::at(routes::SESSION, &[&session_id(ctx, id)?]),
                A_SESSION,
            )?;
            print(ctx, &answer, |s| {
                format!(
                    "ended session {}{}",
                    short_id(&s.id),
                    ending(s).map(|e| format!(" ({e})")).unwrap_or_default()
                )
            });
            Ok(())
        }
    }
}

/// The session's id, resolved from a prefix if need be.
fn session_id(ctx: &Ctx, id: &str) -> CliResult<String> {
    resolve_id(ctx, "session", id, |ctx| {
        let list: Reply<SessionList> = ctx
            .client
            .get(SESSIONS, "the session list (`{sessions}`)")?;
        Ok(list.value.sessions.into_iter().map(|s| s.id).collect())
    })
}

/// `exit 0`, `signal SIGKILL`.
fn ending(s: &SessionInfo) -> Option<String> {
    if let Some(sig) = &s.signal {
        return Some(format!("signal {}", clean(sig)));
    }
    s.exit_code.map(|c| format!("exit {c}"))
}

fn list(ctx: &Ctx) -> CliResult<()> {
    let answer: Reply<SessionList> = ctx
        .client
        .get(SESSIONS, "the session list (`{sessions}`)")?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let sessions = &answer.value.sessions;
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
        let mut status = s.status.to_string();
        if s.ended
            && let Some(e) = ending(s)
        {
            status = format!("{status} ({e})");
        }
        table.row(vec![
            short_id(&s.id),
            status,
            clean(&s.provider_id),
            s.pid.to_string(),
            s.task_id
                .as_deref()
                .map(short_id)
                .unwrap_or_else(|| "-".into()),
            ago(s.created_at),
            truncate(&clean(&s.task), 50),
        ]);
    }
    out(&table.render());
    Ok(())
}

fn message(ctx: &Ctx, id: &str, body: &SendMessage, verb: &str) -> CliResult<()> {
    let path = routes::at(routes::SESSION_MESSAGES, &[&session_id(ctx, id)?]);
    let answer: Reply<MessageBody> = ctx.client.post(&path, body, "a message (`{message}`)")?;
    if ctx.json {
        answer.print_json();
    } else {
        out(&format!("{verb} to session {}", short_id(id)));
    }
    Ok(())
}

/// GET …/peek with these query parameters.
fn get_peek(ctx: &Ctx, id: &str, scrollback: Option<u32>, ansi: bool) -> CliResult<Reply<Peek>> {
    let mut path = routes::at(routes::SESSION_PEEK, &[&session_id(ctx, id)?]);
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
    ctx.client.get(
        &path,
        "what a terminal shows (`{screen, cursor, cols, rows, status}`)",
    )
}

/// `peek --scrollback N` (or neither flag): the whole screen, with N scrollback lines above it.
fn peek(ctx: &Ctx, id: &str, scrollback: Option<u32>, ansi: bool) -> CliResult<()> {
    let answer = get_peek(ctx, id, scrollback, ansi)?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let peek = &answer.value;
    let mut text = String::new();
    if let Some(sb) = peek.scrollback.as_ref().filter(|s| !s.is_empty()) {
        // Scrollback is plain text; keep it terminal-safe.
        text.push_str(&clean_lines(&sb.join("\n")));
        text.push('\n');
    }
    let screen = match &peek.screen_ansi {
        // Asked for the escape sequences: pass them through as the terminal drew them.
        Some(drawn) if ansi => drawn.clone(),
        _ => clean_lines(&peek.screen),
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
        answer.print_json();
        return Ok(());
    }
    let peek = &answer.value;
    let scrollback = peek.scrollback.as_ref().map(|s| s.join("\n"));
    let lines = last_lines(scrollback.as_deref(), &peek.screen, n as usize);
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
    let mut path = routes::at(routes::SESSION_TRANSCRIPT, &[&session_id(ctx, id)?]);
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
